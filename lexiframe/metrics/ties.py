"""Measures as their expectation over every ordering of the tied documents (``ties="expected"``).

A positions frame built with ``ties="expected"`` holds, per ranking, its tie groups of two
or more documents (``tie_starts``: how many documents rank above each group; ``tie_sizes``:
its size); its rank lists hold trec_eval's order, in which each group is a run of
consecutive ranks. Each group is permuted uniformly and independently, so a document of a
group of n whose first place is s + 1 sits at each of the places s + 1 … s + n with
probability 1/n, and two of its documents at two given places with 1/(n(n − 1)). The
closed forms of docs/definitions.md ("Ties", after McSherry and Najork, ECIR 2008) follow:
a sum of per-place terms (the counts of :func:`count_at_most` that P@k, R@k and the judged
shares read, DCG, RBP) is the sum of each document's mean over its group's places; RR
reads the first group with a relevant document, AP the pairs of relevant documents, Bpref
the judged non-relevant documents of each relevant document's own group. Every function is
NumPy over the lists' buffers, one call per batch
(:func:`lexiframe.metrics._rows.per_ranking`); without ties each equals the measure itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from lexiframe._kernels import ListBuffers, list_buffers
from lexiframe._utils import IntoExpr
from lexiframe.metrics import _rows, parts
from lexiframe.metrics.parts import IntoCount

Discount = Callable[[np.ndarray], np.ndarray]
"""The weight of each place (a rank from 1) in a sum over places."""


@dataclass(frozen=True)
class _Groups:
    """The tie groups that hold a document of one rank list, flat over a batch: per group,
    its row, the documents above it (s), its size (n), how many of the list's documents it
    holds (r) and how many of them rank above it (above), in rank order; ``of_doc`` maps
    each document of the list to its group."""

    row: np.ndarray
    s: np.ndarray
    n: np.ndarray
    r: np.ndarray
    above: np.ndarray
    of_doc: np.ndarray


def _flat(buffers: ListBuffers) -> tuple[np.ndarray, np.ndarray]:
    """The values of a list column's buffers as int64, and the row of each."""
    offsets = buffers.offsets - buffers.offsets[0]
    values = buffers.values[buffers.offsets[0] : buffers.offsets[-1]].astype(np.int64)
    return values, _rows.row_of_each(offsets)


def _groups(fields: pl.DataFrame) -> _Groups:
    """The groups of the ranks of ``_ranks``: a rank p in a tie group (s < p ≤ s + n) takes
    that group; any other rank is a group of its own (s = p − 1, n = 1)."""
    ranks, rows = _flat(list_buffers(fields["_ranks"]))
    starts, group_rows = _flat(list_buffers(fields["_starts"]))
    sizes, _ = _flat(list_buffers(fields["_sizes"]))
    s, n = ranks - 1, np.ones_like(ranks)
    if len(starts):
        width = int(max(ranks.max(initial=0), (starts + sizes).max())) + 1
        found = np.searchsorted(group_rows * width + starts, rows * width + ranks) - 1
        at = np.maximum(found, 0)
        inside = (found >= 0) & (group_rows[at] == rows) & (ranks <= starts[at] + sizes[at])
        s, n = np.where(inside, starts[at], s), np.where(inside, sizes[at], n)
    # Ranks ascend in each row: a group's documents are consecutive in the list.
    first = np.ones(len(ranks), bool)
    first[1:] = (rows[1:] != rows[:-1]) | (s[1:] != s[:-1])
    of_doc = np.cumsum(first) - 1
    heads = np.flatnonzero(first)
    row_start = np.searchsorted(rows, rows[heads], side="left")
    return _Groups(
        row=rows[heads],
        s=s[heads],
        n=n[heads],
        r=np.bincount(of_doc, minlength=len(heads)),
        above=heads - row_start,
        of_doc=of_doc,
    )


def _cut(groups: _Groups, k: np.ndarray | None) -> np.ndarray:
    """The places of each group above the cut-off k of its row (all of them without one)."""
    if k is None:
        return groups.n
    cut: np.ndarray = np.clip(k[groups.row] - groups.s, 0, groups.n)
    return cut


