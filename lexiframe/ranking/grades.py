"""Whether a positions frame keeps the grade columns: asked for, or needed by graded
qrels (docs/definitions.md §1)."""

from __future__ import annotations

import polars as pl

from lexiframe._compat import collect
from lexiframe.errors import InputError
from lexiframe.options import PositionsOptions


def keeps_grades(relevant: pl.LazyFrame, qrels_keys: list[str], options: PositionsOptions) -> bool:
    """Whether the positions frame keeps the grade columns: asked for (``grades=True``),
    needed by graded qrels (``grades=None``) or by fractional labels (``labels="gain"``,
    ``"probability"``: always); ``grades=False`` on graded qrels is refused.

    Gains that are equal within every query give graded nDCG and RBP their binary values,
    so grades are needed only where a query's relevant documents differ in grade, or,
    above ``threshold=1``, where a document graded below the threshold gains (as in
    trec_eval's ``-l``, every positive grade gains at any level).
    ``relevant``: the judgments that gain (graded at least
    :attr:`PositionsOptions.gain_level`) in lexiframe's names (``qrels_keys``,
    ``relevance``); one row per (query, distinct grade) is enough, which is what
    :mod:`lexiframe.spark` sends.

    Example:
        >>> import polars as pl
        >>> relevant = pl.LazyFrame({"query": ["q1", "q1"], "relevance": [1, 2]})
        >>> keeps_grades(relevant, ["query"], PositionsOptions())
        True
    """
    names, grades, threshold = options.columns, options.grades, options.threshold
    if grades or options.fractional:
        return True
    if threshold > 1:
        below = collect(relevant.filter(pl.col("relevance") < threshold).head(1))
        if below.height and grades is None:
            return True
        if below.height:
            raise InputError(
                f"grades=False, but at threshold={threshold} the qrels hold documents of "
                f"grade {below['relevance'][0]} ({names.query}={below['query'][0]!r}), which "
                f"gain in nDCG, G and RBP as in trec_eval -l {threshold}: leave grades= unset "
                "to keep their gains, or binarise the qrels first to evaluate binary "
                "relevance everywhere, e.g. "
                f"qrels.with_columns(pl.col({names.relevance!r}).ge({threshold}).cast(pl.Int64))"
            )
    if collect(relevant.select(pl.col("relevance").n_unique())).item() < 2:
        return False  # one relevant grade in all the qrels: a pass without grouping
    mixed = collect(
        relevant.group_by(qrels_keys)
        .agg(pl.col("relevance").unique().sort().head(2).alias("_grades"))
        .filter(pl.col("_grades").list.len() > 1)
        .sort(qrels_keys)
        .head(1)
    )
    if grades is None or mixed.height == 0:
        return mixed.height > 0
    example = mixed.row(0, named=True)
    low, high = example["_grades"]
    levels = collect(relevant.select(pl.col("relevance").unique().sort())).to_series()
    raise InputError(
        f"grades=False, but the qrels are graded ({names.query}={example['query']!r} has "
        f"relevant documents of grades {low} and {high}): nDCG and RBP on this frame would "
        "lose trec_eval's graded values. Leave grades= unset to keep them (binary nDCG is "
        f"then {binary_ndcg(levels.to_list())}, beside the graded measures), or binarise the "
        "qrels first to evaluate binary relevance everywhere, e.g. "
        f"qrels.with_columns(pl.col({names.relevance!r}).ge(1).cast(pl.Int64))"
    )


def binary_ndcg(grades: list[int]) -> str:
    """The name of binary nDCG on qrels with these relevant grades: each gains 1.

    Example:
        >>> binary_ndcg([1, 2, 3])
        'nDCG(gains={1: 1, 2: 1, 3: 1})'
    """
    return "nDCG(gains={" + ", ".join(f"{grade}: 1" for grade in grades) + "})"
