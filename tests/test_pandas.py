"""The pandas ``.lexi`` accessor (pandas 3): same engine, pandas in and pandas out.

Strings stay pandas 3's default ``str`` dtype, list columns come back Arrow-backed
(``pd.ArrowDtype``), and every result equals what the Polars namespace computes.
"""

from __future__ import annotations

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.errors import DroppedQueriesWarning, InputError

MEASURES = [
    "RR",
    "AP",
    "nDCG",
    "nDCG@2",
    "nDCG(gains={1: 1, 2: 3})",
    "P@2",
    "R@2",
    "RP",
    "TSE",
    "ASL",
    "ASL@g1-1",
    "ERR",
    "ERR@2",
]


def pandas_run() -> pd.DataFrame:
    # A non-default index on purpose: the accessor must not depend on it.
    return pd.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b"],
            "query": ["q1", "q1", "q2", "q1", "q1"],
            "doc": ["d1", "d2", "d3", "d2", "d1"],
            "score": [3.0, 2.0, 1.0, 0.5, 0.5],
        },
        index=[10, 3, 7, 1, 99],
    )


def pandas_qrels() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query": ["q1", "q1", "q2", "q3"],
            "doc": ["d2", "d9", "d3", "x"],
            "relevance": [1, 2, 1, 1],
        }
    )


def polars_run() -> pl.DataFrame:
    return pl.from_pandas(pandas_run().reset_index(drop=True))


def polars_qrels() -> pl.DataFrame:
    return pl.from_pandas(pandas_qrels())


def sorted_polars(frame: pd.DataFrame, keys=("system", "query")) -> pl.DataFrame:
    return pl.from_pandas(frame).sort(list(keys))


def test_inputs_are_pandas_3_strings():
    # The test data itself is what a pandas 3 user holds: the default string dtype.
    assert int(pd.__version__.split(".")[0]) >= 3
    assert pandas_run()["query"].dtype == "str"


def test_evaluate_round_trip_keeps_string_dtype():
    got = pandas_run().lexi.evaluate(pandas_qrels(), MEASURES)
    assert isinstance(got, pd.DataFrame)
    assert got["system"].dtype == "str"
    assert got["query"].dtype == "str"
    for name in MEASURES:
        assert got[name].dtype == "float64", name
    assert list(got.columns) == ["system", "query", *MEASURES]


def test_evaluate_equals_polars():
    got = sorted_polars(pandas_run().lexi.evaluate(pandas_qrels(), MEASURES))
    expected = polars_run().lexi.evaluate(polars_qrels(), MEASURES).sort("system", "query")
    assert_frame_equal(got, expected)


def test_positions_list_columns_are_arrow_backed():
    got = pandas_run().lexi.positions(pandas_qrels(), docs=True, grades=True)
    for name in ["positions", "docs", "grades", "ideal_grades"]:
        dtype = got[name].dtype
        assert isinstance(dtype, pd.ArrowDtype), (name, dtype)
        assert pa.types.is_list(dtype.pyarrow_dtype) or pa.types.is_large_list(dtype.pyarrow_dtype)
    assert pa.types.is_uint32(got["positions"].dtype.pyarrow_dtype.value_type)
    assert got["n_rel"].dtype == "uint32"
    assert got["n_ret"].dtype == "uint32"
    assert got["system"].dtype == "str"
    rows = got.sort_values(["system", "query"]).reset_index(drop=True)
    # elements read back as plain Python lists
    # q3 is judged but nobody answered it: a worst-case row for each system
    assert rows["positions"].tolist() == [[2], [1], [], [1], [], []]
    assert rows["docs"].tolist() == [["d2"], ["d3"], [], ["d2"], [], []]


def test_positions_equal_polars():
    got = sorted_polars(pandas_run().lexi.positions(pandas_qrels(), docs=True, grades=True))
    expected = polars_run().lexi.positions(polars_qrels(), docs=True, grades=True)
    assert_frame_equal(got, expected.sort("system", "query"))


