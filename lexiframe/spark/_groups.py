"""What each group of queries does in its Python worker: lexiframe's positions (and
measures) on the group's Arrow tables, as one process computes them, and the marks it
reports beside its rows, which the driver reads (:mod:`lexiframe.spark.ranking`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from lexiframe import evaluation, ranking
from lexiframe.metrics import Measure, deepest_rank_read
from lexiframe.options import PositionsOptions
from lexiframe.spark import _arrow, exact_sums

BUCKET = "_lexiframe_bucket"
"""The column of a row's group of queries (a hash bucket of its query id)."""


@dataclass(frozen=True)
class Job:
    """What each group needs: the options of :func:`lexiframe.positions` (the caller's,
    one partition per group; ``grades=None`` leaves the grades to each group), the run's
    own by= keys, the systems to evaluate (None: those the group's rows name), the measures
    to compute (for :func:`lexiframe.spark.evaluate`), whether to count coverage, and the
    schema of the frame (:attr:`schema`, with the grades' columns when they may be kept;
    without the groups' marks)."""

    options: PositionsOptions
    own: tuple[str, ...]
    schema: pa.Schema
    systems: pl.DataFrame | None = None
    measures: list[Measure] = field(default_factory=list)
    n: int | str | None = None
    cover: bool = False

    @property
    def group_schema(self) -> pa.Schema:
        """What a group returns: the frame's columns, then its marks (:data:`KIND`) and,
        for measures, the columns of their partial sums (:data:`SUMS`)."""
        marks = [pa.field(KIND, pa.int8()), pa.field(BUCKET, pa.int64())]
        marks += [pa.field(f"{MARK}{name}", pa.int64()) for name in (*COUNTS, *FLAGS)]
        if self.measures:
            sums = pl.Schema(exact_sums.PARTIAL_TYPES)
            marks += list(_arrow.arrow_schema(sums))
        return pa.schema([*self.schema, *marks])

    @property
    def sum_keys(self) -> list[str]:
        """The keys of the measures' partial sums: the frame's keys but the query."""
        return [*self.options.by, "system"]

    @property
    def sum_columns(self) -> list[str]:
        """The measures' columns of the frame, whose partial sums each group adds."""
        keys = {*self.sum_keys, "query"}
        return [name for name in self.schema.names if name not in keys] if self.measures else []


KIND = "_lexiframe_kind"
"""What a row a group returns is: :data:`ROW`, :data:`SYSTEM`, :data:`GROUP` or :data:`SUMS`."""
ROW, SYSTEM, GROUP, SUMS = 0, 1, 2, 3
"""A row of the frame; a system the group evaluated (with its coverage counts when asked);
the group itself (``evaluated``: 1 when it holds a query to evaluate; ``graded``: 1 when
it kept the grades; ``judged``: 1 when the qrels judge one of its queries); a row of the
exact partial sums of its measures per (by…, system) (:mod:`lexiframe.spark.exact_sums`),
from which :func:`lexiframe.spark.summarize` takes the means of the frame."""
MARK = "_lexiframe_"
COUNTS = ("evaluated", "skipped", "unjudged", "no_relevant")
"""The coverage counts a :data:`SYSTEM` row carries (prefixed by :data:`MARK`)."""
FLAGS = ("graded", "judged")
"""What a :data:`GROUP` row says besides ``evaluated`` (prefixed by :data:`MARK`)."""


