"""Read TREC run and qrels text files.

Their format is told in :mod:`lexiframe.io`. Reading is Polars' multithreaded CSV reader
all the way, with no Python loop over lines:

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

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import polars as pl
from isal import igzip

from lexiframe._compat import collect
from lexiframe._utils import shorten
from lexiframe.errors import LABELS_HINT, NO_HINT, InputError
from lexiframe.io.files import shown, system_name
from lexiframe.io.gzipped import decompress, head, is_gzip
from lexiframe.io.layouts import Layout
from lexiframe.typing import SystemFrom

_SNIFF_BYTES = 1 << 13
_SNIFF_LINES = 16
"""Lines checked to pick a separator: a later line the separator cannot read exactly sends
the file to the general path anyway, so more would only cost time (in Python, per file)."""
_LINE = "__line"
_LINE_NO = "__line_no"
_BAD = "__bad"
_EXTRA = "__extra"
Rows = TypeVar("Rows", pl.DataFrame, pl.LazyFrame)


def _clean_line(line: str, separator: str, layout: Layout) -> bool:
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


_NOT_TEXT = {
    b"BZh": "compressed with bzip2",
    b"\xfd7zXZ\x00": "compressed with xz",
    b"PK\x03\x04": "a zip archive",
    b"\xff\xfe": "UTF-16 text",
    b"\xfe\xff": "UTF-16 text",
    b"PAR1": "parquet (name it .parquet)",
}
"""The starts of files that are not TREC text, and what they are."""


def _not_text(start: bytes) -> str | None:
    """What a file that starts with ``start`` is, when it is not text lexiframe reads."""
    kind = next((kind for magic, kind in _NOT_TEXT.items() if start.startswith(magic)), None)
    if kind is None and b"\x00" in start:
        kind = "binary (it holds NUL bytes)"
    return kind


def _refuse_not_text(path: Path, layout: Layout, start: bytes) -> None:
    kind = _not_text(start)
    if kind is not None:
        raise InputError(
            f"{layout.table} file {shown(path)} is {kind}, not a TREC text file; lexiframe "
            "reads UTF-8 text, plain or gzipped (.gz), and parquet",
            kind="not text",
        )


def _sniff(path: Path, layout: Layout) -> str | None:
    """The single-character separator of a file's first lines, or None (general path)."""
    start = head(path, _SNIFF_BYTES)
    if start is None:
        return None
    _refuse_not_text(path, layout, start)
    complete = len(start) < _SNIFF_BYTES
    text = start.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if not complete:
        lines = lines[:-1]  # may be cut in the middle
    lines = [line.rstrip("\r") for line in lines if line.strip()][:_SNIFF_LINES]
    if not lines:
        if complete:
            raise InputError(f"{layout.table} file {shown(path)} is empty", kind="empty")
        return None
    for separator in ("\t", " "):
        if all(_clean_line(line, separator, layout) for line in lines):
            return separator
    return None


