"""nDCG with gains and ERR against the programs researchers take them from.

Golden files (provenance in ``tests/data/README.md``), on trec_eval's test collection and
the toy track:

- ``q.c.ndcg.<gains>.txt``: ``trec_eval -q -c -m runid -m ndcg.<gains>`` (trec_eval 10.0),
  for the gains ``0=0,1=1,2=3`` and ``1=-1,2=2.5`` (a negative and a fractional gain);
- ``toy/expected/trec_eval_cli/gains=<gains>.q.c.ndcg_cut.txt``: trec_eval's
  ``ndcg_cut.5,10,20`` on the toy qrels with each grade replaced by its gain (trec_eval's
  ``ndcg_cut`` takes no gains; this is how ir_measures computes ``nDCG(gains=…)@k``);
- ``gdeval/k<k>.csv``: the TREC Web track's ``gdeval.pl qrels run k`` (ir_measures' copy,
  version 1.2a), whose last column is ERR@k; ``max_grade=2.k10.csv``: the same script with
  its largest grade ``MAX_JUDGMENT`` set to 2.

trec_eval prints 4 decimals and gdeval 5: values agree within half a unit of the last digit.
"""

from __future__ import annotations

import math
import re
import warnings
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.errors import DroppedQueriesWarning
from tests.conftest import DATA, Backend
from tests.test_trec_eval_parity import COLLECTIONS, Golden, collection, parse_runs

TREC_EVAL_TOLERANCE = 5e-5 + 1e-9
GDEVAL_TOLERANCE = 5e-6 + 1e-9

GAINS = {
    # trec_eval's parameters: the registry's name
    "0=0,1=1,2=3": "nDCG(gains={0: 0, 1: 1, 2: 3})",
    "1=-1,2=2.5": "nDCG(gains={1: -1, 2: 2.5})",
}
CUT_GAINS = {
    "0=0,1=1,2=3": "nDCG(gains={0: 0, 1: 1, 2: 3})",
    "1=4,2=1": "nDCG(gains={1: 4, 2: 1})",  # the ideal order is by gain, not by grade
}
CUTOFFS = (5, 10, 20)


def ndcg_golden_path(name: str, gains: str) -> Path:
    if name == "trec_eval":
        return DATA / "trec_eval" / "cli" / f"q.c.ndcg.{gains}.txt"
    return DATA / "toy" / "expected" / "trec_eval_cli" / f"q.c.ndcg.{gains}.txt"


def files(name: str) -> list[str]:
    """The qrels and run files of a collection, as a command line takes them."""
    if name == "trec_eval":
        return [str(DATA / "trec_eval" / "qrels.test"), str(DATA / "trec_eval" / "results.test")]
    runs = sorted(str(path) for path in (DATA / "toy" / "runs").iterdir())
    return [str(DATA / "toy" / "qrels.txt"), *runs]


