"""Hand-computed examples of every measure, and the measure registry.

Each expected value is worked out in a comment next to it, with the definition it comes
from: docs/definitions.md §2, the atomized search length paper (ASL, §3.1, eq. 1–5) and the
lexirecall paper (TSE §3.2 eq. 3, SL3 and recall error §3.2, imputation §2.2).
"""

from __future__ import annotations

import math
import re
import warnings
from contextlib import nullcontext

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import (
    DroppedQueriesWarning,
    InputError,
    LexiframeError,
    MissingCorpusSizeWarning,
    UnknownMeasureError,
)
from lexiframe.metrics import exprs, known_names, parse_measure, parse_measures


def positions_frame(*rankings: tuple[list[int], int, int]) -> pl.DataFrame:
    """A positions frame from (positions, n_rel, n_ret) triples, one system per row."""
    return pl.DataFrame(
        {
            "system": [f"s{i}" for i in range(len(rankings))],
            "query": ["q"] * len(rankings),
            "positions": [list(r[0]) for r in rankings],
            "n_rel": [r[1] for r in rankings],
            "n_ret": [r[2] for r in rankings],
        },
        schema_overrides={
            "positions": pl.List(pl.UInt32),
            "n_rel": pl.UInt32,
            "n_ret": pl.UInt32,
        },
    )


def column(frame: pl.DataFrame, expr: pl.Expr) -> list[float | None]:
    return frame.select(expr).to_series().to_list()


def approx(values: list[float | None]) -> list[object]:
    return [None if v is None else pytest.approx(v, abs=1e-12) for v in values]


# ---------------------------------------------------------------------------------------
# Atomized search length (ASL paper §3.1)


def test_asl_per_document_eq_2_and_3():
    # Relevant documents at ranks 2, 3, 7; m = 5; ñ = 10 retrieved.
    # eq. 2, ASL = rank − (relevant above): 2 − 0 = 2, 3 − 1 = 2, 7 − 2 = 5.
    # eq. 3, the two unretrieved ones: irrel_q = ñ − r = 10 − 3 = 7 each.
    frame = positions_frame(([2, 3, 7], 5, 10))
    assert column(frame, pl.col("positions").lexi.asl()) == [[2.0, 2.0, 5.0, 7.0, 7.0]]


def test_asl_per_document_is_irrelevant_above_plus_one():
    # eq. 1, ASL = irrel + 1. Ranking R N N R N R (ñ = 6), m = 3:
    # first relevant: 0 irrelevant above → 1; second: 2 → 3; third: 3 → 4.
    frame = positions_frame(([1, 4, 6], 3, 6))
    assert column(frame, pl.col("positions").lexi.asl()) == [[1.0, 3.0, 4.0]]
    # eq. 4 inner mean: (1 + 3 + 4)/3.
    assert column(frame, pl.col("positions").lexi.asl_mean()) == approx([8 / 3])


def test_asl_query_mean_eq_4():
    # (2 + 2 + 5 + 7 + 7)/5 = 23/5
    frame = positions_frame(([2, 3, 7], 5, 10))
    assert column(frame, exprs.asl_mean()) == approx([4.6])


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 2.0),  # first relevant document only: 2 (the MRR replacement, §3.1)
        (2, 2.0),  # (2 + 2)/2
        (3, 3.0),  # (2 + 2 + 5)/3
        (4, 4.0),  # (2 + 2 + 5 + 7)/4: unretrieved ones come last
        (5, 4.6),  # all five
        (10, 4.6),  # min(k, m) = 5 documents (docs/definitions.md §2), not divided by 10
    ],
)
def test_asl_at_g1_k_eq_5(k, expected):
    frame = positions_frame(([2, 3, 7], 5, 10))
    assert column(frame, exprs.asl_mean(first=k)) == approx([expected])
    assert lf.measures(frame, [f"ASL@g1-{k}"])[f"ASL@g1-{k}"].to_list() == approx([expected])


def test_asl_nothing_relevant_retrieved():
    # ñ = 4 documents, none relevant, m = 2: each unretrieved scores irrel_q = 4.
    frame = positions_frame(([], 2, 4))
    assert column(frame, exprs.asl()) == [[4.0, 4.0]]
    assert column(frame, exprs.asl_mean()) == approx([4.0])


def test_asl_skipped_query_scores_the_depth():
    # A system that returned nothing (ñ = 0) scores as if it had returned `depth` irrelevant
    # documents: each of its m = 3 relevant documents scores depth = 10 (ASL paper eq. 3
    # with ñ = depth, r = 0), so ASL = 10 and ASL@g1-1 = 10; without a depth: null.
    frame = positions_frame(([], 3, 0))
    assert column(frame, exprs.asl(depth=10)) == [[10.0, 10.0, 10.0]]
    assert column(frame, exprs.asl_mean(depth=10)) == approx([10.0])
    assert column(frame, exprs.asl_mean(first=1, depth=10)) == approx([10.0])
    assert column(frame, exprs.asl_mean()) == [None]


def skipped_track() -> tuple[pl.DataFrame, pl.DataFrame]:
    """q1 judged with relevant d2, d9; a returns d1 d2 d3, b returns d1 … d5, c skips q1."""
    run = pl.DataFrame(
        {
            "system": ["a"] * 3 + ["b"] * 5 + ["c"],
            "query": ["q1"] * 8 + ["q2"],
            "doc": ["d1", "d2", "d3", "d1", "d3", "d4", "d5", "d2", "z"],
            "score": [3.0, 2.0, 1.0, 5.0, 4.0, 3.0, 2.0, 1.0, 1.0],
        }
    )
    qrels = pl.DataFrame({"query": ["q1", "q1"], "doc": ["d2", "d9"], "relevance": [1, 1]})
    return run, qrels


@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        # No depth=: the longest ranking of q1 is b's, 5 documents. a: d2 at rank 2 → 2, d9
        # unretrieved → ñ − r = 3 − 1 = 2, ASL 2. b: d2 at 5 → 5, d9 → 5 − 1 = 4, ASL 4.5.
        # c skipped q1: both documents score 5 → 5 (worse than a and b, never better).
        (None, {"a": 2.0, "b": 4.5, "c": 5.0}),
        # depth=4: b keeps d1 d3 d4 d5 (no relevant) → 4 and 4; c scores the depth, 4.
        (4, {"a": 2.0, "b": 4.0, "c": 4.0}),
        # depth=8 is longer than every ranking: c still scores the depth, 8.
        (8, {"a": 2.0, "b": 4.5, "c": 8.0}),
    ],
)
def test_skipped_query_asl_agrees_on_every_path(backend, depth, expected):
    run, qrels = skipped_track()
    with pytest.warns(DroppedQueriesWarning) if backend.warns_on_drop else nullcontext():
        got = backend.evaluate(run, qrels, ["ASL", "ASL@g1-1"], depth=depth)
    assert dict(got.select("system", "ASL").rows()) == approx_dict(expected)
    with pytest.warns(DroppedQueriesWarning) if backend.warns_on_drop else nullcontext():
        frame = backend.positions(run, qrels, depth=depth)
    assert ("depth" in frame.columns) == (depth is not None)
    by_measures = backend.measures(frame, ["ASL"])
    assert dict(by_measures.select("system", "ASL").rows()) == approx_dict(expected)
    # The per-document lists of the ASL expression, with the depth measures() uses.
    lists = frame.sort("system").select(
        "system", pl.col("positions").lexi.asl(depth=exprs.skipped_depth(frame.columns, ["query"]))
    )
    assert dict(lists.rows())["c"] == [expected["c"]] * 2


