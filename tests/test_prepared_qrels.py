"""The drop-in's ranking steps against the reference (tests/reference.py): one
:class:`PreparedQrels` serving many runs and option sets in turn (as the batches of
``lexiframe trec_eval`` use it), and the marks of judged rows by a probe of id hashes
that collide."""

from __future__ import annotations

import warnings
from dataclasses import replace
from unittest import mock

import polars as pl
from hypothesis import given

import lexiframe as lf
from lexiframe.ranking import PreparedQrels
from lexiframe.ranking import lists as ranking_lists
from tests.test_properties import EDGE_CASES, SETTINGS, Case, as_dict, cases, pinned


def _positions(case: Case, qrels: PreparedQrels, judged: bool) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropped queries: tests/test_properties.py
        return lf.positions(
            case.run_frame(), qrels, docs=True, grades=True, judged=judged, **case.options
        )


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_prepared_qrels_reused_across_runs_and_options_equal_reference(case: Case):
    prepared = PreparedQrels(case.qrels_frame())
    systems = sorted({row[0] for row in case.run})
    # Each system a run of its own, at both thresholds and with and without the judged
    # columns, interleaved: every call after the first reads tables kept by another.
    for threshold in (1, 2, 1):
        for judged in (True, False):
            for system in systems:
                one = replace(
                    case,
                    run=tuple(row for row in case.run if row[0] == system),
                    threshold=threshold,
                )
                rows = as_dict(_positions(one, prepared, judged))
                expected = one.reference()
                assert set(rows) == set(expected)
                for key, ranking in expected.items():
                    row = rows[key]
                    assert row["positions"] == ranking.positions, key
                    assert (row["n_rel"], row["n_ret"]) == (ranking.n_rel, ranking.n_ret), key
                    assert row["docs"] == ranking.docs, key
                    assert row["grades"] == ranking.grades, key
                    if judged:
                        assert row["nonrel_positions"] == ranking.nonrel_positions, key
                        assert row["n_nonrel"] == ranking.n_nonrel, key


@pinned(EDGE_CASES)
@given(case=cases())
@SETTINGS
def test_marks_by_colliding_id_hashes_equal_reference(case: Case):
    """The run's rows are marked by a probe of their ids' hashes: ids whose hashes collide
    with a judged one's are marked too, and left out when the marked rows are joined to
    the judgments. A hash of two values (half the ids collide) gives the same frame."""
    with mock.patch.object(ranking_lists, "ID_HASH", pl.col("doc").hash(seed=0) % 2):
        rows = as_dict(_positions(case, PreparedQrels(case.qrels_frame()), judged=True))
    expected = case.reference()
    assert set(rows) == set(expected)
    for key, ranking in expected.items():
        row = rows[key]
        assert (row["positions"], row["docs"], row["grades"]) == (
            ranking.positions,
            ranking.docs,
            ranking.grades,
        ), key
        assert row["nonrel_positions"] == ranking.nonrel_positions, key
        assert row["pooled_positions"] == ranking.pooled_positions, key
