"""Ties and agreement, checked against plain-Python loops over ranking pairs."""

from __future__ import annotations

import itertools
import warnings

import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import lexiframe as lf
from lexiframe.errors import DroppedQueriesWarning, SchemaError
from lexiframe.io import read_qrels, read_run
from lexiframe.stats import (
    first_difference_ecdf,
    kendall_tau,
    metric_pairs,
    sign_agreement,
    system_scores,
    tie_fraction,
    tie_fraction_by_level,
)

TOY = DATA / "toy"


@pytest.fixture(scope="module")
def toy_positions() -> pl.DataFrame:
    run = read_run(sorted((TOY / "runs").iterdir()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        return lf.positions(run, read_qrels(TOY / "qrels.txt"))


def _rankings(positions: pl.DataFrame) -> dict[str, dict[str, tuple[list[int], int]]]:
    out: dict[str, dict[str, tuple[list[int], int]]] = {}
    for row in positions.iter_rows(named=True):
        out.setdefault(row["query"], {})[row["system"]] = (list(row["positions"]), row["n_rel"])
    return out


def _level(p: list[int], i: int) -> float:
    return p[i - 1] if i <= len(p) else float("inf")


def test_tie_fraction_of_metrics_matches_pair_loops(toy_positions):
    metrics = lf.measures(toy_positions, ["RR", "AP", "P@10"])
    out = tie_fraction(metrics)
    assert out["measure"].to_list() == ["RR", "AP", "P@10"]
    for name in ("RR", "AP", "P@10"):
        pairs = ties = 0
        for _, group in metrics.group_by("query"):
            values = group[name].to_list()
            for a, b in itertools.combinations(values, 2):
                pairs += 1
                ties += a == b
        row = out.filter(pl.col("measure") == name).row(0, named=True)
        assert (row["n_pairs"], row["n_ties"]) == (pairs, ties)
    # the same counts from the pair table of differences
    assert tie_fraction(metric_pairs(metrics)).equals(out)


def test_lexiprecision_ties_far_less_than_rr(toy_positions):
    prefs = lf.preferences(toy_positions, ["sgnLP", "rrLP"])
    rr = tie_fraction(metric_pairs(lf.measures(toy_positions, ["RR"])))
    lp = tie_fraction(prefs)
    assert lp["measure"].to_list() == ["sgnLP", "rrLP"]
    assert lp["tie_fraction"][0] == lp["tie_fraction"][1]  # sgnLP = sign(rrLP)
    assert lp["tie_fraction"][0] < rr["tie_fraction"][0]  # lexiprecision Table 2


def test_tie_fraction_by_level_matches_loops(toy_positions):
    out = tie_fraction_by_level(toy_positions, max_level=6)
    rankings = _rankings(toy_positions)
    for level in range(1, 7):
        pairs = ties = 0
        for systems in rankings.values():
            for (pa, m), (pb, _) in itertools.combinations(systems.values(), 2):
                if m < level:
                    continue
                pairs += 1
                ties += _level(pa, level) == _level(pb, level)
        row = out.filter(pl.col("level") == level).row(0, named=True)
        assert (row["n_pairs"], row["n_ties"]) == (pairs, ties), level


def test_first_difference_ecdf_matches_loops(toy_positions):
    out = first_difference_ecdf(toy_positions)
    counts: dict[int, int] = {}
    tied = 0
    for systems in _rankings(toy_positions).values():
        for (pa, _), (pb, _) in itertools.combinations(systems.values(), 2):
            if pa == pb:
                tied += 1
                continue
            level = next(
                i for i in range(1, max(len(pa), len(pb)) + 1) if _level(pa, i) != _level(pb, i)
            )
            counts[level] = counts.get(level, 0) + 1
    total = sum(counts.values())
    assert out["level"].to_list() == sorted(counts)
    running = 0
    for row in out.iter_rows(named=True):
        running += counts[row["level"]]
        assert row["n_pairs"] == counts[row["level"]]
        assert row["ecdf"] == pytest.approx(running / total)
        assert row["n_tied"] == tied
    assert out["ecdf"][-1] == pytest.approx(1.0)


def test_by_groups_are_separate(toy_positions):
    two = pl.concat([toy_positions.with_columns(track=pl.lit(t)) for t in ("a", "b")])
    per_track = tie_fraction_by_level(two, max_level=3, by="track")
    single = tie_fraction_by_level(toy_positions, max_level=3)
    assert per_track.filter(pl.col("track") == "b").drop("track").equals(single)
    ecdf = first_difference_ecdf(two, by="track")
    assert (
        ecdf.filter(pl.col("track") == "a")
        .drop("track")
        .equals(first_difference_ecdf(toy_positions))
    )


def test_sign_agreement_matches_loops(toy_positions):
    prefs = lf.preferences(toy_positions, ["sgnLP", "sgnLR"])
    diffs = metric_pairs(lf.measures(toy_positions, ["RR", "AP"]))
    table = prefs.join(diffs, on=["query", "system_a", "system_b"])
    out = sign_agreement(table, "AP", ["sgnLR", "sgnLP", "RR"])
    sign = lambda x: (x > 0) - (x < 0)  # noqa: E731
    for name in ("sgnLR", "sgnLP", "RR"):
        decided = [r for r in table.iter_rows(named=True) if r["AP"] != 0]
        agree = sum(sign(r[name]) == sign(r["AP"]) for r in decided)
        row = out.filter(pl.col("measure") == name).row(0, named=True)
        assert (row["n_pairs"], row["n_agree"]) == (len(decided), agree)
    # docs/definitions.md §3: whenever RR differs, sgnLP agrees with it
    assert sign_agreement(table, "RR", ["sgnLP"])["agreement"].item() == 1.0
    # a metrics table is turned into differences first
    metrics = lf.measures(toy_positions, ["RR", "AP"])
    assert sign_agreement(metrics, "AP", ["RR"]).equals(sign_agreement(diffs, "AP", ["RR"]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=1, max_size=40),
    st.lists(st.integers(-3, 3), min_size=40, max_size=40),
)
def test_agreement_and_tie_invariants(values, other):
    n = len(values)
    table = pl.DataFrame(
        {
            "query": [str(i) for i in range(n)],
            "system_a": ["a"] * n,
            "system_b": ["b"] * n,
            "x": [float(v) for v in values],
            "y": [float(v) for v in other[:n]],
        }
    )
    ties = tie_fraction(table)
    assert ((ties["tie_fraction"] >= 0) & (ties["tie_fraction"] <= 1)).all()
    assert ties["n_ties"][0] == sum(v == 0 for v in values)
    self_agreement = sign_agreement(table, "x", ["x"])
    if any(values):
        assert self_agreement["agreement"].item() == 1.0
    both = sign_agreement(table, "x", ["y"])["agreement"].item()
    assert both is None or 0.0 <= both <= 1.0


def test_kendall_tau_matches_scipy(toy_positions):
    metrics = lf.measures(toy_positions, ["RR", "AP", "nDCG"])
    prefs = lf.preferences(toy_positions, ["sgnLR"])
    scores = system_scores(
        {
            "MC4": lf.order(prefs, "sgnLR"),
            "AP": lf.order(metrics, "AP", method="mean"),
            "RR": lf.order(metrics, "RR", method="mean"),
        }
    )
    assert scores["system"].to_list() == sorted(scores["system"].to_list())
    out = kendall_tau(scores, "MC4", ["AP", "RR"])
    assert out["measure"].to_list() == ["AP", "RR"]
    for row in out.iter_rows(named=True):
        expected = stats.kendalltau(scores["MC4"], scores[row["measure"]], variant="b")
        assert row["tau"] == pytest.approx(expected.statistic)
        assert row["p_value"] == pytest.approx(expected.pvalue)
        assert row["n_systems"] == 8
    # ties in the scores are handled as τ-b does
    tied = pl.DataFrame({"system": list("abcde"), "x": [1, 2, 3, 4, 5], "y": [1, 1, 2, 2, 3]})
    expected = stats.kendalltau([1, 2, 3, 4, 5], [1, 1, 2, 2, 3], variant="b").statistic
    assert kendall_tau(tied, "x", "y")["tau"].item() == pytest.approx(expected)
    constant = tied.with_columns(y=pl.lit(1))
    assert kendall_tau(constant, "x", "y")["tau"].item() is None


def test_errors_name_the_column(toy_positions):
    with pytest.raises(SchemaError, match="'positions'"):
        tie_fraction_by_level(toy_positions.drop("positions"))
    metrics = lf.measures(toy_positions, ["RR"])
    with pytest.raises(SchemaError, match="'AP'"):
        tie_fraction(metrics, ["AP"])
