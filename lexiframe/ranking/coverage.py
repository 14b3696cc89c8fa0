"""How many queries of the run each system has evaluated, skipped and dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from lexiframe._compat import collect
from lexiframe.io.objects import qrels_frame, run_frame
from lexiframe.options import PositionsKwargs, PositionsOptions
from lexiframe.ranking._request import KEYS
from lexiframe.ranking.tables import (
    canonical_qrels,
    canonical_run,
    kept_run_rows,
    qrels_only_keys,
    query_grid,
    with_qrels_keys,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack


def coverage(
    run: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> pl.DataFrame:
    """Count, per (by…, system), the queries evaluated, skipped and dropped.

    ``options`` and ``kwargs`` are those of :func:`positions`; the counts read its
    ``threshold``, ``by``, ``no_relevant`` and column names.

    ``evaluated``: queries of the qrels with a relevant document (each gets a positions row;
    every judged query with ``no_relevant="keep"``, as in :func:`positions`);
    ``skipped``: of those, the ones the system returned nothing for (scored as worst case);
    ``unjudged``: queries the system answered that the qrels do not know (dropped);
    ``no_relevant``: queries the system answered that are judged without a relevant document
    (dropped; 0 with ``no_relevant="keep"``, which evaluates them).

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> run = pl.DataFrame({"system": ["a", "a"], "query": ["q1", "q9"],
        ...                     "doc": ["d1", "d1"], "score": [1.0, 1.0]})
        >>> qrels = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d1", "d5"],
        ...                       "relevance": [1, 1]})
        >>> lf.coverage(run, qrels)
        shape: (1, 5)
        ┌────────┬───────────┬─────────┬──────────┬─────────────┐
        │ system ┆ evaluated ┆ skipped ┆ unjudged ┆ no_relevant │
        │ ---    ┆ ---       ┆ ---     ┆ ---      ┆ ---         │
        │ str    ┆ u32       ┆ u32     ┆ u32      ┆ u32         │
        ╞════════╪═══════════╪═════════╪══════════╪═════════════╡
        │ a      ┆ 2         ┆ 1       ┆ 1        ┆ 0           │
        └────────┴───────────┴─────────┴──────────┴─────────────┘
    """
    options = PositionsOptions.of(options, **kwargs)
    names, by = options.columns, list(options.by)
    run = run_frame(run, (names.system, names.query, names.doc, names.score))
    qrels = qrels_frame(qrels, (names.query, names.doc, names.relevance), options.labels)
    if options.kept_rows is None:  # the (system, query) pairs are all that is read
        own = [key for key in by if key not in qrels_only_keys(by, run.collect_schema(), qrels)]
        every_row = with_qrels_keys(
            run.lazy().select(
                *own, pl.col(names.system).alias("system"), pl.col(names.query).alias("query")
            ),
            qrels,
            by,
        )
    else:  # rows that an option removes are read as positions reads them
        every_row = with_qrels_keys(canonical_run(run, options, qrels), qrels, by)
    systems = every_row.select(*by, "system").unique()
    answered = kept_run_rows(every_row, options).select(*by, "system", "query").unique()
    return coverage_of_answers(answered, systems, qrels, options)


def coverage_of_answers(
    answered: pl.LazyFrame,
    systems: pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions,
) -> pl.DataFrame:
    """The counts of :func:`coverage` from the (by…, system, query) pairs a run answers with
    the rows its options keep, and every (by…, system) of the run, in lexiframe's names:
    what :func:`lexiframe.spark.coverage` sends the driver.

    Example:
        >>> import polars as pl
        >>> answered = pl.LazyFrame({"system": ["a"], "query": ["q1"]})
        >>> qrels = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d1", "d5"], "relevance": [1, 1]})
        >>> coverage_of_answers(answered, answered.select("system"), qrels,
        ...                     PositionsOptions())["skipped"].to_list()
        [1]
    """
    # A query is evaluated with a label of the query level: relevant, or a chance of it.
    names, by, threshold = options.columns, list(options.by), options.query_level
    run_lf = answered
    qrels_lf, qrels_keys = canonical_qrels(qrels, names, by, run_lf)
    judged = (
        qrels_lf.select(*qrels_keys, "relevance")
        .group_by(qrels_keys)
        .agg(has_relevant=(pl.col("relevance") >= threshold).any())
    )
    answered = run_lf.join(judged, on=qrels_keys, how="left")
    keep = options.keeps_no_relevant
    relevant_queries = (judged if keep else judged.filter("has_relevant")).select(qrels_keys)
    grid = query_grid(systems, relevant_queries, by, qrels_keys)
    skipped = (
        grid.join(run_lf, on=[*by, *KEYS], how="anti")
        .group_by(*by, "system")
        .agg(skipped=pl.len().cast(pl.UInt32))
    )
    counts = answered.group_by(*by, "system").agg(
        unjudged=pl.col("has_relevant").is_null().sum().cast(pl.UInt32),
        no_relevant=pl.lit(0, dtype=pl.UInt32)
        if keep
        else (~pl.col("has_relevant")).sum().cast(pl.UInt32),
    )
    evaluated = grid.group_by(*by, "system").agg(evaluated=pl.len().cast(pl.UInt32))
    keys = [*by, "system"]
    result = (
        systems.join(evaluated, on=keys, how="left")
        .join(skipped, on=keys, how="left")
        .join(counts, on=keys, how="left")
        .with_columns(pl.col("evaluated", "skipped", "unjudged", "no_relevant").fill_null(0))
        .sort(keys)
    )
    return collect(result)
