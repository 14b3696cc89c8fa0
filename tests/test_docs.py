"""The documentation: pages generated from code stay in step with it, and the site builds
with ``mkdocs build --strict`` (no warning: broken links, missing pages, bad docstrings)."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from lexiframe.errors import LexiframeWarning
from lexiframe.metrics import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load("generate")
figures = _load("figures")


def test_measures_page_is_generated_from_the_registry():
    page = (DOCS / "measures.md").read_text(encoding="utf-8")
    assert page == generate.measures_reference(), "regenerate: python docs/generate.py"


def test_registry_holds_specs_only():
    # The registry does not render pages nor import the evaluation layer (no import circle
    # registry -> evaluation -> metrics).
    source = (ROOT / "lexiframe" / "metrics" / "registry.py").read_text(encoding="utf-8")
    assert "evaluation" not in source
    assert "markdown" not in source


def test_formulas_are_latex_without_delimiters():
    for family in FAMILIES:
        formula = family.formula
        assert formula.strip() == formula and formula, family.name
        assert not formula.startswith(("$", "\\(", "\\[")), family.name
        assert formula.count("{") == formula.count("}"), family.name
        assert "|" not in formula, f"{family.name}: a | breaks the measures table"
        # LaTeX, not Unicode math: \sum, \le, \hat p, \tilde n (MathJax renders them)
        assert formula.isascii(), f"{family.name}: write the formula in LaTeX: {formula!r}"


def test_generated_pages_are_current():
    """measures.md, measures/<family>.md and cli.md equal what the code generates."""
    assert generate.stale() == [], "regenerate: python docs/generate.py"


def test_every_family_has_a_page_in_the_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for family in FAMILIES:
        page = f"measures/{generate.measure_page_name(family)}"
        assert (DOCS / page).exists(), f"regenerate: python docs/generate.py ({page})"
        assert page in config, f"regenerate: python docs/generate.py ({page} not in the nav)"


def test_cli_page_lists_every_subcommand_and_option():
    import argparse

    from lexiframe.cli import build_parser

    page = generate.cli_reference()
    commands = next(
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    for name, sub in commands.choices.items():
        assert f"## `lexiframe {name}`" in page
        for action in sub._actions:
            for option in action.option_strings:
                assert f"`{option}`" in page or option in ("-h", "--help")


def test_sphinx_roles_become_inline_code():
    plain = _load("griffe_doctests").plain_roles
    text = "Use :func:`lexiframe.positions`, :class:`~lexiframe.errors.InputError`, :data:`X`."
    assert plain(text) == "Use `lexiframe.positions`, `lexiframe.errors.InputError`, `X`."


def test_doctest_blocks_become_code_blocks():
    fence = _load("griffe_doctests").fence_doctests
    text = "Summary.\n\n    >>> 1 + 1\n    2\n\n    ```python\n    >>> kept\n    ```\nEnd."
    assert fence(text).splitlines() == [
        "Summary.",
        "",
        "    ```pycon",
        "    >>> 1 + 1",
        "    2",
        "    ```",
        "",
        "    ```python",
        "    >>> kept",
        "    ```",
        "End.",
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` writes it (built once for the tests that read it)."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("material")
    folder = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return folder


def test_site_builds_strictly(site):
    tmp_path = site
    assert (tmp_path / "measures" / "asl" / "index.html").exists()
    assert (tmp_path / "api" / "plot" / "index.html").exists()
    # 404.html is served at any depth: its links are absolute (site_url) and lead somewhere
    missing = []
    for link in re.findall(r'(?:href|src)="(/[^/"][^"]*|/)"', (tmp_path / "404.html").read_text()):
        path = link.split("#")[0].split("?")[0].lstrip("/")
        target = tmp_path / path
        if path in ("", ".") or link.endswith("/"):
            target = target / "index.html"
        if not target.exists():
            missing.append(link)
    assert missing == []
    # API pages show one signature per function, not one per overload
    frames = (tmp_path / "api" / "frames" / "index.html").read_text(encoding="utf-8")
    assert frames.count('id="lexiframe.positions"') == 1
    kinds = ("function", "class", "attribute")
    objects = sum(frames.count(f'class="doc doc-object doc-{kind}"') for kind in kinds)
    assert frames.count("doc-signature") == objects
    # every figure of the repository is in the site
    for name in figures.FIGURES:
        assert (tmp_path / "figures" / f"{name}.png").read_bytes() == (
            DOCS / "figures" / f"{name}.png"
        ).read_bytes(), name
    # formulas are arithmatex spans for MathJax, served from the site when it is installed
    page = (tmp_path / "measures" / "asl" / "index.html").read_text(encoding="utf-8")
    assert 'class="arithmatex"' in page and "\\mathrm{ASL}" in page
    if importlib.util.find_spec("mathjax") is not None:
        assert (tmp_path / "assets" / "mathjax" / "tex-chtml.js").exists()
        assert "assets/mathjax/tex-chtml.js" in page


def test_readme_use_section_runs_on_the_toy_track():
    # The README's "Use" code, with its file names pointed at the toy track, runs as shown.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    use = readme.split("## Use", 1)[1]
    code = use.split("```python", 1)[1].split("```", 1)[0]
    toy = ROOT / "tests" / "data" / "toy"
    code = code.replace('"runs/"', repr(str(toy / "runs"))).replace(
        '"qrels.txt"', repr(str(toy / "qrels.txt"))
    )
    assert "lf.read_run(" in code and str(toy) in code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)  # the toy track drops two queries
        exec(compile(code, "README.md", "exec"), {})


def test_the_project_cites_only_itself():
    # Docstrings, tests and pages cite docs/definitions.md and the papers' sections, never a
    # file outside the project.
    outside = ("DESIGN" + ".md", "/work/" + "shared")
    roots = [ROOT / name for name in ("lexiframe", "tests", "docs", "examples", "benchmarks")]
    files = [path for root in roots for path in root.rglob("*") if path.suffix in (".py", ".md")]
    files += [ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    offenders = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in files
        if path.is_file()
        for word in outside
        if word in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert offenders == []


def test_the_figures_of_the_repository_are_current(tmp_path):
    """The committed figures are what docs/figures.py draws now (pixels compared, so that
    a PNG's metadata does not count)."""
    from matplotlib.image import imread

    for path in figures.draw(tmp_path):
        committed = DOCS / "figures" / path.name
        assert committed.is_file(), f"{committed} is missing: python docs/figures.py docs/figures"
        drawn, kept = imread(path), imread(committed)
        assert drawn.shape == kept.shape, (
            f"redraw: python docs/figures.py docs/figures ({path.name})"
        )
        assert abs(drawn - kept).mean() < 1e-3, (
            f"redraw: python docs/figures.py docs/figures ({path.name})"
        )


def test_the_site_builds_without_a_plotting_library(tmp_path):
    """The docs extra has no matplotlib: every build hook runs without it (they once drew
    the figures, and ``pip install -e '.[docs]' && mkdocs serve`` crashed)."""
    code = f"""
import sys, types, importlib.util
sys.modules["matplotlib"] = None  # not installed
spec = importlib.util.spec_from_file_location("hooks", {str(DOCS / "hooks.py")!r})
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)
config = types.SimpleNamespace(extra_javascript=[], site_dir={str(tmp_path)!r})
hooks.on_config(config)
if hasattr(hooks, "on_files"):
    hooks.on_files([], config)
hooks.on_post_build(config)
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True)


EXTRA_NEEDS = {
    "plot": re.compile(r"from lexiframe import plot|lexiframe\.plot|lf\.plot|import matplotlib"),
    "spark": re.compile(r"lexiframe\.spark|from lexiframe import spark|--spark\b|pyspark"),
    "progress": re.compile(r"progress=True|import tqdm"),
}
"""What in a page's examples needs an extra of pyproject.toml."""


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda page: page.name
)
def test_a_page_names_the_extras_its_examples_need(page):
    """A reader installs what the page says: every extra its code needs is named on it
    (``pip install 'lexiframe[plot]'``); the suite, with every extra installed, would not
    see a page that forgets one."""
    from tests.test_docs_examples import SHELLS, blocks

    code = "\n".join(
        block.code
        for block in blocks(page.read_text(encoding="utf-8"))
        if block.language == "python" or block.language in SHELLS
    )
    text = page.read_text(encoding="utf-8")
    for extra, needs in EXTRA_NEEDS.items():
        if needs.search(code):
            named = (f"lexiframe[{extra}]", f"'.[{extra}]'")  # by name, or from a checkout
            assert any(spelling in text for spelling in named), f"{page.name} needs {extra}"


