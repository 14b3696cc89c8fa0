"""Faults while writing: outputs checked before any work and replaced all or nothing, under
signals (SIGINT, SIGTERM, SIGHUP at several moments), a full disk (a small file-size
limit), unwritable outputs and duplicate paths."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lexiframe.cli import main
from lexiframe.datasets import write_synthetic_track
from lexiframe.errors import OutputError
from lexiframe.io import Outputs, check_output_path
from tests.conftest import DATA
from tests.sweep.processes import ROOT, reading_stdin, run_cli

TOY = DATA / "toy"
RUNS = sorted(str(path) for path in (TOY / "runs").iterdir())
QRELS = str(TOY / "qrels.txt")
AS_ROOT = os.geteuid() == 0  # root writes into read-only folders


def evaluate(*arguments: str) -> list[str]:
    return ["evaluate", "--qrels", QRELS, "-m", "RR", *arguments]


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def leftovers(folder: Path) -> list[str]:
    """Temporary files left in ``folder`` (hidden ``.name.<hex>.tmp``)."""
    return sorted(path.name for path in folder.rglob(".*.tmp"))


# --- output paths checked before any work --------------------------------------------------


def bad_run(tmp_path: Path) -> str:
    """A run whose last line is malformed: an error about the outputs shows they were
    checked before the run was read."""
    path = tmp_path / "bad-run.txt"
    path.write_text("401 Q0 D1 1 1.0 bm25\n401 Q0 D2 2 oops bm25\n")
    return str(path)


def test_the_same_path_twice_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "out.csv"
    code = main(evaluate("-o", str(out), "--summary", str(out), bad_run(tmp_path)))
    assert code == 2
    line = error_line(capsys)
    assert "both be written to" in line and str(out) in line
    assert not out.exists()


def test_two_kinds_of_table_named_onto_another_output_are_refused(tmp_path, capsys):
    # With metrics and preferences, -o out.csv writes out-metrics.csv: --orderings there clashes.
    out, clash = tmp_path / "out.csv", tmp_path / "out-metrics.csv"
    arguments = ["-m", "sgnLP", "-o", str(out), "--orderings", str(clash), *RUNS]
    assert main(evaluate(*arguments)) == 2
    assert "out-metrics.csv" in error_line(capsys)


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, which):
    run = tmp_path / "run.txt"
    run.write_text(Path(RUNS[0]).read_text())
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(Path(QRELS).read_text())
    before = {run: run.read_bytes(), qrels: qrels.read_bytes()}
    target = run if which == "run" else qrels
    # A .csv name of the same file, through a link, so that the extension is writable.
    alias = tmp_path / "alias.csv"
    alias.symlink_to(target)
    arguments = ["evaluate", "--qrels", str(qrels), "-m", "RR", "-o", str(alias), str(run)]
    assert main(arguments) == 2
    assert "is also an input" in error_line(capsys)
    assert {path: path.read_bytes() for path in before} == before


def test_an_output_inside_a_run_folder_given_as_input_is_refused(tmp_path, capsys):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.csv").write_text(Path(RUNS[0]).read_text())
    arguments = ["evaluate", "--qrels", QRELS, "-o", str(folder / "a.csv"), str(folder)]
    assert main(arguments) == 2
    assert "is also an input" in error_line(capsys)


def test_a_missing_folder_is_made(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "out.csv"
    assert main(evaluate("-o", str(out), RUNS[0])) == 0
    assert out.is_file()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda tmp: tmp / "folder.csv", "it is a folder"),
        (lambda tmp: tmp / "file" / "out.csv", "a file is in the way"),
        (lambda tmp: tmp / ("x" * 300 + ".csv"), "too long"),
        (lambda tmp: Path("/proc/lexiframe-out.csv"), "cannot write"),
    ],
    ids=["a-folder", "parent-is-a-file", "name-too-long", "proc"],
)
def test_unwritable_outputs_are_refused_before_any_work(tmp_path, capsys, make, fragment):
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "file").write_text("")
    target = make(tmp_path)
    assert main(evaluate("-o", str(target), bad_run(tmp_path))) == 2
    line = error_line(capsys)
    assert fragment in line and str(target) in line
    assert ".tmp" not in line  # the user's path, never the temporary one
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(AS_ROOT, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_before_any_work(tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert main(evaluate("-o", str(folder / "out.csv"), bad_run(tmp_path))) == 2
        assert "permission denied" in error_line(capsys)
    finally:
        folder.chmod(0o700)


def test_check_output_path_names_the_users_path(tmp_path):
    with pytest.raises(OutputError, match="it is a folder"):
        check_output_path(tmp_path)
    # checked, not made: the folder is made when the output is written
    assert not check_output_path(tmp_path / "a" / "b.csv").parent.exists()
    with pytest.raises(OutputError, match="a file is in the way of a folder"):
        (tmp_path / "file").write_text("")
        check_output_path(tmp_path / "file" / "sub" / "b.csv")


def test_a_failed_command_leaves_no_folder_it_made(tmp_path, capsys):
    target = tmp_path / "new" / "sub" / "out.csv"
    assert main(evaluate("-o", str(target), bad_run(tmp_path))) == 2
    error_line(capsys)
    assert not (tmp_path / "new").exists()
    assert main(evaluate("-o", str(target), *RUNS)) == 0
    assert target.is_file()


def test_an_output_in_a_run_folder_is_refused_before_any_work(tmp_path, capsys):
    folder = tmp_path / "runs"
    folder.mkdir()
    for run in RUNS:
        (folder / Path(run).name).write_text(Path(run).read_text())
    for flag in ("-o", "--summary", "--orderings"):
        target = folder / "out.parquet"
        assert main(["evaluate", "--qrels", QRELS, flag, str(target), f"{folder}/"]) == 2
        assert "is inside the input folder" in error_line(capsys)
        assert not target.exists()
    # a folder below the input folder is not read as input
    assert (
        main(["evaluate", "--qrels", QRELS, "-o", str(folder / "out" / "m.csv"), str(folder)]) == 0
    )


def test_a_name_too_long_is_an_output_error_in_the_api(tmp_path):
    # Path.is_dir raises OSError for such a name on some Python versions: not a refusal.
    target = tmp_path / ("x" * 300 + ".csv")
    with pytest.raises(OutputError, match="the name is too long") as info:
        check_output_path(target, "summary")
    assert str(target) in str(info.value)


# --- links and modes kept ---------------------------------------------------------------------


def test_a_link_stays_a_link_and_a_mode_is_kept(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    summary = tmp_path / "summary.csv"
    summary.write_text("old\n")
    summary.chmod(0o640)
    assert main(evaluate("-o", str(link), "--summary", str(summary), RUNS[0])) == 0
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text().startswith("system,query,RR")
    assert oct(real.stat().st_mode & 0o777) == oct(0o600)
    assert oct(summary.stat().st_mode & 0o777) == oct(0o640)
    assert leftovers(tmp_path) == []


# --- all or nothing -----------------------------------------------------------------------------


def test_a_failing_write_replaces_nothing_and_says_so(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("old a\n")
    second.write_text("old b\n")

    def full_disk(path: Path) -> None:
        path.write_text("partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError) as error, Outputs() as outputs:
        outputs.add(first, "per-query metrics")
        outputs.add(second, "metrics summary")
        outputs.write(first, lambda path: path.write_text("new a\n"))
        outputs.write(second, full_disk)
        outputs.commit()
    message = str(error.value)
    assert "no space left" in message and str(second) in message
    assert "no output was replaced" in message and str(first) in message
    assert (first.read_text(), second.read_text()) == ("old a\n", "old b\n")
    assert leftovers(tmp_path) == []


def test_a_file_size_limit_after_the_first_output_leaves_every_output_as_it_was(tmp_path):
    # Metrics and preferences: -o writes out-metrics.csv (small) then out-preferences.csv
    # (larger); a file-size limit between their sizes fails the second.
    out = tmp_path / "out.csv"
    metrics, prefs = tmp_path / "out-metrics.csv", tmp_path / "out-preferences.csv"
    arguments = [*evaluate("-m", "sgnLP", "-o", str(out), *RUNS)]
    assert main(arguments) == 0
    sizes = metrics.stat().st_size, prefs.stat().st_size
    assert sizes[0] < sizes[1]
    metrics.write_text("old metrics\n")
    prefs.write_text("old preferences\n")
    process = run_cli(arguments, fsize=(sizes[0] + sizes[1]) // 2)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2, err.decode()
    message = err.decode().strip().splitlines()[-1]
    assert "too large" in message and str(prefs) in message
    assert "no output was replaced" in message
    assert metrics.read_text() == "old metrics\n"
    assert prefs.read_text() == "old preferences\n"
    assert leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def medium_track(tmp_path_factory):
    """A track whose outputs take the command a moment to write."""
    root = tmp_path_factory.mktemp("medium")
    return write_synthetic_track(root, n_systems=20, n_queries=60, depth=1000, format="trec.gz")


STOP_SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def stop_line(signum: int) -> str:
    if signum == signal.SIGINT:
        return "lexiframe: interrupted"
    return f"lexiframe: stopped by {signal.Signals(signum).name}"


def test_a_command_started_by_nohup_ignores_sighup():
    """nohup starts the command with SIGHUP ignored: it must stay ignored."""

    def ignore_hangup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    process = reading_stdin(["evaluate", "--qrels", QRELS, "-m", "RR"], before=ignore_hangup)
    process.send_signal(signal.SIGHUP)
    out, err = process.communicate(timeout=120)  # closes the run: the command goes on
    assert process.returncode == 0, err.decode()
    assert b"RR" in out


BLOCKED_IMPORT = """
import sys
class Blocker:  # stops the import of Polars until the test has sent its signal
    def find_spec(self, name, path=None, target=None):
        if name == "polars":
            sys.meta_path.remove(self)
            print("importing", flush=True)
            sys.stdin.readline()
        return None
