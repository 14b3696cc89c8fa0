"""What importing lexiframe loads: heavy optional libraries only where they are used.

Each check runs a fresh interpreter, since the test process has long imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("scipy", "pandas", "matplotlib", "pyarrow")


def loaded_after(code: str) -> set[str]:
    """The top-level packages among HEAVY that a fresh interpreter holds after ``code``."""
    script = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted({{name.split('.')[0] for name in sys.modules}})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1])) & set(HEAVY)


def test_import_lexiframe_loads_no_heavy_library() -> None:
    assert loaded_after("import lexiframe") == set()


def test_import_stats_loads_no_scipy() -> None:
    loaded = loaded_after("import lexiframe.stats\nfrom lexiframe.stats import *")
    assert "scipy" not in loaded


def test_cli_help_loads_no_heavy_library() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from lexiframe.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])"
    )
    assert loaded_after(code) & {"scipy", "pandas", "matplotlib"} == set()


def test_cli_demo_loads_neither_pandas_nor_scipy() -> None:
    code = (
        "import contextlib, io\n"
        "from lexiframe.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['demo'])"
    )
    assert loaded_after(code) & {"scipy", "pandas", "matplotlib"} == set()


def test_scipy_is_imported_when_a_test_needs_it() -> None:
    code = "import lexiframe as lf\nassert lf.stats.sign_test([3], [1]).shape == (1,)"
    assert "scipy" in loaded_after(code)


PANDAS_RUN = """
run = pd.DataFrame({"system": ["a", "a"], "query": ["q1", "q1"], "doc": ["d1", "d2"],
                    "score": [2.0, 1.0]})
qrels = pd.DataFrame({"query": ["q1"], "doc": ["d2"], "relevance": [1]})
assert run.lexi.evaluate(qrels, ["RR"])["RR"].tolist() == [0.5]
"""


@pytest.mark.parametrize(
    "imports",
    [
        "import lexiframe\nassert 'pandas' not in sys.modules\nimport pandas as pd",
        "import pandas as pd\nimport lexiframe",
        "import lexiframe\nfrom pandas import DataFrame\nimport pandas as pd",
    ],
    ids=["lexiframe-first", "pandas-first", "from-pandas-import"],
)
def test_pandas_accessor_registers_whichever_is_imported_first(imports: str) -> None:
    code = f"import sys\n{imports}\n{PANDAS_RUN}"
    subprocess.run([sys.executable, "-c", code], check=True)


def lexiframe_modules_after(code: str) -> set[str]:
    """The lexiframe modules a fresh interpreter holds after ``code``."""
    script = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith('lexiframe'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_trec_eval_drop_in_loads_neither_stats_nor_datasets() -> None:
    """The drop-in's start-up is on its critical path (a whole process per call): the
    analyses and the demo track are loaded by the commands that use them."""
    toy = Path(__file__).parent / "data" / "toy"
    code = (
        "import contextlib, io\n"
        "from lexiframe.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['trec_eval', {str(toy / 'qrels.txt')!r}, "
        f"{str(sorted((toy / 'runs').iterdir())[0])!r}]) == 0"
    )
    loaded = lexiframe_modules_after(code)
    assert "lexiframe.cli.trec_eval" in loaded  # the command did run
    assert {name.split(".")[1] for name in loaded if name.count(".")} & {
        "stats",
        "datasets",
    } == set()


def test_demo_still_loads_what_it_needs() -> None:
    code = (
        "import contextlib, io\n"
        "from lexiframe.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['demo'])"
    )
    assert {"lexiframe.datasets", "lexiframe.stats"} <= lexiframe_modules_after(code)


def test_commands_without_analyses_are_every_other_subcommand() -> None:
    """:data:`WITHOUT_ANALYSES` leaves out of the parser exactly compare and compare-qrels,
    and each of its commands parses as in the full parser."""
    import argparse

    from lexiframe.cli import WITHOUT_ANALYSES, build_parser

    def names(parser: argparse.ArgumentParser) -> set[str]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(action.choices)

    every = names(build_parser())
    assert every - set(WITHOUT_ANALYSES) == {"compare", "compare-qrels"}
    for command in WITHOUT_ANALYSES:
        assert names(build_parser(command)) == set(WITHOUT_ANALYSES)
    assert names(build_parser("compare")) == every
    assert names(build_parser("no-such-command")) == every  # its error lists them all
