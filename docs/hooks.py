"""Build hooks of the documentation site (``hooks:`` in ``mkdocs.yml``).

- MathJax: served from the site itself when the ``django-static-mathjax`` package (a pip
  copy of MathJax 3, in the ``docs`` extra) is installed, so formulas render without the
  public internet; from the jsDelivr CDN otherwise. The copy is made into the built site
  only, never into the repository.

The figures are files of the repository (``docs/figures/``, drawn by ``docs/figures.py``), so
that they show on the repository's own pages too, and the build needs no plotting library.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent

MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"
MATHJAX_LOCAL = "assets/mathjax/tex-chtml.js"
# The other combined bundles of the package are not needed next to tex-chtml.js.
_MATHJAX_SKIP = ("tex-mml-*.js", "tex-svg*.js", "tex-chtml-full*.js", "mml-*.js", "node-main.js")


def _mathjax_dir() -> Path | None:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    return folder if (folder / "tex-chtml.js").is_file() else None


def on_config(config):
    script = MATHJAX_LOCAL if _mathjax_dir() is not None else MATHJAX_CDN
    config.extra_javascript.append(script)
    return config


def on_post_build(config):
    source = _mathjax_dir()
    if source is not None:
        target = Path(config.site_dir) / Path(MATHJAX_LOCAL).parent
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(*_MATHJAX_SKIP))
