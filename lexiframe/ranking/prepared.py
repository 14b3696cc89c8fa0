"""Qrels read once for many runs: what a positions frame reads from its qrels (the checked
judgments in lexiframe's names, the evaluated queries, the documents judged), derived at
the first call and kept for the next ones with the same options and run columns.

:func:`lexiframe.positions` wraps the qrels it is given in a :class:`PreparedQrels` of its
own, used once; a caller ranking many runs against the same qrels (the batches of run
files of one ``lexiframe trec_eval`` command) passes one :class:`PreparedQrels` to every
call, so that pooled qrels of 100,000 judgments are checked and grouped once, not once
per batch (a tenth of a second each time).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lexiframe._compat import collect
from lexiframe.io.objects import qrels_frame
from lexiframe.options import PositionsOptions
from lexiframe.ranking._request import Request
from lexiframe.ranking.checks import checked_qrels
from lexiframe.ranking.grades import keeps_grades
from lexiframe.ranking.lists import JudgedDocuments, judged_documents, marks_exactly
from lexiframe.ranking.tables import (
    canonical_qrels,
    evaluated_queries,
    qrels_only_keys,
    with_nonrel_counts,
)

QrelsInput = pl.DataFrame | pl.LazyFrame


@dataclass(frozen=True)
class CheckedQrels:
    """The qrels checked and in lexiframe's names (ids in the run's types)."""

    frame: pl.DataFrame
    keys: list[str]
    """The keys that join a ranking to its judgments: the by= keys the qrels carry, query."""


@dataclass(frozen=True)
class QrelsTables:
    """What the rankings of a run read from its qrels (see :func:`lexiframe.positions`)."""

    checked: CheckedQrels
    grades: bool
    """Whether the frame keeps the grade columns (:func:`keeps_grades`)."""
    queries: pl.DataFrame
    """The evaluated queries with ``n_rel`` (and ``ideal_grades``, ``n_nonrel``)."""
    judgments: pl.DataFrame
    """The judgments the rankings are marked with: the gaining ones, or every one."""
    crossed: pl.DataFrame | None
    """The values of the by= keys of the qrels alone, to cross the rankings with."""
    cross_run: bool
    """Whether the run is crossed with those keys before it is ranked instead."""
    judged: JudgedDocuments
    """The documents ``judgments`` judge, for the marks of the run's rows."""

    def request(self, options: PositionsOptions) -> Request:
        return Request(options, self.checked.keys, self.grades, self.crossed)


class PreparedQrels:
    """Qrels to rank many runs against: :func:`lexiframe.positions` takes them in place of
    the qrels' frame, and derives their tables (the checked judgments, the evaluated
    queries, the documents judged) at the first call, then reads them again at each call
    with the same options and run columns (one set of tables each).

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> from lexiframe.ranking import PreparedQrels
        >>> qrels = PreparedQrels(pl.DataFrame({"query": ["q1"], "doc": ["d1"], "relevance": [1]}))
        >>> run = pl.DataFrame({"system": ["a"], "query": ["q1"], "doc": ["d1"], "score": [1.0]})
        >>> [lf.positions(run, qrels)["positions"].to_list() for _ in range(2)]
        [[[1]], [[1]]]
    """

    def __init__(self, qrels: QrelsInput) -> None:
        self.source = qrels
        self._frames: dict[object, QrelsInput] = {}
        self._checked: dict[object, CheckedQrels] = {}
        self._tables: dict[object, QrelsTables] = {}

    def frame(self, options: PositionsOptions) -> QrelsInput:
        """The qrels as given, their grades checked for ``options.labels``."""
        names = options.columns
        key = (names, options.labels)
        if key not in self._frames:
            columns = (names.query, names.doc, names.relevance)
            self._frames[key] = qrels_frame(self.source, columns, options.labels)
        return self._frames[key]

    def checked(self, options: PositionsOptions, run: pl.LazyFrame) -> CheckedQrels:
        """The qrels checked in full and in lexiframe's names, for a run in lexiframe's
        names (:func:`lexiframe.ranking.tables.canonical_run`)."""
        key = (options, tuple(run.collect_schema().items()))
        if key not in self._checked:
            names, by = options.columns, list(options.by)
            renamed, keys = canonical_qrels(self.frame(options), names, by, run)
            self._checked[key] = CheckedQrels(checked_qrels(collect(renamed), names), keys)
        return self._checked[key]

    def tables(self, options: PositionsOptions, run: pl.LazyFrame) -> QrelsTables:
        """Every table the rankings of ``run`` read from the qrels."""
        key = (options, tuple(run.collect_schema().items()))
        if key not in self._tables:
            self._tables[key] = _tables(self.checked(options, run), options, run)
        return self._tables[key]


def _tables(checked: CheckedQrels, options: PositionsOptions, run: pl.LazyFrame) -> QrelsTables:
    qrels, keys = checked.frame.lazy(), checked.keys
    # The judgments whose grades gain: the relevant ones, and above threshold=1 every
    # positive grade (trec_eval's -l decides what is relevant, not what gains).
    gainful = qrels.filter(pl.col("relevance") >= options.gain_level)
    grades = keeps_grades(gainful, keys, options)
    request = Request(options, keys, grades)
    gainful = qrels.filter(pl.col("relevance") >= request.gain_level)
    every_query = qrels if options.keeps_no_relevant else None
    queries = evaluated_queries(gainful, keys, request, judged=every_query)
    if request.judged:
        queries = with_nonrel_counts(queries, qrels, keys, options.threshold)
    judgments = collect(qrels if options.reads_every_judgment else gainful)
    # With by= keys of the qrels alone (several qrels sets), the rankings are ranked once
    # and crossed with them, or the run crossed first where its rows are marked by a join.
    alone = qrels_only_keys(list(options.by), run.collect_schema(), qrels)
    cross_run = bool(alone) and marks_exactly(judgments.lazy(), alone)
    crossed = None
    if alone and not cross_run:
        crossed = collect(qrels.select(alone).unique().sort(alone))
    marked_with = [] if crossed is None else alone
    return QrelsTables(
        checked=checked,
        grades=grades,
        queries=collect(queries),
        judgments=judgments,
        crossed=crossed,
        cross_run=cross_run,
        judged=judged_documents(judgments.lazy(), marked_with),
    )
