"""Between Spark and Polars: schemas, Arrow tables and the driver's dry runs.

Spark hands each group to Python as an Arrow table and takes one back in the schema it was
promised. Polars returns ``large_string``, ``large_list`` and unsigned integers, which Spark
has no type for: they are cast to ``string``, ``array`` and the next wider signed integer
(``u32`` positions become ``bigint``). Inside a group the positions columns are cast back to
the types lexiframe gives them, so that the same Polars code sees the same frame.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from lexiframe.spark import _errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame

_WIDER = {
    pa.uint8(): pa.int16(),
    pa.uint16(): pa.int32(),
    pa.uint32(): pa.int64(),
    pa.uint64(): pa.int64(),
}


def spark_arrow_type(dtype: pa.DataType) -> pa.DataType:
    """The Arrow type Spark accepts for ``dtype``: plain strings and lists, signed integers.

    >>> spark_arrow_type(pa.large_list(pa.uint32()))
    ListType(list<item: int64>)
    """
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return pa.binary()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_list_view(dtype):
        return pa.list_(spark_arrow_type(dtype.value_type))
    if pa.types.is_struct(dtype):
        return pa.struct([field.with_type(spark_arrow_type(field.type)) for field in dtype])
    return _WIDER.get(dtype, dtype)


def arrow_schema(schema: pl.Schema) -> pa.Schema:
    """The Spark-compatible Arrow schema of a Polars schema."""
    empty = pl.DataFrame(schema=schema).to_arrow()
    return pa.schema([field.with_type(spark_arrow_type(field.type)) for field in empty.schema])


def to_spark_table(frame: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """``frame`` as an Arrow table in ``schema`` (the one promised to Spark)."""
    return frame.select(schema.names).to_arrow().cast(schema)


def polars_frame(table: pa.Table, casts: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    """A group's Arrow table as a Polars frame in one chunk per column, with ``casts``
    applied where present. Spark sends a group in batches of 10,000 rows; the copy into
    one chunk takes less than it saves in the group-bys that follow."""
    frame = pl.from_arrow(table, rechunk=True)
    assert isinstance(frame, pl.DataFrame)
    if casts:
        frame = frame.cast({name: dtype for name, dtype in casts.items() if name in frame.columns})
    return frame


def empty_polars(sdf: SparkFrame) -> pl.DataFrame:
    """An empty Polars frame with the columns and types of a Spark DataFrame."""
    from pyspark.sql.pandas.types import to_arrow_schema

    frame = pl.from_arrow(to_arrow_schema(sdf.schema).empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame


def quoted(name: str) -> str:
    """A column name as Spark reads it literally (dots and all): ``RBP(p=0.9)``.

    >>> quoted("RBP(p=0.9)")
    '`RBP(p=0.9)`'
    """
    return "`" + name.replace("`", "``") + "`"


def collect(sdf: SparkFrame) -> pl.DataFrame:
    """A (small) Spark DataFrame collected on the driver as a Polars frame."""
    frame = pl.from_arrow(sdf.toArrow())
    assert isinstance(frame, pl.DataFrame)
    return frame


def sample_row(sdf: SparkFrame) -> pl.DataFrame:
    """One made-up row with the columns and types of a Spark DataFrame (zeros, "0"), built
    without a Spark job: what the driver's dry runs check the types and options on."""
    empty = empty_polars(sdf).to_arrow()
    table = pa.table([sample_value(field.type) for field in empty.schema], schema=empty.schema)
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def sample_value(dtype: pa.DataType) -> pa.Array:
    """A one-element array of ``dtype`` holding a plain non-null value (zero, "0")."""
    sources = (pa.array([0], pa.int64()), pa.array(["0"]), pa.array([[]], pa.list_(pa.int64())))
    for source in sources:
        try:
            return source.cast(dtype)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
    return pa.nulls(1, dtype)


def group_function(
    function: Callable[..., pa.Table], **keywords: Any
) -> Callable[[pa.Table], pa.Table]:
    """``function`` with its keyword arguments bound, as Spark calls it on each group: with
    the group's Arrow table.

    PySpark reads the type hints and the number of parameters of what it is given to
    choose how to call it: a plain function of one parameter without hints (not a
    ``functools.partial``, nor a callable object) is called with the table alone.
    """

    marked = _errors.marked(function)  # lexiframe's errors keep their type on the driver

    def call(table):  # type: ignore[no-untyped-def, unused-ignore]  # no hints: PySpark reads them
        return marked(table, **keywords)

    return call


def cogroup_function(
    function: Callable[..., pa.Table], **keywords: Any
) -> Callable[[pa.Table, pa.Table], pa.Table]:
    """:func:`group_function` for a cogroup: called with the two sides' Arrow tables."""

    marked = _errors.marked(function)

    def call(left, right):  # type: ignore[no-untyped-def, unused-ignore]  # no hints: PySpark reads them
        return marked(left, right, **keywords)

    return call


@contextmanager
def quiet_pyspark() -> Iterator[None]:
    """Silence PySpark's warning that it does not yet support pandas 3: lexiframe hands it
    Arrow tables, never pandas frames."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        yield
