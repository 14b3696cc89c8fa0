"""Register the ``.lexi`` accessor on pandas DataFrames when pandas is imported, not before.

pandas takes a few tenths of a second to import, and most uses of lexiframe never touch it.
If pandas is already imported, the accessor is registered at once; otherwise a finder at
the front of ``sys.meta_path`` waits for ``import pandas`` and registers the accessor as
soon as pandas has finished importing, so ``pd.DataFrame(...).lexi`` works whichever of
the two packages is imported first.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


def register() -> None:
    """Register the accessor now if pandas is imported, else when it is."""
    if "pandas" in sys.modules:
        _register()
    elif not any(isinstance(finder, _PandasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PandasFinder())


def _register() -> None:
    import lexiframe.pandas  # noqa: F401  (its class decorator registers .lexi)


class _PandasFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of ``pandas`` found by the other finders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pandas":
            return None
        sys.meta_path.remove(self)  # once only; and find_spec below must not find us
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _register()

        # This spec's loader only: pandas' own module runs, then the accessor registers.
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
