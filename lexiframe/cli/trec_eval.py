"""``lexiframe trec_eval``: trec_eval's command line and output, for the measures lexiframe has.

Scripts that call ``trec_eval [-q] [-c] [-n] [-J] [-l LEVEL] [-M DEPTH] [-N NUM]
[-m MEASURE]... QRELS RUN``
and parse its output keep working: the same flags, the same measure names (``map``,
``P.5,10``, ``ndcg_cut.10``, ``official``, ``all_trec``) and the same lines
(``measure<TAB>query<TAB>value``, names padded to 22 characters, integers for counts, 4
decimals otherwise, per-query lines with ``-q`` in trec_eval's order, then ``all``). Several
runs in one call print one block per run, as successive trec_eval calls would.
"""

from __future__ import annotations

import argparse
import math
import queue
import re
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

from lexiframe._utils import shorten
from lexiframe.cli import decimals
from lexiframe.errors import InputError, LexiframeWarning, UnknownMeasureError
from lexiframe.metrics.registry import Measure, parse_measure
from lexiframe.metrics.trec_eval import (
    CATALOGUE,
    MEASURES,
    MIN_GEO_MEAN,
    NICKNAMES,
    Kind,
    TrecMeasure,
    available,
    registry_measure,
)
from lexiframe.options import PositionsOptions

DESCRIPTION = (
    "trec_eval's command line: its flags, measure names and output format (`measure`, "
    "query, value; `all` lines; runid and num_q), for the measures lexiframe computes. "
    "Several runs print one block each, in the order given, each with its runid line "
    "first among its `all` lines; a parquet run holding several systems is one run per "
    "system. Measures of a nickname "
    "(official, all_trec) that lexiframe does not compute are left out; one asked for by "
    "name is an error."
)


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
    if dot:
        return root, params or None
    if argument in CATALOGUE or argument in NICKNAMES:
        return argument, None
    roots = [name for name in CATALOGUE if argument.startswith(name + "_")]
    if roots:
        root = max(roots, key=len)
        return root, argument[len(root) + 1 :]
    return argument, None


def resolve(arguments: Sequence[str]) -> list[Line]:
    """The lines each query prints for ``-m`` arguments, in trec_eval's order.

    Example:
        >>> [line.printed for line in resolve(["ndcg_cut.10", "map", "P.5,10"])]
        ['map', 'P_5', 'P_10', 'ndcg_cut_10']
        >>> [line.column for line in resolve(["ndcg_cut.10", "map", "P.5,10"])]
        ['AP', 'P@5', 'P@10', 'nDCG@10']
    """
    params: dict[str, str | None] = {}
    explicit: set[str] = set()
    for argument in arguments or ["official"]:
        root, text = _split(argument)
        if root in NICKNAMES:
            for name in NICKNAMES[root]:
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
    lines: list[Line] = []
    for measure in MEASURES:
        if measure.name not in params:
            continue
        if not available(measure) and measure.name not in explicit:
            continue  # a nickname's measure lexiframe does not compute
        lines += _lines(measure, params[measure.name])
    return lines


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


def evaluate_runs(
    runs: Sequence[pl.DataFrame],
    qrels: pl.DataFrame,
    lines: Sequence[Line],
    *,
    complete: bool = False,
    level: int = 1,
    depth: int | None = None,
    judged_only: bool = False,
    collection_size: int | None = None,
) -> pl.DataFrame:
    """Per-query values of ``lines`` for each run (``run`` = its index), as trec_eval takes
    queries: those of the qrels the run answers, or with ``complete`` every query of the
    qrels (a skipped query scores 0). ``judged_only`` ranks the judged documents alone
    (trec_eval's ``-J``). ``collection_size``: trec_eval's ``-N``, the corpus size that
    ``utility``'s fourth weight reads. Columns: run, query, then one per source column."""
    plan = _plan(
        lines,
        complete=complete,
        level=level,
        depth=depth,
        judged_only=judged_only,
        collection_size=collection_size,
    )
    numbered = [
        run.with_columns(pl.lit(index, pl.UInt32).alias(RUN_INDEX))
        for index, run in enumerate(runs)
    ]
    batch = pl.concat(numbered, how="vertical_relaxed")
    with _silent_queries():
        frame = _ranked(batch, qrels, plan)
    return _measured(frame, lines, plan)


