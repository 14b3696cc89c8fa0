"""Per-query measures from a positions frame or a run, and their per-system means."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar, cast, overload

import polars as pl

from lexiframe import validate
from lexiframe._batched import positions_of_files
from lexiframe._compat import collect
from lexiframe._utils import as_list, caller_stacklevel, format_row, plural, quote_names, shorten
from lexiframe.aggregate import summarize_preferences
from lexiframe.errors import (
    ARGUMENT,
    InputError,
    LexiframeError,
    MissingCorpusSizeWarning,
    SchemaError,
)
from lexiframe.intervals import DEFAULT_REPLICATES, IntervalMethod, Seed, add_intervals
from lexiframe.io.files import Paths, is_paths
from lexiframe.io.qrels import read_qrels
from lexiframe.metrics import (
    Context,
    Measure,
    deepest_rank_read,
    exprs,
    parse_measure,
    parse_measures,
    parts,
)
from lexiframe.metrics.custom import user_view
from lexiframe.options import PositionsKwargs, PositionsOptions
from lexiframe.ranking import TIE_COLUMNS
from lexiframe.ranking import positions as build_positions
from lexiframe.typing import CompatName, Labels, SystemFrom

if TYPE_CHECKING:
    from typing_extensions import Unpack

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
    "gain_positions",
    *JUDGED_COLUMNS,
    *TIE_COLUMNS,
)

MeasureNames = str | Measure | Iterable[str | Measure]


def measures(
    frame: Frame,
    names: MeasureNames,
    *,
    n: int | str | pl.Expr | None = None,
    compat: CompatName = PositionsOptions.compat,
    labels: Labels = PositionsOptions.labels,
) -> Frame:
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
        compat: whose numbers to give, as the frame's ``compat=`` (its interpolated
            precision cut-offs, its DCG sums; docs/reproducing.md).
        labels: what the frame's grades are, as its ``labels=``: with ``"probability"``
            each measure gives its expected value under independent relevance (the
            measures without one are refused; docs/definitions.md §2).

    nDCG and RBP take the grades of the ``grades`` and ``ideal_grades`` columns as gains,
    as trec_eval does; :func:`lexiframe.positions` keeps them whenever the qrels are graded,
    so a frame without them holds binary judgments. ERR, G, a gain map (``nDCG(gains=…)``,
    ``G(gains=…)``, ``nDCGRel(gains=…)``, ``RnDCG(gains=…)``) and the measures with a
    level of their own (``AP(rel=2)``) need those columns on any qrels: build the
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
    _require_needed_columns(parsed, schema)
    keys = [name for name in schema if name not in RANKING_COLUMNS]
    frame = _each_batch(frame, partial(validate.check_positions_frame, keys=keys), schema)
    # A skipped query's ASL: the frame's depth=, else the longest ranking of the query.
    depth = exprs.skipped_depth(schema, [key for key in keys if key != "system"])
    rules = PositionsOptions(compat=compat).rules
    ties = all(name in schema for name in TIE_COLUMNS)  # ties="expected"
    for measure in parsed:  # the measures without an expectation refuse probabilities
        measure.check_labels(labels)
    context = Context(n=n, graded=graded, depth=depth, rules=rules, ties=ties, labels=labels)
    if graded and "gain_positions" in schema:  # above threshold=1: the ranks of the gains
        context = replace(context, gain_positions=pl.col("gain_positions"))
    if n is None:
        needing = [measure.name for measure in parsed if measure.needs_n]
        with warnings.catch_warnings():
            # The expressions warn one by one; the caller gets one warning for the call.
            warnings.simplefilter("ignore", MissingCorpusSizeWarning)
            columns = [_expr_of(measure, context) for measure in parsed]
        if needing:
            warnings.warn(
                MissingCorpusSizeWarning(
                    f"{quote_names(needing)} {'needs' if len(needing) == 1 else 'need'} the "
                    "corpus size n to place the relevant documents a ranking did not "
                    f"retrieve; without {ARGUMENT} those values are null",
                    kind="no corpus size",
                    argument="n=",
                    flag="--n",
                    hint=". Pass n= (an integer or a column).",
                    cli_hint=". Pass the corpus size with --n.",
                ),
                stacklevel=caller_stacklevel(),
            )
        checked = _checked_by_families(frame, parsed, schema, keys)
    else:
        columns = [_expr_of(measure, context) for measure in parsed]
        checked = _checked_corpus_size(_checked_by_families(frame, parsed, schema, keys), n, schema)
    if isinstance(checked, pl.DataFrame):
        # Collected as a plan: measures that share a term (a NumPy kernel, the ideal DCG of
        # several cut-offs) compute it once, where an eager select computes it per use.
        return collect(_selected(checked.lazy(), parsed, columns, keys, schema))
    return _selected(checked, parsed, columns, keys, schema)


def measures_for(
    frame: Frame,
    names: MeasureNames,
    options: PositionsOptions,
    n: int | str | pl.Expr | None = None,
) -> Frame:
    """:func:`measures` of a positions frame built with ``options``: under their
    ``compat`` and ``labels``, which the frame does not carry (every path calls this).

    Example:
        >>> import polars as pl
        >>> from lexiframe import PositionsOptions
        >>> pos = pl.DataFrame({"system": ["a"], "query": ["q1"], "positions": [[1]],
        ...                     "n_rel": [1], "n_ret": [3], "grades": [[0.5]],
        ...                     "ideal_grades": [[0.5]], "gain_positions": [[1]]})
        >>> measures_for(pos, ["P@2"], PositionsOptions(labels="probability"))["P@2"].item()
        0.25
    """
    return measures(frame, names, n=n, compat=options.compat, labels=options.labels)


def _expr_of(measure: Measure, context: Context) -> pl.Expr:
    """The measure's expression; what a user's function raises is the measure's error."""
    if not measure.family.defined_by_user:
        return measure.expr(context)
    try:
        return measure.expr(context)
    except LexiframeError:
        raise
    except Exception as error:  # the user's code: report it in one line, naming the measure
        raise InputError(
            f"measure {measure}: its function raised {type(error).__name__}: {error}"
        ) from None


