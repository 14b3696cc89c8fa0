"""Time the core on a robust04-shaped track in memory: positions, then every measure.

    python benchmarks/bench_core.py                      # 110 systems × 249 queries × 1000
    python benchmarks/bench_core.py --systems 20 --repeat 5

Targets (issue: core): positions under 5 s and all the per-ranking measures under 2 s on
the robust04 shape, on a 2-core machine. Prints the median of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import lexiframe as lf
from lexiframe.datasets import synthetic_track

MEASURES = [
    "RR", "RR@10", "AP", "nDCG", "nDCG@10", "P@10", "R@1000", "RP", "RBP(p=0.8)",
    "TSE", "TSE(exposure='ap')", "TSE(exposure='ndcg')", "TSE(exposure='rbp')",
    "TSE(exposure='linear')", "SL3", "RecallError", "ASL", "ASL@g1-10",
]  # fmt: skip
ROBUST04_DOCS = 528_155  # corpus size, for the measures that impute unretrieved documents


def timed(step, repeat: int) -> tuple[float, object]:
    seconds, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = step()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=110)
    parser.add_argument("--queries", type=int, default=249)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", lf.LexiframeWarning)

    start = time.perf_counter()
    track = synthetic_track(
        n_systems=args.systems, n_queries=args.queries, depth=args.depth, seed=0
    )
    print(
        f"track: {args.systems} systems × {args.queries} queries × depth {args.depth} = "
        f"{track.run.height:,} rows (generated in {time.perf_counter() - start:.1f} s)"
    )
    seconds, frame = timed(lambda: lf.positions(track.run, track.qrels, grades=True), args.repeat)
    print(f"positions (grades kept)       {seconds:6.2f} s   {frame.height:,} rankings")
    seconds, _ = timed(lambda: lf.positions(track.run, track.qrels), args.repeat)
    print(f"positions                     {seconds:6.2f} s")
    seconds, _ = timed(lambda: lf.measures(frame, MEASURES, n=ROBUST04_DOCS), args.repeat)
    print(f"{len(MEASURES)} measures                   {seconds:6.2f} s")


if __name__ == "__main__":
    main()
