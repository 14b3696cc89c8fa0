"""The ``lexiframe`` command: ``demo`` on bundled synthetic data, ``evaluate`` on TREC files.

One module per subcommand joins this package as the command grows.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import difflib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import NoReturn, get_args

import polars as pl

import lexiframe_command
from lexiframe import __version__, io
from lexiframe._batched import positions_of_files
from lexiframe._utils import plural, quote_names
from lexiframe.aggregate import METHODS, summarize_preferences
from lexiframe.cli import _spark as spark_options
from lexiframe.cli import compare, compare_qrels, trec_eval, trec_eval_output
from lexiframe.cli._orderings import long_orderings, orderings_of, side_by_side
from lexiframe.cli._shared import (
    add_compat_argument,
    add_labels_argument,
    add_track_arguments,
    check_track_arguments,
    load_measure_files,
    markdown_table,
    split_measures,
    track_options,
    trec_eval_habit,
    warnings_as_notes,
)
from lexiframe.cli.demo import run_demo
from lexiframe.cli.qrels_sets import add_qrels_argument, qrels_paths, qrels_sets, read_qrels_sets
from lexiframe.errors import InputError, LexiframeError
from lexiframe.evaluation import measures_for, summarize
from lexiframe.metrics import deepest_rank_read, parse_measures
from lexiframe.options import PositionsOptions
from lexiframe.preferences import preferences
from lexiframe.typing import NoRelevant

DEFAULT_MEASURES = ["RR", "AP", "nDCG@10", "P@10", "R@1000", "RP"]
PAIRS_SHOWN = 30


def _targets(path: str | None, kinds: list[str]) -> dict[str, Path]:
    """Where each table goes: ``path`` itself for one kind, ``<stem>-<kind><ext>`` for several.

    Raises before any computation when the extension cannot be written.
    """
    if path is None or not kinds:
        return {}
    io.check_writable(path)  # the user's text: Path drops the slash of "out/"
    target = Path(path)
    if len(kinds) == 1:
        return {kinds[0]: target}
    return {kind: target.with_name(f"{target.stem}-{kind}{target.suffix}") for kind in kinds}


def input_paths(args: argparse.Namespace) -> list[Path]:
    """The files a command reads (its runs and qrels), which no output may replace, and
    the folders it reads whole, into which no output may go."""
    from lexiframe.io.files import find_files

    paths: list[Path] = []
    for value, table in ((args.runs, "run"), (qrels_paths(args.qrels), "qrels")):
        named = [item for item in value if item != "-"]
        if named:
            paths.extend(find_files(named, table))
            paths.extend(Path(item) for item in named if os.path.isdir(item))
    return paths


def _evaluate(
    args: argparse.Namespace,
    metric_names: list[str],
    preference_names: list[str],
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """The per-query tables, their summaries and the orderings, in this process (against
    every qrels set of ``--qrels NAME=FILE`` at once, its name in the ``qrels`` column)."""
    qrels, by = read_qrels_sets(args.qrels, labels=args.label_kind)
    options = track_options(args, metric_names).replace(by=by)
    # Preferences read every rank; metrics alone, as deep as their cut-offs.
    alone = metric_names and not preference_names
    reach = deepest_rank_read(parse_measures(metric_names)) if alone else None
    with warnings_as_notes():
        # A batch of run files at a time: memory holds one batch of rows, not the run.
        frame = positions_of_files(
            args.runs, qrels, options, system_from=args.system_from, reach=reach
        )

    tables: dict[str, pl.DataFrame] = {}
    summary: dict[str, pl.DataFrame] = {}
    per_query = prefs = None
    if metric_names:
        with warnings_as_notes():
            per_query = measures_for(frame, metric_names, options, args.n)
            per_query = per_query.sort(*by, "system", "query")
        tables["metrics"] = per_query
        summary["metrics"] = summarize(per_query, by=list(by))
    if preference_names:
        prefs = preferences(frame, preference_names, by=by)
        tables["preferences"] = prefs
        summary["preferences"] = summarize_preferences(prefs, by=by)
    pair_summary = summary.get("preferences")  # one summary for the table and the orderings
    orderings = orderings_of(
        per_query, pair_summary, metric_names, preference_names, args.order, by
    )
    return tables, summary, orderings


def run_evaluate(args: argparse.Namespace) -> int:
    spark_options.check_arguments(args)
    metric_names, preference_names = split_measures(args.measure or DEFAULT_MEASURES)
    check_track_arguments(args)
    if args.per_query and not metric_names and not (args.output or args.summary or args.orderings):
        raise InputError(
            f"-q prints the metrics of each query, and {quote_names(preference_names)} "
            f"{'compares' if len(preference_names) == 1 else 'compare'} two rankings: write "
            "the per-query preferences with -o FILE (or drop -q for the tables)"
        )
    if args.per_query and qrels_sets(args.qrels) is not None:
        raise InputError(
            "-q prints trec_eval's format for one qrels; with --qrels NAME=FILE write the "
            "per-query table, with its qrels column, with -o FILE (or give one --qrels FILE)"
        )
    kinds = (["metrics"] if metric_names else []) + (["preferences"] if preference_names else [])
    if args.spark:  # Spark reads the inputs and writes the files (targets may be URIs)
        try:
            import pyspark  # noqa: F401
        except ImportError:
            raise InputError(
                "--spark needs PySpark: pip install 'lexiframe[spark]' (and Java 17 or newer)"
            ) from None
        from lexiframe.spark.cli import run_on_spark

        tables, summary, orderings, written = run_on_spark(args, metric_names, preference_names)
    else:
        plan: list[tuple[str, str, Path]] = []  # (what, the table it holds, where)
        for kind, target in _targets(args.output, kinds).items():
            plan.append((f"per-query {kind}", kind, target))
        for kind, target in _targets(args.summary, kinds).items():
            plan.append((f"{kind} summary", f"summary {kind}", target))
        for target in _targets(args.orderings, ["orderings"]).values():
            plan.append(("orderings", "orderings", target))
        with io.Outputs(inputs=input_paths(args)) as files:
            for what, _, target in plan:  # checked now, before any work
                files.add(target, what)
            tables, summary, orderings = _evaluate(args, metric_names, preference_names)
            for _, kind, target in plan:
                if kind == "orderings":
                    table = long_orderings(orderings)
                elif kind.startswith("summary "):
                    table = summary[kind.removeprefix("summary ")]
                else:
                    table = tables[kind]
                files.write(target, partial(io.write_frame_as, table, suffix=target.suffix))
            files.commit()
        written = [(what, target) for what, _, target in plan]

    if args.per_query:
        if "metrics" in tables:
            sys.stdout.write(trec_eval_output.per_query_lines(tables["metrics"], metric_names))
        for what, target in written:
            print(f"{what} written to {target}", file=sys.stderr)
        return 0
    if "metrics" in summary:
        print("Mean per system over the evaluated queries:")
        print(markdown_table(summary["metrics"]))
    if "preferences" in summary:
        pair_summary = summary["preferences"]
        keys = pair_summary.columns[: pair_summary.columns.index("system_a")]  # by…: qrels
        shown = pair_summary.select(*keys, "system_a", "system_b", "n_queries", *preference_names)
        print(
            f"\nMean preference per pair of systems (positive: system_a preferred; "
            f"{plural(pair_summary.height, 'pair')}):"
        )
        print(markdown_table(shown.head(PAIRS_SHOWN)))
        if pair_summary.height > PAIRS_SHOWN:
            more = plural(pair_summary.height - PAIRS_SHOWN, "more pair")
            print(f"… {more} (write them with --summary)")
    print("\nSystem orderings (rank 1 is best):")
    print(markdown_table(side_by_side(orderings)))
    if {"sgnLP", "rrLP"} <= set(preference_names) and args.order != "mean":
        print(
            f"(rrLP's {args.order} ordering is sgnLP's: {args.order} reads only which system "
            "each query prefers, and rrLP has sgnLP's sign; --order mean reads its values)"
        )
    for what, target in written:
        print(f"{what} written to {target}", file=sys.stderr)
    return 0


WITHOUT_ANALYSES = ("demo", "evaluate", "trec_eval", "measures")
"""The subcommands that need neither ``compare`` nor ``compare-qrels``, whose parsers load
the analyses (:mod:`lexiframe.stats`, for their choices)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``lexiframe`` command's parser. ``command``: the subcommand the command line
    names, if known; one of :data:`WITHOUT_ANALYSES` gets a parser without ``compare`` and
    ``compare-qrels`` (start-up time: the trec_eval drop-in is a whole process per call).

    Example:
        >>> sorted(build_parser("trec_eval").parse_args(["trec_eval", "q", "r"]).runs)
        ['r']
    """
    parser = argparse.ArgumentParser(
        prog="lexiframe",
        description="Evaluate rankings: lexicographic preferences, atomized search length, "
        "total search efficiency and the classic IR metrics.",
    )
    parser.add_argument("--version", action="version", version=f"lexiframe {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="evaluate the bundled synthetic track and print a summary"
    )
    demo.add_argument(
        "--write",
        metavar="DIR",
        help="write the demo track into DIR instead (runs/sys000.txt …, qrels.txt, "
        "run.parquet, qrels.parquet; DIR is made if missing, and no file in it is replaced) "
        "and evaluate nothing",
    )
    demo.set_defaults(handler=run_demo)
    ev = commands.add_parser(
        "evaluate",
        help="evaluate TREC run files against qrels: metrics and preferences",
        description="Per-query measures of TREC runs (metrics such as RR, AP, nDCG@10, and "
        "preferences between every pair of systems: sgnLP, rrLP, sgnLR); prints the "
        "per-system means, the per-pair mean preferences and an ordering of the systems per "
        "measure. With both kinds of measure, each file option writes two files, "
        "<stem>-metrics<ext> and <stem>-preferences<ext>.",
        conflict_handler="resolve",  # --qrels is repeated here: FILE, or NAME=FILE
    )
    add_track_arguments(ev)
    add_qrels_argument(
        ev,
        "TREC qrels file (or parquet); or NAME=FILE, repeated, to evaluate every run against "
        "every qrels at once (--qrels human=qrels.txt --qrels llm=llm.txt): the tables then "
        "have a qrels column naming each",
        metavar="[NAME=]FILE",
    )
    add_compat_argument(ev)
    add_labels_argument(ev)
    ev.add_argument(
        "--measure",
        "--metric",
        "-m",
        action="append",
        help=f"measure name, repeatable (default: {' '.join(DEFAULT_MEASURES)}); metrics such "
        "as RR, AP, nDCG@10, 'nDCG(gains={1: 1, 2: 3})', ERR@10, P@10, R@1000, RP, "
        "'RBP(p=0.8)', TSE, \"TSE(exposure='ap')\", SL3, ASL, ASL@g1-10; preferences sgnLP, "
        "rrLP, sgnLR (all of them: lexiframe measures)",
    )
    ev.add_argument(
        "--output",
        "-o",
        help="write the per-query table: metrics per (system, query), preferences per (query, "
        "system_a, system_b) (.parquet, .csv, .jsonl)",
    )
    ev.add_argument("--summary", help="write the per-system means and per-pair mean preferences")
    ev.add_argument(
        "--orderings", help="write every ordering as one table: ordering, system, rank, score"
    )
    ev.add_argument(
        "--order",
        choices=METHODS,
        default="mc4",
        help="how preferences order the systems (default mc4; metrics are ordered by mean)",
    )
    ev.add_argument(
        "-q",
        "--per-query",
        action="store_true",
        help="print the metrics of each query in trec_eval's format (measure, query, value; "
        "a block per system ending with its `all` means) instead of the tables; preferences "
        "and orderings are then only written to files",
    )
    ev.add_argument(
        "--no-relevant",
        choices=get_args(NoRelevant),
        default=PositionsOptions.no_relevant,
        help="judged queries without a relevant document: drop them (default; they cannot "
        "tell systems apart) or keep them, scoring 0 on trec_eval's measures, so that the "
        "means are trec_eval -c's",
    )
    spark_options.add_arguments(ev)
    ev.set_defaults(handler=run_evaluate)
    trec_eval.add_parser(commands)
    if command not in WITHOUT_ANALYSES:
        compare.add_parser(commands)
        compare_qrels.add_parser(commands)
    listing = commands.add_parser(
        "measures",
        help="list the measure names -m takes, one line each",
        description="The measures of lexiframe evaluate -m and lexiframe compare -m, with "
        "their examples and one line each (those of --measures-from files too); trec_eval's "
        "own names are listed in lexiframe trec_eval --help.",
    )
    listing.add_argument(
        "--measures-from",
        action="append",
        metavar="FILE",
        default=[],
        help="also list the measures a Python file defines with lexiframe.define_measure",
    )
    listing.set_defaults(handler=run_measures)
    return parser


def run_measures(args: argparse.Namespace) -> int:
    """Print each measure's name, an example spelling and its one-line summary."""
    from lexiframe.metrics import families
    from lexiframe.preferences import MEASURES

    rows = [
        (family.example or family.name, family.summary.split(". ")[0].rstrip(".") + ".")
        for family in families()
    ]
    rows += [(measure.name, f"Preference: {measure.description}.") for measure in MEASURES]
    width = max(len(example) for example, _ in rows)
    for example, summary in rows:
        print(f"{example:<{width}}  {summary}")
    return 0


