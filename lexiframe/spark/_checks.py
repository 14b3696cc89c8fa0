"""The driver's checks of a Spark run and its qrels, with the one-process errors.

The driver's dry runs check the columns, their types and the options on one row of each
input (:func:`checked_dry_run`), before Spark reads the data: made-up rows first, the
data's first rows when a message is to show their values. What only the data shows (null
ids, scores and grades, NaN scores, a document ranked or judged twice) is checked by
lexiframe in the worker that evaluates the query (:mod:`lexiframe.spark.ranking`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe.errors import LexiframeError
from lexiframe.metrics import Measure
from lexiframe.options import PositionsOptions
from lexiframe.spark import _arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame


def require(sdf: SparkFrame, columns: list[str], table: str) -> None:
    from lexiframe.validate import require_columns

    require_columns(_arrow.empty_polars(sdf).schema, columns, table)


class Rows:
    """Rows of the run and the qrels for the driver's dry runs: made up from their schemas
    (zeros, "0"; no Spark job), and the data's first rows, read once when a message is to
    show the data's own values (two jobs: about 2 seconds of a fresh session)."""

    def __init__(self, run: SparkFrame, qrels: SparkFrame) -> None:
        self.run, self.qrels = _arrow.sample_row(run), _arrow.sample_row(qrels)
        self._sources = (run, qrels)
        self._first: tuple[pl.DataFrame, pl.DataFrame] | None = None

    def first(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The first row of each (none for an empty table), in Polars."""
        if self._first is None:
            run, qrels = self._sources
            self._first = both(
                lambda: _arrow.collect(run.limit(1)), lambda: _arrow.collect(qrels.limit(1))
            )
        return self._first


def checked_dry_run(
    rows: Rows, options: PositionsOptions, measures: list[Measure], n: int | str | None
) -> pa.Schema:
    """:func:`dry_run` on the made-up rows; when lexiframe refuses them, again on the
    data's first rows, so that the message shows the data's values (the made-up rows'
    message stands if those pass)."""
    try:
        return dry_run(rows.run, rows.qrels, options, measures, n)
    except LexiframeError:
        dry_run(*rows.first(), options, measures, n)
        raise


_First = TypeVar("_First")
_Second = TypeVar("_Second")


def both(first: Callable[[], _First], second: Callable[[], _Second]) -> tuple[_First, _Second]:
    """Two independent Spark jobs submitted at once, from two threads: a job of few tasks
    (the qrels' checks read one file in one task) leaves cores idle that the other uses.
    The first's error is raised before the second's, as if they had run in turn."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(second)
        return first(), later.result()


def dry_run(
    run_row: pl.DataFrame,
    qrels_row: pl.DataFrame,
    options: PositionsOptions,
    measures: list[Measure],
    n: int | str | None,
) -> pa.Schema:
    """Run lexiframe on a row of the inputs: it checks the columns, their types and the
    options with the one-process messages (the data's own values as examples), and gives
    the output schema. An empty run is refused here, as in one process."""
    if run_row.height == 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranking.positions(run_row, qrels_row, options)  # raises: the run is empty
    judgment = judgment_of(run_row, qrels_row, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = ranking.positions(run_row, judgment, options)
        if measures:
            frame = evaluation.measures_for(frame, measures, options, n)
    return _arrow.arrow_schema(frame.schema)


def judgment_of(
    run_row: pl.DataFrame, qrels_row: pl.DataFrame, options: PositionsOptions
) -> pl.DataFrame:
    """The qrels' row turned into a relevant judgment of the run's row (:class:`Rows`: its
    ids where their types agree), so that the dry run evaluates a query; the row as it is
    when the ids differ in kind, so that lexiframe's message shows both sides' values."""
    if qrels_row.height == 0:
        qrels_row = pl.DataFrame(
            {name: pl.Series(name, [None], dtype) for name, dtype in qrels_row.schema.items()}
        )
    values = {}
    for name in qrels_row.columns:
        if name == options.columns.relevance:
            values[name] = pl.lit(options.threshold).cast(qrels_row.schema[name])
        elif name in run_row.columns:
            try:
                values[name] = pl.lit(run_row[name].cast(qrels_row.schema[name]).item())
            except (pl.exceptions.PolarsError, TypeError):
                return qrels_row  # lexiframe's own check names the difference
            values[name] = values[name].cast(qrels_row.schema[name])
    if any(
        run_row.schema[name].is_integer() != qrels_row.schema[name].is_integer()
        for name in (options.columns.query, options.columns.doc)
    ):
        return qrels_row
    return qrels_row.with_columns(**values)
