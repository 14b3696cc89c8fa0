"""The rankings of a run as lists: each (by…, system, query) ranked by trec_eval's rule
and cut at ``depth``, with the ranks of its relevant documents, its grades and judged
documents as the options ask (the columns of the positions frame)."""

from __future__ import annotations

from typing import Literal, NamedTuple

import polars as pl

from lexiframe import _blocks
from lexiframe._compat import collect
from lexiframe.ranking._request import POSITION, TIE_RANK, Request


def _sort_keys(request: Request, schema: pl.Schema) -> tuple[list[pl.Expr], list[bool]]:
    # trec_eval breaks score ties by document id descending, compared as strings; the run's
    # ranks come first when they break ties (ties="rank").
    doc = pl.col("doc") if schema["doc"] == pl.String else pl.col("doc").cast(pl.String)
    keys, descending = [pl.col("order")], [request.rank_by == "score"]
    if TIE_RANK in schema:
        keys, descending = [*keys, pl.col(TIE_RANK)], [*descending, False]
    return [*keys, doc], [*descending, True]


def ranked_lists(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    request: Request,
    *,
    value_flags: bool = False,
    block_keys: pl.LazyFrame | None = None,
    judged: JudgedDocuments | None = None,
    in_order: bool = False,
    top: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per ranking of the run, with the ranks of its relevant documents (and its
    tie groups, :func:`tie_groups`, under ``ties="expected"``).

    ``judgments`` are the relevant judgments, or every judgment when the request ranks
    judged non-relevant documents too or condenses the rankings
    (:attr:`Request.reads_every_judgment`). A run numbered by
    :func:`lexiframe._blocks.number_blocks` is grouped by its blocks (and ``block_keys``
    gives each block its keys), other runs by their keys. The flag columns
    (:data:`DUPLICATE_FLAGS`, and :data:`VALUE_FLAGS` with ``value_flags``) let the caller
    reject duplicate documents, NaN scores and null ids without another pass over the run.
    With by= keys that only the qrels carry (:attr:`Request.crossed`: several qrels sets),
    the run's rankings are ranked once and crossed with the sets (:func:`_graded_marks`).
    ``judged``: :func:`judged_documents` of ``judgments``, when the caller has them.
    ``in_order``: the blocks list their documents in rank order already
    (:func:`in_rank_order`), so that they need no sort. ``top``: the first rows of each
    of those blocks, as deep as the caller reads (:func:`stops_at_reach`): they alone are
    marked and listed, while the checks' flags and ``n_ret`` count every row of ``run``.
    """
    in_order = in_order and block_keys is not None  # blocks keep their rows' order
    if not in_order:
        top = None
    rankings = _rankings(run, judgments, request, value_flags, block_keys, judged, in_order, top)
    if request.options.ties != "expected":
        return rankings
    return rankings.join(tie_groups(run, judgments, request), on=request.keys, how="left")


def tie_groups(run: pl.LazyFrame, judgments: pl.LazyFrame, request: Request) -> pl.LazyFrame:
    """The tie groups of two or more documents of each ranking, in rank order: ``tie_starts``,
    how many documents rank above each group, and ``tie_sizes``, its size.

    A group is the documents of one ``order`` value (the score at the precision the
    ``compat`` setting ranks by, or the rank). Condensed rankings (``condensed``) are those
    of the judged documents, so their groups are formed among those alone.

    Example:
        >>> import polars as pl
        >>> from lexiframe.options import PositionsOptions
        >>> from lexiframe.ranking._request import Request
        >>> run = pl.LazyFrame({"system": "a", "query": "q", "doc": ["d1", "d2", "d3", "d4"],
        ...                     "order": [3.0, 2.0, 2.0, 1.0]})
        >>> request = Request(PositionsOptions(ties="expected"), ["query"], False)
        >>> tie_groups(run, pl.LazyFrame(), request).collect().row(0)
        ('a', 'q', [1], [2])
    """
    keys = request.keys
    if request.condensed:
        judged = judgments.filter(pl.col("relevance") >= 0).select(*request.qrels_keys, "doc")
        run = run.join(judged, on=[*request.qrels_keys, "doc"], how="semi")
    # The runs of equal values of each ranking's sorted order are its groups, alone or tied.
    best_first = pl.col("order").sort(descending=request.rank_by == "score")
    sizes = run.group_by(keys).agg(_sizes=best_first.rle().struct.field("len").cast(POSITION))
    size = pl.col("_sizes")
    tied = size.list.eval(pl.arg_where(pl.element() > 1))
    return sizes.select(
        *keys,
        tie_starts=size.list.eval(pl.element().cum_sum() - pl.element()).list.gather(tied),
        tie_sizes=size.list.gather(tied),
    )


def _rankings(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    request: Request,
    value_flags: bool,
    block_keys: pl.LazyFrame | None,
    judged: JudgedDocuments | None,
    in_order: bool,
    top: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """:func:`ranked_lists` without the tie groups."""
    keys, descending = _sort_keys(request, run.collect_schema())

    def ranked(values: pl.Expr, by: list[pl.Expr] = keys) -> pl.Expr:
        """``values`` of a ranking in rank order: as they come, when they come so."""
        return values if in_order else values.sort_by(by, descending=descending)

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
        run if top is None else top,
        judgments,
        request.qrels_keys,
        keep_order=block_keys is not None,
        grades=request.grades or request.reads_every_judgment,
        crossed=request.crossed_keys,
        judged=judged,
    )
    mark = pl.col("_mark")
    ranks = (ranked(mark).arg_true() + 1).cast(POSITION)
    # The marked rows alone, sorted by the same keys: in the order of ``ranks``.
    marked_keys = [key.filter(mark) for key in keys]
    marked_docs = ranked(pl.col("doc").filter(mark), marked_keys)

    def grouped(columns: dict[str, pl.Expr]) -> pl.LazyFrame:
        if top is None:
            return _grouped(marked, columns, request, block_keys)
        assert block_keys is not None  # top rows are those of blocks
        return _grouped_apart(run, marked, columns, list(flags), block_keys)

    if not exact:
        columns = {**flags, "_ranks": ranks, "_docs": marked_docs}
        return _graded_marks(grouped(columns), judgments, request)
    if request.reads_every_judgment or request.gains_below_threshold:
        # Each row has its grade (null where not judged).
        grade, doc = ranked(pl.col("_grade")), ranked(pl.col("doc"))
        if depth is not None:
            grade, doc = grade.head(depth), doc.head(depth)
        columns = {**flags, **_graded_lists(grade, doc, None, request)}
        return grouped(columns)

    # The relevant documents alone, marked exactly: one sort of the marks, then the few
    # marked rows in their order.
    columns = {"positions": ranks, **flags}
    lists = ["positions"]
    if with_docs:
        columns["docs"] = marked_docs
        lists.append("docs")
    if request.grades:
        columns["grades"] = ranked(pl.col("_grade").filter(mark), marked_keys)
        lists.append("grades")
    rankings = grouped(columns)
    if depth is not None:
        # Positions ascend: the ones within the depth are a prefix of the list.
        kept = pl.col("positions").list.eval((pl.element() <= depth).sum()).list.first()
        rankings = rankings.with_columns(pl.col(lists).list.head(kept))
    return rankings


def in_rank_order(run: pl.DataFrame, request: Request) -> bool:
    """Whether every block of ``run`` (:func:`lexiframe._blocks.number_blocks`) lists its
    documents in trec_eval's order already: ``order`` descending (ascending when ranked by
    the run's ranks), then the run's ranks where they break ties, then the document id
    descending as a string. TREC runs are written so, and a ranking that is needs no sort.
    A null or NaN order, or a null id, says no (the sort and the checks deal with them).

    Example:
        >>> from lexiframe.options import PositionsOptions
        >>> request = Request(PositionsOptions(), ["query"], False)
        >>> run = pl.DataFrame({"_block": [0, 0, 0], "order": [2.0, 1.0, 1.0],
        ...                     "doc": [5, 9, 10]})
        >>> in_rank_order(run, request)  # a tie: "9" before "10", descending as strings
        True
        >>> in_rank_order(run.with_columns(doc=pl.Series([5, 10, 9])), request)
        False
    """
    order, doc = run["order"], run["doc"]
    if order.null_count() or doc.null_count() or (order.dtype.is_float() and order.is_nan().any()):
        return False
    block = pl.col(_blocks.BLOCK)
    columns = [("order", request.rank_by == "score")]
    columns += [(TIE_RANK, False)] if TIE_RANK in run.columns else []
    steps = run.lazy().with_columns(
        (block == block.shift()).fill_null(False).alias("_same"),
        _blocks.order_step(columns),
        pl.col("doc").shift().alias("_previous"),
    )
    # Ties compare their ids as strings, cast for the tied rows alone; one query, so that
    # no column of the comparison is materialised (a third of the time on 20 million rows).
    tie = pl.col("_same") & (pl.col("_step") == 0)
    previous, current = pl.col("_previous").filter(tie), pl.col("doc").filter(tie)
    found = collect(
        steps.select(
            # A row before the one above it, or a null rank it cannot place: the sort decides.
            back=(pl.col("_same") & (pl.col("_step") < 0).fill_null(True)).any(),
            tie_back=(previous.cast(pl.String) < current.cast(pl.String)).any(),
        )
    )
    return not (found["back"].item() or found["tie_back"].item())


def _grouped(
    rows: pl.LazyFrame,
    columns: dict[str, pl.Expr],
    request: Request,
    block_keys: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """``columns`` aggregated per ranking of the run: per block of rows when ``block_keys``
    number them (:mod:`lexiframe._blocks`), else per ranking keys."""
    if block_keys is None:
        return rows.group_by(request.run_keys).agg(**columns)
    block = pl.col(_blocks.BLOCK)
    return (
        rows.with_columns(block.set_sorted())  # a join kept the order, not the flag
        .group_by(block)
        .agg(**columns)
        .join(block_keys, on=_blocks.BLOCK)
        .drop(_blocks.BLOCK)
    )


def _grouped_apart(
    every_row: pl.LazyFrame,
    top: pl.LazyFrame,
    columns: dict[str, pl.Expr],
    flags: list[str],
    block_keys: pl.LazyFrame,
) -> pl.LazyFrame:
    """:func:`_grouped` of ``columns`` per block, the ``flags`` among them over every row
    of each block and the others over its ``top`` rows (:func:`ranked_lists`), in the
    same columns and order."""
    block = pl.col(_blocks.BLOCK)
    of_flags = {name: expr for name, expr in columns.items() if name in flags}
    of_lists = {name: expr for name, expr in columns.items() if name not in flags}
    counted = every_row.with_columns(block.set_sorted()).group_by(block).agg(**of_flags)
    listed = top.with_columns(block.set_sorted()).group_by(block).agg(**of_lists)
    keys = [name for name in block_keys.collect_schema().names() if name != _blocks.BLOCK]
    # Every block has a first row, so that both sides hold every block.
    return (
        counted.join(listed, on=_blocks.BLOCK)
        .join(block_keys, on=_blocks.BLOCK)
        .select(*columns, *keys)
    )


def stops_at_reach(request: Request) -> bool:
    """Whether the lists of ``request`` may stop at the deepest rank the caller reads
    (:func:`lexiframe.positions`' ``reach``): not where a document below it still counts,
    a tie group (``ties="expected"``) or a condensed ranking of the judged documents
    alone, nor where the lists hold more than the relevant documents (judged ones,
    gains below the threshold) or are crossed with qrels sets.

    Example:
        >>> from lexiframe.options import PositionsOptions
        >>> stops_at_reach(Request(PositionsOptions(), ["query"], False))
        True
        >>> stops_at_reach(Request(PositionsOptions(ties="expected"), ["query"], False))
        False
    """
    return not (
        request.options.ties == "expected"
        or request.condensed
        or request.judged
        or request.reads_every_judgment
        or request.gains_below_threshold
        or request.crossed is not None
    )


def _graded_marks(
    rankings: pl.LazyFrame, judgments: pl.LazyFrame, request: Request
) -> pl.LazyFrame:
    """The lists of :func:`_graded_lists` from the marked documents of each ranking.

    ``_ranks`` and ``_docs`` hold the ranks and ids of the documents that ``judgments``
    judge for some query (a hash-set probe per row, as :func:`_with_marks` explains):
    exploded, cut at ``depth`` and joined to the judgments of their own query, they bring
    their grades, and come back as lists in rank order. A ranking left without a judged
    document gets nulls, which :func:`complete_rows` turns into empty lists (and ``n_ret`` 0
    for a condensed ranking).

    With by= keys that only the qrels carry (:attr:`Request.crossed`: several qrels sets),
    each ranking of the run was ranked once: its marked documents are joined to the
    judgments of every set, and the ranking is crossed with the sets' names.
    """
    keys, qrels_keys, crossed = request.keys, request.qrels_keys, request.crossed
    marked = rankings.select(*request.run_keys, "_ranks", "_docs").explode("_ranks", "_docs")
    if request.depth is not None:
        marked = marked.filter(pl.col("_ranks") <= request.depth)
    grades = judgments.select(*qrels_keys, _docs="doc", _grade="relevance")
    shared = [key for key in qrels_keys if key not in request.crossed_keys]
    # The marked rows come in rank order within each ranking, and the join and the
    # group-by keep it: the lists need no sort.
    graded = marked.join(grades, on=[*shared, "_docs"], how="inner", maintain_order="left")
    columns = _graded_lists(pl.col("_grade"), pl.col("_docs"), pl.col("_ranks"), request)
    lists = graded.group_by(keys).agg(**columns)
    own = ["_ranks", "_docs", *(["n_ret"] if request.condensed else [])]
    rankings = rankings.drop(own)
    if crossed is not None:
        rankings = crossed.lazy().join(rankings, how="cross")
    return rankings.join(lists, on=keys, how="left")


def _graded_lists(
    grade: pl.Expr, doc: pl.Expr, rank: pl.Expr | None, request: Request
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


MAX_JUDGMENTS_PER_DOC = 4
"""Above this many queries judging each judged document on average, mark rows by a
(query, doc) join."""


def marks_exactly(judgments: pl.LazyFrame, crossed: list[str]) -> bool:
    """Whether :func:`_with_marks` marks the run's rows by a join on (query, doc): when the
    judged documents are judged for more than :data:`MAX_JUDGMENTS_PER_DOC` queries on
    average (in one qrels set, ``crossed`` naming the sets), as a recommender's items are.
    TREC's pooled qrels judge a few documents for several topics, and most for one: the
    probe handles them at a fraction of the join's cost.

    Example:
        >>> marks_exactly(pl.LazyFrame({"query": ["q1", "q2"], "doc": ["d1", "d1"]}), [])
        False
    """
    return _fans_out(judged_documents(judgments, crossed).fanout)


class JudgedDocuments(NamedTuple):
    """The documents judged for some query, as hashes of their ids (:data:`ID_HASH`), and
    the mean number of queries (of one qrels set) that judge each."""

    hashes: pl.Series
    fanout: float | None


ID_HASH = pl.col("doc").hash(seed=0)
"""A document id's 64-bit hash: the run's rows are probed with it (:func:`_with_marks`)."""


def judged_documents(judgments: pl.LazyFrame, crossed: list[str]) -> JudgedDocuments:
    """The documents ``judgments`` judge and their fanout, in one group-by (pooled qrels
    of a real track hold over 100,000 judgments: a caller ranking many batches against
    them computes this once, :mod:`lexiframe.ranking.prepared`).

    Example:
        >>> found = judged_documents(pl.LazyFrame({"query": ["q1", "q2"], "doc": ["d1", "d1"]}), [])
        >>> len(found.hashes), found.fanout
        (1, 2.0)
    """
    per_doc = collect(judgments.group_by(*crossed, "doc").len())
    fanout = per_doc["len"].mean()
    hashes = per_doc.select(ID_HASH.unique() if crossed else ID_HASH).to_series()
    return JudgedDocuments(hashes, fanout)  # type: ignore[arg-type]


def _fans_out(fanout: float | None) -> bool:
    """Whether documents judged for ``fanout`` queries on average call for the join."""
    return fanout is not None and fanout > MAX_JUDGMENTS_PER_DOC


def _with_marks(
    run: pl.LazyFrame,
    judgments: pl.LazyFrame,
    qrels_keys: list[str],
    *,
    keep_order: bool,
    grades: bool,
    crossed: list[str],
    judged: JudgedDocuments | None,
) -> tuple[pl.LazyFrame, bool]:
    """The run with ``_mark``, a boolean per row, and whether the mark is exact.

    TREC documents are judged for one query or a few: a row is then marked when its
    document is judged for *some* query, one probe of its id's hash per row (a fifth of the
    cost of a join), and :func:`_graded_marks` joins the marked rows, a few per ranking, to the
    judgments of their own query once the rankings are built. Catalogue items of a
    recommender are judged for many users, so that most rows would be marked: then the
    mark is exact, by a join on (query, doc), which ``keep_order`` keeps in row order, and
    with ``grades`` the join brings each judged row's grade as ``_grade``. A run whose
    rankings are crossed with qrels sets afterwards (``crossed``) is marked by the probe:
    :func:`lexiframe.positions` crosses the run itself where the join is needed.
    ``judged``: :func:`judged_documents` of ``judgments`` (None: computed here).
    """
    judged_hashes, fanout = judged if judged is not None else judged_documents(judgments, crossed)
    # The caller crossed the run itself where its whole qrels call for the join
    # (:func:`lexiframe.positions`); a part of them may average more, and is probed.
    if _fans_out(fanout) and not crossed:
        grade = [pl.col("relevance").alias("_grade")] if grades else []
        marks = judgments.select(*qrels_keys, "doc", *grade, _mark=pl.lit(True))
        order: Literal["left"] | None = "left" if keep_order else None
        marked = run.join(marks, on=[*qrels_keys, "doc"], how="left", maintain_order=order)
        return marked.with_columns(pl.col("_mark").fill_null(False)), True
    # A probe of 64-bit hashes costs a third of one of the ids (strings of 12 bytes): a
    # hash shared by another id marks one row more, which the join of the marked rows to
    # the judgments of their query (by id) leaves out.
    return run.with_columns(_mark=ID_HASH.is_in(judged_hashes.implode())), False