def quietly(function, *args, **kwargs):
    """Call ``function`` with the dropped-query warning (the toy's unjudged 888) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        return function(*args, **kwargs)


def values(frame: pl.DataFrame, column: str) -> dict[tuple[str, str], float]:
    return {(s, q): v for s, q, v in frame.select("system", "query", column).iter_rows()}


def assert_close(got: float, want: float, tolerance: float, what: object) -> None:
    assert abs(got - want) <= tolerance, f"{what}: lexiframe {got!r}, reference {want!r}"


def compare_trec_eval(
    got: dict[tuple[str, str], float], goldens: dict[str, Golden], te_name: str
) -> int:
    """Every per-query value trec_eval -c printed (every judged query, skipped ones as 0)."""
    checked = 0
    for system, golden in goldens.items():
        expected = golden.per_query[te_name]
        assert {q for s, q in got if s == system} == set(expected), system
        for query, want in expected.items():
            assert_close(got[(system, query)], want, TREC_EVAL_TOLERANCE, (system, query))
            checked += 1
    return checked


# --- nDCG with gains: trec_eval -m ndcg.<gains> ---------------------------------------------


@pytest.mark.parametrize("gains", sorted(GAINS))
@pytest.mark.parametrize("name", COLLECTIONS)
def test_ndcg_with_gains_is_trec_evals_ndcg(name, gains, backend: Backend):
    data = collection(name)
    measure = GAINS[gains]
    goldens = parse_runs(ndcg_golden_path(name, gains))
    assert set(goldens) == set(data.golden)
    got = quietly(backend.evaluate, data.run, data.qrels, [measure], no_relevant="keep")
    assert compare_trec_eval(values(got, measure), goldens, f"ndcg_{gains}") > 0
    # The positions path, with the grades the measure reads (binary qrels included).
    pos = quietly(backend.positions, data.run, data.qrels, no_relevant="keep", grades=True)
    by_positions = backend.measures(pos, [measure])
    assert compare_trec_eval(values(by_positions, measure), goldens, f"ndcg_{gains}") > 0


def test_the_goldens_hold_what_the_gains_test():
    """Negative values (a retrieved grade-1 document costs 1) and queries whose ideal DCG is
    positive though some values are 0: the second map is not the plain ndcg in disguise."""
    toy = parse_runs(ndcg_golden_path("toy", "1=-1,2=2.5"))
    printed = [v for g in toy.values() for v in g.per_query["ndcg_1=-1,2=2.5"].values()]
    assert min(printed) < 0 < max(printed)
    plain = collection("toy").golden["sys000"].per_query["ndcg"]
    assert toy["sys000"].per_query["ndcg_1=-1,2=2.5"] != plain


@pytest.mark.parametrize("gains", sorted(CUT_GAINS))
def test_ndcg_with_gains_at_cutoffs_is_ndcg_cut_on_regraded_qrels(gains, backend: Backend):
    data = collection("toy")
    path = DATA / "toy" / "expected" / "trec_eval_cli" / f"gains={gains}.q.c.ndcg_cut.txt"
    goldens = parse_runs(path)
    names = {k: f"{CUT_GAINS[gains]}@{k}" for k in CUTOFFS}
    got = quietly(backend.evaluate, data.run, data.qrels, list(names.values()), no_relevant="keep")
    for k, measure in names.items():
        assert compare_trec_eval(values(got, measure), goldens, f"ndcg_cut_{k}") > 0


def test_ndcg_with_gains_at_cutoffs_on_binary_qrels_is_ndcg_cut():
    """trec_eval's collection is binary: grade 1 gains 1 whatever grade 2 would, so the
    gains give its ndcg_cut_k (its all_trec golden)."""
    data = collection("trec_eval")
    names = {k: f"nDCG(gains={{0: 0, 1: 1, 2: 3}})@{k}" for k in CUTOFFS}
    got = lf.evaluate(data.run, data.qrels, list(names.values()), no_relevant="keep")
    for k, measure in names.items():
        assert compare_trec_eval(values(got, measure), data.golden, f"ndcg_cut_{k}") > 0


def test_trec_evals_spelling_is_the_same_measure():
    for gains, measure in GAINS.items():
        assert str(lf.parse_measure(f"ndcg_{gains}")) == measure  # as trec_eval prints it
        assert str(lf.parse_measure(f"ndcg.{gains}")) == measure  # as -m takes it
        assert str(lf.parse_measure(measure)) == measure


@pytest.mark.parametrize("gains", sorted(GAINS))
@pytest.mark.parametrize("name", COLLECTIONS)
def test_the_drop_in_prints_trec_evals_lines(name, gains, capsys):
    """``lexiframe trec_eval -q -c -m runid -m ndcg.<gains>``: trec_eval's own text, line for
    line (its name ``ndcg_<gains>``, negative values, the ``all`` means)."""
    flags = ["-q", "-c", "-m", "runid", "-m", f"ndcg.{gains}"]
    assert main(["trec_eval", *flags, *files(name)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == ndcg_golden_path(name, gains).read_text().splitlines()


# --- ERR: gdeval ------------------------------------------------------------------------------


@cache
def gdeval(name: str, label: str) -> dict[tuple[str, str], float]:
    """gdeval's ERR per (run, topic): the last column of its CSV lines."""
    folder = DATA / "trec_eval" / "gdeval" if name == "trec_eval" else DATA / "toy/expected/gdeval"
    found = {}
    for line in (folder / f"{label}.csv").read_text().splitlines():
        run, topic, _ndcg, err = line.split(",")
        if run == "runid":
            continue  # the header each call prints
        assert (run, topic) not in found
        found[(run, topic)] = float(err)
    return found


def compare_gdeval(got: dict[tuple[str, str], float], expected: dict[tuple[str, str], float]):
    """gdeval prints the topics a run answered that have a relevant document; the other
    rankings lexiframe evaluates are the skipped queries, which score 0."""
    assert set(expected) <= set(got)
    for key, want in expected.items():
        assert_close(got[key], want, GDEVAL_TOLERANCE, key)
    return set(got) - set(expected)


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("name", COLLECTIONS)
def test_err_is_gdevals(name, k, backend: Backend):
    data = collection(name)
    measure = f"ERR@{k}"
    got = quietly(backend.evaluate, data.run, data.qrels, [measure])
    pos = quietly(backend.positions, data.run, data.qrels)
    skipped = {
        (s, q) for s, q, n_ret in pos.select("system", "query", "n_ret").iter_rows() if n_ret == 0
    }
    assert compare_gdeval(values(got, measure), gdeval(name, f"k{k}")) == skipped
    assert all(values(got, measure)[key] == 0.0 for key in skipped)
    if name == "toy":
        assert ("sys002", "413") in skipped  # the toy's skipped query


