"""Property tests: random small runs and qrels, lexiframe against the pure-Python reference.

Hypothesis draws runs with string or integer ids, score ties, skipped and unjudged queries,
queries without relevant documents, depth cuts and thresholds; ``positions`` and every
measure must equal :mod:`tests.reference` on every backend (Polars eager, Polars lazy,
pandas). Pinned ``@example`` cases cover the edges: an empty ranking, everything relevant
retrieved, a single relevant document, ties in scores.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass, replace
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lexiframe import evaluation
from lexiframe import ranking as ranking_module
from lexiframe.errors import DroppedQueriesWarning, InputError, MissingCorpusSizeWarning
from lexiframe.ranking import lists as ranking_lists
from tests import reference
from tests.conftest import BACKENDS, Backend

SETTINGS = settings(
    # 20 drawn cases per test and backend, beside the pinned edge cases (most tests check
    # each case's 70 measures against the reference).
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

N = 50  # a corpus size larger than any ranking drawn here

MEASURES = [
    "Success@1",
    "Success@3",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "SetP",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "IPrec@0.0",
    "IPrec@0.3",
    "IPrec@0.5",
    "IPrec@1.0",
    "RR",
    "RR@3",
    "AP",
    "AP@3",
    "nDCG",
    "nDCG@3",
    # Gains valid at every threshold drawn (1 and 2): no grade below 2 gains other than 0.
    "nDCG(gains={1: 0, 2: 3})",
    "nDCG(gains={2: -1})@3",
    "nDCG(gains={0: 0, 2: 0.5})",
    "ERR",
    "ERR@3",
    "ERR(max_grade=2)@3",
    "P@1",
    "P@3",
    "R@3",
    "RP",
    "RBP",
    "RBP(p=0.5)",
    "TSE",
    "TSE(exposure='ap')",
    "TSE(exposure='ndcg')",
    "TSE(exposure='rbp')",
    "TSE(exposure='rbp', p=0.5)",
    "TSE(exposure='linear')",
    "SL3",
    "RecallError",
    "ASL",
    "ASL@g1-1",
    "ASL@g1-3",
    "Bpref",
    "infAP",
    "Judged",
    "Judged@3",
    "Unjudged@3",
    "NumNonRelJudgedRet",
    "SetRelativeP",
    "SetAP",
    "Utility",
    "Utility(rel_nonret=-0.5, nonrel_nonret=0.01)",
    "RelativeP@1",
    "RelativeP@3",
    "RPrecMult@0.5",
    "RPrecMult@2.0",
    "IPrecAvg",
    "IPrecAvg(levels=[0.3, 0.5, 0.5])",
    "BinG",
    "G",
    "nDCGRel",
    "RnDCG",
    # Gain maps (trec_eval's G.1=…, ndcg_rel.1=…, Rndcg.1=…), valid at both thresholds:
    # a grade that gains nothing, negative and fractional gains, grades of one gain.
    "G(gains={1: 0, 2: 3})",
    "G(gains={1: -1, 2: 2.5})",
    "nDCGRel(gains={2: -1})",
    "nDCGRel(gains={1: 4, 2: 1})",
    "RnDCG(gains={0: 0, 2: 0.5})",
    "RnDCG(gains={1: 3, 2: 3})",
    "RBPResid",
    "RBPResid(p=0.5)",
]


@dataclass(frozen=True)
class Case:
    """A run and qrels as plain rows, plus the options of ``positions``."""

    run: tuple[tuple[object, object, object, float], ...]
    qrels: tuple[tuple[object, object, int], ...]
    int_queries: bool = False
    int_docs: bool = False
    threshold: int = 1
    depth: int | None = None
    no_relevant: str = "drop"
    condensed: bool = False

    def run_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            [list(row) for row in self.run],
            schema={
                "system": pl.String,
                "query": pl.Int64 if self.int_queries else pl.String,
                "doc": pl.Int64 if self.int_docs else pl.String,
                "score": pl.Float64,
            },
            orient="row",
        )

    def qrels_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            [list(row) for row in self.qrels],
            schema={
                "query": pl.Int64 if self.int_queries else pl.String,
                "doc": pl.Int64 if self.int_docs else pl.String,
                "relevance": pl.Int64,
            },
            orient="row",
        )

    @property
    def options(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "depth": self.depth,
            "no_relevant": self.no_relevant,
            "condensed": self.condensed,
        }

    def reference(self) -> dict[tuple[str, object], reference.Ranking]:
        return reference.positions(
            self.run,
            self.qrels,
            threshold=self.threshold,
            depth=self.depth,
            no_relevant=self.no_relevant,
            condensed=self.condensed,
        )

    def dropped(self) -> set[object]:
        return reference.dropped_queries(
            self.run, self.qrels, threshold=self.threshold, no_relevant=self.no_relevant
        )


STRING_DOCS = ["d1", "d2", "d10", "d11", "d9", "D3", "x", "d100"]  # string order ≠ number order
INT_DOCS = [1, 2, 9, 10, 11, 100, 7, 0]
SCORES = [0.0, 0.5, 1.0, 1.0, 2.0, -1.0]  # few values: many ties


@st.composite
def cases(draw, depth=None, int_queries=None, int_docs=None) -> Case:
    """Strategy of cases; ``depth`` and the id kinds are strategies (default: drawn freely)."""
    int_queries = draw(st.booleans() if int_queries is None else int_queries)
    int_docs = draw(st.booleans() if int_docs is None else int_docs)
    query_ids = [1, 2, 3, 4] if int_queries else ["q1", "q2", "q10", "q3"]
    doc_ids = INT_DOCS if int_docs else STRING_DOCS
    queries = query_ids[: draw(st.integers(1, 4))]
    systems = draw(
        st.lists(st.sampled_from(["A", "B", "sys10"]), min_size=1, max_size=3, unique=True)
    )

    run = []
    for system in systems:
        for query in queries:
            if draw(st.integers(0, 4)) == 0:
                continue  # this system skips this query
            docs = draw(st.lists(st.sampled_from(doc_ids), min_size=1, max_size=8, unique=True))
            for doc in docs:
                run.append((system, query, doc, draw(st.sampled_from(SCORES))))
    if not run:
        run.append((systems[0], queries[0], doc_ids[0], 1.0))

    qrels = []
    for query in queries:
        if draw(st.integers(0, 5)) == 0:
            continue  # unjudged query
        judged = draw(st.lists(st.sampled_from(doc_ids), min_size=1, max_size=6, unique=True))
        # some relevant documents nobody retrieves
        extra = f"unseen-{query}" if not int_docs else 1000 + len(qrels)
        if draw(st.booleans()):
            judged.append(extra)
        for doc in judged:
            # -1: pooled but left unassessed (trec_eval's convention; infAP reads it)
            qrels.append((query, doc, draw(st.sampled_from([0, 0, 1, 2, -1]))))
    if not qrels:  # an empty qrels table is refused (tests/sweep): one judgment at least
        qrels.append((queries[0], doc_ids[0], 0))

    return Case(
        run=tuple(run),
        qrels=tuple(qrels),
        int_queries=int_queries,
        int_docs=int_docs,
        threshold=draw(st.sampled_from([1, 1, 2])),
        depth=draw(st.none() if depth is None else depth),
    )


# Pinned edge cases ----------------------------------------------------------------------

# A system that returned nothing for a judged query: empty positions, n_ret = 0.
EMPTY_RANKING = Case(
    run=(("A", "q1", "d1", 1.0), ("B", "q2", "d1", 1.0)),
    qrels=(("q1", "d1", 1), ("q2", "d2", 1), ("q2", "d1", 0)),
)
# Everything relevant retrieved, on top.
ALL_RELEVANT = Case(
    run=(("A", "q1", "d1", 3.0), ("A", "q1", "d2", 2.0), ("A", "q1", "d3", 1.0)),
    qrels=(("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 0)),
)
# m = 1, found at rank 2.
ONE_RELEVANT = Case(
    run=(("A", 7, 10, 2.0), ("A", 7, 9, 1.0)),
    qrels=((7, 9, 1),),
    int_queries=True,
    int_docs=True,
)
# Every score ties: the order is doc id descending as a string: d9, d2, d10, d1.
ALL_TIES = Case(
    run=tuple(("A", "q1", doc, 1.0) for doc in ["d1", "d10", "d2", "d9"]),
    qrels=(("q1", "d10", 1), ("q1", "d1", 2)),
)
# Integer doc ids tie: compared as strings, 9 > 100 > 10 > 1.
INT_TIES = Case(
    run=tuple(("A", 1, doc, 0.5) for doc in [1, 10, 100, 9]),
    qrels=((1, 100, 1), (1, 1, 1), (1, 5, 1)),
    int_queries=True,
    int_docs=True,
)
# The run answers a query that has no relevant document and one that is unjudged.
DROPPED = Case(
    run=(("A", "q1", "d1", 1.0), ("A", "q2", "d1", 1.0), ("A", "q3", "d1", 1.0)),
    qrels=(("q1", "d1", 1), ("q2", "d1", 0)),
)
# Grades below the threshold do not count.
THRESHOLD = Case(
    run=(("A", "q1", "d1", 2.0), ("A", "q1", "d2", 1.0)),
    qrels=(("q1", "d1", 1), ("q1", "d2", 2)),
    threshold=2,
)
# A depth cut shorter than the ranking (and one longer).
DEPTH_CUT = Case(
    run=(("A", "q1", "d1", 3.0), ("A", "q1", "d2", 2.0), ("A", "q1", "d3", 1.0)),
    qrels=(("q1", "d3", 1), ("q1", "d2", 1)),
    depth=2,
)
# Every kind of judgment: relevant (d2), judged non-relevant (d1, d4), pooled but
# unassessed (d3, grade -1) and unjudged (d5); ranks 1 … 5 in that order of scores.
JUDGED_KINDS = Case(
    run=tuple(("A", "q1", f"d{i}", float(10 - i)) for i in range(1, 6)),
    qrels=(("q1", "d1", 0), ("q1", "d2", 1), ("q1", "d3", -1), ("q1", "d4", 0), ("q1", "d6", 2)),
)
DEPTH_LONGER = Case(
    run=(("A", "q1", "d1", 3.0), ("A", "q1", "d2", 2.0)),
    qrels=(("q1", "d2", 1),),
    depth=5,
)


def expect_drop_warning(case: Case, backend: Backend):
    """The eager entry points warn with the count of dropped queries; lazy plans cannot."""
    dropped = case.dropped()
    if dropped and backend.warns_on_drop:
        return pytest.warns(DroppedQueriesWarning, match=rf"^{len(dropped)} quer(y|ies) ")
    return contextlib.nullcontext()


def as_dict(frame: pl.DataFrame) -> dict[tuple[str, object], dict[str, object]]:
    keyed = {}
    for row in frame.iter_rows(named=True):
        key = (row["system"], row["query"])
        assert key not in keyed, f"duplicate positions row {key}"
        keyed[key] = row
    return keyed


def check_positions(case: Case, backend: Backend, **options: object) -> None:
    with expect_drop_warning(case, backend):
        got = backend.positions(
            case.run_frame(), case.qrels_frame(), docs=True, grades=True, **case.options, **options
        )
    assert got.schema["positions"] == pl.List(pl.UInt32)
    assert got.schema["n_rel"] == pl.UInt32
    assert got.schema["n_ret"] == pl.UInt32
    rows = as_dict(got)
    expected = case.reference()
    assert set(rows) == set(expected)
    for key, ranking in expected.items():
        row = rows[key]
        assert row["positions"] == ranking.positions, key
        assert row["n_rel"] == ranking.n_rel, key
        assert row["n_ret"] == ranking.n_ret, key
        assert row["docs"] == ranking.docs, key
        assert row["grades"] == ranking.grades, key
        assert row["ideal_grades"] == ranking.ideal_grades, key
        assert row.get("gain_positions", row["positions"]) == ranking.gain_positions, key
        if options.get("judged"):
            assert row["nonrel_positions"] == ranking.nonrel_positions, key
            assert row["pooled_positions"] == ranking.pooled_positions, key
            assert row["n_nonrel"] == ranking.n_nonrel, key


def same(got: float | None, expected: float | None) -> bool:
    if expected is None or got is None:
        return got is None and expected is None
    return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)


def check_measures(case: Case, backend: Backend, n: int | None) -> None:
    names = MEASURES
    # Without n, SL3, RecallError and TSE(exposure='linear') are null where they need it,
    # with one warning naming n.
    missing_n = pytest.warns(MissingCorpusSizeWarning) if n is None else contextlib.nullcontext()
    with missing_n, expect_drop_warning(case, backend):
        got = backend.evaluate(case.run_frame(), case.qrels_frame(), names, n=n, **case.options)
    rows = as_dict(got)
    expected = case.reference()
    assert set(rows) == set(expected)
    for key, ranking in expected.items():
        for name in names:
            want = reference.measure(name, ranking, n=n)
            assert same(rows[key][name], want), (key, name, rows[key][name], want)


EDGE_CASES = [EMPTY_RANKING, ALL_RELEVANT, ONE_RELEVANT, ALL_TIES, INT_TIES, DROPPED, THRESHOLD]


def pinned(cases_list, **arguments):
    """Decorate a ``@given(case=...)`` test with ``@example`` for each pinned case (and the
    test's other ``arguments``)."""

    def decorate(test):
        for case in reversed(cases_list):
            test = example(case=case, **arguments)(test)
        return test

    return decorate


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_positions_equal_reference(case: Case, backend: Backend):
    check_positions(case, backend)


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_positions_through_the_query_doc_join_equal_reference(case: Case, backend: Backend):
    # Documents judged relevant for many queries (a recommender's items) take the
    # (query, doc) join instead of the join on the document id alone: force it here.
    with mock.patch.object(ranking_lists, "MAX_JUDGMENTS_PER_DOC", 0):
        check_positions(case, backend)


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_positions_in_partitions_equal_reference(case: Case, backend: Backend):
    # Queries split into groups planned one after another: the same frame, and a system
    # gets worst-case rows in a group whose queries it all skipped.
    for partitions in (2, 3):
        check_positions(case, backend, partitions=partitions)


def in_rank_order(rows: tuple[tuple[object, object, object, float], ...]) -> list[tuple]:
    """The rows ranking by ranking, scores descending; ties keep their drawn order."""
    blocks: dict[tuple[object, object], list[tuple]] = {}
    for row in sorted(rows, key=lambda row: -row[3]):
        blocks.setdefault((row[0], row[1]), []).append(row)
    return [row for block in blocks.values() for row in block]


def in_trec_eval_order(rows: tuple[tuple[object, object, object, float], ...]) -> list[tuple]:
    """The rows ranking by ranking in trec_eval's order: scores descending, ties by the
    document id descending as a string (such rankings are read without a sort)."""
    by_doc = sorted(rows, key=lambda row: str(row[2]), reverse=True)
    return in_rank_order(tuple(by_doc))


@st.composite
def arranged_cases(draw) -> Case:
    """Cases whose run rows come in rank order (ties in any order, or in trec_eval's), in
    order but for one row moved to the end (its ranking then comes in two blocks), or
    shuffled."""
    case = draw(cases(depth=st.none() | st.integers(1, 6)))
    rows = in_rank_order(case.run)
    arrangements = ["in order", "in trec_eval's order", "one row moved", "shuffled"]
    arrangement = draw(st.sampled_from(arrangements))
    if arrangement == "in trec_eval's order":
        rows = in_trec_eval_order(case.run)
    elif arrangement == "one row moved":
        rows.append(rows.pop(draw(st.integers(0, len(rows) - 1))))
    elif arrangement == "shuffled":
        rows = draw(st.permutations(rows))
    return replace(case, run=tuple(rows))


# Runs in rank order take the row-number path of in-memory runs, the others the group-by.
IN_ORDER_TIES = replace(ALL_TIES, run=tuple(in_rank_order(ALL_TIES.run)))
SPLIT_RANKING = Case(
    run=(
        ("A", "q1", "d1", 3.0),
        ("A", "q1", "d2", 2.0),
        ("B", "q1", "d2", 1.0),
        ("A", "q1", "d3", 1.0),
    ),
    qrels=(("q1", "d3", 1), ("q1", "d2", 1)),
)


@pinned([IN_ORDER_TIES, SPLIT_RANKING])
@given(case=arranged_cases())
@SETTINGS
def test_positions_of_runs_in_any_row_order_equal_reference(case: Case, backend: Backend):
    check_positions(case, backend)


@pinned([DEPTH_CUT, DEPTH_LONGER])
@given(case=cases(depth=st.integers(1, 6)))
@SETTINGS
def test_positions_with_depth_equal_reference(case: Case, backend: Backend):
    check_positions(case, backend)


@pinned([DEPTH_CUT, JUDGED_KINDS])
@given(case=cases(depth=st.one_of(st.none(), st.integers(1, 6))))
@SETTINGS
def test_judged_positions_equal_reference(case: Case, backend: Backend):
    check_positions(case, backend, judged=True)


@pinned([JUDGED_KINDS, replace(JUDGED_KINDS, condensed=True, depth=4)])
@given(
    case=st.tuples(cases(depth=st.one_of(st.none(), st.integers(1, 6))), st.booleans()).map(
        lambda drawn: replace(drawn[0], condensed=drawn[1])
    )
)
@SETTINGS
def test_judged_positions_through_the_query_doc_join_equal_reference(case: Case, backend: Backend):
    # Documents judged for many queries (a recommender's items) take the (query, doc)
    # join, where each row gets its grade in the same pass: force it here.
    with mock.patch.object(ranking_lists, "MAX_JUDGMENTS_PER_DOC", 0):
        check_positions(case, backend, judged=True)


@pinned([replace(DEPTH_CUT, condensed=True), replace(JUDGED_KINDS, condensed=True)])
@given(case=cases(depth=st.one_of(st.none(), st.integers(1, 6))))
@SETTINGS
def test_condensed_positions_equal_reference(case: Case, backend: Backend):
    check_positions(replace(case, condensed=True), backend, judged=True)


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_measures_equal_reference(case: Case, backend: Backend):
    check_measures(case, backend, n=N)


@pinned([replace(JUDGED_KINDS, condensed=True)])
@given(case=cases(depth=st.one_of(st.none(), st.integers(1, 6))))
@SETTINGS
def test_measures_of_condensed_rankings_equal_reference(case: Case, backend: Backend):
    check_measures(replace(case, condensed=True), backend, n=None)


@pinned([replace(case, no_relevant="keep") for case in EDGE_CASES])
@given(case=cases())
@SETTINGS
def test_keeping_queries_without_relevant_documents_equals_reference(case: Case, backend: Backend):
    """``no_relevant="keep"``: judged queries without a relevant document get rows with
    n_rel = 0 that score 0 (trec_eval -c), or null where a measure needs a relevant one."""
    check_positions(replace(case, no_relevant="keep"), backend)
    check_measures(replace(case, no_relevant="keep"), backend, n=N)


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_measures_without_corpus_size_equal_reference(case: Case, backend: Backend):
    check_measures(case, backend, n=None)


@pinned([DEPTH_CUT, DEPTH_LONGER])
@given(case=cases(depth=st.integers(1, 6)))
@SETTINGS
def test_measures_with_depth_equal_reference(case: Case, backend: Backend):
    check_measures(case, backend, n=N)


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_measures_of_the_default_positions_frame_equal_reference(case: Case, backend: Backend):
    """One name, one number: ``measures`` on ``positions(qrels)`` gives the graded values
    (the frame keeps the grades when the qrels are graded), as ``evaluate`` does."""
    with expect_drop_warning(case, backend):
        pos = backend.positions(case.run_frame(), case.qrels_frame(), **case.options)
    names = ["nDCG", "nDCG@3", "RR", "ASL"]
    rows = as_dict(backend.measures(pos, names))
    for key, ranking in case.reference().items():
        for name in names:
            want = reference.measure(name, ranking)
            assert same(rows[key][name], want), (key, name)
    # The grade columns are there exactly when some query's relevant grades differ, or a
    # document below the threshold gains (a positive grade below it: trec_eval's -l).
    graded = any(len(set(r.ideal_grades)) > 1 for r in case.reference().values())
    graded |= any(0 < grade < case.threshold for _, _, grade in case.qrels)
    assert ("grades" in pos.columns) == graded


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_positions_without_grades_are_refused_on_graded_qrels(case: Case):
    """``grades=False`` is refused where it would turn nDCG and RBP into binary values: on
    graded qrels, and above threshold=1 where a positive grade below it gains."""
    graded = any(len(set(r.ideal_grades)) > 1 for r in case.reference().values())
    below = any(0 < grade < case.threshold for _, _, grade in case.qrels)
    run, qrels = case.run_frame(), case.qrels_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        if below:
            with pytest.raises(InputError, match=r"grades=False, but at threshold=\d the qrels"):
                ranking_module.positions(run, qrels, grades=False, **case.options)
        elif graded:
            with pytest.raises(InputError, match="grades=False, but the qrels are graded"):
                ranking_module.positions(run, qrels, grades=False, **case.options)
        else:
            pos = ranking_module.positions(run, qrels, grades=False, **case.options)
            assert "grades" not in pos.columns


@pinned(EDGE_CASES, in_order=True)
@given(case=cases(), in_order=st.booleans())
@SETTINGS
def test_rank_by_rank_column_equals_reference(case: Case, backend: Backend, in_order: bool):
    """``rank_by="rank"`` follows an existing rank column instead of the scores.

    The rank column holds the reference's trec_eval ranks and the scores are overwritten
    with the ranks themselves (so ranking by score would reverse every list): ranking by
    rank must give the reference positions of the original scores, with the rows as drawn
    or sorted by rank.
    """
    order: dict[tuple[str, object], list[tuple[object, float]]] = {}
    for system, query, doc, score in case.run:
        order.setdefault((system, query), []).append((doc, score))
    ranks = [
        next(
            rank
            for rank, ranked in enumerate(reference.ranked_docs(order[(s, q)]), start=1)
            if ranked == d
        )
        for s, q, d, _ in case.run
    ]
    run = case.run_frame().with_columns(
        rank=pl.Series(ranks, dtype=pl.Int64), score=pl.Series(ranks, dtype=pl.Float64)
    )
    if in_order:
        run = run.sort("system", "query", "rank")
    with expect_drop_warning(case, backend):
        got = backend.positions(run, case.qrels_frame(), rank_by="rank", **case.options)
    rows = as_dict(got)
    expected = case.reference()
    assert set(rows) == set(expected)
    for key, ranking in expected.items():
        assert rows[key]["positions"] == ranking.positions, key
        assert rows[key]["n_ret"] == ranking.n_ret, key


def test_pinned_edge_cases_read_as_intended():
    """The pinned cases are what their comments say (checked on the reference itself)."""
    assert EMPTY_RANKING.reference()[("A", "q2")].positions == []
    assert EMPTY_RANKING.reference()[("A", "q2")].n_ret == 0
    assert ALL_RELEVANT.reference()[("A", "q1")].positions == [1, 2]
    assert ONE_RELEVANT.reference()[("A", 7)].positions == [2]
    assert ALL_TIES.reference()[("A", "q1")].docs == ["d10", "d1"]
    assert ALL_TIES.reference()[("A", "q1")].positions == [3, 4]
    assert INT_TIES.reference()[("A", 1)].positions == [2, 4]
    assert DROPPED.dropped() == {"q2", "q3"}
    assert THRESHOLD.reference()[("A", "q1")].positions == [2]
    assert DEPTH_CUT.reference()[("A", "q1")].positions == [2]


# Invariants -----------------------------------------------------------------------------

UNIT_INTERVAL = [
    "RR",
    "RR@3",
    "AP",
    "AP@3",
    "nDCG",
    "nDCG@3",
    "P@1",
    "P@3",
    "R@3",
    "RP",
    "RBP",
    "TSE",
    "TSE(exposure='ndcg')",
    "TSE(exposure='rbp')",
    "TSE(exposure='linear')",
    "SetRelativeP",
    "SetAP",
    "RelativeP@3",
    "RPrecMult@2.0",
    "IPrecAvg",
    "BinG",
    "G",
    "nDCGRel",
    "RnDCG",
    "RBPResid",
]


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_coverage_equals_reference(case: Case, backend: Backend):
    got = backend.coverage(case.run_frame(), case.qrels_frame(), threshold=case.threshold)
    assert got.columns == ["system", "evaluated", "skipped", "unjudged", "no_relevant"]
    rows = {row[0]: row[1:] for row in got.rows()}
    assert rows == reference.coverage(case.run, case.qrels, threshold=case.threshold)


BACKEND_EAGER = BACKENDS["polars-eager"]


# Only unjudged documents retrieved: RBPResid sums to 1 in exact arithmetic.
ALL_UNJUDGED = Case(
    run=tuple(("A", "q10", doc, 0.0) for doc in STRING_DOCS),
    qrels=(("q10", "d1", -1), ("q10", "unseen-q10", 1)),
)


@pinned([*EDGE_CASES, ALL_UNJUDGED])
@given(case=cases(depth=st.one_of(st.none(), st.integers(3, 8))))
@settings(max_examples=50, deadline=None)
def test_invariants(case: Case):
    with expect_drop_warning(case, BACKEND_EAGER):
        pos = BACKEND_EAGER.positions(case.run_frame(), case.qrels_frame(), **case.options)
        got = BACKEND_EAGER.evaluate(
            case.run_frame(), case.qrels_frame(), MEASURES, n=N, **case.options
        )
    per_doc = pos.with_columns(asl=pl.col("positions").lexi.asl())
    for row in per_doc.iter_rows(named=True):
        p, m, n_ret = row["positions"], row["n_rel"], row["n_ret"]
        # Per-document ASL: m values; retrieved ones ≥ 1 and non-decreasing in rank order.
        assert len(row["asl"]) == m
        retrieved = row["asl"][: len(p)]
        assert all(value >= 1 for value in retrieved)
        assert retrieved == sorted(retrieved)
        assert p == sorted(set(p)), "positions strictly ascending"
        assert all(1 <= rank <= n_ret for rank in p)
        assert len(p) <= m
        if case.depth is not None:
            assert n_ret <= case.depth
    for row in got.iter_rows(named=True):
        for name in UNIT_INTERVAL:
            # Within rounding: RBPResid sums powers of p as trec_eval does, bit for bit, and
            # a ranking of unjudged documents only sums to 1 + 2e-16 (ALL_UNJUDGED).
            assert -1e-12 <= row[name] <= 1.0 + 1e-12, (name, row)
        assert row["SL3"] >= 0.0
        assert row["RecallError"] >= 0.0
        assert row["ASL"] >= 0.0
    # ASL ≥ 1 whenever every relevant document was retrieved (each scores irrel above + 1).
    joined = pos.join(got, on=["system", "query"])
    for row in joined.iter_rows(named=True):
        # P@3 and R@3 count the same documents: 3 · P@3 = m · R@3.
        assert math.isclose(3 * row["P@3"], row["n_rel"] * row["R@3"])
        if row["positions"]:
            assert row["RR"] >= row["TSE"]  # 1/p_1 ≥ 1/p̂_m (p̂_m ≤ n)
        if len(row["positions"]) == row["n_rel"]:
            assert row["ASL"] >= 1.0
            assert row["R@3"] == 1.0 or row["positions"][-1] > 3
        if row["positions"] and row["positions"][0] == 1:
            assert row["ASL@g1-1"] == 1.0 and row["RR"] == 1.0


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_semantics_invariants(case: Case):
    """The rules of one name, one number, as invariants over random tracks:

    - a skipped ranking's ASL is the depth it is scored at, and no better than any ranking
      of its query that retrieved no relevant document;
    - graded RBP lies in [0, binary RBP] (its gains are at most 1);
    - keeping judged queries without relevant documents adds rows that score 0 (AP always;
      nDCG and RBP unless, above threshold=1, the ranking retrieved a document of a lower
      positive grade, which gains as in trec_eval -l), and leaves the other rows' values;
    - the smallest accepted n is each ranking plus the relevant documents it missed.
    """
    run, qrels = case.run_frame(), case.qrels_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        pos = ranking_module.positions(run, qrels, **case.options)
        keep = replace(case, no_relevant="keep").options
        kept = ranking_module.positions(run, qrels, **keep)
    got = evaluation.measures(pos, ["ASL", "RBP", "AP", "nDCG"])
    rows = as_dict(pos.join(got, on=["system", "query"]))
    depth = {}
    for (_, query), row in rows.items():
        depth[query] = max(depth.get(query, 0), row["n_ret"])
    if case.depth is not None:
        depth = dict.fromkeys(depth, case.depth)
    for (_, query), row in rows.items():
        if row["n_ret"] == 0:
            assert row["ASL"] == depth[query]
            for other in rows.values():
                if other is not row and other["query"] == query and not other["positions"]:
                    assert row["ASL"] >= other["ASL"]
        # Every document that gains (above threshold=1, every positive grade) gains 1.
        binary = reference.rbp(row.get("gain_positions", row["positions"]), 0.8)
        assert -1e-12 <= row["RBP"] <= binary + 1e-12
    kept_got = kept.join(evaluation.measures(kept, ["AP", "nDCG", "RBP"]), on=["system", "query"])
    assert kept.height - pos.height == kept.filter(pl.col("n_rel") == 0).height
    added = kept_got.filter(pl.col("n_rel") == 0)
    gainless = (
        added.filter(pl.col("gain_positions").list.len() == 0)
        if "gain_positions" in added.columns
        else added
    )
    assert (added["AP"] == 0).all()
    for name in ("nDCG", "RBP"):
        assert (gainless[name] == 0).all()
    for name in ("AP", "nDCG", "RBP"):
        rest = kept_got.filter(pl.col("n_rel") > 0)[name].sum()
        assert math.isclose(rest, got[name].sum(), abs_tol=1e-12)
    if pos.height:
        needed = (pos["n_ret"] + pos["n_rel"] - pos["positions"].list.len()).max()
        evaluation.measures(pos, ["TSE"], n=int(needed))
        # n = 0 is no corpus size at all: refused as an argument before the frame is read.
        message = "is too small" if needed > 1 else "must be a positive integer"
        with pytest.raises(InputError, match=message):
            evaluation.measures(pos, ["TSE"], n=int(needed) - 1)


# Grouped: by= keys against a per-group reference ----------------------------------------


@st.composite
def tracked_cases(draw) -> tuple[Case, Case]:
    """Two tracks with the same id kinds, judged by the first one's qrels."""
    int_queries, int_docs = draw(st.booleans()), draw(st.booleans())
    first = draw(cases(int_queries=st.just(int_queries), int_docs=st.just(int_docs)))
    second = draw(cases(int_queries=st.just(int_queries), int_docs=st.just(int_docs)))
    # Default options (threshold 1, no depth) for both tracks.
    return (
        Case(first.run, first.qrels, int_queries, int_docs),
        Case(second.run, first.qrels, int_queries, int_docs),
    )


@given(tracks=tracked_cases())
@SETTINGS
def test_by_keys_equal_per_group_reference(tracks: tuple[Case, Case], backend: Backend):
    first, second = tracks
    run = pl.concat(
        [
            first.run_frame().with_columns(track=pl.lit("t1")),
            second.run_frame().with_columns(track=pl.lit("t2")),
        ]
    )
    dropped = first.dropped() | second.dropped()
    warns = dropped and backend.warns_on_drop
    with pytest.warns(DroppedQueriesWarning) if warns else contextlib.nullcontext():
        got = backend.evaluate(run, first.qrels_frame(), ["AP", "ASL", "nDCG"], by="track")
    assert got.columns[:3] == ["track", "system", "query"]
    for track, case in [("t1", first), ("t2", second)]:
        mine = as_dict(got.filter(pl.col("track") == track).drop("track"))
        expected = case.reference()
        assert set(mine) == set(expected)
        for key, ranking in expected.items():
            for name in ["AP", "ASL", "nDCG"]:
                assert same(mine[key][name], reference.measure(name, ranking)), (track, key, name)
    # summarize(by="track") is the per-group mean over (track, system).
    summary = backend.summarize(got, by="track")
    for row in summary.iter_rows(named=True):
        case = first if row["track"] == "t1" else second
        expected = [
            reference.measure("AP", ranking)
            for (system, _), ranking in case.reference().items()
            if system == row["system"]
        ]
        assert row["n_queries"] == len(expected)
        assert same(row["AP"], sum(expected) / len(expected))


GAIN_MEASURES = ["nDCG", "nDCG@3", "G", "nDCGRel", "RnDCG", "RBP", "RBP(p=0.5)", "ERR", "ERR@3"]
GAIN_MEASURES += ["nDCG(gains={1: 2, 2: 5})", "AP", "P@3", "BinG"]


@pinned(EDGE_CASES, threshold=2)
@given(case=cases(), threshold=st.sampled_from([2, 3]))
@SETTINGS
def test_gain_measures_at_a_level_are_one_number_on_every_path(
    case: Case, backend: Backend, threshold: int
):
    """threshold=t is trec_eval's -l t on every path (evaluate, positions then measures,
    on each backend) and in the reference: the level decides what is relevant (AP, P@3,
    BinG), never what gains. So every gain measure equals its value at threshold=1, but
    RnDCG, which trec_eval scores 0 for a query without a relevant document at the level."""
    case = replace(case, threshold=threshold, no_relevant="keep")
    run, qrels = case.run_frame(), case.qrels_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        evaluated = as_dict(backend.evaluate(run, qrels, GAIN_MEASURES, **case.options))
        frame = backend.positions(run, qrels, **{**case.options, "grades": True})
        measured = as_dict(backend.measures(frame, GAIN_MEASURES))
        level_1 = as_dict(
            evaluation.evaluate(run, qrels, GAIN_MEASURES, **{**case.options, "threshold": 1})
        )
    expected = case.reference()
    assert set(evaluated) == set(measured) == set(expected) == set(level_1)
    for key, ranking in expected.items():
        for name in GAIN_MEASURES:
            want = reference.measure(name, ranking)
            assert same(evaluated[key][name], want), (key, name, evaluated[key][name], want)
            assert same(measured[key][name], want), (key, name, measured[key][name], want)
            if name in ("AP", "P@3", "BinG"):
                continue
            unchanged = 0.0 if name == "RnDCG" and ranking.n_rel == 0 else level_1[key][name]
            assert same(evaluated[key][name], unchanged), (key, name, level_1[key][name])
