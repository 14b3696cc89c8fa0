"""A bounded wait for a cluster's executors: no Spark job of lexiframe waits forever.

A standalone cluster, YARN or Kubernetes that cannot give the application an executor
(more memory or cores asked than any worker has) leaves every job waiting at zero CPU,
and Spark says so only in a log line. :func:`resource_wait` watches the session while its
block runs: when the application has had no executor for ``seconds`` (while a job waits
for one, or from the start when executors are not allocated on demand), it cancels the
jobs and raises :class:`NoResourcesError`, naming what was asked and, on a standalone
cluster, what the workers offer (read from the master's web page).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from lexiframe.spark._errors import NoResourcesError
from lexiframe.validate import require_positive_int

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POLL_SECONDS = 1.0
"""How often the session's executors are counted."""

MASTER_UI_PORT = 8080
"""The port of a standalone master's web page when ``spark.master.ui.port`` is not set."""


@contextmanager
def resource_wait(spark: SparkSession, seconds: int) -> Iterator[None]:
    """Cancel the session's jobs and raise :class:`NoResourcesError` when the application
        has no executor for ``seconds`` inside the block (local mode has no wait). The command
    waits ``--resource-wait`` seconds.

        Example:
            >>> from lexiframe import spark as lfs
            >>> with lfs.resource_wait(spark, seconds=300):  # doctest: +SKIP
            ...     lfs.evaluate(run, qrels, ["AP"]).write.parquet("s3a://bucket/ap.parquet")
    """
    seconds = require_positive_int(seconds, "seconds")
    context = spark.sparkContext
    if str(context.master).startswith("local"):
        yield
        return
    done, starved = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_watch, args=(spark, seconds, done, starved), daemon=True)
    watcher.start()
    try:
        yield
    except Exception:
        if starved.is_set():
            raise NoResourcesError(no_resources_message(spark, seconds)) from None
        raise
    finally:
        done.set()
        watcher.join()
    if starved.is_set():
        raise NoResourcesError(no_resources_message(spark, seconds))


def _watch(
    spark: SparkSession, seconds: float, done: threading.Event, starved: threading.Event
) -> None:
    """Count the executors every :data:`POLL_SECONDS`; after ``seconds`` without one while
    they are wanted, mark the session starved and cancel its jobs (again at each poll, for
    a job started later)."""
    context = spark.sparkContext
    on_demand = context.getConf().get("spark.dynamicAllocation.enabled", "false") == "true"
    since = time.monotonic()
    while not done.wait(POLL_SECONDS):
        try:
            wanted = not on_demand or bool(context.statusTracker().getActiveJobsIds())
            if executor_count(spark) > 0 or not wanted:
                since = time.monotonic()
            elif time.monotonic() - since >= seconds:
                starved.set()
                context.cancelAllJobs()
        except Exception:  # the session is stopping: nothing left to watch
            return


def executor_count(spark: SparkSession) -> int:
    """The executors registered with the session's driver (the driver not counted)."""
    jsc = cast(Any, spark.sparkContext)._jsc
    return max(int(jsc.sc().getExecutorMemoryStatus().size()) - 1, 0)


def no_resources_message(spark: SparkSession, seconds: int) -> str:
    """What the application asked for and what the cluster offers, in one sentence."""
    conf = spark.sparkContext.getConf()
    master = str(spark.sparkContext.master)
    memory = conf.get("spark.executor.memory", "1g")
    cores = conf.get("spark.executor.cores") or "all of a worker's"
    asked = f"executors of {memory} memory and {cores} cores"
    offered = _offered(master, conf.get("spark.master.ui.port"))
    return (
        f"no executor started on {master} in {seconds} s: the job asks for {asked} "
        f"(spark.executor.memory, spark.executor.cores); {offered}; ask for less, or wait "
        "longer (at the command line: --executor-memory, --conf spark.executor.cores=N, "
        "--resource-wait SECONDS)"
    )


def _offered(master: str, ui_port: str | None) -> str:
    """What the workers of a standalone master offer, from its web page's JSON."""
    if not master.startswith("spark://"):
        return "the cluster manager offered none in that time"
    host = urlsplit(master.split(",")[0]).hostname or "localhost"
    page = f"http://{host}:{ui_port or MASTER_UI_PORT}/json/"
    try:
        with urllib.request.urlopen(page, timeout=5) as answer:
            state = json.load(answer)
    except (OSError, ValueError):
        return f"what the workers offer is on the master's web page ({page} did not answer)"
    alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
    if not alive:
        return "the master has no live worker"
    memory = max(int(w.get("memoryfree", 0)) for w in alive)
    cores = max(int(w.get("coresfree", 0)) for w in alive)
    workers = f"{len(alive)} live worker{'s' if len(alive) > 1 else ''}"
    return (
        f"the cluster offers at most {memory}m memory and {cores} cores on one worker ({workers})"
    )
