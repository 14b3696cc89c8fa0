"""Where the time of ``lexiframe trec_eval -q -c -m all_trec`` goes, phase by phase.

    python benchmarks/drop_in_phases.py benchmark-data/17-100-1000-robust03/trec

The folder is one that ``benchmarks/run.py --drop-in`` writes (``qrels.txt`` and
``runs/``). The command's own steps run one after another in this process, each timed
alone (wall and CPU seconds of the process, every thread's): importing what the command
imports (Python's own start, about 0.02 s, comes before), reading the qrels, reading the
runs a batch at a time, ranking each batch, measuring the positions, formatting
trec_eval's lines and writing them. The command itself overlaps reading, ranking and
measuring in three threads (docs/benchmarks.md), so its wall time is less than the sum;
its CPU time is about the sum. ``--repeat`` runs the whole breakdown in that many fresh
processes and prints the medians.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter(), time.process_time()

import argparse  # noqa: E402  (the imports are the first phase timed)
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TypeVar  # noqa: E402

T = TypeVar("T")


def phases(folder: Path) -> dict[str, tuple[float, float]]:
    """The wall and CPU seconds of each phase, in one process."""
    import polars as pl

    from lexiframe import io
    from lexiframe.cli import trec_eval as command
    from lexiframe.cli import trec_eval_measures as measuring
    from lexiframe.cli.trec_eval_input import read_batches
    from lexiframe.cli.trec_eval_output import format_runs
    from lexiframe.ranking.prepared import PreparedQrels

    times: dict[str, tuple[float, float]] = {}
    last = STARTED

    def timed(name: str, step: Callable[[], T]) -> T:
        nonlocal last
        value = step()
        now = time.perf_counter(), time.process_time()
        wall, cpu = times.get(name, (0.0, 0.0))
        times[name] = (wall + now[0] - last[0], cpu + now[1] - last[1])
        last = now
        return value

    timed("import", lambda: None)
    runs = sorted(str(path) for path in (folder / "runs").iterdir())
    lines = measuring.resolve(["all_trec"], "trec_eval-10.0")
    qrels = timed("read qrels", lambda: io.read_qrels(folder / "qrels.txt"))
    prepared = PreparedQrels(qrels)
    judged_relevant = qrels.filter(pl.col("relevance") > 0).height
    settings = measuring.plan(
        lines,
        complete=True,
        level=1,
        depth=None,
        judged_only=False,
        collection_size=None,
        compat="trec_eval-10.0",
    )
    batches = iter(read_batches(runs, command.BATCH_BYTES))
    frames: list[pl.DataFrame] = []
    runids: list[str] = []
    while (batch := timed("read runs", lambda: next(batches, None))) is not None:
        rank = partial(measuring.ranked, batch.rows, prepared, settings, len(runids))
        frames.append(timed("rank", rank))
        runids += [run.runid for run in batch.runs]
    frame = pl.concat(frames, how="vertical_relaxed", rechunk=True)
    table = timed("measure", lambda: measuring.measured(frame, lines, settings))
    lines = [measuring.Line("runid", "runid", ""), *lines]
    text = timed(
        "format",
        lambda: "".join(
            format_runs(table, lines, runids, per_query=True, judged_relevant=judged_relevant)
        ),
    )
    with open(os.devnull, "w") as out:
        timed("write", lambda: out.write(text))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a shape's trec/ folder (qrels.txt, runs/)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes (median)")
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once:
        print(json.dumps(phases(args.folder)))
        return
    command = [sys.executable, __file__, "--once", str(args.folder)]
    turns = [json.loads(subprocess.check_output(command)) for _ in range(args.repeat)]
    print(f"{'phase':<18} {'wall s':>8} {'CPU s':>8}")
    totals = [0.0, 0.0]
    for name in turns[0]:
        wall = statistics.median(turn[name][0] for turn in turns)
        cpu = statistics.median(turn[name][1] for turn in turns)
        totals = [totals[0] + wall, totals[1] + cpu]
        print(f"{name:<18} {wall:8.3f} {cpu:8.3f}")
    print(f"{'sum':<18} {totals[0]:8.3f} {totals[1]:8.3f}")
    print(f"load average {' / '.join(f'{value:.1f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