sys.meta_path.insert(0, Blocker())
sys.argv = ["lexiframe", "demo"]
import lexiframe_command
lexiframe_command.run()
"""


@pytest.mark.parametrize("signum", STOP_SIGNALS)
def test_a_stop_signal_while_lexiframe_is_imported_ends_with_one_line(signum):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", BLOCKED_IMPORT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout.readline() == b"importing\n"  # inside the import of lexiframe
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum
    assert err.decode().strip().splitlines() == [stop_line(signum)]


@pytest.mark.parametrize("signum", STOP_SIGNALS)
def test_a_stop_signal_while_outputs_are_written_leaves_no_temporary_file(
    tmp_path, medium_track, signum
):
    """The signal is sent when the first temporary file appears beside the outputs (a
    check's probe or a table being written); the command ends with all outputs old, or,
    when it finished first, all new."""
    # A metric and a preference: -o and --summary each write two tables (<stem>-<kind>).
    outputs = [tmp_path / f"{stem}-{kind}.csv" for stem in ("out", "summary")
               for kind in ("metrics", "preferences")] + [tmp_path / "orderings.csv"]  # fmt: skip
    for path in outputs:
        path.write_text("old\n")
    arguments = ["evaluate", "--qrels", str(medium_track.qrels), "-m", "AP", "-m", "sgnLP"]
    arguments += ["-o", str(tmp_path / "out.csv"), "--summary", str(tmp_path / "summary.csv")]
    arguments += ["--orderings", str(outputs[-1]), *map(str, medium_track.runs)]
    process = run_cli(arguments)
    while process.poll() is None and not any(
        name.endswith(".tmp") for name in os.listdir(tmp_path)
    ):
        time.sleep(0.001)
    process.send_signal(signum)
    _, err = process.communicate(timeout=300)
    text = err.decode()
    assert process.returncode in (0, 128 + signum), text
    if process.returncode:
        assert text.strip().splitlines()[-1] == stop_line(signum)
    assert "Traceback" not in text
    states = {path.read_text() == "old\n" for path in outputs}
    assert len(states) == 1  # all old or all new, never a mix
    assert states == {process.returncode != 0}  # old when stopped, new when it finished
    assert sorted(os.listdir(tmp_path)) == sorted(path.name for path in outputs)
    assert leftovers(tmp_path) == []


def test_a_stop_signal_while_outputs_are_renamed_is_delivered_after(tmp_path):
    """Stop signals are held while outputs are renamed or removed, even where another
    thread, not the main one, receives them: the handler defers them to the hold's end."""
    from lexiframe.io.outputs import _signals_held, defer_if_held

    received = []

    def handler(signum, frame):
        if not defer_if_held(signum):
            received.append(signum)

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        with _signals_held():
            assert defer_if_held(signal.SIGUSR1)
            assert received == []
        assert received == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_second_interrupt_during_cleanup_still_removes_every_temporary_file(
    tmp_path, monkeypatch
):
    """Polars can raise KeyboardInterrupt twice for one Ctrl-C: the second one, in the
    cleanup, must not leave the temporary files behind."""
    outputs = Outputs()
    targets = [outputs.add(tmp_path / f"{name}.csv", name) for name in ("a", "b")]
    for target in targets:
        outputs.write(target, lambda path: path.write_text("new\n"))
    unlink = Path.unlink
    calls = []

    def interrupted_once(self, missing_ok=False):
        calls.append(self)
        if len(calls) == 1:
            raise KeyboardInterrupt
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        outputs.discard()
    monkeypatch.undo()
    assert leftovers(tmp_path) == []


# --- Spark's outputs, folders its writer replaces ---------------------------------------------


@pytest.mark.parametrize(
    ("output", "inputs"),
    [
        ("run.parquet", ["run.parquet"]),  # the input itself
        ("runs/out.parquet", ["runs"]),  # inside an input folder
        ("all.parquet", ["all.parquet/part-0.parquet"]),  # a folder holding an input
    ],
)
def test_a_spark_output_over_an_input_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch, output, inputs
):
    pytest.importorskip("pyspark")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "all.parquet").mkdir()
    for name in ["run.parquet", "runs/a.txt", "all.parquet/part-0.parquet"]:
        (tmp_path / name).write_text("kept\n")
    arguments = ["evaluate", "--spark", "local[1]", "--qrels", QRELS, "-m", "RR", "-o", output]
    assert main([*arguments, *inputs]) == 2
    line = error_line(capsys)
    assert "overlaps the input" in line and output in line
    for name in ["run.parquet", "runs/a.txt", "all.parquet/part-0.parquet"]:
        assert (tmp_path / name).read_text() == "kept\n"


def test_two_spark_outputs_in_one_place_are_refused(tmp_path, capsys):
    pytest.importorskip("pyspark")
    out = str(tmp_path / "out.parquet")
    arguments = ["evaluate", "--spark", "local[1]", "--qrels", QRELS, "-m", "RR"]
    assert main([*arguments, "-o", out, "--summary", out, *RUNS]) == 2
    assert "would both be written to" in error_line(capsys)
