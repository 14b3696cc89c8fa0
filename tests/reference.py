"""A slow, obviously-correct pure-Python reference for lexiframe's positions and measures.

Every kernel of the library is checked against this module: the definitions are stated
once here, plainly, and the fast code is checked against them. It uses plain lists and
dicts, one ranking at a time, and follows the definitions of docs/definitions.md §1–§2
line by line:

- a ranking is the run's rows of one (system, query) sorted by score descending, ties
  broken by document id descending as a string (trec_eval's rule), cut at ``depth``;
- every system of the run gets a ranking for every query of the qrels with at least one
  relevant document (``relevance >= threshold``); a query it skipped is an empty ranking;
- unretrieved relevant documents take the bottom positions of a corpus of ``n`` documents
  (pessimistic imputation, lexirecall paper §2.2): p̂_i = n − (m − i) for i > r.

Nothing here is vectorised or clever on purpose.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RunRow = tuple[object, object, object, float]
"""(system, query, doc, score)."""

QrelsRow = tuple[object, object, int]
"""(query, doc, relevance)."""

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class Ranking:
    """What the positions frame holds for one (system, query)."""

    positions: list[int]
    n_rel: int
    n_ret: int
    docs: list[object] = field(default_factory=list)
    grades: list[int] = field(default_factory=list)
    ideal_grades: list[int] = field(default_factory=list)
    depth: int = 0
    """The depth a skipped ranking is scored at: ``depth=`` if given, else the longest
    ranking of the query among all systems."""
    nonrel_positions: list[int] = field(default_factory=list)
    """Ranks of the retrieved documents judged non-relevant (0 ≤ grade < threshold)."""
    pooled_positions: list[int] = field(default_factory=list)
    """Ranks of the retrieved documents judged with a negative grade (pooled, unassessed)."""
    n_nonrel: int = 0
    """Judged non-relevant documents of the query."""
    gain_positions: list[int] = field(default_factory=list)
    """Ranks of the retrieved documents whose grades are gains (``grades``): the relevant
    ones, and above threshold 1 every positive-grade one (trec_eval's -l keeps their gains)."""


def ranked_docs(rows: Iterable[tuple[object, float]], depth: int | None = None) -> list[object]:
    """Documents of one ranking in trec_eval order: score desc, then str(doc) desc."""
    ordered = sorted(rows, key=lambda row: (row[1], str(row[0])), reverse=True)
    docs = [doc for doc, _ in ordered]
    return docs if depth is None else docs[:depth]


def positions(
    run: Iterable[RunRow],
    qrels: Iterable[QrelsRow],
    *,
    threshold: int = 1,
    depth: int | None = None,
    no_relevant: str = "drop",
    condensed: bool = False,
) -> dict[tuple[str, object], Ranking]:
    """The positions frame as ``{(system, query): Ranking}`` (docs/definitions.md §1).

    Systems are keyed by ``str(system)`` (lexiframe casts system ids to strings). With
    ``no_relevant="keep"`` every judged query is evaluated, also those without a relevant
    document (trec_eval's ``-c``). ``condensed``: after the depth cut, the documents
    without a judgment of grade 0 or more leave the ranking (trec_eval's ``-J``).
    """
    run = list(run)
    judgments: dict[object, dict[object, int]] = {}
    for query, doc, relevance in qrels:
        judgments.setdefault(query, {})[doc] = relevance
    relevant = {
        query: {doc: grade for doc, grade in docs.items() if grade >= threshold}
        for query, docs in judgments.items()
    }
    if no_relevant == "drop":
        relevant = {query: docs for query, docs in relevant.items() if docs}
    gain_level = 1 if threshold > 1 else threshold

    by_ranking: dict[tuple[str, object], list[tuple[object, float]]] = {}
    systems: list[str] = []
    for system, query, doc, score in run:
        if str(system) not in systems:
            systems.append(str(system))
        by_ranking.setdefault((str(system), query), []).append((doc, score))

    result = {}
    for query, rel_docs in relevant.items():
        grades = judgments.get(query, {})
        rankings = {
            system: ranked_docs(by_ranking.get((system, query), []), depth) for system in systems
        }
        if condensed:
            rankings = {
                system: [doc for doc in docs if grades.get(doc, -1) >= 0]
                for system, docs in rankings.items()
            }
        longest = max(len(docs) for docs in rankings.values())
        for system, docs in rankings.items():
            found = [(rank, doc) for rank, doc in enumerate(docs, start=1) if doc in rel_docs]
            ranked = list(enumerate(docs, start=1))
            gains = {doc: grade for doc, grade in grades.items() if grade >= gain_level}
            gainful = [(rank, doc) for rank, doc in ranked if doc in gains]
            result[(system, query)] = Ranking(
                positions=[rank for rank, _ in found],
                n_rel=len(rel_docs),
                n_ret=len(docs),
                docs=[doc for _, doc in found],
                grades=[gains[doc] for _, doc in gainful],
                ideal_grades=sorted(gains.values(), reverse=True),
                gain_positions=[rank for rank, _ in gainful],
                depth=longest if depth is None else depth,
                nonrel_positions=[
                    rank for rank, doc in ranked if 0 <= grades.get(doc, -1) < threshold
                ],
                pooled_positions=[rank for rank, doc in ranked if grades.get(doc, 0) < 0],
                n_nonrel=sum(1 for grade in grades.values() if 0 <= grade < threshold),
            )
    return result


def dropped_queries(
    run: Iterable[RunRow], qrels: Iterable[QrelsRow], *, threshold: int = 1, no_relevant="drop"
) -> set[object]:
    """Queries of the run that are not evaluated (unjudged, or no relevant document)."""
    qrels = list(qrels)
    evaluated = {query for query, _, relevance in qrels if relevance >= threshold}
    if no_relevant == "keep":
        evaluated = {query for query, _, _ in qrels}
    return {query for _, query, _, _ in run} - evaluated


def coverage(
    run: Iterable[RunRow], qrels: Iterable[QrelsRow], *, threshold: int = 1
) -> dict[str, tuple[int, int, int, int]]:
    """Per system: (evaluated, skipped, unjudged, no_relevant) query counts.

    evaluated: queries of the qrels with a relevant document; skipped: of those, the ones
    the system did not answer; unjudged / no_relevant: queries the system answered that the
    qrels do not know / judge without a relevant document.
    """
    run, qrels = list(run), list(qrels)
    judged = {query for query, _, _ in qrels}
    with_relevant = {query for query, _, relevance in qrels if relevance >= threshold}
    answered: dict[str, set[object]] = {}
    for system, query, _, _ in run:
        answered.setdefault(str(system), set()).add(query)
    return {
        system: (
            len(with_relevant),
            len(with_relevant - queries),
            len(queries - judged),
            len((queries & judged) - with_relevant),
        )
        for system, queries in answered.items()
    }


# ---------------------------------------------------------------------------------------
# Measures of one ranking (docs/definitions.md §2). ``pos`` is the ascending list p_1 < … < p_r.


def rr(pos: list[int], k: int | None = None) -> float:
    """RR = 1/p_1; 0 if nothing relevant was retrieved (at or above k)."""
    if not pos or (k is not None and pos[0] > k):
        return 0.0
    return 1.0 / pos[0]


def ap(pos: list[int], m: int, k: int | None = None) -> float:
    """AP = (1/m) Σ_{i≤r} i/p_i (only p_i ≤ k with a cutoff, as trec_eval's map_cut)."""
    kept = [p for p in pos if k is None or p <= k]
    return sum(i / p for i, p in enumerate(kept, start=1)) / m


def _dcg(gains: list[float], ranks: list[int]) -> float:
    return sum(gain / math.log2(rank + 1) for gain, rank in zip(gains, ranks, strict=True))


def ndcg(pos: list[int], m: int, k: int | None = None) -> float:
    """Binary nDCG = Σ_{i≤r} 1/log2(p_i+1) / Σ_{j≤m} 1/log2(j+1), both sums cut at k."""
    kept = [p for p in pos if k is None or p <= k]
    ideal_length = m if k is None else min(m, k)
    ideal = _dcg([1.0] * ideal_length, list(range(1, ideal_length + 1)))
    return _dcg([1.0] * len(kept), kept) / ideal


def ndcg_graded(
    pos: list[int], grades: list[int], ideal_grades: list[int], k: int | None = None
) -> float:
    """trec_eval's ``ndcg`` / ``ndcg_cut_k``: gains are the grades, ideal = grades sorted."""
    pairs = [(p, g) for p, g in zip(pos, grades, strict=True) if k is None or p <= k]
    ideal = sorted(ideal_grades, reverse=True)
    if k is not None:
        ideal = ideal[:k]
    ideal_dcg = _dcg([float(g) for g in ideal], list(range(1, len(ideal) + 1)))
    if ideal_dcg == 0:
        return 0.0
    return _dcg([float(g) for _, g in pairs], [p for p, _ in pairs]) / ideal_dcg


def ndcg_gains(
    pos: list[int],
    grades: list[int],
    ideal_grades: list[int],
    gains: dict[int, float],
    k: int | None = None,
) -> float:
    """trec_eval's ``-m ndcg.1=1,2=3``: grade g gains ``gains.get(g, g)``; every retrieved
    document adds its gain (negative ones too), the ideal ranking holds the positive gains
    best first; 0 without a positive ideal gain. A cutoff stops both sums at k."""
    dcg = 0.0
    grade_at = dict(zip(pos, grades, strict=True))
    last = max(pos, default=0) if k is None else min(k, max(pos, default=0))
    for rank in range(1, last + 1):
        if rank in grade_at:
            grade = grade_at[rank]
            dcg += gains.get(grade, grade) / math.log2(rank + 1)
    ideal = sorted((gains.get(g, g) for g in ideal_grades if gains.get(g, g) > 0), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    ideal_dcg = sum(gain / math.log2(j + 1) for j, gain in enumerate(ideal, start=1))
    return dcg / ideal_dcg if ideal_dcg > 0 else 0.0


def err(pos: list[int], grades: list[int], k: int | None = None, max_grade: int = 4) -> float:
    """gdeval's ERR, walking the ranks 1 … k one by one: the user stops at rank i with
    probability R = (2^g − 1)/2^G (g = 0 for a document outside ``pos``) if they got there."""
    grade_at = dict(zip(pos, grades, strict=True))
    last = max(pos, default=0) if k is None else k
    score, reach = 0.0, 1.0
    for rank in range(1, last + 1):
        grade = max(grade_at.get(rank, 0), 0)
        stop = (2**grade - 1) / 2**max_grade
        score += reach * stop / rank
        reach *= 1 - stop
    return score


def precision(pos: list[int], k: int) -> float:
    """P@k = #{i : p_i ≤ k}/k."""
    return sum(1 for p in pos if p <= k) / k


def recall(pos: list[int], m: int, k: int) -> float:
    """R@k = #{i : p_i ≤ k}/m."""
    return sum(1 for p in pos if p <= k) / m


def r_precision(pos: list[int], m: int) -> float:
    """RP = #{i : p_i ≤ m}/m."""
    return sum(1 for p in pos if p <= m) / m


def rbp(pos: list[int], p: float = 0.8) -> float:
    """Binary RBP(p) = (1 − p) Σ_{i≤r} p^(p_i − 1)."""
    return (1 - p) * sum(p ** (rank - 1) for rank in pos)


def rbp_graded(pos: list[int], grades: list[int], ideal_grades: list[int], p: float) -> float:
    """trec_eval's ``rbp``: gains are the grades, scaled to [0, 1] (min–max over the grades
    0 … G of the query) when the top grade G is above 1."""
    top = max(ideal_grades, default=0)
    scale = top if top > 1 else 1
    return (1 - p) * sum(g / scale * p ** (rank - 1) for rank, g in zip(pos, grades, strict=True))


def success(pos: list[int], k: int) -> float:
    return 1.0 if any(p <= k for p in pos) else 0.0


def set_f(pos: list[int], m: int, n_ret: int, beta: float = 1.0) -> float:
    if not pos:
        return 0.0
    p, r = len(pos) / n_ret, len(pos) / m
    return (beta + 1) * p * r / (beta * p + r)


def iprec(pos: list[int], m: int, n_ret: int, level: float) -> float:
    """Walk every rank from the bottom, keeping the best precision seen (trec_eval's way)."""
    needed = math.floor(level * m + 0.5)  # round half away from zero (non-negative)
    if needed > len(pos) or not pos:
        return 0.0
    relevant = set(pos)
    best, found = 0.0, len(pos)
    for rank in range(max(n_ret, pos[-1]), 0, -1):
        if found == 0:
            break
        best = max(best, found / rank)
        if rank in relevant:
            if found == max(needed, 1):
                return best
            found -= 1
    return best


def eleven_point_average(
    pos: list[int], m: int, n_ret: int, levels: tuple[float, ...] = ELEVEN_POINTS
) -> float:
    """trec_eval's 11pt_avg: the mean of the interpolated precision at each level."""
    return sum(iprec(pos, m, n_ret, level) for level in levels) / len(levels)


def relative_precision(pos: list[int], m: int, k: int) -> float:
    """trec_eval's relative_P_k: walk the ranks, count the relevant ones above k, over
    min(k, m)."""
    if m == 0:
        return 0.0
    found = 0
    for rank in range(1, k + 1):
        if rank in pos:
            found += 1
    return found / min(k, m)


def r_precision_multiple(pos: list[int], m: int, x: float) -> float:
    """trec_eval's Rprec_mult_x: precision at the rank (long)(x·m + 0.9); 0 at rank 0."""
    cutoff = int(x * m + 0.9)
    if cutoff == 0:
        return 0.0
    return sum(1 for rank in pos if rank <= cutoff) / cutoff


def set_relative_precision(pos: list[int], m: int, n_ret: int) -> float:
    return len(pos) / min(n_ret, m) if n_ret and m else 0.0


def set_map(pos: list[int], m: int, n_ret: int) -> float:
    return len(pos) * len(pos) / (n_ret * m) if n_ret and m else 0.0


def utility(
    pos: list[int], m: int, n_ret: int, weights: tuple[float, ...], n: int | None
) -> float | None:
    """trec_eval's utility: w1·a + w2·b + w3·c + w4·d over the contingency table."""
    a = len(pos)
    b = n_ret - a
    c = m - a
    if weights[3] != 0 and n is None:
        return None
    d = 0 if n is None else n - a - b - c
    return weights[0] * a + weights[1] * b + weights[2] * c + weights[3] * d


def rbp_resid(ranking: Ranking, p: float) -> float:
    """trec_eval's rbp_resid loop: p^ñ plus (1 − p) p^(i−1) for each unjudged rank i."""
    total, unjudged, current = 0.0, 0, 1.0
    for kind in _kinds(ranking):
        if kind in ("unjudged", "pooled"):
            unjudged += 1
            total += current
        current *= p
    return current + (1 - p) * total if unjudged else 0.0


Gains = Mapping[int, float] | None
"""A map of grades to gains (trec_eval's ``-m G.1=2,2=4``: its setup_gains), or ``None``."""


def _gains_by_rank(
    ranking: Ranking, graded: bool, gains: Gains = None, ideal: Sequence[float] | None = None
) -> tuple[list[float], list[float]]:
    """The gain at each rank 1 … ñ (0 for a non-relevant document) and the ideal gains:
    the grades, or under ``gains`` each grade's gain (its grade where the map leaves it
    out), the ideal ones the positive gains best first unless ``ideal`` gives them (one
    per document, in the order trec_eval takes them)."""
    gain_of = (lambda grade: float(grade)) if gains is None else (lambda g: gains.get(g, g))
    by_rank = [0.0] * ranking.n_ret
    for index, rank in enumerate(ranking.gain_positions if graded else ranking.positions):
        by_rank[rank - 1] = float(gain_of(ranking.grades[index])) if graded else 1.0
    if ideal is not None:
        return by_rank, list(ideal)
    if not graded:
        return by_rank, [1.0] * ranking.n_rel
    mapped = (float(gain_of(grade)) for grade in ranking.ideal_grades)
    return by_rank, sorted((gain for gain in mapped if gain > 0), reverse=True)


def _log2(x: float) -> float:
    """The C library's log2: -inf at 0, NaN below (trec_eval then prints -nan)."""
    return math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _divide(x: float, y: float) -> float:
    """x/y as C divides doubles: ±inf for x ≠ 0 over 0, NaN for 0/0."""
    if y != 0 or math.isnan(y):
        return x / y
    return math.copysign(math.inf, x) * math.copysign(1.0, y) if x != 0 else math.nan


def bin_g(pos: list[int], m: int, n_ret: int) -> float:
    """trec_eval's binG loop: each relevant document 1/log2(2 + non-relevant above)."""
    total, found = 0.0, 0
    for i in range(n_ret):
        if i + 1 in pos:
            found += 1
            total += 1.0 / math.log2(3 + i - found)
    return total / m if found else 0.0


def g(
    ranking: Ranking, graded: bool, gains: Gains = None, ideal: Sequence[float] | None = None
) -> float:
    """trec_eval's G loop over the ranks, the ideal ranking walked beside the run's."""
    by_rank, ideal = _gains_by_rank(ranking, graded, gains, ideal)
    total, gathered, cost = 0.0, 0.0, 0.0
    for i, gain in enumerate(by_rank):
        ideal_gain = ideal[i] if i < len(ideal) else 0.0
        gathered += gain
        cost += ideal_gain if ideal_gain >= 1.0 else 1.0
        if gain != 0:
            total += _divide(gain, _log2(2 + cost - gathered))
    best = sum(value for value in ideal if value > 0)
    return total / best if best > 0 else 0.0


def ndcg_rel(
    ranking: Ranking, graded: bool, gains: Gains = None, ideal: Sequence[float] | None = None
) -> float:
    """trec_eval's ndcg_rel: nDCG at each retrieved document of positive gain (the ideal
    DCG stops growing past the ideal's last positive gain), and at the end for each one
    missed."""
    by_rank, ideal = _gains_by_rank(ranking, graded, gains, ideal)
    dcg = ideal_dcg = total = 0.0
    found = 0
    for i, gain in enumerate(by_rank):
        dcg += gain / math.log2(i + 2)
        if i < len(ideal):
            ideal_dcg += ideal[i] / math.log2(i + 2)
        if gain > 0:
            total += dcg / ideal_dcg
            found += 1
    for j in range(len(by_rank), len(ideal)):
        ideal_dcg += ideal[j] / math.log2(j + 2)
    if not ideal:
        return 0.0
    total += (len(ideal) - found) * dcg / ideal_dcg
    return total / len(ideal) if total > 0 else 0.0


def r_ndcg(
    ranking: Ranking, graded: bool, gains: Gains = None, ideal: Sequence[float] | None = None
) -> float:
    """trec_eval's Rndcg: nDCG wherever the ideal gain changes (walking the ideal ranking
    past the run's end if need be), and at the end of a ranking longer than the ideal's
    positive part plus one. 0 without a relevant document; 0 too (trec_eval: 0/0) where
    the query has one but no positive gain."""
    if ranking.n_rel == 0:
        return 0.0
    by_rank, ideal = _gains_by_rank(ranking, graded, gains, ideal)
    if not ideal:
        return 0.0
    dcg = ideal_dcg = total = 0.0
    count, previous = 0, ideal[0]
    for i in range(max(len(by_rank), len(ideal) + 1)):
        ideal_gain = ideal[i] if i < len(ideal) else 0.0
        if ideal_gain != previous:
            total += dcg / ideal_dcg
            count += 1
            previous = ideal_gain
        if i < len(by_rank):
            dcg += by_rank[i] / math.log2(i + 2)
        ideal_dcg += ideal_gain / math.log2(i + 2)
    if len(by_rank) > len(ideal) + 1:
        total += dcg / ideal_dcg
        count += 1
    return total / count


def _kinds(ranking: Ranking) -> list[str]:
    """The kind of the document at each rank 1 … ñ: rel, nonrel, pooled or unjudged."""
    kinds = ["unjudged"] * ranking.n_ret
    for name, ranks in (
        ("rel", ranking.positions),
        ("nonrel", ranking.nonrel_positions),
        ("pooled", ranking.pooled_positions),
    ):
        for rank in ranks:
            kinds[rank - 1] = name
    return kinds


def bpref(ranking: Ranking) -> float:
    """trec_eval's loop: each relevant document scores 1 − min(nonrel above, R)/min(N, R)."""
    big_r, total, nonrel_so_far = ranking.n_rel, 0.0, 0
    for kind in _kinds(ranking):
        if kind == "nonrel":
            nonrel_so_far += 1
        elif kind == "rel":
            if nonrel_so_far > 0:
                total += 1.0 - min(nonrel_so_far, big_r) / min(ranking.n_nonrel, big_r)
            else:
                total += 1.0
    return total / big_r if big_r else 0.0


def inf_ap(ranking: Ranking, epsilon: float = 1e-5) -> float:
    """trec_eval's infAP loop over the ranks, counting what lies above each relevant one."""
    total, rel_so_far, nonrel_so_far, pooled_so_far = 0.0, 0, 0, 0
    for j, kind in enumerate(_kinds(ranking)):
        if kind == "unjudged":
            continue
        if kind == "pooled":
            pooled_so_far += 1
        elif kind == "nonrel":
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if j == 0:
                total += 1.0
            else:
                above = rel_so_far - 1 + nonrel_so_far + pooled_so_far
                total += 1.0 / (j + 1) + (j / (j + 1)) * (above / j) * (
                    (rel_so_far - 1 + epsilon) / (rel_so_far - 1 + nonrel_so_far + 2 * epsilon)
                )
    return total / ranking.n_rel if ranking.n_rel else 0.0


def judged_at(ranking: Ranking, k: int | None) -> float:
    """ir_measures' Judged@k: judged documents among the top min(k, ñ); 0 if none returned."""
    top = _kinds(ranking)[: k if k is not None else ranking.n_ret]
    return sum(kind != "unjudged" for kind in top) / len(top) if top else 0.0


def unjudged_at(ranking: Ranking, k: int) -> float:
    """trec_eval's unj_k: unjudged or pooled documents among the top k, over k."""
    return sum(kind in ("unjudged", "pooled") for kind in _kinds(ranking)[:k]) / k


def exposure(name: str, *, n: int | None = None, p: float = 0.8) -> Callable[[float], float]:
    """The named exposures of lexirecall Definition 2.1, as functions of a position."""
    if name in ("rr", "ap"):
        return lambda position: 1.0 / position
    if name == "ndcg":
        return lambda position: 1.0 / math.log2(position + 1)
    if name == "rbp":
        return lambda position: (1 - p) * p ** (position - 1)
    if name == "linear":
        if n is None:
            raise ValueError("linear exposure needs n")
        return lambda position: 1.0 - position / n
    raise ValueError(name)


def imputed(pos: list[int], m: int, n: int | None) -> list[float | None]:
    """p̂: retrieved positions, then n − (m − i) for the unretrieved i = r+1 … m.

    ``None`` stands for an imputed position when n is None ("beyond any depth").
    """
    r = len(pos)
    tail = [None if n is None else float(n - (m - i)) for i in range(r + 1, m + 1)]
    return [float(p) for p in pos] + tail


def tse(
    pos: list[int], m: int, exposure_name: str = "rr", *, n: int | None = None, p: float = 0.8
) -> float | None:
    """TSE_e = e(p̂_m); 0 when the last relevant document is imputed and n is None.

    The linear exposure 1 − p/n is undefined without n: None.
    """
    if exposure_name == "linear" and n is None:
        return None
    last = imputed(pos, m, n)[m - 1]
    if last is None:
        return 0.0
    return exposure(exposure_name, n=n, p=p)(last)


def sl3(pos: list[int], m: int, *, n: int | None = None) -> float | None:
    """SL3 = p̂_m − m (Cooper's type 3 search length); None when it needs n."""
    last = imputed(pos, m, n)[m - 1]
    return None if last is None else last - m


def recall_error(pos: list[int], m: int, *, n: int | None = None) -> float | None:
    """RecallError = mean(p̂) − (m + 1)/2; None when it needs n."""
    full = imputed(pos, m, n)
    if any(value is None for value in full):
        return None
    return sum(full) / m - (m + 1) / 2


def asl_docs(pos: list[int], m: int, n_ret: int, depth: int) -> list[float]:
    """Per-document ASL (ASL paper §3.1, eq. 2–3), retrieved in rank order, then unretrieved.

    A retrieved document at p_i: the irrelevant documents above it plus one, p_i − (i − 1).
    An unretrieved one: the irrelevant documents the system returned, ñ − r. A ranking that
    returned nothing (a skipped query) counts as ``depth`` irrelevant documents: each of its
    relevant documents scores ``depth``.
    """
    r = len(pos)
    retrieved = [float(p - (i - 1)) for i, p in enumerate(pos, start=1)]
    irrelevant_returned = depth if n_ret == 0 else n_ret - r
    return retrieved + [float(irrelevant_returned)] * (m - r)


def asl(pos: list[int], m: int, n_ret: int, depth: int, first: int | None = None) -> float:
    """ASL of a query (mean over its m documents), or ASL@g1-k over the first min(k, m)."""
    values = asl_docs(pos, m, n_ret, depth)
    if first is not None:
        values = values[: min(first, m)]
    return sum(values) / len(values)


def measure(
    name: str, ranking: Ranking, *, n: int | None = None, graded: bool = True
) -> float | None:
    """A measure of one ranking by its canonical lexiframe name (the subset tests use).

    ``graded``: nDCG and RBP with the grades as gains (what lexiframe computes on graded
    qrels, on every path), else binary gains.
    """
    pos, m, n_ret = ranking.positions, ranking.n_rel, ranking.n_ret
    counts = {
        "NumRet": n_ret,
        "NumRel": m,
        "NumRelRet": len(pos),
        "NumNonRelJudgedRet": len(ranking.nonrel_positions),
    }
    if name in counts:
        return float(counts[name])
    family, _, cutoff_text = name.partition("@")
    if family == "Judged":  # defined without a relevant document too
        return judged_at(ranking, int(cutoff_text) if cutoff_text else None)
    if family == "Unjudged":
        return unjudged_at(ranking, int(cutoff_text))
    if family.startswith("RBPResid"):  # defined without a relevant document too
        return rbp_resid(ranking, float(_params(family).get("p", 0.8)))
    if family.startswith("Utility"):
        params = _params(family)
        weights = tuple(
            float(params.get(key, default))
            for key, default in zip(UTILITY_KEYS, (1.0, -1.0, 0.0, 0.0), strict=True)
        )
        return utility(pos, m, n_ret, weights, n)
    # The gain measures read every positive grade, whatever the level (trec_eval's -l).
    gain_pos = ranking.gain_positions if graded else pos
    gain_measure = family.partition("(")[0]
    if gain_measure in ("G", "nDCGRel", "RnDCG"):
        gain_map = _params(family).get("gains")
        function = {"G": g, "nDCGRel": ndcg_rel, "RnDCG": r_ndcg}[gain_measure]
        return function(ranking, graded or gain_map is not None, gain_map)
    if family.startswith(("ERR", "nDCG", "RBP")):
        cutoff = int(cutoff_text) if cutoff_text else None
    if family.startswith("ERR"):
        max_grade = int(_params(family).get("max_grade", 4))
        return err(gain_pos, ranking.grades, cutoff, max_grade)
    if family.startswith("nDCG(gains="):
        gains = _params(family)["gains"]
        return ndcg_gains(gain_pos, ranking.grades, ranking.ideal_grades, gains, cutoff)
    if family.startswith("RBP"):
        p = float(_params(family).get("p", 0.8))
        if graded:
            return rbp_graded(gain_pos, ranking.grades, ranking.ideal_grades, p)
        return rbp(pos, p) if m else 0.0
    if family == "nDCG" and graded:
        return ndcg_graded(gain_pos, ranking.grades, ranking.ideal_grades, cutoff)
    if m == 0:
        # A judged query without a relevant document (no_relevant="keep"): trec_eval
        # scores it 0; the measures that need a relevant document are undefined.
        undefined = ("SL3", "RecallError", "ASL")
        is_undefined = name.startswith(undefined) or (
            name.startswith("TSE") and "linear" in name and n is None
        )
        return None if is_undefined else 0.0
    if family == "IPrec":
        return iprec(pos, m, n_ret, float(cutoff_text))
    if family.startswith("IPrecAvg"):
        levels = _params(family).get("levels", ELEVEN_POINTS)
        return eleven_point_average(pos, m, n_ret, tuple(levels))
    if family == "RelativeP":
        return relative_precision(pos, m, int(cutoff_text))
    if family == "RPrecMult":
        return r_precision_multiple(pos, m, float(cutoff_text))
    if family.startswith("SetF"):
        return set_f(pos, m, n_ret, float(_params(family).get("beta", 1.0)))
    cutoff = int(cutoff_text.removeprefix("g1-")) if cutoff_text else None
    if family.startswith("TSE"):
        params = _params(family)
        return tse(pos, m, str(params.get("exposure", "rr")), n=n, p=float(params.get("p", 0.8)))
    simple: dict[str, Callable[[], float | None]] = {
        "RR": lambda: rr(pos, cutoff),
        "AP": lambda: ap(pos, m, cutoff),
        "nDCG": lambda: ndcg(pos, m, cutoff),
        "P": lambda: precision(pos, cutoff),
        "R": lambda: recall(pos, m, cutoff),
        "RP": lambda: r_precision(pos, m),
        "Success": lambda: success(pos, cutoff),
        "SetP": lambda: len(pos) / n_ret if n_ret else 0.0,
        "SetR": lambda: len(pos) / m,
        "SetRelativeP": lambda: set_relative_precision(pos, m, n_ret),
        "SetAP": lambda: set_map(pos, m, n_ret),
        "BinG": lambda: bin_g(pos, m, n_ret),
        "Bpref": lambda: bpref(ranking),
        "infAP": lambda: inf_ap(ranking),
        "SL3": lambda: sl3(pos, m, n=n),
        "RecallError": lambda: recall_error(pos, m, n=n),
        "ASL": lambda: asl(pos, m, n_ret, ranking.depth, cutoff),
    }
    return simple[family]()


def _params(family: str) -> dict[str, Any]:
    """``TSE(exposure='ap', p=0.5)`` → {'exposure': 'ap', 'p': 0.5} (test names only);
    ``nDCG(gains={1: 1, 2: 3})`` (or ``G(…)``, ``nDCGRel(…)``, ``RnDCG(…)``) →
    {'gains': {1: 1, 2: 3}}."""
    if "(" not in family:
        return {}
    inner = family[family.index("(") + 1 : family.rindex(")")]
    if inner.startswith(("gains=", "levels=")):
        key, _, value = inner.partition("=")
        return {key: ast.literal_eval(value)}
    params: dict[str, Any] = {}
    for item in inner.split(","):
        key, _, value = item.partition("=")
        value = value.strip().strip("'\"")
        numeric = key.strip() == "p" or key.strip() in UTILITY_KEYS
        params[key.strip()] = float(value) if numeric else value
    return params


UTILITY_KEYS = ("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")
