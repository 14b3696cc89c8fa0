"""The demo track on Spark as a user waits for it: ``lexiframe evaluate --spark`` whole.

    python benchmarks/spark_cold.py                       # 5 rounds, every variant
    python benchmarks/spark_cold.py --rounds 3 --variants command floor
    python benchmarks/spark_cold.py --variants command baseline --baseline ../lexiframe-main

Writes the demo track (``lexiframe demo --write``) once into ``--data``, then times the
command ``lexiframe evaluate --spark 'local[2]' runs/ --qrels qrels.txt -m AP -m nDCG@10``
as a fresh process (start-up, the JVM, every job, the stop), in rounds: each round runs
every variant once, in turn, so that a drift of the shared machine falls on all alike.
The table gives each variant's median and range, with the load average before and after.

Variants add ``--conf`` settings to the command (``command`` is the command as it is;
``server-compiler`` sets the JVM's options, which turns off the client compiler the command
chooses for small local inputs; ``no-class-archive`` gives that compiler as the caller's
option, which turns off the quick start's class archive, written by two first, untimed runs
of the command when it is missing); ``floor`` is a session started as the command starts
it, one job of ten numbers, and its stop; ``baseline`` is the command of another checkout of
lexiframe (``--baseline DIR``: its folder, put first on ``PYTHONPATH``), to compare a
change with what it changes, in the same turns. ``--event-log DIR`` keeps Spark's event
log of each run of the command (its jobs' times).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMAND = ["evaluate", "--spark", "local[2]", "runs/", "--qrels", "qrels.txt"]
MEASURES = ["-m", "AP", "-m", "nDCG@10"]
SERVER_COMPILER = "spark.driver.extraJavaOptions=-XX:+TieredCompilation"  # the JVM's default
VARIANTS: dict[str, list[str]] = {
    "command": [],
    "server-compiler": [SERVER_COMPILER],
    "no-ui": ["spark.ui.enabled=false"],
    "no-adaptive": ["spark.sql.adaptive.enabled=false", "spark.sql.shuffle.partitions=2"],
    # The quick start's compiler, given by the caller: no quick start, so no class archive.
    "no-class-archive": ["spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"],
}
FLOOR = """
from pyspark.sql import SparkSession
from lexiframe.spark import cli
settings = {"spark.driver.memory": "4g", "spark.ui.showConsoleProgress": "false"}
settings[cli.JAVA_OPTIONS[0]] = cli.QUICK_START_OPTION
builder = SparkSession.builder.master("local[2]")
for key, value in settings.items():
    builder = builder.config(key, value)
with cli.jvm_output_to(None):
    spark = builder.getOrCreate()
spark.range(10).collect()
spark.stop()
"""
"""``floor``: what the command cannot go under: Python and PySpark's start, a session as
the command starts it on the demo track, one job of ten numbers, the stop."""


def timed(folder: Path, name: str, event_log: Path | None, baseline: Path | None) -> float:
    """The wall time of one run of variant ``name``: the command with its ``--conf``
    settings, the floor, or the command of the ``baseline`` checkout."""
    confs = [part for setting in VARIANTS.get(name, []) for part in ("--conf", setting)]
    if event_log is not None:
        event_log.mkdir(parents=True, exist_ok=True)
        confs += ["--conf", "spark.eventLog.enabled=true", "--conf"]
        confs += ["spark.eventLog.compress=false", "--conf", f"spark.eventLog.dir={event_log}"]
    command = [sys.executable, "-m", "lexiframe", *COMMAND, *MEASURES, *confs]
    if name == "floor":
        command = [sys.executable, "-c", FLOOR]
    environment = dict(os.environ)
    if name == "baseline" and baseline is not None:
        paths = [str(baseline.resolve()), environment.get("PYTHONPATH", "")]
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, check=True, stdout=subprocess.DEVNULL, env=environment)
    return time.perf_counter() - start


def _settings(name: str, baseline: Path | None) -> str:
    """What a variant changes, as the table says it."""
    if name == "baseline":
        return f"the command of {baseline}"
    return " ".join(VARIANTS.get(name, [])) or "(none)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("benchmark-data") / "demo")
    parser.add_argument("--rounds", type=int, default=5)
    names = [*VARIANTS, "floor", "baseline"]
    parser.add_argument("--variants", nargs="+", choices=names, default=names[:-1])
    parser.add_argument("--event-log", type=Path, help="write Spark's event log of each run here")
    parser.add_argument("--baseline", type=Path, help="the checkout the baseline variant runs")
    args = parser.parse_args(argv)
    if ("baseline" in args.variants) != (args.baseline is not None):
        parser.error("--variants baseline and --baseline DIR go together")
    if not (args.data / "qrels.txt").exists():
        subprocess.run([sys.executable, "-m", "lexiframe", "demo", "--write", str(args.data)],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    if "command" in args.variants:  # the quick start's class archive: the second run
        for _ in range(2):  # of the command writes it (the first leaves a mark), untimed
            timed(args.data, "command", None, None)
    before = os.getloadavg()[0]
    seconds: dict[str, list[float]] = {name: [] for name in args.variants}
    for round_ in range(args.rounds):
        for name in args.variants:
            seconds[name].append(timed(args.data, name, args.event_log, args.baseline))
            print(f"round {round_ + 1} {name}: {seconds[name][-1]:.1f} s", file=sys.stderr)
    after = os.getloadavg()[0]
    print(f"load average (1 min) {before:.1f} before, {after:.1f} after\n")
    print("| variant | settings | median (s) | range (s) |\n|---|---|---:|---|")
    for name, values in seconds.items():
        print(
            f"| {name} | {_settings(name, args.baseline)} | "
            f"{statistics.median(values):.1f} | {min(values):.1f}–{max(values):.1f} |"
        )


if __name__ == "__main__":
    main()
