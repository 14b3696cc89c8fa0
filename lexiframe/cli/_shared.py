"""What the subcommands that evaluate TREC files share: their input options, how measure
names split into metrics and preferences, and how warnings reach the terminal."""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from lexiframe.errors import (
    InputError,
    LexiframeError,
    LexiframeWarning,
    UnknownMeasureError,
    cli_text,
)
from lexiframe.options import COMPATS, LABELS, PositionsOptions


def add_track_arguments(parser: argparse.ArgumentParser) -> None:
    """The run files, the qrels and the options that shape the rankings and measures."""
    parser.add_argument("runs", nargs="+", help="TREC run files (plain or .gz), folders or parquet")
    parser.add_argument("--qrels", required=True, help="TREC qrels file (or parquet)")
    parser.add_argument(
        "--depth", type=int, help="evaluate the top DEPTH documents of each ranking"
    )
    parser.add_argument(
        "--threshold",
        type=grade,
        default=PositionsOptions.threshold,
        help=f"lowest relevant grade ({PositionsOptions.threshold}); every positive grade "
        "still gains in nDCG, G, RBP, ERR, as with trec_eval -l",
    )
    parser.add_argument("--n", type=int, help="corpus size, for TSE/SL3/RecallError imputation")
    parser.add_argument(
        "--system-from",
        choices=["field", "filename"],
        default="field",
        help="system id from the run's sixth field (default) or the file name",
    )
    parser.add_argument(
        "--measures-from",
        action="append",
        metavar="FILE",
        default=[],
        help="a Python file that defines measures with lexiframe.define_measure; their names "
        "then work with -m (repeatable)",
    )
    parser.add_argument(
        "--ties",
        choices=("trec_eval", "rank", "expected"),
        default=PositionsOptions.ties,
        help="how documents of equal score are ordered: trec_eval (by document id "
        "descending), rank (by the run's rank field) or expected (each measure is its "
        "expectation over every ordering of them; docs/definitions.md, Ties)",
    )
    parser.add_argument(
        "--condensed",
        action="store_true",
        help="rank only the judged documents (condensed rankings, as trec_eval -J): the "
        "unjudged ones leave each ranking after --depth and the rest move up",
    )


def grade(text: str) -> int | float:
    """A grade as typed: a whole number, or a real one (for --labels gain/probability).

    Example:
        >>> grade("2"), grade("0.5")
        (2, 0.5)
    """
    try:
        return int(text)
    except ValueError:
        return float(text)


LABELS_DEST = "label_kind"
"""Where ``--labels`` of :func:`add_labels_argument` is held in the parsed arguments."""


def add_labels_argument(parser: argparse.ArgumentParser) -> None:
    """``--labels``: what the qrels' grades are (:attr:`PositionsOptions.labels`)."""
    parser.add_argument(
        "--labels",
        dest=LABELS_DEST,  # compare-qrels' --labels names a file
        metavar="LABELS",
        choices=LABELS,
        default=PositionsOptions.labels,
        help="what the qrels' relevance column holds: whole-number grades (the default), "
        "real gains ('gain': nDCG, DCG, G, RBP, ERR take them as gains; --threshold 0.5 "
        "decides what is relevant) or probabilities of relevance ('probability': P@k, "
        "Success@k, RR, RBP, ERR and DCG give their expected values; the other measures are "
        "refused)",
    )


COMPAT_FLAGS = {"10.0": "trec_eval-10.0", "9.0.8": "trec_eval-9.0.8"}
"""The short spellings ``--compat`` takes for the trec_eval versions."""


def add_compat_argument(parser: argparse.ArgumentParser) -> None:
    """``--compat``: whose numbers to give (:class:`lexiframe.options.Compat`)."""
    parser.add_argument(
        "--compat",
        type=lambda text: COMPAT_FLAGS.get(text, text),
        choices=tuple(COMPATS),
        default=PositionsOptions.compat,
        metavar="TOOL",
        help=f"give the numbers of another tool: {', '.join(COMPAT_FLAGS)} (trec_eval "
        "versions; 10.0 is the default) or pytrec_eval (docs/reproducing.md)",
    )


TREC_EVAL_FLAGS = {
    "-l": "--threshold",
    "-M": "--depth",
    "-N": "--n",
    "-J": "--condensed",
    "-c": "--no-relevant keep",
    "-q": "-q",
}
"""trec_eval's flags and the flags of :func:`add_track_arguments` that do the same, for a
user who types the one they know."""


def trec_eval_habit(extra: Sequence[str], argv: Sequence[str]) -> str:
    """A hint for a trec_eval flag among the unknown arguments ``extra`` of the command
    line ``argv`` (its value read there: argparse takes ``2`` of ``-l 2`` for a run), or
    ``""``.

    Example:
        >>> trec_eval_habit(["-l"], ["--qrels", "q.txt", "-l", "2", "runs/"])
        " (trec_eval's -l is --threshold here: --threshold 2)"
    """
    for item in extra:
        flag = item.partition("=")[0][:2]
        ours = TREC_EVAL_FLAGS.get(flag) if item.startswith("-") else None
        if ours is None or ours == flag:
            continue
        value = item[2:].lstrip("=")
        following = list(argv[list(argv).index(item) + 1 :]) if item in argv else []
        if not value and following and not following[0].startswith("-"):
            value = following[0]
        takes_value = ours in ("--threshold", "--depth", "--n")
        example = f"{ours} {value}" if takes_value and value else ours
        return f" (trec_eval's {flag} is {ours} here: {example})"
    return ""


