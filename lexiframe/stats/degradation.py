"""Label degradation and query subsampling, averaged over seeded samples.

- :func:`degrade_labels`: remove a fraction of the relevant labels of each query,
  uniformly or weighted by how many rankings retrieved each document, keeping at least
  one (lexiprecision paper §5.1–5.2, Figures 8a and 9; lexirecall paper §6.2.4,
  Figures 12–13);
- :func:`subsample_queries`: keep a random subset of the queries (lexiprecision Figure 8b);
- :func:`degradation_curve` and :func:`average_over_samples`: run any analysis for several
  fractions and seeded samples, then average;
- :func:`label_degradation`: the papers' experiment in one call: ties and agreement with
  the full-label preferences, per measure and fraction.

Every draw comes from an explicit seed (an integer or a ``numpy.random.Generator``); the
same seed gives the same frames.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np
import polars as pl

from lexiframe import _progress
from lexiframe._utils import as_list
from lexiframe.errors import DroppedQueriesWarning, InputError, UnknownMeasureError
from lexiframe.evaluation import measures as compute_measures
from lexiframe.options import PositionsOptions
from lexiframe.preferences import preference_measure, preferences
from lexiframe.ranking import positions as build_positions
from lexiframe.stats._common import (
    PAIR_KEYS,
    Seed,
    check_choice,
    check_fraction,
    check_fractions,
    eager,
    generator,
    metric_pairs,
    require_table,
)
from lexiframe.stats.ties import tie_fraction
from lexiframe.validate import require_columns, require_numeric, require_positive_int

Weighting = Literal["uniform", "retrieved"]
WEIGHTINGS: tuple[str, ...] = ("uniform", "retrieved")


def _n_removed(count: np.ndarray, fraction: float) -> np.ndarray:
    """⌊fraction · count⌋ items removed, keeping at least one."""
    removed: np.ndarray = np.minimum(np.floor(fraction * count + 1e-9).astype(np.int64), count - 1)
    return removed


def _ranks_within(groups: np.ndarray, *sort_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0-based rank of each row within its group, ordered by ``sort_keys`` (ascending)."""
    order = np.lexsort((*reversed(sort_keys), groups))
    sorted_groups = groups[order]
    first = np.searchsorted(sorted_groups, sorted_groups, side="left")
    rank = np.empty(groups.size, dtype=np.int64)
    rank[order] = np.arange(groups.size) - first
    return rank, order


