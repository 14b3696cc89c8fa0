"""``%6.4f`` for a whole column: the digits C's printf and Python's format give."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from lexiframe.cli.decimals import fixed4

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e13, max_value=1e13)
# The values exactly half-way between two 4-decimal numbers that a double holds, odd
# multiples of 1/32 (0.03125): the ties, where the last digit goes to the even one.
ties = st.integers(-(2**20), 2**20).map(lambda m: (2 * m + 1) / 32)


@given(st.lists(st.one_of(finite, ties, st.sampled_from([0.0, -0.0, 5e-5, 0.99995]))))
def test_every_value_prints_as_python_formats_it(values):
    assert fixed4(pl.Series(values, dtype=pl.Float64)).to_list() == [f"{v:6.4f}" for v in values]


def test_ties_near_and_far_from_the_half_way_point():
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            (np.arange(200_000) + 0.5) / 1e4,  # each near a half-way point, above or below
            np.arange(1, 4096) / 4096,  # exact binary fractions, many exact ties
            rng.random(100_000) * 1e9,
            [np.nan, np.inf, -np.inf, 2.0**32, 2.0**40 + 0.5, 1e-300, -1e-7],
        ]
    )
    got = fixed4(pl.Series(values)).to_list()
    assert got == [f"{v:6.4f}" for v in values]
    assert fixed4(pl.Series([0.21875]))[0] == "0.2188"  # 2187.5: to the even digit
    assert fixed4(pl.Series([0.21865]))[0] == f"{0.21865:6.4f}"
