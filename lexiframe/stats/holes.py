"""Hole size: how much of a system's top documents a qrels leaves unjudged.

A system whose top documents a reference qrels never judged can gain or lose most when
another judge (a language model) labels them; :func:`hole_size` measures that share per
system and cut-off, and :func:`lexiframe.stats.qrels_agreement` correlates it with each
system's bias.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from lexiframe.errors import InputError
from lexiframe.io.layouts import trec_rank
from lexiframe.stats._common import eager
from lexiframe.validate import require_columns, require_positive_int


def hole_size(
    run: pl.DataFrame | pl.LazyFrame,
    judgments: pl.DataFrame | pl.LazyFrame,
    *,
    k: int | Sequence[int] = 10,
) -> pl.DataFrame:
    """The share of each system's top-k documents the judgments leave unjudged.

    For each system, the mean over the queries the judgments cover of the fraction of
    its top ``k`` documents (trec_eval's order: score descending, doc id descending)
    without a judgment; a ranking shorter than k counts over its length.

    Returns:
        ``system, k, hole`` sorted by ``system, k``.

    >>> import polars as pl
    >>> run = pl.DataFrame({"system": ["x"] * 2 + ["y"] * 2, "query": ["1"] * 4,
    ...                     "doc": ["a", "b", "a", "c"], "score": [2.0, 1.0] * 2})
    >>> qrels = pl.DataFrame({"query": ["1", "1"], "doc": ["a", "b"], "relevance": [1, 0]})
    >>> hole_size(run, qrels, k=2).rows()
    [('x', 2, 0.0), ('y', 2, 0.5)]
    """
    cuts = [require_positive_int(value, "k") for value in ([k] if isinstance(k, int) else k)]
    if not cuts:
        raise InputError("hole_size() needs at least one cut-off k, e.g. k=10")
    table = eager(run, "run")
    require_columns(table.schema, ["system", "query", "doc", "score"], "run")
    labels = eager(judgments, "judgments")
    require_columns(labels.schema, ["query", "doc"], "judgments")
    judged = labels.select(
        pl.col("query").cast(pl.String), pl.col("doc").cast(pl.String), _judged=pl.lit(True)
    ).unique()
    ranked = (
        table.select(
            "system", pl.col("query").cast(pl.String), pl.col("doc").cast(pl.String), "score"
        )
        .with_columns(_rank=trec_rank())
        .filter(pl.col("_rank") <= max(cuts))
        .join(judged.select("query").unique(), on="query", how="semi")
        .join(judged, on=["query", "doc"], how="left")
        .with_columns(_hole=pl.col("_judged").is_null().cast(pl.Float64))
    )
    parts = [
        ranked.filter(pl.col("_rank") <= cut)
        .group_by("system", "query")
        .agg(pl.col("_hole").mean())
        .group_by("system")
        .agg(pl.lit(cut, dtype=pl.UInt32).alias("k"), pl.col("_hole").mean().alias("hole"))
        for cut in dict.fromkeys(cuts)
    ]
    return pl.concat(parts).sort("system", "k")
