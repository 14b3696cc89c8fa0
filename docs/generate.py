"""Write the documentation pages that are generated from code.

    python docs/generate.py          # (re)write the pages
    python docs/generate.py --check  # exit 1 and name the stale pages

- ``measures.md`` and ``measures/<family>.md``: from the measure registry
  (``lexiframe.metrics.FAMILIES``): summary, names, LaTeX formula and an example whose
  table is computed by running the code shown on the page;
- ``tutorial.md``: the steps of :data:`TUTORIAL_STEPS`, run on the demo track written as
  TREC files, with the tables they return;
- ``mkdocs.yml``: the Measures section of the nav lists every family's page;
- ``cli.md``: from the argument parser of the ``lexiframe`` command
  (``lexiframe.cli.build_parser``);
- ``lexiframe/_measure_methods.py``: the ``.lexi`` expression methods, one per family with
  a ``method`` name, their signatures and docstrings from the family's declaration.

``tests/test_docs.py`` checks that the committed pages equal the generated ones.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from lexiframe.metrics import Family, Needs

DOCS = Path(__file__).resolve().parent
CONFIG = DOCS.parent / "mkdocs.yml"
METHODS = DOCS.parent / "lexiframe" / "_measure_methods.py"
REGENERATE = "python docs/generate.py"


# --- measure pages ----------------------------------------------------------------------------

NOTATION = (
    "$p_i$ is the rank of the $i$-th retrieved relevant document, $r$ how many were retrieved, "
    r"$m$ how many the query has, $\tilde n$ the ranking's length and $\hat p$ the positions "
    "after pessimistic imputation (unretrieved relevant documents at the bottom of a corpus of "
    "$n$ documents); see [Definitions]({up}definitions.md#measures-of-one-ranking)."
)

# The rankings of the examples on the measure pages: one query with 4 relevant documents;
# system c returned nothing for it.
EXAMPLE_CODE = """\
import polars as pl
import lexiframe as lf

# judged=True adds the last three columns (Bpref, infAP, Judged@k read them)
positions = pl.DataFrame(
    {
        "system": ["a", "b", "c"],
        "query": ["q1", "q1", "q1"],
        "positions": [[1, 3, 7], [2, 3, 4, 9], []],
        "n_rel": [4, 4, 4],
        "n_ret": [10, 10, 0],
        "nonrel_positions": [[2, 4, 5], [1, 5], []],
        "n_nonrel": [6, 6, 6],
        "pooled_positions": [[6], [], []],
    },
    schema_overrides={
        "positions": pl.List(pl.UInt32),
        "n_rel": pl.UInt32,
        "n_ret": pl.UInt32,
        "nonrel_positions": pl.List(pl.UInt32),
        "n_nonrel": pl.UInt32,
        "pooled_positions": pl.List(pl.UInt32),
    },
)"""
EXAMPLE_N = 1000

# The same rankings with grades, for the measures that read them (ERR, nDCG(gains=…)): the
# query's relevant documents are graded 3, 2, 1 and 1.
EXAMPLE_GRADED_CODE = """\
import polars as pl
import lexiframe as lf

positions = pl.DataFrame(
    {
        "system": ["a", "b", "c"],
        "query": ["q1", "q1", "q1"],
        "positions": [[1, 3, 7], [2, 3, 4, 9], []],
        "grades": [[2, 1, 3], [1, 1, 2, 3], []],
        "ideal_grades": [[3, 2, 1, 1]] * 3,
        "n_rel": [4, 4, 4],
        "n_ret": [10, 10, 0],
    },
    schema_overrides={
        "positions": pl.List(pl.UInt32),
        "n_rel": pl.UInt32,
        "n_ret": pl.UInt32,
    },
)"""


def measure_page_name(family: Family) -> str:
    """The file name of a family's documentation page, e.g. ``rr.md``."""
    return f"{family.name.lower()}.md"


def _cutoff_example(family: Family) -> str:
    """An example cutoff: a rank (``P@10``), or a level for fractional ones (``IPrec@0.5``)."""
    return f"`{family.name}@{family.cutoff_prefix}{0.5 if family.fractional_cutoff else 10}`"


def _cutoff_text(family: Family) -> str:
    if family.cutoff == "none":
        return "—"
    return f"{family.cutoff} ({_cutoff_example(family)})"


def _example_frame(code: str = EXAMPLE_CODE) -> pl.DataFrame:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # the code shown on the page is the code that runs
    return namespace["positions"]  # type: ignore[return-value]


def _number(value: float | None) -> str:
    return "null" if value is None else f"{value:.4f}".rstrip("0").rstrip(".")


def _example(family: Family) -> list[str]:
    """The example section of a family's page: code, and the table it returns."""
    from lexiframe.evaluation import measures
    from lexiframe.metrics import parse_measure

    name = family.example or family.name
    code = EXAMPLE_GRADED_CODE if parse_measure(name).requires_grades else EXAMPLE_CODE
    positions = _example_frame(code)
    if parse_measure(name).needs_n:  # null without the corpus size when r < m
        result = measures(positions, [name], n=EXAMPLE_N)
        call = f"positions.lexi.measures([{name!r}], n={EXAMPLE_N})"
    else:
        result = measures(positions, [name])
        call = f"positions.lexi.measures([{name!r}])"
    column = result.columns[-1]
    rows = [
        f"| {system} | {_number(value)} |"
        for system, value in result.select("system", column).iter_rows()
    ]
    return [
        "## Example",
        "",
        "```python",
        code,
        call,
        "```",
        "",
        f"| system | {column} |",
        "|---|---|",
        *rows,
        "",
    ]


