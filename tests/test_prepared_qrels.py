"""One :class:`PreparedQrels` serves many runs and option sets in turn (as the batches of
``lexiframe trec_eval`` use it): each positions frame equals the reference's
(tests/reference.py) for its own run and options."""

from __future__ import annotations

import warnings
from dataclasses import replace

import polars as pl
from hypothesis import given

import lexiframe as lf
from lexiframe.ranking import PreparedQrels
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