def _cutoffs(fields: pl.DataFrame) -> np.ndarray | None:
    return _rows.counts(fields["_k"]) if "_k" in fields.columns else None


def _place_sums(s: np.ndarray, places: np.ndarray, weight: Discount | None) -> np.ndarray:
    """Σ_{u ≤ places} weight(s + u) of each group (s documents above it): its places'
    weights, added in rank order (``None``: a weight of 1, the count of places)."""
    if weight is None:
        return places.astype(np.float64)
    group = np.repeat(np.arange(len(places)), places)
    starts = np.concatenate([[0], np.cumsum(places)[:-1]]) if len(places) else places
    rank = s[group] + np.arange(len(group)) - np.repeat(starts, places) + 1
    sums: np.ndarray = np.bincount(group, weights=weight(rank), minlength=len(places))
    return sums


def _linear(fields: pl.DataFrame, weight: Discount | None) -> np.ndarray:
    """E[Σ_i gain_i · weight(place_i)] over the list's documents at places ≤ k: each
    document's gain times the mean weight of its group's places above the cut."""
    groups = _groups(fields)
    if "_gains" in fields.columns:
        buffers = list_buffers(fields["_gains"])
        gains = buffers.values[buffers.offsets[0] : buffers.offsets[-1]].astype(np.float64)
        group_gains = np.bincount(groups.of_doc, weights=gains, minlength=len(groups.s))
    else:
        group_gains = groups.r.astype(np.float64)
    terms = group_gains / groups.n * _place_sums(groups.s, _cut(groups, _cutoffs(fields)), weight)
    values: np.ndarray = np.bincount(groups.row, weights=terms, minlength=fields.height)
    return values


def _reciprocals(rank: np.ndarray) -> np.ndarray:
    reciprocal: np.ndarray = 1.0 / rank
    return reciprocal


def _columns(
    positions: IntoExpr,
    tie_starts: IntoExpr,
    tie_sizes: IntoExpr,
    k: IntoCount | None = None,
    name: str = "",
) -> dict[str, IntoExpr]:
    """The columns a kernel reads: the rank list, its tie groups and a cut-off if one is
    given (checked as the cut-off of measure ``name`` when it names one)."""
    columns = {"_ranks": positions, "_starts": tie_starts, "_sizes": tie_sizes}
    if k is not None:
        if name and isinstance(k, int):
            parts.check_cutoff(k, name)
        columns["_k"] = parts.count(k)
    return columns


def count_at_most(
    positions: IntoExpr,
    k: IntoCount,
    *,
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[#{i : p_i ≤ k}]: the expected number of the list's documents in the top k,
    Σ_g r_g·t_g/n_g over the groups (t_g of a group's n_g places above k); ``k`` may be a
    column (R-precision cuts at m). The ``at_most=`` of the measures that count the
    documents above a rank (P, R, RP, RelativeP, RPrecMult, Judged, Unjudged) gives their
    expectation.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[2, 4]], "tie_starts": [[1]], "tie_sizes": [[4]]},
        ...                   schema={c: pl.List(pl.UInt32) for c in ["positions",
        ...                           "tie_starts", "tie_sizes"]})
        >>> df.select(ties.count_at_most("positions", 3)).item()  # 2 of 4 tied at ranks 2-5
        1.0
    """
    columns = _columns(positions, tie_starts, tie_sizes, k)
    return _rows.per_ranking(lambda fields: _linear(fields, None), **columns)


def discounted(
    positions: IntoExpr = "positions",
    *,
    gains: IntoExpr | None = None,
    k: int | None = None,
    discount: Discount = _rows.log2_discounts,
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[Σ_{i : p_i ≤ k} g_i · w(p_i)]: the expected discounted gain of the list's documents
    (DCG by default, w(p) = 1/log2(p + 1); RBP with ``discount`` the function of NumPy ranks
    (1 − γ)·γ^(p − 1)), each document's gain times the mean weight of its group's places
    (gain 1 without ``gains``, else the documents' gains in rank order).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[1]], "tie_starts": [[0]], "tie_sizes": [[3]]},
        ...                   schema={c: pl.List(pl.UInt32) for c in ["positions",
        ...                           "tie_starts", "tie_sizes"]})
        >>> round(df.select(ties.discounted()).item(), 4)  # (1 + 1/log2(3) + 1/2) / 3
        0.7103
    """
    columns = _columns(positions, tie_starts, tie_sizes, k, "DCG")
    if gains is not None:
        columns["_gains"] = gains
    return _rows.per_ranking(lambda fields: _linear(fields, discount), **columns)


