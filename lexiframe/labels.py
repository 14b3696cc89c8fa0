"""The one check of the grades of every qrels input (text, parquet, Polars, pandas, dicts,
ranx, PyTerrier): whole numbers, or the real-valued labels a caller declares
(:attr:`lexiframe.PositionsOptions.labels`; docs/definitions.md §2, "Fractional labels")."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import overload

import polars as pl

from lexiframe._utils import format_row
from lexiframe.errors import LABELS_HINT, NO_HINT, InputError
from lexiframe.typing import Labels
from lexiframe.validate import INT64_MAX, Frame


@overload
def check_grades(
    frame: pl.DataFrame, column: str = ..., table: str = ..., *, labels: Labels | None = ...
) -> pl.DataFrame: ...
@overload
def check_grades(
    frame: pl.LazyFrame, column: str = ..., table: str = ..., *, labels: Labels | None = ...
) -> pl.LazyFrame: ...
@overload
def check_grades(
    frame: Frame, column: str = ..., table: str = ..., *, labels: Labels | None = ...
) -> Frame: ...
def check_grades(
    frame: Frame, column: str = "relevance", table: str = "qrels", *, labels: Labels | None = None
) -> Frame:
    """Grades as integers, the one check of every qrels input (text, parquet, Polars,
    pandas, dicts, ranx, PyTerrier): a float column is cast to Int64 when every grade is
    a whole number, and refused with an example row on a NaN, an infinity or a fraction.
    Declared fractional labels (``labels="gain"``, ``"probability"``;
    :attr:`lexiframe.PositionsOptions.labels`; ``None`` or ``"grades"``: whole numbers)
    are cast to Float64 instead, and refused when negative, NaN or infinite, or, as
    probabilities, above 1.

    Example:
        >>> qrels = pl.DataFrame({"query": ["q1"], "doc": ["d1"], "relevance": [2.0]})
        >>> check_grades(qrels)["relevance"].dtype
        Int64
        >>> check_grades(qrels.with_columns(relevance=pl.lit(0.5)))
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: column 'relevance' of the qrels: grades must be ...
        >>> check_grades(qrels.with_columns(relevance=pl.lit(0.5)), labels="gain")["relevance"]
        shape: (1,)
        Series: 'relevance' [f64]
        [
            0.5
        ]
    """
    dtype = frame.collect_schema().get(column)
    if dtype is None or not dtype.is_numeric():
        return frame
    if labels is not None and fractional(labels):
        return _checked_labels(frame, column, table, labels)
    if dtype.is_integer():
        return frame
    if dtype == pl.Decimal or not dtype.is_float():
        grade = pl.col(column).cast(pl.Float64)
    else:
        grade = pl.col(column)
    bad = grade.is_not_null() & (grade.is_nan() | grade.is_infinite() | (grade != grade.round(0)))
    # 2^63 itself is out of Int64's range: the float nearest INT64_MAX is 2^63.
    too_big = grade.abs() >= float(INT64_MAX)
    where = f"column {column!r} of the {table}: grades must be"
    _raise_first(frame, {"whole numbers, not NaN, infinite or fractional": bad}, where, True)
    _raise_first(frame, {f"integers from {-INT64_MAX} to {INT64_MAX}": too_big}, where)
    return frame.with_columns(pl.col(column).cast(pl.Int64))


def fractional(labels: Labels | None) -> bool:
    """Whether ``labels`` declares real-valued labels (``"gain"``, ``"probability"``), not
    whole-number grades (``"grades"``, or ``None``: nothing declared).

    Example:
        >>> fractional(None), fractional("grades"), fractional("gain")
        (False, False, True)
    """
    return labels not in (None, "grades")


def _checked_labels(frame: Frame, column: str, table: str, labels: Labels) -> Frame:
    """Fractional labels as Float64: finite, non-negative, probabilities at most 1."""
    label = pl.col(column).cast(pl.Float64)
    top = 1.0 if labels == "probability" else math.inf
    kind = "probabilities in [0, 1]" if labels == "probability" else "non-negative finite gains"
    bad = label.is_not_null() & (label.is_nan() | (label < 0) | (label > top) | label.is_infinite())
    where = f"column {column!r} of the {table}: with labels={labels!r} the labels must be"
    _raise_first(frame, {kind: bad}, where)
    return frame.with_columns(label)


def _raise_first(
    frame: Frame, problems: Mapping[str, pl.Expr], where: str, fractions: bool = False
) -> None:
    """Raise on the first problem that a row of ``frame`` has, with that row
    (``fractions``: saying how to declare fractional labels)."""
    for why, problem in problems.items():
        example = frame.filter(problem).head(1)
        if isinstance(example, pl.LazyFrame):
            example = example.collect()
        if example.height:
            row = format_row(example.row(0, named=True))
            hint, cli_hint = LABELS_HINT if fractions else NO_HINT
            raise InputError(f"{where} {why}; e.g. row {row}", hint=hint, cli_hint=cli_hint)


