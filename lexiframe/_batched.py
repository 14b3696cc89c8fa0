"""The positions frame of run files read a batch of files at a time.

A TREC run file holds whole rankings, one ranking's rows following each other. The rows
of a ranking, one (system, query), are all its positions depend on; a system's worst-case
rows, for the queries it skipped, depend on the queries it has anywhere. So the files are
read a batch at a time (:func:`lexiframe.io.read_run_batches`: files up to a batch's
size together, a larger file in pieces of whole rankings), each batch is ranked, and the
positions frames, one row per ranking, are put together: a worst-case row stands where no
batch has the system's ranking of the query. Memory holds one batch of rows whatever the
layout: one file per run, runs sharded by query over several files, all systems in one
file.

A ranking whose rows are in two batches (a query of one system split between two files,
or scattered through a large file) is ranked again at the end from its rows alone, read
anew from the files that hold them; when they are many, a note says how many rows that
holds at once. On 110 gzipped files of 27 million lines, the command peaks at 0.46 GB
instead of 2.9 GB read at once, in no more time (docs/benchmarks.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from lexiframe._compat import collect
from lexiframe._utils import caller_stacklevel, format_row, plural
from lexiframe.errors import DroppedQueriesWarning, InputError, LexiframeWarning
from lexiframe.io.files import Paths
from lexiframe.io.layouts import RANKED_RUN, RUN
from lexiframe.io.runs import BATCH_BYTES
from lexiframe.io.sources import table_parts
from lexiframe.options import PositionsOptions
from lexiframe.ranking import PreparedQrels, positions, warn_dropped
from lexiframe.ranking.tables import with_qrels_keys
from lexiframe.typing import SystemFrom

BYTES_PER_ROW = 100
"""About what a run row costs in memory while it is ranked (for the note on split rankings)."""
NOTE_ROWS = 5_000_000
"""Split rankings holding more rows than a batch (about this many) are said in a note."""

Part = tuple[list[Path], pl.DataFrame]


def positions_of_files(
    paths: Paths,
    qrels: pl.DataFrame | pl.LazyFrame,
    options: PositionsOptions | None = None,
    *,
    system_from: SystemFrom = "field",
    batch_bytes: int = BATCH_BYTES,
    reach: int | None = None,
    **kwargs: Any,
) -> pl.DataFrame:
    """:func:`lexiframe.positions` of the run in ``paths``, read a batch of files at a time.

    ``options``, ``reach`` and ``kwargs`` are those of :func:`lexiframe.positions`; the
    result is the same frame (its rows, as positions', in no particular order).
    """
    options = PositionsOptions.of(options, **kwargs)
    if isinstance(qrels, pl.LazyFrame):
        qrels = collect(qrels)  # read once, not once per batch
    layout = RANKED_RUN if options.columns.rank in options.ordered_by else RUN

    def parts(files: Paths) -> Iterable[Part]:
        return table_parts(files, layout, system_from, batch_bytes)

    return _Batches(qrels, options, system_from, reach).positions(parts(paths), parts)


class _Batches:
    """The positions of a run's batches, put together (see the module's docstring)."""

    def __init__(
        self,
        qrels: pl.DataFrame,
        options: PositionsOptions,
        system_from: str,
        reach: int | None = None,
    ) -> None:
        self.qrels = qrels
        self.prepared = PreparedQrels(qrels)  # its tables derived once for every batch
        self.options = options
        self.reach = reach
        self.system_from = system_from
        self.by = list(options.by)
        self.keys = [*self.by, "system", "query"]
        self.query = options.columns.query
        self.shown: set[tuple[type, str]] = set()

    def positions(self, parts: Iterable[Part], reread: Any) -> pl.DataFrame:
        found: list[pl.DataFrame] = []  # rankings with rows
        skipped: list[pl.DataFrame] = []  # worst-case rows, of a system missing a query
        sources: list[list[Path]] = []
        dropping: list[pl.DataFrame] = []  # the queries of the batches with dropped queries
        for files, batch in parts:
            part, dropped = self._rank(batch, files)
            if dropped:
                # Counted over the whole run below, from the queries of the batches that had
                # some (listing the queries of every batch would cost a tenth of the time).
                # A key of the qrels alone (several qrels sets): every batch query has each.
                own = [key for key in self.by if key in self.qrels.columns and key in batch.columns]
                queries = batch.lazy().select(*own, pl.col(self.query).alias("query")).unique()
                dropping.append(collect(with_qrels_keys(queries, self.qrels, self.by)))
            has_rows = pl.col("n_ret") > 0
            found.append(part.filter(has_rows))
            skipped.append(part.filter(~has_rows))
            sources.append(files)
        frame = pl.concat(found)
        split = frame.group_by(self.keys).len().filter(pl.col("len") > 1).drop("len")
        if split.height:
            frame = self._rerank_split(frame, split, found, sources, reread)
        worst = (
            pl.concat(skipped)
            .unique(self.keys, keep="first")
            .join(frame.select(self.keys), on=self.keys, how="anti")
        )
        frame = pl.concat([frame, worst])
        if dropping:
            self._warn_dropped(frame, pl.concat(dropping).unique())
        return frame

    def _warn_dropped(self, frame: pl.DataFrame, queries: pl.DataFrame) -> None:
        """One DroppedQueriesWarning for the whole run, from the queries of the batches
        that dropped some."""
        qrels_by = [key for key in self.by if key in self.qrels.columns]
        qrels_keys = [*qrels_by, "query"]
        evaluated = frame.select(qrels_keys).unique()
        # The qrels' queries in the run's type (the positions join them on it).
        judged = self.qrels.select(
            *(pl.col(key).cast(queries.schema[key]) for key in qrels_by),
            pl.col(self.query).cast(queries.schema["query"]).alias("query"),
        )
        warn_dropped(queries, evaluated, self.by, qrels_keys, self.options.columns, judged)

    def _rank(self, batch: pl.DataFrame, files: list[Path]) -> tuple[pl.DataFrame, bool]:
        """The positions of one batch, whether it dropped queries; other warnings once."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                part = positions(batch, self.prepared, self.options, reach=self.reach)
            except InputError as error:
                if error.kind == "duplicate" and len(files) > 1:
                    self._raise_if_shared_tag(files)
                raise
        dropped = False
        for warning in caught:
            if warning.category is DroppedQueriesWarning:
                dropped = True
                continue
            key = (warning.category, str(warning.message))
            if key not in self.shown:
                self.shown.add(key)
                warnings.warn(warning.message, warning.category, stacklevel=caller_stacklevel())
        return part, dropped

    def _rerank_split(
        self,
        frame: pl.DataFrame,
        split: pl.DataFrame,
        found: list[pl.DataFrame],
        sources: list[list[Path]],
        reread: Any,
    ) -> pl.DataFrame:
        """Rank again, from all their rows, the rankings found in several batches."""
        involved = sorted(
            {
                path
                for part, files in zip(found, sources, strict=True)
                if part.join(split, on=self.keys, how="semi").height
                for path in files
            }
        )
        rows = int(frame.join(split, on=self.keys, how="semi")["n_ret"].sum())
        if rows > NOTE_ROWS:
            example = {key: split[key][0] for key in ("system", "query")}
            warnings.warn(
                f"{plural(split.height, 'ranking')} of the run have rows in more than one "
                f"batch of files (e.g. {format_row(example)}): they are ranked together at the "
                f"end, holding their {rows:,} rows at once (about "
                f"{rows * BYTES_PER_ROW / 1e9:.1f} GB). Rankings whose rows follow each other in "
                "one file stream in bounded memory",
                LexiframeWarning,
                stacklevel=caller_stacklevel(),
            )
        wanted = split.select("system", "query").unique()  # files give these columns
        pieces = [
            batch.join(wanted, on=["system", "query"], how="semi") for _, batch in reread(involved)
        ]
        rows_frame = pl.concat(pieces)
        part, _ = self._rank(rows_frame, involved)  # its dropped queries are counted already
        again = part.join(split, on=self.keys, how="semi")
        return pl.concat([frame.join(split, on=self.keys, how="anti"), again])

    def _raise_if_shared_tag(self, files: list[Path]) -> None:
        """Name the two files whose rows share a ranking, when a duplicate document is
        found among the rows of several files: most often two runs with one run tag."""
        from lexiframe.io.runs import read_run

        keys = pl.concat(
            read_run(path, system_from=self.system_from)  # type: ignore[arg-type]
            .select("system", "query")
            .unique()
            .with_columns(file=pl.lit(index, dtype=pl.UInt32))
            for index, path in enumerate(files)
        )
        shared = (
            keys.group_by("system", "query")
            .agg(pl.col("file").sort())
            .filter(pl.col("file").list.len() > 1)
        )
        if not shared.height:
            return
        row = shared.sort("system", "query").row(0, named=True)
        first, second = (files[index] for index in row["file"][:2])
        raise InputError(
            f"run files {str(first)!r} and {str(second)!r} both hold a ranking of "
            f"{format_row({key: row[key] for key in ('system', 'query')})}, and a document is "
            "in both: are "
            "they two runs with one run tag (the sixth field)? Give each run its own tag, or "
            "name each system by its file (--system-from filename, system_from='filename')"
        )
