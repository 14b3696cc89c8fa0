"""trec_eval's experimental gain measures as Polars expressions: G, binG, ndcg_rel and Rndcg.

They read the ``positions`` list column (ascending ranks p_1 < … < p_r of the retrieved
relevant documents) and the query's relevant documents: ``n_rel`` (m) for binary gains, or
``grades`` (the grades of the retrieved relevant documents in rank order) and
``ideal_grades`` (every relevant grade of the query, descending) for graded ones, whose
gains are the grades as in trec_eval (docs/definitions.md §2), or with ``gains`` a map of
grades to gains, as trec_eval's ``-m G.1=2,2=4``, ``ndcg_rel.…`` and ``Rndcg.…`` (its
setup_gains: a grade the map leaves out keeps its grade as gain; the ideal ranking holds
the positive gains, best first). Documents below the frame's threshold gain 0. Each
function is a native Polars expression over lists (cumulative sums, gathers by rank), or
(ndcg_rel) NumPy over the lists' buffers, one call per batch: no Python runs per row.
Every one returns Float64.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np
import polars as pl

from lexiframe._kernels import ListBuffers, list_buffers
from lexiframe._utils import IntoExpr, into_expr
from lexiframe.errors import InputError
from lexiframe.metrics import _rows, parts
from lexiframe.metrics import running as running_sums
from lexiframe.metrics.parts import IntoCount


def _check_grades(
    grades: IntoExpr | None, ideal_grades: IntoExpr | None, gains: Mapping[int, float] | None
) -> None:
    """Refuse one grade column without the other, and a gain map without them."""
    if (grades is None) != (ideal_grades is None):
        raise InputError("graded gains need both grades= and ideal_grades=")
    if gains is not None and grades is None:
        raise InputError("gains= maps the grades to gains: pass grades= and ideal_grades=")


def _gains(
    positions: IntoExpr,
    n_rel: IntoCount,
    grades: IntoExpr | None,
    ideal_grades: IntoExpr | None,
    gains: Mapping[int, float] | None,
) -> tuple[pl.Expr, pl.Expr]:
    """The gains of the retrieved relevant documents and the ideal gains, as Float64 lists:
    the grades or their gains under ``gains`` (:func:`parts.mapped_gains`), or 1 for every
    relevant document without grades."""
    _check_grades(grades, ideal_grades, gains)
    if grades is None or ideal_grades is None:
        ones = parts.ranks(positions).list.eval(pl.element() * 0 + 1).cast(pl.List(pl.Float64))
        ideal = pl.int_ranges(0, parts.count(n_rel)).list.eval(pl.element() * 0 + 1)
        return ones, ideal.cast(pl.List(pl.Float64))
    return parts.mapped_gains(grades, ideal_grades, gains)


def _discounts(ranks: pl.Expr) -> pl.Expr:
    """1/log2(rank + 1) of each rank of a list."""
    return ranks.list.eval(1.0 / (pl.element().cast(pl.Float64) + 1.0).log(2))


def _capped(ranks: pl.Expr, m: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """min(p, m) and max(p − m, 0) of each rank p of a list, m a per-row count."""
    beyond = ranks - m
    below = beyond.list.eval(pl.element().clip(upper_bound=0))
    return below + m, beyond - below


def binary_g(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", running: bool = False
) -> pl.Expr:
    """Binary G: (1/m) Σ_{i≤r} 1/log2(2 + p_i − i), the i-th relevant document discounted
    by the p_i − i non-relevant documents above it (trec_eval ``binG``; 0 when r = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import gain
        >>> df = pl.DataFrame({"positions": [[1, 4]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(gain.binary_g()).item()  # (1/log2(2) + 1/log2(4)) / 4
        0.375
    """
    if running:  # trec_eval's arithmetic to the last bit
        return running_sums.binary_g(into_expr(positions), n_rel=n_rel)
    ranks = parts.ranks(positions)
    above = ranks - pl.int_ranges(1, ranks.list.len() + 1)
    total = above.list.eval(1.0 / (pl.element().cast(pl.Float64) + 2.0).log(2)).list.sum()
    m = parts.count(n_rel)
    return parts.positive_zero(pl.when(m > 0).then(total / m).otherwise(0.0))


def g(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
    gains: Mapping[int, float] | None = None,
    running: bool = False,
) -> pl.Expr:
    """Normalised gain G (trec_eval ``G``): each retrieved document of gain g_i is discounted
    by how far the ranking lags the ideal one where it stands,

    G = Σ_{i≤r} g_i / log2(2 + C(p_i) − S_i) / Σ_j g*_j,

    with S_i = g_1 + … + g_i the gain gathered down to it and C(p) the ideal ranking's
    gain down to rank p, each rank counting at least 1 (the ideal gains g*_j while they
    last, then 1 per rank). Binary gains without ``grades``; then G is :func:`binary_g`.
    ``gains`` maps grades to gains (trec_eval's ``-m G.1=2,2=4``): negative gains count in
    g_i and S_i, and the ideal ranking holds the positive gains, best first. 0 when the
    query has no positive ideal gain. ``running``: trec_eval's arithmetic to the last bit
    (:mod:`lexiframe.metrics.running`).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import gain
        >>> df = pl.DataFrame({"positions": [[1, 4]], "grades": [[1, 2]], "ideal": [[2, 1]],
        ...                    "n_rel": [2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "grades": pl.List(pl.Int64),
        ...                           "ideal": pl.List(pl.Int64), "n_rel": pl.UInt32})
        >>> # rank 1: 1/log2(2 + 2 − 1); rank 4: 2/log2(2 + (3 + 1 + 1) − 3), over 2 + 1
        >>> round(df.select(gain.g(grades="grades", ideal_grades="ideal")).item(), 6)
        0.543643
        >>> # grades 1 and 2 gain 3 and 7: 3/log2(2 + 7 − 3) + 7/log2(2 + 12 − 10), over 10
        >>> round(df.select(gain.g(grades="grades", ideal_grades="ideal",
        ...                        gains={1: 3, 2: 7})).item(), 6)
        0.466056
    """
    doc_gains, lags, ideal = g_lags(positions, n_rel, grades, ideal_grades, gains, running)
    if running:
        return running_sums.g(doc_gains, lags, ideal)
    total = (doc_gains / lags.list.eval(pl.element().log(2))).list.sum()
    best = ideal.list.sum()
    return parts.ratio_or_zero(total, best)


def g_lags(
    positions: IntoExpr,
    n_rel: IntoCount,
    grades: IntoExpr | None,
    ideal_grades: IntoExpr | None,
    gains: Mapping[int, float] | None,
    running: bool = False,
) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """G's gains, the argument of each one's log2 (2 + C(p_i) − S_i, :func:`g`) and the
    ideal gains; ``running``: added as trec_eval's C does, (2 + C(p_i)) − S_i."""
    doc_gains, ideal = _gains(positions, n_rel, grades, ideal_grades, gains)
    ranks = parts.ranks(positions)
    gathered = doc_gains.list.eval(pl.element().cum_sum())
    # The ideal gain down to rank j, each rank counting at least 1.
    ideal_costs = ideal.list.eval(pl.element().clip(lower_bound=1.0).cum_sum())
    within, beyond = _capped(ranks, ideal.list.len().cast(pl.Int64))
    # (No ideal gain, under a gain map: null, and G is 0.)
    ideal_cost = ideal_costs.list.gather(within - 1, null_on_oob=True)
    costs = ideal_cost + beyond.cast(pl.List(pl.Float64))
    lags = (costs + 2.0) - gathered if running else costs - gathered + 2.0
    return doc_gains, lags, ideal


def ndcg_rel(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
    gains: Mapping[int, float] | None = None,
    running: bool = False,
) -> pl.Expr:
    """nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``): the mean over
    the m relevant documents of the nDCG at the rank of each retrieved one, the ideal cut
    at m, and of the nDCG of the whole ranking for each one not retrieved,

    (1/m) [Σ_{i≤r} DCG(p_i)/IDCG(min(p_i, m)) + (m − r) · DCG/IDCG].

    Gains are the grades with ``grades`` and ``ideal_grades``, else 1. ``gains`` maps
    grades to gains (trec_eval's ``-m ndcg_rel.1=1,2=5``): as in trec_eval, the relevant
    documents are then those of positive gain (m of the query, r retrieved), and every
    retrieved document adds its gain to the DCG, negative ones too. 0 when the sum is not
    positive or m = 0. ``running``: trec_eval's arithmetic to the last bit
    (:mod:`lexiframe.metrics.running`).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import gain
        >>> df = pl.DataFrame({"positions": [[2]], "n_rel": [2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> # at rank 2: (1/log2 3)/(1 + 1/log2 3); the unretrieved one: the same
        >>> round(df.select(gain.ndcg_rel()).item(), 6)
        0.386853
        >>> graded = df.with_columns(grades=pl.lit([1]), ideal=pl.lit([2, 1]))
        >>> # grade 2 gains 0: one relevant document, at rank 2, (1/log2 3)/1
        >>> round(graded.select(gain.ndcg_rel(grades="grades", ideal_grades="ideal",
        ...                                   gains={2: 0})).item(), 6)
        0.63093
    """
    _check_grades(grades, ideal_grades, gains)
    columns: dict[str, IntoExpr] = {"_relevant": positions}
    if grades is None or ideal_grades is None:
        columns["_m"] = parts.count(n_rel)
    else:
        mapped, ideal = parts.mapped_gains(grades, ideal_grades, gains)
        columns.update(_grades=mapped, _ideal=ideal)
    value = _rows.per_ranking(partial(_ndcg_rels, running=running), **columns)
    return parts.positive_zero(value.fill_null(0.0))


def _ndcg_rels(fields: pl.DataFrame, running: bool = False) -> np.ndarray:
    """nDCGRel of each ranking of a batch, in NumPy over the lists' buffers: the DCG and
    the ideal DCG as running sums down each ranking, as the list expressions add them. The
    relevant documents are those of positive gain, as trec_eval counts them (its
    ``results_gain > 0``, and its num_rel the ideal gains above 0)."""
    relevant = list_buffers(fields["_relevant"])
    ranks = relevant.values[relevant.offsets[0] : relevant.offsets[-1]].astype(np.int64)
    if "_m" in fields.columns:  # binary gains: 1 per relevant document
        m = _rows.counts(fields["_m"])
        ideal = ListBuffers(np.ones(int(m.sum())), np.concatenate([[0], np.cumsum(m)]))
        gains = np.ones(len(ranks))
    else:
        ideal = list_buffers(fields["_ideal"])
        grades = list_buffers(fields["_grades"])
        gains = grades.values[grades.offsets[0] : grades.offsets[-1]].astype(np.float64)
        # m: the query's documents of positive gain (trec_eval's num_rel here), first in
        # the ideal gains, which are best first.
        positive = ideal.values[ideal.offsets[0] : ideal.offsets[-1]] > 0
        m = np.bincount(_rows.row_of_each(ideal.offsets)[positive], minlength=len(ideal))
    ideal_gains = ideal.values[ideal.offsets[0] : ideal.offsets[-1]].astype(np.float64)
    counted = gains > 0.0
    rows = _rows.row_of_each(relevant.offsets)
    r = np.bincount(rows[counted], minlength=len(m))
    ideal_ranks = _rows.index_in_row(ideal.offsets) + 1
    if running:  # trec_eval's: each gain divided by C's log2
        terms = running_sums.discounted(gains, ranks)
        ideal_terms = running_sums.discounted(ideal_gains, ideal_ranks)
    else:
        terms = gains * _rows.log2_discounts(ranks)
        ideal_terms = ideal_gains * _rows.log2_discounts(ideal_ranks)
    dcg = _rows.cumulative_sums(terms, relevant.offsets)
    ideal_dcg = _rows.cumulative_sums(ideal_terms, ideal.offsets)
    ideal_starts = ideal.offsets[:-1] - ideal.offsets[0]
    within = np.minimum(ranks, m[rows])
    # The ideal DCG down to min(p, m) at each retrieved document: a document without a
    # positive gain in a query without one (m = 0) is not counted, so its place is any.
    at = np.clip(ideal_starts[rows] + within - 1, 0, max(len(ideal_dcg) - 1, 0))
    ideal_at = ideal_dcg[at] if len(ideal_dcg) else np.zeros(len(ranks))
    with np.errstate(divide="ignore", invalid="ignore"):
        at_relevant = _rows.running_sums(np.where(counted, dcg / ideal_at, 0.0), relevant.offsets)
        ends = relevant.offsets[1:] - relevant.offsets[0]
        found = relevant.lengths > 0
        last = np.where(found, dcg[np.maximum(ends - 1, 0)] if len(dcg) else 0.0, 0.0)
        ideal_ends = ideal.offsets[1:] - ideal.offsets[0]
        ideal_last = ideal_dcg[np.maximum(ideal_ends - 1, 0)] if len(ideal_dcg) else 0.0
        missed = (m - r).astype(np.float64)
        # trec_eval adds (m − r) · DCG / IDCG, left to right.
        rest = missed * last / ideal_last if running else missed * (last / ideal_last)
        total = at_relevant + rest
        return np.where((m > 0) & (total > 0.0), total / m, 0.0)


def r_ndcg(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
    gains: Mapping[int, float] | None = None,
    running: bool = False,
) -> pl.Expr:
    """nDCG averaged at the R levels (trec_eval ``Rndcg``): the mean of nDCG@j over the
    ranks j where the ideal ranking's gain drops (after the documents of each grade,
    highest first; with binary gains, j = m), and of the nDCG of the whole ranking when it
    runs on for more than one document past m (ñ > m + 1, trec_eval's condition).

    Gains are the grades with ``grades`` and ``ideal_grades``, else 1. ``gains`` maps
    grades to gains (trec_eval's ``-m Rndcg.1=4,2=1``): the ideal ranking holds the
    positive gains, best first (m of them; grades of one gain make one level), and every
    retrieved document adds its gain to the DCG, negative ones too. 0 when m = 0 (where
    the query has a relevant document but no positive gain, trec_eval divides 0 by 0 and
    its drop-in, ``lexiframe trec_eval``, prints trec_eval's ``-nan``). ``running``:
    trec_eval's arithmetic to the last bit (:mod:`lexiframe.metrics.running`).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import gain
        >>> df = pl.DataFrame({"positions": [[2]], "n_rel": [1], "n_ret": [5]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> # nDCG@1 = 0 and, as 5 > 1 + 1, nDCG = 1/log2(3)
        >>> round(df.select(gain.r_ndcg()).item(), 6)
        0.315465
        >>> graded = df.with_columns(grades=pl.lit([2]), ideal=pl.lit([2, 1]))
        >>> # grades 1 and 2 both gain 3: one level, nDCG@2 = (3/log2 3)/(3 + 3/log2 3), and
        >>> # as 5 > 2 + 1 the whole ranking's nDCG, the same
        >>> round(graded.select(gain.r_ndcg(grades="grades", ideal_grades="ideal",
        ...                                 gains={1: 3, 2: 3})).item(), 6)
        0.386853
    """
    doc_gains, ideal = _gains(positions, n_rel, grades, ideal_grades, gains)
    ranks = parts.ranks(positions)
    if running:
        return running_sums.r_ndcg(ranks, doc_gains, ideal, n_ret=n_ret)
    m = ideal.list.len().cast(pl.Int64)
    terms = doc_gains * _discounts(ranks)
    # Per ideal rank j: 1/IDCG@j where the ideal gain drops after j, else 0; then the sum
    # over j ≥ p, so that Σ_j DCG@j/IDCG@j = Σ_i term_i · weight(p_i).
    j = pl.int_range(1, pl.len() + 1).cast(pl.Float64)
    ideal_dcg = (pl.element() / (j + 1.0).log(2)).cum_sum()
    drops = (pl.element() != pl.element().shift(-1)).fill_null(True)
    weight = pl.when(drops).then(1.0 / ideal_dcg).otherwise(0.0).reverse().cum_sum().reverse()
    weights = ideal.list.eval(weight).list.gather(ranks - 1, null_on_oob=True)
    levels = (terms * weights.list.eval(pl.element().fill_null(0.0))).list.sum()
    count = ideal.list.n_unique().cast(pl.Float64)
    whole = terms.list.sum() / (ideal * _discounts(pl.int_ranges(1, m + 1))).list.sum()
    longer = parts.count(n_ret) > m + 1
    # Each term once (a when() over ``levels`` would compute it twice); + 0.0 is exact.
    total = levels + pl.when(longer).then(whole).otherwise(0.0)
    value = total / (count + longer.cast(pl.Float64))
    return parts.positive_zero(pl.when(m > 0).then(value).otherwise(0.0).fill_null(0.0))
