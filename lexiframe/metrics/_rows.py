"""Measures computed in NumPy over a batch's columns, as Polars expressions.

A measure whose Polars form needs several ``list.eval`` passes per ranking (cumulative
maxima, merged lists, running sums) runs faster as a few NumPy operations over the flat
buffers of its list columns (:func:`lexiframe._kernels.list_buffers`): one call per batch,
no Python per row. :func:`per_ranking` wraps such a kernel as an elementwise expression
over a struct of the columns it reads, so it still works in ``select`` and ``with_columns``
of a DataFrame or a LazyFrame.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from lexiframe._utils import IntoExpr, into_expr

Kernel = Callable[[pl.DataFrame], np.ndarray]
"""Float64 values, one per row of a batch whose columns are the named fields."""


def per_ranking(kernel: Kernel, **columns: IntoExpr) -> pl.Expr:
    """A Float64 expression of ``kernel`` over the named columns, null on a row where one
    of them is null (the kernel reads a null list as empty, a null count as 0).

    Example:
        >>> import numpy as np
        >>> import polars as pl
        >>> from lexiframe._kernels import list_buffers
        >>> def longest(fields: pl.DataFrame) -> np.ndarray:
        ...     return list_buffers(fields["xs"]).lengths.astype(np.float64)
        >>> df = pl.DataFrame({"a": [[1, 2], [], None]})
        >>> df.select(per_ranking(longest, xs="a")).to_series().to_list()
        [2.0, 0.0, None]
    """

    def run(batch: pl.Series) -> pl.Series:
        fields = batch.struct.unnest()
        values = pl.Series(np.asarray(kernel(fields), dtype=np.float64), dtype=pl.Float64)
        null = fields.select(pl.any_horizontal(pl.all().is_null())).to_series()
        return values.scatter(null.arg_true(), None) if null.any() else values

    struct = pl.struct([into_expr(column).alias(name) for name, column in columns.items()])
    return struct.map_batches(run, return_dtype=pl.Float64, is_elementwise=True)


def counts(column: pl.Series) -> np.ndarray:
    """A count column as int64 (0 where null)."""
    values: np.ndarray = column.fill_null(0).cast(pl.Int64).to_numpy()
    return values


def row_of_each(offsets: np.ndarray) -> np.ndarray:
    """The row of each element of a flat buffer with these offsets."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def index_in_row(offsets: np.ndarray) -> np.ndarray:
    """The place of each element of a flat buffer within its row, from 0."""
    lengths = np.diff(offsets)
    places: np.ndarray = np.arange(int(offsets[-1]) - int(offsets[0])) - np.repeat(
        offsets[:-1] - offsets[0], lengths
    )
    return places


def suffix_max(values: np.ndarray, offsets: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """max(values[starts[i]:offsets[i + 1]]) of each row i (a maximum is exact, whatever the
    order); where the range is empty the value is meaningless (the caller masks it).

    Example:
        >>> import numpy as np
        >>> values, offsets = np.array([3.0, 1.0, 2.0, 5.0]), np.array([0, 3, 4])
        >>> suffix_max(values, offsets, np.array([1, 3])).tolist()
        [2.0, 5.0]
    """
    if not len(starts):
        return np.empty(0)
    padded = np.append(values.astype(np.float64, copy=False), 0.0)
    bounds = np.empty(2 * len(starts), dtype=np.intp)
    bounds[0::2] = np.minimum(starts, offsets[1:])
    bounds[1::2] = offsets[1:]
    return np.maximum.reduceat(padded, bounds)[0::2]


def running_sums(terms: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The sum of each row's terms, added one after another in order (a running sum, as a
    loop adds them; NumPy's ``sum`` adds pairwise and may differ in the last bit); 0.0 for
    an empty row.

    Example:
        >>> import numpy as np
        >>> running_sums(np.array([0.1, 0.2, 0.3, 1.0]), np.array([0, 3, 3, 4])).tolist()
        [0.6000000000000001, 0.0, 1.0]
    """
    order, still, cursor = _longest_first(offsets)
    running = np.zeros(len(order))
    for step, active in enumerate(still.tolist()):
        running[:active] += terms[cursor[:active] + step]
    sums = np.empty(len(order))
    sums[order] = running
    return sums


def _longest_first(offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows by length, longest first (``order``); for each step j, how many of them
    still have a j-th element (a prefix of ``order``: ``still[j]``); and where each row
    starts in the flat buffer (``cursor``, in ``order``). A loop over steps then adds
    every row's j-th term at once, as a loop over each row would, in order."""
    lengths = np.diff(offsets)
    order = np.argsort(-lengths, kind="stable")
    width = int(lengths.max()) if len(lengths) else 0
    still = np.searchsorted(-lengths[order], -np.arange(width), side="left")
    return order, still, offsets[:-1][order] - offsets[0]


def cumulative_sums(terms: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each row's running sum at each of its elements (flat, as ``cum_sum`` over each
    list), the terms added one after another in order.

    Example:
        >>> import numpy as np
        >>> cumulative_sums(np.array([0.1, 0.2, 0.3, 1.0]), np.array([0, 3, 3, 4])).tolist()
        [0.1, 0.30000000000000004, 0.6000000000000001, 1.0]
    """
    _, still, cursor = _longest_first(offsets)
    running = np.zeros(len(offsets) - 1)
    out = np.empty(len(terms))
    for step, active in enumerate(still.tolist()):
        place = cursor[:active] + step
        if step:
            running[:active] += terms[place]
        else:
            running[:active] = terms[place]
        out[place] = running[:active]
    return out


_discounts = np.zeros(1)


def log2_discounts(ranks: np.ndarray) -> np.ndarray:
    """1/log2(rank + 1) of integer ranks ≥ 1, each as Polars computes
    ``1.0 / (rank + 1.0).log(2)``: ln(rank + 1)/ln 2 with the C library's logarithm (NumPy's
    own may differ in the last bit), from a table grown as ranks need it.

    Example:
        >>> import numpy as np
        >>> log2_discounts(np.array([1, 3])).tolist()
        [1.0, 0.5]
    """
    global _discounts
    top = int(ranks.max()) if len(ranks) else 0
    table = _discounts
    if top >= len(table):
        base = math.log(2.0)
        more = [1.0 / (math.log(rank + 1.0) / base) for rank in range(len(table), 2 * top + 1)]
        table = _discounts = np.concatenate([table, more])
    found: np.ndarray = table[ranks]
    return found
