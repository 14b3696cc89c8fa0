"""How a measure's parameters are read and printed: each converter checks a value parsed
from a name (``RBP(p=0.5)``, ``nDCG(gains={1: 1, 2: 3})``) and returns its canonical form,
or raises a ``ValueError`` that says why; each printer writes the canonical form back as
the user types it.

Example:
    >>> from lexiframe.metrics import converters
    >>> converters.gain_map({2: 3, 1: 1.0}), converters.as_dict(((1, 1), (2, 3)))
    (((1, 1), (2, 3)), '{1: 1, 2: 3}')
"""

from __future__ import annotations

import math
from collections.abc import Callable

from lexiframe.metrics import exprs
from lexiframe.metrics.parts import EXPONENTIAL

GAIN_MAP_EXAMPLE = "gains={0: 0, 1: 1, 2: 3}"
"""A gain map as a measure's name takes it: a dict of grades to gains."""


def as_dict(value: object) -> str:
    """A gain map, held as (grade, gain) pairs, as the dict a user types."""
    return repr(dict(value))  # type: ignore[call-overload]


def as_list(value: object) -> str:
    """Recall levels, held as a tuple, as the list a user types (no nested parentheses)."""
    return repr(list(value))  # type: ignore[call-overload]


def gain_map(value: object) -> tuple[tuple[int, int | float], ...] | None:
    """A gain map ``{grade: gain}`` as sorted (grade, gain) pairs (``None``: the grades)."""
    if value is None:
        return None
    example = f"e.g. {GAIN_MAP_EXAMPLE}"
    if not isinstance(value, dict):
        raise ValueError(f"gains= maps relevance grades to gains, {example}")
    pairs = []
    for grade, gain in value.items():
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise ValueError(f"the grades of gains= are integers, {example}")
        if isinstance(gain, bool) or not isinstance(gain, int | float) or not math.isfinite(gain):
            raise ValueError(f"the gain of grade {grade} must be a finite number, {example}")
        if grade < 1 and gain != 0:
            raise ValueError(
                f"gains= gives grade {grade} a gain of {gain!r}, but a positions frame holds "
                "the documents graded 1 or more only, so a non-relevant or unjudged document "
                "cannot add a gain (trec_eval's ndcg.0=…, G.0=… or G.-1=… has no equivalent "
                "here): give the grades below 1 a gain of 0 or leave them out of the map"
            )
        pairs.append((grade, int(gain) if float(gain).is_integer() else float(gain)))
    return tuple(sorted(pairs)) or None


def ndcg_gains(value: object) -> tuple[tuple[int, int | float], ...] | str | None:
    """nDCG's ``gains=``: a gain map (:func:`gain_map`), or ``'exp'``, the gains 2^g - 1 of
    every grade g (Burges et al., 2005)."""
    if value == EXPONENTIAL:
        return EXPONENTIAL
    if isinstance(value, str):
        raise ValueError(
            f"gains= maps relevance grades to gains, e.g. {GAIN_MAP_EXAMPLE}, or is "
            f"{EXPONENTIAL!r} (2^grade - 1)"
        )
    return gain_map(value)


def gains_text(value: object) -> str:
    """nDCG's ``gains=`` as typed: ``'exp'``, or a gain map as a dict."""
    return repr(value) if isinstance(value, str) else as_dict(value)


def max_grade(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("max_grade= is a positive whole number, e.g. max_grade=4")
    if value > exprs.ERR_MAX_GRADE_LIMIT:
        raise ValueError(
            f"max_grade= is at most {exprs.ERR_MAX_GRADE_LIMIT} (ERR divides by 2^max_grade, a "
            "floating-point number)"
        )
    return value


def recall_levels(value: object) -> tuple[float, ...]:
    """Recall levels in [0, 1], ascending (IPrecAvg), as a tuple of floats."""
    example = "e.g. levels=[0.2, 0.5, 0.8]"
    if not isinstance(value, tuple | list) or not value:
        raise ValueError(f"levels= is a list of recall levels, {example}")
    levels = []
    for level in value:
        if isinstance(level, bool) or not isinstance(level, int | float) or not 0 <= level <= 1:
            raise ValueError(f"the levels of levels= are recall levels in [0, 1], {example}")
        levels.append(float(level))
    if levels != sorted(levels):
        raise ValueError(f"levels= go in ascending order, as trec_eval reads them, {example}")
    return tuple(levels)


def weight(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("the weights of Utility are finite numbers, e.g. nonrel_ret=-2")
    return float(value)


def number(example: str) -> Callable[[object], object]:
    """A converter that refuses a parameter that is not a number (``p=x`` reads as the
    string 'x'); its range is the expression's to check, and an int keeps its spelling."""

    def convert(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{example.split('=')[0]}= is a number, e.g. {example}")
        return value

    return convert
