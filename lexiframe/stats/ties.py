"""Ties between rankings: per measure, per recall level, and the recall level needed.

- :func:`tie_fraction`: the fraction of tied ranking pairs under each measure
  (lexiprecision paper §5.2, Table 2; lexirecall paper §6.2.2, Figure 10);
- :func:`tie_fraction_by_level`: the fraction of pairs with δRR_i = 0 at each recall level
  i (lexiprecision paper §3.6, Figure 5);
- :func:`first_difference_ecdf`: the empirical CDF of i*, the recall level lexiprecision
  needs to separate two rankings (lexiprecision paper §3.6, Figure 6).

A ranking pair is two systems' rankings of the same query (same by-keys).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from lexiframe import _kernels
from lexiframe._utils import as_list, quote_names
from lexiframe.errors import InputError, SchemaError
from lexiframe.preferences import preferences
from lexiframe.stats._common import (
    PAIR_KEYS,
    check_unique,
    eager,
    is_pair_table,
    measure_columns,
)
from lexiframe.validate import require_columns, require_positive_int

NOT_MEASURES = (
    "n_rel",
    "n_ret",
    "n_ret_a",
    "n_ret_b",
    "first_difference",
    "last_difference",
)
"""Numeric columns of positions and pair tables that are not measures."""


def tie_fraction(
    frame: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """The fraction of ranking pairs each measure ties, per (by…) group.

    ``frame`` is a pair table (``query, system_a, system_b`` and preference or difference
    columns: a pair is tied where the value is 0) or a metrics table (``system, query``
    and metric columns: two systems tie on a query when their values are equal; a query
    with c systems sharing a value holds c(c − 1)/2 tied pairs). Null values are left out.
    ``measures`` defaults to every numeric column that is not a key.

    Lexiprecision paper Table 2 (ties of rrLP/sgnLP against δRR_1), lexirecall paper
    Figure 10.

    Returns:
        ``by…, measure, n_pairs, n_ties, tie_fraction`` sorted by ``by…`` and then the
        measures in the order given.

    >>> import polars as pl
    >>> metrics = pl.DataFrame({"system": list("xyzxyz"), "query": list("111222"),
    ...                         "RR": [1.0, 1.0, 0.5, 1.0, 0.5, 0.25]})
    >>> tie_fraction(metrics)
    shape: (1, 4)
    ┌─────────┬─────────┬────────┬──────────────┐
    │ measure ┆ n_pairs ┆ n_ties ┆ tie_fraction │
    │ ---     ┆ ---     ┆ ---    ┆ ---          │
    │ str     ┆ u32     ┆ u32    ┆ f64          │
    ╞═════════╪═════════╪════════╪══════════════╡
    │ RR      ┆ 6       ┆ 1      ┆ 0.166667     │
    └─────────┴─────────┴────────┴──────────────┘
    """
    by = as_list(by)
    table = eager(frame, "input")
    pair_table = is_pair_table(table.schema)
    kind = "pair" if pair_table else "metrics"
    keys = [*by, "query", *PAIR_KEYS] if pair_table else [*by, "query", "system"]
    require_columns(table.schema, keys, kind)
    columns = measure_columns(table.schema, measures, [*keys, *NOT_MEASURES], kind, frame=table)
    check_unique(table, keys, kind)
    parts = []
    for index, column in enumerate(columns):
        value = table.select(*keys, pl.col(column).alias("value")).filter(
            pl.col("value").is_not_null() & ~pl.col("value").cast(pl.Float64).is_nan()
        )
        if pair_table:
            counts = value.group_by(by or pl.lit(0).alias("_all")).agg(
                pl.len().cast(pl.Int64).alias("n_pairs"),
                (pl.col("value") == 0).sum().cast(pl.Int64).alias("n_ties"),
            )
        else:
            per_value = value.group_by([*by, "query", "value"]).agg(
                pl.len().cast(pl.Int64).alias("c")
            )
            per_query = per_value.group_by([*by, "query"]).agg(
                (pl.col("c") * (pl.col("c") - 1) // 2).sum().alias("n_ties"),
                pl.col("c").sum().alias("systems"),
            )
            counts = per_query.group_by(by or pl.lit(0).alias("_all")).agg(
                (pl.col("systems") * (pl.col("systems") - 1) // 2).sum().alias("n_pairs"),
                pl.col("n_ties").sum(),
            )
        parts.append(counts.with_columns(measure=pl.lit(column), _order=pl.lit(index)))
    result = pl.concat(parts, how="diagonal") if parts else None
    if result is None:
        raise InputError("tie_fraction() needs at least one measure")
    return result.sort([*by, "_order"]).select(
        *by,
        "measure",
        pl.col("n_pairs").cast(pl.UInt32),
        pl.col("n_ties").cast(pl.UInt32),
        pl.when(pl.col("n_pairs") > 0)
        .then(pl.col("n_ties") / pl.col("n_pairs"))
        .alias("tie_fraction"),
    )


def _sorted_positions(
    positions: pl.DataFrame | pl.LazyFrame, by: list[str], extra: Sequence[str] = ()
) -> pl.DataFrame:
    frame = eager(positions, "positions")
    keys = [*by, "query"]
    require_columns(frame.schema, [*keys, "system", "positions", *extra], "positions")
    frame = frame.select(*keys, "system", "positions", *extra).sort([*keys, "system"])
    check_unique(frame, [*keys, "system"], "positions")
    return frame


def tie_fraction_by_level(
    positions: pl.DataFrame | pl.LazyFrame,
    *,
    max_level: int = 20,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """The fraction of ranking pairs with δRR_i = 0 at each recall level i ≤ ``max_level``.

    δRR_i = 1/p̂_i − 1/p̂′_i (lexiprecision paper §3.4); two rankings that both miss their
    i-th relevant document tie at level i (an imputed position counts 0). A pair counts at
    level i only when its query has at least i relevant documents (``n_rel ≥ i``).
    Lexiprecision paper §3.6, Figure 5. Vectorised: one pass per level over all pairs.

    Returns:
        ``by…, level, n_pairs, n_ties, tie_fraction`` sorted by ``by…, level``.

    >>> import polars as pl
    >>> pos = pl.DataFrame({"system": ["x", "y", "z"], "query": ["q"] * 3,
    ...                     "positions": [[1, 4], [1, 5], [2, 4]], "n_rel": [2] * 3})
    >>> tie_fraction_by_level(pos, max_level=3)
    shape: (2, 4)
    ┌───────┬─────────┬────────┬──────────────┐
    │ level ┆ n_pairs ┆ n_ties ┆ tie_fraction │
    │ ---   ┆ ---     ┆ ---    ┆ ---          │
    │ u32   ┆ u32     ┆ u32    ┆ f64          │
    ╞═══════╪═════════╪════════╪══════════════╡
    │ 1     ┆ 3       ┆ 1      ┆ 0.333333     │
    │ 2     ┆ 3       ┆ 1      ┆ 0.333333     │
    └───────┴─────────┴────────┴──────────────┘
    """
    max_level = require_positive_int(max_level, "max_level")
    by = as_list(by)
    frame = _sorted_positions(positions, by, ["n_rel"])
    groups = frame.select(pl.struct([*by, "query"]).rle_id()).to_series().to_numpy()
    rows_a, rows_b = _kernels.pair_rows(groups)
    buffers = _kernels.positions_buffers(frame["positions"])
    if by:
        by_group = frame.select(pl.struct(by).rle_id()).to_series().to_numpy()
    else:
        by_group = np.zeros(frame.height, dtype=np.int64)
    n_groups = int(by_group.max()) + 1 if frame.height else 0
    pair_group = by_group[rows_a]
    n_rel = frame["n_rel"].cast(pl.Int64).to_numpy()[rows_a]
    args = (buffers.values, buffers.offsets, rows_a, buffers.values, buffers.offsets, rows_b)
    levels, pairs, ties, group_ids = [], [], [], []
    for level in range(1, max_level + 1):
        eligible = n_rel >= level
        if not eligible.any():
            break
        tied = _kernels.delta_rr(*args, level) == 0
        pairs.append(np.bincount(pair_group[eligible], minlength=n_groups))
        ties.append(np.bincount(pair_group[eligible & tied], minlength=n_groups))
        levels.append(np.full(n_groups, level))
        group_ids.append(np.arange(n_groups))
    first_rows = np.unique(by_group, return_index=True)[1] if frame.height else np.array([], int)
    key_values = frame.select(by).gather(first_rows) if by else None
    group_index = np.concatenate(group_ids) if group_ids else np.array([], dtype=np.int64)
    result = pl.DataFrame(
        {
            "level": np.concatenate(levels).astype(np.uint32) if levels else [],
            "n_pairs": np.concatenate(pairs).astype(np.uint32) if pairs else [],
            "n_ties": np.concatenate(ties).astype(np.uint32) if ties else [],
        },
        schema={"level": pl.UInt32, "n_pairs": pl.UInt32, "n_ties": pl.UInt32},
    )
    if key_values is not None:
        result = pl.concat([key_values.gather(group_index), result], how="horizontal")
    return (
        result.filter(pl.col("n_pairs") > 0)
        .with_columns(tie_fraction=pl.col("n_ties") / pl.col("n_pairs"))
        .sort([*by, "level"])
    )


def _first_differences(table: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The ``by…, query, system_a, system_b, first_difference`` columns of a preferences table."""
    keys = [*by, "query", *PAIR_KEYS]
    if "first_difference" not in table.schema:
        raise SchemaError(
            "the preferences table has no first_difference column (its columns are "
            f"{quote_names(list(table.schema))}): compute it with "
            "positions.lexi.preferences(extra=['first_difference']), or pass the positions "
            "frame itself"
        )
    require_columns(table.schema, keys, "preferences")
    table = table.select(*keys, "first_difference")
    check_unique(table, keys, "preferences")
    return table