def approx_dict(values: dict[str, float]) -> dict[str, object]:
    return {key: pytest.approx(value, abs=1e-12) for key, value in values.items()}


def test_asl_system_mean_over_queries_eq_4():
    # Two queries: ASL 4.6 (above) and (1 + 3 + 4)/3 = 8/3; system ASL = their mean.
    run = pl.DataFrame(
        {
            "system": ["s"] * 16,
            "query": ["q1"] * 10 + ["q2"] * 6,
            "doc": [f"a{i}" for i in range(10)] + [f"b{i}" for i in range(6)],
            "score": [float(10 - i) for i in range(10)] + [float(6 - i) for i in range(6)],
        }
    )
    # q1: relevant at ranks 2, 3, 7 (a1, a2, a6) and two never retrieved; q2: ranks 1, 4, 6.
    qrels = pl.DataFrame(
        {
            "query": ["q1"] * 5 + ["q2"] * 3,
            "doc": ["a1", "a2", "a6", "x1", "x2", "b0", "b3", "b5"],
            "relevance": [1] * 8,
        }
    )
    per_query = lf.evaluate(run, qrels, ["ASL"]).sort("query")
    assert per_query["ASL"].to_list() == approx([4.6, 8 / 3])
    assert lf.summarize(per_query)["ASL"].to_list() == approx([(4.6 + 8 / 3) / 2])


# ---------------------------------------------------------------------------------------
# Total search efficiency, SL3, recall error (lexirecall paper §3.2)


# Last relevant document retrieved: positions [1, 4], m = 2, so p̂_m = 4.
TSE_COMPLETE = [
    ("rr", None, 1 / 4),  # e(p) = 1/p
    ("ap", None, 1 / 4),  # AP's exposure is 1/p too
    ("ndcg", None, 1 / math.log2(5)),  # 1/log2(4 + 1)
    ("rbp", None, 0.2 * 0.8**3),  # (1 − γ) γ^(4 − 1), γ = 0.8
    ("linear", 100, 1 - 4 / 100),  # 1 − p/n
    ("rr", 100, 1 / 4),  # n does not matter when everything was retrieved
    ("ndcg", 100, 1 / math.log2(5)),
    ("rbp", 100, 0.2 * 0.8**3),
]

# Last relevant document not retrieved: positions [2], m = 2, so p̂_2 = n − (m − 2) = n.
TSE_IMPUTED = [
    ("rr", None, 0.0),  # n = None: beyond any depth, exposure 0 (trec_eval's behaviour)
    ("ap", None, 0.0),
    ("ndcg", None, 0.0),
    ("rbp", None, 0.0),
    ("rr", 100, 1 / 100),  # e(100)
    ("ap", 100, 1 / 100),
    ("ndcg", 100, 1 / math.log2(101)),
    ("rbp", 100, 0.2 * 0.8**99),
    ("linear", 100, 0.0),  # 1 − 100/100
]


@pytest.mark.parametrize(("exposure", "n", "expected"), TSE_COMPLETE)
def test_tse_last_document_retrieved(exposure, n, expected):
    frame = positions_frame(([1, 4], 2, 10))
    got = column(frame, pl.col("positions").lexi.tse(exposure=exposure, n=n))
    assert got == approx([expected])
    name = "TSE" if exposure == "rr" else f"TSE(exposure={exposure!r})"
    assert lf.measures(frame, [name], n=n)[name].to_list() == approx([expected])


@pytest.mark.parametrize(("exposure", "n", "expected"), TSE_IMPUTED)
def test_tse_last_document_imputed(exposure, n, expected):
    frame = positions_frame(([2], 2, 10))
    got = column(frame, pl.col("positions").lexi.tse(exposure=exposure, n=n))
    assert got == approx([expected])
    name = "TSE" if exposure == "rr" else f"TSE(exposure={exposure!r})"
    assert lf.measures(frame, [name], n=n)[name].to_list() == approx([expected])


def test_tse_rbp_persistence():
    # γ = 0.5, p̂_m = 4: 0.5 · 0.5³ = 0.0625
    frame = positions_frame(([1, 4], 2, 10))
    assert column(frame, exprs.tse(exposure="rbp", p=0.5)) == approx([0.0625])
    name = "TSE(exposure='rbp', p=0.5)"
    assert lf.measures(frame, [name])[name].to_list() == approx([0.0625])


def test_tse_callable_exposure():
    # Any strictly decreasing e: here 1/p², p̂_m = 4 → 1/16.
    frame = positions_frame(([1, 4], 2, 10))
    assert column(frame, exprs.tse(exposure=lambda p: 1.0 / (p * p))) == approx([1 / 16])


NEEDS_N = ["SL3", "RecallError", "TSE(exposure='linear')"]


def test_measures_without_the_corpus_size_are_null_with_one_warning(backend):
    # [1, 4] of m = 2 is complete: SL3 = 4 − 2 = 2, RE = 2.5 − 1.5 = 1; [2] of m = 2 misses
    # one, so p̂_2 needs n: null. The linear exposure 1 − p/n needs n everywhere: null.
    frame = positions_frame(([1, 4], 2, 10), ([2], 2, 10))
    with pytest.warns(MissingCorpusSizeWarning, match=r"\bn\b") as caught:
        got = backend.measures(frame, [*NEEDS_N, "RR"]).sort("system")
    assert len([w for w in caught if w.category is MissingCorpusSizeWarning]) == 1
    assert all(name in str(caught[0].message) for name in NEEDS_N)
    assert got["SL3"].to_list() == approx([2.0, None])
    assert got["RecallError"].to_list() == approx([1.0, None])
    assert got["TSE(exposure='linear')"].to_list() == [None, None]
    assert got["RR"].to_list() == approx([1.0, 0.5])


