"""A TREC track end to end, on the synthetic track bundled with lexiframe.

Writes the track as TREC files, reads them back, builds the positions frame, computes
per-query measures and lexicographic preferences, orders the systems (MC4 and Borda on the
preferences, the mean of the metrics) and saves every table as parquet. Everything goes
into ``lexiframe-output/trec_track/`` under the current directory:

    python examples/trec_track.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

import lexiframe as lf

OUT = Path("lexiframe-output") / "trec_track"
MEASURES = ["RR", "AP", "nDCG@10", "P@10", "TSE", "ASL@g1-10"]


def write_trec_files(folder: Path) -> None:
    """The demo track as TREC text files: one run file per system, and the qrels."""
    track = lf.datasets.demo_track()
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    for (system,), run in track.run.partition_by("system", as_dict=True).items():
        lf.write_trec_run(run, folder / "runs" / f"{system}.txt")
    lf.write_trec_qrels(track.qrels, folder / "qrels.txt")


def main() -> None:
    write_trec_files(OUT)
    run = lf.read_run(OUT / "runs")
    qrels = lf.read_qrels(OUT / "qrels.txt")
    print(f"read {run.height} run rows of {run['system'].n_unique()} systems")

    # Queries that cannot be evaluated (unjudged, or without a relevant document) are
    # counted in a warning; lf.coverage gives the counts per system.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", lf.DroppedQueriesWarning)
        positions = run.lexi.positions(qrels)
    for warning in caught:
        print(f"note: {warning.message}")

    per_query = positions.lexi.measures(MEASURES)
    print(per_query.lexi.summarize().sort("AP", descending=True))

    prefs = positions.lexi.preferences(["sgnLP", "rrLP", "sgnLR"])
    pair_summary = prefs.lexi.summarize()

    # ASL is a cost (lower is better): order() wants larger-is-better, so negate it.
    per_query = per_query.with_columns(neg_ASL=-pl.col("ASL@g1-10"))
    orderings = {
        "MC4 sgnLP": prefs.lexi.order("sgnLP", method="mc4"),
        "Borda sgnLP": prefs.lexi.order("sgnLP", method="borda"),
        "MC4 sgnLR": prefs.lexi.order("sgnLR", method="mc4"),
        "mean RR": per_query.lexi.order("RR", method="mean"),
        "mean AP": per_query.lexi.order("AP", method="mean"),
        "mean ASL@g1-10": per_query.lexi.order("neg_ASL", method="mean"),
    }
    ranks = (
        pl.concat(
            [
                frame.select("system", "rank").with_columns(ordering=pl.lit(name))
                for name, frame in orderings.items()
            ]
        )
        .pivot(on="ordering", index="system", values="rank")
        .sort("MC4 sgnLP")
    )
    print(ranks)

    positions.write_parquet(OUT / "positions.parquet")
    per_query.drop("neg_ASL").write_parquet(OUT / "per_query.parquet")
    prefs.write_parquet(OUT / "preferences.parquet")
    pair_summary.write_parquet(OUT / "pair_summary.parquet")
    ranks.write_parquet(OUT / "orderings.parquet")
    print(f"tables written to {OUT}/")


if __name__ == "__main__":
    main()
