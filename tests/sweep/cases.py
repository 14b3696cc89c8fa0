"""The sweep corpus: bad inputs and faults, each with the exit status and the excerpt of the
message it must get. ``tests/test_sweep.py`` runs every case; a new input path, flag or API
argument is swept by adding a case here.

Three kinds of case:

- :class:`Command`: ``lexiframe`` with ``argv`` in a fresh folder that holds ``files`` (and
  ``stdin`` on standard input). ``{qrels}``, ``{run}`` and ``{runs}`` in ``argv`` are the
  toy track's qrels, one run file and its folder of runs (tests/data/toy). Every refusal
  is one line, with no traceback, no temporary name and no ``[Errno N]``; no input is
  modified; a refused command leaves no file or folder behind.
- :class:`Call`: an API call on the toy frames, the lexiframe error it raises (its type,
  an excerpt, and fields such as ``column``).
- :class:`Stop`: ``lexiframe`` stopped by a signal while it reads its run from standard
  input: the exit status and the one line it prints.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

import lexiframe as lf
from lexiframe.errors import InputError, LexiframeError, OutputError, SchemaError

GOOD_LINE = b"401 Q0 D401-000001 1 2.5 bm25\n"
GOOD_QRELS = b"401 0 D401-000001 1\n"


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]
    excerpt: str
    status: int = 2
    files: Mapping[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""
    full_output: bool = False  # standard output on a full device (> /dev/full)


@dataclass(frozen=True)
class Call:
    name: str
    call: Callable[[], Any]
    excerpt: str
    error: type[LexiframeError] = InputError
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stop:
    name: str
    signum: int
    excerpt: str


def evaluate(*argv: str) -> tuple[str, ...]:
    return ("evaluate", "--qrels", "{qrels}", "-m", "RR", *argv)


def run_file(*lines: bytes) -> dict[str, bytes]:
    return {"run.txt": b"".join(lines)}


def qrels_case(name: str, qrels: bytes, excerpt: str) -> Command:
    """evaluate on the toy run with a qrels file ``q.txt`` of these bytes."""
    return Command(name, ("evaluate", "--qrels", "q.txt", "{run}"), excerpt, files={"q.txt": qrels})


COMMANDS = [
    # --- run files ----------------------------------------------------------------------
    Command("empty run", evaluate("run.txt"), "run file 'run.txt' is empty", files=run_file()),
    Command(
        "binary run",
        evaluate("run.txt"),
        "is binary (it holds NUL bytes)",
        files=run_file(bytes(range(256)) * 4),
    ),
    Command(
        "UTF-16 run",
        evaluate("run.txt"),
        "'run.txt' is UTF-16 text",
        files=run_file(GOOD_LINE.decode().encode("utf-16")),
    ),
    Command(
        "bzip2 run",
        evaluate("run.txt"),
        "is compressed with bzip2",
        files=run_file(b"BZh91AY&SY" + bytes(40)),
    ),
    Command(
        "xz run", evaluate("run.txt"), "compressed with xz", files=run_file(b"\xfd7zXZ\x00 ...")
    ),
    Command(
        "parquet as text",
        evaluate("run.txt"),
        "parquet (name it .parquet)",
        files=run_file(b"PAR1" + bytes(20)),
    ),
    Command(
        "not UTF-8 on line 3",
        evaluate("run.txt"),
        "run file 'run.txt', line 3: not UTF-8 text",
        files=run_file(
            GOOD_LINE, GOOD_LINE.replace(b"D401-000001", b"D2"), b"401 Q0 D\xff 3 1 x\n"
        ),
    ),
    Command(
        "NUL byte on a later line",
        evaluate("run.txt"),
        "line 401: a NUL byte",
        files=run_file(
            *(f"401 Q0 D{doc} {doc} {-doc} bm25\n".encode() for doc in range(400)),
            b"401 Q0 D\x00 401\n",  # malformed: the NUL byte is named with its line
        ),
    ),
    Command(
        "five fields",
        evaluate("run.txt"),
        "line 2: expected 6 whitespace-separated fields",
        files=run_file(GOOD_LINE, b"401 Q0 D2 2 1.0\n"),
    ),
    Command(
        "score not a number",
        evaluate("run.txt"),
        "score 'abc' is not a number",
        files=run_file(GOOD_LINE, b"401 Q0 D2 2 abc bm25\n"),
    ),
    Command(
        "NaN score",
        evaluate("run.txt"),
        "score 'nan' is not a number that orders a ranking",
        files=run_file(GOOD_LINE, b"401 Q0 D2 2 nan bm25\n"),
    ),
    Command(
        "duplicate document",
        evaluate("run.txt"),
        "a ranking lists the same document twice (trec_eval refuses this too); example: ",
        files=run_file(GOOD_LINE, GOOD_LINE),
    ),
    Command(
        "duplicate is worded for the command",
        evaluate("run.txt"),
        "; drop the duplicate lines",
        files=run_file(GOOD_LINE, GOOD_LINE),
    ),
    Command(
        "standard input named as such",
        evaluate("-"),
        "run file '-' (standard input), line 1: expected 6",
        stdin=b"401 Q0 D1 1\n",
    ),
    Command("/dev/null as the run", evaluate("/dev/null"), "run file '/dev/null' is empty"),
    Command(
        "/dev/null as the qrels",
        ("evaluate", "--qrels", "/dev/null", "{run}"),
        "qrels file '/dev/null' is empty",
    ),
    Command("missing run", evaluate("nope.txt"), "run file not found: 'nope.txt'"),
    Command(
        "empty folder",
        evaluate("empty/"),
        "no run files found in directory",
        files={"empty/.keep": b""},
    ),
    Command(
        "corrupt gzip",
        evaluate("run.txt.gz"),
        "cannot decompress 'run.txt.gz'",
        files={"run.txt.gz": b"\x1f\x8b\x08\x00garbage"},
    ),
    Command(
        "text named .parquet",
        evaluate("run.parquet"),
        "cannot read parquet file 'run.parquet'",
        files={"run.parquet": GOOD_LINE},
    ),
    Command(
        "two run files of one name by filename",
        evaluate("--system-from", "filename", "a/run.txt", "b/run.txt"),
        "would both be system 'run.txt'",
        files={"a/run.txt": GOOD_LINE, "b/run.txt": GOOD_LINE},
    ),
    # --- qrels --------------------------------------------------------------------------
    qrels_case("NaN grade", GOOD_QRELS + b"401 0 D2 nan\n", "relevance 'nan' is not an integer"),
    qrels_case("fractional grade", GOOD_QRELS + b"401 0 D2 1.5\n", "'1.5' is not an integer"),
    qrels_case("three-field qrels", GOOD_QRELS + b"401 D2 1\n", "line 2: expected 4 whitespace"),
    qrels_case("empty qrels", b"", "qrels file 'q.txt' is empty"),
    Command("qrels is a folder", ("evaluate", "--qrels", "{runs}", "{run}"), "qrels"),
    # --- flags --------------------------------------------------------------------------
    Command(
        "depth 0", evaluate("--depth", "0", "{run}"), "--depth must be a positive integer, not 0"
    ),
    Command("n negative", evaluate("--n", "-5", "{run}"), "--n must be a positive integer, not -5"),
    Command(
        "threshold not a number", evaluate("--threshold", "x", "{run}"), "invalid grade value: 'x'"
    ),
    Command(
        "trec_eval's -l",
        evaluate("-l", "2", "{run}"),
        "(trec_eval's -l is --threshold here: --threshold 2)",
    ),
    Command(
        "trec_eval's -M",
        evaluate("-M100", "{run}"),
        "(trec_eval's -M is --depth here: --depth 100)",
    ),
    Command(
        "trec_eval's -J in compare",
        ("compare", "--qrels", "{qrels}", "-J", "{runs}"),
        "-J is --condensed here",
    ),
    Command("a misspelt flag", evaluate("--thresold", "1", "{run}"), "did you mean --threshold?"),
    Command("unknown measure", evaluate("-m", "NOPE", "{run}"), "NOPE"),
    Command(
        "unknown output format", evaluate("-o", "out.xlsx", "{run}"), "cannot write a .xlsx file"
    ),
    Command(
        "output without extension",
        evaluate("-o", "out", "{run}"),
        "cannot write an extension-less file",
    ),
    Command(
        "output is a folder", evaluate("-o", "out/", "{run}"), "cannot write 'out/': it is a folder"
    ),
    Command(
        "output inside the input folder",
        evaluate("-o", "runs/out.csv", "runs/"),
        "is inside the input folder 'runs'",
        files={"runs/a.txt": GOOD_LINE},
    ),
    Command(
        "output over the input",
        evaluate("-o", "runs/a.csv", "runs/"),
        "is also an input",
        files={"runs/a.csv": GOOD_LINE},
    ),
    Command(
        "two outputs on one path",
        (
            "evaluate",
            "--qrels",
            "{qrels}",
            "-m",
            "RR",
            "-m",
            "sgnLP",
            "-o",
            "x.csv",
            "--summary",
            "x.csv",
            "{run}",
        ),
        "would both be written to 'x-metrics.csv'",
    ),
    Command(
        "output folders of a failed command",
        evaluate("-o", "new/sub/out.csv", "run.txt"),
        "line 2",
        files=run_file(GOOD_LINE, b"401 Q0 D2 2 oops bm25\n"),
    ),
    Command("corpus too small", evaluate("-m", "SL3", "--n", "5", "{run}"), "--n 5 is too small"),
    Command(
        "-q with preferences only",
        ("evaluate", "--qrels", "{qrels}", "-m", "sgnLP", "-q", "{run}"),
        "-q prints the metrics",
    ),
    Command(
        "--measures-from a missing file",
        evaluate("--measures-from", "m.py", "{run}"),
        "--measures-from: no file 'm.py'",
    ),
    Command(
        "--measures-from a failing file",
        evaluate("--measures-from", "m.py", "{run}"),
        "--measures-from m.py line 2: ZeroDivisionError",
        files={"m.py": b"x = 1\ny = 1 / 0\n"},
    ),
    Command(
        "demo over an existing file",
        ("demo", "--write", "."),
        "'runs/sys000.txt' exists",
        files={"runs/sys000.txt": b"mine\n"},
    ),
    Command("compare one system", ("compare", "--qrels", "{qrels}", "{run}"), "at least 2 systems"),
    Command(
        "trec_eval on a folder of several runs",
        ("trec_eval", "-m", "ndcg_cut_10", "{qrels}", "{runs}"),
        "is a folder, read as one run of its files, but they hold",
    ),
    # --- every subcommand's flags -------------------------------------------------------
    Command(
        "trec_eval -M 0", ("trec_eval", "-M", "0", "{qrels}", "{run}"), "-M must be a positive"
    ),
    Command("trec_eval -N 0", ("trec_eval", "-N", "0", "{qrels}", "{run}"), "-N (the collection"),
    Command("trec_eval -l x", ("trec_eval", "-l", "x", "{qrels}", "{run}"), "invalid int value"),
    Command("trec_eval -R prefs", ("trec_eval", "-R", "prefs", "{qrels}", "{run}"), "-R prefs"),
    Command("trec_eval -T x", ("trec_eval", "-T", "x", "{qrels}", "{run}"), "-T x: only"),
    Command("trec_eval no qrels", ("trec_eval", "nope.txt", "{run}"), "qrels file not found"),
    Command("trec_eval no run", ("trec_eval", "{qrels}"), "the following arguments are required"),
    Command(
        "trec_eval -m nope", ("trec_eval", "-m", "nope", "{qrels}", "{run}"), "illegal measure"
    ),
    Command(
        "compare --replicates 0",
        ("compare", "--qrels", "{qrels}", "--replicates", "0", "{runs}"),
        "--replicates must be a positive integer",
    ),
    Command(
        "compare --one-way with a pairwise test",
        ("compare", "--qrels", "{qrels}", "--one-way", "--test", "t", "{runs}"),
        "--one-way (the one-way ANOVA) applies to",
    ),
    Command(
        "compare --test nope",
        ("compare", "--qrels", "{qrels}", "--test", "nope", "{runs}"),
        "invalid choice: 'nope'",
    ),
    Command("measures --measures-from nope", ("measures", "--measures-from", "n.py"), "no file"),
    Command("evaluate --order nope", evaluate("--order", "nope", "{run}"), "invalid choice"),
    Command("evaluate --no-relevant x", evaluate("--no-relevant", "x", "{run}"), "invalid choice"),
    Command("evaluate --system-from x", evaluate("--system-from", "x", "{run}"), "invalid choice"),
    Command(
        "demo --write into a file",
        ("demo", "--write", "file.txt"),
        "a file is in the way of a folder",
        files={"file.txt": b"mine\n"},
    ),
    # --- outputs ------------------------------------------------------------------------
    Command(
        "a full standard output",
        evaluate("{run}"),
        "cannot write the output: no space left on the device",
        full_output=True,
    ),
]


def _positions(ranks: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {"system": ["a"], "query": ["q1"], "positions": [ranks], "n_rel": [2], "n_ret": [10]}
    )


RUN = pl.DataFrame({"system": ["a", "a"], "query": [1, 1], "doc": [1, 2], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"query": [1], "doc": [2], "relevance": [1]})


def hand_built(ranks: list[int], column: str, excerpt: str) -> Call:
    """measures() on a hand-built positions frame whose ranks no ranking has."""
    return Call(
        f"positions {ranks}",
        lambda: lf.measures(_positions(ranks), ["AP", "RR"]),
        excerpt,
        fields={"column": column},
    )


CALLS = [
    hand_built([1, 1], "positions", "ranks from 1 up"),  # AP 1.5 before
    hand_built([3, 1], "positions", "each once and in increasing order"),  # AP 1.17
    hand_built([-1], "positions", "ranks from 1 up"),  # RR -1
    hand_built([1, 11], "n_ret", "at least the last rank"),
    hand_built([1, 2, 3], "n_rel", "at least as many relevant"),
    Call(
        "preferences of positions [2, 2]",
        lambda: lf.preferences(_positions([2, 2]).drop("n_rel", "n_ret")),
        "each once and in increasing order",
        fields={"column": "positions"},
    ),
    Call(
        "UInt64 qrels ids beyond Int64",
        lambda: lf.evaluate(RUN, QRELS.with_columns(doc=pl.lit(2**63 + 5, pl.UInt64)), ["RR"]),
        "holds 9223372036854775813, beyond Int64",
        SchemaError,
        fields={"column": "doc"},
    ),
    Call(
        "n= an expression of text",
        lambda: lf.measures(lf.positions(RUN, QRELS), ["SL3"], n=pl.lit("x")),
        "n= is an expression of String",
    ),
    Call(
        "preferences([])",
        lambda: lf.preferences(lf.positions(RUN, QRELS), []),
        "needs at least one measure",
    ),
    Call(
        "preferences(None)",
        lambda: lf.preferences(lf.positions(RUN, QRELS), None),
        "needs at least one measure",
    ),
    Call(
        "lower_is_better='yes'",
        lambda: lf.order(lf.evaluate(RUN, QRELS, ["RR"]), "RR", lower_is_better="yes"),
        "lower_is_better must be True, False or None",
    ),
    Call(
        "as_run(system=123)",
        lambda: lf.as_run({"q1": {"d1": 1.0}}, system=123),
        "system must be a non-empty string",
    ),
    Call(
        "read_run(rank='yes')",
        lambda: lf.read_run(_toy_run_path(), rank="yes"),
        "rank must be True or False",
    ),
    Call(
        "an empty qrels frame",
        lambda: lf.evaluate(RUN, QRELS.clear(), ["RR"]),
        "the qrels table is empty",
    ),
    Call(
        "run and qrels swapped",
        lambda: lf.evaluate(QRELS, RUN, ["RR"]),
        "are the run and the qrels swapped?",
        SchemaError,
    ),
    Call(
        "threshold a string",
        lambda: lf.positions(RUN, QRELS, threshold="1"),
        "threshold must be an integer grade",
    ),
    Call(
        "depth a float",
        lambda: lf.positions(RUN, QRELS, depth=10.0),
        "depth must be a positive integer, not 10.0; pass depth=10",
    ),
    Call("an output folder", lambda: lf.write_frame(RUN, "."), "it is a folder", OutputError),
]


def _toy_run_path() -> str:
    from tests.conftest import DATA

    return str(sorted((DATA / "toy" / "runs").iterdir())[0])


ACCEPTED = [
    # The other side of a refusal: what must keep working.
    ("a NumPy int8 threshold", lambda: lf.positions(RUN, QRELS, threshold=np.int8(1)).height),
    ("a NumPy int64 depth", lambda: lf.positions(RUN, QRELS, depth=np.int64(5)).height),
    (
        "a NumPy boolean lower_is_better",
        lambda: (
            lf.order(lf.evaluate(RUN, QRELS, ["RR"]), "RR", lower_is_better=np.bool_(False)).height
        ),
    ),
    (
        "an integer n= expression",
        lambda: lf.measures(lf.positions(RUN, QRELS), ["SL3"], n=pl.lit(100)).height,
    ),
]

STOPS = [
    Stop("Ctrl-C", signal.SIGINT, "lexiframe: interrupted"),
    Stop("SIGTERM", signal.SIGTERM, "lexiframe: stopped by SIGTERM"),
    Stop("SIGHUP", signal.SIGHUP, "lexiframe: stopped by SIGHUP"),
]
