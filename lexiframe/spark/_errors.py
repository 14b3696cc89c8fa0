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


@contextmanager
def lexiframe_errors() -> Iterator[None]:
    """Raise the lexiframe errors of Spark's workers as their own types on the driver.

    lexiframe's Spark functions return lazy DataFrames: an error in the data that only a
    worker sees (a document ranked twice in one ranking) is raised when an action runs.
    Around the action, it comes back as the :class:`~lexiframe.errors.InputError` (or other
    lexiframe error) that one process raises, with the same message.

    Example:
        >>> from lexiframe import spark as lfs
        >>> with lfs.lexiframe_errors():  # doctest: +SKIP
        ...     lfs.evaluate(run, qrels, ["AP"]).write.mode("overwrite").parquet("ap/")
    """
    try:
        yield
    except Exception as error:
        found = lexiframe_error(error)
        if found is None:
            raise
        raise found from None
