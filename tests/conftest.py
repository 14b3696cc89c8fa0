"""Shared fixtures: one test body run over every backend (narwhals' ``constructor`` style).

A test receives a :class:`Backend` and calls it with Polars DataFrames; the backend turns
them into its native frames (Polars eager, Polars lazy, pandas), calls the ``.lexi``
namespace or accessor of those frames, checks the result has the native type, and hands
back a Polars DataFrame so the assertions are the same for every backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import lexiframe  # noqa: F401  (registers .lexi)
from lexiframe.io import read_qrels, read_run

DATA = Path(__file__).parent / "data"


def _arrow_lists(dtype: pa.DataType) -> pd.ArrowDtype | None:
    nested = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
    return pd.ArrowDtype(dtype) if nested else None


def polars_to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """What a pandas 3 user holds: ``str`` columns by default, lists Arrow-backed."""
    return frame.to_arrow().to_pandas(types_mapper=_arrow_lists)


@dataclass(frozen=True)
class Backend:
    """How one backend builds its frames and brings the results back to Polars."""

    name: str
    native: Callable[[pl.DataFrame], Any]
    result_type: type
    to_polars: Callable[[Any], pl.DataFrame]
    warns_on_drop: bool
    """Eager entry points warn about dropped queries; a LazyFrame plan cannot (coverage does)."""

    def __repr__(self) -> str:
        return self.name

    def _back(self, result: Any) -> pl.DataFrame:
        assert isinstance(result, self.result_type), (self.name, type(result))
        return self.to_polars(result)

    def positions(self, run: pl.DataFrame, qrels: pl.DataFrame, **options: Any) -> pl.DataFrame:
        return self._back(self.native(run).lexi.positions(self.native(qrels), **options))

    def measures(self, frame: pl.DataFrame, names: Any, **options: Any) -> pl.DataFrame:
        return self._back(self.native(frame).lexi.measures(names, **options))

    def evaluate(
        self, run: pl.DataFrame, qrels: pl.DataFrame, names: Any, **options: Any
    ) -> pl.DataFrame:
        return self._back(self.native(run).lexi.evaluate(self.native(qrels), names, **options))

    def summarize(self, frame: pl.DataFrame, **options: Any) -> pl.DataFrame:
        return self._back(self.native(frame).lexi.summarize(**options))

    def coverage(self, run: pl.DataFrame, qrels: pl.DataFrame, **options: Any) -> pl.DataFrame:
        result = self.native(run).lexi.coverage(self.native(qrels), **options)
        if isinstance(result, pd.DataFrame):
            return pl.from_pandas(result)
        assert isinstance(result, pl.DataFrame), (self.name, type(result))
        return result


BACKENDS = {
    "polars-eager": Backend(
        name="polars-eager",
        native=lambda frame: frame,
        result_type=pl.DataFrame,
        to_polars=lambda result: result,
        warns_on_drop=True,
    ),
    "polars-lazy": Backend(
        name="polars-lazy",
        native=lambda frame: frame.lazy(),
        result_type=pl.LazyFrame,
        to_polars=lambda result: result.collect(),
        warns_on_drop=False,
    ),
    "pandas": Backend(
        name="pandas",
        native=polars_to_pandas,
        result_type=pd.DataFrame,
        to_polars=pl.from_pandas,
        warns_on_drop=True,
    ),
}


@pytest.fixture(params=list(BACKENDS), ids=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    """Run the test once per backend: Polars eager, Polars lazy, pandas."""
    return BACKENDS[request.param]


def read_trec_run(*paths: Path) -> pl.DataFrame:
    """TREC run files (query Q0 doc rank score system) as one run table, ids as strings."""
    return read_run(list(paths))


def read_trec_qrels(path: Path) -> pl.DataFrame:
    """A TREC qrels file (query iter doc relevance), ids as strings."""
    return read_qrels(path)
