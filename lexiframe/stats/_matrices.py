"""Metrics and pair tables as matrices: systems × queries per (by…) group, pairs × queries.

The tests of many pairs at once read these: Tukey's HSD and the effect sizes from the
systems × queries matrix of each group, the resampling tests and Wilcoxon's from the
pairs × queries matrix of per-query differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from lexiframe._utils import format_row, plural
from lexiframe.errors import InputError
from lexiframe.intervals import group_matrix
from lexiframe.stats._common import PAIR_KEYS


@dataclass(frozen=True)
class Block:
    """One by-group as a systems × queries matrix."""

    key: dict[str, object]
    systems: pl.Series
    values: np.ndarray


def blocks_of(
    table: pl.DataFrame, measure: str, by: list[str], *, strict: bool = True
) -> list[Block] | None:
    """The (by…) groups as matrices; ``strict=False``: None when a group is incomplete
    or too small, instead of the error."""
    groups = (
        table.partition_by(by, as_dict=True, maintain_order=False).items() if by else [((), table)]
    )
    blocks = []
    for key, group in groups:
        systems = group["system"].unique().sort()
        queries = group["query"].unique().sort()
        group_key = dict(zip(by, key, strict=True))
        complete = group.height == len(systems) * len(queries)
        if not strict and (not complete or len(systems) < 2 or len(queries) < 2):
            return None
        if not complete:
            present = group.select("system", "query")
            grid = systems.to_frame().join(queries.to_frame(), how="cross")
            missing = grid.join(present, on=["system", "query"], how="anti")
            where = format_row({**group_key, **missing.row(0, named=True)})
            raise InputError(
                "Tukey's HSD blocks on queries and needs every system scored on every query "
                f"of its group, but {missing.height} of the {len(systems)} × {len(queries)} "
                f"(system, query) cells have no row, e.g. {where}. Compute the metrics with "
                "lf.measures from a positions frame (a system that skipped a query scores "
                "its worst case there), keep only the queries every system has, or use "
                "test='paired_t', which compares each pair on the queries both have"
            )
        if len(systems) < 2 or len(queries) < 2:
            where = f"group {format_row(group_key)}" if by else "the metrics table"
            raise InputError(
                "Tukey's HSD needs at least two systems and two queries per group; "
                f"{where} has {plural(len(systems), 'system')} and "
                f"{plural(len(queries), 'query', 'queries')}"
            )
        row = group["system"].replace_strict(
            {name: i for i, name in enumerate(systems.to_list())}, return_dtype=pl.Int64
        )
        column = group["query"].rank("dense").cast(pl.Int64) - 1
        values = np.empty((len(systems), len(queries)))
        values[row.to_numpy(), column.to_numpy()] = group[measure].cast(pl.Float64).to_numpy()
        blocks.append(Block(dict(zip(by, key, strict=True)), systems, values))
    return blocks


def pair_frame(block: Block, by: list[str], columns: dict[str, np.ndarray]) -> pl.DataFrame:
    s = len(block.systems)
    a, b = np.triu_indices(s, k=1)
    return pl.DataFrame(
        {
            **{name: [block.key[name]] * len(a) for name in by},
            "system_a": block.systems.gather(a),
            "system_b": block.systems.gather(b),
            "n_queries": np.full(len(a), block.values.shape[1], dtype=np.uint32),
            **{name: values[a, b] for name, values in columns.items()},
        }
    )


def empty_result(table: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            **{name: table.schema[name] for name in by},
            "system_a": table.schema["system"],
            "system_b": table.schema["system"],
            "n_queries": pl.UInt32,
            "mean": pl.Float64,
            "statistic": pl.Float64,
            "p_value": pl.Float64,
            "test": pl.String,
        }
    )


def pair_matrix(
    pairs: pl.DataFrame, measure: str, by: list[str]
) -> tuple[pl.DataFrame, np.ndarray]:
    """The pair table as a pairs × queries matrix (each row's values first, zeros after),
    with the summary of each pair (keys, n_queries, mean) in the same order."""
    keys = [*by, *PAIR_KEYS]
    _, matrix, _ = group_matrix(pairs.sort("query"), keys, measure)  # queries in order
    summary = (
        pairs.group_by(keys)
        .agg(pl.len().alias("n_queries"), pl.col(measure).cast(pl.Float64).mean().alias("mean"))
        .sort(keys)
    )
    return summary, matrix


def block_differences(blocks: list[Block], by: list[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """:func:`pair_matrix` from complete matrices: x_a − x_b for every pair, no join."""
    frames, rows = [], []
    width = max(block.values.shape[1] for block in blocks)
    for block in blocks:
        x = block.values
        a, b = np.triu_indices(x.shape[0], k=1)
        system_mean = x.mean(axis=1)
        frames.append(pair_frame(block, by, {"mean": system_mean[:, None] - system_mean}))
        rows.append(np.pad(x[a] - x[b], ((0, 0), (0, width - x.shape[1]))))
    return pl.concat(frames), np.concatenate(rows)


def residual_variance(x: np.ndarray) -> float:
    """V_E of the two-way ANOVA without replication (systems × queries)."""
    s, q = x.shape
    residual = x - x.mean(axis=1)[:, None] - x.mean(axis=0)[None, :] + x.mean()
    return float((residual**2).sum()) / float((s - 1) * (q - 1))
