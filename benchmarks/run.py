"""Benchmark lexiframe against Polars' own reader and the classic-metric peers.

    python benchmarks/run.py                          # robust04 shape, every step, 3 repeats
    python benchmarks/run.py --shape small            # a quick look (seconds)
    python benchmarks/run.py --shape recsys           # 10 systems x 200k users x depth 100
    python benchmarks/run.py --shape recsys --engine spark   # on Spark: benchmarks/spark_engine.py
    python benchmarks/run.py --scaling                # 1x, 2x, 4x rows, then systems
    python benchmarks/run.py --steps read positions   # some steps only
    python benchmarks/run.py --processes              # whole processes: the CLI, start-up
    python benchmarks/run.py --layouts 1 4            # metrics-only peak memory per file layout
    python benchmarks/run.py --drop-in track17 robust04 --trec-eval path/to/trec_eval
    python benchmarks/run.py --drop-in track17 robust03 --trec-eval path/to/trec_eval
    python benchmarks/run.py --shape mid --processes --pref-eval path/to/pref_eval.py

Data come from lexiframe's seeded synthetic-track generator, written once under
``--data`` (default ``benchmark-data/``) as gzipped TREC files and as parquet; the
``robust03`` shape's from ``robust_like.py`` beside this script (files like TREC 2003
Robust's runs and pooled qrels, gzipped TREC files only). Every step
runs in a child process of its own, so that its peak RSS is its own; the table gives the
median of ``--repeat`` runs inside that process (imports and untimed set-up excluded) and,
the ratio of its time to the step it is compared with, measured in this run:
``e2e-trec`` and ``read`` against ``polars-read``; the peers ``pytrec_eval`` and ``ranx``
against lexiframe's ``classic`` (a ratio above 1 means lexiframe is faster).

With ``--processes``, whole processes are timed instead, as a user waits for them: start-up
(``import polars``, ``import lexiframe``, ``lexiframe --help``), Polars' fastest read of the
files as a process of its own, and the ``lexiframe evaluate`` command (preferences with
their orderings; classic metrics), each a fresh process, one-shot, its wall time and peak
RSS taken by the parent. The steps run in turns, ``--repeat`` times (start-up 20 times),
and the table gives the medians, so that a drift of the machine falls on every step alike.
pref_eval (the reference implementation of the lexicographic preferences,
github.com/diazf/pref_eval) joins them with ``--pref-eval path/to/pref_eval.py``.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

SHAPES = {
    # systems, queries, depth, id type
    "small": (8, 40, 100, "str"),
    "robust04": (110, 249, 1000, "str"),
    "recsys": (10, 200_000, 100, "int"),
    "mid": (110, 27, 1000, "str"),  # robust04's systems and depth, 3 million lines
    "mid-30": (30, 100, 1000, "str"),  # 3 million lines too, with fewer systems (pairs)
    "recsys-20k": (10, 20_000, 100, "int"),  # a tenth of it: 20 million rows
    "recsys-50k": (10, 50_000, 100, "int"),
    "track17": (17, 100, 1000, "str"),  # a TREC track's size: 17 runs of 100 queries
    # the same size, files like TREC 2003 Robust's runs: benchmarks/robust_like.py
    "robust03": (17, 100, 1000, "robust03"),
}
CLASSIC = ["RR", "AP", "nDCG", "R@1000", "RP"]
ALL_MEASURES = [
    "RR", "RR@10", "AP", "nDCG", "nDCG@10", "P@10", "R@1000", "RP", "RBP(p=0.8)",
    "TSE", "TSE(exposure='ap')", "TSE(exposure='ndcg')", "TSE(exposure='rbp')",
    "TSE(exposure='linear')", "SL3", "RecallError", "ASL", "ASL@g1-10",
]  # fmt: skip
EXPECTED = ["P@10", "Success@10", "RR", "ERR@20", "RBP(p=0.5)"]  # labels="probability"
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
    """Write the track once per shape and format (seeded: always the same files): lexiframe's
    synthetic track, or for the robust03 shape files like TREC 2003 Robust's runs."""
    from lexiframe.datasets import write_synthetic_track

    systems, queries, depth, id_type = shape
    for fmt in formats:
        target = root / fmt
        if (target / "runs").is_dir() and any((target / "runs").iterdir()):
            continue
        start = time.perf_counter()
        if id_type == "robust03":  # files like real runs: benchmarks/robust_like.py
            from robust_like import write_robust_like

            if fmt != "trec.gz":
                raise SystemExit(f"the robust03 shape is written as trec.gz only, not {fmt}")
            write_robust_like(target, n_systems=systems, n_queries=queries, depth=depth)
        else:
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


