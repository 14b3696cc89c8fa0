"""Agreement of two orderings of the same systems: τ_AP and top-k overlap.

Kendall's τ-b is :func:`lexiframe.stats.kendall_tau` (``scipy.stats.kendalltau``); this
module adds the two measures that weigh the top of the ordering:

- :func:`tau_ap`: Yilmaz, Aslam and Robertson's AP correlation (SIGIR 2008),
  τ_AP = 2/(n − 1) · Σ_{i=2..n} C(i)/(i − 1) − 1, where the systems are taken in the
  order of the compared ordering and C(i) counts the systems above the i-th that the
  reference also ranks above it. It is asymmetric (the reference is the truth); its
  symmetric form is the mean of both directions (their §3).
- :func:`top_k_overlap`: |top-k(a) ∩ top-k(b)| / k.

Both read *ranks* 1…n without ties, as :func:`lexiframe.order` returns them (it breaks
ties by the Copeland score, then by system id): τ_AP is defined for orderings without
ties, and a tie left in the scores is resolved by that one documented rule.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lexiframe.errors import InputError


def _ranks(reference: ArrayLike, compared: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    ref = np.asarray(reference, dtype=np.float64)
    est = np.asarray(compared, dtype=np.float64)
    if ref.shape != est.shape or ref.ndim != 1:
        raise InputError(
            f"the two orderings must rank the same systems: got {ref.shape[0]} and "
            f"{est.shape[0]} ranks; pass ranks of one system per position, e.g. [1, 2, 3]"
        )
    for name, ranks in (("reference", ref), ("compared", est)):
        if np.unique(ranks).size != ranks.size:
            raise InputError(
                f"the {name} ranks have ties ({ranks.tolist()[:8]}…); τ_AP and the top-k "
                "overlap need an ordering without ties, e.g. the rank column of lf.order"
            )
    return ref, est


def tau_ap(reference: ArrayLike, compared: ArrayLike) -> float:
    """Yilmaz et al.'s τ_AP of ``compared`` against ``reference`` (ranks, 1 = best).

    Each argument holds the rank of the same system at the same index. 1 when the
    orderings are equal, −1 when one is the other reversed; swaps at the top cost more
    than swaps at the bottom. Null (NaN) with fewer than two systems.

    >>> tau_ap([1, 2, 3, 4], [1, 2, 3, 4]), tau_ap([1, 2, 3, 4], [4, 3, 2, 1])
    (1.0, -1.0)
    >>> round(tau_ap([1, 2, 3, 4], [2, 1, 3, 4]), 4), round(tau_ap([1, 2, 3, 4], [1, 2, 4, 3]), 4)
    (0.3333, 0.7778)
    """
    ref, est = _ranks(reference, compared)
    n = ref.size
    if n < 2:
        return float("nan")
    # above[i, j]: system j is above system i in the compared ordering
    above = est[None, :] < est[:, None]
    correct = (above & (ref[None, :] < ref[:, None])).sum(axis=1)
    n_above = above.sum(axis=1)
    ratio = np.divide(correct, n_above, out=np.zeros(n), where=n_above > 0)
    return float(2.0 / (n - 1) * ratio.sum() - 1.0)


def top_k_overlap(first: ArrayLike, second: ArrayLike, k: int) -> float:
    """The share of the top ``k`` systems of one ordering that are in the other's top ``k``.

    With fewer than ``k`` systems, ``k`` is their number.

    >>> top_k_overlap([1, 2, 3, 4], [2, 1, 4, 3], 2), top_k_overlap([1, 2, 3, 4], [3, 4, 1, 2], 2)
    (1.0, 0.0)
    """
    a, b = _ranks(first, second)
    if a.size == 0:
        return float("nan")
    k = min(k, a.size)
    return float(((a <= k) & (b <= k)).sum() / k)
