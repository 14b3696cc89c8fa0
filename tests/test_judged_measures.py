"""Bpref, infAP, Judged@k, Unjudged@k and condensed rankings on runs computed by hand.

Their per-query parity with trec_eval (``bpref``, ``infAP``, ``unj``,
``num_nonrel_judged_ret``, ``-J``) is in ``tests/test_trec_eval_parity.py`` and
``tests/test_cli_trec_eval.py``; these cover the edge cases: no judged non-relevant
document, nothing relevant retrieved (r = 0), an empty ranking, a cutoff deeper than the
ranking, pooled documents left unassessed (grade -1).
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import SchemaError

EPS = 1e-5  # trec_eval's INFAP_EPSILON

# System A ranks d1 … d5: d1 judged non-relevant, d2 relevant, d3 pooled but unassessed
# (-1), d4 judged non-relevant, d5 unjudged; d6 is relevant and retrieved by nobody.
# So R = 2 relevant and N = 2 judged non-relevant documents.
# System B ranks d7, d2, d6: no judged non-relevant document above either relevant one
# (d7 is unjudged). System C ranks d1 only (r = 0). System D skipped q1.
RUN = pl.DataFrame(
    {
        "system": ["A"] * 5 + ["B"] * 3 + ["C"] + ["D"],
        "query": ["q1"] * 9 + ["q2"],
        "doc": ["d1", "d2", "d3", "d4", "d5", "d7", "d2", "d6", "d1", "x"],
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 1.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query": ["q1"] * 6 + ["q2"],
        "doc": ["d1", "d2", "d3", "d4", "d6", "d8", "x"],
        "relevance": [0, 1, -1, 0, 2, 0, 1],
    }
)
# q1 has d8 judged non-relevant too: N = 3 for q1.


def per_system(names: list[str], **options: object) -> dict[str, dict[str, float]]:
    frame = lf.evaluate(RUN, QRELS, names, **options).filter(pl.col("query") == "q1")
    return {row.pop("system"): row for row in frame.drop("query").iter_rows(named=True)}


def test_judged_positions_by_hand():
    frame = lf.positions(RUN, QRELS, judged=True).filter(pl.col("query") == "q1").sort("system")
    assert frame.select("system", "positions", "nonrel_positions", "pooled_positions").rows() == [
        ("A", [2], [1, 4], [3]),
        ("B", [2, 3], [], []),
        ("C", [], [1], []),
        ("D", [], [], []),  # skipped: worst case, nothing retrieved
    ]
    assert frame["n_nonrel"].to_list() == [3, 3, 3, 3]


def test_condensed_positions_by_hand():
    frame = lf.positions(RUN, QRELS, judged=True, condensed=True).filter(pl.col("query") == "q1")
    rows = frame.sort("system").select("system", "positions", "nonrel_positions", "n_ret").rows()
    # A: d3 (pooled, unassessed) and d5 (unjudged) leave; d1 d2 d4 move up to 1 2 3.
    # B: d7 (unjudged) leaves; d2 d6 are ranked 1 and 2.
    assert rows == [
        ("A", [2], [1, 3], 3),
        ("B", [1, 2], [], 2),
        ("C", [], [1], 1),
        ("D", [], [], 0),
    ]


def test_condensed_after_the_depth_cut():
    """As trec_eval -M then -J: the depth cuts the ranking the system returned."""
    frame = lf.positions(RUN, QRELS, condensed=True, depth=2).filter(
        (pl.col("system") == "A") & (pl.col("query") == "q1")
    )
    assert frame.select("positions", "n_ret").row(0) == ([2], 2)  # d1 d2 survive the cut


def test_bpref_by_hand():
    got = per_system(["Bpref"])
    # A: d2 has 1 judged non-relevant document above it: 1 − min(1, 2)/min(3, 2) = 1/2.
    assert got["A"]["Bpref"] == pytest.approx(0.5 / 2)
    # B: none above either relevant document (d7 is unjudged, ignored): (1 + 1)/2.
    assert got["B"]["Bpref"] == pytest.approx(1.0)
    assert got["C"]["Bpref"] == 0.0  # r = 0
    assert got["D"]["Bpref"] == 0.0  # empty ranking


def test_bpref_without_judged_non_relevant_documents():
    qrels = QRELS.filter(pl.col("relevance") != 0)
    frame = lf.evaluate(RUN, qrels, ["Bpref"]).filter(
        (pl.col("system") == "A") & (pl.col("query") == "q1")
    )
    assert frame["Bpref"].item() == pytest.approx(0.5)  # min(N, R) = 0: d2 scores 1, of R = 2


def test_bpref_sums_in_rank_order_as_trec_eval():
    # R = 16, N = 10: relevant documents at ranks 4 and 6 under 3 and 4 judged
    # non-relevant ones. Exactly (2 − 7/10)/16 = 0.08125, a half-way case; trec_eval 10.0
    # (-q -m bpref on these judgments) sums 0.7 + 0.6 in rank order and prints 0.0812.
    docs = ["n0", "n1", "n2", "r0", "n3", "r1", "x"]
    run = pl.DataFrame({"system": "s", "query": "1", "doc": docs, "score": [7.0, 6, 5, 4, 3, 2, 1]})
    judged = [f"r{i}" for i in range(16)] + [f"n{i}" for i in range(10)]
    qrels = pl.DataFrame({"query": "1", "doc": judged, "relevance": [1] * 16 + [0] * 10})
    value = lf.evaluate(run, qrels, ["Bpref"])["Bpref"].item()
    assert value == ((1.0 - 3 / 10) + (1.0 - 4 / 10)) / 16 < 0.08125
    assert f"{value:6.4f}" == "0.0812"


def test_inf_ap_by_hand():
    got = per_system(["infAP"])
    # A: d2 at rank 2, with a = 0 relevant, b = 1 non-relevant, u = 0 pooled above:
    # 1/2 + (1/2)·(1/1)·(ε/(1 + 2ε)), over R = 2.
    assert got["A"]["infAP"] == pytest.approx((0.5 + 0.5 * EPS / (1 + 2 * EPS)) / 2, rel=1e-12)
    # B: d2 at rank 2 above nothing judged (d7 unjudged): 1/2 + 0; d6 at rank 3 with a = 1,
    # b = 0, u = 0: 1/3 + (2/3)·(1/2)·((1 + ε)/(1 + 2ε)).
    second = 1 / 3 + (2 / 3) * (1 / 2) * ((1 + EPS) / (1 + 2 * EPS))
    assert got["B"]["infAP"] == pytest.approx((0.5 + second) / 2, rel=1e-12)
    assert got["C"]["infAP"] == 0.0
    assert got["D"]["infAP"] == 0.0


def test_inf_ap_counts_pooled_documents_above():
    run = pl.DataFrame(
        {"system": ["A"] * 3, "query": ["q"] * 3, "doc": ["p", "n", "r"], "score": [3.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["p", "n", "r"], "relevance": [-1, 0, 1]})
    value = lf.evaluate(run, qrels, ["infAP"])["infAP"].item()
    # r at rank 3, a = 0, b = 1, u = 1: 1/3 + (2/3)·(2/2)·(ε/(1 + 2ε)), R = 1.
    assert value == pytest.approx(1 / 3 + (2 / 3) * (EPS / (1 + 2 * EPS)), rel=1e-12)


@pytest.mark.parametrize(
    ("name", "a", "b", "c", "d"),
    [
        ("Judged@1", 1.0, 0.0, 1.0, 0.0),
        ("Judged@3", 1.0, 2 / 3, 1.0, 0.0),  # A: d1 d2 d3 (pooled counts as judged)
        ("Judged@10", 4 / 5, 2 / 3, 1.0, 0.0),  # k beyond the ranking: of min(k, ñ)
        ("Judged", 4 / 5, 2 / 3, 1.0, 0.0),
        ("Unjudged@1", 0.0, 1.0, 0.0, 0.0),
        ("Unjudged@3", 1 / 3, 1 / 3, 0.0, 0.0),  # A: d3 is pooled, not assessed
        ("unj_10", 2 / 10, 1 / 10, 0.0, 0.0),  # k beyond the ranking: of k
        ("NumNonRelJudgedRet", 2.0, 0.0, 1.0, 0.0),
    ],
)
def test_judged_shares_by_hand(name, a, b, c, d):
    column = str(lf.parse_measure(name))
    got = per_system([name])
    assert [got[s][column] for s in "ABCD"] == pytest.approx([a, b, c, d])


def test_condensed_measures_by_hand():
    got = per_system(["AP", "P@2", "RR", "Bpref"], condensed=True)
    assert got["A"]["AP"] == pytest.approx((1 / 2) / 2)
    assert got["B"]["AP"] == pytest.approx(1.0)  # d2 d6 at condensed ranks 1 and 2
    assert got["B"]["RR"] == 1.0
    assert got["B"]["P@2"] == 1.0
    assert got["A"]["Bpref"] == pytest.approx(0.5 / 2)  # Bpref ignores unjudged documents


def test_preferences_read_condensed_rankings():
    """Preferences on condensed rankings are those of the run without its unassessed and
    unjudged documents (removed by hand here), and differ from the full rankings'."""
    names = ["sgnLP", "rrLP", "sgnLR"]
    keys = ["query", "system_a", "system_b"]
    assessed = QRELS.filter(pl.col("relevance") >= 0)
    by_hand = RUN.join(assessed, on=["query", "doc"], how="semi")
    condensed = lf.positions(RUN, QRELS, condensed=True).lexi.preferences(names).sort(keys)
    expected = lf.positions(by_hand, QRELS).lexi.preferences(names).sort(keys)
    assert condensed.equals(expected)
    full = lf.positions(RUN, QRELS).lexi.preferences(names).sort(keys)
    assert not condensed.equals(full)