def rr(
    positions: IntoExpr = "positions",
    *,
    k: int | None = None,
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[RR]: the first group with a relevant document (s above it, n documents, r of them
    relevant) puts its first relevant document at place i ≤ n − r + 1 with probability
    C(n − i, r − 1)/C(n, r), so E[RR] = Σ_i P(i)/(s + i), the sum stopping at s + i ≤ k.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[2]], "tie_starts": [[0]], "tie_sizes": [[2]]},
        ...                   schema={c: pl.List(pl.UInt32) for c in ["positions",
        ...                           "tie_starts", "tie_sizes"]})
        >>> df.select(ties.rr()).item()  # a constant scorer: (1 + 1/2) / 2
        0.75
    """
    return _rows.per_ranking(_rrs, **_columns(positions, tie_starts, tie_sizes, k, "RR"))


def _rrs(fields: pl.DataFrame) -> np.ndarray:
    from scipy.special import gammaln  # here: importing lexiframe loads no SciPy

    groups = _groups(fields)
    first = np.flatnonzero(groups.above == 0)  # the first group of each non-empty row
    s, n, r, row = groups.s[first], groups.n[first], groups.r[first], groups.row[first]
    last = n - r + 1
    k = _cutoffs(fields)
    if k is not None:
        last = np.clip(k[row] - s, 0, last)
    term = np.repeat(np.arange(len(first)), last)
    i = np.arange(len(term)) - np.repeat(np.cumsum(last) - last, last) + 1
    n_t, r_t = n[term], r[term]
    # log C(n − i, r − 1) − log C(n, r)
    log_p = (
        gammaln(n_t - i + 1) - gammaln(r_t) - gammaln(n_t - i - r_t + 2)
        - gammaln(n_t + 1) + gammaln(r_t + 1) + gammaln(n_t - r_t + 1)
    )  # fmt: skip
    terms = np.exp(log_p) / (s[term] + i)
    sums = np.bincount(term, weights=terms, minlength=len(first))
    values: np.ndarray = np.zeros(fields.height)
    values[row] = sums
    return values


def success(
    positions: IntoExpr = "positions",
    *,
    k: int,
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[Success@k] = 1 − Π_g C(n_g − r_g, t_g)/C(n_g, t_g): no relevant document in the top
    k means none in the t_g places of each group above k (hypergeometric).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[3]], "tie_starts": [[0]], "tie_sizes": [[4]]},
        ...                   schema={c: pl.List(pl.UInt32) for c in ["positions",
        ...                           "tie_starts", "tie_sizes"]})
        >>> round(df.select(ties.success(k=2)).item(), 12)  # 1 relevant of 4 tied, k = 2
        0.5
    """
    columns = _columns(positions, tie_starts, tie_sizes, k, "Success")
    return _rows.per_ranking(_successes, **columns)


def _successes(fields: pl.DataFrame) -> np.ndarray:
    from scipy.special import gammaln  # here: importing lexiframe loads no SciPy

    groups = _groups(fields)
    n, r, t = groups.n, groups.r, _cut(groups, _cutoffs(fields))
    possible = n - r >= t
    rest = np.where(possible, n - r, t)  # out of range where impossible (masked)
    log_none = gammaln(rest + 1) - gammaln(rest - t + 1) - gammaln(n + 1) + gammaln(n - t + 1)
    log_none = np.where(possible, log_none, -np.inf)
    none = np.bincount(groups.row, weights=log_none, minlength=fields.height)
    values: np.ndarray = 1.0 - np.exp(none)
    return values


