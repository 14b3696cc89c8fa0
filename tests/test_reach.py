"""Lists that stop at the deepest rank the measures read (``positions(..., reach=k)``).

Measures such as P@k, nDCG@k and AP@k read no relevant document below their cut-off
(their families say so, ``Family.reads_to_cutoff``), so ``lf.evaluate``, the command and
Spark's groups build their positions frames with ``reach``: rankings that come in rank
order are marked to that rank only. The values must not change, the checks must still
see every row, and preferences, which read every rank, must not be cut.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from unittest import mock

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.errors import InputError
from lexiframe.metrics import deepest_rank_read, families, parse_measure, parse_measures
from lexiframe.ranking import lists as ranking_lists
from tests import reference
from tests.conftest import Backend
from tests.test_properties import (
    SETTINGS,
    Case,
    arranged_cases,
    as_dict,
    cases,
    in_trec_eval_order,
    same,
)

CUT_OFF_MEASURES = [
    "Success@1",
    "Success@3",
    "RR@3",
    "AP@3",
    "nDCG@3",
    "nDCG(gains={2: -1})@3",
    "P@1",
    "P@3",
    "R@3",
]
"""Measures of the property tests whose families read no deeper than their cut-off."""


def test_the_deepest_rank_read_is_the_largest_cut_off_of_measures_that_stop_there():
    assert deepest_rank_read(parse_measures(["P@5", "nDCG@20", "AP@10"])) == 20
    # One measure that reads any rank, and the lists go to the end.
    for names in (["P@5", "AP"], ["P@5", "ERR@5"], ["P@5", "AP(rel=2)@5"]):
        assert deepest_rank_read(parse_measures(names)) is None, names
    assert deepest_rank_read([]) is None
    assert parse_measure("RR").deepest_rank is None
    assert parse_measure("NumRelRet@4").deepest_rank == 4


@st.composite
def ranked_cases(draw) -> Case:
    """Cases whose rows come in trec_eval's order, ranking by ranking (the runs whose lists
    are cut), three times in four; else in any order (:func:`arranged_cases`)."""
    if draw(st.integers(0, 3)) == 0:
        return draw(arranged_cases())
    case = draw(cases(depth=st.none() | st.integers(1, 6)))
    return replace(case, run=tuple(in_trec_eval_order(case.run)))


@given(
    case=ranked_cases(),
    names=st.lists(st.sampled_from(CUT_OFF_MEASURES), min_size=1, max_size=4, unique=True),
    through_join=st.booleans(),
)
@settings(SETTINGS, max_examples=40)
def test_measures_read_to_their_cut_off_equal_reference(
    case: Case, names: list[str], through_join: bool, backend: Backend
):
    # Runs in rank order take the cut lists, the others the whole rankings; rankings
    # marked by the probe of judged ids and by the (query, doc) join alike.
    limit = 0 if through_join else ranking_lists.MAX_JUDGMENTS_PER_DOC
    patched = mock.patch.object(ranking_lists, "MAX_JUDGMENTS_PER_DOC", limit)
    with patched, warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        got = backend.evaluate(case.run_frame(), case.qrels_frame(), names, **case.options)
    rows = as_dict(got)
    expected = case.reference()
    assert set(rows) == set(expected)
    for key, ranking in expected.items():
        for name in names:
            want = reference.measure(name, ranking)
            assert same(rows[key][name], want), (key, name, rows[key][name], want)


def _cut(frame: pl.DataFrame, depth: int) -> pl.DataFrame:
    """The positions frame with each list cut after the relevant documents ranked within
    ``depth`` (positions ascend: a prefix of each list)."""
    kept = pl.col("positions").list.eval((pl.element() <= depth).sum()).list.first()
    lists = [name for name in ("positions", "docs", "grades") if name in frame.columns]
    return frame.with_columns(pl.col(lists).list.head(kept))


@given(case=cases(), depth=st.integers(1, 4))
@SETTINGS
def test_families_that_read_to_their_cut_off_read_nothing_below_it(case: Case, depth: int):
    # What each family declares is checked on its values: the same with the lists cut at
    # the cut-off as with the whole lists, binary and graded.
    declared = [family for family in families() if family.reads_to_cutoff]
    assert {"P", "R", "AP", "nDCG", "RR", "Success"} <= {family.name for family in declared}
    names = [f"{family.name}@{depth}" for family in declared]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        frame = lf.positions(case.run_frame(), case.qrels_frame(), grades=True, docs=True)
    whole = lf.measures(frame, names)
    assert_frame_equal(lf.measures(_cut(frame, depth), names), whole, check_exact=True)


RUN = pl.DataFrame(
    {
        "system": ["a"] * 5 + ["b"] * 2,
        "query": ["q1"] * 7,
        "doc": ["d1", "d2", "d3", "d4", "d5", "d4", "d1"],
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame({"query": ["q1"] * 3, "doc": ["d1", "d4", "d5"], "relevance": [1, 1, 1]})


def test_lists_stop_at_reach_while_n_ret_and_the_checks_count_every_row():
    whole = lf.positions(RUN, QRELS).sort("system")
    cut = lf.positions(RUN, QRELS, reach=2).sort("system")
    assert whole["positions"].to_list() == [[1, 4, 5], [1, 2]]
    assert cut["positions"].to_list() == [[1], [1, 2]]
    assert cut["n_ret"].to_list() == whole["n_ret"].to_list() == [5, 2]
    # A document ranked twice, or a NaN score, below the reach is refused as above it.
    twice = RUN.with_columns(doc=pl.Series(["d1", "d2", "d3", "d4", "d4", "d4", "d1"]))
    with pytest.raises(InputError, match="d4"):
        lf.positions(twice, QRELS, reach=2)
    not_a_number = RUN.with_columns(score=pl.Series([5.0, 4.0, 3.0, 2.0, float("nan"), 2.0, 1.0]))
    with pytest.raises(InputError, match="NaN"):
        lf.positions(not_a_number, QRELS, reach=2)
    for run in (RUN, RUN.lazy()):
        with pytest.raises(InputError, match="reach="):
            lf.positions(run, QRELS, reach=0)


def test_evaluate_cuts_the_lists_only_for_measures_that_stop_at_their_cut_off():
    # The same values as the whole lists give; AP reads every rank, so the lists stay whole.
    names = ["P@2", "AP@2", "AP"]
    expected = lf.measures(lf.positions(RUN, QRELS), names).sort("system")
    assert_frame_equal(lf.evaluate(RUN, QRELS, names).sort("system"), expected)
    with mock.patch.object(lf.evaluation, "build_positions", wraps=lf.ranking.positions) as built:
        lf.evaluate(RUN, QRELS, ["P@2", "AP@2"])
        lf.evaluate(RUN, QRELS, ["P@2", "AP"])
    assert [call.kwargs["reach"] for call in built.call_args_list] == [2, None]


def test_the_command_keeps_whole_lists_for_preferences(tmp_path):
    # sgnLP reads every rank: a metric of cut-off 1 beside it must not cut the rankings
    # (systems a and b tie at rank 1 and differ below it).
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    lines = [f"q1 Q0 {doc} {rank} {6 - rank} {system}" for system, docs in
             (("a", ["d1", "d2", "d3", "d4", "d5"]), ("b", ["d1", "d4", "d2", "d3", "d5"]))
             for rank, doc in enumerate(docs, 1)]  # fmt: skip
    run.write_text("\n".join(lines) + "\n")
    qrels.write_text("q1 0 d1 1\nq1 0 d4 1\n")
    target = tmp_path / "prefs.parquet"
    args = ["evaluate", "--qrels", str(qrels), "-m", "P@1", "-m", "sgnLP", "-o", str(target)]
    assert main([*args, str(run)]) == 0
    written = pl.read_parquet(tmp_path / "prefs-preferences.parquet")
    expected = lf.preferences(lf.positions(lf.read_run(run), lf.read_qrels(qrels)), ["sgnLP"])
    assert_frame_equal(written, expected)
    assert written["sgnLP"].to_list() == [-1.0]  # b finds its second relevant document first