def group(run_table: pa.Table, qrels_table: pa.Table, *, job: Job) -> pa.Table:
    """One group of queries: lexiframe's positions (and measures) on its Arrow tables, then
    the group's marks: the systems it evaluated (with their coverage counts when the job
    counts them), and whether it holds a query to evaluate, kept the grades and has a
    judgment (:data:`GROUP`)."""
    label = (run_table if run_table.num_rows else qrels_table)[BUCKET][0].as_py()
    run = _arrow.polars_frame(run_table.drop_columns([BUCKET]))
    qrels = _arrow.polars_frame(qrels_table.drop_columns([BUCKET]))
    names = job.options.columns
    named: list[str | pl.Expr] = [*job.own, pl.col(names.system).cast(pl.String).alias("system")]
    systems = run.select(named).unique() if job.systems is None else job.systems
    judged = qrels if qrels.height or not run.height else _stand_in(run, qrels, job.options)
    frame, evaluated = group_positions(run, judged, job, systems)
    if judged is not qrels:  # nothing of the group is evaluated
        frame, evaluated = frame.clear(), False
    graded = "grades" in frame.columns  # read before the measures replace the frame
    sums = None
    if job.measures:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the driver's dry run warned once already
            # Measured as laid out when read from Arrow, as measures() sees it: Polars'
            # sums over a list may group the terms by the lists' memory layout, which
            # can change the last bit of a sum (AP).
            frame = _arrow.polars_frame(frame.to_arrow())
            frame = evaluation.measures_for(frame, job.measures, job.options, job.n)
        sums = exact_sums.partial_sums(frame, job.sum_keys, job.sum_columns)
    marks = systems.select(*job.own, "system")
    if job.cover:  # the coverage counts of the group's queries
        answered = run.select(*named, pl.col(names.query).alias("query")).unique()
        marks = ranking.coverage_of_answers(answered.lazy(), systems.lazy(), judged, job.options)
        marks = marks.rename({name: f"{MARK}{name}" for name in COUNTS})
    flags = {"evaluated": evaluated, "graded": graded, "judged": qrels.height}
    group = pl.DataFrame({f"{MARK}{name}": [int(bool(flag))] for name, flag in flags.items()})
    return _group_table(frame, marks, group, sums, label, job.group_schema)


def _group_table(
    frame: pl.DataFrame,
    systems: pl.DataFrame,
    group: pl.DataFrame,
    sums: pl.DataFrame | None,
    label: int,
    schema: pa.Schema,
) -> pa.Table:
    """The group's frame, then its :data:`SYSTEM`, :data:`GROUP` and :data:`SUMS` rows,
    in ``schema`` (each row's other columns null), labelled with the group's bucket."""
    kinds = [(frame, ROW), (systems, SYSTEM), (group, GROUP)]
    kinds += [] if sums is None else [(sums, SUMS)]
    parts = [part.with_columns(pl.lit(kind, pl.Int8).alias(KIND)) for part, kind in kinds]
    every = pl.concat(parts, how="diagonal_relaxed")
    absent = [name for name in schema.names if name not in every.columns]
    every = every.with_columns(pl.lit(None).alias(name) for name in absent)
    return _arrow.to_spark_table(every.with_columns(pl.lit(label).alias(BUCKET)), schema)


def group_positions(
    run: pl.DataFrame, qrels: pl.DataFrame, job: Job, systems: pl.DataFrame
) -> tuple[pl.DataFrame, bool]:
    """The positions frame of one group of queries, with the rows of ``systems`` that
    skipped its queries, and whether it holds a query to evaluate; lexiframe checks the
    group's rows as it checks a run in one process."""
    options = job.options
    evaluated = qrels
    if options.no_relevant != "keep":
        evaluated = qrels.filter(pl.col(options.columns.relevance) >= options.query_level)
    with warnings.catch_warnings():
        # Dropped queries are counted by coverage(), not warned about per group.
        warnings.simplefilter("ignore")
        # Measures alone read no deeper than their cut-offs (lfs.positions: every rank).
        reach = deepest_rank_read(job.measures) if job.measures else None
        frame = ranking.positions(run, qrels, options, systems=systems, reach=reach)
        return frame, evaluated.height > 0


def _stand_in(run: pl.DataFrame, qrels: pl.DataFrame, options: PositionsOptions) -> pl.DataFrame:
    """Qrels for a group of queries that the qrels do not judge, in the qrels' columns:
    one judgment of no relevance for a query the run does not have (above its largest
    id), so that lexiframe checks the group's rows as it checks every row of a run in one
    process, and counts every query answered as unjudged. Made-up values (zeros, "0")
    where the run has none.

    Example:
        >>> run = pl.DataFrame({"system": ["a"], "query": [7], "doc": [3], "score": [1.0]})
        >>> qrels = pl.DataFrame(schema={"query": pl.Int64, "doc": pl.Int64, "relevance": pl.Int64})
        >>> _stand_in(run, qrels, PositionsOptions()).row(0)
        (8, 3, 0)
    """
    names = options.columns
    last: Any = run[names.query].max()  # an integer or a string: the ids' kinds
    values: dict[str, object] = {names.query: last + "0" if isinstance(last, str) else last + 1}
    values[names.doc] = run[names.doc][0]
    columns = []
    for name, dtype in qrels.schema.items():
        value = values.get(name, run[name][0] if name in run.columns else None)
        if value is None:
            value = "0" if dtype == pl.String else 0
        columns.append(pl.Series(name, [value]).cast(dtype))
    return pl.DataFrame(columns)
