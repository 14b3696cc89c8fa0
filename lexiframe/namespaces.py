"""The ``.lexi`` namespaces on Polars DataFrames, LazyFrames and expressions.

The namespaces only delegate: the logic lives in free functions (``lexiframe.positions``,
``lexiframe.evaluate``, ``lexiframe.metrics.exprs``), so every method here is one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import polars as pl

from lexiframe import aggregate, evaluation, preferences, ranking
from lexiframe.metrics import exprs
from lexiframe.metrics.exprs import IntoCount
from lexiframe.options import PositionsKwargs, PositionsOptions
from lexiframe.typing import Exposure

if TYPE_CHECKING:
    from typing_extensions import Unpack

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


class _FrameNamespace(Generic[Frame]):
    def __init__(self, frame: Frame) -> None:
        self._frame: Frame = frame

    def positions(
        self,
        qrels: pl.DataFrame | pl.LazyFrame,
        options: PositionsOptions | None = None,
        **kwargs: Unpack[PositionsKwargs],
    ) -> Frame:
        """The positions frame of this run against ``qrels``: see :func:`lexiframe.positions`."""
        return ranking.positions(self._frame, qrels, options, **kwargs)

    def coverage(
        self,
        qrels: pl.DataFrame | pl.LazyFrame,
        options: PositionsOptions | None = None,
        **kwargs: Unpack[PositionsKwargs],
    ) -> pl.DataFrame:
        """Queries evaluated, skipped and dropped per system: see :func:`lexiframe.coverage`."""
        return ranking.coverage(self._frame, qrels, options, **kwargs)

    def measures(self, names: evaluation.MeasureNames, *, n: IntoCount | None = None) -> Frame:
        """Per-ranking measures of this positions frame: see :func:`lexiframe.metrics`."""
        return evaluation.measures(self._frame, names, n=n)

    def evaluate(
        self,
        qrels: pl.DataFrame | pl.LazyFrame,
        names: evaluation.MeasureNames,
        *,
        n: IntoCount | None = None,
        options: PositionsOptions | None = None,
        **kwargs: Unpack[PositionsKwargs],
    ) -> Frame:
        """Per-query measures of this run: see :func:`lexiframe.evaluate`."""
        return evaluation.evaluate(self._frame, qrels, names, n=n, options=options, **kwargs)

    def summarize(
        self,
        *,
        by: str | list[str] | None = None,
        measures: str | list[str] | None = None,
        **intervals: Any,
    ) -> Frame:
        """Per-system means of per-query measures, or per-pair means of preferences, with
        intervals given ``ci=``: see :func:`lexiframe.summarize`."""
        return evaluation.summarize(self._frame, by=by, measures=measures, **intervals)

    def pairs(self, *, by: str | list[str] | None = None, ordered: bool = False) -> Frame:
        """Every pair of systems per (by…, query): see :func:`lexiframe.pairs`."""
        return preferences.pairs(self._frame, by=by, ordered=ordered)

    def preferences(
        self,
        measures: str | Iterable[str] = preferences.DEFAULT_MEASURES,
        *,
        by: str | list[str] | None = None,
        extra: list[preferences.Extra] | tuple[preferences.Extra, ...] = (),
    ) -> Frame:
        """sgnLP, rrLP, sgnLR for every pair of systems: see :func:`lexiframe.preferences`."""
        return preferences.preferences(self._frame, measures, by=by, extra=extra)

    def order(
        self,
        measure: str,
        *,
        method: aggregate.Method = "mc4",
        damping: float = 0.15,
        by: str | list[str] | None = None,
        lower_is_better: bool | None = None,
    ) -> Frame:
        """Order the systems (MC4, Borda, win rate, mean): see :func:`lexiframe.order`."""
        return aggregate.order(
            self._frame,
            measure,
            method=method,
            damping=damping,
            by=by,
            lower_is_better=lower_is_better,
        )


@pl.api.register_dataframe_namespace("lexi")
class DataFrameNamespace(_FrameNamespace[pl.DataFrame]):
    """``DataFrame.lexi``: evaluation of a run, a positions frame or per-query measures."""


@pl.api.register_lazyframe_namespace("lexi")
class LazyFrameNamespace(_FrameNamespace[pl.LazyFrame]):
    """``LazyFrame.lexi``: the same as ``DataFrame.lexi``, kept lazy."""


@pl.api.register_expr_namespace("lexi")
class ExprNamespace:
    """``Expr.lexi``: measures of a positions list column (see :mod:`lexiframe.metrics.exprs`).

    Example:
        >>> import polars as pl
        >>> import lexiframe  # noqa: F401
        >>> df = pl.DataFrame({"positions": [[2, 3]], "n_rel": [3]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(pl.col("positions").lexi.rr()).item()
        0.5
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def rr(self, *, k: int | None = None) -> pl.Expr:
        """Reciprocal rank (:func:`lexiframe.metrics.exprs.rr`)."""
        return exprs.rr(self._expr, k=k)

    def ap(self, *, n_rel: IntoCount = "n_rel", k: int | None = None) -> pl.Expr:
        """Average precision (:func:`lexiframe.metrics.exprs.ap`)."""
        return exprs.ap(self._expr, n_rel=n_rel, k=k)

    def ndcg(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        k: int | None = None,
        grades: str | pl.Expr | None = None,
        ideal_grades: str | pl.Expr | None = None,
        gains: Mapping[int, float] | None = None,
    ) -> pl.Expr:
        """nDCG, binary, graded or with gains (:func:`lexiframe.metrics.exprs.ndcg`)."""
        return exprs.ndcg(
            self._expr, n_rel=n_rel, k=k, grades=grades, ideal_grades=ideal_grades, gains=gains
        )

    def err(
        self,
        *,
        grades: str | pl.Expr | None = None,
        k: int | None = None,
        max_grade: int = exprs.ERR_MAX_GRADE,
    ) -> pl.Expr:
        """Expected reciprocal rank (:func:`lexiframe.metrics.exprs.err`)."""
        return exprs.err(self._expr, grades=grades, k=k, max_grade=max_grade)

    def precision(self, k: int) -> pl.Expr:
        """Precision at k (:func:`lexiframe.metrics.exprs.precision`)."""
        return exprs.precision(self._expr, k=k)

    def recall(self, k: int, *, n_rel: IntoCount = "n_rel") -> pl.Expr:
        """Recall at k (:func:`lexiframe.metrics.exprs.recall`)."""
        return exprs.recall(self._expr, k=k, n_rel=n_rel)

    def r_precision(self, *, n_rel: IntoCount = "n_rel") -> pl.Expr:
        """R-precision (:func:`lexiframe.metrics.exprs.r_precision`)."""
        return exprs.r_precision(self._expr, n_rel=n_rel)

    def rbp(self, p: float = 0.8) -> pl.Expr:
        """Rank-biased precision (:func:`lexiframe.metrics.exprs.rbp`)."""
        return exprs.rbp(self._expr, p=p)

    def tse(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        exposure: Exposure = "rr",
        n: IntoCount | None = None,
        p: float = 0.8,
    ) -> pl.Expr:
        """Total search efficiency (:func:`lexiframe.metrics.exprs.tse`)."""
        return exprs.tse(self._expr, n_rel=n_rel, exposure=exposure, n=n, p=p)

    def sl3(self, *, n_rel: IntoCount = "n_rel", n: IntoCount | None = None) -> pl.Expr:
        """Type 3 search length (:func:`lexiframe.metrics.exprs.sl3`)."""
        return exprs.sl3(self._expr, n_rel=n_rel, n=n)

    def recall_error(self, *, n_rel: IntoCount = "n_rel", n: IntoCount | None = None) -> pl.Expr:
        """Recall error (:func:`lexiframe.metrics.exprs.recall_error`)."""
        return exprs.recall_error(self._expr, n_rel=n_rel, n=n)

    def asl(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        n_ret: IntoCount = "n_ret",
        depth: IntoCount | None = None,
    ) -> pl.Expr:
        """Per-document atomized search length (:func:`lexiframe.metrics.exprs.asl`)."""
        return exprs.asl(self._expr, n_rel=n_rel, n_ret=n_ret, depth=depth)

    def asl_mean(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        n_ret: IntoCount = "n_ret",
        first: int | None = None,
        depth: IntoCount | None = None,
    ) -> pl.Expr:
        """ASL of a query, or ASL@g1-k (:func:`lexiframe.metrics.exprs.asl_mean`)."""
        return exprs.asl_mean(self._expr, n_rel=n_rel, n_ret=n_ret, first=first, depth=depth)

    def lexiprecision(self, other: str | pl.Expr) -> pl.Expr:
        """sgnLP against the ranking in ``other`` (:func:`lexiframe.preferences.lexiprecision`)."""
        return preferences.lexiprecision(self._expr, other)

    def rr_lexiprecision(self, other: str | pl.Expr) -> pl.Expr:
        """rrLP against ``other`` (:func:`lexiframe.preferences.rr_lexiprecision`)."""
        return preferences.rr_lexiprecision(self._expr, other)

    def lexirecall(self, other: str | pl.Expr) -> pl.Expr:
        """sgnLR against ``other`` (:func:`lexiframe.preferences.lexirecall`)."""
        return preferences.lexirecall(self._expr, other)

    def first_difference(self, other: str | pl.Expr) -> pl.Expr:
        """i*, the first differing recall level (:func:`lexiframe.preferences.first_difference`)."""
        return preferences.first_difference(self._expr, other)

    def last_difference(self, other: str | pl.Expr) -> pl.Expr:
        """j*, the last differing recall level (:func:`lexiframe.preferences.last_difference`)."""
        return preferences.last_difference(self._expr, other)

    def delta_rr(self, other: str | pl.Expr, level: int) -> pl.Expr:
        """δRR at a recall level (:func:`lexiframe.preferences.delta_rr`)."""
        return preferences.delta_rr(self._expr, other, level)
