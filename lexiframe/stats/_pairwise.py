"""The pair-by-pair tests over a table: sign, t, Wilcoxon, Fisher's and the bootstrap, and
the effect sizes (:func:`lexiframe.stats.significance` calls them)."""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl

from lexiframe.errors import InputError
from lexiframe.stats._common import PAIR_KEYS, Seed, generator, negligible
from lexiframe.stats._matrices import Block, pair_frame, residual_variance
from lexiframe.stats.elementary import sign_test, t_test, wilcoxon_test

_PAIR_STEP = 4096  # pairs whose per-query differences are formed at once


def pairwise(pairs: pl.DataFrame, measure: str, by: list[str], test: str) -> pl.DataFrame:
    value = pl.col(measure).cast(pl.Float64)
    summary = (
        pairs.group_by([*by, *PAIR_KEYS])
        .agg(
            pl.len().alias("n_queries"),
            value.mean().alias("mean"),
            value.std(ddof=1).fill_null(0.0).alias("std"),
            (value > 0).sum().alias("wins"),
            (value < 0).sum().alias("losses"),
            value.abs().mean().alias("size"),
            value.abs().max().alias("largest"),
        )
        .sort([*by, *PAIR_KEYS])
    )
    wins = summary["wins"].to_numpy()
    losses = summary["losses"].to_numpy()
    p_sign = sign_test(wins, losses)
    if test == "sign":
        return summary.select(
            *by,
            *PAIR_KEYS,
            "n_queries",
            "mean",
            pl.Series("statistic", wins.astype(np.float64)),
            pl.Series("p_value", p_sign),
            pl.lit("sign").alias("test"),
        )
    # the degenerate cases, by the shared tolerance (as the bootstrap and effect sizes)
    all_zero = negligible(summary["largest"].to_numpy())
    t, p_t = t_test(summary["mean"], summary["std"], summary["n_queries"])
    fallback = np.isnan(p_t) & ~all_zero  # constant non-zero values (or one query)
    p = np.where(all_zero, 1.0, np.where(fallback, p_sign, p_t))
    statistic = np.where(fallback, wins.astype(np.float64), t)
    return summary.select(
        *by,
        *PAIR_KEYS,
        "n_queries",
        "mean",
        pl.Series("statistic", statistic, nan_to_null=True),
        pl.Series("p_value", p),
        pl.Series("test", np.where(fallback, "sign", test)),
    )


def matrix_tests(
    summary: pl.DataFrame,
    matrix: np.ndarray,
    by: list[str],
    test: str,
    n_replicates: int,
    seed: Seed | None,
    confidence: float,
) -> pl.DataFrame:
    """Fisher's, the bootstrap or Wilcoxon's test of every pair from its row of per-query
    differences, the pairs with q queries together."""
    from lexiframe.stats import resampling

    n_replicates = resampling.check_replicates(n_replicates)
    if test == "bootstrap" and seed is None:
        raise InputError(
            "test='bootstrap' draws random resamples of the queries and needs an explicit "
            "seed=, e.g. seed=0, so that its p-values can be reproduced"
        )
    rng = None if seed is None else generator(seed)
    counts = summary["n_queries"].to_numpy()
    p = np.empty(len(counts))
    statistic = summary["mean"].to_numpy().copy()
    low = np.full(len(counts), np.nan)
    high = np.full(len(counts), np.nan)
    names = np.full(len(counts), test, dtype=object)
    for n in np.unique(counts):  # one matrix per number of queries (usually one)
        rows = np.flatnonzero(counts == n)
        d = matrix[rows, :n]
        if test == "fisher":
            p[rows] = resampling.randomization_test(d, n_replicates=n_replicates, seed=rng)
        elif test == "wilcoxon":
            statistic[rows], p[rows], _ = wilcoxon_test(d)
        else:
            rng = cast(np.random.Generator, rng)  # the bootstrap's seed is required above
            result = resampling.bootstrap_test(
                d, n_replicates=n_replicates, seed=rng, confidence=confidence
            )
            p[rows], low[rows], high[rows] = result
            size = np.abs(d).mean(axis=1)
            spread = d.std(axis=1, ddof=1) if n > 1 else np.zeros(len(rows))
            # equal non-zero values: no variance to resample, the sign test (as for "t")
            constant = negligible(spread, size) & ~negligible(size)
            with np.errstate(divide="ignore", invalid="ignore"):
                statistic[rows] = d.mean(axis=1) / (spread / np.sqrt(n))
            if constant.any():
                wins, losses = (d[constant] > 0).sum(axis=1), (d[constant] < 0).sum(axis=1)
                p[rows[constant]] = sign_test(wins, losses)
                statistic[rows[constant]] = wins
                names[rows[constant]] = "sign"
    return summary.select(
        *by,
        *PAIR_KEYS,
        "n_queries",
        "mean",
        pl.Series("statistic", statistic, nan_to_null=True),
        pl.Series("p_value", p),
        pl.Series("test", names, dtype=pl.String),
        pl.Series("ci_low", low, nan_to_null=True),
        pl.Series("ci_high", high, nan_to_null=True),
    )


def cohens_d(mean: np.ndarray, std: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The paired Cohen's d, mean / std; NaN where std is negligible beside the values'
    mean size (the shared tolerance, as the t-test's fallback)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(negligible(std, size), np.nan, mean / std)


def effect_sizes(pairs: pl.DataFrame, measure: str, by: list[str]) -> pl.DataFrame:
    """Paired Cohen's d of every pair of a pair table (ES_HSD needs complete matrices)."""
    value = pl.col(measure).cast(pl.Float64)
    moments = pairs.group_by([*by, *PAIR_KEYS]).agg(
        value.mean().alias("mean"),
        value.std(ddof=1).fill_null(0.0).alias("std"),
        value.abs().mean().alias("size"),
    )
    d = cohens_d(*(moments[name].to_numpy() for name in ("mean", "std", "size")))
    return moments.select(
        *by,
        *PAIR_KEYS,
        pl.Series("cohens_d", d, dtype=pl.Float64, nan_to_null=True),
        pl.lit(None, dtype=pl.Float64).alias("es_hsd"),
    )


def block_effect_sizes(blocks: list[Block], by: list[str]) -> pl.DataFrame:
    """Paired Cohen's d and Sakai's ES_HSD of every pair, from the systems × queries
    matrices; the differences x_a − x_b are formed (not a Gram matrix, whose cancellation
    would hide constant differences from the tolerance)."""
    parts = []
    for block in blocks:
        x = block.values
        a, b = np.triu_indices(x.shape[0], k=1)
        system_mean = x.mean(axis=1)
        difference = system_mean[:, None] - system_mean[None, :]
        d = np.full(difference.shape, np.nan)
        for start in range(0, len(a), _PAIR_STEP):  # bounded memory: pairs in blocks
            i, j = a[start : start + _PAIR_STEP], b[start : start + _PAIR_STEP]
            rows = x[i] - x[j]
            spread = rows.std(axis=1, ddof=1)
            d[i, j] = cohens_d(rows.mean(axis=1), spread, np.abs(rows).mean(axis=1))
        residual = np.sqrt(residual_variance(x))
        es = (
            np.full_like(difference, np.nan)
            if negligible(residual, float(np.abs(x).max()))
            else difference / residual
        )
        frame = pair_frame(block, by, {"cohens_d": d, "es_hsd": es}).drop("n_queries")
        parts.append(frame.with_columns(pl.col("cohens_d", "es_hsd").fill_nan(None)))
    return pl.concat(parts)
