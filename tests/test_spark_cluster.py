"""lexiframe on a Spark standalone cluster (conftest's ``spark_cluster``: a master and a
worker on 127.0.0.1, one for the whole test run).

What needs a process of its own runs the command: its exit status and all it prints
(Spark's start-up output included), a signal, ``spark-submit``. The API's checks share one
session on the cluster, in one process apart from the tests' own (a process holds one
Spark context, the local one here): :func:`_api_checks` runs them all and reports each
outcome as JSON, and the tests read the report. Each process is given up after
:data:`TIMEOUT` seconds; nothing waits for a time to pass, only for a state to be reached.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, ROOT, Cluster, free_port, spark_home
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.errors import cli_text

TIMEOUT = 420
MEASURES = ["AP", "nDCG@10", "ASL"]
KEYS = ["system", "query"]


QUICK = ("spark.ui.enabled=false", "spark.sql.shuffle.partitions=4")
"""Settings that start the test's sessions sooner and cut their tiny shuffles in few tasks."""


def _command(cluster: Cluster, *args: str) -> list[str]:
    """The command on the cluster."""
    settings = [arg for setting in QUICK for arg in ("--conf", setting)]
    return [sys.executable, "-m", "lexiframe", "evaluate", *args, "--spark", cluster.url, *settings]


def _env(cluster: Cluster) -> dict[str, str]:
    """The cluster's environment, the executors pointed at this interpreter."""
    env = {**cluster.env, "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    return env


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )


