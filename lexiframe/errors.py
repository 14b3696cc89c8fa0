"""Exceptions and warnings raised by lexiframe.

Every error names the column, the problem and an example row, so that a user can find the
offending line in their own files.
"""

from __future__ import annotations


class LexiframeError(ValueError):
    """Base class of lexiframe's input errors (a ``ValueError``)."""


class SchemaError(LexiframeError):
    """A required column is missing or has a type lexiframe cannot use."""


class InputError(LexiframeError):
    """The values of a table break a rule: duplicates, NaN scores, an empty run, …"""


class OutputError(LexiframeError):
    """An output file that cannot be written: its folder, its name, its permissions, a
    full disk, or a path that is also an input or another output."""


class UnknownMeasureError(LexiframeError):
    """A measure name that the registry does not know."""


class LexiframeWarning(UserWarning):
    """Base class of lexiframe's warnings."""


class DroppedQueriesWarning(LexiframeWarning):
    """Queries of the run that were not evaluated (unjudged, or without a relevant document)."""


class MissingCorpusSizeWarning(LexiframeWarning):
    """A measure needs the corpus size ``n`` and none was given: its values are null where
    they depend on it (SL3 and RecallError of a ranking that missed a relevant document, TSE
    with the linear exposure)."""
