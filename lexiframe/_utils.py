"""Small helpers shared by the modules."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import FrameType

import polars as pl

IntoExpr = str | pl.Expr


CORPUS_SIZE_CLI_HINT = " Pass the corpus size with --n to give every ranking a value."
"""The end of a message about a measure null without the corpus size, at the command line
(the API's says ``n=``: ``metrics.registry.needs_n_hint``)."""


def into_expr(value: IntoExpr) -> pl.Expr:
    """Turn a column name or an expression into an expression."""
    return pl.col(value) if isinstance(value, str) else value


def as_list(keys: str | Iterable[str] | None) -> list[str]:
    """Normalise ``by=``-style arguments: ``None``, one name or several names."""
    if keys is None:
        return []
    if isinstance(keys, str):
        return [keys]
    return list(keys)


def format_row(row: dict[str, object]) -> str:
    """Render one example row for an error message: ``system='bm25' query='401'`` (a long
    value shortened, so that a message stays short whatever the data)."""
    return " ".join(f"{key}={shorten(repr(value), 60)}" for key, value in row.items())


def shorten(text: str, limit: int = 100) -> str:
    """``text`` cut to about ``limit`` characters for a message, saying how long it was.

    Example:
        >>> shorten("x" * 500, 20)
        'xxxxxxxxxxxxxxxxxxxx… (500 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def quote_names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """A count with its noun, singular for one: ``1 query``, ``2 queries``.

    Example:
        >>> plural(1, "query", "queries"), plural(2, "query", "queries"), plural(0, "system")
        ('1 query', '2 queries', '0 systems')
    """
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {noun}"


def caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside lexiframe, for ``warnings.warn`` called
    in the function that calls this: a warning then points at the user's line."""
    level = 2
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("lexiframe"):
        level, frame = level + 1, frame.f_back
    return level


def lazy_frames(
    frames: Callable[[], Iterator[pl.DataFrame]], schema: pl.Schema, name: str
) -> pl.LazyFrame:
    """A LazyFrame whose rows are those ``frames()`` yields, made only when it is collected.

    Polars' pushed-down projection, predicate and row limit apply to each frame as it comes,
    so a plan over it holds one frame at a time rather than all of them.
    """
    from polars.io.plugins import register_io_source

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        remaining = n_rows
        for frame in frames():
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

    return register_io_source(source, schema=schema, explain_name=name)


def markdown_cell(text: str) -> str:
    r"""``text`` as one cell of a Markdown table: its pipes escaped (a run tag may hold one).

    >>> print(markdown_cell("bm25|rm3"))
    bm25\|rm3
    """
    return text.replace("|", "\\|").replace("\n", " ")
