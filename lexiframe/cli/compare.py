"""``lexiframe compare``: the significance report of runs, as a table to paste into a paper.

Two tables, in Markdown (the default) or LaTeX: the mean of each metric per system with
its t interval (``--ci``), in bold where it is the best of its column, marked with the
systems it is significantly better than (:func:`lexiframe.stats.report`),
and every pair's test per measure (:func:`lexiframe.stats.significance`: the mean
difference or preference, the statistic, the p-value, the p-value adjusted by the named
correction, the effect sizes d and ES_HSD, and with ``--test bootstrap`` the percentile
interval). Preferences (sgnLP, rrLP, sgnLR) appear in the pair table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from lexiframe._utils import markdown_cell
from lexiframe.cli._shared import (
    add_track_arguments,
    check_track_arguments,
    split_measures,
    track_options,
    warnings_as_notes,
)
from lexiframe.errors import InputError

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "RR"]
FORMATS = ("markdown", "latex")
TESTS = ("auto", "t", "sign", "wilcoxon", "hsd", "randomized_hsd", "fisher", "bootstrap")
RANDOM_TESTS = ("randomized_hsd", "fisher", "bootstrap")
FAMILY_TESTS = ("hsd", "randomized_hsd")  # they need metrics: every system on every query


def require_seed(args: argparse.Namespace) -> None:
    """Refuse a test that draws at random without ``--seed``, before any work."""
    if args.test in RANDOM_TESTS and args.seed is None:
        raise InputError(
            f"--test {args.test} draws at random and needs --seed, e.g. --seed 0, so that "
            "its p-values can be reproduced"
        )


def pair_tests(
    table: pl.DataFrame,
    names: list[str],
    *,
    test: str,
    correction: str,
    baseline: str | None = None,
    seed: int | None = None,
    n_replicates: int | None = None,
    blocking: bool = True,
    alpha: float | None = None,
    ci: float | None = None,
) -> pl.DataFrame:
    """Every pair's test for each measure of ``table`` (a metrics or a pair table), the
    p-values adjusted with ``correction`` within each measure (over the comparisons with
    ``baseline`` only, when given, as :func:`lexiframe.stats.report` does); with
    ``alpha``, the note when the replicates are too few for that level; with ``ci``, the
    interval of each mean difference (the bootstrap's percentile interval under
    ``--test bootstrap``, else Student's t interval, :func:`lexiframe.summarize`'s)."""
    from lexiframe.evaluation import summarize
    from lexiframe.intervals import DEFAULT_REPLICATES
    from lexiframe.stats import metric_pairs, significance
    from lexiframe.stats.corrections import adjust_p_values
    from lexiframe.stats.significance import warn_if_coarse

    parts = []
    replicates = DEFAULT_REPLICATES if n_replicates is None else n_replicates
    options: dict[str, object] = {"seed": seed, "blocking": blocking, "n_replicates": replicates}
    if ci is not None:
        options["confidence"] = ci
    for name in names:
        tests = significance(table, name, test=test, correction="none", **options)  # type: ignore[arg-type]
        if ci is not None:
            pairs = table if "system_a" in table.columns else metric_pairs(table, [name])
            t = summarize(pairs, measures=[name], ci=ci)
            tests = (
                tests.join(t, on=["system_a", "system_b"], how="left")
                .with_columns(
                    ci_low=pl.coalesce("ci_low", f"{name}_ci_low"),
                    ci_high=pl.coalesce("ci_high", f"{name}_ci_high"),
                )
                .select(tests.columns)
            )
        if baseline is not None:
            tests = tests.filter(
                (pl.col("system_a") == baseline) | (pl.col("system_b") == baseline)
            )
        if alpha is not None:
            warn_if_coarse(tests, correction, replicates, alpha, [])  # type: ignore[arg-type]
        adjusted = adjust_p_values(tests["p_value"].to_numpy(), correction)  # type: ignore[arg-type]
        parts.append(
            tests.with_columns(
                p_adjusted=pl.Series(adjusted, dtype=pl.Float64), correction=pl.lit(correction)
            )
        )
    return pl.concat(parts, how="vertical_relaxed")


_PAIR_COLUMNS = ["measure", "system_a", "system_b", "n_queries", "mean", "statistic", "p_value"]


def _number(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _cells(row: dict[str, Any], digits: int, interval: bool) -> list[str]:
    cells = [
        str(row["measure"]),
        str(row["system_a"]),
        str(row["system_b"]),
        str(row["n_queries"]),
        f"{row['mean']:.{digits}f}",
        "" if row["statistic"] is None else f"{row['statistic']:.{digits}f}",
        f"{row['p_value']:.{digits}g}",
        f"{row['p_adjusted']:.{digits}g}",
        _number(row["cohens_d"], digits),
        _number(row["es_hsd"], digits),
    ]
    if interval:  # a row of another test (sgnLP's sign test) has no interval: blank
        low, high = _number(row["ci_low"], digits), _number(row["ci_high"], digits)
        cells.append(f"[{low}, {high}]" if low else "")
    return [*cells, str(row["test"])]


def _interval(tests: pl.DataFrame) -> bool:
    """Whether the pairs carry a confidence interval (``--ci``, or the bootstrap test)."""
    return tests["ci_low"].null_count() < tests.height


def _pair_header(correction: str, interval: bool, confidence: float = 0.95) -> list[str]:
    header = ["measure", "system a", "system b", "queries", "mean (a − b)", "statistic", "p",
              f"p ({correction})", "d", "ES_HSD"]  # fmt: skip
    if interval:
        header.append(f"{confidence:.0%} CI")
    return [*header, "test"]


def pairs_markdown(
    tests: pl.DataFrame, *, correction: str, digits: int = 4, confidence: float = 0.95
) -> str:
    """The pair tests as a Markdown table."""
    interval = _interval(tests)
    header = _pair_header(correction, interval, confidence)
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 4) + ["---"]) + "|",
    ]
    for row in tests.iter_rows(named=True):
        cells = map(markdown_cell, _cells(row, digits, interval))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pairs_latex(
    tests: pl.DataFrame, *, correction: str, digits: int = 4, confidence: float = 0.95
) -> str:
    """The pair tests as a LaTeX ``table``."""
    from lexiframe.stats.tables import latex_escape

    interval = _interval(tests)
    header = [latex_escape(text) for text in _pair_header(correction, interval, confidence)]
    header[4] = r"mean ($a - b$)"
    columns = "lll" + "r" * (len(header) - 4) + "l"
    lines = [
        r"\begin{table}",
        r"\centering",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\hline",
        " & ".join(header) + r" \\",
        r"\hline",
    ]
    for row in tests.iter_rows(named=True):
        cells = _cells(row, digits, interval)
        lines.append(" & ".join(latex_escape(cell) for cell in cells) + r" \\")
    caption = latex_escape(
        f"Every pair of systems per measure: p-values adjusted by the {correction} "
        "correction within each measure; d: paired Cohen's d, ES_HSD: the mean difference "
        "over the residual standard deviation of the two-way ANOVA"
        + (
            "; CI: the t interval of the mean difference (bootstrap rows: the percentile interval)."
            if interval
            else "."
        )
    )
    lines += [r"\hline", r"\end{tabular}", rf"\caption{{{caption}}}", r"\end{table}"]
    return "\n".join(lines)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output and Path(args.output).suffix.lower() in (".tex", ".latex"):
        return "latex"
    return "markdown"


def run_compare(args: argparse.Namespace) -> int:
    """The ``compare`` subcommand: evaluate, test, render, then print and write."""
    from lexiframe import io, stats
    from lexiframe._batched import positions_of_files
    from lexiframe.cli import input_paths
    from lexiframe.evaluation import measures_for
    from lexiframe.metrics import parse_measure
    from lexiframe.preferences import preferences

    require_seed(args)
    if args.one_way and args.test not in FAMILY_TESTS:
        raise InputError(
            f"--one-way (the one-way ANOVA) applies to --test hsd and --test randomized_hsd "
            f"only; --test {args.test} compares each pair query by query"
        )
    if not 0 <= args.ci < 1:
        percent = f"; for {args.ci:g} %, pass --ci {args.ci / 100:g}" if 1 < args.ci <= 100 else ""
        raise InputError(
            f"--ci must be a level in (0, 1), e.g. --ci 0.95, or 0 for no interval, not "
            f"{args.ci:g}{percent}"
        )
    if args.replicates is not None and args.replicates < 1:
        raise InputError(
            f"--replicates must be a positive integer, e.g. 10000, not {args.replicates}"
        )
    metric_names, preference_names = split_measures(args.measure or DEFAULT_MEASURES)
    check_track_arguments(args)
    style = _format(args)
    files = io.Outputs(inputs=input_paths(args))
    if args.output:
        files.add(args.output, "report")  # checked now, before any work
    qrels = io.read_qrels(args.qrels)
    with warnings_as_notes():
        options = track_options(args, metric_names)
        frame = positions_of_files(args.runs, qrels, options, system_from=args.system_from)
        per_query = measures_for(frame, metric_names, options, args.n) if metric_names else None
    if frame.height == 0:
        raise InputError(
            "compare has nothing to test: no query of the runs is evaluated (the qrels judge "
            "none of their queries, or none with a relevant document); check that the qrels "
            "are those of the runs"
        )
    if frame["system"].n_unique() < 2:
        raise InputError(
            f"compare needs at least 2 systems with an evaluated query; the runs hold "
            f"{frame['system'].n_unique()}: {frame['system'].unique().to_list()[0]!r}"
        )
    test_options = {
        "correction": args.correction,
        "baseline": args.baseline,
        "seed": args.seed,
        "n_replicates": args.replicates,
        "blocking": not args.one_way,
        "ci": args.ci or None,
    }
    parts = []
    tests = []
    with warnings_as_notes():  # e.g. too few replicates for the corrected level
        if per_query is not None:
            costs = [name for name in metric_names if parse_measure(name).lower_is_better]
            table = stats.report(
                per_query, metric_names, baseline=args.baseline, test=args.test,
                correction=args.correction, alpha=args.alpha, lower_is_better=costs,
                seed=args.seed, blocking=not args.one_way, ci=args.ci or None,
                **({} if args.replicates is None else {"n_replicates": args.replicates}),
            )  # fmt: skip
            render = stats.to_latex if style == "latex" else stats.to_markdown
            parts.append(render(table))
            tests.append(pair_tests(per_query, metric_names, test=args.test, **test_options))
        if preference_names:
            prefs = preferences(frame, preference_names)
            # the HSD tests read a metric of every system per query, which a preference is not:
            # preferences take the sign test (sgnLP, sgnLR) or the t-test (rrLP), named per row
            test = "auto" if args.test in FAMILY_TESTS else args.test
            unblocked = {**test_options, "blocking": True}  # --one-way is the HSD's alone
            tests.append(
                pair_tests(prefs, preference_names, test=test, alpha=args.alpha, **unblocked)
            )
    every = pl.concat(tests, how="vertical_relaxed")
    render_pairs = pairs_latex if style == "latex" else pairs_markdown
    parts.append(render_pairs(every, correction=args.correction, confidence=args.ci or 0.95))
    text = "\n\n".join(parts) + "\n"
    if args.output:
        with files:
            files.write(Path(args.output), lambda path: path.write_text(text, encoding="utf-8"))
            files.commit()
    sys.stdout.write(text)
    if args.output:
        print(f"report written to {args.output}", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``lexiframe compare`` on the command's subparsers."""
    from lexiframe.intervals import DEFAULT_REPLICATES
    from lexiframe.stats.corrections import CORRECTIONS

    cp = commands.add_parser(
        "compare",
        help="significance report of TREC runs: Markdown or LaTeX tables for a paper",
        description="The significance report of TREC runs: the mean of each metric per "
        "system, marked with the systems it is significantly better than (or ▲/▼ against "
        "--baseline), then every pair's test per measure with the p-value adjusted by the "
        "named correction. Printed as Markdown (default) or LaTeX; --output writes the "
        "same text (the format follows a .tex extension unless --format says).",
    )
    add_track_arguments(cp)
    cp.add_argument(
        "--measure",
        "-m",
        action="append",
        help=f"measure, repeatable (default: {' '.join(DEFAULT_MEASURES)}); preferences "
        "(sgnLP, rrLP, sgnLR) are tested per pair",
    )
    cp.add_argument("--baseline", help="compare every system with this one only")
    cp.add_argument(
        "--test",
        choices=TESTS,
        default="auto",
        help="auto (default): paired t-test for metrics, sign test for sgnLP and sgnLR, "
        "t-test for rrLP; or t, sign, wilcoxon (the signed-rank test), hsd, randomized_hsd, "
        "fisher (Fisher's randomisation test), bootstrap (the paired bootstrap test, with "
        "percentile intervals). sgnLP and sgnLR keep the sign test under wilcoxon, fisher "
        "and bootstrap, and preferences take auto's "
        "test under hsd and randomized_hsd; the pair table names each row's test",
    )
    cp.add_argument(
        "--one-way",
        action="store_true",
        help="hsd and randomized_hsd without topic blocking (one-way ANOVA, as "
        "scipy.stats.tukey_hsd and R's TukeyHSD(aov(score ~ system)))",
    )
    cp.add_argument(
        "--replicates",
        type=int,
        help="random replicates of randomized_hsd, fisher and bootstrap (default "
        f"{DEFAULT_REPLICATES})",
    )
    cp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="holm (default), bonferroni, bh (Benjamini-Hochberg), by (Benjamini-Yekutieli) "
        "or none",
    )
    cp.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    cp.add_argument(
        "--ci",
        type=float,
        default=0.95,
        help="level of the intervals printed beside the means and the pairs' mean "
        "differences: Student's t (the percentile interval under --test bootstrap); "
        "default 0.95, --ci 0 prints none",
    )
    cp.add_argument("--format", choices=FORMATS, help="markdown (default) or latex")
    cp.add_argument("--output", "-o", help="also write the report to this file")
    cp.add_argument("--seed", type=int, help="seed of randomized_hsd, fisher and bootstrap")
    cp.set_defaults(handler=run_compare)
