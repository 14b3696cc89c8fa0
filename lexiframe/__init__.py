"""lexiframe: lexicographic preferences, atomized search length and classic IR metrics.

Importing the package registers the ``.lexi`` namespace on Polars DataFrames, LazyFrames
and expressions, and the ``.lexi`` accessor on pandas DataFrames (when pandas is imported,
before or after lexiframe: pandas, SciPy and matplotlib are imported only where used).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lexiframe import _pandas_hook
from lexiframe import namespaces as _namespaces  # noqa: F401  (registers .lexi on Polars)
from lexiframe.aggregate import order, summarize_preferences
from lexiframe.errors import (
    DroppedQueriesWarning,
    InputError,
    LexiframeError,
    LexiframeWarning,
    MissingCorpusSizeWarning,
    SchemaError,
    UnknownMeasureError,
)
from lexiframe.evaluation import evaluate, measures, summarize
from lexiframe.io import (
    as_qrels,
    as_run,
    concat_qrels,
    read_qrels,
    read_run,
    scan_qrels,
    scan_run,
    write_frame,
    write_trec_qrels,
    write_trec_run,
)
from lexiframe.metrics import define_measure, known_names, parse_measure
from lexiframe.options import ColumnNames, PositionsOptions
from lexiframe.preferences import pairs, preferences
from lexiframe.ranking import coverage, positions

__version__ = "0.1.0"

_pandas_hook.register()  # .lexi on pandas DataFrames, once pandas is imported

__all__ = [
    "ColumnNames",
    "DroppedQueriesWarning",
    "InputError",
    "LexiframeError",
    "LexiframeWarning",
    "MissingCorpusSizeWarning",
    "PositionsOptions",
    "SchemaError",
    "UnknownMeasureError",
    "as_qrels",
    "as_run",
    "concat_qrels",
    "coverage",
    "datasets",
    "define_measure",
    "evaluate",
    "known_names",
    "measures",
    "order",
    "pairs",
    "parse_measure",
    "positions",
    "preferences",
    "read_qrels",
    "read_run",
    "scan_qrels",
    "scan_run",
    "stats",
    "summarize",
    "summarize_preferences",
    "write_frame",
    "write_trec_qrels",
    "write_trec_run",
]

if TYPE_CHECKING:
    from lexiframe import datasets, stats

_SUBMODULES = ("datasets", "stats")  # imported on first use (start-up time)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"lexiframe.{name}")
    raise AttributeError(f"module 'lexiframe' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
