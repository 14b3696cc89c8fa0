"""Wilcoxon's test, the FDR corrections, never-zero resampled p-values and the shared
tolerance, against SciPy, statsmodels and explicit loops over the replicates."""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import lexiframe as lf
from lexiframe import LexiframeWarning
from lexiframe.cli import main
from lexiframe.errors import DroppedQueriesWarning, InputError
from lexiframe.io import read_qrels, read_run
from lexiframe.stats import (
    adjust_p_values,
    bootstrap_test,
    discriminative_power,
    randomization_test,
    randomized_tukey_hsd,
    significance,
    wilcoxon_test,
)
from tests.conftest import DATA

TOY = DATA / "toy"
multitest = pytest.importorskip("statsmodels.stats.multitest")


def _statsmodels_adjusted(p_values: np.ndarray, method: str) -> np.ndarray:
    """statsmodels' adjusted p-values. Its Holm step calls gc.collect(), a full collection
    of the test process's objects (seconds over a property test): skipped here."""
    with mock.patch("gc.collect"):
        return multitest.multipletests(p_values, method=method)[1]


@pytest.fixture(scope="module")
def toy_positions() -> pl.DataFrame:
    qrels = read_qrels(TOY / "qrels.txt")
    with warnings.catch_warnings(action="ignore", category=DroppedQueriesWarning):
        return read_run(sorted((TOY / "runs").iterdir())).lexi.positions(qrels)


@pytest.fixture(scope="module")
def toy_metrics(toy_positions) -> pl.DataFrame:
    return lf.measures(toy_positions, ["AP", "RR"])


def _scipy_wilcoxon(d: np.ndarray, **options: object) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's notes on ties and small samples
        result = stats.wilcoxon(d, **options)
    return float(result.statistic), float(result.pvalue)


# --- Wilcoxon ---------------------------------------------------------------------------------

VALUES = st.sampled_from([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.lists(VALUES, min_size=1, max_size=70), min_size=1, max_size=4),
    zero_method=st.sampled_from(["wilcox", "pratt", "zsplit"]),
    method=st.sampled_from(["auto", "asymptotic"]),
    correction=st.booleans(),
)
def test_wilcoxon_equals_scipy_with_ties_and_zeros(rows, zero_method, method, correction):
    correction = correction and method == "asymptotic"
    for row in rows:
        d = np.array(row)
        ours = wilcoxon_test(d, zero_method=zero_method, method=method, correction=correction)
        if not np.any(d):
            assert ours.p_value.tolist() == [1.0]  # no non-zero difference: p = 1
            continue
        options = {"zero_method": zero_method, "method": method, "correction": correction}
        statistic, p = _scipy_wilcoxon(d, **options)
        assert ours.statistic[0] == pytest.approx(statistic, rel=1e-12)
        assert ours.p_value[0] == pytest.approx(p, rel=1e-9, abs=1e-15), ours.method


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80))
def test_wilcoxon_equals_scipy_without_ties(seed, n):
    d = np.random.default_rng(seed).normal(0.1, 1.0, (3, n))
    ours = wilcoxon_test(d)
    for i, row in enumerate(d):
        statistic, p = _scipy_wilcoxon(row)
        assert ours.statistic[i] == statistic
        assert ours.p_value[i] == pytest.approx(p, rel=1e-9)
        assert ours.method[i] == ("exact" if n <= 50 else "asymptotic")
    exact = wilcoxon_test(d[:, :30], method="exact").p_value
    assert exact == pytest.approx([_scipy_wilcoxon(r, method="exact")[1] for r in d[:, :30]])


def test_wilcoxon_bad_options_name_the_argument():
    with pytest.raises(InputError, match="unknown zero_method 'zero'"):
        wilcoxon_test([0.1, 0.2], zero_method="zero")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown method 'normal'"):
        wilcoxon_test([0.1, 0.2], method="normal")  # type: ignore[arg-type]


def test_significance_wilcoxon_on_metrics_and_preferences(toy_metrics, toy_positions):
    tests = significance(toy_metrics, "AP", test="wilcoxon", correction="none")
    wide = toy_metrics.pivot(on="system", index="query", values="AP")
    for row in tests.iter_rows(named=True):
        d = (wide[row["system_a"]] - wide[row["system_b"]]).to_numpy()
        statistic, p = _scipy_wilcoxon(d)
        assert (row["statistic"], row["test"]) == (statistic, "wilcoxon")
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
    prefs = lf.preferences(toy_positions, ["rrLP", "sgnLP"])
    rr = significance(prefs, "rrLP", test="wilcoxon", correction="none")
    for row in rr.iter_rows(named=True):
        values = prefs.filter(
            (pl.col("system_a") == row["system_a"]) & (pl.col("system_b") == row["system_b"])
        )["rrLP"].to_numpy()
        assert row["p_value"] == pytest.approx(_scipy_wilcoxon(values)[1], rel=1e-9)
    # integer preferences keep the papers' sign test
    sign = significance(prefs, "sgnLP", test="wilcoxon")
    assert sign.equals(significance(prefs, "sgnLP", test="sign"))


