"""``compat="trec_eval-9.0.8"``: ``lexiframe trec_eval --compat 9.0.8`` prints what NIST
trec_eval 9.0.8 (tag v9.0.8) prints, byte for byte, on every line but ``relstring``
(which the drop-in does not print), under ``-q -c``, ``-l 2``, ``-J``, ``-M 100`` and means
only; the goldens are trec_eval 9.0.8's own output (provenance in tests/data/README.md).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.cli.trec_eval_measures import resolve
from lexiframe.errors import UnknownMeasureError
from tests.conftest import DATA

TREC = DATA / "trec_eval"
TOY = DATA / "toy"
GOLDEN_908 = TOY / "expected/trec_eval_9.0.8_cli"
TOY_RUNS = [str(path) for path in sorted((TOY / "runs").iterdir())]
F32 = str(TOY / "float32/f32ties")

FLAGS = {
    "q.c": ["-q", "-c"],
    "q.c.l2": ["-q", "-c", "-l", "2"],
    "q.c.J": ["-q", "-c", "-J"],
    "q.c.M100": ["-q", "-c", "-M", "100"],
    "c": ["-c"],
}
COLLECTIONS = {
    "trec": (TREC / "cli_9.0.8", "", [str(TREC / "qrels.test"), str(TREC / "results.test")]),
    "toy": (GOLDEN_908, "", [str(TOY / "qrels.txt"), *TOY_RUNS]),
    "float32": (GOLDEN_908, "float32.", [str(TOY / "qrels.txt"), F32]),
}


def _golden(folder: Path, prefix: str, name: str) -> list[str]:
    path = folder / f"{prefix}{name}.all_trec.txt"
    if not path.exists():
        path = path.with_name(path.name + ".gz")
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as file:
            text = file.read()
    else:
        text = path.read_text()
    return [line for line in text.splitlines() if not line.startswith("relstring")]


@pytest.mark.parametrize("collection", list(COLLECTIONS))
@pytest.mark.parametrize("name", list(FLAGS))
def test_every_line_is_trec_eval_908s(collection, name, capsys):
    folder, prefix, files = COLLECTIONS[collection]
    expected = _golden(folder, prefix, name)
    # The toy's goldens are one trec_eval call per run, concatenated: one call here.
    assert main(["trec_eval", "--compat", "9.0.8", *FLAGS[name], "-m", "all_trec", *files]) == 0
    got = capsys.readouterr().out.splitlines()
    assert len(got) == len(expected)
    assert got == expected


def test_the_default_is_still_trec_eval_10(capsys):
    """The 10.0 golden of the float32 run is not 9.0.8's: the default did not move."""
    wanted = _golden(TOY / "expected/trec_eval_cli", "float32.", "q.c")
    assert main(["trec_eval", "-q", "-c", "-m", "all_trec", str(TOY / "qrels.txt"), F32]) == 0
    assert capsys.readouterr().out.splitlines() == wanted
    assert wanted != _golden(GOLDEN_908, "float32.", "q.c")


@pytest.mark.parametrize(
    "measure", ["rbp", "rbp_resid", "unj", "rbp.p=0.5", "dcg", "ideal_dcg", "dcg.1=2"]
)
def test_measures_908_lacks_are_illegal(measure):
    with pytest.raises(UnknownMeasureError, match="illegal measure"):
        resolve([measure], "trec_eval-9.0.8")


def test_the_cli_names_a_bad_compat(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["trec_eval", "--compat", "9.0.7", str(TREC / "qrels.test"), F32])
    assert exit_.value.code == 2
    assert "--compat" in capsys.readouterr().err


def test_positions_rank_by_the_score_as_a_float32():
    """1 + 2^-24 is 1.0 as a float32: the tie goes to the larger document id."""
    run = pl.DataFrame(
        {"system": "s", "query": "q", "doc": ["d1", "d2"], "score": [1.0 + 2.0**-24, 1.0]}
    )
    qrels = pl.DataFrame({"query": ["q"], "doc": ["d1"], "relevance": [1]})
    assert lf.positions(run, qrels)["positions"].to_list() == [[1]]
    for compat in ("trec_eval-9.0.8", "pytrec_eval"):
        assert lf.positions(run, qrels, compat=compat)["positions"].to_list() == [[2]]


def test_interpolated_precision_cutoffs_follow_the_version():
    """m = 5 relevant, recall 0.3: 10.0 needs lround(1.5) = 2, 9.0.8 floor(1.5 + 0.9) = 2;
    recall 0.1: 10.0 lround(0.5) = 1, 9.0.8 floor(1.4) = 1; recall 0.22 (m·x = 1.1):
    10.0 needs 1, 9.0.8 floor(2.0) = 2."""
    run = pl.DataFrame(
        {"system": "s", "query": "q", "doc": [f"d{i}" for i in range(6)],
         "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}
    )  # fmt: skip
    qrels = pl.DataFrame(
        {"query": "q", "doc": ["d0", "d5", "x1", "x2", "x3"], "relevance": [1] * 5}
    )
    names = ["IPrec@0.22", "IPrec@0.1"]
    new = lf.evaluate(run, qrels, names).row(0)[2:]
    old = lf.evaluate(run, qrels, names, compat="trec_eval-9.0.8").row(0)[2:]
    assert new == (1.0, 1.0)  # the first relevant document, at rank 1
    assert old == (2 / 6, 1.0)  # the second, at rank 6


def test_a_bad_compat_is_named():
    with pytest.raises(lf.InputError, match="compat must be"):
        lf.PositionsOptions(compat="trec_eval-9")  # type: ignore[arg-type]


def test_evaluate_takes_compat(capsys):
    """(Spark takes it too: tests/test_paths_spark.py runs compat= through lexiframe.spark.)"""
    qrels, run = str(TOY / "qrels.txt"), F32
    argv = ["evaluate", run, "--qrels", qrels, "-m", "AP", "-m", "RR", "-m", "nDCG", "-q"]
    assert main([*argv, "--compat", "9.0.8"]) == 0
    nine = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out != nine  # the float32 run ranks otherwise
