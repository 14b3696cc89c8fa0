"""Resampling tests of paired differences, every pair at once (docs/analyses.md).

Both tests take a matrix of per-query differences, one row per system pair, and draw one
set of random sign flips or query resamples that every row shares (each row's test is the
same as if it had its own draws; sharing them makes the work a matrix product). Draws come
in blocks of replicates, so memory stays bounded whatever the number of pairs, queries and
replicates.

- :func:`randomization_test`: Fisher's randomisation (paired permutation) test, the test
  Smucker, Allan and Carterette (CIKM 2007) recommend for IR: the mean difference against
  its distribution when the sign of each query's difference is flipped at random.
- :func:`bootstrap_test`: the paired bootstrap test of Sakai's book (Sakai 2018,
  *Laboratory Experiments in Information Retrieval*): the t statistic of the mean
  difference against its distribution over resamples of the queries (with replacement) of
  the differences shifted to mean 0; and the percentile confidence interval of the mean
  difference from the same resamples.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lexiframe import intervals
from lexiframe.errors import InputError
from lexiframe.intervals import (
    DEFAULT_REPLICATES,
    check_confidence,
    percentiles,
    resampled_means,
    row_blocks,
)
from lexiframe.stats._common import (
    TOLERANCE,
    Seed,
    difference_matrix,
    generator,
    negligible,
)
from lexiframe.validate import require_positive_int


def check_replicates(n_replicates: object) -> int:
    """``n_replicates`` as a positive integer, or an :class:`InputError` naming it."""
    return require_positive_int(n_replicates, "n_replicates")


def is_exact(n_queries: int, n_replicates: int) -> bool:
    """Whether :func:`randomization_test` enumerates the 2^q sign patterns: when they are
    no more than the replicates (the rule of ``scipy.stats.permutation_test``)."""
    return n_queries <= largest_exact(n_replicates)


def largest_exact(n_replicates: int) -> int:
    """The most queries whose 2^q sign patterns ``n_replicates`` covers (at most 62).

    >>> largest_exact(1000), largest_exact(1024)
    (9, 10)
    """
    return min(int(n_replicates).bit_length() - 1, 62)


def _sign_blocks(
    n_queries: int, n_replicates: int, rng: np.random.Generator | None, rows: int
) -> Iterator[np.ndarray]:
    """Blocks of sign vectors (replicates × queries) of ±1: every pattern once when exact,
    else ``n_replicates`` random ones."""
    step = max(1, intervals.BLOCK // max(rows, n_queries, 1))
    if rng is None:
        total = 2**n_queries
        bits = np.arange(n_queries, dtype=np.int64)
        for start in range(0, total, step):
            codes = np.arange(start, min(start + step, total), dtype=np.int64)
            yield 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
        return
    for start in range(0, n_replicates, step):
        count = min(step, n_replicates - start)
        yield np.where(rng.random((count, n_queries)) < 0.5, -1.0, 1.0)


def randomization_test(
    differences: ArrayLike, *, n_replicates: int = DEFAULT_REPLICATES, seed: Seed | None = None
) -> np.ndarray:
    """Two-sided p-values of Fisher's randomisation test, one per row of ``differences``.

    Under the null hypothesis the two systems are exchangeable on each query, so the sign
    of each per-query difference d_i is equally likely to be + or −. The p-value is the
    fraction of sign patterns whose mean reaches the observed one in absolute value
    (Smucker et al. 2007). With q queries, the 2^q patterns are enumerated when
    2^q ≤ ``n_replicates`` (the exact test, no seed needed): p = #{patterns reaching} / 2^q,
    never 0 since the observed pattern is one of them. Else B = ``n_replicates`` random
    patterns are drawn from ``seed``, shared by all rows, and p = (c + 1)/(B + 1) with c
    the patterns reaching (the observed pattern counted once more, as
    ``scipy.stats.permutation_test`` does): never below 1/(B + 1), so that a correction
    never sees a p of 0 (docs/analyses.md). Sums within the shared tolerance
    (:data:`lexiframe.stats._common.TOLERANCE` × Σ|d_i|) of the observed one reach it.

    ``differences`` is a pairs × queries matrix (or one vector).

    >>> randomization_test([0.2, 0.1, 0.3, -0.1]).tolist()  # exact: 6 of the 16 patterns
    [0.375]
    >>> randomization_test([[0.2] * 20, [0.0] * 20], n_replicates=1000, seed=0).tolist()
    [0.000999000999000999, 1.0]
    """
    d = difference_matrix(differences)
    n_replicates = check_replicates(n_replicates)
    exact = is_exact(d.shape[1], n_replicates)
    if not exact and seed is None:
        raise InputError(
            f"the randomisation test of {d.shape[1]} queries draws {n_replicates} random "
            "sign patterns and needs an explicit seed=, e.g. seed=0, so that its p-values "
            "can be reproduced"
        )
    rng = None if exact else generator(seed)  # type: ignore[arg-type]
    observed = np.abs(d.sum(axis=1))
    threshold = observed - TOLERANCE * np.maximum(np.abs(d).sum(axis=1), 1.0)
    reached = np.zeros(d.shape[0], dtype=np.int64)
    total = 0
    for signs in _sign_blocks(d.shape[1], n_replicates, rng, d.shape[0]):
        sums = np.abs(d @ signs.T)  # pairs × replicates of the block
        reached += (sums >= threshold[:, None]).sum(axis=1)
        total += signs.shape[0]
    return reached / total if exact else (reached + 1) / (total + 1)


class BootstrapResult(NamedTuple):
    """What :func:`bootstrap_test` returns: per row, the p-value and the interval."""

    p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def bootstrap_test(
    differences: ArrayLike,
    *,
    n_replicates: int = DEFAULT_REPLICATES,
    seed: Seed,
    confidence: float = 0.95,
) -> BootstrapResult:
    """The paired bootstrap test and percentile interval of each row of ``differences``.

    Sakai's paired bootstrap test: with the q differences d_i, their mean d̄ and standard
    deviation s, t = d̄ / (s/√q); each of the B = ``n_replicates`` resamples draws q
    queries with replacement from the shifted differences w_i = d_i − d̄ (the null
    hypothesis of mean 0) and computes t* = w̄* / (s*/√q); p = (c + 1)/(B + 1), c =
    #{b : |t*_b| ≥ |t|} (never 0, as for :func:`randomization_test`). A resample of equal
    values (s* = 0) counts as reaching t unless its mean is 0. The degenerate cases are
    decided with the shared tolerance (:func:`lexiframe.stats._common.negligible`): all
    d_i = 0 gives p = 1; all equal and non-zero (s negligible beside |d̄|), t = ∞ and
    p = 1/(B + 1) (every shifted resample is 0; :func:`lexiframe.stats.significance` uses
    the sign test there). The percentile
    interval at ``confidence`` is the (1 − c)/2 and (1 + c)/2 quantiles (linear
    interpolation) of the resampled means of the d_i themselves, as
    ``scipy.stats.bootstrap(..., method="percentile")`` computes them from the same
    ``seed`` and number of resamples. All rows share the resamples.

    >>> result = bootstrap_test([0.2, 0.1, 0.3, -0.1, 0.2, 0.4], n_replicates=2000, seed=0)
    >>> [round(float(x[0]), 6) for x in result]
    [0.054473, 0.05, 0.3]
    """
    d = difference_matrix(differences)
    n_replicates = check_replicates(n_replicates)
    confidence = check_confidence(confidence)
    rng = generator(seed)
    rows, n = d.shape
    mean = d.mean(axis=1)
    variance = d.var(axis=1, ddof=1) if n > 1 else np.zeros(rows)
    size = np.abs(d).mean(axis=1)  # the scale of the tolerance
    flat = negligible(np.sqrt(variance), size)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.abs(mean) / np.sqrt(variance / n)
    observed = np.where(flat, np.where(negligible(mean, size), 0.0, np.inf), observed)
    # the resampled means of every row are kept for the interval: rows in blocks
    state = rng.bit_generator.state
    reached = np.zeros(rows, dtype=np.int64)
    low = np.empty(rows)
    high = np.empty(rows)
    for block in row_blocks(rows, n_replicates):
        rng.bit_generator.state = state  # every block of rows sees the same resamples
        resampled, squares = resampled_means(d[block], n_replicates, rng)
        shifted = resampled - mean[block, None]
        spread = np.maximum(squares - resampled**2, 0.0) * (n / max(n - 1, 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(shifted) / np.sqrt(spread / n)
        zero = negligible(shifted, size[block, None])
        t = np.where(zero, 0.0, np.where(np.isnan(t), np.inf, t))
        reached[block] = (t >= observed[block, None] * (1 - TOLERANCE)).sum(axis=1)
        low[block], high[block] = percentiles(resampled, confidence)
    all_zero = negligible(d).all(axis=1)
    p = np.where(all_zero, 1.0, (reached + 1) / (n_replicates + 1))
    return BootstrapResult(p, low, high)
