"""Runs and qrels read by Spark, tables written by Spark: any path or URI Spark reads.

A source is a local path, a URI of any file system Spark knows (``file://``, ``hdfs://``,
``s3a://``, …), or ``table:NAME`` for a table of the session's catalog. Parquet (a file,
or a folder as Spark writes one: part files, ``_SUCCESS``, ``key=value`` folders of
``partitionBy``) is read by Spark's parquet reader; anything else as TREC text files,
split into fields by Spark. Nothing is read on the driver.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlsplit

from lexiframe.errors import LABELS_HINT, NO_HINT, InputError, OutputError
from lexiframe.labels import fractional
from lexiframe.spark._errors import SparkJobError, is_spark_error, java_causes, root_cause
from lexiframe.typing import Labels, SystemFrom

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import DataFrame as SparkFrame

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
TABLE_PREFIX = "table:"
RUN_FIELDS = ("query", "Q0", "doc", "rank", "score", "system")
QRELS_FIELDS = ("query", "iteration", "doc", "relevance")
FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "json", ".json": "json"}
"""The writers of :func:`write`, by the target's extension."""


def is_uri(source: str) -> bool:
    """Whether ``source`` names a file system (``s3a://bucket/runs``), not a local path.

    Example:
        >>> is_uri("s3a://bucket/runs"), is_uri("runs/bm25.txt")
        (True, False)
    """
    return bool(_URI.match(source))


def read_run(
    spark: SparkSession, sources: str | Sequence[str], *, system_from: SystemFrom = "field"
) -> SparkFrame:
    """A run as a Spark DataFrame ``system, query, doc, score``, read by Spark.

    Parquet keeps its id types (integers as bigint); TREC text gives string ids and a
    double score, as :func:`lexiframe.read_run` does. ``system_from="filename"`` takes the
    system from each file's name (without ``.gz``/``.parquet``).

    Example:
        >>> from lexiframe.spark import io as sio
        >>> run = sio.read_run(spark, "s3a://bucket/runs/")  # doctest: +SKIP
    """
    return _read(spark, sources, "run", system_from)


def read_qrels(
    spark: SparkSession, sources: str | Sequence[str], *, labels: Labels | None = None
) -> SparkFrame:
    """Qrels as a Spark DataFrame ``query, doc, relevance``, read by Spark: TREC text's
    relevance as bigint, or as double for fractional ``labels`` (``"gain"``,
    ``"probability"``; the workers check their values, as one process does).

    Example:
        >>> from lexiframe.spark import io as sio
        >>> qrels = sio.read_qrels(spark, "hdfs:///trec/qrels.txt")  # doctest: +SKIP
    """
    return _read(spark, sources, "qrels", "field", labels)


def _read(
    spark: SparkSession,
    sources: str | Sequence[str],
    table: str,
    system_from: SystemFrom,
    labels: Labels | None = None,
) -> SparkFrame:
    from functools import reduce

    items = [sources] if isinstance(sources, str | os.PathLike) else list(sources)
    if not items:
        raise InputError(f"no {table} files given")
    frames = []
    for item in items:
        with _reading(str(item), table):
            frames.append(_read_one(spark, str(item), table, system_from, labels))
    return reduce(lambda left, right: left.unionByName(right), frames)


@contextmanager
def _reading(source: str, table: str) -> Iterator[None]:
    """Spark's failures to read ``source`` as lexiframe's errors, with the path as given:
    a missing one as one process says it, any other with its root cause."""
    try:
        yield
    except Exception as error:
        if not is_spark_error(error):
            raise
        causes = " ".join(message for _, message in java_causes(error))
        if "PATH_NOT_FOUND" in causes or "FileNotFoundException" in causes:
            raise InputError(f"{table} file not found: {source!r}") from None
        raise SparkJobError(f"cannot read the {table} {source!r}: {root_cause(error)}") from None


