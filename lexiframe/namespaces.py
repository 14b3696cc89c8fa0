"""The ``.lexi`` namespaces on Polars DataFrames, LazyFrames and expressions.

The namespaces only delegate: the logic lives in free functions (``lexiframe.positions``,
``lexiframe.evaluate``, ``lexiframe.metrics.exprs``), so every method here is one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import polars as pl

from lexiframe import aggregate, evaluation, preferences, ranking
from lexiframe._measure_methods import MeasureMethods
from lexiframe.mc4 import MC4_DAMPING
from lexiframe.metrics import exprs
from lexiframe.metrics.parts import IntoCount
from lexiframe.options import PositionsKwargs, PositionsOptions
from lexiframe.typing import Labels

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

    def measures(
        self,
        names: evaluation.MeasureNames,
        *,
        n: IntoCount | None = None,
        labels: Labels = PositionsOptions.labels,
    ) -> Frame:
        """Per-ranking measures of this positions frame (built with ``labels``): see
        :func:`lexiframe.measures`."""
        return evaluation.measures(self._frame, names, n=n, labels=labels)

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
        damping: float = MC4_DAMPING,
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
class ExprNamespace(MeasureMethods):
    """``Expr.lexi``: measures of a positions list column, one method per measure family
    (generated from the catalogue: ``rr``, ``ap``, ``ndcg``, ``precision``, ``tse``,
    ``asl_mean``, …, each the measure :func:`lexiframe.measures` computes under its name),
    the per-document ASL, and the preferences against another ranking.

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

    def asl(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        n_ret: IntoCount = "n_ret",
        depth: IntoCount | None = None,
    ) -> pl.Expr:
        """Per-document atomized search length (:func:`lexiframe.metrics.exprs.asl`)."""
        return exprs.asl(self._expr, n_rel=n_rel, n_ret=n_ret, depth=depth)

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
