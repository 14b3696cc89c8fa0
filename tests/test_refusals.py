"""Bad input on every path gets a clear error (exit 2 at the command line, one line, never a
traceback) or the right behaviour; and run files stream whatever their layout."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe._batched import positions_of_files
from lexiframe.cli import main
from lexiframe.errors import InputError, LexiframeWarning, UnknownMeasureError
from lexiframe.validate import require_positive_int
from tests.conftest import DATA

TOY = DATA / "toy"
RUNS = sorted(str(path) for path in (TOY / "runs").iterdir())
QRELS = str(TOY / "qrels.txt")
ROOT = Path(__file__).resolve().parents[1]
KEYS = ["system", "query"]
pytestmark = pytest.mark.filterwarnings("ignore::lexiframe.errors.DroppedQueriesWarning")


def refused(capsys, *arguments: str) -> str:
    """Run the command, expect exit 2 and one error line; return it."""
    assert main(list(arguments)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("lexiframe: error: ")
    return line


# --- integer arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--n", "9223372036854775808", "--n must be at most"),
        ("--n", "0", "--n must be a positive integer"),
        ("--depth", "1099511627776", "--depth must be at most 4294967295"),
        ("--depth", "-3", "--depth must be a positive integer"),
    ],
)
def test_integer_flags_out_of_range(capsys, flag, value, fragment):
    assert fragment in refused(capsys, "evaluate", "--qrels", QRELS, flag, value, RUNS[0])


def test_a_threshold_beyond_a_64_bit_integer_names_the_flag(capsys):
    line = refused(capsys, "evaluate", "--qrels", QRELS, "--threshold", "9" * 20, RUNS[0])
    assert "--threshold must be an integer from" in line


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["-l", "9" * 20], "-l must be an integer from"),
        (["-M", "0"], "-M must be a positive integer"),
        (["-M", "1099511627776"], "-M must be at most 4294967295"),
        (["-N", "-1", "-m", "utility.1,-1,0,1"], "-N (the collection size) must be a positive"),
    ],
)
def test_the_drop_in_names_its_own_flags(capsys, flags, fragment):
    assert fragment in refused(capsys, "trec_eval", *flags, QRELS, RUNS[0])


def test_a_collection_too_small_for_the_drop_in_names_the_flag_and_the_run_file(capsys):
    line = refused(capsys, "trec_eval", "-N", "5", "-m", "utility.1,-1,0,1", QRELS, *RUNS[:2])
    assert "-N 5 is too small" in line
    assert any(f"of run {path!r}" in line for path in RUNS[:2])
    assert "--n" not in line and "system='0'" not in line


def test_a_negative_seed(capsys):
    line = refused(
        capsys, "compare", "--qrels", QRELS, "--test", "randomized_hsd", "--seed", "-1", *RUNS
    )
    assert "--seed must be a non-negative integer" in line


def test_err_max_grade_too_large_for_a_float(capsys):
    line = refused(capsys, "evaluate", "--qrels", QRELS, "-m", "ERR(max_grade=1100)@10", RUNS[0])
    assert "max_grade= is at most 1023" in line


@pytest.mark.parametrize(
    "name", ["RBP(p=nan)", "RBPResid(p=x)", "SetF(beta=x)", "TSE(exposure='rbp', p='0.5')"]
)
def test_a_parameter_that_is_not_a_number(name):
    # A bare word reads as a string: refused by the parser, not an assertion in measuring.
    with pytest.raises(UnknownMeasureError, match=r"= is a number, e\.g\."):
        lf.metrics.parse_measure(name)


def test_a_parameter_that_is_not_a_number_at_the_command_line(capsys):
    line = refused(capsys, "evaluate", "--qrels", QRELS, "-m", "RBP(p=nan)", RUNS[0])
    assert "p= is a number" in line


def test_a_five_thousand_digit_cutoff(capsys):
    line = refused(capsys, "evaluate", "--qrels", QRELS, "-m", "P@" + "9" * 5000, RUNS[0])
    assert "whole number from 1 to" in line
    assert "(5004 characters)" in line and "9" * 200 not in line


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (10.5, "n must be a positive integer, not 10.5"),
        (True, "n must be a positive integer, not True"),
        ("nosuch", "n='nosuch' names no column"),
        (-1, "n must be a positive integer, not -1"),
        ("positions", r"n='positions' names a column of List\(UInt32\), not of integers"),
    ],
)
def test_bad_corpus_size_in_the_api(value, fragment):
    track = lf.datasets.demo_track()
    with pytest.raises(InputError, match=fragment):
        lf.evaluate(track.run, track.qrels, ["TSE"], n=value)


@pytest.mark.parametrize("by", [5, [1], ["track", None]])
def test_by_keys_that_are_not_names(by):
    with pytest.raises(InputError, match="by= names key columns"):
        lf.PositionsOptions(by=by)


def test_summarize_names_a_column_it_does_not_have():
    per_query = pl.DataFrame({"system": ["a"], "query": ["1"], "AP": [0.5]})
    with pytest.raises(lf.SchemaError, match="'nosuch' is not one"):
        lf.summarize(per_query, measures=["AP", "nosuch"])


def test_a_negative_seed_in_the_api():
    per_query = pl.DataFrame(
        {"system": ["a", "a", "b", "b"], "query": ["1", "2"] * 2, "AP": [0.5, 0.4, 0.3, 0.2]}
    )
    with pytest.raises(InputError, match="seed must be a non-negative integer, not -1"):
        lf.stats.significance(per_query, "AP", test="bootstrap", seed=-1)


def test_the_one_integer_check():
    assert require_positive_int(3, "k") == 3
    assert require_positive_int(0, "seed", zero=True) == 0
    for bad in (0, -1, 1.5, True, "3", None):
        with pytest.raises(InputError, match="k must be"):
            require_positive_int(bad, "k")
    with pytest.raises(InputError, match="at most 10"):
        require_positive_int(11, "k", maximum=10)


def test_a_string_threshold():
    track = lf.datasets.demo_track()
    with pytest.raises(InputError, match="threshold must be an integer grade, not '1'"):
        lf.evaluate(track.run, track.qrels, ["AP"], threshold="1")


@pytest.mark.parametrize("threshold", [0, -1])
def test_a_threshold_that_counts_non_relevant_documents_is_said(threshold):
    track = lf.datasets.demo_track()
    with pytest.warns(LexiframeWarning, match=f"threshold={threshold} counts documents judged"):
        lf.evaluate(track.run, track.qrels, ["AP"], threshold=threshold)


def test_a_level_above_every_grade_is_said():
    track = lf.datasets.demo_track()
    with pytest.warns(LexiframeWarning, match=r"'AP\(rel=5\)'.*above the highest grade"):
        lf.evaluate(track.run, track.qrels, ["AP(rel=5)"])


def test_measures_none_and_preferences_as_measures():
    track = lf.datasets.demo_track()
    with pytest.raises(InputError, match="measures are a list of names"):
        lf.evaluate(track.run, track.qrels, None)  # type: ignore[arg-type]
    with pytest.raises(UnknownMeasureError, match="'sgnLP' is a preference between two"):
        lf.evaluate(track.run, track.qrels, ["sgnLP"])


def test_trec_eval_parameters_that_do_not_parse(capsys):
    line = refused(capsys, "trec_eval", "-m", "ndcg.1=a", QRELS, RUNS[0])
    assert "cannot read -m ndcg.1=a" in line and "not computed" not in line


# --- runs from objects ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        ({"q": {"d": "1.5"}}, "scores must be numbers, not String"),
        ({"q": {"d": {"x": 1.0}}}, "nested one level too deep"),
        (pd.DataFrame({"qid": ["q"], "docno": ["d"], "score": ["high"]}), "scores must be"),
        (pd.DataFrame({"qid": [2**70], "docno": ["d"], "score": [1.0]}), "fit in 64 bits"),
    ],
    ids=["string-score", "three-levels", "pandas-string-score", "huge-ids"],
)
def test_bad_runs_from_objects(obj, fragment):
    with pytest.raises(InputError, match=fragment):
        lf.as_run(obj)


# --- grades: one validation on every path ---------------------------------------------------------


class RanxQrels:  # what lexiframe reads of a ranx Qrels
    def __init__(self, data: dict) -> None:
        self.data = data

    def to_dict(self) -> dict:
        return self.data


def qrels_inputs(tmp_path: Path, grades: list[float]) -> dict[str, object]:
    frame = pl.DataFrame({"query": ["401"] * len(grades), "doc": ["D1", "D2", "D3"][: len(grades)]})
    frame = frame.with_columns(relevance=pl.Series(grades, dtype=pl.Float64))
    parquet = tmp_path / "qrels.parquet"
    frame.write_parquet(parquet)
    nested = {"401": dict(zip(frame["doc"], grades, strict=True))}
    return {
        "polars": frame,
        "lazy": frame.lazy(),
        "pandas": frame.to_pandas(),
        "pyterrier": frame.rename(
            {"query": "qid", "doc": "docno", "relevance": "label"}
        ).to_pandas(),
        "dict": nested,
        "ranx": RanxQrels(nested),
        "parquet": parquet,
    }


RUN = pl.DataFrame(
    {"system": ["s"] * 3, "query": ["401"] * 3, "doc": ["D1", "D2", "D3"], "score": [3.0, 2.0, 1.0]}
)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), 1.5])
@pytest.mark.parametrize(
    "path", ["polars", "lazy", "pandas", "pyterrier", "dict", "ranx", "parquet"]
)
def test_grades_that_are_not_integers_are_refused_on_every_path(tmp_path, path, bad):
    qrels = qrels_inputs(tmp_path, [1.0, bad, 0.0])[path]
    with pytest.raises(InputError) as error:
        lf.evaluate(RUN, qrels, ["nDCG@10", "AP"])
    message = str(error.value)
    # pandas holds a missing value as NaN: it arrives as a null, refused as such.
    missing = path in ("pandas", "pyterrier") and bad != bad
    assert ("null value in column" if missing else "grades must be whole numbers") in message
    assert "D2" in message  # the example row


@pytest.mark.parametrize("big", [2.0**63, -(2.0**63), 1e300])
@pytest.mark.parametrize("path", ["polars", "lazy", "dict", "parquet"])
def test_grades_beyond_a_64_bit_integer_are_refused_with_a_row(tmp_path, path, big):
    qrels = qrels_inputs(tmp_path, [1.0, big, 0.0])[path]
    with pytest.raises(InputError, match=r"grades must be integers from .*doc='D2'"):
        lf.evaluate(RUN, qrels, ["nDCG@10", "AP"])


@pytest.mark.parametrize(
    "path", ["polars", "lazy", "pandas", "pyterrier", "dict", "ranx", "parquet"]
)
def test_whole_number_float_grades_give_the_integer_result(tmp_path, path):
    qrels = qrels_inputs(tmp_path, [1.0, 2.0, 0.0])[path]
    expected = lf.evaluate(
        RUN,
        qrels_inputs(tmp_path, [1, 2, 0])["polars"].cast({"relevance": pl.Int64}),
        ["nDCG@10", "AP"],
    )
    assert_frame_equal(lf.evaluate(RUN, qrels, ["nDCG@10", "AP"]), expected)


# --- files ----------------------------------------------------------------------------------------


def test_a_long_bad_token_is_quoted_short(tmp_path, capsys):
    path = tmp_path / "run.txt"
    path.write_text("401 Q0 D1 1 1.0 s\n401 Q0 D2 2 " + "x" * 10_000_000 + " s\n")
    line = refused(capsys, "evaluate", "--qrels", QRELS, str(path))
    assert len(line) < 400
    assert "line 2" in line and str(path) in line and "(10000000 characters)" in line


def test_a_long_query_id_is_quoted_short_in_the_note_on_dropped_queries(tmp_path, capsys):
    path = tmp_path / "run.txt"
    path.write_text(Path(RUNS[0]).read_text() + "y" * 1_000_000 + " Q0 D1 1 1.0 s\n")
    assert main(["evaluate", "--qrels", QRELS, "-m", "AP", str(path)]) == 0
    note = next(line for line in capsys.readouterr().err.splitlines() if "not in the qrels" in line)
    assert len(note) < 400 and "(1000002 characters)" in note


def test_a_nan_score_names_its_file_and_line(tmp_path, capsys):
    path = tmp_path / "run.txt"
    path.write_text("401 Q0 D1 1 1.0 s\n401 Q0 D2 2 nan s\n")
    line = refused(capsys, "evaluate", "--qrels", QRELS, str(path))
    assert f"{path}', line 2: score 'nan'" in line


def cli(arguments: list[str], **options) -> subprocess.CompletedProcess:
    extra = options.pop("env", {})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXIFRAME_PROGRESS": "0", **extra}
    command = [sys.executable, "-m", "lexiframe", *arguments]
    return subprocess.run(command, capture_output=True, env=env, timeout=120, **options)


def test_a_dash_reads_the_run_from_standard_input():
    text = Path(RUNS[0]).read_bytes()
    piped = cli(["evaluate", "-q", "--qrels", QRELS, "-m", "AP", "-"], input=text)
    assert piped.returncode == 0, piped.stderr
    direct = cli(["evaluate", "-q", "--qrels", QRELS, "-m", "AP", RUNS[0]])
    assert piped.stdout == direct.stdout


def test_the_command_exits_with_its_status_and_its_exit_functions_run(tmp_path):
    """The process ends without the interpreter's teardown, but only after its output is
    flushed and what was registered to run at exit has run: the temporary copy of a run
    read from standard input is gone."""
    text = Path(RUNS[0]).read_bytes()
    arguments = ["trec_eval", "-q", "-m", "map", QRELS, "-"]
    piped = cli(arguments, input=text, env={"TMPDIR": str(tmp_path)})
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.decode().splitlines()[-1].startswith("map")
    assert not list(tmp_path.glob("lexiframe-stream-*"))
    refused = cli(["trec_eval", "-m", "map", QRELS, str(tmp_path / "missing")])
    assert refused.returncode == 2 and refused.stdout == b""


def test_dev_stdin_and_a_fifo_are_read(tmp_path):
    text = Path(RUNS[0]).read_bytes()
    direct = cli(["evaluate", "-q", "--qrels", QRELS, "-m", "AP", RUNS[0]])
    piped = cli(["evaluate", "-q", "--qrels", QRELS, "-m", "AP", "/dev/stdin"], input=text)
    assert piped.stdout == direct.stdout
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "lexiframe", "evaluate", "-q", "--qrels", QRELS]
    process = subprocess.Popen(
        [*command, "-m", "AP", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    with open(fifo, "wb") as writer:
        writer.write(text)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out == direct.stdout


def test_two_files_of_one_name_with_systems_named_by_file(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.txt").write_text(Path(RUNS[0]).read_text())
    paths = [str(tmp_path / "a" / "run.txt"), str(tmp_path / "b" / "run.txt")]
    line = refused(capsys, "evaluate", "--qrels", QRELS, "--system-from", "filename", *paths)
    assert "would both be system 'run.txt'" in line and paths[0] in line and paths[1] in line


@pytest.mark.parametrize("batch_bytes", [1, 1 << 30], ids=["apart", "together"])
def test_two_runs_with_one_tag_are_named(tmp_path, batch_bytes):
    text = Path(RUNS[0]).read_text()
    for name in ("first.txt", "second.txt"):
        (tmp_path / name).write_text(text)
    paths = [tmp_path / "first.txt", tmp_path / "second.txt"]
    with pytest.raises(InputError) as error:
        positions_of_files(paths, lf.read_qrels(QRELS), batch_bytes=batch_bytes)
    message = str(error.value)
    assert "two runs with one run tag" in message
    assert str(paths[0]) in message and str(paths[1]) in message


def test_compare_without_an_evaluated_query(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("nosuch 0 D1 0\n")
    line = refused(capsys, "compare", "--qrels", str(qrels), *RUNS)
    assert "no query of the runs is evaluated" in line


# --- streaming whatever the layout ------------------------------------------------------------


@pytest.fixture(scope="module")
def track(tmp_path_factory):
    root = tmp_path_factory.mktemp("layouts")
    files = lf.datasets.write_synthetic_track(
        root, n_systems=5, n_queries=24, depth=60, format="trec.gz", seed=5, skip_rate=0.2
    )
    run = lf.read_run(files.runs)
    queries = sorted(run["query"].unique().to_list())
    half = pl.col("query").is_in(queries[:12])
    sharded = root / "sharded"
    sharded.mkdir()
    for system in run["system"].unique().to_list():
        mine = run.filter(system=system)
        lf.io.write_trec_run(mine.filter(half), sharded / f"a_{system}.gz")
        lf.io.write_trec_run(mine.filter(~half), sharded / f"b_{system}.gz")
    one = root / "all.gz"
    one.write_bytes(b"".join(path.read_bytes() for path in files.runs))
    parquet = root / "all.parquet"  # all systems in one parquet file, in row groups
    run.write_parquet(parquet, row_group_size=500)
    scattered = root / "scattered.txt"  # rankings' rows not together: split between pieces
    lf.io.write_trec_run(run, scattered)
    lines = scattered.read_text().splitlines(keepends=True)
    scattered.write_text("".join(lines[0::2] + lines[1::2]))
    return {
        "qrels": files.qrels,
        "one-file-per-run": list(files.runs),
        "sharded-by-query": sorted(sharded.iterdir()),
        "one-file": [one],
        "one-parquet-file": [parquet],
        "scattered": [scattered],
        "whole": run,
    }


@pytest.mark.parametrize(
    "layout", ["one-file-per-run", "sharded-by-query", "one-file", "one-parquet-file", "scattered"]
)
@pytest.mark.parametrize("batch_bytes", [1, 2_000, 1 << 30])
def test_every_layout_gives_the_positions_of_the_whole_run(track, layout, batch_bytes):
    qrels = lf.read_qrels(track["qrels"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        expected = lf.positions(track["whole"], qrels, depth=50).sort(KEYS)
        got = positions_of_files(track[layout], qrels, batch_bytes=batch_bytes, depth=50)
    assert_frame_equal(got.sort(KEYS), expected)


@pytest.mark.parametrize("layout", ["one-file", "one-parquet-file"])
def test_a_large_file_is_read_in_pieces_of_whole_rankings(track, layout):
    pieces = list(lf.io.read_run_batches(track[layout], batch_bytes=1))
    assert len(pieces) > 1
    keys = pl.concat(piece.select(KEYS).unique() for piece in pieces)
    assert not keys.is_duplicated().any()
    assert sum(piece.height for piece in pieces) == track["whole"].height


def test_rankings_split_between_batches_are_said_once_with_their_peak(track, monkeypatch):
    # Bounded streaming is impossible for rankings scattered through a file: said, not silent.
    monkeypatch.setattr("lexiframe._batched.NOTE_ROWS", 0)
    qrels = lf.read_qrels(track["qrels"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        positions_of_files(track["scattered"], qrels, batch_bytes=2_000)
    notes = [str(w.message) for w in caught if "more than one batch" in str(w.message)]
    assert len(notes) == 1
    assert "rows at once (about" in notes[0] and "GB)" in notes[0]
