"""``lexiframe trec_eval``: trec_eval's command line and output, for the measures lexiframe has.

Scripts that call ``trec_eval [-q] [-c] [-n] [-J] [-l LEVEL] [-M DEPTH] [-N NUM]
[-m MEASURE]... QRELS RUN``
and parse its output keep working: the same flags, the same measure names (``map``,
``P.5,10``, ``ndcg_cut.10``, ``official``, ``all_trec``) and the same lines
(``measure<TAB>query<TAB>value``, names padded to 22 characters, integers for counts, 4
decimals otherwise, per-query lines with ``-q`` in trec_eval's order, then ``all``). Several
runs in one call print one block per run, as successive trec_eval calls would.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence

import polars as pl

from lexiframe._utils import format_row
from lexiframe.cli import trec_eval_measures as measuring
from lexiframe.cli._shared import add_compat_argument
from lexiframe.cli.trec_eval_input import Run, read_ahead, read_batches
from lexiframe.cli.trec_eval_measures import Line, plan, resolve, silent_queries
from lexiframe.cli.trec_eval_output import format_runs
from lexiframe.errors import InputError
from lexiframe.options import PositionsOptions
from lexiframe.ranking.prepared import PreparedQrels

DESCRIPTION = (
    "trec_eval's command line: its flags, measure names and output format (`measure`, "
    "query, value; `all` lines; runid and num_q), for the measures lexiframe computes. "
    "Several runs print one block each, in the order given, each with its runid line "
    "first among its `all` lines; a parquet run holding several systems is one run per "
    "system. Measures of a nickname "
    "(official, all_trec) that lexiframe does not compute are left out; one asked for by "
    "name is an error. A fractional grade (0.7, a language model's label) is refused where "
    "trec_eval cuts it to a whole number in silence: lexiframe evaluate --labels reads "
    "such labels."
)


def _check_flags(args: argparse.Namespace) -> None:
    """Refuse bad values of -l, -M and -N before any work, naming trec_eval's flag."""
    from lexiframe.validate import POSITION_MAX, require_positive_int, require_threshold

    require_threshold(args.level, warn=False, name="-l")
    if args.depth is not None:
        require_positive_int(args.depth, "-M", maximum=POSITION_MAX)
    if args.collection_size is not None:
        require_positive_int(args.collection_size, "-N", meaning="the collection size")


def _in_drop_in_words(error: InputError, runs: Sequence[Run]) -> InputError:
    """An error of a batch ranked or measured in the drop-in's words, from its fields:
    ``-N`` for the corpus size ``n=``, and the ranking's run by its file, not by its index
    in ``runs`` (the ``system`` of its example row).

    Example:
        >>> error = InputError("{argument}5 is too small: the ranking system='0' query='401'",
        ...                    example={"system": "0", "query": "401"}, argument="n=")
        >>> str(_in_drop_in_words(error, [Run("bm25", "runs/bm25.txt")]))
        "-N 5 is too small: the ranking of run 'runs/bm25.txt' query='401'"
    """
    template, example = error.template, error.example or {}
    system = example.get("system")
    if isinstance(system, str) and system.isdigit() and int(system) < len(runs):
        rest = {key: value for key, value in example.items() if key != "system"}
        named = f"of run {runs[int(system)].source!r}" + (f" {format_row(rest)}" if rest else "")
        template = template.replace(format_row(dict(example)), named)
    return InputError(
        template,
        kind=error.kind,
        column=error.column,
        example=error.example,
        argument="-N " if error.argument == "n=" else (error.flag or error.argument),
        hint=error.hint if error.cli_hint is None else error.cli_hint,
    )


def _check_formats(args: argparse.Namespace) -> None:
    """Refuse the trec_eval options whose behaviour the drop-in does not reproduce."""
    if args.rel_format != "qrels":
        raise InputError(
            f"-R {args.rel_format}: only trec_eval's default qrels format is read "
            "(query 0 doc grade); the preference formats (prefs, qrels_prefs, qrels_jg) are not"
        )
    if args.results_format != "trec_results":
        raise InputError(
            f"-T {args.results_format}: only trec_eval's default trec_results format is read"
        )
    if args.debug_level != "0":
        raise InputError(
            f"-D {args.debug_level}: trec_eval's debugging output of its own internals is not "
            "reproduced; run trec_eval itself for it"
        )


BATCH_BYTES = 4 << 20
"""Run files read and ranked together, in bytes of gzipped text (a plain file counts a
fifth of its size: 4 MiB is about 400,000 lines). One thread reads the next batch while
another ranks this one and the caller measures and prints: small enough that the three
overlap on a track of a few runs, large enough that a batch's fixed costs stay small."""


CHUNK_RANKINGS = 3_000
"""Rankings measured and printed together: the measures cost per call as well as per
ranking, and their working memory grows with the chunk (0.9 GB at the peak on the robust04
shape at 3,000, 1.16 GB at 10,000)."""


