"""Several qrels sets at once: a by= key that only the qrels carry (``qrels``, from
``lf.concat_qrels``) evaluates every run against every set in one call. Each result is
checked against the sets evaluated one call each and stacked (the independent
computation), on the toy track with a second qrels that judges a query the first does not,
leaves out one the first judges and judges another without a relevant document."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe import stats
from lexiframe.cli import main
from lexiframe.errors import InputError, LexiframeWarning
from lexiframe.ranking import lists
from tests.conftest import DATA, polars_to_pandas

RUNS = sorted((DATA / "toy" / "runs").iterdir())
QRELS = DATA / "toy" / "qrels.txt"
MEASURES = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "ASL", "ERR@10", "R@1000", "IPrec@0.3"]
ONLY_HUMAN, ONLY_LLM, NONE_RELEVANT_LLM = "401", "888", "402"


def llm_qrels(run: pl.DataFrame, human: pl.DataFrame) -> pl.DataFrame:
    """A second qrels: without query 401, every judgment of 402 non-relevant, a grade up
    for the documents whose id ends in an even digit, and query 888 (which the human
    qrels do not judge) judged on the documents the run retrieves for it."""
    even = pl.col("doc").str.slice(-1).is_in(list("02468"))
    assert run.filter(pl.col("query") == ONLY_LLM).height > 0
    shifted = human.filter(pl.col("query") != ONLY_HUMAN).with_columns(
        relevance=pl.when(pl.col("query") == NONE_RELEVANT_LLM)
        .then(0)
        .when(even)
        .then(pl.min_horizontal(pl.col("relevance") + 1, pl.lit(2)))
        .otherwise(pl.col("relevance"))
    )
    retrieved = run.filter(pl.col("query") == ONLY_LLM).select("query", "doc").unique().sort("doc")
    extra = retrieved.with_columns(relevance=(pl.int_range(pl.len()) % 2 == 0).cast(pl.Int64) * 2)
    return pl.concat([shifted, extra])


def _quietly(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        return call()


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = ["qrels", "system", "query"] if "query" in frame.columns else ["qrels", "system"]
    return frame.sort(keys).select(*keys, pl.exclude(keys))


def _stacked(
    sets: dict[str, pl.DataFrame], call: Callable[[pl.DataFrame], pl.DataFrame]
) -> pl.DataFrame:
    """``call(qrels)`` once per set, each named in a ``qrels`` column: one call each."""
    parts = [_quietly(lambda q=q: call(q)).with_columns(qrels=pl.lit(n)) for n, q in sets.items()]
    return pl.concat(parts)


@pytest.fixture(scope="module")
def run() -> pl.DataFrame:
    return lf.read_run(RUNS)


@pytest.fixture(scope="module")
def sets(run) -> dict[str, pl.DataFrame]:
    human = lf.read_qrels(QRELS)
    return {"human": human, "llm": llm_qrels(run, human)}


OPTIONS = {
    "defaults": {},
    "no_relevant=keep": {"no_relevant": "keep"},
    "depth=7": {"depth": 7},
    "threshold=2": {"threshold": 2},
    "condensed": {"condensed": True},
    "compat=trec_eval-9.0.8": {"compat": "trec_eval-9.0.8"},
    "compat=trec_eval-9.0.8, -c": {"compat": "trec_eval-9.0.8", "no_relevant": "keep"},
    "compat=pytrec_eval": {"compat": "pytrec_eval"},
    "partitions=3": {"partitions": 3},
}


@contextmanager
def marked_by(how: str) -> Iterator[None]:
    """Rows marked as judged by the probe (each ranking ranked once, its ranks crossed with
    the qrels sets) or by the join (the run crossed with the sets, each ranked per set):
    the join where documents are judged for more queries than MAX_JUDGMENTS_PER_DOC on
    average."""
    limit = {"probe": 10**9, "join": 0}[how]
    with patch.object(lists, "MAX_JUDGMENTS_PER_DOC", limit):
        yield


@pytest.mark.parametrize("marks", ["probe", "join"])
@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_one_call_equals_one_call_per_qrels(run, sets, options, marks):
    with marked_by(marks):
        _one_call_equals_one_call_per_qrels(run, sets, options)


def _one_call_equals_one_call_per_qrels(
    run: pl.DataFrame, sets: dict[str, pl.DataFrame], options: dict[str, Any]
) -> None:
    keyed = lf.concat_qrels(sets)
    got = _quietly(lambda: lf.evaluate(run, keyed, MEASURES, by="qrels", **options))
    expected = _stacked(sets, lambda q: lf.evaluate(run, q, MEASURES, **options))
    assert got.columns[:3] == ["qrels", "system", "query"]
    assert_frame_equal(_sorted(got), _sorted(expected), abs_tol=1e-12)
    lazy = _quietly(lambda: lf.evaluate(run.lazy(), keyed.lazy(), MEASURES, by="qrels", **options))
    assert_frame_equal(_sorted(lazy.collect()), _sorted(expected), abs_tol=1e-12)
    coverage = _quietly(lambda: lf.coverage(run, keyed, by="qrels", **options))
    assert_frame_equal(
        _sorted(coverage), _sorted(_stacked(sets, lambda q: lf.coverage(run, q, **options)))
    )


def test_each_qrels_evaluates_its_own_queries(run, sets):
    """A query judged by one set only is evaluated under that set only; a query one set
    judges without a relevant document is kept under ``no_relevant="keep"`` alone."""
    keyed = lf.concat_qrels(sets)
    got = _quietly(lambda: lf.evaluate(run, keyed, ["AP"], by="qrels"))
    queries = {name: set(got.filter(pl.col("qrels") == name)["query"]) for name in sets}
    assert ONLY_HUMAN in queries["human"] and ONLY_HUMAN not in queries["llm"]
    assert ONLY_LLM in queries["llm"] and ONLY_LLM not in queries["human"]
    assert NONE_RELEVANT_LLM in queries["human"] and NONE_RELEVANT_LLM not in queries["llm"]
    kept = _quietly(lambda: lf.evaluate(run, keyed, ["AP"], by="qrels", no_relevant="keep"))
    llm_402 = kept.filter((pl.col("qrels") == "llm") & (pl.col("query") == NONE_RELEVANT_LLM))
    assert llm_402.height == run["system"].n_unique() and (llm_402["AP"] == 0).all()


def test_means_are_grouped_by_the_qrels(run, sets):
    keyed = lf.concat_qrels(sets)
    per_query = _quietly(lambda: lf.evaluate(run, keyed, MEASURES, by="qrels"))
    means = lf.summarize(per_query, by="qrels")
    expected = _stacked(sets, lambda q: lf.summarize(lf.evaluate(run, q, MEASURES)))
    assert_frame_equal(_sorted(means), _sorted(expected).select(means.columns), abs_tol=1e-12)


def test_a_key_of_both_and_a_key_of_the_qrels_alone(run, sets):
    """by=["track", "qrels"]: the run's track joins the qrels' track; the qrels key
    crosses every ranking."""
    tracked = pl.concat(
        [run.with_columns(track=pl.lit("a")), run.with_columns(track=pl.lit("b"))]
    )
    per_track = {"a": sets, "b": {"human": sets["human"], "llm": sets["human"]}}
    qrels = pl.concat(
        [lf.concat_qrels(s).with_columns(track=pl.lit(t)) for t, s in per_track.items()]
    )
    got = _quietly(lambda: lf.evaluate(tracked, qrels, ["AP"], by=["track", "qrels"]))
    assert got.columns[:2] == ["track", "qrels"]
    for track, named in per_track.items():
        expected = _stacked(named, lambda q: lf.evaluate(run, q, ["AP"]))
        part = got.filter(pl.col("track") == track).drop("track")
        assert_frame_equal(_sorted(part), _sorted(expected))


def test_systems_given_without_the_key_get_every_qrels(run, sets):
    """systems= (a system without rows gets worst-case rows) without the qrels key: each
    system is completed under every set, as the run's own systems are."""
    keyed = lf.concat_qrels(sets)
    systems = pl.DataFrame({"system": [*run["system"].unique(), "absent"]})
    got = _quietly(lambda: lf.positions(run, keyed, by="qrels", systems=systems))
    expected = _stacked(sets, lambda q: lf.positions(run, q, systems=systems))
    assert "absent" in got["system"].to_list()
    assert_frame_equal(_sorted(got), _sorted(expected))