@pytest.mark.parametrize("name", NEEDS_N)
def test_each_measure_needing_n_warns_the_same_way(name):
    frame = positions_frame(([2], 2, 10))
    with pytest.warns(MissingCorpusSizeWarning, match="corpus size n"):
        assert lf.measures(frame, [name])[name].to_list() == [None]
    with pytest.warns(MissingCorpusSizeWarning, match="corpus size n"):
        assert lf.measures(frame.lazy(), [name]).collect()[name].to_list() == [None]


def test_expressions_needing_n_warn_too():
    frame = positions_frame(([2], 2, 10))
    with pytest.warns(MissingCorpusSizeWarning, match="TSE"):
        assert column(frame, exprs.tse(exposure="linear")) == [None]
    with pytest.warns(MissingCorpusSizeWarning, match="SL3"):
        assert column(frame, pl.col("positions").lexi.sl3()) == [None]


def test_no_warning_with_n_or_for_measures_that_do_not_need_it():
    frame = positions_frame(([2], 2, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lf.measures(frame, ["TSE", "RR", "ASL"])  # TSE_rr of an imputed document is 0
        lf.measures(frame, NEEDS_N, n=100)


@pytest.mark.parametrize(
    ("rankings", "n", "needed"),
    [
        # the case: rankings of three documents, n = 2
        ([([1, 3], 2, 3)], 2, 3),
        # returned 3 and missed one relevant document: it sits at n, below rank 3, so n ≥ 4
        ([([2], 2, 3)], 3, 4),
        # nothing retrieved of 3 relevant, 0 returned: n ≥ 3
        ([([], 3, 0)], 2, 3),
    ],
)
def test_corpus_size_smaller_than_the_rankings_is_refused(backend, rankings, n, needed):
    frame = positions_frame(*rankings)
    deepest = max(r[2] for r in rankings)
    with pytest.raises(
        InputError, match=rf"n={n} is too small.*n ≥ {needed}\).*returned {deepest}"
    ):
        backend.measures(frame, ["TSE"], n=n)
    assert backend.measures(frame, ["TSE"], n=needed).height == len(rankings)


def test_corpus_size_column_is_checked_per_ranking():
    # s0 needs 10 + 1 = 11 and gets 11; s1 needs 11 and gets 10.
    frame = positions_frame(([2], 2, 10), ([2], 2, 10)).with_columns(corpus=pl.Series([11, 10]))
    with pytest.raises(InputError, match=r"n=10 .*system='s1'"):
        lf.measures(frame, ["SL3"], n="corpus")


def test_tse_unknown_exposure():
    with pytest.raises(InputError, match="'cubic'"):
        exprs.tse(exposure="cubic")


def test_imputation_example_of_section_2_2():
    # lexirecall §2.2: three of six relevant documents retrieved at 2, 3, 8, so
    # p̂ = (2, 3, 8, n − 2, n − 1, n). With n = 1000:
    #   SL3 = p̂_m − m = 1000 − 6 = 994
    #   RE = mean(p̂) − (m + 1)/2 = (2 + 3 + 8 + 998 + 999 + 1000)/6 − 3.5
    #   TSE_rr = 1/1000; TSE_linear = 1 − 1000/1000 = 0
    frame = positions_frame(([2, 3, 8], 6, 100))
    assert column(frame, exprs.sl3(n=1000)) == approx([994.0])
    assert column(frame, exprs.recall_error(n=1000)) == approx([3010 / 6 - 3.5])
    assert column(frame, exprs.tse(n=1000)) == approx([1 / 1000])
    assert column(frame, exprs.tse(exposure="linear", n=1000)) == approx([0.0])


@pytest.mark.parametrize(
    ("rankings", "n", "expected"),
    [
        # SL3 = p̂_m − m: [1, 4], m = 2 → 4 − 2 = 2 (n not needed)
        ([([1, 4], 2, 10)], None, [2.0]),
        # optimal ranking: p̂_m = m → 0
        ([([1, 2, 3], 3, 3)], None, [0.0]),
        # [2] of m = 2 with n = 100: p̂_2 = 100 → 98; with n = None: undefined (null)
        ([([2], 2, 10)], 100, [98.0]),
        ([([2], 2, 10)], None, [None]),
        # nothing retrieved, m = 3, n = 50: p̂_3 = 50 → 47
        ([([], 3, 0)], 50, [47.0]),
    ],
)
def test_sl3(rankings, n, expected):
    frame = positions_frame(*rankings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingCorpusSizeWarning)  # n=None: tested above
        assert column(frame, pl.col("positions").lexi.sl3(n=n)) == approx(expected)
        assert lf.measures(frame, ["SL3"], n=n)["SL3"].to_list() == approx(expected)


@pytest.mark.parametrize(
    ("rankings", "n", "expected"),
    [
        # RE = mean(p̂) − (m + 1)/2: [1, 4] → 2.5 − 1.5 = 1
        ([([1, 4], 2, 10)], None, [1.0]),
        # optimal ranking → 0
        ([([1, 2, 3], 3, 3)], None, [0.0]),
        # [2] of m = 2 in a ranking of 8, n = 10: p̂ = (2, 10) → 6 − 1.5 = 4.5
        ([([2], 2, 8)], 10, [4.5]),
        ([([2], 2, 10)], None, [None]),
        # nothing retrieved, m = 3, n = 50: p̂ = (48, 49, 50) → 49 − 2 = 47
        ([([], 3, 0)], 50, [47.0]),
    ],
)
def test_recall_error(rankings, n, expected):
    frame = positions_frame(*rankings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingCorpusSizeWarning)  # n=None: tested above
        assert column(frame, pl.col("positions").lexi.recall_error(n=n)) == approx(expected)
        got = lf.measures(frame, ["RecallError"], n=n)["RecallError"].to_list()
    assert got == approx(expected)


def test_corpus_size_from_a_column():
    # n may differ per query: p̂_m = n for the unretrieved last document.
    frame = positions_frame(([2], 2, 10), ([2], 2, 10)).with_columns(corpus=pl.Series([100, 20]))
    got = lf.measures(frame, ["SL3", "TSE"], n="corpus").sort("system")
    assert got["SL3"].to_list() == approx([98.0, 18.0])
    assert got["TSE"].to_list() == approx([1 / 100, 1 / 20])


# ---------------------------------------------------------------------------------------
# docs/definitions.md §2 formulas


def test_reciprocal_rank():
    frame = positions_frame(([3, 5], 2, 10), ([], 2, 10), ([1], 1, 1))
    # 1/3; nothing retrieved → 0; 1/1
    assert column(frame, exprs.rr()) == approx([1 / 3, 0.0, 1.0])
    # RR@2: p_1 = 3 > 2 → 0
    assert column(frame, exprs.rr(k=2)) == approx([0.0, 0.0, 1.0])
    assert column(frame, exprs.rr(k=3)) == approx([1 / 3, 0.0, 1.0])


def test_average_precision():
    # (1/m) Σ i/p_i with m = 4: (1/1 + 2/3)/4; m counts the unretrieved ones.
    frame = positions_frame(([1, 3], 4, 10), ([2, 3, 4], 3, 4), ([], 2, 0))
    assert column(frame, exprs.ap()) == approx([(1 + 2 / 3) / 4, (1 / 2 + 2 / 3 + 3 / 4) / 3, 0.0])
    # AP@3 (trec_eval map_cut_3): only p_i ≤ 3 count, still divided by m
    assert column(frame, exprs.ap(k=3)) == approx([(1 + 2 / 3) / 4, (1 / 2 + 2 / 3) / 3, 0.0])


def test_precision_recall_r_precision():
    frame = positions_frame(([1, 3, 12], 4, 20))
    assert column(frame, exprs.precision(k=10)) == approx([2 / 10])  # #{p ≤ 10} = 2
    assert column(frame, exprs.precision(k=1)) == approx([1.0])
    assert column(frame, exprs.recall(k=10)) == approx([2 / 4])
    assert column(frame, exprs.recall(k=12)) == approx([3 / 4])
    assert column(frame, exprs.r_precision()) == approx([2 / 4])  # #{p ≤ m = 4} = 2


def test_rank_biased_precision():
    # (1 − γ) Σ γ^(p_i − 1): γ = 0.5, [1, 2] → 0.5 (1 + 0.5) = 0.75
    # default γ = 0.8, [1, 3] → 0.2 (1 + 0.64) = 0.328
    frame = positions_frame(([1, 2], 2, 2), ([1, 3], 2, 3), ([], 1, 0))
    assert column(frame, exprs.rbp(p=0.5))[:2] == approx([0.75, 0.5 * (1 + 0.25)])
    assert column(frame, exprs.rbp()) == approx([0.2 * 1.8, 0.328, 0.0])
    got = lf.measures(frame, ["RBP", "RBP(p=0.5)"])
    assert got["RBP"].to_list() == approx([0.36, 0.328, 0.0])
    assert got["RBP(p=0.5)"].to_list() == approx([0.75, 0.625, 0.0])


def test_ndcg_binary():
    # [2], m = 1: (1/log2 3)/(1/log2 2) = 0.6309…
    # [1, 5], m = 3: (1 + 1/log2 6)/(1 + 1/log2 3 + 1/log2 4)
    frame = positions_frame(([2], 1, 5), ([1, 5], 3, 10), ([], 2, 3))
    ideal3 = 1 + 1 / math.log2(3) + 0.5
    assert column(frame, exprs.ndcg()) == approx(
        [1 / math.log2(3), (1 + 1 / math.log2(6)) / ideal3, 0.0]
    )
    # nDCG@3: both sums cut at 3 → [1, 5] keeps only rank 1; the ideal keeps 3 documents.
    # nDCG@1 for [2]: 0 / 1.
    assert column(frame, exprs.ndcg(k=3)) == approx([1 / math.log2(3), 1 / ideal3, 0.0])
    assert column(frame, exprs.ndcg(k=1)) == approx([0.0, 1.0, 0.0])


def test_ndcg_graded_trec_eval_style():
    # trec_eval gains are the grades. Retrieved grades 1 at rank 1 and 2 at rank 3; all
    # relevant grades of the query (2, 2, 1).
    #   DCG  = 1/log2 2 + 2/log2 4 = 1 + 1 = 2
    #   IDCG = 2/log2 2 + 2/log2 3 + 1/log2 4 = 2 + 1.2619 + 0.5
    #   nDCG@2: DCG = 1, IDCG@2 = 2 + 2/log2 3
    frame = pl.DataFrame(
        {"positions": [[1, 3]], "grades": [[1, 2]], "ideal_grades": [[2, 2, 1]], "n_rel": [3]},
        schema_overrides={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32},
    )
    expr = pl.col("positions").lexi.ndcg(grades="grades", ideal_grades="ideal_grades")
    idcg = 2 + 2 / math.log2(3) + 0.5
    assert column(frame, expr) == approx([2 / idcg])
    cut = exprs.ndcg(k=2, grades="grades", ideal_grades="ideal_grades")
    assert column(frame, cut) == approx([1 / (2 + 2 / math.log2(3))])


def test_graded_ndcg_is_one_number_on_both_paths():
    # The grades are the gains: d1 (grade 1) at rank 1, d2 (grade 2) at rank 2.
    #   DCG = 1 + 2/log2 3; IDCG = 2 + 1/log2 3
    run = pl.DataFrame(
        {"system": ["s", "s"], "query": ["q", "q"], "doc": ["d1", "d2"], "score": [2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["d1", "d2"], "relevance": [1, 2]})
    expected = approx([(1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))])
    assert lf.evaluate(run, qrels, ["nDCG"])["nDCG"].to_list() == expected
    # The positions frame keeps the grades of graded qrels: the same number on that path
    # (binary gains would put both relevant documents on top: 1).
    pos = lf.positions(run, qrels)
    assert {"grades", "ideal_grades"} <= set(pos.columns)
    assert lf.measures(pos, ["nDCG"])["nDCG"].to_list() == expected
    # Dropping them is refused, with how to evaluate binary relevance instead.
    with pytest.raises(InputError, match=r"query='q' has relevant documents of grades 1 and 2"):
        lf.positions(run, qrels, grades=False)
    binary = qrels.with_columns(pl.col("relevance").ge(1).cast(pl.Int64))
    assert "grades" not in lf.positions(run, binary).columns
    assert lf.measures(lf.positions(run, binary), ["nDCG"])["nDCG"].to_list() == approx([1.0])
    # A frame with one grade column but not the other is refused.
    with pytest.raises(LexiframeError, match="both 'grades' and 'ideal_grades'"):
        lf.measures(pos.drop("ideal_grades"), ["nDCG"])


def test_threshold_changes_relevant_set():
    # threshold=2: only d2 is relevant; it sits at rank 2 → RR = 1/2, m = 1.
    run = pl.DataFrame(
        {"system": ["s", "s"], "query": ["q", "q"], "doc": ["d1", "d2"], "score": [2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["d1", "d2"], "relevance": [1, 2]})
    got = lf.evaluate(run, qrels, ["RR", "AP", "RP"], threshold=2)
    assert list(got.select("RR", "AP", "RP").row(0)) == approx([0.5, 0.5, 0.0])


def test_trec_eval_tie_breaking():
    # Scores tie at 1.0 for d1, d2, d10: trec_eval orders ties by doc id descending as a
    # string: "d2" > "d10" > "d1". So the ranking is dX (3.0), d2, d10, d1.
    run = pl.DataFrame(
        {
            "system": ["s"] * 4,
            "query": ["q"] * 4,
            "doc": ["d1", "d10", "d2", "dX"],
            "score": [1.0, 1.0, 1.0, 3.0],
        }
    )
    qrels = pl.DataFrame({"query": ["q"], "doc": ["d10"], "relevance": [1]})
    pos = lf.positions(run, qrels, docs=True)
    assert pos["positions"].to_list() == [[3]]
    assert pos["docs"].to_list() == [["d10"]]


def test_integer_doc_ids_tie_as_strings():
    # Integer ids 9 and 10 tie: as strings "9" > "10", so 9 comes first (trec_eval reads
    # every id as a string).
    run = pl.DataFrame({"system": ["s", "s"], "query": [1, 1], "doc": [10, 9], "score": [1.0] * 2})
    qrels = pl.DataFrame({"query": [1], "doc": [10], "relevance": [1]})
    assert lf.positions(run, qrels)["positions"].to_list() == [[2]]


def test_rank_by_existing_rank_column():
    run = pl.DataFrame(
        {
            "system": ["s"] * 3,
            "query": ["q"] * 3,
            "doc": ["a", "b", "c"],
            "score": [3.0, 2.0, 1.0],
            "rank": [3, 1, 2],
        }
    )
    qrels = pl.DataFrame({"query": ["q"], "doc": ["a"], "relevance": [1]})
    assert lf.positions(run, qrels)["positions"].to_list() == [[1]]
    assert lf.positions(run, qrels, rank_by="rank")["positions"].to_list() == [[3]]


# ---------------------------------------------------------------------------------------
# The measure registry (canonical names are keys and column names: docs/definitions.md §2)

CANONICAL = [
    "RR",
    "RR@10",
    "AP",
    "AP@100",
    "nDCG",
    "nDCG@10",
    "P@10",
    "R@1000",
    "RP",
    "RBP",
    "RBP(p=0.5)",
    "TSE",
    "TSE(exposure='ap')",
    "TSE(exposure='ndcg')",
    "TSE(exposure='rbp', p=0.5)",
    "TSE(exposure='linear')",
    "SL3",
    "RecallError",
    "ASL",
    "ASL@g1-10",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name):
    measure = parse_measure(name)
    assert str(measure) == name
    assert measure.name == name
    assert parse_measure(str(measure)) == measure
    assert parse_measure(measure) is measure


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("P_10", "P@10"),
        ("p_5", "P@5"),
        ("recall_1000", "R@1000"),
        ("ndcg_cut_10", "nDCG@10"),
        ("map_cut_100", "AP@100"),
        ("recip_rank", "RR"),
        ("map", "AP"),
        ("Rprec", "RP"),
        ("ndcg", "nDCG"),
        ("NDCG@10", "nDCG@10"),
        ("MRR", "RR"),
        ("MRR@10", "RR@10"),
        ("MAP", "AP"),
        ("Precision@5", "P@5"),
        ("Recall@100", "R@100"),
        ("RE", "RecallError"),
        ("asl@g1-5", "ASL@g1-5"),
        ("sl3", "SL3"),
        (" nDCG@10 ", "nDCG@10"),
        # default parameters are not part of the canonical name
        ("RBP(p=0.8)", "RBP"),
        ("TSE(exposure='rr')", "TSE"),
        ('TSE(exposure="ap")', "TSE(exposure='ap')"),
        ("TSE(exposure = 'ap')", "TSE(exposure='ap')"),
        ("TSE(p=0.5, exposure='rbp')", "TSE(exposure='rbp', p=0.5)"),
    ],
)
def test_aliases(alias, canonical):
    assert str(parse_measure(alias)) == canonical


def test_output_columns_are_canonical_names_without_duplicates():
    frame = positions_frame(([1, 3], 2, 10))
    got = lf.measures(frame, ["P_10", "recip_rank", "P@10", "ndcg_cut_10", "nDCG@10"])
    assert got.columns == ["system", "query", "P@10", "RR", "nDCG@10"]
    assert [str(m) for m in parse_measures(["map", "AP", "MAP"])] == ["AP"]
    assert all(dtype == pl.Float64 for dtype in got.select("P@10", "RR", "nDCG@10").dtypes)


def test_known_names():
    assert known_names() == lf.known_names()
    for family in ["RR", "AP", "nDCG", "P", "R", "RP", "RBP", "TSE", "SL3", "RecallError", "ASL"]:
        assert family in known_names()


@pytest.mark.parametrize("name", ["Foo", "", "P_x", "TSE(exposure='ap'"])
def test_unknown_measure_lists_known_names(name):
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    message = str(info.value)
    assert repr(name) in message
    for family in known_names():
        assert family in message


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("MRR10", "RR@10"),
        ("P10", "P@10"),
        ("ndcg-10", "nDCG@10"),
        ("ndcg_cut10", "nDCG@10"),
        ("P.10", "P@10"),
        ("asl10", "ASL@g1-10"),
        ("nDCG@@10", "nDCG"),
        ("Bperf", "Bpref"),
    ],
)
def test_unknown_measure_names_the_one_meant_in_one_short_line(name, meant):
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    message = str(info.value)
    assert f"did you mean {meant!r}?" in message
    assert "Known measures" not in message and len(message) < 220
    assert ("lexiframe trec_eval" in message) == ("." in name)


