"""One positions-options object: each default is stated in options.py alone, and every path
that builds a positions frame starts from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lexiframe.cli import build_parser
from lexiframe.cli._shared import track_options
from lexiframe.options import PositionsOptions

PACKAGE = Path(__file__).resolve().parents[1] / "lexiframe"

# A default of a positions option written out again: a signature (``threshold: int = 1``),
# a keyword (``threshold=1``), an argparse default next to its flag.
RESTATED = [
    re.compile(r"\bthreshold(?:: *(?:int|float))? *= *1\b"),
    re.compile(r"\bno_relevant(?:: *\w+)? *= *\"drop\""),
    re.compile(r"\brank_by(?:: *\w+)? *= *\"score\""),
    re.compile(r"\bties(?:: *\w+)? *= *\"trec_eval\""),
    re.compile(r"--ties\",\s*choices=[^\n]*,\s*default=\"trec_eval\""),
    re.compile(r"\blabels(?:: *[\w| ]+)? *= *\"grades\""),
    re.compile(r"--threshold\",\s*type=int,\s*default=1\b"),
    re.compile(r"--no-relevant\",\s*choices=[^\n]*,\s*default=\"drop\""),
    re.compile(r"\"-l\",\s*dest=\"level\",\s*type=int,\s*default=1\b"),
]


def test_the_defaults_are_stated_in_options_py_alone():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "options.py":
            continue
        text = path.read_text(encoding="utf-8")
        # Docstrings and comments may name the defaults.
        code = re.sub(r'"""[\s\S]*?"""|#[^\n]*', "", text)
        name = path.relative_to(PACKAGE)
        for pattern in RESTATED:
            found += [f"{name}: {match.group(0)!r}" for match in pattern.finditer(code)]
    assert found == [], "read the default from PositionsOptions instead"


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_the_command_line_defaults_are_the_options_defaults(command):
    args = build_parser().parse_args([command, "--qrels", "q.txt", "run.txt"])
    assert track_options(args, []) == PositionsOptions()


def test_the_drop_in_level_defaults_to_the_threshold():
    args = build_parser().parse_args(["trec_eval", "q.txt", "run.txt"])
    assert args.level == PositionsOptions.threshold


# The other defaults a user meets, each stated in its home module alone: RBP's persistence,
# MC4's damping, the resampling replicates, ERR's top grade.
HOMES = {
    "metrics/exprs.py": [
        re.compile(r"\bp: *float *= *0\.8\b|\"p\": *0\.8\b"),
        re.compile(r"\bmax_grade: *int *= *4\b"),
    ],
    "mc4.py": [re.compile(r"\bdamping: *float *= *0\.15\b|MC4_DAMPING *= *0\.15")],
    "intervals.py": [re.compile(r"\bn_replicates: *int *= *1_?000\b")],
}


@pytest.mark.parametrize("home", list(HOMES))
def test_every_other_default_is_stated_in_its_home_alone(home):
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name == home:
            continue
        code = re.sub(r'"""[\s\S]*?"""|#[^\n]*', "", path.read_text(encoding="utf-8"))
        for pattern in HOMES[home]:
            found += [f"{name}: {match.group(0)!r}" for match in pattern.finditer(code)]
    assert found == [], f"read the default from {home} instead"
