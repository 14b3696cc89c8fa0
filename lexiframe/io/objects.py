"""Runs and qrels from the objects users already hold.

:func:`as_run` and :func:`as_qrels` turn into lexiframe's Polars frames (the columns of
:data:`~lexiframe.io.RUN_SCHEMA` and :data:`~lexiframe.io.QRELS_SCHEMA`):

- dict-of-dicts, as ranx and pytrec_eval take them: ``{query: {doc: score}}`` and
  ``{query: {doc: grade}}``;
- ranx ``Run`` and ``Qrels`` objects (anything with a ``to_dict()`` giving such a dict; a
  run's ``name`` becomes its system), without importing ranx;
- iterables of ir_measures / ir_datasets namedtuples (``query_id``, ``doc_id``, and
  ``score`` or ``relevance``);
- pandas or Polars frames with lexiframe's column names or the usual others: PyTerrier's
  ``qid``, ``docno``, ``label``; ir_measures' ``query_id``, ``doc_id``; ranx's ``q_id``. A
  frame without a system column is one run, named by ``system=``.

Columnar inputs are converted column by column: no Python loop per row. Dict-of-dicts are
flattened by C-level iteration over their keys and values. The evaluation functions
(:func:`lexiframe.positions`, :func:`lexiframe.evaluate`, :func:`lexiframe.coverage`, the
``.lexi`` namespaces and the pandas accessor) call these on anything that is not already a
Polars frame, so they take these objects directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from itertools import chain
from typing import Any, cast

import polars as pl

from lexiframe._utils import format_row, shorten
from lexiframe.errors import InputError, SchemaError
from lexiframe.io.layouts import RUN_SCHEMA, qrels_schema
from lexiframe.labels import check_grades
from lexiframe.typing import Labels
from lexiframe.validate import require_text

DEFAULT_SYSTEM = "run"
"""The system id of a run that names none (a dict, namedtuples, a frame without one)."""

# Accepted column names, canonical first. PyTerrier's ``query`` column holds the query's
# text and ``qid`` its id, so ``qid`` wins over ``query``; its ``docid`` is an internal
# number and ``docno`` the document's id, so ``docno`` wins over ``docid``.
ALIASES: dict[str, tuple[str, ...]] = {
    "system": ("system", "run_id", "runid", "run", "tag"),
    "query": ("query_id", "qid", "q_id", "query"),
    "doc": ("doc", "docno", "doc_id", "docid"),
    "score": ("score", "sim"),
    "relevance": ("relevance", "label", "rel", "grade"),
}

_KINDS = (
    "a dict {query: {doc: score}}, a ranx Run/Qrels, an iterable of ir_measures or "
    "ir_datasets namedtuples, or a pandas/Polars frame"
)


def as_run(obj: Any, *, system: str | None = None) -> pl.DataFrame | pl.LazyFrame:
    """A run as lexiframe's frame: ``system, query, doc, score`` (Polars).

    Args:
        obj: a dict ``{query: {doc: score}}`` (ranx, pytrec_eval), a ranx ``Run``, an
            iterable of namedtuples with ``query_id``, ``doc_id``, ``score``
            (ir_measures ``ScoredDoc``, ir_datasets scored docs), or a pandas/Polars frame
            (lexiframe's columns, PyTerrier's ``qid``/``docno``/``score``, …). A LazyFrame
            stays lazy; a Polars frame already in lexiframe's columns is returned as is.
        system: the system id of a run without one of its own (default: the ranx run's
            name, else ``"run"``). A frame with a system column refuses it.

    Example:
        >>> import lexiframe as lf
        >>> lf.as_run({"q1": {"d1": 2.0, "d2": 1.0}}, system="bm25").rows()
        [('bm25', 'q1', 'd1', 2.0), ('bm25', 'q1', 'd2', 1.0)]
    """
    return _convert(obj, "score", require_text(system, "system", optional=True))


def as_qrels(obj: Any, *, labels: Labels | None = None) -> pl.DataFrame | pl.LazyFrame:
    """Qrels as lexiframe's frame: ``query, doc, relevance`` (Polars).

    Args:
        obj: a dict ``{query: {doc: grade}}`` (ranx, pytrec_eval), a ranx ``Qrels``, an
            iterable of namedtuples with ``query_id``, ``doc_id``, ``relevance``
            (ir_measures ``Qrel``, ir_datasets qrels), or a pandas/Polars frame
            (lexiframe's columns, PyTerrier's ``qid``/``docno``/``label``, …).
        labels: what the grades are (:attr:`lexiframe.PositionsOptions.labels`): whole
            numbers (``None``, ``"grades"``), or real gains or probabilities (``"gain"``,
            ``"probability"``), kept as Float64.

    Example:
        >>> import lexiframe as lf
        >>> lf.as_qrels({"q1": {"d2": 1, "d3": 0}}).rows()
        [('q1', 'd2', 1), ('q1', 'd3', 0)]
        >>> lf.as_qrels({"q1": {"d2": 0.8}}, labels="probability").rows()
        [('q1', 'd2', 0.8)]
    """
    return _convert(obj, "relevance", None, labels)


def _convert(
    obj: Any, value: str, system: str | None, labels: Labels | None = None
) -> pl.DataFrame | pl.LazyFrame:
    what = "run" if value == "score" else "qrels"
    if isinstance(obj, pl.DataFrame | pl.LazyFrame):
        return _from_frame(obj, value, system, labels)
    if _is_pandas(obj):
        return _from_frame(from_pandas(obj), value, system, labels)
    if isinstance(obj, Mapping):
        return _from_dicts(obj, value, system or DEFAULT_SYSTEM, labels)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):  # ranx Run / Qrels
        name = getattr(obj, "name", None)
        return _from_dicts(to_dict(), value, system or name or DEFAULT_SYSTEM, labels)
    if isinstance(obj, str | bytes) or not isinstance(obj, Iterable):
        hint = " (to read a file, use lexiframe.read_" + what + ")" if isinstance(obj, str) else ""
        raise TypeError(f"cannot make a {what} of a {type(obj).__name__}{hint}: give {_KINDS}")
    return _from_tuples(obj, value, system or DEFAULT_SYSTEM, labels)


def from_pandas(frame: Any) -> pl.DataFrame:
    """A pandas frame as a Polars one; ids that no 64-bit integer holds are refused."""
    try:
        return pl.from_pandas(frame.reset_index(drop=True))
    except (OverflowError, pl.exceptions.PolarsError, TypeError, ValueError) as error:
        raise InputError(
            f"cannot read the pandas frame (columns {', '.join(map(str, frame.columns))}): "
            f"{shorten(str(error))}; ids must be strings or integers that fit in 64 bits, "
            "e.g. convert them with frame['qid'].astype(str)"
        ) from None


def _is_pandas(obj: Any) -> bool:
    return type(obj).__module__.startswith("pandas") and type(obj).__name__ == "DataFrame"


def _schema(value: str, labels: Labels | None) -> pl.Schema:
    return RUN_SCHEMA if value == "score" else qrels_schema(labels)


def _typed(frame: pl.DataFrame, value: str, labels: Labels | None) -> pl.DataFrame:
    schema = _schema(value, labels)
    return frame.select(pl.col(name).cast(dtype) for name, dtype in schema.items())


def _from_dicts(data: Any, value: str, system: str, labels: Labels | None) -> pl.DataFrame:
    """``{query: {doc: value}}`` → columns, flattened by C-level chains (no loop per row)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"to_dict() gave a {type(data).__name__}, not {{query: {{doc: value}}}}")
    bad = next((q for q, docs in data.items() if not isinstance(docs, Mapping)), None)
    if bad is not None:
        raise InputError(
            f"query {bad!r} maps to a {type(data[bad]).__name__}, not {{doc: {value}}}; "
            f"expected {{query: {{doc: {value}}}}}, e.g. {{'q1': {{'d1': 1}}}}"
        )
    keys = [str(query) for query, docs in data.items() if docs]
    inner = [docs for docs in data.values() if docs]
    if not inner:
        return pl.DataFrame(schema=_schema(value, labels))
    lengths = pl.Series([len(docs) for docs in inner], dtype=pl.UInt32)
    frame = pl.DataFrame(
        [
            pl.Series("query", keys, dtype=pl.String).repeat_by(lengths).explode(),
            pl.Series("doc", list(chain.from_iterable(inner))).cast(pl.String),
            pl.Series(value, list(chain.from_iterable(docs.values() for docs in inner))),
        ]
    )
    _require_numbers(frame, value)
    if value == "relevance":
        frame = check_grades(frame, labels=labels)
    frame = frame.with_columns(system=pl.lit(system)) if value == "score" else frame
    return _typed(frame, value, labels)


