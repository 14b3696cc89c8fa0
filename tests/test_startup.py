"""What importing lexiframe loads: heavy optional libraries only where they are used.

Each check runs a fresh interpreter, since the test process has long imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

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