def step_positions_judged(data: Data) -> Callable[[], object]:
    """The judged non-relevant documents too (Bpref, infAP): a (query, doc) join per row."""
    import lexiframe as lf

    run, qrels = _in_memory(data)
    return lambda: lf.positions(run, qrels, judged=True)


def step_positions_condensed(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    return lambda: lf.positions(run, qrels, condensed=True)


def _tied(data: Data):
    """The run with its scores rounded to one decimal, as from a coarse scorer: tie groups
    of about 5 documents at depth 100, a few dozen at depth 1000."""
    import polars as pl

    run, qrels = _in_memory(data)
    return run.with_columns(pl.col("score").round(1)), qrels


def step_positions_ties(data: Data) -> Callable[[], object]:
    """``ties="expected"``: the tie groups of every ranking too."""
    import lexiframe as lf

    run, qrels = _tied(data)
    return lambda: lf.positions(run, qrels, ties="expected")


def step_measures_ties(data: Data) -> Callable[[], object]:
    """The classic measures as their expectation over tied orderings."""
    import lexiframe as lf

    run, qrels = _tied(data)
    frame = lf.positions(run, qrels, grades=True, ties="expected")
    return lambda: lf.measures(frame, CLASSIC)


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


def step_binary_expected(data: Data) -> Callable[[], object]:
    """The measures that have an expected value under probability labels, on the grades."""
    import lexiframe as lf

    run, qrels = _in_memory(data)
    frame = lf.positions(run, qrels, grades=True)
    return lambda: lf.measures(frame, EXPECTED)


def step_expected(data: Data) -> Callable[[], object]:
    """Their expected values, the grades read as probabilities of relevance (grade / top
    grade): each positively graded document is in the frame's lists, not only the
    relevant ones."""
    import polars as pl

    import lexiframe as lf

    run, qrels = _in_memory(data)
    chances = qrels.with_columns(pl.col("relevance").clip(0) / pl.col("relevance").max())
    frame = lf.positions(run, chances, labels="probability")
    return lambda: lf.measures(frame, EXPECTED, labels="probability")


def step_preferences(data: Data) -> Callable[[], object]:
    import lexiframe as lf

    run, qrels = _in_memory(data)
    frame = lf.positions(run, qrels)
    return lambda: lf.preferences(frame, PREFERENCES)


def _synthetic_metrics(data: Data) -> object:
    """Seeded AP-like scores of the shape's systems on all its queries (no files)."""
    import numpy as np
    import polars as pl

    systems, queries = map(int, data.root.name.split("-")[:2])
    rng = np.random.default_rng(0)
    scores = rng.beta(1 + rng.uniform(0, 1, (systems, 1)), 3, (systems, queries))
    return pl.DataFrame(
        {
            "system": np.repeat([f"s{i:03d}" for i in range(systems)], queries),
            "query": np.tile([f"q{j:03d}" for j in range(queries)], systems),
            "AP": scores.ravel(),
        }
    )


def step_fisher(data: Data) -> Callable[[], object]:
    """Fisher's randomisation test, 10,000 replicates, every pair of the shape's systems
    (5,995 pairs of 110 systems) on all its queries: seeded AP-like scores (no files)."""
    from lexiframe import stats

    metrics = _synthetic_metrics(data)
    return lambda: stats.significance(metrics, "AP", test="fisher", n_replicates=10_000, seed=0)


def step_wilcoxon(data: Data) -> Callable[[], object]:
    """The Wilcoxon signed-rank test of every pair of the shape's systems (5,995 pairs of
    110 systems × 249 queries for robust04; the target is under 2 s), with the
    Benjamini-Hochberg correction, on the scores of ``fisher``."""
    from lexiframe import stats

    metrics = _synthetic_metrics(data)
    return lambda: stats.significance(metrics, "AP", test="wilcoxon", correction="bh")


def step_qrels_agreement(data: Data) -> Callable[[], object]:
    """The agreement report of two qrels at a TREC track's size, whatever the shape: 59
    systems x 54 queries x depth 100 (seeded synthetic track, no files), its qrels and a
    simulated LLM judge's; AP, nDCG@10 and sgnLP, with the hole sizes and the labels."""
    import polars as pl

    import lexiframe as lf
    from lexiframe import stats

    track = lf.datasets.synthetic_track(n_systems=59, n_queries=54, depth=100, seed=0)
    llm = stats.simulated_judge(track.qrels, track.run, seed=0, bias=0.3, noise=0.6)
    metrics, prefs = [], []
    for name, qrels in (("human", track.qrels), ("llm", llm)):
        frame = lf.positions(track.run, qrels)
        metrics.append(lf.measures(frame, ["AP", "nDCG@10"]).with_columns(qrels=pl.lit(name)))
        prefs.append(lf.preferences(frame, ["sgnLP"]).with_columns(qrels=pl.lit(name)))
    per_query = [pl.concat(metrics), pl.concat(prefs)]
    judgments = pl.concat(
        [track.qrels.with_columns(qrels=pl.lit("human")), llm.with_columns(qrels=pl.lit("llm"))]
    )
    return lambda: stats.qrels_agreement(
        per_query, ["AP", "nDCG@10", "sgnLP"], run=track.run, judgments=judgments
    )


def _two_qrels(data: Data) -> tuple[object, dict[str, object]]:
    """The run and two qrels sets: the shape's, and one with a grade up for about half of
    the judged documents (seeded by the document id's hash)."""
    import polars as pl

    run, qrels = _in_memory(data)
    shifted = qrels.with_columns(
        relevance=pl.min_horizontal(pl.col("relevance") + pl.col("doc").hash(0) % 2, pl.lit(2))
    )
    return run, {"human": qrels, "llm": shifted}


def step_two_qrels_each(data: Data) -> Callable[[], object]:
    """AP and nDCG@10 against two qrels sets, one evaluation each, stacked."""
    import polars as pl

    import lexiframe as lf

    run, sets = _two_qrels(data)
    return lambda: pl.concat(
        lf.evaluate(run, qrels, ["AP", "nDCG@10"]).with_columns(qrels=pl.lit(name))
        for name, qrels in sets.items()
    )


def step_two_qrels_keyed(data: Data) -> Callable[[], object]:
    """The same in one evaluation: the sets stacked by ``lf.concat_qrels``, ``by="qrels"``."""
    import lexiframe as lf

    run, sets = _two_qrels(data)
    keyed = lf.concat_qrels(sets)
    return lambda: lf.evaluate(run, keyed, ["AP", "nDCG@10"], by="qrels")


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


AT_TEN = ["AP@10", "nDCG@10", "P@10", "R@10"]
"""A recommender's measures: each reads no deeper than rank 10."""


def _in_memory_recsys(data: Data) -> tuple[object, object]:
    import polars as pl

    return pl.read_parquet(data.runs("parquet")), pl.read_parquet(data.qrels("parquet"))


def step_recsys_whole_lists(data: Data) -> Callable[[], object]:
    """In-memory frames (read untimed): the positions frame of every rank, then the
    measures at 10 (what evaluation did before its lists stopped at the cut-off)."""
    import lexiframe as lf

    run, qrels = _in_memory_recsys(data)
    return lambda: lf.measures(lf.positions(run, qrels), AT_TEN)


def step_recsys_evaluate(data: Data) -> Callable[[], object]:
    """``lf.evaluate`` of the measures at 10 on the same frames: rankings in rank order are
    marked to rank 10 only (``positions(..., reach=10)``)."""
    import lexiframe as lf

    run, qrels = _in_memory_recsys(data)
    return lambda: lf.evaluate(run, qrels, AT_TEN)


STEPS: dict[str, tuple[Callable[[Data], Callable[[], object]], list[str], str | None]] = {
    # name: (builder, formats it reads, the step its ratio is taken to)
    "polars-read": (step_polars_read, ["trec.gz"], None),
    "polars-read-each": (step_polars_read_each, ["trec.gz"], "polars-read"),
    "read": (step_read, ["trec.gz"], "polars-read"),
    "positions": (step_positions, ["parquet"], None),
    "positions-judged": (step_positions_judged, ["parquet"], "positions"),
    "positions-condensed": (step_positions_condensed, ["parquet"], "positions"),
    "positions-ties": (step_positions_ties, ["parquet"], "positions"),
    "measures": (step_measures, ["parquet"], None),
    "measures-ties": (step_measures_ties, ["parquet"], "measures"),
    "all-measures": (step_all_measures, ["parquet"], None),
    "binary-expected": (step_binary_expected, ["parquet"], None),
    "expected": (step_expected, ["parquet"], "binary-expected"),
    "preferences": (step_preferences, ["parquet"], None),
    "mc4": (step_mc4, ["parquet"], None),
    "fisher": (step_fisher, [], None),
    "wilcoxon": (step_wilcoxon, [], None),
    "qrels-agreement": (step_qrels_agreement, [], None),
    "two-qrels-each": (step_two_qrels_each, ["parquet"], None),
    "two-qrels-keyed": (step_two_qrels_keyed, ["parquet"], "two-qrels-each"),
    "e2e-trec": (step_e2e_trec, ["trec.gz"], "polars-read"),
    "e2e-parquet": (step_e2e_parquet, ["parquet"], None),
    "classic": (step_classic, ["trec.gz"], None),
    "pytrec_eval": (step_pytrec_eval, ["trec.gz"], "classic"),
    "ranx": (step_ranx, ["trec.gz"], "classic"),
    "ranx-first-call": (step_ranx_first_call, ["trec.gz"], "classic"),
    "recsys-positions": (step_recsys_positions, ["parquet"], None),
    "recsys-whole-lists": (step_recsys_whole_lists, ["parquet"], None),
    "recsys-evaluate": (step_recsys_evaluate, ["parquet"], "recsys-whole-lists"),
}
DEFAULT_STEPS = [name for name in STEPS if not name.startswith("recsys")]
RECSYS_STEPS = ["recsys-positions"]  # (the in-memory steps: --shape recsys-20k --steps …)
ONCE = {"ranx-first-call"}  # what only the first call in a process measures
SLOW = {"pytrec_eval", "ranx"}  # minutes per call on the robust04 shape: timed once


# --- whole processes (timed by the parent, one-shot) -----------------------------------------

POLARS_READ = """
import sys
import polars as pl
types = [pl.String, pl.String, pl.String, pl.Int64, pl.Float64, pl.String]
schema = dict(zip(["query", "q0", "doc", "rank", "score", "system"], types))
options = {"separator": " ", "has_header": False, "schema": schema, "quote_char": None}
print(pl.scan_csv(sys.argv[1:], **options).collect().height)
"""


def _lexiframe(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "lexiframe", *arguments]


def _cli_evaluate(data: Data, out: Path, measures: list[str], orderings: bool) -> list[str]:
    runs, qrels = data.runs("trec.gz"), data.qrels("trec.gz")
    command = _lexiframe("evaluate", *map(str, runs), "--qrels", str(qrels))
    command += [part for name in measures for part in ("-m", name)]
    command += ["--output", str(out / "per-query.parquet")]
    if orderings:
        command += ["--orderings", str(out / "orderings.parquet")]
    return command


def _pref_eval_qrels(data: Data) -> Path:
    """pref_eval reads plain-text qrels only: a decompressed copy, written once."""
    import gzip
    import shutil

    target = data.root / "pref_eval-qrels.txt"
    if not target.exists():
        with gzip.open(data.qrels("trec.gz"), "rb") as source, open(target, "wb") as copy:
            shutil.copyfileobj(source, copy)
    return target


def _pref_eval(data: Data, out: Path, script: Path | None) -> list[str] | None:
    if script is None:
        return None
    measures = ["-m", "lexiprecision", "-m", "rrlexiprecision", "-m", "lexirecall"]
    qrels = str(_pref_eval_qrels(data))
    return [sys.executable, str(script), "-R", qrels, *measures, *map(str, data.runs("trec.gz"))]


def _python(code: str, *arguments: str) -> list[str]:
    return [sys.executable, "-c", code, *arguments]


ProcessBuilder = Callable[[Data, Path, "Path | None"], "list[str] | None"]
PROCESS_STEPS: dict[str, tuple[ProcessBuilder, str | None]] = {
    # name: (command builder: data, output folder, pref_eval.py; the step of its ratio)
    "import-polars": (lambda d, o, p: _python("import polars"), None),
    "import-lexiframe": (lambda d, o, p: _python("import lexiframe"), "import-polars"),
    "lexiframe-help": (lambda d, o, p: _lexiframe("--help"), "import-polars"),
    "polars-read": (lambda d, o, p: _python(POLARS_READ, *map(str, d.runs("trec.gz"))), None),
    "cli-preferences": (lambda d, o, p: _cli_evaluate(d, o, PREFERENCES, True), "polars-read"),
    "cli-metrics": (lambda d, o, p: _cli_evaluate(d, o, CLASSIC, False), "polars-read"),
    "pref_eval": (_pref_eval, "cli-preferences"),
}
STARTUP = {"import-polars", "import-lexiframe", "lexiframe-help"}
STARTUP_REPEATS = 20


def run_processes(
    label: str, shape: tuple[int, int, int, str], root: Path, repeat: int, pref_eval: Path | None
) -> list[Result]:
    """Time each whole process, one-shot, in turns; the medians of the turns."""

    # The data are written by a child: a forked child counts its parent's pages in its peak
    # RSS until it execs, so the parent stays small.
    folder = root / "-".join(map(str, shape))
    subprocess.run(
        [sys.executable, __file__, "--write-data", str(folder), "--shape-of", *map(str, shape)],
        check=True,
    )
    data = Data(folder)
    out = _scratch_folder()
    commands = {name: build(data, out, pref_eval) for name, (build, _) in PROCESS_STEPS.items()}
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, float] = {}
    notes: dict[str, str] = {}
    for turn in range(max(repeat, STARTUP_REPEATS)):
        for name, command in commands.items():
            if command is None or name in notes:
                continue
            if turn >= (STARTUP_REPEATS if name in STARTUP else repeat):
                continue
            seconds, cpu_seconds, peak, note = _time_process(command)
            if note:
                notes[name] = note
                continue
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            peaks[name] = max(peaks.get(name, 0.0), peak)
    results = []
    for name in commands:
        if commands[name] is None:
            note = "pass --pref-eval path/to/pref_eval.py" if name == "pref_eval" else "skipped"
            results.append(Result(label, name, None, None, note))
            continue
        median = statistics.median(times[name]) if times[name] else None
        note = notes.get(name, "")
        if cpu[name] and not note:
            # CPU seconds (user + system) suffer less from a busy machine than wall time.
            note = f"CPU {statistics.median(cpu[name]):.2f} s"
            peer = PROCESS_STEPS[name][1]
            if peer and cpu[peer]:
                ratio = statistics.median(cpu[name]) / statistics.median(cpu[peer])
                note += f" ({ratio:.2f} × {peer})"
        results.append(Result(label, name, median, peaks.get(name), note))
        peak = peaks.get(name, 0.0)
        print(f"{label:>24} {name:<18} {median!s:>22} s  {peak:.2f} GB", file=sys.stderr)
    return results


