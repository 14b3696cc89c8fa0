"""The recommender shape on Spark: lexiframe against Spark's own RankingEvaluator.

    python benchmarks/run.py --shape recsys --engine spark
    python benchmarks/run.py --shape recsys-20k --engine spark    # 20 million rows
    python benchmarks/run.py --shape recsys-20k --engine spark --repeat 3 \
        --steps spark-floor spark-lexiframe spark-lexiframe-cold spark-cli    # the overheads

Each step runs in a fresh process with its own local Spark session (``local[*]``), read from
the same parquet files; the parent samples the resident memory of that process and of every
process under it (the JVM of the driver and executors, the Python workers) and reports the
peak of their sum, and of the JVM and the Python workers apart. The session start is not
timed, nor, in ``spark-lexiframe`` and ``spark-floor``, the same warm-up of two jobs (one
pass over the run, the Python workers' start), so that the two are compared alike; the
command, which pays its first jobs, is compared with ``spark-lexiframe-cold``. The three
also report the CPU seconds of their process tree (driver, JVM, Python workers) in the
timed part: on a shared machine the wall time varies with the other load more than the CPU
time does. The qrels are binarised (relevance ≥ 1) for both, so that the nDCG of both is the
binary one.

- ``spark-lexiframe``: ``lexiframe.spark.evaluate`` of AP@k, nDCG@k, P@k, R@k per user
  (its checks of the inputs included, its buckets chosen from the data), then the
  per-system means (``lexiframe.spark.summarize``), collected.
- ``spark-lexiframe-cold`` (with ``--steps``): the same with its first jobs timed (no
  warm-up: the JVM compiles its code and the Python workers start while it runs).
- ``spark-ranking-evaluator``: ``pyspark.ml.evaluation.RankingEvaluator``: the top k of
  each ranking as an array (score descending, ties by document id descending as a string,
  trec_eval's order) joined with the user's relevant documents (a user the system skipped
  gets an empty array, so that both average over the same users), then
  ``meanAveragePrecisionAtK``, ``ndcgAtK``, ``precisionAtK`` and ``recallAtK`` per system.
- ``polars-streaming``: lexiframe in one process (scanned parquet, the streaming engine),
  the same means, for the crossover.
- ``spark-cli`` (with ``--steps``): ``lexiframe evaluate --spark 'local[*]'`` on the same
  files (the qrels binarised once into ``qrels-binary.parquet``), a whole process as a user
  waits for it, its time split by Spark's event log.
- ``spark-api-process`` (with ``--steps``): the API step as a user's script runs it, a
  whole process as ``spark-cli`` is (start-up, a plain local session, reading the files,
  ``lfs.evaluate`` and ``lfs.summarize``, the summary written, the stop): what the command
  adds to the same job written against the API.
- ``spark-sql`` (with ``--steps``): a prototype, not lexiframe's code: the four measures as
  one Spark SQL plan (a top-k window in trec_eval's order, the judgments broadcast), for
  its time beside the floor and its means beside the API's.
- ``spark-floor`` (with ``--steps``): what Spark spends on the run before lexiframe does
  anything: cogrouped with the qrels into Python (the time in the table, timed first after
  the API step's warm-up), then, for the note, one pass over its columns (an aggregation,
  as a check of its values would be; the ratios also give the API step over the pass and
  the cogroup together), handed to Python with no shuffle, and shuffled into buckets
  alone, each with a function that counts.

Definitions: P@k, R@k and binary nDCG@k agree. Spark's MAP@k divides the sum of precisions
at the relevant ranks by min(k, number of relevant documents); lexiframe's AP@k (trec_eval's
map_cut_k) divides by the number of relevant documents, so they differ wherever a user has
more than k relevant documents.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

K = 10
MEASURES = [f"AP@{K}", f"nDCG@{K}", f"P@{K}", f"R@{K}"]
SPARK_METRICS = {
    f"AP@{K}": "meanAveragePrecisionAtK",
    f"nDCG@{K}": "ndcgAtK",
    f"P@{K}": "precisionAtK",
    f"R@{K}": "recallAtK",
}
STEPS = ["spark-lexiframe", "spark-ranking-evaluator", "polars-streaming"]
ROWS_PER_BUCKET = 2_000_000


def _session(rows: int):
    from pyspark.sql import SparkSession

    import lexiframe.spark  # noqa: F401  (PYSPARK_PYTHON: this interpreter)
    from lexiframe.spark.cli import WORKER_THREADS

    partitions = max(8, rows // ROWS_PER_BUCKET)
    spark = (
        SparkSession.builder.master("local[*]")
        .appName("lexiframe-benchmark")
        .config("spark.driver.memory", os.environ.get("LEXIFRAME_BENCH_DRIVER_MEMORY", "6g"))
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config(WORKER_THREADS, "1")  # as the command's session: Polars on a task's one core
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark, partitions


def _inputs(spark, root: Path):
    from pyspark.sql import functions as F

    runs = sorted(str(path) for path in (root / "parquet" / "runs").iterdir())
    run = spark.read.parquet(*runs).select("system", "query", "doc", "score")
    qrels = spark.read.parquet(str(root / "parquet" / "qrels.parquet"))
    qrels = qrels.withColumn("relevance", (F.col("relevance") >= 1).cast("long"))
    return run, qrels


def _warm_up(spark, run) -> None:
    """Untimed, before the timed part of the floor and of the API step alike: the session's
    first job over the run (the JVM compiles its reading code while it runs) and the Python
    workers' start (one per core)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    def count(batches):
        yield pa.RecordBatch.from_pydict({"x": [sum(batch.num_rows for batch in batches)]})

    run.agg(F.max("score")).collect()
    spark.range(0, 1000, numPartitions=8).mapInArrow(count, "x long").collect()


