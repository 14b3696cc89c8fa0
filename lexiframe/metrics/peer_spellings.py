"""ir_measures' and ranx's spellings of measures read as registry names, so that the names
researchers already type give those tools' numbers: ``hit_rate@10`` is ``Success@10``,
``ndcg_burges@10`` and ``nDCG(dcg='exp-log2')@10`` are ``nDCG(gains='exp')@10``,
``map@100-l2`` is ``AP(rel=2)@100`` (:func:`from_peers`, which
:func:`lexiframe.metrics.parse_measure` calls first; trec_eval's spellings, which ranx's
syntax would also match, are left to :mod:`lexiframe.metrics.spellings`).

One table per tool says what each of its measures is here: :data:`IR_MEASURES` (its
measure names, matched as ir_measures spells them; a name that is lexiframe's too, e.g.
``P(rel=2)@10``, reads natively) and :data:`RANX` (ranx's metric names, lower case as ranx
spells them, with its ``@k`` cut-off and ``-l<level>`` relevance level). A measure that
lexiframe does not compute, or a parameter it sets elsewhere, is refused with the reason
and what to name instead, never given another number. A measure defined with
:func:`lexiframe.define_measure` keeps its name. :data:`PEER_TABLE` is the measures page's
table of the spellings people report.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.registry import family_named
from lexiframe.metrics.spec import LEVEL


class Peer(NamedTuple):
    """A peer tool's measure: lexiframe's family, or ``None`` and why it is refused."""

    family: str | None
    refusal: str = ""


JUDGED_ONLY = (
    "judged_only=True is trec_eval's -J, which lexiframe sets for the whole evaluation: "
    "pass condensed=True (--condensed at the command line) and name {plain}"
)
SET_LEVEL = (
    "lexiframe's {family} counts as relevant the documents at the frame's level: pass "
    "threshold={level} (--threshold {level}) and name {family}"
)

IR_MEASURES: dict[str, Peer] = {
    # ir_measures' name: lexiframe's family (its parameters are read as lexiframe reads them:
    # rel= is the relevance level, cutoff=/@ the cut-off, IPrec's recall=/@ the level).
    **dict.fromkeys(("nDCG", "NDCG"), Peer("nDCG")),
    **dict.fromkeys(("AP", "MAP"), Peer("AP")),
    **dict.fromkeys(("P", "Precision"), Peer("P")),
    **dict.fromkeys(("R", "Recall"), Peer("R")),
    **dict.fromkeys(("RR", "MRR"), Peer("RR")),
    **dict.fromkeys(("Rprec", "RPrec"), Peer("RP")),
    **dict.fromkeys(("Bpref", "BPref"), Peer("Bpref")),
    "Success": Peer("Success"),
    "Judged": Peer("Judged"),
    "infAP": Peer("infAP"),
    "ERR": Peer("ERR"),
    "IPrec": Peer("IPrec"),
    "NumRet": Peer("NumRet"),
    "NumRelRet": Peer("NumRelRet"),
    "NumRel": Peer("NumRel"),
    "SetP": Peer("SetP"),
    "SetRelP": Peer("SetRelativeP"),
    "SetR": Peer("SetR"),
    "SetF": Peer("SetF"),
    "SetAP": Peer("SetAP"),
    "RBP": Peer("RBP"),
    "NumQ": Peer(None, "ir_measures' NumQ counts queries: lf.summarize gives it as n_queries"),
    "SDCG": Peer(None, "ir_measures' SDCG (cwl_eval's scaled DCG) has no lexiframe measure"),
    **{
        name: Peer(None, f"ir_measures' {name} (from {provider}) has no lexiframe measure")
        for provider, names in (
            ("cwl_eval", ("BPM", "INST", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11")),
            ("ndeval", ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP")),
            ("ndeval", ("AP_IA", "MAP_IA", "P_IA", "StRecall")),
            ("its accuracy provider", ("Accuracy",)),
            ("another tool's output", ("Compat",)),
        )
        for name in names
    },
}
"""ir_measures 0.4.3's measures (and its aliases), as ir_measures spells them."""

RANX: dict[str, Peer] = {
    # ranx's metric: lexiframe's family at @k (a bare name: the whole ranking).
    "ndcg": Peer("nDCG"),
    "ndcg_burges": Peer("nDCG"),
    "dcg": Peer("DCG"),
    "dcg_burges": Peer("DCG"),
    "map": Peer("AP"),
    "mrr": Peer("RR"),
    "precision": Peer("P"),
    "recall": Peer("R"),
    "hit_rate": Peer("Success"),
    "hits": Peer("NumRelRet"),
    "r-precision": Peer("RP"),
    "bpref": Peer("Bpref"),
    "f1": Peer("SetF"),
    "rbp": Peer(
        None,
        "ranx's rbp adds the raw grades (lexiframe's RBP, as trec_eval's, scales them to "
        "[0, 1] by the query's top grade); on binary qrels they agree: name RBP(p={p})",
    ),
}
"""ranx 0.3.21's metrics (its ``metric_switch``), as ranx spells them."""

