"""Checks of the run and qrels tables, with messages that name the column and an example row.

Schema checks run on the (lazy) schema before any work; value checks (duplicates, NaN
scores) ride along inside the positions plan so that they cost no extra pass over the run.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import polars as pl

from lexiframe._blocks import order_step
from lexiframe._utils import format_row, quote_names, shorten
from lexiframe.errors import LABELS_HINT, NO_HINT, InputError, SchemaError

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
        what_to_do = _WHAT_TO_DO.get(table, "Rename them.")
        swapped = {"run": ("relevance", "qrels"), "qrels": ("score", "run")}.get(table)
        if swapped and swapped[0] in schema and swapped[0] not in columns:
            what_to_do = (
                f"It has the {swapped[0]!r} column of a {swapped[1]} table: are the run and "
                "the qrels swapped? The run comes first, e.g. lf.evaluate(run, qrels, ['AP'])."
            )
        raise SchemaError(
            f"the {table} table has no column {quote_names(missing)}; its columns are "
            f"{quote_names(list(schema))}. {what_to_do}",
            kind="missing column",
            column=missing[0],
        )


def require_rows(frame: Frame, table: str) -> None:
    """Refuse an empty table held in memory (a LazyFrame is not read for this): an empty
    qrels judges no query, as an empty qrels file, which is refused too.

    Example:
        >>> require_rows(pl.DataFrame({"query": []}), "qrels")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: the qrels table is empty: ...
    """
    if isinstance(frame, pl.DataFrame) and frame.height == 0:
        raise InputError(
            f"the {table} table is empty: it holds no row, so nothing can be evaluated",
            kind="empty",
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
        if run_type.is_integer() and qrels_type != run_type:
            _require_ids_fit(qrels, qrels_column, qrels_type, run_type, what)
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


def _require_ids_fit(
    qrels: Frame, column: str, qrels_type: pl.DataType, run_type: pl.DataType, what: str
) -> None:
    """Integer ids of the qrels are joined in the run's integer type: refuse one that type
    cannot hold (a UInt64 id above Int64's range), which would otherwise stop the join."""
    outside = pl.col(column).cast(run_type, strict=False).is_null() & pl.col(column).is_not_null()
    found = qrels.select(pl.col(column).filter(outside).first())
    value = (found.collect() if isinstance(found, pl.LazyFrame) else found).item()
    if value is not None:
        raise SchemaError(
            f"{what} ids are {run_type} in the run but {qrels_type} in the qrels, which holds "
            f"{value}, beyond {run_type}; cast both to one type that holds every id, e.g. "
            f"pl.col({column!r}).cast(pl.String) on each side",
            kind="id type",
            column=column,
            example={column: value},
        )


INT64_MAX = 2**63 - 1
POSITION_MAX = 2**32 - 1
"""The largest depth or cut-off: positions are 32-bit (a ranking is shorter than that)."""


def require_positive_int(
    value: object,
    name: str,
    *,
    maximum: int = INT64_MAX,
    zero: bool = False,
    optional: bool = False,
    meaning: str = "",
) -> int:
    """``value`` as a positive integer (or ≥ 0 with ``zero``) up to ``maximum``, or raise
    :class:`InputError` naming ``name`` (the flag at the command line, the argument in the
    API). The one check of integer arguments: depth, corpus size, cut-offs, seeds.
    ``optional``: the argument may also be None (the message says so). ``meaning``: what
    the number counts, said beside its name.

    Example:
        >>> require_positive_int(10, "depth")
        10
        >>> require_positive_int(10.5, "n")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: n must be a positive integer, not 10.5
    """
    kind = "a non-negative integer" if zero else "a positive integer"
    if optional:
        kind += " or None"
    label = f"{name} ({meaning})" if meaning else name
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        whole = isinstance(value, float) and value.is_integer()
        hint = f"; pass {name}={value:.0f}" if whole else ""
        raise InputError(f"{label} must be {kind}, not {_short_repr(value)}{hint}")
    value = int(value)  # NumPy's integers too
    if value < (0 if zero else 1):
        raise InputError(f"{label} must be {kind}, not {value}")
    if value > maximum:
        raise InputError(f"{name} must be at most {maximum}, not {_short_repr(value)}")
    return value


def require_bool(value: object, name: str, *, optional: bool = False) -> bool | None:
    """``value`` as True or False (NumPy's booleans too), or None with ``optional``;
    anything else raises :class:`InputError` naming ``name``: a string such as ``'yes'``
    is not read as a truth value.

    Example:
        >>> require_bool(False, "rank")
        False
        >>> require_bool("yes", "rank")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: rank must be True or False, not 'yes'
    """
    if optional and value is None:
        return None
    if type(value).__name__ in ("bool", "bool_"):  # Python's and NumPy's
        return bool(value)
    kind = "True, False or None" if optional else "True or False"
    raise InputError(
        f"{name} must be {kind}, not {_short_repr(value)}", kind="type", argument=name
    )


def require_text(value: object, name: str, *, optional: bool = False) -> str | None:
    """``value`` as a non-empty string (or None with ``optional``), else :class:`InputError`.

    Example:
        >>> require_text(123, "system")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: system must be a non-empty string, e.g. system='bm25', not 123
    """
    if optional and value is None:
        return None
    if isinstance(value, str) and value:
        return value
    raise InputError(
        f"{name} must be a non-empty string, e.g. {name}='bm25', not {_short_repr(value)}",
        kind="type",
        argument=name,
    )


def _short_repr(value: object) -> str:
    return shorten(repr(value), 40)


def require_depth(depth: int | None) -> None:
    if depth is not None:
        require_positive_int(depth, "depth", maximum=POSITION_MAX)


def require_threshold(
    threshold: object, *, warn: bool = True, name: str = "threshold", whole: bool = True
) -> None:
    """The lowest relevant grade: an integer, or with fractional labels (``whole=False``,
    ``labels="gain"`` or ``"probability"``) a finite real number; at a level that a label
    of 0 reaches, documents judged non-relevant count as relevant, which is said once in a
    warning (``warn``: where the frame is built, not where the option is only stated).
    ``name``: the argument, or the flag at the command line.

    Example:
        >>> require_threshold(2**70, name="-l")
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: -l must be an integer from -9223372036854775807 to ...
        >>> require_threshold(0.5)
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: threshold must be an integer grade, not 0.5; fractional ...
        >>> require_threshold(0.5, whole=False)
    """
    real = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool)
    if not whole:
        if not real or not math.isfinite(float(threshold)):  # type: ignore[arg-type]
            raise InputError(f"{name} must be a finite number, not {_short_repr(threshold)}")
        level = float(threshold)  # type: ignore[arg-type]
        if warn and level <= 0:
            _warn_zero_relevant(f"threshold={threshold} counts documents labelled 0 as relevant")
        return
    if not real or not isinstance(threshold, numbers.Integral):
        hint, cli_hint = LABELS_HINT if real else NO_HINT  # a fraction: fractional labels
        raise InputError(
            f"{name} must be an integer grade, not {_short_repr(threshold)}",
            hint=hint,
            cli_hint=cli_hint,
        )
    threshold = int(threshold)  # NumPy's integers too, as for every integer argument
    if abs(threshold) > INT64_MAX:
        raise InputError(
            f"{name} must be an integer from {-INT64_MAX} to {INT64_MAX}, not "
            f"{_short_repr(threshold)}"
        )
    if warn and threshold < 1:
        _warn_zero_relevant(
            f"threshold={threshold} counts documents judged non-relevant (grade "
            f"{max(threshold, 0)}{' and below' if threshold < 0 else ''}) as relevant"
        )


