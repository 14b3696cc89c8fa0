"""Significance tests between systems and discriminative power (docs/definitions.md §5).

Tests, as the papers run them:

- ``"sign"``: the two-sided sign test of a preference (sgnLP, sgnLR) or of per-query
  metric differences, ``scipy.stats.binomtest(wins, wins + losses)``; tied queries are
  ignored, and p = 1 when no query is untied (lexiprecision paper §4.2, lexirecall §6.2.3);
- ``"t"``: the one-sample t-test of real-valued per-query preferences (rrLP) against 0.
  All values zero: p = 1; all values equal and non-zero (no variance): the sign test is
  used instead, and the row's ``test`` says ``"sign"``;
- ``"paired_t"``: the paired t-test of a per-query metric (Student's t on the per-query
  differences; the same zero and constant rules);
- ``"hsd"``: Tukey's HSD, :func:`tukey_hsd`: with topic blocking (Carterette 2012), or
  one-way with ``blocking=False``;
- ``"randomized_hsd"``: the randomised Tukey HSD, :func:`randomized_tukey_hsd` (blocked:
  scores shuffled within each query; one-way: over the whole matrix);
- ``"fisher"``: Fisher's randomisation test of the per-query differences,
  :func:`lexiframe.stats.resampling.randomization_test` (Smucker et al. 2007);
- ``"bootstrap"``: Sakai's paired bootstrap test, with the percentile confidence interval
  of the mean difference, :func:`lexiframe.stats.resampling.bootstrap_test`.

Both resampling tests take metrics and real-valued preferences (rrLP); integer preferences
(sgnLP, sgnLR) keep the sign test under them, and their rows say ``"sign"``.

The HSD rows name their variant: ``test`` is ``"hsd_blocked"``, ``"hsd_one_way"``,
``"randomized_hsd_blocked"`` or ``"randomized_hsd_one_way"``.

Beside each p-value, two effect sizes: ``cohens_d``, the paired Cohen's d (the mean
per-query difference over its standard deviation), and ``es_hsd``, Sakai's standardised
mean difference x̄_a − x̄_b over √V_E, V_E the residual variance of the two-way ANOVA
without replication (:func:`tukey_hsd`; metrics tables with every system on every query).

Every result row records the ``test`` that produced it and the ``correction`` applied to
its family (one family per by-group and measure): ``"none"``, ``"bonferroni"`` or
``"holm"`` (see :mod:`lexiframe.stats.corrections`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from lexiframe import _progress
from lexiframe._utils import as_list, format_row, plural
from lexiframe.errors import InputError
from lexiframe.stats._common import (
    PAIR_KEYS,
    Seed,
    check_choice,
    check_fraction,
    check_no_nulls,
    check_unique,
    eager,
    generator,
    is_pair_table,
    measure_columns,
    metric_pairs,
)
from lexiframe.stats.corrections import Correction, adjust_p_values, check_correction
from lexiframe.validate import require_columns, require_positive_int

Test = Literal["auto", "sign", "t", "paired_t", "hsd", "randomized_hsd", "fisher", "bootstrap"]
TESTS: tuple[str, ...] = (
    "auto", "sign", "t", "paired_t", "hsd", "randomized_hsd", "fisher", "bootstrap"
)  # fmt: skip
_FAMILY_TESTS = ("hsd", "randomized_hsd")
_RESAMPLED_TESTS = ("fisher", "bootstrap")
_REPLICATE_BLOCK = 1 << 22  # values per block of permuted replicates
_TOLERANCE = 1e-12


# --- elementary tests ------------------------------------------------------------------------


def sign_test(wins: ArrayLike, losses: ArrayLike) -> np.ndarray:
    """Two-sided sign test p-values, vectorised: ``binomtest(wins, wins + losses).pvalue``.

    For p = 1/2 the binomial distribution is symmetric, so the two-sided p-value is
    min(1, 2·F(min(w, l); w + l, 1/2)), F the binomial CDF; p = 1 when w + l = 0.

    >>> sign_test([9, 5, 0], [1, 5, 0]).round(6).tolist()
    [0.021484, 1.0, 1.0]
    """
    wins = np.asarray(wins, dtype=np.int64)
    losses = np.asarray(losses, dtype=np.int64)
    for name, counts in (("wins", wins), ("losses", losses)):
        if (counts < 0).any():
            index = int(np.flatnonzero(np.reshape(counts, -1) < 0)[0])
            raise InputError(
                f"{name} must be non-negative counts of queries, but {name}[{index}] is "
                f"{int(np.reshape(counts, -1)[index])}"
            )
    from scipy import stats  # SciPy is imported where it is used (start-up time)

    total = wins + losses
    p = 2.0 * stats.binom.cdf(np.minimum(wins, losses), total, 0.5)
    return np.where(total > 0, np.minimum(p, 1.0), 1.0)


def t_test(mean: ArrayLike, std: ArrayLike, n: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Student's one-sample t-test against 0 from moments: t = x̄ / (s/√n), df = n − 1.

    Returns ``(t, p)`` with the two-sided p = 2·(1 − F_t(|t|; n − 1)), what
    ``scipy.stats.ttest_1samp`` computes. Rows with s = 0 or n < 2 give NaN.

    >>> t, p = t_test([0.5], [1.0], [16])
    >>> t.tolist(), p.round(6).tolist()
    ([2.0], [0.063945])
    """
    mean = np.asarray(mean, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    valid = (n >= 2) & (std > 0)
    t = np.full(mean.shape, np.nan)
    t[valid] = mean[valid] / (std[valid] / np.sqrt(n[valid]))
    from scipy import stats

    p = np.full(mean.shape, np.nan)
    p[valid] = 2.0 * stats.t.sf(np.abs(t[valid]), n[valid] - 1)
    return t, p


# --- significance over a table -----------------------------------------------------------------


@dataclass(frozen=True)
class SignificancePlan:
    """A resolved test: its name, the correction and, for the HSD tests, the blocking.

    >>> SignificancePlan("hsd", "none", blocking=False).name
    'hsd_one_way'
    """

    test: str
    correction: Correction
    blocking: bool = True

    @property
    def name(self) -> str:
        """The test as the output names it: the HSD tests with their variant."""
        if self.test in _FAMILY_TESTS:
            return f"{self.test}_{'blocked' if self.blocking else 'one_way'}"
        return self.test


def _resolve(
    test: str,
    correction: str | None,
    pair_table: bool,
    dtype: pl.DataType,
    blocking: bool = True,
) -> SignificancePlan:
    check_choice(test, TESTS, "test")
    if not isinstance(blocking, bool):
        raise InputError(f"blocking must be True or False, not {blocking!r}")
    if not blocking and test not in _FAMILY_TESTS:
        raise InputError(
            f"blocking=False (the one-way ANOVA) applies to test='hsd' and "
            f"test='randomized_hsd' only; test={test!r} compares each pair query by query"
        )
    if test == "auto":
        integer = dtype.is_integer()
        test = ("sign" if integer else "t") if pair_table else "paired_t"
    elif pair_table and test in _RESAMPLED_TESTS and dtype.is_integer():
        test = "sign"  # sgnLP, sgnLR: per-query signs, which the papers test by the sign test
    elif pair_table and test in _FAMILY_TESTS:
        raise InputError(
            f"test {test!r} needs per-query metrics (system, query, metric), not a pair "
            "table: it blocks on queries over all systems at once"
        )
    elif pair_table and test == "paired_t":
        test = "t"
    elif not pair_table and test == "t":
        test = "paired_t"
    if correction is None:
        correction = "none" if test in _FAMILY_TESTS else "holm"
    return SignificancePlan(test, check_correction(correction), blocking)


def significance(
    frame: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    test: Test = "auto",
    correction: Correction | None = None,
    by: str | Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: Seed | None = None,
    progress: bool | None = None,
    blocking: bool = True,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Test every pair of systems of each (by…) group on one measure.

    ``frame`` is either a pair table (``by…, query, system_a, system_b, <measure>``, as
    :func:`lexiframe.preferences` or :func:`lexiframe.stats.metric_pairs` return; positive
    when system_a is preferred) or a metrics table (``by…, system, query, <measure>``, as
    :func:`lexiframe.measures` returns). ``test="auto"`` picks the papers' choice: the sign
    test for integer preferences (sgnLP, sgnLR), the one-sample t-test for real-valued
    preferences (rrLP), the paired t-test for metrics. ``correction`` defaults to
    ``"holm"``, and to ``"none"`` for the HSD tests (they already control the family-wise
    error). ``n_replicates`` and ``seed`` are for the tests that draw at random:
    ``"randomized_hsd"`` (which shows a progress bar over its replicates when ``progress``
    allows; ``None``: only in interactive use, see :func:`lexiframe.read_run`),
    ``"bootstrap"``, and ``"fisher"`` unless 2^q ≤ ``n_replicates`` (then the test is
    exact). ``"fisher"`` and ``"bootstrap"`` test metrics and real-valued preferences
    (rrLP); integer preferences (sgnLP, sgnLR) keep the sign test (``test`` says so).
    ``blocking=False`` makes the HSD tests one-way (``scipy.stats.tukey_hsd``, R's
    ``TukeyHSD(aov(score ~ system))``): the variance between queries stays in the error
    term, so fewer pairs come out significant. ``confidence`` is the level of the
    bootstrap interval.

    Returns:
        ``by…, measure, system_a, system_b, n_queries, mean, statistic, p_value,
        p_adjusted, test, correction, cohens_d, es_hsd, ci_low, ci_high`` sorted by
        ``by…, system_a, system_b``, with ``system_a < system_b``. ``mean`` is the mean
        preference, or the difference of the metric means (a − b); ``statistic`` is the
        number of wins (sign), t (t-tests, bootstrap), q (HSD), |x̄_a − x̄_b| (randomised
        HSD) or the mean difference (Fisher); ``test`` is the test of that row;
        ``cohens_d`` and ``es_hsd`` are the effect sizes (null where undefined: no
        variance, or ``es_hsd`` of a pair table or of an incomplete metrics table);
        ``ci_low`` and ``ci_high`` the bootstrap percentile interval of the mean
        difference (null for the other tests).

    >>> import polars as pl
    >>> prefs = pl.DataFrame({"query": list("123456"), "system_a": ["x"] * 6,
    ...                       "system_b": ["y"] * 6, "sgnLP": [1, 1, 1, 1, 1, 0]},
    ...                      schema_overrides={"sgnLP": pl.Int8})
    >>> significance(prefs, "sgnLP").select("system_a", "system_b", "p_value", "test",
    ...                                     "correction")
    shape: (1, 5)
    ┌──────────┬──────────┬─────────┬──────┬────────────┐
    │ system_a ┆ system_b ┆ p_value ┆ test ┆ correction │
    │ ---      ┆ ---      ┆ ---     ┆ ---  ┆ ---        │
    │ str      ┆ str      ┆ f64     ┆ str  ┆ str        │
    ╞══════════╪══════════╪═════════╪══════╪════════════╡
    │ x        ┆ y        ┆ 0.0625  ┆ sign ┆ holm       │
    └──────────┴──────────┴─────────┴──────┴────────────┘
    """
    result, _ = _significance(
        frame,
        measure,
        test=test,
        correction=correction,
        by=by,
        n_replicates=n_replicates,
        seed=seed,
        progress=progress,
        blocking=blocking,
        confidence=confidence,
    )
    return result


def _significance(
    frame: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    test: str,
    correction: str | None,
    by: str | Sequence[str] | None,
    n_replicates: int,
    seed: Seed | None,
    progress: bool | None = None,
    blocking: bool = True,
    confidence: float = 0.95,
) -> tuple[pl.DataFrame, SignificancePlan]:
    by = as_list(by)
    table = eager(frame, "input")
    pair_table = is_pair_table(table.schema)
    kind = "pair" if pair_table else "metrics"
    keys = [*by, "query", *PAIR_KEYS] if pair_table else [*by, "query", "system"]
    require_columns(table.schema, [*keys, measure], kind)
    measure_columns(table.schema, [measure], keys, kind, frame=table)
    plan = _resolve(test, correction, pair_table, table.schema[measure], blocking)
    confidence = check_fraction(confidence, "confidence")
    table = table.select(*keys, measure)
    check_unique(table, keys, kind)
    check_no_nulls(table, [measure], keys, kind)
    # a metrics table with every system on every query: its matrices give the differences
    blocks = None if pair_table else _blocks(table, measure, by, strict=False)
    pairs = None
    if plan.test == "hsd":
        result = _hsd(table, measure, by, blocking)
    elif plan.test == "randomized_hsd":
        if seed is None:
            raise InputError(
                "test='randomized_hsd' draws random permutations and needs an explicit seed=, "
                "e.g. seed=0, so that its p-values can be reproduced"
            )
        result = _randomized_hsd(
            table, measure, by, n_replicates, generator(seed), progress, blocking
        )
    elif plan.test in _RESAMPLED_TESTS:
        if blocks:
            summary, matrix = _block_differences(blocks, by)
        else:
            pairs = table if pair_table else metric_pairs(table, [measure], by=by)
            summary, matrix = _pair_matrix(pairs, measure, by)
        result = _resampled(summary, matrix, by, plan.test, n_replicates, seed, confidence)
    else:
        pairs = table if pair_table else metric_pairs(table, [measure], by=by)
        result = _pairwise(pairs, measure, by, plan.test)
    if blocks:
        sizes = _block_effect_sizes(blocks, by)
    else:
        if pairs is None:
            pairs = table if pair_table else metric_pairs(table, [measure], by=by)
        sizes = _effect_sizes(pairs, measure, by)
    result = result.join(sizes, on=[*by, *PAIR_KEYS], how="left")
    return _finish(result, measure, by, plan.correction), plan


def _pairwise(pairs: pl.DataFrame, measure: str, by: list[str], test: str) -> pl.DataFrame:
    value = pl.col(measure).cast(pl.Float64)
    summary = (
        pairs.group_by([*by, *PAIR_KEYS])
        .agg(
            pl.len().alias("n_queries"),
            value.mean().alias("mean"),
            value.std(ddof=1).fill_null(0.0).alias("std"),
            (value > 0).sum().alias("wins"),
            (value < 0).sum().alias("losses"),
            value.min().alias("min"),
            value.max().alias("max"),
        )
        .sort([*by, *PAIR_KEYS])
    )
    wins = summary["wins"].to_numpy()
    losses = summary["losses"].to_numpy()
    p_sign = sign_test(wins, losses)
    if test == "sign":
        return summary.select(
            *by,
            *PAIR_KEYS,
            "n_queries",
            "mean",
            pl.Series("statistic", wins.astype(np.float64)),
            pl.Series("p_value", p_sign),
            pl.lit("sign").alias("test"),
        )
    constant = (summary["min"] == summary["max"]).to_numpy()
    all_zero = constant & (summary["max"] == 0).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # huge |t| from near-constant data
        t, p_t = t_test(summary["mean"], summary["std"], summary["n_queries"])
    fallback = constant & ~all_zero | np.isnan(p_t) & ~all_zero
    p = np.where(all_zero, 1.0, np.where(fallback, p_sign, p_t))
    statistic = np.where(fallback, wins.astype(np.float64), t)
    return summary.select(
        *by,
        *PAIR_KEYS,
        "n_queries",
        "mean",
        pl.Series("statistic", statistic, nan_to_null=True),
        pl.Series("p_value", p),
        pl.Series("test", np.where(fallback, "sign", test)),
    )


def _pair_matrix(pairs: pl.DataFrame, measure: str, by: list[str]):
    """The pair table as a pairs × queries matrix (each row's values first, zeros after),
    with the summary of each pair (keys, n_queries, mean) in the same order."""
    keys = [*by, *PAIR_KEYS]
    ordered = pairs.select(*keys, "query", pl.col(measure).cast(pl.Float64)).sort([*keys, "query"])
    ordered = ordered.with_columns(
        _row=pl.struct(keys).rle_id(), _column=pl.int_range(pl.len()).over(keys)
    )
    summary = (
        ordered.group_by(keys)
        .agg(pl.len().alias("n_queries"), pl.col(measure).mean().alias("mean"))
        .sort(keys)
    )
    matrix = np.zeros((summary.height, int(summary["n_queries"].to_numpy().max(initial=0))))
    matrix[ordered["_row"].to_numpy(), ordered["_column"].to_numpy()] = ordered[measure].to_numpy()
    return summary, matrix


def _block_differences(blocks: list[_Block], by: list[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """:func:`_pair_matrix` from complete matrices: x_a − x_b for every pair, no join."""
    frames, rows = [], []
    width = max(block.values.shape[1] for block in blocks)
    for block in blocks:
        x = block.values
        a, b = np.triu_indices(x.shape[0], k=1)
        system_mean = x.mean(axis=1)
        frames.append(_pair_frame(block, by, {"mean": system_mean[:, None] - system_mean}))
        rows.append(np.pad(x[a] - x[b], ((0, 0), (0, width - x.shape[1]))))
    return pl.concat(frames), np.concatenate(rows)


def _resampled(
    summary: pl.DataFrame,
    matrix: np.ndarray,
    by: list[str],
    test: str,
    n_replicates: int,
    seed: Seed | None,
    confidence: float,
) -> pl.DataFrame:
    """Fisher's or the bootstrap test of every pair, the pairs with q queries together."""
    from lexiframe.stats import resampling

    n_replicates = resampling.check_replicates(n_replicates)
    if test == "bootstrap" and seed is None:
        raise InputError(
            "test='bootstrap' draws random resamples of the queries and needs an explicit "
            "seed=, e.g. seed=0, so that its p-values can be reproduced"
        )
    rng = None if seed is None else generator(seed)
    counts = summary["n_queries"].to_numpy()
    p = np.empty(len(counts))
    statistic = summary["mean"].to_numpy().copy()
    low = np.full(len(counts), np.nan)
    high = np.full(len(counts), np.nan)
    names = np.full(len(counts), test, dtype=object)
    for n in np.unique(counts):  # one matrix per number of queries (usually one)
        rows = np.flatnonzero(counts == n)
        d = matrix[rows, :n]
        if test == "fisher":
            p[rows] = resampling.randomization_test(d, n_replicates=n_replicates, seed=rng)
        else:
            rng = cast(np.random.Generator, rng)  # the bootstrap's seed is required above
            result = resampling.bootstrap_test(
                d, n_replicates=n_replicates, seed=rng, confidence=confidence
            )
            p[rows], low[rows], high[rows] = result
            with np.errstate(divide="ignore", invalid="ignore"):
                statistic[rows] = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
            # equal non-zero values: no variance to resample, the sign test (as for "t")
            constant = np.all(d == d[:, :1], axis=1) & (d[:, 0] != 0)
            if constant.any():
                wins, losses = (d[constant] > 0).sum(axis=1), (d[constant] < 0).sum(axis=1)
                p[rows[constant]] = sign_test(wins, losses)
                statistic[rows[constant]] = wins
                names[rows[constant]] = "sign"
    return summary.select(
        *by,
        *PAIR_KEYS,
        "n_queries",
        "mean",
        pl.Series("statistic", statistic, nan_to_null=True),
        pl.Series("p_value", p),
        pl.Series("test", names, dtype=pl.String),
        pl.Series("ci_low", low, nan_to_null=True),
        pl.Series("ci_high", high, nan_to_null=True),
    )


def _effect_sizes(pairs: pl.DataFrame, measure: str, by: list[str]) -> pl.DataFrame:
    """Paired Cohen's d of every pair of a pair table (ES_HSD needs complete matrices)."""
    value = pl.col(measure).cast(pl.Float64)
    return pairs.group_by([*by, *PAIR_KEYS]).agg(
        pl.when(value.std(ddof=1) > _TOLERANCE)
        .then(value.mean() / value.std(ddof=1))
        .alias("cohens_d"),
        pl.lit(None, dtype=pl.Float64).alias("es_hsd"),
    )


def _block_effect_sizes(blocks: list[_Block], by: list[str]) -> pl.DataFrame:
    """Paired Cohen's d and Sakai's ES_HSD of every pair, from the systems × queries matrices:
    var(x_a − x_b) = (G_aa + G_bb − 2·G_ab)/(q − 1), G the Gram matrix of the centred rows."""
    parts = []
    for block in blocks:
        x = block.values
        q = x.shape[1]
        system_mean = x.mean(axis=1)
        difference = system_mean[:, None] - system_mean[None, :]
        centred = x - system_mean[:, None]
        gram = centred @ centred.T
        spread = np.diag(gram)
        variance = np.maximum(spread[:, None] + spread[None, :] - 2 * gram, 0.0) / (q - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(variance > _TOLERANCE**2, difference / np.sqrt(variance), np.nan)
        residual = _residual_variance(x)
        es = difference / np.sqrt(residual) if residual > 0 else np.full_like(difference, np.nan)
        frame = _pair_frame(block, by, {"cohens_d": d, "es_hsd": es}).drop("n_queries")
        parts.append(frame.with_columns(pl.col("cohens_d", "es_hsd").fill_nan(None)))
    return pl.concat(parts)


def _residual_variance(x: np.ndarray) -> float:
    """V_E of the two-way ANOVA without replication (systems × queries)."""
    s, q = x.shape
    residual = x - x.mean(axis=1)[:, None] - x.mean(axis=0)[None, :] + x.mean()
    return float((residual**2).sum()) / ((s - 1) * (q - 1))


def _finish(
    result: pl.DataFrame, measure: str, by: list[str], correction: Correction
) -> pl.DataFrame:
    result = result.sort([*by, *PAIR_KEYS])
    family = (
        result.select(pl.struct(by).rank("dense")).to_series().to_numpy()
        if by
        else np.zeros(result.height, dtype=np.int64)
    )
    adjusted = adjust_p_values(result["p_value"].to_numpy(), correction, groups=family)
    return result.select(
        *by,
        pl.lit(measure).alias("measure"),
        *PAIR_KEYS,
        pl.col("n_queries").cast(pl.UInt32),
        pl.col("mean").cast(pl.Float64),
        pl.col("statistic").cast(pl.Float64),
        pl.col("p_value").cast(pl.Float64),
        pl.Series("p_adjusted", adjusted, dtype=pl.Float64),
        pl.col("test").cast(pl.String),
        pl.lit(correction).alias("correction"),
        *(
            (pl.col(name) if name in result.columns else pl.lit(None)).cast(pl.Float64).alias(name)
            for name in ("cohens_d", "es_hsd", "ci_low", "ci_high")
        ),
    )


# --- Tukey's HSD -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    """One by-group as a systems × queries matrix."""

    key: dict[str, object]
    systems: pl.Series
    values: np.ndarray


def _blocks(
    table: pl.DataFrame, measure: str, by: list[str], *, strict: bool = True
) -> list[_Block] | None:
    """The (by…) groups as matrices; ``strict=False``: None when a group is incomplete
    or too small, instead of the error."""
    groups = (
        table.partition_by(by, as_dict=True, maintain_order=False).items() if by else [((), table)]
    )
    blocks = []
    for key, group in groups:
        systems = group["system"].unique().sort()
        queries = group["query"].unique().sort()
        group_key = dict(zip(by, key, strict=True))
        complete = group.height == len(systems) * len(queries)
        if not strict and (not complete or len(systems) < 2 or len(queries) < 2):
            return None
        if not complete:
            present = group.select("system", "query")
            grid = systems.to_frame().join(queries.to_frame(), how="cross")
            missing = grid.join(present, on=["system", "query"], how="anti")
            where = format_row({**group_key, **missing.row(0, named=True)})
            raise InputError(
                "Tukey's HSD blocks on queries and needs every system scored on every query "
                f"of its group, but {missing.height} of the {len(systems)} × {len(queries)} "
                f"(system, query) cells have no row, e.g. {where}. Compute the metrics with "
                "lf.measures from a positions frame (a system that skipped a query scores "
                "its worst case there), keep only the queries every system has, or use "
                "test='paired_t', which compares each pair on the queries both have"
            )
        if len(systems) < 2 or len(queries) < 2:
            where = f"group {format_row(group_key)}" if by else "the metrics table"
            raise InputError(
                "Tukey's HSD needs at least two systems and two queries per group; "
                f"{where} has {plural(len(systems), 'system')} and "
                f"{plural(len(queries), 'query', 'queries')}"
            )
        row = group["system"].replace_strict(
            {name: i for i, name in enumerate(systems.to_list())}, return_dtype=pl.Int64
        )
        column = group["query"].rank("dense").cast(pl.Int64) - 1
        values = np.empty((len(systems), len(queries)))
        values[row.to_numpy(), column.to_numpy()] = group[measure].cast(pl.Float64).to_numpy()
        blocks.append(_Block(dict(zip(by, key, strict=True)), systems, values))
    return blocks


def _pair_frame(block: _Block, by: list[str], columns: dict[str, np.ndarray]) -> pl.DataFrame:
    s = len(block.systems)
    a, b = np.triu_indices(s, k=1)
    return pl.DataFrame(
        {
            **{name: [block.key[name]] * len(a) for name in by},
            "system_a": block.systems.gather(a),
            "system_b": block.systems.gather(b),
            "n_queries": np.full(len(a), block.values.shape[1], dtype=np.uint32),
            **{name: values[a, b] for name, values in columns.items()},
        }
    )


def _empty_result(table: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            **{name: table.schema[name] for name in by},
            "system_a": table.schema["system"],
            "system_b": table.schema["system"],
            "n_queries": pl.UInt32,
            "mean": pl.Float64,
            "statistic": pl.Float64,
            "p_value": pl.Float64,
            "test": pl.String,
        }
    )


def _hsd(table: pl.DataFrame, measure: str, by: list[str], blocking: bool = True) -> pl.DataFrame:
    from lexiframe.stats._studentized import studentized_range_sf  # it imports SciPy

    parts = []
    name = "hsd_blocked" if blocking else "hsd_one_way"
    for block in _blocks(table, measure, by) or []:
        x = block.values
        s, q = x.shape
        system_mean = x.mean(axis=1)
        if blocking:  # two-way ANOVA without replication: queries are a factor
            df = (s - 1) * (q - 1)
            variance = _residual_variance(x)
        else:  # one-way ANOVA: the variance between queries stays in the error term
            df = s * (q - 1)
            variance = float(((x - system_mean[:, None]) ** 2).sum()) / df
        difference = system_mean[:, None] - system_mean[None, :]
        spread = np.abs(difference)
        if variance > 0:
            q_stat = spread / np.sqrt(variance / q)
            p = studentized_range_sf(q_stat, s, df)
        else:  # no residual noise: any difference is certain, no difference is none
            q_stat = np.where(spread > _TOLERANCE, np.inf, 0.0)
            p = np.where(spread > _TOLERANCE, 0.0, 1.0)
        p = np.clip(p, 0.0, 1.0)
        columns = {"mean": difference, "statistic": q_stat, "p_value": p}
        parts.append(_pair_frame(block, by, columns).with_columns(test=pl.lit(name)))
    return pl.concat(parts) if parts else _empty_result(table, by)


def _randomized_hsd(
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
        _blocks(table, measure, by) or [], key=lambda block: tuple(map(str, block.key.values()))
    )
    total = n_replicates * len(blocks)
    with _progress.bar(total, progress=progress, desc="randomised HSD", unit="replicate") as bar:
        for block in blocks:
            parts.append(_randomized_block(block, by, n_replicates, rng, bar, blocking))
    return pl.concat(parts) if parts else _empty_result(table, by)


def _randomized_block(
    block: _Block,
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
    exceed = n_replicates - np.searchsorted(ranges, observed - _TOLERANCE, side="left")
    p = exceed / n_replicates
    columns = {"mean": difference, "statistic": observed, "p_value": p}
    name = "randomized_hsd_blocked" if blocking else "randomized_hsd_one_way"
    return _pair_frame(block, by, columns).with_columns(test=pl.lit(name))


def tukey_hsd(
    scores: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    by: str | Sequence[str] | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    """Tukey's HSD with topic blocking (Carterette 2012), per (by…) group.

    Two-way ANOVA without replication on the systems × queries matrix x_ij of a per-query
    metric: residual r_ij = x_ij − x̄_i· − x̄_·j + x̄_··, V_E = Σ r² / ((s − 1)(q − 1)),
    q_stat = |x̄_a − x̄_b| / √(V_E / q), and p = ``scipy.stats.studentized_range.sf(q_stat,
    s, (s − 1)(q − 1))``, computed for all the pairs at once by shared quadratures (equal to
    SciPy's to 1e-9; a second for thousands of pairs, where SciPy takes minutes). Unlike the
    one-way HSD (``scipy.stats.tukey_hsd``), the variance between queries is removed from
    the error term. The lexiprecision paper's
    Table 3a and the lexirecall paper's Figure 11b use it. Every system must be scored on
    every query of its group.

    ``blocking=False`` gives the one-way HSD instead (what ``scipy.stats.tukey_hsd`` and
    R's ``TukeyHSD(aov(score ~ system))`` compute): V_E = Σ (x_ij − x̄_i·)² / (s(q − 1))
    with s(q − 1) degrees of freedom. Use it to compare with a paper that ran one; the
    blocked test suits IR, where the queries vary far more than the systems.

    Returns the columns of :func:`significance` with ``test="hsd_blocked"`` (or
    ``"hsd_one_way"``) and ``correction="none"`` (the test controls the family-wise error
    itself).

    >>> import polars as pl
    >>> scores = pl.DataFrame({"system": list("xxxyyyzzz"), "query": list("123") * 3,
    ...                        "AP": [0.9, 0.5, 0.3, 0.7, 0.4, 0.1, 0.8, 0.4, 0.3]})
    >>> tukey_hsd(scores, "AP").select("system_a", "system_b", "statistic", "p_value")
    shape: (3, 4)
    ┌──────────┬──────────┬───────────┬──────────┐
    │ system_a ┆ system_b ┆ statistic ┆ p_value  │
    │ ---      ┆ ---      ┆ ---       ┆ ---      │
    │ str      ┆ str      ┆ f64       ┆ f64      │
    ╞══════════╪══════════╪═══════════╪══════════╡
    │ x        ┆ y        ┆ 5.477226  ┆ 0.03846  │
    │ x        ┆ z        ┆ 2.19089   ┆ 0.363481 │
    │ y        ┆ z        ┆ 3.286335  ┆ 0.162741 │
    └──────────┴──────────┴───────────┴──────────┘
    """
    return significance(scores, measure, test="hsd", correction="none", by=by, blocking=blocking)


def randomized_tukey_hsd(
    scores: pl.DataFrame | pl.LazyFrame,
    measure: str,
    *,
    seed: Seed,
    n_replicates: int = 1000,
    by: str | Sequence[str] | None = None,
    progress: bool | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    """The randomised Tukey HSD test (Carterette 2012; Sakai 2014), per (by…) group.

    Each of the B = ``n_replicates`` replicates permutes the system labels within each
    query (the scores of one query are shuffled among the systems), recomputes the system
    means and keeps their range max − min. The p-value of a pair is the fraction of
    replicates whose range reaches the observed |x̄_a − x̄_b|:
    p = #{b : range_b ≥ |x̄_a − x̄_b|} / B. The same ``seed`` gives the same p-values; by-groups
    are processed in sorted order from one generator. ``blocking=False`` shuffles all the
    scores of the matrix instead (the one-way design; ``test="randomized_hsd_one_way"``).

    >>> import polars as pl
    >>> scores = pl.DataFrame({"system": list("xxxxyyyy"), "query": list("1234") * 2,
    ...                        "AP": [0.9, 0.8, 0.7, 0.9, 0.1, 0.2, 0.1, 0.3]})
    >>> randomized_tukey_hsd(scores, "AP", seed=1, n_replicates=200)["p_value"].to_list()
    [0.12]
    """
    return significance(
        scores,
        measure,
        test="randomized_hsd",
        correction="none",
        by=by,
        n_replicates=n_replicates,
        seed=seed,
        progress=progress,
        blocking=blocking,
    )


# --- discriminative power -----------------------------------------------------------------------


def discriminative_power(
    frame: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str],
    *,
    test: Test = "auto",
    correction: Correction | None = None,
    alpha: float = 0.05,
    by: str | Sequence[str] | None = None,
    n_replicates: int = 1000,
    seed: Seed | None = None,
    progress: bool | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    """Sakai's discriminative power: the fraction of system pairs significant at ``alpha``.

    For each measure, :func:`significance` tests every pair of systems of each (by…)
    group, and a pair counts when its adjusted p-value is below ``alpha`` (default 0.05).
    Reproduces the lexiprecision paper's Table 3 and the lexirecall paper's Figure 11.
    ``test``, ``n_replicates``, ``seed`` and ``blocking`` are those of :func:`significance`
    (e.g. ``test="fisher"`` for Fisher's randomisation test).

    Returns:
        ``by…, measure, test, correction, alpha, n_pairs, n_significant,
        discriminative_power`` sorted by ``by…, measure``; ``test`` is the test asked for
        (a t-test row that fell back to the sign test counts under it), the HSD tests
        with their variant (``"hsd_blocked"``, ``"hsd_one_way"``, …).

    >>> import polars as pl
    >>> prefs = pl.DataFrame({"query": [str(q) for q in range(8)] * 2,
    ...                       "system_a": ["x"] * 16, "system_b": ["y"] * 8 + ["z"] * 8,
    ...                       "sgnLP": [1] * 8 + [1, -1] * 4},
    ...                      schema_overrides={"sgnLP": pl.Int8})
    >>> discriminative_power(prefs, ["sgnLP"])
    shape: (1, 7)
    ┌─────────┬──────┬────────────┬───────┬─────────┬───────────────┬──────────────────────┐
    │ measure ┆ test ┆ correction ┆ alpha ┆ n_pairs ┆ n_significant ┆ discriminative_power │
    │ ---     ┆ ---  ┆ ---        ┆ ---   ┆ ---     ┆ ---           ┆ ---                  │
    │ str     ┆ str  ┆ str        ┆ f64   ┆ u32     ┆ u32           ┆ f64                  │
    ╞═════════╪══════╪════════════╪═══════╪═════════╪═══════════════╪══════════════════════╡
    │ sgnLP   ┆ sign ┆ holm       ┆ 0.05  ┆ 2       ┆ 1             ┆ 0.5                  │
    └─────────┴──────┴────────────┴───────┴─────────┴───────────────┴──────────────────────┘
    """
    alpha = check_fraction(alpha, "alpha")
    by = as_list(by)
    parts = []
    for measure in dict.fromkeys(as_list(measures)):
        result, plan = _significance(
            frame,
            measure,
            test=test,
            correction=correction,
            by=by,
            n_replicates=n_replicates,
            seed=seed,
            progress=progress,
            blocking=blocking,
        )
        parts.append(
            result.group_by(by or pl.lit(0).alias("_all"))
            .agg(
                pl.len().cast(pl.UInt32).alias("n_pairs"),
                (pl.col("p_adjusted") < alpha).sum().cast(pl.UInt32).alias("n_significant"),
            )
            .select(
                *by,
                pl.lit(measure).alias("measure"),
                pl.lit(plan.name).alias("test"),
                pl.lit(plan.correction).alias("correction"),
                pl.lit(alpha).alias("alpha"),
                "n_pairs",
                "n_significant",
                (pl.col("n_significant") / pl.col("n_pairs")).alias("discriminative_power"),
            )
        )
    if not parts:
        raise InputError("discriminative_power() needs at least one measure")
    return pl.concat(parts).sort([*by, "measure"])
