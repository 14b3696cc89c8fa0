"""The ``lexiframe`` command: ``demo`` on bundled synthetic data, ``evaluate`` on TREC files."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

import polars as pl

from lexiframe import datasets, io
from lexiframe.errors import LexiframeError, LexiframeWarning
from lexiframe.evaluation import evaluate, measures, summarize
from lexiframe.ranking import coverage, positions

DEMO_MEASURES = ["RR", "AP", "nDCG@10", "TSE", "ASL"]
DEFAULT_MEASURES = ["RR", "AP", "nDCG@10", "P@10", "R@1000", "RP"]


def _table(frame: pl.DataFrame) -> str:
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


def tie_counts(frame: pl.DataFrame, metric: str) -> pl.DataFrame:
    """Ranking pairs (same query, two systems) tied by ``metric`` vs with identical positions.

    The pairs tied by the metric but with different position vectors are the ties that the
    lexicographic preferences break (lexiprecision paper §2, §3.3).

    Example:
        >>> import polars as pl
        >>> frame = pl.DataFrame({"query": ["1", "1", "1"], "RR": [1.0, 1.0, 0.5],
        ...                       "positions": [[1, 2], [1, 5], [2]]})
        >>> tie_counts(frame, "RR").row(0)
        (3, 1, 0)
    """

    def tied_pairs(*keys: str) -> int:
        sizes = frame.group_by(*keys).agg(pl.len().cast(pl.Int64).alias("size"))["size"]
        return int((sizes * (sizes - 1) // 2).sum())

    sizes = frame.group_by("query").agg(pl.len().cast(pl.Int64).alias("size"))["size"]
    return pl.DataFrame(
        {
            "pairs": [int((sizes * (sizes - 1) // 2).sum())],
            f"{metric}_ties": [tied_pairs("query", metric)],
            "identical_positions": [tied_pairs("query", "positions")],
        }
    )


def run_demo(args: argparse.Namespace) -> int:
    track = datasets.demo_track()
    print(
        "lexiframe demo: a SYNTHETIC TREC-style track made by lexiframe.datasets.demo_track()\n"
        f"({track.run['system'].n_unique()} systems, {track.qrels['query'].n_unique()} judged "
        f"queries, {track.run.height} run rows). No real runs are used.\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        frame = positions(track.run, track.qrels, grades=True)
    print("Coverage (queries per system):")
    print(_table(coverage(track.run, track.qrels)))
    per_query = measures(frame, DEMO_MEASURES)
    print("\nMean per system over the evaluated queries (ASL: lower is better):")
    print(_table(summarize(per_query).sort("RR", descending=True)))
    ties = tie_counts(per_query.join(frame, on=["system", "query"]), "RR")
    pairs, rr_ties, identical = ties.row(0)
    print(
        f"\nRanking pairs (same query, two systems): {pairs}. Tied by RR: {rr_ties} "
        f"({rr_ties / max(pairs, 1):.1%}); with identical positions vectors: {identical}. "
        f"The lexicographic preferences break the other {rr_ties - identical} RR ties."
    )
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    names = args.measure or DEFAULT_MEASURES
    qrels = io.read_qrels(args.qrels)
    run = io.read_run(args.runs, system_from=args.system_from)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LexiframeWarning)
        per_query = evaluate(
            run, qrels, names, n=args.n, depth=args.depth, threshold=args.threshold
        ).sort("system", "query")
    for warning in caught:
        print(f"note: {warning.message}", file=sys.stderr)
    if args.output:
        io.write_frame(per_query, args.output)
        print(f"per-query measures written to {args.output}", file=sys.stderr)
    print(_table(summarize(per_query)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lexiframe",
        description="Evaluate rankings: lexicographic preferences, atomized search length, "
        "total search efficiency and the classic IR metrics.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="evaluate the bundled synthetic track and print a summary"
    )
    demo.set_defaults(handler=run_demo)
    ev = commands.add_parser(
        "evaluate",
        help="evaluate TREC run files against qrels",
        description="Per-query measures of TREC runs; prints the per-system means.",
    )
    ev.add_argument("runs", nargs="+", help="TREC run files (plain or .gz), folders or parquet")
    ev.add_argument("--qrels", required=True, help="TREC qrels file (or parquet)")
    ev.add_argument(
        "--measure",
        "-m",
        action="append",
        help=f"measure name, repeatable (default: {' '.join(DEFAULT_MEASURES)}); e.g. RR, AP, "
        "nDCG@10, P@10, R@1000, RP, 'RBP(p=0.8)', TSE, \"TSE(exposure='ap')\", SL3, ASL, "
        "ASL@g1-10",
    )
    ev.add_argument("--output", "-o", help="write per-query measures (.parquet, .csv, .jsonl)")
    ev.add_argument("--depth", type=int, help="evaluate the top DEPTH documents of each ranking")
    ev.add_argument("--threshold", type=int, default=1, help="lowest relevant grade (1)")
    ev.add_argument("--n", type=int, help="corpus size, for TSE/SL3/RecallError imputation")
    ev.add_argument(
        "--system-from",
        choices=["field", "filename"],
        default="field",
        help="system id from the run's sixth field (default) or the file name",
    )
    ev.set_defaults(handler=run_evaluate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lexiframe`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (LexiframeError, OSError) as error:
        print(f"lexiframe: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
