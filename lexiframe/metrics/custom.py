"""Measures users define: a Polars expression over the positions frame, registered by name.

:func:`define_measure` turns a function that returns a Polars expression into a measure
family of the registry, the way the built-in families are registered: its name then parses
wherever a measure name is read (``.lexi.measures``, :func:`lexiframe.evaluate` on frames,
LazyFrames and pandas, ``lexiframe evaluate --measures-from``, Spark, ``order``,
``stats.report``), and its declaration (cutoff, typed parameters, whether lower is better,
what it reads) is used as a built-in's is (docs/define-a-measure.md).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from lexiframe.errors import InputError
from lexiframe.metrics.registry import register
from lexiframe.metrics.spec import Context, CutoffRule, Family, Measure, Needs

_TYPES: tuple[type, ...] = (bool, int, float, str)
"""The types a defined measure's parameters may have: they must print in its name."""


def define_measure(
    name: str,
    expr: Callable[..., pl.Expr],
    *,
    summary: str,
    cutoff: CutoffRule = "none",
    lower_is_better: bool = False,
    needs: Needs | None = None,
    aliases: Sequence[str] = (),
    formula: str = "",
    source: str = "",
    replace: bool = False,
) -> Family:
    """Register a measure computed by ``expr``, a function returning a Polars expression
    over the columns of a positions frame (``positions``, ``n_rel``, ``n_ret``, and those
    ``needs`` declares, e.g. ``grades``), one value per ranking.

    ``expr``'s parameters declare the measure's: ``k`` is its cutoff (``NAME@10``; needed
    when ``cutoff`` is ``"required"``, defaulting to ``None`` when ``"optional"``), ``n``
    receives the corpus size ``n=`` of the call (the measure then needs it), and every other
    parameter is a typed parameter of the name (``NAME(p=0.5)``) whose default, a bool, an
    int, a float or a string, is its default value and type. The values are cast to Float64.

    Args:
        name: the measure's name, a letter followed by letters, digits or ``_``; names and
            aliases are matched without regard to case and must not be taken.
        expr: the function building the expression.
        summary: one line for ``lexiframe measures`` and the docs.
        cutoff: ``"none"``, ``"optional"`` or ``"required"``.
        lower_is_better: a cost: orderings put the smallest value first, and
            :func:`lexiframe.stats.report` marks the smaller mean as the better.
        needs: what the expression reads beyond ``positions``, ``n_rel`` and ``n_ret``
            (:class:`~lexiframe.metrics.Needs`): the grades, the judged columns; the
            positions frames of :func:`lexiframe.evaluate` are built to hold them.
        aliases: other names that read as this measure.
        formula: LaTeX of its definition (for its documentation).
        source: where its definition comes from (a paper, a section).
        replace: redefine a measure of this name defined before.

    Returns:
        The registered :class:`~lexiframe.metrics.Family`.

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> def hits(k: int) -> pl.Expr:  # relevant documents in the top k
        ...     return pl.col("positions").list.eval(pl.element() <= k).list.sum()
        >>> _ = lf.define_measure("Hits", hits, cutoff="required",
        ...                       summary="How many relevant documents rank in the top k.")
        >>> pos = pl.DataFrame({"system": ["a"], "query": ["q1"], "positions": [[1, 4]],
        ...                     "n_rel": [3], "n_ret": [10]})
        >>> lf.measures(pos, ["Hits@3", "Hits@5"]).row(0)
        ('a', 'q1', 1.0, 2.0)
        >>> lf.metrics.unregister("Hits")  # defined for the example only
    """
    if not callable(expr):
        raise InputError(f"expr= must be a function returning a Polars expression, not {expr!r}")
    if cutoff not in ("none", "optional", "required"):
        raise InputError(f"cutoff= must be 'none', 'optional' or 'required', not {cutoff!r}")
    if needs is not None and not isinstance(needs, Needs):
        raise InputError(f"needs= must be a lexiframe.metrics.Needs, not {needs!r}")
    _refuse_preference_name(name, aliases)
    params, takes_n = _parameters(name, expr, cutoff)
    declared = needs or Needs()
    if takes_n and not declared.n:
        declared = dataclasses.replace(declared, n=True)

    def build(measure: Measure, context: Context) -> pl.Expr:
        kwargs: dict[str, Any] = {key: measure.param(key) for key in params}
        if cutoff != "none":
            kwargs["k"] = measure.cutoff
        if takes_n:
            kwargs["n"] = context.n
        built = expr(**kwargs)
        if not isinstance(built, pl.Expr):
            raise InputError(
                f"the function of measure {measure} returned {type(built).__name__}, "
                "not a Polars expression"
            )
        return built.cast(pl.Float64, strict=True)

    family = Family(
        name=name,
        summary=summary,
        formula=formula,
        source=source,
        build=build,
        cutoff=cutoff,
        params=params,
        converters={key: _converter(key, value) for key, value in params.items()},
        aliases=tuple(aliases),
        lower_is_better=lower_is_better,
        needs=declared,
        example=f"{name}@10" if cutoff == "required" else name,
        defined_by_user=True,
    )
    return register(family, replace=replace)