def _param_value(value: object) -> object:
    """A parameter's default as a name writes it: a tuple of levels as a list."""
    return list(value) if isinstance(value, tuple) else value


def measure_page(family: Family) -> str:
    """The documentation page of one measure family, generated from its registry entry."""
    names = ", ".join(f"`{name}`" for name in (family.name, *family.aliases))
    if family.params:
        params = []
        for key, value in family.params.items():
            text = f"`{key}={_param_value(value)!r}`"
            if key in family.choices:
                text += " (one of " + ", ".join(repr(c) for c in family.choices[key]) + ")"
            params.append(text)
        parameters = "; ".join(params)
    else:
        parameters = "—"
    lines = [
        f"# {family.name}",
        "",
        f"{family.summary}",
        "",
        "$$",
        family.formula,
        "$$",
        "",
        f"- **Names**: {names}",
        f"- **Cutoff**: {_cutoff_text(family)}",
        f"- **Parameters**: {parameters}",
        f"- **Source**: {family.source}",
        "",
        f"{NOTATION.format(up='../')} The output column is the measure's canonical name, e.g. "
        f"`{family.example or family.name}`.",
        "",
        *_example(family),
        f"Generated from `lexiframe.metrics.FAMILIES` (`{REGENERATE}`); see "
        "[all measures](../measures.md).",
        "",
    ]
    return "\n".join(lines)


def measures_reference() -> str:
    """The page of all measures, ``docs/measures.md``, generated from the registry."""
    from lexiframe.metrics import FAMILIES

    lines = [
        "# Measures of one ranking",
        "",
        f"Generated from `lexiframe.metrics.FAMILIES` (`{REGENERATE}`). Type a measure's name "
        "as shown; the same string names its output column. "
        f"{NOTATION.format(up='')} Each family has a page with its formula, parameters and an "
        "example.",
        "",
        "| name | definition | cutoff | parameters |",
        "|---|---|---|---|",
    ]
    for family in FAMILIES:
        cutoff = {"none": "—", "optional": "optional", "required": "required"}[family.cutoff]
        if family.cutoff != "none":
            cutoff += f" ({_cutoff_example(family)})"
        params = (
            ", ".join(f"`{key}={_param_value(v)!r}`" for key, v in family.params.items()) or "—"
        )
        link = f"[`{family.name}`](measures/{measure_page_name(family)})"
        names = " ".join([link, *(f"`{name}`" for name in family.aliases)])
        # The definition second: on a narrow screen it is what shows beside the name.
        lines.append(
            f"| {names} | {family.summary}<br><small>{family.source}</small> | {cutoff} | "
            f"{params} |"
        )
    lines += [
        "",
        "trec_eval's spellings of cut-off measures are understood too: `P_10`, `recall_1000`, "
        "`ndcg_cut_10`, `map_cut_100`, `success_5`, `iprec_at_recall_0.10`; so are "
        "ir_measures' and ranx's names ([below](#names-from-trec_eval-ir_measures-and-ranx)).",
        "",
        "**Relevance level of a measure.** The measures with a `rel` parameter count as "
        "relevant the documents graded `rel` or more, whatever the positions frame's "
        "`threshold=`: `P(rel=2)@10`, `AP(rel=2)` and `RR(rel=2)` are trec_eval's `P_10`, "
        "`map` and `recip_rank` under `-l 2`, beside measures at the frame's own level in the "
        "same call. `rel=None` (the default) is the frame's level. They read the frame's "
        "`grades` and `ideal_grades` (`positions(qrels, grades=True)`; `lf.evaluate` asks for "
        "them), and `rel` cannot be below the frame's `threshold=`.",
        "",
        "**Gains of nDCG, G, nDCGRel and RnDCG.** `nDCG(gains={0: 0, 1: 1, 2: 3})` is "
        "trec_eval's `ndcg` with `-m ndcg.0=0,1=1,2=3` (`ndcg_0=0,1=1,2=3`, as trec_eval "
        "prints it, is read too); `nDCG(gains={1: 1, 2: 3})@10` cuts both sums at 10. "
        "`G(gains=…)`, `nDCGRel(gains=…)` and `RnDCG(gains=…)` are trec_eval's `G`, "
        "`ndcg_rel` and `Rndcg` with gains (`-m G.1=2,2=4`, `ndcg_rel.1=1,2=5`, `Rndcg.2=7`). "
        "Grades left out of the map keep their grade as gain; negative gains count in the "
        "DCG (and in G's gathered gain), and the ideal ranking takes the query's positive "
        "gains, best first; nDCGRel averages at the documents of positive gain, and RnDCG's "
        "levels are the distinct gains. Binary nDCG on graded qrels is "
        "`nDCG(gains={1: 1, 2: 1})` (one entry per relevant grade). A grade below 1 "
        "(non-relevant documents) cannot have a gain: the frame does not hold those "
        "documents. trec_eval sorts gains comparing their difference cut to a whole number; "
        "a map whose ideal ranking it would take out of order (gains less than 1 apart, e.g. "
        "`{1: 2.5, 2: 2}`) is refused rather than given another number: scale the gains "
        "(nDCG, nDCGRel and RnDCG are the same for gains scaled by one factor; G is not).",
        "",
        "**Gains at a relevance level.** `threshold=` (trec_eval's `-l`) decides what is "
        "relevant, not what gains: nDCG, G, nDCGRel, RnDCG, RBP and ERR take every positive "
        "grade as gain at any threshold, as trec_eval's `ndcg`, `G`, `ndcg_rel`, `Rndcg` and "
        "`rbp` do under `-l`. At `threshold=2`, a grade-1 document is not relevant for AP or "
        "P@10 but still gains in nDCG, so nDCG equals its value at `threshold=1` (RnDCG is 0 "
        "for a query without a document at the level, as in trec_eval).",
        "",
        *peer_spellings_section(),
    ]
    return "\n".join(lines)