def first_difference_ecdf(
    positions: pl.DataFrame | pl.LazyFrame, *, by: str | Sequence[str] | None = None
) -> pl.DataFrame:
    """The empirical CDF of i*, the recall level needed to separate two rankings.

    i* = min{i : p̂_i ≠ p̂′_i} over the ranking pairs that lexiprecision separates
    (identical vectors are left out and counted in ``n_tied``). Lexiprecision paper §3.6,
    Figure 6. ``positions`` is a positions frame, or a preferences table that already has
    the ``first_difference`` column (``positions.lexi.preferences(extra=["first_difference"])``).

    Returns:
        ``by…, level, n_pairs, ecdf, n_tied``: ``n_pairs`` pairs have i* = level, and
        ``ecdf`` is the fraction of separated pairs with i* ≤ level; sorted by
        ``by…, level``.

    >>> import polars as pl
    >>> pos = pl.DataFrame({"system": ["x", "y", "z", "w"], "query": ["q"] * 4,
    ...                     "positions": [[1, 4], [1, 5], [2, 4], [1, 4]]})
    >>> first_difference_ecdf(pos)
    shape: (2, 4)
    ┌───────┬─────────┬──────┬────────┐
    │ level ┆ n_pairs ┆ ecdf ┆ n_tied │
    │ ---   ┆ ---     ┆ ---  ┆ ---    │
    │ u32   ┆ u32     ┆ f64  ┆ u32    │
    ╞═══════╪═════════╪══════╪════════╡
    │ 1     ┆ 3       ┆ 0.6  ┆ 1      │
    │ 2     ┆ 2       ┆ 1.0  ┆ 1      │
    └───────┴─────────┴──────┴────────┘
    """
    by = as_list(by)
    table = eager(positions, "positions")
    if is_pair_table(table.schema):
        levels = _first_differences(table, by)
    else:
        frame = _sorted_positions(table, by)
        levels = preferences(frame, [], by=by, extra=["first_difference"])
    group = by or pl.lit(0).alias("_all")
    tied = levels.group_by(group).agg(
        pl.col("first_difference").is_null().sum().cast(pl.UInt32).alias("n_tied")
    )
    counts = (
        levels.filter(pl.col("first_difference").is_not_null())
        .group_by([*by, "first_difference"])
        .agg(pl.len().cast(pl.UInt32).alias("n_pairs"))
        .sort([*by, "first_difference"])
        .with_columns(
            ecdf=(pl.col("n_pairs").cum_sum() / pl.col("n_pairs").sum()).over(by)
            if by
            else pl.col("n_pairs").cum_sum() / pl.col("n_pairs").sum()
        )
        .rename({"first_difference": "level"})
    )
    if by:
        counts = counts.join(tied, on=by, how="left")
    else:
        n_tied = tied["n_tied"].item() if tied.height else 0
        counts = counts.with_columns(n_tied=pl.lit(n_tied, dtype=pl.UInt32))
    return counts.select(*by, "level", "n_pairs", "ecdf", "n_tied").sort([*by, "level"])
