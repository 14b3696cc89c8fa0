"""Lexicographic preferences: kernels, expressions, pairs and preferences (docs/definitions.md §3).

The kernels are checked against a slow pure-Python reference written from the definitions
(imputed position vectors with a finite corpus size), and the whole pipeline against
pref_eval's output on the toy fixture (tests/data/toy, provenance in tests/data/README.md).
"""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lexiframe
from lexiframe import _kernels
from lexiframe.aggregate import summarize_preferences
from lexiframe.errors import InputError, SchemaError, UnknownMeasureError
from lexiframe.preferences import (
    delta_rr,
    first_difference,
    last_difference,
    lexiprecision,
    lexirecall,
    pairs,
    preference_measure,
    preferences,
    rr_lexiprecision,
)

TOY = Path(__file__).parent / "data" / "toy"
POSITIONS = pl.List(pl.UInt32)

# --- the pure-Python reference ---------------------------------------------------------------

CORPUS = 10_000
"""A finite corpus size n, larger than any position the tests draw."""


def imputed(positions: list[int], m: int, n: int = CORPUS) -> list[int]:
    """p̂: retrieved positions, then n − (m − i) for the unretrieved levels i > r."""
    return list(positions) + [n - (m - i) for i in range(len(positions) + 1, m + 1)]


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


def reference(a: list[int], b: list[int], m: int | None = None) -> dict[str, object]:
    """Every pair quantity of docs/definitions.md §3 for rankings a and b of a query with m
    relevant documents."""
    m = max(len(a), len(b)) if m is None else m
    pa_, pb_ = imputed(a, m), imputed(b, m)
    differ = [i for i in range(1, m + 1) if pa_[i - 1] != pb_[i - 1]]
    i_star = differ[0] if differ else None
    j_star = differ[-1] if differ else None

    def rr_at(p: list[int], level: int) -> float:
        return 1.0 / p[level - 1] if level <= len(p) else 0.0

    return {
        "i": i_star,
        "j": j_star,
        "sgnLP": 0 if i_star is None else sign(pb_[i_star - 1] - pa_[i_star - 1]),
        "rrLP": 0.0 if i_star is None else rr_at(a, i_star) - rr_at(b, i_star),
        "sgnLR": 0 if j_star is None else sign(pb_[j_star - 1] - pa_[j_star - 1]),
    }


def reference_delta_rr(a: list[int], b: list[int], level: int) -> float:
    rr_a = 1.0 / a[level - 1] if level <= len(a) else 0.0
    rr_b = 1.0 / b[level - 1] if level <= len(b) else 0.0
    return rr_a - rr_b


def rr(a: list[int]) -> float:
    return 1.0 / a[0] if a else 0.0


def tse(a: list[int], m: int) -> float:
    """TSE with the reciprocal-rank exposure and a finite n: 1/p̂_m."""
    return 1.0 / imputed(a, m)[m - 1]


# --- strategies --------------------------------------------------------------------------------

# Small depths so that ties, shared prefixes and prefix lists are common.
ranking = st.lists(st.integers(1, 9), unique=True, max_size=6).map(sorted)
ranking_pairs = st.lists(st.tuples(ranking, ranking), min_size=1, max_size=25)


def frame_of(pairs_: list[tuple[list[int], list[int]]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"a": [a for a, _ in pairs_], "b": [b for _, b in pairs_]},
        schema={"a": POSITIONS, "b": POSITIONS},
    )


EXPRESSIONS = {
    "sgnLP": lexiprecision("a", "b"),
    "rrLP": rr_lexiprecision("a", "b"),
    "sgnLR": lexirecall("a", "b"),
    "i": first_difference("a", "b"),
    "j": last_difference("a", "b"),
}


def evaluate(pairs_: list[tuple[list[int], list[int]]], lazy: bool = False) -> list[dict]:
    frame = frame_of(pairs_)
    exprs = [expr.alias(name) for name, expr in EXPRESSIONS.items()]
    if lazy:
        return frame.lazy().select(exprs).collect(engine="streaming").to_dicts()
    return frame.select(exprs).to_dicts()


