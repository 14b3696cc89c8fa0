"""trec_eval's order of the gains of its ideal ranking (ndcg, G, ndcg_rel and Rndcg with
gains per grade), modelled as its sort leaves them, and the refusal of a gain map whose
ideal ranking trec_eval would take out of the gains' order (docs/definitions.md §2).

trec_eval sorts its gains with the C library's qsort and a comparison that cuts their
difference to a C int, so gains less than 1 apart compare equal and keep the order given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import polars as pl

from lexiframe._utils import format_row
from lexiframe.errors import InputError
from lexiframe.metrics.spec import Measure

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _compared(gain: float, other: float) -> int:
    """trec_eval's comparison of two gains (its comp_rel_gain): their difference converted
    to a C int, which cuts it to a whole number, and which the x86-64 conversion makes
    INT_MIN where the whole number is out of the int's range (gains 2^31 or more apart).

    Example:
        >>> _compared(2.5, 2.0), _compared(3.0, 1.5), _compared(3e9, 0.0)
        (0, 1, -2147483648)
    """
    difference = math.trunc(gain - other)
    return difference if _INT_MIN <= difference <= _INT_MAX else _INT_MIN


def _merge_sorted(items: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """trec_eval's qsort of its gains as the C library sorts them (glibc's top-down merge
    sort, the left item first on ties), with trec_eval's comparison (:func:`_compared`):
    gains less than 1 apart compare equal."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _merge_sorted(items[:half]), _merge_sorted(items[half:])
    merged: list[tuple[int, float]] = []
    while left and right:
        merged.append(left.pop(0) if _compared(left[0][1], right[0][1]) <= 0 else right.pop(0))
    return merged + left + right


def ideal_gain_order(gains: Sequence[tuple[int, float]], levels: Iterable[int]) -> list[float]:
    """The gains trec_eval's ideal ranking takes (ndcg, G, ndcg_rel, Rndcg with gains), one
    per grade, highest first, for a query with documents of ``levels`` (grade 0 counted as
    judged): its gains (``gains`` in the order given, then each other grade up to the
    query's highest with its grade as gain) sorted as :func:`_merge_sorted` sorts them,
    walked from the top past the grades the query lacks, and stopped at the first grade
    present whose gain is not positive; as trec_eval starts from the top gain whatever its
    grade, a top gain that is not positive leaves the ideal ranking empty.

    Example:
        >>> ideal_gain_order([(1, 1.0), (2, 3.0)], [0, 1, 2])
        [3.0, 1.0]
        >>> ideal_gain_order([(1, 0.5), (2, 1.0)], [0, 1, 2])  # 0.5 and 0 compare equal
        [1.0]
        >>> ideal_gain_order([(0, 0.0), (1, 0.5), (5, -0.3)], [1])  # -0.3 on top
        []
    """
    present = {0, *levels}
    listed = dict(gains)
    array = list(gains) + [(g, float(g)) for g in range(max(present) + 1) if g not in listed]
    ordered = _merge_sorted(array)[::-1]
    if not ordered or ordered[0][1] <= 0:
        return []
    taken = []
    for grade, gain in ordered:
        if grade not in present:
            continue
        if gain <= 0:
            break
        taken.append(gain)
    return taken


def check_gain_order(measures: Sequence[Measure], frame: pl.DataFrame, keys: Sequence[str]) -> None:
    """Refuse a gain map (``nDCG(gains=…)``, ``G(gains=…)``, ``nDCGRel(gains=…)``,
    ``RnDCG(gains=…)``; trec_eval's ``ndcg.1=…``, ``G.1=…``, ``ndcg_rel.1=…``,
    ``Rndcg.1=…``) whose ideal ranking trec_eval takes in another order than the gains'
    for some query of ``frame``: where gains less than 1 apart compare equal in its sort
    (:func:`ideal_gain_order`). The measures of one family; ``keys`` name the query in the
    message.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import parse_measures
        >>> frame = pl.DataFrame({"query": ["q1"], "ideal_grades": [[2, 1]]})
        >>> check_gain_order(parse_measures(["G(gains={1: 3, 2: 7})"]), frame, ["query"])
        >>> check_gain_order(parse_measures(["G(gains={1: 0.5})"]), frame, ["query"])
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: G(gains={1: 0.5}): trec_eval compares gains by their ...
    """
    # (Whole gains 2^g - 1, gains="exp", are at least 1 apart: trec_eval's order.)
    mapped = [m for m in measures if isinstance(m.param("gains"), tuple)]
    if not mapped or "ideal_grades" not in frame.columns:
        return
    kinds = frame.select(pl.col("ideal_grades").list.unique().list.sort().alias("_levels"))
    for levels in kinds.unique()["_levels"].to_list():
        for measure in mapped:
            gains = list(measure.param("gains"))  # type: ignore[call-overload]
            given = dict(gains)
            exact = sorted(
                (given.get(g, float(g)) for g in set(levels) if given.get(g, float(g)) > 0),
                reverse=True,
            )
            if ideal_gain_order(gains, levels) == exact:
                continue
            row = frame.filter(
                pl.col("ideal_grades").list.unique().list.sort() == pl.lit(levels)
            ).row(0, named=True)
            graded = (given.get(g, g) for g in {0, *levels})
            close = sorted({float(gain) for gain in (*given.values(), *graded)})
            family = measure.family.name
            if measure.family.scale_free:
                fix = (
                    "Scale the gains so that distinct gains differ by 1 or more, and give "
                    f"every grade its gain ({family} is the same for gains scaled by one "
                    "factor)"
                )
            else:
                fix = (
                    "Give gains that are equal or differ by 1 or more, and every grade its "
                    f"gain ({family} changes with the gains' scale)"
                )
            raise InputError(
                f"{measure}: trec_eval compares gains by their difference cut to a whole "
                "number (a C int: gains less than 1 apart compare equal, gains 2^31 or more "
                f"apart the wrong way), so that its ideal ranking takes gains {close} of "
                f"{format_row({k: row[k] for k in keys if k != 'system'})} out of order; "
                f"lexiframe does not reproduce that order. {fix}"
            )