def test_measures_need_the_judged_columns():
    frame = lf.positions(RUN, QRELS)
    with pytest.raises(SchemaError, match=r"judged=True"):
        frame.lexi.measures(["Bpref"])
    with pytest.raises(SchemaError, match=r"judged=True"):
        lf.evaluate(RUN, QRELS, ["infAP"], judged=False)


@pytest.mark.parametrize("condensed", [False, True])
def test_cli_evaluate_requests_the_judged_columns(condensed, tmp_path, capsys):
    """``lexiframe evaluate -m Bpref`` (and ``--condensed``) gives lf.evaluate's numbers."""
    from lexiframe.cli import main
    from tests.conftest import DATA, read_trec_qrels, read_trec_run

    runs = sorted(str(path) for path in (DATA / "toy" / "runs").iterdir())
    qrels = str(DATA / "toy" / "qrels.txt")
    names = ["Bpref", "infAP", "Judged@10", "AP"]
    target = tmp_path / "per_query.parquet"
    flags = [arg for name in names for arg in ("-m", name)] + (["--condensed"] if condensed else [])
    assert main(["evaluate", "--qrels", qrels, *flags, "--output", str(target), *runs]) == 0
    capsys.readouterr()
    got = pl.read_parquet(target).sort("system", "query")
    with pytest.warns(lf.errors.DroppedQueriesWarning):
        expected = lf.evaluate(
            read_trec_run(*runs), read_trec_qrels(qrels), names, condensed=condensed
        ).sort("system", "query")
    assert got.equals(expected)


