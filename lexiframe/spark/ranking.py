"""Positions, per-query measures of a run, and coverage, on Spark.

The run and the qrels are cogrouped by a hash bucket of the query id, so that each group
holds every ranking and every judgment of its queries, and :func:`lexiframe.positions`
runs on each group's Arrow table as it does in one process. Two things a group cannot see
by itself are brought to it:

- the systems that skipped its queries: the set of (by…, system) of the whole run is
  collected first (it is small) and each group gives the ones it lacks one placeholder
  row, an unjudged document, so that lexiframe gives them their empty, worst-case rows;
  their ``n_ret`` is then set back to 0;
- whether the qrels are graded (some query's relevant documents differ in grade): decided
  once over all the qrels, so that every group keeps the grades or none does.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe._utils import as_list
from lexiframe.errors import InputError
from lexiframe.metrics import parse_measures
from lexiframe.spark import _arrow
from lexiframe.typing import RankBy

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql import DataFrame as SparkFrame

BUCKET = "_lexiframe_bucket"
_PLACEHOLDER = "_lexiframe_placeholder"
POSITION_TYPES: dict[str, pl.DataType] = {
    "positions": pl.List(ranking.POSITION),
    "n_rel": ranking.POSITION,
    "n_ret": ranking.POSITION,
    "depth": ranking.POSITION,
}
"""The types lexiframe gives the positions columns (Spark holds them as signed integers)."""


def bucket(column: str, buckets: int) -> Column:
    """The hash bucket of a query id: every row of one query lands in the same group."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(F.col(column)), F.lit(buckets)).alias(BUCKET)


def bucket_count(sdf: SparkFrame, buckets: int | None) -> int:
    """``buckets``, checked, or the session's shuffle partitions when None."""
    if buckets is None:
        return max(1, int(sdf.sparkSession.conf.get("spark.sql.shuffle.partitions") or 200))
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise InputError(f"buckets must be a positive integer or None, not {buckets!r}")
    return buckets


@dataclass(frozen=True)
class _Job:
    """What each group needs: the options of :func:`lexiframe.positions`, the run's systems,
    the measures to compute (for :func:`evaluate`) and the schema promised to Spark."""

    options: dict[str, Any]
    by: list[str]
    qrels_by: list[str]
    systems: pl.DataFrame
    schema: pa.Schema
    measures: list[str] = field(default_factory=list)
    n: int | str | None = None


