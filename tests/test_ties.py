"""``ties=``: trec_eval's rule, the run's own ranks, and the expectation over every ordering
of the tied documents (``ties="expected"``), checked against every ordering enumerated.

The enumeration evaluates each ordering of the tie groups as a run without ties (one
system per ordering, scores strictly decreasing) through lexiframe's default path, which
the parity tests hold to trec_eval, and averages: the mean must be ``ties="expected"``.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from functools import partial

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.errors import InputError, LexiframeWarning

MEASURES = ["P@1", "P@3", "R@2", "RP", "Success@1", "Success@3", "RR", "RR@2", "AP", "AP@3",
            "nDCG", "nDCG@3", "nDCG(gains={2: 5})", "RBP(p=0.5)", "Bpref", "SetP", "NumRelRet",
            "AP(rel=2)", "P(rel=2)@2", "RelativeP@2", "RPrecMult@1.5", "Judged", "Judged@3",
            "Unjudged@3", "SetAP", "Utility", "BinG", "BinG(rel=2)", "RBPResid(p=0.5)",
            "NumRelRet@2", "SetF@3", "nDCG(gains='exp')@3", "RBP(rel=2)", "DCG", "DCG@3",
            "DCG(gains={1: -1, 2: 5})", "DCG(gains='exp')@2", "IDCG", "IDCG@2"]  # fmt: skip
"""Every family with a closed form, with and without cut-offs, levels and gain maps."""

UNJUDGED = None
Grade = int | None
Groups = list[list[Grade]]


def _quietly(call: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        return call()


def _orderings(groups: Groups) -> int:
    return math.prod(math.factorial(len(group)) for group in groups)


# A query: tie groups in score order, each document unjudged (None), pooled (-1), judged
# non-relevant (0) or graded 1 or 2; the qrels may hold relevant and non-relevant documents
# the run did not retrieve.
grades = st.sampled_from([UNJUDGED, -1, 0, 0, 1, 2])
groups_strategy = st.lists(st.lists(grades, min_size=1, max_size=4), min_size=1, max_size=4).filter(
    lambda groups: _orderings(groups) <= 576
)
query_strategy = st.tuples(groups_strategy, st.integers(0, 2), st.integers(1, 2))


def _frames(
    queries: list[tuple[Groups, int, int]],
) -> tuple[pl.DataFrame, pl.DataFrame, list[list[tuple[str, Grade]]]]:
    """The run with its ties (system "x"), the qrels, and each query's groups of documents
    as (doc id, grade) pairs."""
    run, qrels, named = [], [], []
    for q, (groups, missed_relevant, missed_nonrel) in enumerate(queries):
        query, docs = f"q{q}", []
        for g, group in enumerate(groups):
            docs.append([(f"d{g}{i}", grade) for i, grade in enumerate(group)])
            run += [("x", query, doc, float(len(groups) - g), g + 1) for doc, _ in docs[-1]]
        judged = [(doc, grade) for group in docs for doc, grade in group if grade is not None]
        extra = [(f"m{i}", 1) for i in range(missed_relevant)]
        extra += [(f"n{i}", 0) for i in range(missed_nonrel)]
        qrels += [(query, doc, grade) for doc, grade in [*judged, *extra]]
        named.append(docs)
    run_frame = pl.DataFrame(run, schema=["system", "query", "doc", "score", "rank"], orient="row")
    # A query the run skipped: an empty ranking between the others.
    qrels += [("q0-skipped", "m0", 2), ("q0-skipped", "n0", 0)]
    qrels_frame = pl.DataFrame(qrels, schema=["query", "doc", "relevance"], orient="row")
    return run_frame, qrels_frame, named


def _every_ordering(query: str, docs: list[list[tuple[str, Grade]]]) -> pl.DataFrame:
    """One system per ordering of the query's tie groups, its scores strictly decreasing and
    its ranks increasing."""
    rows = []
    perms = [list(itertools.permutations(group)) for group in docs]
    for index, choice in enumerate(itertools.product(*perms)):
        order = [doc for part in choice for doc, _ in part]
        rows += [(f"o{index}", query, doc, float(-i), i + 1) for i, doc in enumerate(order)]
    return pl.DataFrame(rows, schema=["system", "query", "doc", "score", "rank"], orient="row")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    queries=st.lists(query_strategy, min_size=1, max_size=3),
    threshold=st.sampled_from([1, 2]),
    condensed=st.booleans(),
    rank_by=st.sampled_from(["score", "rank"]),
)
def test_expected_is_the_mean_over_every_ordering_of_the_ties(
    queries, threshold, condensed, rank_by
):
    """Groups of equal scores, or of equal ranks under rank_by="rank"."""
    run, qrels, named = _frames(queries)
    options = {
        "threshold": threshold, "condensed": condensed, "no_relevant": "keep", "rank_by": rank_by
    }  # fmt: skip
    measures = [m for m in MEASURES if "rel=2" not in m or threshold <= 2]
    expected = _quietly(lambda: lf.evaluate(run, qrels, measures, ties="expected", **options))
    skipped = expected.filter(pl.col("query") == "q0-skipped")
    plain = _quietly(lambda: lf.evaluate(run, qrels, measures, **options))
    assert skipped.equals(plain.filter(pl.col("query") == "q0-skipped"))
    for q, docs in enumerate(named):
        query = f"q{q}"
        own = qrels.filter(pl.col("query") == query)
        every = _every_ordering(query, docs)
        per_ordering = _quietly(partial(lf.evaluate, every, own, measures, **options))
        means = per_ordering.select(pl.col(measures).mean()).row(0, named=True)
        got = expected.filter(pl.col("query") == query).row(0, named=True)
        for name in measures:
            assert math.isclose(got[name], means[name], rel_tol=1e-9, abs_tol=1e-12), (
                name, docs, got[name], means[name],
            )  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.integers(0, 10_000), min_size=1, max_size=12, unique=True),
    grades=st.lists(st.sampled_from([UNJUDGED, 0, 1, 2]), min_size=12, max_size=12),
)
def test_without_ties_expected_is_the_measure_itself(scores, grades):
    run = pl.DataFrame({"system": "x", "query": "q", "doc": [f"d{i}" for i in range(len(scores))],
                        "score": [float(s) for s in scores]})  # fmt: skip
    judged = [(f"d{i}", g) for i, g in enumerate(grades[: len(scores)]) if g is not None]
    qrels = pl.DataFrame([("q", d, g) for d, g in judged] + [("q", "m", 1)],
                         schema=["query", "doc", "relevance"], orient="row")  # fmt: skip
    plain = _quietly(lambda: lf.evaluate(run, qrels, MEASURES))
    expected = _quietly(lambda: lf.evaluate(run, qrels, MEASURES, ties="expected"))
    for name in MEASURES:
        assert math.isclose(expected[name].item(), plain[name].item(), rel_tol=1e-12, abs_tol=1e-15)


def test_a_constant_scorer_gets_the_expected_rr_not_a_perfect_one():
    """One group of 5 documents, 2 of them relevant: trec_eval's rule puts a relevant one
    first (its id is the largest), the expectation is the mean of 1/(first relevant place)
    over the C(5, 2) placements, computed here with fractions."""
    run = pl.DataFrame({"system": "const", "query": "q", "doc": ["a", "b", "c", "y", "z"],
                        "score": 0.0})  # fmt: skip
    qrels = pl.DataFrame({"query": "q", "doc": ["z", "y", "a"], "relevance": [1, 1, 0]})
    places = list(itertools.combinations(range(1, 6), 2))
    exact = sum((Fraction(1, min(pair)) for pair in places), Fraction(0)) / len(places)
    assert exact == Fraction(77, 120)
    got = lf.evaluate(run, qrels, ["RR", "AP"], ties="expected")
    assert lf.evaluate(run, qrels, ["RR"])["RR"].item() == 1.0  # trec_eval's rule
    assert got["RR"].item() == pytest.approx(float(exact), abs=1e-15)
    ap = sum((Fraction(1, a) + Fraction(2, b) for a, b in places), Fraction(0)) / (2 * len(places))
    assert got["AP"].item() == pytest.approx(float(ap), abs=1e-15)


def test_rank_breaks_ties_by_the_runs_own_ranks():
    """d1 and d2 tie on score; the run ranked d1 first, trec_eval's rule puts d2 first."""
    run = pl.DataFrame({"system": "s", "query": "q", "doc": ["d1", "d2", "d3"],
                        "score": [1.0, 1.0, 0.5], "rank": [1, 2, 3]})  # fmt: skip
    qrels = pl.DataFrame({"query": "q", "doc": ["d1"], "relevance": [1]})
    values = {
        ties: lf.evaluate(run, qrels, ["RR"], ties=ties)["RR"].item()
        for ties in ("trec_eval", "rank", "expected")
    }
    assert values == {"trec_eval": 0.5, "rank": 1.0, "expected": 0.75}
    # A rank tie falls back on the document id, descending.
    tied_ranks = run.with_columns(rank=pl.Series([1, 1, 3]))
    assert lf.evaluate(tied_ranks, qrels, ["RR"], ties="rank")["RR"].item() == 0.5


