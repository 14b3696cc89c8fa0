"""The session ``lexiframe evaluate --spark`` starts: a local session on small local inputs
compiles with the client compiler only, unless the caller set the JVM's options.

No JVM is started: the decision is read from the settings handed to Spark's builder.
"""

from __future__ import annotations

import argparse
import os

import pytest

pytest.importorskip("pyspark")

from lexiframe.spark import cli

LIMIT = cli.QUICK_START_BYTES


def _file(folder, name, size):
    path = folder / name
    with open(path, "wb") as file:
        file.truncate(size)  # sparse: the size without the bytes
    return str(path)


def test_small_local_inputs_start_quickly_and_large_or_remote_ones_do_not(tmp_path):
    run, qrels = _file(tmp_path, "run.txt", LIMIT // 2), _file(tmp_path, "qrels.txt", LIMIT // 2)
    assert cli.quick_start([run, qrels], [])
    assert cli.quick_start([f"file://{run}", qrels], [])
    assert not cli.quick_start([run, qrels, _file(tmp_path, "b.txt", 1)], [])
    folder = tmp_path / "runs"
    (folder / "part").mkdir(parents=True)
    _file(folder / "part", "a.parquet", LIMIT)
    assert cli.quick_start([str(folder)], [])
    _file(folder, "b.parquet", 1)  # a folder counts every file under it
    assert not cli.quick_start([str(folder)], [])
    for remote in ("s3a://bucket/run", "hdfs:///run", "table:runs", str(tmp_path / "run*.txt")):
        assert not cli.quick_start([remote, qrels], []), remote


@pytest.mark.parametrize("key", cli.JAVA_OPTIONS)
def test_java_options_the_caller_set_are_left_alone(tmp_path, monkeypatch, key):
    run = _file(tmp_path, "run.txt", 10)
    assert not cli.quick_start([run], [key])
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(f"# the site's settings\n\n{key}  -Xss4m\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    assert list(cli._defaults()) == [key]
    monkeypatch.delenv("SPARK_CONF_DIR")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))  # SPARK_HOME/conf
    assert list(cli._defaults()) == [key]
    monkeypatch.delenv("SPARK_HOME")
    assert list(cli._defaults()) == []


class _Builder:
    """Spark's session builder, recording what it is given."""

    def __init__(self):
        self.settings = {}

    def master(self, master):
        self.settings["master"] = master
        return self

    def appName(self, name):
        return self

    def config(self, key, value):
        self.settings[key] = value
        return self

    def getOrCreate(self):
        return self


