"""The quick start's class archive (lexiframe.spark.class_archive): none at the first
quick start, written by the second local session's JVM as it exits, renamed into place
only after a clean exit, mapped by the later sessions. The JVM is stood in for by a
process that writes the archive's file when its standard input ends and exits with a
given status, as the gateway's JVM does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("pyspark")

from lexiframe.spark import class_archive

STAND_IN = (
    "import sys; sys.stdin.read(); path, status = sys.argv[1], int(sys.argv[2]); "
    "open(path, 'wb').write(b'archive'); sys.exit(status)"
)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "lexiframe"


def _session_of(options: list[str], status: int) -> SimpleNamespace:
    """A stopped session whose "JVM" was started with ``options``."""
    dump = next(item for item in options if item.startswith(class_archive.DUMP_OPTION))
    written = dump[len(class_archive.DUMP_OPTION) :]
    jvm = subprocess.Popen([sys.executable, "-c", STAND_IN, written, str(status)],
                           stdin=subprocess.PIPE)  # fmt: skip
    gateway = SimpleNamespace(proc=jvm, shutdown=lambda: None)
    return SimpleNamespace(sparkContext=SimpleNamespace(_gateway=gateway))


def _second_options() -> list[str]:
    """The options of a second quick start: the first only leaves its mark."""
    assert class_archive.java_options() == []
    return class_archive.java_options()


def test_the_second_session_writes_the_archive_and_the_next_maps_it(cache, capsys):
    options = _second_options()
    assert options[0].startswith(f"{class_archive.DUMP_OPTION}{cache}/spark-classes-")
    assert options[0].endswith(f".jsa.{os.getpid()}.tmp")
    assert set(class_archive.QUIET_OPTIONS) <= set(options)
    class_archive.keep(_session_of(options, 0), " ".join(["-XX:TieredStopAtLevel=1", *options]))
    assert "note: keeping the classes Spark loaded" in capsys.readouterr().err
    archive = class_archive.archive_path()
    assert sorted(cache.iterdir()) == [archive, archive.with_name(f"{archive.name}.seen")]
    assert archive.read_bytes() == b"archive"
    assert class_archive.java_options()[0] == f"{class_archive.MAP_OPTION}{archive}"


def test_a_jvm_that_does_not_exit_cleanly_leaves_no_archive(cache):
    options = _second_options()
    class_archive.keep(_session_of(options, 1), " ".join(options))
    assert [path.suffix for path in cache.iterdir()] == [".seen"]
    assert class_archive.java_options()[0].startswith(class_archive.DUMP_OPTION)


def test_a_session_without_the_dump_option_is_left_alone(cache):
    jvm = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                           stdin=subprocess.PIPE)  # fmt: skip
    try:
        gateway = SimpleNamespace(proc=jvm, shutdown=lambda: None)
        spark = SimpleNamespace(sparkContext=SimpleNamespace(_gateway=gateway))
        class_archive.keep(spark, f"-XX:TieredStopAtLevel=1 {class_archive.MAP_OPTION}x.jsa")
        assert jvm.poll() is None  # not ended: nothing to keep
    finally:
        jvm.kill()
        jvm.communicate()


def test_stale_half_written_archives_are_removed_and_no_archive_without_a_place(
    cache, tmp_path, monkeypatch
):
    cache.mkdir(parents=True)
    stale, fresh = cache / "old.jsa.1.tmp", cache / "new.jsa.2.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half")
    old = time.time() - class_archive.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    _second_options()
    assert not stale.exists() and fresh.exists()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "with space"))
    assert class_archive.java_options() == []  # Spark would split the option at the space
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert class_archive.archive_path() is None and class_archive.java_options() == []
