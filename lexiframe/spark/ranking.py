"""Positions, per-query measures of a run, and coverage, on Spark.

The run and the qrels are cogrouped by a hash bucket of the query id, so that each group
holds every ranking and every judgment of its queries, and :func:`lexiframe.positions`
runs on each group's Arrow table as it does in one process. What a group cannot see by
itself is decided once, on the driver, by the one-process functions over what Spark
aggregates:

- the systems of the whole run (one row per (by…, system)): each group passes them to
  :func:`lexiframe.positions` (``systems=``), which gives the ones that skipped its queries
  their empty, worst-case rows;
- whether the qrels are graded (:func:`lexiframe.ranking.keeps_grades` over one row per
  query and relevant grade), so that every group keeps the grades or none does;
- the checks of the inputs: null ids and scores, NaN scores and duplicate judgments are
  counted by Spark aggregations before the shuffle, and the first offending ranking or
  judgment is checked by lexiframe on the driver, which raises the one-process error.
"""

from __future__ import annotations

import math
import operator
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial, reduce
from typing import TYPE_CHECKING, TypeVar

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe._utils import format_row
from lexiframe.errors import InputError, LexiframeError, LexiframeWarning
from lexiframe.metrics import Measure, parse_measures
from lexiframe.options import ColumnNames, PositionsKwargs, PositionsOptions
from lexiframe.spark import _arrow, _keys
from lexiframe.validate import require_positive_int

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import DataFrame as SparkFrame
    from typing_extensions import Unpack

BUCKET = "_lexiframe_bucket"
POSITION_TYPES: dict[str, pl.DataType] = {
    "positions": pl.List(ranking.POSITION),
    "n_rel": ranking.POSITION,
    "n_ret": ranking.POSITION,
    "depth": ranking.POSITION,
}
"""The types lexiframe gives the positions columns (Spark holds them as signed integers)."""

BYTES_PER_BUCKET = 4 << 20
"""Input bytes (as Spark estimates them) per group of queries when ``buckets`` is not given."""


