"""Elementary tests of many pairs at once, each row of a matrix a pair (docs/analyses.md).

- :func:`sign_test`: the two-sided sign test from win and loss counts;
- :func:`t_test`: Student's one-sample t-test against 0 from moments;
- :func:`wilcoxon_test`: the Wilcoxon signed-rank test of per-query differences, what
  ``scipy.stats.wilcoxon`` computes, with its choice between the exact distribution and
  the normal approximation and its three ways of handling zero differences.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike

from lexiframe.errors import InputError
from lexiframe.stats._common import check_choice, difference_matrix, negligible

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]
ZERO_METHODS: tuple[str, ...] = ("wilcox", "pratt", "zsplit")
WilcoxonMethod = Literal["auto", "exact", "asymptotic"]
WILCOXON_METHODS: tuple[str, ...] = ("auto", "exact", "asymptotic")
_EXACT_LIMIT = 50  # SciPy's "auto": the exact distribution up to 50 differences
_PERMUTATION_LIMIT = 13  # with ties or zeros, every sign pattern up to 13 (2^13 ≤ 9,999)


def sign_test(wins: ArrayLike, losses: ArrayLike) -> np.ndarray:
    """Two-sided sign test p-values, vectorised: ``binomtest(wins, wins + losses).pvalue``.

    For p = 1/2 the binomial distribution is symmetric, so the two-sided p-value is
    min(1, 2·F(min(w, l); w + l, 1/2)), F the binomial CDF; p = 1 when w + l = 0.

    >>> sign_test([9, 5, 0], [1, 5, 0]).round(6).tolist()
    [0.021484, 1.0, 1.0]
    """
    wins = np.asarray(wins, dtype=np.int64)
    losses = np.asarray(losses, dtype=np.int64)
    for name, counts in (("wins", wins), ("losses", losses)):
        if (counts < 0).any():
            index = int(np.flatnonzero(np.reshape(counts, -1) < 0)[0])
            raise InputError(
                f"{name} must be non-negative counts of queries, but {name}[{index}] is "
                f"{int(np.reshape(counts, -1)[index])}"
            )
    from scipy import stats  # SciPy is imported where it is used (start-up time)

    total = wins + losses
    p = 2.0 * stats.binom.cdf(np.minimum(wins, losses), total, 0.5)
    return np.where(total > 0, np.minimum(p, 1.0), 1.0)


def t_test(mean: ArrayLike, std: ArrayLike, n: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Student's one-sample t-test against 0 from moments: t = x̄ / (s/√n), df = n − 1.

    Returns ``(t, p)`` with the two-sided p = 2·(1 − F_t(|t|; n − 1)), what
    ``scipy.stats.ttest_1samp`` computes. Rows with n < 2, or with s negligible beside
    |x̄| (the shared tolerance, :func:`lexiframe.stats._common.negligible`: constant
    values up to rounding), give NaN.

    >>> t, p = t_test([0.5, 0.1], [1.0, 1e-17], [16, 5])
    >>> t.tolist(), p.round(6).tolist()
    ([2.0, nan], [0.063945, nan])
    """
    mean = np.asarray(mean, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    valid = (n >= 2) & ~negligible(std, mean)
    t = np.full(mean.shape, np.nan)
    t[valid] = mean[valid] / (std[valid] / np.sqrt(n[valid]))
    from scipy import stats

    p = np.full(mean.shape, np.nan)
    p[valid] = 2.0 * stats.t.sf(np.abs(t[valid]), n[valid] - 1)
    return t, p


class WilcoxonResult(NamedTuple):
    """What :func:`wilcoxon_test` returns, per row: SciPy's statistic min(R⁺, R⁻), the
    two-sided p-value, and the method that gave it (``"exact"``, ``"permutation"`` or
    ``"asymptotic"``)."""

    statistic: np.ndarray
    p_value: np.ndarray
    method: np.ndarray


def wilcoxon_test(
    differences: ArrayLike,
    *,
    zero_method: ZeroMethod = "wilcox",
    method: WilcoxonMethod = "auto",
    correction: bool = False,
) -> WilcoxonResult:
    """The two-sided Wilcoxon signed-rank test of each row of ``differences``.

    The |d_i| are ranked (ties get their average rank) and R⁺, R⁻ are the sums of the
    ranks of the positive and of the negative differences; the statistic is min(R⁺, R⁻),
    as ``scipy.stats.wilcoxon(d, zero_method=..., method=..., correction=...)`` gives
    for each row. Zero differences (within the shared tolerance of 0) are handled by
    ``zero_method``: ``"wilcox"`` drops them (SciPy's default), ``"pratt"`` ranks them and
    then drops their ranks, ``"zsplit"`` splits their ranks between R⁺ and R⁻.

    ``method="auto"`` is SciPy's choice, made per row: more than 50 differences, the
    normal approximation; otherwise without ties or zeros the exact null distribution of
    R⁺; with ties or zeros, every one of the 2^q sign patterns up to q = 13 (SciPy's
    permutation test, exact there), else the normal approximation. The approximation's
    variance has the tie correction (and Pratt's for zeros), and ``correction=True`` a
    continuity correction. ``"exact"`` and ``"asymptotic"`` force one method. A row with
    no non-zero difference has p = 1.

    >>> result = wilcoxon_test([[0.2, 0.1, 0.3, -0.05, 0.4, 0.25], [0.1, -0.1, 0, 0.2, 0, 0]])
    >>> result.statistic.tolist(), result.p_value.round(6).tolist(), result.method.tolist()
    ([1.0, 1.5], [0.0625, 0.75], ['exact', 'permutation'])
    """
    d = difference_matrix(differences)
    zero_method = cast(ZeroMethod, check_choice(zero_method, ZERO_METHODS, "zero_method"))
    method = cast(WilcoxonMethod, check_choice(method, WILCOXON_METHODS, "method"))
    if not isinstance(correction, bool):
        raise InputError(f"correction must be True or False, not {correction!r}")
    zero = negligible(d)
    d = np.where(zero, 0.0, d)
    # Wilcox's zeros rank last (+inf) so that the others keep ranks 1…n; then they drop
    magnitude = np.where(zero, np.inf, np.abs(d)) if zero_method == "wilcox" else np.abs(d)
    ranks, tie_size = _average_ranks(magnitude)
    if zero_method == "wilcox":
        ranks = np.where(zero, 0.0, ranks)
    positive = (ranks * (d > 0)).sum(axis=1)  # R⁺ of the non-zero differences
    shared = (ranks * zero).sum(axis=1) / 2 if zero_method == "zsplit" else 0.0
    r_plus = positive + shared
    r_minus = (ranks * (d < 0)).sum(axis=1) + shared
    n_zero = zero.sum(axis=1)
    count = d.shape[1] - (n_zero if zero_method == "wilcox" else np.zeros_like(n_zero))
    # the rows SciPy's "auto" sends to each method
    has_ties = ((tie_size > 1) & ~zero).any(axis=1)
    if method == "auto":
        exact = (d.shape[1] <= _EXACT_LIMIT) & ~has_ties & (n_zero == 0)
        permutation = ~exact & (d.shape[1] <= _PERMUTATION_LIMIT)
    else:
        exact = np.full(d.shape[0], method == "exact")
        permutation = np.zeros(d.shape[0], dtype=bool)
    asymptotic = ~exact & ~permutation
    p = np.ones(d.shape[0])
    if asymptotic.any():
        # the zeros are out of the tie correction, but for zsplit, which ranks them
        untied = zero if zero_method != "zsplit" else np.zeros_like(zero)
        p[asymptotic] = _normal_p(
            r_plus[asymptotic],
            count[asymptotic],
            n_zero[asymptotic],
            np.where(untied, 0.0, tie_size**2 - 1)[asymptotic],
            zero_method,
            correction,
        )
    if exact.any():
        p[exact] = _exact_p(r_plus[exact], count[exact])
    if permutation.any():
        signed = np.where(zero, 0.0, ranks)[permutation]
        p[permutation] = _permutation_p(signed, positive[permutation])
    p = np.where(zero.all(axis=1), 1.0, p)
    names = np.where(exact, "exact", np.where(permutation, "permutation", "asymptotic"))
    return WilcoxonResult(np.minimum(r_plus, r_minus), np.clip(p, 0.0, 1.0), names)


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the average rank (1-based) of each value and the size of its tie group."""
    rows, n = values.shape
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    index = np.broadcast_to(np.arange(n), (rows, n))
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((rows, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, index, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, index, n)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, n))
    sizes = np.empty((rows, n))
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=1)
    np.put_along_axis(sizes, order, (last - first + 1).astype(np.float64), axis=1)
    return ranks, sizes


def _normal_p(
    r_plus: np.ndarray,
    count: np.ndarray,
    n_zero: np.ndarray,
    tie_terms: np.ndarray,
    zero_method: str,
    correction: bool,
) -> np.ndarray:
    """The normal approximation: mean n(n+1)/4, variance n(n+1)(2n+1)/24 less Σ(t³ − t)/48
    over the tie groups (each position of a group of t adds t² − 1 to ``tie_terms``), less
    the zeros' share for Pratt."""
    from scipy import stats

    n = count.astype(np.float64)
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1)
    if zero_method == "pratt":
        z0 = n_zero.astype(np.float64)
        mean = mean - z0 * (z0 + 1) / 4
        variance = variance - z0 * (z0 + 1) * (2 * z0 + 1)
    ties = tie_terms.sum(axis=1)
    se = np.sqrt(np.maximum(variance - ties / 2, 0.0) / 24)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (r_plus - mean) / se
        if correction:
            z = z - np.sign(z) * 0.5 / se
    return np.where(se > 0, np.minimum(1.0, 2.0 * stats.norm.sf(np.abs(z))), 1.0)


