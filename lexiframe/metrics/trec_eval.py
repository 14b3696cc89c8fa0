"""trec_eval's measure names, in the order trec_eval prints them, and their registry measures.

It also reads trec_eval's spellings as registry names (:func:`from_trec_eval`: ``P_10`` is
``P@10``, ``rbp_p=0.8`` is ``RBP(p=0.8)``), for :func:`lexiframe.metrics.parse_measure`.
A new measure that trec_eval names is added here beside its expression module and its
registry entry.

trec_eval names a measure by a root (``P``, ``ndcg_cut``, ``map``) and optional parameters
after a dot (``P.5,10``, ``rbp.p=0.8``); it prints one value per cutoff (``P_5``, ``P_10``)
and expands nicknames (``official``, ``all_trec``, ``set``). This module knows that
catalogue and maps each printed name to a measure of :data:`lexiframe.metrics.FAMILIES`
through the registry's own names and aliases: a measure the registry understands under
trec_eval's spelling (``map``, ``P_10``, ``recip_rank``, ``num_ret``) or as
``<root>@<cutoff>`` (``success@5``) is available with nothing to add here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

import polars as pl

from lexiframe._utils import format_row
from lexiframe.errors import InputError, UnknownMeasureError
from lexiframe.metrics.parts import mapped_gains
from lexiframe.metrics.registry import (
    UTILITY_WEIGHTS,
    Measure,
    gain_map_of,
    parse_measure,
    unknown_measure,
)

Kind = Literal["runid", "num_q", "long", "double", "gm", "cut", "relstring"]
"""How trec_eval prints and averages a measure: ``long`` values print as integers and sum
over queries; ``double`` values print with 4 decimals and average; ``gm`` prints only the
geometric mean (of ``of``'s per-query values, floored at 1e-5); ``cut`` prints one value per
cutoff; ``runid`` and ``num_q`` print only on the summary."""

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TENTHS = tuple(i / 10 for i in range(11))
_FIFTHS = tuple(i / 5 for i in range(1, 11))

MIN_GEO_MEAN = 1e-5
"""trec_eval's floor of a per-query value in a geometric mean (gm_map, gm_bpref)."""


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures: its root name, kind and default parameters."""

    name: str
    kind: Kind
    cutoffs: tuple[float, ...] = ()
    """Default cutoffs of a ``cut`` measure (floats print as ``%3.2f``, e.g. ``0.10``)."""
    of: str = ""
    """For ``gm``: the measure whose per-query values are averaged geometrically."""
    skipped: Callable[[Measure, pl.Expr, float], pl.Expr] | None = None
    """With ``-c``, trec_eval scores a query the run skipped on a stand-in ranking of one
    unjudged document (none with ``-J``), and most measures score it as an empty ranking.
    Where this measure does not: 0 under its bare name, and with parameters this function
    of the measure, its value on an empty ranking and the stand-in's length."""

    undefined: Callable[[Measure, bool], pl.Expr | None] | None = None
    """Where trec_eval divides 0 by 0 for this measure (and prints ``-nan``, a NaN mean
    too): a function of the measure and of ``-J`` (judged only) giving a boolean
    expression over the positions frame, or None where it never does. lexiframe's value
    there is 0 (an empty ranking's interpolated precision, nDCG without a positive ideal
    gain); the drop-in prints trec_eval's."""

    def printed(self, params: str | None = None) -> list[tuple[str, str | None]]:
        """The names trec_eval prints for this measure, each with its parameter text.

        Example:
            >>> CATALOGUE["P"].printed("10,5")
            [('P_5', '5'), ('P_10', '10')]
            >>> CATALOGUE["iprec_at_recall"].printed("0.5")
            [('iprec_at_recall_0.50', '0.50')]
            >>> CATALOGUE["rbp"].printed("p=0.8"), CATALOGUE["map"].printed()
            ([('rbp_p=0.8', 'p=0.8')], [('map', None)])
        """
        if self.kind != "cut":
            if params:
                return [(f"{self.name}_{params}", params)]
            return [(self.name, None)]
        values = _parse_cutoffs(self, params) if params else self.cutoffs
        whole = all(float(value).is_integer() for value in self.cutoffs)
        texts = [f"{int(v)}" if whole else f"{v:3.2f}" for v in sorted(values)]
        return [(f"{self.name}_{text}", text) for text in texts]


def _parse_cutoffs(measure: TrecMeasure, params: str) -> list[float]:
    whole = all(float(value).is_integer() for value in measure.cutoffs)
    try:
        values = [int(p) if whole else float(p) for p in params.split(",")]
    except ValueError:
        kind = "whole numbers" if whole else "numbers"
        raise UnknownMeasureError(
            f"trec_eval measure {measure.name}.{params}: cutoffs are comma-separated {kind}, "
            f"e.g. {measure.name}.{','.join(_text(v) for v in measure.cutoffs[:2])}"
        ) from None
    if min(values) <= 0 or len(set(values)) < len(values):
        raise UnknownMeasureError(
            f"trec_eval measure {measure.name}.{params}: cutoffs must be positive and distinct"
        )
    return values


def _text(value: float) -> str:
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"


def _utility_skipped(measure: Measure, value: pl.Expr, stand_in: float) -> pl.Expr:
    """The stand-in's documents are retrieved and non-relevant: as many fewer missed."""
    weights = (measure.param("nonrel_ret"), measure.param("nonrel_nonret"))
    gained, lost = (float(weight) for weight in weights)  # type: ignore[arg-type]
    return value + stand_in * (gained - lost)


def _rbp_resid_skipped(measure: Measure, value: pl.Expr, stand_in: float) -> pl.Expr:
    """One unjudged document: p + (1 − p) = 1."""
    return pl.lit(stand_in) if stand_in else value


def _lowest_of_levels(measure: Measure) -> float:
    levels = measure.param("levels")
    assert isinstance(levels, tuple), levels  # its converter made it one
    return float(min(levels))


def _empty_condensed(
    lowest_level: Callable[[Measure], float],
) -> Callable[[Measure, bool], pl.Expr | None]:
    """Interpolated precision from its lowest recall level up: trec_eval starts at the
    precision of the whole ranking, 0/0 where a condensed ranking (``-J``) is empty (the
    stand-in of a skipped query too), and that NaN stays at each level that rounds to no
    relevant document (lround(level · m) = 0)."""

    def undefined(measure: Measure, judged_only: bool) -> pl.Expr | None:
        if not judged_only:  # a ranking holds a document, the stand-in one too
            return None
        level = lowest_level(measure)
        return (pl.col("n_ret") == 0) & (level * pl.col("n_rel").cast(pl.Float64) < 0.5)

    return undefined


def _no_positive_gain(measure: Measure, judged_only: bool) -> pl.Expr | None:
    """Rndcg under a gain map: a query with a relevant document and no positive gain
    averages no nDCG (its m_Rndcg.c: sum / num_changed_ideal_gain, 0/0)."""
    gains = gain_map_of(measure)
    if gains is None:  # the grades themselves: every relevant one gains
        return None
    _, ideal = mapped_gains("grades", "ideal_grades", gains)
    return (pl.col("n_rel") > 0) & (ideal.list.len() == 0)


# trec_eval 10.0's measures in the order it computes and prints them (its measures.c);
# the preference measures of its prefs formats are left out (they read another qrels format).
MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid"),
    TrecMeasure("num_q", "num_q"),
    TrecMeasure("num_ret", "long"),
    TrecMeasure("num_rel", "long"),
    TrecMeasure("num_rel_ret", "long"),
    TrecMeasure("map", "double"),
    TrecMeasure("gm_map", "gm", of="map"),
    TrecMeasure("Rprec", "double"),
    TrecMeasure("bpref", "double"),
    TrecMeasure("recip_rank", "double"),
    TrecMeasure(
        "iprec_at_recall", "cut", _TENTHS, undefined=_empty_condensed(lambda m: m.level_cutoff)
    ),
    TrecMeasure("P", "cut", _CUTS),
    TrecMeasure("relstring", "relstring"),
    TrecMeasure("recall", "cut", _CUTS),
    TrecMeasure("infAP", "double"),
    TrecMeasure("gm_bpref", "gm", of="bpref"),
    TrecMeasure("Rprec_mult", "cut", _FIFTHS),
    TrecMeasure("utility", "double", skipped=_utility_skipped),
    TrecMeasure("11pt_avg", "double", undefined=_empty_condensed(_lowest_of_levels)),
    TrecMeasure("binG", "double"),
    TrecMeasure("G", "double"),
    TrecMeasure("dcg", "double"),
    TrecMeasure("ideal_dcg", "double"),
    TrecMeasure("ndcg", "double"),
    TrecMeasure("ndcg_rel", "double"),
    TrecMeasure("Rndcg", "double", undefined=_no_positive_gain),
    TrecMeasure("ndcg_cut", "cut", _CUTS),
    TrecMeasure("map_cut", "cut", _CUTS),
    TrecMeasure("relative_P", "cut", _CUTS),
    TrecMeasure("success", "cut", (1, 5, 10)),
    TrecMeasure("set_P", "double"),
    TrecMeasure("set_relative_P", "double"),
    TrecMeasure("set_recall", "double"),
    TrecMeasure("set_map", "double"),
    TrecMeasure("set_F", "double"),
    TrecMeasure("num_nonrel_judged_ret", "long"),
    TrecMeasure("map_avgjg", "double"),
    TrecMeasure("P_avgjg", "cut", _CUTS),
    TrecMeasure("Rprec_mult_avgjg", "cut", _FIFTHS),
    TrecMeasure("yaap", "double"),
    TrecMeasure("rbp", "double"),
    TrecMeasure("rbp_resid", "double", skipped=_rbp_resid_skipped),
    TrecMeasure("unj", "cut", (5, 10, 20)),
)

