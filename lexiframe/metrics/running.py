"""trec_eval's own arithmetic for the DCG family, to the last bit: each gain divided by
C's ``log2`` of its rank + 1 and added to a running sum one rank after another, as its
``m_ndcg.c`` and ``m_ndcg_cut.c`` loops do (``compat="pytrec_eval"``,
:attr:`lexiframe.options.Compat.running_sums`).

Polars' ``list.sum`` adds pairwise and its ``log(2)`` is ln(x)/ln 2: both can move the last
bit of a double, which pytrec_eval's users compare exactly. The sums here are NumPy over
the lists' buffers, a loop over ranks (not over rankings), and the logarithms come from a
table built with :func:`math.log2`, the C library's (NumPy's own ``log2`` differs from it
on a few integers).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from lexiframe._kernels import ListBuffers, list_buffers
from lexiframe.metrics import _rows, parts
from lexiframe.metrics.parts import IntoCount

_log2_table = np.zeros(1)


def c_log2(values: np.ndarray) -> np.ndarray:
    """C's ``log2`` of each integer of ``values`` (at least 1), from a table grown as the
    values need it.

    Example:
        >>> import numpy as np
        >>> c_log2(np.array([2, 8, 1621])).tolist() == [1.0, 3.0, math.log2(1621)]
        True
    """
    global _log2_table
    # Polars runs the measures of one call in threads: each grows and reads its own
    # snapshot of the table, so that a table another thread grew meanwhile is never
    # extended from a length it does not have (which shifted every entry past it).
    table = _log2_table
    top = int(values.max()) if len(values) else 0
    if top >= len(table):
        more = [math.log2(value) for value in range(len(table), 2 * top + 1)]
        table = np.concatenate([table, more])
        _log2_table = table
    logs: np.ndarray = table[values]
    return logs


def log2_of(values: np.ndarray) -> np.ndarray:
    """C's ``log2`` of doubles: exact from the table where a value is a whole number (as
    the gains of grades make every argument), NumPy's elsewhere (a gain map of fractions).

    Example:
        >>> log2_of(np.array([4.0, 1621.0, 2.5])).tolist()[:2] == [2.0, math.log2(1621)]
        True
    """
    whole = (values == np.floor(values)) & (values >= 1.0) & (values < 2.0**31)
    out = np.log2(np.where(whole, 1.0, values))
    out[whole] = c_log2(values[whole].astype(np.int64))
    return out


def discounted(gains: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """trec_eval's DCG terms: each gain divided by C's log2 of its rank + 1."""
    terms: np.ndarray = gains / c_log2(ranks + 1)
    return terms


def _flat(buffers: ListBuffers, dtype: type = np.float64) -> np.ndarray:
    return buffers.values[buffers.offsets[0] : buffers.offsets[-1]].astype(dtype)


def _running_ndcg(fields: pl.DataFrame) -> np.ndarray:
    """nDCG of each ranking of a batch: ``_ranks`` and ``_gains`` (in rank order) and the
    ideal gains ``_ideal`` (best first), each sum a running one in trec_eval's order."""
    ranks, gains, ideal = (list_buffers(fields[name]) for name in ("_ranks", "_gains", "_ideal"))
    terms = discounted(_flat(gains), _flat(ranks, np.int64))
    dcg = _rows.running_sums(terms, ranks.offsets)
    place = _rows.index_in_row(ideal.offsets) + 1
    ideal_dcg = _rows.running_sums(discounted(_flat(ideal), place), ideal.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal_dcg > 0.0, dcg / np.where(ideal_dcg > 0.0, ideal_dcg, 1.0), 0.0)


def ndcg(
    ranks: pl.Expr,
    doc_gains: pl.Expr | None,
    ideal_gains: pl.Expr | None,
    *,
    k: int | None = None,
    n_rel: IntoCount = "n_rel",
) -> pl.Expr:
    """nDCG (cut at ``k``) with trec_eval's running sums: the retrieved gains at ``ranks``
    (``doc_gains``; ``None``: binary, 1 each) over the ideal gains (``None``: ``n_rel``
    ones), the ideal cut at ``k`` too.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [3]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> value = df.select(ndcg(pl.col("positions"), None, None)).item()
        >>> value == (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
        True
    """
    ones = ranks.list.eval(pl.element().cast(pl.Float64) * 0.0 + 1.0)
    gains = ones if doc_gains is None else doc_gains
    if ideal_gains is None:
        ideal_gains = pl.lit(1.0, dtype=pl.Float64).repeat_by(parts.count(n_rel))
    if k is not None:
        kept = ranks.list.eval(pl.element() <= k).list.sum()
        ranks, gains, ideal_gains = (
            ranks.list.head(kept),
            gains.list.head(kept),
            ideal_gains.list.head(k),
        )
    value = _rows.per_ranking(_running_ndcg, _ranks=ranks, _gains=gains, _ideal=ideal_gains)
    return parts.positive_zero(value.fill_null(0.0))