def tree_cpu_seconds(pid: int | None = None) -> float:
    """The CPU seconds (user and system) used so far by ``pid`` (this process by default)
    and every process under it, with the children they have waited for."""
    total = 0.0
    for member, _ in _tree(pid or os.getpid()):
        try:
            with open(f"/proc/{member}/stat") as stat:
                fields = stat.read()
        except OSError:
            continue
        times = fields[fields.rindex(")") + 2 :].split()[11:15]  # utime stime cutime cstime
        total += sum(int(value) for value in times) / os.sysconf("SC_CLK_TCK")
    return total


def step_lexiframe(root: Path, rows: int, warm: bool = True) -> dict:
    from lexiframe import spark as lfs

    spark, _ = _session(rows)
    run, qrels = _inputs(spark, root)
    if warm:
        _warm_up(spark, run)
    start, cpu = time.perf_counter(), tree_cpu_seconds()
    per_user = lfs.evaluate(run, qrels, MEASURES)  # buckets chosen from the data
    return _timed_means(spark, lfs.summarize(per_user), start, cpu)


def step_lexiframe_cold(root: Path, rows: int) -> dict:
    """The API step with its first jobs timed: no warm-up, so that the JVM compiles its
    code and the Python workers start while the evaluation runs, as in any fresh session
    (the session's start and the inputs' schemas are still not timed). The command pays
    the same first jobs, and is compared with this step."""
    return step_lexiframe(root, rows, warm=False)


def _timed_means(spark, means_sdf, start: float, cpu: float | None = None) -> dict:
    """The means per system collected, the seconds since ``start`` (and the CPU seconds
    since ``cpu``, when given); the session stopped."""
    means = means_sdf.toArrow()
    seconds = time.perf_counter() - start
    used = None if cpu is None else tree_cpu_seconds() - cpu
    values = {
        name: dict(zip(means["system"].to_pylist(), means[name].to_pylist(), strict=True))
        for name in MEASURES
    }
    spark.stop()
    return {"seconds": seconds, "values": values} | ({} if used is None else {"cpu": used})


