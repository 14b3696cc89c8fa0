"""Read qrels: TREC qrels files (plain or gzipped) or parquet files."""

from __future__ import annotations

import polars as pl

from lexiframe.io.files import Paths
from lexiframe.io.layouts import QRELS
from lexiframe.io.sources import read_table, scan_table


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
    return read_table(path, QRELS, "field")


def scan_qrels(path: Paths) -> pl.LazyFrame:
    """Lazily read TREC qrels or parquet: :func:`read_qrels` as a LazyFrame.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("401 0 D1 2\\n401 0 D2 0\\n")
        >>> scan_qrels(path).filter(pl.col("relevance") > 0).collect().rows()
        [('401', 'D1', 2)]
    """
    return scan_table(path, QRELS, "field")