# --- hand examples -----------------------------------------------------------------------------

HAND = [
    # a, b, i*, j*, sgnLP, rrLP, sgnLR
    ([1, 4], [1, 5], 2, 2, 1, 1 / 4 - 1 / 5, 1),
    ([1, 2], [1], 2, 2, 1, 1 / 2, 1),  # b is a prefix of a: the longer list wins
    ([1], [1, 2], 2, 2, -1, -1 / 2, -1),
    ([2], [1, 50], 1, 2, -1, 1 / 2 - 1, -1),  # sgnLR: b retrieved more
    ([1, 9], [2, 8], 1, 2, 1, 1 - 1 / 2, -1),  # LP from the top, LR from the bottom
    ([3, 5, 7], [3, 6, 7], 2, 2, 1, 1 / 5 - 1 / 6, 1),
    ([5], [], 1, 1, 1, 1 / 5, 1),  # an empty list (a skipped query) is the worst case
    ([], [], None, None, 0, 0.0, 0),
    ([2, 3], [2, 3], None, None, 0, 0.0, 0),  # identical
]


@pytest.mark.parametrize(("a", "b", "i", "j", "sgnLP", "rrLP", "sgnLR"), HAND)
def test_hand_examples(a, b, i, j, sgnLP, rrLP, sgnLR):
    (row,) = evaluate([(a, b)])
    assert row == {
        "sgnLP": sgnLP,
        "rrLP": rrLP,
        "sgnLR": sgnLR,
        "i": i,
        "j": j,
    }
    assert reference(a, b) == {"i": i, "j": j, "sgnLP": sgnLP, "rrLP": rrLP, "sgnLR": sgnLR}


def test_delta_rr_hand():
    frame = frame_of([([1, 4], [1, 5]), ([2], [1, 2]), ([], [])])
    assert frame.select(delta_rr("a", "b", 1)).to_series().to_list() == [0.0, -0.5, 0.0]
    assert frame.select(delta_rr("a", "b", 2)).to_series().to_list() == [
        1 / 4 - 1 / 5,
        -0.5,
        0.0,
    ]


@pytest.mark.parametrize("level", [0, -1, 1.5, True])
def test_delta_rr_rejects_bad_levels(level):
    with pytest.raises(ValueError, match="recall level"):
        delta_rr("a", "b", level)


def test_delta_rr_refuses_a_level_beyond_any_ranking():
    # Checked by the one integer check, not left to overflow in the kernel.
    with pytest.raises(InputError, match="level must be at most 4294967295"):
        delta_rr("a", "b", 2**70)


def test_null_lists_give_null():
    frame = pl.DataFrame(
        {"a": [[1], None, [2]], "b": [None, [1], [2]]}, schema=dict.fromkeys("ab", POSITIONS)
    )
    out = frame.select(lexiprecision("a", "b"), lexirecall("a", "b").alias("r"))
    assert out.to_dict(as_series=False) == {"a": [None, None, 0], "r": [None, None, 0]}


def test_literal_other_is_broadcast():
    frame = pl.DataFrame({"a": [[1], [2], [1, 3]]}, schema={"a": POSITIONS})
    other = pl.lit(pl.Series([[1, 2]], dtype=POSITIONS))
    assert frame.select(lexiprecision("a", other)).to_series().to_list() == [-1, -1, -1]
    assert frame.select(lexiprecision(other, "a")).to_series().to_list() == [1, 1, 1]


def test_output_types_and_name():
    frame = frame_of([([1], [2])])
    assert frame.select(lexirecall("a", "b")).columns == ["a"]  # named after the left side
    schema = frame.select(**EXPRESSIONS, d=delta_rr("a", "b", 1)).schema
    assert dict(schema) == {
        "sgnLP": pl.Int8,
        "rrLP": pl.Float64,
        "sgnLR": pl.Int8,
        "i": pl.UInt32,
        "j": pl.UInt32,
        "d": pl.Float64,
    }


