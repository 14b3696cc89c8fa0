"""Helpers shared by the analyses: seeds, frames, pair tables and argument checks."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from lexiframe._compat import collect
from lexiframe._utils import CORPUS_SIZE_CLI_HINT, as_list, format_row, quote_names
from lexiframe.errors import InputError, SchemaError
from lexiframe.intervals import Seed as Seed  # the analyses' seeds are the intervals'
from lexiframe.intervals import generator as generator
from lexiframe.metrics import needs_n_hint
from lexiframe.validate import has_repeated_keys, require_columns

PAIR_KEYS = ("system_a", "system_b")

TOLERANCE = 1e-10
"""The rounding allowance of every degenerate case (docs/analyses.md): a spread, a
difference or a standard deviation within ``TOLERANCE`` × max(1, the scale of the values)
counts as 0, so that ``x − 0.1`` has constant differences as ``x − 0.125`` has."""


def negligible(value: ArrayLike, scale: ArrayLike | float = 1.0) -> np.ndarray:
    """Whether ``|value|`` is within :data:`TOLERANCE` of 0 for values of size ``scale``.

    >>> negligible([1e-17, 1e-3, 5e-9], [0.1, 0.1, 100.0]).tolist()
    [True, False, True]
    """
    size = np.maximum(np.abs(np.asarray(scale, dtype=np.float64)), 1.0)
    return np.abs(np.asarray(value, dtype=np.float64)) <= TOLERANCE * size


def difference_matrix(differences: ArrayLike) -> np.ndarray:
    """``differences`` as a finite float matrix, pairs × queries (a vector is one row)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2 or d.shape[1] < 1:
        raise InputError(
            "differences must be a matrix with one row per pair and one column per query "
            f"(or one row as a vector), not an array of shape {d.shape}"
        )
    if not np.isfinite(d).all():
        raise InputError("differences must be finite numbers; fill or drop NaN values first")
    return d


def eager(frame: pl.DataFrame | pl.LazyFrame, what: str) -> pl.DataFrame:
    """Collect a LazyFrame; reject anything that is not a Polars frame."""
    if isinstance(frame, pl.LazyFrame):
        return collect(frame)
    if isinstance(frame, pl.DataFrame):
        return frame
    kind = f"{type(frame).__module__.split('.')[0]}.{type(frame).__qualname__}"
    if kind == "pandas.DataFrame":
        todo = "convert it with pl.from_pandas(frame) first"
    else:
        todo = "build it with lexiframe (e.g. lf.measures, lf.preferences) or pl.DataFrame(...)"
    raise SchemaError(
        f"the {what} table must be a Polars DataFrame or LazyFrame, not {kind}; {todo}"
    )


FRACTION_MEANINGS = {
    "fraction": "the share of items to remove, e.g. 0.2 removes a fifth",
    "fractions": "the shares of items to remove, e.g. 0.2 removes a fifth",
    "alpha": "the significance level, e.g. 0.05",
}


def check_fraction(value: float, name: str, *, upper_open: bool = False) -> float:
    """``value`` as a float in [0, 1] (or [0, 1)); the error names ``name`` and its meaning."""
    base = name.split("[")[0]
    meaning = FRACTION_MEANINGS.get(base)
    what = f"{name} ({meaning})" if meaning else name
    interval = "[0, 1)" if upper_open else "[0, 1]"
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"{what} must be a number in {interval}, not {value!r}")
    high_ok = value < 1.0 if upper_open else value <= 1.0
    if not (value >= 0.0 and high_ok):
        percent = f"; for {value:g} %, pass {value / 100:g}" if 2 <= value <= 100 else ""
        raise InputError(f"{what} must be in {interval}, not {value!r}{percent}")
    return float(value)


def check_fractions(fractions: Iterable[float]) -> list[float]:
    """A list of fractions in [0, 1]; the error names the position of a bad one."""
    if isinstance(fractions, str) or not isinstance(fractions, Iterable):
        raise InputError(
            f"fractions must be a list of numbers in [0, 1], not {fractions!r}; "
            f"for a single fraction pass a list, e.g. fractions=[{fractions!r}]"
        )
    values = list(fractions)
    return [check_fraction(value, f"fractions[{i}]") for i, value in enumerate(values)]


def check_choice(value: object, choices: Sequence[str], what: str) -> str:
    """``value`` when it is one of ``choices``; else an error listing them (and the nearest)."""
    if isinstance(value, str) and value in choices:
        return value
    text = f"unknown {what} {value!r}; choose from {quote_names(list(choices))}"
    if isinstance(value, str):
        close = difflib.get_close_matches(value.lower(), choices, n=1, cutoff=0.6)
        if close:
            text += f" (did you mean {close[0]!r}?)"
    raise InputError(text)


def is_pair_table(schema: pl.Schema) -> bool:
    return all(key in schema for key in PAIR_KEYS)


def require_table(
    schema: Mapping[str, pl.DataType], columns: Sequence[str], table: str, todo: str
) -> None:
    """:func:`lexiframe.validate.require_columns` for the tables of the analyses: ``todo``
    says how to build the table."""
    missing = [name for name in columns if name not in schema]
    if missing:
        raise SchemaError(
            f"the {table} table has no column {quote_names(missing)}; its columns are "
            f"{quote_names(list(schema))}. {todo}"
        )