def run_trec_eval(args: argparse.Namespace) -> int:
    """The ``trec_eval`` subcommand: read and rank the runs a batch at a time in a thread,
    measure and format them a chunk at a time, the output kept aside until the last run is
    printed (all or nothing), then written."""
    from lexiframe import io

    _check_flags(args)
    _check_formats(args)
    lines = resolve(args.measure or [], args.compat)
    qrels = io.read_qrels(args.qrels)
    judged_relevant = qrels.filter(pl.col("relevance") > 0).height if args.complete else None
    prepared = PreparedQrels(qrels)  # checked and grouped once for every batch
    settings = plan(
        lines,
        complete=args.complete,
        level=args.level,
        depth=args.depth,
        judged_only=args.judged_only,
        collection_size=args.collection_size,
        compat=args.compat,
    )
    everything: list[Run] = []  # the runs read so far; a run's system is its index here

    def in_words(error: InputError) -> InputError:
        return _in_drop_in_words(error, everything)

    def rankings() -> Iterator[tuple[list[Run], pl.DataFrame]]:
        """Each batch's runs and positions frame, ranked in a thread while the next batch
        is read in another."""
        count = 0
        for batch in read_ahead(read_batches(args.runs, BATCH_BYTES)):
            everything.extend(batch.runs)
            try:
                frame = measuring.ranked(batch.rows, prepared, settings, count)
            except InputError as error:
                raise in_words(error) from None
            count += len(batch.runs)
            yield batch.runs, frame

    def printed(first: int, chunk: list[Run], frames: list[pl.DataFrame]) -> str:
        """The lines of a chunk of runs (the first numbered ``first``), measured together."""
        try:
            frames_together = pl.concat(frames, how="vertical_relaxed", rechunk=True)
            table = measuring.measured(frames_together, lines, settings)
        except InputError as error:
            raise in_words(error) from None
        table = table.with_columns(pl.col("run").cast(pl.Int64) - first)
        evaluated = set(table["run"].unique().to_list())
        for index, run in enumerate(chunk):
            if index not in evaluated:
                raise InputError(
                    f"{run.source}: no query with both results and relevance information"
                )
        blocks = format_runs(
            table,
            lines,
            [run.runid for run in chunk],
            per_query=args.query,
            judged_relevant=judged_relevant,
            summary=not args.no_summary,
        )
        return "".join(blocks)

    with silent_queries(), tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        # Runs are read a batch at a time in one thread and ranked in another (the memory
        # of a few batches), and their positions measured and printed a chunk of rankings
        # at a time meanwhile: the measures cost per call as well as per ranking.
        first = 0
        chunk: list[Run] = []
        frames: list[pl.DataFrame] = []
        for runs, frame in read_ahead(rankings()):
            several = len(args.runs) > 1 or len(runs) > 1  # known with the first batch
            named = any(line.kind == "runid" for line in lines)
            if not first and not chunk and several and not named:
                lines = [Line("runid", "runid", ""), *lines]  # say which run each block is
            chunk += runs
            frames.append(frame)
            if sum(frame.height for frame in frames) >= CHUNK_RANKINGS:
                spool.write(printed(first, chunk, frames))
                first += len(chunk)
                chunk, frames = [], []
        if chunk:
            spool.write(printed(first, chunk, frames))
        spool.seek(0)
        shutil.copyfileobj(spool, sys.stdout)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``lexiframe trec_eval`` on the command's subparsers."""
    te = commands.add_parser(
        "trec_eval",
        help="trec_eval's command line and output format (a drop-in for scripts)",
        description=DESCRIPTION,
    )
    te.add_argument(
        "-q",
        dest="query",
        action="store_true",
        help="print the value of each query too, before the `all` lines",
    )
    te.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every query of the qrels; a query the run skipped scores 0",
    )
    te.add_argument(
        "-l",
        dest="level",
        type=int,
        default=PositionsOptions.threshold,
        metavar="LEVEL",
        help="lowest relevance grade counted as relevant (trec_eval's default 1)",
    )
    te.add_argument(
        "-M",
        dest="depth",
        type=int,
        metavar="DEPTH",
        help="evaluate only the top DEPTH documents of each ranking",
    )
    te.add_argument(
        "-n",
        dest="no_summary",
        action="store_true",
        help="print no summary (`all`) lines: with -q, the per-query lines alone",
    )
    te.add_argument(
        "-N",
        dest="collection_size",
        type=int,
        metavar="NUM",
        help="number of documents in the collection; trec_eval reads it for utility only, "
        "whose fourth weight (the non-relevant documents not retrieved) needs it",
    )
    te.add_argument(
        "-R",
        dest="rel_format",
        default="qrels",
        metavar="FORMAT",
        help="format of the qrels file: qrels (trec_eval's default; the only one read)",
    )
    te.add_argument(
        "-T",
        dest="results_format",
        default="trec_results",
        metavar="FORMAT",
        help="format of the run files: trec_results (trec_eval's default; the only one read)",
    )
    te.add_argument(
        "-D",
        dest="debug_level",
        default="0",
        metavar="LEVEL",
        help="trec_eval's debug level: 0 (the default) only; its debugging output is not "
        "reproduced",
    )
    te.add_argument(
        "-J",
        dest="judged_only",
        action="store_true",
        help="rank only the judged documents: unjudged ones are removed from each ranking "
        "(after -M) and the rest move up (condensed rankings)",
    )
    te.add_argument(
        "-m",
        dest="measure",
        action="append",
        metavar="MEASURE",
        help="trec_eval measure, repeatable: a name (map, recip_rank, ndcg), a name with "
        "cutoffs (P.5,10; ndcg_cut.10) or gains (ndcg.1=1,2=3; G.1=2,2=4) or a nickname "
        "(official, the default; all_trec)",
    )
    add_compat_argument(te)
    te.add_argument("qrels", help="TREC qrels file")
    te.add_argument("runs", nargs="+", metavar="run", help="TREC run files, one block each")
    te.set_defaults(handler=run_trec_eval)
