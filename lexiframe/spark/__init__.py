"""lexiframe on Apache Spark: the same evaluation for runs that outgrow one machine.

Needs the optional extra ``lexiframe[spark]`` (PySpark 4). Per-query work runs lexiframe's
own Polars code on each group of queries (``groupBy(...).applyInArrow``), so every measure
and preference gives the value it gives in one process; the means are exact partial sums
of the workers, added by Spark and finished on the driver; the orderings (MC4, Borda, win
rate) run on the driver over the pair summary::

    from lexiframe import spark as lfs

    pos = lfs.positions(run_sdf, qrels_sdf)                      # Spark DataFrame
    per_query = lfs.measures(pos, ["RR", "AP", "nDCG@10", "ASL"])  # Spark DataFrame
    prefs = lfs.preferences(pos, ["sgnLP", "rrLP", "sgnLR"])     # Spark DataFrame
    lfs.summarize(per_query); lfs.summarize(prefs)               # Spark DataFrames
    lfs.order(prefs, "sgnLP", method="mc4")                      # Polars DataFrame
    lfs.coverage(run_sdf, qrels_sdf)                             # Polars DataFrame

The workers must import lexiframe: importing this module sets ``PYSPARK_PYTHON`` to the
running interpreter when it is unset, which a session created afterwards uses (right in
local mode). On a cluster, install lexiframe on every node and point ``PYSPARK_PYTHON`` (or
``spark.pyspark.python``) at that interpreter, or ship an environment (docs: Scaling out);
lexiframe warns when a cluster's executors were pointed at the driver's interpreter by
this import rather than by you.
"""

from __future__ import annotations

import os
import sys

SETS_PYSPARK_PYTHON = "PYSPARK_PYTHON" not in os.environ
"""Whether importing this module set ``PYSPARK_PYTHON`` (to the driver's interpreter)."""
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from lexiframe.spark._errors import (  # noqa: E402
    NoResourcesError,
    SparkJobError,
    lexiframe_errors,
)
from lexiframe.spark.per_query import measures, preferences  # noqa: E402
from lexiframe.spark.ranking import coverage, evaluate, positions  # noqa: E402
from lexiframe.spark.resources import resource_wait  # noqa: E402
from lexiframe.spark.summary import order, summarize  # noqa: E402

__all__ = [
    "NoResourcesError",
    "SparkJobError",
    "coverage",
    "evaluate",
    "lexiframe_errors",
    "measures",
    "order",
    "positions",
    "preferences",
    "resource_wait",
    "summarize",
]
