"""A systems × measures comparison table with significance markers, like ranx's report.

:func:`report` returns a Polars frame: one row per (by…, system) with a letter label, the
mean of each measure, and a marker column per measure. Without a baseline, the marker
lists the labels of the systems it is significantly better than (``"bc"``: better than
systems b and c). With ``baseline=``, only comparisons with the baseline are made, and the
marker is ``"▲"`` (significantly better than the baseline) or ``"▼"`` (significantly
worse). With ``ci=``, each mean has its t interval over the queries.
:func:`lexiframe.stats.to_markdown` and :func:`lexiframe.stats.to_latex` render it as a
string (:mod:`lexiframe.stats.tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from lexiframe._utils import as_list, plural, quote_names
from lexiframe.aggregate import is_cost
from lexiframe.errors import InputError
from lexiframe.intervals import DEFAULT_REPLICATES, add_intervals
from lexiframe.stats._common import Seed, check_fraction, eager, measure_columns
from lexiframe.stats.corrections import Correction, adjust_p_values, check_correction
from lexiframe.stats.significance import SignificancePlan, Test, significance, warn_if_coarse
from lexiframe.stats.tables import BETTER, WORSE
from lexiframe.validate import require_columns


def _label(index: int) -> str:
    """a, b, …, z, aa, ab, …"""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("a") + rest) + label
    return label


def report(
    per_query_metrics: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str],
    *,
    baseline: str | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    alpha: float = 0.05,
    by: str | Sequence[str] | None = None,
    lower_is_better: str | Iterable[str] | None = None,
    n_replicates: int = DEFAULT_REPLICATES,
    seed: Seed | None = None,
    blocking: bool = True,
    ci: float | None = None,
) -> pl.DataFrame:
    """Mean of each measure per system, marked with the significant differences.

    ``per_query_metrics`` is ``by…, system, query`` and measure columns (from
    :func:`lexiframe.measures`). Pairs of systems are compared per measure with ``test``
    (``"t"``: paired t-test; ``"sign"``, ``"wilcoxon"``, ``"hsd"``, ``"randomized_hsd"``,
    ``"fisher"``, ``"bootstrap"``, with ``n_replicates``, ``seed`` and ``blocking`` as in
    :func:`lexiframe.stats.significance`) and the p-values adjusted with ``correction``
    (``"holm"``, ``"bonferroni"``, ``"bh"``, ``"by"`` or ``"none"``)
    within each (by…, measure) family: all pairs, or with ``baseline=`` the s − 1
    comparisons with the baseline. A difference counts when the adjusted p < ``alpha``;
    the better system has the larger mean, or the smaller one for the measures named in
    ``lower_is_better``; by default (``None``) those the registry declares lower is better
    (ASL, SL3, a measure defined with ``lower_is_better=True``), as :func:`lexiframe.order`
    reads them.

    Returns:
        ``by…, label, system, n_queries``, then for each measure ``<measure>`` (the
        mean), with ``ci=`` (a level such as 0.95) ``<measure>_ci_low`` and
        ``<measure>_ci_high`` (Student's t interval of the mean over the system's queries,
        as :func:`lexiframe.summarize` gives it), ``<measure>_sig`` (the marker), with
        ``baseline=`` ``<measure>_d`` and ``<measure>_es_hsd``, the effect sizes against
        the baseline (the paired Cohen's d and Sakai's ES_HSD of
        :func:`lexiframe.stats.significance`, positive when the system is better; null for
        the baseline); then ``test``, ``correction``, ``alpha`` (and ``ci``); sorted by
        ``by…, system``. Labels are a, b, c, … in system order.

    >>> import polars as pl
    >>> metrics = pl.DataFrame({
    ...     "system": ["x"] * 6 + ["y"] * 6 + ["z"] * 6, "query": list("123456") * 3,
    ...     "AP": [0.9, 0.8, 0.85, 0.7, 0.95, 0.9, 0.3, 0.2, 0.4, 0.3, 0.1, 0.25,
    ...            0.3, 0.25, 0.35, 0.3, 0.2, 0.2]})
    >>> report(metrics, ["AP"]).select("label", "system", "AP", "AP_sig")
    shape: (3, 4)
    ┌───────┬────────┬──────────┬────────┐
    │ label ┆ system ┆ AP       ┆ AP_sig │
    │ ---   ┆ ---    ┆ ---      ┆ ---    │
    │ str   ┆ str    ┆ f64      ┆ str    │
    ╞═══════╪════════╪══════════╪════════╡
    │ a     ┆ x      ┆ 0.85     ┆ bc     │
    │ b     ┆ y      ┆ 0.258333 ┆        │
    │ c     ┆ z      ┆ 0.266667 ┆        │
    └───────┴────────┴──────────┴────────┘
    """
    alpha = check_fraction(alpha, "alpha")
    check_correction(correction)
    by = as_list(by)
    names = list(dict.fromkeys(as_list(measures)))
    costs = set(
        [name for name in names if is_cost(name)]
        if lower_is_better is None
        else as_list(lower_is_better)
    )
    table = eager(per_query_metrics, "metrics")
    require_columns(table.schema, [*by, "system", "query"], "metrics")
    measure_columns(table.schema, names, [*by, "system", "query"], "metrics", frame=table)
    if not names:
        raise InputError("report() needs at least one measure")
    systems = table.select(*by, "system").unique().sort([*by, "system"])
    if baseline is not None and baseline not in set(systems["system"].to_list()):
        names_found = systems["system"].unique().sort()
        raise InputError(
            f"baseline {baseline!r} is not a system of the metrics table; its "
            f"{plural(len(names_found), 'system')} include "
            f"{quote_names(names_found.head(5).to_list())}"
        )
    labels = systems.with_columns(
        label=pl.int_range(pl.len()).over(by) if by else pl.int_range(pl.len())
    ).with_columns(pl.col("label").map_elements(_label, return_dtype=pl.String))
    out = labels.join(
        table.group_by([*by, "system"]).agg(
            pl.len().cast(pl.UInt32).alias("n_queries"),
            *(pl.col(name).cast(pl.Float64).mean() for name in names),
        ),
        on=[*by, "system"],
        how="left",
    )
    if ci is not None:
        out = add_intervals(
            table, out, [*by, "system"], names, confidence=ci, method="t",
            n_replicates=n_replicates, seed=None,
        )  # fmt: skip
    for name in names:
        tests = significance(
            table,
            name,
            test=test,
            correction="none",
            by=by,
            n_replicates=n_replicates,
            seed=seed,
            blocking=blocking,
        )
        sign = -1.0 if name in costs else 1.0
        if baseline is not None:
            tests = _against(tests, baseline)
            sizes = _effect_sizes(tests, name, baseline, by, sign)
            out = out.join(sizes, on=[*by, "system"], how="left")
        warn_if_coarse(tests, correction, n_replicates, alpha, by)
        wins = _significant_wins(tests, correction, alpha, by, sign)
        marks = _marks(wins, labels, name, baseline, by)
        out = out.join(marks, on=[*by, "system"], how="left").with_columns(
            pl.col(f"{name}_sig").fill_null("")
        )
    plan = SignificancePlan("paired_t" if test in ("t", "auto") else test, correction, blocking)
    return out.select(
        *by,
        "label",
        "system",
        "n_queries",
        *(
            column
            for name in names
            for column in (
                name,
                *([f"{name}_ci_low", f"{name}_ci_high"] if ci is not None else []),
                f"{name}_sig",
                *([f"{name}_d", f"{name}_es_hsd"] if baseline else []),
            )
        ),
        pl.lit(plan.name).alias("test"),
        pl.lit(correction).alias("correction"),
        pl.lit(alpha).alias("alpha"),
        *([pl.lit(ci, dtype=pl.Float64).alias("ci")] if ci is not None else []),
    ).sort([*by, "system"])


def _against(tests: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """The pairs of ``tests`` in which the baseline is one of the two systems."""
    return tests.filter((pl.col("system_a") == baseline) | (pl.col("system_b") == baseline))


def _effect_sizes(
    tests: pl.DataFrame, name: str, baseline: str, by: list[str], sign: float
) -> pl.DataFrame:
    """Each system's Cohen's d and ES_HSD against the baseline (positive: better than the
    baseline)."""
    towards = pl.when(pl.col("system_a") == baseline).then(-1.0).otherwise(1.0) * sign
    return tests.select(
        *by,
        pl.when(pl.col("system_a") == baseline)
        .then(pl.col("system_b"))
        .otherwise(pl.col("system_a"))
        .alias("system"),
        (towards * pl.col("cohens_d")).alias(f"{name}_d"),
        (towards * pl.col("es_hsd")).alias(f"{name}_es_hsd"),
    )


def _significant_wins(
    tests: pl.DataFrame, correction: Correction, alpha: float, by: list[str], sign: float
) -> pl.DataFrame:
    """The pairs whose difference is significant after ``correction`` within each (by…)
    family, with their ``winner`` and ``loser`` (``sign`` −1 for a cost)."""
    family = (
        tests.select(pl.struct(by).rank("dense")).to_series().to_numpy()
        if by
        else np.zeros(tests.height)
    )
    adjusted = adjust_p_values(tests["p_value"].to_numpy(), correction, groups=family)
    a_wins = pl.col("mean") * sign > 0
    return tests.with_columns(
        significant=pl.Series(adjusted < alpha),
        winner=pl.when(a_wins).then(pl.col("system_a")).otherwise(pl.col("system_b")),
        loser=pl.when(a_wins).then(pl.col("system_b")).otherwise(pl.col("system_a")),
    ).filter(pl.col("significant") & (pl.col("mean") != 0))


def _marks(
    wins: pl.DataFrame, labels: pl.DataFrame, name: str, baseline: str | None, by: list[str]
) -> pl.DataFrame:
    """The ``{name}_sig`` column: the labels of the systems each system significantly
    beats, or against a baseline the better or worse marker."""
    if baseline is None:
        return (
            wins.join(
                labels.rename({"system": "loser", "label": "_loser_label"}),
                on=[*by, "loser"],
            )
            .group_by([*by, "winner"])
            .agg(pl.col("_loser_label").sort().str.join("").alias(f"{name}_sig"))
            .rename({"winner": "system"})
        )
    return wins.select(
        *by,
        pl.when(pl.col("winner") == baseline)
        .then(pl.col("loser"))
        .otherwise(pl.col("winner"))
        .alias("system"),
        pl.when(pl.col("winner") == baseline)
        .then(pl.lit(WORSE))
        .otherwise(pl.lit(BETTER))
        .alias(f"{name}_sig"),
    )