def test_err_with_a_smaller_max_grade_is_gdevals_with_that_max(backend: Backend):
    data = collection("toy")
    measure = "ERR(max_grade=2)@10"
    got = quietly(backend.evaluate, data.run, data.qrels, [measure])
    compare_gdeval(values(got, measure), gdeval("toy", "max_grade=2.k10"))
    # A different number from the default G = 4: the golden does test max_grade.
    default = gdeval("toy", "k10")
    assert any(
        abs(default[key] - value) > 0.1 for key, value in gdeval("toy", "max_grade=2.k10").items()
    )


@pytest.mark.parametrize("name", COLLECTIONS)
def test_err_and_gains_through_the_command_line(name, tmp_path, capsys):
    """``lexiframe evaluate -m 'ERR@10' -m 'nDCG(gains=…)'`` reads the grades by itself, on
    binary qrels too, and prints gdeval's and trec_eval's numbers."""
    target = tmp_path / "per_query.parquet"
    qrels, *runs = files(name)
    measures = ["-m", "ERR@10", "-m", GAINS["1=-1,2=2.5"], "-m", "nDCG@10"]
    argv = ["evaluate", "--qrels", qrels, *measures, "--no-relevant", "keep", "-o", str(target)]
    assert main([*argv, *runs]) == 0
    capsys.readouterr()
    got = pl.read_parquet(target)
    compare_gdeval(values(got, "ERR@10"), gdeval(name, "k10"))
    goldens = parse_runs(ndcg_golden_path(name, "1=-1,2=2.5"))
    compare_trec_eval(values(got, GAINS["1=-1,2=2.5"]), goldens, "ndcg_1=-1,2=2.5")


# trec_eval -q -c -m runid -m ndcg.1=2.5,2=2 qrels.txt runs/sys000 (provenance in
# tests/data/README.md)
ORDER_GOLDEN = DATA / "toy" / "expected" / "trec_eval_cli" / "q.c.ndcg.1=2.5,2=2.sys000.txt"


def test_trec_evals_order_of_fractional_gains_is_what_lexiframe_refuses():
    """trec_eval sorts its gains by their difference cut to a whole number (2.5 and 2
    compare equal), so its ideal DCG takes grade 2 (gain 2) before grade 1 (gain 2.5). The
    model of that order (``ideal_gain_order``) gives trec_eval's printed values query by
    query; lexiframe refuses such gains rather than print another number."""
    from lexiframe.metrics.gain_order import ideal_gain_order

    gains = {0: 0.0, 1: 2.5, 2: 2.0}
    assert ideal_gain_order([(1, 2.5), (2, 2.0)], [1, 2]) == [2.0, 2.5]
    data = collection("toy")
    run = data.run.filter(pl.col("system") == "sys000")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        frame = lf.positions(run, data.qrels, no_relevant="keep", grades=True)
    golden = parse_runs(ORDER_GOLDEN)["sys000"].per_query["ndcg_1=2.5,2=2"]
    assert set(golden) == set(frame["query"])
    differs = 0
    for row in frame.iter_rows(named=True):
        ranked = zip(row["positions"], row["grades"], strict=True)
        dcg = sum(gains[grade] / math.log2(rank + 1) for rank, grade in ranked)
        counts = {g: row["ideal_grades"].count(g) for g in set(row["ideal_grades"])}
        order = ideal_gain_order([(1, 2.5), (2, 2.0)], counts)
        by_gain = {gains[g]: g for g in counts}
        ideal = [gain for gain in order for _ in range(counts[by_gain[gain]])]
        idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
        value = dcg / idcg if idcg else 0.0
        assert abs(value - golden[row["query"]]) <= TREC_EVAL_TOLERANCE, row["query"]
        differs += order != sorted(order, reverse=True)
    assert differs > 0  # the order matters on this track
    with pytest.raises(lf.InputError, match="difference cut to a whole number"):
        lf.evaluate(run, data.qrels, ["nDCG(gains={1: 2.5, 2: 2})"])
    # Gains 1 apart or more keep their order in trec_eval's sort: computed.
    assert lf.evaluate(run, data.qrels, ["nDCG(gains={1: 3.5, 2: 2})"]).height > 0


