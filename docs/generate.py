"""Write the documentation pages that are generated from code.

    python docs/generate.py          # (re)write the pages
    python docs/generate.py --check  # exit 1 and name the stale pages

- ``measures.md`` and ``measures/<family>.md``: from the measure registry
  (``lexiframe.metrics.registry.markdown_pages``);
- ``cli.md``: from the argument parser of the ``lexiframe`` command
  (``lexiframe.cli.build_parser``).

``tests/test_docs.py`` checks that the committed pages equal the generated ones.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REGENERATE = "python docs/generate.py"


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
    from lexiframe.metrics.registry import markdown_pages

    return {**markdown_pages(), "cli.md": cli_reference()}


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
