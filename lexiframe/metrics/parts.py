"""The building blocks the measure expressions share (and a measure users define may use).

Each takes the ``positions`` list column, or a count that may be an integer or a column,
and returns a native Polars expression.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Final, Literal

import polars as pl

from lexiframe._utils import IntoExpr, caller_stacklevel, into_expr
from lexiframe.errors import InputError, MissingCorpusSizeWarning
from lexiframe.validate import require_positive_int

IntoCount = int | str | pl.Expr
"""A count given as an integer, a column name or an expression (``1000``, ``"n"``)."""

CountAtMost = Callable[[IntoExpr, IntoCount], pl.Expr]
"""How the documents of a rank list at rank k or above are counted: :func:`count_at_most`,
or their expectation over the orderings of tied documents
(:func:`lexiframe.metrics.ties.count_at_most`)."""

EXPONENTIAL: Final = "exp"
"""The gains 2^grade - 1 of Burges et al. (2005) (``nDCG(gains='exp')``): ir_measures'
``nDCG(dcg='exp-log2')``, ranx's ``ndcg_burges``."""

Gains = Mapping[int, float] | Literal["exp"]
"""Gains per grade: a map of grades to gains, or :data:`EXPONENTIAL`."""


def count(value: IntoCount) -> pl.Expr:
    """An integer argument that may also be a column, as an Int64 expression.

    Example:
        >>> import polars as pl
        >>> pl.DataFrame({"n": [5]}).select(a=count(3), b=count("n")).row(0)
        (3, 5)
    """
    if isinstance(value, int):
        if isinstance(value, bool):
            raise InputError(f"a count is an integer or a column, not {value!r}")
        return pl.lit(value, dtype=pl.Int64)
    return into_expr(value).cast(pl.Int64)


def ranks(positions: IntoExpr = "positions") -> pl.Expr:
    """The positions as a list of Int64, for arithmetic that may go below 0.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[2, 5]]}, schema={"positions": pl.List(pl.UInt32)})
        >>> df.select(ranks() - 3).item().to_list()
        [-1, 2]
    """
    return into_expr(positions).cast(pl.List(pl.Int64))


def n_retrieved_relevant(positions: IntoExpr = "positions") -> pl.Expr:
    """r, how many relevant documents the ranking retrieved.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[2, 5], []]})
        >>> df.select(n_retrieved_relevant()).to_series().to_list()
        [2, 0]
    """
    return into_expr(positions).list.len().cast(pl.Int64)


def count_at_most(positions: IntoExpr, k: IntoCount) -> pl.Expr:
    """#{i : p_i ≤ k}: the relevant documents in the top k; ``k`` may be a column
    (R-precision cuts at m).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[1, 3, 9]], "m": [4]})
        >>> df.select(a=count_at_most("positions", 3), b=count_at_most("positions", "m")).row(0)
        (2, 2)
    """
    if isinstance(k, int):
        return ranks(positions).list.agg((pl.element() <= k).sum()).cast(pl.Int64)
    return (ranks(positions) - count(k)).list.agg((pl.element() <= 0).sum()).cast(pl.Int64)


def divided_by(value: pl.Expr, k: int) -> pl.Expr:
    """value/k as trec_eval divides: Polars turns a division by a constant into a
    multiplication by its reciprocal (9/1000 → 0.009000000000000001), so divide by a
    column of k instead; a mean on the rounding boundary of the 4th decimal then prints
    as trec_eval prints it.

    Example:
        >>> import polars as pl
        >>> pl.select(divided_by(pl.lit(9), 1000)).item()
        0.009
    """
    return value / (value.cast(pl.Float64) * 0.0 + float(k))


def warn_missing_n(what: str) -> None:
    """The one warning of a measure built without the corpus size it needs."""
    warnings.warn(
        f"{what} needs the corpus size n to place the relevant documents a ranking did not "
        "retrieve; without n= those values are null. Pass n= (an integer or a column).",
        MissingCorpusSizeWarning,
        stacklevel=caller_stacklevel(),
    )


def null() -> pl.Expr:
    """A null Float64: the value of a measure undefined for a ranking."""
    return pl.lit(None, dtype=pl.Float64)


def check_cutoff(k: int | None, name: str) -> None:
    """Refuse a cut-off of measure ``name`` that is not a positive integer (``None``: none).

    Example:
        >>> check_cutoff(0, "P")
        Traceback (most recent call last):
        lexiframe.errors.InputError: the cutoff of P must be a positive integer, not 0
    """
    if k is not None:
        require_positive_int(k, f"the cutoff of {name}")


def or_column(value: IntoExpr | None, column: str) -> IntoExpr:
    """``value``, or the positions frame's own column when it is not given."""
    return column if value is None else value


def positive_zero(value: pl.Expr) -> pl.Expr:
    """Turn -0.0 (the sum of an empty float list) into 0.0, which tables and CSV print as 0.

    ``value + 0.0`` is not enough: Polars skips adding a zero scalar.

    Example:
        >>> import polars as pl
        >>> str(pl.select(positive_zero(pl.lit(-0.0))).item())
        '0.0'
    """
    # replace() reads ``value`` once; ``when(value == 0.0)…otherwise(value)`` would compute
    # it twice, and a measure nests this several levels deep (nDCG: 12 copies of a DCG).
    return value.replace(0.0, 0.0)  # -0.0 equals 0.0: it is replaced by 0.0