def _selected(
    frame: Frame, parsed: list[Measure], columns: list[pl.Expr], keys: list[str], schema: pl.Schema
) -> Frame:
    """The keys and the measures' columns. A user's measure reads the frame's columns by
    name, as :func:`lexiframe.metrics.custom.user_view` presents them (its grades in step
    with ``positions`` at any threshold): the built-ins are computed first, then the view
    replaces the grade columns for the users' measures, which are tried first on two rows
    made up from the frame's schema (:func:`_try_users`)."""
    users = [m for m in parsed if m.family.defined_by_user]
    view = user_view(schema) if any(m.needs.grades for m in users) else {}
    if users:
        _try_users(users, [c for m, c in zip(parsed, columns, strict=True) if m in users], schema)
    if view:
        built_in = [c for m, c in zip(parsed, columns, strict=True) if m not in users]
        frame = frame.with_columns(*built_in, **view)  # one context: built-ins see the frame
        columns = [
            pl.col(m.name) if m not in users else c
            for m, c in zip(parsed, columns, strict=True)
        ]
    return frame.select(*keys, *columns)


def _try_users(users: list[Measure], columns: list[pl.Expr], schema: pl.Schema) -> None:
    """Refuse, naming it, a user's measure that does not give one number per row on two
    rankings made up from the frame's schema: a column the frame lacks, a value that is
    not a number, more or fewer rows than rankings."""
    made_up = _made_up_rows(schema)
    view = user_view(schema)
    if view:
        made_up = made_up.with_columns(**view)
    for measure, column in zip(users, columns, strict=True):
        try:
            height = made_up.select(column).height
        except pl.exceptions.PolarsError as error:
            first = (str(error).strip().splitlines() or [""])[0]
            reason = f"{type(error).__name__}: {shorten(first, 160)}"
        else:
            if height == made_up.height:
                continue
            reason = f"it gave {height} rows for {made_up.height} rankings"
        raise InputError(
            f"measure {measure} cannot be computed on the positions frame: {reason} (its "
            "function must give one number per ranking from the frame's columns: positions, "
            "n_rel, n_ret and those its needs= declares)"
        )


def _made_up_rows(schema: pl.Schema) -> pl.DataFrame:
    """Two rankings with the columns and types of ``schema``: lists of two ranks and of
    one, counts 2 and 1, strings, nulls elsewhere."""
    columns = {}
    for name, dtype in schema.items():
        if isinstance(dtype, pl.List):
            values: list[object] = [[1, 2], [1]]
        elif dtype.is_numeric():
            values = [2, 1]
        elif dtype == pl.String:
            values = ["a", "b"]
        else:
            values = [None, None]
        columns[name] = pl.Series(name, values).cast(dtype)
    return pl.DataFrame(columns)