def positions(
    run: SparkFrame,
    qrels: SparkFrame,
    *,
    threshold: int = 1,
    depth: int | None = None,
    by: str | list[str] | None = None,
    rank_by: RankBy = "score",
    docs: bool = False,
    grades: bool | None = None,
    judged: bool = False,
    condensed: bool = False,
    system: str = "system",
    query: str = "query",
    doc: str = "doc",
    score: str = "score",
    rank: str = "rank",
    relevance: str = "relevance",
    no_relevant: Literal["drop", "keep"] = "drop",
    buckets: int | None = None,
) -> SparkFrame:
    """The positions frame of a Spark run against its qrels, as :func:`lexiframe.positions`.

    The options mean what they mean there. ``buckets``: how many groups of queries (by a
    hash of the query id) the work is split into; the session's
    ``spark.sql.shuffle.partitions`` by default. Each group is held in one worker's memory.

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
    job, run_sdf, qrels_sdf = _prepare(
        run, qrels, locals(), measures=[], n=None, buckets=bucket_count(run, buckets)
    )
    return _cogroup(run_sdf, qrels_sdf, job)


def evaluate(
    run: SparkFrame,
    qrels: SparkFrame,
    names: evaluation.MeasureNames,
    *,
    n: int | None = None,
    buckets: int | None = None,
    **positions_options: Any,
) -> SparkFrame:
    """Per-query measures of a Spark run, as :func:`lexiframe.evaluate`.

    The positions of each group of queries are built and measured in the same worker, so
    the positions frame is never shuffled. ``positions_options`` go to :func:`positions`.

    Returns:
        A Spark DataFrame ``by…, system, query`` and one double column per measure.

    Example:
        >>> from lexiframe import spark as lfs
        >>> per_query = lfs.evaluate(run_sdf, qrels_sdf, ["AP", "nDCG@10"])  # doctest: +SKIP
    """
    measures = parse_measures(names)
    parsed = [str(measure) for measure in measures]
    options = _positions_options(positions_options)
    evaluation.request_columns(measures, options)  # as lexiframe.evaluate does
    job, run_sdf, qrels_sdf = _prepare(
        run, qrels, options, measures=parsed, n=n, buckets=bucket_count(run, buckets)
    )
    return _cogroup(run_sdf, qrels_sdf, job)


def _positions_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(POSITIONS_OPTIONS))
    if unknown:
        raise TypeError(f"unexpected positions option {unknown[0]!r}")
    return options


POSITIONS_OPTIONS: dict[str, Any] = {
    name: parameter.default
    for name, parameter in inspect.signature(positions).parameters.items()
    if parameter.kind is parameter.KEYWORD_ONLY and name != "buckets"
}
"""The options of :func:`positions` with their defaults, as ``evaluate`` passes them on."""


def _prepare(
    run: SparkFrame,
    qrels: SparkFrame,
    given: dict[str, Any],
    *,
    measures: list[str],
    n: int | str | None,
    buckets: int,
) -> tuple[_Job, SparkFrame, SparkFrame]:
    """Check the inputs on the driver and plan the job: the run and qrels reduced to the
    columns lexiframe reads, with a bucket column, and the job of each group."""
    column_names = ("system", "query", "doc", "score", "rank", "relevance")
    options = {
        key: given.get(key, default)
        for key, default in POSITIONS_OPTIONS.items()
        if key not in column_names
    }
    options["by"] = as_list(options["by"])
    names = {key: given.get(key, POSITIONS_OPTIONS[key]) for key in column_names}
    by = options["by"]
    order = names["score"] if options["rank_by"] == "score" else names["rank"]
    run_columns = [*by, names["system"], names["query"], names["doc"], order]
    _require(run, run_columns, "run")
    qrels_by = [key for key in by if key in qrels.columns]
    qrels_columns = [*qrels_by, names["query"], names["doc"], names["relevance"]]
    _require(qrels, qrels_columns, "qrels")
    run = run.select(*dict.fromkeys(run_columns))
    qrels = qrels.select(*qrels_columns)
    run, qrels = _common_query_type(run, qrels, names["query"])
    if options["grades"] is not True:
        options["grades"] = _graded(qrels, qrels_by, names, options)
    options.update(names)
    schema = _dry_run(run, qrels, options, measures, n)
    systems = _arrow.collect(run.select(*by, names["system"]).distinct())
    job = _Job(
        options=options,
        by=by,
        qrels_by=qrels_by,
        systems=systems,
        schema=schema,
        measures=measures,
        n=n,
    )
    run = run.withColumn(BUCKET, bucket(names["query"], buckets))
    qrels = qrels.withColumn(BUCKET, bucket(names["query"], buckets))
    return job, run, qrels


def _require(sdf: SparkFrame, columns: list[str], table: str) -> None:
    from lexiframe.validate import require_columns

    require_columns(_arrow.empty_polars(sdf).schema, columns, table)


def _common_query_type(
    run: SparkFrame, qrels: SparkFrame, query: str
) -> tuple[SparkFrame, SparkFrame]:
    """Integer query ids of both sides as bigint, so that equal ids hash to one bucket."""
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    run_type, qrels_type = run.schema[query].dataType, qrels.schema[query].dataType
    both = isinstance(run_type, integral) and isinstance(qrels_type, integral)
    if both and run_type != qrels_type:
        run = run.withColumn(query, run[query].cast(T.LongType()))
        qrels = qrels.withColumn(query, qrels[query].cast(T.LongType()))
    return run, qrels


def _graded(
    qrels: SparkFrame, qrels_by: list[str], names: dict[str, str], options: dict[str, Any]
) -> bool:
    """Whether some query's relevant documents differ in grade (one pass over the qrels).

    Decided once over all the qrels, as :func:`lexiframe.positions` does, so that the
    groups agree; ``grades=False`` on graded qrels is refused, as there.
    """
    from pyspark.sql import functions as F

    relevance = F.col(names["relevance"])
    mixed = (
        qrels.filter(relevance >= options["threshold"])
        .groupBy(*qrels_by, names["query"])
        .agg(F.min(relevance).alias("low"), F.max(relevance).alias("high"))
        .filter(F.col("low") < F.col("high"))
        .limit(1)
        .collect()
    )
    if mixed and options["grades"] is False:
        row = mixed[0]
        levels = qrels.filter(relevance >= options["threshold"]).select(relevance).distinct()
        grades = sorted(level[0] for level in levels.collect())
        raise InputError(
            f"grades=False, but the qrels are graded ({names['query']}={row[names['query']]!r} "
            f"has relevant documents of grades {row['low']} and {row['high']}): nDCG and RBP "
            "would lose trec_eval's graded values. Leave grades= unset to keep them (binary "
            f"nDCG is then {ranking.binary_ndcg(grades)}, beside the graded measures), or "
            "binarise the qrels first."
        )
    return bool(mixed)


def _sample(sdf: SparkFrame, values: dict[str, pa.Array]) -> pl.DataFrame:
    """A one-row Polars frame with the columns and types of ``sdf``: ``values`` where given
    (cast to the column's type), a plain value elsewhere."""
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(sdf.schema)
    columns = {}
    for column in schema:
        value = values.get(column.name)
        if value is not None:
            try:
                value = value.cast(column.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                value = None
        columns[column.name] = value if value is not None else _arrow.sample_value(column.type)
    frame = pl.from_arrow(pa.table(columns))
    assert isinstance(frame, pl.DataFrame)
    return frame


def _dry_run(
    run: SparkFrame,
    qrels: SparkFrame,
    options: dict[str, Any],
    measures: list[str],
    n: int | str | None,
) -> pa.Schema:
    """Run lexiframe on a one-row sample of the inputs' types: it checks the columns, their
    types and the options with the one-process messages, and gives the output schema."""
    run_sample = _sample(run, {})
    shared = {key: run_sample[key].to_arrow() for key in run_sample.columns}
    qrels_sample = _sample(
        qrels,
        {
            **shared,
            options["relevance"]: pa.array([options["threshold"]], pa.int64()),
        },
    )
    frame = ranking.positions(run_sample, qrels_sample, **options)
    if measures:
        frame = evaluation.measures(frame, measures, n=n)
    return _arrow.arrow_schema(frame.schema)


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
            frame = evaluation.measures(frame, job.measures, n=job.n)
    return _arrow.to_spark_table(frame, job.schema)


def group_positions(run: pl.DataFrame, qrels: pl.DataFrame, job: _Job) -> pl.DataFrame | None:
    """The positions frame of one group of queries, with the rows of the systems that
    skipped them; None when none of its queries has a relevant document."""
    options = job.options
    evaluated = qrels
    if options["no_relevant"] != "keep":
        evaluated = qrels.filter(pl.col(options["relevance"]) >= options["threshold"])
    if evaluated.height == 0:
        return None
    run, placeholders = _with_placeholders(run, qrels, evaluated, job)
    with warnings.catch_warnings():
        # Dropped queries are counted by coverage(), not warned about per group.
        warnings.simplefilter("ignore")
        frame = ranking.positions(run, qrels, **options)
    if placeholders is None:
        return frame
    keys = [*job.by, "system", "query"]
    return (
        frame.join(placeholders, on=keys, how="left")
        .with_columns(
            pl.when(pl.col(_PLACEHOLDER).is_not_null())
            .then(pl.lit(0, dtype=ranking.POSITION))
            .otherwise(pl.col("n_ret"))
            .alias("n_ret")
        )
        .drop(_PLACEHOLDER)
    )


def _with_placeholders(
    run: pl.DataFrame, qrels: pl.DataFrame, evaluated: pl.DataFrame, job: _Job
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The group's run with one placeholder row for each (by…, system) of the whole run that
    has no row in it, and the keys of those rows (lexiframe's names), or None.

    The placeholder is an unjudged document of one of the group's evaluated queries (one of
    its own by-group's, when the qrels carry by keys): lexiframe then gives that system an
    empty row for every query of the group, and the placeholder's own ``n_ret`` of 1 is
    set back to 0 by the caller.
    """
    names = job.options
    system, query, doc = names["system"], names["query"], names["doc"]
    order = names["score"] if names["rank_by"] == "score" else names["rank"]
    key = [*job.by, system]
    missing = job.systems.join(run.select(key).unique(), on=key, how="anti")
    if missing.height == 0:
        return run, None
    if job.qrels_by:
        queries = (
            evaluated.group_by(job.qrels_by)
            .agg(pl.col(query).min())
            .cast({key: missing.schema[key] for key in job.qrels_by})
        )
        missing = missing.join(queries, on=job.qrels_by, how="inner")
    else:
        missing = missing.with_columns(pl.lit(evaluated[query].min()).alias(query))
    rows = (
        missing.with_columns(
            pl.lit(_unjudged_doc(qrels[doc], run.schema[doc])).alias(doc),
            pl.lit(0).alias(order),
        )
        .select(run.columns)
        .cast(dict(run.schema))
    )
    placeholders = rows.select(
        *job.by,
        pl.col(system).cast(pl.String).alias("system"),
        pl.col(query).alias("query"),
        pl.lit(True).alias(_PLACEHOLDER),
    )
    return pl.concat([run, rows]), placeholders


def _unjudged_doc(judged: pl.Series, dtype: pl.DataType) -> Any:
    """A document id of type ``dtype`` that the qrels of the group do not judge."""
    if dtype.is_integer():
        values = judged.cast(pl.Int64)
        return int(values.max()) + 1 if values.max() is not None else 0
    longest = judged.cast(pl.String).str.len_chars().max() or 0
    return "~" * (int(longest) + 1)


def coverage(
    run: SparkFrame,
    qrels: SparkFrame,
    *,
    threshold: int = 1,
    by: str | list[str] | None = None,
    system: str = "system",
    query: str = "query",
    doc: str = "doc",
    relevance: str = "relevance",
    no_relevant: Literal["drop", "keep"] = "drop",
) -> pl.DataFrame:
    """Queries evaluated, skipped and dropped per (by…, system), as :func:`lexiframe.coverage`.

    Counted with Spark aggregations; the result (one row per system) is collected as a
    Polars frame: ``by…, system, evaluated, skipped, unjudged, no_relevant``.

    Example:
        >>> from lexiframe import spark as lfs
        >>> lfs.coverage(run_sdf, qrels_sdf)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    if no_relevant not in ("drop", "keep"):
        raise InputError(f"no_relevant must be 'drop' or 'keep', not {no_relevant!r}")
    keep = no_relevant == "keep"
    by = as_list(by)
    _require(run, [*by, system, query], "run")
    qrels_by = [key for key in by if key in qrels.columns]
    _require(qrels, [*qrels_by, query, doc, relevance], "qrels")
    run, qrels = _common_query_type(run.select(*by, system, query), qrels, query)
    keys = [*by, "system"]
    query_keys = [*qrels_by, "query"]
    answered = run.select(
        *by, F.col(system).cast("string").alias("system"), F.col(query).alias("query")
    ).distinct()
    judged = (
        qrels.select(*qrels_by, F.col(query).alias("query"), F.col(relevance).alias("r"))
        .groupBy(*query_keys)
        .agg(F.max((F.col("r") >= threshold).cast("int")).alias("has_relevant"))
    )
    # The queries evaluated: the judged ones with a relevant document (every judged one
    # with no_relevant="keep").
    evaluated = F.col("has_relevant").isNotNull() if keep else F.col("has_relevant") == 1
    counts = (
        answered.join(judged, on=query_keys, how="left")
        .groupBy(*keys)
        .agg(
            F.sum(F.col("has_relevant").isNull().cast("long")).alias("unjudged"),
            F.sum((F.col("has_relevant") == 0).cast("long") * int(not keep)).alias("no_relevant"),
            F.sum(evaluated.cast("long")).alias("answered"),
        )
    )
    relevant = judged.filter(evaluated).groupBy(*qrels_by).count()
    if qrels_by:
        counts = counts.join(relevant, on=qrels_by, how="left")
    else:
        counts = counts.crossJoin(relevant)
    result = _arrow.collect(counts).with_columns(pl.col("count").fill_null(0))
    return (
        result.select(
            *keys,
            pl.col("count").alias("evaluated"),
            (pl.col("count") - pl.col("answered")).alias("skipped"),
            "unjudged",
            "no_relevant",
        )
        .cast({name: pl.UInt32 for name in ("evaluated", "skipped", "unjudged", "no_relevant")})
        .sort(keys)
    )