def test_preferences_and_the_agreement_report_read_the_frame(run, sets):
    """One keyed positions frame gives the preferences of every set, and
    stats.qrels_agreement reads the keyed frames as they come."""
    keyed = lf.concat_qrels(sets)
    frame = _quietly(lambda: lf.positions(run, keyed, by="qrels"))
    prefs = lf.preferences(frame, ["sgnLP"], by="qrels")
    expected_prefs = _stacked(sets, lambda q: lf.preferences(lf.positions(run, q), ["sgnLP"]))
    keys = ["qrels", "query", "system_a", "system_b"]
    assert_frame_equal(prefs.sort(keys), expected_prefs.select(prefs.columns).sort(keys))
    metrics = _quietly(lambda: lf.evaluate(run, keyed, ["AP", "nDCG@10"], by="qrels"))
    report = _quietly(lambda: stats.qrels_agreement(
        [metrics, prefs], ["AP", "nDCG@10", "sgnLP"], reference="human", k=3, run=run,
        judgments=keyed,
    ))  # fmt: skip
    stacked_metrics = _stacked(sets, lambda q: lf.evaluate(run, q, ["AP", "nDCG@10"]))
    expected = _quietly(lambda: stats.qrels_agreement(
        [stacked_metrics, expected_prefs], ["AP", "nDCG@10", "sgnLP"], reference="human", k=3,
        run=run, judgments=keyed,
    ))  # fmt: skip
    assert report.summary.height == 3
    assert_frame_equal(report.summary, expected.summary)
    assert_frame_equal(report.systems, expected.systems)


