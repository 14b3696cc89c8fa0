"""``lexiframe trec_eval``'s measures: trec_eval's ``-m`` arguments resolved to the lines it
prints and the registry's measures (:func:`resolve`), and a batch of runs ranked and
measured as trec_eval takes them (:func:`ranked`, :func:`measured`), with the values
trec_eval prints where they are not the measure's own (a skipped query under ``-c``, its
0/0s)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from lexiframe._utils import shorten
from lexiframe.cli.trec_eval_input import RUN_INDEX
from lexiframe.errors import InputError, LexiframeWarning, UnknownMeasureError
from lexiframe.metrics import Measure, deepest_rank_read, parse_measure
from lexiframe.metrics.trec_eval import (
    CATALOGUE,
    MEASURES,
    NICKNAMES,
    Kind,
    TrecMeasure,
    available,
    registry_measure,
)
from lexiframe.options import Compat, PositionsOptions
from lexiframe.typing import CompatName

if TYPE_CHECKING:
    from lexiframe.ranking.prepared import PreparedQrels


@dataclass(frozen=True)
class Line:
    """One measure value trec_eval prints: its printed name, kind, source column and the
    root of trec_eval's name (``P`` for ``P_10``)."""

    printed: str
    kind: Kind
    column: str
    root: str = ""


def _split(argument: str) -> tuple[str, str | None]:
    """``P.5,10`` → (``P``, ``5,10``); trec_eval's printed names (``P_5``) are read too."""
    root, dot, params = argument.partition(".")
    if dot and not params:  # trec_eval: "improper measure in parameter"
        raise UnknownMeasureError(
            f"trec_eval measure {argument!r}: a dot is followed by the measure's parameters, "
            f"e.g. {root}.5,10 for cut-offs, or name {root} alone for its defaults"
        )
    if dot:
        return root, params
    if argument in CATALOGUE or argument in NICKNAMES:
        return argument, None
    roots = [name for name in CATALOGUE if argument.startswith(name + "_")]
    if roots:
        root = max(roots, key=len)
        return root, argument[len(root) + 1 :]
    return argument, None


def resolve(
    arguments: Sequence[str], compat: CompatName = PositionsOptions.compat
) -> list[Line]:
    """The lines each query prints for ``-m`` arguments, in trec_eval's order, among the
    measures of the ``compat`` setting's trec_eval (:attr:`Compat.trec_eval_absent`).

    Example:
        >>> [line.printed for line in resolve(["ndcg_cut.10", "map", "P.5,10"])]
        ['map', 'P_5', 'P_10', 'ndcg_cut_10']
        >>> [line.column for line in resolve(["ndcg_cut.10", "map", "P.5,10"])]
        ['AP', 'P@5', 'P@10', 'nDCG@10']
        >>> len(resolve(["all_trec"])) - len(resolve(["all_trec"], "trec_eval-9.0.8"))
        5
    """
    absent = PositionsOptions(compat=compat).rules.trec_eval_absent
    params: dict[str, str | None] = {}
    explicit: set[str] = set()
    for argument in arguments or ["official"]:
        root, text = _split(argument)
        if root in absent:
            raise UnknownMeasureError(
                f"illegal measure {argument!r}: {compat} has no measure {root!r} (trec_eval "
                "10.0 added it); e.g. map, P.5,10, ndcg_cut.10, official, all_trec"
            )
        if root in NICKNAMES:
            for name in NICKNAMES[root]:
                if name not in absent:
                    params.setdefault(name, None)
        elif root in CATALOGUE:
            explicit.add(root)
            if params.get(root) is None:
                params[root] = text  # trec_eval uses the first parameters given for a root
        else:
            raise UnknownMeasureError(
                f"illegal measure {argument!r}: trec_eval has no measure {root!r}; e.g. map, "
                "P.5,10, ndcg_cut.10, recip_rank, official, all_trec"
            )
    _check_shared_gains(params)
    lines: list[Line] = []
    for measure in MEASURES:
        if measure.name not in params:
            continue
        if not available(measure) and measure.name not in explicit:
            continue  # a nickname's measure lexiframe does not compute
        lines += _lines(measure, params[measure.name])
    return lines


SHARED_GAINS = ("ndcg", "dcg", "ideal_dcg")
"""trec_eval 10.0's measures that hold one gain map between them (its m_ndcg.c)."""


