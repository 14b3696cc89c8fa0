"""Multiple-comparison corrections of p-values, written out explicitly.

Each family of p-values (e.g. every system pair of one track and one measure) is adjusted
on its own:

- ``"none"``: p̃ = p;
- ``"bonferroni"``: p̃ = min(1, m·p), m the size of the family;
- ``"holm"`` (Holm 1979, the Holm–Bonferroni method the lexirecall paper uses, §6.2.3): with
  the family sorted ascending, p_(1) ≤ … ≤ p_(m),
  p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j));
- ``"bh"`` (Benjamini and Hochberg 1995, the false discovery rate):
  p̃_(i) = min_{j ≥ i} min(1, m·p_(j) / j);
- ``"by"`` (Benjamini and Yekutieli 2001, the false discovery rate under any dependence):
  p̃_(i) = min_{j ≥ i} min(1, c(m)·m·p_(j) / j), c(m) = Σ_{k=1}^{m} 1/k.

The first three control the family-wise error, the last two the false discovery rate (what
``statsmodels.stats.multitest.multipletests`` calls ``"fdr_bh"`` and ``"fdr_by"``). Holm's
adjusted values lie between the raw p-values and Bonferroni's. Ties among the raw p-values
get the same adjusted value (the running maximum or minimum carries it over).
"""

from __future__ import annotations

from typing import Literal, cast

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from lexiframe.errors import InputError
from lexiframe.stats._common import check_choice

Correction = Literal["none", "bonferroni", "holm", "bh", "by"]
CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm", "bh", "by")


def check_correction(correction: str) -> Correction:
    return cast(Correction, check_choice(correction, CORRECTIONS, "correction"))


def adjust_p_values(
    p_values: ArrayLike, method: Correction = "holm", *, groups: ArrayLike | None = None
) -> np.ndarray:
    """Adjust p-values for multiple comparisons within each family (see the module docstring).

    Args:
        p_values: raw p-values in [0, 1].
        method: ``"none"``, ``"bonferroni"``, ``"holm"``, ``"bh"`` or ``"by"``.
        groups: one family label per p-value (default: a single family).

    Returns:
        The adjusted p-values, in the input order (float64).

    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm").tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "bonferroni").tolist()
    [0.04, 0.16, 0.12, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.01, 0.04], "holm", groups=[1, 1, 2, 2]).tolist()
    [0.02, 0.04, 0.02, 0.04]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "bh").round(6).tolist()
    [0.02, 0.04, 0.04, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "by").round(6).tolist()
    [0.041667, 0.083333, 0.083333, 0.041667]
    """
    check_correction(method)
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    bad = np.isnan(p) | (p < 0) | (p > 1)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"p-values must be in [0, 1], but p_values[{index}] is {float(p[index])!r} "
            f"({int(bad.sum())} of {p.size} out of range); pass raw p-values, not statistics"
        )
    if groups is None:
        family = np.zeros(p.size, dtype=np.int64)
    else:
        labels = np.asarray(groups).reshape(-1)
        if labels.size != p.size:
            raise InputError(
                f"groups has {labels.size} labels for {p.size} p-values; pass one family "
                "label per p-value, in the same order"
            )
        family = np.unique(labels, return_inverse=True)[1].reshape(-1)
    if method == "none" or p.size == 0:
        return np.array(p, dtype=np.float64)
    size = np.bincount(family)[family].astype(np.float64)
    if method == "bonferroni":
        return np.minimum(1.0, size * p)
    order = np.lexsort((p, family))
    sorted_family = family[order]
    first = np.searchsorted(sorted_family, sorted_family, side="left")
    rank = np.arange(p.size) - first  # 0-based rank within the family
    m = size[order]
    if method == "holm":  # step-down: the running maximum from the smallest p
        scaled = np.minimum(1.0, (m - rank) * p[order])
        running = pl.col("scaled").cum_max().over("family")
    else:  # step-up: the running minimum from the largest p
        factor = harmonic(m) if method == "by" else 1.0
        scaled = np.minimum(1.0, factor * m * p[order] / (rank + 1))
        running = pl.col("scaled").cum_min(reverse=True).over("family")
    frame = pl.DataFrame({"family": sorted_family, "scaled": scaled})
    adjusted = np.empty(p.size)
    adjusted[order] = frame.select(running).to_series().to_numpy()
    return adjusted


def harmonic(m: np.ndarray | int) -> np.ndarray:
    """c(m) = Σ_{k=1}^{m} 1/k, Benjamini–Yekutieli's factor, for each family size m.

    >>> harmonic(np.array([1, 3])).round(6).tolist()
    [1.0, 1.833333]
    """
    sizes = np.asarray(m, dtype=np.int64)
    table = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(sizes.max(initial=1)) + 1))])
    return np.asarray(table[sizes])


def smallest_adjusted(p: float, family: int, method: Correction) -> float:
    """The smallest adjusted p-value ``method`` can give when no raw p-value is below ``p``
    in a family of ``family``: p·m for Bonferroni and Holm, p·c(m) for BY, p otherwise.

    >>> smallest_adjusted(1 / 10_001, 666, "bonferroni") > 0.05
    True
    """
    factor = {"bonferroni": family, "holm": family, "by": float(harmonic(family))}
    return p * factor.get(method, 1.0)


def replicates_note(n_replicates: int, family: int, method: Correction, alpha: float) -> str | None:
    """The note when B = ``n_replicates`` random replicates are too few for any pair of a
    family of ``family`` to be significant at ``alpha`` after ``method``: the smallest
    p-value of B replicates is 1/(B + 1). None when B suffices.

    >>> note = replicates_note(10_000, 666, "bonferroni", 0.05)
    >>> note[-51:]
    "n_replicates of at least 13320 (or correction='bh')"
    >>> replicates_note(20_000, 666, "bh", 0.05) is None
    True
    """
    floor = 1.0 / (n_replicates + 1)
    lowest = smallest_adjusted(floor, family, method)
    if lowest < alpha:
        return None
    needed = int(smallest_adjusted(1.0, family, method) / alpha)  # 1/(B + 1) below α/factor
    return (
        f"with {n_replicates} replicates the smallest p-value is 1/(B + 1) = {floor:.2g}, "
        f"which the {method} correction over {family} pairs raises to {lowest:.3g}: no pair "
        f"can be significant at alpha = {alpha:g}; use n_replicates of at least {needed}"
        + (" (or correction='bh')" if method in ("bonferroni", "holm") else "")
    )