def peer_spellings_section() -> list[str]:
    """The measures page's table of the names trec_eval, ir_measures and ranx give the
    measures people report (``lexiframe.metrics.peer_spellings.PEER_TABLE``), each checked
    to read as its row's measure."""
    from lexiframe.metrics import parse_measure
    from lexiframe.metrics.peer_spellings import PEER_TABLE

    lines = [
        "## Names from trec_eval, ir_measures and ranx",
        "",
        "A measure may be named as trec_eval, ir_measures or ranx names it, wherever a name is "
        "read (`lf.evaluate`, `measures`, the command line's `-m`, the `.lexi` namespaces, "
        "Spark), and gives that tool's number. The output column carries lexiframe's name "
        "(`hit_rate@10` gives the column `Success@10`), so two names of one measure give one "
        "column. A blank cell: the tool has no name for the measure.",
        "",
        "| lexiframe | trec_eval | ir_measures | ranx |",
        "|---|---|---|---|",
    ]
    for row in PEER_TABLE:
        for spelling in row[1:]:
            assert not spelling or parse_measure(spelling).name == row.lexiframe, spelling
        lines.append("| " + " | ".join(f"`{cell}`" if cell else "" for cell in row) + " |")
    lines += [
        "",
        "- **ir_measures** computes most measures with pytrec_eval: its numbers are lexiframe's "
        'with `compat="pytrec_eval"` ([Reproducing](reproducing.md)), to the last bit, on '
        "the queries the run answered; ir_measures adds 0 for each judged query the run "
        "skipped (pytrec_eval and that setting leave it out), so its means count those "
        "zeros. `RR@k` and `Judged@k` come from its own code, which breaks score ties by "
        "document id ascending (trec_eval descending), and `nDCG(dcg='exp-log2')@k` and "
        "`ERR@k` from the TREC Web track's gdeval, which prints 5 decimals and refuses grades "
        "above 4. `rel=` is the measure's relevance level (`P(rel=2)@10`); `judged_only=True` "
        "is trec_eval's -J, set here for the whole evaluation (`condensed=True`), and "
        "`Bpref(rel=2)` and `infAP(rel=2)` are Bpref and infAP at `threshold=2`: those names "
        "are refused with what to write instead. `NumQ`, `SDCG` and the diversity and "
        "cwl_eval measures have no lexiframe measure and are refused. ir_measures' "
        "`RBP(rel=1)` (binary: every document graded 1 or more gains 1) comes from cwl_eval, "
        "which takes tied scores in the run's order and agrees within 1e-12.",
        "- **ranx** names are read as ranx spells them (lower case): `@k` is the cut-off "
        "(none: the whole ranking, so `precision`, `recall` and `f1` are the set measures) "
        "and `-l2` the relevance level (`map-l2` is `AP(rel=2)`; for `ndcg`, the grades "
        "below it gain nothing, as ranx drops them). `ndcg` takes the grades as gains "
        "(Järvelin and Kekäläinen), `ndcg_burges` 2^g - 1; `hits@k` counts the relevant "
        "documents in the top k, and `f1@k` is the F of P@k and R@k. The values are ranx's "
        "to the last bit, nDCG's and f1@k's within 1e-12 (ranx adds with NumPy's pairwise "
        "sum, and divides in another order), on rankings without tied scores: ranx orders "
        "ties its own way. ranx scores a query without a relevant document 0 (lexiframe "
        'leaves it out unless `no_relevant="keep"`), and its bpref divides by 0 for a '
        "query that judges no document relevant, or none non-relevant (ranx 0.3.21 then "
        "gives NaN or 0, for the other queries of the call too). Refused with the reason: "
        "`dcg` and `dcg_burges` (not normalised), `rbp.95` (ranx adds the raw grades; on "
        "binary qrels it is `RBP(p=0.95)`), `hit_rate` without a cut-off.",
        "- **PyTerrier** takes ir_measures' names and trec_eval's (`nDCG@10`, `AP(rel=2)`, "
        "`map`, `ndcg_cut_10`, `recip_rank`): both read here. **BEIR** reports pytrec_eval's "
        "`ndcg_cut_k`, `map_cut_k`, `recall_k` and `P_k` as `NDCG@10`, `MAP@100`, "
        "`Recall@100` and `P@10`, which read as `nDCG@10`, `AP@100`, `R@100` and `P@10` "
        '(its numbers with `compat="pytrec_eval"`), and `MRR@10` as `RR@10`; BEIR first '
        "removes the documents whose id is the query's (its `ignore_identical_ids`), which "
        "lexiframe does not: filter the run the same way to compare.",
        "",
    ]
    return lines


