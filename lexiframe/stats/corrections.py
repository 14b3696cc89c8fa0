"""Multiple-comparison corrections of p-values, written out explicitly.

Each family of p-values (e.g. every system pair of one track and one measure) is adjusted
on its own:

- ``"none"``: p̃ = p;
- ``"bonferroni"``: p̃ = min(1, m·p), m the size of the family;
- ``"holm"`` (Holm 1979, the Holm–Bonferroni method the lexirecall paper uses, §6.2.3): with
  the family sorted ascending, p_(1) ≤ … ≤ p_(m),
  p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)).

Holm's adjusted values lie between the raw p-values and Bonferroni's. Ties among the raw
p-values get the same adjusted value (the running maximum carries it over).
"""

from __future__ import annotations

from typing import Literal, cast

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from lexiframe.errors import InputError
from lexiframe.stats._common import check_choice

Correction = Literal["none", "bonferroni", "holm"]
CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm")


def check_correction(correction: str) -> Correction:
    return cast(Correction, check_choice(correction, CORRECTIONS, "correction"))


def adjust_p_values(
    p_values: ArrayLike, method: Correction = "holm", *, groups: ArrayLike | None = None
) -> np.ndarray:
    """Adjust p-values for multiple comparisons within each family (see the module docstring).

    Args:
        p_values: raw p-values in [0, 1].
        method: ``"none"``, ``"bonferroni"`` or ``"holm"``.
        groups: one family label per p-value (default: a single family).

    Returns:
        The adjusted p-values, in the input order (float64).

    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm").tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "bonferroni").tolist()
    [0.04, 0.16, 0.12, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.01, 0.04], "holm", groups=[1, 1, 2, 2]).tolist()
    [0.02, 0.04, 0.02, 0.04]
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
        return p.copy()
    size = np.bincount(family)[family].astype(np.float64)
    if method == "bonferroni":
        return np.minimum(1.0, size * p)
    order = np.lexsort((p, family))
    sorted_family = family[order]
    first = np.searchsorted(sorted_family, sorted_family, side="left")
    rank = np.arange(p.size) - first  # 0-based rank within the family
    scaled = np.minimum(1.0, (size[order] - rank) * p[order])
    running_max = (
        pl.DataFrame({"family": sorted_family, "scaled": scaled})
        .select(pl.col("scaled").cum_max().over("family"))
        .to_series()
        .to_numpy()
    )
    adjusted = np.empty(p.size)
    adjusted[order] = running_max
    return adjusted