CATALOGUE: dict[str, TrecMeasure] = {measure.name: measure for measure in MEASURES}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
        "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
        "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
}  # fmt: skip
"""trec_eval's nicknames for groups of measures (``-m official``, ``-m all_trec``)."""


@cache
def registry_measure(root: str, printed: str, param: str | None) -> Measure | None:
    """The registry's measure for a name trec_eval prints, or ``None`` if it has none.

    Tried in turn: the printed name itself (the registry knows trec_eval's spellings as
    aliases: ``map``, ``P_10``, ``ndcg_cut_10``, ``rbp_p=0.8``), then ``<root>@<param>``.

    Example:
        >>> str(registry_measure("P", "P_10", "10")), str(registry_measure("map", "map", None))
        ('P@10', 'AP')
        >>> registry_measure("relstring", "relstring", None) is None
        True
    """
    candidates = [printed]
    if param is not None:
        candidates.append(f"{root}@{param}")
    for name in candidates:
        try:
            return parse_measure(name)
        except UnknownMeasureError:
            continue
    return None


def available(measure: TrecMeasure) -> bool:
    """Can lexiframe compute this trec_eval measure (with its default parameters)?"""
    if measure.kind in ("runid", "num_q"):
        return True
    if measure.kind == "relstring":
        return False
    if measure.kind == "gm":
        return available(CATALOGUE[measure.of])
    return all(registry_measure(measure.name, *item) is not None for item in measure.printed())


