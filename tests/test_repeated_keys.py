"""has_repeated_keys: the neighbour comparison on sorted rows, and the hash elsewhere, give
Polars' own answer (a key repeated anywhere), nulls included."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lexiframe import aggregate
from lexiframe.errors import InputError
from lexiframe.validate import has_repeated_keys

rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
        st.one_of(st.none(), st.integers(0, 3)),
    ),
    max_size=12,
)


@given(rows, st.booleans())
def test_it_is_polars_answer_sorted_or_not(pairs, in_order):
    frame = pl.DataFrame(pairs, schema={"system": pl.String, "query": pl.Int64}, orient="row")
    if in_order:
        frame = frame.sort("system", "query", nulls_last=True)
    for keys in (["system", "query"], ["query"], ["system"]):
        expected = frame.select(pl.struct(keys).is_duplicated().any()).item() or False
        assert has_repeated_keys(frame, keys) == expected, keys


def test_an_ordering_refuses_a_sorted_metrics_table_with_a_repeated_ranking():
    metrics = pl.DataFrame(
        {"system": ["a", "a", "b", "b"], "query": [1, 1, 1, 2], "AP": [0.1, 0.2, 0.3, 0.4]}
    )
    with pytest.raises(InputError, match=r"several rows for one \(by…, system, query\)"):
        aggregate.order(metrics, "AP", method="mean")
    assert aggregate.order(metrics.unique(["system", "query"], keep="first"), "AP").height == 2