def test_other_integer_and_array_types():
    frame = pl.DataFrame({"a": [[1, 4]], "b": [[1, 5]]})  # list[i64]
    assert frame.select(lexiprecision("a", "b")).item() == 1
    arrays = frame.select(pl.col("a", "b").cast(pl.Array(pl.Int32, 2)))
    assert arrays.select(lexiprecision("a", "b")).item() == 1


def test_non_list_column_is_rejected():
    frame = pl.DataFrame({"a": [1], "b": [[1]]})
    with pytest.raises(SchemaError, match="list of positions"):
        frame.select(lexiprecision("a", "b"))


def test_in_group_by_and_over():
    frame = frame_of([([1], [2]), ([2], [1]), ([3], [3])]).with_columns(g=pl.Series([1, 1, 2]))
    agg = frame.group_by("g").agg(lexiprecision("a", "b").sum()).sort("g")
    assert agg["a"].to_list() == [0, 0]


# --- properties against the reference ----------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(ranking_pairs, st.booleans())
@example([([], [])], False)
@example([([1], [])], True)
@example([([1, 2], [1, 2, 3]), ([1, 2, 3], [1, 2])], False)
@example([([4], [4]), ([1, 5], [1, 6])], True)
def test_matches_reference(pairs_, lazy):
    for (a, b), row in zip(pairs_, evaluate(pairs_, lazy), strict=True):
        expected = reference(a, b)
        assert row["i"] == expected["i"]
        assert row["j"] == expected["j"]
        assert row["sgnLP"] == expected["sgnLP"]
        assert row["rrLP"] == expected["rrLP"]  # bit-identical: same float operations
        assert row["sgnLR"] == expected["sgnLR"]


@settings(max_examples=200, deadline=None)
@given(ranking_pairs, st.integers(1, 8))
def test_delta_rr_matches_reference(pairs_, level):
    got = frame_of(pairs_).select(delta_rr("a", "b", level)).to_series().to_list()
    assert got == [reference_delta_rr(a, b, level) for a, b in pairs_]


@settings(max_examples=300, deadline=None)
@given(ranking_pairs, st.integers(0, 3))
def test_invariants(pairs_, extra_relevant):
    for (a, b), row in zip(pairs_, evaluate(pairs_), strict=True):
        # sgnLP = sign(rrLP)
        assert row["sgnLP"] == sign(row["rrLP"])
        # agreement with RR wherever RR differs
        if rr(a) != rr(b):
            assert row["sgnLP"] == sign(rr(a) - rr(b))
        # agreement with TSE (finite n) wherever TSE differs
        m = max(len(a), len(b)) + extra_relevant
        if m and tse(a, m) != tse(b, m):
            assert row["sgnLR"] == sign(tse(a, m) - tse(b, m))
        # ties only for identical vectors
        assert (row["sgnLP"] == 0) == (a == b)
        assert (row["sgnLR"] == 0) == (a == b)
        assert (row["i"] is None) == (a == b) == (row["j"] is None)


@settings(max_examples=200, deadline=None)
@given(ranking_pairs)
def test_antisymmetry(pairs_):
    forward = evaluate(pairs_)
    backward = evaluate([(b, a) for a, b in pairs_])
    for f, g in zip(forward, backward, strict=True):
        assert f["sgnLP"] == -g["sgnLP"]
        assert f["rrLP"] == -g["rrLP"]
        assert f["sgnLR"] == -g["sgnLR"]
        assert (f["i"], f["j"]) == (g["i"], g["j"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ranking, ranking, ranking), min_size=1, max_size=15))
def test_transitivity(triples):
    ab = evaluate([(a, b) for a, b, _ in triples])
    bc = evaluate([(b, c) for _, b, c in triples])
    ac = evaluate([(a, c) for a, _, c in triples])
    for x, y, z in zip(ab, bc, ac, strict=True):
        for name in ("sgnLP", "sgnLR"):
            if x[name] >= 0 and y[name] >= 0:
                assert z[name] >= 0
                assert (z[name] > 0) == (x[name] > 0 or y[name] > 0)


