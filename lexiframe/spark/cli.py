"""``lexiframe evaluate --spark MASTER``: the evaluation of the command, run on Spark.

The run and the qrels are read as the command reads them (parquet runs straight into
Spark), the per-query work and the means run on Spark, the orderings on the driver; the
tables come back as the same Polars frames the one-process command writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from lexiframe import io
from lexiframe.cli._shared import track_options, warnings_as_notes
from lexiframe.spark import _arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession


def session(master: str) -> tuple[SparkSession, bool]:
    """A Spark session on ``master`` (``local[*]`` or a cluster's URL), and whether it was
    started here (an active session of the caller is used as it is)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - the extra is installed where tests run
        raise SystemExit(
            "lexiframe: error: --spark needs PySpark: pip install 'lexiframe[spark]'"
        ) from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    spark = (
        SparkSession.builder.master(master)
        .appName("lexiframe evaluate")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def _run_frame(spark: SparkSession, args: argparse.Namespace) -> SparkFrame:
    """The run as a Spark DataFrame: parquet files read by Spark, TREC files by lexiframe."""
    paths = [Path(path) for path in args.runs]
    if all(path.suffix == ".parquet" and path.is_file() for path in paths):
        return spark.read.parquet(*[str(path) for path in paths])
    run = io.read_run(args.runs, system_from=args.system_from)
    return spark.createDataFrame(run.to_arrow())


def evaluate_on_spark(
    args: argparse.Namespace,
    qrels: pl.DataFrame,
    metric_names: list[str],
    preference_names: list[str],
    wanted: set[str],
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """The per-query tables named in ``wanted``, the summaries and the orderings of
    ``lexiframe evaluate`` computed on Spark (``args.spark`` is the master)."""
    from lexiframe import spark as lfs

    spark, started = session(args.spark)
    try:
        with _arrow.quiet_pyspark():
            run = _run_frame(spark, args)
            judgments = spark.createDataFrame(qrels.to_arrow())
        options = track_options(args, metric_names).as_kwargs()
        del options["partitions"]  # Spark's groups are its buckets
        _note_dropped(lfs.coverage(run, judgments, **_coverage_options(options)))
        tables: dict[str, SparkFrame] = {}
        with warnings_as_notes():
            if preference_names:
                frame = lfs.positions(run, judgments, **options).cache()
                if metric_names:
                    tables["metrics"] = lfs.measures(frame, metric_names, n=args.n)
                tables["preferences"] = lfs.preferences(frame, preference_names)
            else:
                tables["metrics"] = lfs.evaluate(run, judgments, metric_names, n=args.n, **options)
        # Read by the summary, the orderings and the output: computed once.
        tables = {kind: table.cache() for kind, table in tables.items()}
        return _results(tables, metric_names, preference_names, args.order, wanted)
    finally:
        if started:
            spark.stop()


def _coverage_options(options: dict) -> dict:
    return {"threshold": options["threshold"], "no_relevant": options["no_relevant"]}


def _note_dropped(coverage: pl.DataFrame) -> None:
    """Say what the one-process command warns: the answered queries not evaluated."""
    unjudged, no_relevant = coverage["unjudged"].sum(), coverage["no_relevant"].sum()
    if unjudged or no_relevant:
        print(
            f"note: queries answered but not evaluated, summed over systems: {unjudged} not "
            f"in the qrels, {no_relevant} without a relevant document "
            "(lexiframe.spark.coverage(run, qrels) counts them per system)",
            file=sys.stderr,
        )


def _results(
    tables: dict[str, SparkFrame],
    metric_names: list[str],
    preference_names: list[str],
    method: str,
    wanted: set[str],
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    from lexiframe import aggregate, evaluation
    from lexiframe import spark as lfs

    collected, summary, orderings = {}, {}, {}
    if "metrics" in tables:
        per_query = tables["metrics"]
        if "metrics" in wanted:
            collected["metrics"] = _arrow.collect(per_query).sort("system", "query")
        summary["metrics"] = _like(
            _arrow.collect(lfs.summarize(per_query)),
            evaluation.summarize(_arrow.empty_polars(per_query)),
        )
    if "preferences" in tables:
        prefs = tables["preferences"]
        if "preferences" in wanted:
            collected["preferences"] = _arrow.collect(prefs).sort("query", "system_a", "system_b")
        pair_summary = _arrow.collect(lfs.summarize(prefs, measures=preference_names))
        summary["preferences"] = _like(
            pair_summary,
            aggregate.summarize_preferences(_arrow.empty_polars(prefs), measures=preference_names),
        )
        for name in preference_names:
            ordering = aggregate.order(summary["preferences"], name, method=method)
            orderings[f"{name} ({method})"] = ordering
    for name in metric_names:
        orderings[f"{name} (mean)"] = lfs.order(tables["metrics"], name, method="mean")
    return collected, summary, orderings


def _like(frame: pl.DataFrame, empty: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the column types of the one-process result (``empty``)."""
    return frame.select(empty.columns).cast(dict(empty.schema))
