"""Agreement between measures: over ranking pairs (signs) and over system orderings (τ-b).

- :func:`sign_agreement`: over the ranking pairs a reference measure does not tie, the
  fraction where another measure prefers the same ranking (lexiprecision paper Table 1
  and §4.2; lexirecall paper §6.2.1, Figure 8);
- :func:`kendall_tau`: Kendall's τ-b between system scores of two measures, as
  ``scipy.stats.kendalltau`` computes it (lexirecall paper Figure 9);
- :func:`system_scores`: the per-system table :func:`kendall_tau` reads, from the
  orderings of :func:`lexiframe.order`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl

from lexiframe._utils import as_list
from lexiframe.errors import InputError
from lexiframe.stats._common import (
    PAIR_KEYS,
    check_unique,
    eager,
    is_pair_table,
    measure_columns,
    metric_pairs,
    require_table,
)
from lexiframe.validate import require_columns


def sign_agreement(
    frame: pl.DataFrame | pl.LazyFrame,
    reference: str,
    measures: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """How often each measure's preference agrees in sign with a reference measure.

    Over the ranking pairs (same query, two systems) where ``reference`` is not 0:
    agreement = #{sign(measure) = sign(reference)} / #{reference ≠ 0}; a measure that ties
    such a pair disagrees (and is counted in ``n_tied``). As the lexirecall paper writes it
    (§6.2.1): Σ I(π ≻_μ π′ ∧ π ≻_LR π′) / Σ I(π ≻_μ π′), with μ the reference.

    ``frame`` is a pair table (preferences, or metric differences from
    :func:`lexiframe.stats.metric_pairs`; join them on ``by…, query, system_a,
    system_b``) or a metrics table, turned into differences first. A measure agrees with
    itself on every pair: agreement 1.

    Returns:
        ``by…, reference, measure, n_pairs, n_agree, n_tied, agreement`` sorted by
        ``by…`` and then the measures in the order given.

    >>> import polars as pl
    >>> pairs = pl.DataFrame({"query": list("1234"), "system_a": ["x"] * 4,
    ...                       "system_b": ["y"] * 4, "RR": [0.5, -0.2, 0.0, 0.1],
    ...                       "sgnLP": [1, 1, -1, 0]})
    >>> sign_agreement(pairs, "RR", ["sgnLP"])
    shape: (1, 6)
    ┌───────────┬─────────┬─────────┬─────────┬────────┬───────────┐
    │ reference ┆ measure ┆ n_pairs ┆ n_agree ┆ n_tied ┆ agreement │
    │ ---       ┆ ---     ┆ ---     ┆ ---     ┆ ---    ┆ ---       │
    │ str       ┆ str     ┆ u32     ┆ u32     ┆ u32    ┆ f64       │
    ╞═══════════╪═════════╪═════════╪═════════╪════════╪═══════════╡
    │ RR        ┆ sgnLP   ┆ 3       ┆ 1       ┆ 1      ┆ 0.333333  │
    └───────────┴─────────┴─────────┴─────────┴────────┴───────────┘
    """
    by = as_list(by)
    names = list(dict.fromkeys(as_list(measures)))
    table = eager(frame, "input")
    if not is_pair_table(table.schema):
        table = metric_pairs(table, list(dict.fromkeys([reference, *names])), by=by)
    keys = [*by, "query", *PAIR_KEYS]
    require_columns(table.schema, keys, "pair")
    measure_columns(table.schema, [reference, *names], keys, "pair", frame=table)
    check_unique(table, keys, "pair")
    ref = pl.col(reference).cast(pl.Float64).sign()
    decided = table.filter(pl.col(reference).is_not_null() & (ref != 0))
    group = by or pl.lit(0).alias("_all")
    parts = []
    for index, name in enumerate(names):
        value = pl.col(name).cast(pl.Float64).sign()
        parts.append(
            decided.group_by(group)
            .agg(
                pl.len().cast(pl.UInt32).alias("n_pairs"),
                (value == ref).sum().cast(pl.UInt32).alias("n_agree"),
                ((value == 0) | value.is_null()).sum().cast(pl.UInt32).alias("n_tied"),
            )
            .with_columns(measure=pl.lit(name), _order=pl.lit(index))
        )
    if not parts:
        raise InputError("sign_agreement() needs at least one measure to compare")
    return (
        pl.concat(parts)
        .sort([*by, "_order"])
        .select(
            *by,
            pl.lit(reference).alias("reference"),
            "measure",
            "n_pairs",
            "n_agree",
            "n_tied",
            pl.when(pl.col("n_pairs") > 0)
            .then(pl.col("n_agree") / pl.col("n_pairs"))
            .alias("agreement"),
        )
    )


def system_scores(
    orderings: Mapping[str, pl.DataFrame | pl.LazyFrame],
    *,
    column: str = "score",
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """One column per ordering: ``by…, system, <name>…`` from :func:`lexiframe.order` results.

    ``orderings`` maps a name (the output column) to a frame with ``by…, system`` and
    ``column`` (``"score"``: the MC4 stationary probability, the mean metric, …; or
    ``"rank"``, negated so that larger is better). Systems missing from one ordering get
    null there.

    >>> import polars as pl
    >>> a = pl.DataFrame({"system": ["x", "y"], "rank": [1, 2], "score": [0.7, 0.3]})
    >>> b = pl.DataFrame({"system": ["y", "x"], "rank": [1, 2], "score": [0.6, 0.2]})
    >>> system_scores({"MC4": a, "AP": b}).rows()
    [('x', 0.7, 0.2), ('y', 0.3, 0.6)]
    """
    by = as_list(by)
    result: pl.DataFrame | None = None
    for name, frame in orderings.items():
        table = eager(frame, "ordering")
        require_table(
            table.schema,
            [*by, "system", column],
            f"{name!r} ordering",
            "Pass the frames lf.order(...) returns, or name the score column with column= "
            "(e.g. column='rank').",
        )
        check_unique(table, [*by, "system"], "ordering")
        value = pl.col(column).cast(pl.Float64)
        part = table.select(*by, "system", (-value if column == "rank" else value).alias(name))
        result = (
            part
            if result is None
            else result.join(part, on=[*by, "system"], how="full", coalesce=True)
        )
    if result is None:
        raise InputError("system_scores() needs at least one ordering")
    return result.sort([*by, "system"])


def kendall_tau(
    scores: pl.DataFrame | pl.LazyFrame,
    reference: str,
    measures: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Kendall's τ-b between the system scores of ``reference`` and of each measure.

    ``scores`` has one row per (by…, system) and one score column per measure (larger is
    better), e.g. from :func:`system_scores`. τ-b and its p-value are
    ``scipy.stats.kendalltau(x, y, variant="b")`` over the systems both measures score;
    with fewer than two systems, or a constant score, τ is null. Lexirecall paper §6.2.1,
    Figure 9.

    Returns:
        ``by…, reference, measure, n_systems, tau, p_value`` sorted by ``by…`` and then
        the measures in the order given.

    >>> import polars as pl
    >>> scores = pl.DataFrame({"system": list("wxyz"), "MC4": [0.4, 0.3, 0.2, 0.1],
    ...                        "AP": [0.30, 0.35, 0.20, 0.10]})
    >>> kendall_tau(scores, "MC4", ["AP"]).select("measure", "n_systems", "tau").rows()
    [('AP', 4, 0.6666666666666669)]
    """
    by = as_list(by)
    names = list(dict.fromkeys(as_list(measures)))
    table = eager(scores, "scores")
    todo = (
        "Build it with stats.system_scores({...}) from lf.order results, or average a "
        "per-query metrics table first, e.g. metrics.lexi.summarize()."
    )
    require_table(table.schema, [*by, "system"], "scores", todo)
    require_table(table.schema, [reference, *names], "scores", todo)
    measure_columns(table.schema, [reference, *names], [*by, "system"], "scores", frame=table)
    per_query = "query" in table.schema and "query" not in by
    check_unique(
        table,
        [*by, "system"],
        "scores",
        todo=(
            "a scores table has one row per system; this one has a 'query' column: average "
            "it first, e.g. metrics.lexi.summarize(), or build it with stats.system_scores"
            if per_query
            else None
        ),
    )
    groups = (
        sorted(table.partition_by(by, as_dict=True).items(), key=lambda item: str(item[0]))
        if by
        else [((), table)]
    )
    from scipy import stats  # imported here: SciPy takes half a second to import

    rows = []
    for key, group in groups:
        x_all = group[reference].cast(pl.Float64).to_numpy()
        for name in names:
            y_all = group[name].cast(pl.Float64).to_numpy()
            both = ~(np.isnan(x_all) | np.isnan(y_all))
            x, y = x_all[both], y_all[both]
            tau = p_value = None
            if len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
                result = stats.kendalltau(x, y, variant="b")
                tau, p_value = float(result.statistic), float(result.pvalue)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "reference": reference,
                    "measure": name,
                    "n_systems": int(both.sum()),
                    "tau": tau,
                    "p_value": p_value,
                }
            )
    schema: dict[str, pl.DataType] = {
        **{name: table.schema[name] for name in by},
        "reference": pl.String(),
        "measure": pl.String(),
        "n_systems": pl.UInt32(),
        "tau": pl.Float64(),
        "p_value": pl.Float64(),
    }
    order = {name: i for i, name in enumerate(names)}
    return (
        pl.DataFrame(rows, schema=schema, orient="row")
        .with_columns(_order=pl.col("measure").replace_strict(order, return_dtype=pl.Int64))
        .sort([*by, "_order"])
        .drop("_order")
    )