def step_ranking_evaluator(root: Path, rows: int) -> dict:
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    spark, _ = _session(rows)
    run, qrels = _inputs(spark, root)
    start = time.perf_counter()
    # trec_eval's order: score descending, ties by document id descending as a string.
    ranked = run.groupBy("system", "query").agg(
        F.sort_array(
            F.collect_list(F.struct("score", F.col("doc").cast("string").alias("id"), "doc")),
            asc=False,
        ).alias("ranking")
    )
    predictions = ranked.select(
        "system",
        "query",
        F.transform(F.slice("ranking", 1, K), lambda x: x["doc"].cast("double")).alias(
            "prediction"
        ),
    )
    labels = (
        qrels.filter(F.col("relevance") >= 1)
        .groupBy("query")
        .agg(F.collect_list(F.col("doc").cast("double")).alias("label"))
    )
    # Every user with a relevant document, for every system: a user a system skipped has
    # an empty prediction (and scores 0), as lexiframe scores a skipped query.
    systems_of_run = run.select("system").distinct()
    empty = F.array().cast("array<double>")
    table = (
        labels.crossJoin(systems_of_run)
        .join(predictions, on=["system", "query"], how="left")
        .select("system", "query", F.coalesce("prediction", empty).alias("prediction"), "label")
        .cache()
    )
    systems = sorted(row["system"] for row in table.select("system").distinct().collect())
    values: dict[str, dict[str, float]] = {name: {} for name in MEASURES}
    for system in systems:
        rows_of = table.filter(F.col("system") == system)
        for name, metric in SPARK_METRICS.items():
            evaluator = RankingEvaluator(metricName=metric, k=K)
            values[name][system] = evaluator.evaluate(rows_of)
    seconds = time.perf_counter() - start
    spark.stop()
    return {"seconds": seconds, "values": values}


