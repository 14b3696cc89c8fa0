"""Bad input (docs/definitions.md §6): a clear lexiframe error naming the problem and an
example row.

Every check runs on each backend: Polars eager, Polars lazy (schema checks fail at call
time, value checks when the plan is collected), and pandas. Also the explicit policies:
dropped queries are counted (a warning, and :func:`lexiframe.coverage`), and ``summarize``
groups by its ``by=`` keys.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.errors import (
    DroppedQueriesWarning,
    InputError,
    LexiframeError,
    SchemaError,
    UnknownMeasureError,
)
from tests.conftest import Backend


def make_run(**columns) -> pl.DataFrame:
    data = {
        "system": ["a", "a", "a"],
        "query": ["q1", "q1", "q1"],
        "doc": ["d1", "d2", "d3"],
        "score": [3.0, 2.0, 1.0],
    }
    data.update(columns)
    return pl.DataFrame(data)


QRELS = pl.DataFrame({"query": ["q1", "q1"], "doc": ["d2", "d9"], "relevance": [1, 1]})


def error_of(call, expected: type[Exception]) -> str:
    """Run ``call`` (collecting a lazy result inside) and return the message it raised."""
    with pytest.raises(expected) as info:
        call()
    return str(info.value)


def test_errors_are_value_errors():
    for error in (InputError, SchemaError, UnknownMeasureError):
        assert issubclass(error, LexiframeError)
        assert issubclass(error, ValueError)


# Values: duplicates, NaN and null scores, null ids -------------------------------------


def test_duplicate_run_rows(backend: Backend):
    run = make_run(doc=["d1", "d1", "d3"])
    message = error_of(lambda: backend.positions(run, QRELS), InputError)
    assert "duplicate" in message
    assert "'system', 'query', 'doc'" in message
    # an example row: the repeated document with its keys
    assert "system='a'" in message
    assert "query='q1'" in message
    assert "doc='d1'" in message


def test_duplicate_run_rows_with_the_callers_column_names(backend: Backend):
    run = make_run(doc=["d1", "d1", "d3"]).rename(
        {"system": "run", "query": "qid", "doc": "docno", "score": "sim"}
    )
    qrels = QRELS.rename({"query": "qid", "doc": "docno", "relevance": "rel"})
    names = {"system": "run", "query": "qid", "doc": "docno", "score": "sim", "relevance": "rel"}
    message = error_of(lambda: backend.positions(run, qrels, **names), InputError)
    assert "duplicate" in message
    assert "docno='d1'" in message
    assert "qid='q1'" in message


def test_duplicates_are_found_in_any_ranking(backend: Backend):
    # The duplicate sits in the second system's ranking only.
    run = pl.concat([make_run(), make_run(system=["b"] * 3, doc=["d5", "d6", "d5"])])
    message = error_of(lambda: backend.positions(run, QRELS), InputError)
    assert "system='b'" in message
    assert "doc='d5'" in message


@pytest.mark.parametrize("bad", [math.nan, None], ids=["nan", "null"])
def test_nan_and_null_scores(backend: Backend, bad):
    run = make_run(score=[3.0, bad, 1.0])
    message = error_of(lambda: backend.positions(run, QRELS), InputError)
    assert "NaN or null score" in message
    assert "'score'" in message
    assert "doc='d2'" in message  # the example row


def test_nan_score_with_the_callers_column_name(backend: Backend):
    run = make_run(score=[3.0, math.nan, 1.0]).rename({"score": "sim"})
    message = error_of(lambda: backend.positions(run, QRELS, score="sim"), InputError)
    assert "'sim'" in message
    assert "doc='d2'" in message


def test_null_document_id(backend: Backend):
    run = make_run(doc=["d1", None, "d3"])
    message = error_of(lambda: backend.positions(run, QRELS), InputError)
    assert "null document id" in message
    assert "'doc'" in message
    assert "score=2.0" in message  # the example row


@pytest.mark.parametrize("column", ["query", "system"])
def test_null_query_or_system_id_shows_an_example_row(backend: Backend, column):
    values = {"query": ["q1", None, "q1"], "system": ["a", None, "a"]}[column]
    run = make_run(**{column: values})
    message = error_of(lambda: backend.positions(run, QRELS), InputError)
    assert "null" in message
    assert repr(column) in message
    # docs/definitions.md §6: the message shows an example row (here the row with doc d2).
    assert "d2" in message


def test_null_by_key_shows_an_example_row(backend: Backend):
    # A null track would match no query and its rows would vanish: refused instead.
    run = make_run(track=["t1", None, "t1"])
    message = error_of(lambda: backend.positions(run, QRELS, by="track"), InputError)
    assert "null id in column 'track'" in message
    assert "d2" in message


def test_null_rank_names_the_rank_column(backend: Backend):
    run = make_run(rank=[1, None, 3])
    message = error_of(lambda: backend.positions(run, QRELS, rank_by="rank"), InputError)
    assert "doc='d2'" in message
    # The offending column is 'rank', not 'score' (which is fine here).
    assert "'rank'" in message
    assert "'score'" not in message


def test_infinite_scores_are_valid_numbers(backend: Backend):
    # ±inf are not NaN: +inf ranks first and -inf last. (A NaN check that sums the scores
    # of a ranking turns inf + (-inf) into NaN.)
    run = make_run(score=[-math.inf, 1.0, math.inf], doc=["d1", "d2", "d3"])
    pos = backend.positions(run, QRELS)
    assert pos["positions"].to_list() == [[2]]


# Columns: missing, misnamed, mistyped, configurable names -------------------------------


def test_missing_column(backend: Backend):
    run = make_run().drop("score")
    message = error_of(lambda: backend.positions(run, QRELS), SchemaError)
    assert "no column 'score'" in message
    assert "run" in message
    assert "'system', 'query', 'doc'" in message  # what the table does have


def test_misnamed_column_suggests_the_keyword(backend: Backend):
    # (qid, query_id, … are read as the query column: see lexiframe.as_run)
    run = make_run().rename({"query": "topic"})
    message = error_of(lambda: backend.positions(run, QRELS), SchemaError)
    assert "no column 'query'" in message
    assert "'topic'" in message
    assert "query=" in message


def test_missing_qrels_column(backend: Backend):
    message = error_of(lambda: backend.positions(make_run(), QRELS.drop("relevance")), SchemaError)
    assert "qrels" in message
    assert "'relevance'" in message


def test_configurable_column_names(backend: Backend):
    run = make_run().rename({"system": "run", "query": "qid", "doc": "docno", "score": "sim"})
    qrels = QRELS.rename({"query": "qid", "doc": "docno", "relevance": "rel"})
    names = {"system": "run", "query": "qid", "doc": "docno", "score": "sim", "relevance": "rel"}
    got = backend.evaluate(run, qrels, ["RR", "R@2"], **names)
    assert got.select("RR", "R@2").rows() == [(0.5, 0.5)]
    # only the query column renamed, in both tables
    got = backend.evaluate(
        make_run().rename({"query": "qid"}), QRELS.rename({"query": "qid"}), ["RR"], query="qid"
    )
    assert got["RR"].to_list() == [0.5]


def test_name_given_for_the_run_only_is_reported_for_the_qrels(backend: Backend):
    run = make_run().rename({"query": "qid"})
    message = error_of(lambda: backend.positions(run, QRELS, query="qid"), SchemaError)
    assert "qrels" in message
    assert "no column 'qid'" in message


@pytest.mark.parametrize(
    ("column", "values", "fragment"),
    [
        ("score", ["3", "2", "1"], "numeric"),
        ("score", [True, False, True], "numeric"),
        ("doc", [1.0, 2.0, 3.0], "strings or integers"),
    ],
)
def test_mistyped_run_column(backend: Backend, column, values, fragment):
    message = error_of(lambda: backend.positions(make_run(**{column: values}), QRELS), SchemaError)
    assert repr(column) in message
    assert fragment in message


def test_mistyped_relevance(backend: Backend):
    qrels = QRELS.with_columns(pl.col("relevance").cast(pl.String))
    message = error_of(lambda: backend.positions(make_run(), qrels), SchemaError)
    assert "'relevance'" in message
    assert "numeric" in message


def test_query_ids_int_in_run_str_in_qrels(backend: Backend):
    run = make_run(query=[1, 1, 1])
    message = error_of(lambda: backend.positions(run, QRELS), SchemaError)
    assert "query ids" in message
    assert "integers in the run" in message
    assert "strings in the qrels" in message
    assert "'q1'" in message  # example values of both sides
    assert "cast" in message.lower()


def test_doc_ids_str_in_run_int_in_qrels(backend: Backend):
    qrels = pl.DataFrame({"query": ["q1"], "doc": [2], "relevance": [1]})
    message = error_of(lambda: backend.positions(make_run(), qrels), SchemaError)
    assert "document ids" in message
    assert "strings in the run" in message
    assert "integers in the qrels" in message


def test_integer_widths_are_reconciled(backend: Backend):
    # Same kind, another width: cast, not rejected nor silently mismatched.
    run = make_run(query=[1, 1, 1]).with_columns(pl.col("query").cast(pl.Int32))
    qrels = QRELS.with_columns(query=pl.lit(1, dtype=pl.Int64))
    assert backend.positions(run, qrels)["positions"].to_list() == [[2]]


# Empty run, depth, unknown measures --------------------------------------------------


def test_empty_run(backend: Backend):
    message = error_of(lambda: backend.positions(make_run().clear(), QRELS), InputError)
    assert "empty" in message


def test_empty_run_through_evaluate(backend: Backend):
    message = error_of(lambda: backend.evaluate(make_run().clear(), QRELS, ["RR"]), InputError)
    assert "empty" in message


@pytest.mark.parametrize("depth", [0, -1, -100, True, 1.5, "10"])
def test_bad_depth(backend: Backend, depth):
    message = error_of(lambda: backend.positions(make_run(), QRELS, depth=depth), InputError)
    assert "depth" in message
    assert repr(depth) in message


def test_unknown_measure(backend: Backend):
    message = error_of(
        lambda: backend.evaluate(make_run(), QRELS, ["AP", "nDGC@10"]), UnknownMeasureError
    )
    assert "'nDGC@10'" in message
    assert "did you mean 'nDCG'?" in message  # the name meant, not every name
    message = error_of(lambda: backend.evaluate(make_run(), QRELS, ["Zzz"]), UnknownMeasureError)
    assert "nDCG" in message and "ASL" in message  # no name close: the known names


def test_bad_rank_by(backend: Backend):
    message = error_of(lambda: backend.positions(make_run(), QRELS, rank_by="bm25"), LexiframeError)
    assert "rank_by" in message


def test_missing_by_key(backend: Backend):
    message = error_of(lambda: backend.positions(make_run(), QRELS, by="track"), SchemaError)
    assert "'track'" in message


# Qrels: duplicates and null values ------------------------------------------------------


def test_duplicate_qrels_rows(backend: Backend):
    qrels = pl.concat([QRELS, QRELS.head(1)])
    message = error_of(lambda: backend.positions(make_run(), qrels), InputError)
    assert "duplicate" in message
    assert "qrels" in message
    assert "d2" in message  # the example row


def test_duplicate_qrels_rows_of_an_unretrieved_document(backend: Backend):
    # d9 is judged twice and retrieved by nobody: m must not silently become 3.
    qrels = pl.concat([QRELS, QRELS.tail(1)])
    message = error_of(lambda: backend.positions(make_run(), qrels), InputError)
    assert "duplicate" in message
    assert "qrels" in message
    assert "d9" in message


@pytest.mark.parametrize(
    "arrange",
    [
        lambda qrels: qrels.sort("query", "doc"),  # sorted: the duplicates are neighbours
        lambda qrels: qrels.sort("query", "doc", descending=True),
        lambda qrels: qrels.sample(fraction=1.0, shuffle=True, seed=3),
    ],
    ids=["sorted", "descending", "shuffled"],
)
def test_duplicate_qrels_rows_in_any_order(arrange):
    qrels = pl.DataFrame(
        {
            "query": ["q1", "q1", "q2", "q2", "q2", "q3"],
            "doc": ["d1", "d2", "d1", "d2", "d1", "d2"],
            "relevance": [1, 0, 1, 1, 2, 1],
        }
    )
    message = error_of(lambda: lf.positions(make_run(), arrange(qrels)), InputError)
    assert "query='q2' doc='d1'" in message
    # Without the repeated judgment, every order reads.
    clean = qrels.filter(pl.int_range(pl.len()) != 4)
    assert lf.positions(make_run(), arrange(clean)).height == 3


def test_duplicate_lazy_qrels_with_an_eager_run():
    qrels = pl.concat([QRELS, QRELS.tail(1)]).lazy()
    message = error_of(lambda: lf.positions(make_run(), qrels), InputError)
    assert "qrels" in message
    assert "d9" in message


@pytest.mark.parametrize(
    ("column", "values"),
    [("query", ["q1", None]), ("doc", ["d2", None]), ("relevance", [1, None])],
)
def test_null_values_in_qrels(backend: Backend, column, values):
    # A null query id becomes a query of its own, a null doc id counts towards m, a null
    # grade silently drops a judgment: each must be an error naming the column.
    qrels = QRELS.with_columns(pl.Series(column, values))
    message = error_of(lambda: backend.positions(make_run(), qrels), LexiframeError)
    assert "null" in message
    assert repr(column) in message
    assert "qrels" in message


# Dropped queries and coverage -------------------------------------------------------------


def test_dropped_queries_are_counted(backend: Backend):
    # q7 is unjudged, q8 is judged without a relevant document: neither is evaluated.
    run = make_run(system=["a", "b", "b"], query=["q1", "q7", "q8"])
    qrels = pl.concat([QRELS, pl.DataFrame({"query": ["q8"], "doc": ["d3"], "relevance": [0]})])
    if backend.warns_on_drop:
        with pytest.warns(DroppedQueriesWarning) as record:
            pos = backend.positions(run, qrels)
        message = str(record[0].message)
        assert message.startswith("2 queries")
        assert "'q7'" in message and "'q8'" in message
        assert "coverage" in message
    else:
        pos = backend.positions(run, qrels)  # a lazy plan cannot warn: coverage reports
    assert sorted(pos.select("system", "query").rows()) == [("a", "q1"), ("b", "q1")]
    cov = backend.coverage(run, qrels)
    assert cov.sort("system").rows(named=True) == [
        {"system": "a", "evaluated": 1, "skipped": 0, "unjudged": 0, "no_relevant": 0},
        {"system": "b", "evaluated": 1, "skipped": 1, "unjudged": 1, "no_relevant": 1},
    ]


def test_no_warning_when_nothing_is_dropped(backend: Backend):
    # warnings are errors in this suite: a spurious DroppedQueriesWarning would fail here
    backend.positions(make_run(), QRELS)
    backend.evaluate(make_run(), QRELS, ["RR"])


def test_threshold_can_drop_queries(backend: Backend):
    # With threshold 2 no document of q1 is relevant: q1 is dropped, and counted.
    if backend.warns_on_drop:
        with pytest.warns(DroppedQueriesWarning, match="^1 query of the run is not"):
            pos = backend.positions(make_run(), QRELS, threshold=2)
    else:
        pos = backend.positions(make_run(), QRELS, threshold=2)
    assert pos.height == 0
    cov = backend.coverage(make_run(), QRELS, threshold=2)
    assert cov.select("evaluated", "no_relevant").row(0) == (0, 1)


def test_skipped_query_is_a_worst_case_row(backend: Backend):
    qrels = pl.concat([QRELS, pl.DataFrame({"query": ["q2"], "doc": ["x"], "relevance": [2]})])
    pos = backend.positions(make_run(), qrels).sort("query")
    assert pos.select("query", "positions", "n_rel", "n_ret").rows() == [
        ("q1", [2], 2, 3),
        ("q2", [], 1, 0),
    ]
    assert backend.coverage(make_run(), qrels).select("evaluated", "skipped").row(0) == (2, 1)


# summarize --------------------------------------------------------------------------------


def test_summarize_groups_by_keys(backend: Backend):
    run = pl.concat(
        [
            make_run().with_columns(track=pl.lit("web")),
            make_run(score=[1.0, 2.0, 3.0]).with_columns(track=pl.lit("news")),
        ]
    )
    qrels = pl.concat([QRELS, pl.DataFrame({"query": ["q2"], "doc": ["x"], "relevance": [1]})])
    per_query = backend.evaluate(run, qrels, ["RR", "AP"], by="track")
    # web: q1 RR 1/2, q2 skipped (0); news: d2 is still at rank 2.
    summary = backend.summarize(per_query, by="track")
    assert summary.columns == ["track", "system", "n_queries", "RR", "AP"]
    rows = {row["track"]: row for row in summary.iter_rows(named=True)}
    assert set(rows) == {"web", "news"}
    for track in ("web", "news"):
        assert rows[track]["n_queries"] == 2
        assert rows[track]["RR"] == pytest.approx((0.5 + 0.0) / 2)
        assert rows[track]["AP"] == pytest.approx((0.25 + 0.0) / 2)


def test_summarize_needs_by_for_non_numeric_columns(backend: Backend):
    per_query = pl.DataFrame({"track": ["t"], "system": ["a"], "query": ["q"], "RR": [1.0]})
    message = error_of(lambda: backend.summarize(per_query), InputError)
    assert "'track'" in message
    assert "by=" in message
    message = error_of(lambda: backend.summarize(per_query, by="year"), SchemaError)
    assert "'year'" in message


def test_measures_needs_a_positions_frame(backend: Backend):
    message = error_of(lambda: backend.measures(make_run(), ["RR"]), SchemaError)
    assert "positions" in message


def test_per_track_qrels_join_on_by_keys(backend: Backend):
    # When the qrels carry the by= key too, each track is judged by its own qrels; the same
    # (system, query, doc) in two tracks is not a duplicate.
    run = pl.concat(
        [make_run().with_columns(track=pl.lit("t1")), make_run().with_columns(track=pl.lit("t2"))]
    )
    qrels = pl.DataFrame(
        {
            "track": ["t1", "t2", "t2"],
            "query": ["q1", "q1", "q9"],
            "doc": ["d2", "d1", "x"],
            "relevance": [1, 1, 1],
        }
    )
    pos = backend.positions(run, qrels, by="track").sort("track", "query")
    assert pos.select("track", "query", "positions", "n_rel", "n_ret").rows() == [
        ("t1", "q1", [2], 1, 3),
        ("t2", "q1", [1], 1, 3),
        ("t2", "q9", [], 1, 0),
    ]
    summary = backend.summarize(backend.evaluate(run, qrels, ["RR"], by="track"), by="track")
    assert summary.select("track", "n_queries", "RR").rows() == [("t1", 1, 0.5), ("t2", 2, 0.5)]
    cov = backend.coverage(run, qrels, by="track")
    assert cov.select("track", "evaluated", "skipped").rows() == [("t1", 1, 0), ("t2", 2, 1)]


@pytest.mark.parametrize("partitions", [0, -2, 1.5, True])
def test_bad_partitions(backend: Backend, partitions):
    message = error_of(
        lambda: backend.positions(make_run(), QRELS, partitions=partitions), InputError
    )
    assert "partitions must be a positive integer or None" in message


# A positions frame made by hand --------------------------------------------------------


def hand_built(positions: list[int | None] | None, n_rel: int = 2, n_ret: int = 10):
    return pl.DataFrame(
        {
            "system": ["a", "b"],
            "query": ["q1", "q1"],
            "positions": [[1], positions],
            "n_rel": [n_rel, n_rel],
            "n_ret": [n_ret, n_ret],
        },
        schema_overrides={"positions": pl.List(pl.Int64)},
    )


@pytest.mark.parametrize(
    ("positions", "column"),
    [
        ([1, 1], "positions"),  # AP 1.5 before
        ([3, 1], "positions"),  # AP 1.17
        ([-1], "positions"),  # RR -1
        ([0], "positions"),
        ([1, None], "positions"),
        (None, "positions"),
        ([1, 2, 3], "n_rel"),  # three relevant ranks of two relevant documents
        ([1, 11], "n_ret"),  # a rank past the end of the ranking
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_measures_refuse_impossible_positions(positions, column, lazy):
    frame = hand_built(positions)
    with pytest.raises(InputError) as info:
        result = lf.measures(frame.lazy() if lazy else frame, ["AP", "RR"])
        if lazy:
            result.collect()
    assert info.value.column == column
    assert info.value.example["system"] == "b"
    assert f"column {column!r} of the positions frame" in str(info.value)


def test_measures_refuse_positions_that_are_not_integers():
    frame = hand_built([1]).with_columns(pl.col("positions").cast(pl.List(pl.Float64)))
    with pytest.raises(SchemaError, match="list of integers"):
        lf.measures(frame, ["AP"])


@given(
    ranks=st.lists(st.integers(min_value=-2, max_value=12), max_size=5),
    n_rel=st.integers(min_value=0, max_value=6),
)
@settings(max_examples=150, deadline=None)
def test_measures_accept_exactly_the_possible_positions(ranks, n_rel):
    """Accepted iff the ranks are 1 ≤ p1 < p2 < … ≤ n_ret and there are at most n_rel."""
    possible = (
        ranks == sorted(set(ranks))
        and all(1 <= rank <= 10 for rank in ranks)
        and len(ranks) <= n_rel
    )
    frame = hand_built(ranks, n_rel=n_rel).slice(1)
    if possible:
        rr = lf.measures(frame, ["RR"])["RR"].item()
        assert rr == (1 / ranks[0] if ranks else 0.0)
    else:
        with pytest.raises(InputError):
            lf.measures(frame, ["RR"])
