"""The orderings of ``lexiframe evaluate`` and ``lexiframe demo``: one per measure, side by
side for printing, and as one table, written by the one-process and the Spark paths alike
(a module of its own so that :mod:`lexiframe.spark.cli` need not import the command's
package, which imports it)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import polars as pl

from lexiframe.aggregate import Method, order
from lexiframe.cli._shared import metric_ordering


def long_orderings(orderings: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """All orderings in one long frame: ordering, system, rank, score.

    Example:
        >>> ranks = pl.DataFrame({"system": ["a"], "rank": [1], "score": [0.5]})
        >>> long_orderings({"AP (mean)": ranks}).row(0)
        ('AP (mean)', 'a', 1, 0.5)
    """
    return pl.concat(
        [
            frame.select(pl.lit(label).alias("ordering"), pl.all())
            for label, frame in orderings.items()
        ]
    )


def orderings_per_key(
    label: str, ordering: pl.DataFrame, by: Sequence[str]
) -> dict[str, pl.DataFrame]:
    """The orderings of :func:`lexiframe.order` with ``by`` keys (a qrels set each), one per
    value, labelled ``label key=value``; ``{label: ordering}`` without keys.

    Example:
        >>> ranks = pl.DataFrame({"qrels": ["llm", "human"], "system": ["a", "a"],
        ...                       "rank": [1, 1], "score": [0.5, 0.25]})
        >>> list(orderings_per_key("AP (mean)", ranks, ["qrels"]))
        ['AP (mean) qrels=human', 'AP (mean) qrels=llm']
    """
    if not by:
        return {label: ordering}
    parts = ordering.sort(by, maintain_order=True).partition_by(list(by), maintain_order=True)
    return {
        " ".join([label, *(f"{key}={part[key][0]}" for key in by)]): part.drop(by) for part in parts
    }


def side_by_side(orderings: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Orderings next to each other: one row per rank, one column of systems per ordering.

    Example:
        >>> import polars as pl
        >>> a = pl.DataFrame({"system": ["x", "y"], "rank": [1, 2], "score": [0.6, 0.4]})
        >>> b = pl.DataFrame({"system": ["y", "x"], "rank": [1, 2], "score": [0.9, 0.1]})
        >>> side_by_side({"A": a, "B": b}).rows()
        [(1, 'x', 'y'), (2, 'y', 'x')]
    """
    table: pl.DataFrame | None = None
    for label, ordering in orderings.items():
        column = ordering.select(pl.col("rank").cast(pl.UInt32), pl.col("system").alias(label))
        table = (
            column if table is None else table.join(column, on="rank", how="full", coalesce=True)
        )
    if table is None:
        return pl.DataFrame(schema={"rank": pl.UInt32})
    return table.sort("rank")


def orderings_of(
    per_query: pl.DataFrame | None,
    pair_summary: pl.DataFrame | None,
    metrics: list[str],
    preference_names: list[str],
    method: Method,
    by: Sequence[str] = (),
) -> dict[str, pl.DataFrame]:
    """One ordering per measure (and qrels set, ``by``): ``method`` on preferences (from
    one summary of the pair table, :func:`lexiframe.summarize_preferences`), the mean on
    metrics."""
    result = {}
    for name in preference_names:
        if pair_summary is not None:
            ordering = order(pair_summary, name, method=method, by=by)
            result.update(orderings_per_key(f"{name} ({method})", ordering, by))
    for name in metrics:
        if per_query is None:
            continue
        by_mean = metric_ordering(name, partial(order, per_query, name, method="mean", by=by))
        if by_mean is not None:
            result.update(orderings_per_key(f"{name} (mean)", by_mean, by))
    return result
