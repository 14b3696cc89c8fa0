"""Write the documentation pages that are generated from code.

    python docs/generate.py          # (re)write the pages
    python docs/generate.py --check  # exit 1 and name the stale pages

- ``measures.md`` and ``measures/<family>.md``: from the measure registry
  (``lexiframe.metrics.FAMILIES``): summary, names, LaTeX formula and an example whose
  table is computed by running the code shown on the page;
- ``cli.md``: from the argument parser of the ``lexiframe`` command
  (``lexiframe.cli.build_parser``).

``tests/test_docs.py`` checks that the committed pages equal the generated ones.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from lexiframe.metrics import Family

DOCS = Path(__file__).resolve().parent
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

positions = pl.DataFrame(
    {
        "system": ["a", "b", "c"],
        "query": ["q1", "q1", "q1"],
        "positions": [[1, 3, 7], [2, 3, 4, 9], []],
        "n_rel": [4, 4, 4],
        "n_ret": [10, 10, 0],
    },
    schema_overrides={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32},
)"""
EXAMPLE_N = 1000


def measure_page_name(family: Family) -> str:
    """The file name of a family's documentation page, e.g. ``rr.md``."""
    return f"{family.name.lower()}.md"


def _cutoff_text(family: Family) -> str:
    if family.cutoff == "none":
        return "—"
    return f"{family.cutoff} (`{family.name}@{family.cutoff_prefix}10`)"


def _example_frame() -> pl.DataFrame:
    namespace: dict[str, object] = {}
    exec(EXAMPLE_CODE, namespace)  # the code shown on the page is the code that runs
    return namespace["positions"]  # type: ignore[return-value]


def _number(value: float | None) -> str:
    return "null" if value is None else f"{value:.4f}".rstrip("0").rstrip(".")


def _example(family: Family) -> list[str]:
    """The example section of a family's page: code, and the table it returns."""
    from lexiframe.evaluation import measures
    from lexiframe.metrics import parse_measure

    name = family.example or family.name
    positions = _example_frame()
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
        EXAMPLE_CODE,
        call,
        "```",
        "",
        f"| system | {column} |",
        "|---|---|",
        *rows,
        "",
    ]


def measure_page(family: Family) -> str:
    """The documentation page of one measure family, generated from its registry entry."""
    names = ", ".join(f"`{name}`" for name in (family.name, *family.aliases))
    if family.params:
        params = []
        for key, value in family.params.items():
            text = f"`{key}={value!r}`"
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
        "| | |",
        "|---|---|",
        f"| names | {names} |",
        f"| cutoff | {_cutoff_text(family)} |",
        f"| parameters | {parameters} |",
        f"| source | {family.source} |",
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
        f"{NOTATION.format(up='')} Each family has a page with its parameters and an example.",
        "",
        "| name | cutoff | parameters | definition | formula | source |",
        "|---|---|---|---|---|---|",
    ]
    for family in FAMILIES:
        cutoff = {"none": "—", "optional": "optional", "required": "required"}[family.cutoff]
        if family.cutoff != "none":
            cutoff += f" (`{family.name}@{family.cutoff_prefix}10`)"
        params = ", ".join(f"`{key}={value!r}`" for key, value in family.params.items()) or "—"
        link = f"[`{family.name}`](measures/{measure_page_name(family)})"
        names = " ".join([link, *(f"`{name}`" for name in family.aliases)])
        lines.append(
            f"| {names} | {cutoff} | {params} | {family.summary} | ${family.formula}$ | "
            f"{family.source} |"
        )
    lines += [
        "",
        "trec_eval's spellings of cut-off measures are understood too: `P_10`, `recall_1000`, "
        "`ndcg_cut_10`, `map_cut_100`.",
        "",
    ]
    return "\n".join(lines)


def measure_pages() -> dict[str, str]:
    """``measures.md`` and ``measures/<family>.md``, by path under ``docs/``."""
    from lexiframe.metrics import FAMILIES

    pages = {"measures.md": measures_reference()}
    for family in FAMILIES:
        pages[f"measures/{measure_page_name(family)}"] = measure_page(family)
    return pages


# --- command line -----------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


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
        if options:
            lines += ["| argument | value | default | meaning |", "|---|---|---|---|"]
            for action in options:
                names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.dest}`"
                lines.append(
                    f"| {names} | {_value(action)} | {_default(action)} | {_help(action)} |"
                )
            lines.append("")
    lines += _trec_eval_names()
    lines += [
        "On bad input the command prints `lexiframe: error: ...` on standard error and exits "
        "with status 2.",
        "",
    ]
    return "\n".join(lines)


TREC_EVAL_NOTES = """\
## `lexiframe trec_eval`: a drop-in for trec_eval

`lexiframe trec_eval [-q] [-c] [-l LEVEL] [-M DEPTH] [-m MEASURE]... QRELS RUN...` reads
trec_eval's flags and measure names and prints its lines: `measure<TAB>query<TAB>value`, the
name padded to 22 characters, counts as integers and other values with 4 decimals; with
`-q` the values of each query (queries in trec_eval's order, by their ids as strings), then
the `all` lines (`runid`, `num_q`, the means; the counts `num_ret`, `num_rel`,
`num_rel_ret` are sums; `gm_map` a geometric mean). Scripts that parse trec_eval's output
keep working. Several run files print one block each, in the order given, as successive
trec_eval calls would; each file is one run, named by the run id of its last line.

- `-m NAME` (repeatable), `-m NAME.PARAMS` (`P.5,10`, `ndcg_cut.10`, `rbp.p=0.8`),
  trec_eval's printed names (`P_5`, `ndcg_cut_10`), and the nicknames `official` (the
  default) and `all_trec`. A nickname prints the measures lexiframe computes and leaves
  out the others; a measure asked for by name that lexiframe does not compute is an error.
- `-q`: per-query lines. `-c`: average over every query of the qrels (a query the run
  skipped scores 0). `-l LEVEL`: the lowest relevant grade (nDCG and RBP, as in
  trec_eval, keep every positive grade as their gain). `-M DEPTH`: the top DEPTH documents
  of each ranking.

Where it differs from trec_eval 10.0: without `-c`, a judged query the run skipped is left
out of the means (trec_eval's documented behaviour; trec_eval 10.0 stops with "result qid
not found in qrels"); several runs in one call; the formats of `-R`/`-T` other than TREC's
are not read.

How each trec_eval measure reads (generated from `lexiframe.metrics.trec_eval`: a measure
the registry understands under trec_eval's name joins this table by itself):

"""


def _trec_eval_names() -> list[str]:
    from lexiframe.metrics.trec_eval import markdown_names

    return [TREC_EVAL_NOTES + markdown_names()]


def pages() -> dict[str, str]:
    """Every generated page, by path under ``docs/``."""
    return {**measure_pages(), "cli.md": cli_reference()}


def stale() -> list[str]:
    """The generated pages whose committed text differs from the generated one."""
    out = []
    for name, text in pages().items():
        path = DOCS / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(name)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="only report stale pages")
    if args.parse_args(argv).check:
        names = stale()
        for name in names:
            print(f"docs/{name} is stale: run {REGENERATE}", file=sys.stderr)
        return 1 if names else 0
    for name, text in pages().items():
        path = DOCS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
