"""Label degradation and query subsampling (seeded), ASL analyses and the report table."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.errors import DroppedQueriesWarning, InputError, SchemaError
from lexiframe.io import read_qrels, read_run
from lexiframe.stats import (
    asl_deltas,
    average_over_samples,
    degradation_curve,
    degrade_labels,
    label_degradation,
    report,
    rrie,
    significance,
    subsample_queries,
    to_latex,
    to_markdown,
)

TOY = DATA / "toy"


@pytest.fixture(scope="module")
def toy() -> tuple[pl.DataFrame, pl.DataFrame]:
    return read_run(sorted((TOY / "runs").iterdir()), rank=True), read_qrels(TOY / "qrels.txt")


def _positions(run, qrels, **options) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        return lf.positions(run, qrels, **options)


def _relevant_counts(qrels: pl.DataFrame) -> dict[str, int]:
    rows = qrels.filter(pl.col("relevance") >= 1).group_by("query").len().rows()
    return dict(rows)


# --- degradation -------------------------------------------------------------------------


@pytest.mark.parametrize("weighting", ["uniform", "retrieved"])
def test_degrade_labels_counts_and_seeds(toy, weighting):
    run, qrels = toy
    before = _relevant_counts(qrels)
    out = degrade_labels(qrels, 0.6, seed=1, weighting=weighting, run=run)
    after = _relevant_counts(out)
    for query, m in before.items():
        assert after[query] == max(1, m - int(np.floor(0.6 * m)))  # at least one kept
    nonrelevant = qrels.filter(pl.col("relevance") < 1)
    assert (
        out.filter(pl.col("relevance") < 1)
        .sort("query", "doc")
        .equals(nonrelevant.sort("query", "doc"))
    )
    assert out.join(qrels, on=["query", "doc"], how="anti").height == 0  # a subset
    assert out.equals(degrade_labels(qrels, 0.6, seed=1, weighting=weighting, run=run))
    assert not out.equals(degrade_labels(qrels, 0.6, seed=2, weighting=weighting, run=run))
    assert degrade_labels(qrels, 0.0, seed=1).equals(qrels.sort("query", "doc"))


def test_retrieved_weighting_removes_popular_documents_first(toy):
    run, qrels = toy
    popularity = run.group_by("query", "doc").agg(pl.col("system").n_unique().alias("k"))
    relevant = (
        qrels.filter(pl.col("relevance") >= 1)
        .join(popularity, on=["query", "doc"], how="left")
        .with_columns(pl.col("k").fill_null(0))
    )
    removed_k = {"uniform": [], "retrieved": []}
    for seed in range(6):
        for weighting in removed_k:
            kept = degrade_labels(qrels, 0.5, seed=seed, weighting=weighting, run=run)
            removed = relevant.join(kept, on=["query", "doc"], how="anti")
            removed_k[weighting].extend(removed["k"].to_list())
            if weighting == "retrieved":
                # a document no run retrieved goes only once the retrieved ones are gone
                per_query = relevant.join(kept.select("query", "doc"), on=["query", "doc"])
                for query, group in removed.group_by("query"):
                    if (group["k"] == 0).any():
                        left = per_query.filter(pl.col("query") == query[0])
                        assert (left["k"] == 0).all()
    assert np.mean(removed_k["retrieved"]) > np.mean(removed_k["uniform"])
    with pytest.raises(InputError, match="run="):
        degrade_labels(qrels, 0.5, seed=0, weighting="retrieved")


def test_subsample_queries(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["RR"])
    kept = subsample_queries(metrics, 0.25, seed=3)
    queries = metrics["query"].n_unique()
    assert kept["query"].n_unique() == queries - int(0.25 * queries)
    assert kept.equals(subsample_queries(metrics, 0.25, seed=3))
    assert not kept.equals(subsample_queries(metrics, 0.25, seed=4))
    # whole queries are kept: every system still has each kept query
    assert kept.group_by("query").len()["len"].unique().to_list() == [8]
    assert subsample_queries(metrics, 1.0, seed=0)["query"].n_unique() == 1
    with pytest.raises(InputError, match="fraction"):
        subsample_queries(metrics, 1.5, seed=0)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=6),
    st.floats(0.0, 1.0),
    st.integers(0, 2**32 - 1),
)
def test_degradation_keeps_one_label_per_query(sizes, fraction, seed):
    qrels = pl.DataFrame(
        {
            "query": [f"q{i}" for i, size in enumerate(sizes) for _ in range(size)],
            "doc": [f"d{j}" for size in sizes for j in range(size)],
            "relevance": [1] * sum(sizes),
        }
    )
    out = degrade_labels(qrels, fraction, seed=seed)
    counts = dict(out.group_by("query").len().rows())
    for i, size in enumerate(sizes):
        assert 1 <= counts[f"q{i}"] <= size


def test_degradation_curve_and_average():
    def analysis(fraction, rng):
        return pl.DataFrame({"measure": ["a", "b"], "value": rng.random(2) + fraction})

    curve = degradation_curve(analysis, [0.0, 0.5], seed=9, n_samples=3)
    assert curve.equals(degradation_curve(analysis, [0.0, 0.5], seed=9, n_samples=3))
    assert not curve.equals(degradation_curve(analysis, [0.0, 0.5], seed=10, n_samples=3))
    averaged = average_over_samples(curve)
    assert averaged.columns == ["fraction", "measure", "value", "value_std"]
    expected = curve.filter((pl.col("fraction") == 0.5) & (pl.col("measure") == "b"))["value"]
    row = averaged.filter((pl.col("fraction") == 0.5) & (pl.col("measure") == "b")).row(0)
    assert row[2] == pytest.approx(expected.mean()) and row[3] == pytest.approx(expected.std())


def test_label_degradation_on_toy(toy):
    run, qrels = toy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        out = label_degradation(run, qrels, ["sgnLP", "RR"], [0.0, 0.5], seed=4, n_samples=2)
        again = label_degradation(run, qrels, ["sgnLP", "RR"], [0.0, 0.5], seed=4, n_samples=2)
    assert out.equals(again)
    assert out.columns == [
        "fraction",
        "measure",
        "tie_fraction",
        "tie_fraction_std",
        "agreement",
        "agreement_std",
    ]
    full = out.filter(pl.col("fraction") == 0.0)
    assert full["agreement"].to_list() == [1.0, 1.0]  # no label removed: same preferences
    positions = _positions(run, qrels)
    rr_ties = lf.stats.tie_fraction(lf.measures(positions, ["RR"]))["tie_fraction"].item()
    assert full.filter(pl.col("measure") == "RR")["tie_fraction"].item() == pytest.approx(rr_ties)
    half = out.filter(pl.col("fraction") == 0.5)
    assert (half["agreement"] < 1.0).all()
    # lexiprecision Figure 9: with fewer labels RR ties more, sgnLP stays far below
    by_measure = dict(half.select("measure", "tie_fraction").rows())
    assert by_measure["sgnLP"] < by_measure["RR"]


# --- ASL -----------------------------------------------------------------------------------


def test_rrie_reproduces_asl_table_1():
    # ASL paper Table 1 (2020 Deep Learning), system means: RRIE percentages as printed
    rows = [
        ("ASL@g1-10", 14, 5, 69),
        ("ASL", 39, 27, 32),
        ("ASL@g1-10", 51, 6, 90),
        ("ASL", 264, 215, 19),
    ]
    for measure, bm25, neural, percent in rows:
        table = pl.DataFrame(
            {
                "system": ["bm25", "neural"],
                "query": ["1", "1"],
                measure: [float(bm25), float(neural)],
            }
        )
        value = rrie(table, measure, "bm25")["rrie"].item()
        assert round(100 * value) == percent
    for measure, bm25, neural, percent in [("P@20", 0.456, 0.594, 25), ("MAP", 0.400, 0.572, 29)]:
        table = pl.DataFrame(
            {"system": ["bm25", "neural"], "query": ["1", "1"], measure: [bm25, neural]}
        )
        assert round(100 * rrie(table, measure, "bm25", kind="gain")["rrie"].item()) == percent


def test_rrie_means_and_per_query(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["ASL"])
    out = rrie(metrics, "ASL", "sys000")
    means = dict(metrics.group_by("system").agg(pl.col("ASL").mean()).rows())
    b = means["sys000"]
    for row in out.iter_rows(named=True):
        s = means[row["system"]]
        assert row["rrie"] == pytest.approx(((b - 1) - (s - 1)) / (b - 1))
    per_query = rrie(metrics, "ASL", "sys000", per_query=True)
    assert per_query.height == 7 * metrics["query"].n_unique()
    with pytest.raises(InputError, match="baseline"):
        rrie(metrics, "ASL", "nobody")


def test_asl_deltas_score_a_skipped_query_at_the_depth():
    # x retrieved d1 at 1 and d2 at 3 of 3 relevant documents, in 10 returned; y skipped q.
    # The longest ranking of q holds 10 documents: each of y's documents scores 10. x: d1 1,
    # d2 3 − 1 = 2, the third (retrieved by neither) 10 − 2 = 8.
    pos = pl.DataFrame(
        {
            "system": ["x", "y"],
            "query": ["q", "q"],
            "positions": [[1, 3], []],
            "docs": [["d1", "d2"], []],
            "n_rel": [3, 3],
            "n_ret": [10, 0],
        },
        schema_overrides={"docs": pl.List(pl.String)},
    )
    rows = asl_deltas(pos, "x", "y").select("doc", "asl_a", "asl_b", "delta").rows()
    assert rows == [("d1", 1.0, 10.0, -9.0), ("d2", 2.0, 10.0, -8.0), (None, 8.0, 10.0, -2.0)]
    # With the frame's depth= (20), the skipped query scores 20.
    rows = asl_deltas(pos.with_columns(depth=pl.lit(20)), "x", "y")["asl_b"].to_list()
    assert rows == [20.0, 20.0, 20.0]


def test_asl_deltas_against_a_hand_computation(toy):
    run, qrels = toy
    positions = _positions(run, qrels, docs=True)
    out = asl_deltas(positions, "sys001", "sys004")
    relevant = qrels.filter(pl.col("relevance") >= 1)
    assert out.height == relevant.height  # one row per relevant document
    # ASL per document from the run itself: irrelevant documents above it, plus one
    ranked = run.sort("system", "query", "rank")
    rel = {(q, d) for q, d in relevant.select("query", "doc").rows()}
    expected: dict[tuple[str, str, str], float] = {}
    missing: dict[tuple[str, str], float] = {}
    for (system, query), group in ranked.group_by("system", "query"):
        irrelevant = 0
        for doc in group.sort("rank")["doc"]:
            if (query, doc) in rel:
                expected[system, query, doc] = irrelevant + 1.0
            else:
                irrelevant += 1
        missing[system, query] = float(irrelevant)
    for row in out.filter(pl.col("doc").is_not_null()).iter_rows(named=True):
        for side, system in (("asl_a", "sys001"), ("asl_b", "sys004")):
            key = (system, row["query"], row["doc"])
            # a skipped query scores the longest ranking of the query, in documents
            skipped = float(
                ranked.filter(pl.col("query") == row["query"]).group_by("system").len()["len"].max()
            )
            assert row[side] == expected.get(key, missing.get((system, row["query"]), skipped))
        assert row["delta"] == row["asl_a"] - row["asl_b"]
    # per query, the mean of asl_a is the system's ASL (eq. 3-4)
    asl = lf.measures(positions, ["ASL"]).filter(pl.col("system") == "sys001")
    means = out.group_by("query").agg(pl.col("asl_a").mean())
    joined = asl.join(means, on="query")
    assert np.allclose(joined["ASL"], joined["asl_a"])
    with pytest.raises(SchemaError, match="docs=True"):
        asl_deltas(positions.drop("docs"), "sys001", "sys004")


# --- report ----------------------------------------------------------------------------------


def test_report_markers_follow_the_tests(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["AP", "RR"])
    table = report(metrics, ["AP", "RR"])
    assert table.columns == [
        "label",
        "system",
        "n_queries",
        "AP",
        "AP_sig",
        "RR",
        "RR_sig",
        "test",
        "correction",
        "alpha",
    ]
    assert table["label"].to_list() == list("abcdefgh")
    assert set(table["test"]) == {"paired_t"} and set(table["correction"]) == {"holm"}
    labels = dict(table.select("system", "label").rows())
    tests = significance(metrics, "AP", test="t", correction="holm")
    for row in table.iter_rows(named=True):
        better = tests.filter(
            (pl.col("p_adjusted") < 0.05)
            & (
                ((pl.col("system_a") == row["system"]) & (pl.col("mean") > 0))
                | ((pl.col("system_b") == row["system"]) & (pl.col("mean") < 0))
            )
        )
        others = [
            a if a != row["system"] else b for a, b in better.select("system_a", "system_b").rows()
        ]
        assert row["AP_sig"] == "".join(sorted(labels[o] for o in others))
    assert any(table["AP_sig"])  # the toy track separates some systems
    mean_ap = metrics.group_by("system").agg(pl.col("AP").mean()).sort("system")["AP"]
    assert np.allclose(table["AP"], mean_ap)


def test_report_reads_which_measures_are_costs_from_the_registry(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["AP", "ASL"])
    for baseline in (None, "sys003"):
        told = report(metrics, ["AP", "ASL"], baseline=baseline, lower_is_better=["ASL"])
        assert report(metrics, ["AP", "ASL"], baseline=baseline).equals(told)
    # lower_is_better=() still takes every measure as higher-is-better.
    flipped = report(metrics, ["ASL"], lower_is_better=())
    assert not flipped.equals(report(metrics, ["ASL"]))


def test_report_against_a_baseline_and_exports(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["AP", "ASL"])
    table = report(metrics, ["AP", "ASL"], baseline="sys003", lower_is_better=["ASL"])
    assert set(table["AP_sig"].to_list()) <= {"", "▲", "▼"}
    assert table.filter(pl.col("system") == "sys003")["AP_sig"].item() == ""
    tests = significance(metrics, "AP", correction="none").filter(
        (pl.col("system_a") == "sys003") | (pl.col("system_b") == "sys003")
    )
    holm = lf.stats.adjust_p_values(tests["p_value"].to_numpy(), "holm")
    assert (table["AP_sig"] != "").sum() == int((holm < 0.05).sum())
    markdown = to_markdown(table)
    assert markdown.splitlines()[0] == "| | system | AP | ASL |"
    assert "holm correction" in markdown and "paired_t" in markdown
    latex = to_latex(table)
    assert latex.startswith("\\begin{table}") and "\\begin{tabular}{llrr}" in latex
    if "▲" in table["AP_sig"].to_list():
        assert "$^{\\blacktriangle}$" in latex
    assert "▲" not in latex.split("\\caption")[0]


def test_report_hsd_and_randomized_are_recorded(toy):
    run, qrels = toy
    metrics = lf.measures(_positions(run, qrels), ["AP"])
    hsd = report(metrics, "AP", test="hsd", correction="none")
    assert hsd.select("test", "correction").unique().rows() == [("hsd_blocked", "none")]
    randomized = report(
        metrics, "AP", test="randomized_hsd", correction="none", seed=1, n_replicates=200
    )
    assert randomized.equals(
        report(metrics, "AP", test="randomized_hsd", correction="none", seed=1, n_replicates=200)
    )