@contextmanager
def _silent_queries() -> Iterator[None]:
    """trec_eval ignores the queries it does not evaluate silently, and so does its
    drop-in: lexiframe's warnings are ignored, by one filter for the whole command, set
    before its threads start. ``warnings.catch_warnings`` swaps the process's filters, so
    that threads entering it at once could restore each other's (a dropped-query warning
    then escaped, about one run in twelve)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        yield


@dataclass(frozen=True)
class _Plan:
    """What every batch of runs shares: the measures, the options of their positions frame
    and trec_eval's flags that change the values."""

    parsed: dict[str, Measure]
    options: PositionsOptions
    n: int | None
    complete: bool
    judged_only: bool


def _plan(
    lines: Sequence[Line],
    *,
    complete: bool,
    level: int,
    depth: int | None,
    judged_only: bool,
    collection_size: int | None,
) -> _Plan:
    from lexiframe.metrics import parse_measure

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
        threshold=level, depth=depth, no_relevant="keep", condensed=judged_only
    ).for_measures(parsed.values())
    n = collection_size if needing_n else None
    return _Plan(parsed, options, n, complete=complete, judged_only=judged_only)


KEYS = ["system", "query"]
"""The keys of a ranking in :func:`_ranked`'s frame (``system``: the run's index)."""

ANSWERED = "_answered"
"""The positions frame's column that says whether the run answered the query (with ``-c``
a query it skipped has a row too)."""


def _ranked(
    runs: pl.DataFrame, qrels: pl.DataFrame, plan: _Plan, first: int = 0
) -> pl.DataFrame:
    """The positions frame of ``runs`` (a :class:`_Batch`'s rows; ``system``: each run's
    index, :data:`RUN_INDEX` from ``first``), its rows those trec_eval evaluates, with
    :data:`ANSWERED`."""
    from lexiframe.ranking import positions

    count = int(runs[RUN_INDEX].max() or 0) + 1  # type: ignore[arg-type]
    names = pl.Series([str(first + index) for index in range(count)], dtype=pl.String)
    # Each run's name gathered by its index: a tenth of the time of casting every index.
    combined = runs.with_columns(names.gather(runs[RUN_INDEX]).alias("system"))
    frame = positions(combined.drop(RUN_INDEX), qrels, plan.options)  # in _silent_queries()
    if plan.judged_only:  # a condensed ranking may be empty where the run answered
        answered = combined.select(KEYS).unique().with_columns(pl.lit(True).alias(ANSWERED))
        frame = frame.join(answered, on=KEYS, how="left").with_columns(
            pl.col(ANSWERED).fill_null(False)
        )
    else:  # a ranking the run answered holds at least one document
        frame = frame.with_columns((pl.col("n_ret") > 0).alias(ANSWERED))
    return frame if plan.complete else frame.filter(ANSWERED)


def _measured(frame: pl.DataFrame, lines: Sequence[Line], plan: _Plan) -> pl.DataFrame:
    """The per-query table of a positions frame from :func:`_ranked` (one batch of runs,
    or several: the measures are computed once for all)."""
    from lexiframe.evaluation import measures

    answered = frame[ANSWERED]
    frame = frame.drop(ANSWERED)
    parsed = plan.parsed
    table = measures(frame, list(parsed), n=plan.n) if parsed else frame.select(KEYS)
    table = table.rename({"system": "run"}).with_columns(answered)  # measures keep the rows
    flags = frame.select(_undefined(lines, parsed, judged_only=plan.judged_only))
    table = table.with_columns(flags)
    return _trec_eval_quirks(
        table, lines, parsed, complete=plan.complete, judged_only=plan.judged_only
    ).drop(ANSWERED, *flags.columns)