def _require_needed_columns(parsed: list[Measure], schema: pl.Schema) -> None:
    """Refuse a frame without the columns the measures declare they read (their
    :class:`~lexiframe.metrics.Needs`), saying how to build one that has them."""
    needing_judged = [measure.name for measure in parsed if measure.needs.judged]
    absent = [name for name in JUDGED_COLUMNS if name not in schema]
    if needing_judged and absent:
        raise SchemaError(
            f"{quote_names(needing_judged)} read the judged non-relevant documents, but the "
            f"positions frame has no {quote_names(absent)} column: build it with "
            "positions(qrels, judged=True) (lf.evaluate does so by itself)"
        )
    for measure in parsed:
        missing = [name for name in measure.needs.columns if name not in schema]
        if missing:
            raise SchemaError(
                f"{measure} needs the {quote_names(missing)} column of the positions frame "
                "(run.lexi.positions(qrels) builds it)"
            )


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
    too_small = parts.count(n) < needed

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        bad = batch.filter(too_small)
        if bad.height:
            row = bad.head(1).with_columns(_depth=depth, _missed=needed - depth, _n=parts.count(n))
            first = row.row(0, named=True)
            internal = (*RANKING_COLUMNS, "_depth", "_missed", "_n")
            keys = {key: first[key] for key in row.columns if key not in internal}
            missed = first["_missed"]
            below = f" and missed {missed} relevant ones, placed below them" if missed else ""
            raise InputError(
                f"{ARGUMENT}{first['_n']} is too small for the corpus of these rankings: the "
                f"ranking {format_row(keys)} returned {plural(first['_depth'], 'document')}"
                f"{below} (n ≥ {first['_depth'] + missed}); the deepest ranking found "
                f"returned {plural(batch.select(depth.max()).item(), 'document')}",
                kind="too small",
                example=keys,
                argument="n=",
                flag="--n ",
            )
        return batch

    return _each_batch(frame, check, schema)


@overload
def evaluate(
    run: Frame,
    qrels: pl.DataFrame | pl.LazyFrame | Paths,
    names: MeasureNames,
    *,
    n: int | str | pl.Expr | None = None,
    options: PositionsOptions | None = None,
    system_from: SystemFrom | None = None,
    **positions_options: Unpack[PositionsKwargs],
) -> Frame: ...
@overload
def evaluate(
    run: Paths,
    qrels: pl.DataFrame | pl.LazyFrame | Paths,
    names: MeasureNames,
    *,
    n: int | str | pl.Expr | None = None,
    options: PositionsOptions | None = None,
    system_from: SystemFrom | None = None,
    **positions_options: Unpack[PositionsKwargs],
) -> pl.DataFrame: ...


