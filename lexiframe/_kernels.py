"""NumPy kernels for lexicographic preferences over the Arrow buffers of list columns.

A list column is read once as flat ``values`` and ``offsets`` (row ``i`` is
``values[offsets[i]:offsets[i + 1]]``), zero copy when the column is one contiguous chunk.
Every pair kernel takes two such columns and two row-index arrays, ``rows_a`` and ``rows_b``:
pair ``k`` compares row ``rows_a[k]`` of the first column with row ``rows_b[k]`` of the
second, so a table of pairs never copies the lists it compares.

The lists hold the ascending ranks of the retrieved relevant documents of a ranking. The
full position vector of the lexicographic papers imputes the unretrieved relevant documents
at the bottom of the corpus (lexirecall paper §2.2); with ``n`` larger than any depth the
imputed positions are equal in both vectors at every level both lists miss, and larger
than any retrieved position, which is all the kernels need (docs/definitions.md §3):

- ``i*`` is the first level where the lists differ, or where exactly one list has ended;
- ``j*`` is ``max(len_a, len_b)`` when the lengths differ, else the last level where the
  lists differ;
- an imputed position compares as ``+inf`` and its reciprocal rank is 0.

The work is vectorised: one pass per recall level over the shrinking set of pairs that are
still tied, so the cost is proportional to the number of levels each pair needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from lexiframe.errors import SchemaError

if TYPE_CHECKING:  # pyarrow is imported where it is used (start-up time)
    import pyarrow as pa

NO_LEVEL = -1
"""What the level kernels return for a pair of identical lists."""


@dataclass(frozen=True)
class ListBuffers:
    """The flat buffers of a list column.

    ``values[offsets[i]:offsets[i + 1]]`` is row ``i``; ``valid`` is ``None`` when no row is
    null, else a boolean mask of the non-null rows.
    """

    values: np.ndarray
    offsets: np.ndarray
    valid: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def list_buffers(column: pl.Series | pa.Array | pa.ChunkedArray) -> ListBuffers:
    """Flat ``values`` and ``offsets`` of a list column (Polars, or Arrow list/large_list).

    A Polars column is read by Polars (its values flattened, its offsets from the list
    lengths), without importing pyarrow. An Arrow column: zero copy for one chunk (the
    values are viewed from the child array, offsets rebased only when the array is a
    slice); chunks are concatenated otherwise.

    >>> import polars as pl
    >>> buffers = list_buffers(pl.Series([[1, 3], [], None, [2]], dtype=pl.List(pl.UInt32)))
    >>> buffers.values.tolist(), buffers.offsets.tolist(), buffers.valid.tolist()
    ([1, 3, 2], [0, 2, 2, 2, 3], [True, True, False, True])
    """
    if isinstance(column, pl.Series):
        return _series_buffers(column)
    import pyarrow as pa  # Arrow arrays only (Spark's): importing it costs 0.1 s

    if isinstance(column, pa.ChunkedArray):
        chunks = [_chunk_buffers(chunk) for chunk in column.chunks]
        if len(chunks) == 1:
            return chunks[0]
        return _concatenate(chunks, column.type)
    return _chunk_buffers(column)


def _series_buffers(column: pl.Series) -> ListBuffers:
    """The buffers of a Polars list column, read by Polars itself (no Arrow round trip)."""
    if not isinstance(column.dtype, pl.List):
        raise TypeError(f"expected a list column, got {column.dtype}")
    values = column.explode(empty_as_null=False, keep_nulls=False)
    if values.null_count():
        raise ValueError("a list of positions holds a null element")
    lengths = column.list.len().fill_null(0).cast(pl.Int64).to_numpy()
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    valid = column.is_not_null().to_numpy() if column.null_count() else None
    return ListBuffers(values.to_numpy(), offsets, valid)


def _chunk_buffers(array: pa.Array) -> ListBuffers:
    import pyarrow as pa

    if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
        raise TypeError(f"expected a list column, got Arrow type {array.type}")
    # ``offsets`` honours the array's slice; ``values`` is the whole child array. Viewed
    # through Polars: pyarrow's own to_numpy imports pandas, a quarter of a second.
    offsets = np.asarray(pl.Series(array.offsets).to_numpy(), dtype=np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    child = array.values.slice(first, last - first)
    if child.null_count:
        raise ValueError("a list of positions holds a null element")
    values = pl.Series(child).to_numpy()
    if first:
        offsets = offsets - first
    valid = None
    if array.null_count:
        valid = pl.Series(array.is_valid()).to_numpy()
    return ListBuffers(values, offsets, valid)


def _concatenate(chunks: list[ListBuffers], arrow_type: pa.DataType) -> ListBuffers:
    if not chunks:
        dtype = arrow_type.value_type.to_pandas_dtype()
        return ListBuffers(np.empty(0, dtype=dtype), np.zeros(1, dtype=np.int64))
    values = np.concatenate([chunk.values for chunk in chunks])
    shifts = np.cumsum([0] + [int(chunk.offsets[-1]) for chunk in chunks[:-1]])
    offsets = np.concatenate(
        [chunks[0].offsets[:1]]
        + [chunk.offsets[1:] + shift for chunk, shift in zip(chunks, shifts, strict=True)]
    )
    valid = None
    if any(chunk.valid is not None for chunk in chunks):
        valid = np.concatenate(
            [np.ones(len(c), bool) if c.valid is None else c.valid for c in chunks]
        )
    return ListBuffers(values, offsets, valid)


def _bounds(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts = offsets[rows]
    return starts, offsets[rows + 1] - starts


def first_difference(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
) -> np.ndarray:
    """i*: the first recall level (1-based) where two position vectors differ, or -1.

    Lexiprecision paper §3.4. Where one list is a prefix of the other, i* is the level
    just past the shorter one (its imputed position differs from a retrieved one).

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 1, 5, 1]), np.array([0, 2, 4, 5])
    >>> first_difference(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2])).tolist()
    [2, 2, -1]
    """
    starts_a, lengths_a = _bounds(offsets_a, rows_a)
    starts_b, lengths_b = _bounds(offsets_b, rows_b)
    common = np.minimum(lengths_a, lengths_b)
    out = np.where(lengths_a == lengths_b, NO_LEVEL, common + 1)
    active = np.flatnonzero(common > 0)
    cursor_a = starts_a[active]
    cursor_b = starts_b[active]
    limit = common[active]
    level = 0
    while active.size:
        level += 1
        differ = values_a[cursor_a] != values_b[cursor_b]
        out[active[differ]] = level
        keep = ~differ & (limit > level)
        active, cursor_a, cursor_b, limit = (
            active[keep],
            cursor_a[keep] + 1,
            cursor_b[keep] + 1,
            limit[keep],
        )
    return out


def last_difference(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
) -> np.ndarray:
    """j*: the last recall level (1-based) where two imputed position vectors differ, or -1.

    Lexirecall paper §5.2, eq. 11 (docs/definitions.md §3): with different numbers of
    retrieved relevant documents j* = max(len_a, len_b); with equal numbers, the last level
    whose positions differ.

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 2, 4, 1]), np.array([0, 2, 4, 5])
    >>> last_difference(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2])).tolist()
    [1, 2, -1]
    """
    starts_a, lengths_a = _bounds(offsets_a, rows_a)
    starts_b, lengths_b = _bounds(offsets_b, rows_b)
    out = np.where(lengths_a == lengths_b, NO_LEVEL, np.maximum(lengths_a, lengths_b))
    active = np.flatnonzero((lengths_a == lengths_b) & (lengths_a > 0))
    level = lengths_a[active]
    cursor_a = starts_a[active] + level - 1
    cursor_b = starts_b[active] + level - 1
    while active.size:
        differ = values_a[cursor_a] != values_b[cursor_b]
        out[active[differ]] = level[differ]
        keep = ~differ & (level > 1)
        active, cursor_a, cursor_b, level = (
            active[keep],
            cursor_a[keep] - 1,
            cursor_b[keep] - 1,
            level[keep] - 1,
        )
    return out


def position_at(
    values: np.ndarray, offsets: np.ndarray, rows: np.ndarray, level: np.ndarray | int
) -> np.ndarray:
    """p̂ at a 1-based recall level as float64; ``inf`` where the list has no such level.

    ``inf`` stands for an imputed position (n larger than any depth), and also for level
    -1 (a tie), so that both vectors read ``inf`` there.
    """
    starts, lengths = _bounds(offsets, rows)
    level = np.broadcast_to(np.asarray(level, dtype=np.int64), starts.shape)
    out = np.full(starts.shape, np.inf)
    present = (level >= 1) & (level <= lengths)
    out[present] = values[starts[present] + level[present] - 1]
    return out


def _sign(position_a: np.ndarray, position_b: np.ndarray) -> np.ndarray:
    """sign(position_b − position_a) as int8; 0 where both are imputed (``inf``)."""
    return (position_a < position_b).view(np.int8) - (position_a > position_b).view(np.int8)


def _sign_at(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    level: np.ndarray,
) -> np.ndarray:
    """sign(p̂_b − p̂_a) at each pair's recall level ``level`` (i* or j*), as int8."""
    position_a = position_at(values_a, offsets_a, rows_a, level)
    position_b = position_at(values_b, offsets_b, rows_b, level)
    return _sign(position_a, position_b)