def markdown_names() -> str:
    """The table of trec_eval's measures and the lexiframe measure each reads as (docs)."""
    lines = [
        "| trec_eval measure | prints | lexiframe measure |",
        "|---|---|---|",
    ]
    for measure in MEASURES:
        printed = measure.printed()
        shown = [name for name, _ in printed[:2]] + (["…"] if len(printed) > 2 else [])
        prints = ", ".join(f"`{name}`" if name != "…" else name for name in shown)
        if measure.kind == "runid":
            target = "the run's tag (last line of the file)"
        elif measure.kind == "num_q":
            target = "number of queries evaluated"
        elif not available(measure):
            target = "— (not computed)"
        elif measure.kind == "gm":
            target = f"geometric mean of {measure.of}'s values (each at least 1e-5)"
        else:
            names = []
            for name, param in printed[:2]:
                found = registry_measure(measure.name, name, param)
                names.append(f"`{found}`")
            if len(printed) > 2:
                names.append("…")
            target = ", ".join(names)
        lines.append(f"| `{measure.name}` | {prints} | {target} |")
    return "\n".join(lines) + "\n"


# trec_eval's spellings of cut-off measures: P_10, recall_1000, ndcg_cut_10, map_cut_100,
# success_5, iprec_at_recall_0.10.
TREC_EVAL_CUTOFFS = {
    "p": "P",
    "recall": "R",
    "ndcg_cut": "nDCG",
    "map_cut": "AP",
    "success": "Success",
    "iprec_at_recall": "IPrec",
    "unj": "Unjudged",
    "relative_p": "RelativeP",
    "rprec_mult": "RPrecMult",
}
TREC_EVAL_CUTOFF = re.compile(
    rf"({'|'.join(map(re.escape, TREC_EVAL_CUTOFFS))})_(\d*\.?\d+)", re.IGNORECASE
)

# trec_eval's measures with gains per grade (its rel_level=gain pairs, read by its
# setup_gains): ndcg.1=1,2=3, printed ndcg_1=1,2=3; G.1=2,2=4; ndcg_rel.1=1,2=5; Rndcg.2=7.
GAIN_FAMILIES = {"ndcg": "nDCG", "G": "G", "ndcg_rel": "nDCGRel", "Rndcg": "RnDCG"}
GAIN_SPELLING = re.compile(r"(ndcg_rel|ndcg|Rndcg|G)[._]([^@()]*=[^@()]*)")