def measures_nav(config: str) -> str:
    """``mkdocs.yml`` with the Measures section of its nav listing every family's page."""
    import re

    from lexiframe.metrics import FAMILIES

    start = "      - All measures: measures.md\n"
    entries = "".join(
        f"      - {family.name}: measures/{measure_page_name(family)}\n" for family in FAMILIES
    )
    pattern = re.compile(re.escape(start) + r"(?:      - [^\n]*\n)*")
    if not pattern.search(config):
        raise SystemExit(f"mkdocs.yml has no line {start.strip()!r} under Measures")
    return pattern.sub(lambda _: start + entries, config, count=1)


def measure_pages() -> dict[str, str]:
    """``measures.md`` and ``measures/<family>.md``, by path under ``docs/``."""
    from lexiframe.metrics import FAMILIES

    pages = {"measures.md": measures_reference()}
    for family in FAMILIES:
        pages[f"measures/{measure_page_name(family)}"] = measure_page(family)
    return pages


# --- tutorial -----------------------------------------------------------------------------------

# Each step: prose, then code that runs in a fresh folder; the value of its last line (a
# frame or a text) is shown under it. The page is written from what the code returns.
TUTORIAL_STEPS: list[tuple[str, str]] = [
    (
        "A TREC track is a folder of run files, one per system (`query Q0 doc rank score "
        "system`), and a qrels file (`query 0 doc relevance`). lexiframe ships a synthetic "
        "track of 8 systems and 26 judged queries (25 of them with a relevant document) "
        "with graded judgments; write it out as such files:",
        """\
import warnings
from pathlib import Path

import polars as pl
import lexiframe as lf
from lexiframe import stats

track = lf.datasets.demo_track()
for (system,), rows in track.run.partition_by("system", as_dict=True).items():
    lf.write_trec_run(rows, f"runs/{system}.txt")
lf.write_trec_qrels(track.qrels, "qrels.txt")
Path("runs/sys000.txt").read_text().splitlines()[:3]""",
    ),
    (
        "## Read the files\n\n"
        "`read_run` reads every file of a folder (`.gz` too); the system id is the sixth "
        "field. `read_qrels` reads the judgments:",
        """\
run = lf.read_run("runs/")
qrels = lf.read_qrels("qrels.txt")
run.sort("system", "query", "score", descending=[False, False, True]).head(4)""",
    ),
    (
        "## The positions frame\n\n"
        "Every measure and preference is a function of one frame: per (system, query), the "
        "ranks of the retrieved relevant documents, the number of relevant documents $m$ "
        "(`n_rel`) and the ranking's length $\\tilde n$ (`n_ret`) "
        "([Definitions §1](definitions.md#data-model)); graded qrels add the grades, for "
        "graded nDCG (not shown). Queries that cannot be evaluated are counted in a warning, "
        "never dropped in silence:",
        """\
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    positions = run.lexi.positions(qrels)
print(caught[0].category.__name__ + ":", caught[0].message)
positions.sort("system", "query").head(4).drop("grades", "ideal_grades")""",
    ),
    (
        "## Measures per query, means per system\n\n"
        "The qrels are graded, so `nDCG@10` is trec_eval's graded `ndcg_cut_10`. ASL is a cost: "
        "lower is better ([measures](measures.md)).",
        """\
per_query = positions.lexi.measures(["RR", "AP", "nDCG@10", "ASL@g1-10"])
per_query.lexi.summarize().sort("AP", descending=True)""",
    ),
    (
        "## Preferences between rankings\n\n"
        "For every two systems of a query, lexicographic precision (sgnLP) and lexicographic "
        "recall (sgnLR) say which ranking is preferred "
        "([Definitions §3](definitions.md#preferences)); `first_difference` is $i^*$, the "
        "recall level that decided:",
        """\
prefs = positions.lexi.preferences(["sgnLP", "sgnLR"], extra=["first_difference"])
prefs.sort("query", "system_a", "system_b").head(4)""",
    ),
    (
        "## Orderings of the systems\n\n"
        "MC4 and Borda aggregate the per-query preferences; the mean orders by a metric "
        "([Definitions §4](definitions.md#aggregation)):",
        """\
orderings = {
    "MC4 sgnLP": prefs.lexi.order("sgnLP"),
    "Borda sgnLP": prefs.lexi.order("sgnLP", method="borda"),
    "MC4 sgnLR": prefs.lexi.order("sgnLR"),
    "mean RR": per_query.lexi.order("RR", method="mean"),
    "mean AP": per_query.lexi.order("AP", method="mean"),
}
pl.concat(
    [frame.select("system", "rank", ordering=pl.lit(name)) for name, frame in orderings.items()]
).pivot(on="ordering", index="system", values="rank").sort("MC4 sgnLP")""",
    ),
    (
        "## Significance\n\n"
        "Discriminative power is the fraction of the 28 system pairs significant at α = 0.05: "
        "the sign test for sgnLP and sgnLR, the paired t-test for the metrics, here after "
        "Holm's correction ([Definitions §5](definitions.md#analyses)):",
        """\
power = [
    stats.discriminative_power(prefs, ["sgnLP", "sgnLR"], correction="holm"),
    stats.discriminative_power(per_query, ["RR", "AP"], correction="holm"),
]
pl.concat(power, how="diagonal_relaxed").select(
    "measure", "test", "correction", "discriminative_power"
)""",
    ),
    (
        "A report table: each system's means, marked with the systems it is significantly "
        "better than (paired t-test, Holm), ready for a paper (`stats.to_latex` too):",
        """\
report = stats.report(per_query, ["RR", "AP", "ASL@g1-10"], lower_is_better=["ASL@g1-10"])
stats.to_markdown(report)""",
    ),
]