def step_polars(root: Path, rows: int) -> dict:
    import polars as pl

    import lexiframe as lf

    start = time.perf_counter()
    qrels = lf.scan_qrels(root / "parquet" / "qrels.parquet").with_columns(
        pl.col("relevance").ge(1).cast(pl.Int64)
    )
    runs = sorted((root / "parquet" / "runs").iterdir())
    partitions = max(1, rows // 12_500_000)
    frame = lf.scan_run(runs).lexi.positions(qrels, partitions=partitions)
    per_user = frame.lexi.measures(MEASURES)
    means = (
        per_user.group_by("system")
        .agg(pl.col(MEASURES).mean())
        .sort("system")
        .collect(engine="streaming")
    )
    seconds = time.perf_counter() - start
    values = {name: dict(zip(means["system"], means[name], strict=True)) for name in MEASURES}
    return {"seconds": seconds, "values": values}


def step_floor(root: Path, rows: int) -> dict:
    """What the run costs Spark before lexiframe does anything: read once by an aggregation
    of its columns (what checking its values costs at least), read and handed to Python
    as Arrow with no shuffle (``mapInArrow`` of a function that counts), shuffled into the
    buckets alone (a no-op write), and cogrouped with the qrels into a function that
    counts, as ``lfs.evaluate`` hands them to lexiframe. The cogroup is the timed part, run
    first after the warm-up of the API step."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from lexiframe.spark import ranking

    spark, _ = _session(rows)
    run, qrels = _inputs(spark, root)
    buckets = ranking.bucket_count(run, None)

    def count(batches):
        yield pa.RecordBatch.from_pydict({"x": [sum(batch.num_rows for batch in batches)]})

    _warm_up(spark, run)

    def count_both(left, right):
        return pa.table({"x": pa.array([left.num_rows + right.num_rows], pa.int64())})

    by_bucket = ranking.partitioned(run, "query", buckets)
    qrels_by_bucket = ranking.partitioned(qrels, "query", buckets)
    cogrouped = by_bucket.groupBy(ranking.BUCKET).cogroup(qrels_by_bucket.groupBy(ranking.BUCKET))
    # The timed cogroup first, right after the warm-up the API step has too: run after the
    # other parts, it would find the JVM's code compiled by their jobs, as the API does not.
    parts = {
        "cogroup to Python": lambda: (
            cogrouped.applyInArrow(count_both, "x long").agg(F.sum("x")).collect()
        ),
        "a pass over the run": lambda: run.agg(*[F.max(name) for name in run.columns]).collect(),
        "to Python, no shuffle": lambda: run.mapInArrow(count, "x long").agg(F.sum("x")).collect(),
        "shuffle alone": lambda: by_bucket.write.mode("overwrite").format("noop").save(),
    }
    seconds, cpu = {}, {}
    for name, job in parts.items():
        start, used = time.perf_counter(), tree_cpu_seconds()
        job()
        seconds[name] = time.perf_counter() - start
        cpu[name] = tree_cpu_seconds() - used
    spark.stop()
    note = ", ".join(f"{name} {value:.1f} s" for name, value in seconds.items())
    last = "cogroup to Python"
    return {
        "seconds": seconds[last],
        "cpu": cpu[last],
        "pass": seconds["a pass over the run"],
        "note": f"{buckets} buckets: {note}",
    }


def step_sql(root: Path, rows: int) -> dict:
    """A prototype, not lexiframe's code: AP@k, binary nDCG@k, P@k and R@k as one Spark SQL
    plan. The top k of each ranking by a window in trec_eval's order (score descending,
    then the document id descending as a string), the binarised judgments broadcast to it,
    the measures summed per ranking by their textbook formulas, and each system's mean over
    the queries with a relevant document (a query a system skipped counts 0)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark, _ = _session(rows)
    run, qrels = _inputs(spark, root)
    start = time.perf_counter()
    relevant = qrels.filter(F.col("relevance") >= 1).select("query", "doc", F.lit(1).alias("rel"))
    n_rel = relevant.groupBy("query").agg(F.count(F.lit(1)).alias("R"))
    order = Window.partitionBy("system", "query").orderBy(
        F.col("score").desc(), F.col("doc").cast("string").desc()
    )
    top = run.withColumn("rank", F.row_number().over(order)).filter(F.col("rank") <= K)
    judged = top.join(F.broadcast(relevant), ["query", "doc"], "left").fillna(0, ["rel"])
    cumulative = Window.partitionBy("system", "query").orderBy("rank")
    judged = judged.withColumn("hits", F.sum("rel").over(cumulative))
    ideal = ", ".join(f"{1 / math.log2(i + 2)!r}D" for i in range(K))
    per_query = (
        judged.groupBy("system", "query")
        .agg(
            F.sum("rel").alias("found"),
            F.sum(F.col("rel") * F.col("hits") / F.col("rank")).alias("ap_sum"),
            F.sum(F.col("rel") / F.log2(F.col("rank") + 1)).alias("dcg"),
        )
        .join(F.broadcast(n_rel), "query")
        .select(
            "system",
            (F.col("ap_sum") / F.col("R")).alias(f"AP@{K}"),
            (F.col("dcg") / F.expr(
                f"aggregate(slice(array({ideal}), 1, least(R, {K})), 0D, (a, x) -> a + x)"
            )).alias(f"nDCG@{K}"),
            (F.col("found") / K).alias(f"P@{K}"),
            (F.col("found") / F.col("R")).alias(f"R@{K}"),
        )
    )  # fmt: skip
    queries = run.select("query").distinct().join(n_rel, "query").count()
    means = per_query.groupBy("system").agg(*[(F.sum(m) / queries).alias(m) for m in MEASURES])
    return _timed_means(spark, means, start)