_DCG = ("nDCG", "DCG")
"""The families of ranx's ndcg and dcg, whose -l<level> gives the grades below it gain 0."""

_WHOLE_SET = {"precision": "SetP", "recall": "SetR", "f1": "SetF"}
"""ranx's precision, recall and f1 without a cut-off: of the whole retrieved set."""

_RANX = re.compile(
    r"(?P<metric>[a-z_1-]+?)(?:(?:@(?P<k>\d+))|(?:[.@](?P<p>\d+)))?(?:-l(?P<level>\d+))?"
)
_IR_MEASURES = re.compile(r"(?P<family>\w+)(?:\((?P<params>.*)\))?(?:@(?P<at>[^@()]+))?")


def from_peers(name: str, text: str) -> str:
    """An ir_measures or ranx spelling (``nDCG(dcg='exp-log2')@10``, ``hit_rate@10``,
    ``map@100-l2``) as the registry's name; any other text as it is. A spelling lexiframe
    does not compute is refused with the reason.

    Example:
        >>> from_peers("hit_rate@10", "hit_rate@10"), from_peers("recall", "recall")
        ('Success@10', 'SetR')
        >>> from_peers("x", "nDCG(dcg='exp-log2')@10"), from_peers("x", "ndcg@10-l2")
        ("nDCG(gains='exp')@10", 'nDCG(gains={1: 0})@10')
        >>> from_peers("x", "P(rel=2)@10")  # lexiframe's own spelling
        'P(rel=2)@10'
    """
    ranx = _RANX.fullmatch(text)
    if ranx and ranx.group("metric") in RANX and not _users(ranx.group("metric")):
        return _from_ranx(name, ranx)
    measure = _IR_MEASURES.fullmatch(text)
    if measure and measure.group("family") in IR_MEASURES and not _users(measure.group("family")):
        return _from_ir_measures(name, text, measure)
    return text


def _users(name: str) -> bool:
    """Whether ``name`` is a measure defined with :func:`lexiframe.define_measure`, which
    takes precedence over a peer's spelling."""
    family = family_named(name)
    return family is not None and family.defined_by_user


def _from_ranx(name: str, match: re.Match[str]) -> str:
    metric, k, p, level = (match.group(key) for key in ("metric", "k", "p", "level"))
    peer = RANX[metric]
    k = k if k and int(k) > 0 else None  # ranx's @0: the whole ranking
    at = f"@{k}" if k else ""
    if metric == "rbp" and not (p or k or level):
        return match.group(0)  # trec_eval's rbp, RBP(p=0.9)
    if peer.family is None:
        persistence = f"0.{p or k}"
        raise _refused(name, peer.refusal.format(p=persistence, metric=metric, at=at))
    if p is not None:
        raise _refused(name, f"ranx's {metric} takes a cut-off @k, e.g. {metric}@10")
    family = peer.family
    if not k and metric in _WHOLE_SET:
        family = _WHOLE_SET[metric]
    elif not k and metric == "hit_rate":
        raise _refused(name, "lexiframe's Success (ranx's hit_rate) takes a cut-off: hit_rate@10")
    params = {"gains": "'exp'"} if metric.endswith("_burges") else {}
    if level is not None and int(level) < 1:
        raise _refused(
            name,
            f"ranx's -l{level} counts the documents graded {level} (judged non-relevant) as "
            "relevant; lexiframe's relevance levels start at 1",
        )
    if level is not None and int(level) > 1:
        params.update(_ranx_level(name, metric, family, int(level), params))
    return _spelled(family, params, at)


def _ranx_level(
    name: str, metric: str, family: str, level: int, params: dict[str, str]
) -> dict[str, str]:
    """ranx's ``-l<level>``: a relevance level of the measure's own, or for nDCG and DCG the
    grades below it gaining nothing (ranx drops them from the qrels)."""
    found = family_named(family)
    if found is not None and LEVEL in found.params:
        return {"rel": str(level)}
    if family in _DCG and not params:
        return {"gains": repr(dict.fromkeys(range(1, level), 0))}
    if family in _DCG:
        raise _refused(
            name,
            f"ranx's {metric} at level {level} takes the gains 2^g - 1 of the grades from "
            f"{level} up only, which lexiframe does not give: name {metric}@k",
        )
    raise _refused(name, SET_LEVEL.format(family=family, level=level))


