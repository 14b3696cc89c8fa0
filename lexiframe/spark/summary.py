"""Means over queries from exact partial sums; orderings of the systems on the driver.

A pair summary has one row per pair of systems (per by-group), and a metrics table one row
per ranking: MC4, Borda and the win rate run on the driver with lexiframe's own code over
what Spark sends back.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from lexiframe import aggregate, evaluation
from lexiframe._utils import as_list
from lexiframe.mc4 import MC4_DAMPING
from lexiframe.spark import _arrow, exact_sums
from lexiframe.spark.exact_sums import EXPONENT, HIGH, KIND, LOW, MEASURE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame


def summarize(
    frame: SparkFrame,
    *,
    by: str | list[str] | None = None,
    measures: str | list[str] | None = None,
) -> SparkFrame:
    """Means over queries, as :func:`lexiframe.summarize`, computed when called.

    Per-query measures give the mean of each measure per (by…, system) after
    ``n_queries``; preferences give, per (by…, system_a, system_b), ``n_queries`` and for
    each measure its mean and ``_wins``, ``_losses``, ``_ties`` counts
    (:func:`lexiframe.summarize_preferences`; a NaN preference is refused, as there).
    One pass over the rows, a Python task per core: the workers add them into exact
    partial sums (:mod:`lexiframe.spark.exact_sums`), Spark adds those per key, and the
    driver finishes the means. The frame that :func:`lexiframe.spark.evaluate` returns
    needs no pass: its groups added those sums as they computed the measures (a frame
    derived from it, such as a filter, has rows of its own and is read). Two runs give the
    same bits however Spark split the rows, and whether the sums were added by the groups
    or by a pass; they may differ from one process's in the last bits of a double. A small
    Spark DataFrame in one partition, sorted by the keys.

    Example:
        >>> from lexiframe import spark as lfs
        >>> lfs.summarize(per_query, by="track").show()  # doctest: +SKIP
    """
    summary = summary_table(frame, by=by, measures=measures)
    arrow = _arrow.to_spark_table(summary, _arrow.arrow_schema(summary.schema))
    return frame.sparkSession.createDataFrame(arrow).coalesce(1)


def summary_table(
    frame: SparkFrame,
    *,
    by: str | list[str] | None = None,
    measures: str | list[str] | None = None,
) -> pl.DataFrame:
    """:func:`summarize`'s table as the driver finishes it, a Polars frame: for a caller
    on the driver, which would otherwise collect it back from Spark.

    Example:
        >>> summary_table(per_query, by="track")  # doctest: +SKIP
    """
    empty = _arrow.empty_polars(frame)
    # The one-process function on an empty frame checks the columns and picks them.
    summary_columns = evaluation.summarize(empty, by=by, measures=measures).columns
    by = as_list(by)
    signs = "system_a" in empty.columns and "system_b" in empty.columns
    keys = [*by, "system_a", "system_b"] if signs else [*by, "system"]
    columns = [name for name in summary_columns if name in empty.columns and name not in keys]
    known = None if signs else _partial_sums_of(frame, keys, columns)
    # Added by the groups that computed the frame, else by a pass over its rows.
    partials = known if known is not None else _added(frame, empty, keys, columns, signs)
    table = exact_sums.means(partials, keys, columns, signs=signs).sort(keys)
    if signs:
        table = aggregate.refuse_nan_preferences(
            table, columns=columns, keys=keys, fix=SPARK_NAN_FIX
        )
    return table.select(summary_columns)


def _added(
    frame: SparkFrame, empty: pl.DataFrame, keys: list[str], columns: list[str], signs: bool
) -> pl.DataFrame:
    """The merged partial sums of ``frame``'s ``columns`` per ``keys``, by one pass over its
    rows: a Python task per core adds its rows, Spark adds the tasks' sums per key."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    # Plain names in the workers: PySpark's mapInArrow reads a dot as a nested field.
    plain = {name: f"_lexiframe_column_{index}" for index, name in enumerate([*keys, *columns])}
    plain_keys, plain_columns = [plain[key] for key in keys], [plain[name] for name in columns]
    key_types = empty.select(keys).rename(dict(zip(keys, plain_keys, strict=True))).schema
    schema = _arrow.arrow_schema(exact_sums.partial_schema(key_types))
    add = partial(
        _partials_of_batches, keys=plain_keys, columns=plain_columns, signs=signs, schema=schema
    )
    # As many tasks as cores: a Python task's start costs more than its few rows.
    cores = frame.sparkSession.sparkContext.defaultParallelism
    named = [F.col(_arrow.quoted(name)).alias(plain[name]) for name in plain]
    with _arrow.quiet_pyspark():
        partials = frame.select(*named).coalesce(cores).mapInArrow(add, from_arrow_schema(schema))
    added = partials.groupBy(*plain_keys, MEASURE, KIND, EXPONENT).agg(
        F.sum(HIGH).alias(HIGH), F.sum(LOW).alias(LOW)
    )
    return _arrow.collect(added).rename(dict(zip(plain_keys, keys, strict=True)))


