"""Per-query measures from a positions frame or a run, and their per-system means."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar, overload

import polars as pl

from lexiframe import validate
from lexiframe._batched import positions_of_files
from lexiframe._utils import as_list, caller_stacklevel, format_row, plural, quote_names
from lexiframe.aggregate import summarize_preferences
from lexiframe.errors import InputError, MissingCorpusSizeWarning, SchemaError
from lexiframe.io.files import Paths, is_paths
from lexiframe.io.qrels import read_qrels
from lexiframe.metrics import Context, Measure, exprs, parse_measures
from lexiframe.metrics.exprs import _count
from lexiframe.ranking import positions as build_positions

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

JUDGED_COLUMNS = ("nonrel_positions", "n_nonrel", "pooled_positions")
"""What positions(judged=True) adds: Bpref, infAP, Judged@k and Unjudged@k read it."""

# Columns of a positions frame that hold ranking data rather than keys.
RANKING_COLUMNS = (
    "positions",
    "n_rel",
    "n_ret",
    "depth",
    "docs",
    "grades",
    "ideal_grades",
    *JUDGED_COLUMNS,
)

MeasureNames = str | Measure | Iterable[str | Measure]


def measures(frame: Frame, names: MeasureNames, *, n: int | str | pl.Expr | None = None) -> Frame:
    """One column per measure, named by its canonical name, one row per ranking.

    Args:
        frame: a positions frame (see :func:`lexiframe.positions`).
        names: measure names, e.g. ``["RR", "AP", "nDCG@10", "TSE(exposure='ap')"]``.
        n: corpus size, for measures that place unretrieved documents (TSE, SL3,
            RecallError); an integer or a column name. It must hold every ranking and the
            relevant documents the ranking missed (n ≥ n_ret + n_rel − r): a smaller n is
            refused. Without it, SL3 and RecallError are null for a ranking that missed a
            relevant document and ``TSE(exposure='linear')`` is null, with one
            :class:`~lexiframe.errors.MissingCorpusSizeWarning`.

    nDCG and RBP take the grades of the ``grades`` and ``ideal_grades`` columns as gains,
    as trec_eval does; :func:`lexiframe.positions` keeps them whenever the qrels are graded,
    so a frame without them holds binary judgments. ERR, ``nDCG(gains=…)`` and the measures
    with a level of their own (``AP(rel=2)``) need those columns on any qrels: build the
    frame with ``grades=True`` (:func:`evaluate` does). A grade above an ERR measure's
    ``max_grade`` is refused.

    Returns:
        The key columns of ``frame`` (by…, system, query) and one Float64 column per measure.

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> pos = pl.DataFrame({"system": ["a", "b"], "query": ["q1", "q1"],
        ...                     "positions": [[1, 4], [2]], "n_rel": [2, 2], "n_ret": [10, 10]},
        ...                    schema_overrides={"positions": pl.List(pl.UInt32),
        ...                                      "n_rel": pl.UInt32, "n_ret": pl.UInt32})
        >>> lf.measures(pos, ["RR", "AP"])
        shape: (2, 4)
        ┌────────┬───────┬─────┬──────┐
        │ system ┆ query ┆ RR  ┆ AP   │
        │ ---    ┆ ---   ┆ --- ┆ ---  │
        │ str    ┆ str   ┆ f64 ┆ f64  │
        ╞════════╪═══════╪═════╪══════╡
        │ a      ┆ q1    ┆ 1.0 ┆ 0.75 │
        │ b      ┆ q1    ┆ 0.5 ┆ 0.25 │
        └────────┴───────┴─────┴──────┘
    """
    parsed = parse_measures(names)
    schema = frame.collect_schema()
    validate.require_corpus_size(n, schema)
    validate.warn_levels_above_grades(frame, {m.name: m.level for m in parsed if m.level})
    missing = [name for name in ("positions", "n_rel") if name not in schema]
    if missing:
        raise SchemaError(
            f"measures() needs a positions frame; column {quote_names(missing)} is missing "
            "(build one with run.lexi.positions(qrels))"
        )
    graded = "grades" in schema and "ideal_grades" in schema
    if not graded and ("grades" in schema or "ideal_grades" in schema):
        raise SchemaError(
            "a positions frame with grades needs both 'grades' and 'ideal_grades' (build it "
            "with run.lexi.positions(qrels), which keeps them when the qrels are graded)"
        )
    needing_judged = [measure.name for measure in parsed if measure.needs_judged]
    absent = [name for name in JUDGED_COLUMNS if name not in schema]
    if needing_judged and absent:
        raise SchemaError(
            f"{quote_names(needing_judged)} read the judged non-relevant documents, but the "
            f"positions frame has no {quote_names(absent)} column: build it with "
            "positions(qrels, judged=True) (lf.evaluate does so by itself)"
        )
    if any(m.family.name == "ASL" for m in parsed) and "n_ret" not in schema:
        raise SchemaError("ASL needs the n_ret column of the positions frame")
    keys = [name for name in schema if name not in RANKING_COLUMNS]
    # A skipped query's ASL: the frame's depth=, else the longest ranking of the query.
    depth = exprs.skipped_depth(schema, [key for key in keys if key != "system"])
    context = Context(n=n, graded=graded, depth=depth)
    if n is None:
        needing = [measure.name for measure in parsed if measure.needs_n]
        with warnings.catch_warnings():
            # The expressions warn one by one; the caller gets one warning for the call.
            warnings.simplefilter("ignore", MissingCorpusSizeWarning)
            columns = [measure.expr(context) for measure in parsed]
        if needing:
            linear = (
                " (the linear exposure: every value)" if any("linear" in m for m in needing) else ""
            )
            warnings.warn(
                f"{quote_names(needing)} need the corpus size n to place the relevant "
                f"documents a ranking did not retrieve; without n= those values are null{linear}. "
                "Pass n= (an integer or a column).",
                MissingCorpusSizeWarning,
                stacklevel=caller_stacklevel(),
            )
        return _checked_grades(frame, parsed, schema).select(*keys, *columns)
    checked = _checked_corpus_size(_checked_grades(frame, parsed, schema), n, schema)
    return checked.select(*keys, *(measure.expr(context) for measure in parsed))


def _each_batch(
    frame: Frame, check: Callable[[pl.DataFrame], pl.DataFrame], schema: pl.Schema
) -> Frame:
    """``check`` applied to a DataFrame, or to a LazyFrame batch by batch as it streams."""
    if isinstance(frame, pl.LazyFrame):
        return frame.map_batches(check, schema=schema, streamable=True)
    return check(frame)


def _checked_corpus_size(frame: Frame, n: int | str | pl.Expr, schema: pl.Schema) -> Frame:
    """Refuse a corpus size n smaller than a ranking plus its unretrieved relevant documents.

    Imputed positions n − (m − i) must fall below every retrieved one (lexirecall paper
    §2.2), so n ≥ n_ret + (m − r) for every ranking. A LazyFrame is checked batch by batch
    as it streams.
    """
    r = pl.col("positions").list.len().cast(pl.Int64)
    depth = (
        pl.col("n_ret").cast(pl.Int64)
        if "n_ret" in schema
        else pl.col("positions").list.max().cast(pl.Int64).fill_null(0)
    )
    needed = depth + pl.col("n_rel").cast(pl.Int64) - r
    too_small = _count(n) < needed

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        bad = batch.filter(too_small)
        if bad.height:
            row = bad.head(1).with_columns(_depth=depth, _missed=needed - depth, _n=_count(n))
            first = row.row(0, named=True)
            internal = (*RANKING_COLUMNS, "_depth", "_missed", "_n")
            keys = {key: first[key] for key in row.columns if key not in internal}
            missed = first["_missed"]
            below = f" and missed {missed} relevant ones, placed below them" if missed else ""
            raise InputError(
                f"n={first['_n']} is too small for the corpus of these rankings: the ranking "
                f"{format_row(keys)} returned {plural(first['_depth'], 'document')}{below} "
                f"(n ≥ {first['_depth'] + missed}); the deepest ranking found returned "
                f"{plural(batch.select(depth.max()).item(), 'document')}"
            )
        return batch

    return _each_batch(frame, check, schema)


@overload
def evaluate(
    run: Frame, qrels: pl.DataFrame | pl.LazyFrame | Paths, names: MeasureNames, **options: Any
) -> Frame: ...
@overload
def evaluate(
    run: Paths, qrels: pl.DataFrame | pl.LazyFrame | Paths, names: MeasureNames, **options: Any
) -> pl.DataFrame: ...


def evaluate(
    run: pl.DataFrame | pl.LazyFrame | Paths,
    qrels: pl.DataFrame | pl.LazyFrame | Paths,
    names: MeasureNames,
    *,
    n: int | str | pl.Expr | None = None,
    **positions_options: Any,
) -> pl.DataFrame | pl.LazyFrame:
    """Per-query measures of a run: :func:`lexiframe.positions`, then :func:`measures`.

    ``run`` may be run files too (a path, several paths or a directory, as
    :func:`lexiframe.read_run` takes them, with its ``system_from=``), and ``qrels`` a qrels
    file. Run files are read and ranked a batch of files at a time, so that memory holds
    one batch of rows rather than the whole run, with the same result.

    The positions frame keeps the grades when the qrels are graded, so nDCG and RBP give
    trec_eval's graded values, as on every path; it holds the judged non-relevant documents
    (``judged=True``) when a measure reads them (Bpref, infAP, Judged@k, Unjudged@k), and
    the grades whenever a measure cannot do without them (``AP(rel=2)``, ERR,
    ``nDCG(gains=…)``): see :func:`request_columns`.
    ``positions_options`` go to :func:`lexiframe.positions` (``threshold``, ``depth``,
    ``by``, column names, …).

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> run = pl.DataFrame({"system": ["a", "a"], "query": ["q1", "q1"],
        ...                     "doc": ["d1", "d2"], "score": [2.0, 1.0]})
        >>> qrels = pl.DataFrame({"query": ["q1"], "doc": ["d2"], "relevance": [1]})
        >>> lf.evaluate(run, qrels, ["RR", "P@1"]).row(0)
        ('a', 'q1', 0.5, 0.0)
    """
    parsed = parse_measures(names)
    request_columns(parsed, positions_options)
    if is_paths(qrels):
        qrels = read_qrels(qrels)
    if is_paths(run):
        frame = positions_of_files(run, qrels, **positions_options)
    else:
        frame = build_positions(run, qrels, **positions_options)
    return measures(frame, parsed, n=n)


def request_columns(parsed: Iterable[Measure], positions_options: dict[str, Any]) -> None:
    """Ask :func:`lexiframe.positions` (in ``positions_options``) for the columns the
    measures read beyond the default frame: the judged non-relevant documents (Bpref,
    infAP, Judged@k, Unjudged@k), and the grades of the measures that cannot do without
    them on any qrels (``AP(rel=2)``, ERR, ``nDCG(gains=…)``). Refuse what the frame's
    threshold rules out: a level below it, or a gain for a grade below it."""
    parsed = list(parsed)
    if any(measure.needs_judged for measure in parsed):
        positions_options.setdefault("judged", True)
    needing = [measure for measure in parsed if measure.requires_grades]
    if not needing:
        return
    positions_options.setdefault("grades", True)
    threshold = positions_options.get("threshold", 1)
    below = [m for m in needing if isinstance(m.level, int) and m.level < threshold]
    if below:
        raise InputError(
            f"{below[0]} counts documents of grade {below[0].level} as relevant, but the "
            f"positions are built at threshold={threshold}; lower threshold= to "
            f"{below[0].level} (the other measures keep their level with rel={threshold})"
        )
    for measure in needing:
        lost = [
            (grade, gain)
            for grade, gain in dict(measure.params).get("gains") or ()
            if grade < threshold and gain != 0
        ]
        if lost:
            grade, gain = lost[0]
            raise InputError(
                f"{measure} gives grade {grade} a gain of {gain!r}, but the positions are "
                f"built at threshold={threshold}: they hold no document graded {grade}. "
                f"Lower threshold= to {grade} (in a call of its own if other measures must "
                f"count grade {grade} as non-relevant), or give grade {grade} a gain of 0"
            )


def _checked_grades(frame: Frame, parsed: list[Measure], schema: pl.Schema) -> Frame:
    """Refuse a frame with a grade above the ``max_grade`` of an ERR measure (gdeval refuses
    such qrels: the stopping probability would pass 1). A LazyFrame is checked batch by
    batch as it streams."""
    err = [m for m in parsed if "max_grade" in m.family.params]
    if not err or "ideal_grades" not in schema:
        return frame
    limit = min(int(m.param("max_grade")) for m in err)  # type: ignore[call-overload]
    needing = [m for m in err if m.param("max_grade") == limit]
    top = pl.col("ideal_grades").list.max()

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        bad = batch.filter(top > limit)
        if bad.height:
            row = bad.head(1).with_columns(_top=top).row(0, named=True)
            keys = {key: row[key] for key in bad.columns if key not in (*RANKING_COLUMNS, "_top")}
            wider = replace(needing[0], params=(("max_grade", row["_top"]),))
            raise InputError(
                f"{quote_names([m.name for m in needing])}: the stopping probability "
                f"(2^g - 1)/2^G needs every grade g at most G = max_grade = {limit}, but "
                f"{format_row(keys)} has a document of grade {row['_top']}; name the measure "
                f"with a larger max_grade, e.g. {wider}"
            )
        return batch

    return _each_batch(frame, check, schema)


def summarize(
    frame: Frame,
    *,
    by: str | list[str] | None = None,
    measures: str | list[str] | None = None,
) -> Frame:
    """Mean of each measure per (by…, system), with the number of queries averaged.

    A pair table from :func:`lexiframe.preferences` is summarised per (by…, system_a,
    system_b) instead: see :func:`lexiframe.summarize_preferences`.

    Every (system, query) of a frame from :func:`measures` counts, skipped queries
    included (they score their worst case), as trec_eval's ``-c`` does.

    Args:
        frame: per-query measures: ``by…, system, query`` and measure columns.
        by: extra group keys (e.g. ``"track"``).
        measures: the columns to average; by default every column that is not a key.

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> per_query = pl.DataFrame({"system": ["a", "a", "b"], "query": ["1", "2", "1"],
        ...                           "RR": [1.0, 0.5, 0.25]})
        >>> lf.summarize(per_query)
        shape: (2, 3)
        ┌────────┬───────────┬──────┐
        │ system ┆ n_queries ┆ RR   │
        │ ---    ┆ ---       ┆ ---  │
        │ str    ┆ u32       ┆ f64  │
        ╞════════╪═══════════╪══════╡
        │ a      ┆ 2         ┆ 0.75 │
        │ b      ┆ 1         ┆ 0.25 │
        └────────┴───────────┴──────┘
    """
    schema = frame.collect_schema()
    if "system_a" in schema and "system_b" in schema:
        return summarize_preferences(frame, by=by, measures=measures)
    keys = [*as_list(by), "system"]
    missing = [key for key in keys if key not in schema]
    if missing:
        raise SchemaError(f"summarize() needs the key column {quote_names(missing)}")
    if measures is None:
        columns = [name for name in schema if name not in (*keys, "query")]
        non_numeric = [name for name in columns if not schema[name].is_numeric()]
        if non_numeric:
            raise InputError(
                f"summarize() averages every non-key column, but {quote_names(non_numeric)} "
                "is not numeric; name the group keys with by= or the columns with measures="
            )
    else:
        columns = as_list(measures)
    return (
        frame.group_by(keys)
        .agg(pl.len().cast(pl.UInt32).alias("n_queries"), *(pl.col(c).mean() for c in columns))
        .sort(keys)
    )