def _undefined_column(column: str) -> str:
    return f"_undefined_{column}"


def _undefined(
    lines: Sequence[Line], parsed: dict[str, Measure], *, judged_only: bool
) -> list[pl.Expr]:
    """Where trec_eval divides 0 by 0 for a line (:attr:`TrecMeasure.undefined`), read from
    the positions frame, one boolean column per line it can happen to."""
    flags = []
    for line in lines:
        trec = CATALOGUE.get(line.root)
        if trec is None or trec.undefined is None or line.kind == "gm":
            continue
        where = trec.undefined(parsed[line.column], judged_only)
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


def format_runs(
    table: pl.DataFrame,
    lines: Sequence[Line],
    runids: Sequence[str],
    *,
    per_query: bool,
    judged_relevant: int | None = None,
    fill: bool = True,
    summary: bool = True,
) -> list[str]:
    """trec_eval's output for each run of a per-query table (columns as
    :func:`evaluate_runs` names them; ``run`` is the run's index into ``runids``), formatted
    for all runs at once: the values of every query and line of a run in one column.

    ``judged_relevant``: with ``-c``, trec_eval's ``num_rel`` summary counts the judgments
    of the qrels with a grade above 0, whatever ``-l`` says; this is that count.
    ``fill``: a missing value is 0, as in trec_eval; otherwise it prints as ``nan`` and the
    mean is over the values present (lexiframe's null: undefined). ``summary=False``
    leaves out the ``all`` lines (trec_eval's ``-n``).
    """
    table = table.with_columns(pl.col("run").cast(pl.Int64)).sort("run", "query")
    runs = table.group_by("run", maintain_order=True).agg(pl.len().alias("count"))
    blocks = dict.fromkeys(range(len(runids)), "")
    if per_query:
        shown = [line for line in lines if line.kind not in ("runid", "num_q", "gm")]
        for run, text in _per_query_text(table, shown, fill).iter_rows():
            blocks[run] = text
    if summary:
        means = _means(table, lines, fill)
        for index, (run, count) in enumerate(runs.iter_rows()):
            text = []
            for line in lines:
                if line.kind == "runid":
                    value = runids[run]
                elif line.kind == "num_q":
                    value = str(count)
                elif line.printed == "num_rel" and judged_relevant is not None and fill:
                    value = str(judged_relevant)
                else:
                    value = means[line.printed][index]
                text.append(f"{line.printed:<22}\tall\t{value}\n")
            blocks[run] += "".join(text)
    return [blocks[run] for run in range(len(runids))]


