"""Fisher's randomisation test, the paired bootstrap test and interval, the one-way HSD and
the effect sizes, checked against the exact permutation distribution written out with
itertools, SciPy's permutation_test / bootstrap / tukey_hsd, and per-replicate loops."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import lexiframe as lf
from lexiframe import intervals
from lexiframe.errors import DroppedQueriesWarning, InputError
from lexiframe.io import read_qrels, read_run
from lexiframe.stats import discriminative_power, metric_pairs, significance, tukey_hsd
from lexiframe.stats.resampling import bootstrap_test, randomization_test

TOY = DATA / "toy"


@pytest.fixture(scope="module")
def toy_positions() -> pl.DataFrame:
    run = read_run(sorted((TOY / "runs").iterdir()))
    qrels = read_qrels(TOY / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        return lf.positions(run, qrels)


@pytest.fixture(scope="module")
def toy_metrics(toy_positions) -> pl.DataFrame:
    return lf.measures(toy_positions, ["AP"])


def _exact_fisher(d: np.ndarray) -> float:
    """The exact two-sided p-value by listing every sign pattern."""
    observed = abs(d.sum())
    patterns = list(itertools.product((1.0, -1.0), repeat=len(d)))
    reached = sum(abs(np.dot(signs, d)) >= observed - 1e-12 for signs in patterns)
    return reached / len(patterns)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


# --- Fisher's randomisation test ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from([-1.0, -0.5, -0.25, 0.0, 0.125, 0.5, 1.0]), min_size=8, max_size=8
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fisher_exact_is_the_permutation_distribution(rows):
    d = np.array(rows)
    ours = randomization_test(d, n_replicates=256)  # 2^8 patterns: exact, no seed
    assert ours.tolist() == [_exact_fisher(row) for row in d]


def test_fisher_exact_equals_scipy_permutation_test():
    rng = np.random.default_rng(7)
    d = rng.normal(0.05, 0.3, (6, 11))
    ours = randomization_test(d, n_replicates=2**11)
    for row, p in zip(d, ours, strict=True):
        theirs = stats.permutation_test(
            (row,), _mean, permutation_type="samples", n_resamples=2**11, vectorized=True
        ).pvalue
        assert p == pytest.approx(theirs, rel=1e-12)


def test_fisher_random_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    d = rng.normal(0.04, 0.3, (8, 50))
    n = 4000
    ours = randomization_test(d, n_replicates=n, seed=11)
    for row, p in zip(d, ours, strict=True):
        theirs = stats.permutation_test(
            (row,), _mean, permutation_type="samples", n_resamples=n, vectorized=True, rng=11
        ).pvalue
        error = np.sqrt(max(p * (1 - p), 1e-3) / n)
        assert abs(p - theirs) < 5 * error + 2 / n, (p, theirs)


def test_fisher_blocks_and_seeds(monkeypatch):
    d = np.random.default_rng(0).normal(0, 0.2, (30, 40))
    whole = randomization_test(d, n_replicates=500, seed=4)
    assert np.array_equal(whole, randomization_test(d, n_replicates=500, seed=4))
    assert not np.array_equal(whole, randomization_test(d, n_replicates=500, seed=5))
    monkeypatch.setattr(intervals, "BLOCK", 97)  # many small blocks of replicates
    assert np.array_equal(whole, randomization_test(d, n_replicates=500, seed=4))
    # the same rows alone see the same draws
    assert np.array_equal(whole[:1], randomization_test(d[:1], n_replicates=500, seed=4))


def test_fisher_needs_a_seed_unless_exact():
    assert randomization_test([0.0, 0.0, 0.0]).tolist() == [1.0]
    with pytest.raises(InputError, match="seed="):
        randomization_test(np.ones(20), n_replicates=1000)
    with pytest.raises(InputError, match="n_replicates"):
        randomization_test(np.ones(3), n_replicates=0)


def test_fisher_matches_ranx_where_installed():
    ranx = pytest.importorskip(
        "ranx", reason="ranx is not installed (optional peer: pip install ranx)"
    )
    from ranx.statistical_tests import fisher_randomization_test

    rng = np.random.default_rng(2)
    for shift in (0.0, 0.05, 0.1):
        a, b = rng.uniform(0, 1, (2, 60))
        a = a + shift
        theirs, _ = fisher_randomization_test(a, b, 5000, 0.05, 42)  # (p, p <= max_p)
        ours = randomization_test(a - b, n_replicates=5000, seed=42)[0]
        assert abs(ours - theirs) < 5 * np.sqrt(max(ours * (1 - ours), 1e-3) / 5000) + 1e-3, (
            ranx.__name__,
            shift,
        )


# --- the paired bootstrap ------------------------------------------------------------------


def test_bootstrap_interval_equals_scipy_percentile_interval():
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.3, (4, 30))
    ours = bootstrap_test(d, n_replicates=999, seed=9, confidence=0.9)
    for i, row in enumerate(d):
        theirs = stats.bootstrap(
            (row,), _mean, n_resamples=999, method="percentile", confidence_level=0.9,
            rng=np.random.default_rng(9), vectorized=True,
        ).confidence_interval  # fmt: skip
        assert ours.ci_low[i] == pytest.approx(theirs.low, rel=1e-12)
        assert ours.ci_high[i] == pytest.approx(theirs.high, rel=1e-12)


def test_bootstrap_p_value_equals_a_loop_over_resamples(monkeypatch):
    rng = np.random.default_rng(8)
    d = rng.normal(0.03, 0.25, (3, 12))
    n_replicates = 700
    ours = bootstrap_test(d, n_replicates=n_replicates, seed=1).p_value
    index = np.random.default_rng(1).integers(0, 12, (n_replicates, 12))
    for row, p in zip(d, ours, strict=True):
        observed = abs(row.mean() / (row.std(ddof=1) / np.sqrt(12)))
        shifted = row - row.mean()
        reached = 0
        for draw in index:
            sample = shifted[draw]
            t = abs(sample.mean() / (sample.std(ddof=1) / np.sqrt(12)))
            reached += t >= observed
        assert p == (reached + 1) / (n_replicates + 1)  # the observed resample counts
    monkeypatch.setattr(intervals, "BLOCK", 50)  # rows and replicates in small blocks
    assert np.array_equal(ours, bootstrap_test(d, n_replicates=n_replicates, seed=1).p_value)


def test_bootstrap_degenerate_rows():
    result = bootstrap_test([[0.0] * 6, [0.5] * 6], n_replicates=100, seed=0)
    assert result.p_value.tolist() == [1.0, 1 / 101]  # never 0: (0 + 1)/(B + 1)
    assert result.ci_low.tolist() == [0.0, 0.5] and result.ci_high.tolist() == [0.0, 0.5]


# --- through significance, discriminative power ---------------------------------------------


def test_significance_fisher_and_bootstrap_on_metrics(toy_metrics):
    pairs = metric_pairs(toy_metrics, ["AP"]).sort("system_a", "system_b", "query")
    matrix = np.stack(
        [
            g["AP"].to_numpy()
            for _, g in pairs.group_by(["system_a", "system_b"], maintain_order=True)
        ]
    )
    fisher = significance(toy_metrics, "AP", test="fisher", seed=3, n_replicates=800)
    assert set(fisher["test"]) == {"fisher"} and set(fisher["correction"]) == {"holm"}
    assert fisher["p_value"].to_numpy() == pytest.approx(
        randomization_test(matrix, n_replicates=800, seed=3)
    )
    boot = significance(toy_metrics, "AP", test="bootstrap", seed=3, n_replicates=800)
    expected = bootstrap_test(matrix, n_replicates=800, seed=3)
    assert boot["p_value"].to_numpy() == pytest.approx(expected.p_value)
    assert boot["ci_low"].to_numpy() == pytest.approx(expected.ci_low)
    assert fisher["ci_low"].null_count() == fisher.height


def test_significance_bootstrap_of_constant_values_is_the_sign_test():
    prefs = pl.DataFrame(
        {"query": list("123456"), "system_a": ["x"] * 6, "system_b": ["y"] * 6, "rrLP": [0.5] * 6}
    )
    row = significance(prefs, "rrLP", test="bootstrap", seed=0).row(0, named=True)
    assert row["test"] == "sign" and row["p_value"] == pytest.approx(stats.binomtest(6, 6).pvalue)
    assert row["ci_low"] == row["ci_high"] == 0.5


def test_significance_fisher_on_pairs_with_different_queries():
    # pair (x, y) has 3 queries, pair (x, z) 5: each is tested on its own queries, exactly
    prefs = pl.DataFrame(
        {
            "query": ["1", "2", "3", "1", "2", "3", "4", "5"],
            "system_a": ["x"] * 8,
            "system_b": ["y"] * 3 + ["z"] * 5,
            "rrLP": [0.5, 0.25, -0.125, 0.5, 0.5, 0.25, 1.0, -0.5],
        }
    )
    out = significance(prefs, "rrLP", test="fisher", correction="none", n_replicates=64)
    values = prefs.partition_by("system_b", maintain_order=True)
    assert out["p_value"].to_list() == [_exact_fisher(v["rrLP"].to_numpy()) for v in values]
    assert out["n_queries"].to_list() == [3, 5]


def test_discriminative_power_with_the_new_tests(toy_metrics, toy_positions):
    prefs = lf.preferences(toy_positions, ["rrLP"])
    for frame, measure in ((toy_metrics, "AP"), (prefs, "rrLP")):
        for test in ("fisher", "bootstrap"):
            # 28 pairs under Holm: 1/(B + 1) must be below 0.05/28, so B ≥ 560
            power = discriminative_power(frame, [measure], test=test, seed=0, n_replicates=600)
            assert power["test"].to_list() == [test]
            tests = significance(frame, measure, test=test, seed=0, n_replicates=600)
            assert power["n_significant"][0] == (tests["p_adjusted"] < 0.05).sum()


def test_sgnlp_and_sgnlr_keep_the_sign_test_under_the_resampling_tests(toy_positions):
    prefs = lf.preferences(toy_positions, ["sgnLP", "sgnLR", "rrLP"])
    for test in ("fisher", "bootstrap"):
        for name in ("sgnLP", "sgnLR"):
            got = significance(prefs, name, test=test, seed=0, n_replicates=200)
            assert got.equals(significance(prefs, name, test="sign")), (test, name)
        power = discriminative_power(prefs, ["sgnLP", "rrLP"], test=test, seed=0)
        assert power.select("measure", "test").rows() == [("rrLP", test), ("sgnLP", "sign")]


# --- one-way and blocked HSD -----------------------------------------------------------------


def test_one_way_hsd_equals_scipy_tukey_hsd(toy_metrics):
    wide = toy_metrics.pivot(on="query", index="system", values="AP").sort("system")
    x = wide.drop("system").to_numpy()
    theirs = stats.tukey_hsd(*x).pvalue
    out = tukey_hsd(toy_metrics, "AP", blocking=False)
    a, b = np.triu_indices(len(x), k=1)
    assert out["p_value"].to_numpy() == pytest.approx(theirs[a, b], rel=1e-6, abs=1e-9)
    assert set(out["test"]) == {"hsd_one_way"}
    blocked = tukey_hsd(toy_metrics, "AP")
    assert set(blocked["test"]) == {"hsd_blocked"}
    assert (blocked["p_value"] <= out["p_value"] + 1e-12).mean() > 0.5  # blocking is sharper


def test_one_way_variants_are_named_everywhere(toy_metrics):
    power = discriminative_power(toy_metrics, ["AP"], test="hsd", blocking=False)
    assert power["test"].to_list() == ["hsd_one_way"]
    shuffled = significance(
        toy_metrics, "AP", test="randomized_hsd", blocking=False, seed=0, n_replicates=200
    )
    assert set(shuffled["test"]) == {"randomized_hsd_one_way"}
    table = lf.stats.report(toy_metrics, ["AP"], test="hsd", blocking=False, correction="none")
    assert set(table["test"]) == {"hsd_one_way"}
    with pytest.raises(InputError, match="blocking=False"):
        significance(toy_metrics, "AP", test="paired_t", blocking=False)


# --- effect sizes --------------------------------------------------------------------------


def test_effect_sizes_by_hand(toy_metrics):
    out = significance(toy_metrics, "AP", correction="none")
    wide = toy_metrics.pivot(on="query", index="system", values="AP").sort("system")
    systems, x = wide["system"].to_list(), wide.drop("system").to_numpy()
    s, q = x.shape
    residual = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    v_e = (residual**2).sum() / ((s - 1) * (q - 1))
    for row in out.iter_rows(named=True):
        i, j = systems.index(row["system_a"]), systems.index(row["system_b"])
        diff = x[i] - x[j]
        d = diff.mean() / diff.std(ddof=1) if diff.std() > 0 else None
        assert row["cohens_d"] == (None if d is None else pytest.approx(d))
        assert row["es_hsd"] == pytest.approx((x[i].mean() - x[j].mean()) / np.sqrt(v_e))


def test_effect_sizes_of_pair_tables_and_incomplete_metrics(toy_metrics):
    prefs = pl.DataFrame(
        {"query": ["1", "2", "3"], "system_a": ["x"] * 3, "system_b": ["y"] * 3,
         "rrLP": [0.5, 0.25, 0.75]}
    )  # fmt: skip
    row = significance(prefs, "rrLP").row(0, named=True)
    assert row["cohens_d"] == pytest.approx(0.5 / 0.25) and row["es_hsd"] is None
    partial = toy_metrics.filter(~((pl.col("system") == "sys000") & (pl.col("query") == "401")))
    out = significance(partial, "AP")
    assert out["es_hsd"].null_count() == out.height and out["cohens_d"].null_count() < out.height


def test_report_gives_the_effect_size_against_the_baseline(toy_metrics):
    table = lf.stats.report(toy_metrics, ["AP"], baseline="sys003", test="fisher", seed=0)
    assert table.columns[3:6] == ["AP", "AP_sig", "AP_d"] and set(table["test"]) == {"fisher"}
    tests = significance(toy_metrics, "AP")
    for row in table.iter_rows(named=True):
        if row["system"] == "sys003":
            assert row["AP_d"] is None
            continue
        pair = tests.filter(
            pl.col("system_a").is_in([row["system"], "sys003"])
            & pl.col("system_b").is_in([row["system"], "sys003"])
        ).row(0, named=True)
        flip = 1 if pair["system_a"] == row["system"] else -1
        assert row["AP_d"] == pytest.approx(flip * pair["cohens_d"])
        assert row["AP_es_hsd"] == pytest.approx(flip * pair["es_hsd"])
    costs = lf.stats.report(
        toy_metrics.with_columns(cost=-pl.col("AP")), ["cost"], baseline="sys003",
        lower_is_better=["cost"],
    )  # fmt: skip
    assert costs["cost_d"].to_list() == pytest.approx(table["AP_d"].to_list(), nan_ok=True)
    assert costs["cost_es_hsd"].to_list() == pytest.approx(
        table["AP_es_hsd"].to_list(), nan_ok=True
    )
