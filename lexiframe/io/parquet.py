"""Read runs and qrels from parquet files, checking and casting their columns."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import polars as pl

from lexiframe._utils import quote_names, shorten
from lexiframe.errors import InputError, SchemaError
from lexiframe.io.files import shown, system_name
from lexiframe.io.layouts import Layout, trec_rank
from lexiframe.labels import check_grades
from lexiframe.typing import SystemFrom


def parquet_plan(files: Sequence[Path], layout: Layout, system_from: SystemFrom) -> pl.LazyFrame:
    plans = []
    for path in files:
        plan = pl.scan_parquet(path)
        try:
            schema = plan.collect_schema()
        except pl.exceptions.PolarsError as error:
            raise InputError(
                f"cannot read parquet file {shown(path)}: {shorten(str(error))}", kind="not parquet"
            ) from None
        plans.append(_conform(plan, schema, path, layout, system_from))
    return pl.concat(plans, how="vertical")


def parquet_pieces(
    path: Path, layout: Layout, system_from: SystemFrom, rows: int
) -> Iterator[pl.DataFrame]:
    """A large parquet file in pieces of about ``rows`` rows, each of whole rankings (the
    rows of the ranking a piece ends with move on to the next one, as for text files)."""
    import pyarrow.parquet as pq

    from lexiframe.io.trec import split_last_ranking

    schema = parquet_plan([path], layout, system_from).collect_schema()
    raw = pl.scan_parquet(path).collect_schema()
    ranked = "rank" in layout.output and "rank" not in raw
    plain = dataclasses.replace(layout, output=tuple(n for n in layout.output if n != "rank"))
    carried: pl.DataFrame | None = None
    for batch in pq.ParquetFile(path).iter_batches(batch_size=rows):
        piece = pl.from_arrow(batch)
        assert isinstance(piece, pl.DataFrame)
        conformed = _conform(piece.lazy(), raw, path, plain if ranked else layout, system_from)
        frame = conformed.collect()
        if carried is not None:
            frame = pl.concat([carried, frame])
        frame, carried = split_last_ranking(frame)
        if frame.height:
            yield _ranked(frame, ranked, schema)
    if carried is not None and carried.height:
        yield _ranked(carried, ranked, schema)


def _ranked(frame: pl.DataFrame, ranked: bool, schema: pl.Schema) -> pl.DataFrame:
    frame = frame.with_columns(trec_rank().alias("rank")) if ranked else frame
    return frame.select(schema.names())


def _conform(
    plan: pl.LazyFrame,
    schema: pl.Schema,
    path: Path,
    layout: Layout,
    system_from: SystemFrom,
) -> pl.LazyFrame:
    """Check a parquet file's columns and cast them to the reader's schema."""
    where = f"{layout.table} parquet file {shown(path)}"
    required = [name for name in layout.output if name != "rank"]
    if system_from == "filename" and "system" in required:
        required.remove("system")
    missing = [name for name in required if name not in schema]
    if missing:
        raise SchemaError(
            f"{where} has no column {quote_names(missing)}; it needs "
            f"{quote_names(required)} and has {quote_names(list(schema))}"
        )
    columns: dict[str, pl.Expr] = {}
    for name in layout.output:
        if name == "system" and system_from == "filename":
            columns[name] = pl.lit(system_name(path), dtype=pl.String)
            continue
        if name == "rank" and name not in schema:
            continue
        dtype = schema[name]
        column = pl.col(name)
        if name in ("query", "doc"):
            if dtype.is_integer():
                columns[name] = column.cast(pl.Int64)
            elif dtype in (pl.String, pl.Categorical) or dtype == pl.Enum:
                columns[name] = column.cast(pl.String)
            else:
                raise SchemaError(
                    f"column {name!r} of {where} holds ids, which must be strings or integers, "
                    f"not {dtype}"
                )
        elif name == "system":
            if not (dtype.is_integer() or dtype in (pl.String, pl.Categorical) or dtype == pl.Enum):
                raise SchemaError(f"column 'system' of {where} must hold strings, not {dtype}")
            columns[name] = column.cast(pl.String)
        else:
            expected = layout.output_schema[name]
            if name == "relevance" and dtype.is_float() and expected.is_integer():
                # Whole-number grades stored as floats are read; others are refused.
                plan = check_grades(plan, name, f"qrels parquet file {shown(path)}")
                dtype = pl.Int64()
            numeric_ok = dtype.is_numeric() if expected == pl.Float64 else dtype.is_integer()
            if not numeric_ok:
                kind = "numeric" if expected == pl.Float64 else "integer"
                raise SchemaError(f"column {name!r} of {where} must be {kind}, not {dtype}")
            columns[name] = column.cast(expected)
    plan = plan.select(**columns)
    if "rank" in layout.output and "rank" not in columns:
        plan = plan.with_columns(trec_rank().alias("rank"))
    return plan
