"""The TREC track workflow in pandas, through the ``.lexi`` accessor.

pandas frames go in and come out; the work runs on the same Polars engine. Writes
``lexiframe-output/pandas_workflow/`` under the current directory:

    python examples/pandas_workflow.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import lexiframe as lf

OUT = Path("lexiframe-output") / "pandas_workflow"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    track = lf.datasets.demo_track()
    run = track.run.to_pandas()  # any pandas frame with system, query, doc, score
    qrels = track.qrels.to_pandas()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)  # 2 queries not evaluated
        positions = run.lexi.positions(qrels)  # positions: Arrow-backed list column

    per_query = positions.lexi.measures(["RR", "AP", "nDCG@10", "ASL"])
    means = per_query.lexi.summarize().sort_values("AP", ascending=False)
    print(means.to_string(index=False))

    prefs = positions.lexi.preferences(["sgnLP", "sgnLR"])
    pair_summary = prefs.lexi.summarize()
    mc4 = prefs.lexi.order("sgnLP", method="mc4")
    borda = prefs.lexi.order("sgnLR", method="borda")
    by_ap = per_query.lexi.order("AP", method="mean")
    table = (
        mc4[["system", "rank"]]
        .merge(borda[["system", "rank"]], on="system", suffixes=("_mc4_sgnLP", "_borda_sgnLR"))
        .merge(by_ap[["system", "rank"]].rename(columns={"rank": "rank_mean_AP"}), on="system")
    )
    print(table.to_string(index=False))

    per_query.to_parquet(OUT / "per_query.parquet")
    pair_summary.to_parquet(OUT / "pair_summary.parquet")
    table.to_parquet(OUT / "orderings.parquet")
    print(f"tables written to {OUT}/")


if __name__ == "__main__":
    main()