# --- Benjamini–Hochberg and Benjamini–Yekutieli --------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    p=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    families=st.integers(1, 3),
    method=st.sampled_from(["bh", "by", "holm", "bonferroni"]),
)
def test_corrections_equal_statsmodels(p, families, method):
    values = np.array(p)
    labels = np.arange(len(values)) % families
    ours = adjust_p_values(values, method, groups=labels)
    name = {"bh": "fdr_bh", "by": "fdr_by"}.get(method, method)
    for family in range(families):
        inside = labels == family
        if inside.any():
            theirs = _statsmodels_adjusted(values[inside], name)
            assert ours[inside] == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_bh_and_by_through_significance(toy_metrics):
    raw = significance(toy_metrics, "AP", test="t", correction="none")["p_value"].to_numpy()
    for method, name in (("bh", "fdr_bh"), ("by", "fdr_by")):
        tests = significance(toy_metrics, "AP", test="t", correction=method)
        assert set(tests["correction"]) == {method}
        expected = _statsmodels_adjusted(raw, name)
        assert tests["p_adjusted"].to_numpy() == pytest.approx(expected, rel=1e-12)
        power = discriminative_power(toy_metrics, ["AP"], test="wilcoxon", correction=method)
        wilcoxon = significance(toy_metrics, "AP", test="wilcoxon", correction=method)
        assert power["n_significant"][0] == (wilcoxon["p_adjusted"] < 0.05).sum()


# --- resampled p-values are never 0 -------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), shift=st.floats(0.0, 3.0), n_replicates=st.integers(1, 300))
def test_resampled_p_values_are_never_zero(seed, shift, n_replicates):
    d = np.random.default_rng(seed).normal(shift, 0.1, (3, 25))
    floor = 1 / (n_replicates + 1)
    fisher = randomization_test(d, n_replicates=n_replicates, seed=seed)
    boot = bootstrap_test(d, n_replicates=n_replicates, seed=seed).p_value
    for p in (fisher, boot):
        assert (p >= floor).all() and (p <= 1).all()
        # a multiple of 1/(B + 1): (c + 1)/(B + 1)
        assert np.allclose(p * (n_replicates + 1), np.round(p * (n_replicates + 1)))


def test_fisher_random_p_is_c_plus_one_over_b_plus_one():
    d = np.random.default_rng(5).normal(0.05, 0.3, (4, 30))
    ours = randomization_test(d, n_replicates=500, seed=9)
    # the same draws as the test's (one block): a sign per query and replicate
    signs = np.where(np.random.default_rng(9).random((500, 30)) < 0.5, -1.0, 1.0)
    for row, p in zip(d, ours, strict=True):
        reached = sum(abs(float(s @ row)) >= abs(row.sum()) - 1e-9 for s in signs)
        assert p == (reached + 1) / 501


def test_randomized_hsd_p_never_zero_and_counts_the_observed():
    scores = pl.DataFrame(
        {"system": list("xxxxyyyy"), "query": list("1234") * 2,
         "AP": [0.9, 0.8, 0.7, 0.9, 0.1, 0.2, 0.1, 0.3]}
    )  # fmt: skip
    # two systems: every within-query shuffle is a sign flip of the differences
    d = np.array([0.8, 0.6, 0.6, 0.6])
    p = randomized_tukey_hsd(scores, "AP", seed=0, n_replicates=4000)["p_value"].item()
    exact = np.mean([abs(np.dot(s, d)) >= d.sum() - 1e-9 for s in _patterns(4)])
    assert p > 0 and abs(p - exact) < 0.02
    assert p * 4001 == pytest.approx(round(p * 4001))


def _patterns(q: int) -> np.ndarray:
    return 1.0 - 2.0 * ((np.arange(2**q)[:, None] >> np.arange(q)) & 1)


def test_note_when_replicates_are_too_few_for_the_corrected_level(toy_metrics):
    # 28 pairs under Bonferroni at 0.05: 1/(B + 1) must be below 0.05/28, so B ≥ 560
    with pytest.warns(LexiframeWarning, match=r"no pair can be significant.*at least 560"):
        power = discriminative_power(
            toy_metrics, ["AP"], test="bootstrap", correction="bonferroni", seed=0,
            n_replicates=500,
        )  # fmt: skip
    assert power["n_significant"].item() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", LexiframeWarning)
        discriminative_power(
            toy_metrics, ["AP"], test="bootstrap", correction="bonferroni", seed=0,
            n_replicates=560,
        )  # fmt: skip
        # exact Fisher (2^q ≤ B) draws nothing: no note however small B is
        discriminative_power(toy_metrics.filter(pl.col("query").is_in(["401", "402"])),
                             ["AP"], test="fisher", n_replicates=4)  # fmt: skip
    with pytest.warns(LexiframeWarning, match="no pair can be significant"):
        lf.stats.report(toy_metrics, ["AP"], test="fisher", seed=0, n_replicates=100)


