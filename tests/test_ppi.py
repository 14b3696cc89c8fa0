"""Prediction-powered intervals: the formulas written out per system, and their coverage of a
known truth over many seeded simulations."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from lexiframe import stats
from lexiframe.errors import InputError, SchemaError


def frames(
    y: np.ndarray, f: np.ndarray, n: int, keys: dict[str, np.ndarray]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The LLM frame (every query) and the human frame (the first ``n`` queries of each
    group) of groups × queries arrays."""
    groups, queries = y.shape
    base = {name: np.repeat(values, queries) for name, values in keys.items()}
    query = np.tile([f"q{j:04d}" for j in range(queries)], groups)
    llm = pl.DataFrame({**base, "query": query, "AP": f.ravel()})
    human = pl.DataFrame({**base, "query": query, "AP": y.ravel()}).filter(
        pl.Series(np.tile(np.arange(queries) < n, groups))
    )
    return llm, human


def direct(
    y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray, method: str, alpha: float
) -> tuple[float, float, float]:
    """θ̂ and its interval for one system, from the formulas of Angelopoulos et al."""
    n, big_n = y.size, f_unlabelled.size
    if method == "ppi":
        lam = 1.0
    elif method == "classical":
        lam = 0.0
    else:
        every = np.concatenate([f, f_unlabelled])
        lam = float(np.clip(np.cov(y, f)[0, 1] / ((1 + n / big_n) * every.var(ddof=1)), 0, 1))
    estimate = y.mean() + lam * (f_unlabelled.mean() - f.mean())
    variance = (y - lam * f).var(ddof=1) / n + lam**2 * f_unlabelled.var(ddof=1) / big_n
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    return estimate, estimate - z * np.sqrt(variance), estimate + z * np.sqrt(variance)


@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 12),
    st.integers(2, 20),
    st.sampled_from(["ppi", "ppi++", "classical"]),
    st.sampled_from([0.05, 0.1, 0.2]),
)
@settings(max_examples=60, deadline=None)
def test_matches_the_formulas(seed: int, n: int, extra: int, method: str, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    y = rng.random((3, n + extra))
    f = np.clip(y + rng.normal(0.1, 0.2, y.shape), 0, 1)
    llm, human = frames(y, f, n, {"system": np.array(["a", "b", "c"])})
    out = stats.ppi_mean(llm, human, "AP", method=method, alpha=alpha)  # type: ignore[arg-type]
    for index, row in enumerate(out.iter_rows(named=True)):
        estimate, low, high = direct(y[index, :n], f[index, :n], f[index, n:], method, alpha)
        assert (row["n_labeled"], row["n_unlabeled"]) == (n, extra)
        assert row["estimate"] == pytest.approx(estimate)
        assert row["ci_low"] == pytest.approx(low) and row["ci_high"] == pytest.approx(high)
        assert row["llm_mean"] == pytest.approx(f[index].mean())


def simulate(replicates: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame, np.ndarray]:
    """Per-query AP-like scores of 3 systems with a known mean, judged by a biased, noisy
    judge: 300 queries each, 60 of them with human labels."""
    rng = np.random.default_rng(seed)
    a, b = np.array([2.0, 3.0, 4.0]), np.array([5.0, 4.0, 3.0])  # Beta: mean a / (a + b)
    truth = a / (a + b)
    shape = (replicates, 3, 300)
    y = rng.beta(a[None, :, None], b[None, :, None], shape)
    f = np.clip(0.7 * y + 0.2 + rng.normal(0, 0.1, shape), 0, 1)
    keys = {
        "replicate": np.repeat(np.arange(replicates), 3),
        "system": np.tile(np.array(["s0", "s1", "s2"]), replicates),
    }
    llm, human = frames(y.reshape(-1, 300), f.reshape(-1, 300), 60, keys)
    return llm, human, np.tile(truth, replicates)


@pytest.mark.parametrize("method", ["ppi", "ppi++", "classical"])
def test_coverage_of_the_nominal_level(method: str) -> None:
    replicates, alpha = 1500, 0.1
    llm, human, truth = simulate(replicates, seed=11)
    out = stats.ppi_mean(llm, human, "AP", by=["replicate", "system"], method=method, alpha=alpha)  # type: ignore[arg-type]
    covered = (out["ci_low"].to_numpy() <= truth) & (truth <= out["ci_high"].to_numpy())
    # within four binomial standard errors of the nominal level, plus the CLT's 1 %
    error = 4 * np.sqrt(alpha * (1 - alpha) / truth.size) + 0.01
    assert abs(covered.mean() - (1 - alpha)) < error
    # unbiased: the mean estimate is the truth, within its Monte Carlo error
    bias = out["estimate"].to_numpy() - truth
    assert abs(bias.mean()) < 4 * bias.std() / np.sqrt(bias.size)


def test_the_judge_alone_is_biased_and_ppi_narrows_the_interval() -> None:
    llm, human, truth = simulate(400, seed=5)
    by = ["replicate", "system"]
    ppi = stats.ppi_mean(llm, human, "AP", by=by, method="ppi++")
    classical = stats.ppi_mean(llm, human, "AP", by=by, method="classical")
    naive = ppi["llm_mean"].to_numpy() - truth
    assert abs(naive.mean()) > 0.03  # 0.7·θ + 0.2 − θ: the judge's bias stays in its mean
    width = (ppi["ci_high"] - ppi["ci_low"]).to_numpy()
    classical_width = (classical["ci_high"] - classical["ci_low"]).to_numpy()
    assert (width < classical_width).mean() > 0.95


def test_errors() -> None:
    llm = pl.DataFrame({"system": ["x"] * 4, "query": list("1234"), "AP": [0.1, 0.2, 0.3, 0.4]})
    human = llm.head(2)
    with pytest.raises(InputError, match="no LLM value of 'AP'"):
        stats.ppi_mean(llm.tail(3), human, "AP")
    with pytest.raises(InputError, match="two or more queries with human labels"):
        stats.ppi_mean(llm, human.head(1), "AP")
    with pytest.raises(InputError, match="method='classical'"):
        stats.ppi_mean(llm, llm, "AP")
    assert stats.ppi_mean(llm, llm, "AP", method="classical")["n_unlabeled"].to_list() == [0]
    with pytest.raises(InputError, match=r"unknown PPI method 'ppi\+'"):
        stats.ppi_mean(llm, human, "AP", method="ppi+")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="alpha"):
        stats.ppi_mean(llm, human, "AP", alpha=1.5)
    with pytest.raises(SchemaError, match="'nDCG'"):
        stats.ppi_mean(llm, human, "nDCG")
    with pytest.raises(InputError, match="several rows"):
        stats.ppi_mean(pl.concat([llm, llm]), human, "AP")