ids = st.sampled_from(["d1", "d2", "d3", "d4", "d5", "d6"])


@st.composite
def small_tracks(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["q1", "q2", "q3"]), ids),
            min_size=1,
            max_size=30,
            unique=True,
        )
    )
    scores = draw(st.lists(st.integers(0, 4), min_size=len(rows), max_size=len(rows)))
    run = pl.DataFrame(
        {
            "system": [r[0] for r in rows],
            "query": [r[1] for r in rows],
            "doc": [r[2] for r in rows],
            "score": [float(s) for s in scores],
        }
    )
    sets = {}
    for name in ("x", "y", "z"):
        judged = draw(
            st.lists(
                st.tuples(st.sampled_from(["q1", "q2", "q3", "q4"]), ids),
                min_size=1,
                max_size=12,
                unique=True,
            )
        )
        grades = draw(st.lists(st.integers(0, 3), min_size=len(judged), max_size=len(judged)))
        sets[name] = pl.DataFrame(
            {"query": [j[0] for j in judged], "doc": [j[1] for j in judged], "relevance": grades}
        )
    return run, sets


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    track=small_tracks(),
    keep=st.booleans(),
    depth=st.sampled_from([None, 2]),
    marks=st.sampled_from(["probe", "join"]),
)
def test_property_one_call_equals_one_call_per_qrels(track, keep, depth, marks):
    with marked_by(marks):
        _property_one_call(track, keep, depth)


def _property_one_call(
    track: tuple[pl.DataFrame, dict[str, pl.DataFrame]], keep: bool, depth: int | None
) -> None:
    run, sets = track
    options = {"no_relevant": "keep" if keep else "drop", "depth": depth}
    names = ["AP", "nDCG@3", "RR", "ASL"]
    expected_parts = []
    for name, qrels in sets.items():
        try:
            part = _quietly(lambda q=qrels: lf.evaluate(run, q, names, **options))
        except InputError:  # no relevant document anywhere: nothing of this set to evaluate
            continue
        expected_parts.append(part.with_columns(qrels=pl.lit(name)))
    got = _quietly(lambda: lf.evaluate(run, lf.concat_qrels(sets), names, by="qrels", **options))
    expected = pl.concat(expected_parts) if expected_parts else got.clear()
    assert_frame_equal(_sorted(got), _sorted(expected.select(got.columns)), abs_tol=1e-12)


