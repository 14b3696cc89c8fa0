"""What to say when a measure name does not parse: the error, a short list of the known
names, and the name the user most likely meant (``P10`` → ``P@10``, ``ndcg`` → ``nDCG``)."""

from __future__ import annotations

import difflib
import re

from lexiframe import preferences
from lexiframe._utils import shorten
from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.peer_spellings import IR_MEASURES, RANX
from lexiframe.metrics.registry import families, family_named, known_names

_RANK_GLUED = re.compile(r"(?P<family>[A-Za-z][A-Za-z_]*?)[._-]?(?P<cutoff>\d+(?:\.\d+)?)")
"""A family and a cut-off written together or with trec_eval's dot: ``P10``, ``P.10``,
``ndcg-10``, ``IPrec0.5``."""


def did_you_mean(name: str) -> str:
    """``"did you mean 'P@10'?"`` for a name close to a known one, else ``""``: a family and
    a cut-off written without ``@`` first (trec_eval's ``P.10`` too), then a near spelling
    (any case) of a family, an alias, or ir_measures' and ranx's names.

    Example:
        >>> did_you_mean("P10"), did_you_mean("ndgc"), did_you_mean("zzz")
        ("did you mean 'P@10'?", "did you mean 'nDCG'?", '')
        >>> did_you_mean("hitrate"), did_you_mean("ndcg-burges")
        ("did you mean 'hit_rate'?", "did you mean 'ndcg_burges'?")
    """
    glued = _RANK_GLUED.fullmatch(name)
    if glued:
        root = glued.group("family").lower()
        family = family_named(root) or next(
            (f for f in families() if f.trec_eval_cutoff.lower() == root.rstrip("_")), None
        )
        if family is not None and family.cutoff != "none":
            meant = f"{family.name}@{family.cutoff_prefix}{glued.group('cutoff')}"
            dotted = "." in name[: glued.start("cutoff")]
            drop_in = " (trec_eval's dotted names are read by `lexiframe trec_eval -m`)"
            return f"did you mean {meant!r}?{drop_in if dotted else ''}"
    spellings = {
        spelling.lower(): family.name
        for family in families()
        for spelling in (family.name, *family.aliases)
    }
    spellings.update({m.name.lower(): m.name for m in preferences.MEASURES})
    # ir_measures' and ranx's names, as those tools spell them (hit_rate, ndcg_burges).
    for peer in (*IR_MEASURES, *RANX):
        spellings.setdefault(peer.lower(), peer)
    close = difflib.get_close_matches(name.lower(), list(spellings), n=1, cutoff=0.6)
    return f"did you mean {spellings[close[0]]!r}?" if close else ""


def unknown_measure(
    name: str, why: str, *, suggestion: str = "", family_known: bool = False
) -> UnknownMeasureError:
    """The error for a measure name that does not parse: ``name`` (shortened), ``why``, and
    the name it most likely was (``suggestion``, from :func:`did_you_mean`) or else, unless
    the family is known (``family_known``: its cut-off or parameters are off), the families
    it could have been (trec_eval's spellings raise it too).

    Example:
        >>> str(unknown_measure("P@x", "the cutoff is a number")).split(". Known")[0]
        "unknown measure 'P@x': the cutoff is a number"
        >>> str(unknown_measure("P10", "no such measure", suggestion="did you mean 'P@10'?"))
        "unknown measure 'P10': no such measure; did you mean 'P@10'? (`lexiframe measures` ...)"
    """
    if suggestion or family_known:
        suggestion = f"; {suggestion}" if suggestion else ""
        return UnknownMeasureError(
            f"unknown measure {shorten(repr(name))}: {why}{suggestion} (`lexiframe "
            "measures` lists every measure)"
        )
    preference_names = ", ".join(m.name for m in preferences.MEASURES)
    return UnknownMeasureError(
        f"unknown measure {shorten(repr(name))}: {why}. Known measures: "
        f"{', '.join(known_names())}; preferences: {preference_names} (`lexiframe measures` "
        "lists them with their parameters and an example each)"
    )