# --- buffers of Arrow list columns -------------------------------------------------------------


LISTS = [[1, 4], [], None, [2, 3, 9], [7]]


def _as_lists(buffers: _kernels.ListBuffers) -> list[list[int] | None]:
    out = []
    for row in range(len(buffers)):
        if buffers.valid is not None and not buffers.valid[row]:
            out.append(None)
        else:
            start, end = buffers.offsets[row], buffers.offsets[row + 1]
            out.append(buffers.values[start:end].tolist())
    return out


@pytest.mark.parametrize("arrow_type", [pa.list_(pa.uint32()), pa.large_list(pa.int64())])
def test_list_buffers_slices_and_chunks(arrow_type):
    array = pa.array(LISTS, type=arrow_type)
    assert _as_lists(_kernels.list_buffers(array)) == LISTS
    assert _as_lists(_kernels.list_buffers(array.slice(2, 2))) == LISTS[2:4]
    assert _as_lists(_kernels.list_buffers(array.slice(3))) == LISTS[3:]
    chunked = pa.chunked_array([array.slice(0, 2), array.slice(2, 1), array.slice(3)])
    assert _as_lists(_kernels.list_buffers(chunked)) == LISTS
    empty = pa.chunked_array([], type=arrow_type)
    assert _as_lists(_kernels.list_buffers(empty)) == []


def test_list_buffers_is_zero_copy_for_one_chunk():
    array = pa.array([[1, 2], [3]], type=pa.large_list(pa.uint32()))
    buffers = _kernels.list_buffers(array)
    assert np.shares_memory(buffers.values, np.frombuffer(array.values.buffers()[1], np.uint32))


def test_polars_series_with_several_chunks():
    first = pl.Series("a", LISTS[:2], dtype=POSITIONS)
    second = pl.Series("a", LISTS[2:], dtype=POSITIONS)
    series = first.append(second)
    assert series.n_chunks() == 2
    assert _as_lists(_kernels.list_buffers(series)) == LISTS
    frame = pl.DataFrame({"a": series, "b": pl.Series(LISTS[::-1], dtype=POSITIONS)})
    got = frame.select(lexiprecision("a", "b")).to_series().to_list()
    expected = [
        None if a is None or b is None else reference(a, b)["sgnLP"]
        for a, b in zip(LISTS, LISTS[::-1], strict=True)
    ]
    assert got == expected


def test_kernels_on_row_indices():
    values = np.array([1, 4, 1, 5, 1, 2, 3], dtype=np.uint32)
    offsets = np.array([0, 2, 4, 4, 7])
    lists = [[1, 4], [1, 5], [], [1, 2, 3]]
    rows_a, rows_b = np.array([0, 1, 2, 3, 3, 0]), np.array([1, 0, 3, 0, 3, 2])
    args = (values, offsets, rows_a, values, offsets, rows_b)
    expected = [reference(lists[a], lists[b]) for a, b in zip(rows_a, rows_b, strict=True)]
    as_level = [-1 if e["i"] is None else e["i"] for e in expected]
    assert _kernels.first_difference(*args).tolist() == as_level
    assert _kernels.last_difference(*args).tolist() == [
        -1 if e["j"] is None else e["j"] for e in expected
    ]
    assert _kernels.lexiprecision(*args).tolist() == [e["sgnLP"] for e in expected]
    assert _kernels.rr_lexiprecision(*args).tolist() == [e["rrLP"] for e in expected]
    assert _kernels.lexirecall(*args).tolist() == [e["sgnLR"] for e in expected]
    assert _kernels.lexiprecision(*args).dtype == np.int8


# --- pairs and preferences ---------------------------------------------------------------------