def measure_columns(
    schema: pl.Schema,
    measures: str | Iterable[str] | None,
    keys: Sequence[str],
    table: str,
    *,
    frame: pl.DataFrame | None = None,
) -> list[str]:
    """The numeric measure columns to analyse: the given names, or every non-key column.

    ``frame``, when given, supplies an example row for the error of a non-numeric column.
    """
    if measures is None:
        columns = [name for name in schema if name not in keys and schema[name].is_numeric()]
        if not columns:
            todo = "name the measure columns with measures=[...]"
            text = [f"{name!r} is {schema[name]}" for name in schema if name not in keys]
            if text:
                todo = f"{', '.join(text)}: cast a measure with pl.col(...).cast(pl.Float64)"
            if "positions" in schema:
                todo = (
                    "this looks like a positions frame: compute a metrics table with "
                    "positions.lexi.measures([...]) or a pair table with "
                    "positions.lexi.preferences([...]) first"
                )
            raise SchemaError(
                f"the {table} table has no numeric measure column: its columns are "
                f"{quote_names(list(schema))}, and keys and counts such as 'query' or "
                f"'n_rel' are not measures; {todo}"
            )
        return columns
    columns = list(dict.fromkeys(as_list(measures)))
    require_columns(schema, columns, table)
    for column in columns:
        dtype = schema[column]
        if not dtype.is_numeric():
            example = ""
            if frame is not None and frame.height:
                shown = [key for key in keys if key in frame.schema and key != column]
                row = frame.select(*shown, column).row(0, named=True)
                example = f" (e.g. {format_row(row)})"
            raise SchemaError(
                f"column {column!r} of the {table} table must be numeric, not {dtype}"
                f"{example}; cast it first, e.g. pl.col({column!r}).cast(pl.Float64)"
            )
    return columns


def check_unique(
    frame: pl.DataFrame, keys: Sequence[str], table: str, *, todo: str | None = None
) -> None:
    """Raise :class:`InputError` when several rows share the same ``keys``."""
    if has_repeated_keys(frame, keys):
        duplicated = frame.select(pl.struct(list(keys)).is_duplicated()).to_series()
        example = frame.filter(duplicated).select(keys).row(0, named=True)
        todo = todo or "pass the extra key columns as by=, or drop the duplicates"
        raise InputError(
            f"the {table} table has several rows for one ({', '.join(keys)}): "
            f"{format_row(example)}; {todo}"
        )


def check_no_nulls(
    frame: pl.DataFrame, columns: Sequence[str], keys: Sequence[str], table: str
) -> None:
    for column in columns:
        missing = frame[column].is_null() | (
            frame[column].is_nan() if frame.schema[column].is_float() else False
        )
        if missing.any():
            example = frame.filter(missing).select(*keys, column).row(0, named=True)
            # a measure null without the corpus size is filled by passing it, not by hand
            needs_n = needs_n_hint(column)
            raise InputError(
                f"column {column!r} of the {table} table has a null or NaN value: "
                f"{format_row(example)}.",
                kind="null",
                column=column,
                example=example,
                hint=needs_n or " Fill or drop it first.",
                cli_hint=CORPUS_SIZE_CLI_HINT if needs_n else None,
            )


def metric_pairs(
    metrics: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per-query metric differences of every pair of systems: a pair table.

    One row per (by…, query, system_a, system_b) with ``system_a < system_b`` and, for
    each measure, ``metric(system_a) − metric(system_b)``: positive when system_a scores
    higher, the sign convention of :func:`lexiframe.preferences` (negate a cost such as
    ASL first). Only queries both systems have count (a paired comparison).

    >>> import polars as pl
    >>> metrics = pl.DataFrame({"system": ["x", "y", "z"], "query": ["q"] * 3,
    ...                         "RR": [1.0, 0.5, 1.0]})
    >>> metric_pairs(metrics)
    shape: (3, 4)
    ┌───────┬──────────┬──────────┬──────┐
    │ query ┆ system_a ┆ system_b ┆ RR   │
    │ ---   ┆ ---      ┆ ---      ┆ ---  │
    │ str   ┆ str      ┆ str      ┆ f64  │
    ╞═══════╪══════════╪══════════╪══════╡
    │ q     ┆ x        ┆ y        ┆ 0.5  │
    │ q     ┆ x        ┆ z        ┆ 0.0  │
    │ q     ┆ y        ┆ z        ┆ -0.5 │
    └───────┴──────────┴──────────┴──────┘
    """
    by = as_list(by)
    frame = eager(metrics, "metrics")
    keys = [*by, "query"]
    require_columns(frame.schema, [*keys, "system"], "metrics")
    columns = measure_columns(frame.schema, measures, [*keys, "system"], "metrics", frame=frame)
    frame = frame.select(*keys, "system", *columns)
    check_unique(frame, [*keys, "system"], "metrics")
    left = frame.rename({"system": "system_a", **{c: f"{c}__a" for c in columns}})
    right = frame.rename({"system": "system_b", **{c: f"{c}__b" for c in columns}})
    return (
        left.join(right, on=keys, how="inner")
        .filter(pl.col("system_a") < pl.col("system_b"))
        .select(
            *keys,
            "system_a",
            "system_b",
            *(
                (pl.col(f"{c}__a").cast(pl.Float64) - pl.col(f"{c}__b").cast(pl.Float64)).alias(c)
                for c in columns
            ),
        )
        .sort([*keys, *PAIR_KEYS])
    )
