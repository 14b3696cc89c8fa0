"""``lf.as_run`` / ``lf.as_qrels``: the objects users already hold, on every entry point.

Each input kind is built from the toy track's TREC files by plain Python, converted, and
evaluated; the values must equal those of the TREC-file path (``lf.evaluate(run files,
qrels file)``). ranx and ir_datasets are optional: their tests run where they are installed.
"""

from __future__ import annotations

from collections import namedtuple

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.errors import InputError, SchemaError
from tests.conftest import DATA

TOY = DATA / "toy"
RUN_FILES = sorted(str(path) for path in (TOY / "runs").iterdir())
QRELS_FILE = str(TOY / "qrels.txt")
SYSTEM = "sys003"  # many score ties: the order of documents comes from the scores alone
NAMES = ["RR", "AP", "nDCG@10", "P@10", "R@1000", "RP"]

# The shapes of ir_measures' ScoredDoc and Qrel (ir_measures itself is not needed).
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])


def toy_rows() -> tuple[list[tuple], list[tuple]]:
    """(query, doc, score) of SYSTEM and (query, doc, grade) of the qrels, read by hand."""
    run = []
    for line in (TOY / "runs" / SYSTEM).read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.append((query, doc, float(score)))
    qrels = []
    for line in (TOY / "qrels.txt").read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.append((query, doc, int(grade)))
    return run, qrels


def dicts() -> tuple[dict, dict]:
    run_rows, qrels_rows = toy_rows()
    run: dict[str, dict[str, float]] = {}
    for query, doc, score in run_rows:
        run.setdefault(query, {})[doc] = score
    qrels: dict[str, dict[str, int]] = {}
    for query, doc, grade in qrels_rows:
        qrels.setdefault(query, {})[doc] = grade
    return run, qrels


@pytest.fixture(scope="module")
def expected() -> pl.DataFrame:
    with pytest.warns(lf.DroppedQueriesWarning):
        frame = lf.evaluate(RUN_FILES, QRELS_FILE, NAMES)
    return frame.filter(pl.col("system") == SYSTEM).sort("query")


def check(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(got.sort("query"), expected)


def test_dict_of_dicts(expected):
    run, qrels = dicts()
    frame = lf.as_run(run, system=SYSTEM)
    assert frame.schema == lf.io.RUN_SCHEMA
    assert lf.as_qrels(qrels).schema == lf.io.QRELS_SCHEMA
    check(lf.evaluate(frame, lf.as_qrels(qrels), NAMES), expected)


def test_every_entry_point_takes_the_objects(expected):
    run, qrels = dicts()
    polars_run = lf.as_run(run, system=SYSTEM)
    check(lf.evaluate(polars_run, qrels, NAMES), expected)  # qrels as a dict
    positions = lf.positions(polars_run, qrels)
    check(lf.measures(positions, NAMES), expected)
    check(polars_run.lexi.evaluate(qrels, NAMES), expected)
    check(lf.evaluate(run, qrels, NAMES).with_columns(system=pl.lit(SYSTEM)), expected)
    assert lf.coverage(run, qrels)["evaluated"].item() == expected.height
    lazy = lf.positions(polars_run.lazy(), qrels)
    assert isinstance(lazy, pl.LazyFrame)


def test_ir_measures_namedtuples(expected):
    run_rows, qrels_rows = toy_rows()
    run = (ScoredDoc(*row) for row in run_rows)  # a generator: read once
    qrels = [Qrel(query, doc, grade, "0") for query, doc, grade in qrels_rows]
    check(lf.evaluate(lf.as_run(run, system=SYSTEM), lf.as_qrels(qrels), NAMES), expected)


def test_ir_datasets_namedtuples(expected):
    formats = pytest.importorskip("ir_datasets.formats")
    run_rows, qrels_rows = toy_rows()
    run = [formats.GenericScoredDoc(*row) for row in run_rows]
    qrels = [formats.GenericQrel(*row) for row in qrels_rows]
    check(lf.evaluate(lf.as_run(run, system=SYSTEM), qrels, NAMES), expected)


def test_ranx_run_and_qrels(expected):
    ranx = pytest.importorskip("ranx")
    run, qrels = dicts()
    ranx_run = ranx.Run(run, name=SYSTEM)
    ranx_qrels = ranx.Qrels(qrels)
    frame = lf.as_run(ranx_run)
    assert frame["system"].unique().to_list() == [SYSTEM]  # the run's name
    check(lf.evaluate(ranx_run, ranx_qrels, NAMES), expected)


def pyterrier_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """PyTerrier's shapes: results with qid, docid (internal), docno, rank, score and the
    query's text; qrels with qid, docno, label."""
    run_rows, qrels_rows = toy_rows()
    run = pd.DataFrame(run_rows, columns=["qid", "docno", "score"])
    run["docid"] = range(len(run))
    run["rank"] = run.groupby("qid").cumcount()
    run["query"] = "text of " + run["qid"]
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docno", "label"])
    return run, qrels


def test_pyterrier_pandas_frames(expected):
    run, qrels = pyterrier_frames()
    converted = lf.as_run(run, system=SYSTEM)
    assert converted.columns[:4] == ["system", "query", "doc", "score"]
    assert converted["query"][0] == run["qid"][0]  # the id, not the text
    check(lf.evaluate(converted, lf.as_qrels(qrels), NAMES), expected)
    through_accessor = pl.from_pandas(run.lexi.evaluate(qrels, NAMES))
    check(through_accessor.with_columns(system=pl.lit(SYSTEM)), expected)


def test_polars_frame_without_system_column(expected):
    run_rows, qrels_rows = toy_rows()
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    got = lf.as_run(run, system=SYSTEM)
    check(lf.evaluate(got, lf.as_qrels(pl.DataFrame(qrels_rows, orient="row",
          schema=["query", "doc", "relevance"])), NAMES), expected)  # fmt: skip
    lazy = lf.as_run(run.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["system"].unique().to_list() == ["run"]


def test_lexiframe_frames_pass_unchanged():
    run = lf.read_run(RUN_FILES[0])
    assert lf.as_run(run) is run
    qrels = lf.read_qrels(QRELS_FILE)
    assert lf.as_qrels(qrels) is qrels


def test_empty_and_skipped_queries():
    assert lf.as_run({}).height == 0
    assert lf.as_run({"q1": {}, "q2": {"d": 1.0}})["query"].to_list() == ["q2"]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: lf.as_run(42), TypeError, "cannot make a run of a int"),
        (lambda: lf.as_run("run.txt"), TypeError, "use lexiframe.read_run"),
        (lambda: lf.as_qrels([(1, 2, 3)]), TypeError, "namedtuples with fields query_id"),
        (lambda: lf.as_run({"q1": [1, 2]}), InputError, "query 'q1' maps to a list"),
        (lambda: lf.as_qrels({"q1": {"d1": 0.5}}), InputError, "whole numbers"),
        (lambda: lf.as_run(pl.DataFrame({"q": ["1"]})), SchemaError, "no query column"),
        (
            lambda: lf.as_run(lf.read_run(RUN_FILES[0]), system="x"),
            SchemaError,
            "has a system column",
        ),
    ],
)
def test_unknown_objects_are_refused_clearly(call, error, message):
    with pytest.raises(error, match=message):
        call()
