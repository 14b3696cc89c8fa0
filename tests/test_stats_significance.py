"""Significance tests, corrections and discriminative power, checked against scipy called
directly and against sums written out by hand."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import lexiframe as lf
from lexiframe.errors import DroppedQueriesWarning, InputError, SchemaError
from lexiframe.io import read_qrels, read_run
from lexiframe.stats import (
    adjust_p_values,
    discriminative_power,
    randomized_tukey_hsd,
    sign_test,
    significance,
    tukey_hsd,
)

TOY = DATA / "toy"


@pytest.fixture(scope="module")
def toy_positions() -> pl.DataFrame:
    run = read_run(sorted((TOY / "runs").iterdir()))
    qrels = read_qrels(TOY / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)  # queries 888 and 999
        return lf.positions(run, qrels)


@pytest.fixture(scope="module")
def toy_metrics(toy_positions) -> pl.DataFrame:
    return lf.measures(toy_positions, ["RR", "AP"])


@pytest.fixture(scope="module")
def toy_prefs(toy_positions) -> pl.DataFrame:
    return lf.preferences(toy_positions, ["sgnLP", "rrLP"])


def _matrix(metrics: pl.DataFrame, measure: str) -> tuple[list[str], np.ndarray]:
    wide = metrics.pivot(on="query", index="system", values=measure).sort("system")
    queries = sorted(c for c in wide.columns if c != "system")
    return wide["system"].to_list(), wide.select(queries).to_numpy()


# --- elementary tests against scipy -------------------------------------------------------


def test_sign_test_matches_binomtest():
    wins, losses = np.meshgrid(np.arange(0, 15), np.arange(0, 15))
    ours = sign_test(wins.ravel(), losses.ravel())
    for w, lost, p in zip(wins.ravel(), losses.ravel(), ours, strict=True):
        expected = 1.0 if w + lost == 0 else stats.binomtest(int(w), int(w + lost)).pvalue
        assert p == pytest.approx(expected, rel=1e-12, abs=1e-15), (w, lost)


def test_sign_and_t_tests_match_scipy_on_toy_pairs(toy_prefs):
    result = {
        name: significance(toy_prefs, name, correction="none").sort("system_a", "system_b")
        for name in ("sgnLP", "rrLP")
    }
    assert set(result["sgnLP"]["test"]) == {"sign"}
    checked = 0
    for system_a, system_b in [("sys000", "sys001"), ("sys002", "sys005"), ("sys003", "sys007")]:
        rows = toy_prefs.filter((pl.col("system_a") == system_a) & (pl.col("system_b") == system_b))
        sgn = rows["sgnLP"].to_numpy()
        wins, losses = int((sgn > 0).sum()), int((sgn < 0).sum())
        expected = stats.binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
        ours = result["sgnLP"].filter(
            (pl.col("system_a") == system_a) & (pl.col("system_b") == system_b)
        )
        assert ours["p_value"].item() == pytest.approx(expected, rel=1e-12)
        rr = rows["rrLP"].to_numpy()
        expected_t = stats.ttest_1samp(rr, 0.0)
        ours = result["rrLP"].filter(
            (pl.col("system_a") == system_a) & (pl.col("system_b") == system_b)
        )
        assert ours["test"].item() == "t"
        assert ours["p_value"].item() == pytest.approx(expected_t.pvalue, rel=1e-9)
        assert ours["statistic"].item() == pytest.approx(expected_t.statistic, rel=1e-9)
        checked += 1
    assert checked == 3


def test_paired_t_matches_ttest_rel(toy_metrics):
    result = significance(toy_metrics, "AP", correction="none")
    assert set(result["test"]) == {"paired_t"} and set(result["correction"]) == {"none"}
    systems, x = _matrix(toy_metrics, "AP")
    batch = stats.ttest_rel(x[:, None, :], x[None, :, :], axis=2)  # all pairs at once
    for row in result.iter_rows(named=True):
        a, b = systems.index(row["system_a"]), systems.index(row["system_b"])
        assert row["p_value"] == pytest.approx(batch.pvalue[a, b], rel=1e-9)
        assert row["statistic"] == pytest.approx(batch.statistic[a, b], rel=1e-9)
        assert row["mean"] == pytest.approx(x[a].mean() - x[b].mean())


def test_t_test_zero_and_constant_rules():
    prefs = pl.DataFrame(
        {
            "query": [str(q) for q in range(5)] * 3,
            "system_a": ["a"] * 15,
            "system_b": ["b"] * 5 + ["c"] * 5 + ["d"] * 5,
            "rrLP": [0.0] * 5 + [0.5] * 5 + [0.5, 0.2, -0.1, 0.4, 0.3],
        }
    )
    out = significance(prefs, "rrLP", correction="none").sort("system_b")
    assert out["test"].to_list() == ["t", "sign", "t"]
    assert out["p_value"][0] == 1.0  # all zero
    assert out["p_value"][1] == pytest.approx(stats.binomtest(5, 5).pvalue)  # constant: sign
    expected = stats.ttest_1samp([0.5, 0.2, -0.1, 0.4, 0.3], 0.0).pvalue
    assert out["p_value"][2] == pytest.approx(expected, rel=1e-10)


def test_sign_test_without_untied_queries_is_one():
    prefs = pl.DataFrame(
        {"query": ["1", "2"], "system_a": ["a"] * 2, "system_b": ["b"] * 2, "sgnLR": [0, 0]},
        schema_overrides={"sgnLR": pl.Int8},
    )
    assert significance(prefs, "sgnLR")["p_value"].item() == 1.0


# --- corrections --------------------------------------------------------------------------


def test_holm_and_bonferroni_by_hand():
    p = [0.01, 0.04, 0.03, 0.005, 0.2]
    # m = 5; sorted: 0.005·5 = 0.025, 0.01·4 = 0.04, 0.03·3 = 0.09, 0.04·2 = 0.08 → 0.09
    # (running max), 0.2·1 = 0.2
    assert adjust_p_values(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.2])
    assert adjust_p_values(p, "bonferroni") == pytest.approx([0.05, 0.2, 0.15, 0.025, 1.0])
    assert adjust_p_values(p, "none") == pytest.approx(p)
    # two families adjust separately
    grouped = adjust_p_values([0.01, 0.02, 0.01, 0.3], "holm", groups=["x", "x", "y", "y"])
    assert grouped == pytest.approx([0.02, 0.02, 0.02, 0.3])
    with pytest.raises(InputError, match="unknown correction"):
        adjust_p_values(p, "fdr")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30),
    st.lists(st.integers(0, 3), min_size=30, max_size=30),
)
def test_holm_between_raw_and_bonferroni(p, labels):
    groups = labels[: len(p)]
    holm = adjust_p_values(p, "holm", groups=groups)
    bonferroni = adjust_p_values(p, "bonferroni", groups=groups)
    raw = np.asarray(p)
    assert (holm >= raw - 1e-15).all() and (holm <= bonferroni + 1e-15).all()
    assert (holm <= 1.0).all()
    order = np.argsort(raw, kind="stable")
    for g in set(groups):  # monotone in the raw p-values within a family
        members = [i for i in order if groups[i] == g]
        assert (np.diff(holm[members]) >= -1e-15).all()


# --- Tukey's HSD ------------------------------------------------------------------------------


def _hsd_by_hand(x: list[list[float]]) -> dict[tuple[int, int], tuple[float, float]]:
    """Two-way ANOVA without replication, written out with loops."""
    s, q = len(x), len(x[0])
    row_mean = [sum(row) / q for row in x]
    col_mean = [sum(x[i][j] for i in range(s)) / s for j in range(q)]
    grand = sum(sum(row) for row in x) / (s * q)
    sse = 0.0
    for i in range(s):
        for j in range(q):
            residual = x[i][j] - row_mean[i] - col_mean[j] + grand
            sse += residual * residual
    df = (s - 1) * (q - 1)
    ve = sse / df
    out = {}
    for a in range(s):
        for b in range(a + 1, s):
            q_stat = abs(row_mean[a] - row_mean[b]) / (ve / q) ** 0.5
            out[a, b] = (q_stat, stats.studentized_range.sf(q_stat, s, df))
    return out


def test_tukey_hsd_hand_example():
    x = [
        [0.62, 0.40, 0.55, 0.71, 0.30],
        [0.50, 0.35, 0.41, 0.66, 0.22],
        [0.45, 0.20, 0.30, 0.50, 0.10],
        [0.60, 0.42, 0.50, 0.70, 0.33],
    ]
    scores = pl.DataFrame(
        {
            "system": [f"s{i}" for i in range(4) for _ in range(5)],
            "query": [f"q{j}" for _ in range(4) for j in range(5)],
            "AP": [v for row in x for v in row],
        }
    )
    out = tukey_hsd(scores, "AP")
    assert set(out["test"]) == {"hsd_blocked"} and set(out["correction"]) == {"none"}
    expected = _hsd_by_hand(x)
    assert out.height == len(expected)
    for row in out.iter_rows(named=True):
        a, b = int(row["system_a"][1]), int(row["system_b"][1])
        assert row["statistic"] == pytest.approx(expected[a, b][0], rel=1e-12)
        assert row["p_value"] == pytest.approx(expected[a, b][1], rel=1e-9)
        assert row["p_adjusted"] == row["p_value"]
    # by hand, on one pair: s0 vs s2 differ by 0.186 with a small residual variance
    assert expected[0, 2][1] < 0.001


def test_tukey_hsd_is_topic_blocked_unlike_scipy_one_way(toy_metrics):
    systems, x = _matrix(toy_metrics, "AP")
    ours = tukey_hsd(toy_metrics, "AP")
    one_way = stats.tukey_hsd(*x)  # one-way: query variance stays in the error term
    one_way_p = np.array(
        [
            one_way.pvalue[systems.index(a), systems.index(b)]
            for a, b in ours.select("system_a", "system_b").rows()
        ]
    )
    assert not np.allclose(ours["p_value"].to_numpy(), one_way_p, atol=1e-3)
    # blocking removes the query effect: more pairs are separated than one way
    assert (ours["p_value"].to_numpy() <= one_way_p + 1e-12).sum() > len(one_way_p) // 2


def test_tukey_hsd_by_groups_and_missing_cells(toy_metrics):
    doubled = pl.concat([toy_metrics.with_columns(track=pl.lit(t)) for t in ("t1", "t2")])
    out = tukey_hsd(doubled, "AP", by="track")
    single = tukey_hsd(toy_metrics, "AP")
    assert out.columns[0] == "track" and out.height == 2 * single.height
    assert out.filter(pl.col("track") == "t2").drop("track").equals(single)
    with pytest.raises(InputError, match="every system scored on every query"):
        tukey_hsd(toy_metrics.slice(1), "AP")
    prefs = pl.DataFrame({"query": ["1"], "system_a": ["a"], "system_b": ["b"], "rrLP": [0.1]})
    with pytest.raises(InputError, match="per-query metrics"):
        significance(prefs, "rrLP", test="hsd")


def test_randomized_hsd_same_seed_same_answer(toy_metrics):
    first = randomized_tukey_hsd(toy_metrics, "AP", seed=5, n_replicates=300)
    again = randomized_tukey_hsd(toy_metrics, "AP", seed=5, n_replicates=300)
    other = randomized_tukey_hsd(toy_metrics, "AP", seed=6, n_replicates=300)
    assert first.equals(again)
    assert not first["p_value"].equals(other["p_value"])
    assert set(first["test"]) == {"randomized_hsd_blocked"}
    generator = randomized_tukey_hsd(
        toy_metrics, "AP", seed=np.random.default_rng(5), n_replicates=300
    )
    assert generator.equals(first)
    # the randomised test orders the pairs much like the analytic HSD
    analytic = tukey_hsd(toy_metrics, "AP")["p_value"].to_numpy()
    assert stats.spearmanr(first["p_value"].to_numpy(), analytic).statistic > 0.8
    with pytest.raises(InputError, match="seed"):
        significance(toy_metrics, "AP", test="randomized_hsd")


def test_randomized_hsd_exact_on_two_systems():
    # 2 systems, 3 queries: 8 equally likely relabellings; the observed split (all of x above
    # y) is reached by the identity and the full swap: p → 2/8
    scores = pl.DataFrame(
        {"system": list("xxxyyy"), "query": list("123") * 2, "AP": [0.9, 0.8, 0.7, 0.1, 0.2, 0.3]}
    )
    p = randomized_tukey_hsd(scores, "AP", seed=0, n_replicates=20_000)["p_value"].item()
    assert p == pytest.approx(0.25, abs=0.015)


# --- discriminative power --------------------------------------------------------------------


def _holm_by_hand(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def test_discriminative_power_on_toy(toy_prefs, toy_metrics):
    power = pl.concat(
        [
            discriminative_power(toy_prefs, ["sgnLP", "rrLP"]),
            discriminative_power(toy_metrics, ["RR", "AP"]),
        ]
    )
    assert power.columns == [
        "measure",
        "test",
        "correction",
        "alpha",
        "n_pairs",
        "n_significant",
        "discriminative_power",
    ]
    by_measure = {row["measure"]: row for row in power.iter_rows(named=True)}
    assert {m: by_measure[m]["test"] for m in by_measure} == {
        "sgnLP": "sign",
        "rrLP": "t",
        "RR": "paired_t",
        "AP": "paired_t",
    }
    assert set(power["correction"]) == {"holm"} and set(power["alpha"]) == {0.05}
    assert set(power["n_pairs"]) == {28}  # 8 systems

    # independent computation: scipy per pair, Holm written out
    pairs = toy_prefs.select("system_a", "system_b").unique().sort("system_a", "system_b").rows()
    systems, rr = _matrix(toy_metrics, "RR")
    _, ap = _matrix(toy_metrics, "AP")
    raw: dict[str, list[float]] = {"sgnLP": [], "rrLP": [], "RR": [], "AP": []}
    for a, b in pairs:
        rows = toy_prefs.filter((pl.col("system_a") == a) & (pl.col("system_b") == b))
        sgn = rows["sgnLP"].to_numpy()
        w, lost = int((sgn > 0).sum()), int((sgn < 0).sum())
        raw["sgnLP"].append(stats.binomtest(w, w + lost).pvalue if w + lost else 1.0)
        values = rows["rrLP"].to_numpy()
        if np.all(values == 0):
            raw["rrLP"].append(1.0)
        elif np.all(values == values[0]):
            w, lost = int((values > 0).sum()), int((values < 0).sum())
            raw["rrLP"].append(stats.binomtest(w, w + lost).pvalue)
        else:
            raw["rrLP"].append(stats.ttest_1samp(values, 0.0).pvalue)
        i, j = systems.index(a), systems.index(b)
        for name, matrix in (("RR", rr), ("AP", ap)):
            difference = matrix[i] - matrix[j]
            raw[name].append(
                1.0 if np.all(difference == 0) else stats.ttest_rel(matrix[i], matrix[j]).pvalue
            )
    for name, p in raw.items():
        significant = sum(q < 0.05 for q in _holm_by_hand(p))
        assert by_measure[name]["n_significant"] == significant, name
        assert by_measure[name]["discriminative_power"] == pytest.approx(significant / 28)
    # the lexiprecision paper's finding holds on the toy track: sgnLP separates more pairs
    assert by_measure["sgnLP"]["n_significant"] >= by_measure["RR"]["n_significant"]


def test_discriminative_power_with_hsd_and_bonferroni(toy_metrics):
    hsd = discriminative_power(toy_metrics, ["AP"], test="hsd")
    assert hsd.select("test", "correction").row(0) == ("hsd_blocked", "none")
    expected = (tukey_hsd(toy_metrics, "AP")["p_value"] < 0.05).sum()
    assert hsd["n_significant"].item() == expected
    bonf = discriminative_power(toy_metrics, ["AP"], correction="bonferroni", alpha=0.1)
    assert bonf.select("correction", "alpha").row(0) == ("bonferroni", 0.1)
    raw = significance(toy_metrics, "AP", correction="none")["p_value"].to_numpy()
    assert bonf["n_significant"].item() == int((np.minimum(1, raw * 28) < 0.1).sum())


def test_bad_input_names_the_problem(toy_metrics):
    with pytest.raises(SchemaError, match="'nDCG'"):
        significance(toy_metrics, "nDCG")
    with pytest.raises(InputError, match=r"unknown test 'wilcox'.*did you mean 'wilcoxon'"):
        significance(toy_metrics, "AP", test="wilcox")  # type: ignore[arg-type]
    duplicated = pl.concat([toy_metrics, toy_metrics.head(1)])
    with pytest.raises(InputError, match="several rows"):
        significance(duplicated, "AP")
    with_null = toy_metrics.with_columns(
        AP=pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("AP"))
    )
    with pytest.raises(InputError, match=r"null or NaN.*system="):
        significance(with_null, "AP")
    with pytest.raises(InputError, match="alpha"):
        discriminative_power(toy_metrics, ["AP"], alpha=2.0)


def test_lazy_input_gives_the_same_result(toy_metrics):
    assert significance(toy_metrics.lazy(), "RR").equals(significance(toy_metrics, "RR"))


def test_studentized_range_sf_equals_scipy():
    # The shared-quadrature survival function behind tukey_hsd against SciPy's own, over
    # few and many means, few and many degrees of freedom, the body and the far tail.
    import warnings

    from scipy.integrate import IntegrationWarning

    from lexiframe.stats._studentized import studentized_range_sf

    q = np.array([0.0, 0.05, 0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 9.0, 20.0])
    for k in (2, 3, 10, 110):
        for df in (1, 3, 20, 300, 5000):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IntegrationWarning)
                expected = stats.studentized_range.sf(q, k, df)
            got = studentized_range_sf(q, k, df)
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9, err_msg=f"{k=} {df=}")
    edges = studentized_range_sf(np.array([np.inf, np.nan, -1.0]), 3, 10)
    assert edges[0] == 0.0 and np.isnan(edges[1]) and edges[2] == 1.0