def from_trec_eval(name: str, text: str) -> str:
    """A trec_eval spelling (``P_10``, ``rbp_p=0.8``, ``11pt_avg``, ``utility_1,-1,0,0``,
    ``ndcg_1=1,2=3``, ``G_1=2,2=4``, ``set_F_0.5``) as the registry's name; any other text
    as it is. A spelling with parameters lexiframe does not compute is refused with the
    reason.

    Example:
        >>> from_trec_eval("P_10", "P_10"), from_trec_eval("set_F.0.5", "set_F.0.5")
        ('P@10', 'SetF(beta=0.5)')
        >>> from_trec_eval("Rndcg.2=7", "Rndcg.2=7")
        'RnDCG(gains={2: 7.0})'
    """
    trec_eval = TREC_EVAL_CUTOFF.fullmatch(text)
    if trec_eval:
        return f"{TREC_EVAL_CUTOFFS[trec_eval.group(1).lower()]}@{trec_eval.group(2)}"
    # trec_eval's rbp and rbp_resid (its default persistence is 0.9), and rbp_p=0.8 (as it
    # prints -m rbp.p=0.8).
    rbp = re.fullmatch(r"rbp(_resid)?(?:[._]p=(\d*\.?\d+))?", text)
    if rbp:
        return f"{'RBPResid' if rbp.group(1) else 'RBP'}(p={rbp.group(2) or '0.9'})"
    # trec_eval's 11pt_avg, and 11pt_avg_0.2,0.5,0.8 (as it prints -m 11pt_avg.0.2,0.5,0.8).
    eleven = re.fullmatch(r"11pt_avg(?:[._]([^@()]+))?", text)
    if eleven:
        levels = _trec_eval_numbers(name, eleven.group(1), "11pt_avg.0.2,0.5,0.8")
        return "IPrecAvg" if levels is None else f"IPrecAvg(levels={list(levels)!r})"
    # trec_eval's utility_1,-1,0,0 (as it prints -m utility.1,-1,0,0): four weights.
    weights = re.fullmatch(r"utility[._]([^@()]+)", text)
    if weights:
        values = _trec_eval_numbers(name, weights.group(1), "utility.1,-1,0,0") or ()
        if len(values) != 4:
            raise unknown_measure(
                name, "trec_eval's utility takes four weights, e.g. utility.1,-1,0,0"
            )
        named = zip(UTILITY_WEIGHTS, values, strict=True)
        pairs = ", ".join(f"{key}={value!r}" for key, value in named)
        return f"Utility({pairs})"
    # trec_eval's set_F.0.5 (printed set_F_0.5): beta, as trec_eval's F weighs it.
    beta = re.fullmatch(r"set_F[._]([^@()]+)", text)
    if beta:
        values = _trec_eval_numbers(name, beta.group(1), "set_F.0.5") or ()
        if len(values) != 1 or values[0] < 0:
            raise unknown_measure(
                name, "trec_eval's set_F takes one non-negative beta, e.g. set_F.0.5"
            )
        return f"SetF(beta={values[0]!r})"
    _refuse_parameters(name, text)
    # trec_eval's measures with gains per grade: -m ndcg.1=1,2=3, which it prints as
    # ndcg_1=1,2=3, and G.1=2,2=4, ndcg_rel.1=1,2=5, Rndcg.2=7.
    gains = GAIN_SPELLING.fullmatch(text)
    if gains:
        root, pairs = gains.group(1), gains.group(2)
        return f"{GAIN_FAMILIES[root]}(gains={_trec_eval_gains(name, root, pairs)!r})"
    return text


def _trec_eval_numbers(name: str, text: str | None, example: str) -> tuple[float, ...] | None:
    """trec_eval's comma-separated numeric parameters (``0.2,.5,0.8``), or ``None``."""
    if text is None:
        return None
    try:
        values = tuple(float(item) for item in text.split(","))
    except ValueError:
        raise unknown_measure(
            name, f"trec_eval's parameters are comma-separated numbers, e.g. {example}"
        ) from None
    if not all(math.isfinite(value) for value in values):
        raise unknown_measure(name, f"trec_eval's parameters are finite numbers, e.g. {example}")
    return values


