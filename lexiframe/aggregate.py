"""Aggregation of preferences and metrics over queries: pair summaries and system orderings.

docs/definitions.md §4. Every function takes ``by=`` keys (e.g. ``track``) and works per group; the
results are ordinary frames sorted by explicit keys.

Orderings (:func:`order`) are functions of a per-group matrix ``W`` where ``W[a, b]`` is
the number of queries that rank system a strictly above system b, read from the signs of
per-query preferences (a pair table) or from the per-query comparison of a metric (a
metrics table); ``C[a, b]`` is the number of queries where both were evaluated, so
``C[a, b] − W[a, b] − W[b, a]`` queries tie them. ``b`` *beats* ``a`` when
``W[b, a] > W[a, b]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Literal, overload

import numpy as np
import polars as pl

from lexiframe._compat import collect
from lexiframe._utils import (
    CORPUS_SIZE_CLI_HINT,
    as_list,
    caller_stacklevel,
    format_row,
    quote_names,
)
from lexiframe.errors import InputError, LexiframeWarning, SchemaError, UnknownMeasureError
from lexiframe.mc4 import MC4_DAMPING, mc4_stationary, metric_wins
from lexiframe.metrics import needs_n_hint, parse_measure
from lexiframe.preferences import MEASURES, preference_measure
from lexiframe.validate import (
    has_repeated_keys,
    require_bool,
    require_columns,
    require_numeric,
)

Method = Literal["mc4", "borda", "winrate", "mean"]
METHODS: tuple[str, ...] = ("mc4", "borda", "winrate", "mean")
TIE_TOLERANCE = 1e-12
"""Scores closer than this are tied; ties go to the Copeland score, then the system id."""

_PAIR_KEYS = ("system_a", "system_b")


# --- pair summaries -------------------------------------------------------------------------


@overload
def summarize_preferences(
    prefs: pl.DataFrame,
    *,
    by: str | Sequence[str] | None = ...,
    measures: str | Iterable[str] | None = ...,
) -> pl.DataFrame: ...
@overload
def summarize_preferences(
    prefs: pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = ...,
    measures: str | Iterable[str] | None = ...,
) -> pl.LazyFrame: ...


def summarize_preferences(
    prefs: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    measures: str | Iterable[str] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Mean preference per (by…, system_a, system_b) over queries, with win/loss/tie counts.

    ``prefs`` has one row per (by…, query, system_a, system_b), as
    :func:`lexiframe.preferences.preferences` returns. For each measure ``<m>`` (default:
    every preference column it has, ``sgnLP``, ``rrLP``, ``sgnLR``; aliases such as
    ``lexiprecision`` are accepted, and any other numeric column by its name) the result
    holds ``<m>`` (the mean over the queries, as pref_eval's ``qid: all`` lines),
    ``<m>_wins`` (queries with ``<m> > 0``: system_a preferred), ``<m>_losses`` (``< 0``)
    and ``<m>_ties`` (``== 0``), after ``n_queries``. A query a system skipped was already
    its worst case in the positions frame, so it counts like any other (docs/definitions.md §4).
    A NaN preference is refused (:class:`InputError` naming the column and the pair); a null
    one is missing: in ``n_queries`` but neither in the mean nor a win, loss or tie.

    >>> import polars as pl
    >>> prefs = pl.DataFrame({"query": ["1", "2", "3"], "system_a": ["x"] * 3,
    ...                       "system_b": ["y"] * 3, "sgnLP": [1, -1, 1]})
    >>> summarize_preferences(prefs)
    shape: (1, 7)
    ┌──────────┬──────────┬───────────┬──────────┬────────────┬──────────────┬────────────┐
    │ system_a ┆ system_b ┆ n_queries ┆ sgnLP    ┆ sgnLP_wins ┆ sgnLP_losses ┆ sgnLP_ties │
    │ ---      ┆ ---      ┆ ---       ┆ ---      ┆ ---        ┆ ---          ┆ ---        │
    │ str      ┆ str      ┆ u32       ┆ f64      ┆ u32        ┆ u32          ┆ u32        │
    ╞══════════╪══════════╪═══════════╪══════════╪════════════╪══════════════╪════════════╡
    │ x        ┆ y        ┆ 3         ┆ 0.333333 ┆ 2          ┆ 1            ┆ 0          │
    └──────────┴──────────┴───────────┴──────────┴────────────┴──────────────┴────────────┘
    """
    by = as_list(by)
    lazy = prefs.lazy()
    schema = lazy.collect_schema()
    keys = [*by, *_PAIR_KEYS]
    require_columns(schema, keys, "preferences")
    columns = preference_columns(schema, measures)
    aggregations: list[pl.Expr] = [pl.len().alias("n_queries")]
    floats = [column for column in columns if schema[column].is_float()]
    for column in columns:
        value = pl.col(column)
        aggregations += [
            value.cast(pl.Float64).mean().alias(column),
            (value > 0).sum().alias(f"{column}_wins"),  # Polars orders NaN above all: refused
            (value < 0).sum().alias(f"{column}_losses"),
            (value == 0).sum().alias(f"{column}_ties"),
        ]
    aggregations += [pl.col(column).is_nan().sum().alias(f"_nan_{column}") for column in floats]
    result = lazy.group_by(keys).agg(aggregations).sort(keys)
    check = partial(refuse_nan_preferences, columns=floats, keys=keys)
    if isinstance(prefs, pl.DataFrame):
        return check(collect(result))
    kept = {name: t for name, t in result.collect_schema().items() if name[:5] != "_nan_"}
    return result.map_batches(check, schema=pl.Schema(kept)) if floats else result