def _check_shared_gains(params: dict[str, str | None]) -> None:
    """Refuse a gain map on one of :data:`SHARED_GAINS` asked for with another of them
    (``-m dcg.1=2 -m ndcg``, ``-m dcg.1=2 -m all_trec``): trec_eval 10.0 gives the three
    one gain map and aborts on it (a double free), printing nothing whole."""
    asked = [name for name in SHARED_GAINS if name in params]
    mapped = [name for name in asked if params[name] is not None]
    if mapped and len(asked) > 1:
        others = " and ".join(name for name in asked if name != mapped[0])
        raise UnknownMeasureError(
            f"-m {mapped[0]}.{shorten(params[mapped[0]] or '', 60)} with {others}: trec_eval "
            "10.0 holds one gain map for ndcg, dcg and ideal_dcg and aborts when one of them "
            f"has gains and another is asked for too; ask for {mapped[0]} with its gains in "
            "a call of its own"
        )


def _why(printed: str) -> str:
    """Why the registry refuses a measure's parameters (its message, before the list of
    the measures it knows)."""
    try:
        parse_measure(printed)
    except UnknownMeasureError as error:
        return shorten(str(error).split(". Known measures")[0], 400)  # the user's name bounded
    return "its parameters are not ones lexiframe computes"


def _lines(measure: TrecMeasure, params: str | None) -> list[Line]:
    if measure.kind in ("runid", "num_q"):
        return [Line(measure.name, measure.kind, "")]
    if measure.kind == "gm":
        (base,) = _lines(CATALOGUE[measure.of], None)
        return [Line(measure.name, "gm", base.column, measure.name)]
    lines = []
    for printed, param in measure.printed(params):
        found = (
            None if measure.kind == "relstring" else registry_measure(measure.name, printed, param)
        )
        if found is not None:
            lines.append(Line(printed, measure.kind, found.name, measure.name))
        elif params is not None and available(measure):
            raise UnknownMeasureError(
                f"cannot read -m {measure.name}.{shorten(params, 60)}: {_why(printed)}"
            )
        else:
            raise UnknownMeasureError(
                f"trec_eval measure {printed!r} is not computed by lexiframe; "
                f"see `lexiframe trec_eval --help` for the measures it has"
            )
    return lines


@contextmanager
def silent_queries() -> Iterator[None]:
    """trec_eval ignores the queries it does not evaluate silently, and so does its
    drop-in: lexiframe's warnings are ignored, by one filter for the whole command, set
    before its threads start. ``warnings.catch_warnings`` swaps the process's filters, so
    that threads entering it at once could restore each other's (a dropped-query warning
    then escaped, about one run in twelve)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        yield


@dataclass(frozen=True)
class Plan:
    """What every batch of runs shares: the measures, the options of their positions frame
    and trec_eval's flags that change the values."""

    parsed: dict[str, Measure]
    options: PositionsOptions
    n: int | None
    complete: bool
    judged_only: bool


def plan(
    lines: Sequence[Line],
    *,
    complete: bool,
    level: int,
    depth: int | None,
    judged_only: bool,
    collection_size: int | None,
    compat: CompatName = PositionsOptions.compat,
) -> Plan:
    parsed = {line.column: parse_measure(line.column) for line in lines if line.column}
    needing_n = [name for name, measure in parsed.items() if measure.needs_n]
    if needing_n and collection_size is None:
        raise InputError(
            f"{needing_n[0]} weighs the non-relevant documents not retrieved, which needs the "
            "collection size: give it with -N (trec_eval would count a collection of 0 "
            "documents)"
        )
    # -l decides what is relevant; the gain measures still gain from every positive grade,
    # as in trec_eval (the frame's gain_positions above level 1).
    options = PositionsOptions(
        threshold=level, depth=depth, no_relevant="keep", condensed=judged_only, compat=compat
    ).for_measures(parsed.values())
    n = collection_size if needing_n else None
    return Plan(parsed, options, n, complete=complete, judged_only=judged_only)


KEYS = ["system", "query"]
"""The keys of a ranking in :func:`ranked`'s frame (``system``: the run's index)."""

ANSWERED = "_answered"
"""The positions frame's column that says whether the run answered the query (with ``-c``
a query it skipped has a row too)."""

SHOWN = "_shown"
"""The per-query table's column, when some of its rows enter the means without ``-q``
lines of their own (trec_eval 9's ``-c``: a skipped query is 0 in the means)."""


