"""Intervals of the means in summarize: Student's t and the bootstrap percentile interval,
against SciPy's t.interval and bootstrap, per system and per pair."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import lexiframe as lf
from lexiframe.errors import InputError


def _metrics(seed: int, systems: int = 3, queries: int = 12) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "system": np.repeat([f"s{i}" for i in range(systems)], queries),
            "query": np.tile([f"q{j:02d}" for j in range(queries)], systems),
            "AP": rng.beta(2, 3, systems * queries),
        }
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_t_interval_equals_scipy(seed, level):
    metrics = _metrics(seed)
    out = lf.summarize(metrics, ci=level)
    assert out.columns == ["system", "n_queries", "AP", "AP_ci_low", "AP_ci_high"]
    for row in out.iter_rows(named=True):
        x = metrics.filter(pl.col("system") == row["system"])["AP"].to_numpy()
        low, high = stats.t.interval(level, len(x) - 1, x.mean(), stats.sem(x))
        assert (row["AP_ci_low"], row["AP_ci_high"]) == pytest.approx((low, high), rel=1e-12)


def test_bootstrap_interval_equals_scipy_per_system_even_with_missing_values():
    metrics = _metrics(3).with_columns(
        AP=pl.when((pl.col("system") == "s1") & (pl.col("query") == "q03"))
        .then(None)
        .otherwise(pl.col("AP"))
    )  # s1 has 11 values, the others 12: each is drawn as if alone from the seed
    out = lf.summarize(metrics, ci=0.9, method="bootstrap", n_replicates=999, seed=7)
    for row in out.iter_rows(named=True):
        x = metrics.filter(pl.col("system") == row["system"])["AP"].drop_nulls().to_numpy()
        theirs = stats.bootstrap(
            (x,), np.mean, method="percentile", n_resamples=999, rng=7, confidence_level=0.9
        ).confidence_interval
        assert row["AP_ci_low"] == pytest.approx(theirs.low, rel=1e-12)
        assert row["AP_ci_high"] == pytest.approx(theirs.high, rel=1e-12)


def test_intervals_per_pair_of_a_preference_table_and_lazy_frames():
    rng = np.random.default_rng(1)
    prefs = pl.DataFrame(
        {
            "query": [str(q) for q in range(15)] * 2,
            "system_a": ["x"] * 30,
            "system_b": ["y"] * 15 + ["z"] * 15,
            "rrLP": rng.uniform(-1, 1, 30),
        }
    )
    out = lf.summarize(prefs, ci=0.95)
    assert out.columns[:4] == ["system_a", "system_b", "n_queries", "rrLP"]
    assert out.columns[4:6] == ["rrLP_ci_low", "rrLP_ci_high"]
    for row in out.iter_rows(named=True):
        x = prefs.filter(pl.col("system_b") == row["system_b"])["rrLP"].to_numpy()
        low, high = stats.t.interval(0.95, len(x) - 1, x.mean(), stats.sem(x))
        assert (row["rrLP_ci_low"], row["rrLP_ci_high"]) == pytest.approx((low, high))
    lazy = prefs.lazy().lexi.summarize(ci=0.95)
    assert isinstance(lazy, pl.LazyFrame) and lazy.collect().equals(out)


def test_interval_arguments_are_checked():
    metrics = _metrics(0)
    with pytest.raises(InputError, match=r"ci must be a level in \(0, 1\).*pass 0.95"):
        lf.summarize(metrics, ci=95)
    with pytest.raises(InputError, match="unknown interval method 'normal'"):
        lf.summarize(metrics, ci=0.95, method="normal")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="seed="):
        lf.summarize(metrics, ci=0.95, method="bootstrap")
    # one query: no t interval (null), as a mean of one value has no spread
    one = lf.summarize(metrics.filter(pl.col("query") == "q00"), ci=0.95)
    assert one["AP_ci_low"].null_count() == one.height
