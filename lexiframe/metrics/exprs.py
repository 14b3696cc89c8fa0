"""Measures of one ranking as Polars expressions over the positions frame (docs/definitions.md §2).

Each function takes the ``positions`` list column (ascending ranks p_1 < … < p_r of the
retrieved relevant documents) and, where the measure needs them, ``n_rel`` (m), ``n_ret``
(ñ) or the corpus size ``n``, and returns a native Polars expression, or (AP) NumPy over
the list's buffers, one call per batch: no Python runs per row.

Unretrieved relevant documents are placed by pessimistic imputation (lexirecall paper §2.2):
the i-th relevant document, i > r, sits at p̂_i = n − (m − i). With ``n=None`` the corpus is
taken as larger than any depth, so imputed documents have exposure 0 (trec_eval's
behaviour) and measures that need their positions (SL3, RecallError, the linear exposure)
are null, with a :class:`~lexiframe.errors.MissingCorpusSizeWarning` that names ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import polars as pl

from lexiframe._kernels import list_buffers
from lexiframe._utils import IntoExpr, into_expr
from lexiframe.errors import InputError
from lexiframe.metrics import _rows, parts
from lexiframe.metrics.dcg import dcg as dcg
from lexiframe.metrics.dcg import ideal_dcg as ideal_dcg
from lexiframe.metrics.dcg import ndcg as ndcg
from lexiframe.metrics.dcg import normalised as normalised
from lexiframe.metrics.parts import IntoCount
from lexiframe.typing import Exposure
from lexiframe.validate import require_positive_int

RBP_PERSISTENCE = 0.8
"""The default persistence p of RBP, its residual and TSE's rbp exposure (the lexirecall
paper's §2.3.1 example; trec_eval's rbp defaults to 0.9, which its spelling ``rbp`` reads as)."""


def rr(positions: IntoExpr = "positions", *, k: int | None = None) -> pl.Expr:
    """Reciprocal rank: 1/p_1, or 0 when no relevant document is retrieved (above ``k``).

    ESL₁ = p_1 orders rankings the same way (lexiprecision paper §1).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[2, 5], []]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(exprs.rr()).to_series().to_list()
        [0.5, 0.0]
    """
    parts.check_cutoff(k, "RR")
    first = into_expr(positions).list.first().cast(pl.Float64)
    value = 1.0 / first
    if k is not None:
        value = pl.when(first <= k).then(value)
    return value.fill_null(0.0)


def ap(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", k: int | None = None
) -> pl.Expr:
    """Average precision: (1/m) Σ_{i≤r} i/p_i (trec_eval ``map``; ``map_cut_k`` with ``k``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> round(df.select(exprs.ap()).item(), 6)  # (1/1 + 2/3) / 4
        0.416667
    """
    parts.check_cutoff(k, "AP")
    value = _rows.per_ranking(
        lambda fields: _aps(fields, k), _relevant=positions, _m=parts.count(n_rel)
    )
    return parts.nan_as_zero(value).fill_null(0.0)


_AGG_SEQUENTIAL = 128
"""Polars' ``sum`` in ``list.agg`` adds fewer terms than this one after another (more, in
blocks): :func:`_aps` adds shorter lists itself and leaves longer ones to Polars."""


def _precision_sums(ranks: pl.Expr) -> pl.Expr:
    return ranks.list.agg((pl.int_range(1, pl.len() + 1) / pl.element()).sum())


def _aps(fields: pl.DataFrame, k: int | None) -> np.ndarray:
    """AP (cut at k) of each ranking of a batch: Σ i/p_i over the relevant ranks at most k,
    added in rank order, over m; a ranking with 128 or more such ranks through Polars'
    own sum, whose order then differs."""
    relevant = list_buffers(fields["_relevant"])
    offsets = relevant.offsets - relevant.offsets[0]
    ranks = relevant.values[relevant.offsets[0] : relevant.offsets[-1]].astype(np.int64)
    m = _rows.counts(fields["_m"]).astype(np.float64)
    kept = relevant.lengths
    if k is not None:  # ranks ascend: those at most k are a prefix of each list
        kept = np.bincount(_rows.row_of_each(offsets)[ranks <= k], minlength=len(m))
    place = _rows.index_in_row(offsets)
    keep = place < np.repeat(kept, relevant.lengths)
    precisions = (place + 1).astype(np.float64) / ranks
    kept_offsets = np.concatenate([[0], np.cumsum(kept)])
    sums = _rows.running_sums(precisions[keep], kept_offsets)
    long = np.flatnonzero(kept >= _AGG_SEQUENTIAL)
    if len(long):
        column = fields["_relevant"].gather(long).cast(pl.List(pl.Int64))
        cut = column if k is None else column.list.filter(pl.element() <= k)
        sums[long] = pl.select(_precision_sums(pl.lit(cut))).to_series().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums / m


def precision(
    positions: IntoExpr = "positions", *, k: int, at_most: parts.CountAtMost = parts.count_at_most
) -> pl.Expr:
    """Precision at k: #{i : p_i ≤ k}/k (trec_eval ``P_k``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3, 12]]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(exprs.precision(k=10)).item()
        0.2
    """
    parts.check_cutoff(k, "P")
    return parts.divided_by(at_most(positions, k), k)


def recall(
    positions: IntoExpr = "positions",
    *,
    k: int,
    n_rel: IntoCount = "n_rel",
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """Recall at k: #{i : p_i ≤ k}/m (trec_eval ``recall_k``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3, 12]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.recall(k=10)).item()
        0.5
    """
    parts.check_cutoff(k, "R")
    return parts.nan_as_zero(at_most(positions, k) / parts.count(n_rel))


def r_precision(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    at_most: parts.CountAtMost = parts.count_at_most,
) -> pl.Expr:
    """R-precision: #{i : p_i ≤ m}/m (trec_eval ``Rprec``).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3, 12]], "n_rel": [4]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.r_precision()).item()
        0.5
    """
    return parts.nan_as_zero(at_most(positions, n_rel) / parts.count(n_rel))


def rbp(
    positions: IntoExpr = "positions",
    *,
    p: float = RBP_PERSISTENCE,
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
) -> pl.Expr:
    """Rank-biased precision: (1 − p) Σ_{i≤r} g_i p^(p_i − 1) (Moffat and Zobel, 2008).

    Binary gains g_i = 1 by default. With ``grades`` (the grades of the retrieved relevant
    documents in rank order) and ``ideal_grades`` (all relevant grades of the query), the
    gains are the grades scaled to [0, 1] by the query's top grade G when G > 1,
    g_i = grade_i / G, as trec_eval's ``rbp`` computes them (its min–max scaling over the
    grades 0 … G).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 2]], "grades": [[1, 2]], "ideal": [[2, 1]]},
        ...                   schema={"positions": pl.List(pl.UInt32),
        ...                           "grades": pl.List(pl.Int64), "ideal": pl.List(pl.Int64)})
        >>> round(df.select(exprs.rbp(p=0.5)).item(), 6)  # 0.5 (1 + 0.5)
        0.75
        >>> round(df.select(exprs.rbp(p=0.5, grades="grades", ideal_grades="ideal")).item(), 6)
        0.5
    """
    parts.check_persistence(p)
    if (grades is None) != (ideal_grades is None):
        raise InputError("graded RBP needs both grades= and ideal_grades=")
    discounts = parts.ranks(positions).list.eval((1.0 - p) * pl.lit(p) ** (pl.element() - 1))
    if grades is None:
        return parts.positive_zero(discounts.list.sum())
    gains = rbp_gains(grades, parts.or_column(ideal_grades, "ideal_grades"))
    return parts.positive_zero((gains * discounts).list.sum())


def rbp_gains(grades: IntoExpr, ideal_grades: IntoExpr) -> pl.Expr:
    """RBP's gains: the grades scaled to [0, 1] by the query's top grade G when G > 1."""
    top = into_expr(ideal_grades).list.max().cast(pl.Float64)
    scale = pl.when(top > 1.0).then(top).otherwise(1.0)
    return into_expr(grades).cast(pl.List(pl.Float64)) / scale


ERR_MAX_GRADE = 4
"""The grade G of ERR's top stopping probability (2^G − 1)/2^G: gdeval's MAX_JUDGMENT."""
ERR_MAX_GRADE_LIMIT = 1023
"""The largest max_grade of ERR: 2^1023 is the largest power of two a float holds."""


def err(
    positions: IntoExpr = "positions",
    *,
    grades: IntoExpr | None = None,
    k: int | None = None,
    max_grade: int = ERR_MAX_GRADE,
) -> pl.Expr:
    """Expected reciprocal rank (Chapelle et al., CIKM 2009), as the TREC Web track's
    gdeval computes it: Σ_{i≤k} R_i/i Π_{j<i} (1 − R_j) over the ranks 1 … k, with the
    stopping probability R = (2^g − 1)/2^G of a document of grade g and G = ``max_grade``.

    Non-relevant documents (g = 0) stop no one but take their rank: the sum runs over the
    retrieved relevant documents, at their positions p_i. ``grades``: their grades in rank
    order; without them every relevant document has g = 1 (binary qrels). A ranking with a
    grade above ``max_grade`` is null (gdeval refuses such qrels; ``lf.measures`` raises).
    No cutoff: the whole ranking (docs/definitions.md §2).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3]], "grades": [[2, 4]]},
        ...                   schema={"positions": pl.List(pl.UInt32), "grades": pl.List(pl.Int64)})
        >>> # R = 3/16 at rank 1, then 15/16 at rank 3 after (1 − 3/16)
        >>> round(df.select(exprs.err(grades="grades")).item(), 6)
        0.441406
        >>> round(df.select(exprs.err(grades="grades", k=2)).item(), 6)
        0.1875
    """
    parts.check_cutoff(k, "ERR")
    _check_max_grade(max_grade)
    ranks = parts.ranks(positions).cast(pl.List(pl.Float64))
    top = 2.0**max_grade
    if grades is None:
        levels = ranks.list.eval(pl.element() * 0.0 + 1.0)
    else:
        # Negative grades (unjudged in TREC's Web track qrels) stop no one, as in gdeval.
        levels = into_expr(grades).cast(pl.List(pl.Float64)).list.eval(pl.element().clip(0.0))
    too_high = levels.list.max() > max_grade
    if k is not None:
        kept = ranks.list.eval(pl.element() <= k).list.sum()
        ranks = ranks.list.head(kept)
        levels = levels.list.head(kept)
    stop = levels.list.eval((pl.lit(2.0).pow(pl.element()) - 1.0) / top)
    value = parts.cascade(ranks, stop)
    return pl.when(too_high.fill_null(False)).then(parts.null()).otherwise(value)


def _check_max_grade(max_grade: int) -> None:
    require_positive_int(max_grade, "max_grade of ERR")
    if max_grade > ERR_MAX_GRADE_LIMIT:
        raise InputError(
            f"max_grade of ERR is at most {ERR_MAX_GRADE_LIMIT} (ERR divides by 2^max_grade, a "
            f"floating-point number), not {max_grade}"
        )


def exposure_function(
    exposure: Exposure, *, n: IntoCount | None = None, p: float = RBP_PERSISTENCE
) -> Callable[[pl.Expr], pl.Expr]:
    """The exposure e(position) of the recall-level family (lexirecall paper, Definition 2.1).

    ``rr`` and ``ap``: 1/p; ``ndcg``: 1/log2(p + 1); ``rbp``: (1 − γ)γ^(p − 1) with γ = ``p``;
    ``linear``: 1 − position/n (null without ``n``); or any function of a Float64 position
    expression.
    """
    if callable(exposure):
        return exposure
    if exposure in ("rr", "ap"):
        return lambda position: 1.0 / position
    if exposure == "ndcg":
        return lambda position: 1.0 / (position + 1.0).log(2)
    if exposure == "rbp":
        parts.check_persistence(p)
        return lambda position: (1.0 - p) * pl.lit(p) ** (position - 1.0)
    if exposure == "linear":
        if n is None:
            return lambda position: parts.null()
        return lambda position: 1.0 - position / parts.count(n).cast(pl.Float64)
    raise InputError(
        f"unknown exposure {exposure!r}; use one of 'rr', 'ap', 'ndcg', 'rbp', 'linear' "
        "or a function of a position expression"
    )


def _last_position(positions: IntoExpr, n_rel: IntoCount, n: IntoCount | None) -> pl.Expr:
    """p̂_m, the imputed position of the last relevant document (null when n is needed)."""
    complete = parts.n_retrieved_relevant(positions) == parts.count(n_rel)
    last = into_expr(positions).list.last().cast(pl.Float64)
    imputed = pl.lit(None, dtype=pl.Float64) if n is None else parts.count(n).cast(pl.Float64)
    return pl.when(complete).then(last).otherwise(imputed)


def tse(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    exposure: Exposure = "rr",
    n: IntoCount | None = None,
    p: float = RBP_PERSISTENCE,
) -> pl.Expr:
    """Total search efficiency: TSE_e = e(p̂_m), the exposure of the last relevant document.

    Lexirecall paper §3.2, eq. 3 (Definition 2.1 with all weight on recall level m). It
    is 0 when the last relevant document was not retrieved and ``n`` is None; the linear
    exposure needs
    ``n`` for every ranking (null and a :class:`~lexiframe.errors.MissingCorpusSizeWarning`
    without it).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 4], [2]], "n_rel": [2, 2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.tse()).to_series().to_list()
        [0.25, 0.0]
    """
    weigh = exposure_function(exposure, n=n, p=p)
    if exposure == "linear" and n is None:
        parts.warn_missing_n("TSE(exposure='linear')")
        return parts.null()
    return weigh(_last_position(positions, n_rel, n)).fill_null(0.0)


def sl3(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", n: IntoCount | None = None
) -> pl.Expr:
    """Cooper's type 3 search length: p̂_m − m (lexirecall paper §3.2).

    Null when a relevant document was not retrieved and ``n`` is None (with a
    :class:`~lexiframe.errors.MissingCorpusSizeWarning`).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 4], [2]], "n_rel": [2, 2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.sl3(n=100)).to_series().to_list()
        [2.0, 98.0]
    """
    if n is None:
        parts.warn_missing_n("SL3")
    return _last_position(positions, n_rel, n) - parts.count(n_rel)


def recall_error(
    positions: IntoExpr = "positions", *, n_rel: IntoCount = "n_rel", n: IntoCount | None = None
) -> pl.Expr:
    """Rocchio's recall error: mean(p̂) − (m + 1)/2 (lexirecall paper §3.2).

    The m − r unretrieved documents sit at n − m + i for i = r+1 … m, whose sum is
    (m − r)(n − m) + (m(m + 1) − r(r + 1))/2. Null when r < m and ``n`` is None (with a
    :class:`~lexiframe.errors.MissingCorpusSizeWarning`).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 4], [2]], "n_rel": [2, 2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.recall_error(n=10)).to_series().to_list()
        [1.0, 4.5]
    """
    m = parts.count(n_rel).cast(pl.Float64)
    r = parts.n_retrieved_relevant(positions).cast(pl.Float64)
    retrieved = parts.ranks(positions).list.sum().cast(pl.Float64)
    if n is None:
        parts.warn_missing_n("RecallError")
        imputed: pl.Expr = pl.when(r == m).then(0.0)
    else:
        n_value = parts.count(n).cast(pl.Float64)
        imputed = (m - r) * (n_value - m) + (m * (m + 1) - r * (r + 1)) / 2
    # Undefined without a relevant document (m = 0): null.
    return pl.when(m > 0).then((retrieved + imputed) / m - (m + 1) / 2)


def skipped_depth(schema: Iterable[str], query_keys: Sequence[str]) -> pl.Expr:
    """The depth at which a ranking that returned nothing is scored (ASL of a skipped query).

    The ``depth`` column of a positions frame built with ``depth=``, else the longest ranking
    of the query in the frame: the largest ``n_ret`` over the rows that share ``query_keys``.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"query": ["q1", "q1", "q2"], "n_ret": [3, 0, 5]})
        >>> df.select(exprs.skipped_depth(df.columns, ["query"])).to_series().to_list()
        [3, 3, 5]
    """
    if "depth" in schema:
        return pl.col("depth")
    return pl.col("n_ret").max().over(list(query_keys))


def irrelevant_returned(
    positions: IntoExpr = "positions",
    n_ret: IntoCount = "n_ret",
    depth: IntoCount | None = None,
) -> pl.Expr:
    """ñ − r, the irrelevant documents a ranking returned: the atomized search length of each
    relevant document it did not retrieve (ASL paper §3.1, eq. 3). An empty ranking (a
    skipped query) scores as if it had returned ``depth`` irrelevant documents (null when
    ``depth`` is None).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[2, 3], []], "n_ret": [10, 0]})
        >>> df.select(irrelevant_returned(depth=100)).to_series().to_list()
        [8.0, 100.0]
    """
    returned = parts.count(n_ret)
    skipped = parts.null() if depth is None else parts.count(depth)
    effective = pl.when(returned == 0).then(skipped).otherwise(returned)
    return (effective - parts.n_retrieved_relevant(positions)).cast(pl.Float64)


def asl(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    depth: IntoCount | None = None,
) -> pl.Expr:
    """Atomized search length of each relevant document, in rank order (ASL paper §3.1, eq. 3).

    A retrieved document at rank p_i scores p_i − (i − 1): the irrelevant documents above
    it, plus one. Each of the m − r unretrieved ones scores ñ − r, the irrelevant documents
    the system returned. A ranking that returned nothing (a skipped query) must not beat a
    real one: it scores as if it had returned ``depth`` irrelevant documents, so each of its
    relevant documents scores ``depth`` (null when ``depth`` is None;
    :func:`lexiframe.measures` passes the positions frame's ``depth=``, else the longest
    ranking of the query, :func:`skipped_depth`). The list feeds the per-document
    histograms (paper figures 5, 6).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[2, 3, 7], []], "n_rel": [5, 2], "n_ret": [10, 0]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> df.select(exprs.asl(depth=10)).to_series().to_list()
        [[2.0, 2.0, 5.0, 7.0, 7.0], [10.0, 10.0]]
    """
    r = parts.n_retrieved_relevant(positions)
    missing = irrelevant_returned(positions, n_ret, depth).repeat_by(parts.count(n_rel) - r)
    return pl.concat_list(asl_retrieved(positions), missing)


def asl_retrieved(positions: IntoExpr = "positions") -> pl.Expr:
    """Atomized search length of each retrieved relevant document, in rank order: the i-th,
    at rank p_i, scores p_i − (i − 1), the irrelevant documents above it plus one (ASL
    paper §3.1, eq. 3).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[2, 3, 7]]})
        >>> df.select(asl_retrieved()).item().to_list()
        [2.0, 2.0, 5.0]
    """
    ranks = parts.ranks(positions)
    return ranks.list.eval(pl.element() - pl.int_range(pl.len())).cast(pl.List(pl.Float64))


def asl_mean(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    n_ret: IntoCount = "n_ret",
    first: int | None = None,
    depth: IntoCount | None = None,
) -> pl.Expr:
    """ASL of a query: mean ASL of its relevant documents (ASL paper §3.1, eq. 1–4).

    With ``first=k`` (ASL@g1-k), the mean over its first min(k, m) relevant documents in
    rank order, unretrieved ones last. Lower is better. A skipped query (nothing returned)
    scores ``depth`` (see :func:`asl`); null without it.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[2, 3, 7], []], "n_rel": [5, 2], "n_ret": [10, 0]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32,
        ...                           "n_ret": pl.UInt32})
        >>> first_two = exprs.asl_mean(first=2, depth=10).alias("g2")
        >>> df.select(exprs.asl_mean(depth=10), first_two).rows()
        [(4.6, 2.0), (10.0, 10.0)]
    """
    parts.check_cutoff(first, "ASL@g1-k")
    m = parts.count(n_rel)
    counted = m if first is None else pl.min_horizontal(m, first)
    ranks = parts.ranks(positions) if first is None else parts.ranks(positions).list.head(first)
    h = ranks.list.len().cast(pl.Int64)
    # Σ_{i≤h} (p_i − (i − 1)) = Σ p_i − h(h − 1)/2
    retrieved = ranks.list.sum().cast(pl.Float64) - (h * (h - 1) / 2)
    unretrieved = (counted - h).clip(lower_bound=0) * irrelevant_returned(positions, n_ret, depth)
    # Undefined without a relevant document (m = 0): null.
    return pl.when(counted > 0).then((retrieved + unretrieved) / counted)
