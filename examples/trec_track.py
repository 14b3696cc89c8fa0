"""A TREC track end to end, on the synthetic track bundled with lexiframe.

Writes the track as TREC files, reads them back, builds the positions frame, computes
per-query measures and lexicographic preferences, orders the systems (MC4 and Borda on the
preferences, the mean of the metrics), and ends with significance: the discriminative power
of sgnLP, rrLP, RR and AP (the fraction of system pairs significant at α = 0.05 after Holm's
correction) and a report table of the systems with significance markers, as Markdown and
LaTeX. Every table is saved as parquet. Everything goes into ``lexiframe-output/trec_track/``
under the current directory:

    python examples/trec_track.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

import lexiframe as lf
from lexiframe import stats

OUT = Path("lexiframe-output") / "trec_track"
MEASURES = ["RR", "AP", "nDCG@10", "P@10", "TSE", "ASL@g1-10"]
REPORTED = ["RR", "AP", "nDCG@10", "ASL@g1-10"]


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

    # The qrels are graded, so the frame keeps the grades: nDCG@10 is trec_eval's graded
    # ndcg_cut_10, the same number lf.evaluate and the CLI give.
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

    per_query = per_query.drop("neg_ASL")

    # Discriminative power, the papers' tests: the sign test for sgnLP (wins and losses),
    # the one-sample t-test for rrLP, the paired t-test for the metrics; Holm's correction
    # over the 28 system pairs of each measure.
    power = pl.concat(
        [
            stats.discriminative_power(prefs, ["sgnLP", "rrLP"]),
            stats.discriminative_power(per_query, ["RR", "AP"]),
        ]
    )
    print(power)

    # Mean of each measure per system, marked with the systems it is significantly better
    # than (paired t-test, Holm). ASL is a cost: the smaller mean wins.
    report = stats.report(per_query, REPORTED, lower_is_better=["ASL@g1-10"])
    print(stats.to_markdown(report))

    positions.write_parquet(OUT / "positions.parquet")
    per_query.write_parquet(OUT / "per_query.parquet")
    prefs.write_parquet(OUT / "preferences.parquet")
    pair_summary.write_parquet(OUT / "pair_summary.parquet")
    ranks.write_parquet(OUT / "orderings.parquet")
    power.write_parquet(OUT / "discriminative_power.parquet")
    report.write_parquet(OUT / "report.parquet")
    (OUT / "report.md").write_text(stats.to_markdown(report) + "\n", encoding="utf-8")
    (OUT / "report.tex").write_text(stats.to_latex(report) + "\n", encoding="utf-8")
    print(f"tables written to {OUT}/")


if __name__ == "__main__":
    main()