def ranked(
    runs: pl.DataFrame, qrels: pl.DataFrame | PreparedQrels, plan: Plan, first: int = 0
) -> pl.DataFrame:
    """The positions frame of ``runs`` (a :class:`Batch`'s rows; ``system``: each run's
    index, :data:`RUN_INDEX` from ``first``), its rows those trec_eval evaluates, with
    :data:`ANSWERED`. ``qrels``: prepared once for every batch of the command."""
    from lexiframe.ranking import positions

    count = int(runs[RUN_INDEX].max() or 0) + 1  # type: ignore[arg-type]
    names = pl.Series([str(first + index) for index in range(count)], dtype=pl.String)
    # Each run's name gathered by its index: a tenth of the time of casting every index.
    combined = runs.with_columns(names.gather(runs[RUN_INDEX]).alias("system"))
    reach = deepest_rank_read(plan.parsed.values())  # the lists need go no deeper
    # (called within silent_queries())
    frame = positions(combined.drop(RUN_INDEX), qrels, plan.options, reach=reach)
    if plan.judged_only:  # a condensed ranking may be empty where the run answered
        answered = combined.select(KEYS).unique().with_columns(pl.lit(True).alias(ANSWERED))
        frame = frame.join(answered, on=KEYS, how="left").with_columns(
            pl.col(ANSWERED).fill_null(False)
        )
    else:  # a ranking the run answered holds at least one document
        frame = frame.with_columns((pl.col("n_ret") > 0).alias(ANSWERED))
    return frame if plan.complete else frame.filter(ANSWERED)


def measured(frame: pl.DataFrame, lines: Sequence[Line], plan: Plan) -> pl.DataFrame:
    """The per-query table of a positions frame from :func:`ranked` (one batch of runs,
    or several: the measures are computed once for all)."""
    from lexiframe.evaluation import measures

    answered = frame[ANSWERED]
    frame = frame.drop(ANSWERED)
    parsed = plan.parsed
    compat = plan.options.compat
    table = measures(frame, list(parsed), n=plan.n, compat=compat) if parsed else frame.select(KEYS)
    table = table.rename({"system": "run"}).with_columns(answered)  # measures keep the rows
    rules = plan.options.rules
    flags = frame.select(_undefined(lines, parsed, judged_only=plan.judged_only, rules=rules))
    table = table.with_columns(flags)
    stand_in = plan.complete and rules.skipped_query == "stand-in"
    table = _trec_eval_quirks(
        table, lines, parsed, complete=stand_in, judged_only=plan.judged_only
    )
    if plan.complete and rules.skipped_query == "zero":
        # trec_eval 9 does not evaluate a query the run skipped: 0 in every mean, no -q line.
        zero = [
            pl.when(ANSWERED).then(pl.col(line.column)).otherwise(0.0).alias(line.column)
            for line in _measured_lines(lines)
        ]
        table = table.with_columns(*zero, pl.col(ANSWERED).alias(SHOWN))
    return table.drop(ANSWERED, *flags.columns)


def _measured_lines(lines: Sequence[Line]) -> list[Line]:
    """The lines of averaged values (one per column)."""
    averaged = {line.column: line for line in lines if line.kind in ("double", "cut", "gm")}
    return list(averaged.values())


def _undefined_column(column: str) -> str:
    return f"_undefined_{column}"


def _undefined(
    lines: Sequence[Line], parsed: dict[str, Measure], *, judged_only: bool, rules: Compat
) -> list[pl.Expr]:
    """Where trec_eval divides 0 by 0 for a line (:attr:`TrecMeasure.undefined`), read from
    the positions frame, one boolean column per line it can happen to."""
    flags = []
    for line in lines:
        trec = CATALOGUE.get(line.root)
        if trec is None or trec.undefined is None or line.kind == "gm":
            continue
        where = trec.undefined(parsed[line.column], judged_only, rules)
        if where is not None:
            flags.append(where.alias(_undefined_column(line.column)))
    return flags


TREC_EVAL_NAN = -math.nan
"""The NaN of trec_eval's 0/0, whose sign bit is set: printf prints it ``-nan``."""


def _trec_eval_quirks(
    table: pl.DataFrame,
    lines: Sequence[Line],
    parsed: dict[str, Measure],
    *,
    complete: bool,
    judged_only: bool,
) -> pl.DataFrame:
    """The values trec_eval prints where they are not the measure's own, as its catalogue
    declares them: with ``-c``, a query the run skipped (:data:`ANSWERED` false;
    :attr:`TrecMeasure.skipped`), and its 0/0s (:attr:`TrecMeasure.undefined`, flagged by
    :func:`_undefined`), printed ``-nan``."""
    stand_in = 0.0 if judged_only else 1.0  # the stand-in ranking's length
    nan = pl.lit(TREC_EVAL_NAN, dtype=pl.Float64)
    quirks: list[pl.Expr] = []
    for line in lines:
        trec = CATALOGUE.get(line.root)
        if trec is None or line.kind == "gm":
            continue
        column = pl.col(line.column)
        if complete and trec.skipped is not None:
            if line.printed == trec.name:  # its bare name: 0
                value = pl.lit(0.0)
            else:
                value = trec.skipped(parsed[line.column], column, stand_in)
            quirks.append(pl.when(ANSWERED).then(column).otherwise(value))
        if _undefined_column(line.column) in table.columns:
            where = pl.col(_undefined_column(line.column))
            quirks.append(pl.when(where).then(nan).otherwise(column).alias(line.column))
    return table.with_columns(quirks)


