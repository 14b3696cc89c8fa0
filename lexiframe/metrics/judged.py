"""Measures of incomplete judgments: Bpref, infAP, Judged@k, Unjudged@k, RBP's residual.

They read what a positions frame built with ``judged=True`` holds besides the relevant
documents (docs/definitions.md §1–2): ``nonrel_positions``, the ranks of the retrieved
documents judged non-relevant (a grade from 0 to below the threshold); ``pooled_positions``,
the ranks of the retrieved documents judged with a negative grade (trec_eval's mark of a
pooled document left unjudged); and ``n_nonrel``, how many judged non-relevant documents
the query has. A document in neither list nor ``positions`` is unjudged. Every function is
a native Polars expression (the lists of a ranking are merged in one sorted list, tagged by
kind: no Python runs per row) and returns Float64.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl

from lexiframe._utils import IntoExpr, into_expr
from lexiframe.metrics import parts
from lexiframe.metrics.parts import IntoCount

INFAP_EPSILON = 1e-5
"""trec_eval's smoothing of infAP's estimate of the precision above a relevant document."""

# Kinds of a judged retrieved document, as tags in the merged list: rank · 4 + tag.
_NONREL, _POOLED, _RELEVANT = 0, 1, 2


def _merged(relevant: IntoExpr, nonrel: IntoExpr, pooled: IntoExpr | None) -> pl.Expr:
    """The judged retrieved documents of a ranking in rank order, each as rank · 4 + kind."""
    tagged = [
        into_expr(relevant).cast(pl.List(pl.Int64)) * 4 + _RELEVANT,
        into_expr(nonrel).cast(pl.List(pl.Int64)) * 4 + _NONREL,
    ]
    if pooled is not None:
        tagged.append(into_expr(pooled).cast(pl.List(pl.Int64)) * 4 + _POOLED)
    return pl.concat_list(tagged).list.sort()


def _above(kind: int) -> pl.Expr:
    """Inside ``list.eval`` of a merged list: how many documents of ``kind`` come before
    each element (an element of that kind counts itself)."""
    return ((pl.element() % 4) == kind).cast(pl.Int64).cum_sum()


def _is_relevant() -> pl.Expr:
    return (pl.element() % 4) == _RELEVANT


def bpref(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_nonrel: IntoCount = "n_nonrel",
) -> pl.Expr:
    """Binary preference (Buckley and Voorhees, SIGIR 2004), as trec_eval's ``bpref``.

    With R relevant and N judged non-relevant documents, each retrieved relevant document
    scores the share of preferences it keeps: 1 − min(n_i, R)/min(N, R), where n_i
    counts the judged non-relevant documents ranked above it (1 when n_i = 0); Bpref is
    their sum over R. Unjudged documents are ignored.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame(
        ...     {"positions": [[1, 3]], "nonrel_positions": [[2]], "n_rel": [2], "n_nonrel": [5]},
        ...     schema_overrides={"positions": pl.List(pl.UInt32),
        ...                       "nonrel_positions": pl.List(pl.UInt32)})
        >>> df.select(judged.bpref()).item()  # (1 + (1 - 1/2)) / 2
        0.75
    """
    rel = parts.count(n_rel)
    fewer = pl.min_horizontal(parts.count(n_nonrel), rel)
    # n_i for each relevant document, in rank order.
    nonrel_above = _merged(positions, nonrel_positions, None).list.eval(
        _above(_NONREL).filter(_is_relevant())
    )
    # min(n_i, R) = R + min(n_i − R, 0); every n_i is 0 when min(N, R) is (no division).
    capped = (nonrel_above - rel).list.eval(pl.element().clip(upper_bound=0)) + rel
    divisor = pl.when(fewer > 0).then(fewer).otherwise(1).cast(pl.Float64)
    terms = 1.0 - capped.cast(pl.List(pl.Float64)) / divisor
    # Summed in rank order, as trec_eval sums: a half-way value such as 7/32 then prints
    # as trec_eval prints it (its running sum lands just below, 0.2187).
    kept = terms.list.eval(pl.element().cum_sum()).list.last().fill_null(0.0)
    return parts.positive_zero(pl.when(rel > 0).then(kept / rel).otherwise(0.0))


def inf_ap(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    pooled_positions: IntoExpr = "pooled_positions",
    *,
    n_rel: IntoCount = "n_rel",
) -> pl.Expr:
    """Inferred AP (Yilmaz and Aslam, CIKM 2006), as trec_eval's ``infAP``.

    A relevant document at rank p > 1 with a relevant, b judged non-relevant and u pooled
    but unjudged documents above it estimates the precision there as
    1/p + ((p − 1)/p) · ((a + b + u)/(p − 1)) · ((a + ε)/(a + b + 2ε)), ε = 1e-5
    (1 at rank 1); infAP is their sum over the query's R relevant documents. Documents
    outside the pool count as non-relevant through p.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame(
        ...     {"positions": [[1, 3]], "nonrel_positions": [[2]], "pooled_positions": [[]],
        ...      "n_rel": [2]},
        ...     schema_overrides={"positions": pl.List(pl.UInt32),
        ...                       "nonrel_positions": pl.List(pl.UInt32),
        ...                       "pooled_positions": pl.List(pl.UInt32)})
        >>> round(df.select(judged.inf_ap()).item(), 6)  # (1 + (1/3 + 2/3 · 1/2)) / 2
        0.833333
    """
    eps = INFAP_EPSILON
    rank = (pl.element() // 4).cast(pl.Float64)
    before = rank - 1.0
    relevant_above = (_above(_RELEVANT) - 1).cast(pl.Float64)
    nonrel_above = _above(_NONREL).cast(pl.Float64)
    judged_above = relevant_above + nonrel_above + _above(_POOLED).cast(pl.Float64)
    estimate = 1.0 / rank + (before / rank) * (judged_above / before) * (
        (relevant_above + eps) / (relevant_above + nonrel_above + 2.0 * eps)
    )
    term = pl.when(rank == 1.0).then(pl.lit(1.0)).otherwise(estimate)
    total = (
        _merged(positions, nonrel_positions, pooled_positions)
        .list.eval(term.filter(_is_relevant()))
        .list.sum()
    )
    rel = parts.count(n_rel)
    return parts.positive_zero(pl.when(rel > 0).then(total / rel).otherwise(0.0))


def _judged_at_most(
    positions: IntoExpr, nonrel_positions: IntoExpr, pooled_positions: IntoExpr, k: IntoCount
) -> pl.Expr:
    """How many judged documents (relevant, non-relevant or pooled) rank at k or above."""
    return sum(
        (
            parts.count_at_most(column, k)
            for column in (positions, nonrel_positions, pooled_positions)
        ),
        start=pl.lit(0, dtype=pl.Int64),
    )


def judged_at(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    pooled_positions: IntoExpr = "pooled_positions",
    *,
    k: int | None = None,
    n_ret: IntoCount = "n_ret",
) -> pl.Expr:
    """The share of the top min(k, ñ) documents that the qrels judge (ir_measures ``Judged@k``).

    A document counts as judged when the qrels hold it, whatever its grade (negative
    grades too); without ``k``, the share of the whole ranking. 0 for an empty ranking.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame(
        ...     {"positions": [[1]], "nonrel_positions": [[4]], "pooled_positions": [[]],
        ...      "n_ret": [5]},
        ...     schema_overrides={"positions": pl.List(pl.UInt32),
        ...                       "nonrel_positions": pl.List(pl.UInt32),
        ...                       "pooled_positions": pl.List(pl.UInt32)})
        >>> df.select(judged.judged_at(k=10)).item()  # 2 of the 5 documents returned
        0.4
    """
    parts.check_cutoff(k, "Judged")
    depth = parts.count(n_ret) if k is None else pl.min_horizontal(parts.count(n_ret), k)
    seen = _judged_at_most(positions, nonrel_positions, pooled_positions, depth)
    return pl.when(depth > 0).then(seen / depth).otherwise(0.0)


def unjudged_at(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    k: int,
    n_ret: IntoCount = "n_ret",
) -> pl.Expr:
    """The share of the top k ranks holding an unjudged document (trec_eval ``unj_k``).

    Unjudged: outside the qrels, or judged with a negative grade (pooled, not assessed).
    Ranks past the end of a shorter ranking count as judged non-relevant, so the share is
    always of k.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame(
        ...     {"positions": [[1]], "nonrel_positions": [[4]], "n_ret": [5]},
        ...     schema_overrides={"positions": pl.List(pl.UInt32),
        ...                       "nonrel_positions": pl.List(pl.UInt32)})
        >>> df.select(judged.unjudged_at(k=10)).item()  # ranks 2, 3 and 5 of 10
        0.3
    """
    parts.check_cutoff(k, "Unjudged")
    returned = pl.min_horizontal(parts.count(n_ret), k)
    assessed = parts.count_at_most(positions, k) + parts.count_at_most(nonrel_positions, k)
    return parts.divided_by(returned - assessed, k)


def num_nonrel_judged_ret(nonrel_positions: IntoExpr = "nonrel_positions") -> pl.Expr:
    """How many judged non-relevant documents the ranking returned (trec_eval
    ``num_nonrel_judged_ret``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame({"nonrel_positions": [[2, 4], []]},
        ...                   schema={"nonrel_positions": pl.List(pl.UInt32)})
        >>> df.select(judged.num_nonrel_judged_ret()).to_series().to_list()
        [2.0, 0.0]
    """
    return parts.n_retrieved_relevant(nonrel_positions).cast(pl.Float64)


_POWERS_CAP = 1 << 20


@cache
def _powers(p: float) -> tuple[float, ...]:
    """1, p, p·p, …: trec_eval's running products p^k, up to the one that no longer changes
    (it stops at the smallest double, or 0), or 2^20 of them."""
    powers = [1.0]
    while len(powers) < _POWERS_CAP and powers[-1] * p != powers[-1]:
        powers.append(powers[-1] * p)
    return tuple(powers)


def rbp_residual(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    p: float = 0.8,
    n_ret: IntoCount = "n_ret",
) -> pl.Expr:
    """The residual of rank-biased precision (trec_eval ``rbp_resid``; Moffat and Zobel,
    2008): how much RBP(p) could still rise if every unjudged document of the ranking, and
    every rank past its end, were relevant with full gain,

    p^ñ + (1 − p) Σ_{unjudged i ≤ ñ} p^{i−1},

    and 0 when the ranking holds no unjudged document (trec_eval's convention), so an
    empty ranking scores 0. Unjudged: outside the qrels, or judged with a negative grade.
    The powers of p are running products and the sum runs down the ranking, as trec_eval
    computes them, so the values agree to the last bit.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import judged
        >>> df = pl.DataFrame(
        ...     {"positions": [[1]], "nonrel_positions": [[2]], "n_ret": [3]},
        ...     schema_overrides={"positions": pl.List(pl.UInt32),
        ...                       "nonrel_positions": pl.List(pl.UInt32)})
        >>> df.select(judged.rbp_residual(p=0.5)).item()  # rank 3 unjudged: 0.5³ + 0.5 · 0.5²
        0.25
    """
    parts.check_persistence(p)
    columns = pl.struct(
        _relevant=into_expr(positions),
        _nonrel=into_expr(nonrel_positions),
        _returned=parts.count(n_ret),
    )
    residual = columns.map_batches(
        lambda batch: _rbp_residuals(batch, p), return_dtype=pl.Float64, is_elementwise=True
    )
    return parts.positive_zero(residual)


_CELLS = 1 << 22
"""Ranks of rankings held at once by :func:`_rbp_residuals` (32 MB of doubles)."""


def _rbp_residuals(batch: pl.Series, p: float) -> pl.Series:
    """RBPResid(p) of each ranking of a struct batch (relevant ranks, non-relevant ranks,
    n_ret), in NumPy over the lists' buffers: a matrix of p^(i−1) per rank, 0 where the
    document is judged or past the ranking's end, added along each ranking in rank order
    (``np.add.accumulate`` adds one term after another, as trec_eval's loop does, and a 0
    leaves a running sum as it was)."""
    from lexiframe._kernels import list_buffers

    fields = batch.struct.unnest()
    relevant = list_buffers(fields["_relevant"])
    nonrel = list_buffers(fields["_nonrel"])
    returned = fields["_returned"].fill_null(0).to_numpy().astype(np.int64)
    width = int(returned.max()) if len(returned) else 0
    powers = _power_table(p, width + 1)
    seen = np.zeros(len(returned))
    step = max(1, _CELLS // max(width, 1))
    for start in range(0, len(returned) if width else 0, step):
        stop = min(start + step, len(returned))
        terms = np.tile(powers[:width], (stop - start, 1))
        terms[np.arange(width) >= returned[start:stop, None]] = 0.0
        for buffers in (relevant, nonrel):
            first, last = buffers.offsets[start], buffers.offsets[stop]
            ranks = buffers.values[first:last].astype(np.int64)
            owner = np.repeat(np.arange(stop - start), buffers.lengths[start:stop])
            inside = (ranks >= 1) & (ranks <= width)
            terms[owner[inside], ranks[inside] - 1] = 0.0
        seen[start:stop] = np.add.accumulate(terms, axis=1)[:, -1]
    residual = powers[returned] + (1.0 - p) * seen
    judged = relevant.lengths + nonrel.lengths
    values = pl.Series(np.where(returned > judged, residual, 0.0))
    null = fields.select(pl.any_horizontal(pl.all().is_null())).to_series()
    return values.scatter(null.arg_true(), None) if null.any() else values


@cache
def _power_array(p: float) -> np.ndarray:
    table = np.array(_powers(p))
    table.flags.writeable = False
    return table


def _power_table(p: float, length: int) -> np.ndarray:
    """p^k for k < length, each trec_eval's running product (the last one past where the
    products settle)."""
    table = _power_array(p)
    if length <= len(table):
        return table[:length]
    rest = np.arange(len(table), length)
    if len(table) < _POWERS_CAP:  # settled: every later product is the last one
        return np.concatenate([table, np.full(len(rest), table[-1])])
    # p so close to 1 that 2^20 products do not settle: past them, p^last · p^(k − last).
    return np.concatenate([table, table[-1] * np.power(p, rest - (len(table) - 1))])
