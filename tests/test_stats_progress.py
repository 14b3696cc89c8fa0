"""Long randomised analyses show a progress bar on request, and only then; same results."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

from lexiframe import stats

SCORES = pl.DataFrame(
    {
        "system": list("xxxxyyyyzzzz"),
        "query": list("1234") * 3,
        "AP": [0.9, 0.8, 0.7, 0.9, 0.1, 0.2, 0.1, 0.3, 0.5, 0.4, 0.6, 0.5],
    }
)


def test_randomised_hsd_bar_on_request(capsys):
    quiet = stats.randomized_tukey_hsd(SCORES, "AP", seed=3, n_replicates=300, progress=False)
    assert capsys.readouterr().err == ""
    shown = stats.randomized_tukey_hsd(SCORES, "AP", seed=3, n_replicates=300, progress=True)
    err = capsys.readouterr().err
    assert "randomised HSD" in err and "300" in err
    assert_frame_equal(shown, quiet)
    # Not a terminal (as under pytest): the default is silent.
    stats.discriminative_power(SCORES, ["AP"], test="randomized_hsd", seed=3, n_replicates=50)
    assert capsys.readouterr().err == ""


def test_degradation_curve_bar_counts_runs(capsys):
    def draw(fraction, rng):
        return pl.DataFrame({"value": [fraction + rng.random()]})

    quiet = stats.degradation_curve(draw, [0.1, 0.5], seed=0, n_samples=3, progress=False)
    assert capsys.readouterr().err == ""
    shown = stats.degradation_curve(draw, [0.1, 0.5], seed=0, n_samples=3, progress=True)
    err = capsys.readouterr().err
    assert "degradation" in err and "/6 " in err  # six (fraction, sample) runs
    assert_frame_equal(shown, quiet)
