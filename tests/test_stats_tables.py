"""Tables for a paper from stats.report: Markdown and LaTeX, their structure, and a LaTeX
compile where an engine is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import polars as pl
import pytest

from lexiframe import stats
from lexiframe.stats.tables import latex_escape

ENGINES = [name for name in ("pdflatex", "lualatex", "xelatex") if shutil.which(name)]


@pytest.fixture(scope="module")
def metrics() -> pl.DataFrame:
    rng = np.random.default_rng(4)
    systems, queries = ["bm25_base", "dense&co", "x%50", "rerank#2"], 30
    base = rng.uniform(0.1, 0.6, queries)
    scores = [np.clip(base + shift + rng.normal(0, 0.05, queries), 0, 1)
              for shift in (0.0, 0.15, -0.1, 0.05)]  # fmt: skip
    return pl.DataFrame(
        {
            "system": np.repeat(systems, queries),
            "query": np.tile([f"q{j}" for j in range(queries)], len(systems)),
            "AP": np.concatenate(scores),
            "ASL": np.concatenate([10 * (1 - s) for s in scores]),
        }
    )


def _rows(latex: str) -> list[str]:
    body = latex.split(r"\hline")[2]  # header, \hline, the rows, \hline
    return [line for line in body.strip().splitlines() if line]


def test_latex_structure_bold_marks_intervals_and_caption(metrics):
    table = stats.report(metrics, ["AP", "ASL"], ci=0.9)
    latex = stats.to_latex(table, label="tab:runs")
    assert latex.count(r"\begin{table}") == latex.count(r"\end{table}") == 1
    assert latex.count(r"\begin{tabular}") == latex.count(r"\end{tabular}") == 1
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex).group(1)
    rows = _rows(latex)
    assert len(rows) == 4
    for row in rows:  # every row has the tabular's number of cells, and no raw specials
        assert row.endswith(r" \\")
        cells = re.split(r"(?<!\\)&", row[:-3])
        assert len(cells) == len(spec)
        assert not re.search(r"(?<!\\)[%#_]", row)
    assert r"dense\&co" in latex and r"x\%50" in latex and r"bm25\_base" in latex
    # the best of each column in bold: the largest AP, the smallest ASL (a cost)
    means = table.select("system", "AP", "ASL")
    best_ap = means.sort("AP")["system"][-1]
    best_asl = means.sort("ASL")["system"][0]
    assert best_ap == best_asl == "dense&co"
    (best_row,) = [row for row in rows if "dense" in row]
    assert best_row.count(r"\textbf{") == 2
    assert sum(row.count(r"\textbf{") for row in rows) == 2
    # marks: dense&co (b) beats the three others on AP: letters as superscripts
    assert "$^{acd}$" in best_row
    assert r"{\small [" in best_row  # the interval
    caption = re.search(r"\\caption\{(.*)\}", latex).group(1)
    assert "$p < 0.05$" in caption and "paired\\_t test" in caption
    assert "holm correction" in caption and r"90\% t interval" in caption
    assert r"\label{tab:runs}" in latex


def test_markdown_bold_marks_intervals_and_effect_sizes(metrics):
    table = stats.report(metrics, ["AP"], baseline="bm25_base", ci=0.95)
    text = stats.to_markdown(table, effect_sizes=True)
    lines = text.splitlines()
    assert lines[0] == "| | system | AP | AP d |"
    (best,) = [line for line in lines if "dense&co" in line]
    ap = table.filter(pl.col("system") == "dense&co").row(0, named=True)
    assert f"**{ap['AP']:.4f}**<sup>▲</sup> [{ap['AP_ci_low']:.4f}, {ap['AP_ci_high']:.4f}]" in best
    assert best.endswith(f"| {ap['AP_d']:.2f} |")
    assert "Brackets: the 95% t interval" in text
    plain = stats.to_markdown(stats.report(metrics, ["AP"]), bold_best=False)
    assert "**" not in plain and "[" not in plain


def test_bold_per_by_group():
    metrics = pl.DataFrame(
        {"track": ["t1"] * 4 + ["t2"] * 4, "system": ["x", "x", "y", "y"] * 2,
         "query": ["1", "2"] * 4, "AP": [0.9, 0.8, 0.1, 0.2, 0.1, 0.2, 0.7, 0.9]}
    )  # fmt: skip
    text = stats.to_markdown(stats.report(metrics, ["AP"], by="track"))
    cells = [line.split("|")[4].strip() for line in text.splitlines() if "**" in line]
    bold = [cell.split("<sup>")[0] for cell in cells]
    assert bold == ["**0.8500**", "**0.8000**"]  # x in t1, y in t2


def test_latex_escape_every_special_character():
    assert latex_escape(r"a\b{c}$d^e~f") == (
        r"a\textbackslash{}b\{c\}\$d\textasciicircum{}e\textasciitilde{}f"
    )


@pytest.mark.skipif(not ENGINES, reason="no LaTeX engine installed (pdflatex, lualatex, xelatex)")
def test_latex_compiles(metrics, tmp_path):
    table = stats.report(metrics, ["AP", "ASL"], baseline="bm25_base", ci=0.95)
    body = stats.to_latex(table, effect_sizes=True)
    document = "\n".join(
        [r"\documentclass{article}", r"\usepackage{amssymb}", r"\begin{document}", body,
         r"\end{document}"]
    )  # fmt: skip
    (tmp_path / "table.tex").write_text(document, encoding="utf-8")
    done = subprocess.run(
        [ENGINES[0], "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