def refuse_nan_preferences(
    summary: pl.DataFrame,
    *,
    columns: list[str],
    keys: list[str],
    fix: str = "pl.col({column!r}).fill_nan(None)",
) -> pl.DataFrame:
    """``summary`` without its NaN counts (``_nan_<column>``), or an :class:`InputError`
    naming a column NaN on some queries of a pair, and how to make them missing (``fix``,
    in the caller's library)."""
    for column in columns:
        bad = summary.filter(pl.col(f"_nan_{column}") > 0)
        if bad.height:
            row = bad.row(0, named=True)
            pair = format_row({key: row[key] for key in keys})
            raise InputError(
                f"column {column!r} of the preferences table is NaN on {row[f'_nan_{column}']} "
                f"queries of the pair {pair}, and a NaN would count as a win. Drop them, or "
                f"make them missing with {fix.format(column=column)}"
            )
    return summary.drop([f"_nan_{column}" for column in columns])


def preference_columns(schema: pl.Schema, measures: str | Iterable[str] | None) -> list[str]:
    """The preference columns to aggregate: given names (or aliases), else the known ones.

    Example:
        >>> schema = pl.Schema({"query": pl.String, "sgnLP": pl.Int8, "sgnLR": pl.Int8})
        >>> preference_columns(schema, None), preference_columns(schema, "sgnLR")
        (['sgnLP', 'sgnLR'], ['sgnLR'])
    """
    if measures is None:
        found = [measure.name for measure in MEASURES if measure.name in schema]
        if not found:
            raise SchemaError(
                "the preferences table has no preference column "
                f"({quote_names([measure.name for measure in MEASURES])}); "
                f"its columns are {quote_names(list(schema))}: name yours with measures="
            )
        return found
    columns = []
    for name in as_list(measures):
        column = name
        if name not in schema:
            try:
                column = preference_measure(name).name
            except UnknownMeasureError as error:
                raise UnknownMeasureError(
                    f"{error}; nor is {name!r} a column of the table ({quote_names(list(schema))})"
                ) from None
            if column not in schema:
                raise SchemaError(
                    f"the preferences table has no column {column!r} (measure {name!r}); "
                    f"its columns are {quote_names(list(schema))}"
                )
        require_numeric(schema, column, "preferences")
        columns.append(column)
    return list(dict.fromkeys(columns))


