"""Significance tests between systems, side by side, on one per-query metric.

Every pair of the bundled synthetic track's 8 systems is compared on AP with the paired
t-test (corrected for the 28 comparisons with none, Bonferroni and Holm), Tukey's HSD with
topic blocking (the variance between queries is removed from the error term) and the
randomised Tukey HSD (1000 seeded permutations of the systems within each query). The
HSD tests control the family-wise error themselves, so they are not corrected again.
Writes ``lexiframe-output/significance/`` under the current directory:

    python examples/significance.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

import lexiframe as lf
from lexiframe import stats

OUT = Path("lexiframe-output") / "significance"
MEASURE = "AP"
ALPHA = 0.05
SEED = 0
PAIR = ["system_a", "system_b"]


def tests(metrics: pl.DataFrame) -> pl.DataFrame:
    """Every pair under every (test, correction), in the long format of stats.significance."""
    runs = [
        stats.significance(metrics, MEASURE, test="paired_t", correction=correction)
        for correction in ("none", "bonferroni", "holm")
    ]
    runs.append(stats.tukey_hsd(metrics, MEASURE))
    runs.append(stats.randomized_tukey_hsd(metrics, MEASURE, seed=SEED, n_replicates=1000))
    return pl.concat(runs)


def side_by_side(long: pl.DataFrame) -> pl.DataFrame:
    """One row per pair: the mean difference, one adjusted p-value column per method."""
    means = long.filter(pl.col("test") == "paired_t").unique(PAIR).select(*PAIR, "mean")
    p_values = long.with_columns(method=pl.format("{} ({})", "test", "correction")).pivot(
        on="method", index=PAIR, values="p_adjusted"
    )
    return means.join(p_values, on=PAIR).sort(PAIR)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)  # 2 queries not evaluated
        positions = track.run.lexi.positions(track.qrels)
    # A system that skipped a query scores 0 there, so every system has every query, as
    # the HSD tests (blocked on queries) need.
    metrics = positions.lexi.measures([MEASURE])

    long = tests(metrics)
    table = side_by_side(long)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=160):
        print(table)

    # How many of the 28 pairs each method calls significant at α = 0.05.
    power = (
        long.group_by("test", "correction", maintain_order=True)
        .agg(
            pl.len().alias("n_pairs"),
            (pl.col("p_adjusted") < ALPHA).sum().alias("n_significant"),
        )
        .with_columns(
            alpha=pl.lit(ALPHA), discriminative_power=pl.col("n_significant") / pl.col("n_pairs")
        )
    )
    print(power)

    long.write_parquet(OUT / "tests.parquet")
    table.write_parquet(OUT / "p_values.parquet")
    power.write_parquet(OUT / "discriminative_power.parquet")
    print(f"tables written to {OUT}/")


if __name__ == "__main__":
    main()