def _read_one(
    spark: SparkSession, source: str, table: str, system_from: SystemFrom, labels: Labels | None
) -> SparkFrame:
    from pyspark.sql import functions as F

    columns = (
        ("system", "query", "doc", "score") if table == "run" else ("query", "doc", "relevance")
    )
    if source.startswith(TABLE_PREFIX):
        frame = spark.table(source[len(TABLE_PREFIX) :])
        return _typed(frame, columns, table, source)
    given = source
    if not is_uri(source):
        if not os.path.exists(source):
            raise InputError(f"{table} file not found: {source!r}")
        source = os.path.abspath(source)
    if _is_parquet(spark, source):
        frame = spark.read.parquet(source)
        if table == "run" and system_from == "filename":
            frame = frame.withColumn("system", _file_system())
        return _typed(frame, columns, table, source)
    fields = RUN_FIELDS if table == "run" else QRELS_FIELDS
    lines = spark.read.text(source).select("value", F.col("_metadata.file_path").alias("_file"))
    tokens = F.split(F.trim(F.regexp_replace("value", r"\s+", " ")), " ")
    parsed = lines.select(tokens.alias("_tokens"), "value", "_file").filter(F.trim("value") != "")
    frame = parsed.select(
        *[F.col("_tokens")[fields.index(name)].alias(name) for name in columns if name != "system"],
        *([F.col("_tokens")[5].alias("system")] if table == "run" else []),
        F.size("_tokens").alias("_n_fields"),
        "value",
        "_file",
    )
    if table == "run" and system_from == "filename":
        frame = frame.withColumn("system", _file_system())
    number = "score" if table == "run" else "relevance"
    kind = "double" if table == "run" or fractional(labels) else "bigint"
    frame = frame.withColumn(number, F.expr(f"try_cast({number} AS {kind})"))
    _check_lines(frame, fields, number, kind, table, (source, given))
    return frame.select(*columns)


def _file_system() -> Column:
    """The system of ``system_from="filename"``: the file's name without .gz/.parquet."""
    from pyspark.sql import functions as F

    name = F.element_at(F.split(F.col("_metadata.file_path"), "/"), -1)
    return F.regexp_replace(name, r"(?i)(\.gz|\.parquet)$", "")


def _check_lines(
    frame: SparkFrame,
    fields: tuple[str, ...],
    number: str,
    kind: str,
    table: str,
    source: tuple[str, str],
) -> None:
    """Refuse a line without the format's fields, or whose number does not parse, in one
    process's words: the first bad line of the first file holding one (its name as the
    caller gave it, its line number) and how many more that file has. One aggregation
    over the lines; on the way to an error, one pass over that file. ``source``: the
    source as read and as given."""
    from pyspark.sql import functions as F

    bad = frame.filter((F.col("_n_fields") != len(fields)) | F.col(number).isNull())
    per_file = bad.groupBy("_file").count().collect()
    if not per_file:
        return
    file, count = min((row["_file"], row["count"]) for row in per_file)
    texts = {row["value"] for row in bad.filter(F.col("_file") == file).select("value").collect()}
    line, text = _first_line(frame.sparkSession, file, texts)
    where = f"{table} file {_as_given(file, *source)!r}, line {line}"
    more = f" ({count - 1} more malformed lines)" if count > 1 else ""
    tokens = text.split()
    description = f"{len(fields)} whitespace-separated fields ({' '.join(fields)})"
    hint, cli_hint = NO_HINT
    if len(tokens) != len(fields):
        problem = f"expected {description}, found {len(tokens)} fields"
    else:
        value = tokens[fields.index(number)]
        problem = f"{number} {value!r} is not {'a number' if kind == 'double' else 'an integer'}"
        if number == "relevance" and kind == "bigint":  # how to read fractional labels
            hint, cli_hint = LABELS_HINT
    raise InputError(f"{where}: {problem}{more}: {text!r}", hint=hint, cli_hint=cli_hint)


def _first_line(spark: SparkSession, file: str, texts: set[str]) -> tuple[int, str]:
    """The number (from 1) and text of the first line of ``file`` among ``texts`` (Spark's
    lines carry no number; the partitions of one file come in its order)."""
    lines = spark.read.text(file).rdd.map(lambda row: row[0]).zipWithIndex()
    text, index = lines.filter(lambda pair: pair[0] in texts).min(key=lambda pair: pair[1])
    return int(index) + 1, str(text)


def _as_given(file: str, read: str, given: str) -> str:
    """A file Spark names (``file:/abs/run.txt``) as the caller named its source: the
    local path they gave, or the file inside the folder they gave; a URI as Spark has it."""
    if is_uri(given) or not file.startswith("file:"):
        return file
    path = unquote(urlsplit(file).path)
    if path == read:
        return given
    if path.startswith(read.rstrip(os.sep) + os.sep):
        return os.path.join(given, os.path.relpath(path, read))
    return path


