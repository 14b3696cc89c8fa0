"""Several tracks in one frame, evaluated per track with ``by="track"``.

Two synthetic tracks share query ids, so both the run and the qrels carry a ``track``
column and are joined on it. Writes ``lexiframe-output/by_track/`` under the current
directory:

    python examples/by_track.py
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import lexiframe as lf

OUT = Path("lexiframe-output") / "by_track"


def tracks() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Runs and qrels of two synthetic tracks, stacked with a track column."""
    runs, qrels = [], []
    for name, seed, n_systems in (("robust", 1, 6), ("web", 2, 5)):
        track = lf.datasets.synthetic_track(n_systems=n_systems, n_queries=15, depth=50, seed=seed)
        runs.append(track.run.with_columns(track=pl.lit(name)))
        qrels.append(track.qrels.with_columns(track=pl.lit(name)))
    return pl.concat(runs), pl.concat(qrels)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    run, qrels = tracks()
    positions = run.lexi.positions(qrels, by="track")
    per_query = positions.lexi.measures(["RR", "AP", "nDCG@10"])
    means = per_query.lexi.summarize(by="track")
    print(means)

    prefs = positions.lexi.preferences(by="track")
    pair_summary = prefs.lexi.summarize(by="track")
    mc4 = prefs.lexi.order("sgnLP", by="track")
    by_ap = per_query.lexi.order("AP", method="mean", by="track")
    table = mc4.join(by_ap, on=["track", "system"], suffix="_mean_AP").sort("track", "rank")
    print(table)

    means.write_parquet(OUT / "means.parquet")
    pair_summary.write_parquet(OUT / "pair_summary.parquet")
    table.write_parquet(OUT / "orderings.parquet")
    print(f"tables written to {OUT}/")


if __name__ == "__main__":
    main()
