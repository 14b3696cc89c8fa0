"""Read qrels: TREC qrels files (plain or gzipped) or parquet files."""

from __future__ import annotations

import polars as pl

from lexiframe.io.files import Paths
from lexiframe.io.layouts import qrels_layout
from lexiframe.io.sources import read_table, scan_table
from lexiframe.labels import check_grades, fractional
from lexiframe.typing import Labels


def read_qrels(path: Paths, *, labels: Labels | None = None) -> pl.DataFrame:
    """Read TREC qrels (``query iteration doc relevance``, plain or gzipped) or parquet.

    Args:
        path: a file, several files or a directory, as in :func:`read_run`. Parquet files
            need columns query, doc and relevance (integer).
        labels: what the relevance column holds (:attr:`lexiframe.PositionsOptions.labels`):
            ``None`` or ``"grades"``, whole numbers; ``"gain"`` or ``"probability"``, real
            numbers (``0.7``), read as Float64 and checked (non-negative; probabilities at
            most 1).

    Returns:
        query (String), doc (String), relevance (Int64, or Float64 for fractional labels);
        integer ids of parquet stay Int64.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("401 0 D1 2\\n401 0 D2 0\\n")
        >>> read_qrels(path).sort("query", "doc").rows()
        [('401', 'D1', 2), ('401', 'D2', 0)]
        >>> _ = path.write_text("401 0 D1 0.75\\n")
        >>> read_qrels(path, labels="probability").rows()
        [('401', 'D1', 0.75)]
    """
    frame = read_table(path, qrels_layout(labels), "field")
    return check_grades(frame, labels=labels) if fractional(labels) else frame


def scan_qrels(path: Paths, *, labels: Labels | None = None) -> pl.LazyFrame:
    """Lazily read TREC qrels or parquet: :func:`read_qrels` as a LazyFrame (fractional
    ``labels`` are checked when it is collected).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("401 0 D1 2\\n401 0 D2 0\\n")
        >>> scan_qrels(path).filter(pl.col("relevance") > 0).collect().rows()
        [('401', 'D1', 2)]
    """
    plan = scan_table(path, qrels_layout(labels), "field")
    return check_grades(plan, labels=labels) if fractional(labels) else plan