def ap(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    k: int | None = None,
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[AP] = (1/m) Σ_g (r/n)·[(A + 1)·ΔH + ((r − 1)/(n − 1))·(u − (s + 1)·ΔH)] over the
    groups with a relevant document (A relevant documents above the group, u of its places
    above k, ΔH = Σ_{j ≤ u} 1/(s + j)): AP as a sum over pairs of relevant documents.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[2]], "n_rel": [1], "tie_starts": [[0]],
        ...                    "tie_sizes": [[2]]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "tie_starts": pl.List(pl.UInt32),
        ...                           "tie_sizes": pl.List(pl.UInt32)})
        >>> df.select(ties.ap()).item()  # RR's value, with one relevant document
        0.75
    """
    columns = _columns(positions, tie_starts, tie_sizes, k, "AP")
    return _rows.per_ranking(_aps, **columns, _m=parts.count(n_rel))


def _aps(fields: pl.DataFrame) -> np.ndarray:
    groups = _groups(fields)
    s, n, r = groups.s, groups.n.astype(np.float64), groups.r.astype(np.float64)
    u = _cut(groups, _cutoffs(fields))
    harmonic = _place_sums(s, u, _reciprocals)
    pairs = np.divide(r - 1, n - 1, out=np.zeros(len(n)), where=n > 1)
    terms = r / n * ((groups.above + 1) * harmonic + pairs * (u - (s + 1) * harmonic))
    sums = np.bincount(groups.row, weights=terms, minlength=fields.height)
    m = _rows.counts(fields["_m"]).astype(np.float64)
    values: np.ndarray = np.divide(sums, m, out=np.zeros(len(m)), where=m > 0)
    return values


def bpref(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_nonrel: IntoCount = "n_nonrel",
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[Bpref]: a relevant document of a group with a judged non-relevant documents above
    the group and J of them in it has Y of those J above it, Y uniform on 0 … J, so its term
    is 1 − mean_y min(a + Y, R)/min(N, R) (trec_eval's bpref; 0/0 = 0).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[1]], "nonrel_positions": [[2]], "n_rel": [1],
        ...                    "n_nonrel": [1], "tie_starts": [[0]], "tie_sizes": [[2]]},
        ...                   schema_overrides={c: pl.List(pl.UInt32) for c in [
        ...                       "positions", "nonrel_positions", "tie_starts", "tie_sizes"]})
        >>> df.select(ties.bpref()).item()  # above or below its one tied non-relevant
        0.5
    """
    return _rows.per_ranking(
        _bprefs,
        **_columns(positions, tie_starts, tie_sizes),
        _nonrel=nonrel_positions,
        _rel=parts.count(n_rel),
        _n_nonrel=parts.count(n_nonrel),
    )


def _bprefs(fields: pl.DataFrame) -> np.ndarray:
    groups = _groups(fields)
    nonrel, nonrel_rows = _flat(list_buffers(fields["_nonrel"]))
    width = int(max(nonrel.max(initial=0), (groups.s + groups.n).max(initial=0))) + 1
    keys = nonrel_rows * width + nonrel
    at_or_below = np.searchsorted(keys, groups.row * width + groups.s, side="right")
    in_or_above = np.searchsorted(keys, groups.row * width + groups.s + groups.n, side="right")
    row_first = np.searchsorted(nonrel_rows, groups.row, side="left")
    a, j = at_or_below - row_first, in_or_above - at_or_below
    rel = _rows.counts(fields["_rel"])
    big_r = rel[groups.row]
    fewer = np.minimum(_rows.counts(fields["_n_nonrel"]), rel)[groups.row].astype(np.float64)
    # Σ_{y=0..J} min(a + y, R): y = 0 … c below R (c + 1 terms), the other J − c at R.
    c = np.clip(big_r - a, -1, j)
    capped = (c + 1) * a + c * (c + 1) / 2 + (j - c) * big_r
    share = np.divide(capped / (j + 1), fewer, out=np.zeros(len(fewer)), where=fewer > 0)
    terms = groups.r * (1.0 - share)
    sums = np.bincount(groups.row, weights=terms, minlength=fields.height)
    values: np.ndarray = np.divide(sums, rel, out=np.zeros(len(rel)), where=rel > 0)
    return values