def lexiprecision(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    *,
    level: np.ndarray | None = None,
) -> np.ndarray:
    """sgnLP = sign(p̂_b[i*] − p̂_a[i*]) as int8 (lexiprecision paper §3.5, eq. 3).

    ``level`` takes a precomputed i* (from :func:`first_difference`).

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 1, 5, 1]), np.array([0, 2, 4, 5])
    >>> lexiprecision(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2])).tolist()
    [1, 1, 0]
    """
    if level is None:
        level = first_difference(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b)
    return _sign_at(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b, level)


def rr_lexiprecision(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    *,
    level: np.ndarray | None = None,
) -> np.ndarray:
    """rrLP = 1/p̂_a[i*] − 1/p̂_b[i*] as float64, an imputed position counting 0 (eq. 2).

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 1, 5, 1]), np.array([0, 2, 4, 5])
    >>> rr_lexiprecision(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2])).tolist()
    [0.04999999999999999, 0.25, 0.0]
    """
    if level is None:
        level = first_difference(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b)
    return delta_rr(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b, level)


def lexirecall(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    *,
    level: np.ndarray | None = None,
) -> np.ndarray:
    """sgnLR = sign(p̂_b[j*] − p̂_a[j*]) as int8 (lexirecall paper §3).

    More retrieved relevant documents win; with equal counts the lists compare from the
    bottom. ``level`` takes a precomputed j* (from :func:`last_difference`).

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 2, 4, 1]), np.array([0, 2, 4, 5])
    >>> lexirecall(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2])).tolist()
    [1, 1, 0]
    """
    if level is None:
        level = last_difference(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b)
    return _sign_at(values_a, offsets_a, rows_a, values_b, offsets_b, rows_b, level)


