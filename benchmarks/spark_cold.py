"""The demo track on Spark as a user waits for it: ``lexiframe evaluate --spark`` whole.

    python benchmarks/spark_cold.py                       # 5 rounds, every variant
    python benchmarks/spark_cold.py --rounds 3 --variants command client-compiler

Writes the demo track (``lexiframe demo --write``) once into ``--data``, then times the
command ``lexiframe evaluate --spark 'local[2]' runs/ --qrels qrels.txt -m AP -m nDCG@10``
as a fresh process (start-up, the JVM, every job, the stop), in rounds: each round runs
every variant once, in turn, so that a drift of the shared machine falls on all alike.
The table gives each variant's median and range, with the load average before and after.

Variants add ``--conf`` settings to the command (``command`` is the command as it is):
what the event log showed (``--event-log DIR`` writes one per run) is tried apart.
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
VARIANTS: dict[str, list[str]] = {
    "command": [],
    "server-compiler": ["spark.driver.defaultJavaOptions=-XX:+TieredCompilation"],
    "client-compiler": ["spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1"],
    "no-adaptive": ["spark.sql.adaptive.enabled=false"],
    "no-ui": ["spark.ui.enabled=false"],
    "few-partitions": ["spark.sql.shuffle.partitions=2"],
    "all": [
        "spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1",
        "spark.ui.enabled=false",
        "spark.sql.shuffle.partitions=2",
    ],
}


def timed(folder: Path, settings: list[str], event_log: Path | None) -> float:
    """The wall time of one run of the command with ``settings`` (``--conf`` each)."""
    confs = [part for setting in settings for part in ("--conf", setting)]
    if event_log is not None:
        event_log.mkdir(parents=True, exist_ok=True)
        confs += ["--conf", "spark.eventLog.enabled=true", "--conf"]
        confs += ["spark.eventLog.compress=false", "--conf", f"spark.eventLog.dir={event_log}"]
    command = [sys.executable, "-m", "lexiframe", *COMMAND, *MEASURES, *confs]
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("benchmark-data") / "demo")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--event-log", type=Path, help="write Spark's event log of each run here")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").exists():
        subprocess.run([sys.executable, "-m", "lexiframe", "demo", "--write", str(args.data)],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    before = os.getloadavg()[0]
    seconds: dict[str, list[float]] = {name: [] for name in args.variants}
    for round_ in range(args.rounds):
        for name in args.variants:
            seconds[name].append(timed(args.data, VARIANTS[name], args.event_log))
            print(f"round {round_ + 1} {name}: {seconds[name][-1]:.1f} s", file=sys.stderr)
    after = os.getloadavg()[0]
    print(f"load average (1 min) {before:.1f} before, {after:.1f} after\n")
    print("| variant | settings | median (s) | range (s) |\n|---|---|---:|---|")
    for name, values in seconds.items():
        print(
            f"| {name} | {' '.join(VARIANTS[name]) or '(none)'} | "
            f"{statistics.median(values):.1f} | {min(values):.1f}–{max(values):.1f} |"
        )


if __name__ == "__main__":
    main()
