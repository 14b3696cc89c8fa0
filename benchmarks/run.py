"""Benchmark lexiframe against Polars' own reader and the classic-metric peers.

    python benchmarks/run.py                          # robust04 shape, every step, 3 repeats
    python benchmarks/run.py --shape small            # a quick look (seconds)
    python benchmarks/run.py --shape recsys           # 10 systems x 200k users x depth 100
    python benchmarks/run.py --scaling                # 1x, 2x, 4x rows, then systems
    python benchmarks/run.py --steps read positions   # some steps only

Data come from lexiframe's seeded synthetic-track generator, written once under
``--data`` (default ``benchmark-data/``) as gzipped TREC files and as parquet. Every step
runs in a child process of its own, so that its peak RSS is its own; the table gives the
median of ``--repeat`` runs inside that process (imports and untimed set-up excluded) and,
the ratio of its time to the step it is compared with, measured in this run:
``e2e-trec`` and ``read`` against ``polars-read``; the peers ``pytrec_eval`` and ``ranx``
against lexiframe's ``classic`` (a ratio above 1 means lexiframe is faster).

Peers (install them in the benchmark environment: ``pip install -r
benchmarks/requirements.txt``): Polars reading the same files into one frame, pytrec_eval
(pytrec-eval-terrier) and ranx on the same classic metrics from the same files. ranx
compiles its kernels with numba the first time they run in a process; that first call is
reported as its own step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SHAPES = {
    # systems, queries, depth, id type
    "small": (8, 40, 100, "str"),
    "robust04": (110, 249, 1000, "str"),
    "recsys": (10, 200_000, 100, "int"),
}
CLASSIC = ["RR", "AP", "nDCG", "R@1000", "RP"]
ALL_MEASURES = [
    "RR", "RR@10", "AP", "nDCG", "nDCG@10", "P@10", "R@1000", "RP", "RBP(p=0.8)",
    "TSE", "TSE(exposure='ap')", "TSE(exposure='ndcg')", "TSE(exposure='rbp')",
    "TSE(exposure='linear')", "SL3", "RecallError", "ASL", "ASL@g1-10",
]  # fmt: skip
CORPUS_SIZE = 528_155  # robust04's, for the measures that impute unretrieved documents
PYTREC_EVAL = {"recip_rank", "map", "ndcg", "recall_1000", "Rprec"}
RANX = ["mrr", "map", "ndcg", "recall@1000", "r-precision"]
PREFERENCES = ["sgnLP", "rrLP", "sgnLR"]
TREC_SCHEMA = ["query", "q0", "doc", "rank", "score", "system"]


# --- data -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    root: Path

    def runs(self, fmt: str) -> list[Path]:
        return sorted((self.root / fmt / "runs").iterdir())

    def qrels(self, fmt: str) -> Path:
        return next((self.root / fmt).glob("qrels*"))


def ensure_data(root: Path, shape: tuple[int, int, int, str], formats: list[str]) -> Data:
    """Write the synthetic track once per shape and format (seeded: always the same files)."""
    from lexiframe.datasets import write_synthetic_track

    systems, queries, depth, id_type = shape
    for fmt in formats:
        target = root / fmt
        if (target / "runs").is_dir() and any((target / "runs").iterdir()):
            continue
        start = time.perf_counter()
        write_synthetic_track(
            target,
            n_systems=systems,
            n_queries=queries,
            depth=depth,
            id_type=id_type,
            format=fmt,
            seed=0,
        )
        print(f"wrote {target} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return Data(root)


# --- steps (each runs in a child process) -----------------------------------------------------


def _quiet() -> None:
    import lexiframe as lf

    warnings.simplefilter("ignore", lf.LexiframeWarning)


def _in_memory(data: Data):
    """The run and qrels as frames (untimed set-up of the in-memory steps)."""
    import lexiframe as lf

    return lf.read_run(data.runs("parquet")), lf.read_qrels(data.qrels("parquet"))


def _polars_csv_options() -> dict[str, object]:
    import polars as pl

    types = [pl.String, pl.String, pl.String, pl.Int64, pl.Float64, pl.String]
    schema = dict(zip(TREC_SCHEMA, types, strict=True))
    return {"separator": " ", "has_header": False, "schema": schema, "quote_char": None}


def step_polars_read(data: Data) -> Callable[[], object]:
    """Polars' own CSV reader on the gzipped TREC files, into one frame: the baseline."""
    import polars as pl

    files, options = data.runs("trec.gz"), _polars_csv_options()
    # One scan over all the files: Polars reads them in parallel (faster than a loop of
    # read_csv calls), the fairest baseline.
    return lambda: pl.scan_csv(files, **options).collect()


def step_polars_read_each(data: Data) -> Callable[[], object]:
    """Polars' read_csv file by file, then one concat: what a first script usually does."""
    import polars as pl

    files, options = data.runs("trec.gz"), _polars_csv_options()
    return lambda: pl.concat([pl.read_csv(path, **options) for path in files])