def check_track_arguments(args: argparse.Namespace) -> None:
    """Refuse bad values of the integer flags before any work, naming the flag."""
    from lexiframe.validate import POSITION_MAX, require_positive_int, require_threshold

    whole = getattr(args, LABELS_DEST, PositionsOptions.labels) == PositionsOptions.labels
    require_threshold(args.threshold, warn=False, name="--threshold", whole=whole)
    if args.depth is not None:
        require_positive_int(args.depth, "--depth", maximum=POSITION_MAX)
    if args.n is not None:
        require_positive_int(args.n, "--n")
    if getattr(args, "seed", None) is not None:
        require_positive_int(args.seed, "--seed", zero=True)


def track_options(args: argparse.Namespace, metric_names: Sequence[str]) -> PositionsOptions:
    """The positions options of :func:`add_track_arguments` (and ``--no-relevant`` where the
    subcommand has it), with the columns the metrics declare they read (the judged
    non-relevant documents of Bpref and infAP, the grades of AP(rel=2))."""
    from lexiframe.metrics import parse_measures

    options = PositionsOptions(
        depth=args.depth,
        threshold=args.threshold,
        condensed=args.condensed,
        ties=args.ties,
        no_relevant=getattr(args, "no_relevant", PositionsOptions.no_relevant),
        compat=getattr(args, "compat", PositionsOptions.compat),
        labels=getattr(args, LABELS_DEST, PositionsOptions.labels),
    )
    return options.for_measures(parse_measures(metric_names)) if metric_names else options


def load_measure_files(paths: Sequence[str]) -> None:
    """Run each ``--measures-from`` file, which registers its measures
    (:func:`lexiframe.define_measure`); a missing file or one that fails is an error that
    names the flag and the file."""
    import runpy

    for path in paths:
        if not Path(path).is_file():
            raise InputError(f"--measures-from: no file {path!r}")
        try:
            # Run as a script, not imported: Spark pickles its functions by value.
            runpy.run_path(path, run_name="lexiframe_measures")
        except LexiframeError as error:
            raise InputError(f"--measures-from {path}: {error}") from None
        except SystemExit as error:  # a measures file defines measures, it does not end runs
            raise InputError(
                f"--measures-from {path}{_user_line(error, path)}: the file called "
                f"sys.exit({'' if error.code is None else error.code}); a measures file "
                "defines measures (lexiframe.define_measure) and returns"
            ) from None
        except Exception as error:  # the user's code: report it in one line
            where = _user_line(error, path)
            raise InputError(
                f"--measures-from {path}{where}: {type(error).__name__}: {error}"
            ) from None


def _user_line(error: BaseException, path: str) -> str:
    """`` line N``: where in the user's file ``error`` was raised (or nothing)."""
    if isinstance(error, SyntaxError) and error.lineno:
        return f" line {error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    lines = [frame.lineno for frame in frames if frame.filename == path]
    return f" line {lines[-1]}" if lines else ""


def split_measures(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split measure names into per-ranking metrics and preferences between rankings.

    Unknown names raise the registry's error, which lists both kinds.
    """
    from lexiframe.metrics import parse_measure
    from lexiframe.preferences import preference_measure

    metrics, prefs = [], []
    for name in names:
        try:
            prefs.append(preference_measure(name).name)
        except UnknownMeasureError:
            metrics.append(str(parse_measure(name)))
    return list(dict.fromkeys(metrics)), list(dict.fromkeys(prefs))


def metric_ordering(name: str, compute: Callable[[], pl.DataFrame]) -> pl.DataFrame | None:
    """The ordering by metric ``name`` that ``compute`` returns, its warnings printed as
    notes; or None, with a note that says why there is none (e.g. every value is null
    without --n): one measure without an ordering leaves the others'."""
    try:
        with warnings_as_notes():  # systems without a value rank last: said as a note
            return compute()
    except InputError as error:
        print(f"note: no ordering by {name}: {cli_text(error)}", file=sys.stderr)
        return None


@contextmanager
def warnings_as_notes() -> Iterator[None]:
    """lexiframe's warnings raised inside the block, printed as ``note:`` lines on stderr
    when it ends (a command speaks to its user, not through Python's warning machinery)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LexiframeWarning)
        yield
    for warning in caught:
        print(f"note: {cli_text(warning.message)}", file=sys.stderr)


def markdown_table(frame: pl.DataFrame) -> str:
    """``frame`` as a Markdown table; pipes in its text escaped (a run tag may hold one)."""
    frame = frame.with_columns(pl.col(pl.String).str.replace_all("|", "\\|", literal=True))
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        float_precision=4,
        tbl_hide_column_data_types=True,
        tbl_formatting="ASCII_MARKDOWN",
        fmt_str_lengths=40,
    ):
        return str(frame)
