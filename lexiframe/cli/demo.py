"""``lexiframe demo``: the evaluation of the bundled synthetic track, printed, or the
track written as files (``--write``)."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import polars as pl

from lexiframe._utils import plural
from lexiframe.aggregate import summarize_preferences
from lexiframe.cli._orderings import orderings_of, side_by_side
from lexiframe.cli._shared import markdown_table
from lexiframe.errors import LexiframeWarning, OutputError
from lexiframe.evaluation import measures, summarize
from lexiframe.preferences import preferences
from lexiframe.ranking import coverage, positions

DEMO_MEASURES = ["RR", "AP", "nDCG@10", "TSE", "ASL"]


def run_demo(args: argparse.Namespace) -> int:
    from lexiframe import datasets  # the other commands never load it (start-up time)

    if args.write is not None:
        existing = [path for path in datasets.demo_files(args.write).paths if path.exists()]
        if existing:
            more = f" (and {plural(len(existing) - 1, 'more')})" if len(existing) > 1 else ""
            raise OutputError(
                f"demo --write {args.write}: {str(existing[0])!r} exists{more}, and the demo "
                "track would replace it; choose a new folder, e.g. --write demo-track",
                kind="exists",
                argument="--write",
            )
        files = datasets.write_demo(args.write)
        folder = Path(args.write)
        print(
            f"wrote the demo track into {str(folder)!r}: runs/ ({len(files.runs)} TREC run "
            "files), qrels.txt, run.parquet, qrels.parquet\n"
            f"try: lexiframe evaluate --qrels {folder / 'qrels.txt'} -m AP -m sgnLP "
            f"{folder / 'runs'}/"
        )
        return 0
    track = datasets.demo_track()
    print(
        "lexiframe demo: a SYNTHETIC TREC-style track made by lexiframe.datasets.demo_track()\n"
        f"({track.run['system'].n_unique()} systems, {track.qrels['query'].n_unique()} judged "
        f"queries, {track.run.height} run rows). No real runs are used.\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        frame = positions(track.run, track.qrels)
    print("Coverage (queries per system):")
    print(markdown_table(coverage(track.run, track.qrels)))
    per_query = measures(frame, DEMO_MEASURES)
    print("\nMean per system over the evaluated queries (ASL: lower is better):")
    print(markdown_table(summarize(per_query).sort("RR", descending=True)))
    print(
        "(TSE is 0 on a query where a relevant document was not retrieved, as the corpus size "
        "was not given: with --n, lexiframe evaluate places those documents at the bottom of "
        "the corpus)"
    )

    prefs = preferences(frame, ["sgnLP", "sgnLR"])
    pair_summary = summarize_preferences(prefs)
    orderings = orderings_of(per_query, pair_summary, ["RR", "AP"], ["sgnLP", "sgnLR"], "mc4")
    print("\nSystem orderings: MC4 over the per-query lexicographic preferences, next to the")
    print("mean RR and AP (rank 1 is best):")
    print(markdown_table(side_by_side(orderings)))

    breaks = rr_ties_broken(per_query, prefs)
    pairs, rr_ties, broken = breaks.row(0)
    print(
        f"\nRanking pairs (same query, two systems): {pairs}. Tied by RR: {rr_ties} "
        f"({rr_ties / max(pairs, 1):.1%}); sgnLP breaks {broken} of them "
        f"({broken / max(rr_ties, 1):.1%}); the other {rr_ties - broken} have identical "
        "positions vectors."
    )
    return 0


def rr_ties_broken(per_query: pl.DataFrame, prefs: pl.DataFrame) -> pl.DataFrame:
    """Ranking pairs, the ones RR ties, and how many of those sgnLP decides.

    ``per_query`` holds ``RR`` per (system, query); ``prefs`` holds ``sgnLP`` per (query,
    system_a, system_b). Lexiprecision paper §2, §3.3: sgnLP agrees with RR wherever RR
    differs, and decides every RR tie between different positions vectors.

    Example:
        >>> import polars as pl
        >>> rr = pl.DataFrame({"system": ["a", "b", "c"], "query": ["1"] * 3,
        ...                    "RR": [1.0, 1.0, 0.5]})
        >>> prefs = pl.DataFrame({"query": ["1"] * 3, "system_a": ["a", "a", "b"],
        ...                       "system_b": ["b", "c", "c"], "sgnLP": [1, 1, 1]})
        >>> rr_ties_broken(rr, prefs).row(0)
        (3, 1, 1)
    """
    from lexiframe.stats import metric_pairs  # the other commands never load it (start-up)

    rr_differences = metric_pairs(per_query, ["RR"])
    joined = prefs.join(rr_differences, on=["query", "system_a", "system_b"])
    tied = pl.col("RR") == 0
    return joined.select(
        pairs=pl.len(),
        rr_ties=tied.sum(),
        broken=(tied & (pl.col("sgnLP") != 0)).sum(),
    )