def test_a_known_family_with_a_bad_cutoff_is_not_told_every_name():
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure("P@x")
    assert "the cutoff must look like @10" in str(info.value)
    assert "Known measures" not in str(info.value)


def test_unknown_measure_through_evaluate():
    run = pl.DataFrame({"system": ["s"], "query": ["q"], "doc": ["d"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["d"], "relevance": [1]})
    with pytest.raises(UnknownMeasureError, match=r"'Foo'.*nDCG"):
        lf.evaluate(run, qrels, ["RR", "Foo"])
    with pytest.raises(UnknownMeasureError):
        lf.evaluate(run, qrels, [])


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("RBP(q=0.5)", "p"),  # no such parameter
        ("RR(p=0.5)", "rel"),  # RR takes only its relevance level
        ("SL3(p=0.5)", "none"),  # SL3 takes no parameter
        ("TSE(exposure='cubic')", "exposure"),  # not one of the choices
        ("TSE(exposure)", "exposure"),  # no value
        ("P", "cutoff"),  # P needs a cutoff
        ("R", "cutoff"),
        ("P@0", "cutoff"),
        ("P@-1", "cutoff"),
        ("P@x", "cutoff"),
        ("P@1.5", "cutoff"),
        ("RP@10", "cutoff"),  # RP takes no cutoff
        ("SL3@10", "cutoff"),
        ("TSE@10", "cutoff"),
        ("ASL@10", "g1-"),  # ASL's cutoff reads @g1-k
        ("ASL@g1-0", "g1-"),
    ],
)
def test_bad_parameters_and_cutoffs(name, fragment):
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", ["RBP(p=1.5)", "RBP(p=0)", "RBP(p=1)", "TSE(exposure='rbp', p=2)"])
def test_bad_persistence(name):
    frame = positions_frame(([1], 1, 1))
    with pytest.raises(LexiframeError, match="p"):
        lf.measures(frame, [name])