def rbp_weights(p: float) -> Discount:
    """RBP's weight of each place, (1 − p)·p^(rank − 1), as a :data:`Discount`.

    Example:
        >>> import numpy as np
        >>> rbp_weights(0.5)(np.array([1, 2])).tolist()
        [0.5, 0.25]
    """
    parts.check_persistence(p)

    def weights(rank: np.ndarray) -> np.ndarray:
        weighted: np.ndarray = (1.0 - p) * p ** (rank - 1.0)
        return weighted

    return weights


def rbp_residual(
    positions: IntoExpr = "positions",
    nonrel_positions: IntoExpr = "nonrel_positions",
    *,
    p: float,
    n_ret: IntoCount = "n_ret",
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[RBPResid]: p^ñ + (1 − p) Σ_{unjudged i ≤ ñ} p^(i − 1) is 1 − (1 − p) Σ_{judged i}
    p^(i − 1), linear in the judged documents' places; 0 when the ranking holds no
    unjudged document (whatever the order).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[1]], "nonrel_positions": [[]], "n_ret": [2],
        ...                    "tie_starts": [[0]], "tie_sizes": [[2]]},
        ...                   schema_overrides={c: pl.List(pl.UInt32) for c in [
        ...                       "positions", "nonrel_positions", "tie_starts", "tie_sizes"]})
        >>> df.select(ties.rbp_residual(p=0.5)).item()  # 1 - (0.5 + 0.25) / 2
        0.625
    """
    weight = rbp_weights(p)
    judged = [
        discounted(column, discount=weight, tie_starts=tie_starts, tie_sizes=tie_sizes)
        for column in (positions, nonrel_positions)
    ]
    returned = parts.count(n_ret)
    assessed = parts.n_retrieved_relevant(positions) + parts.n_retrieved_relevant(nonrel_positions)
    value = pl.when(returned > assessed).then(1.0 - judged[0] - judged[1]).otherwise(0.0)
    return parts.positive_zero(value)


def binary_g(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    tie_starts: IntoExpr = "tie_starts",
    tie_sizes: IntoExpr = "tie_sizes",
) -> pl.Expr:
    """E[BinG] = (1/m) Σ_g r_g · mean_{y = 0 … n_g − r_g} 1/log2(2 + s_g − A_g + y): a
    relevant document of a group has the s_g − A_g non-relevant documents above the group
    and Y of its own group's n_g − r_g above it, Y uniform on 0 … n_g − r_g.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import ties
        >>> df = pl.DataFrame({"positions": [[1]], "n_rel": [1], "tie_starts": [[0]],
        ...                    "tie_sizes": [[2]]},
        ...                   schema_overrides={c: pl.List(pl.UInt32) for c in [
        ...                       "positions", "tie_starts", "tie_sizes"]})
        >>> round(df.select(ties.binary_g()).item(), 6)  # (1/log2(2) + 1/log2(3)) / 2
        0.815465
    """
    columns = _columns(positions, tie_starts, tie_sizes)
    return _rows.per_ranking(_binary_gs, **columns, _m=parts.count(n_rel))


def _binary_gs(fields: pl.DataFrame) -> np.ndarray:
    groups = _groups(fields)
    places = groups.n - groups.r + 1  # the non-relevant documents above: 0 … n − r more
    # Σ_{y ≤ n − r} 1/log2(2 + base + y) = Σ_{u ≤ n − r + 1} 1/log2((base + u) + 1)
    sums = _place_sums(groups.s - groups.above, places, _rows.log2_discounts)
    terms = groups.r * sums / places
    total = np.bincount(groups.row, weights=terms, minlength=fields.height)
    m = _rows.counts(fields["_m"]).astype(np.float64)
    values: np.ndarray = np.divide(total, m, out=np.zeros(len(m)), where=m > 0)
    return values
