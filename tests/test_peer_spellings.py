"""ir_measures' and ranx's spellings of measures (lexiframe/metrics/peer_spellings.py): what
each reads as, what is refused and why, the column it gives on every path, and the hints.
Their values against the tools themselves: tests/test_peer_parity.py."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics import parse_measure, parse_measures
from lexiframe.metrics.peer_spellings import IR_MEASURES, PEER_TABLE, RANX
from tests.conftest import DATA

IR_MEASURES_NAMES = {
    # ir_measures' spelling: lexiframe's name
    "nDCG@10": "nDCG@10",
    "NDCG": "nDCG",
    "nDCG(dcg='log2')@10": "nDCG@10",
    "nDCG(dcg='exp-log2')@10": "nDCG(gains='exp')@10",
    "nDCG(dcg='exp-log2')": "nDCG(gains='exp')",
    "nDCG(gains={0:0,1:1,2:3})@10": "nDCG(gains={0: 0, 1: 1, 2: 3})@10",
    "nDCG(judged_only=False)@5": "nDCG@5",
    "AP@100": "AP@100",
    "MAP": "AP",
    "AP(rel=2)": "AP(rel=2)",
    "P@10": "P@10",
    "P(cutoff=10)": "P@10",
    "Precision(rel=2)@5": "P(rel=2)@5",
    "R@100": "R@100",
    "Recall@1000": "R@1000",
    "RR": "RR",
    "RR@10": "RR@10",
    "MRR(rel=2)": "RR(rel=2)",
    "Rprec": "RP",
    "RPrec(rel=2)": "RP(rel=2)",
    "Success@10": "Success@10",
    "Judged@10": "Judged@10",
    "Bpref": "Bpref",
    "BPref": "Bpref",
    "infAP": "infAP",
    "ERR@10": "ERR@10",
    "IPrec@0.5": "IPrec@0.5",
    "IPrec(recall=0.2)": "IPrec@0.2",
    "NumRet": "NumRet",
    "NumRet(rel=1)": "NumRelRet(rel=1)",
    "NumRelRet": "NumRelRet",
    "NumRel": "NumRel",
    "SetP": "SetP",
    "SetP(relative=True)": "SetRelativeP",
    "SetP(relative=True, rel=2)": "SetRelativeP(rel=2)",
    "SetRelP": "SetRelativeP",
    "SetR": "SetR",
    "SetF": "SetF",
    "SetF(beta=0.5)": "SetF(beta=0.5)",
    "SetAP": "SetAP",
    "RBP(rel=1)": "RBP(rel=1)",
    "RBP(p=0.9, rel=2)": "RBP(p=0.9, rel=2)",
}
RANX_NAMES = {
    # ranx's metric: lexiframe's name
    "ndcg": "nDCG",
    "ndcg@10": "nDCG@10",
    "ndcg@10-l2": "nDCG(gains={1: 0})@10",
    "ndcg-l3": "nDCG(gains={1: 0, 2: 0})",
    "ndcg@5-l1": "nDCG@5",
    "ndcg_burges@10": "nDCG(gains='exp')@10",
    "ndcg_burges": "nDCG(gains='exp')",
    "ndcg@0": "nDCG",  # ranx's @0: the whole ranking
    "dcg": "DCG",
    "dcg@10": "DCG@10",
    "dcg@10-l2": "DCG(gains={1: 0})@10",
    "dcg_burges@10": "DCG(gains='exp')@10",
    "dcg_burges": "DCG(gains='exp')",
    "precision@0": "SetP",
    "map": "AP",
    "map@100": "AP@100",
    "map@100-l2": "AP(rel=2)@100",
    "mrr": "RR",
    "mrr@10": "RR@10",
    "precision@10": "P@10",
    "precision": "SetP",
    "precision-l2": "SetP(rel=2)",
    "recall@100": "R@100",
    "recall": "SetR",
    "f1": "SetF",
    "f1@10": "SetF@10",
    "f1@5-l2": "SetF(rel=2)@5",
    "hit_rate@10": "Success@10",
    "hit_rate@10-l2": "Success(rel=2)@10",
    "hits@10": "NumRelRet@10",
    "hits": "NumRelRet",
    "r-precision": "RP",
    "bpref": "Bpref",
}


@pytest.mark.parametrize(("spelling", "name"), list(IR_MEASURES_NAMES.items()))
def test_ir_measures_spellings(spelling, name):
    assert parse_measure(spelling).name == name


@pytest.mark.parametrize(("spelling", "name"), list(RANX_NAMES.items()))
def test_ranx_spellings(spelling, name):
    assert parse_measure(spelling).name == name


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        # BEIR's keys (pytrec_eval's ndcg_cut_k, map_cut_k, recall_k, P_k; its MRR@k)
        ("NDCG@10", "nDCG@10"), ("MAP@100", "AP@100"), ("Recall@100", "R@100"),
        ("P@10", "P@10"), ("MRR@10", "RR@10"),
        # PyTerrier's eval_metrics: ir_measures' and trec_eval's names
        ("map", "AP"), ("ndcg_cut_10", "nDCG@10"), ("recip_rank", "RR"), ("P_10", "P@10"),
        ("recall_1000", "R@1000"), ("AP(rel=2)", "AP(rel=2)"), ("nDCG@10", "nDCG@10"),
    ],
)  # fmt: skip
def test_beir_and_pyterrier_names(spelling, name):
    assert parse_measure(spelling).name == name


def test_trec_eval_spellings_keep_their_meaning():
    """Where ranx's syntax could read a trec_eval name (rbp, map, bpref), trec_eval's
    reading stands: the two agree, except rbp, which only trec_eval spells bare."""
    assert parse_measure("rbp").name == "RBP(p=0.9)"
    assert parse_measure("map").name == "AP"
    assert parse_measure("ndcg_cut_10").name == "nDCG@10"
    assert parse_measure("success_10").name == "Success@10"


REFUSED = {
    # a spelling: what its refusal says
    "nDCG(judged_only=True)@10": r"trec_eval's -J.*condensed=True.*name nDCG@10",
    "P(rel=2, judged_only=True)@10": r"condensed=True.*name P\(rel=2\)@10",
    "Bpref(rel=2)": r"threshold=2 \(--threshold 2\) and name Bpref",
    "infAP(rel=2)": r"threshold=2 .* and name infAP",
    "nDCG(dcg='exp-log2', gains={1: 2})@10": r"dcg='exp-log2' or gains=, not both",
    "NumQ": r"counts queries: lf.summarize gives it as n_queries",
    "SDCG(max_rel=3)@10": r"SDCG .* has no lexiframe measure",
    "alpha_nDCG@20": r"alpha_nDCG \(from ndeval\) has no lexiframe measure",
    "INST": r"INST \(from cwl_eval\) has no lexiframe measure",
    "dcg_burges@10-l2": r"gains 2\^g - 1 of the grades from 2 up only",
    "rbp.95": r"raw grades.*binary qrels they agree: name RBP\(p=0.95\)",
    "rbp@8": r"name RBP\(p=0.8\)",
    "hit_rate": r"takes a cut-off: hit_rate@10",
    "bpref-l2": r"threshold=2 \(--threshold 2\) and name Bpref",
    "ndcg_burges@10-l2": r"gains 2\^g - 1 of the grades from 2 up only",
    "ndcg.5": r"takes a cut-off @k, e.g. ndcg@10",
    "precision@10-l0": r"-l0 counts the documents graded 0 .* levels start at 1",
}


@pytest.mark.parametrize(("spelling", "why"), list(REFUSED.items()))
def test_what_lexiframe_does_not_compute_is_refused_with_the_reason(spelling, why):
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(spelling)
    message = str(info.value)
    assert message.startswith(repr(spelling)) or repr(spelling) in message
    assert re.search(why, message), message


def test_a_parameter_ir_measures_does_not_have_is_lexiframes_to_refuse():
    with pytest.raises(UnknownMeasureError, match="nDCG takes the parameters: gains"):
        parse_measure("nDCG(dcg='exp-log2', alpha=2)@10")
    with pytest.raises(UnknownMeasureError, match="param=value"):
        parse_measure("nDCG(1)@10")
    with pytest.raises(UnknownMeasureError, match="gains= maps relevance grades to gains"):
        parse_measure("nDCG(gains='linear')@10")


@pytest.mark.parametrize("row", PEER_TABLE, ids=lambda row: row.lexiframe)
def test_every_spelling_of_the_measures_page_reads_as_its_row(row):
    for spelling in row:
        if spelling:
            assert parse_measure(spelling).name == row.lexiframe


@given(st.sampled_from([*IR_MEASURES_NAMES, *RANX_NAMES]))
def test_a_read_name_reads_as_itself(spelling):
    """lexiframe's name of a peer spelling is a fixed point: the column names it."""
    name = parse_measure(spelling).name
    assert parse_measure(name).name == name