# ir_measures' Judged@k (providers/judged_provider.py), stored per query: provenance in
# tests/data/README.md. ir_measures breaks score ties by document id ascending, trec_eval
# (and lexiframe) descending, so rankings are compared in ir_measures' order through a rank
# column, and in trec_eval's order only where no tie crosses a cutoff.
JUDGED = ["Judged@5", "Judged@10", "Judged@100", "Judged"]
JUDGED_GOLDENS = [
    ("trec_eval/qrels.test", ["trec_eval/results.test"], "trec_eval/ir_measures/judged.csv"),
    ("toy/qrels.txt", "toy/runs", "toy/expected/ir_measures/judged.csv"),
    ("toy/qrels.pooled.txt", "toy/runs", "toy/expected/ir_measures/judged.pooled.csv"),
]


@pytest.mark.parametrize(("qrels", "runs", "golden"), JUDGED_GOLDENS, ids=lambda x: str(x))
def test_judged_is_ir_measures(qrels, runs, golden):
    from tests.conftest import DATA, read_trec_qrels, read_trec_run

    paths = (
        sorted((DATA / runs).iterdir()) if isinstance(runs, str) else [DATA / p for p in runs]
    )
    run = read_trec_run(*paths)
    judgments = read_trec_qrels(DATA / qrels)
    expected = pl.read_csv(DATA / golden, schema_overrides={"query": pl.String}).rename(
        {"run": "system"}
    )

    def evaluate(frame: pl.DataFrame, **options: object) -> pl.DataFrame:
        with warnings.catch_warnings():  # the toy's unjudged query 888, as ir_measures
            warnings.simplefilter("ignore", lf.errors.DroppedQueriesWarning)
            return lf.evaluate(frame, judgments, JUDGED, no_relevant="keep", **options)

    def long(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.unpivot(index=["system", "query"], variable_name="measure").join(
            expected, on=["system", "query", "measure"], how="right", suffix="_ir_measures"
        )

    # ir_measures' order: score descending, then document id ascending.
    ir_order = run.with_columns(
        rank=pl.struct(pl.col("score").neg(), "doc").rank("ordinal").over("system", "query")
    )
    same_order = long(evaluate(ir_order, rank_by="rank"))
    assert same_order["value"].null_count() == 0
    assert (same_order["value"] - same_order["value_ir_measures"]).abs().max() < 1e-12

    # trec_eval's order: the values differ only in rankings with tied scores.
    got = long(evaluate(run))
    differ = got.filter((pl.col("value") - pl.col("value_ir_measures")).abs() > 1e-12)
    tied = run.filter(pl.col("score").is_duplicated().over("system", "query"))
    assert differ.join(tied, on=["system", "query"], how="anti").height == 0
    if golden.startswith("toy"):
        assert 0 < differ.height < 10  # sys003's ties


@pytest.mark.parametrize(
    "options",
    [{"judged": True}, {"judged": True, "condensed": True, "depth": 30}, {"condensed": True}],
    ids=["judged", "judged-condensed-depth", "condensed"],
)
def test_judged_and_condensed_rankings_in_groups_of_queries(options):
    """A LazyFrame ranked one group of queries after another, and an in-memory run split
    in groups, give the frame of one pass (the toy track, with pooled judgments)."""
    from tests.conftest import DATA, read_trec_qrels, read_trec_run

    run = read_trec_run(*sorted((DATA / "toy" / "runs").iterdir()))
    qrels = read_trec_qrels(DATA / "toy" / "qrels.pooled.txt")
    keys = ["system", "query"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.errors.DroppedQueriesWarning)
        whole = lf.positions(run, qrels, **options).sort(keys)
        split = lf.positions(run, qrels, partitions=4, **options).sort(keys)
    lazy = lf.positions(run.lazy(), qrels, partitions=3, **options).collect().sort(keys)
    assert whole["pooled_positions" if "judged" in options else "n_ret"].len() > 0
    assert split.equals(whole)
    assert lazy.equals(whole)
