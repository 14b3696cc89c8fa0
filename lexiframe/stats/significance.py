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
- ``"wilcoxon"``: the Wilcoxon signed-rank test of the per-query differences,
  :func:`lexiframe.stats.wilcoxon_test` (SciPy's choice of the exact distribution or the
  normal approximation; zero differences dropped, Wilcox's rule, SciPy's default). Otero
  et al. (ECIR 2025) found it, with the Benjamini–Hochberg correction, to keep the type I
  error with the best power;
- ``"fisher"``: Fisher's randomisation test of the per-query differences,
  :func:`lexiframe.stats.resampling.randomization_test` (Smucker et al. 2007);
- ``"bootstrap"``: Sakai's paired bootstrap test, with the percentile confidence interval
  of the mean difference, :func:`lexiframe.stats.resampling.bootstrap_test`.

Wilcoxon's and both resampling tests take metrics and real-valued preferences (rrLP);
integer preferences (sgnLP, sgnLR) keep the sign test under them, and their rows say
``"sign"``. A p-value drawn from B random replicates (Fisher's unless exact, the
bootstrap, the randomised HSD) is (c + 1)/(B + 1), never 0, so that a correction never
multiplies a 0; :func:`discriminative_power` and :func:`lexiframe.stats.report`, which
know α, warn when 1/(B + 1) is too coarse for any pair to pass the corrected level.

Degenerate cases (all differences 0, or equal up to rounding) are decided with one
tolerance, :data:`lexiframe.stats._common.TOLERANCE`, by the t-tests, the bootstrap, the
HSD and the effect sizes alike (docs/analyses.md).

The HSD rows name their variant: ``test`` is ``"hsd_blocked"``, ``"hsd_one_way"``,
``"randomized_hsd_blocked"`` or ``"randomized_hsd_one_way"``.

Beside each p-value, two effect sizes: ``cohens_d``, the paired Cohen's d (the mean
per-query difference over its standard deviation), and ``es_hsd``, Sakai's standardised
mean difference x̄_a − x̄_b over √V_E, V_E the residual variance of the two-way ANOVA
without replication (:func:`tukey_hsd`; metrics tables with every system on every query).

Every result row records the ``test`` that produced it and the ``correction`` applied to
its family (one family per by-group and measure): ``"none"``, ``"bonferroni"``,
``"holm"``, ``"bh"`` or ``"by"`` (see :mod:`lexiframe.stats.corrections`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from lexiframe._utils import as_list, caller_stacklevel
from lexiframe.errors import InputError, LexiframeWarning
from lexiframe.intervals import DEFAULT_REPLICATES, check_confidence
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
from lexiframe.stats._hsd import hsd, randomized_hsd
from lexiframe.stats._matrices import block_differences, blocks_of, pair_matrix
from lexiframe.stats._pairwise import block_effect_sizes, effect_sizes, matrix_tests, pairwise
from lexiframe.stats.corrections import (
    Correction,
    adjust_p_values,
    check_correction,
    replicates_note,
)
from lexiframe.stats.resampling import largest_exact
from lexiframe.validate import require_columns

Test = Literal[
    "auto", "sign", "t", "paired_t", "wilcoxon", "hsd", "randomized_hsd", "fisher", "bootstrap"
]  # fmt: skip
TESTS: tuple[str, ...] = (
    "auto", "sign", "t", "paired_t", "wilcoxon", "hsd", "randomized_hsd", "fisher", "bootstrap"
)  # fmt: skip
_FAMILY_TESTS = ("hsd", "randomized_hsd")
_MATRIX_TESTS = ("wilcoxon", "fisher", "bootstrap")  # from the rows of per-query differences


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
    elif pair_table and test in _MATRIX_TESTS and dtype.is_integer():
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
    n_replicates: int = DEFAULT_REPLICATES,
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
    exact); their p-values are (c + 1)/(B + 1), never 0. ``"wilcoxon"``, ``"fisher"`` and
    ``"bootstrap"`` test metrics and real-valued preferences (rrLP); integer preferences
    (sgnLP, sgnLR) keep the sign test (``test`` says so). ``correction`` may also be
    ``"bh"`` (Benjamini–Hochberg) or ``"by"`` (Benjamini–Yekutieli), which control the
    false discovery rate.
    ``blocking=False`` makes the HSD tests one-way (``scipy.stats.tukey_hsd``, R's
    ``TukeyHSD(aov(score ~ system))``): the variance between queries stays in the error
    term, so fewer pairs come out significant. ``confidence`` is the level of the
    bootstrap interval.

    Returns:
        ``by…, measure, system_a, system_b, n_queries, mean, statistic, p_value,
        p_adjusted, test, correction, cohens_d, es_hsd, ci_low, ci_high`` sorted by
        ``by…, system_a, system_b``, with ``system_a < system_b``. ``mean`` is the mean
        preference, or the difference of the metric means (a − b); ``statistic`` is the
        number of wins (sign), t (t-tests, bootstrap), min(R⁺, R⁻) (Wilcoxon), q (HSD),
        |x̄_a − x̄_b| (randomised HSD) or the mean difference (Fisher); ``test`` is the
        test of that row;
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
    confidence = check_confidence(confidence)
    table = table.select(*keys, measure)
    check_unique(table, keys, kind)
    check_no_nulls(table, [measure], keys, kind)
    # a metrics table with every system on every query: its matrices give the differences
    blocks = None if pair_table else blocks_of(table, measure, by, strict=False)
    pairs = None
    if plan.test == "hsd":
        result = hsd(table, measure, by, blocking)
    elif plan.test == "randomized_hsd":
        if seed is None:
            raise InputError(
                "test='randomized_hsd' draws random permutations and needs an explicit seed=, "
                "e.g. seed=0, so that its p-values can be reproduced"
            )
        result = randomized_hsd(
            table, measure, by, n_replicates, generator(seed), progress, blocking
        )
    elif plan.test in _MATRIX_TESTS:
        if blocks:
            summary, matrix = block_differences(blocks, by)
        else:
            pairs = table if pair_table else metric_pairs(table, [measure], by=by)
            summary, matrix = pair_matrix(pairs, measure, by)
        result = matrix_tests(summary, matrix, by, plan.test, n_replicates, seed, confidence)
    else:
        pairs = table if pair_table else metric_pairs(table, [measure], by=by)
        result = pairwise(pairs, measure, by, plan.test)
    if blocks:
        sizes = block_effect_sizes(blocks, by)
    else:
        if pairs is None:
            pairs = table if pair_table else metric_pairs(table, [measure], by=by)
        sizes = effect_sizes(pairs, measure, by)
    result = result.join(sizes, on=[*by, *PAIR_KEYS], how="left")
    return _finish(result, measure, by, plan.correction), plan