def step_cli(root: Path, rows: int) -> dict:
    """``lexiframe evaluate --spark 'local[*]'`` on the same parquet files, as a user waits
    for it: a process of its own (start-up, the session, the checks, the jobs, the
    coverage note, the stop), with the driver memory of the other steps. Its summary file
    gives the means; Spark's event log splits the time: until the first job, in jobs, after
    the last."""
    import tempfile

    import polars as pl

    qrels = _binary_qrels(root)
    memory = os.environ.get("LEXIFRAME_BENCH_DRIVER_MEMORY", "6g")
    with tempfile.TemporaryDirectory(prefix="lexiframe-bench-cli-") as folder:
        summary, log = Path(folder) / "summary.parquet", Path(folder) / "events"
        log.mkdir()
        command = [sys.executable, "-m", "lexiframe", "evaluate", "--spark", "local[*]"]
        command += [str(root / "parquet" / "runs"), "--qrels", str(qrels)]
        command += [part for name in MEASURES for part in ("-m", name)]
        command += ["--driver-memory", memory, "--summary", str(summary)]
        for setting in EVENT_LOG:
            command += ["--conf", setting.format(folder=log)]
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        means = pl.read_parquet(summary).sort("system")
        note = _event_log_split(log, seconds)
    values = {name: dict(zip(means["system"], means[name], strict=True)) for name in MEASURES}
    return {"seconds": seconds, "values": values, "note": note}


def _binary_qrels(root: Path) -> Path:
    """The qrels binarised as the other steps' (relevance ≥ 1), written once (untimed) for
    the steps that read files, as a user's command would."""
    import polars as pl

    qrels = root / "parquet" / "qrels-binary.parquet"
    if not qrels.exists():
        pl.read_parquet(root / "parquet" / "qrels.parquet").with_columns(
            pl.col("relevance").ge(1).cast(pl.Int64)
        ).write_parquet(qrels)
    return qrels


API_PROCESS = """
import sys
import polars as pl
from pyspark.sql import SparkSession
from lexiframe import spark as lfs
runs, qrels_path, memory, threads, summary, *measures = sys.argv[1:]
spark = (
    SparkSession.builder.master("local[*]")
    .config("spark.driver.memory", memory)
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.executorEnv.POLARS_MAX_THREADS", threads)
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
run, qrels = spark.read.parquet(runs), spark.read.parquet(qrels_path)
per_user = lfs.evaluate(run, qrels, measures)
pl.from_arrow(lfs.summarize(per_user).toArrow()).write_parquet(summary)
spark.stop()
"""


def step_api_process(root: Path, rows: int) -> dict:
    """The API step as a user's script runs it, a process of its own as ``spark-cli`` is
    (Python's start, the imports, the session, reading the files, ``lfs.evaluate`` and
    ``lfs.summarize``, the summary written, the stop): what the command adds to the same
    job written against the API, measured alike. The session is a plain local one, with
    the driver memory and the Polars threads of the command's."""
    import tempfile

    import polars as pl

    qrels = _binary_qrels(root)
    memory = os.environ.get("LEXIFRAME_BENCH_DRIVER_MEMORY", "6g")
    with tempfile.TemporaryDirectory(prefix="lexiframe-bench-api-") as folder:
        summary = Path(folder) / "summary.parquet"
        command = [sys.executable, "-c", API_PROCESS, str(root / "parquet" / "runs")]
        command += [str(qrels), memory, "1", str(summary), *MEASURES]
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        means = pl.read_parquet(summary).sort("system")
    values = {name: dict(zip(means["system"], means[name], strict=True)) for name in MEASURES}
    return {"seconds": seconds, "values": values}


EVENT_LOG = (
    "spark.eventLog.enabled=true",
    "spark.eventLog.compress=false",
    "spark.eventLog.dir={folder}",
)


def _event_log_split(folder: Path, seconds: float) -> str:
    """The process's time split by Spark's event log: until the first job starts (start-up,
    the session, reading the files' listing), in jobs (wall time with any job running),
    and the rest (the driver's work between jobs, the stop)."""
    spans, first = [], None
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        started: dict[int, int] = {}
        for line in path.read_text().splitlines():
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                started[event["Job ID"]] = event["Submission Time"]
            elif kind == "SparkListenerJobEnd":
                spans.append((started.pop(event["Job ID"]), event["Completion Time"]))
            elif kind == "SparkListenerApplicationStart":
                first = event["Timestamp"]
    if not spans or first is None:
        return ""
    busy, end = 0, 0
    for begin, finish in sorted(spans):  # the union of the jobs' spans
        busy += max(0, finish - max(begin, end))
        end = max(end, finish)
    session = (min(begin for begin, _ in spans) - first) / 1000
    return (
        f"{len(spans)} jobs; the session's start to its first job {session:.1f} s, "
        f"in jobs {busy / 1000:.1f} s, the rest {seconds - session - busy / 1000:.1f} s "
        "(start-up before the session, the driver between jobs, the stop)"
    )


