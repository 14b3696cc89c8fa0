"""Helpers shared by the analyses: seeds, frames, pair tables and argument checks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from lexiframe._compat import collect
from lexiframe._utils import as_list, format_row, quote_names
from lexiframe.errors import InputError, SchemaError
from lexiframe.validate import require_columns, require_numeric

Seed = int | np.random.Generator
"""An explicit source of randomness: an integer seed or a NumPy ``Generator``."""

PAIR_KEYS = ("system_a", "system_b")


def generator(seed: Seed) -> np.random.Generator:
    """A NumPy ``Generator`` from an integer seed (or the generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(
            f"seed must be an integer or a numpy.random.Generator, not {seed!r}; "
            "pass e.g. seed=0 so that the result can be reproduced"
        )
    return np.random.default_rng(int(seed))


def eager(frame: pl.DataFrame | pl.LazyFrame, what: str) -> pl.DataFrame:
    """Collect a LazyFrame; reject anything that is not a Polars frame."""
    if isinstance(frame, pl.LazyFrame):
        return collect(frame)
    if isinstance(frame, pl.DataFrame):
        return frame
    raise SchemaError(
        f"the {what} table must be a Polars DataFrame or LazyFrame, not {type(frame)}"
    )


def check_fraction(value: float, name: str, *, upper_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise InputError(f"{name} must be a number in [0, 1], not {value!r}")
    high_ok = value < 1.0 if upper_open else value <= 1.0
    if not (value >= 0.0 and high_ok):
        interval = "[0, 1)" if upper_open else "[0, 1]"
        raise InputError(f"{name} must be in {interval}, not {value!r}")
    return float(value)


def is_pair_table(schema: pl.Schema) -> bool:
    return all(key in schema for key in PAIR_KEYS)


def measure_columns(
    schema: pl.Schema, measures: str | Iterable[str] | None, keys: Sequence[str], table: str
) -> list[str]:
    """The numeric measure columns to analyse: the given names, or every non-key column."""
    if measures is None:
        columns = [name for name in schema if name not in keys and schema[name].is_numeric()]
        if not columns:
            raise SchemaError(
                f"the {table} table has no numeric measure column besides its keys "
                f"{quote_names(list(keys))}; its columns are {quote_names(list(schema))}"
            )
        return columns
    columns = list(dict.fromkeys(as_list(measures)))
    require_columns(schema, columns, table)
    for column in columns:
        require_numeric(schema, column, table)
    return columns


def check_unique(frame: pl.DataFrame, keys: Sequence[str], table: str) -> None:
    """Raise :class:`InputError` when several rows share the same ``keys``."""
    duplicated = frame.select(pl.struct(list(keys)).is_duplicated()).to_series()
    if duplicated.any():
        example = frame.filter(duplicated).select(keys).row(0, named=True)
        raise InputError(
            f"the {table} table has several rows for one ({', '.join(keys)}): "
            f"{format_row(example)}; pass the extra key columns as by=, or drop the duplicates"
        )


def check_no_nulls(frame: pl.DataFrame, columns: Sequence[str], keys: Sequence[str], table: str):
    for column in columns:
        missing = frame[column].is_null() | (
            frame[column].is_nan() if frame.schema[column].is_float() else False
        )
        if missing.any():
            example = frame.filter(missing).select(*keys, column).row(0, named=True)
            raise InputError(
                f"column {column!r} of the {table} table has a null or NaN value: "
                f"{format_row(example)}; fill or drop it first"
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
    columns = measure_columns(frame.schema, measures, [*keys, "system"], "metrics")
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
