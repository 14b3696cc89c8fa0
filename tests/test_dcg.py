"""DCG and IDCG (trec_eval 10.0's ``dcg`` and ``ideal_dcg``) against a direct computation
from the run and the qrels, rank by rank, with gain maps, 'exp' and cut-offs; and nDCG as
their ratio. trec_eval's own lines are checked in tests/test_cli_trec_eval.py."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.metrics import parse_measure

GRADES = st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=1, max_size=12)
GAIN_MAPS = st.one_of(
    st.none(),
    st.just("exp"),
    st.fixed_dictionaries({1: st.sampled_from([-1.0, 0.0, 1.0, 2.0]), 3: st.just(7.0)}),
)


def _gain(grade: int, gains: object) -> float:
    if gains == "exp":
        return 2.0**grade - 1.0
    return float(gains.get(grade, grade)) if isinstance(gains, dict) else float(grade)


def _name(family: str, gains: object, k: int | None) -> str:
    params = "" if gains is None else f"(gains={gains!r})"
    return f"{family}{params}" + ("" if k is None else f"@{k}")


@settings(max_examples=60, deadline=None)
@given(grades=GRADES, missed=st.lists(st.sampled_from([1, 2, 3]), max_size=3),
       gains=GAIN_MAPS, k=st.one_of(st.none(), st.integers(1, 13)))  # fmt: skip
def test_dcg_and_idcg_are_the_sums_rank_by_rank(grades, missed, gains, k):
    run = pl.DataFrame({"system": "s", "query": "q", "doc": [f"d{i}" for i in range(len(grades))],
                        "score": [float(len(grades) - i) for i in range(len(grades))]})  # fmt: skip
    judged = [(f"d{i}", g) for i, g in enumerate(grades) if g is not None]
    judged += [(f"m{i}", g) for i, g in enumerate(missed)] + [("always", 1)]
    qrels = pl.DataFrame(judged, schema=["doc", "relevance"], orient="row").with_columns(
        query=pl.lit("q")
    )
    names = [_name(f, gains, k) for f in ("DCG", "IDCG", "nDCG")]
    row = lf.evaluate(run, qrels, names).row(0, named=True)
    top = grades if k is None else grades[:k]
    dcg = sum(_gain(g, gains) / math.log2(i + 2) for i, g in enumerate(top) if g)
    relevant = [g for g in [*grades, *missed, 1] if g]
    ideal = sorted((_gain(g, gains) for g in relevant if _gain(g, gains) > 0), reverse=True)
    idcg = sum(gain / math.log2(j + 2) for j, gain in enumerate(ideal[:k]))
    dcg_name, idcg_name, ndcg_name = (parse_measure(name).name for name in names)
    assert row[dcg_name] == pytest.approx(dcg, abs=1e-12)
    assert row[idcg_name] == pytest.approx(idcg, abs=1e-12)
    assert row[ndcg_name] == pytest.approx(dcg / idcg if idcg > 0 else 0.0, abs=1e-12)


def test_binary_dcg_of_a_small_ranking_by_hand():
    positions = pl.DataFrame(
        {"positions": [[1, 3], []], "n_rel": [3, 1]},
        schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32},
    )
    got = positions.select(
        dcg=pl.col("positions").lexi.dcg(), idcg=pl.col("positions").lexi.idcg(2)
    ).rows()
    assert got == [(1.5, pytest.approx(1 + 1 / math.log2(3))), (0.0, 1.0)]
