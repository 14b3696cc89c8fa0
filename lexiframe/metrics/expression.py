"""A registered measure as an expression over a positions list column: what the ``.lexi``
expression methods (generated from the catalogue) call, so that
``pl.col("positions").lexi.ap(k=10)`` is the measure ``AP@10`` of
:func:`lexiframe.measures`, its parameters read and checked as its name's are."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from lexiframe._utils import IntoExpr, into_expr
from lexiframe.metrics import parts
from lexiframe.metrics.parser import parse_measure
from lexiframe.metrics.parts import IntoCount
from lexiframe.metrics.registry import family_named
from lexiframe.metrics.spec import Context


def measure_expr(
    family: str,
    positions: IntoExpr,
    cutoff: float | None = None,
    *,
    n_rel: IntoCount = "n_rel",
    n: IntoCount | None = None,
    grades: IntoExpr | None = None,
    ideal_grades: IntoExpr | None = None,
    n_ret: IntoCount = "n_ret",
    depth: IntoCount | None = None,
    **params: object,
) -> pl.Expr:
    """The measure of ``family`` at ``cutoff`` with ``params`` (``None``: the family's
    default) over the ranks in ``positions``, named by its canonical name.

    ``n_rel``, ``n``, ``n_ret`` and ``depth`` are counts (a column name, an expression or a
    number); ``grades`` and ``ideal_grades`` the grade lists of a graded frame (the gains
    of nDCG, RBP, ERR, G, …), ``None`` for binary relevance (grade 1 for every relevant
    document, which the measures that need grades then read).

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"positions": [[1, 3]], "n_rel": [4]})
        >>> df.select(measure_expr("AP", pl.col("positions"), 10)).row(0)
        (0.41666666666666663,)
    """
    found = family_named(family)
    if found is None:
        raise ValueError(f"no measure family {family!r}")
    given = {key: value for key, value in params.items() if value is not None}
    text = found.name
    if given:
        shown = (
            f"{key}={dict(value) if isinstance(value, Mapping) else value!r}"
            for key, value in given.items()
        )
        text += "(" + ", ".join(shown) + ")"
    if cutoff is not None:
        text += f"@{found.cutoff_prefix}{cutoff}"
    measure = parse_measure(text)
    ranks = into_expr(positions)
    graded = grades is not None or ideal_grades is not None
    if not graded and measure.requires_grades:  # binary relevance: every grade is 1
        grades = ranks.list.eval(pl.element() * 0 + 1)
        ideal_grades = pl.lit(1, dtype=pl.Int64).repeat_by(parts.count(n_rel))
        graded = True
    context = Context(
        n=n,
        graded=graded,
        depth=None if depth is None else parts.count(depth),
        positions=ranks,
        n_rel=parts.count(n_rel),
        gain_positions=ranks,
        grades=into_expr(grades if grades is not None else "grades"),
        ideal_grades=into_expr(ideal_grades if ideal_grades is not None else "ideal_grades"),
        n_ret=parts.count(n_ret),
    )
    return measure.expr(context)