def warn_if_coarse(
    result: pl.DataFrame, correction: Correction, n_replicates: int, alpha: float, by: list[str]
) -> None:
    """Warn when the rows drawn from random replicates cannot reach ``alpha`` after
    ``correction`` (:func:`lexiframe.stats.corrections.replicates_note`)."""
    # Fisher's test enumerates the 2^q patterns (no draws) when 2^q ≤ B, as is_exact says
    enumerated = largest_exact(n_replicates)
    test = pl.col("test")
    drawn = (
        test.str.starts_with("randomized_hsd")
        | (test == "bootstrap")
        | ((test == "fisher") & (pl.col("n_queries") > enumerated))
    )
    families = result.filter(drawn).group_by(by or pl.lit(0).alias("_all")).len()
    if families.height:
        largest = int(families["len"].to_numpy().max())
        note = replicates_note(n_replicates, largest, correction, alpha)
        if note:
            warnings.warn(note, LexiframeWarning, stacklevel=caller_stacklevel())


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
    n_replicates: int = DEFAULT_REPLICATES,
    by: str | Sequence[str] | None = None,
    progress: bool | None = None,
    blocking: bool = True,
) -> pl.DataFrame:
    """The randomised Tukey HSD test (Carterette 2012; Sakai 2014), per (by…) group.

    Each of the B = ``n_replicates`` replicates permutes the system labels within each
    query (the scores of one query are shuffled among the systems), recomputes the system
    means and keeps their range max − min. The p-value of a pair is the fraction of
    replicates whose range reaches the observed |x̄_a − x̄_b|, the observed labelling
    counted as one of them: p = (#{b : range_b ≥ |x̄_a − x̄_b|} + 1) / (B + 1), never 0.
    The same ``seed`` gives the same p-values; by-groups are processed in sorted order
    from one generator. ``blocking=False`` shuffles all the scores of the matrix instead
    (the one-way design; ``test="randomized_hsd_one_way"``).

    >>> import polars as pl
    >>> scores = pl.DataFrame({"system": list("xxxxyyyy"), "query": list("1234") * 2,
    ...                        "AP": [0.9, 0.8, 0.7, 0.9, 0.1, 0.2, 0.1, 0.3]})
    >>> result = randomized_tukey_hsd(scores, "AP", seed=1, n_replicates=200)
    >>> result["p_value"].round(6).to_list()
    [0.124378]
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
    n_replicates: int = DEFAULT_REPLICATES,
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
        warn_if_coarse(result, plan.correction, n_replicates, alpha, by)
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