def _scratch_folder() -> Path:
    """A temporary folder for the outputs of the timed processes, removed when this
    script ends (each run wrote some 10 MB that stayed in the temporary folder)."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lexiframe-bench-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _time_process(
    command: list[str], output: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, float, str]:
    """Wall and CPU seconds and peak RSS (GB) of one process (its children included), and
    its last error line if it failed; its standard output goes to ``output``."""
    start = time.perf_counter()
    with open(output or os.devnull, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        err = process.stderr.read().decode() if process.stderr else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        return seconds, 0.0, 0.0, ((err.strip().splitlines() or ["failed"])[-1])[:80]
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024**2, ""


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


def table(results: list[Result], steps: dict | None = None) -> str:
    steps = STEPS if steps is None else steps
    by_step = {(r.shape, r.step): r for r in results}
    lines = [
        "| shape | step | seconds | peak RSS (GB) | vs | note |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in results:
        peer = steps[r.step][-1] if r.step in steps else None
        base = by_step.get((r.shape, peer)) if peer else None
        ratio = ""
        if base and base.seconds and r.seconds is not None:
            ratio = f"{r.seconds / base.seconds:.2f} × {peer}"
        seconds = "" if r.seconds is None else f"{r.seconds:.2f}"
        rss = "" if r.peak_rss_gb is None else f"{r.peak_rss_gb:.2f}"
        lines.append(f"| {r.shape} | {r.step} | {seconds} | {rss} | {ratio} | {r.note} |")
    return "\n".join(lines)


# --- file layouts: peak memory of metrics-only streaming -------------------------------------

LAYOUTS = ("one-file-per-run", "sharded-by-query", "one-file")


def layout_files(data: Data, layout: str) -> list[Path]:
    """The run of ``data`` laid out as ``layout``, written once beside it: each system's
    file (the generator's), each system's queries split into two files by query
    (``a_sys000.gz`` holds the first half of its queries, ``b_sys000.gz`` the rest), or
    every system in one file (the gzipped files concatenated, as ``cat`` would)."""
    runs = data.runs("trec.gz")
    if layout == "one-file-per-run":
        return runs
    folder = data.root / layout
    if layout == "one-file":
        target = folder / "all.gz"
        if not target.exists():
            folder.mkdir(exist_ok=True)
            partial = folder / ".all.gz.partial"
            with open(partial, "wb") as out:
                for path in runs:
                    out.write(path.read_bytes())  # gzip members follow each other
            partial.rename(target)
        return [target]
    if not (folder / "done").exists():
        import polars as pl

        import lexiframe as lf

        folder.mkdir(exist_ok=True)
        for path in runs:
            run = lf.read_run(path)
            queries = sorted(run["query"].unique().to_list())
            first = set(queries[: len(queries) // 2])
            in_first = pl.col("query").is_in(list(first))
            lf.io.write_trec_run(run.filter(in_first), folder / f"a_{path.name}")
            lf.io.write_trec_run(run.filter(~in_first), folder / f"b_{path.name}")
        (folder / "done").touch()
    return sorted(path for path in folder.iterdir() if path.name.endswith(".gz"))


def run_layouts(scales: list[int], root: Path) -> list[Result]:
    """``lexiframe evaluate`` with metrics only (the classic ones, -o parquet), one-shot, on
    the robust04 shape with ``scale`` times its queries, laid out three ways: its peak RSS
    and wall time, each a fresh process."""

    systems, queries, depth, id_type = SHAPES["robust04"]
    out = _scratch_folder()
    results = []
    for scale in scales:
        shape = (systems, queries * scale, depth, id_type)
        folder = root / "-".join(map(str, shape))
        subprocess.run(
            [sys.executable, __file__, "--write-data", str(folder), "--shape-of", *map(str, shape)],
            check=True,
        )
        data = Data(folder)
        label = f"robust04 {scale}x {systems}x{queries * scale}x{depth}"
        for layout in LAYOUTS:
            files = layout_files(data, layout)
            command = _lexiframe(
                "evaluate", *map(str, files), "--qrels", str(data.qrels("trec.gz"))
            )
            command += [part for name in CLASSIC for part in ("-m", name)]
            command += ["--output", str(out / "per-query.parquet")]
            seconds, _, peak, note = _time_process(command)
            note = note or f"{len(files)} files"
            results.append(Result(label, layout, seconds, peak, note))
            print(
                f"{label:>32} {layout:<18} {seconds:8.1f} s  {peak:.2f} GB  {note}", file=sys.stderr
            )
    return results


# --- the trec_eval drop-in beside NIST trec_eval ----------------------------------------------

DROP_IN_FLAGS = {"-q -c": ["-q", "-c"], "-c (means)": ["-c"]}
DROP_IN_CHECKED = [["-q", "-c", "-l", "2"], ["-q", "-c", "-J"], ["-q", "-c", "-M", "100"]]
"""Flags whose output is compared with trec_eval's too, once each, untimed."""


def plain_files(data: Data) -> tuple[Path, list[Path]]:
    """Plain-text copies of the shape's gzipped qrels and runs (trec_eval reads no gzip),
    written once beside them."""
    import gzip
    import shutil

    folder = data.root / "trec"
    runs = data.runs("trec.gz")
    if not (folder / "done").exists():
        (folder / "runs").mkdir(parents=True, exist_ok=True)
        pairs = [(data.qrels("trec.gz"), folder / "qrels.txt")]
        pairs += [(run, folder / "runs" / run.name.removesuffix(".gz")) for run in runs]
        for source, target in pairs:
            with gzip.open(source, "rb") as text, open(target, "wb") as copy:
                shutil.copyfileobj(text, copy)
        (folder / "done").touch()
    return folder / "qrels.txt", sorted((folder / "runs").iterdir())


TREC_EVAL_SOURCE = "https://github.com/usnistgov/trec_eval"
TREC_EVAL_TAG = "v10.0"


def _trec_eval_binary(given: Path | None, cache: Path) -> tuple[Path | None, str]:
    """NIST trec_eval's binary, and why there is none when there is not.

    ``given``: a binary, or a checkout of trec_eval's source to build. Otherwise trec_eval
    on the PATH, else the one built before under ``cache``, else its public source cloned
    into ``cache`` (tag ``v10.0``) and built there with ``make``, where git and a C compiler
    are present."""
    import shutil

    if given is not None and given.is_dir():
        return _built(given)
    if given is not None:
        return given, ""
    found = shutil.which("trec_eval")
    if found:
        return Path(found), ""
    source = cache / "trec_eval"
    if (source / "trec_eval").exists():
        return source / "trec_eval", ""
    if shutil.which("git") is None:
        return None, "no trec_eval: git is missing to fetch its source (pass --trec-eval)"
    if not source.exists():
        cache.mkdir(parents=True, exist_ok=True)
        clone = ["git", "clone", "--quiet", "--depth", "1", "--branch", TREC_EVAL_TAG]
        done = subprocess.run([*clone, TREC_EVAL_SOURCE, str(source)], capture_output=True)
        if done.returncode != 0:
            shutil.rmtree(source, ignore_errors=True)
            why = (done.stderr.decode().strip().splitlines() or ["git failed"])[-1]
            return None, f"no trec_eval: cloning {TREC_EVAL_SOURCE} failed ({why[:80]})"
    return _built(source)


def _built(source: Path) -> tuple[Path | None, str]:
    """trec_eval built with ``make`` in its source folder, or why not."""
    import shutil

    if not (source / "trec_eval").exists():
        if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
            return None, "no trec_eval: no C compiler to build it (pass --trec-eval)"
        done = subprocess.run(["make", "-C", str(source)], capture_output=True)
        if done.returncode != 0:
            why = (done.stderr.decode().strip().splitlines() or ["make failed"])[-1]
            return None, f"no trec_eval: building it in {source} failed ({why[:80]})"
    return source / "trec_eval", ""


def _same_output(ours: Path, theirs: Path) -> str:
    """Whether two outputs agree line for line, relstring aside (lexiframe does not print
    it): "identical", or the first difference. Read a line at a time: this process stays
    small, so that the processes it forks next do not count its pages in their peak RSS."""
    import itertools

    def kept(file: IO[str]) -> Iterator[str]:
        return (line for line in file if not line.startswith("relstring"))

    lines = 0
    with open(ours) as a, open(theirs) as b:
        for x, y in itertools.zip_longest(kept(a), kept(b)):
            lines += 1
            if x != y:
                return f"DIFFERENT at line {lines}"
    return f"identical ({lines:,} lines)"


def run_drop_in(
    shapes: list[str], root: Path, repeat: int, trec_eval: Path | None, compat: str = "10.0"
) -> list[Result]:
    """``lexiframe trec_eval -m all_trec`` over all runs in one command, and NIST trec_eval
    run once per run in a shell loop (as a script calls it), on the same plain-text files:
    whole processes, in turns, the median wall time and the peak RSS of each; their
    outputs compared line for line. ``compat``: the trec_eval version the drop-in
    reproduces (``--compat``), to compare with that version's binary."""

    binary, missing = _trec_eval_binary(trec_eval, root / "trec_eval-build")
    if missing:
        print(missing, file=sys.stderr)
    out = _scratch_folder()
    # Python's compiled modules as an installed package has them (the first run writes them).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    results = []
    for name in shapes:
        shape = SHAPES[name]
        folder = root / "-".join(map(str, shape))
        subprocess.run(
            [sys.executable, __file__, "--write-data", str(folder), "--shape-of", *map(str, shape)],
            check=True,
        )
        qrels, runs = plain_files(Data(folder))
        label = f"{name} {'x'.join(map(str, shape[:3]))}"
        # the machine's load as the shape starts: the ratios of a shared machine are read by it
        load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
        results.append(Result(label, "load average (1, 5, 15 min)", None, None, load))
        print(f"{label:>24} load average (1, 5, 15 min) {load}", file=sys.stderr)
        for flags_label, flags in DROP_IN_FLAGS.items():
            drop_in = ["trec_eval", "--compat", compat, *flags, "-m", "all_trec", str(qrels)]
            ours = _lexiframe(*drop_in, *map(str, runs))
            commands: dict[str, list[str] | None] = {
                "lexiframe trec_eval": ours,
                "trec_eval loop": None,
            }
            if binary is not None:
                loop = 'for run in "${@:2}"; do "$1" ' + " ".join(flags)
                loop += f' -m all_trec {qrels} "$run"; done'
                commands["trec_eval loop"] = [
                    "bash",
                    "-c",
                    loop,
                    "bash",
                    str(binary),
                    *map(str, runs),
                ]
            _time_process(ours, None, env)  # warm: the compiled modules, the files in cache
            times: dict[str, list[float]] = {step: [] for step in commands}
            cpu: dict[str, list[float]] = {step: [] for step in commands}
            peaks: dict[str, float] = {}
            for _ in range(repeat):
                for step, command in commands.items():
                    if command is None:
                        continue
                    target = out / f"{step.replace(' ', '-')}.txt"
                    seconds, cpu_seconds, peak, note = _time_process(command, target, env)
                    if note:
                        raise SystemExit(f"{step}: {note}")
                    times[step].append(seconds)
                    cpu[step].append(cpu_seconds)
                    peaks[step] = max(peaks.get(step, 0.0), peak)
            same = (
                _same_output(out / "lexiframe-trec_eval.txt", out / "trec_eval-loop.txt")
                if binary is not None
                else ""
            )
            for step in commands:
                step_label = f"{step} {flags_label}"
                if not times[step]:
                    note = missing
                    results.append(Result(label, step_label, None, None, note))
                    continue
                median = statistics.median(times[step])
                # CPU seconds (user + system, children included) suffer less from a machine
                # shared with other work than wall time.
                cpu_median = statistics.median(cpu[step])
                note = same if step == "lexiframe trec_eval" else f"{len(runs)} processes"
                note += f"; CPU {cpu_median:.2f} s"
                if step == "lexiframe trec_eval" and times["trec_eval loop"]:
                    ratio = median / statistics.median(times["trec_eval loop"])
                    cpu_ratio = cpu_median / statistics.median(cpu["trec_eval loop"])
                    note = (
                        f"{ratio:.2f} × the trec_eval loop (CPU {cpu_median:.2f} s, "
                        f"{cpu_ratio:.2f} ×); output {same}"
                    )
                results.append(Result(label, step_label, median, peaks[step], note))
                print(
                    f"{label:>24} {step_label:<28} {median:8.2f} s  {peaks[step]:.2f} GB  {note}",
                    file=sys.stderr,
                )
        for flags in DROP_IN_CHECKED if binary is not None else []:
            ours = out / "lexiframe-checked.txt"
            theirs = out / "trec_eval-checked.txt"
            command = _lexiframe("trec_eval", "--compat", compat, *flags, "-m", "all_trec")
            command.append(str(qrels))
            _time_process([*command, *map(str, runs)], ours, env)
            with open(theirs, "wb") as text:
                for run in runs:
                    loop = [str(binary), *flags, "-m", "all_trec", str(qrels), str(run)]
                    subprocess.run(loop, stdout=text, check=True)
            note = f"output {_same_output(ours, theirs)} (untimed)"
            step = f"lexiframe trec_eval {' '.join(flags)}"
            results.append(Result(label, step, None, None, note))
            print(f"{label:>24} {step:<28} {note}", file=sys.stderr)
    return results


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
    import spark_engine  # beside this script: its steps are choices too

    parser.add_argument("--steps", nargs="+", choices=[*STEPS, *spark_engine.CHILD_STEPS])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--compat",
        default="10.0",
        help="with --drop-in: the trec_eval version the drop-in reproduces (10.0, 9.0.8), to "
        "compare with that version's binary given by --trec-eval",
    )
    parser.add_argument("--data", type=Path, default=Path("benchmark-data"))
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="time positions, measures, preferences and MC4 at 1/4, 1/2 and all the queries "
        "(rows) of the shape, then 1/4, 1/2 and all its systems (pairs grow quadratically)",
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="time whole processes, one-shot: start-up, Polars' read, the lexiframe command",
    )
    parser.add_argument("--pref-eval", type=Path, help="pref_eval.py, timed with --processes")
    parser.add_argument(
        "--layouts",
        nargs="+",
        type=int,
        metavar="SCALE",
        help="peak memory of `lexiframe evaluate` (metrics only) on the robust04 shape with "
        "SCALE times its queries, for one file per run, runs sharded by query into two "
        "files, and all systems in one file (e.g. --layouts 1 4 16)",
    )
    parser.add_argument(
        "--engine",
        choices=["polars", "spark"],
        default="polars",
        help="spark: lexiframe.spark and Spark's RankingEvaluator on a local session, and "
        "one process for the crossover (benchmarks/spark_engine.py)",
    )
    parser.add_argument(
        "--drop-in",
        nargs="+",
        choices=list(SHAPES),
        metavar="SHAPE",
        help="time `lexiframe trec_eval -m all_trec` (-q -c, then -c) beside NIST trec_eval "
        "run once per run, whole processes on the same plain-text files (e.g. --drop-in "
        "track17 robust04)",
    )
    parser.add_argument(
        "--trec-eval",
        type=Path,
        help="NIST trec_eval for --drop-in: its binary, or a checkout of its source to build "
        "(default: trec_eval on the PATH, else its public source cloned and built with make "
        "under DATA/trec_eval-build; the step is skipped with the reason where that fails)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--write-data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shape-of", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_data:
        systems, queries, depth, id_type = args.shape_of
        ensure_data(args.write_data, (int(systems), int(queries), int(depth), id_type), ["trec.gz"])
        return
    if args.child:
        child(args.child, args.data, args.repeat)
        return

    systems, queries, depth, id_type = SHAPES[args.shape]
    if args.engine == "spark":
        shape = SHAPES[args.shape]
        root = ensure_data(args.data / "-".join(map(str, shape)), shape, ["parquet"]).root
        label = f"{args.shape} {systems}x{queries}x{depth}"
        rows = systems * queries * depth
        print(spark_engine.run_spark(label, root, rows, args.steps, args.repeat))
        return
    results: list[Result] = []
    if args.layouts:
        print(table(run_layouts(args.layouts, args.data), {}))
        return
    if args.drop_in:
        results = run_drop_in(args.drop_in, args.data, args.repeat, args.trec_eval, args.compat)
        print(table(results, {}))
        return
    if args.processes:
        label = f"{args.shape} {systems}x{queries}x{depth}"
        results = run_processes(label, SHAPES[args.shape], args.data, args.repeat, args.pref_eval)
        print(table(results, PROCESS_STEPS))
        return
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
