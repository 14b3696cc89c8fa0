"""The orderings of ``lexiframe evaluate`` as one table, written by the one-process and the
Spark paths alike (a module of its own so that :mod:`lexiframe.spark.cli` need not import
the command's package, which imports it)."""

from __future__ import annotations

import polars as pl


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