def random_positions(seed: int, tracks: int = 2, systems: int = 6, queries: int = 5):
    rng = np.random.default_rng(seed)
    rows = []
    for track in range(tracks):
        for query in range(queries):
            m = int(rng.integers(1, 6))
            for system in range(systems):
                r = int(rng.integers(0, m + 1))
                positions = sorted(rng.choice(np.arange(1, 8), size=r, replace=False).tolist())
                rows.append((f"t{track}", f"s{system}", query, positions, m, 10))
    return pl.DataFrame(
        rows,
        schema={
            "track": pl.String,
            "system": pl.String,
            "query": pl.Int64,
            "positions": POSITIONS,
            "n_rel": pl.UInt32,
            "n_ret": pl.UInt32,
        },
        orient="row",
    ).sample(fraction=1.0, shuffle=True, seed=seed)


def test_pairs_schema_and_order():
    pos = random_positions(0)
    got = pairs(pos, by="track")
    assert got.columns == [
        "track",
        "query",
        "system_a",
        "system_b",
        "positions_a",
        "positions_b",
        "n_rel",
        "n_ret_a",
        "n_ret_b",
    ]
    assert got.height == 2 * 5 * 15
    assert (got["system_a"] < got["system_b"]).all()
    assert got.equals(got.sort("track", "query", "system_a", "system_b"))
    both = pairs(pos.lazy(), by="track", ordered=True)
    assert isinstance(both, pl.LazyFrame)
    both = both.collect()
    assert both.height == 2 * got.height
    assert both.filter(pl.col("system_a") > pl.col("system_b")).height == got.height


@pytest.mark.parametrize("lazy", [False, True])
def test_preferences_equal_pairs_with_expressions(lazy):
    pos = random_positions(1)
    frame = pos.lazy() if lazy else pos
    got = preferences(frame, by="track", extra=["first_difference", "last_difference"])
    assert isinstance(got, pl.LazyFrame) == lazy
    if lazy:
        got = got.collect()
    keys = ["track", "query", "system_a", "system_b"]
    expected = pairs(pos, by="track").select(
        *keys,
        sgnLP=lexiprecision("positions_a", "positions_b"),
        rrLP=rr_lexiprecision("positions_a", "positions_b"),
        sgnLR=lexirecall("positions_a", "positions_b"),
        first_difference=first_difference("positions_a", "positions_b"),
        last_difference=last_difference("positions_a", "positions_b"),
    )
    assert got.equals(expected)
    lists = {(r["track"], r["query"], r["system"]): r["positions"] for r in pos.to_dicts()}
    for row in got.to_dicts():
        a = lists[row["track"], row["query"], row["system_a"]]
        b = lists[row["track"], row["query"], row["system_b"]]
        want = reference(a, b)
        assert (row["sgnLP"], row["rrLP"], row["sgnLR"]) == (
            want["sgnLP"],
            want["rrLP"],
            want["sgnLR"],
        )
        assert (row["first_difference"], row["last_difference"]) == (want["i"], want["j"])


def test_preferences_measure_names():
    pos = random_positions(2, tracks=1)
    got = preferences(pos, ["LexiRecall", "rrlexiprecision", "SGNLP", "sgnLR"])
    assert got.columns == ["query", "system_a", "system_b", "sgnLR", "rrLP", "sgnLP"]
    assert got.schema["sgnLR"] == pl.Int8
    assert preference_measure("lexiprecision").name == "sgnLP"
    with pytest.raises(UnknownMeasureError, match=r"sgnLP.*rrLP.*sgnLR"):
        preferences(pos, ["lexiprecision", "ndcg"])
    with pytest.raises(ValueError, match="extra"):
        preferences(pos, extra=["middle_difference"])


def test_preferences_input_errors():
    pos = random_positions(3)
    with pytest.raises(InputError, match="several rows"):
        preferences(pos)  # two tracks share (query, system) keys: by="track" is missing
    with pytest.raises(SchemaError, match="positions"):
        preferences(pos.drop("positions"), by="track")


def test_preferences_empty_and_single_system():
    pos = random_positions(4, tracks=1, systems=1)
    assert preferences(pos).height == 0
    assert preferences(pos.clear()).schema["rrLP"] == pl.Float64


# --- parity with pref_eval on the toy fixture --------------------------------------------------


