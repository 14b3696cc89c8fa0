"""The progress switch: automatic bars only in interactive use, forced on, or off."""

from __future__ import annotations

import io
import sys

import pytest

import lexiframe as lf
from lexiframe import _progress
from lexiframe.datasets import write_synthetic_track


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def interactive(monkeypatch):
    """Automatic bars allowed by the environment (the variable unset)."""
    monkeypatch.delenv(_progress.ENV_VAR, raising=False)


def test_auto_is_off_when_the_stream_is_not_a_terminal(interactive):
    assert not _progress.enabled(None, file=io.StringIO())


def test_auto_is_on_in_a_terminal_with_tqdm(interactive):
    pytest.importorskip("tqdm")
    assert _progress.enabled(None, file=Terminal())


def test_auto_is_off_when_the_environment_says_0(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setenv(_progress.ENV_VAR, "0")
    assert not _progress.enabled(None, file=Terminal())
    monkeypatch.setenv(_progress.ENV_VAR, "1")
    assert _progress.enabled(None, file=Terminal())


def test_auto_is_off_without_tqdm(interactive, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert not _progress.enabled(None, file=Terminal())


def test_false_is_off_even_in_a_terminal(interactive):
    assert not _progress.enabled(False, file=Terminal())


def test_forced_without_tqdm_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError, match=r"pip install 'lexiframe\[progress\]'"):
        _progress.enabled(True)


def test_not_a_bool_is_refused():
    with pytest.raises(TypeError, match="progress must be"):
        _progress.enabled("yes")  # type: ignore[arg-type]


def test_forced_bar_writes_to_the_given_stream():
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    with _progress.bar(3, progress=True, desc="reading run", file=stream) as bar:
        bar.update(2)
        bar.update()
    assert "reading run" in stream.getvalue()
    assert "0/3" in stream.getvalue()  # tqdm redraws at most every 0.1 s


def test_silent_bar_writes_nothing(interactive):
    stream = io.StringIO()
    with _progress.bar(3, progress=None, desc="reading run", file=stream) as bar:
        bar.update(3)
    assert stream.getvalue() == ""


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("track")
    return write_synthetic_track(root, n_systems=9, n_queries=3, depth=5)


def test_read_run_with_a_bar_reads_the_same_rows(many_runs, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr("polars.thread_pool_size", lambda: 1)  # groups of 4 files
    quiet = lf.io.read_run(many_runs.runs, progress=False)
    assert capsys.readouterr().err == ""
    shown = lf.io.read_run(many_runs.runs, progress=True)
    err = capsys.readouterr().err
    assert "reading run" in err
    assert "0/9" in err
    keys = ["system", "query", "doc"]
    assert shown.sort(keys).equals(quiet.sort(keys))


def test_read_run_is_silent_by_default_in_tests(many_runs, capsys, interactive):
    lf.io.read_run(many_runs.runs)
    assert capsys.readouterr().err == ""