def _per_query_text(table: pl.DataFrame, shown: Sequence[Line], fill: bool) -> pl.DataFrame:
    """One row per run: its per-query lines, query after query, lines in ``shown``'s
    order, joined into one string."""
    rows, width = table.height, len(shown)
    if rows == 0 or width == 0:
        return pl.DataFrame({"run": [], "text": []}, schema={"run": pl.Int64, "text": pl.String})
    columns = [line.column for line in shown]
    missing = 0.0 if fill else float("nan")
    values = table.select(pl.col(columns).cast(pl.Float64).fill_null(missing)).to_numpy()
    values = values.reshape(-1)  # query after query, each query's lines in order
    is_long = np.tile([line.kind == "long" for line in shown], rows)
    text = decimals.fixed4(pl.Series(values))
    if is_long.any():  # counts print as integers (a missing one as 0)
        counts = np.nan_to_num(values[is_long]).astype(np.int64)
        text = text.scatter(np.flatnonzero(is_long), pl.Series(counts).cast(pl.String))
    names = pl.Series([f"{line.printed:<22}" for line in shown])
    cell = np.arange(rows * width)
    long = pl.DataFrame(
        {
            "run": table["run"].gather(cell // width),
            "name": names.gather(cell % width),
            "query": table["query"].cast(pl.String).gather(cell // width),
            "value": text,
        }
    )
    return (
        long.group_by("run", maintain_order=True)
        .agg(pl.concat_str("name", "query", "value", separator="\t").str.join("\n") + "\n")
        .rename({"name": "text"})
    )


def _means(table: pl.DataFrame, lines: Sequence[Line], fill: bool) -> dict[str, list[str]]:
    """Each line's ``all`` value per run (in the runs' order), as trec_eval prints it."""
    aggregations = {}
    kinds = {}
    for line in lines:
        if line.kind in ("runid", "num_q"):
            continue
        column = pl.col(line.column).cast(pl.Float64)
        if not fill:
            value = column.mean().fill_null(float("nan"))
        elif line.kind == "long":
            value = column.fill_null(0).sum()
        elif line.kind == "gm":
            logs = column.fill_null(0).clip(lower_bound=MIN_GEO_MEAN).log()
            value = (logs.cum_sum().last() / pl.len()).exp()
        else:
            # Summed query after query, as trec_eval does, so that a mean on the rounding
            # boundary of the 4th decimal rounds the same way.
            value = column.fill_null(0).cum_sum().last() / pl.len()
        aggregations[line.printed] = value
        kinds[line.printed] = "long" if fill and line.kind == "long" else "double"
    if not aggregations:
        return {}
    means = table.group_by("run", maintain_order=True).agg(**aggregations).drop("run")
    doubles = [name for name in means.columns if kinds[name] == "double"]
    # Every double of every run formatted in one call, then cut back into columns.
    text = decimals.fixed4(pl.Series(means.select(doubles).to_numpy().reshape(-1, order="F")))
    runs = means.height
    printed = {name: text[i * runs : (i + 1) * runs].to_list() for i, name in enumerate(doubles)}
    for name in means.columns:
        if kinds[name] == "long":
            printed[name] = means[name].cast(pl.Int64).cast(pl.String).to_list()
    return printed


def per_query_lines(per_query: pl.DataFrame, names: Sequence[str]) -> str:
    """``lexiframe evaluate -q``: a metrics table (system, query, measures) in trec_eval's
    ``-q`` format, one block per system (sorted): each query's values, then ``runid``,
    ``num_q`` and the means, as ``all``. Undefined (null) values print as ``nan``.

    Example:
        >>> import polars as pl
        >>> table = pl.DataFrame({"system": ["a", "a"], "query": ["2", "1"], "RR": [0.5, 1.0]})
        >>> print(per_query_lines(table, ["RR"]), end="")
        RR                    \t1\t1.0000
        RR                    \t2\t0.5000
        runid                 \tall\ta
        num_q                 \tall\t2
        RR                    \tall\t0.7500
    """
    lines = [Line("runid", "runid", ""), Line("num_q", "num_q", "")]
    lines += [Line(name, "double", name) for name in names]
    systems = per_query["system"].cast(pl.String).unique().sort()
    table = per_query.select(
        pl.col("system").cast(pl.String).replace_strict(systems, range(len(systems))).alias("run"),
        "query",
        *names,
    )
    return "".join(format_runs(table, lines, systems.to_list(), per_query=True, fill=False))


def _check_flags(args: argparse.Namespace) -> None:
    """Refuse bad values of -l, -M and -N before any work, naming trec_eval's flag."""
    from lexiframe.validate import POSITION_MAX, require_positive_int, require_threshold

    require_threshold(args.level, warn=False, name="-l")
    if args.depth is not None:
        require_positive_int(args.depth, "-M", maximum=POSITION_MAX)
    if args.collection_size is not None:
        require_positive_int(args.collection_size, "-N", meaning="the collection size")


def _in_drop_in_words(message: str, runs: Sequence[_Run]) -> str:
    """An error of :func:`_ranked` or :func:`_measured` in the drop-in's words: ``-N`` for
    the corpus size ``n=``, and each run by its file, not by its index in ``runs`` (its
    ``system``).

    Example:
        >>> run = _Run("bm25", "runs/bm25.txt")
        >>> _in_drop_in_words("n=5 is too small: the ranking system='0' query='401'", [run])
        "-N 5 is too small: the ranking of run 'runs/bm25.txt' query='401'"
    """
    message = re.sub(r"\bn=(\d+) is too small", r"-N \1 is too small", message)
    return re.sub(
        r"system='(\d+)'", lambda found: f"of run {runs[int(found[1])].source!r}", message
    )


def _check_formats(args: argparse.Namespace) -> None:
    """Refuse the trec_eval options whose behaviour the drop-in does not reproduce."""
    if args.rel_format != "qrels":
        raise InputError(
            f"-R {args.rel_format}: only trec_eval's default qrels format is read "
            "(query 0 doc grade); the preference formats (prefs, qrels_prefs, qrels_jg) are not"
        )
    if args.results_format != "trec_results":
        raise InputError(
            f"-T {args.results_format}: only trec_eval's default trec_results format is read"
        )
    if args.debug_level != "0":
        raise InputError(
            f"-D {args.debug_level}: trec_eval's debugging output of its own internals is not "
            "reproduced; run trec_eval itself for it"
        )


BATCH_BYTES = 4 << 20
"""Run files read and ranked together, in bytes of gzipped text (a plain file counts a
fifth of its size: 4 MiB is about 400,000 lines). One thread reads the next batch while
another ranks this one and the caller measures and prints: small enough that the three
overlap on a track of a few runs, large enough that a batch's fixed costs stay small."""


CHUNK_RANKINGS = 3_000
"""Rankings measured and printed together: the measures cost per call as well as per
ranking, and their working memory grows with the chunk (0.9 GB at the peak on the robust04
shape at 3,000, 1.16 GB at 10,000)."""


RUN_INDEX = "_run"
"""The column of a :class:`_Batch`'s rows that says which of its runs a row belongs to."""


@dataclass(frozen=True)
class _Run:
    """One run as trec_eval takes it: its runid and where it came from."""

    runid: str
    source: str


@dataclass(frozen=True)
class _Batch:
    """Whole runs read together: their rows, :data:`RUN_INDEX` numbering them from 0 in
    the order of ``runs``."""

    runs: list[_Run]
    rows: pl.DataFrame


def _read_batches(paths: Sequence[str], batch_bytes: int) -> Iterator[_Batch]:
    """The runs of the paths in order, a batch of whole runs at a time. A text file is one
    run, read in one pass with the other text files of its batch; a directory is one run
    of its files; a parquet table of several systems is one run per system (trec_eval
    reads no parquet)."""
    from lexiframe.io.files import find_files, is_parquet

    texts: list[tuple[Path, str]] = []  # text files to read together, and their arguments
    for path in paths:
        files = find_files([path], "run")
        if len(files) == 1 and not is_parquet(files[0]):
            texts.append((files[0], path))
            continue
        yield from _text_batches(texts, batch_bytes)
        texts = []
        yield _other_batch(path)
    yield from _text_batches(texts, batch_bytes)


def _text_batches(texts: Sequence[tuple[Path, str]], batch_bytes: int) -> Iterator[_Batch]:
    """Text files of one run each, read a batch of files at a time."""
    from lexiframe.io.layouts import RUN
    from lexiframe.io.trec import text_parts

    first = 0  # the index in texts of the batch's first file
    files = [file for file, _ in texts]
    for part, rows in text_parts(files, RUN, "field", batch_bytes, file_column=RUN_INDEX):
        rows = rows.with_columns(pl.col(RUN_INDEX) - first)
        # trec_eval's runid: the last line's (the rows come file by file)
        numbers = rows[RUN_INDEX].to_numpy()
        lasts = np.append(np.flatnonzero(np.diff(numbers)), len(numbers) - 1)[: rows.height]
        runids = dict(zip(numbers[lasts].tolist(), rows["system"].gather(lasts), strict=True))
        runs = []
        for number, (_, argument) in enumerate(texts[first : first + len(part)]):
            if number not in runids:
                raise InputError(f"{argument}: the run holds no line")
            runs.append(_Run(runids[number], argument))
        first += len(part)
        yield _Batch(runs, rows.drop("system"))


def _other_batch(path: str) -> _Batch:
    """A run given as a directory of files or as parquet, one batch of its own."""
    from lexiframe import io
    from lexiframe.io.files import find_files, is_parquet

    rows = io.read_run(path)
    if rows.height == 0:
        raise InputError(f"{path}: the run holds no line")
    if all(is_parquet(file) for file in find_files([path], "run")):
        systems = rows["system"].unique(maintain_order=True)
        if len(systems) > 1:
            index = pl.col("system").replace_strict(
                systems, range(len(systems)), return_dtype=pl.UInt32
            )
            runs = [_Run(str(system), f"{path} (system {system!r})") for system in systems]
            return _Batch(runs, rows.select(pl.exclude("system"), index.alias(RUN_INDEX)))
    else:
        tags = rows["system"].unique(maintain_order=True)
        if len(tags) > 1:  # a folder is one run: several runs' files would merge
            raise InputError(
                f"{path} is a folder, read as one run of its files, but they hold "
                f"{len(tags)} run tags ({', '.join(map(repr, tags.head(3)))}"
                f"{', …' if len(tags) > 3 else ''}): to evaluate each run, name its files "
                f"({path.rstrip('/')}/*)",
                kind="several runs",
            )
    runid = rows["system"][-1]  # trec_eval keeps the last line's id
    index = pl.lit(0, dtype=pl.UInt32).alias(RUN_INDEX)
    return _Batch([_Run(str(runid), path)], rows.select(pl.exclude("system"), index))


Item = TypeVar("Item")


def _read_ahead(items: Iterator[Item]) -> Iterator[Item]:
    """The items, the next one made by a thread while the caller works on this one
    (reading waits on the disk, and Polars parses and ranks outside Python's lock)."""
    ready: queue.Queue[tuple[Item | None, BaseException | None, bool]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        ready.put((item, None, False), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put((None, None, True))
        except BaseException as error:  # raised again in the caller's thread
            ready.put((None, error, True))

    producer = threading.Thread(target=produce, name="lexiframe-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            item, error, done = ready.get()
            if error is not None:
                raise error
            if done:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()


def run_trec_eval(args: argparse.Namespace) -> int:
    """The ``trec_eval`` subcommand: read and rank the runs a batch at a time in a thread,
    measure and format them a chunk at a time, the output kept aside until the last run is
    printed (all or nothing), then written."""
    from lexiframe import io

    _check_flags(args)
    _check_formats(args)
    lines = resolve(args.measure or [])
    qrels = io.read_qrels(args.qrels)
    judged_relevant = qrels.filter(pl.col("relevance") > 0).height if args.complete else None
    plan = _plan(
        lines,
        complete=args.complete,
        level=args.level,
        depth=args.depth,
        judged_only=args.judged_only,
        collection_size=args.collection_size,
    )
    everything: list[_Run] = []  # the runs read so far; a run's system is its index here

    def in_words(error: InputError) -> InputError:
        return InputError(_in_drop_in_words(str(error), everything))

    def ranked() -> Iterator[tuple[list[_Run], pl.DataFrame]]:
        """Each batch's runs and positions frame, ranked in a thread while the next batch
        is read in another."""
        count = 0
        for batch in _read_ahead(_read_batches(args.runs, BATCH_BYTES)):
            everything.extend(batch.runs)
            try:
                frame = _ranked(batch.rows, qrels, plan, count)
            except InputError as error:
                raise in_words(error) from None
            count += len(batch.runs)
            yield batch.runs, frame

    def printed(first: int, chunk: list[_Run], frames: list[pl.DataFrame]) -> str:
        """The lines of a chunk of runs (the first numbered ``first``), measured together."""
        try:
            table = _measured(pl.concat(frames, how="vertical_relaxed", rechunk=True), lines, plan)
        except InputError as error:
            raise in_words(error) from None
        table = table.with_columns(pl.col("run").cast(pl.Int64) - first)
        evaluated = set(table["run"].unique().to_list())
        for index, run in enumerate(chunk):
            if index not in evaluated:
                raise InputError(
                    f"{run.source}: no query with both results and relevance information"
                )
        blocks = format_runs(
            table,
            lines,
            [run.runid for run in chunk],
            per_query=args.query,
            judged_relevant=judged_relevant,
            summary=not args.no_summary,
        )
        return "".join(blocks)

    with _silent_queries(), tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        # Runs are read a batch at a time in one thread and ranked in another (the memory
        # of a few batches), and their positions measured and printed a chunk of rankings
        # at a time meanwhile: the measures cost per call as well as per ranking.
        first = 0
        chunk: list[_Run] = []
        frames: list[pl.DataFrame] = []
        for runs, frame in _read_ahead(ranked()):
            several = len(args.runs) > 1 or len(runs) > 1  # known with the first batch
            named = any(line.kind == "runid" for line in lines)
            if not first and not chunk and several and not named:
                lines = [Line("runid", "runid", ""), *lines]  # say which run each block is
            chunk += runs
            frames.append(frame)
            if sum(frame.height for frame in frames) >= CHUNK_RANKINGS:
                spool.write(printed(first, chunk, frames))
                first += len(chunk)
                chunk, frames = [], []
        if chunk:
            spool.write(printed(first, chunk, frames))
        spool.seek(0)
        shutil.copyfileobj(spool, sys.stdout)
    return 0


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``lexiframe trec_eval`` on the command's subparsers."""
    te = commands.add_parser(
        "trec_eval",
        help="trec_eval's command line and output format (a drop-in for scripts)",
        description=DESCRIPTION,
    )
    te.add_argument(
        "-q",
        dest="query",
        action="store_true",
        help="print the value of each query too, before the `all` lines",
    )
    te.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every query of the qrels; a query the run skipped scores 0",
    )
    te.add_argument(
        "-l",
        dest="level",
        type=int,
        default=PositionsOptions.threshold,
        metavar="LEVEL",
        help="lowest relevance grade counted as relevant (trec_eval's default 1)",
    )
    te.add_argument(
        "-M",
        dest="depth",
        type=int,
        metavar="DEPTH",
        help="evaluate only the top DEPTH documents of each ranking",
    )
    te.add_argument(
        "-n",
        dest="no_summary",
        action="store_true",
        help="print no summary (`all`) lines: with -q, the per-query lines alone",
    )
    te.add_argument(
        "-N",
        dest="collection_size",
        type=int,
        metavar="NUM",
        help="number of documents in the collection; trec_eval reads it for utility only, "
        "whose fourth weight (the non-relevant documents not retrieved) needs it",
    )
    te.add_argument(
        "-R",
        dest="rel_format",
        default="qrels",
        metavar="FORMAT",
        help="format of the qrels file: qrels (trec_eval's default; the only one read)",
    )
    te.add_argument(
        "-T",
        dest="results_format",
        default="trec_results",
        metavar="FORMAT",
        help="format of the run files: trec_results (trec_eval's default; the only one read)",
    )
    te.add_argument(
        "-D",
        dest="debug_level",
        default="0",
        metavar="LEVEL",
        help="trec_eval's debug level: 0 (the default) only; its debugging output is not "
        "reproduced",
    )
    te.add_argument(
        "-J",
        dest="judged_only",
        action="store_true",
        help="rank only the judged documents: unjudged ones are removed from each ranking "
        "(after -M) and the rest move up (condensed rankings)",
    )
    te.add_argument(
        "-m",
        dest="measure",
        action="append",
        metavar="MEASURE",
        help="trec_eval measure, repeatable: a name (map, recip_rank, ndcg), a name with "
        "cutoffs (P.5,10; ndcg_cut.10) or gains (ndcg.1=1,2=3; G.1=2,2=4) or a nickname "
        "(official, the default; all_trec)",
    )
    te.add_argument("qrels", help="TREC qrels file")
    te.add_argument("runs", nargs="+", metavar="run", help="TREC run files, one block each")
    te.set_defaults(handler=run_trec_eval)
