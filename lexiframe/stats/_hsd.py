"""Tukey's HSD over the systems × queries matrices: the studentized range and the
randomised test (:func:`lexiframe.stats.tukey_hsd`,
:func:`lexiframe.stats.randomized_tukey_hsd`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from lexiframe import _progress
from lexiframe.stats._common import TOLERANCE, negligible
from lexiframe.stats._matrices import Block, blocks_of, empty_result, pair_frame, residual_variance
from lexiframe.validate import require_positive_int

_REPLICATE_BLOCK = 1 << 22  # values per block of permuted replicates


def hsd(table: pl.DataFrame, measure: str, by: list[str], blocking: bool = True) -> pl.DataFrame:
    from lexiframe.stats._studentized import studentized_range_sf  # it imports SciPy

    parts = []
    name = "hsd_blocked" if blocking else "hsd_one_way"
    for block in blocks_of(table, measure, by) or []:
        x = block.values
        s, q = x.shape
        system_mean = x.mean(axis=1)
        if blocking:  # two-way ANOVA without replication: queries are a factor
            df = (s - 1) * (q - 1)
            variance = residual_variance(x)
        else:  # one-way ANOVA: the variance between queries stays in the error term
            df = s * (q - 1)
            variance = float(((x - system_mean[:, None]) ** 2).sum()) / df
        difference = system_mean[:, None] - system_mean[None, :]
        spread = np.abs(difference)
        size = float(np.abs(x).max())  # the scale of the shared tolerance
        if not negligible(np.sqrt(variance), size):
            q_stat = spread / np.sqrt(variance / q)
            p = studentized_range_sf(q_stat, s, df)
        else:  # no residual noise: any difference is certain, no difference is none
            real = ~negligible(spread, size)
            q_stat = np.where(real, np.inf, 0.0)
            p = np.where(real, 0.0, 1.0)
        p = np.clip(p, 0.0, 1.0)
        columns = {"mean": difference, "statistic": q_stat, "p_value": p}
        parts.append(pair_frame(block, by, columns).with_columns(test=pl.lit(name)))
    return pl.concat(parts) if parts else empty_result(table, by)


def randomized_hsd(
    table: pl.DataFrame,
    measure: str,
    by: list[str],
    n_replicates: int,
    rng: np.random.Generator,
    progress: bool | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    n_replicates = require_positive_int(n_replicates, "n_replicates")
    parts = []
    blocks = sorted(
        blocks_of(table, measure, by) or [], key=lambda block: tuple(map(str, block.key.values()))
    )
    total = n_replicates * len(blocks)
    with _progress.bar(total, progress=progress, desc="randomised HSD", unit="replicate") as bar:
        for block in blocks:
            parts.append(randomized_block(block, by, n_replicates, rng, bar, blocking))
    return pl.concat(parts) if parts else empty_result(table, by)


def randomized_block(
    block: Block,
    by: list[str],
    n_replicates: int,
    rng: np.random.Generator,
    bar: _progress.Bar,
    blocking: bool = True,
) -> pl.DataFrame:
    """The randomised HSD of one (by…) group: ``n_replicates`` permutations, in batches."""
    x = block.values
    s, q = x.shape
    system_mean = x.mean(axis=1)
    difference = system_mean[:, None] - system_mean[None, :]
    ranges = np.empty(n_replicates)
    step = max(1, _REPLICATE_BLOCK // x.size)
    for start in range(0, n_replicates, step):
        count = min(step, n_replicates - start)
        if blocking:  # shuffle the system labels of each query (column), per replicate
            shuffled = rng.permuted(np.broadcast_to(x, (count, s, q)), axis=1)
        else:  # one-way: shuffle all the scores of the matrix
            flat = rng.permuted(np.broadcast_to(x.reshape(-1), (count, s * q)), axis=1)
            shuffled = flat.reshape(count, s, q)
        means = shuffled.mean(axis=2)
        ranges[start : start + count] = means.max(axis=1) - means.min(axis=1)
        bar.update(count)
    ranges.sort()
    observed = np.abs(difference)
    # a range within the shared tolerance of the observed difference reaches it
    slack = TOLERANCE * max(float(np.abs(x).max()), 1.0)
    exceed = n_replicates - np.searchsorted(ranges, observed - slack, side="left")
    p = (exceed + 1) / (n_replicates + 1)  # the observed labelling counts: never 0
    columns = {"mean": difference, "statistic": observed, "p_value": p}
    name = "randomized_hsd_blocked" if blocking else "randomized_hsd_one_way"
    return pair_frame(block, by, columns).with_columns(test=pl.lit(name))