def _trec_eval_gains(name: str, root: str, text: str) -> dict[int, float]:
    """trec_eval's gain pairs ``1=1,2=3.5`` of measure ``root`` as a map of grades to gains.

    trec_eval sorts its gains comparing their difference cut to a whole number, so that the
    order of gains less than 1 apart is the order of the pairs (:func:`_merge_sorted`); a
    map holds its grades in ascending order, as :func:`check_gain_order` models them, so
    pairs with a fractional (or huge) gain out of that order are refused.

    Example:
        >>> _trec_eval_gains("G.1=2,2=4", "G", "1=2,2=4")
        {1: 2.0, 2: 4.0}
    """
    gains: dict[int, float] = {}
    for pair in text.split(","):
        grade, _, gain = pair.partition("=")
        try:
            level, value = int(grade), float(gain)
        except ValueError:
            raise unknown_measure(
                name, f"trec_eval's {root} gains are grade=gain pairs, e.g. {root}.0=0,1=1,2=3"
            ) from None
        if level in gains:
            raise unknown_measure(name, f"grade {level} is given a gain twice")
        gains[level] = value
    # Whole gains less than 2^30 in size compare consistently whatever their order.
    ties = any(not value.is_integer() or abs(value) >= 2**30 for value in gains.values())
    if ties and list(gains) != sorted(gains):
        ordered = ",".join(f"{grade}={_text(gains[grade])}" for grade in sorted(gains))
        raise unknown_measure(
            name,
            "the order of trec_eval's pairs decides how its sort orders gains less than 1 "
            "apart, or 2^31 or more apart (it compares the difference of two gains cut to a "
            "C int), and lexiframe reads a gain map by ascending grade: give the pairs in "
            f"that order ({root}.{ordered})",
        )
    return gains


# trec_eval's measures whose parameters lexiframe refuses: gains per grade for rbp (which
# reads its scaling uninitialised) and rbp_resid (which ignores them), anything for binG.
_REFUSED_PARAMETERS = ("rbp", "rbp_resid", "binG")


def _refuse_parameters(name: str, text: str) -> None:
    """Refuse, with the reason, trec_eval's parameters that lexiframe does not compute:
    gains per grade for rbp and rbp_resid, any parameter for binG (which trec_eval
    ignores, as rbp_resid ignores gains)."""
    roots = [root for root in _REFUSED_PARAMETERS if text[len(root) : len(root) + 1] in "._"]
    roots = [root for root in roots if text.startswith(root) and len(text) > len(root) + 1]
    if not roots:
        return
    root = max(roots, key=len)
    params = text[len(root) + 1 :]
    if root == "binG":
        raise UnknownMeasureError(
            f"{name!r}: trec_eval's binG takes no parameters (trec_eval ignores them and "
            "prints binG); name it binG"
        )
    pairs = params.split(",")
    gains = [pair for pair in pairs if pair.partition("=")[0].lstrip("-").isdigit()]
    if gains and root == "rbp":
        raise UnknownMeasureError(
            f"{name!r}: gains per grade ({','.join(gains)}) are not computed for trec_eval's "
            "rbp, which scales them by a minimum and maximum it reads uninitialised; "
            "lexiframe's RBP takes the grades scaled by the top grade"
        )
    if gains:
        rest = ",".join(pair for pair in pairs if pair not in gains)
        raise UnknownMeasureError(
            f"{name!r}: trec_eval's rbp_resid reads no gains per grade ({','.join(gains)}: "
            "it ignores them and prints the value without them); name it "
            f"{f'rbp_resid.{rest}' if rest else 'rbp_resid'}"
        )


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


_SCALE_FREE = ("nDCG", "nDCGRel", "RnDCG")
"""The families with gains whose value is the same for gains scaled by one factor."""


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
    mapped = [m for m in measures if m.param("gains") is not None]
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
            if family in _SCALE_FREE:
                fix = (
                    "Scale the gains so that distinct gains differ by 1 or more, and give "
                    f"every grade its gain ({family} is the same for gains scaled by one "
                    "factor)"
                )
            else:
                fix = (
                    "Give gains that are equal or differ by 1 or more, and every grade its "
                    f"gain ({family} changes with the gains' scale: each ideal rank counts "
                    "at least 1)"
                )
            raise InputError(
                f"{measure}: trec_eval compares gains by their difference cut to a whole "
                "number (a C int: gains less than 1 apart compare equal, gains 2^31 or more "
                f"apart the wrong way), so that its ideal ranking takes gains {close} of "
                f"{format_row({k: row[k] for k in keys if k != 'system'})} out of order; "
                f"lexiframe does not reproduce that order. {fix}"
            )
