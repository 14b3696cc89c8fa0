"""Confidence intervals of means over queries: Student's t and the bootstrap percentile.

:func:`lexiframe.summarize` adds them per system (metrics) or per pair (preferences) with
``ci=``; :func:`lexiframe.stats.bootstrap_test` draws its resamples with the same kernel.

- ``"t"``: x̄ ± t_{(1+c)/2, n−1} · s/√n, what ``scipy.stats.t.interval(c, n − 1, x̄,
  s/√n)`` gives; null for fewer than two values;
- ``"bootstrap"``: the (1 − c)/2 and (1 + c)/2 quantiles (linear interpolation) of the
  means of B resamples of the values with replacement, what
  ``scipy.stats.bootstrap((x,), np.mean, method="percentile", n_resamples=B, rng=seed)``
  gives for each group. Every group's resamples are drawn from the seed as if alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import polars as pl

from lexiframe.errors import InputError
from lexiframe.validate import require_positive_int

Seed = int | np.random.Generator
"""An explicit source of randomness: an integer seed or a NumPy ``Generator``."""
IntervalMethod = Literal["t", "bootstrap"]
INTERVAL_METHODS: tuple[str, ...] = ("t", "bootstrap")
DEFAULT_REPLICATES = 1000
"""B, the random replicates of every test or interval that draws them unless told."""
BLOCK = 1 << 22  # values of one block of replicates (rows × replicates), 32 MB in float64


def generator(seed: Seed) -> np.random.Generator:
    """A NumPy ``Generator`` from an integer seed (or the generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        raise InputError(
            "seed must be an integer or a numpy.random.Generator, not a legacy "
            "numpy.random.RandomState; pass an integer such as seed=0, or "
            "numpy.random.default_rng(0)"
        )
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(
            f"seed must be an integer or a numpy.random.Generator, not {seed!r}; "
            "pass e.g. seed=0 so that the result can be reproduced"
        )
    # NumPy's own refusal of a negative seed does not name the argument.
    return np.random.default_rng(require_positive_int(seed, "seed", zero=True))


def check_confidence(confidence: object, name: str = "confidence") -> float:
    """``confidence`` as a level in (0, 1), or an :class:`InputError` naming ``name``."""
    valid = isinstance(confidence, int | float | np.floating) and not isinstance(confidence, bool)
    if not valid or not 0.0 < float(confidence) < 1.0:  # type: ignore[arg-type]
        percent = (
            f"; for {confidence:g} %, pass {confidence / 100:g}"  # type: ignore[operator]
            if valid and 1 < float(confidence) <= 100  # type: ignore[arg-type]
            else ""
        )
        raise InputError(
            f"{name} must be a level in (0, 1), e.g. {name}=0.95, not {confidence!r}{percent}"
        )
    return float(confidence)  # type: ignore[arg-type]


def t_interval(
    mean: np.ndarray, std: np.ndarray, n: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of each mean: x̄ ± t_{(1+c)/2, n−1}·s/√n (NaN where n < 2).

    >>> low, high = t_interval(np.array([0.5]), np.array([0.2]), np.array([16]), 0.95)
    >>> round(float(low[0]), 6), round(float(high[0]), 6)
    (0.393428, 0.606572)
    """
    from scipy import stats  # SciPy is imported where it is used (start-up time)

    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = stats.t.ppf((1 + confidence) / 2, np.where(n >= 2, n - 1, np.nan)) * std / np.sqrt(n)
    return mean - half, mean + half


def resample_counts(rng: np.random.Generator, count: int, n: int) -> np.ndarray:
    """How often each of ``n`` values is drawn in ``count`` resamples: the draws of
    ``scipy.stats.bootstrap`` (``rng.integers(0, n, (count, n))``), as counts."""
    index = rng.integers(0, n, (count, n))
    flat = (index + n * np.arange(count)[:, None]).ravel()
    return np.bincount(flat, minlength=count * n).reshape(count, n).astype(np.float64)


def resampled_means(
    values: np.ndarray, n_replicates: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The means of x and of x² over ``n_replicates`` resamples of each row of ``values``
    (rows × replicates; all rows share the resamples), drawn in blocks."""
    rows, n = values.shape
    means = np.empty((rows, n_replicates))
    squares = np.empty((rows, n_replicates))
    step = max(1, BLOCK // max(n, rows))
    for start in range(0, n_replicates, step):
        count = min(step, n_replicates - start)
        counts = resample_counts(rng, count, n)
        means[:, start : start + count] = values @ counts.T / n
        squares[:, start : start + count] = (values * values) @ counts.T / n
    return means, squares


def percentiles(means: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval of each row of resampled means."""
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2], axis=1)
    return low, high


def row_blocks(rows: int, n_replicates: int) -> Iterator[slice]:
    """Blocks of rows whose resampled means (rows × replicates) fit in :data:`BLOCK`."""
    step = max(1, BLOCK // n_replicates)
    for first in range(0, rows, step):
        yield slice(first, min(first + step, rows))


def bootstrap_interval(
    values: np.ndarray, n_replicates: int, rng: np.random.Generator, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap percentile interval of the mean of each row of ``values``; every block
    of rows sees the same resamples, so a row's interval does not depend on the others."""
    low = np.empty(values.shape[0])
    high = np.empty(values.shape[0])
    state = rng.bit_generator.state
    for block in row_blocks(values.shape[0], n_replicates):
        rng.bit_generator.state = state
        low[block], high[block] = percentiles(
            resampled_means(values[block], n_replicates, rng)[0], confidence
        )
    return low, high


def add_intervals(
    frame: pl.DataFrame,
    summary: pl.DataFrame,
    keys: Sequence[str],
    columns: Sequence[str],
    *,
    confidence: float,
    method: str,
    n_replicates: int,
    seed: Seed | None,
) -> pl.DataFrame:
    """``summary`` (one row per ``keys``) with ``<m>_ci_low`` and ``<m>_ci_high`` after
    each measure ``<m>`` of ``columns``: the interval of its mean over the rows of
    ``frame``, null values left out (as the mean leaves them)."""
    if method not in INTERVAL_METHODS:
        raise InputError(f"unknown interval method {method!r}; choose 't' or 'bootstrap'")
    confidence = check_confidence(confidence, "ci")
    if method == "bootstrap":
        if seed is None:
            raise InputError(
                "method='bootstrap' draws random resamples and needs an explicit seed=, "
                "e.g. seed=0, so that the intervals can be reproduced"
            )
        n_replicates = require_positive_int(n_replicates, "n_replicates")
        rng = generator(seed)
    keys = list(keys)
    for column in columns:
        values = frame.select(*keys, pl.col(column).cast(pl.Float64)).drop_nulls(column)
        if method == "t":
            moments = values.group_by(keys).agg(
                pl.col(column).mean().alias("mean"),
                pl.col(column).std(ddof=1).alias("std"),
                pl.len().alias("n"),
            )
            mean, std, n = (
                moments[name].to_numpy().astype(np.float64) for name in moments.columns[-3:]
            )
            low, high = t_interval(mean, std, n, confidence)
            bounds = moments.select(*keys)
        else:
            bounds, matrix, counts = group_matrix(values, keys, column)
            low = np.full(bounds.height, np.nan)
            high = np.full(bounds.height, np.nan)
            start = rng.bit_generator.state
            for n in np.unique(counts):  # one matrix per number of values (usually one)
                rng.bit_generator.state = start  # each as if drawn alone from the seed
                rows = np.flatnonzero(counts == n)
                low[rows], high[rows] = bootstrap_interval(
                    matrix[rows, :n], n_replicates, rng, confidence
                )
        bounds = bounds.with_columns(
            pl.Series(f"{column}_ci_low", low, nan_to_null=True),
            pl.Series(f"{column}_ci_high", high, nan_to_null=True),
        )
        summary = summary.join(bounds, on=keys, how="left", nulls_equal=True)
    order = [
        name
        for name in summary.columns
        if not name.endswith(("_ci_low", "_ci_high"))
        for name in (name, *((f"{name}_ci_low", f"{name}_ci_high") if name in columns else ()))
    ]
    return summary.select(order)


def group_matrix(
    values: pl.DataFrame, keys: list[str], column: str
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """The groups of ``values`` as a groups × values matrix (each row's values first, zeros
    after), with the groups' keys sorted and their number of values.

    >>> frame = pl.DataFrame({"system": ["a", "b", "a"], "AP": [0.5, 0.25, 1.0]})
    >>> keys, matrix, counts = group_matrix(frame, ["system"], "AP")
    >>> keys["system"].to_list(), matrix.tolist(), counts.tolist()
    (['a', 'b'], [[0.5, 1.0], [0.25, 0.0]], [2, 1])
    """
    ordered = values.select(*keys, pl.col(column).cast(pl.Float64)).with_row_index("_order")
    ordered = ordered.sort([*keys, "_order"]).with_columns(
        _row=pl.struct(keys).rle_id(), _column=pl.int_range(pl.len()).over(keys)
    )
    groups = ordered.group_by(keys, maintain_order=True).agg(pl.len().alias("_n"))
    counts = groups["_n"].to_numpy()
    matrix = np.zeros((groups.height, int(counts.max(initial=0))))
    matrix[ordered["_row"].to_numpy(), ordered["_column"].to_numpy()] = ordered[column].to_numpy()
    return groups.select(keys), matrix, counts
