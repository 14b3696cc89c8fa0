"""The checks of a Spark run and its qrels before the shuffle, with the one-process errors.

The driver's dry runs check the columns, their types and the options on one row of each
input (:func:`checked_dry_run`); one Spark aggregation over each input counts what a row
cannot show (null ids and scores, NaN scores, null judgments), and lexiframe on the driver
raises its own error on the first offending ranking or judgment. What the two aggregations
send back (one row per system or ranking of the run; the distinct grades of the qrels, and
one row per query when asked) also decides, on the driver, what the groups cannot see by
themselves: the systems of the whole run, whether the grades are kept, and, when asked, the
coverage counts of :func:`lexiframe.spark.coverage` with no pass of their own. What one
ranking or one query shows by itself (a document ranked or judged twice) is found in the
worker that evaluates it.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, TypeVar

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe._utils import format_row
from lexiframe.errors import InputError, LexiframeError
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



def checked_run(
    run: SparkFrame, rows: Rows, options: PositionsOptions, *, per_query: bool = False
) -> pl.DataFrame:
    """The (by…, system) keys of the run (its own by= keys), in lexiframe's names, after one
    Spark aggregation that counts per system the rows with a null id or a null or NaN score;
    with ``per_query``, its (by…, system, query) keys: the rankings, one row each (what
    :func:`lexiframe.spark.coverage` counts), from the same aggregation per ranking.

    The first bad ranking (in the keys' order, nulls first, as one process finds it) is
    collected and checked by :func:`lexiframe.positions`, which raises its own error; a run
    without a system is empty, and refused with the one-process message.
    """
    from pyspark.sql import functions as F

    by, system, query = list(options.by), options.columns.system, options.columns.query
    value = F.col(options.order)
    bad = (
        F.col(query).isNull()
        | F.col(options.columns.doc).isNull()
        | value.isNull()
        | F.isnan(value.cast("double"))
    )
    keys = [*by, system]
    grouped = [*keys, query] if per_query else keys
    found = _arrow.collect(run.groupBy(*grouped).agg(F.max(bad.cast("int")).alias("_bad")))
    if found.height == 0:
        dry_run(rows.run.clear(), rows.qrels, options, [], None)  # raises: the run is empty
    null_key = pl.any_horizontal(pl.col(key).is_null() for key in keys)
    if found.filter(null_key | (pl.col("_bad") == 1)).height:
        rankings = [*by, system, query]
        flagged = run.filter(reduce(operator.or_, [F.col(k).isNull() for k in keys], bad))
        first = flagged.select(*rankings).orderBy(*[F.col(k).asc_nulls_first() for k in rankings])
        key = first.limit(1).collect()[0]
        condition = reduce(operator.and_, [F.col(k).eqNullSafe(key[k]) for k in rankings])
        bad_rows = _arrow.collect(run.filter(condition))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranking.positions(bad_rows, judgment_of(rows.run, rows.qrels, options), options)
    named = [*by, pl.col(system).cast(pl.String).alias("system")]
    if per_query:
        named.append(pl.col(query).alias("query"))
    return found.select(named)


@dataclass(frozen=True)
class QrelsFacts:
    """What the check of the qrels found, one row per (by…, query) in the qrels' own names:
    the query's lowest document and highest grade (what :func:`lexiframe.spark.coverage`
    reads of the qrels) and ``_gains``, its distinct grades that gain."""

    queries: pl.DataFrame
    keys: list[str]
    """The qrels' by= keys and the query column."""

    def grades_kept(self, options: PositionsOptions) -> bool:
        """Whether the positions keep the grades, as :func:`lexiframe.positions` decides it
        (:func:`lexiframe.ranking.keeps_grades` over one row per query and grade that
        gains); ``grades=False`` on graded qrels is refused with its message.

        Example:
            >>> import polars as pl
            >>> queries = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d1", "d1"],
            ...                         "relevance": [2, 1], "_gains": [[1, 2], [1]]})
            >>> QrelsFacts(queries, ["query"]).grades_kept(PositionsOptions())
            True
        """
        levels = self.queries.select(
            *[pl.col(key).alias("query" if key == self.keys[-1] else key) for key in self.keys],
            pl.col("_gains").alias("relevance"),
        ).explode("relevance", keep_nulls=False)
        return ranking.keeps_grades(levels.lazy(), [*self.keys[:-1], "query"], options)

    def judged(self, options: PositionsOptions) -> pl.DataFrame:
        """One row per (by…, query): its lowest document and highest grade."""
        names = options.columns
        return self.queries.select(*self.keys, names.doc, names.relevance)


