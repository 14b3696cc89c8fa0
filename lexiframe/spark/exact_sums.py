"""Means whose bits do not depend on how Spark split the rows: exact partial sums.

Every finite double is ``m · 2^(e - 53)`` for an integer ``m`` of at most 53 bits and an
exponent ``e`` (NumPy's ``frexp``). Summed per exponent, in two int64 halves of ``m``, the
partial sums are integers: exact, so that the workers may add their rows and Spark its
partitions in any order and get the same numbers. The driver adds each total's exponents
in a fixed order (:func:`totals`): the same rows give the same bits whatever the
partitions, within a unit or two in the last place of the exact mean.

The counts travel beside the sums, in one long table (:func:`partial_sums`): the rows
per key, and per key and measure the values, NaNs, infinities and, for preferences, the
wins, losses and ties. :func:`merged` adds partial tables; :func:`means` finishes them.

Example:
    >>> import polars as pl
    >>> frame = pl.DataFrame({"system": ["a", "a", "b"], "AP": [0.1, 0.2, 0.5]})
    >>> halves = [partial_sums(frame[:1], ["system"], ["AP"]),
    ...           partial_sums(frame[1:], ["system"], ["AP"])]
    >>> means(merged(pl.concat(halves), ["system"]), ["system"], ["AP"]).sort("system").rows()
    [('a', 2, 0.15000000000000002, 2, 0), ('b', 1, 0.5, 1, 0)]
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

MEASURE, KIND = "_lexiframe_sum_measure", "_lexiframe_sum_kind"
EXPONENT, HIGH, LOW = "_lexiframe_sum_exponent", "_lexiframe_sum_high", "_lexiframe_sum_low"
"""The partial table's columns after the keys: the measure's index among the columns (-1
for the row count), what the row counts, the exponent of a sum, and the sum's (or count's)
two halves."""

ROWS, VALUES, NAN, POSITIVE, NEGATIVE, WINS, LOSSES, TIES, SUM = range(9)
"""The kinds of partial rows: rows per key; per measure its non-null values, NaNs, +inf,
-inf, values above, below and equal to zero (preferences), and a sum at one exponent."""

_LOW_BITS = 26
PARTIAL_TYPES: dict[str, pl.DataType] = {
    MEASURE: pl.Int32(),
    KIND: pl.Int8(),
    EXPONENT: pl.Int32(),
    HIGH: pl.Int64(),
    LOW: pl.Int64(),
}
"""The types of the partial table's columns after its keys."""


def partial_schema(keys: pl.Schema) -> pl.Schema:
    """The schema of a partial table whose keys have the types ``keys``."""
    return pl.Schema({**keys, **PARTIAL_TYPES})


def partial_sums(
    frame: pl.DataFrame, keys: list[str], columns: list[str], *, signs: bool = False
) -> pl.DataFrame:
    """The exact partial sums and counts of ``columns`` per ``keys`` in ``frame`` (a long
    table in :func:`partial_schema`); ``signs`` adds the counts above, below and at zero.
    """
    rows = frame.group_by(keys).agg(pl.len().cast(pl.Int64).alias(HIGH))
    parts = [rows.with_columns(pl.lit(-1).alias(MEASURE), pl.lit(ROWS).alias(KIND))]
    if columns:
        values = frame.select(*keys, *(pl.col(name).cast(pl.Float64) for name in columns))
        long = values.unpivot(on=columns, index=keys, variable_name=MEASURE, value_name="_value")
        long = long.with_columns(pl.col(MEASURE).cast(pl.Enum(columns)).to_physical())
        parts += [_counts(long, keys, signs), _sums(long, keys)]
    every = pl.concat(parts, how="diagonal_relaxed")
    return every.with_columns(pl.col(EXPONENT).fill_null(0), pl.col(LOW).fill_null(0)).select(
        *keys, *(pl.col(name).cast(dtype) for name, dtype in PARTIAL_TYPES.items())
    )


def _counts(long: pl.DataFrame, keys: list[str], signs: bool) -> pl.DataFrame:
    """The counts of each (key, measure) of a long table, a row per kind of count."""
    value = pl.col("_value")
    counted = {
        VALUES: value.count(),
        NAN: value.is_nan().sum(),
        POSITIVE: (value == math.inf).sum(),
        NEGATIVE: (value == -math.inf).sum(),
    }
    if signs:  # a NaN (above zero in Polars' order) is refused by the caller
        counted |= {WINS: (value > 0).sum(), LOSSES: (value < 0).sum(), TIES: (value == 0).sum()}
    counts = long.group_by(*keys, MEASURE).agg(
        expression.cast(pl.Int64).alias(str(kind)) for kind, expression in counted.items()
    )
    by_kind = counts.unpivot(index=[*keys, MEASURE], variable_name=KIND, value_name=HIGH)
    return by_kind.with_columns(pl.col(KIND).cast(pl.Int8))


