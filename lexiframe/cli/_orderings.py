"""The orderings of ``lexiframe evaluate`` as one table, written by the one-process and the
Spark paths alike (a module of its own so that :mod:`lexiframe.spark.cli` need not import
the command's package, which imports it)."""

from __future__ import annotations

from collections.abc import Sequence

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
        " ".join([label, *(f"{key}={part[key][0]}" for key in by)]): part.drop(by)
        for part in parts
    }
