"""``lexiframe compare-qrels``: what changes when the same runs are judged by other qrels.

The runs are evaluated against every ``--qrels NAME=FILE`` (human and LLM labels, say) in
one evaluation (:func:`lexiframe.concat_qrels`, ``by="qrels"``), and
:func:`lexiframe.stats.qrels_agreement` compares them: the agreement of the system
orderings (Kendall's τ, τ_AP, top-k overlap), of the significance decisions, the bias per
system with its hole size, and κ and α on the shared judgments. Printed as Markdown
tables; ``--output``, ``--systems`` and ``--labels`` write the three tables.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import polars as pl

from lexiframe._utils import markdown_cell
from lexiframe.cli._shared import (
    add_track_arguments,
    check_track_arguments,
    split_measures,
    track_options,
    warnings_as_notes,
)
from lexiframe.cli.compare import require_seed
from lexiframe.cli.qrels_sets import add_qrels_argument, qrels_files
from lexiframe.errors import InputError
from lexiframe.io.qrels import QRELS_KEY

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10"]
SUMMARY_SHOWN = [
    "qrels_a", "qrels_b", "measure", "n_systems", "tau", "tau_ap", "top_k_overlap",
    "n_significant_a", "n_significant_b", "n_a_only", "n_b_only", "false_positive_rate",
    "mean_bias", "hole_spearman", "test",
]  # fmt: skip
SYSTEMS_SHOWN = ["qrels_b", "measure", "system", "mean_difference", "rank_shift", "hole"]


def markdown(frame: pl.DataFrame, digits: int = 4) -> str:
    """A table in Markdown, numbers to ``digits`` decimals and null cells empty.

    >>> print(markdown(pl.DataFrame({"measure": ["AP"], "tau": [0.71428]}), digits=2))
    | measure | tau |
    |---|---|
    | AP | 0.71 |
    """
    # + 0.0 turns the -0.0 of a rounded small negative number into 0.0
    rounded = frame.with_columns(pl.col(pl.Float32, pl.Float64).round(digits) + 0.0)
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
    for row in rounded.iter_rows():
        cells = ("" if cell is None else markdown_cell(str(cell)) for cell in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_compare_qrels(args: argparse.Namespace) -> int:
    """The ``compare-qrels`` subcommand: evaluate per qrels, compare, print and write."""
    from lexiframe import io
    from lexiframe.evaluation import measures_for
    from lexiframe.io.files import find_files
    from lexiframe.preferences import preferences
    from lexiframe.ranking import positions
    from lexiframe.stats import qrels_agreement
    from lexiframe.stats._common import check_fraction

    files = qrels_files(args.qrels)
    if len(files) < 2:
        raise InputError(
            "compare-qrels needs two or more --qrels, e.g. --qrels human=qrels.txt "
            "--qrels llm=llm-qrels.txt"
        )
    if args.reference is not None and args.reference not in files:
        raise InputError(
            f"--reference {args.reference!r} names none of the --qrels: "
            f"{', '.join(files)}; e.g. --reference {next(iter(files))}"
        )
    check_fraction(args.alpha, "--alpha")
    require_seed(args)  # refused before the evaluation
    metric_names, preference_names = split_measures(args.measure or DEFAULT_MEASURES)
    check_track_arguments(args)
    inputs = find_files(args.runs, "run") + find_files(list(files.values()), "qrels")
    outputs = {
        "summary": args.output,
        "systems": args.systems,
        "labels": args.labels,
    }
    with io.Outputs(inputs=inputs) as written:
        for what, target in outputs.items():
            if target:
                written.add(Path(target), f"the {what} table")  # checked before any work
        run = io.read_run(args.runs, system_from=args.system_from)
        # Every run against every qrels in one evaluation, each set named in "qrels".
        judgments = io.concat_qrels(files)
        options = track_options(args, metric_names).replace(by=QRELS_KEY)
        per_query = []
        with warnings_as_notes():
            frame = positions(run, judgments, options)
            if metric_names:
                per_query.append(measures_for(frame, metric_names, options, args.n))
        if preference_names:
            per_query.append(preferences(frame, preference_names, by=QRELS_KEY))
        # The qrels in the order given: the first of each pair is the one given first.
        given = pl.col(QRELS_KEY).replace_strict(list(files), range(len(files)))
        per_query = [table.sort(given, maintain_order=True) for table in per_query]
        with warnings_as_notes():
            report = qrels_agreement(
                per_query, [*metric_names, *preference_names], reference=args.reference,
                method=args.order, k=args.k, test=args.test, correction=args.correction,
                alpha=args.alpha, run=run, judgments=judgments, top_docs=args.top_docs,
                seed=args.seed,
            )  # fmt: skip
        tables = {"summary": report.summary, "systems": report.systems, "labels": report.labels}
        for what, target in outputs.items():
            table = tables[what]
            if target and table is not None:
                written.write(
                    Path(target), partial(io.write_frame_as, table, suffix=Path(target).suffix)
                )
        written.commit()
    print(
        f"Agreement of the orderings ({args.order}), of the significance decisions "
        f"({report.summary['correction'][0]} correction, alpha {args.alpha:g}) and the bias "
        "(b − a):"
    )
    print(markdown(report.summary.select(SUMMARY_SHOWN)))
    print(f"\nBias per system (hole: the share of its top {args.top_docs} the first qrels left "
          "unjudged; rank shift > 0: b ranks it higher):")  # fmt: skip
    print(markdown(report.systems.select(SYSTEMS_SHOWN)))
    if report.labels is not None:
        print("\nLabel agreement on the shared judgments:")
        print(markdown(report.labels))
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``lexiframe compare-qrels`` on the command's subparsers."""
    from lexiframe.aggregate import METHODS
    from lexiframe.stats.corrections import CORRECTIONS
    from lexiframe.stats.significance import TESTS

    cq = commands.add_parser(
        "compare-qrels",
        help="compare qrels (human and LLM labels) on the same runs",
        description="Evaluate the runs against each --qrels NAME=FILE and compare: Kendall's "
        "tau, tau_AP and top-k overlap of the system orderings; the pairs of systems "
        "significant under each qrels, both, one only (false positives and negatives with "
        "respect to the first of each pair, or --reference); the bias per system (mean "
        "difference, rank shift) and its correlation with the hole size (the share of the "
        "system's top documents the reference left unjudged); Cohen's kappa and "
        "Krippendorff's alpha on the documents both judge.",
        conflict_handler="resolve",  # --qrels is repeated here: NAME=FILE
    )
    add_track_arguments(cq)
    add_qrels_argument(
        cq,
        "a qrels and its name, repeated: --qrels human=qrels.txt --qrels llm=llm.txt "
        "(a bare FILE is named by its stem)",
    )
    cq.add_argument(
        "--measure",
        "-m",
        action="append",
        help=f"measure, repeatable (default: {' '.join(DEFAULT_MEASURES)}); preferences "
        "(sgnLP, rrLP, sgnLR) too",
    )
    cq.add_argument(
        "--reference", help="compare this qrels with each other one (default: every pair)"
    )
    cq.add_argument(
        "--order", choices=METHODS, default="mean", help="how a measure orders the systems (mean)"
    )
    cq.add_argument("--k", type=int, default=10, help="the top-k of the ordering overlap (10)")
    cq.add_argument(
        "--top-docs", type=int, default=10, help="the top documents of the hole size (10)"
    )
    cq.add_argument(
        "--test",
        choices=[test for test in TESTS if test not in ("hsd", "randomized_hsd")],
        default="auto",
        help="the test of each pair of systems (auto: paired t for metrics, sign for sgnLP "
        "and sgnLR, t for rrLP; fisher and bootstrap need --seed)",
    )
    cq.add_argument("--correction", choices=CORRECTIONS, default="holm", help="(default holm)")
    cq.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    cq.add_argument("--seed", type=int, help="seed of the fisher and bootstrap tests")
    cq.add_argument("--output", "-o", help="write the summary table (.parquet, .csv, .jsonl)")
    cq.add_argument("--systems", help="write the per-system bias table")
    cq.add_argument("--labels", help="write the label agreement table")
    cq.set_defaults(handler=run_compare_qrels)