def test_measure_name_must_be_a_string():
    with pytest.raises(TypeError):
        parse_measure(10)


@pytest.mark.parametrize(
    "make",
    [
        lambda: exprs.rr(k=0),
        lambda: exprs.ap(k=-1),
        lambda: exprs.ndcg(k=0),
        lambda: exprs.precision(k=0),
        lambda: exprs.precision(k=True),
        lambda: exprs.recall(k=2.5),
        lambda: exprs.asl_mean(first=0),
        lambda: exprs.rbp(p=1.0),
        lambda: exprs.ndcg(grades="grades"),  # graded nDCG needs both lists
    ],
)
def test_bad_expression_arguments(make):
    with pytest.raises(InputError):
        make()


def test_empty_ranking_scores_positive_zero():
    # A skipped query scores 0 on every gain measure, and that 0 is +0.0: a -0.0 (the sum
    # of an empty float list) would print as "-0.0" in tables and CSV exports. The second
    # ranking keeps the frame from being a single constant row.
    run = pl.DataFrame({"system": ["s"], "query": ["q1"], "doc": ["d"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d", "x"], "relevance": [1, 2]})
    names = ["RR", "AP", "nDCG", "nDCG@5", "P@5", "R@5", "RP", "RBP", "TSE"]
    graded = lf.evaluate(run, qrels, names).filter(pl.col("query") == "q2")
    binary = lf.measures(lf.positions(run, qrels), names).filter(pl.col("query") == "q2")
    negative = []
    for kind, frame in (("graded", graded), ("binary", binary)):
        for name in names:
            value = frame[name].item()
            assert value == 0.0
            if math.copysign(1.0, value) < 0:
                negative.append(f"{kind} {name}")
    assert negative == []


def test_set_success_and_interpolated_precision_by_hand():
    """Hand-computed: q1 retrieves relevant documents at ranks 2, 3 and 10 of 10, with 4
    relevant; q2 retrieves nothing relevant; q3 was skipped (nothing returned)."""
    pos = pl.DataFrame(
        {
            "system": ["a", "a", "a"],
            "query": ["q1", "q2", "q3"],
            "positions": [[2, 3, 10], [], []],
            "n_rel": [4, 2, 3],
            "n_ret": [10, 5, 0],
        },
        schema_overrides={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32},
    )
    names = ["Success@1", "Success@2", "Success@50", "NumRet", "NumRel", "NumRelRet", "SetP",
             "SetR", "SetF", "SetF(beta=0.5)", "IPrec@0.0", "IPrec@0.5", "IPrec@0.75",
             "IPrec@1.0"]  # fmt: skip
    got = lf.measures(pos, names).select(names).rows()
    p, r = 3 / 10, 3 / 4
    assert got[0] == pytest.approx(
        # IPrec@0: the best precision anywhere, max(1/2, 2/3, 3/10); @0.5: c = 2,
        # max(2/3, 3/10); @0.75: c = 3, 3/10; @1.0: c = 4 > r, 0.
        (0.0, 1.0, 1.0, 10.0, 4.0, 3.0, p, r, 2 * p * r / (p + r),
         1.5 * p * r / (0.5 * p + r), 2 / 3, 2 / 3, 3 / 10, 0.0)
    )  # fmt: skip
    assert got[1] == (0.0, 0.0, 0.0, 5.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert got[2] == (0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_trec_eval_spellings_of_the_set_measures():
    names = ["success_5", "num_ret", "num_rel", "num_rel_ret", "set_P", "set_recall", "set_F",
             "iprec_at_recall_0.10"]  # fmt: skip
    assert [str(lf.parse_measure(name)) for name in names] == [
        "Success@5", "NumRet", "NumRel", "NumRelRet", "SetP", "SetR", "SetF", "IPrec@0.1",
    ]  # fmt: skip
    with pytest.raises(lf.UnknownMeasureError, match=r"level in \[0, 1\]"):
        lf.parse_measure("IPrec@1.5")


# ---------------------------------------------------------------------------------------
# nDCG with gains and ERR (docs/definitions.md §2)


def graded_frame(*rankings: tuple[list[int], list[int], list[int], int]) -> pl.DataFrame:
    """A positions frame with grades from (positions, grades, ideal_grades, n_ret)."""
    return pl.DataFrame(
        {
            "system": [f"s{i}" for i in range(len(rankings))],
            "query": ["q"] * len(rankings),
            "positions": [list(r[0]) for r in rankings],
            "n_rel": [len(r[2]) for r in rankings],
            "n_ret": [r[3] for r in rankings],
            "grades": [list(r[1]) for r in rankings],
            "ideal_grades": [list(r[2]) for r in rankings],
        },
        schema_overrides={
            "positions": pl.List(pl.UInt32),
            "n_rel": pl.UInt32,
            "n_ret": pl.UInt32,
            "grades": pl.List(pl.Int64),
            "ideal_grades": pl.List(pl.Int64),
        },
    )


LOG3 = math.log2(3)
# Grades 1 and 2 at ranks 1 and 3; the query's relevant grades are 2, 2 and 1.
GAINS_RANKING = ([1, 3], [1, 2], [2, 2, 1], 10)


@pytest.mark.parametrize(
    ("name", "ranking", "expected"),
    [
        # gains 1 → 1, 2 → 3: DCG = 1/log2 2 + 3/log2 4 = 2.5; ideal 3, 3, 1.
        ("nDCG(gains={1: 1, 2: 3})", GAINS_RANKING, 2.5 / (3 + 3 / LOG3 + 1 / 2)),
        # @2 drops rank 3: DCG = 1; ideal 3, 3.
        ("nDCG(gains={1: 1, 2: 3})@2", GAINS_RANKING, 1 / (3 + 3 / LOG3)),
        # k beyond the ranking and the query: the whole ranking.
        ("nDCG(gains={1: 1, 2: 3})@100", GAINS_RANKING, 2.5 / (3 + 3 / LOG3 + 1 / 2)),
        # Every relevant grade gains 1: binary nDCG, DCG = 1 + 1/2 over 1 + 1/log2 3 + 1/2.
        ("nDCG(gains={1: 1, 2: 1})", GAINS_RANKING, 1.5 / (1.5 + 1 / LOG3)),
        # A negative gain counts in the DCG, not in the ideal: (−1 + 2.5/2) / (2.5 + 2.5/log2 3).
        ("nDCG(gains={1: -1, 2: 2.5})", GAINS_RANKING, 0.25 / (2.5 + 2.5 / LOG3)),
        # Grade 1 left out keeps its grade as gain: the plain graded nDCG with 2 → 3.
        ("nDCG(gains={2: 3})", GAINS_RANKING, 2.5 / (3 + 3 / LOG3 + 1 / 2)),
        # Only grade 1 retrieved, gaining −1: a negative value, −1 / (3 + 3/log2 3 + 0).
        ("nDCG(gains={1: -1, 2: 3})", ([1], [1], [2, 2, 1], 10), -1 / (3 + 3 / LOG3)),
        # No positive gain at all: the ideal DCG is 0 and so is nDCG (not −inf).
        ("nDCG(gains={1: -1, 2: 0})", GAINS_RANKING, 0.0),
        # Gains less than 1 apart that trec_eval's sort keeps in order: computed.
        ("nDCG(gains={1: 1, 2: 1.5})", GAINS_RANKING, 1.75 / (1.5 + 1.5 / LOG3 + 1 / 2)),
        # r = 0 and an empty ranking: 0.
        ("nDCG(gains={1: 1, 2: 3})", ([], [], [2, 1], 10), 0.0),
        ("nDCG(gains={1: 1, 2: 3})@5", ([], [], [2, 1], 0), 0.0),
    ],
)
def test_ndcg_with_gains_by_hand(name, ranking, expected):
    got = lf.measures(graded_frame(ranking), [name])[name].item()
    assert got == pytest.approx(expected, abs=1e-12)
    assert math.copysign(1.0, got) > 0 or got < 0  # a 0 is +0.0


def test_ndcg_with_gains_trec_eval_takes_out_of_order_is_refused():
    """trec_eval compares gains by their difference cut to a whole number: grade 1's 0.5
    ties with grade 0's 0, and its ideal DCG stops at grade 0 (it prints 0 here, where the
    exact order gives (1/log2 3)/(1 + 1/log2 3)); lexiframe refuses rather than differ."""
    with pytest.raises(lf.InputError, match=r"gains \[0.0, 0.5\] of query='q' out of order"):
        lf.measures(graded_frame(([2], [1], [1, 1], 10)), ["nDCG(gains={1: 0.5})"])


# ERR with G = 4: R(g) = (2^g − 1)/16, so R(1) = 1/16, R(2) = 3/16, R(4) = 15/16.
ERR_RANKING = ([1, 3], [2, 4], [4, 2, 1], 10)


@pytest.mark.parametrize(
    ("name", "ranking", "expected"),
    [
        # 3/16 at rank 1, then 15/16 at rank 3 if not stopped at 1: 3/16 + (13/16)(15/16)/3.
        ("ERR", ERR_RANKING, 3 / 16 + (13 / 16) * (15 / 16) / 3),
        ("ERR@2", ERR_RANKING, 3 / 16),
        ("ERR@3", ERR_RANKING, 3 / 16 + (13 / 16) * (15 / 16) / 3),
        ("ERR@100", ERR_RANKING, 3 / 16 + (13 / 16) * (15 / 16) / 3),  # k beyond the ranking
        # G = 2: R(2) = 3/4 at rank 1 stops 3 users in 4; grade 4 is refused, so grades 1, 2.
        ("ERR(max_grade=2)", ([1, 2], [2, 1], [2, 1], 5), 3 / 4 + (1 / 4) * (1 / 4) / 2),
        # G = 5: R(4) = 15/32 at rank 2.
        ("ERR(max_grade=5)@10", ([2], [4], [4], 5), (15 / 32) / 2),
        # r = 0 and an empty ranking.
        ("ERR", ([], [], [3, 1], 10), 0.0),
        ("ERR@10", ([], [], [3, 1], 0), 0.0),
    ],
)
def test_err_by_hand(name, ranking, expected):
    got = lf.measures(graded_frame(ranking), [name])[name].item()
    assert got == pytest.approx(expected, abs=1e-12)
    assert math.copysign(1.0, got) > 0


def test_err_on_binary_qrels_gives_grade_one():
    # Relevant d2, d3 at ranks 2 and 3: (1/16)/2 + (15/16)(1/16)/3. evaluate keeps the
    # grades of these binary qrels by itself; the expression's binary default agrees.
    run = pl.DataFrame(
        {"system": ["s"] * 3, "query": ["q"] * 3, "doc": ["d1", "d2", "d3"], "score": [3.0, 2, 1]}
    )
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["d1", "d2", "d3"], "relevance": [0, 1, 1]})
    expected = (1 / 16) / 2 + (15 / 16) * (1 / 16) / 3
    assert lf.evaluate(run, qrels, ["ERR"])["ERR"].item() == pytest.approx(expected, abs=1e-15)
    pos = lf.positions(run, qrels)
    assert "grades" not in pos.columns
    assert pos.select(pl.col("positions").lexi.err()).item() == pytest.approx(expected, abs=1e-15)
    # The frame without grades cannot tell grade 1 from a uniform grade 2: refused.
    with pytest.raises(LexiframeError, match=r"ERR reads the grades.*grades=True"):
        lf.measures(pos, ["ERR"])
    assert lf.measures(lf.positions(run, qrels, grades=True), ["ERR"])["ERR"].item() == (
        pytest.approx(expected, abs=1e-15)
    )


def test_err_refuses_grades_above_max_grade(backend):
    # gdeval refuses qrels with a grade above its MAX_JUDGMENT: (2^5 − 1)/2^4 > 1 would be
    # no probability. The error names a max_grade that fits.
    run = pl.DataFrame(
        {"system": ["s", "s"], "query": ["q", "q"], "doc": ["a", "b"], "score": [2.0, 1]}
    )
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "z"], "relevance": [1, 5]})
    with pytest.raises(InputError, match=r"grade 5.*ERR\(max_grade=5\)@10"):
        backend.evaluate(run, qrels, ["ERR@10", "nDCG"])
    got = backend.evaluate(run, qrels, ["ERR(max_grade=5)@10"])
    assert got["ERR(max_grade=5)@10"].item() == pytest.approx(1 / 32, abs=1e-15)  # R(1) = 1/32
    # The expression alone gives null for such a ranking.
    frame = graded_frame(([1], [5], [5], 1))
    assert frame.select(exprs.err(grades="grades")).item() is None
    assert frame.select(exprs.err(grades="grades", max_grade=5)).item() == pytest.approx(31 / 32)


