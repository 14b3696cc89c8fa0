"""The sweep (tests/sweep/cases.py): every bad input, flag, API call and signal of the
corpus gets its refusal, and nothing else happens: one line, no traceback, no temporary
name, no ``[Errno N]``, no input modified, nothing left behind."""

from __future__ import annotations

import errno
import io
import signal
import sys
from pathlib import Path

import pytest

from lexiframe.cli import main
from lexiframe.io import files as input_files
from tests.conftest import DATA
from tests.sweep.cases import ACCEPTED, CALLS, COMMANDS, STOPS, Call, Command, Stop
from tests.sweep.processes import reading_stdin

TOY = DATA / "toy"
PLACES = {
    "{qrels}": str(TOY / "qrels.txt"),
    "{run}": str(sorted((TOY / "runs").iterdir())[0]),
    "{runs}": f"{TOY / 'runs'}/",
}
NEVER_SHOWN = ("Traceback", "lexiframe-stream-", "[Errno", ".tmp'", "polars.exceptions")


def contents(folder: Path) -> dict[Path, bytes | None]:
    """Every file and folder under ``folder``: a file's bytes, None for a folder."""
    return {
        path: None if path.is_dir() else path.read_bytes() for path in sorted(folder.rglob("*"))
    }


class FullDevice(io.TextIOBase):
    """Standard output on a full device, as ``> /dev/full``."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def command_status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:  # argparse's refusals
        return int(exit_.code or 0)


@pytest.mark.parametrize("case", COMMANDS, ids=lambda case: case.name)
def test_command(case: Command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name, data in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    argv = [PLACES.get(item, item) for item in case.argv]
    before, toy = contents(tmp_path), contents(TOY)
    monkeypatch.setattr(input_files, "_SPOOLED", {})  # standard input read afresh
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(case.stdin)))
    if case.full_output:
        monkeypatch.setattr(sys, "stdout", FullDevice())
    status = command_status(argv)
    err = capsys.readouterr().err
    assert status == case.status, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and case.excerpt in lines[-1], err
    said = [line for line in lines if not line.startswith(("note:", "usage:", " "))]
    assert len(said) == 1, err  # one line (after any notes, or argparse's usage)
    for text in NEVER_SHOWN:
        assert text not in err
    assert contents(TOY) == toy  # no input modified
    after = contents(tmp_path)
    assert {path: after.get(path) for path in before} == before
    if case.status:
        assert set(after) == set(before), "a refused command left files or folders behind"


@pytest.mark.parametrize("case", CALLS, ids=lambda case: case.name)
def test_call(case: Call):
    with pytest.raises(case.error) as info:
        case.call()
    assert case.excerpt in str(info.value)
    for name, value in case.fields.items():
        assert getattr(info.value, name) == value


@pytest.mark.parametrize(("name", "call"), ACCEPTED, ids=[name for name, _ in ACCEPTED])
def test_accepted(name, call):
    assert call() >= 1


@pytest.mark.parametrize("case", STOPS, ids=lambda case: case.name)
def test_stop(case: Stop):
    process = reading_stdin(["evaluate", "--qrels", PLACES["{qrels}"]])
    process.send_signal(case.signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + case.signum
    assert err.decode().strip().splitlines() == [case.excerpt]


def test_every_stop_signal_is_swept():
    assert {case.signum for case in STOPS} == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
