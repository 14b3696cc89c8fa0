"""Every result frame survives parquet and the pandas accessor, list columns included."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from conftest import polars_to_pandas
from polars.testing import assert_frame_equal

import lexiframe as lf

TOY = Path(__file__).parent / "data" / "toy"


@pytest.fixture(scope="module")
def positions() -> pl.DataFrame:
    run = lf.read_run(TOY / "runs")
    qrels = lf.read_qrels(TOY / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        return lf.positions(run, qrels, docs=True, grades=True)


def results(positions: pl.DataFrame) -> dict[str, pl.DataFrame]:
    prefs = positions.lexi.preferences(extra=["first_difference", "last_difference"])
    per_query = positions.lexi.measures(["RR", "AP", "ASL"])
    return {
        "positions": positions,
        "pairs": positions.lexi.pairs(),
        "preferences": prefs,
        "pair summary": prefs.lexi.summarize(),
        "mc4": prefs.lexi.order("sgnLP"),
        "borda": prefs.lexi.order("sgnLR", method="borda"),
        "measures": per_query,
        "summary": per_query.lexi.summarize(),
        "metric order": per_query.lexi.order("ASL", method="mean"),
        "asl lists": positions.select("system", "query", asl=pl.col("positions").lexi.asl()),
    }


def test_parquet_round_trip(positions, tmp_path):
    for name, frame in results(positions).items():
        path = tmp_path / f"{name.replace(' ', '_')}.parquet"
        frame.write_parquet(path)
        assert_frame_equal(pl.read_parquet(path), frame, check_exact=True), name
        lf.write_frame(frame, path)
        assert_frame_equal(pl.read_parquet(path), frame, check_exact=True), name


def test_list_columns_are_kept_as_lists(positions):
    frames = results(positions)
    assert frames["pairs"].schema["positions_a"] == pl.List(pl.UInt32)
    assert frames["positions"].schema["grades"].inner.is_integer()


def test_pandas_accessor_gives_the_same_frames(positions):
    native = polars_to_pandas(positions)
    prefs = native.lexi.preferences(extra=["first_difference"])
    assert isinstance(prefs, pd.DataFrame)
    expected = positions.lexi.preferences(extra=["first_difference"])
    assert_frame_equal(pl.from_pandas(prefs), expected, check_dtypes=False)
    pairs = native.lexi.pairs()
    assert isinstance(pairs["positions_a"].dtype, pd.ArrowDtype)
    assert_frame_equal(pl.from_pandas(pairs), positions.lexi.pairs(), check_dtypes=False)
    order = prefs.lexi.order("sgnLP")
    assert_frame_equal(pl.from_pandas(order), expected.lexi.order("sgnLP"), check_dtypes=False)
    summary = prefs.lexi.summarize()
    assert_frame_equal(pl.from_pandas(summary), expected.lexi.summarize(), check_dtypes=False)


def test_pandas_results_survive_parquet(positions, tmp_path):
    pairs = polars_to_pandas(positions).lexi.pairs()
    path = tmp_path / "pairs.parquet"
    pairs.to_parquet(path)
    back = pd.read_parquet(path, dtype_backend="pyarrow")
    assert_frame_equal(pl.from_pandas(back), pl.from_pandas(pairs), check_dtypes=False)
    assert list(back["positions_a"].iloc[0]) == list(pairs["positions_a"].iloc[0])