def test_gains_cannot_reach_documents_the_frame_does_not_hold():
    run = pl.DataFrame(
        {"system": ["s", "s"], "query": ["q", "q"], "doc": ["a", "b"], "score": [2.0, 1]}
    )
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "relevance": [0, 2]})
    # Grade 0 is below every positions frame's relevant documents.
    with pytest.raises(UnknownMeasureError, match=r"grade 0 a gain of 1.*gain of 0"):
        lf.evaluate(run, qrels, ["nDCG(gains={0: 1, 2: 3})"])
    assert lf.evaluate(run, qrels, ["nDCG(gains={0: 0, 2: 3})"]).height == 1
    # Grade 1 is below threshold=2, yet its gain counts, as in trec_eval -l 2 (which
    # prints ndcg_1=1 0.8597 and map 0.5000 here): the level decides what is relevant only.
    graded = qrels.with_columns(relevance=pl.Series([1, 2]))
    got = lf.evaluate(run, graded, ["nDCG(gains={1: 1})", "AP"], threshold=2)
    assert got.row(0)[2:] == pytest.approx(((1 + 2 / LOG3) / (2 + 1 / LOG3), 0.5), abs=1e-15)
    assert lf.evaluate(run, qrels, ["nDCG(gains={1: 0, 2: 3})"], threshold=2).height == 1
    # A frame without grades: refused, with how to build one.
    pos = lf.positions(run, qrels)
    with pytest.raises(LexiframeError, match=r"nDCG\(gains=\{2: 3\}\) reads the grades"):
        lf.measures(pos, ["nDCG(gains={2: 3})"])
    # On these binary qrels, evaluate keeps the grades by itself: grade 2 alone, DCG 3/log2 3
    # over an ideal of 3.
    got = lf.evaluate(run, qrels, ["nDCG(gains={2: 3})"])["nDCG(gains={2: 3})"].item()
    assert got == pytest.approx(1 / LOG3, abs=1e-15)