def _from_tuples(
    rows: Iterable[Any], value: str, system: str, labels: Labels | None
) -> pl.DataFrame:
    rows = list(rows)
    if not rows:
        return pl.DataFrame(schema=_schema(value, labels))
    first = rows[0]
    fields = getattr(first, "_fields", None)
    wanted = ("query_id", "doc_id", value)
    if fields is None or not set(wanted) <= set(fields):
        raise TypeError(
            f"cannot make a {'run' if value == 'score' else 'qrels'} of an iterable of "
            f"{type(first).__name__}: expected namedtuples with fields {', '.join(wanted)} "
            f"(ir_measures, ir_datasets), e.g. {first!r}"
        )
    frame = pl.DataFrame(rows, schema=list(fields), orient="row", infer_schema_length=None)
    return cast(pl.DataFrame, _from_frame(frame, value, system, labels))  # eager in, eager out


def _require_numbers(frame: pl.DataFrame | pl.LazyFrame, value: str) -> None:
    """Scores and grades are numbers: strings, nested dicts or lists are refused."""
    dtype = frame.collect_schema()[value]
    if dtype.is_numeric() or dtype == pl.Null:
        return
    example = frame.head(1)
    if isinstance(example, pl.LazyFrame):
        example = example.collect()
    row = format_row(example.row(0, named=True)) if example.height else ""
    nested = " (a dict or list nested one level too deep?)" if dtype.is_nested() else ""
    what = "scores" if value == "score" else "grades"
    raise InputError(
        f"{what} must be numbers, not {dtype}{nested}; expected {{query: {{doc: {value}}}}} "
        f"or a numeric {value!r} column; e.g. row {row}"
    )


