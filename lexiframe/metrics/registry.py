"""The registry of measure families: which names and aliases read as which family.

The built-in families (:data:`lexiframe.metrics.catalogue.FAMILIES`) are registered when
the package loads; :func:`lexiframe.define_measure` registers a user's family the same way,
so that its name then parses wherever a measure name is read (expressions,
:func:`lexiframe.evaluate`, the command line, Spark). Built-ins cannot be replaced nor
removed, and a name that would shadow a column of lexiframe's tables or a preference is
refused.
"""

from __future__ import annotations

import dataclasses
import re

from lexiframe import preferences
from lexiframe.errors import InputError
from lexiframe.metrics.catalogue import FAMILIES
from lexiframe.metrics.spec import Family, read_families_from

RESERVED = (
    "system", "query", "doc", "score", "rank", "relevance", "positions", "n_rel", "n_ret",
    "depth", "docs", "grades", "ideal_grades", "gain_positions", "nonrel_positions",
    "n_nonrel", "pooled_positions", "n_queries", "system_a", "system_b", "first_difference",
    "last_difference", "positions_a", "positions_b",
)  # fmt: skip
"""Columns of lexiframe's tables (runs, positions, per-query and summary frames, pairs,
orderings): a measure of one of these names would collide with its own table's key."""

_NAME_PART = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

_BY_NAME: dict[str, Family] = {}
"""Every registered family under its name and aliases, lower-cased."""
_REGISTERED: dict[str, Family] = {}
"""Every registered family by name, in registration order (the built-ins first)."""


def register(family: Family, *, replace: bool = False) -> Family:
    """Add ``family`` to the registry: its name and aliases then parse everywhere a measure
    name is read (expressions, :func:`lexiframe.evaluate`, the command line, Spark).

    A name or alias already taken is refused, unless ``replace`` and the name is that of a
    family registered before that is not built in: the new family then keeps the replaced
    one's aliases (scripts that use them keep working). Names of lexiframe's columns
    (:data:`RESERVED`) and of preferences (``sgnLP``) are refused.

    Example:
        >>> from dataclasses import replace
        >>> from lexiframe.metrics import parse_measure, register
        >>> register(replace(parse_measure("AP").family, name="system", aliases=()))
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: the measure name 'system' names a column of lexiframe's ...
    """
    if not isinstance(family, Family):
        raise InputError(f"register takes a lexiframe.metrics.Family, not {family!r}")
    old = _REGISTERED.get(family.name)
    replaced = old if replace else None
    if replaced is not None and replaced in FAMILIES:
        raise InputError(
            f"{family.name} is a built-in measure and cannot be replaced; give yours another name"
        )
    if replaced is not None:
        kept = [alias for alias in replaced.aliases if alias not in family.aliases]
        family = dataclasses.replace(family, aliases=(*family.aliases, *kept))
    names = [family.name, *family.aliases]
    if not isinstance(family.name, str) or not _NAME_PART.fullmatch(family.name):
        raise InputError(
            f"a measure name is a letter followed by letters, digits or _, not {family.name!r}"
        )
    for name in names:
        _check_name(name)
    for name in names:
        owner = _BY_NAME.get(name.lower())
        if owner is None or owner is replaced:
            continue
        builtin = owner in FAMILIES
        hint = ", or pass replace=True to redefine it" if owner is old and not builtin else ""
        raise InputError(
            f"the measure name {name!r} is taken (by {owner.name}"
            f"{', a built-in measure' if builtin else ''}); choose another name{hint}"
        )
    if replaced is not None:
        for alias in (replaced.name, *replaced.aliases):
            _BY_NAME.pop(alias.lower(), None)
    _REGISTERED[family.name] = family
    for name in names:
        _BY_NAME[name.lower()] = family
    return family


def _check_name(name: object) -> None:
    """Refuse a name or alias taken by a column of lexiframe's tables or by a preference."""
    if not isinstance(name, str) or not name:
        raise InputError(f"a measure's aliases are non-empty strings, not {name!r}")
    if name.lower() in RESERVED:
        raise InputError(
            f"the measure name {name!r} names a column of lexiframe's tables (reserved: "
            f"{', '.join(RESERVED)}); choose another name"
        )
    if preferences.is_preference(name):
        raise InputError(f"the measure name {name!r} is taken by a preference; choose another")


def unregister(name: str) -> None:
    """Remove a measure defined with :func:`lexiframe.define_measure` (by its name) and its
    aliases; the built-in families cannot be removed.

    Example:
        >>> from lexiframe.metrics import unregister
        >>> unregister("AP")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: 'AP' is a built-in measure; only measures defined with ...
    """
    family = _REGISTERED.get(name) if isinstance(name, str) else None
    if family is not None and family in FAMILIES:
        raise InputError(
            f"{name!r} is a built-in measure; only measures defined with define_measure can "
            "be removed"
        )
    if family is None:
        raise InputError(f"{name!r} is not a measure defined with define_measure")
    del _REGISTERED[name]
    for alias in (family.name, *family.aliases):
        _BY_NAME.pop(alias.lower(), None)


def families() -> list[Family]:
    """Every registered family: the built-ins (:data:`FAMILIES`), then those defined with
    :func:`lexiframe.define_measure`, in the order they were registered."""
    return list(_REGISTERED.values())


read_families_from(families)


def family_named(name: str) -> Family | None:
    """The registered family of a name or alias (any case), or ``None``."""
    return _BY_NAME.get(name.lower())


def known_names() -> list[str]:
    """The family names of the registry, in documentation order."""
    return [family.name for family in families()]


for _family in FAMILIES:
    register(_family)