def test_every_peer_name_is_read_or_refused():
    """Each name of the two tables is taken up: a measure, or a refusal that says why."""
    for name in (*IR_MEASURES, *RANX):
        spelling = f"{name}@10" if name in ("P", "R", "Success", "Precision", "Recall") else name
        spelling = {"IPrec": "IPrec@0.5", "rbp": "rbp.9", "SDCG": "SDCG@10"}.get(name, spelling)
        try:
            parse_measure(spelling)
        except UnknownMeasureError as error:
            assert "no measure is called" not in str(error), spelling


def test_hints_know_the_peers_names():
    for typed, meant in [("hitrate", "hit_rate"), ("ndcg-burges", "ndcg_burges")]:
        with pytest.raises(UnknownMeasureError, match=f"did you mean {meant!r}"):
            parse_measure(typed)


RUN = pl.DataFrame(
    {
        "system": "s",
        "query": ["1", "1", "1", "1", "2", "2"],
        "doc": ["a", "b", "c", "d", "x", "y"],
        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query": ["1", "1", "1", "2"], "doc": ["a", "c", "b", "y"], "relevance": [1, 2, 0, 3]}
)


def test_the_column_is_lexiframes_name_and_one_measure_gives_one_column():
    names = ["hit_rate@1", "Success@1", "ndcg_burges@3", "hits@3"]
    table = lf.evaluate(RUN, QRELS, names).sort("query")
    assert table.columns == ["system", "query", "Success@1", "nDCG(gains='exp')@3", "NumRelRet@3"]
    assert table["Success@1"].to_list() == [1.0, 0.0]
    assert table["NumRelRet@3"].to_list() == [2.0, 1.0]
    # query 1: gains 1, 0, 3 at ranks 1-3; ideal 3, 1; query 2: gain 7 at rank 2
    dcg = 1 + 3 / math.log2(4)
    ideal = 3 + 1 / math.log2(3)
    assert table["nDCG(gains='exp')@3"].to_list() == pytest.approx(
        [dcg / ideal, 1 / math.log2(3)], abs=1e-15
    )
    assert len(parse_measures(["hit_rate@10", "Success@10", "success_10"])) == 1


def test_exponential_gains_are_a_gain_map_of_every_grade():
    """nDCG(gains='exp') is the map g -> 2^g - 1 written out, on every compat setting."""
    for compat in ("trec_eval-10.0", "pytrec_eval"):
        table = lf.evaluate(
            RUN, QRELS, ["nDCG(gains='exp')@2", "nDCG(gains={1: 1, 2: 3, 3: 7})@2"], compat=compat
        )
        assert table[:, 2].to_list() == table[:, 3].to_list()


def test_the_expression_namespace_takes_exponential_gains_and_a_hits_cutoff():
    frame = pl.DataFrame(
        {"positions": [[1, 3]], "grades": [[2, 1]], "ideal_grades": [[2, 1, 1]]},
        schema={
            "positions": pl.List(pl.UInt32),
            "grades": pl.List(pl.Int64),
            "ideal_grades": pl.List(pl.Int64),
        },
    )
    got = frame.select(
        exp=pl.col("positions").lexi.ndcg(
            gains="exp", grades="grades", ideal_grades="ideal_grades"
        ),
        hits=pl.col("positions").lexi.num_rel_ret(2),
    ).row(0)
    expected = (3 + 1 / 2) / (3 + 1 / math.log2(3) + 1 / 2)
    assert got == (pytest.approx(expected, abs=1e-15), 1.0)


def test_the_command_line_takes_the_peers_names(capsys, tmp_path):
    out = tmp_path / "table.csv"
    qrels = str(DATA / "trec_eval/qrels.test")
    run = str(DATA / "trec_eval/results.test")
    code = main(["evaluate", run, "--qrels", qrels, "-m", "hit_rate@10", "-m", "map@100",
                 "-o", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert pl.read_csv(out).columns[-2:] == ["Success@10", "AP@100"]
    assert main(["evaluate", run, "--qrels", qrels, "-m", "SDCG@10"]) == 2
    err = capsys.readouterr().err
    assert "SDCG (cwl_eval's scaled DCG) has no lexiframe measure" in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_rbp_at_a_level_is_binary():
    """RBP(rel=2), ir_measures' binary RBP: each document graded 2 or more gains 1."""
    table = lf.evaluate(RUN, QRELS, ["RBP(rel=2)", "RBP"]).sort("query")
    # query 1: grade 2 at rank 3; query 2: grade 3 at rank 2 (p = 0.8)
    assert table["RBP(rel=2)"].to_list() == pytest.approx([0.2 * 0.8**2, 0.2 * 0.8], abs=1e-15)
    # RBP scales the grades by the top grade: query 1, 1 at rank 1 and 2 at rank 3, over 2
    assert table["RBP"].to_list()[0] == pytest.approx(0.2 * (0.5 + 0.8**2), abs=1e-15)


def test_a_measure_defined_by_the_user_keeps_its_name():
    """A measure defined as ``hits`` is the user's, not ranx's hits."""
    def top(k: int) -> pl.Expr:
        return pl.col("positions").list.eval(pl.element() <= k).list.sum()

    lf.define_measure("hits", top, cutoff="required", summary="Relevant in the top k.")
    try:
        assert parse_measure("hits@3").family.defined_by_user
    finally:
        lf.metrics.unregister("hits")
    assert parse_measure("hits@3").name == "NumRelRet@3"


@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")
def test_spark_reads_the_peers_names_as_one_process_does(spark):
    from polars.testing import assert_frame_equal

    from lexiframe import spark as lfs
    from tests.test_spark import _back, _quiet, _sdf

    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    names = ["hit_rate@10", "ndcg_burges@10", "nDCG(dcg='exp-log2')@5", "map@100-l2", "hits@10"]
    names += ["f1@10", "SetRelP", "ndcg@10-l2", "RBP(rel=2)"]
    keys = ["system", "query"]
    expected = _quiet(lf.evaluate, run, qrels, names).sort(keys)
    assert "Success@10" in expected.columns and "nDCG(gains='exp')@10" in expected.columns
    got = _back(lfs.evaluate(_sdf(spark, run), _sdf(spark, qrels), names), expected, keys)
    assert_frame_equal(got, expected, check_exact=True)