def check_qrels(
    qrels: SparkFrame,
    qrels_by: list[str],
    options: PositionsOptions,
    *,
    per_query: Callable[[bool], bool],
) -> tuple[QrelsFacts | None, bool]:
    """Refuse null values, as one process does; return whether the grades that gain may
    differ (``mixed``: then :meth:`QrelsFacts.grades_kept` decides whether some query's do)
    and, when ``per_query(mixed)`` asks for them, what was found per query
    (:class:`QrelsFacts`, else None).

    One Spark aggregation over the whole qrels, with no shuffle of its rows (each task
    counts its nulls and the distinct grades that gain); the aggregation per query runs
    only when asked for. A document judged twice for a query is found by lexiframe in the
    worker that evaluates the query, as a document ranked twice is, and raised as the
    one-process error.
    """
    from pyspark.sql import functions as F

    columns = options.columns
    names = [*qrels_by, columns.query, columns.doc, columns.relevance]
    grade, query_keys = names[-1], names[:-2]
    # The judgments that gain: above threshold=1, every positive grade (trec_eval's -l).
    gains = F.when(F.col(grade) >= options.gain_level, F.col(grade))
    found = qrels.agg(
        *[F.sum(F.col(name).isNull().cast("long")).alias(f"_null_{name}") for name in names],
        F.array_sort(F.collect_set(gains)).alias("_gains"),
    ).collect()[0]
    for name in names:
        if found[f"_null_{name}"]:
            example = qrels.filter(F.col(name).isNull()).limit(1).collect()[0].asDict()
            raise InputError(
                f"null value in column {name!r} of the qrels ({found[f'_null_{name}']} "
                "rows); every judgment needs a query, a doc and a grade; example: "
                f"{format_row(example)}"
            )
    levels = found["_gains"]
    # One grade that gains, all at the threshold or above: no query can keep grades.
    mixed = bool(levels) and (levels[0] < levels[-1] or levels[0] < options.threshold)
    if not per_query(mixed):
        return None, mixed
    queries = qrels.groupBy(*query_keys).agg(  # aggregated in each task before the shuffle
        F.array_sort(F.collect_set(gains)).alias("_gains"),
        F.min(columns.doc).alias(columns.doc),
        F.max(grade).alias(grade),
    )
    return QrelsFacts(_arrow.collect(queries), query_keys), mixed


def covered(
    answered: pl.DataFrame, facts: QrelsFacts, options: PositionsOptions
) -> pl.DataFrame:
    """:func:`lexiframe.spark.coverage`'s counts from what the checks collected: the run's
    rankings (:func:`checked_run` with ``per_query``) and the qrels' queries; for options
    that keep every run row and by= keys that are all the run's (else the run's answers
    differ from its rankings, and :func:`lexiframe.spark.coverage` reads them).

    Example:
        >>> import polars as pl
        >>> answered = pl.DataFrame({"system": ["a"], "query": ["q1"]})
        >>> queries = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d1", "d5"],
        ...                         "relevance": [1, 1], "_gains": [[1], [1]]})
        >>> facts = QrelsFacts(queries, ["query"])
        >>> covered(answered, facts, PositionsOptions())["skipped"].to_list()
        [1]
    """
    systems = answered.select(*options.by, "system").unique()
    judged = facts.judged(options)
    return ranking.coverage_of_answers(answered.lazy(), systems.lazy(), judged, options)