def _warn_zero_relevant(message: str) -> None:
    import warnings

    from lexiframe._utils import caller_stacklevel
    from lexiframe.errors import LexiframeWarning

    warnings.warn(message, LexiframeWarning, stacklevel=caller_stacklevel())


def require_corpus_size(n: object, schema: Mapping[str, pl.DataType]) -> None:
    """``n`` of the measures: a positive integer, a column of the frame, or an expression
    of integers (its type read from the frame's schema, with no data)."""
    if n is None:
        return
    if isinstance(n, pl.Expr):
        try:
            dtype = pl.LazyFrame(schema=schema).select(n).collect_schema().dtypes()[0]
        except pl.exceptions.PolarsError as error:
            raise InputError(
                f"n= is an expression the positions frame cannot evaluate: {shorten(str(error))}",
                kind="type",
                argument="n",
            ) from None
        if not dtype.is_integer():
            raise InputError(
                f"n= is an expression of {dtype}, not of integers: the corpus size is a whole "
                "number, e.g. n=528155 or n=pl.col('corpus_size')",
                kind="type",
                argument="n",
            )
        return
    if isinstance(n, str):
        if n not in schema:
            raise InputError(
                f"n={n!r} names no column of the positions frame; its columns are "
                f"{quote_names(list(schema))}. Give the corpus size as an integer, e.g. n=528155"
            )
        if not schema[n].is_integer():
            raise InputError(
                f"n={n!r} names a column of {schema[n]}, not of integers: the corpus size is "
                "a whole number, e.g. n=528155"
            )
        return
    require_positive_int(n, "n")


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
    hint = cli_hint = ""
    if problem.get("_null_ids"):
        detail = rows.filter(pl.col("doc").is_null()).head(1)
        message, kind, column = f"null document id in column {doc!r}", "null id", doc
    elif problem.get("_bad_scores"):
        detail = rows.filter(pl.col("order").is_null() | pl.col("order").is_nan()).head(1)
        message = f"NaN or null score in column {score!r}, which orders the rankings"
        kind, column = "bad score", score
    else:
        detail = rows.filter(pl.col("doc").is_duplicated()).sort("doc").head(2)
        names = [columns.get(key, key) for key in keys]
        message = (
            f"duplicate ({', '.join(names)}, {doc}) rows: a ranking lists the same document "
            "twice (trec_eval refuses this too)"
        )
        kind, column = "duplicate", doc
        hint = (
            "; drop the duplicates, e.g. with "
            f".unique([{', '.join(repr(k) for k in [*names, doc])}])"
        )
        cli_hint = "; drop the duplicate lines"
    if isinstance(detail, pl.LazyFrame):
        detail = detail.collect()
    detail = detail.rename({name: columns[name] for name in detail.columns if name in columns})
    examples = "; ".join(format_row(row) for row in detail.iter_rows(named=True))
    example = next(detail.iter_rows(named=True), keys)
    raise InputError(
        f"{message}; example: {examples or format_row(keys)}",
        kind=kind,
        column=column,
        example=example,
        hint=hint,
        cli_hint=cli_hint,
    )


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


