"""Write tables (parquet, CSV, JSON lines) and TREC run and qrels files, atomically."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Literal

import polars as pl

from lexiframe._compat import collect
from lexiframe._utils import quote_names
from lexiframe.errors import InputError, OutputError, SchemaError
from lexiframe.io.files import PathLike
from lexiframe.io.layouts import QRELS_SCHEMA, RUN_SCHEMA, trec_rank
from lexiframe.io.outputs import atomic

WRITE_FORMATS = (".parquet", ".csv", ".jsonl", ".ndjson")
"""The extensions :func:`write_frame` knows."""


_atomic = atomic  # the name the writers below and older callers use


def _as_frame(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    if isinstance(frame, pl.LazyFrame):
        return collect(frame)
    if isinstance(frame, pl.DataFrame):
        return frame
    raise InputError(f"expected a Polars DataFrame or LazyFrame, not {type(frame).__name__}")


def _flatten_lists(frame: pl.DataFrame) -> pl.DataFrame:
    """List and array columns as space-separated strings, for CSV."""
    columns = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.List | pl.Array):
            inner = dtype.inner
            if inner is not None and inner.is_nested():
                raise SchemaError(f"column {name!r} ({dtype}) is nested too deeply for CSV")
            column = pl.col(name)
            if isinstance(dtype, pl.Array):
                column = column.arr.to_list()
            columns.append(column.list.eval(pl.element().cast(pl.String)).list.join(" "))
        elif isinstance(dtype, pl.Struct | pl.Object):
            raise SchemaError(
                f"column {name!r} ({dtype}) cannot be written to CSV; use parquet or jsonl"
            )
    return frame.with_columns(columns) if columns else frame


def _writer(suffix: str) -> Callable[[pl.DataFrame, Path], None]:
    def parquet(frame: pl.DataFrame, path: Path) -> None:
        frame.write_parquet(path)

    def csv(frame: pl.DataFrame, path: Path) -> None:
        _flatten_lists(frame).write_csv(path)

    def ndjson(frame: pl.DataFrame, path: Path) -> None:
        frame.write_ndjson(path)

    writers = {".parquet": parquet, ".csv": csv, ".jsonl": ndjson, ".ndjson": ndjson}
    if suffix not in writers:
        raise InputError(
            f"cannot write {f'a {suffix}' if suffix else 'an extension-less'} file: the "
            "supported extensions are "
            f"{', '.join(WRITE_FORMATS)}"
        )
    return writers[suffix]


def check_writable(path: PathLike) -> None:
    """Raise :class:`InputError` now if :func:`write_frame` cannot write ``path``'s format.

    Lets a command check every output path before it computes anything.

    Example:
        >>> check_writable("results.xlsx")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: cannot write a .xlsx file: ...
    """
    if os.path.isdir(path) or str(path).endswith(("/", os.sep)):
        example = Path(path) / "metrics.csv"
        raise OutputError(
            f"cannot write {str(path)!r}: it is a folder; name a file, e.g. {str(example)!r}",
            kind="folder",
        )
    _writer(Path(path).suffix.lower())


def write_frame(frame: pl.DataFrame | pl.LazyFrame, path: PathLike) -> Path:
    """Write a table by the extension of ``path``, atomically.

    ``.parquet``; ``.csv`` (list and array columns become space-separated strings, e.g.
    positions ``[1, 4, 9]`` become ``1 4 9`` and an empty list ``""``; struct columns are
    refused); ``.jsonl`` or
    ``.ndjson`` (one JSON object per line). The table goes to a temporary file in the same
    directory, renamed to ``path`` when complete: a failure leaves no partial file, and an
    unknown extension raises before anything is written.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "positions.csv"
        >>> frame = pl.DataFrame({"query": ["401"], "positions": [[1, 4, 9]]})
        >>> write_frame(frame, path).name
        'positions.csv'
        >>> print(path.read_text(), end="")
        query,positions
        401,1 4 9
    """
    check_writable(path)
    target = Path(path)
    write = _writer(target.suffix.lower())
    data = _as_frame(frame)
    with _atomic(target) as temporary:
        write(data, temporary)
    return target


def write_frame_as(frame: pl.DataFrame | pl.LazyFrame, path: Path, suffix: str) -> None:
    """Write a table to ``path`` in the format of the extension ``suffix``, in place: the
    writer of one member of :class:`lexiframe.io.Outputs`, which makes the set atomic."""
    _writer(suffix.lower())(_as_frame(frame), path)


def _require(frame: pl.DataFrame, columns: Sequence[str], table: str) -> None:
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise SchemaError(
            f"the {table} table has no column {quote_names(missing)}; its columns are "
            f"{quote_names(frame.columns)}"
        )


def _trec_lines(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """The columns of a TREC text file, in order, as strings or numbers."""
    if table == "run":
        return frame.select(
            pl.col("query").cast(pl.String),
            pl.lit("Q0").alias("Q0"),
            pl.col("doc").cast(pl.String),
            pl.col("rank").cast(pl.Int64),
            pl.col("score").cast(pl.Float64),
            pl.col("system").cast(pl.String),
        )
    return frame.select(
        pl.col("query").cast(pl.String),
        pl.lit("0").alias("iteration"),
        pl.col("doc").cast(pl.String),
        pl.col("relevance").cast(pl.Int64),
    )


def _check_trec_values(frame: pl.DataFrame, table: str, ids: Sequence[str]) -> None:
    """Refuse nulls and ids with whitespace: they would write a broken TREC file."""
    nulls = [name for name in frame.columns if frame[name].null_count()]
    if nulls:
        raise InputError(f"the {table} table has nulls in {quote_names(nulls)}")
    for name in ids:
        column = frame[name]
        if column.dtype == pl.String:
            bad = frame.filter(column.str.contains(r"\s|^$"))
            if bad.height:
                raise InputError(
                    f"column {name!r} of the {table} table has an empty id or one with "
                    f"whitespace, which a TREC file cannot hold: {bad[name][0]!r}"
                )


def _write_csv_text(frame: pl.DataFrame, target: IO[bytes] | Path, gzip_level: int | None) -> None:
    options: dict[str, Any] = {"include_header": False, "separator": " ", "quote_style": "never"}
    if gzip_level is not None:
        options.update(compression="gzip", compression_level=gzip_level, check_extension=False)
    frame.write_csv(target, **options)


def write_trec_run(run: pl.DataFrame | pl.LazyFrame, path: PathLike) -> Path:
    """Write a run as a TREC run file (gzipped when ``path`` ends in ``.gz``), atomically.

    Lines ``query Q0 doc rank score system``, space separated, sorted by system, query and
    rank. Without a ``rank`` column, ranks follow trec_eval's order (score descending, then
    doc id descending as a string).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
        >>> run = pl.DataFrame({"system": ["bm25", "bm25"], "query": ["401", "401"],
        ...                     "doc": ["D1", "D2"], "score": [1.5, 2.5]})
        >>> _ = write_trec_run(run, path)
        >>> print(path.read_text(), end="")
        401 Q0 D2 1 2.5 bm25
        401 Q0 D1 2 1.5 bm25
    """
    frame = _as_frame(run)
    _require(frame, ("system", "query", "doc", "score"), "run")
    if "rank" not in frame.columns:
        frame = frame.with_columns(trec_rank().alias("rank"))
    frame = frame.select("system", "query", "doc", "score", "rank")
    _check_trec_values(frame, "run", ("system", "query", "doc"))
    lines = _trec_lines(frame.sort("system", "query", "rank"), "run")
    target = Path(path)
    with _atomic(target) as temporary:
        _write_csv_text(lines, temporary, 6 if target.suffix.lower() == ".gz" else None)
    return target


def write_trec_qrels(qrels: pl.DataFrame | pl.LazyFrame, path: PathLike) -> Path:
    """Write qrels as a TREC qrels file (gzipped when ``path`` ends in ``.gz``), atomically.

    Lines ``query 0 doc relevance``, space separated, sorted by query and doc.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> qrels = pl.DataFrame({"query": ["401", "401"], "doc": ["D2", "D1"],
        ...                       "relevance": [0, 2]})
        >>> _ = write_trec_qrels(qrels, path)
        >>> print(path.read_text(), end="")
        401 0 D1 2
        401 0 D2 0
    """
    frame = _as_frame(qrels)
    _require(frame, ("query", "doc", "relevance"), "qrels")
    frame = frame.select("query", "doc", "relevance")
    if not frame.schema["relevance"].is_integer():
        raise SchemaError(
            f"column 'relevance' of the qrels table must be integer, not "
            f"{frame.schema['relevance']}"
        )
    _check_trec_values(frame, "qrels", ("query", "doc"))
    lines = _trec_lines(frame.sort("query", "doc"), "qrels")
    target = Path(path)
    with _atomic(target) as temporary:
        _write_csv_text(lines, temporary, 6 if target.suffix.lower() == ".gz" else None)
    return target


class ChunkWriter:
    """Append chunks of a run or qrels table to one file (TREC text or parquet), atomically.

    Used by :func:`lexiframe.datasets.write_synthetic_track` to write a file a block of rows
    at a time. Text chunks are written as they come (gzip members, when gzipped); parquet
    chunks become row groups.
    """

    def __init__(
        self,
        path: PathLike,
        *,
        kind: Literal["trec", "parquet"],
        table: Literal["run", "qrels"],
        gzip_level: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self.table = table
        self.gzip_level = gzip_level
        self._atomic: contextlib.AbstractContextManager[Path] | None = None
        self._file: IO[bytes] | None = None
        self._parquet: Any = None

    def __enter__(self) -> ChunkWriter:
        self._atomic = _atomic(self.path)
        temporary = self._atomic.__enter__()
        if self.kind == "trec":
            self._file = open(temporary, "wb")
        else:
            self._temporary = temporary
        return self

    def write(self, chunk: pl.DataFrame) -> None:
        if self.kind == "trec":
            assert self._file is not None
            _write_csv_text(_trec_lines(chunk, self.table), self._file, self.gzip_level)
            return
        import pyarrow.parquet as pq

        table = chunk.to_arrow()
        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self._temporary, table.schema)
        self._parquet.write_table(table)

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        assert self._atomic is not None
        if self._file is not None:
            self._file.close()
        if self._parquet is not None:
            self._parquet.close()
        elif self.kind == "parquet" and error is None:
            schema = RUN_SCHEMA if self.table == "run" else QRELS_SCHEMA
            pl.DataFrame(schema=schema).write_parquet(self._temporary)
        self._atomic.__exit__(type(error) if error else None, error, None)
