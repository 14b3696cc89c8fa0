"""A systems × measures comparison table with significance markers, like ranx's report.

:func:`report` returns a Polars frame: one row per (by…, system) with a letter label, the
mean of each measure, and a marker column per measure. Without a baseline, the marker
lists the labels of the systems it is significantly better than (``"bc"``: better than
systems b and c). With ``baseline=``, only comparisons with the baseline are made, and the
marker is ``"▲"`` (significantly better than the baseline) or ``"▼"`` (significantly
worse). :func:`to_markdown` and :func:`to_latex` render it as a string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from lexiframe._utils import as_list, markdown_cell, plural, quote_names
from lexiframe.aggregate import is_cost
from lexiframe.errors import InputError, SchemaError
from lexiframe.stats._common import Seed, check_fraction, eager, measure_columns, require_table
from lexiframe.stats.corrections import Correction, adjust_p_values, check_correction
from lexiframe.stats.resampling import DEFAULT_REPLICATES
from lexiframe.stats.significance import SignificancePlan, Test, significance, warn_if_coarse
from lexiframe.validate import require_columns

BETTER, WORSE = "▲", "▼"


def _label(index: int) -> str:
    """a, b, …, z, aa, ab, …"""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("a") + rest) + label
    return label


def report(
    per_query_metrics: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str],
    *,
    baseline: str | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    alpha: float = 0.05,
    by: str | Sequence[str] | None = None,
    lower_is_better: str | Iterable[str] | None = None,
    n_replicates: int = DEFAULT_REPLICATES,
    seed: Seed | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    """Mean of each measure per system, marked with the significant differences.

    ``per_query_metrics`` is ``by…, system, query`` and measure columns (from
    :func:`lexiframe.measures`). Pairs of systems are compared per measure with ``test``
    (``"t"``: paired t-test; ``"sign"``, ``"wilcoxon"``, ``"hsd"``, ``"randomized_hsd"``,
    ``"fisher"``, ``"bootstrap"``, with ``n_replicates``, ``seed`` and ``blocking`` as in
    :func:`lexiframe.stats.significance`) and the p-values adjusted with ``correction``
    (``"holm"``, ``"bonferroni"``, ``"bh"``, ``"by"`` or ``"none"``)
    within each (by…, measure) family: all pairs, or with ``baseline=`` the s − 1
    comparisons with the baseline. A difference counts when the adjusted p < ``alpha``;
    the better system has the larger mean, or the smaller one for the measures named in
    ``lower_is_better``; by default (``None``) those the registry declares lower is better
    (ASL, SL3, a measure defined with ``lower_is_better=True``), as :func:`lexiframe.order`
    reads them.

    Returns:
        ``by…, label, system, n_queries``, then ``<measure>`` (the mean) and
        ``<measure>_sig`` (the marker) for each measure, with ``baseline=`` also
        ``<measure>_d`` and ``<measure>_es_hsd``, the effect sizes against the baseline
        (the paired Cohen's d and Sakai's ES_HSD of :func:`lexiframe.stats.significance`,
        positive when the system is better; null for the baseline), then ``test``,
        ``correction``, ``alpha``; sorted by ``by…, system``. Labels are a, b, c, … in system order.

    >>> import polars as pl
    >>> metrics = pl.DataFrame({
    ...     "system": ["x"] * 6 + ["y"] * 6 + ["z"] * 6, "query": list("123456") * 3,
    ...     "AP": [0.9, 0.8, 0.85, 0.7, 0.95, 0.9, 0.3, 0.2, 0.4, 0.3, 0.1, 0.25,
    ...            0.3, 0.25, 0.35, 0.3, 0.2, 0.2]})
    >>> report(metrics, ["AP"]).select("label", "system", "AP", "AP_sig")
    shape: (3, 4)
    ┌───────┬────────┬──────────┬────────┐
    │ label ┆ system ┆ AP       ┆ AP_sig │
    │ ---   ┆ ---    ┆ ---      ┆ ---    │
    │ str   ┆ str    ┆ f64      ┆ str    │
    ╞═══════╪════════╪══════════╪════════╡
    │ a     ┆ x      ┆ 0.85     ┆ bc     │
    │ b     ┆ y      ┆ 0.258333 ┆        │
    │ c     ┆ z      ┆ 0.266667 ┆        │
    └───────┴────────┴──────────┴────────┘
    """
    alpha = check_fraction(alpha, "alpha")
    check_correction(correction)
    by = as_list(by)
    names = list(dict.fromkeys(as_list(measures)))
    costs = set(
        [name for name in names if is_cost(name)]
        if lower_is_better is None
        else as_list(lower_is_better)
    )
    table = eager(per_query_metrics, "metrics")
    require_columns(table.schema, [*by, "system", "query"], "metrics")
    measure_columns(table.schema, names, [*by, "system", "query"], "metrics", frame=table)
    if not names:
        raise InputError("report() needs at least one measure")
    systems = table.select(*by, "system").unique().sort([*by, "system"])
    if baseline is not None and baseline not in set(systems["system"].to_list()):
        names_found = systems["system"].unique().sort()
        raise InputError(
            f"baseline {baseline!r} is not a system of the metrics table; its "
            f"{plural(len(names_found), 'system')} include "
            f"{quote_names(names_found.head(5).to_list())}"
        )
    labels = systems.with_columns(
        label=pl.int_range(pl.len()).over(by) if by else pl.int_range(pl.len())
    ).with_columns(pl.col("label").map_elements(_label, return_dtype=pl.String))
    out = labels.join(
        table.group_by([*by, "system"]).agg(
            pl.len().cast(pl.UInt32).alias("n_queries"),
            *(pl.col(name).cast(pl.Float64).mean() for name in names),
        ),
        on=[*by, "system"],
        how="left",
    )
    for name in names:
        tests = significance(
            table,
            name,
            test=test,
            correction="none",
            by=by,
            n_replicates=n_replicates,
            seed=seed,
            blocking=blocking,
        )
        sign = -1.0 if name in costs else 1.0
        if baseline is not None:
            tests = _against(tests, baseline)
            sizes = _effect_sizes(tests, name, baseline, by, sign)
            out = out.join(sizes, on=[*by, "system"], how="left")
        warn_if_coarse(tests, correction, n_replicates, alpha, by)
        wins = _significant_wins(tests, correction, alpha, by, sign)
        marks = _marks(wins, labels, name, baseline, by)
        out = out.join(marks, on=[*by, "system"], how="left").with_columns(
            pl.col(f"{name}_sig").fill_null("")
        )
    plan = SignificancePlan("paired_t" if test in ("t", "auto") else test, correction, blocking)
    return out.select(
        *by,
        "label",
        "system",
        "n_queries",
        *(
            column
            for name in names
            for column in (
                name,
                f"{name}_sig",
                *([f"{name}_d", f"{name}_es_hsd"] if baseline else []),
            )
        ),
        pl.lit(plan.name).alias("test"),
        pl.lit(correction).alias("correction"),
        pl.lit(alpha).alias("alpha"),
    ).sort([*by, "system"])


def _against(tests: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """The pairs of ``tests`` in which the baseline is one of the two systems."""
    return tests.filter((pl.col("system_a") == baseline) | (pl.col("system_b") == baseline))


def _effect_sizes(
    tests: pl.DataFrame, name: str, baseline: str, by: list[str], sign: float
) -> pl.DataFrame:
    """Each system's Cohen's d and ES_HSD against the baseline (positive: better than the
    baseline)."""
    towards = pl.when(pl.col("system_a") == baseline).then(-1.0).otherwise(1.0) * sign
    return tests.select(
        *by,
        pl.when(pl.col("system_a") == baseline)
        .then(pl.col("system_b"))
        .otherwise(pl.col("system_a"))
        .alias("system"),
        (towards * pl.col("cohens_d")).alias(f"{name}_d"),
        (towards * pl.col("es_hsd")).alias(f"{name}_es_hsd"),
    )


def _significant_wins(
    tests: pl.DataFrame, correction: Correction, alpha: float, by: list[str], sign: float
) -> pl.DataFrame:
    """The pairs whose difference is significant after ``correction`` within each (by…)
    family, with their ``winner`` and ``loser`` (``sign`` −1 for a cost)."""
    family = (
        tests.select(pl.struct(by).rank("dense")).to_series().to_numpy()
        if by
        else np.zeros(tests.height)
    )
    adjusted = adjust_p_values(tests["p_value"].to_numpy(), correction, groups=family)
    a_wins = pl.col("mean") * sign > 0
    return tests.with_columns(
        significant=pl.Series(adjusted < alpha),
        winner=pl.when(a_wins).then(pl.col("system_a")).otherwise(pl.col("system_b")),
        loser=pl.when(a_wins).then(pl.col("system_b")).otherwise(pl.col("system_a")),
    ).filter(pl.col("significant") & (pl.col("mean") != 0))


def _marks(
    wins: pl.DataFrame, labels: pl.DataFrame, name: str, baseline: str | None, by: list[str]
) -> pl.DataFrame:
    """The ``{name}_sig`` column: the labels of the systems each system significantly
    beats, or against a baseline the better or worse marker."""
    if baseline is None:
        return (
            wins.join(
                labels.rename({"system": "loser", "label": "_loser_label"}),
                on=[*by, "loser"],
            )
            .group_by([*by, "winner"])
            .agg(pl.col("_loser_label").sort().str.join("").alias(f"{name}_sig"))
            .rename({"winner": "system"})
        )
    return wins.select(
        *by,
        pl.when(pl.col("winner") == baseline)
        .then(pl.col("loser"))
        .otherwise(pl.col("winner"))
        .alias("system"),
        pl.when(pl.col("winner") == baseline)
        .then(pl.lit(WORSE))
        .otherwise(pl.lit(BETTER))
        .alias(f"{name}_sig"),
    )


def _layout(frame: pl.DataFrame) -> tuple[list[str], list[str]]:
    """The by-columns and measure columns of a :func:`report` frame."""
    if not isinstance(frame, pl.DataFrame):
        raise SchemaError(f"the report table must be a Polars DataFrame, not {type(frame)}")
    require_table(
        frame.schema,
        ["label", "system", "test", "correction", "alpha"],
        "report",
        "Build it with stats.report(metrics, [...]) and render that.",
    )
    measures = [c for c in frame.columns if f"{c}_sig" in frame.schema]
    by = frame.columns[: frame.columns.index("label")]
    return by, measures


def _note(frame: pl.DataFrame) -> str:
    test = frame["test"][0] if frame.height else ""
    correction = frame["correction"][0] if frame.height else ""
    alpha = frame["alpha"][0] if frame.height else 0.05
    return (
        f"Markers: significant at p < {alpha:g} ({test} test, {correction} correction); "
        f"letters name the systems a system is better than, {BETTER}/{WORSE} better/worse "
        "than the baseline."
    )


def to_markdown(frame: pl.DataFrame, *, digits: int = 4) -> str:
    """Render a :func:`report` frame as a Markdown table (markers as ``<sup>``).

    >>> import polars as pl
    >>> table = pl.DataFrame({"label": ["a", "b"], "system": ["x", "y"], "n_queries": [6, 6],
    ...                       "AP": [0.85, 0.26], "AP_sig": ["b", ""], "test": ["paired_t"] * 2,
    ...                       "correction": ["holm"] * 2, "alpha": [0.05] * 2})
    >>> print(to_markdown(table))
    | | system | AP |
    |---|---|---:|
    | a | x | 0.8500<sup>b</sup> |
    | b | y | 0.2600 |
    <BLANKLINE>
    Markers: significant at p < 0.05 (paired_t test, holm correction); ...
    """
    by, measures = _layout(frame)
    header = ["", *by, "system", *measures]
    lines = [
        "| " + " | ".join(map(markdown_cell, header)).strip() + " |",
        "|" + "|".join(["---"] * (1 + len(by) + 1) + ["---:"] * len(measures)) + "|",
    ]
    for row in frame.iter_rows(named=True):
        keys = [str(row["label"]), *(str(row[b]) for b in by), str(row["system"])]
        cells = [markdown_cell(key) for key in keys]
        for name in measures:
            value = row[name]
            text = "" if value is None else f"{value:.{digits}f}"
            if row[f"{name}_sig"]:
                text += f"<sup>{row[f'{name}_sig']}</sup>"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", _note(frame)])


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped, for a table cell or caption.

    >>> print(latex_escape("nDCG_cut & 50%"))
    nDCG\_cut \& 50\%
    """
    for char, escaped in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
    ):
        text = text.replace(char, escaped)
    return text


