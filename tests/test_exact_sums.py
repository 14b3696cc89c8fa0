"""The exact partial sums behind the Spark means: any split of the rows gives the same bits,
close to the exact mean, with one process's NaN, infinity and null rules."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from lexiframe.spark import exact_sums

KEYS = ["system"]

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
anything = st.one_of(finite, st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324]))


def _frame(values: list[float | None], systems: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"system": systems, "AP": values}, schema={"system": pl.String, "AP": pl.Float64}
    )


def _means_of_pieces(frame: pl.DataFrame, cuts: list[int], *, signs: bool = False) -> pl.DataFrame:
    pieces = np.split(np.arange(frame.height), sorted(cut % (frame.height + 1) for cut in cuts))
    partials = [
        exact_sums.partial_sums(frame[piece], KEYS, ["AP"], signs=signs) for piece in pieces
    ]
    added = exact_sums.merged(pl.concat(partials), KEYS)
    return exact_sums.means(added, KEYS, ["AP"], signs=signs).sort(KEYS)


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.one_of(st.none(), anything)), min_size=1),
    st.lists(st.integers(0, 10_000), max_size=6),
    st.lists(st.integers(0, 10_000), max_size=6),
    st.randoms(use_true_random=False),
)
def test_any_split_and_order_of_the_rows_gives_the_same_bits(rows, cuts, other_cuts, random):
    systems, values = [system for system, _ in rows], [value for _, value in rows]
    frame = _frame(values, systems)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=random.randint(0, 2**32 - 1))
    first = _means_of_pieces(frame, cuts, signs=True)
    second = _means_of_pieces(shuffled, other_cuts, signs=True)
    assert first.equals(second)  # NaN equal to NaN, bit for bit otherwise


@given(
    st.lists(st.tuples(st.sampled_from("ab"), finite), min_size=1),
    st.lists(st.integers(0, 10_000), max_size=6),
)
def test_the_mean_is_within_two_units_in_the_last_place_of_the_exact_mean(rows, cuts):
    frame = _frame([value for _, value in rows], [system for system, _ in rows])
    got = _means_of_pieces(frame, cuts)
    for system, mean, count in got.select("system", "AP", "n_queries").rows():
        values = frame.filter(pl.col("system") == system)["AP"]
        exact = sum(map(Fraction, values)) / len(values)
        assert count == len(values)
        assert abs(Fraction(mean) - exact) <= 2 * math.ulp(mean) + Fraction(5e-324), system


@given(st.lists(st.tuples(st.sampled_from("ab"), st.one_of(st.none(), anything)), min_size=1))
def test_nulls_nan_and_infinities_follow_one_process(rows):
    """Polars' mean: nulls skipped (null when all are), NaN with a NaN or both infinities."""
    frame = _frame([value for _, value in rows], [system for system, _ in rows])
    got = _means_of_pieces(frame, [])
    expected = (
        frame.group_by("system")
        .agg(pl.col("AP").mean(), pl.col("AP").count().alias("count"))
        .sort("system")
    )
    for (system, mean, count), (_, polars_mean, polars_count) in zip(
        got.select("system", "AP", "n_queries_AP").rows(), expected.rows(), strict=True
    ):
        assert count == polars_count, system
        if polars_mean is None or not math.isfinite(polars_mean):
            assert _same(mean, polars_mean), system
        else:
            assert math.isclose(mean, polars_mean, rel_tol=1e-9, abs_tol=1e-290), system


def _same(left: float | None, right: float | None) -> bool:
    if left is None or right is None:
        return left is right
    return (math.isnan(left) and math.isnan(right)) or left == right


def test_preference_counts_split_wins_losses_and_ties():
    frame = _frame([1.0, -0.5, 0.0, -0.0, None], ["a"] * 5)
    got = _means_of_pieces(frame, [2], signs=True).row(0, named=True)
    assert (got["AP_wins"], got["AP_losses"], got["AP_ties"], got["_nan_AP"]) == (1, 1, 2, 0)
    assert (got["n_queries"], got["n_queries_AP"], got["AP"]) == (5, 4, 0.125)
    with_nan = _means_of_pieces(_frame([1.0, math.nan], ["a"] * 2), [1], signs=True)
    assert with_nan["_nan_AP"].item() == 1 and math.isnan(with_nan["AP"].item())


def test_values_that_cancel_keep_what_is_left():
    """1 + 2⁻⁵², 1 and -2: a sum in any order of doubles gives 0 or 2⁻⁵¹; the exact one 2⁻⁵²."""
    frame = _frame([1.0 + 2.0**-52, 1.0, -2.0], ["a"] * 3)
    assert _means_of_pieces(frame, [1])["AP"].item() == 2.0**-52 / 3
