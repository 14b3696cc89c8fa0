"""Read or scan a run or qrels table from its files, TREC text or parquet."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import polars as pl

from lexiframe import _progress
from lexiframe._compat import collect
from lexiframe._utils import lazy_frames
from lexiframe.errors import InputError
from lexiframe.io.files import Paths, check_system_names, find_files, is_parquet, quote_files
from lexiframe.io.layouts import Layout
from lexiframe.io.parquet import parquet_pieces, parquet_plan
from lexiframe.io.trec import read_text, text_parts
from lexiframe.typing import SystemFrom


def _check_system_from(system_from: str) -> None:
    if system_from not in ("field", "filename"):
        raise InputError(f"system_from must be 'field' or 'filename', not {system_from!r}")


def _find(paths: Paths, layout: Layout, system_from: SystemFrom) -> list[Path]:
    files = find_files(paths, layout.table)
    if system_from == "filename":
        check_system_names(files)
    return files


def read_table(
    paths: Paths, layout: Layout, system_from: SystemFrom, progress: bool | None = False
) -> pl.DataFrame:
    _check_system_from(system_from)
    files = _find(paths, layout, system_from)
    text = [path for path in files if not is_parquet(path)]
    parquet = [path for path in files if is_parquet(path)]
    frames = []
    shown = _progress.enabled(progress)
    with _progress.bar(len(files), progress=shown, desc=f"reading {layout.table}") as bar:
        # With a bar, a group of files at a time so that it moves (Polars reads the files of
        # a group in parallel); without, all files in one go.
        group = max(4, 2 * pl.thread_pool_size()) if shown else max(len(text), 1)
        for start in range(0, len(text), group):
            chunk = text[start : start + group]
            frames.append(read_text(chunk, layout, system_from))
            bar.update(len(chunk))
        if parquet:
            frames.append(collect(parquet_plan(parquet, layout, system_from)))
            bar.update(len(parquet))
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical_relaxed")
    if frame.height == 0:
        raise InputError(f"the {layout.table} files hold no rows: {quote_files(files)}")
    return frame


def iter_table(
    paths: Paths, layout: Layout, system_from: SystemFrom, batch_bytes: int
) -> Iterator[pl.DataFrame]:
    """The table a batch of whole files at a time: text files by ``batch_bytes`` of
    compressed text (a larger file in pieces of whole rankings), parquet files one by one."""
    for _, frame in table_parts(paths, layout, system_from, batch_bytes):
        yield frame


def table_parts(
    paths: Paths, layout: Layout, system_from: SystemFrom, batch_bytes: int
) -> Iterator[tuple[list[Path], pl.DataFrame]]:
    """:func:`iter_table`, each frame with the files its rows come from."""
    _check_system_from(system_from)
    files = _find(paths, layout, system_from)
    text = [path for path in files if not is_parquet(path)]
    parquet = [path for path in files if is_parquet(path)]
    rows = 0
    if text:
        for part in text_parts(text, layout, system_from, batch_bytes, split_files=True):
            rows += part[1].height
            yield part
    for path in parquet:
        if path.stat().st_size > batch_bytes:  # in pieces of whole rankings, lazily
            rows_per_piece = max(batch_bytes // 4, 1 << 10)
            pieces: Iterable[pl.DataFrame] = parquet_pieces(
                path, layout, system_from, rows_per_piece
            )
        else:
            pieces = [collect(parquet_plan([path], layout, system_from))]
        for frame in pieces:
            rows += frame.height
            yield [path], frame
    if rows == 0:
        raise InputError(f"the {layout.table} files hold no rows: {quote_files(files)}")


def scan_table(paths: Paths, layout: Layout, system_from: SystemFrom) -> pl.LazyFrame:
    _check_system_from(system_from)
    files = _find(paths, layout, system_from)
    text = [path for path in files if not is_parquet(path)]
    parquet = [path for path in files if is_parquet(path)]
    plans = []
    if text:
        plans.append(_scan_text(text, layout, system_from))
    if parquet:
        plans.append(parquet_plan(parquet, layout, system_from))
    return plans[0] if len(plans) == 1 else pl.concat(plans, how="vertical_relaxed")


def _scan_text(files: Sequence[Path], layout: Layout, system_from: SystemFrom) -> pl.LazyFrame:
    """A LazyFrame over text files that reads a group of files at a time when collected."""
    group = max(4, 2 * pl.thread_pool_size())

    def groups() -> Iterator[pl.DataFrame]:
        for start in range(0, len(files), group):
            yield read_text(files[start : start + group], layout, system_from)

    return lazy_frames(groups, layout.output_schema, f"lexiframe {layout.table}")
