"""Positions, per-query measures of a run, and coverage, on Spark.

The run and the qrels are cogrouped by a hash bucket of the query id, so that each group
holds every ranking and every judgment of its queries, and :func:`lexiframe.positions`
runs on each group's Arrow table as it does in one process: it checks the group's rows
(null ids, scores and grades, NaN scores, a document ranked or judged twice) and raises
the one-process error. The driver checks the columns, their types and the options first,
on a row of each input (:mod:`lexiframe.spark._checks`), before Spark reads the data.

What a group cannot see by itself, the driver settles after the groups have run, from
what each reports beside its rows (:func:`_evaluated`): the systems of the whole run (a
system that skipped every query of a group still gets their worst-case rows there), and
whether any group keeps the grades (then every group does, as one process keeps them for
every query or for none). Only the groups that need it are evaluated again.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe.errors import LexiframeWarning
from lexiframe.metrics import Measure, parse_measures
from lexiframe.options import ColumnNames, PositionsKwargs, PositionsOptions
from lexiframe.spark import _arrow, _checks, _keys, exact_sums, summary
from lexiframe.spark._checks import require
from lexiframe.spark._groups import (
    BUCKET,
    COUNTS,
    FLAGS,
    GROUP,
    KIND,
    MARK,
    ROW,
    SUMS,
    SYSTEM,
    Job,
    group,
)
from lexiframe.spark._partitioning import partition_labels
from lexiframe.validate import require_positive_int

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import DataFrame as SparkFrame
    from typing_extensions import Unpack

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
    from others is sized by the tables it is read from (Spark cannot size what a Python
    function returns, and guesses a gigabyte for a few rows), and a positions frame in as
    many groups as the evaluation that computed it.

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
        sizes = [_leaf_bytes(leaves.apply(i)) for i in range(leaves.size())]
        unknown = int(
            str(sdf.sparkSession._jsparkSession.sessionState().conf().defaultSizeInBytes())
        )
    except Exception:  # Spark Connect, or a plan without statistics
        return 0
    return None if any(size >= unknown for size in sizes) else sum(sizes)


def _leaf_bytes(leaf: Any) -> int:
    """A table's bytes as Spark's optimizer sizes them; a checkpoint's (the frame an
    evaluation computed: Spark cannot size it) as :data:`BYTES_PER_BUCKET` per partition,
    so that a frame read from it is cut as the evaluation that computed it was."""
    if str(leaf.nodeName()) == "LogicalRDD":
        return int(leaf.rdd().getNumPartitions()) * BYTES_PER_BUCKET
    return int(str(leaf.stats().sizeInBytes()))


def partitioned(sdf: SparkFrame, query: str, buckets: int) -> SparkFrame:
    """``sdf`` with its bucket column, in ``buckets`` partitions by bucket, one bucket in
    each (so that a cogroup or a group by bucket needs no second shuffle, and each task
    evaluates one bucket)."""
    return sdf.withColumn(BUCKET, bucket(query, buckets)).repartition(buckets, BUCKET)


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

    The frame is computed when this is called (one Spark job, kept in the executors'
    storage as a local checkpoint), so that bad data is refused here: the columns, their
    types and the options on the driver before Spark reads a row, as one process checks
    them; null ids, scores and grades, NaN scores and a document ranked or judged twice by
    lexiframe in the worker that evaluates the query, raised here as the same
    :class:`~lexiframe.errors.InputError` (when several queries have one, the query named
    is one of the first group that has one).

    Queries of the run without a relevant document are not evaluated, as in one process;
    :func:`lexiframe.spark.coverage` counts them.

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
    return _evaluated(plan)[0]


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
    of :func:`positions`, completed by what the measures read, as in one process; the
    measures are computed when this is called, and bad data refused, as :func:`positions`
    says.

    Returns:
        A Spark DataFrame ``by…, system, query`` and one double column per measure.

    Example:
        >>> from lexiframe import spark as lfs
        >>> per_query = lfs.evaluate(run_sdf, qrels_sdf, ["AP", "nDCG@10"])  # doctest: +SKIP
    """
    measures = parse_measures(names)
    resolved = PositionsOptions.of(options, **positions_options).for_measures(measures)
    plan = _prepare(run, qrels, resolved, measures=measures, n=n, buckets=buckets)
    return _evaluated(plan)[0]