CHILD_STEPS = {
    "spark-lexiframe": step_lexiframe,
    "spark-lexiframe-cold": step_lexiframe_cold,
    "spark-ranking-evaluator": step_ranking_evaluator,
    "polars-streaming": step_polars,
    "spark-floor": step_floor,
    "spark-cli": step_cli,
    "spark-api-process": step_api_process,
    "spark-sql": step_sql,
}


def child(step: str, root: Path, rows: int) -> None:
    import warnings

    warnings.simplefilter("ignore")
    print(json.dumps(CHILD_STEPS[step](root, rows)))


# --- the parent: a process tree's memory ------------------------------------------------------


def _tree(pid: int) -> list[tuple[int, str]]:
    """``pid`` and its descendants, with their command names."""
    parents: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read()
        except OSError:
            continue
        name = fields[fields.index("(") + 1 : fields.rindex(")")]
        ppid = int(fields[fields.rindex(")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
        names[int(entry)] = name
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append((current, names.get(current, "")))
        stack.extend(parents.get(current, []))
    return found


def _rss_gb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024**3
    except OSError:
        return 0.0


def measure_tree(command: list[str], interval: float = 0.25) -> tuple[dict | None, dict, str]:
    """Run ``command``; its JSON result, the peaks of its process tree's RSS (GB): total,
    the JVM, the Python workers (the processes under the JVM), and an error line."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peaks = {"total": 0.0, "jvm": 0.0, "workers": 0.0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            tree = _tree(process.pid)
            rss = {pid: _rss_gb(pid) for pid, _ in tree}
            jvm = sum(rss[pid] for pid, name in tree if name == "java")
            workers = sum(
                rss[pid] for pid, name in tree if name.startswith("python") and pid != process.pid
            )
            peaks["total"] = max(peaks["total"], sum(rss.values()))
            peaks["jvm"] = max(peaks["jvm"], jvm)
            peaks["workers"] = max(peaks["workers"], workers)
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        last = (err.decode().strip().splitlines() or ["failed"])[-1]
        return None, peaks, last[:120]
    return json.loads(out.decode().strip().splitlines()[-1]), peaks, ""


def _ratios(results: dict[str, dict | None]) -> list[str]:
    """The overheads measured in this run: the API step over the floor, the command over
    the API step (and whether the command's means are the API's), with the load average."""
    seconds = {step: result["seconds"] for step, result in results.items() if result}
    lines = ["", f"load average (1, 5, 15 min) at the end: {os.getloadavg()}"]
    pairs = [("spark-lexiframe", "spark-floor"), ("spark-cli", "spark-lexiframe-cold")]
    pairs += [("spark-cli", "spark-lexiframe"), ("spark-cli", "spark-api-process")]
    floor = results.get("spark-floor")
    if "spark-lexiframe" in seconds and floor and "pass" in floor:
        both = seconds["spark-floor"] + floor["pass"]
        lines.append(
            "spark-lexiframe / (a pass over the run + the cogroup): "
            f"{seconds['spark-lexiframe'] / both:.2f}"
        )
    for over, under in [*pairs, ("spark-sql", "spark-floor"), ("spark-sql", "spark-lexiframe")]:
        if over in seconds and under in seconds:
            lines.append(f"{over} / {under}: {seconds[over] / seconds[under]:.2f}")
            cpu = [(results[step] or {}).get("cpu") for step in (over, under)]
            if None not in cpu:
                lines.append(f"{over} / {under}, CPU seconds: {cpu[0] / cpu[1]:.2f}")
    if "spark-cli" in seconds and "spark-lexiframe-cold" in seconds:
        # What a whole process adds to the same jobs: its ratio falls as the jobs grow.
        added = seconds["spark-cli"] - seconds["spark-lexiframe-cold"]
        lines.append(f"spark-cli - spark-lexiframe-cold: {added:.1f} s")
    api = results.get("spark-lexiframe")
    compared = (
        ("spark-cli", "the command's", 1e-12),
        ("spark-lexiframe-cold", "the cold API step's", 0.0),
        ("spark-api-process", "the API process's", 0.0),
        ("spark-sql", "SQL", 1e-9),
    )
    for step, what, within in compared:
        other = results.get(step)
        if api and other:
            gaps = [
                abs(value - other["values"][name][system])
                for name in MEASURES
                for system, value in api["values"][name].items()
            ]
            same = "equal" if max(gaps) <= within else "differ from"
            lines.append(f"{what} means {same} the API's (largest gap {max(gaps):.1e})")
    return lines


def run_spark(
    label: str, root: Path, rows: int, steps: list[str] | None = None, rounds: int = 1
) -> str:
    """Every step on the data under ``root``, in ``rounds`` turns (each step once per turn,
    so that a drift of the shared machine falls on all alike): a table of median times and
    peaks, the overheads' ratios, then the values of both evaluators side by side."""
    lines = [
        "| shape | step | seconds (median) | peak RSS, tree (GB) | JVM (GB) | "
        "Python workers (GB) | note |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    runs: dict[str, list[tuple[dict | None, dict, str]]] = {}
    for _ in range(rounds):
        for step in steps or STEPS:
            command = [sys.executable, __file__, step, str(root), str(rows)]
            runs.setdefault(step, []).append(measure_tree(command))
            result = runs[step][-1][0]
            took = "failed" if result is None else f"{result['seconds']:.1f} s"
            print(f"{step}: {took}", file=sys.stderr)
    results = {}
    for step, measured in runs.items():
        done = [result for result, _, _ in measured if result is not None]
        result = None
        if len(done) == len(measured):
            result = {**done[0], "seconds": statistics.median(r["seconds"] for r in done)}
            for part in ("cpu", "pass"):
                if all(part in r for r in done):
                    result[part] = statistics.median(r[part] for r in done)
        results[step] = result
        peaks = {key: max(p[key] for _, p, _ in measured) for key in ("total", "jvm", "workers")}
        seconds = "" if result is None else f"{result['seconds']:.1f}"
        if len(done) > 1:
            low, high = min(r["seconds"] for r in done), max(r["seconds"] for r in done)
            seconds += f" ({low:.1f}–{high:.1f})"
        note = next((error for _, _, error in measured if error), "")
        note = note or ("" if result is None else result.get("note", ""))
        if result and "cpu" in result:
            cpus = [r["cpu"] for r in done]
            cpu = f"CPU of the timed part {result['cpu']:.1f} s ({min(cpus):.1f}–{max(cpus):.1f})"
            note = f"{cpu}; {note}" if note else cpu
        lines.append(
            f"| {label} | {step} | {seconds} | {peaks['total']:.2f} | {peaks['jvm']:.2f} | "
            f"{peaks['workers']:.2f} | {note} |"
        )
    lines += _ratios(results)
    lexiframe, spark = results.get("spark-lexiframe"), results.get("spark-ranking-evaluator")
    if lexiframe and spark:
        lines += [
            "",
            "| system | measure | lexiframe | RankingEvaluator | |",
            "|---|---|---:|---:|---|",
        ]
        for name in MEASURES:
            for system, value in sorted(lexiframe["values"][name].items()):
                other = spark["values"][name].get(system)
                same = other is not None and abs(value - other) <= 1e-9
                lines.append(
                    f"| {system} | {name} | {value:.6f} | {other:.6f} | "
                    f"{'equal' if same else 'differ'} |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    child(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]))
