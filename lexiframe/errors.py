"""Exceptions and warnings raised by lexiframe.

Every error names the column, the problem and an example row, so that a user can find the
offending line in their own files. Besides its text, an error carries the same facts as
fields (:class:`Details`): what went wrong (``kind``), the column, an example row, and the
API argument at fault with the flag that sets it at the command line. Code reads the
fields, never the text; the command line prints :meth:`LexiframeError.cli_message`, the
same sentence with the flag in place of the argument.

Example:
    >>> error = InputError("{argument} must be a positive integer, not -1", kind="range",
    ...                    argument="depth", flag="--depth")
    >>> str(error)
    'depth must be a positive integer, not -1'
    >>> error.cli_message(), error.kind
    ('--depth must be a positive integer, not -1', 'range')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ARGUMENT = "{argument}"
"""Where a message names the argument at fault: the API's name, or the command's flag."""


class Details:
    """What a lexiframe error or warning is about, as fields rather than text.

    ``kind``: the problem in a word or two (``"duplicate"``, ``"not found"``, ``"range"``);
    ``column``: the column at fault; ``example``: a row that shows the problem;
    ``argument``: the API argument at fault and ``flag`` the command-line flag that sets
    it, each as the message spells it (``ARGUMENT`` in the message is replaced by one or
    the other: ``"n="`` and ``"--n "`` for ``n=5`` and ``--n 5``); ``hint``: the end of
    the message in the API's words, with its leading separator (``"; drop them with
    .unique()"``), and ``cli_hint`` the same at the command line (``""`` leaves it out).
    """

    kind: str
    column: str | None
    example: Mapping[str, Any] | None
    argument: str | None
    flag: str | None
    hint: str
    cli_hint: str | None

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        column: str | None = None,
        example: Mapping[str, Any] | None = None,
        argument: str | None = None,
        flag: str | None = None,
        hint: str = "",
        cli_hint: str | None = None,
    ) -> None:
        self.template = message
        self.kind = kind
        self.column = column
        self.example = dict(example) if example is not None else None
        self.argument = argument
        self.flag = flag
        self.hint = hint
        self.cli_hint = cli_hint
        super().__init__(self._worded(argument, hint))  # type: ignore[call-arg]  # the exception or warning

    def _worded(self, argument: str | None, hint: str | None) -> str:
        text = self.template.replace(ARGUMENT, argument or "")
        return text + (hint or "")

    def cli_message(self) -> str:
        """The message in the command's words: the flag for the argument, the CLI hint."""
        hint = self.hint if self.cli_hint is None else self.cli_hint
        return self._worded(self.flag or self.argument, hint)


class LexiframeError(Details, ValueError):
    """Base class of lexiframe's input errors (a ``ValueError``)."""

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (Spark's workers, processes)
        fields = {
            "kind": self.kind,
            "column": self.column,
            "example": self.example,
            "argument": self.argument,
            "flag": self.flag,
            "hint": self.hint,
            "cli_hint": self.cli_hint,
        }
        return (_rebuild, (type(self), self.template, fields))


def _rebuild(kind: type[LexiframeError], template: str, fields: dict[str, Any]) -> Any:
    return kind(template, **fields)


class SchemaError(LexiframeError):
    """A required column is missing or has a type lexiframe cannot use."""


class InputError(LexiframeError):
    """The values of a table break a rule: duplicates, NaN scores, an empty run, …"""


class OutputError(LexiframeError):
    """An output file that cannot be written: its folder, its name, its permissions, a
    full disk, or a path that is also an input or another output."""


class UnknownMeasureError(LexiframeError):
    """A measure name that the registry does not know."""


class LexiframeWarning(Details, UserWarning):
    """Base class of lexiframe's warnings; like the errors, it carries :class:`Details`."""


class DroppedQueriesWarning(LexiframeWarning):
    """Queries of the run that were not evaluated (unjudged, or without a relevant document)."""


class MissingCorpusSizeWarning(LexiframeWarning):
    """A measure needs the corpus size ``n`` and none was given: its values are null where
    they depend on it (SL3 and RecallError of a ranking that missed a relevant document, TSE
    with the linear exposure)."""


def cli_text(problem: BaseException | Warning | str) -> str:
    """What the command prints for an error or a warning: lexiframe's in the command's
    words, any other's text.

    Example:
        >>> cli_text(OSError("disk"))
        'disk'
    """
    return problem.cli_message() if isinstance(problem, Details) else str(problem)


LABELS_HINT: tuple[str, str | None] = (
    "; fractional labels are read when declared: labels='gain' or labels='probability'",
    "; fractional labels are read when declared: lexiframe evaluate --labels gain (or "
    "probability)",
)
"""The end of a message refusing a fractional grade: how to declare fractional labels
(:attr:`lexiframe.PositionsOptions.labels`), in the API's words and the command's."""

NO_HINT: tuple[str, str | None] = ("", None)