def to_latex(frame: pl.DataFrame, *, digits: int = 4, caption: str | None = None) -> str:
    r"""Render a :func:`report` frame as a LaTeX ``table`` (markers as superscripts).

    ``▲``/``▼`` become ``$^{\blacktriangle}$``/``$^{\blacktriangledown}$``, which need
    ``\usepackage{amssymb}`` in the document's preamble (the table says so in a comment).

    >>> import polars as pl
    >>> table = pl.DataFrame({"label": ["a", "b"], "system": ["x_1", "y"], "n_queries": [6, 6],
    ...                       "AP": [0.85, 0.26], "AP_sig": ["b", ""], "test": ["paired_t"] * 2,
    ...                       "correction": ["holm"] * 2, "alpha": [0.05] * 2})
    >>> print(to_latex(table))
    \begin{table}
    % \blacktriangle and \blacktriangledown need \usepackage{amssymb}
    \centering
    \begin{tabular}{llr}
    \hline
     & system & AP \\
    \hline
    a & x\_1 & 0.8500$^{b}$ \\
    b & y & 0.2600 \\
    \hline
    \end{tabular}
    \caption{Markers: significant at $p < 0.05$ (paired\_t test, holm correction); ...}
    \end{table}
    """
    by, measures = _layout(frame)
    symbols = {BETTER: r"\blacktriangle", WORSE: r"\blacktriangledown"}
    columns = "l" * (2 + len(by)) + "r" * len(measures)
    lines = [
        r"\begin{table}",
        r"% \blacktriangle and \blacktriangledown need \usepackage{amssymb}",
        r"\centering",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\hline",
        " & ".join(["", *map(latex_escape, [*by, "system", *measures])]) + r" \\",
        r"\hline",
    ]
    for row in frame.iter_rows(named=True):
        cells = [
            latex_escape(str(row["label"])),
            *(latex_escape(str(row[b])) for b in by),
            latex_escape(str(row["system"])),
        ]
        for name in measures:
            value = row[name]
            text = "" if value is None else f"{value:.{digits}f}"
            mark = row[f"{name}_sig"]
            if mark:
                text += "$^{" + symbols.get(mark, latex_escape(mark)) + "}$"
            cells.append(text)
        lines.append(" & ".join(cells) + r" \\")
    note = latex_escape(caption if caption is not None else _note(frame))
    note = re.sub(r"p < ([0-9.e-]+)", r"$p < \1$", note)
    note = note.replace(BETTER, "$\\blacktriangle$").replace(WORSE, "$\\blacktriangledown$")
    lines += [r"\hline", r"\end{tabular}", rf"\caption{{{note}}}", r"\end{table}"]
    return "\n".join(lines)
