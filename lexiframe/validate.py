"""Checks of the run and qrels tables, with messages that name the column and an example row.

Schema checks run on the (lazy) schema before any work; value checks (duplicates, NaN
scores) ride along inside the positions plan so that they cost no extra pass over the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from lexiframe._utils import format_row, quote_names
from lexiframe.errors import InputError, SchemaError

Frame = pl.DataFrame | pl.LazyFrame


_WHAT_TO_DO = {
    "run": "Name yours with the keyword arguments, e.g. query='qid', or rename them.",
    "qrels": "Name yours with the keyword arguments, e.g. query='qid', or rename them.",
    "positions": "Build it with run.lexi.positions(qrels); name extra keys with by=.",
    "preferences": "Build it with positions.lexi.preferences(); name extra keys with by=.",
    "pair": "Build it with positions.lexi.preferences(); name extra keys with by=.",
    "pair summary": "Build it with prefs.lexi.summarize().",
    "metrics": "Build it with positions.lexi.measures([...]); name extra keys with by=.",
}


def require_columns(schema: Mapping[str, pl.DataType], columns: Sequence[str], table: str) -> None:
    """Raise :class:`SchemaError` when ``columns`` are not all in ``schema``."""
    missing = [name for name in columns if name not in schema]
    if missing:
        raise SchemaError(
            f"the {table} table has no column {quote_names(missing)}; its columns are "
            f"{quote_names(list(schema))}. {_WHAT_TO_DO.get(table, 'Rename them.')}"
        )


def require_numeric(schema: Mapping[str, pl.DataType], column: str, table: str) -> None:
    dtype = schema[column]
    if not dtype.is_numeric():
        raise SchemaError(
            f"column {column!r} of the {table} table must be numeric, not {dtype}; "
            f"cast it first, e.g. pl.col({column!r}).cast(pl.Float64)"
        )


def require_id_type(schema: Mapping[str, pl.DataType], column: str, table: str) -> None:
    dtype = schema[column]
    if not (dtype.is_integer() or dtype in (pl.String, pl.Categorical) or dtype == pl.Enum):
        raise SchemaError(
            f"column {column!r} of the {table} table holds ids, which must be strings or "
            f"integers, not {dtype}"
        )


def _id_kind(dtype: pl.DataType) -> str:
    return "integer" if dtype.is_integer() else "string"


def require_same_id_kind(
    run: Frame, run_column: str, qrels: Frame, qrels_column: str, what: str
) -> None:
    """Reject a run and qrels whose ids differ in kind (int vs str): they would never join."""
    run_type = run.collect_schema()[run_column]
    qrels_type = qrels.collect_schema()[qrels_column]
    if _id_kind(run_type) == _id_kind(qrels_type):
        return
    run_example = run.select(run_column).head(1)
    qrels_example = qrels.select(qrels_column).head(1)
    if isinstance(run_example, pl.LazyFrame):
        run_example = run_example.collect()
    if isinstance(qrels_example, pl.LazyFrame):
        qrels_example = qrels_example.collect()
    run_value = run_example.item() if run_example.height else None
    qrels_value = qrels_example.item() if qrels_example.height else None
    raise SchemaError(
        f"{what} ids are {_id_kind(run_type)}s in the run ({run_column!r}: {run_type}, e.g. "
        f"{run_value!r}) but {_id_kind(qrels_type)}s in the qrels ({qrels_column!r}: "
        f"{qrels_type}, e.g. {qrels_value!r}); they would never match. Cast one side, e.g. "
        f"pl.col({run_column!r}).cast(pl.String)"
    )


MAX_INT = 2**63 - 1
"""The largest whole number an argument may take (Polars' Int64)."""


def require_int(
    value: object, name: str, *, minimum: int | None = 1, optional: bool = False
) -> int:
    """``value`` as a whole number of at least ``minimum`` (``None``: any), or an
    :class:`InputError` that names the argument (``name``, in the caller's words: ``depth``
    in the API, ``--depth`` at the command line); ``optional`` says None is accepted too.

    Example:
        >>> require_int(3, "depth")
        3
        >>> require_int(10.5, "n")
        Traceback (most recent call last):
        lexiframe.errors.InputError: n must be a positive integer, not 10.5
    """
    what = {None: "an integer", 1: "a positive integer"}.get(
        minimum, f"an integer of at least {minimum}"
    )
    if optional:
        what += " or None"
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be {what}, not {_excerpt(value)}")
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be {what}, not {_excerpt(value)}")
    if abs(value) > MAX_INT:
        raise InputError(f"{name} must be at most {MAX_INT}, not {_excerpt(value)}")
    return value


def require_positive_int(value: object, name: str, *, optional: bool = False) -> int:
    """``value`` as a positive whole number, or an :class:`InputError` naming ``name``."""
    return require_int(value, name, minimum=1, optional=optional)


def _excerpt(value: object, limit: int = 40) -> str:
    """A value as the message shows it: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def require_depth(depth: int | None) -> None:
    if depth is not None:
        require_positive_int(depth, "depth", optional=True)


def raise_ranking_problem(
    run: Frame, problem: dict[str, object], columns: Mapping[str, str]
) -> None:
    """Raise the error for the first ranking whose values break a rule.

    ``run`` has lexiframe's canonical column names; ``columns`` maps them back to the
    caller's names for the message. ``problem`` holds the keys of the ranking and the flags
    computed in the positions plan. The example row is looked up again in the run, which is
    cheap on this error path only.
    """
    keys = {name: problem[name] for name in problem if not name.startswith("_")}
    where = pl.all_horizontal(pl.col(name) == value for name, value in keys.items())
    doc, score = columns["doc"], columns["order"]
    rows = run.filter(where)
    if problem.get("_null_ids"):
        detail = rows.filter(pl.col("doc").is_null()).head(1)
        message = f"null document id in column {doc!r}"
    elif problem.get("_bad_scores"):
        detail = rows.filter(pl.col("order").is_null() | pl.col("order").is_nan()).head(1)
        message = f"NaN or null score in column {score!r}, which orders the rankings"
    else:
        detail = rows.filter(pl.col("doc").is_duplicated()).sort("doc").head(2)
        names = [columns.get(key, key) for key in keys]
        message = (
            f"duplicate ({', '.join(names)}, {doc}) rows: a ranking lists the same document "
            "twice (trec_eval refuses this too); drop the duplicates, e.g. with "
            f".unique([{', '.join(repr(k) for k in [*names, doc])}])"
        )
    if isinstance(detail, pl.LazyFrame):
        detail = detail.collect()
    detail = detail.rename({name: columns[name] for name in detail.columns if name in columns})
    examples = "; ".join(format_row(row) for row in detail.iter_rows(named=True))
    raise InputError(f"{message}; example: {examples or format_row(keys)}")


def raise_null_key(run: Frame, key: str, columns: Mapping[str, str]) -> None:
    """Raise the error for a null system, query or ``by=`` key, showing a row that has it."""
    detail = run.filter(pl.col(key).is_null()).head(1)
    if isinstance(detail, pl.LazyFrame):
        detail = detail.collect()
    detail = detail.rename({name: columns[name] for name in detail.columns if name in columns})
    example = format_row(detail.row(0, named=True)) if detail.height else "?"
    raise InputError(
        f"null id in column {columns.get(key, key)!r} of the run; every row needs a system "
        f"and a query id, and a value in each by= key column; example: {example}"
    )
