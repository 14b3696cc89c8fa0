"""What the subcommands that evaluate TREC files share: their input options, how measure
names split into metrics and preferences, and how warnings reach the terminal."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from lexiframe.errors import LexiframeWarning, UnknownMeasureError


def add_track_arguments(parser: argparse.ArgumentParser) -> None:
    """The run files, the qrels and the options that shape the rankings and measures."""
    parser.add_argument("runs", nargs="+", help="TREC run files (plain or .gz), folders or parquet")
    parser.add_argument("--qrels", required=True, help="TREC qrels file (or parquet)")
    parser.add_argument(
        "--depth", type=int, help="evaluate the top DEPTH documents of each ranking"
    )
    parser.add_argument("--threshold", type=int, default=1, help="lowest relevant grade (1)")
    parser.add_argument("--n", type=int, help="corpus size, for TSE/SL3/RecallError imputation")
    parser.add_argument(
        "--system-from",
        choices=["field", "filename"],
        default="field",
        help="system id from the run's sixth field (default) or the file name",
    )
    parser.add_argument(
        "--condensed",
        action="store_true",
        help="rank only the judged documents (condensed rankings, as trec_eval -J): the "
        "unjudged ones leave each ranking after --depth and the rest move up",
    )


def check_track_arguments(args: argparse.Namespace) -> None:
    """Refuse bad values of the integer flags before any work, naming the flag."""
    from lexiframe.validate import POSITION_MAX, require_positive_int

    if args.depth is not None:
        require_positive_int(args.depth, "--depth", maximum=POSITION_MAX)
    if args.n is not None:
        require_positive_int(args.n, "--n")
    if getattr(args, "seed", None) is not None:
        require_positive_int(args.seed, "--seed", zero=True)


def track_options(args: argparse.Namespace, metric_names: Sequence[str]) -> dict[str, object]:
    """The positions options of :func:`add_track_arguments`, with the columns the metrics
    read (the judged non-relevant documents of Bpref and infAP, the grades of AP(rel=2))."""
    from lexiframe.evaluation import request_columns
    from lexiframe.metrics import parse_measures

    options: dict[str, object] = {
        "depth": args.depth,
        "threshold": args.threshold,
        "condensed": args.condensed,
    }
    if metric_names:
        request_columns(parse_measures(metric_names), options)
    return options


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


@contextmanager
def warnings_as_notes() -> Iterator[None]:
    """lexiframe's warnings raised inside the block, printed as ``note:`` lines on stderr
    when it ends (a command speaks to its user, not through Python's warning machinery)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LexiframeWarning)
        yield
    for warning in caught:
        print(f"note: {warning.message}", file=sys.stderr)
