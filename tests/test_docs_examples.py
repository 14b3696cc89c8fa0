"""Every example of README.md and docs/ runs as a reader pastes it, in an empty folder.

Each page's fenced ``python`` blocks run in order in one fresh interpreter (one namespace),
in an empty temporary folder, and so do its shell lines that call ``lexiframe`` or
``python`` (``bash`` blocks), at their place among the python blocks. Lines that install,
test or serve (``pip``, ``pytest``, ``mkdocs``, a virtual environment) are not run, nor
lines that run a script of a checkout of the repository (``benchmarks/run.py``: minutes;
the test checks that the script and each of its flags exist). A block is skipped only when
it says so on its first line, visibly (``# not run by the documentation tests: <reason>``),
or when it needs PySpark or Java and they are missing.

The generated measure pages (``docs/measures/*.md``) run in one interpreter, each page in
a fresh namespace and folder: 36 interpreters would cost more than the pages.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MEASURE_PAGES = sorted((ROOT / "docs" / "measures").glob("*.md"))
API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))

SKIP_MARK = "# not run by the documentation tests:"
SHELLS = ("bash", "sh", "shell", "console")
# commands that install, test or serve: a reader runs them once, the suite does not
NOT_RUN = re.compile(
    r"^(pip|python3? -m (pip|venv|pytest)|pytest|mkdocs|\. |source |export |env/bin/|"
    r"spark-submit)"
)
CHECKOUT_SCRIPT = re.compile(r"^python3? (benchmarks/\S+\.py)(.*)$")


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, in order, dedented (admonitions, tabs)."""
    out = []
    fence = re.compile(r"^( *)```(\w*)[^\n]*$")
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = fence.match(lines[index])
        if not match:
            index += 1
            continue
        indent, language, start = match.group(1), match.group(2), index
        index += 1
        body = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index])
            index += 1
        index += 1
        code = textwrap.dedent("\n".join(body)) if indent or body else ""
        out.append(Block(language, code, start + 1))
    return out


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped, ``a &&
    b`` split."""
    joined = re.sub(r"\s*\\\n\s*", " ", code)
    commands = []
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        commands += [part.strip() for part in line.split("&&") if part.strip()]
    return commands


def steps(page: Path, text: str | None = None) -> list[dict[str, object]]:
    """What a reader of ``page`` runs: python blocks and shell commands, in order."""
    out: list[dict[str, object]] = []
    text = page.read_text(encoding="utf-8") if text is None else text
    for block in blocks(text):
        where = f"{page.relative_to(ROOT)}:{block.line}"
        first = block.code.lstrip().split("\n", 1)[0]
        if first.startswith(SKIP_MARK):
            continue
        if block.language == "python":
            out.append({"kind": "python", "code": block.code, "where": where})
        elif block.language in SHELLS:
            for command in shell_commands(block.code):
                if NOT_RUN.match(command):
                    continue
                script = CHECKOUT_SCRIPT.match(command)
                if script:
                    out.append({"kind": "script", "code": command, "where": where})
                elif command.startswith(("lexiframe", "python")):
                    out.append({"kind": "shell", "code": command, "where": where})
    return out


# Runs in the fresh interpreter: each page's steps, a namespace and a folder per page.
DRIVER = r"""
import json, os, subprocess, sys, tempfile, traceback
pages = json.load(sys.stdin)
for page in pages:
    folder = tempfile.mkdtemp(prefix="docs-example-")
    os.chdir(folder)
    namespace = {"__name__": "__main__"}
    for step in page:
        if step["kind"] == "python":
            try:
                exec(compile(step["code"], step["where"], "exec"), namespace)
            except BaseException:
                traceback.print_exc()
                sys.exit(f"FAILED: the python block at {step['where']}")
        else:
            done = subprocess.run(step["code"], shell=True, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(
                    f"FAILED (exit {done.returncode}): {step['code']!r} at {step['where']}\n"
                    f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
                )
    sys.stdout.flush()
"""


def run_pages(pages: list[list[dict[str, object]]], timeout: int = 300) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    bin_dir = str(Path(sys.executable).parent)  # the `lexiframe` command of this Python
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    # The pages' folders (and what their examples write to the temporary folder) inside one
    # folder of this test, removed with it.
    with tempfile.TemporaryDirectory(prefix="docs-examples-") as base:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER],
            input=json.dumps(pages),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**env, "TMPDIR": base},
        )
    assert done.returncode == 0, f"{done.stderr[-6000:]}"


def _needs_spark(page_steps: list[dict[str, object]]) -> bool:
    return any(
        "spark" in str(step["code"]).lower() for step in page_steps if step["kind"] != "script"
    )


def _spark_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        return "PySpark is not installed"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed"
    return None


@pytest.mark.parametrize(
    "page", [page for page in PAGES + API_PAGES if steps(page)], ids=lambda page: page.name
)
def test_page_examples_run_in_an_empty_folder(page: Path) -> None:
    page_steps = [step for step in steps(page) if step["kind"] != "script"]
    if _needs_spark(page_steps) and (reason := _spark_missing()):
        if os.environ.get("LEXIFRAME_REQUIRE_SPARK") == "1":
            pytest.fail(f"{page.name} needs Spark: {reason}")
        pytest.skip(f"{page.name} needs Spark: {reason}")
    run_pages([page_steps])


def test_measure_pages_examples_run() -> None:
    pages = [steps(page) for page in MEASURE_PAGES]
    assert len(pages) >= 30 and all(pages)
    run_pages(pages)


def test_checkout_scripts_and_their_flags_exist() -> None:
    scripts = [step for page in PAGES for step in steps(page) if step["kind"] == "script"]
    assert scripts, "the pages name no script of the checkout: update this test"
    helps: dict[str, str] = {}
    for step in scripts:
        match = CHECKOUT_SCRIPT.match(str(step["code"]))
        assert match is not None
        script, rest = match.groups()
        assert (ROOT / script).is_file(), f"{step['where']}: no {script} in the checkout"
        if script not in helps:
            helps[script] = subprocess.run(
                [sys.executable, str(ROOT / script), "--help"],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=ROOT,
            ).stdout
        for flag in re.findall(r"(?<!\S)(--[\w-]+)", rest):
            assert flag in helps[script], f"{step['where']}: {script} has no {flag}"


def test_the_parser_reads_fences_and_shell_lines() -> None:
    text = (
        "x\n```python\nimport lexiframe\n```\n\n    ```bash\n    pip install . && lexiframe "
        "demo\n    lexiframe evaluate \\\n        -m RR  # a comment\n    ```\n"
        f"```python\n{SKIP_MARK} needs a cluster\nraise SystemExit(1)\n```\n"
    )
    page = ROOT / "docs" / "probe.md"
    found = blocks(text)
    assert [(block.language, block.line) for block in found] == [
        ("python", 2),
        ("bash", 6),
        ("python", 11),
    ]
    assert shell_commands(found[1].code) == [
        "pip install .",
        "lexiframe demo",
        "lexiframe evaluate -m RR",
    ]
    assert [step["code"] for step in steps(page, text)] == [
        "import lexiframe",
        "lexiframe demo",
        "lexiframe evaluate -m RR",
    ]
