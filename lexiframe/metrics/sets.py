"""Counts, set measures, success and interpolated precision as Polars expressions.

These are trec_eval's measures of the retrieved set, of the first relevant document and of
precision at ranks set by the query (``num_ret``, ``num_rel``, ``num_rel_ret``, ``set_P``,
``set_recall``, ``set_F``, ``set_relative_P``, ``set_map``, ``utility``, ``success_k``,
``relative_P_k``, ``Rprec_mult_x``, ``iprec_at_recall_x``, ``11pt_avg``;
docs/definitions.md §2). Like the measures of
:mod:`lexiframe.metrics.exprs` they read the ``positions`` list column (ascending ranks of
the retrieved relevant documents), ``n_rel`` (m) and ``n_ret`` (ñ), and run as native
Polars expressions, or (interpolated precision) as NumPy over the list's buffers, one call
per batch: no Python runs per row. Every one returns Float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from lexiframe._kernels import list_buffers
from lexiframe._utils import IntoExpr, into_expr
from lexiframe.errors import InputError
from lexiframe.metrics import _rows, parts
from lexiframe.metrics.parts import IntoCount
from lexiframe.typing import LevelCutoff

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The recall levels of trec_eval's ``11pt_avg`` (and of its ``iprec_at_recall``)."""

UTILITY_WEIGHTS = (1.0, -1.0, 0.0, 0.0)
"""trec_eval's default coefficients of ``utility``: relevant retrieved, non-relevant
retrieved, relevant not retrieved, non-relevant not retrieved."""


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
    return parts.count(n_ret).cast(pl.Float64)


def num_rel(n_rel: IntoCount = "n_rel") -> pl.Expr:
    """How many relevant documents the query has, m (trec_eval ``num_rel``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> pl.DataFrame({"n_rel": [4]}).select(sets.num_rel()).item()
        4.0
    """
    return parts.count(n_rel).cast(pl.Float64)


