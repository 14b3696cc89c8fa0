"""Lexicographic preferences between two rankings of the same query (docs/definitions.md §3).

For position vectors p̂ (ranking a) and p̂′ (ranking b) of one query, with
i* = min{i : p̂_i ≠ p̂′_i} and j* = max{i : p̂_i ≠ p̂′_i}:

- ``sgnLP`` (lexiprecision paper §3.5, eq. 3) = sign(p̂′_{i*} − p̂_{i*});
- ``rrLP`` (eq. 2) = 1/p̂_{i*} − 1/p̂′_{i*}, an unretrieved document counting 0;
- ``sgnLR`` (lexirecall paper §3) = sign(p̂′_{j*} − p̂_{j*}).

All are positive when ranking a is preferred and 0 only for identical vectors. They work on
the lists of retrieved relevant positions alone: lexiprecision compares from the top and a
list that is a prefix of the other loses; lexirecall prefers more retrieved relevant
documents and, with equal counts, compares from the bottom.

Two levels of use:

- expression functions (:func:`lexiprecision`, :func:`rr_lexiprecision`, :func:`lexirecall`,
  :func:`first_difference`, :func:`last_difference`, :func:`delta_rr`) compare two list
  columns of the same row, e.g. the ``positions_a`` and ``positions_b`` of :func:`pairs`;
- :func:`preferences` computes the preferences of every pair of systems of every query
  straight from a positions frame, without building the pairs of lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal, overload

import numpy as np
import polars as pl

from lexiframe import _kernels
from lexiframe._compat import collect
from lexiframe._utils import IntoExpr, as_list, format_row, into_expr, plural, quote_names
from lexiframe.errors import ARGUMENT, InputError, UnknownMeasureError
from lexiframe.ranking import TIE_COLUMNS
from lexiframe.validate import (
    POSITION_MAX,
    check_positions_frame,
    require_columns,
    require_positive_int,
)

if TYPE_CHECKING:  # pyarrow is imported where it is used (start-up time)
    import pyarrow as pa

Level = Literal["first", "last"]
Extra = Literal["first_difference", "last_difference"]


@dataclass(frozen=True)
class PreferenceMeasure:
    """A preference between two rankings: its canonical name (the output column), the other
    names it answers to, its type, and the recall level (i* or j*) it is read at."""

    name: str
    aliases: tuple[str, ...]
    dtype: pl.DataType
    level: Level
    kernel: Callable[..., np.ndarray]
    description: str


MEASURES: tuple[PreferenceMeasure, ...] = (
    PreferenceMeasure(
        "sgnLP",
        ("lexiprecision",),
        pl.Int8(),
        "first",
        _kernels.lexiprecision,
        "lexicographic precision, sign of δRR at i* (lexiprecision paper §3.5, eq. 3)",
    ),
    PreferenceMeasure(
        "rrLP",
        ("rrlexiprecision", "rr_lexiprecision"),
        pl.Float64(),
        "first",
        _kernels.rr_lexiprecision,
        "δRR at i*, 1/p̂_a − 1/p̂_b (lexiprecision paper §3.5, eq. 2)",
    ),
    PreferenceMeasure(
        "sgnLR",
        ("lexirecall",),
        pl.Int8(),
        "last",
        _kernels.lexirecall,
        "lexicographic recall, sign of the difference at j* (lexirecall paper §3)",
    ),
)
"""The registry of preference measures; :func:`preference_measure` looks names up in it."""

_BY_NAME = {
    key.lower(): measure for measure in MEASURES for key in (measure.name, *measure.aliases)
}
_EXTRAS: dict[str, Level] = {"first_difference": "first", "last_difference": "last"}
DEFAULT_MEASURES = ("sgnLP", "rrLP", "sgnLR")


def preference_measure(name: str) -> PreferenceMeasure:
    """Look a preference measure up by its canonical name or an alias, ignoring case.

    >>> preference_measure("LexiPrecision").name
    'sgnLP'
    """
    measure = _BY_NAME.get(name.lower()) if isinstance(name, str) else None
    if measure is None:
        known = [f"{m.name} ({', '.join(m.aliases)})" for m in MEASURES]
        raise UnknownMeasureError(
            f"unknown preference measure {name!r}; the known ones are {', '.join(known)}"
        )
    return measure


def is_preference(name: str) -> bool:
    """Whether ``name`` (any case) names a preference measure or one of its aliases.

    >>> is_preference("LEXIRECALL"), is_preference("AP")
    (True, False)
    """
    return isinstance(name, str) and name.lower() in _BY_NAME


# --- expression functions ---------------------------------------------------------------


def lexiprecision(positions: IntoExpr, other: IntoExpr) -> pl.Expr:
    """sgnLP of the ranking in ``positions`` over the one in ``other``, Int8 in {-1, 0, 1}.

    Lexiprecision paper §3.5, eq. 3: the sign of the first recall level whose positions
    differ; a list that is a prefix of the other loses.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 4], [2], [1, 2], [], [3]],
    ...                    "b": [[1, 5], [1], [1], [], [3]]})
    >>> df.select(lexiprecision("a", "b"))["a"].to_list()
    [1, -1, 1, 0, 0]
    """
    return _pairwise(positions, other, _kernels.lexiprecision, pl.Int8)


def rr_lexiprecision(positions: IntoExpr, other: IntoExpr) -> pl.Expr:
    """rrLP = 1/p̂_{i*} − 1/p̂′_{i*}, Float64; an unretrieved document counts 0.

    Lexiprecision paper §3.5, eq. 2: the difference in reciprocal rank at the first recall
    level that differs; it equals δRR_1 whenever RR differs.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 4], [2], [1, 2], []], "b": [[1, 5], [1], [1], []]})
    >>> df.select(rr_lexiprecision("a", "b"))["a"].to_list()
    [0.04999999999999999, -0.5, 0.5, 0.0]
    """
    return _pairwise(positions, other, _kernels.rr_lexiprecision, pl.Float64)


def lexirecall(positions: IntoExpr, other: IntoExpr) -> pl.Expr:
    """sgnLR of the ranking in ``positions`` over the one in ``other``, Int8 in {-1, 0, 1}.

    Lexirecall paper §3: more retrieved relevant documents win; with equal counts, the
    last recall level whose positions differ decides.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 9], [2, 3], [5], []], "b": [[2, 8], [1], [], []]})
    >>> df.select(lexirecall("a", "b"))["a"].to_list()
    [-1, 1, 1, 0]
    """
    return _pairwise(positions, other, _kernels.lexirecall, pl.Int8)


def first_difference(positions: IntoExpr, other: IntoExpr) -> pl.Expr:
    """i*, the first recall level (1-based) where the vectors differ; null when identical.

    The number of recall levels lexiprecision needs to decide (lexiprecision paper §3.6,
    figure 6). UInt32.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 4], [1, 2], [3]], "b": [[1, 5], [1], [3]]})
    >>> df.select(first_difference("a", "b"))["a"].to_list()
    [2, 2, None]
    """
    return _pairwise(positions, other, _kernels.first_difference, pl.UInt32, tie_is_null=True)


def last_difference(positions: IntoExpr, other: IntoExpr) -> pl.Expr:
    """j*, the last recall level (1-based) where the imputed vectors differ; null when
    identical. With different numbers of retrieved relevant documents it is the larger
    number; with equal numbers, the last level whose positions differ. UInt32.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 4], [1, 2], [3]], "b": [[2, 4], [1], [3]]})
    >>> df.select(last_difference("a", "b"))["a"].to_list()
    [1, 2, None]
    """
    return _pairwise(positions, other, _kernels.last_difference, pl.UInt32, tie_is_null=True)


def delta_rr(positions: IntoExpr, other: IntoExpr, level: int) -> pl.Expr:
    """δRR_i = 1/p̂_i − 1/p̂′_i at recall level ``level`` (1-based), Float64.

    Lexiprecision paper §3.4; a level a list does not reach counts 0 (n larger than any
    depth). ``delta_rr(a, b, 1)`` is the difference in reciprocal rank.

    >>> import polars as pl
    >>> df = pl.DataFrame({"a": [[1, 4], [2], []], "b": [[1, 5], [1, 2], []]})
    >>> df.select(delta_rr("a", "b", 2))["a"].to_list()
    [0.04999999999999999, -0.5, 0.0]
    """
    level = require_positive_int(level, "level", maximum=POSITION_MAX, meaning="a recall level")
    kernel = partial(_kernels.delta_rr, level=level)
    return _pairwise(positions, other, kernel, pl.Float64)


def _pairwise(
    positions: IntoExpr,
    other: IntoExpr,
    kernel: Callable[..., np.ndarray],
    dtype: type[pl.DataType],
    *,
    tie_is_null: bool = False,
) -> pl.Expr:
    """An elementwise expression running a pair kernel on the buffers of two list columns.

    A length-1 side (e.g. a literal list) is compared with every row of the other side. A
    null list on either side gives null; so does a tie (level -1) when ``tie_is_null``.
    """

    def batch(series: Sequence[pl.Series]) -> pl.Series:
        import pyarrow as pa

        left, right = series
        a, b = _kernels.positions_buffers(left), _kernels.positions_buffers(right)
        rows_a, rows_b = _broadcast_rows(len(a), len(b))
        out = kernel(a.values, a.offsets, rows_a, b.values, b.offsets, rows_b)
        invalid = out < 1 if tie_is_null else np.zeros(out.shape, dtype=bool)
        for buffers, rows in ((a, rows_a), (b, rows_b)):
            if buffers.valid is not None:
                invalid |= ~buffers.valid[rows]
        array = pa.array(out.astype(_NUMPY[dtype]), mask=invalid if invalid.any() else None)
        return pl.Series(left.name, array, dtype=dtype)

    return pl.map_batches(
        [into_expr(positions), into_expr(other)], batch, return_dtype=dtype, is_elementwise=True
    )


_NUMPY: dict[type[pl.DataType], type[np.generic]] = {
    pl.Int8: np.int8,
    pl.UInt32: np.uint32,
    pl.Float64: np.float64,
}


def _broadcast_rows(n_a: int, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    if n_a == n_b:
        rows = np.arange(n_a)
        return rows, rows
    if n_a == 1:
        return np.zeros(n_b, dtype=np.int64), np.arange(n_b)
    if n_b == 1:
        return np.arange(n_a), np.zeros(n_a, dtype=np.int64)
    raise InputError(f"cannot compare {plural(n_a, 'ranking')} with {n_b}: the lengths differ")


# --- frames -------------------------------------------------------------------------------


@overload
def pairs(
    positions: pl.DataFrame, *, by: str | Sequence[str] | None = ..., ordered: bool = ...
) -> pl.DataFrame: ...
@overload
def pairs(
    positions: pl.LazyFrame, *, by: str | Sequence[str] | None = ..., ordered: bool = ...
) -> pl.LazyFrame: ...


def pairs(
    positions: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    ordered: bool = False,
) -> pl.DataFrame | pl.LazyFrame:
    """Every pair of systems of every (by…, query) of a positions frame (docs/definitions.md §3).

    Returns ``by…, query, system_a, system_b, positions_a, positions_b, n_rel, n_ret_a,
    n_ret_b`` sorted by those keys, with ``system_a < system_b``, or both directions when
    ``ordered=True``. Use it to compute preferences as expressions; :func:`preferences` is
    the faster way to get them for every pair.

    >>> import polars as pl
    >>> pos = pl.DataFrame({"system": ["x", "y", "z"], "query": ["q"] * 3,
    ...                     "positions": [[1, 4], [2], []], "n_rel": [3] * 3,
    ...                     "n_ret": [10, 10, 0]})
    >>> pairs(pos).select("system_a", "system_b", "positions_a", "positions_b")
    shape: (3, 4)
    ┌──────────┬──────────┬─────────────┬─────────────┐
    │ system_a ┆ system_b ┆ positions_a ┆ positions_b │
    │ ---      ┆ ---      ┆ ---         ┆ ---         │
    │ str      ┆ str      ┆ list[i64]   ┆ list[i64]   │
    ╞══════════╪══════════╪═════════════╪═════════════╡
    │ x        ┆ y        ┆ [1, 4]      ┆ [2]         │
    │ x        ┆ z        ┆ [1, 4]      ┆ []          │
    │ y        ┆ z        ┆ [2]         ┆ []          │
    └──────────┴──────────┴─────────────┴─────────────┘
    """
    by = as_list(by)
    lazy = positions.lazy()
    keys = [*by, "query"]
    require_columns(
        lazy.collect_schema(), [*keys, "system", "positions", "n_rel", "n_ret"], "positions"
    )
    left = lazy.select(
        *keys,
        pl.col("system").alias("system_a"),
        pl.col("positions").alias("positions_a"),
        "n_rel",
        pl.col("n_ret").alias("n_ret_a"),
    )
    right = lazy.select(
        *keys,
        pl.col("system").alias("system_b"),
        pl.col("positions").alias("positions_b"),
        pl.col("n_ret").alias("n_ret_b"),
    )
    keep = (
        pl.col("system_a") != pl.col("system_b")
        if ordered
        else (pl.col("system_a") < pl.col("system_b"))
    )
    result = (
        left.join(right, on=keys, how="inner")
        .filter(keep)
        .select(
            *keys,
            "system_a",
            "system_b",
            "positions_a",
            "positions_b",
            "n_rel",
            "n_ret_a",
            "n_ret_b",
        )
        .sort([*keys, "system_a", "system_b"])
    )
    return result if isinstance(positions, pl.LazyFrame) else collect(result)


@overload
def preferences(
    positions: pl.DataFrame,
    measures: str | Iterable[str] = ...,
    *,
    by: str | Sequence[str] | None = ...,
    extra: Iterable[Extra] = ...,
) -> pl.DataFrame: ...
@overload
def preferences(
    positions: pl.LazyFrame,
    measures: str | Iterable[str] = ...,
    *,
    by: str | Sequence[str] | None = ...,
    extra: Iterable[Extra] = ...,
) -> pl.LazyFrame: ...


def preferences(
    positions: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str] = DEFAULT_MEASURES,
    *,
    by: str | Sequence[str] | None = None,
    extra: Iterable[Extra] = (),
) -> pl.DataFrame | pl.LazyFrame:
    """Preferences between every pair of systems of every (by…, query) (docs/definitions.md §3).

    One row per (by…, query, system_a, system_b) with ``system_a < system_b``, sorted by
    those keys, and one column per measure, named by its canonical name (``sgnLP``,
    ``rrLP``, ``sgnLR``; the aliases ``lexiprecision``, ``rrlexiprecision`` and
    ``lexirecall`` are accepted, in any case), positive when system_a is preferred.
    ``extra`` adds ``first_difference`` (i*) and/or ``last_difference`` (j*), null when
    the two vectors are identical.

    The pairs are row indices into the positions frame's own list buffers: the lists are
    never copied per pair. A LazyFrame gives a LazyFrame (the work runs when collected).

    >>> import polars as pl
    >>> pos = pl.DataFrame({"system": ["x", "y", "z"], "query": ["q"] * 3,
    ...                     "positions": [[1, 4], [1, 3, 9], []]})
    >>> preferences(pos, extra=["first_difference"])
    shape: (3, 7)
    ┌───────┬──────────┬──────────┬───────┬───────────┬───────┬──────────────────┐
    │ query ┆ system_a ┆ system_b ┆ sgnLP ┆ rrLP      ┆ sgnLR ┆ first_difference │
    │ ---   ┆ ---      ┆ ---      ┆ ---   ┆ ---       ┆ ---   ┆ ---              │
    │ str   ┆ str      ┆ str      ┆ i8    ┆ f64       ┆ i8    ┆ u32              │
    ╞═══════╪══════════╪══════════╪═══════╪═══════════╪═══════╪══════════════════╡
    │ q     ┆ x        ┆ y        ┆ -1    ┆ -0.083333 ┆ -1    ┆ 2                │
    │ q     ┆ x        ┆ z        ┆ 1     ┆ 1.0       ┆ 1     ┆ 1                │
    │ q     ┆ y        ┆ z        ┆ 1     ┆ 1.0       ┆ 1     ┆ 1                │
    └───────┴──────────┴──────────┴───────┴───────────┴───────┴──────────────────┘
    """
    given = measures
    names = [] if measures is None or measures == "" else as_list(measures)
    specs = list(dict.fromkeys(preference_measure(name) for name in names))
    extras = list(dict.fromkeys(extra))
    if not specs and not extras:  # the pairs alone: a measure was forgotten
        raise InputError(
            f"preferences() needs at least one measure (or an extra column), not {given!r}: "
            f"e.g. ['sgnLP'] (the default is {list(DEFAULT_MEASURES)})",
            kind="no measure",
            argument="measures",
        )
    for name in extras:
        if name not in _EXTRAS:
            known = quote_names(list(_EXTRAS))
            raise InputError(f"unknown extra column {name!r}; choose from {known}")
    by = as_list(by)
    keys = [*by, "query"]
    schema = positions.collect_schema()
    require_columns(schema, [*keys, "system", "positions"], "positions")
    if specs and all(column in schema for column in TIE_COLUMNS):
        raise InputError(
            f"{quote_names([spec.name for spec in specs])} compare the relevant positions "
            "of two rankings jointly and have no closed form over the orderings of tied "
            f"documents, so {ARGUMENT} cannot give them",
            kind="no closed form",
            argument="ties='expected'",
            flag="--ties expected",
            hint="; build the positions with ties='trec_eval' or ties='rank' for them",
            cli_hint="; evaluate them with --ties trec_eval or --ties rank",
        )
    compute = partial(_preferences_frame, specs=specs, extras=extras, keys=keys)
    if isinstance(positions, pl.DataFrame):
        return compute(positions)
    out_schema: dict[str, pl.DataType] = {
        **{key: schema[key] for key in keys},
        "system_a": schema["system"],
        "system_b": schema["system"],
        **{spec.name: spec.dtype for spec in specs},
        **{name: pl.UInt32() for name in extras},
    }
    return positions.select(*keys, "system", "positions").map_batches(compute, schema=out_schema)


def _preferences_frame(
    positions: pl.DataFrame,
    *,
    specs: list[PreferenceMeasure],
    extras: Sequence[str],
    keys: list[str],
) -> pl.DataFrame:
    check_positions_frame(positions, keys)  # a hand-built frame: ranks a ranking can have
    frame = positions.select(*keys, "system", "positions").sort([*keys, "system"])
    groups = frame.select(pl.struct(keys).rle_id()).to_series().to_numpy()
    _check_unique(frame, groups, keys)
    rows_a, rows_b = _kernels.pair_rows(groups)
    buffers = _kernels.positions_buffers(frame["positions"])
    if buffers.valid is not None:
        example = frame.filter(pl.col("positions").is_null()).row(0, named=True)
        raise InputError(f"null positions list; example: {format_row(example)}")
    args = (buffers.values, buffers.offsets, rows_a, buffers.values, buffers.offsets, rows_b)
    needed = {spec.level for spec in specs} | {_EXTRAS[name] for name in extras}
    levels = {
        "first": _kernels.first_difference(*args) if "first" in needed else None,
        "last": _kernels.last_difference(*args) if "last" in needed else None,
    }
    key_columns = [frame[key].gather(rows_a) for key in keys]
    return pl.DataFrame(
        [
            *key_columns,
            frame["system"].gather(rows_a).alias("system_a"),
            frame["system"].gather(rows_b).alias("system_b"),
            *(pl.Series(spec.name, spec.kernel(*args, level=levels[spec.level])) for spec in specs),
            *(pl.Series(name, _level_series(levels[_EXTRAS[name]])) for name in extras),
        ]
    )


def _level_series(level: np.ndarray | None) -> pa.Array:
    import pyarrow as pa

    assert level is not None  # computed for every extra column asked for

    return pa.array(level.astype(np.uint32), mask=level < 1)


def _check_unique(frame: pl.DataFrame, groups: np.ndarray, keys: list[str]) -> None:
    system = frame["system"]
    repeated = (groups[1:] == groups[:-1]) & (system[1:] == system[:-1]).to_numpy()
    if repeated.any():
        example = frame.row(int(np.argmax(repeated)), named=True)
        example.pop("positions")
        raise InputError(
            "the positions frame has several rows for one (by…, query, system): "
            f"{format_row(example)}; pass the extra key columns as by=, or drop the duplicates"
        )
