"""Python workers of a local session started while the driver checks the inputs.

The first job that runs lexiframe in Spark's Python workers waits for each worker to start
and import Polars, PyArrow and lexiframe (about 0.8 s a worker on the demo track's 2-core
machine), while the checks of the inputs before it are JVM jobs of one or two tasks that
leave cores idle. :func:`started` runs one task per core that imports what the groups run,
in a thread, beside those checks; Spark keeps the workers
(``spark.python.worker.reuse``, on by default), so the evaluation's tasks find them
ready. Only in local mode, once per session: a cluster's executors are not known to take
these tasks, and their workers are started by the evaluation's own tasks as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from lexiframe.spark import _arrow

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_started: dict[str, threading.Thread] = {}
"""The applications (Spark's application ids) whose workers were started here, and the
thread that started them."""


def started(spark: SparkSession) -> Callable[[], None]:
    """Start the Python workers of a local session in the background, once per session;
    returns what waits for them (a function that returns at once when nothing was
    started). Called again for the same session, it starts nothing and returns what
    waits for the first call's workers. A failure is left to the evaluation's own tasks
    to report, in their words.

    Example:
        >>> wait = started(spark)  # doctest: +SKIP
        >>> counts = checks.collect()  # the driver's checks, JVM jobs  # doctest: +SKIP
        >>> wait()  # doctest: +SKIP
    """
    context = spark.sparkContext
    application = str(context.applicationId)
    if application in _started:
        return _started[application].join
    if not str(context.master).startswith("local"):
        return lambda: None
    cores = max(1, context.defaultParallelism)
    tasks = spark.range(0, cores, 1, cores)
    with _arrow.quiet_pyspark():  # here: the filters of warnings are not the thread's own
        job = tasks.mapInArrow(_imported, tasks.schema)

    def run() -> None:
        with contextlib.suppress(Exception):  # the evaluation's tasks say what went wrong
            job.collect()

    thread = threading.Thread(target=run, name="lexiframe-python-workers", daemon=True)
    _started[application] = thread
    thread.start()
    return thread.join


def _imported(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A worker's task: import the modules the groups run (pickled by reference, so the
    import of this module has already loaded lexiframe's Spark side), and send nothing."""
    import lexiframe.evaluation
    import lexiframe.preferences
    import lexiframe.spark.ranking  # noqa: F401

    for _ in batches:
        pass
    return iter(())
