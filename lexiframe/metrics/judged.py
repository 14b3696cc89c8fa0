"""Measures of incomplete judgments: Bpref, infAP, Judged@k, Unjudged@k, RBP's residual.

They read what a positions frame built with ``judged=True`` holds besides the relevant
documents (docs/definitions.md §1–2): ``nonrel_positions``, the ranks of the retrieved
documents judged non-relevant (a grade from 0 to below the threshold); ``pooled_positions``,
the ranks of the retrieved documents judged with a negative grade (trec_eval's mark of a
pooled document left unjudged); and ``n_nonrel``, how many judged non-relevant documents
the query has. A document in neither list nor ``positions`` is unjudged. Every function is
a Polars expression and returns Float64: native, or (Bpref, infAP, RBP's residual) NumPy
over the lists' buffers, one call per batch; no Python runs per row.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl

from lexiframe._kernels import ListBuffers, list_buffers
from lexiframe._utils import IntoExpr, into_expr
from lexiframe.metrics import _rows, exprs, parts
from lexiframe.metrics.parts import IntoCount

INFAP_EPSILON = 1e-5
"""trec_eval's smoothing of infAP's estimate of the precision above a relevant document."""


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
    value = _rows.per_ranking(
        _bprefs,
        _relevant=positions,
        _nonrel=nonrel_positions,
        _rel=parts.count(n_rel),
        _n_nonrel=parts.count(n_nonrel),
    )
    return parts.positive_zero(value)


def _row_keys(buffers: ListBuffers, width: int) -> np.ndarray:
    """row · width + rank of each element of a list column's buffers: ascending over the
    whole column when each row's ranks are (ranks below ``width``)."""
    rows = _rows.row_of_each(buffers.offsets)
    return rows * width + buffers.values[buffers.offsets[0] : buffers.offsets[-1]].astype(np.int64)


def _ranked_above(
    relevant: ListBuffers, other: ListBuffers, relevant_keys: np.ndarray, width: int
) -> np.ndarray:
    """For each relevant document (flat, in rank order): how many documents of ``other``
    its ranking ranks above it."""
    rows = _rows.row_of_each(relevant.offsets)
    found = np.searchsorted(_row_keys(other, width), relevant_keys, side="left")
    above: np.ndarray = found - (other.offsets[:-1][rows] - other.offsets[0])
    return above


def _width(*columns: ListBuffers) -> int:
    """One more than the largest rank of the columns."""
    spans = [c.values[c.offsets[0] : c.offsets[-1]] for c in columns]
    return max((int(span.max()) for span in spans if len(span)), default=0) + 1


def _bprefs(fields: pl.DataFrame) -> np.ndarray:
    """Bpref of each ranking of a batch, in NumPy over the lists' buffers: n_i by a search
    of each relevant rank among the ranking's non-relevant ones, the terms added in rank
    order, as trec_eval adds them (a half-way value such as 7/32 then prints as trec_eval
    prints it: its running sum lands just below, 0.2187)."""
    relevant = list_buffers(fields["_relevant"])
    nonrel = list_buffers(fields["_nonrel"])
    rel = _rows.counts(fields["_rel"])
    fewer = np.minimum(_rows.counts(fields["_n_nonrel"]), rel)
    width = _width(relevant, nonrel)
    rows = _rows.row_of_each(relevant.offsets)
    nonrel_above = _ranked_above(relevant, nonrel, _row_keys(relevant, width), width)
    # min(n_i, R); every n_i is 0 when min(N, R) is (no division).
    capped = np.minimum(nonrel_above, rel[rows]).astype(np.float64)
    divisor = np.where(fewer > 0, fewer, 1).astype(np.float64)
    kept = _rows.running_sums(1.0 - capped / divisor[rows], relevant.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rel > 0, kept / rel, 0.0)


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
    value = _rows.per_ranking(
        _inf_aps,
        _relevant=positions,
        _nonrel=nonrel_positions,
        _pooled=pooled_positions,
        _rel=parts.count(n_rel),
    )
    return parts.positive_zero(value)


def _inf_aps(fields: pl.DataFrame) -> np.ndarray:
    """infAP of each ranking of a batch, in NumPy over the lists' buffers: a, b and u above
    each relevant document by a search of its rank among the ranking's lists, each estimate
    computed as trec_eval's formula reads, added in rank order."""
    eps = INFAP_EPSILON
    relevant = list_buffers(fields["_relevant"])
    nonrel = list_buffers(fields["_nonrel"])
    pooled = list_buffers(fields["_pooled"])
    rel = _rows.counts(fields["_rel"])
    width = _width(relevant, nonrel, pooled)
    keys = _row_keys(relevant, width)
    rank = relevant.values[relevant.offsets[0] : relevant.offsets[-1]].astype(np.float64)
    before = rank - 1.0
    relevant_above = _rows.index_in_row(relevant.offsets).astype(np.float64)
    nonrel_above = _ranked_above(relevant, nonrel, keys, width).astype(np.float64)
    pooled_above = _ranked_above(relevant, pooled, keys, width).astype(np.float64)
    judged_above = relevant_above + nonrel_above + pooled_above
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = 1.0 / rank + (before / rank) * (judged_above / before) * (
            (relevant_above + eps) / (relevant_above + nonrel_above + 2.0 * eps)
        )
        terms = np.where(rank == 1.0, 1.0, estimate)
        total = _rows.running_sums(terms, relevant.offsets)
        return np.where(rel > 0, total / rel, 0.0)


def _judged_at_most(
    positions: IntoExpr,
    nonrel_positions: IntoExpr,
    pooled_positions: IntoExpr,
    k: IntoCount,
    at_most: parts.CountAtMost,
) -> pl.Expr:
    """How many judged documents (relevant, non-relevant or pooled) rank at k or above."""
    return sum(
        (at_most(column, k) for column in (positions, nonrel_positions, pooled_positions)),
        start=pl.lit(0, dtype=pl.Int64),
    )


def judged_at(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    pooled_positions: IntoExpr = "pooled_positions",
    *,
    k: int | None = None,
    n_ret: IntoCount = "n_ret",
    at_most: parts.CountAtMost = parts.count_at_most,
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
    seen = _judged_at_most(positions, nonrel_positions, pooled_positions, depth, at_most)
    return pl.when(depth > 0).then(seen / depth).otherwise(0.0)


def unjudged_at(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    k: int,
    n_ret: IntoCount = "n_ret",
    at_most: parts.CountAtMost = parts.count_at_most,
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
    assessed = at_most(positions, k) + at_most(nonrel_positions, k)
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
    p: float = exprs.RBP_PERSISTENCE,
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