def _typed(frame: SparkFrame, columns: tuple[str, ...], table: str, source: str) -> SparkFrame:
    """The columns of a run or qrels from a parquet file or table, with lexiframe's types:
    integer ids as bigint, the system a string, scores double, grades bigint."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise InputError(
            f"{table} {source!r} lacks the column {missing[0]!r} (it has "
            f"{', '.join(frame.columns)}); a {table} needs {', '.join(columns)}"
        )
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    out = []
    for name in columns:
        dtype = frame.schema[name].dataType
        column = F.col(name)
        if name == "system":
            column = column.cast("string")
        elif name == "score":
            column = column.cast("double") if isinstance(dtype, T.NumericType) else column
        elif isinstance(dtype, integral):
            column = column.cast("bigint")
        out.append(column.alias(name))
    return frame.select(*out)


def _is_parquet(spark: SparkSession, source: str) -> bool:
    """Whether ``source`` is parquet: a ``.parquet`` name, or a folder holding parquet part
    files, ``_SUCCESS`` or ``key=value`` folders (looked at through Hadoop's file system,
    so that a URI of any scheme Spark reads is seen as Spark sees it)."""
    if source.rstrip("/").lower().endswith(".parquet"):
        return True
    try:
        names = _children(spark, source)
    except Exception:  # not listable here (no credentials on the driver): by its name
        return False
    return any(
        name == "_SUCCESS" or name.lower().endswith(".parquet") or ("=" in name) for name in names
    )


def _children(spark: SparkSession, source: str) -> list[str]:
    """The names in a folder (empty for a file), listed by Hadoop's file system."""
    if not is_uri(source):
        return sorted(os.listdir(source)) if os.path.isdir(source) else []
    jvm: Any = spark.sparkContext._jvm  # py4j's view of the JVM, untyped
    path = jvm.org.apache.hadoop.fs.Path(source)
    fs = path.getFileSystem(cast(Any, spark.sparkContext._jsc).hadoopConfiguration())
    if not fs.getFileStatus(path).isDirectory():
        return []
    return [status.getPath().getName() for status in fs.listStatus(path)]


def check_target(target: str) -> str:
    """The writer of a target by its extension (``parquet``, ``csv``, ``json``); refused
    before any work when there is none."""
    suffix = os.path.splitext(target.rstrip("/"))[1].lower()
    if suffix not in FORMATS:
        raise InputError(
            f"cannot write {target!r}: the extension must be one of {', '.join(FORMATS)}"
        )
    return FORMATS[suffix]


def _location(source: str) -> str | None:
    """Where a source or target lies, to compare them: a local path (``file://`` too) made
    absolute with its links resolved, another URI as written, None for a table."""
    if source.startswith(TABLE_PREFIX):
        return None
    if source.startswith("file://"):
        source = source[len("file://") :]
    elif is_uri(source):
        return source.rstrip("/")
    return os.path.realpath(source)


def check_apart(targets: Mapping[str, str], sources: Sequence[str]) -> None:
    """Refuse, before any work, a target (what it holds -> where) that is a source, holds
    one or lies inside one: Spark's writer replaces the folder it writes, and reads its
    sources only when the job runs, so the input would be lost. Two targets may not share
    a place either.

    Example:
        >>> check_apart({"per-query metrics": "runs/out.parquet"}, ["runs", "qrels.txt"])
        Traceback (most recent call last):
        ...
        lexiframe.errors.OutputError: the per-query metrics 'runs/out.parquet' overlaps ...
    """
    inputs = [(source, _location(source)) for source in sources if source != "-"]
    seen: dict[str, str] = {}
    for what, target in targets.items():
        place = _location(target)
        if place is None:
            continue
        for source, where in inputs:
            if where is not None and (
                place == where or place.startswith(f"{where}/") or where.startswith(f"{place}/")
            ):
                raise OutputError(
                    f"the {what} {target!r} overlaps the input {source!r}: Spark's writer "
                    "replaces the folder it writes, which would lose the input; choose "
                    "another path"
                )
        if place in seen:
            raise OutputError(
                f"the {what} and the {seen[place]} would both be written to {target!r}; "
                "give them different paths"
            )
        seen[place] = what


def write(
    sdf: SparkFrame, target: str, partition_by: Sequence[str] = (), order_by: Sequence[str] = ()
) -> str:
    """Write ``sdf`` with Spark's writer to ``target`` (a folder of part files, replaced if
    it exists), partitioned by ``partition_by`` (``key=value`` folders), its rows sorted by
    ``partition_by`` then ``order_by`` (part files in that order, the same on every run).
    Returns ``target``.

    Example:
        >>> from lexiframe.spark import io as sio
        >>> sio.write(per_query, "s3a://bucket/pq.parquet", ["system"], ["query"])  # doctest: +SKIP
    """
    kind = check_target(target)
    if not is_uri(target):
        target = os.path.abspath(target)
    keys = [*partition_by, *(name for name in order_by if name not in partition_by)]
    if keys:
        sdf = sdf.orderBy(*keys)
    writer = sdf.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    if kind == "csv":
        writer = writer.option("header", "true")
    getattr(writer, kind)(target)
    return target