def num_rel_ret(
    positions: IntoExpr = "positions",
    *,
    k: int | None = None,
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """How many relevant documents the ranking returned, r (trec_eval ``num_rel_ret``), or
    with ``k`` how many it ranked in the top k (ranx's ``hits@k``), counted by ``at_most``.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3], []]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(sets.num_rel_ret()).to_series().to_list()
        [2.0, 0.0]
        >>> df.select(sets.num_rel_ret(k=2)).to_series().to_list()
        [1.0, 0.0]
    """
    if k is None:
        return parts.n_retrieved_relevant(positions).cast(pl.Float64)
    parts.check_cutoff(k, "NumRelRet")
    return at_most(positions, k).cast(pl.Float64)


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
    return _ratio(parts.n_retrieved_relevant(positions), parts.count(n_ret))


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
    return _ratio(parts.n_retrieved_relevant(positions), parts.count(n_rel))


def set_f(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    beta: float = 1.0,
    k: int | None = None,
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """F of the retrieved set: (β + 1)·P·R / (β·P + R), 0 when r = 0 (trec_eval ``set_F``);
    with ``k``, of P@k and R@k, the top k (ranx's ``f1@k``).

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
        >>> df.select(sets.set_f(k=2)).item()  # P@2 = 1/2, R@2 = 1/4
        0.3333333333333333
    """
    if not isinstance(beta, int | float) or isinstance(beta, bool) or beta < 0:
        raise InputError(f"beta of SetF must be a non-negative number, not {beta!r}")
    if k is not None:
        parts.check_cutoff(k, "SetF")
    r = parts.n_retrieved_relevant(positions) if k is None else at_most(positions, k)
    p = r / (parts.count(n_ret) if k is None else k)
    rec = r / parts.count(n_rel)
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
    parts.check_cutoff(k, "Success")
    first = into_expr(positions).list.first()
    return (first <= k).fill_null(False).cast(pl.Float64)


def _check_level(recall: object, name: str) -> float:
    if not isinstance(recall, int | float) or isinstance(recall, bool) or not 0 <= recall <= 1:
        raise InputError(f"the recall level of {name} must be within [0, 1], not {recall!r}")
    return float(recall)


def level_cutoffs(level: float, m: np.ndarray, rule: LevelCutoff = "round") -> np.ndarray:
    """The relevant documents c an interpolated precision at a recall level needs of m:
    ``"round"`` lround(level · m), half away from zero (trec_eval 10); ``"up"``
    floor(level · m + 0.9) in double arithmetic (trec_eval 9's ``(long) (x * m + 0.9)``).

    Example:
        >>> import numpy as np
        >>> m = np.array([3.0, 5.0])
        >>> level_cutoffs(0.1, m).tolist(), level_cutoffs(0.1, m, "up").tolist()
        ([0.0, 1.0], [1.0, 1.0])
    """
    scaled = level * m
    if rule == "up":
        return np.floor(scaled + 0.9)
    floor = np.floor(scaled)
    return np.where(scaled - floor >= 0.5, floor + 1.0, floor)  # half away from zero


def no_level_cutoff(level: float, m: pl.Expr, rule: LevelCutoff = "round") -> pl.Expr:
    """Where :func:`level_cutoffs` is 0 (no relevant document needed), over a count ``m``.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"m": [3, 5]})
        >>> df.select(no_level_cutoff(0.1, pl.col("m"))).to_series().to_list()
        [True, False]
    """
    scaled = level * m.cast(pl.Float64)
    return scaled + 0.9 < 1.0 if rule == "up" else scaled < 0.5


def _interpolated_levels(
    fields: pl.DataFrame, levels: Sequence[float], rule: LevelCutoff = "round"
) -> list[np.ndarray]:
    """IPrec at each recall level of each ranking of a batch (relevant ranks, m), in NumPy
    over the list's buffers: the precisions i/p_i, and per level the maximum over the
    ranking's i ≥ max(c, 1), c the :func:`level_cutoffs` of ``rule`` (0 when c > r)."""
    relevant = list_buffers(fields["_relevant"])
    m = _rows.counts(fields["_m"]).astype(np.float64)
    offsets = relevant.offsets
    r = relevant.lengths
    ranks = relevant.values[offsets[0] : offsets[-1]].astype(np.float64)
    precisions = (_rows.index_in_row(offsets) + 1).astype(np.float64) / ranks
    values = []
    for level in levels:
        needed = level_cutoffs(level, m, rule)
        index = (np.maximum(needed, 1.0) - 1.0).astype(np.int64)
        best = _rows.suffix_max(precisions, offsets - offsets[0], offsets[:-1] - offsets[0] + index)
        values.append(np.where((needed <= r) & (index < r), best, 0.0))
    return values


def _interpolated(positions: IntoExpr, n_rel: IntoCount, kernel: _rows.Kernel) -> pl.Expr:
    value = _rows.per_ranking(kernel, _relevant=positions, _m=parts.count(n_rel))
    return value.fill_null(0.0)


def interpolated_precision(
    positions: IntoExpr = "positions",
    *,
    recall: float,
    n_rel: IntoCount = "n_rel",
    rule: LevelCutoff = "round",
) -> pl.Expr:
    """Interpolated precision at a recall level (trec_eval ``iprec_at_recall``).

    The highest precision at any rank at or below the one where the ranking reaches
    c = round(recall·m) relevant documents (rounded half away from zero, as trec_eval 10
    does; ``rule="up"``: trec_eval 9's, :func:`level_cutoffs`): max over i ≥ max(c, 1) of
    i/p_i; 0 when the ranking never reaches c.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[2, 3, 10]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(sets.interpolated_precision(recall=0.5)).item()  # max(2/3, 3/10)
        0.6666666666666666
    """
    level = _check_level(recall, "IPrec")
    return _interpolated(
        positions, n_rel, lambda fields: _interpolated_levels(fields, [level], rule)[0]
    )


def interpolated_precision_average(
    positions: IntoExpr = "positions",
    *,
    levels: Sequence[float] = ELEVEN_POINTS,
    n_rel: IntoCount = "n_rel",
    rule: LevelCutoff = "round",
) -> pl.Expr:
    """The mean of :func:`interpolated_precision` over recall levels (trec_eval ``11pt_avg``).

    The default levels are trec_eval's eleven, 0, 0.1, …, 1; ``levels`` replaces them (in
    ascending order, as trec_eval's ``-m 11pt_avg.0.2,0.5,0.8`` reads them; a level given
    twice counts twice).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 4]], "n_rel": [2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> # levels 0–0.2 need 0 relevant documents, 0.3–0.7 one (round half up from
        >>> # 0.5): best 1/1; 0.8–1 two: 2/4
        >>> df.select(sets.interpolated_precision_average()).item() == (8 * 1 + 3 * 0.5) / 11
        True
    """
    if isinstance(levels, str) or not isinstance(levels, Sequence) or not levels:
        raise InputError(f"levels of IPrecAvg are recall levels in [0, 1], not {levels!r}")
    checked = [_check_level(level, "IPrecAvg") for level in levels]
    if checked != sorted(checked):
        raise InputError(
            f"levels of IPrecAvg go in ascending order, as trec_eval reads them: {levels!r}"
        )

    def average(fields: pl.DataFrame) -> np.ndarray:
        total = np.zeros(fields.height)
        # Summed from the highest level down, in trec_eval's order (the same last bit).
        for value in reversed(_interpolated_levels(fields, checked, rule)):
            total = total + value
        return total / float(len(checked))

    return _interpolated(positions, n_rel, average)


def set_relative_precision(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", n_ret: IntoCount = "n_ret"
) -> pl.Expr:
    """Set precision over the best possible for a set of that size, r/min(ñ, m) (trec_eval
    ``set_relative_P``; 0 when ñ = 0 or m = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4], "n_ret": [3]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> df.select(sets.set_relative_precision()).item()  # 2 of min(3, 4)
        0.6666666666666666
    """
    return _ratio(
        parts.n_retrieved_relevant(positions),
        pl.min_horizontal(parts.count(n_ret), parts.count(n_rel)),
    )


def set_ap(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", n_ret: IntoCount = "n_ret"
) -> pl.Expr:
    """Unranked average precision of the retrieved set, r²/(ñ·m) = SetP · SetR (trec_eval
    ``set_map``; 0 when ñ = 0 or m = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4], "n_ret": [8]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> df.select(sets.set_ap()).item()  # 2² / (8 · 4)
        0.125
    """
    r = parts.n_retrieved_relevant(positions).cast(pl.Float64)
    return _ratio(r * r, parts.count(n_ret).cast(pl.Float64) * parts.count(n_rel).cast(pl.Float64))


def utility(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    weights: Sequence[float] = UTILITY_WEIGHTS,
    n: IntoCount | None = None,
) -> pl.Expr:
    """A weighted sum of the contingency table of the retrieved set (trec_eval ``utility``).

    With a relevant documents retrieved (r), b non-relevant retrieved (ñ − r), c relevant
    not retrieved (m − r) and d non-relevant not retrieved (n − ñ − m + r, in a corpus of n
    documents), the utility is w₁a + w₂b + w₃c + w₄d for ``weights`` (w₁, w₂, w₃, w₄),
    trec_eval's default (1, −1, 0, 0): r − (ñ − r). d needs the corpus size ``n``: with
    w₄ ≠ 0 and no ``n`` the value is null.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4], "n_ret": [8]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> df.select(sets.utility()).item()  # 2 − 6
        -4.0
        >>> df.select(sets.utility(weights=(2, -1, -0.5, 0.01), n=100)).item()  # 4 − 6 − 1 + 0.9
        -2.1
    """
    if isinstance(weights, str) or not isinstance(weights, Sequence) or len(weights) != 4:
        raise InputError(f"the weights of Utility are four numbers, not {weights!r}")
    for weight in weights:
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise InputError(f"the weights of Utility are numbers, not {weights!r}")
    w_rel_ret, w_nonrel_ret, w_rel_nonret, w_nonrel_nonret = (float(w) for w in weights)
    r = parts.n_retrieved_relevant(positions).cast(pl.Float64)
    m, returned = parts.count(n_rel).cast(pl.Float64), parts.count(n_ret).cast(pl.Float64)
    value = w_rel_ret * r + w_nonrel_ret * (returned - r) + w_rel_nonret * (m - r)
    if w_nonrel_nonret == 0.0:
        return value
    if n is None:
        parts.warn_missing_n("Utility with a weight for the non-relevant documents not retrieved")
        return value + parts.null()  # null on every row
    rest = parts.count(n).cast(pl.Float64) - returned - m + r
    return value + w_nonrel_nonret * rest


def relative_precision(
    positions: IntoExpr = "positions",
    *,
    k: int,
    n_rel: IntoCount = "n_rel",
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """Precision at k over the best possible at k, #{i : p_i ≤ k}/min(k, m) (trec_eval
    ``relative_P_k``): precision up to k = m, recall beyond; 0 when m = 0.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3, 12]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(sets.relative_precision(k=2)).item()  # 1 of min(2, 4)
        0.5
        >>> df.select(sets.relative_precision(k=10)).item()  # 2 of min(10, 4)
        0.5
    """
    parts.check_cutoff(k, "RelativeP")
    return _ratio(at_most(positions, k), pl.min_horizontal(parts.count(n_rel), k))


def r_precision_multiple(
    positions: IntoExpr = "positions",
    *,
    x: float,
    n_rel: IntoCount = "n_rel",
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """Precision at a multiple of m (trec_eval ``Rprec_mult_x``): P@c with
    c = ⌊x·m + 0.9⌋, trec_eval's rounding; 0 when c = 0.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import sets
        >>> df = pl.DataFrame({"positions": [[1, 3, 12]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(sets.r_precision_multiple(x=0.6)).item()  # c = ⌊3.3⌋ = 3: 2/3
        0.6666666666666666
    """
    if not isinstance(x, int | float) or isinstance(x, bool) or not 0 <= x < float("inf"):
        raise InputError(f"the multiple of RPrecMult must be a non-negative number, not {x!r}")
    depth = (float(x) * parts.count(n_rel).cast(pl.Float64) + 0.9).floor().cast(pl.Int64)
    return _ratio(at_most(positions, depth), depth)
