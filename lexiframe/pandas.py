"""The ``.lexi`` accessor on pandas DataFrames: the same engine, pandas in and pandas out.

Frames are converted to Polars at the boundary, the Polars functions run, and the result
comes back as pandas with list columns as Arrow-backed lists (``pd.ArrowDtype``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa

from lexiframe import aggregate, evaluation, ranking
from lexiframe.preferences import (  # by name: lexiframe.preferences is the function
    DEFAULT_MEASURES,
    pairs,
    preferences,
)


def to_polars(frame: pd.DataFrame | pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """A pandas frame as Polars (Polars frames pass through)."""
    if isinstance(frame, pl.DataFrame | pl.LazyFrame):
        return frame
    if isinstance(frame, pd.DataFrame):
        return pl.from_pandas(frame.reset_index(drop=True))
    raise TypeError(f"expected a pandas or Polars DataFrame, not {type(frame).__name__}")


def _qrels(qrels: Any) -> Any:
    """Qrels as pandas or Polars frames become Polars; dicts, ranx Qrels and namedtuples
    pass on to :func:`lexiframe.as_qrels`, which the evaluation functions call."""
    return to_polars(qrels) if isinstance(qrels, pd.DataFrame) else qrels


def _arrow_lists(dtype: pa.DataType) -> pd.ArrowDtype | None:
    nested = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
    return pd.ArrowDtype(dtype) if nested else None


def to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """A Polars result as pandas, list columns as Arrow-backed lists."""
    return frame.to_arrow().to_pandas(types_mapper=_arrow_lists)


@pd.api.extensions.register_dataframe_accessor("lexi")
class PandasAccessor:
    """``pandas.DataFrame.lexi``: positions, measures, evaluate and summarize.

    Example:
        >>> import pandas as pd
        >>> import lexiframe  # noqa: F401
        >>> run = pd.DataFrame({"system": ["a", "a"], "query": ["q1", "q1"],
        ...                     "doc": ["d1", "d2"], "score": [2.0, 1.0]})
        >>> qrels = pd.DataFrame({"query": ["q1"], "doc": ["d2"], "relevance": [1]})
        >>> run.lexi.evaluate(qrels, ["RR"])["RR"].tolist()
        [0.5]
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def _polars(self) -> pl.DataFrame:
        return pl.from_pandas(self._frame.reset_index(drop=True))

    def positions(self, qrels: pd.DataFrame | pl.DataFrame, **options: Any) -> pd.DataFrame:
        """The positions frame: see :func:`lexiframe.positions`."""
        return to_pandas(ranking.positions(self._polars(), _qrels(qrels), **options))

    def coverage(self, qrels: pd.DataFrame | pl.DataFrame, **options: Any) -> pd.DataFrame:
        """Queries evaluated, skipped and dropped: see :func:`lexiframe.coverage`."""
        return to_pandas(ranking.coverage(self._polars(), _qrels(qrels), **options))

    def measures(self, names: evaluation.MeasureNames, **options: Any) -> pd.DataFrame:
        """Per-ranking measures of a positions frame: see :func:`lexiframe.metrics`."""
        return to_pandas(evaluation.measures(self._polars(), names, **options))

    def evaluate(
        self, qrels: pd.DataFrame | pl.DataFrame, names: evaluation.MeasureNames, **options: Any
    ) -> pd.DataFrame:
        """Per-query measures of a run: see :func:`lexiframe.evaluate`."""
        return to_pandas(evaluation.evaluate(self._polars(), _qrels(qrels), names, **options))

    def summarize(self, **options: Any) -> pd.DataFrame:
        """Per-system (or per-pair) means: see :func:`lexiframe.summarize`."""
        return to_pandas(evaluation.summarize(self._polars(), **options))

    def pairs(self, **options: Any) -> pd.DataFrame:
        """Every pair of systems per query: see :func:`lexiframe.pairs`."""
        return to_pandas(pairs(self._polars(), **options))

    def preferences(
        self, measures: str | Iterable[str] = DEFAULT_MEASURES, **options: Any
    ) -> pd.DataFrame:
        """Preferences for every pair of systems: see :func:`lexiframe.preferences`."""
        return to_pandas(preferences(self._polars(), measures, **options))

    def order(self, measure: str, **options: Any) -> pd.DataFrame:
        """System orderings: see :func:`lexiframe.order`."""
        return to_pandas(aggregate.order(self._polars(), measure, **options))