# trec_eval -q -m runid -m ndcg.0=0,1=0.5,5=-0.3 qrels.test results.test, then the same
# with -m ndcg.1=0.5,0=0 (provenance in tests/data/README.md)
ORDER_OF_PAIRS = DATA / "trec_eval" / "cli" / "q.ndcg.order.txt"


def test_trec_evals_sort_decides_where_its_ideal_dcg_starts_and_lexiframe_refuses(capsys):
    """trec_eval starts its ideal DCG at the gain its sort puts on top, whatever its grade:
    ``ndcg.0=0,1=0.5,5=-0.3`` puts grade 5's -0.3 there (the three gains compare equal and
    keep their order) and prints 0 for every query; ``ndcg.1=0.5,0=0`` keeps grade 0's 0
    above 0.5 and prints 0 too. The model says so, and lexiframe refuses both (the second,
    pairs out of grade order, as it is spelled)."""
    from lexiframe.metrics.gain_order import ideal_gain_order

    golden = {}
    for line in ORDER_OF_PAIRS.read_text().splitlines():
        name, query, value = line.split()
        if query != "all":
            golden[(name, query)] = float(value)
    assert set(golden.values()) == {0.0}
    assert {n for n, _ in golden} == {"ndcg_0=0,1=0.5,5=-0.3", "ndcg_1=0.5,0=0"}
    assert ideal_gain_order([(0, 0.0), (1, 0.5), (5, -0.3)], [1]) == []
    assert ideal_gain_order([(1, 0.5), (0, 0.0)], [1]) == []
    for argument, refusal in [
        ("ndcg.0=0,1=0.5,5=-0.3", "trec_eval compares gains by their difference cut"),
        ("ndcg.1=0.5,0=0", "give the pairs in that order (ndcg.0=0,1=0.5)"),
    ]:
        assert main(["trec_eval", "-q", "-m", argument, *files("trec_eval")]) == 2
        assert refusal in capsys.readouterr().err, argument
    # Whole gains compare consistently: any order of the pairs is trec_eval's.
    assert str(lf.parse_measure("ndcg.2=4,1=2")) == "nDCG(gains={1: 2, 2: 4})"


def test_trec_evals_parameterised_spellings():
    assert str(lf.parse_measure("set_F.0.5")) == "SetF(beta=0.5)"
    assert str(lf.parse_measure("set_F_2")) == "SetF(beta=2.0)"
    for spelling, reason in [
        ("rbp.1=2", "gains per grade (1=2) are not computed for trec_eval's rbp"),
        ("rbp_resid.p=0.8,2=3", "rbp_resid reads no gains per grade (2=3"),
        ("rbp_resid_2=3", "name it rbp_resid"),
        ("binG.1=2", "binG takes no parameters"),
        ("ndcg.x=2", "trec_eval's ndcg gains are grade=gain pairs, e.g. ndcg.0=0,1=1,2=3"),
        ("G.x=2", "trec_eval's G gains are grade=gain pairs, e.g. G.0=0,1=1,2=3"),
        ("ndcg_rel.1=2,1=3", "grade 1 is given a gain twice"),
        ("ndcg.2=0.5,1=1", "give the pairs in that order (ndcg.1=1,2=0.5)"),
        ("ndcg.2=3e9,1=1", "give the pairs in that order (ndcg.1=1,2=3000000000)"),
    ]:
        with pytest.raises(lf.UnknownMeasureError, match=re.escape(reason)):
            lf.parse_measure(spelling)


@given(
    gains=st.dictionaries(
        st.integers(1, 6), st.integers(-3, 12).map(lambda g: g / 2), min_size=1, max_size=5
    ),
    levels=st.sets(st.integers(1, 7), max_size=6),
)
@settings(max_examples=200, deadline=None)
def test_trec_evals_gain_order_is_exact_when_gains_are_a_whole_number_apart(gains, levels):
    """trec_eval's sort cuts the difference of two gains to a whole number: where every two
    distinct gains of a query are 1 or more apart, its ideal DCG takes the positive gains
    best first, as lexiframe computes it (the toy's test above shows the other case)."""
    from lexiframe.metrics.gain_order import ideal_gain_order

    pairs = sorted((grade, float(gain)) for grade, gain in gains.items())
    top = max({0, *levels, *gains})
    values = [gains.get(g, float(g)) for g in range(top + 1)]
    exact = sorted(gains.get(g, float(g)) for g in levels if gains.get(g, float(g)) > 0)
    apart = all(a == b or abs(a - b) >= 1 for a in values for b in values)
    if apart:
        assert ideal_gain_order(pairs, levels) == exact[::-1]