def warn_levels_above_grades(frame: Frame, levels: Mapping[str, object]) -> None:
    """Warn once when a measure's own relevance level (``AP(rel=5)``) is above every grade
    of the qrels: it finds no relevant document, so its values are all zero. ``levels``
    maps measure names to their levels; a LazyFrame is not read for this."""
    if not levels or not isinstance(frame, pl.DataFrame) or "ideal_grades" not in frame.columns:
        return
    top = frame.select(pl.col("ideal_grades").list.max().max()).item()
    above = [
        name
        for name, level in levels.items()
        if isinstance(level, int) and top is not None and level > top
    ]
    if above:
        import warnings

        from lexiframe._utils import caller_stacklevel
        from lexiframe.errors import LexiframeWarning

        warnings.warn(
            f"{quote_names(above)}: the relevance level is above the highest grade of the "
            f"qrels ({top}), so no document counts as relevant and every value is 0",
            LexiframeWarning,
            stacklevel=caller_stacklevel(),
        )


RANKS = ("positions", "n_rel", "n_ret")
"""The columns of a positions frame that say where a ranking's relevant documents are."""


def check_positions_frame(batch: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Refuse a positions frame whose rankings cannot be: ``positions`` must hold the
    ranks of the retrieved relevant documents, whole numbers from 1 up, each once and in
    increasing order, at most ``n_rel`` of them and none beyond ``n_ret`` (where the frame
    has those columns). A frame made by
    :func:`lexiframe.positions` always does; one made by hand may not, and would give
    values no ranking has (positions ``[1, 1]`` an AP of 1.5).

    Example:
        >>> frame = pl.DataFrame({"system": ["a"], "query": ["q1"], "positions": [[3, 1]],
        ...                       "n_rel": [2], "n_ret": [10]})
        >>> check_positions_frame(frame, ["system", "query"])
        Traceback (most recent call last):
        ...
        lexiframe.errors.InputError: column 'positions' of the positions frame must hold ...
    """
    schema = batch.schema
    dtype = schema["positions"]
    if not (isinstance(dtype, pl.List) and dtype.inner.is_integer()):
        raise SchemaError(
            f"column 'positions' of the positions frame must be a list of integers (the "
            f"ranks of the relevant documents), not {dtype}. {_WHAT_TO_DO['positions']}",
            kind="type",
            column="positions",
        )
    for column in ("n_rel", "n_ret"):
        if column in schema and not schema[column].is_integer():
            raise SchemaError(
                f"column {column!r} of the positions frame must hold integers, not "
                f"{schema[column]}. {_WHAT_TO_DO['positions']}",
                kind="type",
                column=column,
            )
    ranks = pl.col("positions")
    count = ranks.list.len()
    rules: dict[str, tuple[str, pl.Expr]] = {
        "positions": (
            "hold ranks from 1 up, each once and in increasing order (e.g. [1, 4])",
            _unordered_rows(batch["positions"]),
        )
    }
    if "n_rel" in schema:
        rules["n_rel"] = (
            "hold at least as many relevant documents as 'positions' lists",
            pl.col("n_rel").is_null() | (pl.col("n_rel") < count),
        )
    if "n_ret" in schema:
        rules["n_ret"] = (
            "hold at least the last rank of 'positions' (the documents the ranking returned)",
            pl.col("n_ret").is_null() | (pl.col("n_ret") < ranks.list.max().fill_null(0)),
        )
    flags = batch.select(
        **{column: bad.fill_null(False).any() for column, (_, bad) in rules.items()}
    ).row(0, named=True)
    for column, (rule, bad) in rules.items():
        if flags[column]:
            own = [name for name in ("system", *RANKS) if name in schema]
            shown = list(dict.fromkeys([*keys, *own]))
            example = batch.filter(bad.fill_null(False)).select(shown).row(0, named=True)
            raise InputError(
                f"column {column!r} of the positions frame must {rule}; example: "
                f"{format_row(example)}. {_WHAT_TO_DO['positions']}",
                kind="positions",
                column=column,
                example=example,
            )
    return batch


def _unordered_rows(column: pl.Series) -> pl.Expr:
    """Which lists of ranks are null, hold a null, a rank below 1, or a rank not above the
    one before it: read on the flat values (a list-wise ``diff`` costs ten times more)."""
    import numpy as np

    flat = column.explode(empty_as_null=False, keep_nulls=False)
    lengths = column.list.len().fill_null(0).cast(pl.Int64).to_numpy()
    starts = np.zeros(len(flat), dtype=bool)
    offsets = np.cumsum(lengths) - lengths  # where each row's ranks begin in ``flat``
    starts[offsets[lengths > 0]] = True
    step = flat.cast(pl.Int64).diff()
    bad = ((step < 1) & ~pl.Series(starts)) | (flat < 1) | flat.is_null()
    rows = np.zeros(len(column), dtype=bool)
    found = np.flatnonzero(bad.fill_null(False).to_numpy())
    rows[np.searchsorted(offsets, found, side="right") - 1] = True
    return pl.lit(pl.Series(rows)) | pl.col("positions").is_null()


def has_repeated_keys(frame: pl.DataFrame, keys: Sequence[str]) -> bool:
    """Whether two rows of ``frame`` have the same ``keys``: by comparing each row with the
    one before when the rows are sorted by the keys (per-query tables usually are: one pass,
    a tenth of the time of hashing 2 million rows), else by hashing the keys.

    Example:
        >>> frame = pl.DataFrame({"system": ["a", "a", "b"], "query": [1, 2, 1]})
        >>> has_repeated_keys(frame, ["system", "query"]), has_repeated_keys(frame, ["query"])
        (False, True)
    """
    if frame.height < 2:
        return False
    step = order_step([(key, False) for key in keys]).slice(1)
    # A null comparison (a null key) is not known to be in order: hashed below.
    in_order, repeated = frame.select(
        (step >= 0).fill_null(False).all().alias("in_order"),
        (step == 0).fill_null(False).any().alias("repeated"),
    ).row(0)
    if in_order:
        return bool(repeated)
    return bool(frame.select(pl.struct(list(keys)).is_duplicated().any()).item())