def test_concat_qrels_reads_files_and_refuses_bad_input(tmp_path, sets):
    llm_file = tmp_path / "llm.txt"
    lf.write_trec_qrels(sets["llm"], llm_file)
    from_files = lf.concat_qrels({"human": QRELS, "llm": llm_file})
    assert isinstance(from_files, pl.DataFrame) and from_files.columns[0] == "qrels"
    assert from_files.group_by("qrels").len().sort("qrels")["len"].to_list() == [
        sets["human"].height,
        sets["llm"].height,
    ]
    assert isinstance(lf.concat_qrels({"a": sets["human"].lazy()}), pl.LazyFrame)
    with pytest.raises(InputError, match="mapping of names to qrels"):
        lf.concat_qrels({})
    with pytest.raises(InputError, match="already have a column 'qrels'"):
        lf.concat_qrels({"a": from_files})
    with pytest.raises(InputError, match="non-empty string"):
        lf.concat_qrels({"": sets["human"]})
    with pytest.raises(InputError, match="do not stack"):
        numbered = sets["human"].with_columns(pl.col("query").cast(pl.Int64, strict=False))
        lf.concat_qrels({"a": sets["human"], "b": numbered})
    with pytest.raises(InputError, match="the qrels named 'a': cannot make a qrels of a int"):
        lf.concat_qrels({"a": 3})  # type: ignore[dict-item]
    # Objects lf.as_qrels reads: a dict, a pandas frame.
    held = lf.concat_qrels({"a": {"q1": {"d1": 1}}, "b": polars_to_pandas(sets["human"])})
    assert isinstance(held, pl.DataFrame)
    assert held.filter(pl.col("qrels") == "b").drop("qrels").equals(sets["human"])
    assert held.filter(pl.col("qrels") == "a").rows() == [("a", "q1", "d1", 1)]


def test_the_command_evaluates_every_qrels_at_once(run, sets, tmp_path, capsys):
    llm_file = tmp_path / "llm.txt"
    lf.write_trec_qrels(sets["llm"], llm_file)
    out, summary = tmp_path / "per_query.parquet", tmp_path / "summary.csv"
    argv = ["evaluate", *map(str, RUNS), "--qrels", f"human={QRELS}", "--qrels",
            f"llm={llm_file}", "-m", "AP", "-m", "nDCG@10", "-o", str(out), "--summary",
            str(summary)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| qrels | system |" in printed and "AP (mean) qrels=llm" in printed
    expected = _stacked(sets, lambda q: lf.evaluate(run, q, ["AP", "nDCG@10"]))
    assert_frame_equal(_sorted(pl.read_parquet(out)), _sorted(expected), abs_tol=1e-12)
    means = pl.read_csv(summary)
    assert means.columns[:2] == ["qrels", "system"] and means.height == 16
    # One bare file: as before, no qrels column.
    assert main(["evaluate", *map(str, RUNS), "--qrels", str(QRELS), "-m", "AP", "-o",
                 str(tmp_path / "one.parquet")]) == 0  # fmt: skip
    assert "qrels" not in pl.read_parquet(tmp_path / "one.parquet").columns


@pytest.mark.parametrize(
    ("qrels", "extra", "message"),
    [
        (["a=x.txt", "a=y.txt"], [], "--qrels names 'a' twice"),
        (["=x.txt"], [], "--qrels '=x.txt': write NAME=FILE"),
        (["a=x.txt", "b="], [], "--qrels 'b=': write NAME=FILE"),
        (["a=x.txt", "b=y.txt"], ["-q"], "-q prints trec_eval's format for one qrels"),
    ],
)
def test_the_command_refuses_bad_qrels_flags(tmp_path, capsys, qrels, extra, message):
    flags = [flag for spec in qrels for flag in ("--qrels", spec)]
    assert main(["evaluate", str(RUNS[0]), *flags, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_file_whose_name_holds_an_equals_sign_is_one_qrels(tmp_path):
    path = tmp_path / "a=b.txt"
    path.write_bytes(Path(QRELS).read_bytes())
    out = tmp_path / "out.parquet"
    assert _quietly(lambda: main(
        ["evaluate", *map(str, RUNS), "--qrels", str(path), "-m", "AP", "-o", str(out)]
    )) == 0  # fmt: skip
    assert "qrels" not in pl.read_parquet(out).columns
