"""trec_eval's set and count measures, Success@k, IPrec@x and the rest of all_trec (RelativeP@k,
RPrecMult@x, IPrecAvg, Utility, BinG, G, nDCGRel, RnDCG, RBPResid) on rankings computed by
hand.

Their per-query parity with trec_eval is in ``tests/test_trec_eval_parity.py``; these
cover the edge cases: nothing relevant retrieved (r = 0), a cutoff deeper than the
ranking, an empty ranking, a query without a relevant document (``no_relevant="keep"``)
and the rounding of recall levels and multiples of m to relevant-document counts and ranks.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import MissingCorpusSizeWarning, UnknownMeasureError

SCHEMA = {"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32}
# (positions, m, ñ): a ranking of 10 with relevant documents at 2, 3 and 10 of m = 4;
# r = 0 of m = 3 in a ranking of 5; an empty ranking (a skipped query) with m = 2;
# a ranking of 3, all relevant, m = 3.
FRAME = pl.DataFrame(
    {
        "positions": [[2, 3, 10], [], [], [1, 2, 3]],
        "n_rel": [4, 3, 2, 3],
        "n_ret": [10, 5, 0, 3],
    },
    schema=SCHEMA,
)


def values(name: str) -> list[float]:
    return FRAME.lexi.measures([name])[str(lf.parse_measure(name))].to_list()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Success@1", [0.0, 0.0, 0.0, 1.0]),
        ("success_5", [1.0, 0.0, 0.0, 1.0]),
        ("Success@1000", [1.0, 0.0, 0.0, 1.0]),  # k beyond every ranking
        ("num_ret", [10, 5, 0, 3]),
        ("num_rel", [4, 3, 2, 3]),
        ("num_rel_ret", [3, 0, 0, 3]),
        ("set_P", [0.3, 0.0, 0.0, 1.0]),
        ("set_recall", [0.75, 0.0, 0.0, 1.0]),
        # 2 P R / (P + R) with P = 0.3, R = 0.75: 0.45 / 1.05
        ("set_F", [0.45 / 1.05, 0.0, 0.0, 1.0]),
        # (1 + 0.5) P R / (0.5 P + R) = 0.3375 / 0.9
        ("SetF(beta=0.5)", [0.3375 / 0.9, 0.0, 0.0, 1.0]),
        # precisions 1/2, 2/3, 3/10; level x needs round(4x) relevant documents
        ("IPrec@0.0", [2 / 3, 0.0, 0.0, 1.0]),
        ("iprec_at_recall_0.10", [2 / 3, 0.0, 0.0, 1.0]),  # round(0.4) = 0 → best of all
        ("IPrec@0.5", [2 / 3, 0.0, 0.0, 1.0]),  # 2 needed: max(2/3, 3/10)
        ("IPrec@0.6", [2 / 3, 0.0, 0.0, 1.0]),  # round(2.4) = 2 → max(2/3, 3/10)
        ("IPrec@0.7", [0.3, 0.0, 0.0, 1.0]),  # round(2.8) = 3 → 3/10
        ("IPrec@1.0", [0.0, 0.0, 0.0, 1.0]),  # 4 needed, only 3 retrieved
    ],
)
def test_hand_computed(name, expected):
    got = values(name)
    assert got == pytest.approx(expected), name


def test_recall_level_halves_round_up():
    """m = 2 and x = 0.25: round(0.5) = 1 relevant document (trec_eval rounds halves up)."""
    frame = pl.DataFrame({"positions": [[1, 5]], "n_rel": [2], "n_ret": [5]}, schema=SCHEMA)
    got = frame.lexi.measures(["IPrec@0.25", "IPrec@0.75"]).row(0, named=True)
    assert got["IPrec@0.25"] == 1.0  # best of 1/1 and 2/5
    assert got["IPrec@0.75"] == pytest.approx(0.4)  # round(1.5) = 2 → 2/5


@pytest.mark.parametrize("name", ["IPrec", "IPrec@2", "IPrec@1.5", "IPrec@x", "NumRet@10"])
def test_bad_names_are_refused(name):
    with pytest.raises(UnknownMeasureError):
        lf.parse_measure(name)


def test_trec_eval_names_are_aliases():
    names = ["success_10", "num_rel_ret", "set_F", "iprec_at_recall_0.50", "map_cut_100"]
    assert [str(lf.parse_measure(name)) for name in names] == [
        "Success@10",
        "NumRelRet",
        "SetF",
        "IPrec@0.5",
        "AP@100",
    ]


# (positions, m, ñ, grades, ideal grades, judged non-relevant ranks):
#   A: relevant at 2, 3, 10 of m = 4 (grades 2, 1, 1; the query's 2, 2, 1, 1) in a ranking
#      of 10 whose ranks 1, 4, 5 are judged non-relevant and 6–9 unjudged;
#   B: r = 0 of m = 3 in a ranking of 5, all judged non-relevant;
#   C: an empty ranking (a skipped query), m = 2;
#   D: a ranking of 3, all relevant (grades 1, 2, 1 of the query's 2, 1, 1);
#   E: a query without a relevant document (no_relevant="keep"), 4 documents, unjudged.
LONG = pl.DataFrame(
    {
        "positions": [[2, 3, 10], [], [], [1, 2, 3], []],
        "n_rel": [4, 3, 2, 3, 0],
        "n_ret": [10, 5, 0, 3, 4],
        "grades": [[2, 1, 1], [], [], [1, 2, 1], []],
        "ideal_grades": [[2, 2, 1, 1], [1, 1, 1], [2, 1], [2, 1, 1], []],
        "nonrel_positions": [[1, 4, 5], [1, 2, 3, 4, 5], [], [], []],
        "n_nonrel": [5, 5, 1, 0, 3],
        "pooled_positions": [[], [], [], [], []],
    },
    schema={
        **SCHEMA,
        "grades": pl.List(pl.Int64),
        "ideal_grades": pl.List(pl.Int64),
        "nonrel_positions": pl.List(pl.UInt32),
        "n_nonrel": pl.UInt32,
        "pooled_positions": pl.List(pl.UInt32),
    },
)
LOG3, LOG4, LOG5, LOG10, LOG11 = (math.log2(x) for x in (3, 4, 5, 10, 11))
# DCG of A down to each relevant document, and the ideal DCG down to each rank (2, 2, 1, 1).
A_DCG = [2 / LOG3, 2 / LOG3 + 1 / LOG4, 2 / LOG3 + 1 / LOG4 + 1 / LOG11]
A_IDCG = [2, 2 + 2 / LOG3, 2 + 2 / LOG3 + 1 / LOG4, 2 + 2 / LOG3 + 1 / LOG4 + 1 / LOG5]
# D: grades 1, 2, 1 at ranks 1, 2, 3; ideal 2, 1, 1.
D_DCG = [1, 1 + 2 / LOG3, 1 + 2 / LOG3 + 1 / LOG4]
D_IDCG = [2, 2 + 1 / LOG3, 2 + 1 / LOG3 + 1 / LOG4]


def long_values(name: str, **options: object) -> list[float | None]:
    return LONG.lexi.measures([name], **options)[str(lf.parse_measure(name))].to_list()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # r / min(ñ, m); 0 when ñ = 0 or m = 0
        ("set_relative_P", [3 / 4, 0.0, 0.0, 1.0, 0.0]),
        # r² / (ñ m)
        ("set_map", [9 / 40, 0.0, 0.0, 1.0, 0.0]),
        # r − (ñ − r): a query without a relevant document still pays for its documents
        ("utility", [-4.0, -5.0, 0.0, 3.0, -4.0]),
        # #{p ≤ k} / min(k, m)
        ("relative_P_2", [1 / 2, 0.0, 0.0, 1.0, 0.0]),
        ("RelativeP@20", [3 / 4, 0.0, 0.0, 1.0, 0.0]),  # k beyond every ranking: r / m
        # c = ⌊x m + 0.9⌋: A ⌊2.9⌋ = 2, B ⌊2.4⌋ = 2, C ⌊1.9⌋ = 1, D ⌊2.4⌋ = 2, E ⌊0.9⌋ = 0
        ("Rprec_mult_0.50", [1 / 2, 0.0, 0.0, 1.0, 0.0]),
        # A ⌊8.9⌋ = 8: 2/8; D ⌊6.9⌋ = 6, beyond its 3 documents: 3/6
        ("RPrecMult@2.0", [2 / 8, 0.0, 0.0, 3 / 6, 0.0]),
        # A ⌊1.1⌋ = 1: nothing at rank 1; D: 1/1
        ("RPrecMult@0.05", [0.0, 0.0, 0.0, 1.0, 0.0]),
        ("RPrecMult@0", [0.0] * 5),  # c = ⌊0.9⌋ = 0
        # A: precisions 1/2, 2/3, 3/10; round(4x) relevant documents needed: 0 for x ≤ 0.1,
        # 1 for 0.2–0.3, 2 for 0.4–0.6 (best 2/3 each), 3 for 0.7–0.8 (3/10), 4 never
        ("11pt_avg", [(7 * 2 / 3 + 2 * 3 / 10) / 11, 0.0, 0.0, 1.0, 0.0]),
        ("IPrecAvg(levels=[0.5, 0.5, 1.0])", [(2 / 3 + 2 / 3 + 0) / 3, 0.0, 0.0, 1.0, 0.0]),
        # A: 1, 1 and 7 non-relevant documents above: (2/log2 3 + 1/log2 9) / 4
        ("binG", [(2 / LOG3 + 1 / (2 * LOG3)) / 4, 0.0, 0.0, 1.0, 0.0]),
        # A: costs C(2) = 2 + 2, C(3) = 4 + 1, C(10) = 6 + 6 ranks past the ideal's 4;
        # gathered 2, 3, 4: 2/log2(4) + 1/log2(4) + 1/log2(10), over 6.
        # D: C = 2, 3, 4, gathered 1, 3, 4: 1/log2(3) + 2/log2(2) + 1/log2(2), over 4.
        ("G", [(1.5 + 1 / LOG10) / 6, 0.0, 0.0, (3 + 1 / LOG3) / 4, 0.0]),
        # nDCG at each relevant document (ideal cut at m = 4), and at the end for the missed one
        (
            "ndcg_rel",
            [
                (A_DCG[0] / A_IDCG[1] + A_DCG[1] / A_IDCG[2] + 2 * A_DCG[2] / A_IDCG[3]) / 4,
                0.0,
                0.0,
                sum(D_DCG[i] / D_IDCG[i] for i in range(3)) / 3,
                0.0,
            ],
        ),
        # A: the ideal gain drops after 2 and 4: nDCG@2, nDCG@4, and nDCG (10 > 4 + 1);
        # D: drops after 1 and 3; 3 documents, not more than m + 1.
        (
            "Rndcg",
            [
                (A_DCG[0] / A_IDCG[1] + A_DCG[1] / A_IDCG[3] + A_DCG[2] / A_IDCG[3]) / 3,
                0.0,
                0.0,
                (D_DCG[0] / D_IDCG[0] + D_DCG[2] / D_IDCG[2]) / 2,
                0.0,
            ],
        ),
        # A: ranks 6–9 unjudged: 0.5^10 + 0.5 (0.5^5 + … + 0.5^8); B, D: all judged;
        # C: nothing returned; E: 4 unjudged documents: 0.5^4 + 0.5 (1 + … + 0.5^3) = 1
        ("RBPResid(p=0.5)", [0.5**10 + 0.5 * (0.5**5 + 0.5**6 + 0.5**7 + 0.5**8), 0, 0, 0, 1]),
    ],
)
def test_hand_computed_rest_of_all_trec(name, expected):
    assert long_values(name) == pytest.approx(expected, abs=1e-12), name


def test_utility_weights_and_the_corpus_size():
    """w₁ r + w₂ (ñ − r) + w₃ (m − r) + w₄ (n − ñ − m + r), here with n = 20."""
    name = "Utility(rel_nonret=-1, nonrel_nonret=0.5)"
    # A: 3 − 7 − 1 + 0.5 · 9; B: −5 − 3 + 0.5 · 12; C: −2 + 0.5 · 18; D: 3 + 0.5 · 17;
    # E: −4 + 0.5 · 16
    assert long_values(name, n=20) == pytest.approx([-0.5, -2.0, 7.0, 11.5, 4.0])
    with pytest.warns(MissingCorpusSizeWarning, match="n="):
        assert long_values(name) == [None] * 5
    assert str(lf.parse_measure("utility_2,-1,0,0.5")) == (
        "Utility(rel_ret=2.0, nonrel_nonret=0.5)"
    )


def test_rndcg_counts_the_whole_ranking_only_past_m_plus_one():
    """trec_eval's Rndcg adds the nDCG of the whole ranking when ñ > m + 1: relevant at 2
    of m = 1 scores nDCG@1 = 0 alone in a ranking of 2, and (0 + 1/log2 3)/2 in one of 3."""
    frame = pl.DataFrame({"positions": [[2], [2]], "n_rel": [1, 1], "n_ret": [2, 3]}, schema=SCHEMA)
    got = frame.lexi.measures(["RnDCG"])["RnDCG"].to_list()
    assert got == pytest.approx([0.0, 1 / LOG3 / 2])


def test_g_on_binary_qrels_is_bing_and_reads_the_grades():
    binary = LONG.with_columns(
        grades=pl.col("grades").list.eval(pl.element() * 0 + 1),
        ideal_grades=pl.col("ideal_grades").list.eval(pl.element() * 0 + 1),
    )
    got = binary.lexi.measures(["G", "BinG"])
    assert got["G"].to_list() == pytest.approx(got["BinG"].to_list(), abs=1e-15)
    # Grades 2 and 2 do not give the value of 1 and 1: G needs the grade columns.
    with pytest.raises(lf.SchemaError, match="grades=True"):
        FRAME.lexi.measures(["G"])


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("set_relative_P", "SetRelativeP"),
        ("set_map", "SetAP"),
        ("utility", "Utility"),
        ("relative_P_10", "RelativeP@10"),
        ("Rprec_mult_0.20", "RPrecMult@0.2"),
        ("Rprec_mult_2.00", "RPrecMult@2.0"),
        ("11pt_avg", "IPrecAvg"),
        ("11pt_avg_0.2,0.5,0.8", "IPrecAvg(levels=[0.2, 0.5, 0.8])"),
        ("binG", "BinG"),
        ("G", "G"),
        ("ndcg_rel", "nDCGRel"),
        ("Rndcg", "RnDCG"),
        ("rbp_resid", "RBPResid(p=0.9)"),
        ("rbp_resid_p=0.8", "RBPResid"),
    ],
)
def test_trec_eval_names_of_the_rest_of_all_trec(name, canonical):
    assert str(lf.parse_measure(name)) == canonical
    assert str(lf.parse_measure(canonical)) == canonical


@pytest.mark.parametrize(
    "name",
    [
        "RPrecMult",
        "RPrecMult@-1",
        "RPrecMult@inf",
        "RelativeP",
        "RelativeP@0.5",
        "11pt_avg_0.8,0.2",  # trec_eval reads its levels in ascending order
        "IPrecAvg(levels=[1.5])",
        "IPrecAvg(levels=[])",
        "utility_1,-1,0",
        "Utility(rel_ret='a')",
        "G(rel=2)",
    ],
)
def test_bad_names_of_the_rest_of_all_trec_are_refused(name):
    with pytest.raises(UnknownMeasureError):
        lf.parse_measure(name)
