"""``lexiframe evaluate --spark MASTER``: the evaluation of the command, run on Spark.

Spark reads the run and the qrels (any path, URI or ``table:NAME``:
:mod:`lexiframe.spark.io`), runs the per-query work and the pairs' summary, and writes the
per-query tables with its own writers (``--partition-by``); the per-query metrics (one row
per ranking) are collected once, for their means and orderings by one process's
functions, and the coverage note is counted by the groups that evaluate the queries. A
failed job ends the command with one line and status 2, and the session it started is
stopped (its JVM killed if stopping hangs).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import partial, reduce
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import polars as pl

from lexiframe import io
from lexiframe.aggregate import Method
from lexiframe.cli._orderings import long_orderings, orderings_per_key
from lexiframe.cli._shared import metric_ordering, track_options, warnings_as_notes
from lexiframe.cli._spark import LOCAL_DRIVER_MEMORY, RESOURCE_WAIT_SECONDS
from lexiframe.cli.qrels_sets import qrels_paths, qrels_sets
from lexiframe.errors import InputError, LexiframeError
from lexiframe.io.qrels import QRELS_KEY
from lexiframe.spark import _arrow, class_archive
from lexiframe.spark import io as spark_io
from lexiframe.spark._checks import both
from lexiframe.spark._errors import SparkJobError, is_spark_error, lexiframe_error, root_cause
from lexiframe.spark.ranking import with_coverage
from lexiframe.spark.resources import resource_wait
from lexiframe.spark.summary import summary_table
from lexiframe.typing import Labels

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

Written = list[Any]
"""What the command wrote where: (what it holds, the path or URI) pairs."""

ROW_KEYS = ("system", "query", "system_a", "system_b")
"""The columns that name a row of a per-query table, in the table's order: the part files
are sorted by them, as one process's file is."""

MASTER_TIMEOUT = 10
"""How long to wait for a standalone master to accept a connection."""

STOP_SECONDS = 60
"""How long stopping the session may take before its JVM is killed."""

STOP_POLL_SECONDS = 0.01
"""How often the command looks whether the session's JVM has stopped."""

QUICK_START_BYTES = 32 << 20
"""Local inputs up to this many bytes in all start a local session whose JVM compiles with
the client compiler only (:data:`QUICK_START_OPTION`). On small inputs the command's time
is mostly the JVM's start and its first jobs' compilation, which the client compiler makes
a third shorter (the demo track's 0.8 MB); the server compiler's faster code pays for its
slower start only on long jobs: on 20 million rows (63 MB of parquet) the two took the
same time, so the limit stays at half that size (docs: Scaling out)."""

QUICK_START_OPTION = "-XX:TieredStopAtLevel=1"
"""The JVM option of a quick start: HotSpot's client compiler (C1) only."""

JAVA_OPTIONS = ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions")
"""The settings that carry the driver JVM's options: one given (by ``--conf`` or in
``spark-defaults.conf``) is left as it is, with no quick start and no class archive
(:mod:`lexiframe.spark.class_archive`, which every other local session maps)."""

WEB_UI = "spark.ui.enabled"
"""Spark's web UI, which a local session the command starts goes without unless it is
given (``--conf spark.ui.enabled=true`` or ``spark-defaults.conf``): its start is a tenth
of the session's (0.3 s of 3), and a command ends with its session. A cluster's session
keeps Spark's default."""

WORKER_THREADS = "spark.executorEnv.POLARS_MAX_THREADS"
"""The setting that sizes Polars' thread pool in the Python workers, set to the cores of a
task (``spark.task.cpus``, 1 by default): Spark runs a task on each core, and a worker whose
Polars used every core would compete with the others' (two workers at once on 2 cores,
each evaluating 15 buckets of 1.3 million rows, used a sixth more CPU time with two threads
each than with one). Left alone when given (``--conf`` or ``spark-defaults.conf``) or when
``POLARS_MAX_THREADS`` is set in this process's environment."""