def test_the_tie_groups_are_those_of_the_compat_precision():
    """Scores equal as 32-bit floats tie under trec_eval 9.0.8, not under 10.0."""
    run = pl.DataFrame({"system": "s", "query": "q", "doc": ["d1", "d2"],
                        "score": [1.0, 1.0 + 1e-12]})  # fmt: skip
    qrels = pl.DataFrame({"query": "q", "doc": ["d1"], "relevance": [1]})
    ten = lf.positions(run, qrels, ties="expected")
    nine = lf.positions(run, qrels, ties="expected", compat="trec_eval-9.0.8")
    assert ten.select("tie_starts", "tie_sizes").row(0) == ([], [])
    assert nine.select("tie_starts", "tie_sizes").row(0) == ([0], [2])
    assert lf.evaluate(run, qrels, ["RR"], ties="expected", compat="trec_eval-9.0.8")[
        "RR"
    ].item() == pytest.approx(0.75)


@pytest.mark.parametrize("name", ["ERR@10", "IPrec@0.5", "IPrecAvg", "ASL", "TSE", "G", "infAP"])
def test_a_measure_without_a_closed_form_is_refused_by_name(name):
    run = pl.DataFrame({"system": "s", "query": "q", "doc": ["d1", "d2"], "score": 1.0})
    qrels = pl.DataFrame({"query": "q", "doc": ["d1"], "relevance": [1]})
    with pytest.raises(InputError, match=r"has no closed form over the orderings of tied") as info:
        lf.evaluate(run, qrels, [name], ties="expected", n=10)
    assert "RR, AP, nDCG" in str(info.value)
    frame = lf.positions(run, qrels, ties="expected", judged=True, grades=True)
    with pytest.raises(InputError, match="no closed form"):
        _quietly(lambda: lf.measures(frame, [name], n=10))