def evaluate(
    run: pl.DataFrame | pl.LazyFrame | Paths,
    qrels: pl.DataFrame | pl.LazyFrame | Paths,
    names: MeasureNames,
    *,
    n: int | str | pl.Expr | None = None,
    options: PositionsOptions | None = None,
    system_from: SystemFrom | None = None,
    **positions_options: Unpack[PositionsKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """Per-query measures of a run: :func:`lexiframe.positions`, then :func:`measures`.

    ``run`` may be run files too (a path, several paths or a directory, as
    :func:`lexiframe.read_run` takes them, with its ``system_from=``), and ``qrels`` a qrels
    file. Run files are read and ranked a batch of files at a time, so that memory holds
    one batch of rows rather than the whole run, with the same result.

    The positions frame keeps the grades when the qrels are graded, so nDCG and RBP give
    trec_eval's graded values, as on every path. ``threshold=`` is trec_eval's ``-l``: it
    decides what is relevant (AP, P@k), not what gains: nDCG, G, RBP and ERR take every
    positive grade as gain at any threshold (``threshold=2`` gives trec_eval ``-l 2``'s
    ndcg). The frame holds the judged non-relevant documents (``judged=True``) when a
    measure reads them (Bpref, infAP, Judged@k, Unjudged@k), and the grades whenever a
    measure cannot do without them (``AP(rel=2)``, ERR, G, a gain map such as
    ``nDCG(gains=…)``), as each measure declares (:meth:`PositionsOptions.for_measures`).
    ``options`` and the keyword arguments ``positions_options`` are those of
    :func:`lexiframe.positions` (``threshold``, ``depth``, ``by``, column names, …);
    ``labels="gain"`` or ``"probability"`` reads real-valued labels (the latter gives each
    measure's expected value; docs/definitions.md §2, "Fractional labels").

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
    resolved = PositionsOptions.of(options, **positions_options).for_measures(parsed)
    reach = deepest_rank_read(parsed)  # the lists need go no deeper
    judgments = (
        read_qrels(cast(Paths, qrels), labels=resolved.labels)
        if is_paths(qrels)
        else cast(pl.DataFrame | pl.LazyFrame, qrels)
    )
    if is_paths(run):
        files = cast(Paths, run)
        frame = positions_of_files(
            files, judgments, resolved, system_from=system_from or "field", reach=reach
        )
    else:
        if system_from is not None:
            raise InputError("system_from= applies to run files; this run is a frame")
        frame = build_positions(cast(pl.DataFrame, run), judgments, resolved, reach=reach)
    return measures_for(frame, parsed, resolved, n)


def _checked_by_families(
    frame: Frame, parsed: list[Measure], schema: pl.Schema, keys: list[str]
) -> Frame:
    """Apply the frame checks the families of ``parsed`` declare (ERR refuses a grade above
    its ``max_grade``), each to all of its measures of the call at once. A LazyFrame is
    checked batch by batch as it streams."""
    checks: dict[int, tuple[Callable[..., None], list[Measure]]] = {}
    for measure in parsed:
        family_check = measure.family.check_frame
        if family_check is not None:
            checks.setdefault(id(measure.family), (family_check, []))[1].append(measure)
    if not checks:
        return frame

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        for family_check, family_measures in checks.values():
            family_check(family_measures, batch, keys)
        return batch

    return _each_batch(frame, check, schema)


def summarize(
    frame: Frame,
    *,
    by: str | list[str] | None = None,
    measures: str | list[str] | None = None,
    ci: float | None = None,
    method: IntervalMethod = "t",
    n_replicates: int = DEFAULT_REPLICATES,
    seed: Seed | None = None,
) -> Frame:
    """Mean of each measure per (by…, system), with the number of queries averaged.

    A pair table from :func:`lexiframe.preferences` is summarised per (by…, system_a,
    system_b) instead: see :func:`lexiframe.summarize_preferences`.

    Every (system, query) of a frame from :func:`measures` counts, skipped queries
    included (they score their worst case), as trec_eval's ``-c`` does. A measure that is
    null without the corpus size ``n`` (SL3, RecallError, ``TSE(exposure='linear')``) is
    averaged over the queries where it has a value, counted in ``n_queries_<measure>``.

    With ``ci`` (a level such as 0.95), each mean ``<m>`` is followed by its confidence
    interval ``<m>_ci_low``, ``<m>_ci_high`` over the queries (per system, or per pair of
    a pair table): ``method="t"``, Student's t interval, or ``"bootstrap"``, the percentile
    interval of ``n_replicates`` resamples of the queries drawn from ``seed``
    (:mod:`lexiframe.intervals`; equal to SciPy's). A LazyFrame is collected for them.

    Args:
        frame: per-query measures: ``by…, system, query`` and measure columns.
        by: extra group keys (e.g. ``"track"``).
        measures: the columns to average; by default every column that is not a key.
        ci: the level of the intervals (None: no interval).
        method: ``"t"`` or ``"bootstrap"``.
        n_replicates: the bootstrap's resamples.
        seed: the bootstrap's seed (required by it).

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
    if ci is not None:  # the means, then the interval of each from the per-query values
        table = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
        means = summarize(table, by=by, measures=measures)
        of_pairs: bool = "system_a" in table.columns and "system_b" in table.columns
        groups = [*as_list(by), *(("system_a", "system_b") if of_pairs else ("system",))]
        columns = [name for name in means.columns if name in table.columns and name not in groups]
        with_ci = add_intervals(
            table, means, groups, columns, confidence=ci, method=method,
            n_replicates=n_replicates, seed=seed,
        )  # fmt: skip
        return with_ci.lazy() if isinstance(frame, pl.LazyFrame) else with_ci
    schema = frame.collect_schema()
    if "system_a" in schema and "system_b" in schema:
        return summarize_preferences(frame, by=by, measures=measures)
    keys: list[str] = [*as_list(by), "system"]
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
        absent = [name for name in columns if name not in schema]
        if absent:
            raise SchemaError(
                f"summarize() averages the columns measures= names, but "
                f"{quote_names(absent)} is not one; the frame's columns are "
                f"{quote_names(list(schema))}"
            )
    aggregations = [pl.len().cast(pl.UInt32).alias("n_queries")]
    for column in columns:
        aggregations.append(pl.col(column).mean())
        if _may_be_null(column):
            aggregations.append(pl.col(column).count().cast(pl.UInt32).alias(f"n_queries_{column}"))
    return frame.group_by(keys).agg(aggregations).sort(keys)


def _may_be_null(column: str) -> bool:
    """Whether the measure named ``column`` is null on some queries without ``n``."""
    try:
        return parse_measure(column).needs_n
    except LexiframeError:  # not a measure's name: a column of the caller's own
        return False