def _sums(long: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The integer mantissas of the finite non-zero values of a long table, summed per
    key, measure and exponent."""
    finite = long.filter(pl.col("_value").is_finite() & (pl.col("_value") != 0))
    fraction, exponent = np.frexp(finite["_value"].to_numpy())
    mantissa = np.ldexp(fraction, 53).astype(np.int64)  # exact: 53 bits
    return (
        finite.select(*keys, MEASURE)
        .with_columns(
            pl.Series(EXPONENT, exponent, pl.Int32),
            pl.Series(HIGH, mantissa >> _LOW_BITS),
            pl.Series(LOW, mantissa & ((1 << _LOW_BITS) - 1)),
        )
        .group_by(*keys, MEASURE, EXPONENT)
        .agg(pl.col(HIGH).sum(), pl.col(LOW).sum())
        .with_columns(pl.lit(SUM).alias(KIND))
    )


def merged(partials: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Partial tables (concatenated) added into one: exact, in any order."""
    return partials.group_by(*keys, MEASURE, KIND, EXPONENT).agg(
        pl.col(HIGH).sum(), pl.col(LOW).sum()
    )


def means(
    partials: pl.DataFrame, keys: list[str], columns: list[str], *, signs: bool = False
) -> pl.DataFrame:
    """Per key: ``n_queries`` (its rows), and per column its mean over the non-null values
    (null without one; NaN with a NaN or with both infinities; an infinity with one),
    ``n_queries_<column>`` (the non-null values), ``_nan_<column>`` (the NaNs) and, with
    ``signs``, ``<column>_wins``, ``_losses`` and ``_ties``, from a :func:`merged`
    partial table (:func:`totals` adds each sum's exponents)."""
    kind, measure = pl.col(KIND), pl.col(MEASURE)
    aggregations = [pl.col(HIGH).filter(kind == ROWS).sum().alias("n_queries")]
    counted = {VALUES: "n_queries_{}", NAN: "_nan_{}", POSITIVE: "_pos_{}", NEGATIVE: "_neg_{}"}
    if signs:
        counted |= {WINS: "{}_wins", LOSSES: "{}_losses", TIES: "{}_ties"}
    for index, name in enumerate(columns):
        for count, label in counted.items():
            mine = (measure == index) & (kind == count)
            aggregations.append(pl.col(HIGH).filter(mine).sum().alias(label.format(name)))
    table = partials.group_by(keys).agg(aggregations)
    sums = totals(partials.filter(kind == SUM), keys)
    finished = []
    for index, name in enumerate(columns):
        total = sums.filter(pl.col(MEASURE) == index).select(
            *keys, pl.col("_total").alias(f"_sum_{name}")
        )
        table = table.join(total, on=keys, how="left", nulls_equal=True)
        values, nan = pl.col(f"n_queries_{name}"), pl.col(f"_nan_{name}")
        positive, negative = pl.col(f"_pos_{name}") > 0, pl.col(f"_neg_{name}") > 0
        finished.append(
            pl.when(values == 0)
            .then(None)
            .when((nan > 0) | (positive & negative))
            .then(math.nan)
            .when(positive)
            .then(math.inf)
            .when(negative)
            .then(-math.inf)
            .otherwise(pl.col(f"_sum_{name}").fill_null(0.0) / values)
            .alias(name)
        )
    table = table.with_columns(finished)
    order = ["n_queries"]
    for name in columns:
        order += [name, f"n_queries_{name}", f"_nan_{name}"]
        order += [f"{name}_wins", f"{name}_losses", f"{name}_ties"] if signs else []
    return table.select(*keys, *order)


def totals(sums: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per (keys…, measure): ``_total``, the sum of its exponents' exact sums.

    Each exponent's sum is split into pieces of 32 bits, each exactly a double; the pieces
    of one total are added from the smallest exponent up with Neumaier's compensated
    summation, vectorised over the totals (a loop over the pieces' positions, not over
    the totals). The order is fixed by the exponents, so that the same partial sums give
    the same bits; with exact pieces the total is within a unit or two in its last place
    unless they cancel to some 1e-30 of their size.
    """
    group = [*keys, MEASURE]
    exponent = sums[EXPONENT].to_numpy().astype(np.int32)
    halves = ((sums[HIGH].to_numpy(), 53 - _LOW_BITS), (sums[LOW].to_numpy(), 53))
    pieces = []
    for value, scale in halves:  # value · 2^(exponent − scale), in two 32-bit pieces
        for part, shift in ((value >> 32, 32), (value & 0xFFFFFFFF, 0)):
            pieces.append(np.ldexp(part.astype(np.float64), exponent - scale + shift))
    long = pl.concat(
        [
            sums.select(group).with_columns(
                pl.Series("_piece", piece),
                pl.Series("_order", exponent.astype(np.int64) * 4 + slot),
            )
            for slot, piece in enumerate(pieces)
        ]
    ).filter(pl.col("_piece") != 0)
    if long.height == 0:
        return sums.select(group).clear().with_columns(pl.lit(0.0).alias("_total"))
    long = long.sort(*group, "_order", nulls_last=True).with_columns(
        (pl.struct(group).is_first_distinct().cum_sum() - 1).alias("_group")
    )
    long = long.with_columns(pl.int_range(pl.len()).over("_group").alias("_position"))
    rows, positions = long["_group"].to_numpy(), long["_position"].to_numpy()
    grid = np.zeros((int(rows.max()) + 1, int(positions.max()) + 1))
    grid[rows, positions] = long["_piece"].to_numpy()
    total, compensation = np.zeros(grid.shape[0]), np.zeros(grid.shape[0])
    for column in grid.T:  # Neumaier: what each addition rounds off is kept apart
        added = total + column
        larger = np.abs(total) >= np.abs(column)
        compensation += np.where(larger, (total - added) + column, (column - added) + total)
        total = added
    first = long.filter(pl.col("_position") == 0)  # one row per total, in _group's order
    return first.select(group).with_columns(pl.Series("_total", total + compensation))
