"""Per-query measures and preferences of a Spark positions frame.

Every row of a query lands in the same group (a hash bucket of the query id), and
:func:`lexiframe.measures` or :func:`lexiframe.preferences` runs on the group's Arrow
table: a measure that looks across the systems of a query (the depth at which a skipped
query's ASL is scored) sees all of them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from lexiframe import evaluation
from lexiframe._utils import as_list
from lexiframe.metrics import Measure, parse_measures
from lexiframe.options import PositionsOptions
from lexiframe.preferences import DEFAULT_MEASURES, Extra, preference_measure
from lexiframe.preferences import preferences as pair_preferences
from lexiframe.spark import _arrow
from lexiframe.spark._groups import BUCKET
from lexiframe.spark.ranking import POSITION_TYPES, bucket_count, partitioned
from lexiframe.typing import CompatName, Labels
from lexiframe.validate import require_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame


def measures(
    positions: SparkFrame,
    names: evaluation.MeasureNames,
    *,
    n: int | str | None = None,
    buckets: int | None = None,
    compat: CompatName = PositionsOptions.compat,
    labels: Labels = PositionsOptions.labels,
) -> SparkFrame:
    """One double column per measure, one row per ranking, as :func:`lexiframe.measures`.

    Args:
        positions: a positions frame from :func:`lexiframe.spark.positions`.
        names: measure names, e.g. ``["RR", "AP", "nDCG@10", "ASL"]``.
        n: corpus size (an integer or a column name), for TSE, SL3, RecallError.
        buckets: groups of queries the work is split into (default: chosen from the size
            of the frame, :func:`lexiframe.spark.ranking.bucket_count`).
        compat: whose numbers to reproduce, as :func:`lexiframe.measures` takes it.
        labels: what the frame's grades are, as :func:`lexiframe.measures` takes it.

    Example:
        >>> from lexiframe import spark as lfs
        >>> per_query = lfs.measures(pos, ["RR", "AP", "ASL"])  # doctest: +SKIP
    """
    parsed = parse_measures(names)  # the measures themselves travel: defined ones too
    empty = _arrow.empty_polars(positions)
    require_columns(empty.schema, ["query"], "positions")
    empty = empty.cast({k: v for k, v in POSITION_TYPES.items() if k in empty.columns})
    options = PositionsOptions(compat=compat, labels=labels)
    schema = _arrow.arrow_schema(evaluation.measures_for(empty, parsed, options, n).schema)
    job = _arrow.group_function(
        _measures_group, names=parsed, n=n, options=options, schema=schema
    )
    return _per_query(positions, job, schema, bucket_count(positions, buckets))


def _measures_group(
    table: pa.Table,
    *,
    names: list[Measure],
    n: int | str | None,
    options: PositionsOptions,
    schema: pa.Schema,
) -> pa.Table:
    frame = _arrow.polars_frame(table.drop_columns([BUCKET]), POSITION_TYPES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the driver's dry run warned once already
        result = evaluation.measures_for(frame, names, options, n)
    return _arrow.to_spark_table(result, schema)


def preferences(
    positions: SparkFrame,
    measures: str | Iterable[str] = DEFAULT_MEASURES,
    *,
    by: str | Sequence[str] | None = None,
    extra: Iterable[Extra] = (),
    buckets: int | None = None,
) -> SparkFrame:
    """Preferences between every pair of systems of every (by…, query), as
    :func:`lexiframe.preferences`: ``by…, query, system_a, system_b`` and one column per
    measure (``sgnLP``, ``rrLP``, ``sgnLR``), positive when system_a is preferred.

    Example:
        >>> from lexiframe import spark as lfs
        >>> prefs = lfs.preferences(pos, ["sgnLP", "sgnLR"], by="track")  # doctest: +SKIP
    """
    by, extra = as_list(by), list(extra)
    names = [preference_measure(name).name for name in as_list(measures)]
    empty = _arrow.empty_polars(positions).cast(
        {k: v for k, v in POSITION_TYPES.items() if k in positions.columns}
    )
    schema = _arrow.arrow_schema(pair_preferences(empty, names, by=by, extra=extra).schema)
    job = _arrow.group_function(_preferences_group, names=names, by=by, extra=extra, schema=schema)
    columns = [*by, "query", "system", "positions"]
    return _per_query(positions.select(*columns), job, schema, bucket_count(positions, buckets))


def _preferences_group(
    table: pa.Table,
    *,
    names: list[str],
    by: list[str],
    extra: list[Extra],
    schema: pa.Schema,
) -> pa.Table:
    frame = _arrow.polars_frame(table.drop_columns([BUCKET]), POSITION_TYPES)
    result = pair_preferences(frame, names, by=by, extra=extra)
    return _arrow.to_spark_table(result, schema)


def _per_query(
    sdf: SparkFrame, job: Callable[..., pa.Table], schema: pa.Schema, buckets: int
) -> SparkFrame:
    from pyspark.sql.pandas.types import from_arrow_schema

    grouped = partitioned(sdf, "query", buckets).groupBy(BUCKET)
    with _arrow.quiet_pyspark():
        return grouped.applyInArrow(job, from_arrow_schema(schema))