TUTORIAL_FIGURES = """\
## Figures

The `lexiframe.plot` functions draw these numbers ([Plots](api/plot.md)); the figures below
are drawn from this track. They need matplotlib, which the `plot` extra installs:

```bash
pip install 'lexiframe[plot]'
```

```python
from lexiframe import plot

order = orderings["MC4 sgnLP"]["system"].to_list()
ax = plot.preference_matrix(prefs.lexi.summarize(), "sgnLP", systems=order, values=True)
ax.figure.savefig("preferences.png")  # 150 dpi
plot.orderings(orderings)
```

![Mean sgnLP of each system over each other, in MC4 order](figures/preference_matrix.png)

Each cell is the mean sgnLP of the row's system over the column's: the MC4 order puts the
blue (preferred) cells above the diagonal.

![The ranks of each system under five orderings](figures/orderings.png)

The orderings agree on the best two systems and disagree in the middle, where lexicographic
recall (sgnLR) and the mean reciprocal rank see different things.

```python
positions = run.lexi.positions(qrels, docs=True)  # documents ids, to match them
plot.asl_histogram(positions, system="sys007")
plot.ties_by_recall_level(positions)
```

![Per-document ASL of the best system](figures/asl_histogram.png)

![Fraction of ranking pairs tied at each recall level](figures/ties_by_recall_level.png)
"""


def _cell_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        text = ", ".join(str(item) for item in value[:6])
        return f"[{text}{', …' if len(value) > 6 else ''}]"
    return "null" if value is None else str(value)


def markdown_table(frame: pl.DataFrame) -> str:
    """A frame as a Markdown table (floats to 4 significant digits, long lists cut)."""
    align = ["---:|" if dtype.is_numeric() else "---|" for dtype in frame.dtypes]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "".join(align)]
    for row in frame.iter_rows():
        lines.append("| " + " | ".join(_cell(_cell_value(value)) for value in row) + " |")
    return "\n".join(lines)


def _shown(value: object, printed: str) -> list[str]:
    import polars as pl

    out = []
    if printed.strip():
        out += ["```text", printed.rstrip(), "```", ""]
    if isinstance(value, pl.DataFrame):
        out += [markdown_table(value), ""]
    elif isinstance(value, str) and value.lstrip().startswith("|"):
        out += [value.rstrip(), ""]
    elif value is not None:
        text = "\n".join(value) if isinstance(value, list) else str(value)
        out += ["```text", text, "```", ""]
    return out


def tutorial() -> str:
    """The tutorial page: every step's code is run, and the page shows what it returned."""
    import ast
    import contextlib
    import io
    import os
    import tempfile

    lines = [
        "# Evaluate a TREC track",
        "",
        "From run files and qrels to measures, preferences, orderings, significance and "
        "figures. Every table below is the output of the code above it, run when this page "
        f"was generated (`{REGENERATE}`).",
        "",
    ]
    namespace: dict[str, object] = {}
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        os.mkdir("runs")
        try:
            for prose, code in TUTORIAL_STEPS:
                tree = ast.parse(code)
                last = tree.body.pop() if isinstance(tree.body[-1], ast.Expr) else None
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exec(compile(tree, "<tutorial>", "exec"), namespace)
                    value = (
                        eval(compile(ast.Expression(last.value), "<tutorial>", "eval"), namespace)
                        if last is not None
                        else None
                    )
                lines += [
                    prose,
                    "",
                    "```python",
                    code,
                    "```",
                    "",
                    *_shown(value, printed.getvalue()),
                ]
        finally:
            os.chdir(here)
    lines += [TUTORIAL_FIGURES]
    return "\n".join(lines)


