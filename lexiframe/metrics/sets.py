"""Counts, set measures, success and interpolated precision as Polars expressions.

These are trec_eval's measures of the retrieved set and of the first relevant document
(``num_ret``, ``num_rel``, ``num_rel_ret``, ``set_P``, ``set_recall``, ``set_F``,
``success_k``, ``iprec_at_recall_x``; docs/definitions.md §2). Like the measures of
:mod:`lexiframe.metrics.exprs` they read the ``positions`` list column (ascending ranks of
the retrieved relevant documents), ``n_rel`` (m) and ``n_ret`` (ñ), and run as native
Polars expressions: no Python runs per row. Every one returns Float64.
"""

from __future__ import annotations

import polars as pl

from lexiframe._utils import IntoExpr, into_expr
from lexiframe.errors import InputError
from lexiframe.metrics.exprs import IntoCount, _count, _n_retrieved_relevant, _ranks


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator/denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(0.0)


def num_ret(n_ret: IntoCount = "n_ret") -> pl.Expr:
    """How many documents the ranking returned, ñ (trec_eval ``num_ret``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> pl.DataFrame({"n_ret": [10, 0]}).select(sets.num_ret()).to_series().to_list()
        [10.0, 0.0]
    """
    return _count(n_ret).cast(pl.Float64)


def num_rel(n_rel: IntoCount = "n_rel") -> pl.Expr:
    """How many relevant documents the query has, m (trec_eval ``num_rel``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> pl.DataFrame({"n_rel": [4]}).select(sets.num_rel()).item()
        4.0
    """
    return _count(n_rel).cast(pl.Float64)


def num_rel_ret(positions: IntoExpr = "positions") -> pl.Expr:
    """How many relevant documents the ranking returned, r (trec_eval ``num_rel_ret``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3], []]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(sets.num_rel_ret()).to_series().to_list()
        [2.0, 0.0]
    """
    return _n_retrieved_relevant(positions).cast(pl.Float64)


def set_precision(positions: IntoExpr = "positions", *, n_ret: IntoCount = "n_ret") -> pl.Expr:
    """Precision of the whole retrieved set, r/ñ (trec_eval ``set_P``; 0 when ñ = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_ret": [8]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_ret": pl.UInt32})
        >>> df.select(sets.set_precision()).item()
        0.25
    """
    return _ratio(_n_retrieved_relevant(positions), _count(n_ret))


def set_recall(positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel") -> pl.Expr:
    """Recall of the whole retrieved set, r/m (trec_eval ``set_recall``; 0 when m = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(sets.set_recall()).item()
        0.5
    """
    return _ratio(_n_retrieved_relevant(positions), _count(n_rel))


def set_f(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    beta: float = 1.0,
) -> pl.Expr:
    """F of the retrieved set: (β + 1)·P·R / (β·P + R), 0 when r = 0 (trec_eval ``set_F``).

    β weighs recall as trec_eval's ``set_F.β`` does (the parameter enters linearly); β = 1
    is the harmonic mean of :func:`set_precision` and :func:`set_recall`.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4], "n_ret": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> df.select(sets.set_f()).item()
        0.5
    """
    if not isinstance(beta, int | float) or isinstance(beta, bool) or beta < 0:
        raise InputError(f"beta of SetF must be a non-negative number, not {beta!r}")
    r = _n_retrieved_relevant(positions)
    p = r / _count(n_ret)
    rec = r / _count(n_rel)
    value = (beta + 1.0) * p * rec / (beta * p + rec)
    return pl.when(r > 0).then(value).otherwise(0.0)


def success(positions: IntoExpr = "positions", *, k: int) -> pl.Expr:
    """1 when a relevant document is ranked at k or above, else 0 (trec_eval ``success_k``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[3, 7], []]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(sets.success(k=5)).to_series().to_list()
        [1.0, 0.0]
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(f"the cutoff of Success must be a positive integer, not {k!r}")
    first = into_expr(positions).list.first()
    return (first <= k).fill_null(False).cast(pl.Float64)


def interpolated_precision(
    positions: IntoExpr = "positions", *, recall: float, n_rel: IntoCount = "n_rel"
) -> pl.Expr:
    """Interpolated precision at a recall level (trec_eval ``iprec_at_recall``).

    The highest precision at any rank at or below the one where the ranking reaches
    c = round(recall·m) relevant documents (rounded half away from zero, as trec_eval 10
    does): max over i ≥ max(c, 1) of i/p_i; 0 when the ranking never reaches c.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[2, 3, 10]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(sets.interpolated_precision(recall=0.5)).item()  # max(2/3, 3/10)
        0.6666666666666666
    """
    if not isinstance(recall, int | float) or isinstance(recall, bool) or not 0 <= recall <= 1:
        raise InputError(f"the recall level of IPrec must be within [0, 1], not {recall!r}")
    ranks = _ranks(positions)
    # Precision at each relevant document, then its running maximum from the bottom up.
    best_below = ranks.list.eval(
        (pl.int_range(1, pl.len() + 1) / pl.element()).reverse().cum_max().reverse()
    )
    needed = (float(recall) * _count(n_rel).cast(pl.Float64)).round(0, mode="half_away_from_zero")
    index = (pl.max_horizontal(needed, pl.lit(1.0)) - 1).cast(pl.Int64)
    reached = needed <= _n_retrieved_relevant(positions)
    value = best_below.list.get(index, null_on_oob=True)
    return pl.when(reached).then(value).otherwise(0.0).fill_null(0.0)