# --- one tolerance for the degenerate cases -------------------------------------------------------


@pytest.mark.parametrize("shift", [0.1, 0.125])
def test_constant_differences_up_to_rounding_are_constant(shift):
    xa = np.array([0.3, 0.7, 0.9, 0.55, 0.35, 0.81])
    differences = xa - (xa - shift)
    if shift == 0.1:
        assert np.std(differences) > 0  # rounding made them differ
    metrics = pl.DataFrame(
        {"system": ["a"] * 6 + ["b"] * 6, "query": [str(q) for q in range(6)] * 2,
         "AP": np.concatenate([xa, xa - shift])}
    )  # fmt: skip
    pairs = lf.stats.metric_pairs(metrics, ["AP"])
    for frame in (metrics, pairs):
        for test in ("t", "bootstrap"):
            row = significance(frame, "AP", test=test, seed=0).row(0, named=True)
            # no variance: the sign test (6 wins of 6), as documented, for 0.1 as for 0.125
            assert row["test"] == "sign"
            assert row["p_value"] == pytest.approx(stats.binomtest(6, 6).pvalue)
            assert row["cohens_d"] is None
    boot = bootstrap_test(differences, n_replicates=99, seed=0).p_value
    assert boot.tolist() == [1 / 100]  # t = ∞: no resample reaches it
    hsd = lf.stats.tukey_hsd(metrics, "AP").row(0, named=True)
    assert hsd["p_value"] == 0.0 and hsd["es_hsd"] is None  # no residual variance


# --- the command line --------------------------------------------------------------------------


def test_compare_with_wilcoxon_and_bh(capsys, toy_metrics):
    runs = sorted(str(path) for path in (TOY / "runs").iterdir())[:4]
    code = main(["compare", "--qrels", str(TOY / "qrels.txt"), "-m", "AP", "--test",
                 "wilcoxon", "--correction", "bh", *runs])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "| p (bh) |" in out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        metrics = lf.evaluate(runs, str(TOY / "qrels.txt"), ["AP"])
    raw = significance(metrics, "AP", test="wilcoxon", correction="none")["p_value"].to_numpy()
    expected = _statsmodels_adjusted(raw, "fdr_bh")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| AP |")]
    assert [float(cells[7]) for cells in rows] == [float(f"{p:.4g}") for p in expected]
    assert {cells[-1].strip() for cells in rows} == {"wilcoxon"}


def test_compare_notes_too_few_replicates(capsys):
    runs = sorted(str(path) for path in (TOY / "runs").iterdir())[:4]
    code = main(["compare", "--qrels", str(TOY / "qrels.txt"), "-m", "AP", "--test", "fisher",
                 "--seed", "0", "--replicates", "50", "--correction", "holm", *runs])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "note: with 50 replicates" in err and "Traceback" not in err


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 12))
def test_wilcoxon_exact_p_is_the_share_of_sign_patterns(seed, n):
    # an independent computation: every one of the 2^n sign patterns of the ranks 1…n
    d = np.random.default_rng(seed).normal(0.2, 1.0, n)
    ranks = stats.rankdata(np.abs(d))
    r_plus = ranks[d > 0].sum()
    null = _patterns(n).clip(0, 1) @ ranks  # R⁺ of each pattern
    expected = min(1.0, 2 * min((null <= r_plus).mean(), (null >= r_plus).mean()))
    assert wilcoxon_test(d, method="exact").p_value[0] == pytest.approx(expected, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(p=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_corrections_are_ordered(p):
    raw = np.array(p)
    adjusted = {
        method: adjust_p_values(raw, method) for method in ("holm", "bonferroni", "bh", "by")
    }
    assert (adjusted["bh"] >= raw - 1e-15).all()
    assert (adjusted["holm"] <= adjusted["bonferroni"] + 1e-15).all()
    assert (adjusted["bh"] <= adjusted["holm"] + 1e-15).all()  # FDR is the weaker control
    assert (adjusted["bh"] <= adjusted["by"] + 1e-15).all()
    order = np.argsort(raw, kind="stable")
    for values in adjusted.values():  # monotone in the raw p-values
        assert (np.diff(values[order]) >= -1e-15).all()