# --- command line -----------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Help text as Markdown: one line, pipes escaped, and angle brackets outside code
    spans as entities (``<stem>`` would otherwise be read as an HTML tag and vanish)."""
    text = " ".join(text.split()).replace("|", "\\|")
    pieces = text.split("`")
    for index in range(0, len(pieces), 2):  # outside `code`
        pieces[index] = pieces[index].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(pieces)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": "lexiframe"}
    return _cell(text)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "—"
    if action.choices is not None:
        return " \\| ".join(f"`{choice}`" for choice in action.choices)
    metavar = action.metavar or action.dest.upper()
    kind = getattr(action.type, "__name__", None)
    text = f"`{metavar}`"
    if action.nargs in ("+", "*"):
        text = f"`{metavar} ...`"
    return text + (f" ({kind})" if kind and kind != "str" else "")


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if action.default is None or action.default is argparse.SUPPRESS or action.nargs == 0:
        return "—"
    return f"`{action.default}`"


def _usage(name: str, parser: argparse.ArgumentParser) -> str:
    parts = ["lexiframe", name]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            option = action.option_strings[-1]
            if action.nargs != 0:
                option += f" {action.metavar or action.dest.upper()}"
            parts.append(option if action.required else f"[{option}]")
        else:
            parts.append(f"{action.dest.upper()}{' ...' if action.nargs in ('+', '*') else ''}")
    return " ".join(parts)


def cli_reference() -> str:
    """The command-line page, generated from ``lexiframe.cli.build_parser()``."""
    from lexiframe.cli import build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        f"`lexiframe` — {_cell(parser.description or '')} Every subcommand prints its own help "
        "with `lexiframe <command> --help`.",
        "",
        f"Generated from the command's argument parser (`{REGENERATE}`).",
        "",
    ]
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    summaries = {choice.dest: choice.help for choice in commands._choices_actions}
    for name, sub in commands.choices.items():
        lines += [f"## `lexiframe {name}`", ""]
        description = sub.description or summaries.get(name) or ""
        if description:
            lines += [_cell(description[0].upper() + description[1:]), ""]
        lines += ["```", _usage(name, sub), "```", ""]
        options = [
            action for action in sub._actions if not isinstance(action, argparse._HelpAction)
        ]
        # A definition list, not a table: on a phone a table's last column (the meaning)
        # runs off the screen; a list puts it under its argument.
        for action in options:
            names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.dest}`"
            value = _value(action).replace(" \\| ", " | ")
            value = "" if value == "—" else f" {value}"
            default = _default(action)
            default = {"—": "", "`[]`": "", "required": " (required)"}.get(
                default, f" (default {default})"
            )
            lines += [f"{names}{value}", f":   {_help(action)}{default}", ""]
    lines += _trec_eval_names()
    lines += [
        "On bad input the command prints `lexiframe: error: ...` on standard error and exits "
        "with status 2, quoting at most about 100 characters of a bad line with its file and "
        "line number. Ctrl-C prints `lexiframe: interrupted` and exits with status 130; "
        "SIGTERM and SIGHUP exit with 143 and 129 (128 + the signal), from the moment the "
        "command starts; a signal it was started ignoring (`nohup`) stays ignored. "
        "`lexiframe` alone prints "
        "the help; `lexiframe --version` the version. Warnings print as `note: ...` on "
        "standard error. A run given as `-` is read from standard input; a named pipe or "
        "`/dev/stdin` is read too.",
        "",
        "Outputs are all or nothing. Every output path (`--output`, `--summary`, "
        "`--orderings`) is checked before any work: its folder exists or can be made, is "
        "writable and takes the name, and the path is no folder, no input, no file inside a "
        "folder read as input and no other output. Each table is written to a hidden "
        "temporary file beside its target (its folder made then), and all are renamed over "
        "their targets only when all are written: a failure (a full disk, a file-size "
        "limit) or a signal before that removes every temporary file and the folders made, "
        "and replaces no output, and the error names the outputs. A target that is a symbolic "
        "link stays one (the file it points to is replaced), and an existing file keeps its "
        "permission bits.",
        "",
        "Run files are read a batch at a time, in bounded memory whatever their layout: one "
        "file per run, runs sharded by query over several files, all systems in one file "
        "(read in pieces of whole rankings). A ranking whose rows are in two batches (a "
        "query of one system split between files, or rows scattered through a file) is "
        "ranked again at the end from its rows alone; when they are many, a note says how "
        "many rows that holds at once. Two files holding the same ranking with a document "
        "in both are named in the error (two runs with one run tag?).",
        "",
        "Several qrels at once: `lexiframe evaluate --qrels human=qrels.txt --qrels "
        "llm=llm-qrels.txt RUNS` evaluates every run against every qrels in one evaluation "
        "(`lf.concat_qrels` and `by=\"qrels\"` in Python). The per-query tables and the "
        "summaries have a `qrels` column naming each, each qrels evaluates its own queries, "
        "and each ordering is printed once per qrels (`AP (mean) qrels=llm`). A bare "
        "`--qrels FILE` given once evaluates as one qrels, without the column (a file whose "
        "name holds `=` is read as a file); with names, `-q` (trec_eval's format, one qrels) "
        "is refused: write the table with `-o`. A name given twice or an empty name or file "
        "is an error.",
        "",
    ]
    return "\n".join(lines)


TREC_EVAL_NOTES = """\
## `lexiframe trec_eval`: a drop-in for trec_eval