@pytest.fixture
def builder(monkeypatch, tmp_path):
    from pyspark.sql import SparkSession

    recorder = _Builder()
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(SparkSession, "builder", recorder)
    for name in ("SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the class archive's
    return recorder


def _args(master, sources, conf=None):
    return argparse.Namespace(
        spark=master, runs=sources[:-1], qrels=sources[-1:], conf=conf, driver_memory=None,
        executor_memory=None, spark_log=os.devnull,
    )  # fmt: skip


def test_the_session_of_the_command(builder, tmp_path):
    sources = [_file(tmp_path, "run.txt", 100), _file(tmp_path, "qrels.txt", 100)]
    cli.session(_args("local[2]", sources))
    # the client compiler; from the second quick start on, the class archive written as
    # the JVM exits (none kept yet)
    assert builder.settings["spark.driver.extraJavaOptions"] == cli.QUICK_START_OPTION
    cli.session(_args("local[2]", sources))
    options = builder.settings["spark.driver.extraJavaOptions"].split()
    assert options[0] == cli.QUICK_START_OPTION
    assert options[1].startswith(f"-XX:ArchiveClassesAtExit={tmp_path / 'cache' / 'lexiframe'}")
    builder.settings.clear()
    conf = ["spark.driver.extraJavaOptions=-Xss4m", "spark.ui.enabled=false"]
    cli.session(_args("local[2]", sources, conf))
    assert builder.settings["spark.driver.extraJavaOptions"] == "-Xss4m"
    assert builder.settings["spark.ui.enabled"] == "false"
    builder.settings.clear()
    # large inputs: the server compiler, and the class archive all the same
    cli.session(_args("local[2]", [*sources, _file(tmp_path, "big.txt", LIMIT)]))
    (archive,) = builder.settings["spark.driver.extraJavaOptions"].split()[:1]
    assert archive.startswith("-XX:ArchiveClassesAtExit=")
    builder.settings.clear()
    cli.session(_args("yarn", sources))  # a cluster's driver: not this decision
    assert "spark.driver.extraJavaOptions" not in builder.settings


def test_the_workers_polars_uses_the_cores_of_a_task(builder, tmp_path, monkeypatch):
    sources = [_file(tmp_path, "run.txt", 100), _file(tmp_path, "qrels.txt", 100)]
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    cli.session(_args("local[2]", sources))
    assert builder.settings[cli.WORKER_THREADS] == "1"
    builder.settings.clear()
    cli.session(_args("yarn", sources, ["spark.task.cpus=4"]))
    assert builder.settings[cli.WORKER_THREADS] == "4"
    builder.settings.clear()
    cli.session(_args("local[2]", sources, [f"{cli.WORKER_THREADS}=3"]))  # the caller's
    assert builder.settings[cli.WORKER_THREADS] == "3"
    builder.settings.clear()
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.task.cpus  2\n")  # the site's
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    cli.session(_args("yarn", sources))
    assert builder.settings[cli.WORKER_THREADS] == "2"
    monkeypatch.delenv("SPARK_CONF_DIR")
    builder.settings.clear()
    monkeypatch.setenv("POLARS_MAX_THREADS", "2")  # inherited by local workers: left alone
    cli.session(_args("local[2]", sources))
    assert cli.WORKER_THREADS not in builder.settings


def test_stopping_a_session_whose_jvm_died_does_not_raise():
    """The command stops its session in a ``finally``: a JVM that died (out of memory)
    must not replace the error that ended the job with one of its own."""
    from types import SimpleNamespace

    def dead():
        raise ConnectionRefusedError("the JVM is gone")

    context = SimpleNamespace(getConf=dead, _gateway=None)
    cli._stop(SimpleNamespace(sparkContext=context, stop=lambda: None))


def test_a_local_session_goes_without_the_web_ui_unless_asked(builder, tmp_path, monkeypatch):
    sources = [_file(tmp_path, "run.txt", 100), _file(tmp_path, "qrels.txt", 100)]
    cli.session(_args("local[2]", sources))
    assert builder.settings[cli.WEB_UI] == "false"
    builder.settings.clear()
    cli.session(_args("local[2]", sources, [f"{cli.WEB_UI}=true"]))  # the caller's
    assert builder.settings[cli.WEB_UI] == "true"
    builder.settings.clear()
    cli.session(_args("yarn", sources))  # a cluster: Spark's default
    assert cli.WEB_UI not in builder.settings
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(f"{cli.WEB_UI} true\n")  # the site's
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    builder.settings.clear()
    cli.session(_args("local[2]", sources))
    assert cli.WEB_UI not in builder.settings


def _stopping_session(options: str):
    """A stand-in session whose stop drops its JVM handle at once, as PySpark's does, and
    then waits (as PySpark waits for its accumulator server) until ``release`` is set."""
    import threading
    from types import SimpleNamespace

    release, finished, killed = threading.Event(), threading.Event(), []
    context = SimpleNamespace(
        _jsc=object(),
        getConf=lambda: SimpleNamespace(get=lambda key, default: options),
        _gateway=SimpleNamespace(proc=SimpleNamespace(kill=lambda: killed.append(1))),
    )

    def stop():
        context._jsc = None
        release.wait()
        finished.set()

    return SimpleNamespace(sparkContext=context, stop=stop), release, finished, killed


def test_the_command_ends_once_the_jvm_stopped_without_pysparks_last_wait(monkeypatch):
    """The stop returns once the JVM stopped, without waiting for the rest of PySpark's
    stop (which would reach the deadline and kill the JVM), unless the JVM writes the
    class archive, which ends the gateway that the rest of the stop uses."""
    monkeypatch.setattr(cli, "STOP_SECONDS", 20)
    monkeypatch.setattr(cli.class_archive, "keep", lambda spark, options: None)
    session, release, finished, killed = _stopping_session("-Xss4m")
    cli._stop(session)
    assert not finished.is_set() and killed == []
    release.set()
    session, release, finished, killed = _stopping_session(f"{cli.class_archive.DUMP_OPTION}/x")
    release.set()  # the stop ends: the command waits for it
    cli._stop(session)
    assert finished.is_set() and killed == []
