"""The run and the qrels in lexiframe's names, the rows the options keep, the queries to
evaluate, and every system completed with a row for each of them (worst case where it
skipped the query)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from lexiframe import validate
from lexiframe._utils import (
    quote_names,
)
from lexiframe.errors import InputError
from lexiframe.options import ColumnNames, PositionsOptions
from lexiframe.ranking._request import (
    DUPLICATE_FLAGS,
    POSITION,
    TIE_COLUMNS,
    TIE_RANK,
    VALUE_FLAGS,
    Request,
)


def canonical_run(
    run: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions,
    qrels: pl.DataFrame | pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Check the run's schema and give its columns lexiframe's names; a by= key that only
    ``qrels`` carry is left out, for the caller to cross (:func:`with_qrels_keys`) or to
    cross the ranks with (:func:`lexiframe.ranking.lists.ranked_lists`)."""
    names = options.columns
    if not isinstance(run, pl.DataFrame | pl.LazyFrame):
        raise TypeError(f"run must be a polars DataFrame or LazyFrame, not {type(run).__name__}")
    schema = run.collect_schema()
    alone = qrels_only_keys(options.by, schema, qrels)
    by = [key for key in options.by if key not in alone]
    order_column = options.order
    needed = [names.system, names.query, names.doc, *options.ordered_by, *by]
    validate.require_columns(schema, needed, "run")
    for column in options.ordered_by:
        validate.require_numeric(schema, column, "run")
    for column in (names.system, names.query, names.doc):
        validate.require_id_type(schema, column, "run")
    clashes = [key for key in by if key in ("system", "query", "doc", "order", TIE_RANK)]
    if clashes:
        raise InputError(f"by= keys {quote_names(clashes)} clash with lexiframe's own columns")
    order = pl.col(order_column).cast(pl.Float64)
    if options.rank_by == "score" and options.rules.float32_scores:
        # trec_eval 9 keeps the score as a C float: the double read, rounded to the nearest
        # float32 (not the text parsed as float32, which can round the other way).
        order = order.cast(pl.Float32).cast(pl.Float64)
    return run.lazy().select(
        *by,
        pl.col(names.system).cast(pl.String).alias("system"),
        pl.col(names.query).alias("query"),
        pl.col(names.doc).alias("doc"),
        order.alias("order"),
        *[pl.col(rank).cast(pl.Float64).alias(TIE_RANK) for rank in options.ordered_by[1:]],
    )


def qrels_only_keys(
    by: Sequence[str], run_schema: pl.Schema, qrels: pl.DataFrame | pl.LazyFrame | None
) -> list[str]:
    """The by= keys that the qrels carry and the run does not: the name of each qrels set
    when several are stacked in one frame (:func:`lexiframe.concat_qrels`).

    Example:
        >>> qrels_only_keys(["track", "qrels"], pl.Schema({"track": pl.String}),
        ...                 pl.DataFrame({"track": ["a"], "qrels": ["llm"]}))
        ['qrels']
    """
    if qrels is None or not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
        return []
    qrels_schema = qrels.collect_schema()
    return [key for key in by if key not in run_schema and key in qrels_schema]


def with_qrels_keys(
    run: pl.LazyFrame, qrels: pl.DataFrame | pl.LazyFrame, by: Sequence[str]
) -> pl.LazyFrame:
    """The run (any columns) with the by= keys that only ``qrels`` carry: each row once per
    value of those keys in the qrels, a cross join, so that every ranking is evaluated
    against every qrels set, and each set's queries, relevant documents and coverage are
    its own (the keys then join the run to its judgments as a key both carry does). The
    positions rank each ranking once instead where they can
    (:func:`lexiframe.ranking.lists.ranked_lists`); coverage and a run marked by a join
    cross the run.

    The values come first: each copy of the run keeps the run's row order, and so its
    rankings as blocks of consecutive rows (:mod:`lexiframe._blocks`).

    Example:
        >>> run = pl.LazyFrame({"system": ["a", "a"], "query": ["q1", "q2"]})
        >>> qrels = pl.DataFrame({"qrels": ["llm", "human"], "query": ["q1", "q1"]})
        >>> with_qrels_keys(run, qrels, ["qrels"]).collect().rows()
        [('human', 'a', 'q1'), ('human', 'a', 'q2'), ('llm', 'a', 'q1'), ('llm', 'a', 'q2')]
    """
    alone = qrels_only_keys(by, run.collect_schema(), qrels)
    if not alone:
        return run
    values = qrels.lazy().select(alone).unique().sort(alone)
    return values.join(run, how="cross", maintain_order="left_right")


def kept_run_rows(run: pl.LazyFrame, options: PositionsOptions) -> pl.LazyFrame:
    """The rows of a run in lexiframe's names (:func:`canonical_run`) that the options keep
    (:attr:`PositionsOptions.kept_rows`): the one place every path removes run rows, so
    that coverage, batches of files and Spark's groups see the same run."""
    kept = options.kept_rows
    return run if kept is None else run.filter(kept)


