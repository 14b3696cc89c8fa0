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

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import polars as pl

from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.parser import parse_measure
from lexiframe.metrics.parts import mapped_gains
from lexiframe.metrics.sets import no_level_cutoff
from lexiframe.metrics.spec import Measure, gain_map_of
from lexiframe.metrics.spellings import number_text
from lexiframe.options import Compat

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

    undefined: Callable[[Measure, bool, Compat], pl.Expr | None] | None = None
    """Where trec_eval divides 0 by 0 for this measure (and prints ``-nan``, a NaN mean
    too): a function of the measure, of ``-J`` (judged only) and of the ``compat``
    setting giving a boolean expression over the positions frame, or None where it never
    does. lexiframe's value
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
            f"e.g. {measure.name}.{','.join(number_text(v) for v in measure.cutoffs[:2])}"
        ) from None
    if min(values) <= 0 or len(set(values)) < len(values):
        raise UnknownMeasureError(
            f"trec_eval measure {measure.name}.{params}: cutoffs must be positive and distinct"
        )
    return values


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
) -> Callable[[Measure, bool, Compat], pl.Expr | None]:
    """Interpolated precision from its lowest recall level up: trec_eval starts at the
    precision of the whole ranking, 0/0 where a condensed ranking (``-J``) is empty (the
    stand-in of a skipped query too), and that NaN stays at each level whose cut-off is no
    relevant document (:func:`lexiframe.metrics.sets.no_level_cutoff`)."""

    def undefined(measure: Measure, judged_only: bool, rules: Compat) -> pl.Expr | None:
        if not judged_only:  # a ranking holds a document, the stand-in one too
            return None
        level = lowest_level(measure)
        return (pl.col("n_ret") == 0) & no_level_cutoff(
            level, pl.col("n_rel"), rules.level_cutoff
        )

    return undefined


def _no_positive_gain(measure: Measure, judged_only: bool, rules: Compat) -> pl.Expr | None:
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