def test_binary_ndcg_is_named_by_its_gains():
    run = pl.DataFrame(
        {"system": ["s", "s"], "query": ["q", "q"], "doc": ["a", "b"], "score": [2.0, 1]}
    )
    qrels = pl.DataFrame({"query": ["q", "q", "q"], "doc": ["a", "b", "c"], "relevance": [1, 2, 2]})
    got = lf.evaluate(run, qrels, ["nDCG", "nDCG(gains={1: 1, 2: 1})"])
    # Graded: (1 + 2/log2 3) / (2 + 2/log2 3 + 1/2); binary: (1 + 1/log2 3) / (1 + 1/log2 3 + 1/2).
    assert got.row(0)[2:] == pytest.approx(
        ((1 + 2 / LOG3) / (2.5 + 2 / LOG3), (1 + 1 / LOG3) / (1.5 + 1 / LOG3)), abs=1e-15
    )
    # grades=False on graded qrels points to that name.
    with pytest.raises(InputError, match=r"binary nDCG is then nDCG\(gains=\{1: 1, 2: 1\}\)"):
        lf.positions(run, qrels, grades=False)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("nDCG(gains={0: 0, 1: 1, 2: 3})", "nDCG(gains={0: 0, 1: 1, 2: 3})"),
        ("ndcg(gains = {2: 3.0, 1: 1})@10", "nDCG(gains={1: 1, 2: 3})@10"),  # sorted, 3.0 → 3
        ("nDCG(gains={1: -1, 2: 2.5})", "nDCG(gains={1: -1, 2: 2.5})"),
        ("ndcg_0=0,1=1,2=3", "nDCG(gains={0: 0, 1: 1, 2: 3})"),  # trec_eval's printed name
        ("ndcg.1=1,2=3", "nDCG(gains={1: 1, 2: 3})"),  # as trec_eval's -m takes it
        ("nDCG(gains={})", "nDCG"),
        ("nDCG(gains=None)@5", "nDCG@5"),
        ("g(gains={2: 4.0, 1: 2})", "G(gains={1: 2, 2: 4})"),
        ("G_1=2,2=4", "G(gains={1: 2, 2: 4})"),  # trec_eval's printed name
        ("ndcg_rel.1=1,2=5", "nDCGRel(gains={1: 1, 2: 5})"),  # as trec_eval's -m takes it
        ("Rndcg_2=7", "RnDCG(gains={2: 7})"),
        ("RnDCG(gains=None)", "RnDCG"),
        ("ERR", "ERR"),
        ("err@10", "ERR@10"),
        ("ERR(max_grade=4)@20", "ERR@20"),
        ("ERR(max_grade=2)@10", "ERR(max_grade=2)@10"),
        ("TSE(exposure=ap)", "TSE(exposure='ap')"),  # a bare word reads as a string
    ],
)
def test_gains_and_err_names(alias, canonical):
    measure = parse_measure(alias)
    assert str(measure) == canonical
    assert parse_measure(canonical) == measure
    hash(measure.params)  # parameters stay hashable (the gains as (grade, gain) pairs)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("RBP(0.5)", "param=value"),  # positional
        ("RBP(p=)", "param=value"),
        ("RBP(p=0.5, p=0.6)", "given twice"),
        ("nDCG(gains={1: 1, 1: 2})", "names a key twice"),
        ("nDCG(gains=3)", "maps relevance grades to gains"),
        ("nDCG(gains={1.5: 1})", "grades of gains= are integers"),
        ("nDCG(gains={1: 'x'})", "must be a finite number"),
        ("nDCG(gains={-1: 2})", "grade -1 a gain of 2"),
        ("nDCG(exposure='ap')", "gains"),
        ("ERR(max_grade=0)", "max_grade= is a positive whole number"),
        ("ERR(max_grade=2.5)", "max_grade= is a positive whole number"),
        ("ERR(max_grade=True)", "max_grade= is a positive whole number"),
        ("ndcg.1=x", "grade=gain pairs"),
        ("ndcg_1=1,1=2", "given a gain twice"),
    ],
)
def test_bad_gains_and_err_parameters(name, fragment):
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "make",
    [
        lambda: exprs.err(k=0),
        lambda: exprs.err(max_grade=0),
        lambda: exprs.ndcg(gains={1: 2}),  # gains read the grades
        lambda: exprs.ndcg(grades="g", ideal_grades="i", gains={1.5: 2}),
        lambda: exprs.ndcg(grades="g", ideal_grades="i", gains={1: math.inf}),
    ],
)
def test_bad_gains_and_err_expression_arguments(make):
    with pytest.raises(InputError):
        make()


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("nDCG(gains=1:3)", "e.g. nDCG(gains={0: 0, 1: 1, 2: 3})"),
        ("RBP(q=1)", "e.g. RBP(p=0.8)"),
        ("AP(lvl=2)", "e.g. AP(rel=2)"),
    ],
)
def test_a_parameter_that_does_not_read_is_shown_by_example(name, shown):
    with pytest.raises(UnknownMeasureError, match=re.escape(shown)):
        parse_measure(name)
