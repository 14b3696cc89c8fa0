"""Time :func:`lexiframe.preferences.preferences` on a robust04-shaped positions frame.

110 systems x 249 queries (about 1.5 million system pairs), m relevant documents per query
between 5 and 300 (log-normal, median about 50), depth 1000. Each system has a quality that
sets its recall and how strongly its relevant documents sit near the top, so many pairs tie
at the first recall levels, as in the lexiprecision paper's figure 5; a few systems are
near-copies of another one (identical rankings on most queries), as TREC submissions from
one group often are. Seeded, so every run times the same frame.

Also times the LazyFrame path, the per-pair summary and the MC4 ordering of the result.

Run: ``python benchmarks/bench_preferences.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import polars as pl

from lexiframe.aggregate import order, summarize_preferences
from lexiframe.preferences import preferences

DEPTH = 1000


def robust04_like(n_systems: int = 110, n_queries: int = 249, seed: int = 2004) -> pl.DataFrame:
    """A positions frame (system, query, positions, n_rel, n_ret) shaped like robust04."""
    rng = np.random.default_rng(seed)
    n_rel = np.clip(np.round(rng.lognormal(np.log(50), 0.9, n_queries)), 5, 300).astype(int)
    recall = rng.uniform(0.2, 0.9, n_systems)
    focus = rng.uniform(0.5, 1.5, n_systems)  # larger: relevant documents nearer the top
    ranks = np.arange(1, DEPTH + 1)
    lists: list[np.ndarray] = []
    for s in range(n_systems):
        # Gumbel top-k: r distinct ranks drawn with weight rank^-focus, for every query.
        keys = -focus[s] * np.log(ranks) + rng.gumbel(size=(n_queries, DEPTH))
        order = np.argsort(-keys, axis=1)
        retrieved = rng.binomial(n_rel, recall[s])
        lists.extend(np.sort(order[q, : retrieved[q]] + 1) for q in range(n_queries))
    # Near-copies: ten systems repeat another system's lists on 80% of the queries.
    copies = rng.choice(n_systems, size=(10, 2), replace=False)
    for copy, source in copies:
        for q in np.flatnonzero(rng.random(n_queries) < 0.8):
            lists[copy * n_queries + q] = lists[source * n_queries + q]
    systems = np.repeat([f"run{s:03d}" for s in range(n_systems)], n_queries)
    queries = np.tile([str(301 + q) for q in range(n_queries)], n_systems)
    return pl.DataFrame(
        {
            "system": systems,
            "query": queries,
            "positions": pl.Series([x.astype(np.uint32) for x in lists], dtype=pl.List(pl.UInt32)),
            "n_rel": np.tile(n_rel, n_systems).astype(np.uint32),
            "n_ret": np.full(n_systems * n_queries, DEPTH, dtype=np.uint32),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    frame = robust04_like()
    mean_retrieved = frame["positions"].list.len().mean()
    print(f"positions frame: {frame.height} rows, {mean_retrieved:.1f} relevant retrieved per row")

    def timed(label: str, run: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = run()
            times.append(time.perf_counter() - start)
        print(
            f"{label}: {result.height} rows, best {min(times):.3f} s, "
            f"median {np.median(times):.3f} s over {args.repeat}"
        )
        return result

    prefs = timed("preferences(sgnLP, rrLP, sgnLR)", lambda: preferences(frame))
    timed("preferences(sgnLP)", lambda: preferences(frame, "sgnLP"))
    timed("preferences(sgnLR)", lambda: preferences(frame, "sgnLR"))
    timed("preferences(LazyFrame).collect()", lambda: preferences(frame.lazy()).collect())
    timed("summarize_preferences", lambda: summarize_preferences(prefs))
    timed("order(mc4, sgnLP)", lambda: order(prefs, "sgnLP"))


if __name__ == "__main__":
    main()