def step_read(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    files = data.runs("trec.gz")
    return lambda: lf.read_run(files)


def step_positions(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    return lambda: lf.positions(run, qrels)


def step_measures(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    frame = lf.positions(run, qrels, grades=True)
    return lambda: lf.measures(frame, CLASSIC)


def step_all_measures(data: Data) -> Callable[[], object]:
    """Every measure family of the registry, graded nDCG included, on one positions frame."""
    import lexiframe as lf

    run, qrels = _in_memory(data)
    frame = lf.positions(run, qrels, grades=True)
    return lambda: lf.measures(frame, ALL_MEASURES, n=CORPUS_SIZE)


def step_preferences(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    frame = lf.positions(run, qrels)
    return lambda: lf.preferences(frame, PREFERENCES)


def step_mc4(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    prefs = lf.preferences(lf.positions(run, qrels), PREFERENCES)
    return lambda: _mc4_orderings(prefs)


def _mc4_orderings(prefs: object) -> object:
    """MC4 for each preference measure, from one summary of the pair table."""
    import lexiframe as lf

    summary = lf.summarize_preferences(prefs, measures=PREFERENCES)
    return [lf.order(summary, name, method="mc4") for name in PREFERENCES]


def _end_to_end(fmt: str, data: Data) -> Callable[[], object]:
    import lexiframe as lf

    def run() -> object:
        frame = lf.positions(lf.read_run(data.runs(fmt)), lf.read_qrels(data.qrels(fmt)))
        return _mc4_orderings(lf.preferences(frame, PREFERENCES))

    return run


def step_e2e_trec(data: Data) -> Callable[[], object]:
    """Read the gzipped TREC files, positions, three preferences over all pairs, MC4 x 3."""
    return _end_to_end("trec.gz", data)


def step_e2e_parquet(data: Data) -> Callable[[], object]:
    return _end_to_end("parquet", data)


def step_classic(data: Data) -> Callable[[], object]:
    """Classic metrics of every run of the track, from the gzipped TREC files."""
    import lexiframe as lf

    def run() -> object:
        return lf.evaluate(
            lf.read_run(data.runs("trec.gz")), lf.read_qrels(data.qrels("trec.gz")), CLASSIC
        )

    return run


def _trec_qrels_dict(path: Path) -> dict[str, dict[str, int]]:
    import gzip

    qrels: dict[str, dict[str, int]] = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            query, _, doc, grade = line.split()
            qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def step_pytrec_eval(data: Data) -> Callable[[], object]:
    """pytrec_eval on the same files: its parsers, then one evaluator over every run."""
    import gzip

    import pytrec_eval

    def run() -> object:
        qrels = _trec_qrels_dict(data.qrels("trec.gz"))
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_EVAL)
        results = []
        for path in data.runs("trec.gz"):
            with gzip.open(path, "rt") as lines:
                results.append(evaluator.evaluate(pytrec_eval.parse_run(lines)))
        return results

    return run


def _ranx_evaluate(data: Data) -> object:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_dict(_trec_qrels_dict(data.qrels("trec.gz")))
    return [
        evaluate(qrels, Run.from_file(str(path), kind="gz"), RANX, make_comparable=True)
        for path in data.runs("trec.gz")
    ]


def step_ranx(data: Data) -> Callable[[], object]:
    """ranx on the same files, after an untimed first call that compiles its kernels."""
    _ranx_evaluate(data)
    return lambda: _ranx_evaluate(data)


def step_ranx_first_call(data: Data) -> Callable[[], object]:
    """ranx the first time in a process: numba compiles its kernels during the call."""
    return lambda: _ranx_evaluate(data)


RECSYS_PARTITIONS = 16  # groups of users planned one after another: bounded memory


def step_recsys_positions(data: Data) -> Callable[[], object]:
    """Lazily scanned parquet, positions and per-user measures, streaming engine."""
    import polars as pl

    import lexiframe as lf

    def run() -> object:
        frame = lf.scan_run(data.runs("parquet")).lexi.positions(
            lf.scan_qrels(data.qrels("parquet")), partitions=RECSYS_PARTITIONS
        )
        per_user = frame.lexi.measures(["RR", "AP", "nDCG@10", "R@100"])
        return per_user.select(pl.len(), pl.col("AP").mean()).collect(engine="streaming")

    return run


STEPS: dict[str, tuple[Callable[[Data], Callable[[], object]], list[str], str | None]] = {
    # name: (builder, formats it reads, the step its ratio is taken to)
    "polars-read": (step_polars_read, ["trec.gz"], None),
    "polars-read-each": (step_polars_read_each, ["trec.gz"], "polars-read"),
    "read": (step_read, ["trec.gz"], "polars-read"),
    "positions": (step_positions, ["parquet"], None),
    "measures": (step_measures, ["parquet"], None),
    "all-measures": (step_all_measures, ["parquet"], None),
    "preferences": (step_preferences, ["parquet"], None),
    "mc4": (step_mc4, ["parquet"], None),
    "e2e-trec": (step_e2e_trec, ["trec.gz"], "polars-read"),
    "e2e-parquet": (step_e2e_parquet, ["parquet"], None),
    "classic": (step_classic, ["trec.gz"], None),
    "pytrec_eval": (step_pytrec_eval, ["trec.gz"], "classic"),
    "ranx": (step_ranx, ["trec.gz"], "classic"),
    "ranx-first-call": (step_ranx_first_call, ["trec.gz"], "classic"),
    "recsys-positions": (step_recsys_positions, ["parquet"], None),
}
DEFAULT_STEPS = [name for name in STEPS if not name.startswith("recsys")]
RECSYS_STEPS = ["recsys-positions"]
ONCE = {"ranx-first-call"}  # what only the first call in a process measures
SLOW = {"pytrec_eval", "ranx"}  # minutes per call on the robust04 shape: timed once


def child(step: str, root: Path, repeat: int) -> None:
    """Time one step in this process and print its seconds as JSON."""
    _quiet()
    data = Data(root)
    call = STEPS[step][0](data)
    seconds = []
    for _ in range(1 if step in ONCE | SLOW else repeat):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"seconds": seconds}))


# --- parent ---------------------------------------------------------------------------------


@dataclass
class Result:
    shape: str
    step: str
    seconds: float | None
    peak_rss_gb: float | None
    note: str = ""


def measure(step: str, root: Path, repeat: int) -> tuple[float | None, float | None, str]:
    """Run one step in a child process: median seconds, peak RSS in GB, and an error note."""
    command = [sys.executable, __file__, "--child", step, "--data", str(root)]
    command += ["--repeat", str(repeat)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    out = process.stdout.read().decode() if process.stdout else ""
    err = process.stderr.read().decode() if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss / 1024**2  # KiB on Linux
    if process.returncode != 0:
        last = (err.strip().splitlines() or ["failed"])[-1]
        return None, peak, last[:80]
    seconds = json.loads(out.strip().splitlines()[-1])["seconds"]
    return statistics.median(seconds), peak, ""


def table(results: list[Result]) -> str:
    by_step = {(r.shape, r.step): r for r in results}
    lines = [
        "| shape | step | seconds | peak RSS (GB) | vs | note |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in results:
        peer = STEPS.get(r.step, (None, None, None))[2]
        base = by_step.get((r.shape, peer)) if peer else None
        ratio = ""
        if base and base.seconds and r.seconds is not None:
            ratio = f"{r.seconds / base.seconds:.2f} × {peer}"
        seconds = "" if r.seconds is None else f"{r.seconds:.2f}"
        rss = "" if r.peak_rss_gb is None else f"{r.peak_rss_gb:.2f}"
        lines.append(f"| {r.shape} | {r.step} | {seconds} | {rss} | {ratio} | {r.note} |")
    return "\n".join(lines)


def run_shape(
    label: str, shape: tuple[int, int, int, str], steps: list[str], root: Path, repeat: int
) -> list[Result]:
    formats = sorted({fmt for step in steps for fmt in STEPS[step][1]})
    data_root = root / "-".join(map(str, shape))
    ensure_data(data_root, shape, formats)
    results = []
    for step in steps:
        seconds, peak, note = measure(step, data_root, repeat)
        results.append(Result(label, step, seconds, peak, note))
        print(f"{label:>24} {step:<18} {seconds!s:>22} s  {peak:.2f} GB  {note}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=list(SHAPES), default="robust04")
    parser.add_argument("--steps", nargs="+", choices=list(STEPS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path("benchmark-data"))
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="time positions, measures, preferences and MC4 at 1/4, 1/2 and all the queries "
        "(rows) of the shape, then 1/4, 1/2 and all its systems (pairs grow quadratically)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.data, args.repeat)
        return

    systems, queries, depth, id_type = SHAPES[args.shape]
    results: list[Result] = []
    if args.scaling:
        # Up to the chosen shape: 1/4, 1/2 and all of its queries (rows grow linearly,
        # pairs too), then 1/4, 1/2 and all of its systems (pairs grow quadratically).
        steps = args.steps or ["positions", "measures", "preferences", "mc4"]
        base_queries, base_systems = max(queries // 4, 1), max(systems // 4, 2)
        for factor in (1, 2, 4):
            shape = (systems, base_queries * factor, depth, id_type)
            label = f"{systems}x{base_queries * factor}x{depth}"
            results += run_shape(label, shape, steps, args.data, args.repeat)
        for factor in (1, 2, 4):
            shape = (base_systems * factor, queries, depth, id_type)
            label = f"{base_systems * factor}x{queries}x{depth}"
            results += run_shape(label, shape, steps, args.data, args.repeat)
    else:
        default = RECSYS_STEPS if args.shape == "recsys" else DEFAULT_STEPS
        steps = args.steps or default
        label = f"{args.shape} {systems}x{queries}x{depth}"
        results = run_shape(label, SHAPES[args.shape], steps, args.data, args.repeat)
    print(table(results))


if __name__ == "__main__":
    main()
