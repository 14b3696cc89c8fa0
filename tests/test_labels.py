"""Fractional labels (``labels="gain"``, ``labels="probability"``; docs/definitions.md §2,
"Fractional labels").

The expected values under independent Bernoulli relevance are checked against an exact
enumeration of every relevance outcome of small rankings, each measured by a direct
implementation here and weighted by its probability; real gains against nDCG computed here
from the run and the qrels; and the refusals by their messages.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.errors import InputError

ERR_STOP = 1 / 2**4
"""ERR's stopping probability of a relevant document on binary relevance (max_grade 4)."""
GAMMA = 0.5


def _run(n: int) -> pl.DataFrame:
    """One ranking of n documents, d0 on top."""
    return pl.DataFrame(
        {
            "system": ["s"] * n,
            "query": ["q"] * n,
            "doc": [f"d{i}" for i in range(n)],
            "score": [float(n - i) for i in range(n)],
        }
    )


def _qrels(labels: list[float | None]) -> pl.DataFrame:
    """The judged documents' labels (None: the document is not in the qrels)."""
    judged = [(f"d{i}", p) for i, p in enumerate(labels) if p is not None]
    return pl.DataFrame(
        {
            "query": ["q"] * len(judged),
            "doc": [doc for doc, _ in judged],
            "relevance": [label for _, label in judged],
        },
        schema={"query": pl.String, "doc": pl.String, "relevance": pl.Float64},
    )


# Direct binary measures of a relevance vector (rank i + 1 for index i).
def _precision(rel: tuple[int, ...], k: int) -> float:
    return sum(rel[:k]) / k


def _success(rel: tuple[int, ...], k: int) -> float:
    return float(any(rel[:k]))


def _rr(rel: tuple[int, ...], k: int | None) -> float:
    top = rel if k is None else rel[:k]
    return next((1 / (i + 1) for i, r in enumerate(top) if r), 0.0)


def _err(rel: tuple[int, ...], k: int | None) -> float:
    total, reach = 0.0, 1.0
    for i, r in enumerate(rel if k is None else rel[:k]):
        stop = ERR_STOP * r
        total += reach * stop / (i + 1)
        reach *= 1 - stop
    return total


def _rbp(rel: tuple[int, ...]) -> float:
    return (1 - GAMMA) * sum(r * GAMMA**i for i, r in enumerate(rel))


def _dcg(rel: tuple[int, ...], k: int | None) -> float:
    return sum(r / math.log2(i + 2) for i, r in enumerate(rel if k is None else rel[:k]))


def _measures(k: int) -> dict[str, object]:
    """Each measure's name and its direct binary implementation."""
    return {
        f"P@{k}": lambda rel: _precision(rel, k),
        f"Success@{k}": lambda rel: _success(rel, k),
        "RR": lambda rel: _rr(rel, None),
        f"RR@{k}": lambda rel: _rr(rel, k),
        "ERR": lambda rel: _err(rel, None),
        f"ERR@{k}": lambda rel: _err(rel, k),
        f"RBP(p={GAMMA})": _rbp,
        "DCG": lambda rel: _dcg(rel, None),
        f"DCG@{k}": lambda rel: _dcg(rel, k),
        f"DCG(gains='exp')@{k}": lambda rel: _dcg(rel, k),  # 2^1 - 1: a relevant one gains 1
    }


def _enumerated(chances: list[float], measure: object) -> float:
    """E[measure] over every relevance outcome, each weighted by its probability."""
    expected = 0.0
    for rel in itertools.product((0, 1), repeat=len(chances)):
        weight = math.prod(p if r else 1 - p for p, r in zip(chances, rel, strict=True))
        expected += weight * measure(rel)  # type: ignore[operator]
    return expected


