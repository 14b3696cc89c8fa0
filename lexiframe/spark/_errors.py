"""lexiframe's errors across the Python workers: raised there, raised again on the driver.

Spark reports an exception of a Python worker as a ``PythonException`` that holds the
worker's traceback as text. The group functions of :mod:`lexiframe.spark` mark the message
of a :class:`~lexiframe.errors.LexiframeError` with its type, and
:func:`lexiframe_errors` finds that mark in what Spark raises and raises the lexiframe
error again: ``except lf.InputError`` catches a duplicate document found in a worker as it
catches one found in one process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lexiframe import errors

_MARK = re.compile(r"\[lexiframe (\w+)\] (.*?) \[/lexiframe\]", re.DOTALL)


class SparkJobError(errors.LexiframeError):
    """A Spark job failed for a reason of Spark's (a master out of reach, a lost executor,
    memory, storage Spark cannot read), said in one line with the root cause."""


class NoResourcesError(SparkJobError):
    """The cluster gave the application no executor within the wait
    (:func:`lexiframe.spark.resource_wait`)."""


class WorkerError(RuntimeError):
    """A lexiframe error raised in a Spark worker, with its type marked in the message."""


def marked(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` raising its lexiframe errors as :class:`WorkerError` with the type marked."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except errors.LexiframeError as error:
            name = type(error).__name__
            raise WorkerError(f"[lexiframe {name}] {error} [/lexiframe]") from None

    return call


def lexiframe_error(error: BaseException) -> errors.LexiframeError | None:
    """The lexiframe error marked in a Spark exception's message, or None."""
    found = _MARK.search(str(error))
    if found is None:
        return None
    kind = getattr(errors, found.group(1), None)
    if not (isinstance(kind, type) and issubclass(kind, errors.LexiframeError)):
        kind = errors.InputError
    return kind(found.group(2))


_PATH = re.compile(r"\b(?:file|hdfs|s3a?|s3n|gs|abfss?|wasbs?|viewfs):/+[^\s,;]+[^\s,;.]")
_TAGS = re.compile(r"^\[[A-Z_.]+\]\s*|\s*SQLSTATE: \w+\.?\s*$")
_HINTS = {
    "S3AFileSystem": "s3a:// needs Hadoop's S3 connector on the classpath (--conf "
    "spark.jars.packages=org.apache.hadoop:hadoop-aws:VERSION, Spark's Hadoop version)",
    "OutOfMemoryError": "give it more memory: --driver-memory in local mode, "
    "--executor-memory on a cluster; or more --buckets",
}


def is_spark_error(error: BaseException) -> bool:
    """Whether ``error`` comes from Spark or py4j (not from lexiframe or Python itself)."""
    return type(error).__module__.startswith(("py4j", "pyspark"))


def java_causes(error: BaseException) -> list[tuple[str, str]]:
    """The chain of Java exceptions behind a Spark error, outermost first, as (class,
    message); empty when there is no Java side."""
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    chain: list[tuple[str, str]] = []
    while throwable is not None and len(chain) < 50:
        try:
            chain.append((str(throwable.getClass().getName()), str(throwable.getMessage())))
            cause = throwable.getCause()
        except Exception:  # the JVM is gone: what was read so far
            break
        if cause is None or cause.equals(throwable):
            break
        throwable = cause
    return chain


def root_cause(error: BaseException) -> str:
    """A Spark error in one line: its root cause (class and message), with the file it
    was reading when an outer exception names one, and a hint for the usual causes.

    Example:
        >>> root_cause(MemoryError("java.lang.OutOfMemoryError: Java heap space"))
        'MemoryError: java.lang.OutOfMemoryError: Java heap space (give it more memory: ...)'
    """
    chain = java_causes(error)
    if chain:
        name, message = chain[-1]
        lines = [line.strip() for line in message.splitlines() if line.strip()] or [""]
        # A Python worker's traceback ends with the exception it raised.
        text = lines[-1] if lines[0].startswith("Traceback") else f"{name}: {lines[0]}"
        places = [found.group(0) for _, outer in chain if (found := _PATH.search(outer))]
        if places and places[0] not in text:
            text = f"reading {places[0]}: {text}"
        everything = " ".join(f"{name} {message}" for name, message in chain)
    else:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        # A Python worker's traceback ends with the exception it raised.
        last = lines[-1] if lines and lines[0].startswith("Traceback") else ""
        text = last or f"{type(error).__name__}: {lines[0] if lines else ''}"
        everything = str(error)
    text = _TAGS.sub("", text)
    if len(text) > 400:
        text = text[:397] + "..."
    hints = [hint for key, hint in _HINTS.items() if key in everything]
    return text + (f" ({hints[0]})" if hints else "")


@contextmanager
def lexiframe_errors() -> Iterator[None]:
    """Raise the lexiframe errors of Spark's workers as their own types on the driver.

    :func:`lexiframe.spark.evaluate` and :func:`lexiframe.spark.positions` compute their
    frame when called, and raise an error in the data that only a worker sees (a document
    ranked twice in one ranking) as lexiframe's own; the frames of the other functions
    (measures and preferences of a positions frame, summaries) are computed when an action
    runs. Around the action, such an error comes back as the
    :class:`~lexiframe.errors.InputError` (or other lexiframe error) that one process
    raises, with the same message; any other failure of Spark's as a
    :class:`SparkJobError` that says its root cause in one line (the Java exception stays
    chained to it).

    Example:
        >>> from lexiframe import spark as lfs
        >>> with lfs.lexiframe_errors():  # doctest: +SKIP
        ...     lfs.evaluate(run, qrels, ["AP"]).write.mode("overwrite").parquet("ap/")
    """
    try:
        yield
    except Exception as error:
        found = lexiframe_error(error)
        if found is not None:
            raise found from None
        if is_spark_error(error):
            raise SparkJobError(root_cause(error)) from error
        raise
