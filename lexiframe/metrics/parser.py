"""Measure names parsed: ``nDCG@10``, ``RBP(p=0.5)``, ``AP(rel=2)``, ``ASL@g1-10`` and
trec_eval's spellings (``ndcg_cut_10``) become a :class:`~lexiframe.metrics.Measure`, whose
canonical name is the output column. Names are parsed, not split by hand: parameters as
Python reads keyword arguments, each checked by its family's converter."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable

from lexiframe.errors import InputError, UnknownMeasureError
from lexiframe.metrics.converters import GAIN_MAP_EXAMPLE
from lexiframe.metrics.hints import did_you_mean, unknown_measure
from lexiframe.metrics.peer_spellings import from_peers
from lexiframe.metrics.registry import family_named
from lexiframe.metrics.spec import LEVEL, Family, Measure
from lexiframe.metrics.spellings import from_trec_eval
from lexiframe.preferences import is_preference
from lexiframe.validate import POSITION_MAX

_NAME = re.compile(
    r"^(?P<family>[A-Za-z][A-Za-z0-9_]*?)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@]+))?$"
)


def _parse_params(name: str, family: Family, text: str | None) -> tuple[tuple[str, object], ...]:
    """The parameters of ``NAME(key=value, …)`` as Python reads keyword arguments: values are
    literals (``0.5``, ``'ap'``, ``{1: 1, 2: 3}``); a bare word reads as a string (``ap``)."""
    values = dict(family.params)
    if not text or not text.strip():
        return tuple(values.items())
    allowed = ", ".join(family.params) or "none"
    if family.params:
        allowed += f" (e.g. {family.name}({_param_example(family)}))"
    source = f"f({text})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
        raise unknown_measure(
            name,
            f"its parameters do not read as param=value; {family.name} takes: {allowed}",
            family_known=True,
        )
    seen: set[str] = set()
    for keyword in call.keywords:
        key = str(keyword.arg)
        if key not in family.params:
            raise unknown_measure(
                name, f"{family.name} takes the parameters: {allowed}", family_known=True
            )
        if key in seen:
            raise unknown_measure(name, f"{key}= is given twice", family_known=True)
        seen.add(key)
        value = _literal(keyword.value, source)
        if isinstance(value, dict) and len(value) != len(getattr(keyword.value, "keys", ())):
            raise unknown_measure(name, f"{key}= names a key twice", family_known=True)
        if key == LEVEL and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise unknown_measure(
                name, "rel= is a relevance grade of at least 1, e.g. rel=2", family_known=True
            )
        if key in family.choices and value not in family.choices[key]:
            raise unknown_measure(
                name, f"{key} must be one of {family.choices[key]}", family_known=True
            )
        if key in family.converters:
            try:
                value = family.converters[key](value)
            except ValueError as error:
                raise unknown_measure(name, str(error), family_known=True) from None
        values[key] = value
    return tuple(values.items())


def _param_example(family: Family) -> str:
    """A first parameter of ``family`` as a name spells it: ``p=0.8``, ``gains={…}``."""
    key, default = next(iter(family.params.items()))
    if key == "gains":
        return GAIN_MAP_EXAMPLE
    if key == LEVEL:
        return f"{LEVEL}=2"
    printer = family.param_text.get(key, repr)
    return f"{key}={printer(default)}"


def _literal(node: ast.expr, source: str) -> object:
    """A parameter's value: a Python literal, else its text (``exposure=ap`` reads 'ap')."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        if isinstance(node, ast.Name):
            return node.id
        return ast.get_source_segment(source, node) or ""