# --- orderings ------------------------------------------------------------------------------


@overload
def order(
    frame: pl.DataFrame,
    measure: str,
    *,
    method: Method = ...,
    damping: float = ...,
    by: str | Sequence[str] | None = ...,
    lower_is_better: bool | None = ...,
) -> pl.DataFrame: ...
@overload
def order(
    frame: pl.LazyFrame,
    measure: str,
    *,
    method: Method = ...,
    damping: float = ...,
    by: str | Sequence[str] | None = ...,
    lower_is_better: bool | None = ...,
) -> pl.LazyFrame: ...


def order(
    frame: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    method: Method = "mc4",
    damping: float = MC4_DAMPING,
    by: str | Sequence[str] | None = None,
    lower_is_better: bool | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Order the systems of each (by…) group: ``by…, system, rank, score``, rank 1 best.

    ``frame`` is one of
    - a pair table with ``system_a``, ``system_b``, ``query`` and the preference column
      ``measure`` (positive when system_a is preferred), as
      :func:`lexiframe.preferences.preferences` returns; only the signs matter, except for
      ``method="mean"``;
    - a pair summary (no ``query``) as :func:`summarize_preferences` returns;
    - a metrics table with ``system``, ``query`` and the metric column ``measure``;
      per-query signs come from comparing the metric of two systems, equal values tying.
      Larger is better unless ``lower_is_better`` says otherwise; by default it is read
      from the measure registry (True for the costs ``ASL``, ``SL3``, ``RecallError``),
      and the ``"mean"`` score is then the mean cost, ranked ascending.

    Methods (docs/definitions.md §4), with ``W``, ``C`` and *beats* as in the module docstring:

    - ``"mc4"``: Dwork et al. (2001)'s MC4 chain. From system a, pick b uniformly among all
      n systems (b = a allowed) and move if b beats a; with probability ``damping`` jump
      to a uniform system: ``G = (1 − damping) P + damping / n``. The score is the
      stationary probability, solved exactly (a linear solve).
    - ``"borda"``: the Borda count of the per-query weak orders: in each query a system
      earns one point per system it is preferred to and half a point per system it ties
      with, summed over queries (``Σ_b W[a, b] + (C[a, b] − W[a, b] − W[b, a]) / 2``).
      Without per-query ties this is pref_aggregate's Borda (n − position, summed) minus
      the number of queries; pref_aggregate breaks ties by run name instead.
    - ``"winrate"``: the mean over the other systems b of the fraction of the queries
      deciding a and b that a wins, ``W[a, b] / (W[a, b] + W[b, a])``, 0.5 when no query
      decides them.
    - ``"mean"``: the mean metric over queries (metrics table), or the mean preference for
      the system over all its (opponent, query) pairs (pair tables; for sgnLP it is
      (wins − losses) / comparisons). A system null on a query where another has a value
      has no mean and ranks last; when that leaves no system with a mean, the ordering is
      refused.

    Scores within 1e-12 tie; ties are broken by the Copeland score (systems beaten minus
    systems beating), then by system id, so ranks are 1…n without gaps.

    >>> import polars as pl
    >>> metrics = pl.DataFrame({"system": list("ABCDBADC"), "query": [1] * 4 + [2] * 4,
    ...                         "score": [4.0, 3, 2, 1] * 2})
    >>> order(metrics, "score", method="mc4")
    shape: (4, 3)
    ┌────────┬──────┬──────────┐
    │ system ┆ rank ┆ score    │
    │ ---    ┆ ---  ┆ ---      │
    │ str    ┆ u32  ┆ f64      │
    ╞════════╪══════╪══════════╡
    │ A      ┆ 1    ┆ 0.434783 │
    │ B      ┆ 2    ┆ 0.434783 │
    │ C      ┆ 3    ┆ 0.065217 │
    │ D      ┆ 4    ┆ 0.065217 │
    └────────┴──────┴──────────┘
    """
    if method not in METHODS:
        raise InputError(f"unknown ordering method {method!r}; choose from {quote_names(METHODS)}")
    if isinstance(damping, bool) or not 0.0 <= damping <= 1.0:
        raise InputError(f"damping must be a probability in [0, 1], not {damping!r}")
    lower_is_better = require_bool(lower_is_better, "lower_is_better", optional=True)
    by = as_list(by)
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    if "system_a" in schema and "system_b" in schema:
        table, compute = _pairs_plan(lazy, schema, measure, method, damping, by)
        system_dtype = schema["system_a"]
    elif "system" in schema and "query" in schema:
        flip = is_cost(measure) if lower_is_better is None else bool(lower_is_better)
        table, compute = _metrics_plan(lazy, schema, measure, method, damping, by, flip)
        system_dtype = schema["system"]
    else:
        raise SchemaError(
            "order() needs a pair table (system_a, system_b, and query or the counts of "
            "summarize_preferences) or a metrics table (system, query, metric); the columns "
            f"are {quote_names(list(schema))}"
        )
    if isinstance(frame, pl.DataFrame):
        return compute(collect(table))
    out_schema: dict[str, pl.DataType] = {
        **{key: schema[key] for key in by},
        "system": system_dtype,
        "rank": pl.UInt32(),
        "score": pl.Float64(),
    }
    return table.map_batches(compute, schema=out_schema)


_Plan = tuple[pl.LazyFrame, Callable[[pl.DataFrame], pl.DataFrame]]
"""The table an ordering reads, and the function that orders its collected rows."""


def _pairs_plan(
    lazy: pl.LazyFrame,
    schema: pl.Schema,
    measure: str,
    method: Method,
    damping: float,
    by: list[str],
) -> _Plan:
    """An ordering of a pair table or pair summary: read from the summary's counts."""
    column = preference_columns(schema, [measure])[0]
    table = summarize_preferences(lazy, by=by, measures=[column]) if "query" in schema else lazy
    needed = [*by, *_PAIR_KEYS, "n_queries", column, f"{column}_wins", f"{column}_losses"]
    require_columns(table.collect_schema(), needed, "pair summary")
    compute = partial(_order_pairs, column=column, method=method, damping=damping, by=by)
    return table.select(needed), compute


def _metrics_plan(
    lazy: pl.LazyFrame,
    schema: pl.Schema,
    measure: str,
    method: Method,
    damping: float,
    by: list[str],
    flip: bool,
) -> _Plan:
    """An ordering of a metrics table: per-query comparisons of the metric (costs flipped)."""
    require_columns(schema, [*by, "system", "query", measure], "metrics")
    require_numeric(schema, measure, "metrics")
    compute = partial(
        _order_metrics, column=measure, method=method, damping=damping, by=by, flip=flip
    )
    return lazy.select(*by, "system", "query", measure), compute


def _groups(
    table: pl.DataFrame, by: list[str]
) -> Iterable[tuple[tuple[object, ...], pl.DataFrame]]:
    if not by:
        if table.height:
            yield (), table
        return
    yield from table.partition_by(by, as_dict=True, maintain_order=False).items()


def _assemble(
    parts: list[pl.DataFrame], table: pl.DataFrame, system_dtype: pl.DataType, by: list[str]
) -> pl.DataFrame:
    if not parts:
        return pl.DataFrame(
            schema={
                **{key: table.schema[key] for key in by},
                "system": system_dtype,
                "rank": pl.UInt32,
                "score": pl.Float64,
            }
        )
    return pl.concat(parts).sort([*by, "rank"])


def _ordered_group(
    key: tuple[object, ...],
    by: list[str],
    table: pl.DataFrame,
    names: pl.Series,
    score: np.ndarray,
    wins: np.ndarray,
) -> pl.DataFrame:
    """The (by…, system, rank, score) rows of one group, in rank order."""
    beats = wins > wins.T
    copeland = beats.sum(axis=1) - beats.sum(axis=0)
    position = np.argsort(-score, kind="stable")
    with np.errstate(invalid="ignore"):  # -inf (no value) minus -inf: NaN, the same group
        gaps = np.diff(score[position]) < -TIE_TOLERANCE
    tie_group = np.empty(len(score), dtype=np.int64)
    tie_group[position] = np.concatenate([[0], np.cumsum(gaps)])
    # ``names`` is sorted, so its index is the system-id order.
    ranked = np.lexsort((np.arange(len(score)), -copeland, tie_group))
    return pl.DataFrame(
        {
            **{
                name: pl.Series(name, [value] * len(ranked), dtype=table.schema[name])
                for name, value in zip(by, key, strict=True)
            },
            "system": names.gather(ranked),
            "rank": pl.Series(np.arange(1, len(ranked) + 1, dtype=np.uint32)),
            "score": score[ranked].astype(np.float64),
        }
    )


def _score(
    method: str, wins: np.ndarray, compared: np.ndarray, mean: np.ndarray, damping: float
) -> np.ndarray:
    n = len(wins)
    if method == "mc4":
        return mc4_stationary(wins, damping=damping)
    if method == "borda":
        ties = compared - wins - wins.T
        np.fill_diagonal(ties, 0)
        borda: np.ndarray = wins.sum(axis=1) + ties.sum(axis=1) / 2
        return borda
    if method == "winrate":
        decided = wins + wins.T
        rate = np.divide(wins, decided, out=np.full(wins.shape, 0.5), where=decided > 0)
        np.fill_diagonal(rate, 0)
        winrate: np.ndarray = rate.sum(axis=1) / max(n - 1, 1)
        return winrate
    return mean


def _order_pairs(
    table: pl.DataFrame, *, column: str, method: str, damping: float, by: list[str]
) -> pl.DataFrame:
    parts = []
    for key, group in _groups(table, by):
        names = pl.concat([group["system_a"], group["system_b"]]).unique().sort()
        index = {name: i for i, name in enumerate(names.to_list())}
        a = group["system_a"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
        b = group["system_b"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
        n = len(names)
        wins = np.zeros((n, n))
        compared = np.zeros((n, n))
        total = np.zeros((n, n))
        count = group["n_queries"].to_numpy().astype(np.float64)
        value_sum = group[column].cast(pl.Float64).fill_null(0.0).to_numpy() * count
        wins[a, b] = group[f"{column}_wins"].to_numpy()
        wins[b, a] = group[f"{column}_losses"].to_numpy()
        compared[a, b] = compared[b, a] = count
        total[a, b] = value_sum
        total[b, a] = -value_sum
        np.fill_diagonal(compared, 0)
        mean = np.divide(
            total.sum(axis=1),
            compared.sum(axis=1),
            out=np.zeros(n),
            where=compared.sum(axis=1) > 0,
        )
        score = _score(method, wins, compared, mean, damping)
        parts.append(_ordered_group(key, by, group, names, score, wins))
    return _assemble(parts, table, table.schema["system_a"], by)


def is_cost(measure: str) -> bool:
    """Whether ``measure`` names a registry measure whose smaller values are better (its
    ``lower_is_better``, a defined measure's too).

    Example:
        >>> is_cost("ASL"), is_cost("AP"), is_cost("my_column")
        (True, False, False)
    """
    try:
        parsed = parse_measure(measure)
    except (UnknownMeasureError, TypeError):
        return False
    return parsed.name == measure and parsed.lower_is_better


def _order_metrics(
    table: pl.DataFrame,
    *,
    column: str,
    method: str,
    damping: float,
    by: list[str],
    flip: bool = False,
) -> pl.DataFrame:
    if has_repeated_keys(table, [*by, "system", "query"]):
        duplicated = table.select(pl.struct(*by, "system", "query").is_duplicated()).to_series()
        example = table.filter(duplicated).row(0, named=True)
        raise InputError(
            "the metrics table has several rows for one (by…, system, query): "
            f"{format_row(example)}"
        )
    parts = []
    incomplete: list[str] = []
    for key, group in _groups(table, by):
        names = group["system"].unique().sort()
        system = group["system"].replace_strict(
            {name: i for i, name in enumerate(names.to_list())}, return_dtype=pl.Int64
        )
        query = group["query"].rank("dense").cast(pl.Int64) - 1
        shape = (len(names), int(query.max() or 0) + 1)
        values = np.full(shape, np.nan)  # NaN: the system has no row for the query
        values[system.to_numpy(), query.to_numpy()] = (
            group[column].cast(pl.Float64).fill_null(-np.inf).fill_nan(-np.inf).to_numpy()
        )
        if flip:  # a cost: negated, so that larger is better below (a null stays the worst)
            values = np.where(np.isneginf(values), values, -values)
        valued = np.isfinite(values)
        if not valued.any():
            raise _no_value_error(column, key, by)
        # A null (-inf) is the worst value: it loses every comparison with a value.
        wins, compared = metric_wins(values)
        # A system with a null where another system has a value has no mean: it ranks last.
        answered = ~np.isnan(values)
        lacking = (answered & ~valued & valued.any(axis=0)).any(axis=1)
        incomplete += names.filter(pl.Series(lacking)).to_list()
        kept = answered & valued.any(axis=0)  # the queries some system has a value for
        mean = np.divide(
            np.where(kept, values, 0.0).sum(axis=1),
            kept.sum(axis=1),
            out=np.zeros(len(names)),
            where=kept.any(axis=1),
        )
        mean[lacking] = -np.inf
        if method == "mean" and lacking.all():  # every mean is null: ranks would say nothing
            raise _no_mean_error(column, key, by)
        score = _score(method, wins, compared, mean, damping)
        parts.append(_ordered_group(key, by, group, names, score, wins))
    result = _assemble(parts, table, table.schema["system"], by)
    if method == "mean":  # report the mean (cost) itself; no mean: null
        score_column = pl.col("score")
        reported = -score_column if flip else score_column
        result = result.with_columns(
            pl.when(score_column.is_infinite()).then(None).otherwise(reported).alias("score")
        )
    if incomplete:
        _warn_incomplete(column, sorted(set(incomplete)), method)
    return result


def _no_value_error(column: str, key: tuple[object, ...], by: list[str]) -> InputError:
    where = f" in {format_row(dict(zip(by, key, strict=True)))}" if by else ""
    needs_n = needs_n_hint(column)
    return InputError(
        f"no system has a value of {column!r}{where}: every value is null, so there is "
        "nothing to order.",
        kind="no value",
        column=column,
        hint=needs_n,
        cli_hint=CORPUS_SIZE_CLI_HINT if needs_n else "",
    )


def _no_mean_error(column: str, key: tuple[object, ...], by: list[str]) -> InputError:
    where = f" in {format_row(dict(zip(by, key, strict=True)))}" if by else ""
    needs_n = needs_n_hint(column)
    return InputError(
        f"no system has a mean of {column!r}{where}: each is null on a query where another "
        "system has a value, so no two means would average the same queries.",
        kind="no mean",
        column=column,
        hint=" Order by method='mc4', 'borda' or 'winrate' (a null loses every comparison "
        f"with a value).{needs_n}",
        # the command orders metrics by their mean only
        cli_hint=CORPUS_SIZE_CLI_HINT if needs_n else "",
    )


def _warn_incomplete(column: str, systems: list[str], method: str) -> None:
    """Say which systems rank last because a query of theirs has no value of the measure."""
    shown = quote_names(systems[:5]) + (f" and {len(systems) - 5} more" if len(systems) > 5 else "")
    detail = (
        "their mean is null and they rank last"
        if method == "mean"
        else "a null loses every comparison with a value"
    )
    needs_n = needs_n_hint(column)
    warnings.warn(
        LexiframeWarning(
            f"{column!r} is null for some queries of {shown} where other systems have a "
            f"value: {detail}.",
            kind="incomplete",
            column=column,
            hint=needs_n,
            cli_hint=CORPUS_SIZE_CLI_HINT if needs_n else "",
        ),
        stacklevel=caller_stacklevel(),
    )
