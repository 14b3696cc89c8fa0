"""The package's structure (docs/architecture.md): a helper that several modules use is public
in the module that owns it, never imported or reached under its private name."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lexiframe"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name inside a module, not a submodule
        return False


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(path: Path) -> list[str]:
    """``from lexiframe.x import _helper`` and ``x._helper`` of another lexiframe module
    (private modules, ``from lexiframe import _kernels``, are modules: allowed)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _module_name(path)
    modules: dict[str, str] = {}  # local name -> lexiframe module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lexiframe"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _is_module(full):
                    modules[alias.asname or alias.name] = full
                elif _private(alias.name) and node.module != own:
                    found.append(f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("lexiframe") and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _private(node.attr)
            and modules[node.value.id] != own
        ):
            found.append(f"{modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_a_private_name_of_another():
    found = {
        str(path.relative_to(PACKAGE)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if (uses := _private_uses(path))
    }
    assert found == {}, "make the helper public in the module that owns it"
