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
- the checks of the inputs (:mod:`lexiframe.spark._checks`): null ids, scores and grades
  and NaN scores are counted by Spark aggregations before the shuffle, and the first
  offending ranking or judgment is checked by lexiframe on the driver, which raises the
  one-process error (a document ranked or judged twice is found in the group of its query).
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe.errors import LexiframeWarning
from lexiframe.metrics import Measure, parse_measures
from lexiframe.options import ColumnNames, PositionsKwargs, PositionsOptions
from lexiframe.spark import _arrow, _checks, _keys
from lexiframe.spark._checks import both, require
from lexiframe.spark._partitioning import partition_labels
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
    """The hash bucket of a query id: every row of one query lands in the same group,
    labelled so that :func:`partitioned` gives each bucket a partition of its own
    (:func:`lexiframe.spark._partitioning.partition_labels`)."""
    from pyspark.sql import functions as F

    labels = F.lit(list(partition_labels(buckets))).cast("array<bigint>")
    index = F.pmod(F.xxhash64(F.col(column)), F.lit(buckets)).cast("int")
    return F.get(labels, index).alias(BUCKET)


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
    """``sdf`` with its bucket column, in ``buckets`` partitions by bucket, one bucket in
    each (so that a cogroup or a group by bucket needs no second shuffle, and each task
    evaluates one bucket)."""
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
    null ids, scores and grades, NaN scores); a document ranked twice in one ranking or
    judged twice for one query is found in the worker that evaluates the query, and
    :func:`lexiframe_errors` raises it as the same :class:`~lexiframe.errors.InputError`.

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
    plan = _prepare(run, qrels, resolved, measures=[], n=None, buckets=buckets)
    return _cogroup(plan)


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
    plan = _prepare(run, qrels, resolved, measures=measures, n=n, buckets=buckets)
    return _cogroup(plan)


def with_coverage(
    run: SparkFrame,
    qrels: SparkFrame,
    names: evaluation.MeasureNames = (),
    *,
    n: int | None = None,
    buckets: int | None = None,
    options: PositionsOptions | None = None,
) -> tuple[SparkFrame, pl.DataFrame]:
    """:func:`evaluate` of ``names`` (:func:`positions` when there is none) and
    :func:`coverage` of the same inputs, as ``lexiframe evaluate --spark`` reports them:
    the coverage counted on the driver from what the checks of the inputs collect, with no
    pass over the run of its own, where every run row is kept and the by= keys are the
    run's (otherwise by :func:`coverage`).

    Example:
        >>> from lexiframe.spark.ranking import with_coverage
        >>> per_query, counts = with_coverage(run_sdf, qrels_sdf, ["AP"])  # doctest: +SKIP
    """
    measures = parse_measures(names) if names else []
    resolved = PositionsOptions.of(options).for_measures(measures)
    plan = _prepare(run, qrels, resolved, measures=measures, n=n, buckets=buckets, cover=True)
    counts = plan.coverage if plan.coverage is not None else coverage(run, qrels, resolved)
    return _cogroup(plan), counts


class _Plan(NamedTuple):
    """The job of each group, the run and the qrels partitioned by bucket, and the coverage
    counts when they were asked for and the checks could give them (else None)."""

    job: _Job
    run: SparkFrame
    qrels: SparkFrame
    coverage: pl.DataFrame | None = None


def _prepare(
    run: SparkFrame,
    qrels: SparkFrame,
    given: PositionsOptions,
    *,
    measures: list[Measure],
    n: int | str | None,
    buckets: int | None,
    cover: bool = False,
) -> _Plan:
    """Check the inputs and plan the job: the run and qrels reduced to the columns
    lexiframe reads, partitioned by bucket, and the job of each group; with ``cover``, the
    coverage counts from the checks' passes where they can give them
    (:func:`lexiframe.spark._checks.covered`)."""
    # The workers rank with lexiframe.positions and these options: one bucket at once each.
    options = replace(given, partitions=None)
    by, names = list(options.by), options.columns
    own = [key for key in by if key in run.columns or key not in qrels.columns]  # run's keys
    keys = [*own, names.system, names.query, names.doc, *options.ordered_by]
    run_columns = list(dict.fromkeys(keys))
    require(run, run_columns, "run")
    qrels_by = [key for key in by if key in qrels.columns]
    qrels_columns = [*qrels_by, names.query, names.doc, names.relevance]
    require(qrels, qrels_columns, "qrels")
    count = bucket_count(run, buckets)
    run, qrels = _common_query_type(run.select(*run_columns), qrels.select(*qrels_columns), names)
    rows = _checks.Rows(run, qrels)
    _checks.checked_dry_run(rows, options, measures, n)  # the types, before Spark reads them
    _warn_driver_python(run.sparkSession)
    # Coverage from the checks: every run row kept, every by= key the run's own.
    cover = cover and options.kept_rows is None and own == by
    own_options = replace(options, by=tuple(own))
    undecided = options.grades is not True and not options.fractional  # decided where graded
    rankings, (facts, mixed) = both(
        lambda: _checks.checked_run(run, rows, own_options, per_query=cover),
        lambda: _checks.check_qrels(
            qrels,
            qrels_by,
            options,
            per_query=lambda mixed: cover or (undecided and mixed),
        ),
    )
    if undecided:
        kept = mixed and facts is not None and facts.grades_kept(options)
        options = replace(options, grades=kept)
    schema = _checks.checked_dry_run(rows, options, measures, n)
    systems = rankings.select(*own, "system").unique() if cover else rankings
    job = _Job(options=options, systems=systems, schema=schema, measures=measures, n=n)
    covered = _checks.covered(rankings, facts, options) if facts is not None and cover else None
    run, qrels = partitioned(run, names.query, count), partitioned(qrels, names.query, count)
    return _Plan(job, run, qrels, covered)


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


def _cogroup(plan: _Plan) -> SparkFrame:
    from pyspark.sql.pandas.types import from_arrow_schema

    job = plan.job
    grouped = plan.run.groupBy(BUCKET).cogroup(plan.qrels.groupBy(BUCKET))
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
    require(run, [*by, system, query], "run")
    qrels_by = [key for key in by if key in qrels.columns]
    require(qrels, [*qrels_by, query, doc, relevance], "qrels")
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