def session(args: argparse.Namespace) -> tuple[SparkSession, bool]:
    """A Spark session on ``args.spark`` with the command's settings, and whether it was
    started here (a session already running, as under spark-submit, is used as it is)."""
    from pyspark.sql import SparkSession  # its absence is refused by the command

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    check_master(args.spark)
    settings = {"spark.ui.showConsoleProgress": "false"}
    local = args.spark.startswith("local")
    memory = args.driver_memory
    if memory is None and local:
        memory = LOCAL_DRIVER_MEMORY
    if memory:
        settings["spark.driver.memory"] = memory
    if args.executor_memory:
        settings["spark.executor.memory"] = args.executor_memory
    given = dict(item.partition("=")[::2] for item in args.conf or [])
    given = {key.strip(): value for key, value in given.items()}
    chosen = {**_defaults(), **given}
    if WORKER_THREADS not in chosen and "POLARS_MAX_THREADS" not in os.environ:
        settings[WORKER_THREADS] = chosen.get("spark.task.cpus", "1")
    if local and WEB_UI not in chosen:
        settings[WEB_UI] = "false"
    if local and not any(name in chosen for name in JAVA_OPTIONS):
        # The client compiler for a short job; the class archive for every local start.
        sources = [*args.runs, *qrels_paths(args.qrels)]
        options = [QUICK_START_OPTION] if quick_start(sources, list(chosen)) else []
        options += class_archive.java_options()
        if options:
            settings[JAVA_OPTIONS[0]] = " ".join(options)
    settings.update(given)
    builder = SparkSession.builder.master(args.spark).appName("lexiframe evaluate")
    for key, value in settings.items():
        builder = builder.config(key, value)
    with jvm_output_to(args.spark_log):
        spark = builder.getOrCreate()
    return spark, True


def quick_start(sources: list[str], settings: list[str]) -> bool:
    """Whether a local session for ``sources`` starts its JVM with the client compiler
    only: every source a local path (or ``file://`` URI) that exists, all of them up to
    :data:`QUICK_START_BYTES`, and none of :data:`JAVA_OPTIONS` among the ``settings``
    given.

    Example:
        >>> quick_start([__file__], []), quick_start(["s3a://bucket/runs/"], [])
        (True, False)
        >>> quick_start([__file__], ["spark.driver.extraJavaOptions"])
        False
    """
    if any(name in settings for name in JAVA_OPTIONS):
        return False
    total = 0
    for source in sources:
        if source.startswith("file://"):
            source = unquote(urlsplit(source).path)
        elif spark_io.is_uri(source) or source.startswith(spark_io.TABLE_PREFIX):
            return False  # its size is not known before the session starts
        if os.path.isfile(source):
            total += os.path.getsize(source)
        elif os.path.isdir(source):
            total += sum(
                os.path.getsize(os.path.join(folder, name))
                for folder, _, names in os.walk(source)
                for name in names
            )
        else:  # a pattern, or missing (Spark's read says so)
            return False
    return total <= QUICK_START_BYTES


def _defaults() -> dict[str, str]:
    """The settings of the ``spark-defaults.conf`` that the session will read (in
    ``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``, where ``SPARK_HOME`` is PySpark's own
    folder when unset), by key; none when there is none."""
    from pyspark.find_spark_home import _find_spark_home  # how PySpark finds it

    folder = os.environ.get("SPARK_CONF_DIR") or os.path.join(_find_spark_home(), "conf")
    try:
        with open(os.path.join(folder, "spark-defaults.conf")) as lines:
            items = [line.strip() for line in lines]
    except OSError:
        return {}
    pairs = [re.split(r"[\s=:]", item, maxsplit=1) for item in items if item[:1] not in "#"]
    return {pair[0]: pair[1].strip(" =:\t") if len(pair) > 1 else "" for pair in pairs}


