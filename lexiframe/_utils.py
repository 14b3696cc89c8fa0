"""Small helpers shared by the modules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

IntoExpr = str | pl.Expr


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
    """Render one example row for an error message: ``system='bm25' query='401'``."""
    return " ".join(f"{key}={value!r}" for key, value in row.items())


def quote_names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)
