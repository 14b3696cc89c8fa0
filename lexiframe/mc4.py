"""MC4 (Dwork, Kumar, Naor and Sivakumar, "Rank aggregation methods for the Web", WWW
2001): the pairwise wins of a table of per-query values and the stationary distribution of
the damped chain they define (docs/definitions.md §4). :func:`lexiframe.order` reads them."""

from __future__ import annotations

import numpy as np

MC4_DAMPING = 0.15
"""MC4's default damping: the probability of a jump to a uniform system that makes its
chain ergodic (as PyFLAGR, TopKLists and GeneSelector; docs/definitions.md §4)."""


def metric_wins(values: np.ndarray, chunk_cells: int = 1 << 24) -> tuple[np.ndarray, np.ndarray]:
    """``W[a, b]``: queries where a's metric is larger than b's; ``C[a, b]``: queries with
    both. ``values`` is systems × queries with NaN where missing (never counted)."""
    n, q = values.shape
    present = (~np.isnan(values)).astype(np.float64)
    compared = present @ present.T
    wins = np.empty((n, n))
    step = max(1, chunk_cells // max(n * q, 1))
    for start in range(0, n, step):
        block = values[start : start + step, None, :] > values[None, :, :]
        wins[start : start + step] = block.sum(axis=2)
    return wins, compared


def mc4_stationary(wins: np.ndarray, *, damping: float = MC4_DAMPING) -> np.ndarray:
    """The stationary distribution of Dwork et al. (2001)'s MC4 chain (docs/definitions.md §4).

    ``wins[a, b]`` is the number of queries ranking a strictly above b; b beats a when
    ``wins[b, a] > wins[a, b]``. From a, the chain picks b uniformly among all n systems
    and moves there if b beats a: ``P[a, b] = 1/n`` for every b that beats a, the rest on
    ``P[a, a]``. With probability ``damping`` it jumps to a uniform system instead:
    ``G = (1 − damping) P + damping/n``. Solved exactly as ``π G = π``, ``Σ π = 1``; where
    the undamped chain has no unique stationary vector the power iteration from the
    uniform vector is used (to an L1 change below 1e-13).

    >>> import numpy as np
    >>> # orders [A, B, C, D] and [B, A, D, C]: π = (10/23, 10/23, 3/46, 3/46)
    >>> wins = np.array([[0, 1, 2, 2], [1, 0, 2, 2], [0, 0, 0, 1], [0, 0, 1, 0]])
    >>> np.allclose(mc4_stationary(wins), [10 / 23, 10 / 23, 3 / 46, 3 / 46])
    True
    """
    wins = np.asarray(wins, dtype=np.float64)
    n = len(wins)
    if n == 0:
        return np.zeros(0)
    beaten_by = wins < wins.T  # beaten_by[a, b]: b beats a
    transition = beaten_by / n
    np.fill_diagonal(transition, 0.0)
    np.fill_diagonal(transition, 1.0 - transition.sum(axis=1))
    chain = (1.0 - damping) * transition + damping / n
    system = chain.T - np.eye(n)
    system[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    # Damping makes the chain ergodic, so the system is regular; without it, the chain may
    # have several closed classes and no unique stationary vector.
    if damping > 0.0 or np.linalg.matrix_rank(system) == n:
        stationary = np.linalg.solve(system, rhs)
        return np.where(stationary > 0.0, stationary, 0.0)  # no -0.0 or rounding below 0
    stationary = np.full(n, 1.0 / n)
    for _ in range(100_000):
        step = stationary @ chain
        change = np.abs(step - stationary).sum()
        stationary = step
        if change < 1e-13:
            break
    return stationary