def test_positions_frame_feeds_back_into_measures():
    """A pandas positions frame (Arrow lists) goes back through the accessor unchanged."""
    pos = pandas_run().lexi.positions(pandas_qrels(), grades=True)
    got = sorted_polars(pos.lexi.measures(MEASURES, n=100))
    expected = polars_run().lexi.evaluate(polars_qrels(), MEASURES, n=100).sort("system", "query")
    assert_frame_equal(got, expected)


def test_summarize_equals_polars():
    per_query = pandas_run().lexi.evaluate(pandas_qrels(), MEASURES)
    got = per_query.lexi.summarize()
    assert isinstance(got, pd.DataFrame)
    assert got["system"].dtype == "str"
    expected = lf.summarize(polars_run().lexi.evaluate(polars_qrels(), MEASURES))
    assert_frame_equal(pl.from_pandas(got), expected)


def test_summarize_by_key():
    run = pd.concat([pandas_run().assign(track="t1"), pandas_run().assign(track="t2")])
    per_query = run.lexi.evaluate(pandas_qrels(), ["RR"], by="track")
    got = per_query.lexi.summarize(by="track")
    assert list(got.columns) == ["track", "system", "n_queries", "RR"]
    assert got["track"].tolist() == ["t1", "t1", "t2", "t2"]


def test_coverage_equals_polars():
    got = pandas_run().lexi.coverage(pandas_qrels())
    assert isinstance(got, pd.DataFrame)
    assert_frame_equal(pl.from_pandas(got), lf.coverage(polars_run(), polars_qrels()))


@pytest.mark.parametrize(
    "string_dtype", ["str", "string[pyarrow]", object], ids=["str", "string-pyarrow", "object"]
)
def test_string_dtypes_give_the_same_result(string_dtype):
    ids = {"system": string_dtype, "query": string_dtype, "doc": string_dtype}
    run = pandas_run().astype(ids)
    qrels = pandas_qrels().astype({"query": string_dtype, "doc": string_dtype})
    got = sorted_polars(run.lexi.evaluate(qrels, MEASURES))
    expected = polars_run().lexi.evaluate(polars_qrels(), MEASURES).sort("system", "query")
    assert_frame_equal(got, expected)


def test_integer_ids():
    run = pandas_run().assign(query=lambda f: f["query"].str[1:].astype("int64"))
    qrels = pandas_qrels().assign(query=lambda f: f["query"].str[1:].astype("Int64"))
    got = run.lexi.evaluate(qrels, ["RR"]).sort_values(["system", "query"])
    assert got["query"].dtype.kind == "i"
    assert got["query"].tolist() == [1, 2, 3, 1, 2, 3]
    assert got["RR"].tolist() == [0.5, 1.0, 0.0, 1.0, 0.0, 0.0]


def test_parquet_round_trip(tmp_path):
    pos = pandas_run().lexi.positions(pandas_qrels(), docs=True)
    path = tmp_path / "positions.parquet"
    pos.to_parquet(path)
    # pandas needs the Arrow dtype backend to read Arrow list dtypes back.
    back = pd.read_parquet(path, dtype_backend="pyarrow")
    assert back["positions"].tolist() == pos["positions"].tolist()
    assert back["docs"].tolist() == pos["docs"].tolist()
    # and Polars reads the pandas file as the same frame
    assert_frame_equal(pl.read_parquet(path), pl.from_pandas(pos))


def test_dropped_queries_warn_from_pandas():
    run = pd.concat(
        [pandas_run(), pd.DataFrame([{"system": "a", "query": "q7", "doc": "z", "score": 1.0}])]
    )
    with pytest.warns(DroppedQueriesWarning, match="q7"):
        run.lexi.positions(pandas_qrels())


def test_errors_come_through_the_accessor():
    run = pd.concat([pandas_run(), pandas_run().head(1)])
    with pytest.raises(InputError, match="duplicate"):
        run.lexi.evaluate(pandas_qrels(), ["RR"])


def test_accessor_accepts_polars_qrels():
    got = sorted_polars(pandas_run().lexi.evaluate(polars_qrels(), ["RR"]))
    expected = polars_run().lexi.evaluate(polars_qrels(), ["RR"]).sort("system", "query")
    assert_frame_equal(got, expected)