def _docs_app() -> str:
    """The first Python block of the docs' "On Spark" section, as a reader pastes it."""
    page = (ROOT / "docs" / "scaling-out.md").read_text(encoding="utf-8")
    section = page[page.index("## On Spark") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def _toy_args() -> list[str]:
    return [str(DATA / "toy" / "runs"), "--qrels", str(DATA / "toy" / "qrels.txt")]


def _expected() -> pl.DataFrame:
    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    with pytest.warns(lf.LexiframeWarning):  # the toy track drops a query
        return lf.evaluate(run, qrels, MEASURES, depth=100).sort(KEYS)


@pytest.fixture(scope="session")
def one_session(spark_cluster, tmp_path_factory) -> tuple[dict, str, Path]:
    """The docs' app under ``spark-submit`` (client mode, ``PYSPARK_PYTHON`` unset: the
    import of lexiframe.spark sets it, and warns), followed on its session by
    :func:`_checks_on_one_session`: the report, the driver's output (stdout and stderr
    together, as spark-submit gives them back) and the folder of the outputs. Made once
    per test run (not per module: a worker of pytest-xdist may run this module's tests
    in two stretches, which would submit the app twice)."""
    folder = tmp_path_factory.mktemp("one-session")
    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    run.write_parquet(folder / "run.parquet")
    qrels.write_parquet(folder / "qrels.parquet")
    checks = (
        f"\nimport sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from test_spark_cluster import _checks_on_one_session\n"
        f"_checks_on_one_session({spark_cluster.url!r}, {str(folder)!r})\n"
    )
    (folder / "app.py").write_text(_docs_app() + checks, encoding="utf-8")
    submit = [str(spark_home() / "bin" / "spark-submit"), "--master", spark_cluster.url]
    submit += [*[arg for setting in QUICK for arg in ("--conf", setting)], "app.py"]
    env = {key: value for key, value in _env(spark_cluster).items() if key != "PYSPARK_PYTHON"}
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    done = _run(submit, env, folder)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    report = next(line for line in reversed(done.stdout.splitlines()) if line.startswith("{"))
    return json.loads(report), output, folder


def test_the_docs_app_under_spark_submit_equals_one_process(one_session):
    _, output, folder = one_session
    assert "LexiframeWarning: the executors of spark://127.0.0.1" in output, output[-2000:]
    assert "sgnLP" in output and "evaluated" in output, output[-2000:]
    expected = _expected()
    got = pl.read_parquet(folder / "per-query.parquet" / "*.parquet")
    assert_frame_equal(got.cast(dict(expected.schema)).sort(KEYS), expected, check_exact=True)


def test_the_command_on_the_cluster_equals_one_process_and_writes_a_uri_summary(one_session):
    report, _, folder = one_session
    status, err = report["command"]
    assert status == 0, err
    expected = _expected()
    got = pl.read_parquet(folder / "cli.parquet" / "*" / "*.parquet", hive_partitioning=True)
    assert_frame_equal(got.select(expected.columns), expected, check_exact=True)  # sorted
    summary = pl.read_parquet(folder / "summary.parquet" / "part-*.parquet")
    one_process = lf.summarize(expected)
    widened = {k: pl.Int64 for k, v in one_process.schema.items() if v == pl.UInt32}
    assert_frame_equal(summary, one_process.cast(widened), rel_tol=1e-12, abs_tol=0)


# --- no hang ----------------------------------------------------------------------------------

MORE_THAN_THE_WORKER = "16g"  # the worker has 2g


def test_a_job_without_executors_ends_naming_what_was_asked_and_offered(spark_cluster, tmp_path):
    command = _command(
        spark_cluster, *_toy_args(), "-m", "AP", "--executor-memory", MORE_THAN_THE_WORKER,
        "--resource-wait", "1", "--conf", f"spark.master.ui.port={spark_cluster.ui}",
        "--spark-log", "spark.log",
    )  # fmt: skip
    done = _run(command, _env(spark_cluster), tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    # Spark's start-up lines went to --spark-log, and only the command's line to stderr.
    assert "Setting default log level" in (tmp_path / "spark.log").read_text()
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"lexiframe: error: no executor started on {spark_cluster.url}")
    assert f"executors of {MORE_THAN_THE_WORKER} memory" in lines[0], lines[0]
    assert "the cluster offers at most 2048m memory and 2 cores" in lines[0], lines[0]


def _until(condition, what: str) -> None:
    """Wait until ``condition()`` holds (polled), or fail after :data:`TIMEOUT` seconds."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.5)


@pytest.mark.parametrize(("signum", "status", "said"), [
    (signal.SIGTERM, 143, "lexiframe: stopped by SIGTERM"),
    (signal.SIGINT, 130, "lexiframe: interrupted"),
])  # fmt: skip
def test_a_signal_stops_a_waiting_job_in_one_line_and_ends_the_application(
    spark_cluster, tmp_path, signum, status, said
):
    def apps() -> list[dict]:
        return spark_cluster.state().get("activeapps", [])

    _until(lambda: not apps(), "the cluster's earlier applications to end")
    command = _command(
        spark_cluster, *_toy_args(), "-m", "AP", "--executor-memory", MORE_THAN_THE_WORKER,
        "--resource-wait", "100000",
    )  # fmt: skip
    process = subprocess.Popen(
        command, env=_env(spark_cluster), cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _until(lambda: any(app["name"] == "lexiframe evaluate" for app in apps()), "the job")
        process.send_signal(signum)
        _, err = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
    assert process.returncode == status, err[-2000:]
    assert err == f"{said}\n"
    _until(lambda: not apps(), "the application to end")


def test_an_unreachable_master_is_said_at_once(tmp_path):
    # Nothing listens on the port: refused before Spark's JVM starts (no cluster needed).
    url = f"spark://127.0.0.1:{free_port()}"
    done = _run([sys.executable, "-m", "lexiframe", "evaluate", *_toy_args(), "--spark", url],
                None, tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        f"lexiframe: error: cannot reach the Spark master {url} ({url[8:]}: Connection "
        "refused): is it running, and is the URL the one its web page shows?\n"
    )


# --- errors: the command's line and the API's type, on one session on the cluster -----------


def _bad_inputs(folder: Path) -> dict[str, tuple[str, str]]:
    """The run and the qrels of each error case, written to ``folder``."""
    first = sorted((DATA / "toy" / "runs").iterdir())[0]
    qrels = DATA / "toy" / "qrels.txt"
    lines = first.read_text().splitlines()
    (folder / "twice.txt").write_text("\n".join([*lines, lines[0]]) + "\n")
    judgments = qrels.read_text().splitlines()
    relevant = next(line for line in judgments if not line.endswith(" 0"))
    (folder / "judged-twice.txt").write_text("\n".join([*judgments, relevant]) + "\n")
    whole = gzip.compress(first.read_bytes())
    (folder / "cut.txt.gz").write_bytes(whole[: len(whole) // 2])
    return {
        "duplicate document": (str(folder / "twice.txt"), str(qrels)),
        "document judged twice": (str(first), str(folder / "judged-twice.txt")),
        "missing URI": ((folder / "nowhere" / "run.txt").as_uri(), str(qrels)),
        "s3a without the connector": ("s3a://lexiframe-tests/run.txt", str(qrels)),
        "truncated gzip": (str(folder / "cut.txt.gz"), str(qrels)),
    }


def _checks_on_one_session(url: str, folder: str) -> None:
    """Run after the docs' app, on its session: the command on the cluster (in this
    process, so on this session) writing its per-query table partitioned and its summary to
    a URI, then every error case through the command and through the API. Prints the
    outcomes as one JSON line: {"command": [status, stderr], case: {"cli": [status,
    stderr], "api": [type, message, its command words]}}."""
    import contextlib
    import io

    from pyspark.sql import SparkSession

    from lexiframe import spark as lfs
    from lexiframe.cli import main
    from lexiframe.spark import io as sio

    session = SparkSession.getActiveSession()

    def command(*args: str, qrels: str = str(DATA / "toy" / "qrels.txt")) -> list:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(["evaluate", *args, "--qrels", qrels, "--spark", url])
        return [status, err.getvalue()]

    report: dict = {}
    measures = [a for m in MEASURES for a in ("-m", m)]
    report["command"] = command(
        str(DATA / "toy" / "runs"), *measures, "--depth", "100", "-o", f"{folder}/cli.parquet",
        "--partition-by", "system", "--summary", (Path(folder) / "summary.parquet").as_uri(),
    )  # fmt: skip
    for case, (source, qrels) in _bad_inputs(Path(folder)).items():
        cli = command(source, "-m", "AP", qrels=qrels)
        try:
            with lfs.lexiframe_errors():
                run = sio.read_run(session, source)
                lfs.evaluate(run, sio.read_qrels(session, qrels), ["AP"]).collect()
            outcome = ["none", "", ""]
        except Exception as error:  # reported, and judged by the test
            outcome = [type(error).__name__, str(error), cli_text(error)]
        report[case] = {"cli": cli, "api": outcome}
    print(json.dumps(report))


def _one_process_message(source: str, qrels: str) -> str:
    run = lf.read_run(source)
    with pytest.raises(lf.LexiframeError) as caught:
        lf.evaluate(run, lf.read_qrels(qrels), ["AP"])
    return str(caught.value)


EXPECTED = {
    # case: (the API's type, what its message and the command's line hold)
    "duplicate document": ("InputError", None),  # the one-process message, exactly
    "document judged twice": ("InputError", None),  # found in a worker of the cluster
    "missing URI": ("InputError", "run file not found: 'file://"),
    "s3a without the connector": (
        "SparkJobError",
        "cannot read the run 's3a://lexiframe-tests/run.txt': java.lang.ClassNotFoundException: "
        "Class org.apache.hadoop.fs.s3a.S3AFileSystem not found (s3a:// needs Hadoop's S3",
    ),
    "truncated gzip": ("SparkJobError", "java.io.EOFException: Unexpected end of input stream"),
}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_an_error_on_the_cluster_says_its_cause_in_one_line_and_type(one_session, case, tmp_path):
    report, _, _ = one_session
    kind, excerpt = EXPECTED[case]
    status, err = report[case]["cli"]
    api_type, api_message, in_cli_words = report[case]["api"]
    if excerpt is None:
        excerpt = _one_process_message(*_bad_inputs(tmp_path)[case])
        assert api_message == excerpt
    assert api_type == kind and excerpt in api_message, (api_type, api_message)
    assert status == 2 and err.count("\n") == 1 and err.startswith("lexiframe: error: "), err
    assert in_cli_words in err, err  # the same error, in the command's words


# --- the packing recipe -----------------------------------------------------------------------


def _docs_block(after: str) -> str:
    """The first bash block of docs/scaling-out.md after the text ``after``."""
    page = (ROOT / "docs" / "scaling-out.md").read_text(encoding="utf-8")
    return re.search(r"```bash\n(.*?)```", page[page.index(after) :], re.DOTALL).group(1)


@pytest.mark.skipif(
    os.environ.get("LEXIFRAME_PACKAGING_TEST") != "1",
    reason="builds an environment from the package index (minutes): LEXIFRAME_PACKAGING_TEST=1",
)
def test_the_packing_recipe_works_as_written_on_the_cluster(spark_cluster, tmp_path):
    """The docs' recipe, as written: the wheel, the environment, venv-pack; then the docs'
    client-mode spark-submit ships it, and the executors run its Python."""
    env = {key: value for key, value in _env(spark_cluster).items() if key != "VIRTUAL_ENV"}
    env["SRC"] = str(ROOT)
    python = Path(sys.executable).parent  # "python" in the recipe: this one, with pip
    env["PATH"] = f"{python}{os.pathsep}{spark_home() / 'bin'}{os.pathsep}{env['PATH']}"
    pack = _docs_block("Pack an environment holding lexiframe")
    done = _run(["bash", "-e", "-c", pack], env, tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert (tmp_path / "env.tar.gz").stat().st_size > 0

    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    shipped = "\nimport sys\nprint('executors run', spark.sparkContext.parallelize([0], 1)"
    shipped += ".map(lambda _: sys.executable).first())\n"
    (tmp_path / "app.py").write_text(_docs_app() + shipped, encoding="utf-8")
    submit = _docs_block("**Client mode**").replace("spark://host:7077", spark_cluster.url)
    done = _run(["bash", "-e", "-c", submit], env, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    # The archive is unpacked in each executor's folder, as "environment".
    ran = re.search(r"^executors run (\S+)$", done.stdout, re.MULTILINE)
    assert ran and ran.group(1).endswith("/environment/bin/python"), output[-3000:]
    expected = _expected()
    got = pl.read_parquet(tmp_path / "per-query.parquet" / "*.parquet")
    assert_frame_equal(got.cast(dict(expected.schema)).sort(KEYS), expected, check_exact=True)