def _from_frame(
    frame: pl.DataFrame | pl.LazyFrame, value: str, system: str | None, labels: Labels | None
) -> pl.DataFrame | pl.LazyFrame:
    columns = frame.collect_schema().names()
    wanted = ["system", "query", "doc", "score"] if value == "score" else ["query", "doc", value]
    if value == "score" and system is None and set(wanted) <= set(columns):
        return frame  # already lexiframe's run
    if value == "relevance" and set(wanted) <= set(columns):
        return check_grades(frame, labels=labels)  # already lexiframe's qrels
    renames: dict[str, str] = {}
    for target in wanted:
        source = next((name for name in ALIASES[target] if name in columns), None)
        if source is None:
            if target == "system":
                continue
            raise SchemaError(
                f"no {target} column: expected one of {', '.join(ALIASES[target])}; "
                f"the frame has {', '.join(columns) or 'no column'}"
            )
        renames[source] = target
    own = next((source for source, target in renames.items() if target == "system"), None)
    if own is not None and system is not None:
        raise SchemaError(
            f"the frame has a system column ({own!r}); system= names the run of a frame without one"
        )
    # Columns that would collide with a renamed one (PyTerrier's query text) are dropped.
    dropped = [name for name in columns if name in wanted and name not in renames]
    frame = frame.drop(dropped).rename(renames)
    if value == "score" and "system" not in renames:
        frame = frame.with_columns(system=pl.lit(system or DEFAULT_SYSTEM))
    _require_numbers(frame, value)
    if value == "relevance":
        frame = check_grades(frame, labels=labels)
    schema = _schema(value, labels)
    others = [name for name in frame.collect_schema().names() if name not in schema]
    return frame.select(*(pl.col(name).cast(dtype) for name, dtype in schema.items()), *others)


_RUN_NAMES = ("system", "query", "doc", "score")
_QRELS_NAMES = ("query", "doc", "relevance")


def _entry(obj: Any, names: tuple[str, ...], default: tuple[str, ...], convert: Any) -> Any:
    frame = isinstance(obj, pl.DataFrame | pl.LazyFrame)
    if _is_pandas(obj):
        obj, frame = from_pandas(obj), True
    if not frame:
        return convert(obj)
    if names != default:
        return obj  # the caller names its columns itself
    try:
        return convert(obj)
    except SchemaError:
        return obj  # the evaluation function's own checks name what is missing


def run_frame(obj: Any, names: tuple[str, ...] = _RUN_NAMES) -> pl.DataFrame | pl.LazyFrame:
    """A run as the evaluation functions take it: through :func:`as_run`, unless the caller
    names its frame's columns (``names``, the functions' column options) itself; a frame
    :func:`as_run` cannot read goes on to the function's own checks and errors."""
    frame: pl.DataFrame | pl.LazyFrame = _entry(obj, names, _RUN_NAMES, as_run)
    return frame


def qrels_frame(
    obj: Any, names: tuple[str, ...] = _QRELS_NAMES, labels: Labels | None = None
) -> pl.DataFrame | pl.LazyFrame:
    """Qrels as the evaluation functions take them (see :func:`run_frame`); grades are
    integers whatever the columns' names, or with fractional ``labels`` real numbers
    (:func:`lexiframe.labels.check_grades`)."""
    convert = partial(as_qrels, labels=labels)
    frame: pl.DataFrame | pl.LazyFrame = _entry(obj, names, _QRELS_NAMES, convert)
    if isinstance(frame, pl.DataFrame | pl.LazyFrame):
        frame = check_grades(frame, names[2], labels=labels)
    return frame