@dataclass(frozen=True)
class _PartialSums:
    """A frame's exact partial sums of ``columns`` per ``keys``, as the groups that computed
    it added them (:func:`lexiframe.spark.exact_sums.partial_sums`, merged or not)."""

    table: pl.DataFrame
    keys: list[str]
    columns: list[str]


_partial_sums: weakref.WeakKeyDictionary[SparkFrame, _PartialSums] = weakref.WeakKeyDictionary()
"""The partial sums of the frames computed in this process, by frame (kept while it is)."""


def remember_partial_sums(
    frame: SparkFrame, sums: pl.DataFrame, keys: list[str], columns: list[str]
) -> None:
    """Keep ``sums``, the exact partial sums of ``frame``'s ``columns`` per ``keys`` that
    the work computing it added, for :func:`summary_table` of this very frame (an object
    derived from it may hold other rows, and is read).

    Example:
        >>> remember_partial_sums(per_query, sums, ["system"], ["AP"])  # doctest: +SKIP
    """
    _partial_sums[frame] = _PartialSums(sums, list(keys), list(columns))


def _partial_sums_of(frame: SparkFrame, keys: list[str], columns: list[str]) -> pl.DataFrame | None:
    """The merged partial sums of ``columns`` per ``keys`` (measures numbered in the order of
    ``columns``) that were kept for ``frame``, or None where none were or they do not
    cover those keys and columns."""
    known = _partial_sums.get(frame)
    if known is None or not {*keys} <= {*known.keys} or not {*columns} <= {*known.columns}:
        return None
    renumbered = {-1: -1} | {known.columns.index(name): i for i, name in enumerate(columns)}
    measure = pl.col(MEASURE)
    table = known.table.filter(measure.is_in(list(renumbered))).with_columns(
        measure.replace_strict(renumbered, return_dtype=exact_sums.PARTIAL_TYPES[MEASURE])
    )
    return exact_sums.merged(table, keys)


SPARK_NAN_FIX = "F.when(F.isnan(F.col({column!r})), None).otherwise(F.col({column!r}))"
"""How a Spark user makes a NaN preference missing."""

_BATCHES_PER_MERGE = 64
"""Batches of partial sums kept before they are added together (a worker's memory)."""


def _partials_of_batches(
    batches: Iterator[pa.RecordBatch],
    *,
    keys: list[str],
    columns: list[str],
    signs: bool,
    schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """A partition's exact partial sums (:func:`lexiframe.spark.exact_sums.partial_sums`),
    added together as they come."""
    kept: list[pl.DataFrame] = []
    for batch in batches:
        rows = _arrow.polars_frame(pa.Table.from_batches([batch]))
        kept.append(exact_sums.partial_sums(rows, keys, columns, signs=signs))
        if len(kept) >= _BATCHES_PER_MERGE:
            kept = [exact_sums.merged(pl.concat(kept), keys)]
    if kept:
        added = exact_sums.merged(pl.concat(kept), keys)
        yield from _arrow.to_spark_table(added, schema).to_batches()


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
    from pyspark.sql import functions as F

    by = as_list(by)
    columns = frame.columns
    if "system_a" in columns and "system_b" in columns:
        empty = _arrow.empty_polars(frame)
        column = aggregate.preference_columns(empty.schema, [measure])[0]
        if "query" in columns:
            table = summary_table(frame, by=by, measures=[column])
        else:
            table = _arrow.collect(frame)
    elif "system" in columns and "query" in columns and measure in columns:
        named = [F.col(_arrow.quoted(name)) for name in (*by, "system", "query", measure)]
        table = _arrow.collect(frame.select(*named))
    else:
        table = _arrow.empty_polars(frame)  # lexiframe's own message names what is missing
    return aggregate.order(
        table, measure, method=method, damping=damping, by=by, lower_is_better=lower_is_better
    )