class Evaluated(NamedTuple):
    """What :func:`with_coverage` gives: the frame (kept in the executors' storage), its
    coverage counts and, when asked for, its rows collected by the job that computed it."""

    frame: SparkFrame
    coverage: pl.DataFrame
    rows: pl.DataFrame | None = None


def with_coverage(
    run: SparkFrame,
    qrels: SparkFrame,
    names: evaluation.MeasureNames = (),
    *,
    n: int | None = None,
    buckets: int | None = None,
    options: PositionsOptions | None = None,
    collect: bool = False,
) -> Evaluated:
    """:func:`evaluate` of ``names`` (:func:`positions` when there is none) and
    :func:`coverage` of the same inputs, as ``lexiframe evaluate --spark`` reports them:
    the coverage counted by the groups that evaluate the queries, with no pass over the run
    of its own, where every run row is kept and the by= keys are the run's (otherwise by
    :func:`coverage`). With ``collect``, the frame's rows come to the driver with the
    groups' reports, in the job that computes them (for a frame small enough to collect).

    Example:
        >>> from lexiframe.spark.ranking import with_coverage
        >>> per_query, counts, _ = with_coverage(run_sdf, qrels_sdf, ["AP"])  # doctest: +SKIP
    """
    measures = parse_measures(names) if names else []
    resolved = PositionsOptions.of(options).for_measures(measures)
    plan = _prepare(run, qrels, resolved, measures=measures, n=n, buckets=buckets, cover=True)
    frame, counts, rows = _evaluated(plan, collect=collect)
    return Evaluated(frame, counts if counts is not None else coverage(run, qrels, resolved), rows)


class _Plan(NamedTuple):
    """The job of each group, the run and the qrels partitioned by bucket, rows of both
    for the driver's dry runs, and the frame's columns without grades."""

    job: Job
    run: SparkFrame
    qrels: SparkFrame
    rows: _checks.Rows
    binary: list[str] | None
    """The frame's columns where no group keeps the grades, when the groups decide it."""


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
    """Check the inputs on the driver and plan the job: the run and qrels reduced to the
    columns lexiframe reads, partitioned by bucket, and the job of each group (with
    ``cover``, counting coverage where the groups can: every run row kept, every by= key
    the run's own)."""
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
    # The types and options, before Spark reads a row: the frame's columns with the grades
    # and, when the groups decide whether to keep them, without.
    decided = options.grades is not None or options.fractional
    kept = options if decided else replace(options, grades=True)
    schema = _checks.checked_dry_run(rows, kept, measures, n)
    binary = None
    if not decided:
        binary = _checks.checked_dry_run(rows, replace(options, grades=False), measures, n).names
    _warn_driver_python(run.sparkSession)
    cover = cover and options.kept_rows is None and own == by
    job = Job(options, tuple(own), schema, measures=measures, n=n, cover=cover)
    run, qrels = partitioned(run, names.query, count), partitioned(qrels, names.query, count)
    return _Plan(job, run, qrels, rows, binary)