def delta_rr(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    level: np.ndarray | int,
) -> np.ndarray:
    """δRR_i = 1/p̂_a[i] − 1/p̂_b[i] as float64 at a recall level ``i`` (scalar or per pair).

    Lexiprecision paper §3.4; an imputed position counts 0 (n larger than any depth).

    >>> import numpy as np
    >>> v, o = np.array([1, 4, 1, 5, 1]), np.array([0, 2, 4, 5])
    >>> delta_rr(v, o, np.array([0, 0, 2]), v, o, np.array([1, 2, 2]), 2).tolist()
    [0.04999999999999999, 0.25, 0.0]
    """
    rr_a = 1.0 / position_at(values_a, offsets_a, rows_a, level)
    rr_b = 1.0 / position_at(values_b, offsets_b, rows_b, level)
    return rr_a - rr_b


def positions_buffers(series: pl.Series) -> ListBuffers:
    """The Arrow buffers of a list column of positions (an Array column is read as lists);
    a column that is not a list of numbers is refused, naming it."""
    dtype = series.dtype
    if isinstance(dtype, pl.Array):
        series = series.cast(pl.List(dtype.inner))
    elif not isinstance(dtype, pl.List):
        raise SchemaError(
            f"column {series.name!r} must be a list of positions (list[u32]), not {dtype}"
        )
    inner = series.dtype.inner if isinstance(series.dtype, pl.List) else None
    if inner is None or not inner.is_numeric():
        raise SchemaError(f"column {series.name!r} must hold numeric positions, not {series.dtype}")
    return list_buffers(series)


def pair_rows(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of every pair (i, j), i < j, of rows within each run of equal group ids.

    ``groups`` must be sorted (consecutive rows of a group). Vectorised: row i pairs with
    the rows after it up to its group's end.
    """
    if not groups.size:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    sizes = np.bincount(groups)
    ends = np.cumsum(sizes)[groups]
    rows = np.arange(groups.size, dtype=np.int64)
    partners = ends - rows - 1
    rows_a = np.repeat(rows, partners)
    first_of_row = np.repeat(np.cumsum(partners) - partners, partners)
    rows_b = rows_a + 1 + (np.arange(rows_a.size, dtype=np.int64) - first_of_row)
    return rows_a, rows_b
