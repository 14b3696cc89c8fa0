"""Read qrels: TREC qrels files (plain or gzipped) or parquet files; stack several qrels
sets into one frame with a key column that names them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import polars as pl

from lexiframe._utils import shorten
from lexiframe.errors import InputError, LexiframeError
from lexiframe.io.files import Paths, is_paths
from lexiframe.io.layouts import qrels_layout
from lexiframe.io.objects import as_qrels
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


QRELS_KEY = "qrels"
"""The column that names each qrels set of :func:`concat_qrels` (and of ``lexiframe
evaluate --qrels NAME=FILE``), as :mod:`lexiframe.stats` reads it (``qrels_agreement``)."""


def concat_qrels(
    named: Mapping[str, pl.DataFrame | pl.LazyFrame | Paths], *, key: str = QRELS_KEY
) -> pl.DataFrame | pl.LazyFrame:
    """Several qrels sets as one frame, each row named by its set in the column ``key``.

    Evaluate with ``by=key`` (``by="qrels"``): every run is evaluated against every qrels
    set in one call, each set with its own queries, relevant documents and coverage, and
    the frame holds both sets' numbers side by side (the run needs no such column: a by=
    key that only the qrels carry crosses with every ranking). Each ranking of the run is
    ranked once and its ranks joined to every set's judgments: two sets take about two
    thirds of the time of one evaluation per set, in the memory of one
    (``python benchmarks/run.py --shape mid --steps two-qrels-each two-qrels-keyed``).

    Args:
        named: each set's name and its qrels: a Polars frame (lexiframe's columns or the
            caller's, the same for every set), a qrels file (:func:`read_qrels`) or an object
            :func:`lexiframe.as_qrels` reads (pandas, ranx, ir_measures, a dict).
        key: the name of the column that names the sets.

    Returns:
        ``key`` first, then the qrels' columns: a LazyFrame when some set is one, else a
        DataFrame.

    Example:
        >>> import polars as pl
        >>> import lexiframe as lf
        >>> human = pl.DataFrame({"query": ["q1"], "doc": ["d2"], "relevance": [1]})
        >>> llm = pl.DataFrame({"query": ["q1"], "doc": ["d1"], "relevance": [1]})
        >>> run = pl.DataFrame({"system": ["a", "a"], "query": ["q1", "q1"],
        ...                     "doc": ["d1", "d2"], "score": [2.0, 1.0]})
        >>> both = lf.concat_qrels({"human": human, "llm": llm})
        >>> lf.evaluate(run, both, ["RR"], by="qrels").sort("qrels").rows()
        [('human', 'a', 'q1', 0.5), ('llm', 'a', 'q1', 1.0)]
    """
    if not isinstance(named, Mapping) or not named:
        raise InputError(
            "concat_qrels() takes a mapping of names to qrels, e.g. "
            'lf.concat_qrels({"human": qrels, "llm": llm_qrels})'
        )
    if not isinstance(key, str) or not key:
        raise InputError(f'key= names the column of the qrels sets, e.g. key="qrels", not {key!r}')
    parts: list[pl.LazyFrame] = []
    lazy = False
    for name, qrels in named.items():
        if not isinstance(name, str) or not name:
            raise InputError(
                f"concat_qrels() names each qrels with a non-empty string, not {name!r}; "
                'e.g. {"human": qrels, "llm": llm_qrels}'
            )
        if is_paths(qrels):
            qrels = read_qrels(cast(Paths, qrels))
        elif not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
            try:  # pandas, ranx, ir_measures, a dict {query: {doc: grade}}
                qrels = as_qrels(qrels)
            except (TypeError, LexiframeError) as error:
                raise InputError(f"concat_qrels(): the qrels named {name!r}: {error}") from None
        lazy = lazy or isinstance(qrels, pl.LazyFrame)
        if key in qrels.collect_schema():
            raise InputError(
                f"concat_qrels(): the qrels named {name!r} already have a column {key!r}; "
                'name the sets\' column otherwise, e.g. key="judge"'
            )
        parts.append(qrels.lazy().select(pl.lit(name).alias(key), pl.all()))
    _require_one_kind(dict(zip(named, parts, strict=True)))
    try:
        both = pl.concat(parts, how="vertical_relaxed")
        frame = both if lazy else both.collect()
    except pl.exceptions.PolarsError as error:  # columns or id kinds that differ
        first = (str(error).strip().splitlines() or [""])[0]
        raise InputError(
            f"concat_qrels(): the qrels sets {', '.join(map(repr, named))} do not stack: "
            f"{shorten(first, 160)} (each needs the same columns, e.g. query, doc, "
            "relevance, with ids of one kind)"
        ) from None
    return frame


def _require_one_kind(parts: Mapping[str, pl.LazyFrame]) -> None:
    """Refuse a column that is a number in one set and text in another (ids of another
    kind would match no run row; widths of one kind are widened when stacked)."""
    seen: dict[str, tuple[str, pl.DataType]] = {}
    for name, part in parts.items():
        for column, dtype in part.collect_schema().items():
            first = seen.setdefault(column, (name, dtype))
            if first[1].is_numeric() != dtype.is_numeric():
                raise InputError(
                    f"concat_qrels(): the qrels sets do not stack: column {column!r} is "
                    f"{first[1]} in {first[0]!r} and {dtype} in {name!r}; give ids of one "
                    "kind, e.g. pl.col(\"query\").cast(pl.String)"
                )
