"""Shared fixtures: one test body run over every backend (narwhals' ``constructor`` style),
and Spark's: one local session and one standalone cluster for the whole test run.

A test receives a :class:`Backend` and calls it with Polars DataFrames; the backend turns
them into its native frames (Polars eager, Polars lazy, pandas), calls the ``.lexi``
namespace or accessor of those frames, checks the result has the native type, and hands
back a Polars DataFrame so the assertions are the same for every backend.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import settings
from xdist.scheduler import LoadScopeScheduling

import lexiframe  # noqa: F401  (registers .lexi)
from lexiframe.io import read_qrels, read_run

DATA = Path(__file__).parent / "data"

# No test depends on timing: Hypothesis's per-example deadline (200 ms by default) fails a
# property test on a loaded machine, so no property test has one.
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")


QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1 -XX:-UsePerfData"
"""The Java options of every Spark JVM the tests start (the local session's, the cluster's
daemons and executors, the commands' and the docs' examples'): the client compiler only
(one thread), which starts a JVM and runs a small job about twice as fast as the default
tiered compilation, and the serial garbage collector, whose heap of a few tests needs no
collector threads (lexiframe itself sets only the client compiler, for the command's quick
start)."""

QUICK_SQL = {"spark.sql.codegen.wholeStage": "false"}
"""Spark SQL settings of every session the tests start: the tests' tables have a few hundred
rows, on which compiling each query's generated code costs more than it saves. The values
are computed by lexiframe in the Python workers, whatever Spark's plan around them."""


def _quick_spark_jvms() -> None:
    """Give every Spark JVM started from this process or its children :data:`QUICK_JVM`
    and every session :data:`QUICK_SQL`, through a configuration folder of the test run's
    own (``SPARK_CONF_DIR``), unless the caller set one."""
    if "SPARK_CONF_DIR" in os.environ:
        return
    import atexit
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lexiframe-tests-spark-conf-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    defaults = {
        "spark.driver.defaultJavaOptions": QUICK_JVM,
        "spark.executor.defaultJavaOptions": QUICK_JVM,
        **QUICK_SQL,
    }
    lines = [f"{key} {value}\n" for key, value in defaults.items()]
    (folder / "spark-defaults.conf").write_text("".join(lines), encoding="utf-8")
    os.environ["SPARK_CONF_DIR"] = str(folder)
    os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", QUICK_JVM)


_quick_spark_jvms()


def _arrow_lists(dtype: pa.DataType) -> pd.ArrowDtype | None:
    nested = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
    return pd.ArrowDtype(dtype) if nested else None


def polars_to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """What a pandas 3 user holds: ``str`` columns by default, lists Arrow-backed."""
    return frame.to_arrow().to_pandas(types_mapper=_arrow_lists)


@dataclass(frozen=True)
class Backend:
    """How one backend builds its frames and brings the results back to Polars."""

    name: str
    native: Callable[[pl.DataFrame], Any]
    result_type: type
    to_polars: Callable[[Any], pl.DataFrame]
    warns_on_drop: bool
    """Eager entry points warn about dropped queries; a LazyFrame plan cannot (coverage does)."""

    def __repr__(self) -> str:
        return self.name

    def _back(self, result: Any) -> pl.DataFrame:
        assert isinstance(result, self.result_type), (self.name, type(result))
        return self.to_polars(result)

    def positions(self, run: pl.DataFrame, qrels: pl.DataFrame, **options: Any) -> pl.DataFrame:
        return self._back(self.native(run).lexi.positions(self.native(qrels), **options))

    def measures(self, frame: pl.DataFrame, names: Any, **options: Any) -> pl.DataFrame:
        return self._back(self.native(frame).lexi.measures(names, **options))

    def evaluate(
        self, run: pl.DataFrame, qrels: pl.DataFrame, names: Any, **options: Any
    ) -> pl.DataFrame:
        return self._back(self.native(run).lexi.evaluate(self.native(qrels), names, **options))

    def summarize(self, frame: pl.DataFrame, **options: Any) -> pl.DataFrame:
        return self._back(self.native(frame).lexi.summarize(**options))

    def coverage(self, run: pl.DataFrame, qrels: pl.DataFrame, **options: Any) -> pl.DataFrame:
        result = self.native(run).lexi.coverage(self.native(qrels), **options)
        if isinstance(result, pd.DataFrame):
            return pl.from_pandas(result)
        assert isinstance(result, pl.DataFrame), (self.name, type(result))
        return result


BACKENDS = {
    "polars-eager": Backend(
        name="polars-eager",
        native=lambda frame: frame,
        result_type=pl.DataFrame,
        to_polars=lambda result: result,
        warns_on_drop=True,
    ),
    "polars-lazy": Backend(
        name="polars-lazy",
        native=lambda frame: frame.lazy(),
        result_type=pl.LazyFrame,
        # In memory, as the eager backend: on these tests' few rows Polars' streaming engine
        # takes twice as long over many measures; tests/test_streaming.py collects every
        # measure with both engines.
        to_polars=lambda result: result.collect(engine="in-memory"),
        warns_on_drop=False,
    ),
    "pandas": Backend(
        name="pandas",
        native=polars_to_pandas,
        result_type=pd.DataFrame,
        to_polars=pl.from_pandas,
        warns_on_drop=True,
    ),
}


@pytest.fixture(params=list(BACKENDS), ids=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    """Run the test once per backend: Polars eager, Polars lazy, pandas."""
    return BACKENDS[request.param]


def read_trec_run(*paths: Path) -> pl.DataFrame:
    """TREC run files (query Q0 doc rank score system) as one run table, ids as strings."""
    return read_run(list(paths))


def read_trec_qrels(path: Path) -> pl.DataFrame:
    """A TREC qrels file (query iter doc relevance), ids as strings."""
    return read_qrels(path)


# --- Spark ----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def spark_missing() -> str | None:
    """Why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "PySpark is not installed (pip install pyspark, or the spark extra)"
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (
        java_home and os.path.exists(os.path.join(java_home, "bin", "java"))
    ):
        return "Java is not installed (PySpark needs a Java 17 or later runtime)"
    return None


def _skip_without_spark() -> None:
    """Skip (or fail, under ``LEXIFRAME_REQUIRE_SPARK=1``, as CI sets) without Spark."""
    reason = spark_missing()
    if reason is not None:
        if os.environ.get("LEXIFRAME_REQUIRE_SPARK") == "1":
            pytest.fail(f"LEXIFRAME_REQUIRE_SPARK=1 but the Spark tests cannot run: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local Spark session (two cores) of the test run."""
    _skip_without_spark()
    from pyspark.sql import SparkSession

    import lexiframe.spark  # noqa: F401  (sets PYSPARK_PYTHON before the session starts)

    session = (
        SparkSession.builder.master("local[2]")
        .appName("lexiframe-tests")
        .config("spark.sql.shuffle.partitions", "3")
        # Three partitions per shuffle leave adaptive execution nothing to coalesce: its
        # planning again at each stage is only cost here (elsewhere it cuts Spark's default
        # 200 partitions, and turning it off would cost more).
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def spark_home() -> Path:
    """The installed PySpark, which bundles ``spark-class``, ``spark-submit`` and the jars."""
    import pyspark

    return Path(pyspark.__file__).parent


@dataclass(frozen=True)
class Cluster:
    """A standalone cluster on 127.0.0.1: its master URL, the port of the master's web page
    and the environment its processes (and the test's commands) run in."""

    url: str
    ui: int
    env: dict[str, str]

    def state(self) -> dict[str, Any]:
        """The master's view (workers, applications), from its web page's JSON."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as page:
                return dict(json.load(page))
        except OSError:
            return {}


CLUSTER_START_SECONDS = 180
"""How long the cluster may take to start (a worker registered) before the tests fail."""


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The one standalone cluster of the test run: a master and a worker (2 cores, 2 GB)
    on 127.0.0.1, started from the installed PySpark (nothing downloaded) and ended at the
    end of the run. Its processes import lexiframe from this checkout."""
    _skip_without_spark()
    home = spark_home()
    logs = tmp_path_factory.mktemp("cluster-logs")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": path}
    port, ui = free_port(), free_port()
    spark_class = str(home / "bin" / "spark-class")
    cluster = Cluster(f"spark://127.0.0.1:{port}", ui, env)
    with open(logs / "master.log", "w") as master_log, open(logs / "worker.log", "w") as worker_log:
        master = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(ui)],
            env=env, stdout=master_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        worker = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", cluster.url, "--host",
             "127.0.0.1", "--cores", "2", "--memory", "2g", "--webui-port", str(free_port()),
             "--work-dir", str(logs / "work")],
            env=env, stdout=worker_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + CLUSTER_START_SECONDS
            while int(cluster.state().get("aliveworkers", 0)) < 1:
                if time.monotonic() > deadline or master.poll() is not None:
                    pytest.fail(f"the standalone cluster did not start (logs in {logs})")
                time.sleep(1)
            yield cluster
        finally:
            for process in (worker, master):
                process.terminate()
            for process in (worker, master):
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()


SHARED = {
    "spark": "spark",
    "spark_cluster": "spark-cluster",
    "one_session": "spark-cluster",
    "site": "docs-site",
}
"""The fixtures a test run makes once (a Spark session, the standalone cluster, the docs'
site), and the group of the tests that use them."""


def shared_group(nodeid: str) -> str | None:
    """The group of a test that shares what a test run makes once (:data:`SHARED`): the
    cluster's tests share one standalone cluster, the other Spark tests one local session,
    the docs' tests one build of the site. Each group runs in one worker, which makes it
    once."""
    path, _, name = nodeid.partition("::")
    file = path.rsplit("/", 1)[-1]
    if file == "test_spark_cluster.py":
        return "spark-cluster"
    if "spark" in file or "/spark/" in path or "spark" in name or "scaling-out" in name:
        return "spark"
    return "docs-site" if file == "test_docs.py" else None


def misgrouped(items: list[Any]) -> list[str]:
    """The tests that use a shared fixture (:data:`SHARED`) outside its group: in another
    worker, each would make it again (start a session or a cluster, build the site)."""
    wrong = []
    for item in items:
        used = {SHARED[name] for name in getattr(item, "fixturenames", ()) if name in SHARED}
        if used and (len(used) > 1 or shared_group(item.nodeid) not in used):
            wrong.append(item.nodeid)
    return wrong


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test that uses a shared fixture outside its group (rename it, or move it to
    the group's test file)."""
    wrong = misgrouped(items)
    if wrong:
        raise pytest.UsageError(f"tests outside the group of what they share: {wrong}")


class SharedGroups(LoadScopeScheduling):
    """pytest-xdist's load scheduling with each group of :func:`shared_group` sent whole to
    one worker, the largest first; every other test is a unit of its own."""

    def _split_scope(self, nodeid: str) -> str:
        return shared_group(nodeid) or nodeid


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> SharedGroups | None:
    """Under pytest-xdist with ``--dist loadgroup`` (pyproject's options), :class:`SharedGroups`.
    The groups are read from the node ids: pytest-xdist's ``xdist_group`` marker no longer
    reaches its scheduler under pytest 9.2 (it rewrites an attribute pytest 9.2 no longer
    reads), and the Spark tests would run in both workers, each starting its own."""
    if config.getvalue("dist") != "loadgroup":
        return None  # another --dist asked for: pytest-xdist's own
    return SharedGroups(config, log)