@contextlib.contextmanager
def _stop_signals_raise() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM and SIGHUP
    :class:`lexiframe_command.Stopped` inside the block (the main thread only), each once
    per signal: with Python's own SIGINT handler, Polars raises KeyboardInterrupt twice
    for one Ctrl-C, the second in the cleanup. A signal that arrives while outputs are
    renamed or removed is delivered after. A signal the command was started ignoring
    (``nohup``, a background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = lexiframe_command.install(_stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def _stop(signum: int, frame: object) -> None:
    if io.outputs.defer_if_held(signum):  # outputs are being renamed or cleaned up
        return
    lexiframe_command.stop(signum, frame)


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; an unknown flag is reported by its command's parser (its
    usage, not the top level's), with the closest flag it has."""
    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    command = parser
    if args.command is not None:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        command = action.choices[args.command]
    flags = [flag for action in command._actions for flag in action.option_strings]
    unknown = next((item for item in extra if item.startswith("-")), extra[0])
    close = difflib.get_close_matches(unknown.split("=", 1)[0], flags, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    if "--threshold" in flags:  # a command of run files: trec_eval's flags are known
        hint = trec_eval_habit(extra, sys.argv[1:] if argv is None else argv) or hint
    command.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lexiframe`` command.

    Bare ``lexiframe`` prints the help. Errors print one line and exit with status 2;
    Ctrl-C prints one line and exits with status 130, SIGTERM 143 and SIGHUP 129 (128 + the
    signal). Outputs are all or nothing: every one is written to a temporary file beside
    it, and all are renamed when all are complete; a failure or a signal before that
    removes the temporary files and leaves the outputs as they were.
    """
    try:
        with _stop_signals_raise():
            words = sys.argv[1:] if argv is None else argv
            parser = build_parser(words[0] if words else None)
            args = _parse(parser, argv)
            if args.command is None:
                parser.print_help()
                return 0
            load_measure_files(getattr(args, "measures_from", []))
            code: int = args.handler(args)
            return code
    except KeyboardInterrupt as stopped:  # Ctrl-C, or Stopped by SIGTERM or SIGHUP
        line, status = lexiframe_command.stopped_line(stopped)
        print(line, file=sys.stderr)
        return status
    except BrokenPipeError:
        # The reader went away (``lexiframe trec_eval ... | head``): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except LexiframeError as error:
        print(f"lexiframe: error: {error.cli_message()}", file=sys.stderr)
        return 2
    except OSError as error:  # a file read, or the standard output (> /dev/full)
        print(f"lexiframe: error: {_failure(error)}", file=sys.stderr)
        return 2


def _failure(error: OSError) -> str:
    """An operating system's error in words: what could not be done and why.

    Example:
        >>> import errno
        >>> _failure(OSError(errno.ENOSPC, "No space left on device"))
        'cannot write the output: no space left on the device'
        >>> _failure(PermissionError(errno.EACCES, "Permission denied", "run.txt"))
        "cannot read 'run.txt': permission denied"
    """
    from lexiframe.io.files import reason_of, shown

    if error.filename is not None:
        return f"cannot read {shown(error.filename)}: {reason_of(error)}"
    return f"cannot write the output: {reason_of(error)}"


def run() -> NoReturn:
    """The ``lexiframe`` command as a process: :func:`main`, then exit at once.

    Every output is complete and closed when :func:`main` returns; what is left is the
    interpreter's teardown of its modules and of the frames still held, about a tenth of
    a second after a trec_eval-sized job that a user would wait for. So the standard
    streams are flushed and the functions registered with :mod:`atexit` run (a stream's
    temporary copy is removed, Spark's session stopped), and the process ends without the
    teardown.
    """
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away at the very end
        code = code or 1
    except OSError as error:  # the last of the output could not be written
        print(f"lexiframe: error: {_failure(error)}", file=sys.stderr)
        code = 2
    sys.stderr.flush()
    atexit._run_exitfuncs()  # the teardown that remains: what was registered to run at exit
    os._exit(code)


if __name__ == "__main__":
    run()