def _evaluated(
    plan: _Plan, *, collect: bool = False
) -> tuple[SparkFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """The frame of the plan, computed (a local checkpoint), its coverage counts when the
    job counts them (else None) and, with ``collect``, its rows. The partial sums of its
    measures, which the groups add as they compute them, are kept for
    :func:`lexiframe.spark.summarize` of this frame.

    Each group evaluates the systems its rows name and, unless the options say, decides
    by itself whether to keep the grades (:func:`lexiframe.ranking.keeps_grades` over its
    judgments). The driver reads what each group did, and evaluates again only the groups
    that hold a query to evaluate and missed a system of the run (which gets worst-case
    rows for their queries, as in one process) or did not keep the grades that another
    group keeps (one process keeps them for every query or for none). Any run whose
    systems answer queries in every group, on qrels that are graded in every group or in
    none, is read once.
    """
    from pyspark.sql import functions as F

    job = plan.job
    groups, marks, collected = _computed(_cogroup(plan.run, plan.qrels, job), job, collect)
    systems = marks.filter(pl.col(KIND) == SYSTEM).select(*job.own, "system").unique()
    if systems.height == 0:  # raises: the run is empty, with the one-process message
        _checks.dry_run(plan.rows.run.clear(), plan.rows.qrels, job.options, [], None)
    if not (marks[f"{MARK}judged"] > 0).any():  # raises: the qrels are empty, as one process
        ranking.positions(plan.rows.run, plan.rows.qrels.clear(), job.options)
    evaluating = marks.filter((pl.col(KIND) == GROUP) & (pl.col(f"{MARK}evaluated") > 0))
    # Grades kept by some group, decided by the groups: then by every one.
    regrade = plan.binary is not None and bool((evaluating[f"{MARK}graded"] > 0).any())
    counted = marks.filter(pl.col(KIND) == SYSTEM).group_by(BUCKET).len()
    missed = evaluating.join(counted, on=BUCKET, how="left").filter(
        (pl.col("len").fill_null(0) < systems.height) | (regrade & (pl.col(f"{MARK}graded") == 0))
    )
    rows = groups.filter(F.col(KIND) == ROW)
    if missed.height:
        grades = True if regrade else job.options.grades
        again = replace(job, options=replace(job.options, grades=grades), systems=systems)
        chosen = F.col(BUCKET).isin(missed[BUCKET].sort().to_list())
        redo = _cogroup(plan.run.filter(chosen), plan.qrels.filter(chosen), again)
        redone, again_marks, again_rows = _computed(redo, job, collect)
        rows = rows.filter(~chosen).unionByName(redone.filter(F.col(KIND) == ROW))
        marks = pl.concat([marks.join(missed, on=BUCKET, how="anti"), again_marks])
        if collected is not None and again_rows is not None:
            kept = collected.join(missed.select(BUCKET), on=BUCKET, how="anti")
            collected = pl.concat([kept, again_rows], how="diagonal_relaxed")
    counts = _coverage(marks, systems, job) if job.cover else None
    columns = plan.binary if plan.binary is not None and not regrade else job.schema.names
    frame = rows.select(*[F.col(_arrow.quoted(name)) for name in columns])
    if job.measures:
        sums = marks.filter(pl.col(KIND) == SUMS).select(*job.sum_keys, *exact_sums.PARTIAL_TYPES)
        summary.remember_partial_sums(frame, sums, job.sum_keys, job.sum_columns)
    return frame, counts, None if collected is None else collected.select(columns)


def _computed(
    groups: SparkFrame, job: Job, collect: bool = False
) -> tuple[SparkFrame, pl.DataFrame, pl.DataFrame | None]:
    """The groups' frame computed now and kept in the executors' storage (a local
    checkpoint: memory, then disk), and their marks collected, in one Spark job: the
    systems each group evaluated (with their counts) and the groups themselves, a few rows
    per group, and the partial sums of their measures; with ``collect``, the frame's rows
    too (with their bucket). The lexiframe errors of the groups are raised as their own
    types."""
    from pyspark.sql import functions as F

    from lexiframe.spark._errors import lexiframe_error

    keys = list(dict.fromkeys([*job.own, *(job.sum_keys if job.measures else ["system"])]))
    marks = [KIND, BUCKET, *(f"{MARK}{name}" for name in (*COUNTS, *FLAGS))]
    marks += list(exact_sums.PARTIAL_TYPES) if job.measures else []
    try:
        stored = groups.localCheckpoint(eager=False)  # stored by the first job that reads it
        if collect:
            every = _arrow.collect(stored)
            kind = pl.col(KIND)
            marks_found = every.filter(kind != ROW).select(*keys, *marks)
            return stored, marks_found, every.filter(kind == ROW)
        found = stored.filter(F.col(KIND) != ROW).select(*[_arrow.quoted(k) for k in keys], *marks)
        return stored, _arrow.collect(found), None
    except Exception as error:
        lexiframe = lexiframe_error(error)
        if lexiframe is not None:
            raise lexiframe from None
        raise


def _coverage(marks: pl.DataFrame, systems: pl.DataFrame, job: Job) -> pl.DataFrame:
    """:func:`coverage`'s counts, summed over the groups that counted them."""
    keys = [*job.own, "system"]
    counted = (
        marks.filter(pl.col(KIND) == SYSTEM)
        .group_by(keys)
        .agg(pl.col(f"{MARK}{name}").sum().cast(pl.UInt32).alias(name) for name in COUNTS)
    )
    return systems.join(counted, on=keys, how="left").sort(keys)


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


def _cogroup(run: SparkFrame, qrels: SparkFrame, job: Job) -> SparkFrame:
    from pyspark.sql.pandas.types import from_arrow_schema

    grouped = run.groupBy(BUCKET).cogroup(qrels.groupBy(BUCKET))
    with _arrow.quiet_pyspark():
        return grouped.applyInArrow(
            _arrow.cogroup_function(group, job=job), from_arrow_schema(job.group_schema)
        )


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