def bucket(column: str, buckets: int) -> Column:
    """The hash bucket of a query id: every row of one query lands in the same group."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(F.col(column)), F.lit(buckets)).alias(BUCKET)


def bucket_count(sdf: SparkFrame, buckets: int | None) -> int:
    """``buckets``, checked, or chosen from the data when None.

    One group per 4 MB of the input as Spark's optimizer sizes it (the files' bytes for
    files, the rows' for data in memory), and at least one per core of the session
    (``spark.default.parallelism``): a run of 40 thousand rows on 2 cores is cut in 2 groups
    (each a Python task), not the 200 of ``spark.sql.shuffle.partitions``. A frame computed
    from others (a positions frame) is sized by the tables it is read from: Spark cannot
    size what a Python function returns, and guesses a gigabyte for a few rows.

    Example:
        >>> bucket_count(run_sdf, 12)  # doctest: +SKIP
        12
    """
    if buckets is not None:
        return require_positive_int(buckets, "buckets", optional=True)
    spark = sdf.sparkSession
    cores = spark.sparkContext.defaultParallelism
    size = _estimated_bytes(sdf)
    if size is None:  # a table without statistics: Spark's own default
        return max(1, cores, int(spark.conf.get("spark.sql.shuffle.partitions") or 1))
    return max(1, cores, math.ceil(size / BYTES_PER_BUCKET))


def _estimated_bytes(sdf: SparkFrame) -> int | None:
    """The bytes of the tables a DataFrame is read from, as Spark's optimizer sizes them
    (0 when it cannot tell, None when a table has no statistics)."""
    try:
        # The analyzed plan: its leaves are the tables read, not a cache of the frame.
        plan = sdf._jdf.queryExecution().analyzed()
        leaves = plan.collectLeaves()
        sizes = [int(str(leaves.apply(i).stats().sizeInBytes())) for i in range(leaves.size())]
        unknown = int(
            str(sdf.sparkSession._jsparkSession.sessionState().conf().defaultSizeInBytes())
        )
    except Exception:  # Spark Connect, or a plan without statistics
        return 0
    return None if any(size >= unknown for size in sizes) else sum(sizes)


def partitioned(sdf: SparkFrame, query: str, buckets: int) -> SparkFrame:
    """``sdf`` with its bucket column, in ``buckets`` partitions by bucket (so that a
    cogroup or a group by bucket needs no second shuffle)."""
    return sdf.withColumn(BUCKET, bucket(query, buckets)).repartition(buckets, BUCKET)


@dataclass(frozen=True)
class _Job:
    """What each group needs: the options of :func:`lexiframe.positions` (resolved on the
    driver: the grades decided over the whole qrels, one partition per group), the run's
    systems (lexiframe's names), the measures to compute (for :func:`evaluate`) and the
    schema promised to Spark."""

    options: PositionsOptions
    systems: pl.DataFrame
    schema: pa.Schema
    measures: list[Measure] = field(default_factory=list)
    n: int | str | None = None


def positions(
    run: SparkFrame,
    qrels: SparkFrame,
    options: PositionsOptions | None = None,
    *,
    buckets: int | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> SparkFrame:
    """The positions frame of a Spark run against its qrels, as :func:`lexiframe.positions`.

    ``options`` and ``kwargs`` are those of :func:`lexiframe.positions` (a
    :class:`~lexiframe.PositionsOptions`, or its fields as keyword arguments) and mean what
    they mean there; ``partitions`` does not apply: ``buckets`` is how many groups of
    queries (by a hash of the query id) the work is split into, by default chosen from the
    size of the inputs (:func:`bucket_count`). Each group is held in one worker's memory.

    The inputs are checked before the shuffle as one process checks them (columns, types,
    null ids and scores, NaN scores, duplicate judgments; a document ranked twice in one
    ranking is found in the workers, and :func:`lexiframe_errors` raises it as the same
    :class:`~lexiframe.errors.InputError`).

    Queries of the run without a relevant document are not evaluated, as in one process;
    :func:`lexiframe.spark.coverage` counts them (a Spark DataFrame is lazy, so no warning
    is raised here).

    Returns:
        A Spark DataFrame ``by…, system, query, positions: array<bigint>, n_rel: bigint,
        n_ret: bigint`` (plus ``depth``, ``docs``, ``grades``, ``ideal_grades`` and the
        judged columns as in one process).

    Example:
        >>> from lexiframe import spark as lfs
        >>> pos = lfs.positions(run_sdf, qrels_sdf, depth=100)  # doctest: +SKIP
    """
    resolved = PositionsOptions.of(options, **kwargs)
    job, run_sdf, qrels_sdf = _prepare(run, qrels, resolved, measures=[], n=None, buckets=buckets)
    return _cogroup(run_sdf, qrels_sdf, job)


def evaluate(
    run: SparkFrame,
    qrels: SparkFrame,
    names: evaluation.MeasureNames,
    *,
    n: int | None = None,
    buckets: int | None = None,
    options: PositionsOptions | None = None,
    **positions_options: Unpack[PositionsKwargs],
) -> SparkFrame:
    """Per-query measures of a Spark run, as :func:`lexiframe.evaluate`.

    The positions of each group of queries are built and measured in the same worker, so
    the positions frame is never shuffled. ``options`` and ``positions_options`` are those
    of :func:`positions`, completed by what the measures read, as in one process.

    Returns:
        A Spark DataFrame ``by…, system, query`` and one double column per measure.

    Example:
        >>> from lexiframe import spark as lfs
        >>> per_query = lfs.evaluate(run_sdf, qrels_sdf, ["AP", "nDCG@10"])  # doctest: +SKIP
    """
    measures = parse_measures(names)
    resolved = PositionsOptions.of(options, **positions_options).for_measures(measures)
    job, run_sdf, qrels_sdf = _prepare(
        run, qrels, resolved, measures=measures, n=n, buckets=buckets
    )
    return _cogroup(run_sdf, qrels_sdf, job)


def _prepare(
    run: SparkFrame,
    qrels: SparkFrame,
    given: PositionsOptions,
    *,
    measures: list[Measure],
    n: int | str | None,
    buckets: int | None,
) -> tuple[_Job, SparkFrame, SparkFrame]:
    """Check the inputs and plan the job: the run and qrels reduced to the columns
    lexiframe reads, partitioned by bucket, and the job of each group."""
    # The workers rank with lexiframe.positions and these options: one bucket at once each.
    options = replace(given, partitions=None)
    by, names = list(options.by), options.columns
    own = [key for key in by if key in run.columns or key not in qrels.columns]  # run's keys
    keys = [*own, names.system, names.query, names.doc, *options.ordered_by]
    run_columns = list(dict.fromkeys(keys))
    _require(run, run_columns, "run")
    qrels_by = [key for key in by if key in qrels.columns]
    qrels_columns = [*qrels_by, names.query, names.doc, names.relevance]
    _require(qrels, qrels_columns, "qrels")
    count = bucket_count(run, buckets)
    run, qrels = _common_query_type(run.select(*run_columns), qrels.select(*qrels_columns), names)
    rows = _Rows(run, qrels)
    _checked_dry_run(rows, options, measures, n)  # the types, before Spark reads them
    _warn_driver_python(run.sparkSession)
    systems, mixed = _both(
        lambda: _checked_run(run, rows, replace(options, by=tuple(own))),
        lambda: _check_qrels(qrels, rows.run, qrels_by, options),
    )
    if options.grades is not True and not options.fractional:  # decided where one is graded
        options = replace(options, grades=mixed and _graded(qrels, qrels_by, options))
    schema = _checked_dry_run(rows, options, measures, n)
    job = _Job(options=options, systems=systems, schema=schema, measures=measures, n=n)
    return job, partitioned(run, names.query, count), partitioned(qrels, names.query, count)


def _require(sdf: SparkFrame, columns: list[str], table: str) -> None:
    from lexiframe.validate import require_columns

    require_columns(_arrow.empty_polars(sdf).schema, columns, table)


def _common_query_type(
    run: SparkFrame, qrels: SparkFrame, names: ColumnNames
) -> tuple[SparkFrame, SparkFrame]:
    """Integer ids of both sides as bigint, so that equal ids hash to one bucket and join."""
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    for column in (names.query, names.doc):
        run_type, qrels_type = run.schema[column].dataType, qrels.schema[column].dataType
        both = isinstance(run_type, integral) and isinstance(qrels_type, integral)
        if both and run_type != qrels_type and column == names.query:
            run = run.withColumn(column, run[column].cast(T.LongType()))
            qrels = qrels.withColumn(column, qrels[column].cast(T.LongType()))
    return run, qrels


class _Rows:
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
            self._first = _both(
                lambda: _arrow.collect(run.limit(1)), lambda: _arrow.collect(qrels.limit(1))
            )
        return self._first


def _checked_dry_run(
    rows: _Rows, options: PositionsOptions, measures: list[Measure], n: int | str | None
) -> pa.Schema:
    """:func:`_dry_run` on the made-up rows; when lexiframe refuses them, again on the
    data's first rows, so that the message shows the data's values (the made-up rows'
    message stands if those pass)."""
    try:
        return _dry_run(rows.run, rows.qrels, options, measures, n)
    except LexiframeError:
        _dry_run(*rows.first(), options, measures, n)
        raise


_First = TypeVar("_First")
_Second = TypeVar("_Second")


def _both(first: Callable[[], _First], second: Callable[[], _Second]) -> tuple[_First, _Second]:
    """Two independent Spark jobs submitted at once, from two threads: a job of few tasks
    (the qrels' checks read one file in one task) leaves cores idle that the other uses.
    The first's error is raised before the second's, as if they had run in turn."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(second)
        return first(), later.result()


def _dry_run(
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
    judgment = _judgment_of(run_row, qrels_row, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = ranking.positions(run_row, judgment, options)
        if measures:
            frame = evaluation.measures_for(frame, measures, options, n)
    return _arrow.arrow_schema(frame.schema)


def _judgment_of(
    run_row: pl.DataFrame, qrels_row: pl.DataFrame, options: PositionsOptions
) -> pl.DataFrame:
    """The qrels' row turned into a relevant judgment of the run's row (:class:`_Rows`: its
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


def _checked_run(run: SparkFrame, rows: _Rows, options: PositionsOptions) -> pl.DataFrame:
    """The (by…, system) keys of the run (its own by= keys), in lexiframe's names, after one
    Spark aggregation that counts per system the rows with a null id or a null or NaN score.

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
    systems = _arrow.collect(run.groupBy(*keys).agg(F.max(bad.cast("int")).alias("_bad")))
    if systems.height == 0:
        _dry_run(rows.run.clear(), rows.qrels, options, [], None)  # raises: the run is empty
    null_key = pl.any_horizontal(pl.col(key).is_null() for key in keys)
    if systems.filter(null_key | (pl.col("_bad") == 1)).height:
        rankings = [*by, system, query]
        flagged = run.filter(reduce(operator.or_, [F.col(k).isNull() for k in keys], bad))
        first = flagged.select(*rankings).orderBy(*[F.col(k).asc_nulls_first() for k in rankings])
        key = first.limit(1).collect()[0]
        condition = reduce(operator.and_, [F.col(k).eqNullSafe(key[k]) for k in rankings])
        bad_rows = _arrow.collect(run.filter(condition))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranking.positions(bad_rows, _judgment_of(rows.run, rows.qrels, options), options)
    return systems.select(*by, pl.col(system).cast(pl.String).alias("system"))


def _check_qrels(
    qrels: SparkFrame, run_row: pl.DataFrame, qrels_by: list[str], options: PositionsOptions
) -> bool:
    """Refuse null values and a document judged twice for a query, as one process does,
    and tell whether the grades that gain may differ (then :func:`_graded` decides whether
    some query's do): one Spark job that aggregates per (by…, query, doc), then over the
    whole table; only when it found a problem, the first offending judgments are checked
    by lexiframe on the driver."""
    from pyspark.sql import functions as F

    columns = options.columns
    names = [*qrels_by, columns.query, columns.doc, columns.relevance]
    keys, grade = names[:-1], names[-1]
    # One shuffle: per judgment (how often it is given, its null grades, its grade), then
    # the whole table (a level per query between them cost a second shuffle: about a
    # tenth of this check's time on the recommender shape's 1.9 million judgments). The
    # judgments are hashed to their groups before they are counted: counting them first
    # where they are read (judgments are rarely repeated: nothing to save) took a quarter
    # longer, in one task per file.
    hashed = qrels.repartition(bucket_count(qrels, None), *keys)
    per_key = hashed.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("_n"),
        F.sum(F.col(grade).isNull().cast("long")).alias("_null"),
        F.max(grade).alias("_grade"),
    )
    # The judgments that gain: above threshold=1, every positive grade (trec_eval's -l).
    gains = F.when(F.col("_grade") >= options.gain_level, F.col("_grade"))
    counts = per_key.agg(
        *[
            F.coalesce(F.sum(F.when(F.col(key).isNull(), F.col("_n"))), F.lit(0)).alias(key)
            for key in keys
        ],
        F.coalesce(F.sum("_null"), F.lit(0)).alias(grade),
        F.coalesce(F.sum((F.col("_n") > 1).cast("long")), F.lit(0)).alias("_repeated"),
        F.min(gains).alias("_low"),
        F.max(gains).alias("_high"),
    ).collect()[0]
    for name in names:
        if counts[name]:
            example = qrels.filter(F.col(name).isNull()).limit(1).collect()[0].asDict()
            raise InputError(
                f"null value in column {name!r} of the qrels ({counts[name]} rows); every "
                f"judgment needs a query, a doc and a grade; example: {format_row(example)}"
            )
    if counts["_repeated"]:
        first = (
            per_key.filter(F.col("_n") > 1).orderBy(*keys).limit(1).drop("_n", "_null", "_grade")
        )
        rows = _arrow.collect(qrels.join(first, keys).limit(2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranking.positions(run_row, rows.select(names), options)
    low, high = counts["_low"], counts["_high"]
    # One grade that gains, all at the threshold or above: no query can keep grades.
    return low is not None and (low < high or low < options.threshold)


def _graded(qrels: SparkFrame, qrels_by: list[str], options: PositionsOptions) -> bool:
    """Whether some query's relevant documents differ in grade (or, above threshold=1, a
    positive grade below the threshold gains), decided by
    :func:`lexiframe.ranking.keeps_grades` over one row per (by…, query, grade that gains),
    as :func:`lexiframe.positions` decides it; ``grades=False`` on graded qrels is refused
    with its message."""
    from pyspark.sql import functions as F

    names = options.columns
    levels = (
        qrels.filter(F.col(names.relevance) >= options.gain_level)
        .select(
            *qrels_by,
            F.col(names.query).alias("query"),
            F.col(names.relevance).alias("relevance"),
        )
        .distinct()
    )
    return ranking.keeps_grades(_arrow.collect(levels).lazy(), [*qrels_by, "query"], options)


_warned: set[str] = set()


def _warn_driver_python(spark: SparkSession) -> None:
    """Warn, once per master, when the executors of a cluster were pointed at the driver's
    interpreter by the import of lexiframe.spark rather than by the caller."""
    master = str(spark.sparkContext.master)
    if master.startswith("local") or master in _warned:
        return
    import lexiframe.spark as package

    if not package.SETS_PYSPARK_PYTHON or os.environ.get("PYSPARK_PYTHON") != sys.executable:
        return
    if spark.sparkContext.getConf().get("spark.pyspark.python"):
        return
    _warned.add(master)
    warnings.warn(
        f"the executors of {master} run {sys.executable}, the driver's Python (PYSPARK_PYTHON "
        "was unset, and importing lexiframe.spark set it): on nodes where that path does not "
        "exist or lacks lexiframe, set PYSPARK_PYTHON (or spark.pyspark.python) to the "
        "executors' interpreter, or ship one with --archives (docs: Scaling out)",
        LexiframeWarning,
        stacklevel=3,
    )


def _cogroup(run: SparkFrame, qrels: SparkFrame, job: _Job) -> SparkFrame:
    from pyspark.sql.pandas.types import from_arrow_schema

    grouped = run.groupBy(BUCKET).cogroup(qrels.groupBy(BUCKET))
    with _arrow.quiet_pyspark():
        return grouped.applyInArrow(
            _arrow.cogroup_function(_group, job=job), from_arrow_schema(job.schema)
        )


def _group(run_table: pa.Table, qrels_table: pa.Table, *, job: _Job) -> pa.Table:
    """One group of queries: lexiframe's positions (and measures) on its Arrow tables."""
    run = _arrow.polars_frame(run_table.drop_columns([BUCKET]))
    qrels = _arrow.polars_frame(qrels_table.drop_columns([BUCKET]))
    frame = group_positions(run, qrels, job)
    if frame is None:
        return job.schema.empty_table()
    if job.measures:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the driver's dry run warned once already
            # Measured as laid out when read from Arrow, as measures() sees it: Polars'
            # sums over a list may group the terms by the lists' memory layout, which
            # can change the last bit of a sum (AP).
            frame = _arrow.polars_frame(frame.to_arrow())
            frame = evaluation.measures_for(frame, job.measures, job.options, job.n)
    return _arrow.to_spark_table(frame, job.schema)


def group_positions(run: pl.DataFrame, qrels: pl.DataFrame, job: _Job) -> pl.DataFrame | None:
    """The positions frame of one group of queries, with the rows of the systems that
    skipped them (every system of the run is passed as ``systems=``); None when none of its
    queries is evaluated."""
    options = job.options
    evaluated = qrels
    if options.no_relevant != "keep":
        evaluated = qrels.filter(pl.col(options.columns.relevance) >= options.query_level)
    if evaluated.height == 0:
        return None
    with warnings.catch_warnings():
        # Dropped queries are counted by coverage(), not warned about per group.
        warnings.simplefilter("ignore")
        return ranking.positions(run, qrels, options, systems=job.systems)


def coverage(
    run: SparkFrame,
    qrels: SparkFrame,
    options: PositionsOptions | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> pl.DataFrame:
    """Queries evaluated, skipped and dropped per (by…, system), as :func:`lexiframe.coverage`.

    Spark reduces the run to its answered queries (one row per (by…, system, query), of the
    rows the options keep) and the qrels to one row per query (its highest grade); the
    driver counts them as one process does (:func:`lexiframe.ranking.coverage_of_answers`).
    A Polars frame: ``by…, system, evaluated, skipped, unjudged, no_relevant``.

    Example:
        >>> from lexiframe import spark as lfs
        >>> lfs.coverage(run_sdf, qrels_sdf)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    resolved = PositionsOptions.of(options, **kwargs)
    by, names = list(resolved.by), resolved.columns
    run = _keys.with_qrels_keys(run, qrels, by)
    system, query, doc, relevance = names.system, names.query, names.doc, names.relevance
    _require(run, [*by, system, query], "run")
    qrels_by = [key for key in by if key in qrels.columns]
    _require(qrels, [*qrels_by, query, doc, relevance], "qrels")
    keys = run.select(
        *by, F.col(system).cast("string").alias("system"), F.col(query).alias("query")
    )
    if resolved.kept_rows is None:
        answered = keys.distinct()
    else:  # the rows the options keep, decided by the one-process function on each batch
        with _arrow.quiet_pyspark():
            answered = run.mapInArrow(
                partial(_kept_answers, options=resolved), keys.schema
            ).distinct()
    judged = qrels.groupBy(*qrels_by, query).agg(
        F.min(doc).alias(doc), F.max(relevance).alias(relevance)
    )
    pairs = _arrow.collect(answered).lazy()
    systems = pairs.select(*by, "system").unique()  # every row answers: no pass of their own
    if resolved.kept_rows is not None:  # a system may keep no row
        systems = _arrow.collect(keys.select(*by, "system").distinct()).lazy()
    return ranking.coverage_of_answers(pairs, systems, _arrow.collect(judged), resolved)


def _kept_answers(
    batches: Iterator[pa.RecordBatch], *, options: PositionsOptions
) -> Iterator[pa.RecordBatch]:
    """The (by…, system, query) pairs of a run's batches with the rows the options keep
    (:func:`lexiframe.ranking.kept_run_rows`)."""
    for batch in batches:
        run = ranking.canonical_run(_arrow.polars_frame(pa.Table.from_batches([batch])), options)
        pairs = ranking.kept_run_rows(run, options).select(*options.by, "system", "query")
        yield from pairs.unique().collect().to_arrow().to_batches()
