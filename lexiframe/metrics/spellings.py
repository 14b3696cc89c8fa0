"""trec_eval's spellings of measures read as registry names: ``P_10`` is ``P@10``,
``rbp_p=0.8`` is ``RBP(p=0.8)``, ``ndcg_1=1,2=3`` is ``nDCG(gains={1: 1, 2: 3})``
(:func:`from_trec_eval`, which :func:`lexiframe.metrics.parse_measure` calls first).

A spelling whose parameters lexiframe does not compute is refused with the reason.
"""

from __future__ import annotations

import math
import re

from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.catalogue.builders import UTILITY_PARAMS
from lexiframe.metrics.hints import unknown_measure
from lexiframe.metrics.registry import families


def number_text(value: float) -> str:
    """A number as trec_eval's parameters spell it: ``10``, ``0.5``."""
    return f"{int(value)}" if float(value).is_integer() else f"{value:g}"


_NUMBER = re.compile(r"\d*\.?\d+")


def _cutoff_spelling(text: str) -> str | None:
    """``P_10`` as ``P@10``, ``iprec_at_recall_0.10`` as ``IPrec@0.10``: a family's
    ``trec_eval_cutoff`` root, ``_`` and the cut-off; else ``None``."""
    lowered = text.lower()
    roots = [(f.trec_eval_cutoff, f.name) for f in families() if f.trec_eval_cutoff]
    for root, family in sorted(roots, key=lambda item: -len(item[0])):
        cutoff = text[len(root) + 1 :]
        if lowered.startswith(root.lower() + "_") and _NUMBER.fullmatch(cutoff):
            return f"{family}@{cutoff}"
    return None


def _gains_spelling(text: str) -> tuple[str, str, str] | None:
    """trec_eval's gains per grade of a family's ``trec_eval_gains`` root
    (``ndcg.1=1,2=3``, printed ``ndcg_1=1,2=3``): the root, the family and the pairs."""
    roots = [(f.trec_eval_gains, f.name) for f in families() if f.trec_eval_gains]
    for root, family in sorted(roots, key=lambda item: -len(item[0])):
        pairs = text[len(root) + 1 :]
        if (
            text.startswith(root)
            and text[len(root) : len(root) + 1] in ("_", ".")
            and "=" in pairs
            and not any(mark in pairs for mark in "@()")
        ):
            return root, family, pairs
    return None


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
    cutoff = _cutoff_spelling(text)
    if cutoff is not None:
        return cutoff
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
                name,
                "trec_eval's utility takes four weights, e.g. utility.1,-1,0,0",
                family_known=True,
            )
        named = zip(UTILITY_PARAMS, values, strict=True)
        pairs = ", ".join(f"{key}={value!r}" for key, value in named)
        return f"Utility({pairs})"
    # trec_eval's set_F.0.5 (printed set_F_0.5): beta, as trec_eval's F weighs it.
    beta = re.fullmatch(r"set_F[._]([^@()]+)", text)
    if beta:
        values = _trec_eval_numbers(name, beta.group(1), "set_F.0.5") or ()
        if len(values) != 1 or values[0] < 0:
            raise unknown_measure(
                name,
                "trec_eval's set_F takes one non-negative beta, e.g. set_F.0.5",
                family_known=True,
            )
        return f"SetF(beta={values[0]!r})"
    _refuse_parameters(name, text)
    # trec_eval's measures with gains per grade: -m ndcg.1=1,2=3, which it prints as
    # ndcg_1=1,2=3, and G.1=2,2=4, ndcg_rel.1=1,2=5, Rndcg.2=7.
    gains = _gains_spelling(text)
    if gains is not None:
        root, family, pairs = gains
        return f"{family}(gains={_trec_eval_gains(name, root, pairs)!r})"
    return text


def _trec_eval_numbers(name: str, text: str | None, example: str) -> tuple[float, ...] | None:
    """trec_eval's comma-separated numeric parameters (``0.2,.5,0.8``), or ``None``."""
    if text is None:
        return None
    try:
        values = tuple(float(item) for item in text.split(","))
    except ValueError:
        raise unknown_measure(
            name,
            f"trec_eval's parameters are comma-separated numbers, e.g. {example}",
            family_known=True,
        ) from None
    if not all(math.isfinite(value) for value in values):
        raise unknown_measure(
            name, f"trec_eval's parameters are finite numbers, e.g. {example}", family_known=True
        )
    return values


def _trec_eval_gains(name: str, root: str, text: str) -> dict[int, float]:
    """trec_eval's gain pairs ``1=1,2=3.5`` of measure ``root`` as a map of grades to gains.

    trec_eval sorts its gains comparing their difference cut to a whole number, so that the
    order of gains less than 1 apart is the order of the pairs
    (:func:`lexiframe.metrics.gain_order.ideal_gain_order`); a map holds its grades in
    ascending order, as :func:`lexiframe.metrics.gain_order.check_gain_order` models them,
    so pairs with a fractional (or huge) gain out of that order are refused.

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
                name,
                f"trec_eval's {root} gains are grade=gain pairs, e.g. {root}.0=0,1=1,2=3",
                family_known=True,
            ) from None
        if level in gains:
            raise unknown_measure(name, f"grade {level} is given a gain twice", family_known=True)
        gains[level] = value
    # Whole gains less than 2^30 in size compare consistently whatever their order.
    ties = any(not value.is_integer() or abs(value) >= 2**30 for value in gains.values())
    if ties and list(gains) != sorted(gains):
        ordered = ",".join(f"{grade}={number_text(gains[grade])}" for grade in sorted(gains))
        raise unknown_measure(
            name,
            "the order of trec_eval's pairs decides how its sort orders gains less than 1 "
            "apart, or 2^31 or more apart (it compares the difference of two gains cut to a "
            "C int), and lexiframe reads a gain map by ascending grade: give the pairs in "
            f"that order ({root}.{ordered})",
            family_known=True,
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