@contextmanager
def jvm_output_to(log: str | None) -> Iterator[None]:
    """Start Spark's JVM inside the block with its standard error (its start-up lines, its
    log, the local workers' output) sent to ``log``, or discarded: the command speaks in
    its own lines. The JVM keeps the stream it started with; this process gets its own
    back at the end of the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(log or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


@contextmanager
def _no_py4j_tracebacks() -> Iterator[None]:
    """Keep py4j's own report of an interrupted call (a traceback logged on the root
    logger when a signal stops the command) off the terminal: the command says it was
    stopped in one line."""
    root = logging.getLogger()
    quiet = logging.NullHandler()  # so that the root logger is not configured to print

    def keep(record: logging.LogRecord) -> bool:
        return not record.pathname.endswith(os.path.join("py4j", "java_gateway.py"))

    root.addHandler(quiet)
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
        root.removeHandler(quiet)


def check_master(master: str) -> None:
    """Refuse a standalone master that does not answer, at once: Spark itself retries for
    a minute before it fails with a Java error."""
    if not master.startswith("spark://"):
        return
    reasons = []
    for address in master[len("spark://") :].split(","):  # several masters: high availability
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_TIMEOUT).close()
            return
        except (OSError, ValueError) as error:
            reasons.append(f"{address}: {getattr(error, 'strerror', None) or error}")
    raise SparkJobError(
        f"cannot reach the Spark master {master} ({'; '.join(reasons)}): is it running, and "
        "is the URL the one its web page shows?"
    )


def run_on_spark(
    args: argparse.Namespace, metric_names: list[str], preference_names: list[str]
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], dict[str, pl.DataFrame], Written]:
    """The command's evaluation on Spark: the per-query tables (collected only for
    ``--per-query``'s printing: Spark writes them), the summaries, the orderings, and what
    was written where (every file option written here, before the session stops)."""
    kinds = (["metrics"] if metric_names else []) + (["preferences"] if preference_names else [])
    outputs = _targets(args.output, kinds)
    summaries = _targets(args.summary, kinds)
    orderings_path = _targets(args.orderings, ["orderings"])
    targets = {
        **{f"per-query {kind}": target for kind, target in outputs.items()},
        **{f"{kind} summary": target for kind, target in summaries.items()},
        **orderings_path,
    }
    for target in targets.values():
        spark_io.check_target(target)
    spark_io.check_apart(targets, [*args.runs, *qrels_paths(args.qrels)])
    spark, started = None, False
    wait = args.resource_wait or RESOURCE_WAIT_SECONDS
    try:
        with _arrow.quiet_pyspark():
            spark, started = session(args)
        with _arrow.quiet_pyspark(), _no_py4j_tracebacks(), resource_wait(spark, wait):
            tables, summary, orderings, written = _evaluate(
                spark, args, metric_names, preference_names, outputs
            )
            for kind, target in summaries.items():
                written.append((f"{kind} summary", write_small(spark, summary[kind], target)))
            for target in orderings_path.values():
                long = long_orderings(orderings)
                written.append(("orderings", write_small(spark, long, target)))
        return tables, summary, orderings, written
    except LexiframeError:
        raise
    except Exception as error:
        found = lexiframe_error(error)
        if found is not None:
            raise found from None
        if is_spark_error(error):
            raise SparkJobError(_one_line(error)) from None
        raise
    finally:
        if started and spark is not None:
            _stop(spark)


def _targets(path: str | None, kinds: list[str]) -> dict[str, str]:
    """Where each table goes: ``path``, or ``<stem>-<kind><ext>`` for several (a URI kept
    as it is)."""
    if path is None or not kinds:
        return {}
    if len(kinds) == 1:
        return {kinds[0]: path}
    stem, dot, suffix = path.rstrip("/").rpartition(".")
    if not dot or "/" in suffix:
        stem, suffix = path.rstrip("/"), ""
    ext = f".{suffix}" if suffix else ""
    return {kind: f"{stem}-{kind}{ext}" for kind in kinds}


def _evaluate(
    spark: SparkSession,
    args: argparse.Namespace,
    metric_names: list[str],
    preference_names: list[str],
    outputs: dict[str, str],
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], dict[str, pl.DataFrame], Written]:
    from lexiframe import spark as lfs

    options = track_options(args, metric_names)
    with _arrow.quiet_pyspark():
        run, (qrels, by) = both(  # two small jobs at once: the text lines' checks
            lambda: spark_io.read_run(spark, args.runs, system_from=args.system_from),
            lambda: _read_qrels_sets(spark, args.qrels, options.labels),
        )
    options = options.replace(by=by)
    buckets = args.buckets
    sdfs: dict[str, SparkFrame] = {}
    rows = None
    with warnings_as_notes():
        if preference_names:
            # Computed by with_coverage (kept in the executors' storage): read by both.
            frame, coverage, _ = with_coverage(run, qrels, buckets=buckets, options=options)
            if metric_names:
                sdfs["metrics"] = lfs.measures(
                    frame, metric_names, n=args.n, buckets=buckets,
                    compat=options.compat, labels=options.labels,
                )  # fmt: skip
            sdfs["preferences"] = lfs.preferences(frame, preference_names, by=by, buckets=buckets)
        else:  # the per-query metrics collected by the job that computes them
            sdfs["metrics"], coverage, rows = with_coverage(
                run, qrels, metric_names, n=args.n, buckets=buckets, options=options, collect=True
            )
    # Read by the writer and by the summary (the collect of the metrics, the aggregation of
    # the pairs): computed once. A table not written is read once, and not cached.
    sdfs = {kind: table.cache() if kind in outputs else table for kind, table in sdfs.items()}
    written = []
    for kind, target in outputs.items():
        columns = _partition_columns(sdfs[kind], args.partition_by or [])
        keys = [name for name in sdfs[kind].columns if name in ROW_KEYS]
        written.append((f"per-query {kind}", spark_io.write(sdfs[kind], target, columns, keys)))
    tables: dict[str, pl.DataFrame] = {}
    if "metrics" in sdfs:  # one collect: printed, summarised and ordered on the driver
        collected = rows if rows is not None else _arrow.collect(sdfs["metrics"])
        tables["metrics"] = collected.sort(*by, "system", "query")
    summary, orderings = _summaries(
        sdfs, tables, metric_names, preference_names, args.order, list(by)
    )
    _note_dropped(coverage)
    if not args.per_query:
        tables.pop("metrics", None)
    return tables, summary, orderings, written


def _partition_columns(sdf: SparkFrame, columns: list[str]) -> list[str]:
    """The ``--partition-by`` columns of one table (``system`` is ``system_a`` in pairs)."""
    chosen = []
    for column in columns:
        if column == "system" and "system_a" in sdf.columns:
            column = "system_a"
        if column not in sdf.columns:
            raise InputError(
                f"--partition-by {column}: the per-query table has no such column (it has "
                f"{', '.join(sdf.columns[:4])}, …)"
            )
        chosen.append(column)
    return chosen


def _note_dropped(coverage: pl.DataFrame) -> None:
    """Say what the one-process command warns: the answered queries not evaluated."""
    unjudged, no_relevant = coverage["unjudged"].sum(), coverage["no_relevant"].sum()
    if unjudged or no_relevant:
        print(
            f"note: queries answered but not evaluated, summed over systems: {unjudged} not "
            f"in the qrels, {no_relevant} without a relevant document",
            file=sys.stderr,
        )


def _summaries(
    tables: dict[str, SparkFrame],
    rows: dict[str, pl.DataFrame],
    metric_names: list[str],
    preference_names: list[str],
    method: Method,
    by: list[str],
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """The summaries and the orderings: the pair summary aggregated by Spark (one row per
    pair of systems comes back), the metrics' means and orderings by one process's
    functions over the per-query rows (``rows``, sorted by their keys), which the
    orderings by mean read anyway: one collect serves them all, with no aggregation of
    Spark's."""
    from lexiframe import aggregate, evaluation

    summary, orderings = {}, {}
    if "metrics" in rows:
        per_query = rows["metrics"]
        summary["metrics"] = evaluation.summarize(per_query, by=by)
    if "preferences" in tables:
        prefs = tables["preferences"]
        pair_summary = summary_table(prefs, by=by, measures=preference_names)
        empty = _arrow.empty_polars(prefs)
        summary["preferences"] = _like(
            pair_summary,
            aggregate.summarize_preferences(empty, by=by, measures=preference_names),
        )
        for name in preference_names:
            ordering = aggregate.order(summary["preferences"], name, method=method, by=by)
            orderings.update(orderings_per_key(f"{name} ({method})", ordering, by))
    for name in metric_names:
        compute = partial(aggregate.order, rows["metrics"], name, method="mean", by=by)
        by_mean = metric_ordering(name, compute)
        if by_mean is not None:
            orderings.update(orderings_per_key(f"{name} (mean)", by_mean, by))
    return summary, orderings


