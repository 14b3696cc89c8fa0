"""trec_eval's measure names, in the order trec_eval prints them, and their registry measures.

trec_eval names a measure by a root (``P``, ``ndcg_cut``, ``map``) and optional parameters
after a dot (``P.5,10``, ``rbp.p=0.8``); it prints one value per cutoff (``P_5``, ``P_10``)
and expands nicknames (``official``, ``all_trec``, ``set``). This module knows that
catalogue and maps each printed name to a measure of :data:`lexiframe.metrics.FAMILIES`
through the registry's own names and aliases: a measure the registry understands under
trec_eval's spelling (``map``, ``P_10``, ``recip_rank``, ``num_ret``) or as
``<root>@<cutoff>`` (``success@5``) is available with nothing to add here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.registry import Measure, parse_measure

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
    TrecMeasure("iprec_at_recall", "cut", _TENTHS),
    TrecMeasure("P", "cut", _CUTS),
    TrecMeasure("relstring", "relstring"),
    TrecMeasure("recall", "cut", _CUTS),
    TrecMeasure("infAP", "double"),
    TrecMeasure("gm_bpref", "gm", of="bpref"),
    TrecMeasure("Rprec_mult", "cut", _FIFTHS),
    TrecMeasure("utility", "double"),
    TrecMeasure("11pt_avg", "double"),
    TrecMeasure("binG", "double"),
    TrecMeasure("G", "double"),
    TrecMeasure("dcg", "double"),
    TrecMeasure("ideal_dcg", "double"),
    TrecMeasure("ndcg", "double"),
    TrecMeasure("ndcg_rel", "double"),
    TrecMeasure("Rndcg", "double"),
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
    TrecMeasure("rbp_resid", "double"),
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

# What a positions frame holds directly, when the registry has no measure of that name.
FRAME_COUNTS = {
    "num_ret": "`n_ret` of the positions frame",
    "num_rel": "`n_rel` of the positions frame",
    "num_rel_ret": "the length of `positions`",
}


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
    if measure.name in FRAME_COUNTS:
        return True
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
                names.append(f"`{found}`" if found else FRAME_COUNTS[measure.name])
            if len(printed) > 2:
                names.append("…")
            target = ", ".join(names)
        lines.append(f"| `{measure.name}` | {prints} | {target} |")
    return "\n".join(lines) + "\n"