def test_the_option_is_checked():
    with pytest.raises(InputError, match=r"ties must be 'trec_eval' or 'rank' or 'expected'"):
        lf.PositionsOptions(ties="random")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"ties='expected' cannot take depth=10"):
        lf.PositionsOptions(ties="expected", depth=10)
    run = pl.DataFrame({"system": "s", "query": "q", "doc": ["d1"], "score": 1.0})
    qrels = pl.DataFrame({"query": "q", "doc": ["d1"], "relevance": [1]})
    with pytest.raises(lf.errors.SchemaError, match="rank"):
        lf.positions(run, qrels, ties="rank")


def test_the_command_line_takes_ties_and_refuses_in_flag_words(tmp_path, capsys):
    from lexiframe.cli import main

    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0 const\nq1 Q0 b 2 0 const\nq1 Q0 z 3 0 const\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 z 1\nq1 0 a 0\n")
    out = tmp_path / "per_query.csv"
    argv = ["evaluate", str(run), "--qrels", str(qrels), "-m", "RR", "--per-query"]
    assert main([*argv, "--ties", "expected", "--output", str(out)]) == 0
    assert pl.read_csv(out)["RR"].item() == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert main([*argv, "--ties", "rank", "--output", str(out)]) == 0
    assert pl.read_csv(out)["RR"].item() == pytest.approx(1 / 3)  # the file's rank 3
    capsys.readouterr()
    assert (
        main(["evaluate", str(run), "--qrels", str(qrels), "-m", "ERR@10", "--ties", "expected"])
        == 2
    )
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "ERR@10 has no closed form" in error and "--ties trec_eval or --ties rank" in error


def test_the_namespaces_and_the_pandas_accessor_take_ties():
    """``.lexi.positions`` then ``.lexi.measures`` on a DataFrame, a LazyFrame and pandas
    give what ``lf.evaluate(..., ties="expected")`` gives."""
    from tests.conftest import polars_to_pandas

    run = pl.DataFrame({"system": ["s"] * 4 + ["t"] * 2, "query": "q",
                        "doc": ["a", "b", "c", "d", "a", "b"],
                        "score": [2.0, 1.0, 1.0, 1.0, 5.0, 5.0]})  # fmt: skip
    qrels = pl.DataFrame({"query": "q", "doc": ["c", "a"], "relevance": [1, 0]})
    names = ["AP", "P@2", "Bpref"]
    expected = lf.evaluate(run, qrels, names, ties="expected").sort("system")
    eager = run.lexi.positions(qrels, ties="expected", judged=True).lexi.measures(names)
    lazy = run.lazy().lexi.positions(qrels, ties="expected", judged=True).lexi.measures(names)
    pandas = polars_to_pandas(run).lexi.evaluate(polars_to_pandas(qrels), names, ties="expected")
    for got in (eager, lazy.collect(), pl.from_pandas(pandas)):
        assert got.sort("system").equals(expected)
    # s: c is one of 3 tied at ranks 2-4; t: a and b tie, a judged non-relevant.
    assert expected["P@2"].to_list() == pytest.approx([1 / 6, 0.0])


def test_expected_ties_and_probability_labels_are_refused_together():
    # Two expectations at once (over orderings and over relevance) have no closed form here.
    with pytest.raises(InputError, match="ties='expected' cannot take labels='probability'"):
        lf.PositionsOptions(ties="expected", labels="probability")
