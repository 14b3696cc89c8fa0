"""The columns of runs and qrels, and the fields of their TREC text files."""

from __future__ import annotations

import dataclasses

import polars as pl

from lexiframe.labels import fractional
from lexiframe.typing import Labels

RUN_SCHEMA = pl.Schema(
    {"system": pl.String, "query": pl.String, "doc": pl.String, "score": pl.Float64}
)
"""The columns of :func:`read_run` (``rank``, Int64, follows with ``rank=True``)."""

QRELS_SCHEMA = pl.Schema({"query": pl.String, "doc": pl.String, "relevance": pl.Int64})
"""The columns of :func:`read_qrels`."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """The fields of one kind of TREC text file."""

    table: str
    fields: tuple[str, ...]
    types: dict[str, type[pl.DataType]]
    output: tuple[str, ...]

    @property
    def schema(self) -> dict[str, type[pl.DataType]]:
        return {name: self.types.get(name, pl.String) for name in self.fields}

    @property
    def output_schema(self) -> pl.Schema:
        return pl.Schema({name: self.types.get(name, pl.String) for name in self.output})

    @property
    def parsed(self) -> tuple[str, ...]:
        """The fields read: the output ones and the last one (a short line lacks it)."""
        return tuple(name for name in self.fields if name in self.output or name == self.fields[-1])

    @property
    def description(self) -> str:
        return f"{len(self.fields)} whitespace-separated fields ({' '.join(self.fields)})"


RUN = Layout(
    table="run",
    fields=("query", "Q0", "doc", "rank", "score", "system"),
    types={"rank": pl.Int64, "score": pl.Float64},
    output=tuple(RUN_SCHEMA),
)
RANKED_RUN = dataclasses.replace(RUN, output=(*RUN_SCHEMA, "rank"))
QRELS = Layout(
    table="qrels",
    fields=("query", "iteration", "doc", "relevance"),
    types={"relevance": pl.Int64},
    output=tuple(QRELS_SCHEMA),
)
LABELLED_QRELS = dataclasses.replace(QRELS, types={"relevance": pl.Float64})
"""Qrels whose relevance is a real number (``labels="gain"`` or ``"probability"``)."""


def qrels_layout(labels: Labels | None) -> Layout:
    """The layout of qrels holding ``labels`` (:attr:`lexiframe.PositionsOptions.labels`;
    ``None``: whole-number grades)."""
    return LABELLED_QRELS if fractional(labels) else QRELS


def qrels_schema(labels: Labels | None) -> pl.Schema:
    """The columns of qrels holding ``labels``: :data:`QRELS_SCHEMA`, relevance Float64
    for fractional labels."""
    return qrels_layout(labels).output_schema


def trec_rank() -> pl.Expr:
    """trec_eval's rank: score descending, then doc id descending as a string."""
    return (
        pl.struct(pl.col("score"), pl.col("doc").cast(pl.String))
        .rank("ordinal", descending=True)
        .over("system", "query")
        .cast(pl.Int64)
    )