def _exact_p(r_plus: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Two-sided p from the exact null distribution of R⁺ (no ties): 2·min(P(R⁺ ≥ ⌊r⌋),
    P(R⁺ ≤ ⌈r⌉)), SciPy's rounding of a statistic that ties or zeros made fractional."""
    p = np.ones(len(r_plus))
    for n in np.unique(count):  # one distribution per number of differences (≤ 51 of them)
        rows = count == n
        cdf = np.cumsum(_signed_rank_pmf(int(n)))
        low = np.ceil(r_plus[rows]).astype(np.int64)
        high = np.floor(r_plus[rows]).astype(np.int64)
        below = cdf[np.clip(low, 0, len(cdf) - 1)]
        above = 1.0 - np.where(high > 0, cdf[np.clip(high - 1, 0, len(cdf) - 1)], 0.0)
        p[rows] = 2.0 * np.minimum(below, above)
    return p


def _signed_rank_pmf(n: int) -> np.ndarray:
    """P(R⁺ = k), k = 0…n(n+1)/2: the subsets of {1…n} by their sum, counted by the
    recursion c_n(k) = c_{n−1}(k) + c_{n−1}(k − n)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for size in range(1, n + 1):
        counts[size:] = counts[size:] + counts[:-size].copy()
    return counts / 2.0**n


def _permutation_p(ranks: np.ndarray, r_plus: np.ndarray) -> np.ndarray:
    """Two-sided p over the 2^q sign patterns of the ranked differences (q ≤ 13): 2·min of
    the shares at or below and at or above the observed R⁺, as ``permutation_test``."""
    q = ranks.shape[1]
    codes = np.arange(2**q, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(q)) & 1).astype(np.float64)
    null = bits @ ranks.T  # patterns × rows: R⁺ with the positive signs of each pattern
    below = (null <= r_plus).mean(axis=0)  # ranks are halves: sums compare exactly
    above = (null >= r_plus).mean(axis=0)
    return np.asarray(np.minimum(1.0, 2.0 * np.minimum(below, above)))
