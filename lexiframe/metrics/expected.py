"""Expected values of the binary measures when each document is relevant with a probability
of its own, independently (``labels="probability"``; docs/definitions.md §2, "Fractional
labels"): closed forms over the list of the labelled documents' ranks and probabilities, in
rank order, as native list expressions (no Python loop per ranking).

``positions`` holds the ranks of the documents with a positive probability (a positions
frame's ``gain_positions``) and ``probabilities`` their probabilities (its ``grades``); a
document outside the lists has probability 0.
"""

from __future__ import annotations

import polars as pl

from lexiframe._utils import IntoExpr, into_expr
from lexiframe.metrics import parts


def _within(
    positions: IntoExpr, probabilities: IntoExpr, k: int | None, name: str
) -> tuple[pl.Expr, pl.Expr]:
    """The ranks (Float64) and probabilities of the documents ranked at ``k`` or above."""
    parts.check_cutoff(k, name)
    ranks = into_expr(positions).cast(pl.List(pl.Float64))
    chances = into_expr(probabilities).cast(pl.List(pl.Float64))
    if k is None:
        return ranks, chances
    kept = ranks.list.eval(pl.element() <= k).list.sum()  # the ranks ascend
    return ranks.list.head(kept), chances.list.head(kept)


def precision(
    positions: IntoExpr = "gain_positions", probabilities: IntoExpr = "grades", *, k: int
) -> pl.Expr:
    """E[P@k] = Σ_{p_i ≤ k} π_i / k: the expected share of relevant documents in the top k.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"gain_positions": [[1, 3, 12]], "grades": [[0.5, 1.0, 0.9]]})
        >>> df.select(precision(k=10)).item()  # (0.5 + 1) / 10
        0.15
    """
    _, chances = _within(positions, probabilities, k, "P")
    return parts.positive_zero(chances.list.sum() / k)


def success(
    positions: IntoExpr = "gain_positions", probabilities: IntoExpr = "grades", *, k: int
) -> pl.Expr:
    """E[Success@k] = 1 − Π_{p_i ≤ k} (1 − π_i): the chance that a relevant document is in
    the top k.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"gain_positions": [[1, 3]], "grades": [[0.5, 0.5]]})
        >>> df.select(success(k=5)).item()
        0.75
    """
    _, chances = _within(positions, probabilities, k, "Success")
    missed = chances.list.eval((1.0 - pl.element()).product()).list.first()
    return parts.positive_zero(1.0 - missed.fill_null(1.0))


def rr(
    positions: IntoExpr = "gain_positions",
    probabilities: IntoExpr = "grades",
    *,
    k: int | None = None,
) -> pl.Expr:
    """E[RR@k] = Σ_{p_i ≤ k} π_i / p_i Π_{j<i} (1 − π_j): the first document is the
    first relevant one with the chance that it is relevant and none above it is.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"gain_positions": [[1, 2]], "grades": [[0.5, 1.0]]})
        >>> df.select(rr()).item()  # 0.5 + 0.5 / 2
        0.75
    """
    ranks, chances = _within(positions, probabilities, k, "RR")
    return parts.cascade(ranks, chances)


def err(
    positions: IntoExpr = "gain_positions",
    probabilities: IntoExpr = "grades",
    *,
    k: int | None = None,
    max_grade: int,
) -> pl.Expr:
    """E[ERR@k] of binary relevance, where a relevant document stops the user with ERR's
    probability R(1) = 1/2^G (G = ``max_grade``): the cascade with stopping probability
    π_i / 2^G (the stops are independent of one another, as the relevance is).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"gain_positions": [[1]], "grades": [[0.5]]})
        >>> df.select(err(max_grade=1)).item()  # 0.5 · 1/2
        0.25
    """
    ranks, chances = _within(positions, probabilities, k, "ERR")
    return parts.cascade(ranks, chances / 2.0**max_grade)


def dcg(
    positions: IntoExpr = "gain_positions",
    probabilities: IntoExpr = "grades",
    *,
    k: int | None = None,
) -> pl.Expr:
    """E[DCG@k] = Σ_{p_i ≤ k} π_i / log2(p_i + 1): a relevant document gains 1, so each
    document adds its chance of relevance times its discount (DCG is linear in the gains).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"gain_positions": [[1, 3]], "grades": [[0.5, 1.0]]})
        >>> df.select(dcg()).item()  # 0.5/log2(2) + 1/log2(4)
        1.0
    """
    ranks, chances = _within(positions, probabilities, k, "DCG")
    discounts = ranks.list.eval(1.0 / (pl.element() + 1.0).log(2))
    return parts.positive_zero((chances * discounts).list.sum().fill_null(0.0))