def _fast_plan(source: Path | bytes, separator: str, layout: Layout) -> pl.LazyFrame:
    """Polars' CSV reader on one separator character.

    Only the fields of :attr:`Layout.parsed` are parsed (the others cost a third of the
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


def _line_plan(path: Path | bytes) -> pl.LazyFrame:
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


def _general_plan(path: Path | bytes, layout: Layout, *, diagnose: bool = False) -> pl.LazyFrame:
    """Whole lines split on runs of whitespace; blank lines are dropped.

    ``__bad`` marks a line with the wrong number of fields or a field that is not a number;
    with ``diagnose``, the line, its number and per-field flags are kept for the message.
    """
    tokens = pl.col("__tokens")
    n_fields = tokens.list.len()
    columns: dict[str, pl.Expr] = {}
    failed: dict[str, pl.Expr] = {}
    quoted: dict[str, pl.Expr] = {}  # the start of each number field, for the message
    for index, name in enumerate(layout.fields):
        value = tokens.list.get(index, null_on_oob=True)
        dtype = layout.types.get(name)
        if dtype is not None and name in layout.parsed:
            quoted[name] = _quoted(value, 40)
            number = value.cast(dtype, strict=False)
            failed[name] = value.is_not_null() & number.is_null()
            if dtype is pl.Float64:  # "nan" parses, but orders no ranking
                failed[name] = failed[name] | number.is_nan().fill_null(False)
            value = number
        if name in layout.output:
            columns[name] = value
    bad = (n_fields != len(layout.fields)) | pl.any_horizontal(failed.values())
    plan = _line_plan(path).with_columns(_tokens().alias("__tokens")).filter(n_fields > 0)
    if diagnose:
        return plan.select(
            _LINE_NO,
            _quoted(pl.col(_LINE)).alias(_LINE),  # never a whole long line in memory twice
            n_fields.alias("__n_fields"),
            *(flag.alias(f"__failed_{name}") for name, flag in failed.items()),
            *(value.alias(f"__value_{name}") for name, value in quoted.items()),
            bad.alias(_BAD),
        )
    return plan.select(**columns, **{_BAD: bad})


_QUOTED = 100
"""The characters of a line (or field) an error message quotes at most."""


def _quoted(text: pl.Expr, limit: int = _QUOTED) -> pl.Expr:
    """A line or field as a message quotes it: its first ``limit`` characters and its
    length (a struct), so that a message stays short however long the line is."""
    return pl.struct(text.str.slice(0, limit).alias("text"), text.str.len_chars().alias("length"))


def _quote(quoted: dict[str, object] | None, limit: int = _QUOTED) -> str:
    if quoted is None:
        return "''"
    text, length = str(quoted["text"]), int(quoted["length"])  # type: ignore[call-overload]
    return repr(text) + (f"… ({length} characters)" if length > limit else "")


def _diagnose(
    source: Path | bytes, layout: Layout, *, name: Path | None = None, lines_before: int = 0
) -> None:
    """Raise an :class:`InputError` naming the first malformed line of ``source``, if any
    (``source`` may be a piece of the file ``name`` that starts after ``lines_before``
    lines)."""
    file = source if name is None else name
    try:
        bad = collect(_general_plan(source, layout, diagnose=True).filter(pl.col(_BAD)))
    except pl.exceptions.PolarsError as error:
        _refuse_undecodable(source, layout, file, lines_before)
        raise InputError(
            f"cannot read {layout.table} file {_shown(file)}: {shorten(str(error))}"
        ) from None
    if bad.height == 0:
        return
    first = bad.sort(_LINE_NO).row(0, named=True)
    where = f"{layout.table} file {_shown(file)}, line {first[_LINE_NO] + lines_before}"
    more = f" ({bad.height - 1} more malformed lines)" if bad.height > 1 and not name else ""
    text = first[_LINE]
    hint = NO_HINT
    if first["__n_fields"] != len(layout.fields):
        problem = f"expected {layout.description}, found {first['__n_fields']} fields"
    else:
        field = next(field for field in layout.types if first.get(f"__failed_{field}"))
        value = _quote(first[f"__value_{field}"], 40)
        kind = "a number" if layout.types[field] is pl.Float64 else "an integer"
        problem = f"{field} {value} is not {kind}"
        if field == "relevance" and kind == "an integer":
            hint = LABELS_HINT  # a fractional grade: how to declare fractional labels
        nan = value.strip("'").lower() in ("nan", "-nan", "+nan")
        if nan and layout.types[field] is pl.Float64:  # the score: it parses, as NaN
            problem = f"{field} {value} is not a number that orders a ranking"
    raise InputError(
        f"{where}: {problem}{more}: {_quote(text)}",
        kind="malformed line",
        column=None,
        hint=hint[0],
        cli_hint=hint[1],
    )


def _shown(file: Path | bytes) -> str:
    return shown(file) if isinstance(file, Path) else "(a stream)"


def _refuse_undecodable(
    source: Path | bytes, layout: Layout, file: Path | bytes, lines_before: int
) -> None:
    """Raise an error naming the first line of ``source`` that is not UTF-8 text (or holds
    a NUL byte), if there is one; read in pieces of whole lines, on this error path only."""
    chunks = iter([source]) if isinstance(source, bytes) else _text_chunks(source, 1 << 24)
    line = lines_before + 1
    for chunk in chunks:
        nul = chunk.find(b"\x00")
        try:
            chunk.decode("utf-8")  # whole lines: a character never spans two pieces
            start = -1
        except UnicodeDecodeError as error:
            start = error.start
        if nul >= 0 and (start < 0 or nul < start):
            start, problem = nul, "a NUL byte: not a text file"
        else:
            problem = f"not UTF-8 text (byte {chunk[start : start + 1]!r}); save it as UTF-8"
        if start >= 0:
            line += chunk.count(b"\n", 0, start)
            raise InputError(
                f"{layout.table} file {_shown(file)}, line {line}: {problem}", kind="not text"
            )
        line += chunk.count(b"\n")


def _text_plan(
    path: Path, layout: Layout, separator: str | None, system: str | None
) -> pl.LazyFrame:
    plan = _fast_plan(path, separator, layout) if separator else _general_plan(path, layout)
    return _with_system(plan, layout, system)


def _with_system(plan: pl.LazyFrame, layout: Layout, system: str | None) -> pl.LazyFrame:
    if system is not None:
        plan = plan.with_columns(pl.lit(system, dtype=pl.String).alias("system"))
    return plan.select(*layout.output, _BAD)


def _finish(frame: pl.DataFrame | None) -> pl.DataFrame | None:
    """Drop the blank lines of a collected text plan; None when a line is malformed."""
    if frame is None or frame.drop_in_place(_BAD).any():  # in place: no copy of the frame
        return None
    if frame["query"].null_count():  # blank lines of the fast path: all fields null
        frame = frame.filter(pl.col("query").is_not_null())
    if "score" in frame.columns and frame["score"].is_nan().any():
        return None  # read again line by line, to name the line
    return frame


def _try_collect(plan: pl.LazyFrame) -> pl.DataFrame | None:
    try:
        return _finish(collect(plan))
    except pl.exceptions.PolarsError:
        return None


def read_text(files: Sequence[Path], layout: Layout, system_from: SystemFrom) -> pl.DataFrame:
    """Read TREC text files: all at once on the fast path, file by file when one is bad."""
    frames = list(iter_text(files, layout, system_from))
    return frames[0] if len(frames) == 1 else pl.concat(frames)


def iter_text(
    files: Sequence[Path],
    layout: Layout,
    system_from: SystemFrom,
    batch_bytes: int | None = None,
    *,
    split_files: bool = False,
) -> Iterator[pl.DataFrame]:
    """Read TREC text files a batch of whole files at a time (see :func:`_batches`).

    The gzipped files of the next batch are decompressed in threads while this batch is
    parsed and while the caller works on it, so that both cores stay busy. With
    ``split_files``, a file larger than a batch is read in pieces of whole rankings
    (:func:`_pieces`), so that memory holds one piece however large the file.
    """
    for _, frame in text_parts(files, layout, system_from, batch_bytes, split_files=split_files):
        yield frame


def text_parts(
    files: Sequence[Path],
    layout: Layout,
    system_from: SystemFrom,
    batch_bytes: int | None = None,
    *,
    split_files: bool = False,
    file_column: str | None = None,
) -> Iterator[tuple[list[Path], pl.DataFrame]]:
    """:func:`iter_text`, each frame with the files its rows come from. With
    ``file_column``, each row also says which file it comes from: the file's index in
    ``files`` (UInt32), in a column of that name."""
    systems = [system_name(path) if system_from == "filename" else None for path in files]
    separators = [_sniff(path, layout) for path in files]
    jobs = list(zip(files, separators, systems, strict=True))
    first = 0  # the index in files of the group's first file (groups follow files' order)

    def tagged(rows: Rows, index: int) -> Rows:
        if file_column is None:
            return rows
        return rows.with_columns(pl.lit(first + index, dtype=pl.UInt32).alias(file_column))

    gzipped = {path for path in files if is_gzip(path)}
    limit = _BATCH_BYTES if batch_bytes is None else batch_bytes
    groups = list(_batches(jobs, gzipped, limit))
    with ThreadPoolExecutor(max(1, pl.thread_pool_size())) as pool:

        def in_pieces(group: list[_Job]) -> bool:
            return split_files and len(group) == 1 and _size(group[0][0], gzipped) > limit

        def decompressing(group: list[_Job]) -> dict[Path, Future[bytes]]:
            if in_pieces(group):  # streamed, never decompressed whole
                return {}
            fast = [path for path, separator, _ in group if separator and path in gzipped]
            return {path: pool.submit(decompress, path) for path in fast}

        upcoming = decompressing(groups[0]) if groups else {}
        for index, group in enumerate(groups):
            if in_pieces(group):
                upcoming = decompressing(groups[index + 1]) if index + 1 < len(groups) else {}
                for piece in _pieces(group[0], layout, max(limit * _PLAIN_RATIO, _PIECE_MIN)):
                    yield [group[0][0]], tagged(piece, 0)
                first += 1
                continue
            texts = {path: future.result() for path, future in upcoming.items()}
            upcoming = decompressing(groups[index + 1]) if index + 1 < len(groups) else {}
            plans = _fast_plans(group, layout, texts)
            frame = _try_collect(pl.concat(map(tagged, plans, range(len(group)))))
            if frame is None:
                # Some file breaks the fast path: a malformed line, or an irregular
                # separator further down than the sniffed lines. Read each file on its
                # own, the general way where needed.
                frame = pl.concat(
                    [
                        tagged(_read_one(path, layout, sep, system), index)
                        for index, (path, sep, system) in enumerate(group)
                    ]
                )
            first += len(group)
            del texts
            yield [path for path, _, _ in group], frame


_Job = tuple[Path, "str | None", "str | None"]  # a file, its separator, its system name

_BATCH_BYTES = 64 << 20
"""Compressed bytes of gzipped files decompressed at a time (about 5 times as much text)."""


_PLAIN_RATIO = 5
_PIECE_MIN = 1 << 16
"""The smallest piece of a large file read at a time, in bytes of text."""
"""How many bytes of text a byte of gzipped run holds, about (a batch's measure)."""


def _size(path: Path, gzipped: set[Path]) -> int:
    """A file's size in gzipped bytes: a plain file counts a fifth of its size."""
    return path.stat().st_size // (1 if path in gzipped else _PLAIN_RATIO)


def _batches(jobs: list[_Job], gzipped: set[Path], limit: int) -> Iterator[list[_Job]]:
    """The files in batches of at most ``limit`` compressed bytes (or one file); a plain
    text file counts a fifth of its size, as much as its text would take gzipped."""
    batch: list[_Job] = []
    size = 0
    for job in jobs:
        job_size = _size(job[0], gzipped)
        if batch and size + job_size > limit:
            yield batch
            batch, size = [], 0
        batch.append(job)
        size += job_size
    if batch:
        yield batch


def _fast_plans(jobs: list[_Job], layout: Layout, texts: dict[Path, bytes]) -> list[pl.LazyFrame]:
    """The plans of a batch of files; ``texts`` holds the decompressed gzipped files.

    ISA-L decompresses gzip about twice as fast as zlib, in parallel threads (it releases
    the GIL); Polars then parses the text in memory, as it would after decompressing it.
    """
    plans = []
    for path, separator, system in jobs:
        if path in texts and separator:
            plan = _fast_plan(texts.pop(path), separator, layout)
            plans.append(_with_system(plan, layout, system))
        else:
            plans.append(_text_plan(path, layout, separator, system))
    return plans


def _read_one(
    path: Path, layout: Layout, separator: str | None, system: str | None
) -> pl.DataFrame:
    frame = None
    if separator is not None:
        frame = _try_collect(_text_plan(path, layout, separator, system))
    if frame is None:
        frame = _try_collect(_text_plan(path, layout, None, system))
    if frame is None:
        _diagnose(path, layout)
        raise InputError(f"cannot read {layout.table} file {shown(path)}")
    return frame


def _pieces(job: _Job, layout: Layout, text_bytes: int) -> Iterator[pl.DataFrame]:
    """A large file in pieces of about ``text_bytes`` of text, each of whole rankings.

    The file is decompressed as a stream and cut after a line; the rows of the ranking a
    piece ends with, (system, query) of its last row, move on to the next piece, so that a
    ranking whose rows follow each other in the file stays in one piece. (A ranking whose
    rows are scattered in the file ends up in several pieces: the caller sees it.)
    """
    path, separator, system = job
    carried: pl.DataFrame | None = None
    lines_before = 0
    for text in _read_ahead(_text_chunks(path, text_bytes)):
        frame = None
        if separator is not None:
            frame = _try_collect(_with_system(_fast_plan(text, separator, layout), layout, system))
        if frame is None:
            general = _with_system(_general_plan(text, layout), layout, system)
            frame = _try_collect(general)
        if frame is None:
            _diagnose(text, layout, name=path, lines_before=lines_before)
            raise InputError(f"cannot read {layout.table} file {shown(path)}")
        lines_before += text.count(b"\n")
        if carried is not None:
            frame = pl.concat([carried, frame])
        frame, carried = split_last_ranking(frame)
        if frame.height:
            yield frame
    if carried is not None and carried.height:
        yield carried


def split_last_ranking(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows before the last ranking's run of rows at the end, and that run."""
    if frame.height == 0:
        return frame, frame
    last = frame.select("system", "query").row(-1)
    same = (pl.col("system") == last[0]) & (pl.col("query") == last[1])
    start = frame.select((~same).arg_true().max()).item()
    cut = 0 if start is None else start + 1
    return frame.slice(0, cut), frame.slice(cut)


def _text_chunks(path: Path, size: int) -> Iterator[bytes]:
    """The text of a (possibly gzipped) file in chunks of about ``size`` bytes, each ending
    at the end of a line."""
    opener = igzip.open if is_gzip(path) else open
    with opener(path, "rb") as stream:
        rest = b""
        while True:
            block = stream.read(size)
            if not block:
                break
            block = rest + block
            end = block.rfind(b"\n")
            if end < 0:
                rest = block
                continue
            rest = block[end + 1 :]
            yield block[: end + 1]
        if rest.strip():
            yield rest


def _read_ahead(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks, the next one decompressed in a thread while this one is parsed."""
    with ThreadPoolExecutor(1) as pool:
        upcoming = pool.submit(next, chunks, None)
        while True:
            chunk = upcoming.result()
            if chunk is None:
                return
            upcoming = pool.submit(next, chunks, None)
            yield chunk