def _parameters(
    name: str, expr: Callable[..., pl.Expr], cutoff: CutoffRule
) -> tuple[dict[str, object], bool]:
    """The typed parameters of ``expr`` with their defaults, and whether it takes ``n``."""
    try:
        signature = inspect.signature(expr)
    except (TypeError, ValueError):
        raise InputError(f"measure {name}: the parameters of expr= cannot be read") from None
    params: dict[str, object] = {}
    takes_k = takes_n = False
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise InputError(f"measure {name}: expr= takes named parameters only, not *args")
        if parameter.name == "k":
            takes_k = True
        elif parameter.name == "n":
            takes_n = True
        elif parameter.default is parameter.empty:
            raise InputError(
                f"measure {name}: parameter {parameter.name!r} of expr= needs a default "
                "value (its type and the value a name without it takes), e.g. p: float = 0.5"
            )
        elif isinstance(parameter.default, _TYPES):
            params[parameter.name] = parameter.default
        else:
            raise InputError(
                f"measure {name}: the default of {parameter.name!r} must be a bool, int, float "
                f"or str, not {parameter.default!r}"
            )
    if cutoff != "none" and not takes_k:
        raise InputError(f"measure {name} takes a cutoff ({cutoff}): expr= needs a parameter k")
    if cutoff == "none" and takes_k:
        raise InputError(
            f"measure {name}: expr= has a parameter k, the cutoff; pass cutoff='required' "
            "or cutoff='optional'"
        )
    return params, takes_n


def _converter(key: str, default: object) -> Callable[[object], object]:
    """Check a parsed value against the type of the parameter's default (a float takes an
    int too, as ``p=1`` reads)."""
    kind = type(default)

    def convert(value: object) -> object:
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if type(value) is not kind:
            raise ValueError(f"{key}= is a {kind.__name__}, e.g. {key}={default!r}")
        return value

    return convert


def _refuse_preference_name(name: str, aliases: Sequence[str]) -> None:
    """A measure may not take a preference's name (``sgnLP``): the two would shadow."""
    from lexiframe.errors import UnknownMeasureError
    from lexiframe.preferences import preference_measure

    for text in (name, *aliases):
        try:
            preference_measure(text)
        except UnknownMeasureError:
            continue
        raise InputError(f"the measure name {text!r} is taken by a preference; choose another")


def user_view(schema: pl.Schema) -> dict[str, pl.Expr]:
    """The grade columns as a measure defined with :func:`define_measure` reads them:
    ``grades``, the grades of the documents of ``positions`` in rank order, and
    ``ideal_grades``, the grades of the query's relevant documents, descending, whatever
    the threshold. Above ``threshold=1`` the built-ins' frame holds every positive grade
    (the gain measures gain at any level, as trec_eval's ``-l``), in step with
    ``gain_positions``: this view keeps the relevant ones. Empty (no change) at
    ``threshold=1``, where the two agree.

    Example:
        >>> import polars as pl
        >>> frame = pl.DataFrame({"positions": [[3]], "n_rel": [1], "gain_positions": [[1, 3]],
        ...                       "grades": [[1, 2]], "ideal_grades": [[2, 1, 1]]})
        >>> frame.select(**user_view(frame.schema)).row(0)
        ([2], [2])
    """
    if "gain_positions" not in schema or "grades" not in schema:
        return {}
    n_rel = pl.col("n_rel").cast(pl.Int64)
    # The lowest relevant grade of the query: the relevant ones are its top n_rel grades.
    lowest = (
        pl.when(n_rel > 0)
        .then(pl.col("ideal_grades").list.get(n_rel - 1, null_on_oob=True).cast(pl.Int64))
        .otherwise(pl.lit(2**62, dtype=pl.Int64))
    )
    kept = (pl.col("grades").cast(pl.List(pl.Int64)) - lowest).list.eval(
        pl.arg_where(pl.element() >= 0)
    )
    return {
        "grades": pl.col("grades").list.gather(kept),
        "ideal_grades": pl.col("ideal_grades").list.head(n_rel),
    }
