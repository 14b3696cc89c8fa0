"""Means over queries as Spark aggregations; orderings of the systems on the driver.

A pair summary has one row per pair of systems (per by-group), and a metrics table one row
per ranking: MC4, Borda and the win rate run on the driver with lexiframe's own code over
what Spark sends back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from lexiframe import aggregate, evaluation
from lexiframe._utils import as_list
from lexiframe.mc4 import MC4_DAMPING
from lexiframe.spark import _arrow

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql import DataFrame as SparkFrame


def summarize(
    frame: SparkFrame,
    *,
    by: str | list[str] | None = None,
    measures: str | list[str] | None = None,
) -> SparkFrame:
    """Means over queries, as :func:`lexiframe.summarize`, as Spark aggregations.

    Per-query measures give the mean of each measure per (by…, system) after
    ``n_queries``; preferences give, per (by…, system_a, system_b), ``n_queries`` and for
    each measure its mean and ``_wins``, ``_losses``, ``_ties`` counts
    (:func:`lexiframe.summarize_preferences`). Sorted by the keys. Each mean adds its
    values in the order of the query ids (:func:`in_key_order`), so that two runs give the
    same bits however Spark split the rows; they may differ from one process's in the last
    bits of a double.

    Example:
        >>> from lexiframe import spark as lfs
        >>> lfs.summarize(per_query, by="track").show()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    empty = _arrow.empty_polars(frame)
    # The one-process function on an empty frame checks the columns and picks them.
    summary_columns = evaluation.summarize(empty, by=by, measures=measures).columns
    columns = [
        name
        for name in summary_columns
        if name in empty.columns and name not in ("system", "system_a", "system_b")
    ]
    by = as_list(by)
    columns = [name for name in columns if name not in by]
    if "system_a" in empty.columns and "system_b" in empty.columns:
        keys = [*by, "system_a", "system_b"]
        aggregations: list[Column] = [F.count(F.lit(1)).alias("n_queries")]
        for name in columns:
            value = F.col(name)
            aggregations += [
                F.avg(value.cast("double")).alias(name),
                _count_where(value > 0).alias(f"{name}_wins"),
                _count_where(value < 0).alias(f"{name}_losses"),
                _count_where(value == 0).alias(f"{name}_ties"),
            ]
    else:
        keys = [*by, "system"]
        aggregations = [F.count(F.lit(1)).alias("n_queries")]
        for name in columns:
            aggregations.append(F.avg(name).alias(name))
            if f"n_queries_{name}" in summary_columns:  # the queries with a value
                aggregations.append(F.count(F.col(name)).alias(f"n_queries_{name}"))
    summary = in_key_order(frame, keys, ["query", *columns]).groupBy(*keys).agg(*aggregations)
    return summary.repartition(1).sortWithinPartitions(*keys)  # a few rows: no sampling job


def in_key_order(frame: SparkFrame, keys: list[str], order: list[str]) -> SparkFrame:
    """``frame`` hashed by ``keys`` and sorted within its partitions by ``keys`` and then
    ``order`` (those of its columns that it has), so that a group by ``keys`` meets each
    group's rows in that order: Spark's ``sum`` and ``avg`` add the values in the order
    they meet them, which without the sort changes the last bits from one run to the next.
    Spark keeps a sort below a sum of doubles (its optimizer knows the order matters), and
    no partial aggregation can run before the shuffle by ``keys``.

    Example:
        >>> from pyspark.sql import functions as F
        >>> ordered = in_key_order(per_query, ["system"], ["query", "AP"])  # doctest: +SKIP
        >>> ordered.groupBy("system").agg(F.avg("AP"))  # doctest: +SKIP
    """
    present = [name for name in dict.fromkeys(order) if name in frame.columns and name not in keys]
    return frame.repartition(*keys).sortWithinPartitions(*keys, *present)


def _count_where(condition: Column) -> Column:
    from pyspark.sql import functions as F

    return F.sum(F.when(condition, 1).otherwise(0)).cast("long")


def order(
    frame: SparkFrame,
    measure: str,
    *,
    method: aggregate.Method = "mc4",
    damping: float = MC4_DAMPING,
    by: str | Sequence[str] | None = None,
    lower_is_better: bool | None = None,
) -> pl.DataFrame:
    """Order the systems of each (by…) group, as :func:`lexiframe.order`; a Polars frame
    ``by…, system, rank, score`` computed on the driver.

    A pair table (per-query preferences) is first summarised per pair by Spark
    (:func:`summarize`), and only the pair summary, one row per pair of systems, is
    collected. A pair summary is collected as it is. A metrics table is collected with the
    four columns the ordering reads (by…, system, query, the measure), one row per ranking:
    the per-query comparisons of MC4, Borda and the win rate need them.

    Example:
        >>> from lexiframe import spark as lfs
        >>> lfs.order(prefs, "sgnLP", method="mc4")  # doctest: +SKIP
    """
    by = as_list(by)
    columns = frame.columns
    if "system_a" in columns and "system_b" in columns:
        empty = _arrow.empty_polars(frame)
        column = aggregate.preference_columns(empty.schema, [measure])[0]
        if "query" in columns:
            frame = summarize(frame, by=by, measures=[column])
        table = _arrow.collect(frame)
    elif "system" in columns and "query" in columns and measure in columns:
        table = _arrow.collect(frame.select(*by, "system", "query", measure))
    else:
        table = _arrow.empty_polars(frame)  # lexiframe's own message names what is missing
    return aggregate.order(
        table, measure, method=method, damping=damping, by=by, lower_is_better=lower_is_better
    )
