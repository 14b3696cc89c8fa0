"""Each measure computes each of its parts once per call: a NumPy kernel over a batch
(lexiframe.metrics._rows.per_ranking) reads each ranking once however the expression
around it mends its NaN, -0.0 and null values, on a DataFrame and on a LazyFrame alike
(Polars' fill_nan and a ``when`` over a value compute that value twice, and nested they
multiply)."""

from __future__ import annotations

import warnings
from collections import Counter

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.metrics import _rows
from tests.test_properties import MEASURES

RUN = pl.DataFrame(
    {
        "system": ["a"] * 5 + ["b"] * 5,
        "query": ["q1"] * 10,
        "doc": [f"d{i}" for i in range(5)] * 2,
        "score": [5.0, 4, 3, 2, 1, 1, 2, 3, 4, 5],
    }
)
QRELS = pl.DataFrame(
    {"query": ["q1"] * 4, "doc": ["d0", "d3", "d9", "d4"], "relevance": [1, 2, 1, 0]}
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_every_kernel_runs_once_per_call(monkeypatch, lazy):
    calls: Counter[int] = Counter()
    kernels = []
    original = _rows.per_ranking

    def counting(kernel, **columns):
        def counted(fields):
            calls[id(counted)] += fields.height  # rows: an engine may split a frame
            return kernel(fields)

        kernels.append(counted)
        return original(counted, **columns)

    monkeypatch.setattr(_rows, "per_ranking", counting)
    frame = RUN.lexi.positions(QRELS, grades=True, judged=True)
    for name in MEASURES:
        calls.clear()
        kernels.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = lf.measures(frame.lazy() if lazy else frame, [name], n=50)
            if lazy:
                result = result.collect()
        assert result.height == frame.height == 2
        assert all(calls[id(kernel)] <= frame.height for kernel in kernels), (name, calls)