def test_every_figure_shown_is_drawn_and_every_figure_drawn_is_shown():
    shown = set()
    for page in DOCS.rglob("*.md"):
        shown |= set(re.findall(r"figures/([a-z_]+)\.png", page.read_text(encoding="utf-8")))
    assert shown == set(figures.FIGURES)


def test_tutorial_tables_come_from_the_code():
    page = generate.tutorial()
    assert page == (DOCS / "tutorial.md").read_text(encoding="utf-8")
    assert "| system | MC4 sgnLP | Borda sgnLP |" in page
    assert "DroppedQueriesWarning" in page


def test_measures_nav_is_generated_from_the_registry():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert generate.measures_nav(config) == config, "regenerate: python docs/generate.py"
    without_rr = config.replace("      - RR: measures/rr.md\n", "")
    assert without_rr != config
    assert generate.measures_nav(without_rr) == config


def test_the_command_line_page_lists_arguments_without_a_table():
    """On a phone a table's last column (the meaning) runs off the screen: each argument
    is a term of a definition list, its meaning under it."""
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert "| argument |" not in page
    assert "`--threshold` `THRESHOLD` (grade)\n:   lowest relevant grade" in page


PHONE_WIDTH = 390
"""A phone's viewport in CSS pixels (an iPhone 12 to 15's)."""