def _from_ir_measures(name: str, text: str, match: re.Match[str]) -> str:
    peer = IR_MEASURES[match.group("family")]
    if peer.family is None:
        raise _refused(name, peer.refusal)
    family = peer.family
    params = _ir_measures_params(match.group("params"))
    if params is None:  # lexiframe's parser says what does not read
        return text
    at = match.group("at")
    for key in ("cutoff", "recall"):  # ir_measures' parameter behind @
        if key in params:
            at = params.pop(key)
    if params.pop("dcg", "'log2'") == "'exp-log2'":
        if "gains" in params:
            raise _refused(name, "ir_measures takes dcg='exp-log2' or gains=, not both")
        params["gains"] = "'exp'"
    if params.pop("judged_only", "False") != "False":
        plain = _spelled(family, params, f"@{at}" if at else "")
        raise _refused(name, JUDGED_ONLY.format(plain=plain))
    if params.pop("relative", "False") != "False":
        family = "SetRelativeP"
    if family == "NumRet" and "rel" in params:  # ir_measures' NumRet(rel=1) is NumRelRet
        family = "NumRelRet"
    if family in ("Bpref", "infAP") and "rel" in params:
        raise _refused(name, SET_LEVEL.format(family=family, level=params["rel"]))
    return _spelled(family, params, f"@{at}" if at else "")


def _ir_measures_params(text: str | None) -> dict[str, str] | None:
    """ir_measures' parameters as their source text by name (``rel=2``: ``{'rel': '2'}``),
    or ``None`` where they do not read as keyword arguments."""
    if not text or not text.strip():
        return {}
    source = f"f({text})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
        return None
    if len({k.arg for k in call.keywords}) < len(call.keywords):
        return None  # a parameter given twice
    return {str(k.arg): ast.get_source_segment(source, k.value) or "" for k in call.keywords}


def _spelled(family: str, params: dict[str, str], at: str) -> str:
    inside = ", ".join(f"{key}={value}" for key, value in params.items())
    return f"{family}({inside}){at}" if inside else f"{family}{at}"


def _refused(name: str, why: str) -> UnknownMeasureError:
    return UnknownMeasureError(f"{name!r}: {why}")


class PeerRow(NamedTuple):
    """One line of the measures page's table: a measure as each tool spells it."""

    lexiframe: str
    trec_eval: str
    ir_measures: str
    ranx: str


PEER_TABLE: tuple[PeerRow, ...] = (
    PeerRow("nDCG@10", "ndcg_cut_10", "nDCG@10", "ndcg@10"),
    PeerRow("nDCG", "ndcg", "nDCG", "ndcg"),
    PeerRow("nDCG(gains='exp')@10", "", "nDCG(dcg='exp-log2')@10", "ndcg_burges@10"),
    PeerRow("nDCG(gains={1: 0})@10", "", "", "ndcg@10-l2"),
    PeerRow("DCG", "dcg", "", "dcg"),
    PeerRow("DCG@10", "", "", "dcg@10"),
    PeerRow("DCG(gains='exp')@10", "", "", "dcg_burges@10"),
    PeerRow("IDCG", "ideal_dcg", "", ""),
    PeerRow("AP", "map", "AP", "map"),
    PeerRow("AP@100", "map_cut_100", "AP@100", "map@100"),
    PeerRow("AP(rel=2)", "", "AP(rel=2)", "map-l2"),
    PeerRow("RR", "recip_rank", "RR", "mrr"),
    PeerRow("RR@10", "", "RR@10", "mrr@10"),
    PeerRow("P@10", "P_10", "P@10", "precision@10"),
    PeerRow("R@100", "recall_100", "R@100", "recall@100"),
    PeerRow("RP", "Rprec", "Rprec", "r-precision"),
    PeerRow("Success@10", "success_10", "Success@10", "hit_rate@10"),
    PeerRow("NumRelRet@10", "", "", "hits@10"),
    PeerRow("NumRelRet", "num_rel_ret", "NumRelRet", "hits"),
    PeerRow("NumRet", "num_ret", "NumRet", ""),
    PeerRow("NumRel", "num_rel", "NumRel", ""),
    PeerRow("SetP", "set_P", "SetP", "precision"),
    PeerRow("SetR", "set_recall", "SetR", "recall"),
    PeerRow("SetF", "set_F", "SetF", "f1"),
    PeerRow("SetF@10", "", "", "f1@10"),
    PeerRow("SetAP", "set_map", "SetAP", ""),
    PeerRow("SetRelativeP", "set_relative_P", "SetRelP", ""),
    PeerRow("IPrec@0.5", "iprec_at_recall_0.50", "IPrec@0.5", ""),
    PeerRow("Bpref", "bpref", "Bpref", "bpref"),
    PeerRow("infAP", "infAP", "infAP", ""),
    PeerRow("Judged@10", "", "Judged@10", ""),
    PeerRow("ERR@10", "", "ERR@10", ""),
    PeerRow("RBP(p=0.9)", "rbp", "", ""),
    PeerRow("RBP(rel=1)", "", "RBP(rel=1)", ""),
)
"""The measures people report, as lexiframe, trec_eval, ir_measures and ranx spell them
(``""``: the tool has no spelling of it): the measures page's table. Every spelling reads
as the lexiframe name of its row (``tests/test_peer_spellings.py``)."""