def _parse_cutoff(name: str, family: Family, text: str | None) -> int | float | None:
    if text is None:
        if family.cutoff == "required":
            example = 0.5 if family.fractional_cutoff else 10
            cutoff = f"{family.name}@{family.cutoff_prefix}{example}"
            raise unknown_measure(
                name, f"{family.name} needs a cutoff, e.g. {cutoff}", family_known=True
            )
        return None
    if family.cutoff == "none":
        raise unknown_measure(name, f"{family.name} takes no cutoff", family_known=True)
    if family.fractional_cutoff:
        try:
            level = float(text)
        except ValueError:
            level = -1.0
        top = math.inf if family.cutoff_max is None else family.cutoff_max
        if not (0.0 <= level <= top and math.isfinite(level)):
            if family.cutoff_max is None:
                raise unknown_measure(
                    name,
                    f"the cutoff of {family.name} is a non-negative number, e.g. @0.5",
                    family_known=True,
                )
            raise unknown_measure(
                name,
                f"the cutoff of {family.name} is a level in [0, {top:g}], e.g. @0.5",
                family_known=True,
            )
        return level
    digits = text[len(family.cutoff_prefix) :] if text.startswith(family.cutoff_prefix) else ""
    if not digits.isdigit() or len(digits) > 10 or not 1 <= int(digits) <= POSITION_MAX:
        raise unknown_measure(
            name,
            f"the cutoff must look like @{family.cutoff_prefix}10, a whole number from 1 to "
            f"{POSITION_MAX}",
            family_known=True,
        )
    return int(digits)


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name such as ``"nDCG@10"``, ``"RBP(p=0.5)"`` or ``"P_10"``.

    Family names are matched without regard to case; trec_eval's names (``recip_rank``,
    ``map``, ``Rprec``, ``P_10``, ``recall_1000``, ``ndcg_cut_10``) are understood too, and
    give trec_eval's numbers: ``rbp``, trec_eval's spelling, is ``RBP(p=0.9)`` (its default
    persistence) and ``rbp_p=0.8`` is ``RBP(p=0.8)``; ``ndcg_1=1,2=3`` (trec_eval's
    ``-m ndcg.1=1,2=3``) is ``nDCG(gains={1: 1, 2: 3})``, and ``G_1=2,2=4``,
    ``ndcg_rel_1=1,2=5`` and ``Rndcg_2=7`` are ``G``, ``nDCGRel`` and ``RnDCG`` with gains.
    ir_measures' and ranx's spellings give their numbers too (``nDCG(dcg='exp-log2')@10``,
    ``hit_rate@10``, ``map@100-l2``: :mod:`lexiframe.metrics.peer_spellings`).

    Example:
        >>> from lexiframe.metrics import parse_measure
        >>> str(parse_measure("ndcg@10")), str(parse_measure("asl@g1-5"))
        ('nDCG@10', 'ASL@g1-5')
        >>> str(parse_measure("hit_rate@10")), str(parse_measure("nDCG(dcg='exp-log2')@10"))
        ('Success@10', "nDCG(gains='exp')@10")
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a measure is a name such as 'nDCG@10', not {type(name).__name__}")
    text = from_trec_eval(name, from_peers(name, name.strip()))
    match = _NAME.match(text)
    if not match:
        raise unknown_measure(
            name,
            "it does not read as NAME, NAME@k or NAME(param=value)",
            suggestion=did_you_mean(text),
        )
    family = family_named(match.group("family"))
    if family is None and is_preference(match.group("family")):
        raise UnknownMeasureError(
            f"{name!r} is a preference between two rankings, not a measure of one: compute it "
            f"with lexiframe.preferences(positions, [{name!r}]) (at the command line, "
            "lexiframe evaluate -m takes both kinds)"
        )
    if family is None:
        asked = match.group("family")
        suggestion = did_you_mean(text if match.group("cutoff") is None else asked)
        raise unknown_measure(name, f"no measure is called {asked!r}", suggestion=suggestion)
    return Measure(
        family=family,
        cutoff=_parse_cutoff(name, family, match.group("cutoff")),
        params=_parse_params(name, family, match.group("params")),
    )


def needs_n_hint(column: str) -> str:
    """The fix for a column of a measure that is null without the corpus size (SL3,
    RecallError, ``TSE(exposure='linear')``), to end a message with; else ``""``.

    Example:
        >>> needs_n_hint("SL3").split(" to ")[0], needs_n_hint("AP")
        (' Pass the corpus size n= (--n at the command line)', '')
    """
    try:
        parsed = parse_measure(column)
    except (UnknownMeasureError, TypeError):
        return ""
    if parsed.name == column and parsed.needs_n:
        return " Pass the corpus size n= (--n at the command line) to give every ranking a value."
    return ""


def parse_measures(names: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse one or several measure names; duplicates (after canonicalisation) are kept once."""
    if isinstance(names, str | Measure):
        names = [names]
    if not isinstance(names, Iterable):
        raise InputError(
            f"measures are a list of names such as ['RR', 'AP', 'nDCG@10'], not "
            f"{type(names).__name__}"
        )
    parsed: dict[str, Measure] = {}
    for name in names:
        measure = parse_measure(name)
        parsed.setdefault(measure.name, measure)
    if not parsed:
        raise UnknownMeasureError("no measure was named; e.g. measures=['RR', 'AP', 'nDCG@10']")
    return list(parsed.values())
