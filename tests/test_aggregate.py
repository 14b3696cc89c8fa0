"""Aggregation over queries: pair summaries and system orderings (docs/definitions.md §4)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import lexiframe as lf
from lexiframe.aggregate import order, summarize_preferences
from lexiframe.errors import InputError, SchemaError, UnknownMeasureError
from lexiframe.mc4 import mc4_stationary

TOY = Path(__file__).parent / "data" / "toy" / "expected"
METHODS = ["mc4", "borda", "winrate", "mean"]


def metrics_from_orders(orders: list[str], track: str | None = None) -> pl.DataFrame:
    """A metrics table whose per-query metric ranks the systems in each given order."""
    rows = [
        (system, query, float(len(systems) - position))
        for query, systems in enumerate(orders)
        for position, system in enumerate(systems)
    ]
    frame = pl.DataFrame(rows, schema=["system", "query", "metric"], orient="row")
    return frame if track is None else frame.with_columns(track=pl.lit(track))


def pairs_from_orders(orders: list[str]) -> pl.DataFrame:
    """The per-query sgnLP-style pair table of the same orders."""
    rows = []
    for query, systems in enumerate(orders):
        rank = {system: position for position, system in enumerate(systems)}
        for a in sorted(rank):
            for b in sorted(rank):
                if a < b:
                    rows.append((query, a, b, 1 if rank[a] < rank[b] else -1))
    return pl.DataFrame(rows, schema=["query", "system_a", "system_b", "sgnLP"], orient="row")


def ranking(frame: pl.DataFrame) -> list[str]:
    return frame.sort("rank")["system"].to_list()


# --- MC4 (docs/definitions.md §4, its checks) ----------------------------------------------


@pytest.mark.parametrize("table", ["metrics", "pairs"])
def test_mc4_design_vector_two_orders(table):
    orders = ["ABCD", "BADC"]
    frame = metrics_from_orders(orders) if table == "metrics" else pairs_from_orders(orders)
    got = order(frame, "metric" if table == "metrics" else "sgnLP")
    assert ranking(got) == ["A", "B", "C", "D"]  # A and B tie: Copeland ties, then by id
    assert got["score"].to_list() == pytest.approx([10 / 23, 10 / 23, 3 / 46, 3 / 46], abs=1e-12)
    assert got["rank"].to_list() == [1, 2, 3, 4]


@pytest.mark.parametrize("table", ["metrics", "pairs"])
def test_mc4_design_vector_three_orders(table):
    orders = ["ABCDE", "ABCED", "BACDE"]
    frame = metrics_from_orders(orders) if table == "metrics" else pairs_from_orders(orders)
    got = order(frame, "metric" if table == "metrics" else "sgnLP", damping=0.15)
    assert ranking(got) == list("ABCDE")
    expected = [0.625, 0.19133, 0.09276, 0.05476, 0.03614]
    assert got["score"].to_list() == pytest.approx(expected, abs=1e-5)
    assert sum(got["score"]) == pytest.approx(1.0, abs=1e-12)


def test_mc4_stationary_is_stationary():
    rng = np.random.default_rng(7)
    wins = rng.integers(0, 5, size=(9, 9)).astype(float)
    np.fill_diagonal(wins, 0)
    for damping in (0.15, 0.5, 1.0):
        pi = mc4_stationary(wins, damping=damping)
        beaten_by = wins < wins.T
        transition = beaten_by / 9
        np.fill_diagonal(transition, 1 - transition.sum(axis=1))
        chain = (1 - damping) * transition + damping / 9
        assert np.allclose(pi @ chain, pi, atol=1e-14)
        assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(mc4_stationary(wins, damping=1.0), 1 / 9)


def test_mc4_undamped():
    got = order(metrics_from_orders(["ABC", "ABC"]), "metric", damping=0.0)
    assert ranking(got) == ["A", "B", "C"]
    assert got["score"].to_list() == pytest.approx([1.0, 0.0, 0.0], abs=1e-12)
    # Two closed classes ({A}, {B}): no unique stationary vector; the power iteration from
    # the uniform vector splits the mass evenly.
    got = order(metrics_from_orders(["ABCD", "BADC"]), "metric", damping=0.0)
    assert ranking(got) == ["A", "B", "C", "D"]
    assert got["score"].to_list() == pytest.approx([0.5, 0.5, 0.0, 0.0], abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_identical_orders_come_back_unchanged(method):
    orders = ["DBEAC"] * 4
    got = order(metrics_from_orders(orders), "metric", method=method)
    assert ranking(got) == list("DBEAC")
    got = order(pairs_from_orders(orders), "sgnLP", method=method)
    assert ranking(got) == list("DBEAC")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("damping", [0.0, 0.15, 0.5])
def test_condorcet_order_is_recovered(seed, damping):
    rng = np.random.default_rng(seed)
    systems = [f"s{i:02d}" for i in range(int(rng.integers(3, 12)))]
    truth = list(rng.permutation(systems))
    strength = {system: -position for position, system in enumerate(truth)}
    metrics = pl.DataFrame(
        [
            (system, query, strength[system] + rng.normal(scale=2.0))
            for query in range(25)
            for system in systems
        ],
        schema=["system", "query", "metric"],
        orient="row",
    )
    values = metrics.pivot("query", index="system").sort("system")
    x = values.drop("system").to_numpy()
    wins = (x[:, None, :] > x[None, :, :]).sum(axis=2)
    beats = wins > wins.T
    copeland = beats.sum(axis=1)
    if sorted(copeland) != list(range(len(systems))):
        pytest.skip("no Condorcet order in this sample")
    condorcet = [values["system"][int(i)] for i in np.argsort(-copeland)]
    assert ranking(order(metrics, "metric", damping=damping)) == condorcet


@pytest.mark.parametrize("method", METHODS)
def test_relabelling_permutes_the_output(method):
    rng = np.random.default_rng(3)
    systems = [f"run{i}" for i in range(8)]
    metrics = pl.DataFrame(
        {
            "system": systems * 6,
            "query": np.repeat(np.arange(6), 8),
            "metric": rng.random(48) + np.tile(np.linspace(0, 0.6, 8), 6),
        }
    )
    mapping = dict(zip(systems, rng.permutation([f"x{i}" for i in range(8)]), strict=True))
    original = order(metrics, "metric", method=method)
    relabelled = order(
        metrics.with_columns(pl.col("system").replace_strict(mapping)), "metric", method=method
    )
    assert relabelled["system"].to_list() == [mapping[s] for s in original["system"]]
    assert relabelled["score"].to_list() == pytest.approx(original["score"].to_list(), abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_ties_are_deterministic(method):
    # "b" and "a" are identical: a tie broken by id, whatever the row order.
    metrics = metrics_from_orders(["CAD", "ACD", "DCA"]).vstack(
        metrics_from_orders(["CAD", "ACD", "DCA"]).filter(pl.col("system") == "A")
    )
    metrics = metrics.with_columns(
        system=pl.when(pl.int_range(pl.len()) >= 9).then(pl.lit("B")).otherwise("system")
    )
    first = order(metrics, "metric", method=method)
    for seed in range(3):
        shuffled = metrics.sample(fraction=1.0, shuffle=True, seed=seed)
        assert order(shuffled, "metric", method=method).equals(first)
    names = ranking(first)
    assert names.index("A") + 1 == names.index("B")


def test_score_ties_go_to_copeland_before_id():
    # Borda ties B and D at 4 points; D beats more systems head to head (Copeland 1 > -1).
    got = order(metrics_from_orders(["BCAD", "CDBA", "CDAB"]), "metric", method="borda")
    assert ranking(got) == ["C", "D", "B", "A"]
    assert got["score"].to_list() == [8.0, 4.0, 4.0, 2.0]


# --- Borda, win rate, mean ---------------------------------------------------------------------


def test_borda_counts_points_and_half_ties():
    # Query 0: A > B > C. Query 1: A = B (tied sgn 0) > C.
    prefs = pl.DataFrame(
        {
            "query": [0, 0, 0, 1, 1, 1],
            "system_a": ["A", "A", "B", "A", "A", "B"],
            "system_b": ["B", "C", "C", "B", "C", "C"],
            "sgnLP": [1, 1, 1, 0, 1, 1],
        }
    )
    got = order(prefs, "sgnLP", method="borda")
    assert got.to_dict(as_series=False) == {
        "system": ["A", "B", "C"],
        "rank": [1, 2, 3],
        "score": [2 + 1.5, 1 + 1.5, 0.0],
    }


def test_winrate_is_the_mean_fraction_of_decided_queries_won():
    prefs = pl.DataFrame(
        {
            "query": [0, 0, 0, 1, 1, 1, 2, 2, 2],
            "system_a": ["A", "A", "B"] * 3,
            "system_b": ["B", "C", "C"] * 3,
            "sgnLR": [1, -1, 0, 1, -1, 0, -1, 0, 0],
        }
    )
    got = order(prefs, "lexirecall", method="winrate")
    # A: 2/3 against B, 0/2 against C. B: 1/3 against A, no decided query against C (1/2).
    # C: 2/2 against A, 1/2 against B.
    assert ranking(got) == ["C", "B", "A"]
    assert got["score"].to_list() == pytest.approx([0.75, (1 / 3 + 0.5) / 2, 1 / 3])


def test_mean_on_pairs_and_metrics():
    prefs = pl.DataFrame(
        {
            "query": [0, 0, 0, 1, 1, 1],
            "system_a": ["A", "A", "B"] * 2,
            "system_b": ["B", "C", "C"] * 2,
            "rrLP": [0.5, 0.25, -0.5, 0.0, 0.75, 0.25],
        }
    )
    got = order(prefs, "rrLP", method="mean")
    # A: (0.5 + 0.25 + 0 + 0.75) / 4; B: (-0.5 - 0.5 + 0 + 0.25) / 4;
    # C: (-0.25 + 0.5 - 0.75 - 0.25) / 4
    assert got["score"].to_list() == pytest.approx([0.375, -0.1875, -0.1875])
    assert ranking(got) == ["A", "B", "C"]  # B and C tie on score and Copeland
    metrics = pl.DataFrame(
        {"system": ["x", "y", "x", "y"], "query": [1, 1, 2, 2], "AP": [0.5, 0.25, 0.1, 0.2]}
    )
    got = order(metrics, "AP", method="mean")
    assert got.to_dict(as_series=False) == {
        "system": ["x", "y"],
        "rank": [1, 2],
        "score": [0.3, pytest.approx(0.225)],
    }


# --- grouped ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("lazy", [False, True])
def test_grouped_by_track(method, lazy):
    first, second = ["ABCD", "ABDC", "BACD"], ["DCBA", "DCAB", "CDBA", "ABCD"]
    metrics = pl.concat(
        [metrics_from_orders(first, "t1"), metrics_from_orders(second, "t2")]
    ).sample(fraction=1.0, shuffle=True, seed=0)
    frame = metrics.lazy() if lazy else metrics
    got = order(frame, "metric", method=method, by="track")
    assert isinstance(got, pl.LazyFrame) == lazy
    if lazy:
        got = got.collect()
    assert got.columns == ["track", "system", "rank", "score"]
    for track, orders in [("t1", first), ("t2", second)]:
        alone = order(metrics_from_orders(orders), "metric", method=method)
        assert got.filter(pl.col("track") == track).drop("track").equals(alone)


def test_summarize_grouped_and_lazy():
    prefs = pl.DataFrame(
        {
            "track": ["t1"] * 3 + ["t2"] * 2,
            "query": [1, 2, 3, 1, 2],
            "system_a": ["x"] * 5,
            "system_b": ["y"] * 5,
            "sgnLP": [1, 0, -1, 1, 1],
            "rrLP": [0.5, 0.0, -0.25, 0.5, 1.0],
        }
    )
    got = summarize_preferences(prefs.lazy(), by="track")
    assert isinstance(got, pl.LazyFrame)
    got = got.collect()
    assert got.columns == [
        "track",
        "system_a",
        "system_b",
        "n_queries",
        "sgnLP",
        "sgnLP_wins",
        "sgnLP_losses",
        "sgnLP_ties",
        "rrLP",
        "rrLP_wins",
        "rrLP_losses",
        "rrLP_ties",
    ]
    assert got.row(0) == ("t1", "x", "y", 3, 0.0, 1, 1, 1, 0.25 / 3, 1, 1, 1)
    assert got.row(1) == ("t2", "x", "y", 2, 1.0, 2, 0, 0, 0.75, 2, 0, 0)
    only = summarize_preferences(prefs, by="track", measures="RRlexiprecision")
    assert only.columns[-4:] == ["rrLP", "rrLP_wins", "rrLP_losses", "rrLP_ties"]


def test_order_accepts_a_summary():
    prefs = pairs_from_orders(["ABCD", "BADC", "ABDC"])
    summary = summarize_preferences(prefs)
    for method in METHODS:
        assert order(summary, "sgnLP", method=method).equals(order(prefs, "sgnLP", method=method))


def test_ordered_pair_tables_count_once():
    prefs = pairs_from_orders(["ABCD", "BADC", "ABDC"])
    reverse = prefs.select(
        "query",
        system_a="system_b",
        system_b="system_a",
        sgnLP=-pl.col("sgnLP"),
    )
    both = pl.concat([prefs, reverse])
    for method in METHODS:
        expected = order(prefs, "sgnLP", method=method)
        assert order(both, "sgnLP", method=method).equals(expected)
        assert order(both.lazy(), "sgnLP", method=method).collect().equals(expected)


# --- errors -----------------------------------------------------------------------------------


def test_errors():
    metrics = metrics_from_orders(["AB"])
    with pytest.raises(ValueError, match="method"):
        order(metrics, "metric", method="kemeny")
    with pytest.raises(ValueError, match="damping"):
        order(metrics, "metric", damping=1.5)
    with pytest.raises(SchemaError, match="metric_x"):
        order(metrics, "metric_x")
    with pytest.raises(SchemaError, match="pair table"):
        order(metrics.drop("query"), "metric")
    with pytest.raises(InputError, match="several rows"):
        order(pl.concat([metrics, metrics]), "metric")
    prefs = pairs_from_orders(["AB"])
    with pytest.raises(UnknownMeasureError, match="sgnLP"):
        order(prefs, "ndcg")
    with pytest.raises(SchemaError, match="rrLP"):
        summarize_preferences(prefs, measures="rrLP")


def test_empty_tables():
    metrics = metrics_from_orders(["AB"]).clear()
    assert order(metrics, "metric").schema == pl.Schema(
        {"system": pl.String, "rank": pl.UInt32, "score": pl.Float64}
    )


# --- toy fixture: pref_aggregate's orderings -----------------------------------------------------


def toy_preferences() -> pl.DataFrame:
    """The per-query preferences pref_eval wrote for the toy track (tests/data/README.md)."""
    lines = [json.loads(line) for line in (TOY / "pref_eval.jsonl").read_text().splitlines()]
    rows = [line for line in lines if line.get("type") == "preference"]
    return pl.DataFrame(
        {
            "query": [row["qid"] for row in rows],
            "system_a": [row["runi"] for row in rows],
            "system_b": [row["runj"] for row in rows],
            "sgnLP": [row["lexiprecision"] for row in rows],
            "rrLP": [row["rrlexiprecision"] for row in rows],
            "sgnLR": [row["lexirecall"] for row in rows],
        }
    )


def toy_metrics() -> pl.DataFrame:
    lines = [json.loads(line) for line in (TOY / "pref_eval.jsonl").read_text().splitlines()]
    rows = [line for line in lines if line.get("type") == "metric"]
    return pl.DataFrame(
        {
            "system": [row["run"] for row in rows],
            "query": [row["qid"] for row in rows],
            "rr": [row["rr"] for row in rows],
            "ap": [row["ap"] for row in rows],
        }
    )


def pref_aggregate() -> dict:
    return json.loads((TOY / "pref_aggregate.jsonl").read_text())


@pytest.mark.parametrize(
    ("measure", "theirs"),
    [("sgnLP", "lexiprecision"), ("rrLP", "rrlexiprecision"), ("sgnLR", "lexirecall")],
)
def test_toy_borda_matches_pref_aggregate(measure, theirs):
    got = order(toy_preferences(), measure, method="borda")
    assert ranking(got) == pref_aggregate()[theirs]["borda"]


@pytest.mark.parametrize(
    ("measure", "theirs"), [("sgnLP", "lexiprecision"), ("sgnLR", "lexirecall")]
)
def test_toy_mc4_agrees_with_pref_aggregate_on_sign_orders(measure, theirs):
    # pref_aggregate's MC4 (ten undamped steps) is a point of comparison, not ground truth;
    # on this fixture the sign-based orders agree. (For rrlexiprecision its per-query orders
    # come from summed rrLP values rather than signs, so they may differ.)
    got = order(toy_preferences(), measure, method="mc4")
    assert ranking(got) == pref_aggregate()[theirs]["mc4"]


@pytest.mark.parametrize("metric", ["rr", "ap"])
def test_toy_mean_matches_pref_aggregate(metric):
    got = order(toy_metrics(), metric, method="mean")
    assert ranking(got) == pref_aggregate()[metric]["mean"]


def test_costs_are_ordered_from_the_smallest_value():
    # ASL is a cost (ASL paper §3.1: lower is better): A's ASL is smaller on both queries.
    metrics = pl.DataFrame(
        {"system": ["A", "B", "A", "B"], "query": [1, 1, 2, 2], "ASL": [1.0, 3.0, 2.0, 5.0]}
    )
    mean = order(metrics, "ASL", method="mean")
    assert mean["system"].to_list() == ["A", "B"]
    assert mean["score"].to_list() == [1.5, 4.0]  # the mean cost itself
    assert order(metrics, "ASL", method="mc4")["system"].to_list() == ["A", "B"]
    # The registry decides by default; the caller can say otherwise.
    flipped = order(metrics, "ASL", method="mean", lower_is_better=False)
    assert flipped["system"].to_list() == ["B", "A"]
    renamed = metrics.rename({"ASL": "cost"})
    assert order(renamed, "cost", method="mean")["system"].to_list() == ["B", "A"]
    assert order(renamed, "cost", method="mean", lower_is_better=True)["system"][0] == "A"


# A null never wins an ordering ----------------------------------------------------------

NULLS = pl.DataFrame(
    {"system": list("AABBCC"), "query": [1, 2] * 3, "SL3": [5.0, None, 10.0, 12.0, None, None]}
)
# SL3 is a cost. A: 5 then no value; B: 10, 12; C: no value at all.


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # B alone has a value on every query it answered: the only mean; A and C rank last.
        ("mean", [("B", 1, 11.0), ("A", 2, None), ("C", 3, None)]),
        # A null loses to a value and ties a null. Query 1: A beats B and C, B beats C
        # (A 2, B 1); query 2: B beats A and C, which tie (B 2, A 0.5, C 0.5).
        ("borda", [("B", 1, 3.0), ("A", 2, 2.5), ("C", 3, 0.5)]),
        # A and B split their queries (0.5), each wins every decided query against C (1).
        ("winrate", [("A", 1, 0.75), ("B", 2, 0.75), ("C", 3, 0.0)]),
    ],
)
def test_null_values_rank_last(method, expected):
    with pytest.warns(lf.LexiframeWarning, match=r"'A', 'C'.*Pass the corpus size n="):
        got = order(NULLS, "SL3", method=method)
    assert got.rows() == expected


def test_mc4_puts_the_system_without_values_last():
    with pytest.warns(lf.LexiframeWarning):
        got = order(NULLS, "SL3", method="mc4")
    assert got["system"].to_list()[-1] == "C"


def test_an_ordering_of_nothing_but_nulls_is_refused():
    none = NULLS.with_columns(SL3=pl.lit(None, dtype=pl.Float64))
    with pytest.raises(lf.InputError, match=r"no system has a value of 'SL3'.*n="):
        order(none, "SL3", method="mean")


def test_a_mean_ordering_where_every_system_lacks_a_value_is_refused():
    # Each system is null on a query another answers: no mean, so no order to print (the
    # ranks would come from the tie-break alone); the comparisons of MC4 still order them.
    lacking = NULLS.filter(pl.col("system") != "C").with_columns(
        SL3=pl.when(pl.col("system") == "B").then(pl.col("SL3").reverse()).otherwise("SL3")
    )  # A: 5, no value; B: no value, 10
    with pytest.raises(lf.InputError, match=r"no system has a mean of 'SL3'.*mc4.*n="):
        order(lacking, "SL3", method="mean")
    with pytest.warns(lf.LexiframeWarning):
        assert order(lacking, "SL3", method="mc4").height == 2


def test_sl3_without_n_ranks_the_systems_that_missed_a_relevant_document_last():
    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        per_query = lf.evaluate(track.run, track.qrels, ["SL3"])
        # every demo system misses a relevant document somewhere: no mean to order by
        with pytest.raises(lf.InputError, match="no system has a mean"):
            order(per_query, "SL3", method="mean")
        # on the queries where sys007 found every relevant document, it has a mean
        found = per_query.filter((pl.col("system") == "sys007") & pl.col("SL3").is_not_null())
        per_query = per_query.filter(pl.col("query").is_in(found["query"].implode()))
        ordering = order(per_query, "SL3", method="mean")
    complete = per_query.group_by("system").agg(pl.col("SL3").is_not_null().all().alias("ok"))
    ok = dict(complete.iter_rows())
    ranked = ordering["system"].to_list()
    # Every system with a value on every query ranks above every system missing one.
    flags = [ok[system] for system in ranked]
    assert any(flags) and not all(flags)
    assert flags == sorted(flags, reverse=True)
    assert ordering.filter(pl.col("score").is_null())["system"].to_list() == [
        s for s in ranked if not ok[s]
    ]


@pytest.mark.parametrize("lazy", [False, True])
def test_nan_preferences_are_refused_not_counted_as_wins(lazy):
    # issue 28: NaN > 0 in Polars, so NaN preferences were 2 wins and MC4 ranked x first
    prefs = pl.DataFrame(
        {"query": ["1", "2", "3"], "system_a": ["x"] * 3, "system_b": ["y"] * 3,
         "rrLP": [float("nan"), float("nan"), -0.5]}
    )  # fmt: skip
    frame = prefs.lazy() if lazy else prefs
    message = r"'rrLP'.*NaN on 2 queries of the pair system_a='x' system_b='y'.*fill_nan"
    for call in (lambda: lf.summarize(frame), lambda: lf.order(frame, "rrLP")):
        with pytest.raises(InputError, match=message):
            result = call()
            if lazy:
                result.collect()
    # made missing, they are neither wins nor in the mean: y is preferred on query 3
    missing = lf.summarize(prefs.with_columns(pl.col("rrLP").fill_nan(None)))
    assert missing.select("rrLP", "rrLP_wins", "rrLP_losses", "rrLP_ties").row(0) == (-0.5, 0, 1, 0)
    ordering = lf.order(prefs.with_columns(pl.col("rrLP").fill_nan(None)), "rrLP")
    assert ordering["system"].to_list() == ["y", "x"]