def degrade_labels(
    qrels: pl.DataFrame | pl.LazyFrame,
    fraction: float,
    *,
    seed: Seed,
    weighting: Weighting = "uniform",
    run: pl.DataFrame | pl.LazyFrame | None = None,
    threshold: float = PositionsOptions.threshold,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Remove ⌊fraction · m⌋ of the m relevant labels of each query, keeping at least one.

    ``weighting="uniform"`` removes a uniform random subset; ``"retrieved"`` samples
    documents with probability proportional to the number of rankings of ``run`` that
    retrieved them (Efraimidis–Spirakis keys log(u)/w; a document no ranking retrieved is
    removed only when the others are exhausted). The removed rows are dropped, so the
    documents become unjudged (non-relevant). Non-relevant labels are kept. Lexirecall
    paper §6.2.4 (Figures 12–13), lexiprecision paper §5 (Figures 8a, 9).

    Returns:
        The remaining qrels rows, sorted by ``by…, query, doc``.

    >>> import polars as pl
    >>> qrels = pl.DataFrame({"query": ["q"] * 4 + ["r"], "doc": list("abcde"),
    ...                       "relevance": [1, 1, 1, 1, 1]})
    >>> out = degrade_labels(qrels, 0.5, seed=0)
    >>> out.group_by("query").len().sort("query").rows()
    [('q', 2), ('r', 1)]
    >>> out.equals(degrade_labels(qrels, 0.5, seed=0))
    True
    """
    fraction = check_fraction(fraction, "fraction")
    check_choice(weighting, WEIGHTINGS, "weighting")
    by = as_list(by)
    rng = generator(seed)
    table = eager(qrels, "qrels")
    keys = [*by, "query"]
    require_columns(table.schema, [*keys, "doc", "relevance"], "qrels")
    require_numeric(table.schema, "relevance", "qrels")
    table = table.sort([*keys, "doc"])
    relevant = (table["relevance"] >= threshold).fill_null(False).to_numpy()
    group = table.select(pl.struct(keys).rank("dense")).to_series().to_numpy().astype(np.int64)
    m = np.bincount(group, weights=relevant, minlength=int(group.max(initial=0)) + 1)
    removed_count = _n_removed(m.astype(np.int64), fraction)[group]
    if weighting == "uniform":
        weight = np.ones(table.height)
    else:
        if run is None:
            raise InputError(
                "weighting='retrieved' weights each document by how many rankings of the run "
                "retrieved it: pass the run as run=, or use weighting='uniform'"
            )
        weight = _retrieval_counts(table, eager(run, "run"), by)
    u = rng.random(table.height)
    tiebreak = rng.random(table.height)
    with np.errstate(divide="ignore"):
        key = np.where(weight > 0, np.log(u) / np.where(weight > 0, weight, 1.0), -np.inf)
    # rows that are not relevant sort last and are never removed
    key = np.where(relevant, key, -np.inf)
    rank, _ = _ranks_within(group, -relevant.astype(np.int8), -key, -tiebreak)
    removed = relevant & (rank < removed_count)
    return table.filter(pl.Series(~removed))


def _retrieval_counts(qrels: pl.DataFrame, run: pl.DataFrame, by: list[str]) -> np.ndarray:
    """How many rankings (systems) of the run retrieved each qrels row's document."""
    require_columns(run.schema, ["system", "query", "doc"], "run")
    on = [key for key in by if key in run.schema] + ["query", "doc"]
    counts = (
        run.select(*on, "system")
        .with_columns(pl.col("query").cast(qrels.schema["query"]))
        .with_columns(pl.col("doc").cast(qrels.schema["doc"]))
        .group_by(on)
        .agg(pl.col("system").n_unique().alias("_count"))
    )
    joined = (
        qrels.with_row_index("_row")
        .join(counts, on=on, how="left")
        .sort("_row")["_count"]
        .fill_null(0)
    )
    per_row: np.ndarray = joined.cast(pl.Float64).to_numpy()
    return per_row


def subsample_queries(
    frame: pl.DataFrame | pl.LazyFrame,
    fraction: float,
    *,
    seed: Seed,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Remove ⌊fraction · Q⌋ of the Q queries of each (by…) group, keeping at least one.

    Works on any frame with a ``query`` column (qrels, positions, metrics, pair tables):
    the rows of the kept queries are returned in their original order. Lexiprecision
    paper §5.1, Figure 8b.

    >>> import polars as pl
    >>> metrics = pl.DataFrame({"system": ["x"] * 4, "query": list("1234"), "RR": [1.0] * 4})
    >>> subsample_queries(metrics, 0.5, seed=3)["query"].to_list()
    ['3', '4']
    """
    fraction = check_fraction(fraction, "fraction")
    by = as_list(by)
    rng = generator(seed)
    table = eager(frame, "input")
    keys = [*by, "query"]
    require_table(
        table.schema,
        keys,
        "input",
        "Pass a frame with a query column (qrels, positions, metrics or a pair table); "
        "name extra keys with by=.",
    )
    queries = table.select(keys).unique().sort(keys)
    group = (
        queries.select(pl.struct(by).rank("dense")).to_series().to_numpy().astype(np.int64)
        if by
        else np.ones(queries.height, dtype=np.int64)
    )
    count = np.bincount(group)[group]
    rank, _ = _ranks_within(group, rng.random(queries.height))
    kept = queries.filter(pl.Series(rank >= _n_removed(count, fraction)))
    return table.with_row_index("_row").join(kept, on=keys, how="semi").sort("_row").drop("_row")


def degradation_curve(
    analysis: Callable[[float, np.random.Generator], pl.DataFrame],
    fractions: Iterable[float],
    *,
    seed: Seed,
    n_samples: int = 10,
    progress: bool | None = None,
) -> pl.DataFrame:
    """Run ``analysis(fraction, generator)`` for each fraction and sample; stack the results.

    Each (fraction, sample) gets its own generator, spawned from ``seed`` in a fixed
    order, so the curve is reproducible. Average it with :func:`average_over_samples`.
    A progress bar counts the (fraction, sample) runs when ``progress`` allows (``None``:
    only in interactive use, see :func:`lexiframe.read_run`).

    Returns:
        ``fraction, sample`` and the analysis' columns, sorted by ``fraction, sample``.

    >>> import polars as pl
    >>> def draw(fraction, rng):
    ...     return pl.DataFrame({"value": [fraction + rng.random()]})
    >>> curve = degradation_curve(draw, [0.0, 0.5], seed=0, n_samples=2)
    >>> curve.columns, curve.height
    (['fraction', 'sample', 'value'], 4)
    >>> curve.equals(degradation_curve(draw, [0.0, 0.5], seed=0, n_samples=2))
    True
    """
    n_samples = require_positive_int(n_samples, "n_samples")
    fractions = check_fractions(fractions)
    children = generator(seed).spawn(len(fractions) * n_samples)
    parts = []
    runs = [(fraction, sample) for fraction in fractions for sample in range(n_samples)]
    with _progress.bar(len(runs), progress=progress, desc="degradation", unit="run") as bar:
        for (fraction, sample), child in zip(runs, children, strict=True):
            result = analysis(fraction, child)
            if not isinstance(result, pl.DataFrame):
                raise InputError(
                    f"the analysis must return a Polars DataFrame, not {type(result)} "
                    f"(at fraction={fraction!r}, sample={sample}); wrap a number as "
                    "pl.DataFrame({'value': [x]})"
                )
            parts.append(
                result.select(
                    pl.lit(fraction).alias("fraction"),
                    pl.lit(sample, dtype=pl.UInt32).alias("sample"),
                    pl.all(),
                )
            )
            bar.update()
    if not parts:
        raise InputError("degradation_curve() needs at least one fraction")
    return pl.concat(parts, how="vertical_relaxed").sort(
        ["fraction", "sample"], maintain_order=True
    )


def average_over_samples(
    curve: pl.DataFrame | pl.LazyFrame, *, keys: str | Sequence[str] | None = None
) -> pl.DataFrame:
    """Mean and standard deviation (ddof = 1) over samples of every value column.

    Rows are grouped by ``fraction`` and ``keys`` (default: every non-numeric column,
    such as ``measure``); every other numeric column ``c`` except ``sample`` becomes ``c``
    (the mean) and ``c_std``. The shaded bands of the papers' figures are ± one ``_std``.

    >>> import polars as pl
    >>> curve = pl.DataFrame({"fraction": [0.5, 0.5], "sample": [0, 1],
    ...                       "measure": ["RR", "RR"], "ties": [0.2, 0.4]})
    >>> average_over_samples(curve).rows()
    [(0.5, 'RR', 0.3..., 0.1414...)]
    """
    table = eager(curve, "curve")
    require_table(
        table.schema,
        ["fraction"],
        "curve",
        "Build it with stats.degradation_curve(analysis, fractions, seed=...).",
    )
    group = [
        "fraction",
        *(
            as_list(keys)
            if keys is not None
            else [
                c
                for c in table.columns
                if c not in ("fraction", "sample") and not table.schema[c].is_numeric()
            ]
        ),
    ]
    values = [
        c for c in table.columns if c not in (*group, "sample") and table.schema[c].is_numeric()
    ]
    return (
        table.group_by(group)
        .agg(
            *(pl.col(c).cast(pl.Float64).mean() for c in values),
            *(pl.col(c).cast(pl.Float64).std(ddof=1).alias(f"{c}_std") for c in values),
        )
        .select(*group, *(e for c in values for e in (c, f"{c}_std")))
        .sort(group)
    )


def _pair_table(
    positions: pl.DataFrame, names: list[str], by: list[str], n: int | None
) -> pl.DataFrame:
    """Preference and metric-difference columns of every ranking pair."""
    prefs, metrics = [], []
    for name in names:
        try:
            preference_measure(name)
            prefs.append(name)
        except UnknownMeasureError:
            metrics.append(name)
    keys = [*by, "query", *PAIR_KEYS]
    parts = []
    if prefs:
        found = preferences(positions, prefs, by=by)
        parts.append(found.rename({preference_measure(p).name: p for p in prefs}))
    if metrics:
        scores = compute_measures(positions, metrics, n=n)
        scores = scores.rename({str(c): c for c in scores.columns})
        parts.append(metric_pairs(scores, metrics, by=by))
    table = parts[0]
    for part in parts[1:]:
        table = table.join(part, on=keys, how="inner")
    return table.select(*keys, *names).sort(keys)


def label_degradation(
    run: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    measures: str | Iterable[str],
    fractions: Iterable[float],
    *,
    seed: Seed,
    n_samples: int = 10,
    weighting: Weighting = "uniform",
    reference: str | None = None,
    by: str | Sequence[str] | None = None,
    threshold: float = PositionsOptions.threshold,
    depth: int | None = None,
    n: int | None = None,
    progress: bool | None = None,
) -> pl.DataFrame:
    """Ties and agreement with the full labels as relevant labels are removed.

    For each fraction and seeded sample, :func:`degrade_labels` removes labels, the
    positions are rebuilt, and for each measure (a preference such as ``"sgnLR"``, or a
    metric such as ``"RR"``, compared by its per-query difference) the function records
    the fraction of tied ranking pairs and the agreement of its sign with the full-label
    sign of ``reference`` (default: the measure itself) over the pairs that reference does
    not tie. Lexiprecision paper Figures 8a (reference ``"RR"``) and 9; lexirecall paper
    Figures 12 and 13. ``progress`` as for :func:`degradation_curve`.

    Returns:
        ``by…, fraction, measure, tie_fraction, tie_fraction_std, agreement,
        agreement_std``, averaged over ``n_samples`` samples, sorted by ``by…, fraction,
        measure``.
    """
    by = as_list(by)
    names = list(dict.fromkeys(as_list(measures)))
    if not names:
        raise InputError("label_degradation() needs at least one measure")
    fractions = check_fractions(fractions)  # before the (long) work, not after it
    check_choice(weighting, WEIGHTINGS, "weighting")
    generator(seed)
    run_df = eager(run, "run")
    qrels_df = eager(qrels, "qrels")
    options = PositionsOptions(threshold=threshold, depth=depth, by=tuple(by))
    full_positions = build_positions(run_df, qrels_df, options)
    references = names if reference is None else [reference]
    full = _pair_table(full_positions, list(dict.fromkeys([*names, *references])), by, n)
    keys = [*by, "query", *PAIR_KEYS]

    def analysis(fraction: float, rng: np.random.Generator) -> pl.DataFrame:
        degraded = degrade_labels(
            qrels_df, fraction, seed=rng, weighting=weighting, run=run_df, threshold=threshold
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DroppedQueriesWarning)  # reported once, above
            positions = build_positions(run_df, degraded, options)
        pairs = _pair_table(positions, names, by, n)
        ties = tie_fraction(pairs, names, by=by)
        joined = pairs.join(
            full.select(*keys, *(pl.col(c).alias(f"{c}__full") for c in dict.fromkeys(references))),
            on=keys,
            how="inner",
        )
        agreements = []
        for name in names:
            target = pl.col(f"{reference or name}__full").cast(pl.Float64).sign()
            decided = joined.filter(target != 0)
            agreements.append(
                decided.group_by(by or pl.lit(0).alias("_all"))
                .agg((pl.col(name).cast(pl.Float64).sign() == target).mean().alias("agreement"))
                .select(*by, pl.lit(name).alias("measure"), "agreement")
            )
        return ties.select(*by, "measure", "tie_fraction").join(
            pl.concat(agreements), on=[*by, "measure"], how="left"
        )

    curve = degradation_curve(
        analysis, fractions, seed=seed, n_samples=n_samples, progress=progress
    )
    averaged = average_over_samples(curve, keys=[*by, "measure"])
    return averaged.select(
        *by, "fraction", "measure", "tie_fraction", "tie_fraction_std", "agreement", "agreement_std"
    ).sort([*by, "fraction", "measure"])