def nan_as_zero(value: pl.Expr) -> pl.Expr:
    """``value`` with NaN (0/0) as 0.0, reading ``value`` once: ``fill_nan`` is a ``when``
    that computes its input twice. A null stays null.

    Example:
        >>> import polars as pl
        >>> values = pl.Series([0.5, float("nan"), None])
        >>> pl.select(nan_as_zero(pl.lit(values))).to_series().to_list()
        [0.5, 0.0, None]
    """
    return value.replace(math.nan, 0.0)


def ratio_or_zero(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator/denominator, 0.0 where the denominator (a sum of positive terms, never
    negative) is 0 or where either is null, reading each once: x/inf is 0, where
    ``when(denominator > 0)`` would compute the denominator twice.

    Example:
        >>> import polars as pl
        >>> frame = pl.DataFrame({"gain": [1.0, 0.0, 2.0], "ideal": [4.0, 0.0, None]})
        >>> frame.select(ratio_or_zero(pl.col("gain"), pl.col("ideal"))).to_series().to_list()
        [0.25, 0.0, 0.0]
    """
    return positive_zero((numerator / denominator.replace(0.0, math.inf)).fill_null(0.0))


def cascade(ranks: pl.Expr, stop: pl.Expr) -> pl.Expr:
    """The expected reciprocal of the rank where a user scanning from the top stops:
    Σ_i stop_i / rank_i Π_{j<i} (1 − stop_j), over Float64 lists of the ranks and the
    stopping probabilities of the documents that can stop them, in rank order (ERR; and
    the expected RR when the stopping probability is the chance of relevance).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"ranks": [[1.0, 3.0]], "stop": [[0.5, 1.0]]})
        >>> df.select(cascade(pl.col("ranks"), pl.col("stop"))).item()  # 0.5 + 0.5/3
        0.6666666666666666
    """
    # The chance that the user reaches each document: Π_{j<i} (1 − stop_j).
    reach = stop.list.eval((1.0 - pl.element()).cum_prod().shift(1, fill_value=1.0))
    return positive_zero((stop * reach / ranks).list.sum())


def check_persistence(p: float) -> None:
    """Refuse an RBP persistence outside (0, 1)."""
    if not 0.0 < p < 1.0:
        raise InputError(f"the persistence p of RBP must lie strictly between 0 and 1, not {p!r}")


def gain_map(gains: Mapping[int, float]) -> tuple[list[float], list[float]]:
    """The grades and gains of a gain map (``{grade: gain}``) as two lists of floats, checked:
    the arguments of ``replace`` from grades to gains.

    Example:
        >>> gain_map({1: 1, 2: 3.5})
        ([1.0, 2.0], [1.0, 3.5])
    """
    old, new = [], []
    for grade, gain in dict(gains).items():
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(f"the grades of gains= are integers, not {grade!r}")
        if isinstance(gain, bool) or not isinstance(gain, int | float) or not math.isfinite(gain):
            raise InputError(f"the gain of grade {grade} must be a finite number, not {gain!r}")
        old.append(float(grade))
        new.append(float(gain))
    return old, new


def mapped_gains(
    grades: IntoExpr, ideal_grades: IntoExpr, gains: Gains | None = None
) -> tuple[pl.Expr, pl.Expr]:
    """The gains of the retrieved documents and the ideal gains, as Float64 lists, from the
    grades of the retrieved documents (in rank order) and of the query's documents
    (descending): the grades themselves, or under a gain map (trec_eval's
    ``-m ndcg.1=1,2=3``, ``G.1=2,2=4``: its setup_gains) each grade's gain, a grade the map
    leaves out keeping its grade. The ideal gains are then the positive ones, best first:
    trec_eval's ideal ranking stops at the first gain that is not positive. ``"exp"``
    (:data:`EXPONENTIAL`): each grade g gains 2^g - 1.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"grades": [[1, 2]], "ideal": [[3, 2, 1]]})
        >>> got, ideal = mapped_gains("grades", "ideal", {1: -1, 3: 0.5})
        >>> df.select(got, ideal).row(0)
        ([-1.0, 2.0], [2.0, 0.5])
        >>> df.select(*mapped_gains("grades", "ideal", "exp")).row(0)
        ([1.0, 3.0], [7.0, 3.0, 1.0])
    """
    doc_gains, ideal_gains = gains_of(grades, gains), gains_of(ideal_grades, gains)
    if gains is None or isinstance(gains, str):  # the grades' order: 2^g - 1 keeps it
        return doc_gains, ideal_gains
    positive = pl.element().filter(pl.element() > 0.0).sort(descending=True)
    return doc_gains, ideal_gains.list.eval(positive)


def gains_of(grades: IntoExpr, gains: Gains | None = None) -> pl.Expr:
    """The gains of a list of grades, as a Float64 list in the same order: the grades
    themselves, each grade's gain under a gain map (a grade it leaves out keeping its
    grade), or 2^g - 1 under ``"exp"`` (:data:`EXPONENTIAL`).

    Example:
        >>> import polars as pl
        >>> pl.select(gains_of(pl.lit([1, 2]), {1: -1})).item().to_list()
        [-1.0, 2.0]
    """
    values = into_expr(grades).cast(pl.List(pl.Float64))
    if gains is None:
        return values
    if isinstance(gains, str):
        if gains != EXPONENTIAL:
            raise InputError(f"gains= maps grades to gains or is {EXPONENTIAL!r}, not {gains!r}")
        return values.list.eval(pl.lit(2.0, dtype=pl.Float64).pow(pl.element()) - 1.0)
    old, new = gain_map(gains)
    return values.list.eval(pl.element().replace(old, new))
