"""Read runs: TREC run files (plain or gzipped) or parquet files."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from lexiframe.io.files import Paths
from lexiframe.io.layouts import RANKED_RUN, RUN, Layout
from lexiframe.io.sources import iter_table, read_table, scan_table
from lexiframe.typing import SystemFrom
from lexiframe.validate import require_bool


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
    return read_table(paths, _layout(rank), system_from, progress)


def scan_run(
    paths: Paths,
    *,
    system_from: SystemFrom = "field",
    rank: bool = False,
) -> pl.LazyFrame:
    """Lazily read TREC run files or parquet files: :func:`read_run` as a LazyFrame.

    The files are listed now (a missing path raises now); they are read when the frame is
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
    return scan_table(paths, _layout(rank), system_from)


BATCH_BYTES = 16 << 20
"""Gzipped bytes of run files per frame of :func:`read_run_batches` (about 5 million lines)."""


def read_run_batches(
    paths: Paths,
    *,
    system_from: SystemFrom = "field",
    rank: bool = False,
    batch_bytes: int = BATCH_BYTES,
) -> Iterator[pl.DataFrame]:
    """Read run files a batch of whole files at a time: :func:`read_run` in pieces.

    Each frame holds the rows of whole files: TREC text files up to ``batch_bytes`` of
    gzipped text (a plain file counts a fifth of its size), parquet files one at a time. A
    text file larger than a batch comes in pieces of whole rankings: a piece ends where
    the rows of one (system, query) end, so that a ranking whose rows follow each other in
    the file is in one frame. Memory then holds one batch, not the whole run:
    :func:`lexiframe.evaluate` given paths evaluates the run this way, as the command line
    does.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> for name in ("a", "b"):
        ...     _ = (folder / name).write_text(f"401 Q0 D1 1 2.0 {name}\\n")
        >>> [frame["system"].to_list() for frame in read_run_batches(folder, batch_bytes=1)]
        [['a'], ['b']]
    """
    return iter_table(paths, _layout(rank), system_from, batch_bytes)


def _layout(rank: object) -> Layout:
    """The fields a run is read with: the rank too when ``rank`` is True."""
    return RANKED_RUN if require_bool(rank, "rank") else RUN