`lexiframe trec_eval [-q] [-c] [-n] [-J] [-l LEVEL] [-M DEPTH] [-N NUM] [-m MEASURE]...
QRELS RUN...` reads trec_eval's flags and measure names and prints its lines:
`measure<TAB>query<TAB>value`, the name padded to 22 characters, counts as integers and
other values with 4 decimals; with `-q` the values of each query (queries in trec_eval's
order, by their ids as strings), then the `all` lines (`runid`, `num_q`, the means; the
counts `num_ret`, `num_rel`, `num_rel_ret` are sums; `gm_map` a geometric mean). Scripts
that parse trec_eval's output keep working. Several run files print one block each, in the
order given, as successive trec_eval calls would; each file is one run, named by the run id
of its last line. The runs are read a batch of files at a time (about 400,000 lines) in
one thread, ranked in a second and measured and printed in the main one, so that the three
overlap, and the output is written once the last run is done: memory holds a few batches
rather than the runs, and a bad line in the last file prints nothing. One command over
many runs takes less than half the time of trec_eval run once per run
([Benchmarks](benchmarks.md#the-trec_eval-drop-in-beside-nist-trec_eval)).

- `-m NAME` (repeatable), `-m NAME.PARAMS` (`P.5,10`, `ndcg_cut.10`, `rbp.p=0.8`),
  trec_eval's printed names (`P_5`, `ndcg_cut_10`), and the nicknames `official` (the
  default) and `all_trec`. A nickname prints the measures lexiframe computes and leaves
  out the others; a measure asked for by name that lexiframe does not compute is an error.
- `-q`: per-query lines. `-c`: average over every query of the qrels (a query the run
  skipped scores 0). `-l LEVEL`: the lowest relevant grade (nDCG, RBP, G, `ndcg_rel` and
  `Rndcg`, as in trec_eval, keep every positive grade as their gain). `-M DEPTH`: the top
  DEPTH documents of each ranking. `-J`: rank only the judged documents (condensed
  rankings, after `-M`). `-n`: no `all` lines. `-N NUM`: the collection size, which
  trec_eval reads for `utility` only: its fourth weight (`-m utility.1,-1,0,0.01`, the
  non-relevant documents not retrieved) needs it, and without `-N` the drop-in refuses such
  a weight (trec_eval would count a collection of 0 documents). `-R qrels`,
  `-T trec_results` and `-D 0`, trec_eval's defaults, are accepted.
- With `-c`, trec_eval scores a query the run skipped on a stand-in ranking of one
  unjudged document, then prints 0 for its `num_ret`, `utility` and `rbp_resid`; under
  parameters (`utility_2,-1,0,0`, `rbp_resid_p=0.8`) the last two keep the stand-in's
  value, and so does the drop-in. `Rndcg` is 0 for a query without a relevant document at
  the `-l` level, as in trec_eval, though its gains are the grades.
- With `-J`, a condensed ranking may be empty (every document it retrieved unjudged, or
  the stand-in of a skipped query): trec_eval's interpolated precision then starts from
  0/0, and `iprec_at_recall` at the levels that round to no relevant document (0.00
  always), `11pt_avg` and their means print `-nan`, as the drop-in prints them. The
  measures themselves (`IPrec@0.0`, `IPrecAvg`) are 0 on an empty ranking on every other
  path.
- `Rndcg` with gains that leave a query with a relevant document no positive gain
  (`Rndcg.2=0` where every relevant document has grade 2) averages no nDCG: trec_eval
  divides 0 by 0 and prints `-nan` for the query and the mean, as the drop-in prints them.
  The measure itself (`RnDCG(gains={2: 0})`) is 0 there on every other path, as nDCG is
  for a query without a positive ideal gain.
- `-m NAME.PARAMS` with trec_eval's parameters: `set_F.0.5` is `SetF(beta=0.5)`,
  `rbp.p=0.8` is `RBP(p=0.8)`, and gains per grade for `ndcg`, `G`, `ndcg_rel` and
  `Rndcg` are the measure with `gains=`: `ndcg.1=1,2=5` is `nDCG(gains={1: 1, 2: 5})`,
  `G.0=0,1=3,2=7` is `G(gains={0: 0, 1: 3, 2: 7})`, `ndcg_rel.1=1,2=5` and `Rndcg.2=7`
  are `nDCGRel(gains={1: 1, 2: 5})` and `RnDCG(gains={2: 7})`. Refused with the reason: a
  gain map that trec_eval's sort takes out of order for a query (its comparison cuts the
  difference of two gains to a whole number, so gains less than 1 apart tie:
  `ndcg.1=2.5,2=2`, `G.1=0.5`), pairs with a fractional gain out of grade order (their
  order decides such ties), a gain for grade 0 or below (the documents judged non-relevant
  or unjudged: `G.0=1`), gains per grade for `rbp` (trec_eval scales them by a minimum and
  maximum it reads uninitialised) and `rbp_resid` (trec_eval ignores them), and any
  parameter of `binG`.
- A judgment with a negative grade marks a pooled document left unassessed, as in
  trec_eval: `infAP` counts it, `unj` counts it as unjudged, and `-J` removes it.

Where it differs from trec_eval 10.0: without `-c`, a judged query the run skipped is left
out of the means (trec_eval's documented behaviour; trec_eval 10.0 stops with "result qid
not found in qrels"); several runs in one call; the
formats of `-R`/`-T` other than TREC's are not read, `-D` above 0 (trec_eval's debugging
output of its internals) is refused, a `utility` weight for the non-relevant documents not
retrieved needs `-N`, and `-Z` (z-scores against a file of means) is not offered.
trec_eval 10's `rbp` reads the minimum and maximum of its gain scaling uninitialised, so
after `ndcg` or `G` in one call it can print another number (`-m ndcg -m rbp` against
`-m rbp`); the drop-in prints the value of `rbp` alone. trec_eval 10 ranks by the score
as a double, as the drop-in does; pytrec_eval (trec_eval 9's code inside ir_measures and
PyTerrier) ranks by a 32-bit float, so scores that are equal at float precision tie there
(and are ordered by document id) and not here: values can differ from pytrec_eval's on runs
with such scores.

