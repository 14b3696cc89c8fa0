"""Read and write TREC runs and qrels, parquet and other tables.

TREC run files hold six whitespace-separated fields per line, ``query Q0 doc rank score
system``; qrels files four, ``query iteration doc relevance``. Fields may be separated by
tabs or runs of spaces, lines may carry leading or trailing whitespace (and ``\\r\\n``
endings), files may be gzipped (recognised by their content, whatever their name), and
blank lines are skipped. Ids stay strings: trec_eval compares them as strings.

Reading is Polars' multithreaded CSV reader all the way, with no Python loop over lines:

- a look at each file's first 8 KiB picks its separator: when every line there has its
  fields separated by exactly one tab, or exactly one space (the common case), the file is
  read with ``scan_csv`` on that byte (a tab-separated file may pad its scores with
  blanks, as trec_eval's ``results.test`` does);
- anything else is read as whole lines, split on runs of whitespace with vectorised string
  expressions (about three times slower);
- only the fields kept are parsed (not Q0, nor rank unless asked for: trec_eval ignores
  both), plus the last field, so that a short line shows;
- gzipped files are decompressed with ISA-L in threads, in batches of about 64 MB of
  compressed files, and the lazy scans of a batch are concatenated and collected once, so
  that Polars parses them in parallel: a quarter faster than ``pl.scan_csv`` on all the
  files with every field.

A later line that the guessed separator cannot read exactly (too many or too few fields,
an empty field, a number that does not parse, a padded id in a tab-separated file) makes
that file be read again the general way; if the line is malformed, the error names the
file, the line number and the line. One thing is not checked on the fast path: in a
space-separated file, a tab *inside* one of six space-separated fields stays part of that
field (such a line has more than six tokens and is malformed anyway).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Literal

import polars as pl
from isal import igzip

from lexiframe import _progress
from lexiframe._compat import collect
from lexiframe._utils import quote_names
from lexiframe.errors import InputError, SchemaError
from lexiframe.typing import SystemFrom

PathLike = str | os.PathLike[str]
Paths = PathLike | Sequence[PathLike]
"""One path, several paths, or a directory (every file in it, sorted by name)."""

RUN_SCHEMA = pl.Schema(
    {"system": pl.String, "query": pl.String, "doc": pl.String, "score": pl.Float64}
)
"""The columns of :func:`read_run` (``rank``, Int64, follows with ``rank=True``)."""

QRELS_SCHEMA = pl.Schema({"query": pl.String, "doc": pl.String, "relevance": pl.Int64})
"""The columns of :func:`read_qrels`."""

WRITE_FORMATS = (".parquet", ".csv", ".jsonl", ".ndjson")
"""The extensions :func:`write_frame` knows."""

_SNIFF_BYTES = 1 << 13
_GZIP_MAGIC = b"\x1f\x8b"
_LINE = "__line"
_LINE_NO = "__line_no"
_BAD = "__bad"
_EXTRA = "__extra"


@dataclasses.dataclass(frozen=True)
class _Layout:
    """The fields of one kind of TREC text file."""

    table: str
    fields: tuple[str, ...]
    types: dict[str, type[pl.DataType]]
    output: tuple[str, ...]

    @property
    def schema(self) -> dict[str, type[pl.DataType]]:
        return {name: self.types.get(name, pl.String) for name in self.fields}

    @property
    def output_schema(self) -> pl.Schema:
        return pl.Schema({name: self.types.get(name, pl.String) for name in self.output})

    @property
    def parsed(self) -> tuple[str, ...]:
        """The fields read: the output ones and the last one (a short line lacks it)."""
        return tuple(name for name in self.fields if name in self.output or name == self.fields[-1])

    @property
    def description(self) -> str:
        return f"{len(self.fields)} whitespace-separated fields ({' '.join(self.fields)})"


_RUN = _Layout(
    table="run",
    fields=("query", "Q0", "doc", "rank", "score", "system"),
    types={"rank": pl.Int64, "score": pl.Float64},
    output=tuple(RUN_SCHEMA),
)
_RANKED_RUN = dataclasses.replace(_RUN, output=(*RUN_SCHEMA, "rank"))
_QRELS = _Layout(
    table="qrels",
    fields=("query", "iteration", "doc", "relevance"),
    types={"relevance": pl.Int64},
    output=tuple(QRELS_SCHEMA),
)


# ---------------------------------------------------------------------------------------------
# Finding the files


def _files(paths: Paths, table: str) -> list[Path]:
    """Expand ``paths`` (a path, paths, or directories) into a list of files."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise InputError(f"no {table} files given")
    files: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            inside = sorted(
                child
                for child in path.iterdir()
                if child.is_file() and not child.name.startswith(".")
            )
            if not inside:
                raise InputError(f"no {table} files found in directory {str(path)!r}")
            files.extend(inside)
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{table} file not found: {str(path)!r}")
    return files


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def _system_name(path: Path) -> str:
    """The system id of ``system_from="filename"``: the base name without .gz/.parquet."""
    name = path.name
    for suffix in (".gz", ".parquet"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


# ---------------------------------------------------------------------------------------------
# Text files: sniffing, fast path, general path, diagnosis


def _head(path: Path) -> bytes | None:
    """The first bytes of a (possibly gzipped) file; None for other compressions."""
    with open(path, "rb") as raw:
        start = raw.read(_SNIFF_BYTES)
    if start[:2] == _GZIP_MAGIC:
        try:
            with gzip.open(path, "rb") as unzipped:
                return unzipped.read(_SNIFF_BYTES)
        except (OSError, EOFError) as error:
            raise InputError(f"cannot decompress {str(path)!r}: {error}") from None
    if start[:4] == b"\x28\xb5\x2f\xfd":  # zstd: leave it to Polars
        return None
    return start


def _clean_line(line: str, separator: str, layout: _Layout) -> bool:
    """Whether a line splits into the layout's fields on single ``separator`` characters."""
    parts = line.split(separator)
    if len(parts) != len(layout.fields):
        return False
    for part, name in zip(parts, layout.fields, strict=True):
        tokens = part.split()
        # Polars' float parser trims blanks around a number (trec_eval's results.test pads
        # its scores); every other field must be exactly one token.
        if tokens != [part] and not (layout.types.get(name) is pl.Float64 and len(tokens) == 1):
            return False
    return True


def _sniff(path: Path, layout: _Layout) -> str | None:
    """The single-character separator of a file's first lines, or None (general path)."""
    head = _head(path)
    if head is None:
        return None
    complete = len(head) < _SNIFF_BYTES
    text = head.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if not complete:
        lines = lines[:-1]  # may be cut in the middle
    lines = [line.rstrip("\r") for line in lines if line.strip()]
    if not lines:
        if complete:
            raise InputError(f"{layout.table} file {str(path)!r} is empty")
        return None
    for separator in ("\t", " "):
        if all(_clean_line(line, separator, layout) for line in lines):
            return separator
    return None


def _fast_plan(source: Path | bytes, separator: str, layout: _Layout) -> pl.LazyFrame:
    """Polars' CSV reader on one separator character.

    Only the fields of :attr:`_Layout.parsed` are parsed (the others cost a third of the
    time and trec_eval ignores them too), and one field more, which holds a value only on a
    line with too many fields. A line with too many or too few fields, an empty field or a
    field that is not a number raises or sets ``__bad``. A blank line reads as all nulls:
    it is dropped after collection. In a tab-separated file, a string field holding a space
    (padding) also sets ``__bad``, so that such files take the general path.
    """
    lines = pl.scan_csv(
        source,
        has_header=False,
        separator=separator,
        quote_char=None,
        schema={**layout.schema, _EXTRA: pl.String},
        missing_columns="insert",
        infer_schema=False,
    )
    fields = [pl.col(name) for name in layout.parsed]
    bad = pl.any_horizontal(field.is_null() for field in fields) & pl.any_horizontal(
        field.is_not_null() for field in fields
    )
    bad = bad | pl.col(_EXTRA).is_not_null()
    if separator == "\t":
        strings = [name for name in layout.parsed if name not in layout.types]
        bad = bad | pl.any_horizontal(
            pl.col(name).str.contains(" ", literal=True) for name in strings
        )
    outputs = [name for name in layout.fields if name in layout.output]
    return lines.select(*outputs, bad.fill_null(False).alias(_BAD))


def _line_plan(path: Path) -> pl.LazyFrame:
    """Every line of a file as one string, with its 1-based line number."""
    return pl.scan_csv(
        path,
        has_header=False,
        separator="\x00",
        quote_char=None,
        schema={_LINE: pl.String},
        empty_string_is_null=False,
        row_index_name=_LINE_NO,
        row_index_offset=1,
        infer_schema=False,
    )


def _tokens() -> pl.Expr:
    """The whitespace-separated tokens of a line (tabs and runs of spaces separate)."""
    return (
        pl.col(_LINE)
        .str.replace_all("\t", " ", literal=True)
        .str.split(" ")
        .list.eval(pl.element().filter(pl.element() != ""))
    )


def _general_plan(path: Path, layout: _Layout, *, diagnose: bool = False) -> pl.LazyFrame:
    """Whole lines split on runs of whitespace; blank lines are dropped.

    ``__bad`` marks a line with the wrong number of fields or a field that is not a number;
    with ``diagnose``, the line, its number and per-field flags are kept for the message.
    """
    tokens = pl.col("__tokens")
    n_fields = tokens.list.len()
    columns: dict[str, pl.Expr] = {}
    failed: dict[str, pl.Expr] = {}
    for index, name in enumerate(layout.fields):
        value = tokens.list.get(index, null_on_oob=True)
        dtype = layout.types.get(name)
        if dtype is not None and name in layout.parsed:
            failed[name] = value.is_not_null() & value.cast(dtype, strict=False).is_null()
            value = value.cast(dtype, strict=False)
        if name in layout.output:
            columns[name] = value
    bad = (n_fields != len(layout.fields)) | pl.any_horizontal(failed.values())
    plan = _line_plan(path).with_columns(_tokens().alias("__tokens")).filter(n_fields > 0)
    if diagnose:
        return plan.select(
            _LINE_NO,
            _LINE,
            n_fields.alias("__n_fields"),
            *(flag.alias(f"__failed_{name}") for name, flag in failed.items()),
            bad.alias(_BAD),
        )
    return plan.select(**columns, **{_BAD: bad})


def _diagnose(path: Path, layout: _Layout) -> None:
    """Raise an :class:`InputError` naming the first malformed line of ``path``, if any."""
    try:
        bad = collect(_general_plan(path, layout, diagnose=True).filter(pl.col(_BAD)))
    except pl.exceptions.PolarsError as error:
        hint = ""
        if "more fields" in str(error):
            hint = " (it holds a NUL byte: is it a text file?)"
        raise InputError(f"cannot read {layout.table} file {str(path)!r}{hint}: {error}") from None
    if bad.height == 0:
        return
    first = bad.sort(_LINE_NO).row(0, named=True)
    where = f"{layout.table} file {str(path)!r}, line {first[_LINE_NO]}"
    more = f" ({bad.height - 1} more malformed lines)" if bad.height > 1 else ""
    text = first[_LINE]
    if first["__n_fields"] != len(layout.fields):
        problem = f"expected {layout.description}, found {first['__n_fields']} fields"
    else:
        name = next(name for name in layout.types if first.get(f"__failed_{name}"))
        value = text.split()[layout.fields.index(name)]
        kind = "a number" if layout.types[name] is pl.Float64 else "an integer"
        problem = f"{name} {value!r} is not {kind}"
    raise InputError(f"{where}: {problem}{more}: {text!r}")


def _text_plan(
    path: Path, layout: _Layout, separator: str | None, system: str | None
) -> pl.LazyFrame:
    plan = _fast_plan(path, separator, layout) if separator else _general_plan(path, layout)
    return _with_system(plan, layout, system)


def _with_system(plan: pl.LazyFrame, layout: _Layout, system: str | None) -> pl.LazyFrame:
    if system is not None:
        plan = plan.with_columns(pl.lit(system, dtype=pl.String).alias("system"))
    return plan.select(*layout.output, _BAD)


def _finish(frame: pl.DataFrame | None) -> pl.DataFrame | None:
    """Drop the blank lines of a collected text plan; None when a line is malformed."""
    if frame is None or frame.drop_in_place(_BAD).any():  # in place: no copy of the frame
        return None
    if frame["query"].null_count():  # blank lines of the fast path: all fields null
        frame = frame.filter(pl.col("query").is_not_null())
    return frame


def _try_collect(plan: pl.LazyFrame) -> pl.DataFrame | None:
    try:
        return _finish(collect(plan))
    except pl.exceptions.PolarsError:
        return None


def _read_text(files: Sequence[Path], layout: _Layout, system_from: SystemFrom) -> pl.DataFrame:
    """Read TREC text files: all at once on the fast path, file by file when one is bad."""
    systems = [_system_name(path) if system_from == "filename" else None for path in files]
    separators = [_sniff(path, layout) for path in files]
    jobs = list(zip(files, separators, systems, strict=True))
    gzipped = {path for path in files if _is_gzip(path)}
    frames = []
    for group in _batches(jobs, gzipped):
        frame = _try_collect(pl.concat(_fast_plans(group, layout, gzipped)))
        if frame is None:
            # Some file breaks the fast path: a malformed line, or an irregular separator
            # further down than the sniffed lines. Read each file on its own, the general
            # way where needed.
            frame = pl.concat([_read_one(path, layout, sep, system) for path, sep, system in group])
        frames.append(frame)
    return frames[0] if len(frames) == 1 else pl.concat(frames)


_Job = tuple[Path, "str | None", "str | None"]  # a file, its separator, its system name

_BATCH_BYTES = 64 << 20
"""Compressed bytes of gzipped files decompressed at a time (about 5 times as much text)."""


def _batches(jobs: list[_Job], gzipped: set[Path]) -> Iterator[list[_Job]]:
    """The files in batches of at most :data:`_BATCH_BYTES` of gzipped files (or one file)."""
    batch: list[_Job] = []
    size = 0
    for job in jobs:
        job_size = job[0].stat().st_size if job[0] in gzipped else 0
        if batch and size + job_size > _BATCH_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(job)
        size += job_size
    if batch:
        yield batch


def _fast_plans(jobs: list[_Job], layout: _Layout, gzipped: set[Path]) -> list[pl.LazyFrame]:
    """The plans of a batch of files; gzipped files on the fast path are decompressed here.

    ISA-L decompresses gzip about twice as fast as zlib, in parallel threads (it releases
    the GIL); Polars then parses the text in memory, as it would after decompressing it.
    """
    fast = [path for path, separator, _ in jobs if separator and path in gzipped]
    with ThreadPoolExecutor(max(1, min(len(fast), pl.thread_pool_size()))) as pool:
        texts = dict(zip(fast, pool.map(_decompress, fast), strict=True))
    plans = []
    for path, separator, system in jobs:
        if path in texts:
            plan = _fast_plan(texts.pop(path), separator, layout)
            plans.append(_with_system(plan, layout, system))
        else:
            plans.append(_text_plan(path, layout, separator, system))
    return plans


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as raw:
        return raw.read(2) == _GZIP_MAGIC


def _decompress(path: Path) -> bytes:
    try:
        return igzip.decompress(path.read_bytes())
    except (OSError, EOFError, ValueError) as error:
        raise InputError(f"cannot decompress {str(path)!r}: {error}") from None


def _read_one(
    path: Path, layout: _Layout, separator: str | None, system: str | None
) -> pl.DataFrame:
    frame = None
    if separator is not None:
        frame = _try_collect(_text_plan(path, layout, separator, system))
    if frame is None:
        frame = _try_collect(_text_plan(path, layout, None, system))
    if frame is None:
        _diagnose(path, layout)
        raise InputError(f"cannot read {layout.table} file {str(path)!r}")
    return frame


# ---------------------------------------------------------------------------------------------
# Parquet


def _parquet_plan(files: Sequence[Path], layout: _Layout, system_from: SystemFrom) -> pl.LazyFrame:
    plans = []
    for path in files:
        plan = pl.scan_parquet(path)
        try:
            schema = plan.collect_schema()
        except pl.exceptions.PolarsError as error:
            raise InputError(f"cannot read parquet file {str(path)!r}: {error}") from None
        plans.append(_conform(plan, schema, path, layout, system_from))
    return pl.concat(plans, how="vertical")


def _conform(
    plan: pl.LazyFrame,
    schema: pl.Schema,
    path: Path,
    layout: _Layout,
    system_from: SystemFrom,
) -> pl.LazyFrame:
    """Check a parquet file's columns and cast them to the reader's schema."""
    where = f"{layout.table} parquet file {str(path)!r}"
    required = [name for name in layout.output if name != "rank"]
    if system_from == "filename" and "system" in required:
        required.remove("system")
    missing = [name for name in required if name not in schema]
    if missing:
        raise SchemaError(
            f"{where} has no column {quote_names(missing)}; it needs "
            f"{quote_names(required)} and has {quote_names(list(schema))}"
        )
    columns: dict[str, pl.Expr] = {}
    for name in layout.output:
        if name == "system" and system_from == "filename":
            columns[name] = pl.lit(_system_name(path), dtype=pl.String)
            continue
        if name == "rank" and name not in schema:
            continue
        dtype = schema[name]
        column = pl.col(name)
        if name in ("query", "doc"):
            if dtype.is_integer():
                columns[name] = column.cast(pl.Int64)
            elif dtype in (pl.String, pl.Categorical) or dtype == pl.Enum:
                columns[name] = column.cast(pl.String)
            else:
                raise SchemaError(
                    f"column {name!r} of {where} holds ids, which must be strings or integers, "
                    f"not {dtype}"
                )
        elif name == "system":
            if not (dtype.is_integer() or dtype in (pl.String, pl.Categorical) or dtype == pl.Enum):
                raise SchemaError(f"column 'system' of {where} must hold strings, not {dtype}")
            columns[name] = column.cast(pl.String)
        else:
            expected = layout.output_schema[name]
            numeric_ok = dtype.is_numeric() if expected == pl.Float64 else dtype.is_integer()
            if not numeric_ok:
                kind = "numeric" if expected == pl.Float64 else "integer"
                raise SchemaError(f"column {name!r} of {where} must be {kind}, not {dtype}")
            columns[name] = column.cast(expected)
    plan = plan.select(**columns)
    if "rank" in layout.output and "rank" not in columns:
        plan = plan.with_columns(_trec_rank().alias("rank"))
    return plan


def _trec_rank() -> pl.Expr:
    """trec_eval's rank: score descending, then doc id descending as a string."""
    return (
        pl.struct(pl.col("score"), pl.col("doc").cast(pl.String))
        .rank("ordinal", descending=True)
        .over("system", "query")
        .cast(pl.Int64)
    )


# ---------------------------------------------------------------------------------------------
# Public readers


def _check_system_from(system_from: str) -> None:
    if system_from not in ("field", "filename"):
        raise InputError(f"system_from must be 'field' or 'filename', not {system_from!r}")


def _read(
    paths: Paths, layout: _Layout, system_from: SystemFrom, progress: bool | None = False
) -> pl.DataFrame:
    _check_system_from(system_from)
    files = _files(paths, layout.table)
    text = [path for path in files if not _is_parquet(path)]
    parquet = [path for path in files if _is_parquet(path)]
    frames = []
    shown = _progress.enabled(progress)
    with _progress.bar(len(files), progress=shown, desc=f"reading {layout.table}") as bar:
        # With a bar, a group of files at a time so that it moves (Polars reads the files of
        # a group in parallel); without, all files in one go.
        group = max(4, 2 * pl.thread_pool_size()) if shown else max(len(text), 1)
        for start in range(0, len(text), group):
            chunk = text[start : start + group]
            frames.append(_read_text(chunk, layout, system_from))
            bar.update(len(chunk))
        if parquet:
            frames.append(collect(_parquet_plan(parquet, layout, system_from)))
            bar.update(len(parquet))
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical_relaxed")
    if frame.height == 0:
        raise InputError(f"the {layout.table} files hold no rows: {_names(files)}")
    return frame


def _names(files: Sequence[Path], limit: int = 3) -> str:
    shown = ", ".join(repr(str(path)) for path in files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")


def _scan(paths: Paths, layout: _Layout, system_from: SystemFrom) -> pl.LazyFrame:
    _check_system_from(system_from)
    files = _files(paths, layout.table)
    text = [path for path in files if not _is_parquet(path)]
    parquet = [path for path in files if _is_parquet(path)]
    plans = []
    if text:
        plans.append(_scan_text(text, layout, system_from))
    if parquet:
        plans.append(_parquet_plan(parquet, layout, system_from))
    return plans[0] if len(plans) == 1 else pl.concat(plans, how="vertical_relaxed")


def _scan_text(files: Sequence[Path], layout: _Layout, system_from: SystemFrom) -> pl.LazyFrame:
    """A LazyFrame over text files that reads a group of files at a time when collected."""
    from polars.io.plugins import register_io_source

    group = max(4, 2 * pl.thread_pool_size())
    schema = layout.output_schema

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        remaining = n_rows
        for start in range(0, len(files), group):
            frame = _read_text(files[start : start + group], layout, system_from)
            if predicate is not None:
                frame = frame.filter(predicate)
            if with_columns is not None:
                frame = frame.select(with_columns)
            if remaining is not None:
                frame = frame.head(remaining)
                remaining -= frame.height
            yield frame
            if remaining is not None and remaining <= 0:
                return

    return register_io_source(source, schema=schema, explain_name=f"lexiframe {layout.table}")


def read_run(
    paths: Paths,
    *,
    system_from: SystemFrom = "field",
    rank: bool = False,
    progress: bool | None = None,
) -> pl.DataFrame:
    """Read TREC run files (plain or gzipped) or parquet files into one run frame.

    Args:
        paths: a file, several files, or a directory (every file in it not starting with a
            dot, sorted by name). Files ending in ``.parquet`` are read as parquet (columns
            system, query, doc, score and optionally rank), the others as TREC text:
            ``query Q0 doc rank score system``, separated by tabs or spaces.
        system_from: ``"field"`` takes the system from the sixth field (the ``system``
            column of parquet), ``"filename"`` from the file's name without ``.gz`` or
            ``.parquet``.
        rank: also read the rank field (parquet: the ``rank`` column), for
            ``positions(..., rank_by="rank")``. trec_eval ignores it and ranks by score, and
            skipping it reads text files about a sixth faster.
        progress: a progress bar over the files on standard error (``pip install
            'lexiframe[progress]'``). ``None``, the default, shows one only in interactive
            use: when standard error is a terminal, tqdm is installed and the environment
            variable ``LEXIFRAME_PROGRESS`` is not ``"0"``. ``True`` always shows one
            (``ImportError`` without tqdm), ``False`` never.

    Returns:
        system (String), query (String), doc (String), score (Float64), and with ``rank``,
        rank (Int64). Query and doc ids of text files stay strings; integer ids of parquet
        files stay Int64. A parquet file without a rank column gets trec_eval's ranks
        (score descending, then doc id descending as a string). Rows come file by file, each
        in its own order.

    Raises:
        InputError: no files; an empty file; a line without six fields, or with a score
            (with ``rank``, a rank) that is not a number; the message names the file, line
            number and line.
        SchemaError: a parquet file without the columns or with the wrong types.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "bm25.txt").write_text(
        ...     "401 Q0 D1 1 12.5 bm25\\n401\\tQ0\\tD2\\t2\\t  11.0\\tbm25\\n")
        >>> read_run(folder / "bm25.txt", rank=True)
        shape: (2, 5)
        ┌────────┬───────┬─────┬───────┬──────┐
        │ system ┆ query ┆ doc ┆ score ┆ rank │
        │ ---    ┆ ---   ┆ --- ┆ ---   ┆ ---  │
        │ str    ┆ str   ┆ str ┆ f64   ┆ i64  │
        ╞════════╪═══════╪═════╪═══════╪══════╡
        │ bm25   ┆ 401   ┆ D1  ┆ 12.5  ┆ 1    │
        │ bm25   ┆ 401   ┆ D2  ┆ 11.0  ┆ 2    │
        └────────┴───────┴─────┴───────┴──────┘
        >>> read_run(folder, system_from="filename")["system"].unique().to_list()
        ['bm25.txt']
    """
    return _read(paths, _RANKED_RUN if rank else _RUN, system_from, progress)


def scan_run(
    paths: Paths,
    *,
    system_from: SystemFrom = "field",
    rank: bool = False,
    progress: bool | None = None,
) -> pl.LazyFrame:
    """Lazily read TREC run files or parquet files: :func:`read_run` as a LazyFrame.

    The files are listed and their first lines checked now; they are read when the frame is
    collected, a group of files at a time (parquet files with Polars' own scan, with
    predicate and projection pushdown). Malformed lines raise :class:`InputError` then.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
        >>> _ = path.write_text("401 Q0 D1 1 12.5 bm25\\n402 Q0 D1 1 3.0 bm25\\n")
        >>> lazy = scan_run(path)
        >>> lazy.filter(pl.col("query") == "402").select("doc", "score").collect()
        shape: (1, 2)
        ┌─────┬───────┐
        │ doc ┆ score │
        │ --- ┆ ---   │
        │ str ┆ f64   │
        ╞═════╪═══════╡
        │ D1  ┆ 3.0   │
        └─────┴───────┘
    """
    del progress
    return _scan(paths, _RANKED_RUN if rank else _RUN, system_from)


def read_qrels(path: Paths) -> pl.DataFrame:
    """Read TREC qrels (``query iteration doc relevance``, plain or gzipped) or parquet.

    Args:
        path: a file, several files or a directory, as in :func:`read_run`. Parquet files
            need columns query, doc and relevance (integer).

    Returns:
        query (String), doc (String), relevance (Int64); integer ids of parquet stay Int64.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("401 0 D1 2\\n401 0 D2 0\\n")
        >>> read_qrels(path).sort("query", "doc").rows()
        [('401', 'D1', 2), ('401', 'D2', 0)]
    """
    return _read(path, _QRELS, "field")


def scan_qrels(path: Paths) -> pl.LazyFrame:
    """Lazily read TREC qrels or parquet: :func:`read_qrels` as a LazyFrame.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("401 0 D1 2\\n401 0 D2 0\\n")
        >>> scan_qrels(path).filter(pl.col("relevance") > 0).collect().rows()
        [('401', 'D1', 2)]
    """
    return _scan(path, _QRELS, "field")


# ---------------------------------------------------------------------------------------------
# Writing


@contextlib.contextmanager
def _atomic(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it to ``path`` only on success.

    The temporary name is hidden (``.name.<random>.tmp``) and removed on failure, so a
    failed write leaves neither a partial ``path`` nor a stray file; an existing ``path``
    is kept until the new one is complete.
    """
    target = Path(path)
    temporary = target.parent / f".{target.name}.{secrets.token_hex(8)}.tmp"
    try:
        yield temporary
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


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
            f"cannot write a {suffix or 'extension-less'} file: the supported extensions are "
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
    target = Path(path)
    write = _writer(target.suffix.lower())
    data = _as_frame(frame)
    with _atomic(target) as temporary:
        write(data, temporary)
    return target


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
        frame = frame.with_columns(_trec_rank().alias("rank"))
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


class _ChunkWriter:
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

    def __enter__(self) -> _ChunkWriter:
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
