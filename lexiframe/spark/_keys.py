"""A by= key that only the qrels carry, on Spark: several qrels sets in one table, each row
named by its set (``qrels``, :func:`lexiframe.concat_qrels`). The workers' positions take
it as one process does; :func:`lexiframe.spark.coverage` crosses the run's answers with it
(as :func:`lexiframe.ranking.tables.with_qrels_keys` does in one process)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame


def with_qrels_keys(run: SparkFrame, qrels: SparkFrame, by: Sequence[str]) -> SparkFrame:
    """The run with the by= keys that only ``qrels`` carry: each row once per value of those
    keys in the qrels (a cross join with the few values, broadcast), so that every ranking
    is evaluated against every qrels set; the run as it is when there are none.

    The values are collected and made a table of their own: a table derived from the qrels
    would make the later cogroup of the run with the qrels a self-join, which Spark refuses
    as ambiguous.

    Example:
        >>> with_qrels_keys(run_sdf, qrels_sdf, ["qrels"])  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    alone = [key for key in by if key not in run.columns and key in qrels.columns]
    if not alone:
        return run
    keys = qrels.select(*alone)
    values = run.sparkSession.createDataFrame(keys.distinct().collect(), keys.schema)
    return run.crossJoin(F.broadcast(values))