How each trec_eval measure reads (generated from `lexiframe.metrics.trec_eval`: a measure
the registry understands under trec_eval's name joins this table by itself):

"""


def _trec_eval_names() -> list[str]:
    from lexiframe.metrics.trec_eval import markdown_names

    return [TREC_EVAL_NOTES + markdown_names()]


def pages() -> dict[str, str]:
    """Every generated page, by path under ``docs/``."""
    return {**measure_pages(), "cli.md": cli_reference(), "tutorial.md": tutorial()}


def _method_parameter(family: Family, key: str, default: object) -> str:
    """A family parameter as a keyword of its method: typed by its default or choices,
    ``None`` standing for the family's default (stated once, in the catalogue)."""
    from lexiframe.metrics import converters

    if family.choices.get(key):
        kind = "Literal[" + ", ".join(repr(c) for c in family.choices[key]) + "]"
    elif key == "gains" and family.converters.get(key) is converters.ndcg_gains:
        kind = "Mapping[int, float] | Literal['exp']"
    elif key == "gains":
        kind = "Mapping[int, float]"
    elif isinstance(default, tuple):
        kind = "Sequence[float]"
    elif key == "rel":
        kind = "int"
    else:
        kind = type(default).__name__
    return f"{key}: {kind} | None = None"


def _needs_variants(family: Family) -> list[Needs]:
    """What a family's measures read at its defaults and with each parameter changed (each
    choice, a number one more), for the keywords its method takes."""
    from lexiframe.metrics import Measure

    if not callable(family.needs):
        return [family.needs]
    variants = [Measure(family)]
    for key, default in family.params.items():
        values = list(family.choices.get(key, ()))
        if isinstance(default, int | float) and not isinstance(default, bool):
            values.append(default + 1)
        variants += [Measure(family, params=((key, value),)) for value in values]
    return [family.needs(measure) for measure in variants]


def expression_methods() -> str:
    """The source of ``lexiframe/_measure_methods.py``: one method per family that has a
    ``method`` name, delegating to :func:`lexiframe.metrics.expression.measure_expr`."""
    from lexiframe.metrics import FAMILIES, Measure

    out = [
        '"""The ``.lexi`` expression methods of the measures, one per measure family, generated',
        "from the catalogue (``lexiframe.metrics.catalogue``) by ``python docs/generate.py``:",
        "edit the family's declaration, not this file.",
        "",
        "Each method is the family's measure over the ranks of a positions list column, as",
        ":func:`lexiframe.measures` computes it under the measure's name; a parameter left",
        "``None`` takes the family's default.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping, Sequence",
        "from typing import Literal",
        "",
        "import polars as pl",
        "",
        "from lexiframe._utils import IntoExpr",
        "from lexiframe.metrics.expression import measure_expr",
        "from lexiframe.metrics.parts import IntoCount",
        "",
        "",
        "class MeasureMethods:",
        '    """The measures of :mod:`lexiframe.metrics` as methods of ``Expr.lexi``."""',
        "",
        "    _expr: pl.Expr",
    ]
    for family in FAMILIES:
        if family.method is None:
            continue
        needs = family.needs(Measure(family)) if callable(family.needs) else family.needs
        may_need_n = any(variant.n for variant in _needs_variants(family))
        cutoff_name = (
            "first" if family.cutoff_prefix else "cutoff" if family.fractional_cutoff else "k"
        )
        cutoff_type = "float" if family.fractional_cutoff else "int"
        args = ["self"]
        if family.cutoff == "required":
            args.append(f"{cutoff_name}: {cutoff_type}")
        elif family.cutoff == "optional":
            args.append(f"{cutoff_name}: {cutoff_type} | None = None")
        args.append("*")
        args += [_method_parameter(family, key, value) for key, value in family.params.items()]
        args.append('n_rel: IntoCount = "n_rel"')
        passed = ["n_rel=n_rel"]
        if may_need_n:
            args.append("n: IntoCount | None = None")
            passed.append("n=n")
        if needs.grades or needs.requires_grades:
            args += ["grades: IntoExpr | None = None", "ideal_grades: IntoExpr | None = None"]
            passed += ["grades=grades", "ideal_grades=ideal_grades"]
        if "n_ret" in needs.columns:
            args += ['n_ret: IntoCount = "n_ret"', "depth: IntoCount | None = None"]
            passed += ["n_ret=n_ret", "depth=depth"]
        passed += [f"{key}={key}" for key in family.params]
        cutoff_arg = cutoff_name if family.cutoff != "none" else "None"
        defaults = ", ".join(
            f"{key}={_param_value(value)!r}" for key, value in family.params.items()
            if value is not None
        )
        example = family.example or family.name
        about = (
            f"The measure ``{family.name}`` of :func:`lexiframe.measures` over the ranks in "
            f"this list column (e.g. ``{example}``)"
            + (f"; defaults {defaults}" if defaults else "")
            + f". Source: {family.source}; docs/measures/{measure_page_name(family)}."
        )
        wrap = textwrap.TextWrapper(width=92, initial_indent=" " * 8, subsequent_indent=" " * 8)
        # The first sentence: the whole summary is on the measure's page, linked below.
        first = re.match(r"(.*?\.)(?:\s|$)", family.summary)
        summary = wrap.fill(first.group(1) if first else family.summary).lstrip()
        lines = [
            "",
            f"    def {family.method}(",
            *(f"        {arg}," for arg in args),
            "    ) -> pl.Expr:",
            f'        """{summary}',
            "",
            wrap.fill(about),
            '        """',
            "        return measure_expr(",
            f'            "{family.name}", self._expr, {cutoff_arg}, {", ".join(passed)}',
            "        )",
        ]
        out += lines
    return "\n".join(out) + "\n"


def files() -> dict[Path, str]:
    """Every generated file: the pages under ``docs/`` and ``mkdocs.yml`` (the measures nav)."""
    out = {DOCS / name: text for name, text in pages().items()}
    out[CONFIG] = measures_nav(CONFIG.read_text(encoding="utf-8"))
    out[METHODS] = _formatted(expression_methods())
    return out


def _formatted(source: str) -> str:
    """Python source as ``ruff format`` writes it (the project's style), else as it is."""
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(METHODS), "-"],
            input=source, capture_output=True, text=True, check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return source
    return done.stdout


def stale() -> list[str]:
    """The generated files whose committed text differs from the generated one."""
    out = []
    for path, text in files().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(str(path.relative_to(DOCS.parent)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="only report stale pages")
    if args.parse_args(argv).check:
        names = stale()
        for name in names:
            print(f"{name} is stale: run {REGENERATE}", file=sys.stderr)
        return 1 if names else 0
    for path, text in files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