def canonical_qrels(
    qrels: pl.DataFrame | pl.LazyFrame, names: ColumnNames, by: list[str], run_lf: pl.LazyFrame
) -> tuple[pl.LazyFrame, list[str]]:
    """Check the qrels' schema; return them with lexiframe's names and their join keys."""
    if not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
        raise TypeError(
            f"qrels must be a polars DataFrame or LazyFrame, not {type(qrels).__name__}"
        )
    schema = qrels.collect_schema()
    validate.require_columns(schema, [names.query, names.doc, names.relevance], "qrels")
    validate.require_rows(qrels, "qrels")
    validate.require_numeric(schema, names.relevance, "qrels")
    validate.require_id_type(schema, names.query, "qrels")
    validate.require_id_type(schema, names.doc, "qrels")
    qrels_by = [key for key in by if key in schema]
    renamed = qrels.lazy().select(
        *qrels_by,
        pl.col(names.query).alias("query"),
        pl.col(names.doc).alias("doc"),
        pl.col(names.relevance).alias("relevance"),
    )
    validate.require_same_id_kind(run_lf, "query", renamed, "query", "query")
    if "doc" in run_lf.collect_schema():
        validate.require_same_id_kind(run_lf, "doc", renamed, "doc", "document")
    run_schema = run_lf.collect_schema()
    # Same kind, maybe another width or a categorical: join on the run's own type.
    casts = [pl.col(key).cast(run_schema[key]) for key in ("query", "doc") if key in run_schema]
    return renamed.with_columns(casts), [*qrels_by, "query"]


def evaluated_queries(
    relevant: pl.LazyFrame,
    qrels_keys: list[str],
    request: Request,
    *,
    judged: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The evaluated queries, with n_rel (and the ideal grades): those with a label of
    :attr:`PositionsOptions.query_level` (a relevant document; with probabilities, a
    positive one), or every query of ``judged`` (n_rel = 0 for some) when given.

    ``relevant``: the judgments whose grades gain (:attr:`Request.gain_level`), the
    relevant ones and above threshold=1 with ``grades`` every positive grade, which
    ``ideal_grades`` holds; ``n_rel`` counts the relevant ones."""
    grade = pl.col("relevance")
    is_relevant = grade >= request.threshold
    columns = {"n_rel": is_relevant.sum().cast(POSITION)}
    if judged is not None:
        if request.grades:
            gains = grade >= request.gain_level
            columns["ideal_grades"] = grade.filter(gains).sort(descending=True)
        return judged.group_by(qrels_keys).agg(**columns)
    if request.grades:
        columns["ideal_grades"] = grade.sort(descending=True)
    found = relevant.group_by(qrels_keys).agg(**columns)
    if request.options.query_level > request.gain_level:  # some gaining labels are below it
        return found.filter(pl.col("n_rel") > 0)
    return found


def with_nonrel_counts(
    queries: pl.LazyFrame, qrels: pl.LazyFrame, qrels_keys: list[str], threshold: float
) -> pl.LazyFrame:
    """The evaluated queries with ``n_nonrel``: their documents judged with a grade from 0
    to below the threshold (trec_eval's judged non-relevant documents; Bpref reads it)."""
    grade = pl.col("relevance")
    counts = qrels.group_by(qrels_keys).agg(
        n_nonrel=((grade >= 0) & (grade < threshold)).sum().cast(POSITION)
    )
    return queries.join(counts, on=qrels_keys, how="left").with_columns(
        pl.col("n_nonrel").fill_null(0)
    )


def query_grid(
    systems: pl.LazyFrame, queries: pl.LazyFrame, by: list[str], qrels_keys: list[str]
) -> pl.LazyFrame:
    """Every (by…, system) paired with every query it must be evaluated on."""
    shared = [key for key in by if key in qrels_keys]
    if shared:
        return systems.join(queries, on=shared, how="inner")
    return systems.join(queries, how="cross")


def complete_rows(
    rankings: pl.LazyFrame,
    queries: pl.LazyFrame,
    request: Request,
    systems: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Give every system (of ``rankings``, or ``systems``) a row for every query with a
    relevant document (worst case if none); under a ``compat`` whose queries are the
    run's, a row for each query it answered that ``queries`` holds."""
    by = request.by
    found = rankings.drop(DUPLICATE_FLAGS, *VALUE_FLAGS, strict=False)
    if request.options.rules.queries == "run":  # the queries each system answered
        grid = found.select(request.keys).join(queries, on=request.qrels_keys, how="inner")
    else:
        if systems is None:
            systems = rankings.select(*by, "system").unique()
        grid = query_grid(systems, queries, by, request.qrels_keys)
    empty = pl.lit([], dtype=pl.List(POSITION))
    filled = [pl.col("positions").fill_null(empty), pl.col("n_ret").fill_null(0)]
    optional = []
    if request.docs:
        optional.append("docs")
        filled.append(pl.col("docs").fill_null(pl.lit([], dtype=found.collect_schema()["docs"])))
    if request.grades:
        optional += ["grades", "ideal_grades"]
        filled.append(
            pl.col("grades").fill_null(pl.lit([], dtype=found.collect_schema()["grades"]))
        )
        if request.gains_below_threshold:
            optional.append("gain_positions")
            filled.append(pl.col("gain_positions").fill_null(empty))
    if request.judged:
        optional += ["nonrel_positions", "n_nonrel", "pooled_positions"]
        filled += [pl.col("nonrel_positions", "pooled_positions").fill_null(empty)]
    if request.options.ties == "expected":
        optional += TIE_COLUMNS
        filled += [pl.col(TIE_COLUMNS).fill_null(empty)]
    # The depth= of the frame travels with it: a skipped query's ASL is scored at it.
    depth = [] if request.depth is None else [pl.lit(request.depth, dtype=POSITION).alias("depth")]
    return (
        grid.join(found, on=request.keys, how="left")
        .with_columns(filled)
        .select(*request.keys, "positions", "n_rel", "n_ret", *depth, *optional)
    )
