"""A :func:`lexiframe.stats.report` frame as a table for a paper: Markdown or LaTeX.

Per measure column: the mean of each system, in bold where it is the best of its column
(within each by-group; the smallest for a cost such as ASL), with the significance marks
as superscripts (the letters of the systems it is significantly better than, the
convention of ranx and many SIGIR papers, or ▲/▼ against a baseline), then optionally
its confidence interval in brackets (``report(..., ci=0.95)``) and its effect size against
the baseline (``report(..., baseline=...)``). The caption (LaTeX) or the note under the
table (Markdown) names the test, the correction and α.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

from lexiframe._utils import as_list, markdown_cell
from lexiframe.aggregate import is_cost
from lexiframe.errors import SchemaError
from lexiframe.stats._common import require_table

BETTER, WORSE = "▲", "▼"
_SYMBOLS = {BETTER: r"\blacktriangle", WORSE: r"\blacktriangledown"}


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


def _best(
    frame: pl.DataFrame, by: list[str], measures: list[str], lower: str | Iterable[str] | None
) -> dict[str, list[bool]]:
    """Per measure, whether each row holds the best mean of its (by…) group."""
    costs = {m for m in measures if is_cost(m)} if lower is None else set(as_list(lower))
    best = {}
    for name in measures:
        value = pl.col(name)
        target = value.min() if name in costs else value.max()
        target = target.over(by) if by else target
        best[name] = frame.select((value == target).fill_null(False)).to_series().to_list()
    return best


def _note(frame: pl.DataFrame, bold: bool) -> str:
    first = frame.row(0, named=True) if frame.height else {}
    test, correction = first.get("test", ""), first.get("correction", "")
    alpha = first.get("alpha", 0.05)
    text = (
        f"Markers: significant at p < {alpha:g} ({test} test, {correction} correction); "
        f"letters name the systems a system is better than, {BETTER}/{WORSE} better/worse "
        "than the baseline."
    )
    if bold:
        text += " Bold: the best mean of its column."
    if first.get("ci") is not None:
        text += f" Brackets: the {first['ci']:.0%} t interval of the mean over the queries."
    return text


def _cells(
    row: dict[str, object],
    name: str,
    digits: int,
    best: bool,
    effect_sizes: bool,
    styles: tuple[str, str, str],
) -> list[str]:
    """The cells of one measure: the mean (bold, marks, interval), then its effect size.
    ``styles``: the formats of bold, of a superscript and of the interval."""
    value = row[name]
    bold, superscript, interval = styles
    text = "" if value is None else f"{value:.{digits}f}"
    if best and text:
        text = bold.format(text)
    mark = str(row[f"{name}_sig"] or "")
    if mark:
        text += superscript.format(mark)
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if low is not None and high is not None:
        text += interval.format(f"{low:.{digits}f}", f"{high:.{digits}f}")
    cells = [text]
    if effect_sizes:
        size = row.get(f"{name}_d")
        cells.append("" if size is None else f"{size:.{min(digits, 2)}f}")
    return cells


def _effect_sizes(frame: pl.DataFrame, measures: list[str], wanted: bool) -> bool:
    return wanted and all(f"{name}_d" in frame.columns for name in measures)


def to_markdown(
    frame: pl.DataFrame,
    *,
    digits: int = 4,
    bold_best: bool = True,
    effect_sizes: bool = False,
    lower_is_better: str | Iterable[str] | None = None,
) -> str:
    """Render a :func:`report` frame as a Markdown table (markers as ``<sup>``).

    ``bold_best`` puts the best mean of each column in bold (the smallest for the measures
    ``lower_is_better`` names; by default those the registry declares costs, as
    :func:`report` reads them); the intervals of ``report(..., ci=...)`` follow the means
    in brackets; ``effect_sizes`` adds a column of Cohen's d against the baseline after
    each measure (``report(..., baseline=...)``).

    >>> import polars as pl
    >>> table = pl.DataFrame({"label": ["a", "b"], "system": ["x", "y"], "n_queries": [6, 6],
    ...                       "AP": [0.85, 0.26], "AP_sig": ["b", ""], "test": ["paired_t"] * 2,
    ...                       "correction": ["holm"] * 2, "alpha": [0.05] * 2})
    >>> print(to_markdown(table))
    | | system | AP |
    |---|---|---:|
    | a | x | **0.8500**<sup>b</sup> |
    | b | y | 0.2600 |
    <BLANKLINE>
    Markers: significant at p < 0.05 (paired_t test, holm correction); ...
    """
    by, measures = _layout(frame)
    sizes = _effect_sizes(frame, measures, effect_sizes)
    best = _best(frame, by, measures, lower_is_better)
    header = ["", *by, "system"]
    for name in measures:
        header += [name, f"{name} d"] if sizes else [name]
    right = len(header) - 2 - len(by)
    lines = [
        "| " + " | ".join(map(markdown_cell, header)).strip() + " |",
        "|" + "|".join(["---"] * (2 + len(by)) + ["---:"] * right) + "|",
    ]
    styles = ("**{}**", "<sup>{}</sup>", " [{}, {}]")
    for index, row in enumerate(frame.iter_rows(named=True)):
        keys = [str(row["label"]), *(str(row[b]) for b in by), str(row["system"])]
        cells = [markdown_cell(key) for key in keys]
        for name in measures:
            top = bold_best and best[name][index]
            cells += _cells(row, name, digits, top, sizes, styles)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", _note(frame, bold_best)])


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped, for a table cell or caption.

    >>> print(latex_escape("nDCG_cut & 50% ~^"))
    nDCG\_cut \& 50\% \textasciitilde{}\textasciicircum{}
    """
    escapes = {
        "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
        "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }  # fmt: skip
    return "".join(escapes.get(char, char) for char in text)


def to_latex(
    frame: pl.DataFrame,
    *,
    digits: int = 4,
    caption: str | None = None,
    label: str | None = None,
    bold_best: bool = True,
    effect_sizes: bool = False,
    lower_is_better: str | Iterable[str] | None = None,
) -> str:
    r"""Render a :func:`report` frame as a LaTeX ``table`` (markers as superscripts).

    The options are :func:`to_markdown`'s; ``caption`` replaces the note (which names the
    test, the correction and α), ``label`` adds ``\label{...}``. ``▲``/``▼`` become
    ``$^{\blacktriangle}$``/``$^{\blacktriangledown}$``, which need
    ``\usepackage{amssymb}`` in the document's preamble (the table says so in a comment);
    nothing else needs a package.

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
    a & x\_1 & \textbf{0.8500}$^{b}$ \\
    b & y & 0.2600 \\
    \hline
    \end{tabular}
    \caption{Markers: significant at $p < 0.05$ (paired\_t test, holm correction); ...}
    \end{table}
    """
    by, measures = _layout(frame)
    sizes = _effect_sizes(frame, measures, effect_sizes)
    best = _best(frame, by, measures, lower_is_better)
    header = ["", *map(latex_escape, [*by, "system"])]
    for name in measures:
        header += [latex_escape(name), f"$d$ ({latex_escape(name)})"] if sizes else [
            latex_escape(name)
        ]  # fmt: skip
    columns = "l" * (2 + len(by)) + "r" * (len(header) - 2 - len(by))
    lines = [
        r"\begin{table}",
        r"% \blacktriangle and \blacktriangledown need \usepackage{amssymb}",
        r"\centering",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\hline",
        " & ".join(header) + r" \\",
        r"\hline",
    ]
    styles = (r"\textbf{{{}}}", "$^{{{}}}$", r" {{\small [{}, {}]}}")
    for index, row in enumerate(frame.iter_rows(named=True)):
        cells = [
            latex_escape(str(row["label"])),
            *(latex_escape(str(row[b])) for b in by),
            latex_escape(str(row["system"])),
        ]
        for name in measures:
            mark = str(row[f"{name}_sig"] or "")
            shown = {**row, f"{name}_sig": _SYMBOLS.get(mark, latex_escape(mark))}
            top = bold_best and best[name][index]
            cells += _cells(shown, name, digits, top, sizes, styles)
        lines.append(" & ".join(cells) + r" \\")
    note = latex_escape(caption if caption is not None else _note(frame, bold_best))
    note = re.sub(r"p < ([0-9.e-]+)", r"$p < \1$", note)
    note = note.replace(BETTER, "$\\blacktriangle$").replace(WORSE, "$\\blacktriangledown$")
    ending = [rf"\caption{{{note}}}", *([rf"\label{{{label}}}"] if label else [])]
    lines += [r"\hline", r"\end{tabular}", *ending, r"\end{table}"]
    return "\n".join(lines)