def _binary_g(fields: pl.DataFrame) -> np.ndarray:
    """binG: the i-th relevant document at rank p adds 1/log2(2 + p − i), in order."""
    relevant = list_buffers(fields["_relevant"])
    above = _flat(relevant, np.int64) - _rows.index_in_row(relevant.offsets)  # p − i + 1
    total = _rows.running_sums(1.0 / c_log2(above + 1), relevant.offsets)
    m = _rows.counts(fields["_m"]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(relevant.lengths > 0, total / m, 0.0)


def binary_g(positions: pl.Expr, *, n_rel: IntoCount = "n_rel") -> pl.Expr:
    """binG with trec_eval's running sum (:func:`lexiframe.metrics.gain.binary_g`).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[1, 4]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(binary_g(pl.col("positions"))).item()  # (1/log2(2) + 1/log2(4)) / 4
        0.375
    """
    value = _rows.per_ranking(_binary_g, _relevant=positions, _m=parts.count(n_rel))
    return parts.positive_zero(value.fill_null(0.0))


def _g(fields: pl.DataFrame) -> np.ndarray:
    """G: each gain over log2 of its lag ``_lags`` (2 + cost − gathered), summed in rank
    order, over the ideal gains summed in order."""
    gains, lags, ideal = (list_buffers(fields[name]) for name in ("_gains", "_lags", "_ideal"))
    total = _rows.running_sums(_flat(gains) / log2_of(_flat(lags)), gains.offsets)
    best = _rows.running_sums(_flat(ideal), ideal.offsets)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(best > 0.0, total / np.where(best > 0.0, best, 1.0), 0.0)


def g(doc_gains: pl.Expr, lags: pl.Expr, ideal_gains: pl.Expr) -> pl.Expr:
    """G with trec_eval's running sums and C's log2 (exact where the gains are whole
    numbers): ``lags`` are (2 + C(p_i)) − S_i of :func:`lexiframe.metrics.gain.g`.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"g": [[1.0, 2.0]], "lag": [[2.0, 4.0]], "ideal": [[2.0, 1.0]]})
        >>> df.select(g(pl.col("g"), pl.col("lag"), pl.col("ideal"))).item()  # (1 + 1) / 3
        0.6666666666666666
    """
    value = _rows.per_ranking(_g, _gains=doc_gains, _lags=lags, _ideal=ideal_gains)
    return parts.positive_zero(value.fill_null(0.0))


def _r_ndcg(fields: pl.DataFrame) -> np.ndarray:
    """Rndcg: nDCG at each rank where the ideal gain drops, then (when the ranking runs on
    past m + 1) of the whole ranking, added in that order and averaged (m_Rndcg.c)."""
    ranks, gains, ideal = (list_buffers(fields[name]) for name in ("_ranks", "_gains", "_ideal"))
    rank = _flat(ranks, np.int64)
    dcg = _rows.cumulative_sums(discounted(_flat(gains), rank), ranks.offsets)
    best = _flat(ideal)
    place = _rows.index_in_row(ideal.offsets) + 1
    ideal_dcg = _rows.cumulative_sums(discounted(best, place), ideal.offsets)
    rows, ideal_rows = _rows.row_of_each(ranks.offsets), _rows.row_of_each(ideal.offsets)
    last_in_row = np.zeros(len(best), dtype=bool)
    ends = ideal.offsets[1:] - ideal.offsets[0]
    last_in_row[ends[ideal.lengths > 0] - 1] = True
    drops = last_in_row | (best != np.append(best[1:], np.nan))
    # DCG at each drop j: the running DCG of the last retrieved gain at a rank ≤ j.
    keys = rows.astype(np.float64) * 2.0**32 + rank
    wanted = ideal_rows[drops].astype(np.float64) * 2.0**32 + place[drops]
    dcg_at = np.zeros(len(wanted))
    if len(keys):
        found = np.searchsorted(keys, wanted, side="right") - 1
        at = np.maximum(found, 0)
        dcg_at = np.where((found >= 0) & (rows[at] == ideal_rows[drops]), dcg[at], 0.0)
    counts = np.bincount(ideal_rows[drops], minlength=len(ideal)).astype(np.int64)
    drop_offsets = np.concatenate([[0], np.cumsum(counts)])
    total = _rows.running_sums(dcg_at / ideal_dcg[drops], drop_offsets)
    m = ideal.lengths
    longer = _rows.counts(fields["_n_ret"]) > m + 1
    whole = _rows.running_sums(discounted(_flat(gains), rank), ranks.offsets)
    ideal_whole = np.zeros(len(ideal))
    ideal_whole[ideal.lengths > 0] = ideal_dcg[ends[ideal.lengths > 0] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(longer, total + whole / ideal_whole, total)
        value = total / (counts + longer)
    return np.where(m > 0, value, 0.0)


def r_ndcg(
    ranks: pl.Expr, doc_gains: pl.Expr, ideal_gains: pl.Expr, *, n_ret: IntoCount = "n_ret"
) -> pl.Expr:
    """Rndcg with trec_eval's running sums (:func:`lexiframe.metrics.gain.r_ndcg`).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"p": [[2]], "g": [[1.0]], "ideal": [[1.0]], "n_ret": [5]},
        ...                   schema_overrides={"p": pl.List(pl.UInt32)})
        >>> value = df.select(r_ndcg(pl.col("p"), pl.col("g"), pl.col("ideal"))).item()
        >>> value == (0.0 + 1 / math.log2(3)) / 2  # nDCG@1, then the whole ranking's
        True
    """
    value = _rows.per_ranking(
        _r_ndcg, _ranks=ranks, _gains=doc_gains, _ideal=ideal_gains, _n_ret=parts.count(n_ret)
    )
    return parts.positive_zero(value.fill_null(0.0))


__all__ = ["binary_g", "c_log2", "discounted", "g", "log2_of", "ndcg", "r_ndcg"]
