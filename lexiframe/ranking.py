"""The positions frame: where each ranking put the relevant documents of its query.

A run and its qrels become one row per (by…, system, query) holding the ascending ranks of
the retrieved relevant documents (docs/definitions.md §1). Every measure and preference of lexiframe
is a function of this frame.

Rankings follow trec_eval: score descending, ties broken by document id descending as a
string. Every system of the run gets a row for every query of the qrels with a relevant
document; a system that skipped such a query gets an empty list (its worst case). Queries
of the run that are unjudged, or judged without a relevant document, are not evaluated
(``no_relevant="keep"`` evaluates the latter, as trec_eval does): the eager entry point
reports how many with a :class:`~lexiframe.errors.DroppedQueriesWarning` and
:func:`coverage` returns the counts as a frame.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, overload

import polars as pl

from lexiframe import _blocks, validate
from lexiframe._compat import collect
from lexiframe._utils import (
    caller_stacklevel,
    format_row,
    lazy_frames,
    plural,
    quote_names,
    shorten,
)
from lexiframe.errors import DroppedQueriesWarning, InputError
from lexiframe.io.objects import qrels_frame, run_frame
from lexiframe.options import ColumnNames, PositionsKwargs, PositionsOptions
from lexiframe.typing import RankBy

if TYPE_CHECKING:
    from typing_extensions import Unpack

POSITION: Final = pl.UInt32()
KEYS = ("system", "query")
DUPLICATE_FLAGS = ("_n_rows", "_n_docs")
VALUE_FLAGS = ("_score_nan_max", "_null_scores", "_null_ids")


@dataclass(frozen=True)
class _Request:
    """What :func:`positions` builds: the options, with what the qrels decide resolved."""

    options: PositionsOptions
    qrels_keys: list[str]
    """The keys that join a ranking to its judgments: the by= keys the qrels carry, query."""
    grades: bool
    """Whether the frame keeps the grade columns (``options.grades`` resolved on the qrels)."""

    @property
    def by(self) -> list[str]:
        return list(self.options.by)

    @property
    def keys(self) -> list[str]:
        """The keys of one ranking: by…, system, query."""
        return [*self.options.by, *KEYS]

    @property
    def depth(self) -> int | None:
        return self.options.depth

    @property
    def rank_by(self) -> RankBy:
        return self.options.rank_by

    @property
    def docs(self) -> bool:
        return self.options.docs

    @property
    def threshold(self) -> int:
        return self.options.threshold

    @property
    def judged(self) -> bool:
        return bool(self.options.judged)

    @property
    def condensed(self) -> bool:
        return self.options.condensed

    @property
    def reads_every_judgment(self) -> bool:
        return self.options.reads_every_judgment

    @property
    def gain_level(self) -> int:
        """The lowest grade whose documents the grade columns hold: every positive grade
        above ``threshold=1`` (:attr:`PositionsOptions.gain_level`), else the threshold."""
        return self.options.gain_level if self.grades else self.threshold

    @property
    def gains_below_threshold(self) -> bool:
        """Whether documents below the threshold gain: the frame has ``gain_positions``."""
        return self.gain_level < self.threshold


@overload
def positions(
    run: pl.DataFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions | None = None,
    *,
    systems: pl.DataFrame | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> pl.DataFrame: ...
@overload
def positions(
    run: pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions | None = None,
    *,
    systems: pl.DataFrame | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> pl.LazyFrame: ...


def positions(
    run: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions | None = None,
    *,
    systems: pl.DataFrame | None = None,
    **kwargs: Unpack[PositionsKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """Build the positions frame of a run against its qrels (docs/definitions.md §1).

    Args:
        run: one row per retrieved document: system, query, doc, score (and rank).
        qrels: query, doc, relevance. A document is relevant when
            ``relevance >= threshold``.
        options: the :class:`~lexiframe.PositionsOptions` (threshold, depth, by, rank_by,
            docs, grades, judged, condensed, no_relevant, column names, partitions), each
            documented there.
        systems: the (by…, system) keys of every system to evaluate, in lexiframe's names
            (default: the run's): one without rows in ``run`` gets worst-case rows for every
            evaluated query, as a system that skipped them. For a run cut into groups of
            queries (as :mod:`lexiframe.spark` cuts it), where a group may lack a system or
            every system. An in-memory run only.
        **kwargs: the same options as keyword arguments, applied over ``options``, with
            the column names flat: ``system=``, ``query=``, ``doc=``, ``score=``, ``rank=``,
            ``relevance=`` (the caller's names of those columns).

    Returns:
        ``by…, system, query, positions: list[u32], n_rel: u32, n_ret: u32`` (plus
        ``depth: u32`` with ``depth=`` and the optional columns), a DataFrame for a
        DataFrame run and a LazyFrame for a LazyFrame.

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> run = pl.DataFrame({
        ...     "system": ["a", "a", "a", "b"], "query": ["q1"] * 4,
        ...     "doc": ["d1", "d2", "d3", "d3"], "score": [3.0, 2.0, 1.0, 5.0],
        ... })
        >>> qrels = pl.DataFrame({"query": ["q1", "q1"], "doc": ["d2", "d3"], "relevance": [1, 1]})
        >>> lf.positions(run, qrels).sort("system")
        shape: (2, 5)
        ┌────────┬───────┬───────────┬───────┬───────┐
        │ system ┆ query ┆ positions ┆ n_rel ┆ n_ret │
        │ ---    ┆ ---   ┆ ---       ┆ ---   ┆ ---   │
        │ str    ┆ str   ┆ list[u32] ┆ u32   ┆ u32   │
        ╞════════╪═══════╪═══════════╪═══════╪═══════╡
        │ a      ┆ q1    ┆ [2, 3]    ┆ 2     ┆ 3     │
        │ b      ┆ q1    ┆ [1]       ┆ 2     ┆ 1     │
        └────────┴───────┴───────────┴───────┴───────┘
    """
    options = PositionsOptions.of(options, **kwargs)
    names = options.columns
    run = run_frame(run, (names.system, names.query, names.doc, names.score))  # ranx, …
    qrels = qrels_frame(qrels, (names.query, names.doc, names.relevance))
    by, threshold, partitions = list(options.by), options.threshold, options.partitions
    validate.require_threshold(threshold)  # a level of 0 or below is said in a warning
    run_lf = _canonical_run(run, options)
    qrels_lf, qrels_keys = _canonical_qrels(qrels, names, by, run_lf)
    # Qrels are small next to runs: they are read once here and checked in full.
    qrels_lf = _checked_qrels(collect(qrels_lf), names).lazy()
    if systems is None and collect(run_lf.head(1)).height == 0:
        raise InputError("the run is empty: it has no rows, so there is nothing to evaluate")
    # The judgments whose grades gain: the relevant ones, and above threshold=1 every
    # positive grade (trec_eval's -l decides what is relevant, not what gains).
    gainful = qrels_lf.filter(pl.col("relevance") >= options.gain_level)
    grades = keeps_grades(gainful, qrels_keys, options.grades, names, threshold=threshold)
    request = _Request(options, qrels_keys, grades)
    gainful = qrels_lf.filter(pl.col("relevance") >= request.gain_level)
    every_query = qrels_lf if options.no_relevant == "keep" else None
    queries = _relevant_queries(
        gainful, qrels_keys, grades, judged=every_query, threshold=threshold
    )
    if request.judged:
        queries = _with_nonrel_counts(queries, qrels_lf, qrels_keys, threshold)
    judgments = qrels_lf if request.reads_every_judgment else gainful
    if isinstance(run, pl.LazyFrame):
        if systems is not None:
            raise InputError("systems= needs an in-memory run (a DataFrame), not a LazyFrame")
        return _streamed(run_lf, judgments, queries, request, partitions)

    # An in-memory run is checked for NaN scores and null ids in one cheap pass first.
    _check_values(run_lf, options)
    parts = _eager_rankings(run_lf, judgments, request, partitions)
    rankings_df = _checked(pl.concat(parts, how="diagonal"), run_lf, options)
    queries_df = collect(queries)
    warn_dropped(rankings_df, queries_df, by, qrels_keys, names, collect(qrels_lf))
    every = None
    if systems is not None:  # the systems of the whole run, when this is a part of it
        every = systems.lazy().select(*by, pl.col("system").cast(pl.String))
    return collect(_complete(rankings_df.lazy(), queries_df.lazy(), request, every))


def _streamed(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    queries: pl.LazyFrame,
    request: _Request,
    partitions: int | None,
) -> pl.LazyFrame:
    """The positions frame of a LazyFrame run: a source that, once collected, ranks one
    group of queries after another (:func:`_split`) and hands over each group's rows.

    Each group is collected, checked and completed before the next one starts, so that
    memory holds one group's intermediate tables: a plan concatenating the groups let the
    streaming engine run them side by side (6.9 GB peak for 200 million rows in 16 groups).
    Every system gets worst-case rows for the queries of a group it skipped: those of the
    groups before it was first seen come with the group where it is.
    """
    count = _partition_count(partitions, 0)
    judgments_df, queries_df = collect(judgments), collect(queries)  # small next to a run
    system_keys = [*request.by, "system"]
    schema = _complete(
        _rankings(run, judgments_df.lazy(), request, value_flags=True), queries_df.lazy(), request
    ).collect_schema()

    def groups() -> Iterator[pl.DataFrame]:
        seen = pl.DataFrame(schema={key: schema[key] for key in system_keys})
        done = queries_df.clear()
        for index in range(count):
            in_group = _in_group(count, index)
            plan = _rankings(
                run.filter(in_group),
                judgments_df.filter(in_group).lazy(),
                request,
                value_flags=True,
            )
            rankings = _checked(plan.collect(engine=GROUP_ENGINE), run, request.options)
            group_queries = queries_df.filter(in_group)
            new = rankings.select(system_keys).unique().join(seen, on=system_keys, how="anti")
            if new.height and done.height:
                skipped = _complete(rankings.clear().lazy(), done.lazy(), request, new.lazy())
                yield collect(skipped)
            seen = pl.concat([seen, new])
            yield collect(_complete(rankings.lazy(), group_queries.lazy(), request, seen.lazy()))
            done = pl.concat([done, group_queries])

    return lazy_frames(groups, schema, "lexiframe positions")


GROUP_ENGINE: Final = "streaming"
"""The engine that ranks each group of queries of a LazyFrame run."""


def _eager_rankings(
    run: pl.LazyFrame, judgments: pl.LazyFrame, request: _Request, partitions: int | None
) -> list[pl.DataFrame]:
    """The rankings of an in-memory run: grouped by slices where each ranking is one block
    of rows (:mod:`lexiframe._blocks`), by their keys in groups of queries elsewhere."""
    blocks = _blocks.number_blocks(collect(run), request.keys)
    parts = [
        collect(_rankings(blocks.run.lazy(), judgments, request, block_keys=blocks.keys.lazy()))
    ]
    if blocks.rest is not None:
        groups = _split(
            blocks.rest.lazy(), judgments, _partition_count(partitions, blocks.rest.height)
        )
        parts += [
            collect(_rankings(part, part_judgments, request)) for part, part_judgments in groups
        ]
    return parts


def _partition_count(partitions: int | None, rows: int) -> int:
    """``partitions`` (checked by :class:`PositionsOptions`), or chosen from the rows of an
    in-memory run when None (a LazyFrame counts as 0 rows: one group)."""
    return max(1, -(-rows // ROWS_PER_PARTITION)) if partitions is None else partitions


def _split(
    run: pl.LazyFrame, judgments: pl.LazyFrame, partitions: int
) -> list[tuple[pl.LazyFrame, pl.LazyFrame]]:
    """The run and its judgments (:func:`_rankings`) in ``partitions`` groups of queries (by
    a hash of the query id), to be ranked one group after another.

    Each group gets its judgments as a frame of its own: groups reading one shared
    in-memory frame were held in memory together by the streaming engine (9.4 GB instead
    of 5.9 GB for 200 million rows in 16 groups).
    """
    if partitions == 1:
        return [(run, judgments)]

    return [
        (
            run.filter(_in_group(partitions, i)),
            collect(judgments.filter(_in_group(partitions, i))).lazy(),
        )
        for i in range(partitions)
    ]


def _in_group(partitions: int, index: int) -> pl.Expr:
    """Whether a row's query falls in group ``index`` of ``partitions`` (a hash of its id)."""
    if partitions == 1:
        return pl.lit(True)
    return pl.col("query").hash(seed=0) % partitions == index


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
    names, by, threshold = options.columns, list(options.by), options.threshold
    run = run_frame(run, (names.system, names.query, names.doc, "score"))
    qrels = qrels_frame(qrels, (names.query, names.doc, names.relevance))
    run_lf = (
        run.lazy()
        .rename({names.system: "system", names.query: "query"})
        .select(*by, "system", "query")
        .unique()
    )
    qrels_lf, qrels_keys = _canonical_qrels(qrels, names, by, run_lf)
    judged = (
        qrels_lf.select(*qrels_keys, "relevance")
        .group_by(qrels_keys)
        .agg(has_relevant=(pl.col("relevance") >= threshold).any())
    )
    answered = run_lf.join(judged, on=qrels_keys, how="left")
    keep = options.no_relevant == "keep"
    relevant_queries = (judged if keep else judged.filter("has_relevant")).select(qrels_keys)
    systems = run_lf.select(*by, "system").unique()
    grid = _grid(systems, relevant_queries, by, qrels_keys)
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


def _canonical_run(run: pl.DataFrame | pl.LazyFrame, options: PositionsOptions) -> pl.LazyFrame:
    """Check the run's schema and give its columns lexiframe's names."""
    names, by = options.columns, list(options.by)
    if not isinstance(run, pl.DataFrame | pl.LazyFrame):
        raise TypeError(f"run must be a polars DataFrame or LazyFrame, not {type(run).__name__}")
    schema = run.collect_schema()
    order_column = options.order
    needed = [names.system, names.query, names.doc, order_column, *by]
    validate.require_columns(schema, needed, "run")
    validate.require_numeric(schema, order_column, "run")
    for column in (names.system, names.query, names.doc):
        validate.require_id_type(schema, column, "run")
    clashes = [key for key in by if key in ("system", "query", "doc", "order")]
    if clashes:
        raise InputError(f"by= keys {quote_names(clashes)} clash with lexiframe's own columns")
    return run.lazy().select(
        *by,
        pl.col(names.system).cast(pl.String).alias("system"),
        pl.col(names.query).alias("query"),
        pl.col(names.doc).alias("doc"),
        pl.col(order_column).cast(pl.Float64).alias("order"),
    )


def _canonical_qrels(
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


def _sort_keys(rank_by: RankBy, doc_dtype: pl.DataType) -> tuple[list[pl.Expr], list[bool]]:
    # trec_eval breaks score ties by document id descending, compared as strings.
    doc = pl.col("doc") if doc_dtype == pl.String else pl.col("doc").cast(pl.String)
    return [pl.col("order"), doc], [rank_by == "score", True]


def _rankings(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    request: _Request,
    *,
    value_flags: bool = False,
    block_keys: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per ranking of the run, with the ranks of its relevant documents.

    ``judgments`` are the relevant judgments, or every judgment when the request ranks
    judged non-relevant documents too or condenses the rankings
    (:attr:`_Request.reads_every_judgment`). A run numbered by
    :func:`lexiframe._blocks.number_blocks` is grouped by its blocks (and ``block_keys``
    gives each block its keys), other runs by their keys. The flag columns
    (:data:`DUPLICATE_FLAGS`, and :data:`VALUE_FLAGS` with ``value_flags``) let the caller
    reject duplicate documents, NaN scores and null ids without another pass over the run.
    """
    keys, descending = _sort_keys(request.rank_by, run.collect_schema()["doc"])
    flags = {
        "_n_rows": pl.len().cast(POSITION),
        "_n_docs": pl.col("doc").n_unique().cast(POSITION),
    }
    if value_flags:
        # nan_max is NaN only when a score is NaN; null counts flag null scores and ids.
        flags["_score_nan_max"] = pl.col("order").nan_max()
        flags["_null_scores"] = pl.col("order").null_count()
        flags["_null_ids"] = pl.col("doc").null_count()
    depth, with_docs = request.depth, request.docs
    n_ret = pl.len() if depth is None else pl.min_horizontal(pl.len(), pl.lit(depth))
    flags["n_ret"] = n_ret.cast(POSITION)
    marked, exact = _with_marks(
        run,
        judgments,
        request.qrels_keys,
        keep_order=block_keys is not None,
        grades=request.grades or request.reads_every_judgment,
    )
    mark = pl.col("_mark")
    ranks = (mark.sort_by(keys, descending=descending).arg_true() + 1).cast(POSITION)
    # The marked rows alone, sorted by the same keys: in the order of ``ranks``.
    marked_keys = [key.filter(mark) for key in keys]
    marked_docs = pl.col("doc").filter(mark).sort_by(marked_keys, descending=descending)
    if not exact:
        columns = {**flags, "_ranks": ranks, "_docs": marked_docs}
        return _graded_marks(_grouped(marked, columns, request, block_keys), judgments, request)
    if request.reads_every_judgment or request.gains_below_threshold:
        # Each row has its grade (null where not judged).
        grade = pl.col("_grade").sort_by(keys, descending=descending)
        doc = pl.col("doc").sort_by(keys, descending=descending)
        if depth is not None:
            grade, doc = grade.head(depth), doc.head(depth)
        columns = {**flags, **_graded_lists(grade, doc, None, request)}
        return _grouped(marked, columns, request, block_keys)

    # The relevant documents alone, marked exactly: one sort of the marks, then the few
    # marked rows in their order.
    columns = {"positions": ranks, **flags}
    lists = ["positions"]
    if with_docs:
        columns["docs"] = marked_docs
        lists.append("docs")
    if request.grades:
        columns["grades"] = (
            pl.col("_grade").filter(mark).sort_by(marked_keys, descending=descending)
        )
        lists.append("grades")
    rankings = _grouped(marked, columns, request, block_keys)
    if depth is not None:
        # Positions ascend: the ones within the depth are a prefix of the list.
        kept = pl.col("positions").list.eval((pl.element() <= depth).sum()).list.first()
        rankings = rankings.with_columns(pl.col(lists).list.head(kept))
    return rankings


def _grouped(
    rows: pl.LazyFrame,
    columns: dict[str, pl.Expr],
    request: _Request,
    block_keys: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """``columns`` aggregated per ranking: per block of rows when ``block_keys`` number
    them (:mod:`lexiframe._blocks`), else per ranking keys."""
    if block_keys is None:
        return rows.group_by(request.keys).agg(**columns)
    block = pl.col(_blocks.BLOCK)
    return (
        rows.with_columns(block.set_sorted())  # a join kept the order, not the flag
        .group_by(block)
        .agg(**columns)
        .join(block_keys, on=_blocks.BLOCK)
        .drop(_blocks.BLOCK)
    )


def _graded_marks(
    rankings: pl.LazyFrame, judgments: pl.LazyFrame, request: _Request
) -> pl.LazyFrame:
    """The lists of :func:`_graded_lists` from the marked documents of each ranking.

    ``_ranks`` and ``_docs`` hold the ranks and ids of the documents that ``judgments``
    judge for some query (a hash-set probe per row, as :func:`_with_marks` explains):
    exploded, cut at ``depth`` and joined to the judgments of their own query, they bring
    their grades, and come back as lists in rank order. A ranking left without a judged
    document gets nulls, which :func:`_complete` turns into empty lists (and ``n_ret`` 0
    for a condensed ranking).
    """
    keys, qrels_keys = request.keys, request.qrels_keys
    marked = rankings.select(*keys, "_ranks", "_docs").explode("_ranks", "_docs")
    if request.depth is not None:
        marked = marked.filter(pl.col("_ranks") <= request.depth)
    grades = judgments.select(*qrels_keys, _docs="doc", _grade="relevance")
    graded = marked.join(grades, on=[*qrels_keys, "_docs"], how="inner")
    grade, doc = (pl.col(name).sort_by("_ranks") for name in ("_grade", "_docs"))
    lists = graded.group_by(keys).agg(**_graded_lists(grade, doc, pl.col("_ranks").sort(), request))
    own = ["_ranks", "_docs", *(["n_ret"] if request.condensed else [])]
    return rankings.drop(own).join(lists, on=keys, how="left")


def _graded_lists(
    grade: pl.Expr, doc: pl.Expr, rank: pl.Expr | None, request: _Request
) -> dict[str, pl.Expr]:
    """The lists of a ranking from the grades of its documents in rank order, cut at
    ``depth`` (null where unjudged) and their ranks (``None``: 1, 2, …).

    ``condensed`` keeps the judged documents (a grade of 0 or more, as trec_eval's ``-J``),
    which take ranks 1, 2, … among themselves and give ``n_ret``. A grade at or above the
    threshold is relevant, one from 0 to below it is judged non-relevant, and a negative
    one marks a pooled document left unassessed.
    """
    columns = {}
    if request.condensed:
        judged = grade >= 0  # null (unjudged) is not kept
        grade, doc, rank = grade.filter(judged), doc.filter(judged), None
        columns["n_ret"] = grade.len().cast(POSITION)

    def ranks_where(mask: pl.Expr) -> pl.Expr:
        if rank is None:  # the documents are all there: their ranks are their places
            return (mask.arg_true() + 1).cast(POSITION)
        return rank.filter(mask)

    relevant = grade >= request.threshold
    columns["positions"] = ranks_where(relevant)
    if request.docs:
        columns["docs"] = doc.filter(relevant)
    if request.grades:
        gainful = grade >= request.gain_level
        columns["grades"] = grade.filter(gainful)
        if request.gains_below_threshold:
            columns["gain_positions"] = ranks_where(gainful)
    if request.judged:
        columns["nonrel_positions"] = ranks_where((grade >= 0) & (grade < request.threshold))
        columns["pooled_positions"] = ranks_where(grade < 0)
    return columns


ROWS_PER_PARTITION = 4_000_000
"""Rows of an in-memory run per group of queries when ``partitions`` is left to choose."""

MAX_JUDGMENTS_PER_DOC = 4
"""Above this many queries judging one document, mark rows by a (query, doc) join."""


def _with_marks(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    qrels_keys: list[str],
    *,
    keep_order: bool,
    grades: bool,
) -> tuple[pl.LazyFrame, bool]:
    """The run with ``_mark``, a boolean per row, and whether the mark is exact.

    TREC documents are judged for one query or a few: a row is then marked when its
    document is judged for *some* query, one hash-set probe per row (a fifth of the cost of
    a join), and :func:`_graded_marks` joins the marked rows, a few per ranking, to the
    judgments of their own query once the rankings are built. Catalogue items of a
    recommender are judged for many users, so that most rows would be marked: then the
    mark is exact, by a join on (query, doc), which ``keep_order`` keeps in row order, and
    with ``grades`` the join brings each judged row's grade as ``_grade``.
    """
    fanout = collect(judgments.group_by("doc").len().select(pl.col("len").max())).item()
    if fanout is not None and fanout > MAX_JUDGMENTS_PER_DOC:
        grade = [pl.col("relevance").alias("_grade")] if grades else []
        marks = judgments.select(*qrels_keys, "doc", *grade, _mark=pl.lit(True))
        order: Literal["left"] | None = "left" if keep_order else None
        marked = run.join(marks, on=[*qrels_keys, "doc"], how="left", maintain_order=order)
        return marked.with_columns(pl.col("_mark").fill_null(False)), True
    judged_docs = collect(judgments.select(pl.col("doc").unique())).to_series()
    return run.with_columns(_mark=pl.col("doc").is_in(judged_docs.implode())), False


def keeps_grades(
    relevant: pl.LazyFrame,
    qrels_keys: list[str],
    grades: bool | None,
    names: ColumnNames | None = None,
    *,
    threshold: int = PositionsOptions.threshold,
) -> bool:
    """Whether the positions frame keeps the grade columns: asked for (``grades=True``), or
    needed by graded qrels (``grades=None``); ``grades=False`` on graded qrels is refused.

    Gains that are equal within every query give graded nDCG and RBP their binary values,
    so grades are needed only where a query's relevant documents differ in grade, or,
    above ``threshold=1``, where a document graded below the threshold gains (as in
    trec_eval's ``-l``, every positive grade gains at any level).
    ``relevant``: the judgments that gain (graded at least
    :attr:`PositionsOptions.gain_level`) in lexiframe's names (``qrels_keys``,
    ``relevance``); one row per (query, distinct grade) is enough, which is what
    :mod:`lexiframe.spark` sends.

    Example:
        >>> import polars as pl
        >>> relevant = pl.LazyFrame({"query": ["q1", "q1"], "relevance": [1, 2]})
        >>> keeps_grades(relevant, ["query"], None)
        True
    """
    names = names or ColumnNames()
    if grades:
        return True
    if threshold > 1:
        below = collect(relevant.filter(pl.col("relevance") < threshold).head(1))
        if below.height and grades is None:
            return True
        if below.height:
            raise InputError(
                f"grades=False, but at threshold={threshold} the qrels hold documents of "
                f"grade {below['relevance'][0]} ({names.query}={below['query'][0]!r}), which "
                f"gain in nDCG, G and RBP as in trec_eval -l {threshold}: leave grades= unset "
                "to keep their gains, or binarise the qrels first to evaluate binary "
                "relevance everywhere, e.g. "
                f"qrels.with_columns(pl.col({names.relevance!r}).ge({threshold}).cast(pl.Int64))"
            )
    if collect(relevant.select(pl.col("relevance").n_unique())).item() < 2:
        return False  # one relevant grade in all the qrels: a pass without grouping
    mixed = collect(
        relevant.group_by(qrels_keys)
        .agg(pl.col("relevance").unique().sort().head(2).alias("_grades"))
        .filter(pl.col("_grades").list.len() > 1)
        .sort(qrels_keys)
        .head(1)
    )
    if grades is None or mixed.height == 0:
        return mixed.height > 0
    example = mixed.row(0, named=True)
    low, high = example["_grades"]
    levels = collect(relevant.select(pl.col("relevance").unique().sort())).to_series()
    raise InputError(
        f"grades=False, but the qrels are graded ({names.query}={example['query']!r} has "
        f"relevant documents of grades {low} and {high}): nDCG and RBP on this frame would "
        "lose trec_eval's graded values. Leave grades= unset to keep them (binary nDCG is "
        f"then {binary_ndcg(levels.to_list())}, beside the graded measures), or binarise the "
        "qrels first to evaluate binary relevance everywhere, e.g. "
        f"qrels.with_columns(pl.col({names.relevance!r}).ge(1).cast(pl.Int64))"
    )


def binary_ndcg(grades: list[int]) -> str:
    """The name of binary nDCG on qrels with these relevant grades: each gains 1.

    Example:
        >>> binary_ndcg([1, 2, 3])
        'nDCG(gains={1: 1, 2: 1, 3: 1})'
    """
    return "nDCG(gains={" + ", ".join(f"{grade}: 1" for grade in grades) + "})"


def _relevant_queries(
    relevant: pl.LazyFrame,
    qrels_keys: list[str],
    grades: bool,
    *,
    judged: pl.LazyFrame | None = None,
    threshold: int = PositionsOptions.threshold,
) -> pl.LazyFrame:
    """The evaluated queries, with n_rel (and the ideal grades): those with at least one
    relevant document, or every query of ``judged`` (n_rel = 0 for some) when given.

    ``relevant``: the judgments whose grades gain (:attr:`_Request.gain_level`), the
    relevant ones and above threshold=1 with ``grades`` every positive grade, which
    ``ideal_grades`` holds; ``n_rel`` counts the relevant ones."""
    grade = pl.col("relevance")
    is_relevant = grade >= threshold
    columns = {"n_rel": is_relevant.sum().cast(POSITION)}
    if judged is not None:
        if grades:
            gains = grade >= min(threshold, 1)
            columns["ideal_grades"] = grade.filter(gains).sort(descending=True)
        return judged.group_by(qrels_keys).agg(**columns)
    if grades:
        columns["ideal_grades"] = grade.sort(descending=True)
    found = relevant.group_by(qrels_keys).agg(**columns)
    return found.filter(pl.col("n_rel") > 0) if grades and threshold > 1 else found


def _with_nonrel_counts(
    queries: pl.LazyFrame, qrels: pl.LazyFrame, qrels_keys: list[str], threshold: int
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


def _grid(
    systems: pl.LazyFrame, queries: pl.LazyFrame, by: list[str], qrels_keys: list[str]
) -> pl.LazyFrame:
    """Every (by…, system) paired with every query it must be evaluated on."""
    shared = [key for key in by if key in qrels_keys]
    if shared:
        return systems.join(queries, on=shared, how="inner")
    return systems.join(queries, how="cross")


def _complete(
    rankings: pl.LazyFrame,
    queries: pl.LazyFrame,
    request: _Request,
    systems: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Give every system (of ``rankings``, or ``systems``) a row for every query with a
    relevant document (worst case if none)."""
    by = request.by
    if systems is None:
        systems = rankings.select(*by, "system").unique()
    grid = _grid(systems, queries, by, request.qrels_keys)
    found = rankings.drop(DUPLICATE_FLAGS, *VALUE_FLAGS, strict=False)
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
    # The depth= of the frame travels with it: a skipped query's ASL is scored at it.
    depth = [] if request.depth is None else [pl.lit(request.depth, dtype=POSITION).alias("depth")]
    return (
        grid.join(found, on=request.keys, how="left")
        .with_columns(filled)
        .select(*request.keys, "positions", "n_rel", "n_ret", *depth, *optional)
    )


def _check_values(run: pl.LazyFrame, options: PositionsOptions) -> None:
    """Raise on the first row with a null id, or a NaN or null score (one pass, no grouping)."""
    by = list(options.by)
    flags = (
        pl.col("order").is_nan() | pl.col("order").is_null(),
        pl.col("doc").is_null(),
        _null_key(by),
    )
    if not collect(run.select(pl.any_horizontal(flags).any())).item():
        return
    bad = collect(
        run.filter(pl.any_horizontal(flags))
        .with_columns(_bad_scores=flags[0], _null_ids=flags[1])
        .sort(*by, *KEYS, nulls_last=False)
        .head(1)
    ).row(0, named=True)
    _raise_for(bad, run, options)


def _checked(rankings: pl.DataFrame, run: pl.LazyFrame, options: PositionsOptions) -> pl.DataFrame:
    """Raise on the first ranking with duplicate documents, NaN scores or null ids."""
    by = list(options.by)
    value_flags = "_score_nan_max" in rankings.columns
    bad_scores = (
        pl.col("_score_nan_max").is_nan() | (pl.col("_null_scores") > 0)
        if value_flags
        else pl.lit(False)
    )
    null_ids = (pl.col("_null_ids") > 0) if value_flags else pl.lit(False)
    bad = rankings.with_columns(_bad_scores=bad_scores, _null_ids=null_ids).filter(
        (pl.col("_n_docs") != pl.col("_n_rows"))
        | pl.col("_bad_scores")
        | pl.col("_null_ids")
        | _null_key(by)
    )
    if bad.height:
        _raise_for(bad.sort(*by, *KEYS).row(0, named=True), run, options)
    return rankings


def _null_key(by: list[str]) -> pl.Expr:
    """Whether a row (or ranking) has a null key: its rows would match no query row."""
    return pl.any_horizontal(pl.col(key).is_null() for key in [*by, *KEYS])


def _raise_for(first: dict, run: pl.LazyFrame, options: PositionsOptions) -> None:
    """Raise the error for a bad ranking or row (``first`` holds its keys and flags)."""
    by = list(options.by)
    null_key = next((key for key in [*KEYS, *by] if first[key] is None), None)
    if null_key is not None:
        validate.raise_null_key(run, null_key, _message_names(options))
    problem = {key: first[key] for key in [*by, *KEYS]}
    problem.update(_bad_scores=first["_bad_scores"], _null_ids=first["_null_ids"])
    validate.raise_ranking_problem(run, problem, _message_names(options))


def _message_names(options: PositionsOptions) -> dict[str, str]:
    names = options.columns
    return {
        "system": names.system,
        "query": names.query,
        "doc": names.doc,
        "score": names.score,
        "order": options.order,
    }


def _checked_qrels(qrels: pl.DataFrame, names: ColumnNames) -> pl.DataFrame:
    """Reject qrels with null values or a document judged twice for one query."""
    caller = {"query": names.query, "doc": names.doc, "relevance": names.relevance}
    for column in qrels.columns:
        if qrels[column].null_count():
            nulls = qrels.filter(pl.col(column).is_null())
            name = caller.get(column, column)
            raise InputError(
                f"null value in column {name!r} of the qrels ({nulls.height} rows); every "
                f"judgment needs a query, a doc and a grade; example: "
                f"{format_row(nulls.rename(caller).row(0, named=True))}"
            )
    keys = [name for name in qrels.columns if name != "relevance"]
    if _strictly_increasing(qrels, keys):  # sorted qrels: no key can repeat
        return qrels
    repeated = collect(qrels.lazy().group_by(keys).len().filter(pl.col("len") > 1).drop("len"))
    if repeated.height:
        first = repeated.sort(keys).head(1)
        dups = qrels.join(first, on=keys, how="semi").head(2)
        example = "; ".join(format_row(row) for row in dups.rename(caller).iter_rows(named=True))
        raise InputError(
            "duplicate (query, doc) rows in the qrels: a document is judged twice for one "
            f"query; keep one judgment per document; example: {example}"
        )
    return qrels


def _strictly_increasing(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Whether every row's ``keys`` come strictly after the previous row's, compared in
    order (a few comparisons per row, where finding repeated keys hashes every row)."""
    later = pl.lit(False)
    equal = pl.lit(True)
    for key in keys:
        column, previous = pl.col(key), pl.col(key).shift()
        later = later | (equal & (column > previous))
        equal = equal & (column == previous)
    return frame.select(later.fill_null(True).all()).item()  # the first row has no previous


def warn_dropped(
    rankings: pl.DataFrame,
    queries: pl.DataFrame,
    by: list[str],
    qrels_keys: list[str],
    names: ColumnNames,
    judged: pl.DataFrame | None = None,
) -> None:
    """Warn with the counts of the run's queries that are not evaluated: those the qrels do
    not know (``judged``: the query keys of the qrels) and those they judge without a
    relevant document (the batched reader warns once for all its batches with it).

    Example:
        >>> import warnings
        >>> ranked = pl.DataFrame({"query": ["q1", "q2"]})
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_dropped(ranked, ranked.head(1), [], ["query"], ColumnNames())
        >>> str(caught[0].message).split(":")[0]
        '1 query of the run is not evaluated'
    """
    dropped = rankings.select(qrels_keys).unique().join(queries, on=qrels_keys, how="anti")
    if dropped.height == 0:
        return
    if judged is None:
        unknown = dropped.clear()
    else:
        unknown = dropped.join(judged.select(qrels_keys).unique(), on=qrels_keys, how="anti")
    reasons = []
    for part, why in (
        (unknown, "not in the qrels"),
        (dropped.join(unknown, on=qrels_keys, how="anti"), "without a relevant document"),
    ):
        if part.height:
            # An id is shortened: a note stays short whatever the data (a 1 MB query id).
            examples = ", ".join(
                shorten(repr(str(e)), 60) for e in part.sort(qrels_keys).head(3)["query"]
            )
            reasons.append(f"{part.height} {why} (e.g. {names.query}={examples})")
    warnings.warn(
        DroppedQueriesWarning(
            f"{plural(dropped.height, 'query', 'queries')} of the run "
            f"{'is' if dropped.height == 1 else 'are'} not evaluated: {'; '.join(reasons)}.",
            kind="dropped queries",
            hint=" lexiframe.coverage(run, qrels) counts them per system.",
            cli_hint="",
        ),
        stacklevel=caller_stacklevel(),
    )