def _read_trec(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


def toy_reference_positions() -> pl.DataFrame:
    """The toy positions frame in plain Python: trec_eval order (score descending, then doc
    id descending as a string); judged queries with a relevant document; a skipped query is
    an empty list."""
    relevant: dict[str, set[str]] = {}
    for query, _, doc, grade in _read_trec(TOY / "qrels.txt"):
        relevant.setdefault(query, set())
        if int(grade) >= 1:
            relevant[query].add(doc)
    queries = sorted(q for q, docs in relevant.items() if docs)
    rows = []
    for path in sorted((TOY / "runs").iterdir()):
        ranked: dict[str, list[tuple[float, str]]] = {}
        for query, _, doc, _, score, _ in _read_trec(path):
            ranked.setdefault(query, []).append((float(score), doc))
        for query in queries:
            docs = [doc for _, doc in sorted(ranked.get(query, []), reverse=True)]
            hits = [rank for rank, doc in enumerate(docs, 1) if doc in relevant[query]]
            rows.append((path.name, query, hits))
    return pl.DataFrame(
        rows,
        schema={"system": pl.String, "query": pl.String, "positions": POSITIONS},
        orient="row",
    )


def toy_library_positions() -> pl.DataFrame:
    runs = [row for path in sorted((TOY / "runs").iterdir()) for row in _read_trec(path)]
    run = pl.DataFrame(
        {
            "system": [r[5] for r in runs],
            "query": [r[0] for r in runs],
            "doc": [r[2] for r in runs],
            "score": [float(r[4]) for r in runs],
        }
    )
    qrels_rows = _read_trec(TOY / "qrels.txt")
    qrels = pl.DataFrame(
        {
            "query": [r[0] for r in qrels_rows],
            "doc": [r[2] for r in qrels_rows],
            "relevance": [int(r[3]) for r in qrels_rows],
        }
    )
    with pytest.warns(lexiframe.DroppedQueriesWarning):
        return lexiframe.positions(run, qrels)


def pref_eval_lines() -> list[dict]:
    lines = (TOY / "expected" / "pref_eval.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(params=["reference", "lexiframe"])
def toy_positions(request) -> pl.DataFrame:
    build = toy_reference_positions if request.param == "reference" else toy_library_positions
    return build()


def test_toy_per_query_parity(toy_positions):
    got = preferences(toy_positions)
    by_key = {(r["query"], r["system_a"], r["system_b"]): r for r in got.to_dicts()}
    expected = [x for x in pref_eval_lines() if x.get("type") == "preference"]
    assert len(expected) == len(by_key) == 20 * 28
    for line in expected:
        flip = 1 if line["runi"] < line["runj"] else -1
        row = by_key[(line["qid"], *sorted((line["runi"], line["runj"])))]
        assert row["sgnLP"] == flip * line["lexiprecision"], line
        assert row["rrLP"] == pytest.approx(flip * line["rrlexiprecision"], abs=1e-12), line
        assert row["sgnLR"] == flip * line["lexirecall"], line


def test_toy_mean_parity(toy_positions):
    summary = summarize_preferences(preferences(toy_positions))
    expected = [x for x in pref_eval_lines() if x["qid"] == "all"]
    assert len(expected) == summary.height == 28
    by_pair = {(r["system_a"], r["system_b"]): r for r in summary.to_dicts()}
    for line in expected:
        row = by_pair[(line["runi"], line["runj"])]
        assert row["n_queries"] == 20
        for ours, theirs in [
            ("sgnLP", "lexiprecision"),
            ("rrLP", "rrlexiprecision"),
            ("sgnLR", "lexirecall"),
        ]:
            assert math.isclose(row[ours], line[theirs], abs_tol=1e-12), (ours, line)


def test_toy_pairs_cover_every_system_pair(toy_positions):
    got = preferences(toy_positions)
    systems = sorted(toy_positions["system"].unique())
    assert sorted(set(zip(got["system_a"], got["system_b"], strict=True))) == list(
        combinations(systems, 2)
    )