probability = st.one_of(
    st.sampled_from([0.0, 1.0]), st.floats(0, 1, allow_nan=False, allow_subnormal=False)
)
labels = st.lists(st.one_of(st.none(), probability), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(labels=labels, k=st.integers(1, 9))
def test_the_expectations_are_the_mean_over_every_relevance_outcome(labels, k):
    chances = [p or 0.0 for p in labels]  # an unjudged document is never relevant
    assume(any(chances))  # else the query is not evaluated (checked below)
    frame = lf.evaluate(_run(len(labels)), _qrels(labels), list(_measures(k)), labels="probability")
    row = frame.row(0, named=True)
    for name, measure in _measures(k).items():
        assert row[name] == pytest.approx(_enumerated(chances, measure), abs=1e-12), name


@settings(max_examples=40, deadline=None)
@given(
    grades=st.lists(st.one_of(st.none(), st.sampled_from([0, 1])), min_size=1, max_size=8),
    k=st.integers(1, 9),
)
def test_probabilities_of_0_and_1_are_the_binary_measures(grades, k):
    assume(any(grades))
    names = [f"P@{k}", f"Success@{k}", "RR", f"RR@{k}", "ERR", f"ERR@{k}", f"RBP(p={GAMMA})",
             "DCG", f"DCG@{k}"]  # fmt: skip
    run = _run(len(grades))
    whole = _qrels(grades).with_columns(pl.col("relevance").cast(pl.Int64))
    binary = lf.evaluate(run, whole, names)
    expected = lf.evaluate(run, whole.cast({"relevance": pl.Float64}), names, labels="probability")
    assert_frame_equal(expected, binary, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    gains=st.lists(
        st.one_of(st.none(), st.floats(0, 10, allow_nan=False, allow_subnormal=False)),
        min_size=1,
        max_size=8,
    ),
    k=st.integers(1, 9),
)
def test_real_gains_are_ndcg_gains(gains, k):
    positive = [g for g in gains if g]
    assume(any(g >= 0.5 for g in positive))  # a relevant document: the query is evaluated
    got = lf.evaluate(
        _run(len(gains)), _qrels(gains), ["nDCG", f"nDCG@{k}", f"P@{k}"], labels="gain",
        threshold=0.5,
    ).row(0, named=True)  # fmt: skip
    dcg = [(g or 0.0) / math.log2(i + 2) for i, g in enumerate(gains)]
    ideal = [g / math.log2(i + 2) for i, g in enumerate(sorted(positive, reverse=True))]
    assert got["nDCG"] == pytest.approx(sum(dcg) / sum(ideal), abs=1e-12)
    assert got[f"nDCG@{k}"] == pytest.approx(sum(dcg[:k]) / sum(ideal[:k]), abs=1e-12)
    hits = sum(1 for g in gains[:k] if g is not None and g >= 0.5)
    assert got[f"P@{k}"] == pytest.approx(hits / k)


def test_every_positive_label_makes_a_query_evaluated_under_probabilities():
    qrels = _qrels([0.3, 0.0, None])
    assert lf.evaluate(_run(3), qrels, ["P@2"], labels="probability")["P@2"].item() == 0.15
    # As gains, relevance is decided by the threshold: no label reaches 1.
    with pytest.warns(lf.errors.DroppedQueriesWarning, match="without a relevant document"):
        assert lf.evaluate(_run(3), qrels, ["P@2"], labels="gain").height == 0
    # With no positive label, no chance of a relevant document: not evaluated either.
    with pytest.warns(lf.errors.DroppedQueriesWarning, match="without a relevant document"):
        assert lf.evaluate(_run(2), _qrels([0.0]), ["P@2"], labels="probability").height == 0


def test_coverage_counts_the_queries_each_reading_evaluates():
    qrels = _qrels([0.3, 0.0, None])
    chances = lf.coverage(_run(3), qrels, labels="probability").row(0, named=True)
    gains = lf.coverage(_run(3), qrels, labels="gain").row(0, named=True)
    assert (chances["evaluated"], chances["no_relevant"]) == (1, 0)
    assert (gains["evaluated"], gains["no_relevant"]) == (0, 1)


def test_fractional_grades_undeclared_are_refused_naming_the_option(tmp_path: Path):
    with pytest.raises(InputError, match=r"relevance=0\.7.*labels='gain' or labels='probability'"):
        lf.evaluate(_run(2), _qrels([0.7, 0.0]), ["P@1"])
    path = tmp_path / "qrels.txt"
    path.write_text("q 0 d0 0.7\n")
    with pytest.raises(InputError, match=r"'0\.7' is not an integer.*labels='gain'"):
        lf.read_qrels(path)
    assert lf.read_qrels(path, labels="gain")["relevance"].to_list() == [0.7]
    with pytest.raises(InputError, match=r"threshold must be an integer grade, not 0\.5.*labels="):
        lf.evaluate(_run(2), _qrels([1.0, 0.0]), ["P@1"], threshold=0.5)


def test_measures_without_a_closed_form_refuse_probabilities_saying_why():
    for name in ("AP", "R@5", "nDCG", "IDCG"):
        with pytest.raises(InputError, match=rf"^{name} has no closed-form.*ratio.*P, .*ERR"):
            lf.evaluate(_run(2), _qrels([0.7, 0.0]), [name], labels="probability")
    with pytest.raises(InputError, match=r"IDCG is the DCG of the random set"):
        lf.evaluate(_run(2), _qrels([0.7, 0.0]), ["IDCG@2"], labels="probability")
    with pytest.raises(InputError, match=r"no grade to map: name DCG@5$"):
        lf.evaluate(_run(2), _qrels([0.7, 0.0]), ["DCG(gains={1: 3})@5"], labels="probability")
    with pytest.raises(InputError, match=r"rel=.*e\.g\. P@5"):
        lf.evaluate(_run(2), _qrels([0.7, 0.0]), ["P(rel=2)@5"], labels="probability")
    frame = lf.positions(_run(2), _qrels([0.7, 0.0]), labels="probability")
    with pytest.raises(InputError, match=r"^AP has no closed-form"):
        lf.measures(frame, ["AP"], labels="probability")


@pytest.mark.parametrize(
    ("label", "labels", "problem"),
    [
        (1.5, "probability", r"probabilities in \[0, 1\]"),
        (-0.5, "gain", "non-negative finite gains"),
        (float("nan"), "gain", "non-negative finite gains"),
        (float("inf"), "probability", r"probabilities in \[0, 1\]"),
    ],
)
def test_labels_out_of_their_range_are_refused(label, labels, problem):
    with pytest.raises(InputError, match=rf"with labels='{labels}' the labels must be {problem}"):
        lf.evaluate(_run(2), _qrels([label, 0.0]), ["P@1"], labels=labels)


def test_parquet_qrels_keep_their_fractional_labels(tmp_path: Path):
    path = tmp_path / "qrels.parquet"
    _qrels([0.25, 1.0]).write_parquet(path)
    assert lf.read_qrels(path, labels="probability")["relevance"].to_list() == [0.25, 1.0]
    with pytest.raises(InputError, match="grades must be whole numbers"):
        lf.read_qrels(path)


def test_the_option_is_checked():
    with pytest.raises(InputError, match="labels must be 'grades' or 'gain' or 'probability'"):
        lf.PositionsOptions(labels="float")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="grades=False drops the labels"):
        lf.PositionsOptions(labels="gain", grades=False)


def test_the_command_line_reads_declared_labels_and_refuses_in_flag_words(tmp_path, capsys):
    from lexiframe.cli import main

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q 0 d0 0.25\nq 0 d1 0\nq 0 d2 1\n")
    run.write_text("".join(f"q Q0 d{i} {i + 1} {3 - i} s\n" for i in range(3)))
    out = tmp_path / "out.parquet"
    argv = ["evaluate", "--qrels", str(qrels), str(run), "-m", "P@2", "-m", "RR", "-o", str(out)]
    assert main([*argv, "--labels", "probability"]) == 0
    # E[P@2] = (0.25 + 0) / 2; E[RR] = 0.25 + 0.75 · 1/3.
    assert pl.read_parquet(out).select("P@2", "RR").row(0) == pytest.approx((0.125, 0.5))
    capsys.readouterr()
    assert main(argv) == 2
    assert "lexiframe evaluate --labels gain (or probability)" in capsys.readouterr().err
    assert main([*argv, "-m", "AP", "--labels", "probability"]) == 2
    err = capsys.readouterr().err
    assert "AP has no closed-form" in err and "--labels gain --threshold 0.5" in err
    assert len(err.strip().splitlines()) == 1
