"""The discounted cumulative gain family as Polars expressions over the positions frame:
DCG, the ideal DCG and nDCG, with log2(rank + 1) discounts (docs/definitions.md §2).

They read the ``positions`` list column (ascending ranks of the retrieved relevant
documents) and ``n_rel`` for binary gains, or the ``grades`` of the documents at those
ranks (and for the ideal DCG the query's ``ideal_grades``, descending) for graded ones,
mapped to gains by ``gains`` as trec_eval's ``-m ndcg.1=1,2=3`` maps them
(:func:`lexiframe.metrics.parts.mapped_gains`). :mod:`lexiframe.metrics.exprs` exports
them with the other measures of one ranking.
"""

from __future__ import annotations

import polars as pl

from lexiframe._utils import IntoExpr
from lexiframe.errors import InputError
from lexiframe.metrics import parts
from lexiframe.metrics.parts import IntoCount


def _log2_discount(ranks: pl.Expr) -> pl.Expr:
    return ranks.list.eval(1.0 / (pl.element().cast(pl.Float64) + 1.0).log(2))


def ndcg(
    positions: IntoExpr = "positions",
    *,
    n_rel: IntoCount = "n_rel",
    k: int | None = None,
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
    gains: parts.Gains | None = None,
) -> pl.Expr:
    """Normalised DCG with log2(rank + 1) discounts, cut at ``k`` if given.

    Binary gains by default: Σ_{i≤r} 1/log2(p_i + 1) / Σ_{j≤m} 1/log2(j + 1). With
    ``grades`` (the grades of the retrieved relevant documents in rank order) and
    ``ideal_grades`` (all relevant grades of the query, descending) the gains are the
    grades, as trec_eval's ``ndcg`` and ``ndcg_cut_k`` compute them.

    ``gains`` maps grades to gains (trec_eval's ``-m ndcg.1=1,2=3``); a grade it leaves out
    keeps its grade as gain; ``"exp"`` gives grade g the gain 2^g - 1 (Burges et al.,
    2005). Every retrieved document of the frame adds its gain, negative ones too; the
    ideal DCG takes the query's positive gains in descending order; a query whose ideal
    DCG is 0 scores 0 (docs/definitions.md §2).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 2]], "n_rel": [2]},
        ...                   schema={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32})
        >>> df.select(exprs.ndcg()).item()
        1.0
        >>> graded = df.with_columns(grades=pl.lit([1, 2]), ideal_grades=pl.lit([2, 1]))
        >>> binary = {1: 1, 2: 1}  # every relevant grade gains 1: binary nDCG
        >>> graded.select(exprs.ndcg(grades="grades", ideal_grades="ideal_grades",
        ...                          gains=binary)).item()
        1.0
        >>> # grade 2 gains 3: (1 + 3/log2(3)) / (3 + 1/log2(3))
        >>> round(graded.select(exprs.ndcg(grades="grades", ideal_grades="ideal_grades",
        ...                                gains={2: 3})).item(), 6)
        0.796708
    """
    parts.check_cutoff(k, "nDCG")
    if (grades is None) != (ideal_grades is None):
        raise InputError("graded nDCG needs both grades= and ideal_grades=")
    if gains is not None and grades is None:
        raise InputError("nDCG with gains= reads the grades: pass grades= and ideal_grades=")
    gain = dcg(positions, k=k, grades=grades, gains=gains)
    if grades is None:
        return normalised(gain, ideal_dcg(n_rel=n_rel, k=k))
    _, ideal_gains = parts.mapped_gains(
        grades, parts.or_column(ideal_grades, "ideal_grades"), gains
    )
    return normalised(gain, ideal_dcg(k=k, ideal_gains=ideal_gains))


def dcg(
    positions: IntoExpr = "positions",
    *,
    k: int | None = None,
    grades: IntoExpr | None = None,
    gains: parts.Gains | None = None,
) -> pl.Expr:
    """Discounted cumulative gain Σ_{p_i ≤ k} g_i / log2(p_i + 1), not normalised: gain 1
    for each document at ``positions`` (binary), or with ``grades`` (theirs, in rank
    order) the grades, or the gains ``gains`` gives them as for :func:`ndcg` (negative
    ones count). trec_eval's ``dcg`` (docs/definitions.md §2).

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> df = pl.DataFrame({"positions": [[1, 3]], "grades": [[2, 1]]},
        ...                   schema={"positions": pl.List(pl.UInt32), "grades": pl.List(pl.Int64)})
        >>> df.select(exprs.dcg()).item()  # 1/log2(2) + 1/log2(4)
        1.5
        >>> df.select(exprs.dcg(grades="grades", gains="exp", k=2)).item()  # (2^2 - 1)/log2(2)
        3.0
    """
    parts.check_cutoff(k, "DCG")
    if gains is not None and grades is None:
        raise InputError("DCG with gains= reads the grades: pass grades=, e.g. grades='grades'")
    ranks = parts.ranks(positions)
    if grades is None:
        kept = ranks if k is None else ranks.list.filter(pl.element() <= k)
        return parts.positive_zero(_log2_discount(kept).list.sum().fill_null(0.0))
    doc_gains = parts.gains_of(grades, gains)
    if k is not None:
        kept = ranks.list.eval(pl.element() <= k).list.sum()
        ranks, doc_gains = ranks.list.head(kept), doc_gains.list.head(kept)
    return parts.positive_zero((doc_gains * _log2_discount(ranks)).list.sum().fill_null(0.0))


def normalised(gain: pl.Expr, ideal: pl.Expr) -> pl.Expr:
    """A DCG over the ideal DCG. No positive ideal gain (no relevant document, or none with
    a positive gain): 0, as trec_eval, whatever the negative gains retrieved."""
    return parts.ratio_or_zero(gain, ideal)


def ideal_dcg(
    *, n_rel: IntoCount = "n_rel", k: int | None = None, ideal_gains: pl.Expr | None = None
) -> pl.Expr:
    """The ideal DCG (cut at ``k``): of m gains of 1, or of ``ideal_gains`` (the query's
    positive gains, highest first); 0 (not -0.0) without a positive gain.

    Example:
        >>> import polars as pl
        >>> from lexiframe.metrics import exprs
        >>> round(pl.select(exprs.ideal_dcg(n_rel=3, k=2)).item(), 6)  # 1 + 1/log2(3)
        1.63093
    """
    if ideal_gains is None:
        length = parts.count(n_rel) if k is None else pl.min_horizontal(parts.count(n_rel), k)
        return parts.positive_zero(_log2_discount(pl.int_ranges(1, length + 1)).list.sum())
    if k is not None:
        ideal_gains = ideal_gains.list.head(k)
    ideal_ranks = pl.int_ranges(1, ideal_gains.list.len() + 1)
    return parts.positive_zero((ideal_gains * _log2_discount(ideal_ranks)).list.sum())
