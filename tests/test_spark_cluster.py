"""lexiframe on a Spark standalone cluster: a master and a worker on 127.0.0.1, started from
the installed PySpark (its bundled ``spark-class`` and jars, nothing downloaded).

One test: the command with ``--spark spark://…`` and the docs' ``app.py`` under
``spark-submit`` in client mode give exactly the one-process per-query values, and the
import of ``lexiframe.spark`` warns that it pointed the cluster's executors at the
driver's interpreter (test_spark.py runs the app twice in local mode, and checks that the
warning is silent when the caller chose the interpreter).
Every process runs apart from the test's own (one Spark context per process); the test
ends them all, and gives up after :data:`TIMEOUT` seconds.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_spark import _missing

import lexiframe as lf

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 420
MEASURES = ["AP", "nDCG@10", "ASL"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as page:
            return int(json.load(page).get("aliveworkers", 0))
    except OSError:
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = _missing()
    if reason is not None:
        if os.environ.get("LEXIFRAME_REQUIRE_SPARK") == "1":
            pytest.fail(f"LEXIFRAME_REQUIRE_SPARK=1 but the Spark tests cannot run: {reason}")
        pytest.skip(reason)
    home = _spark_home()
    logs = tmp_path_factory.mktemp("cluster-logs")
    # The executors import lexiframe from this checkout, as the driver does.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": path}
    port, ui = _free_port(), _free_port()
    spark_class = str(home / "bin" / "spark-class")
    url = f"spark://127.0.0.1:{port}"
    with open(logs / "master.log", "w") as master_log, open(logs / "worker.log", "w") as worker_log:
        master = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(ui)],
            env=env, stdout=master_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        worker = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--cores", "2", "--memory", "2g", "--webui-port", str(_free_port()),
             "--work-dir", str(logs / "work")],
            env=env, stdout=worker_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while _alive_workers(ui) < 1:
                if time.monotonic() > deadline or master.poll() is not None:
                    pytest.fail(f"the standalone cluster did not start (logs in {logs})")
                time.sleep(1)
            yield url, env
        finally:
            for process in (worker, master):
                process.terminate()
            for process in (worker, master):
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()


def _run(command: list[str], env: dict, cwd: Path, deadline: float) -> subprocess.CompletedProcess:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        pytest.fail(f"the cluster test took more than {TIMEOUT} s")
    return subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=remaining
    )


def _docs_app() -> str:
    """The first Python block of the docs' "On Spark" section, as a reader pastes it."""
    page = (ROOT / "docs" / "scaling-out.md").read_text(encoding="utf-8")
    section = page[page.index("## On Spark") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_command_and_spark_submit_on_a_standalone_cluster_equal_one_process(cluster, tmp_path):
    from conftest import DATA

    deadline = time.monotonic() + TIMEOUT
    url, cluster_env = cluster
    keys = ["system", "query"]
    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    with pytest.warns(lf.LexiframeWarning):  # the toy track drops a query
        expected = lf.evaluate(run, qrels, MEASURES, depth=100).sort(keys)
    python = sys.executable
    env = {**cluster_env, "PYSPARK_PYTHON": python}
    env.pop("PYSPARK_DRIVER_PYTHON", None)

    # The command, on the cluster, with Spark's writer.
    command = [
        python, "-m", "lexiframe", "evaluate", str(DATA / "toy" / "runs"),
        "--qrels", str(DATA / "toy" / "qrels.txt"), *[a for m in MEASURES for a in ("-m", m)],
        "--depth", "100", "--spark", url, "-o", "cli.parquet", "--partition-by", "system",
        "--conf", "spark.executor.memory=1g",
    ]  # fmt: skip
    done = _run(command, env, tmp_path, deadline)
    assert done.returncode == 0, done.stderr[-2000:]
    got = pl.read_parquet(tmp_path / "cli.parquet" / "*" / "*.parquet", hive_partitioning=True)
    assert_frame_equal(got.select(expected.columns).sort(keys), expected, check_exact=True)

    # The docs' app under spark-submit, client mode, with PYSPARK_PYTHON unset: the
    # import of lexiframe.spark sets it, and warns (the driver's output, stdout and stderr
    # together, comes back through spark-submit's standard output).
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    (tmp_path / "app.py").write_text(_docs_app(), encoding="utf-8")
    submit = [str(_spark_home() / "bin" / "spark-submit"), "--master", url, "app.py"]
    submit_env = {key: value for key, value in env.items() if key != "PYSPARK_PYTHON"}
    submit_env["PYSPARK_DRIVER_PYTHON"] = python
    done = _run(submit, submit_env, tmp_path, deadline)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-2000:]
    assert "LexiframeWarning: the executors of spark://127.0.0.1" in output, output[-2000:]
    assert "sgnLP" in output and "evaluated" in output, output[-2000:]
    got = pl.read_parquet(tmp_path / "per-query.parquet" / "*.parquet")
    assert_frame_equal(got.cast(dict(expected.schema)).sort(keys), expected, check_exact=True)