PHONE_PAGES = (
    "index.html",
    "getting-started/index.html",
    "tutorial/index.html",
    "definitions/index.html",
    "measures/index.html",
    "measures/asl/index.html",
    "cli/index.html",
    "reproducing/index.html",
    "analyses/index.html",
    "llm-judgments/index.html",
    "scaling-out/index.html",
)

_PROBE = """<html><body>%s<pre id="widths"></pre><script>
setTimeout(function () {
  var out = {};
  document.querySelectorAll("iframe").forEach(function (frame) {
    var page = frame.contentDocument, root = page.documentElement, wide = [];
    page.querySelectorAll(".arithmatex, .md-typeset__table, pre, img").forEach(function (e) {
      if (e.getBoundingClientRect().right > root.clientWidth + 1)
        wide.push(e.tagName + ": " + e.textContent.slice(0, 60));
    });
    out[frame.dataset.page] = {overflow: root.scrollWidth - root.clientWidth, wide: wide};
  });
  document.getElementById("widths").textContent = JSON.stringify(out);
}, 8000);
</script></body></html>"""


def _phone_overflow(site: Path, pages: tuple[str, ...]) -> dict[str, dict]:
    """How far each page runs past a phone's screen, as headless Chromium lays it out: the
    pages in frames 390 px wide (Chromium's headless window is at least 500 px), served over
    HTTP so that the probe may read them."""
    import functools
    import http.server
    import json
    import threading

    frames = "".join(
        f'<iframe data-page="{page}" src="/{page}" width="{PHONE_WIDTH}" height="844"></iframe>'
        for page in pages
    )
    (site / "phone-probe.html").write_text(_PROBE % frames, encoding="utf-8")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/phone-probe.html"
        command = [
            shutil.which("chromium") or shutil.which("chromium-browser") or "chromium",
            "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
            "--virtual-time-budget=30000", "--dump-dom", url,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    found = re.search(r'<pre id="widths">(.*?)</pre>', done.stdout, re.S)
    assert found and found.group(1), done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="no Chromium to lay the pages out",
)
def test_pages_fit_a_phone(site):
    # Formulas and tables wider than a phone scroll in their own box; the page never does
    # (the definitions page was 669 px wide at 390 px when inline formulas ran past it).
    overflow = _phone_overflow(site, PHONE_PAGES)
    assert set(overflow) == set(PHONE_PAGES)
    too_wide = {page: seen for page, seen in overflow.items() if seen["overflow"] > 0}
    assert not too_wide, "\n".join(f"{page}: {seen}" for page, seen in too_wide.items())