def _read_qrels_sets(
    spark: SparkSession, specs: list[str], labels: Labels
) -> tuple[SparkFrame, tuple[str, ...]]:
    """The qrels of ``--qrels`` read by Spark and the by= key that names their sets, as
    :func:`lexiframe.cli.qrels_sets.read_qrels_sets` reads them in one process."""
    from pyspark.sql import functions as F

    named = qrels_sets(specs)
    if named is None:
        return spark_io.read_qrels(spark, specs[0], labels=labels), ()
    sets = [
        spark_io.read_qrels(spark, path, labels=labels).select(F.lit(name).alias(QRELS_KEY), "*")
        for name, path in named.items()
    ]
    return reduce(lambda a, b: a.unionByName(b), sets), (QRELS_KEY,)


def _like(frame: pl.DataFrame, empty: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the column types of the one-process result (``empty``)."""
    return frame.select(empty.columns).cast(empty.schema)


def _one_line(error: BaseException) -> str:
    """A Spark error as the command says it: its root cause, in one line."""
    return f"Spark failed: {root_cause(error)}"


def _stop(spark: SparkSession) -> None:
    """Stop the session; kill its JVM if that does not end within :data:`STOP_SECONDS`
    (a JVM out of memory can hang), so that the command always ends."""
    try:  # read before the stop; a JVM that died (out of memory) has none to give
        options = spark.sparkContext.getConf().get(JAVA_OPTIONS[0], "") or ""
    except Exception:
        options = ""
    context = spark.sparkContext
    stopper = threading.Thread(target=_stop_quietly, args=(spark,), daemon=True)
    stopper.start()
    deadline = time.monotonic() + STOP_SECONDS
    # Once the JVM has stopped (PySpark then drops its handle), PySpark's stop waits up to
    # half a second for its accumulator server to notice, which an ending command need not
    # wait for unless its JVM writes the class archive, which ends the gateway.
    writes_archive = class_archive.DUMP_OPTION in options
    while stopper.is_alive() and time.monotonic() < deadline:
        if not writes_archive and getattr(context, "_jsc", True) is None:
            break
        stopper.join(STOP_POLL_SECONDS)
    if time.monotonic() >= deadline and stopper.is_alive():
        gateway = getattr(context, "_gateway", None)
        process = getattr(gateway, "proc", None)
        if process is not None:
            process.kill()
    class_archive.keep(spark, options)  # a quick start's first JVM: its archive kept


def _stop_quietly(spark: SparkSession) -> None:
    """Stop the session, in a thread the command may leave running as it ends: what fails
    after the JVM stopped (the process ending under it) is not the command's to say."""
    with suppress(Exception):
        spark.stop()


def write_small(spark: SparkSession, frame: pl.DataFrame, target: str) -> str:
    """A summary or the orderings: by Polars for a local path (one file, as in one
    process), by Spark for a URI (one part file, its rows in the frame's order, unsigned
    integers widened to the signed types Spark has)."""
    if not spark_io.is_uri(target):
        return str(io.write_frame(frame, target))
    table = _arrow.to_spark_table(frame, _arrow.arrow_schema(frame.schema))
    return spark_io.write(spark.createDataFrame(table).coalesce(1), target)
