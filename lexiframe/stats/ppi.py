"""Confidence intervals of a mean when only some queries have human labels.

Prediction-powered inference (Angelopoulos et al., *Science* 2023), as Oosterhuis et al.
("Reliable Confidence Intervals for Information Retrieval Evaluation Using Generative
A.I.", KDD 2024) apply it to IR evaluation: a measure is computed on every query with LLM
labels (f) and on a few with human labels (Y). With n labelled and N unlabelled queries
and a weight λ,

    θ̂_λ = Ȳ_n + λ (f̄_N − f̄_n),    se² = Var(Y − λ f)_n / n + λ² Var(f)_N / N,

and the interval is θ̂_λ ± z_{1−α/2} · se (the central limit theorem). λ = 1 is PPI (the
LLM mean corrected by the mean error on the labelled queries: unbiased whatever the
judge's bias); λ = 0 is the classical interval of the human labels alone; ``"ppi++"``
takes the λ that minimises the variance, Cov(Y, f) / ((1 + n/N) Var(f)), clipped to
[0, 1] (Angelopoulos, Duchi and Zrnic, "PPI++", 2023), so that a useless judge costs
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from lexiframe._utils import as_list, format_row
from lexiframe.errors import InputError
from lexiframe.stats._common import (
    check_choice,
    check_fraction,
    check_no_nulls,
    check_unique,
    eager,
    measure_columns,
)
from lexiframe.validate import require_columns

PpiMethod = Literal["ppi", "ppi++", "classical"]
PPI_METHODS: tuple[str, ...] = ("ppi", "ppi++", "classical")


def ppi_mean(
    per_query_llm: pl.DataFrame | pl.LazyFrame,
    per_query_human: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    alpha: float = 0.05,
    by: str | Sequence[str] = "system",
    method: PpiMethod = "ppi",
) -> pl.DataFrame:
    """The mean of ``measure`` per (by…) group and its 1 − ``alpha`` interval, by PPI.

    ``per_query_llm`` has the measure on every query under the LLM labels, and
    ``per_query_human`` on the labelled queries under the human labels (``by…, query,
    <measure>`` both, e.g. from :func:`lexiframe.evaluate`). The labelled queries are
    those of the human frame; the unlabelled ones the other queries of the LLM frame.
    ``method`` is ``"ppi"`` (λ = 1), ``"ppi++"`` (λ tuned) or ``"classical"`` (λ = 0,
    the human labels alone); see the module's formulas.

    Returns:
        ``by…, measure, method, n_labeled, n_unlabeled, llm_mean, lambda, estimate,
        std_error, ci_low, ci_high, alpha`` sorted by ``by…``; ``llm_mean`` is the mean
        under the LLM labels over all queries (the estimate that trusts the judge).

    >>> import polars as pl
    >>> llm = pl.DataFrame({"system": ["x"] * 6, "query": list("123456"),
    ...                     "AP": [0.6, 0.5, 0.7, 0.4, 0.6, 0.5]})
    >>> human = pl.DataFrame({"system": ["x"] * 3, "query": list("123"),
    ...                       "AP": [0.5, 0.3, 0.6]})
    >>> out = ppi_mean(llm, human, "AP")
    >>> out.select("n_labeled", pl.col("llm_mean", "estimate").round(4)).rows()
    [(3, 0.55, 0.3667)]
    """
    alpha = check_fraction(alpha, "alpha")
    check_choice(method, PPI_METHODS, "PPI method")
    keys = as_list(by)
    llm = _table(per_query_llm, measure, keys, "LLM per-query").rename({measure: "_f"})
    human = _table(per_query_human, measure, keys, "human per-query").rename({measure: "_y"})
    on = [*keys, "query"]
    missing = human.join(llm, on=on, how="anti")
    if missing.height:
        raise InputError(
            f"a query with a human label has no LLM value of {measure!r}: "
            f"{format_row(missing.select(on).row(0, named=True))}; PPI compares the two "
            "labels on the labelled queries, so evaluate every query with the LLM labels"
        )
    labelled = pl.col("_y").is_not_null()
    f_l, f_u = pl.col("_f").filter(labelled), pl.col("_f").filter(~labelled)
    moments = (
        llm.join(human, on=on, how="left")
        .group_by(keys)
        .agg(
            labelled.sum().alias("n_labeled"),
            (~labelled).sum().alias("n_unlabeled"),
            pl.col("_f").mean().alias("llm_mean"),
            pl.col("_y").mean().alias("_mean_y"),
            pl.col("_y").var().alias("_var_y"),
            f_l.mean().alias("_mean_fl"),
            f_l.var().alias("_var_fl"),
            f_u.mean().alias("_mean_fu"),
            f_u.var().alias("_var_fu"),
            pl.cov(pl.col("_y").filter(labelled), f_l).alias("_cov"),
            pl.col("_f").var().alias("_var_f"),
        )
        .sort(keys)
    )
    _check_sizes(moments, keys, method)
    n, big_n = pl.col("n_labeled").cast(pl.Float64), pl.col("n_unlabeled").cast(pl.Float64)
    if method == "ppi":
        weight = pl.lit(1.0)
    elif method == "classical":
        weight = pl.lit(0.0)
    else:
        tuned = pl.col("_cov") / ((1.0 + n / big_n) * pl.col("_var_f"))
        weight = pl.when(pl.col("_var_f") > 0).then(tuned.clip(0.0, 1.0)).otherwise(0.0)
    from scipy import stats  # imported here: SciPy takes half a second to import

    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    lam = pl.col("lambda")
    residual = pl.col("_var_y") - 2.0 * lam * pl.col("_cov") + lam**2 * pl.col("_var_fl")
    unlabelled = pl.when(lam > 0).then(lam**2 * pl.col("_var_fu") / big_n).otherwise(0.0)
    return (
        moments.with_columns(weight.alias("lambda"))
        .with_columns(
            estimate=pl.col("_mean_y")
            + lam * (pl.col("_mean_fu") - pl.col("_mean_fl")).fill_null(0.0),
            std_error=(residual.clip(0.0) / n + unlabelled).sqrt(),
        )
        .select(
            *keys,
            pl.lit(measure).alias("measure"),
            pl.lit(method).alias("method"),
            pl.col("n_labeled").cast(pl.UInt32),
            pl.col("n_unlabeled").cast(pl.UInt32),
            "llm_mean",
            "lambda",
            "estimate",
            "std_error",
            (pl.col("estimate") - z * pl.col("std_error")).alias("ci_low"),
            (pl.col("estimate") + z * pl.col("std_error")).alias("ci_high"),
            pl.lit(alpha).alias("alpha"),
        )
    )


def _table(
    frame: pl.DataFrame | pl.LazyFrame, measure: str, keys: list[str], table: str
) -> pl.DataFrame:
    """``keys…, query, measure`` of one per-query frame, checked."""
    data = eager(frame, table)
    on = [*keys, "query"]
    require_columns(data.schema, [*on, measure], table)
    measure_columns(data.schema, [measure], on, table, frame=data)
    data = data.select(*on, pl.col(measure).cast(pl.Float64))
    check_unique(
        data, on, table, todo="pass the other key columns as by=, e.g. by=['qrels', 'system']"
    )
    check_no_nulls(data, [measure], on, table)
    return data


def _check_sizes(moments: pl.DataFrame, keys: list[str], method: str) -> None:
    few = moments.filter(pl.col("n_labeled") < 2)
    if few.height:
        example = format_row(few.select(*keys, "n_labeled").row(0, named=True))
        raise InputError(
            "PPI needs two or more queries with human labels per group to estimate the "
            f"variance of the error; {example}"
        )
    if method != "classical":
        none = moments.filter(pl.col("n_unlabeled") < 1)
        if none.height:
            raise InputError(
                "every query of "
                f"{format_row(none.select(keys).row(0, named=True))} has a human label: no "
                "query is left for the LLM labels to add; use method='classical', or pass "
                "the LLM frame with the queries that have no human label"
            )
