"""The options of ``lexiframe evaluate`` that run it on Spark (``--spark`` and those only it
reads), kept apart from :mod:`lexiframe.spark.cli` so that the command's parser does not
import Spark's side."""

from __future__ import annotations

import argparse

from lexiframe.errors import InputError

LOCAL_DRIVER_MEMORY = "4g"
"""``spark.driver.memory`` of a local session the command starts, unless given: in local
mode the driver's JVM runs the executors too, and Spark's default (1g) is too little for
the shuffle of 20 million rows."""

RESOURCE_WAIT_SECONDS = 120
"""How long the command's jobs may go without any executor before it ends (status 2)."""

SPARK_OPTIONS = (
    "conf",
    "buckets",
    "driver_memory",
    "executor_memory",
    "partition_by",
    "resource_wait",
    "spark_log",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--spark`` and the options only it reads to ``parser``."""
    group = parser.add_argument_group(
        "Spark (with --spark)",
        "Runs and qrels may be paths, URIs Spark reads (file://, hdfs://, s3a://, ...) or "
        "table:NAME, read by Spark; -o writes a folder of part files with Spark's writer.",
    )
    group.add_argument(
        "--spark",
        metavar="MASTER",
        help="run the evaluation on Apache Spark: local[*] on this machine, or a cluster's "
        "master URL (needs the spark extra); the same tables and values",
    )
    group.add_argument(
        "--conf",
        action="append",
        metavar="KEY=VALUE",
        help="a Spark setting, repeatable (e.g. --conf spark.executor.cores=4)",
    )
    group.add_argument(
        "--buckets",
        type=int,
        help="groups of queries the work is cut into, each held by one Python worker at a "
        "time (default: one per 4 MB of input, at least one per core)",
    )
    group.add_argument(
        "--driver-memory",
        metavar="SIZE",
        help=f"the driver's memory (default {LOCAL_DRIVER_MEMORY} in local mode, where the "
        "driver runs the executors too; Spark's own default elsewhere)",
    )
    group.add_argument("--executor-memory", metavar="SIZE", help="each executor's memory")
    group.add_argument(
        "--resource-wait",
        type=int,
        metavar="SECONDS",
        help="end the command (status 2, naming what was asked and what the cluster offers) "
        "when the cluster gives it no executor for SECONDS (default "
        f"{RESOURCE_WAIT_SECONDS})",
    )
    group.add_argument(
        "--spark-log",
        metavar="FILE",
        help="append Spark's own output (its start-up lines and its log) to FILE; by "
        "default it is not shown",
    )
    group.add_argument(
        "--partition-by",
        action="append",
        metavar="COLUMN",
        help="write the per-query tables in COLUMN=value folders, repeatable (system is "
        "system_a in the preferences table)",
    )


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse the Spark options without ``--spark``, and malformed ones, before any work."""
    given = [name for name in SPARK_OPTIONS if getattr(args, name, None) not in (None, [])]
    if not args.spark and given:
        flag = "--" + given[0].replace("_", "-")
        raise InputError(f"{flag} needs --spark MASTER (e.g. --spark 'local[*]')")
    for item in args.conf or []:
        key, equals, _ = item.partition("=")
        if not equals or not key.strip():
            raise InputError(f"--conf takes KEY=VALUE, not {item!r}")
    for name in ("buckets", "resource_wait"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            flag = "--" + name.replace("_", "-")
            raise InputError(f"{flag} must be a positive integer, not {value}")
