"""The catalogue of built-in measure families: what each measure is (name, summary,
formula, source), its parameters and cut-off, what it reads (:class:`~lexiframe.metrics.Needs`)
and how its expression is built. Declarations only; :mod:`lexiframe.metrics.registry`
registers them and the documentation pages are generated from them (``docs/generate.py``).

A new built-in measure is one :class:`~lexiframe.metrics.Family` in :mod:`.ranked` or
:mod:`.breadth` beside its expression (docs/architecture.md).
"""

from lexiframe.metrics.catalogue import breadth, ranked
from lexiframe.metrics.spec import Family

FAMILIES: tuple[Family, ...] = (*ranked.FAMILIES, *breadth.FAMILIES)
"""The built-in families, in documentation order."""

__all__ = ["FAMILIES"]
