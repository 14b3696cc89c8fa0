"""The checks of a run and its qrels while the positions frame is built: duplicate
documents, NaN or null scores, null ids, judgments repeated; the warning that counts the
queries of the run that are not evaluated."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl

from lexiframe import validate
from lexiframe._compat import collect
from lexiframe._utils import (
    caller_stacklevel,
    format_row,
    plural,
    shorten,
)
from lexiframe.errors import DroppedQueriesWarning, InputError
from lexiframe.options import ColumnNames, PositionsOptions
from lexiframe.ranking._request import KEYS


def check_values(run: pl.LazyFrame, options: PositionsOptions) -> None:
    """Raise on the first row with a null id, or a NaN or null score (one pass, no grouping)."""
    by = list(options.by)
    flags = (
        pl.col("order").is_nan() | pl.col("order").is_null(),
        pl.col("doc").is_null(),
        _null_key(by),
    )
    if not collect(run.select(pl.any_horizontal(flags).any())).item():
        return
    bad = collect(
        run.filter(pl.any_horizontal(flags))
        .with_columns(_bad_scores=flags[0], _null_ids=flags[1])
        .sort(*by, *KEYS, nulls_last=False)
        .head(1)
    ).row(0, named=True)
    _raise_for(bad, run, options)


def checked_rankings(
    rankings: pl.DataFrame, run: pl.LazyFrame, options: PositionsOptions
) -> pl.DataFrame:
    """Raise on the first ranking with duplicate documents, NaN scores or null ids."""
    by = list(options.by)
    value_flags = "_score_nan_max" in rankings.columns
    bad_scores = (
        pl.col("_score_nan_max").is_nan() | (pl.col("_null_scores") > 0)
        if value_flags
        else pl.lit(False)
    )
    null_ids = (pl.col("_null_ids") > 0) if value_flags else pl.lit(False)
    bad = rankings.with_columns(_bad_scores=bad_scores, _null_ids=null_ids).filter(
        (pl.col("_n_docs") != pl.col("_n_rows"))
        | pl.col("_bad_scores")
        | pl.col("_null_ids")
        | _null_key(by)
    )
    if bad.height:
        _raise_for(bad.sort(*by, *KEYS).row(0, named=True), run, options)
    return rankings


def _null_key(by: list[str]) -> pl.Expr:
    """Whether a row (or ranking) has a null key: its rows would match no query row."""
    return pl.any_horizontal(pl.col(key).is_null() for key in [*by, *KEYS])


def _raise_for(first: dict[str, Any], run: pl.LazyFrame, options: PositionsOptions) -> None:
    """Raise the error for a bad ranking or row (``first`` holds its keys and flags)."""
    by = list(options.by)
    null_key = next((key for key in [*KEYS, *by] if first[key] is None), None)
    if null_key is not None:
        validate.raise_null_key(run, null_key, _message_names(options))
    problem = {key: first[key] for key in [*by, *KEYS]}
    problem.update(_bad_scores=first["_bad_scores"], _null_ids=first["_null_ids"])
    validate.raise_ranking_problem(run, problem, _message_names(options))


def _message_names(options: PositionsOptions) -> dict[str, str]:
    names = options.columns
    return {
        "system": names.system,
        "query": names.query,
        "doc": names.doc,
        "score": names.score,
        "order": options.order,
    }


def checked_qrels(qrels: pl.DataFrame, names: ColumnNames) -> pl.DataFrame:
    """Reject qrels with null values or a document judged twice for one query."""
    caller = {"query": names.query, "doc": names.doc, "relevance": names.relevance}
    for column in qrels.columns:
        if qrels[column].null_count():
            nulls = qrels.filter(pl.col(column).is_null())
            name = caller.get(column, column)
            raise InputError(
                f"null value in column {name!r} of the qrels ({nulls.height} rows); every "
                f"judgment needs a query, a doc and a grade; example: "
                f"{format_row(nulls.rename(caller).row(0, named=True))}"
            )
    keys = [name for name in qrels.columns if name != "relevance"]
    if _strictly_increasing(qrels, keys):  # sorted qrels: no key can repeat
        return qrels
    repeated = collect(qrels.lazy().group_by(keys).len().filter(pl.col("len") > 1).drop("len"))
    if repeated.height:
        first = repeated.sort(keys).head(1)
        dups = qrels.join(first, on=keys, how="semi").head(2)
        example = "; ".join(format_row(row) for row in dups.rename(caller).iter_rows(named=True))
        raise InputError(
            "duplicate (query, doc) rows in the qrels: a document is judged twice for one "
            f"query; keep one judgment per document; example: {example}"
        )
    return qrels


def _strictly_increasing(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Whether every row's ``keys`` come strictly after the previous row's, compared in
    order (a few comparisons per row, where finding repeated keys hashes every row)."""
    later = pl.lit(False)
    equal = pl.lit(True)
    for key in keys:
        column, previous = pl.col(key), pl.col(key).shift()
        later = later | (equal & (column > previous))
        equal = equal & (column == previous)
    return bool(frame.select(later.fill_null(True).all()).item())  # the first has no previous


def warn_dropped(
    rankings: pl.DataFrame,
    queries: pl.DataFrame,
    by: list[str],
    qrels_keys: list[str],
    names: ColumnNames,
    judged: pl.DataFrame | None = None,
) -> None:
    """Warn with the counts of the run's queries that are not evaluated: those the qrels do
    not know (``judged``: the query keys of the qrels) and those they judge without a
    relevant document (the batched reader warns once for all its batches with it).

    Example:
        >>> import warnings
        >>> ranked = pl.DataFrame({"query": ["q1", "q2"]})
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_dropped(ranked, ranked.head(1), [], ["query"], ColumnNames())
        >>> str(caught[0].message).split(":")[0]
        '1 query of the run is not evaluated'
    """
    dropped = rankings.select(qrels_keys).unique().join(queries, on=qrels_keys, how="anti")
    if dropped.height == 0:
        return
    if judged is None:
        unknown = dropped.clear()
    else:
        unknown = dropped.join(judged.select(qrels_keys).unique(), on=qrels_keys, how="anti")
    reasons = []
    for part, why in (
        (unknown, "not in the qrels"),
        (dropped.join(unknown, on=qrels_keys, how="anti"), "without a relevant document"),
    ):
        if part.height:
            # An id is shortened: a note stays short whatever the data (a 1 MB query id).
            first = part.sort(qrels_keys).head(3)
            if len(qrels_keys) == 1:
                ids = ", ".join(shorten(repr(str(e)), 60) for e in first["query"])
                examples = f"{names.query}={ids}"
            else:  # by= keys of the qrels (each qrels set of several): name them with it
                named = first.rename({"query": names.query}).iter_rows(named=True)
                examples = "; ".join(format_row(row) for row in named)
            reasons.append(f"{part.height} {why} (e.g. {examples})")
    warnings.warn(
        DroppedQueriesWarning(
            f"{plural(dropped.height, 'query', 'queries')} of the run "
            f"{'is' if dropped.height == 1 else 'are'} not evaluated: {'; '.join(reasons)}.",
            kind="dropped queries",
            hint=" lexiframe.coverage(run, qrels) counts them per system.",
            cli_hint="",
        ),
        stacklevel=caller_stacklevel(),
    )
