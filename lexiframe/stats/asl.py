"""Atomized search length analyses: relative reduction in error and per-document deltas.

- :func:`rrie`: the relative reduction in error from a baseline to a system (ASL paper
  §4.3, eq. 11 for precision-like gains, eq. 12 for search lengths; Table 1);
- :func:`asl_deltas`: the per-document ASL differences between two systems, one row per
  relevant document (ASL paper §4.5, Figure 6).

Per-document ASL lists themselves are ``pl.col("positions").lexi.asl()``
(:func:`lexiframe.metrics.exprs.asl`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from lexiframe._utils import as_list, format_row, plural, quote_names
from lexiframe.errors import InputError, SchemaError
from lexiframe.metrics import exprs
from lexiframe.stats._common import check_unique, eager, measure_columns
from lexiframe.validate import require_columns

Kind = Literal["cost", "gain"]


def rrie(
    metrics: pl.DataFrame | pl.LazyFrame,
    measure: str,
    baseline: str,
    *,
    kind: Kind = "cost",
    per_query: bool = False,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Relative reduction in error (RRIE) of every system against ``baseline``.

    The error of a value x is its distance to the optimum: x − 1 for a search length
    (``kind="cost"``: ASL, ASL@g1-k, whose optimum is 1) and 1 − x for a gain bounded by
    1 (``kind="gain"``: P@k, AP). RRIE = (e_b − e_s) / e_b, so for ASL
    ((b − 1) − (s − 1)) / (b − 1) (ASL paper eq. 12) and for P ((1 − b) − (1 − s)) /
    (1 − b) (eq. 11). As in the paper's Table 1 it is computed on the system means over
    queries (``per_query=False``), or per query with ``per_query=True``; it is null when the
    baseline is optimal (e_b = 0).

    Returns:
        ``by…, [query,] measure, baseline, system, baseline_value, value, rrie`` for every
        system other than the baseline, sorted by ``by…, [query,] system``.

    >>> import polars as pl
    >>> table_1 = pl.DataFrame({"system": ["bm25", "neural"], "query": ["all"] * 2,
    ...                         "ASL": [39.0, 27.0]})
    >>> round(rrie(table_1, "ASL", "bm25")["rrie"].item(), 2)  # (38 - 26) / 38
    0.32
    """
    if kind not in ("cost", "gain"):
        raise InputError(
            f"kind must be 'cost' (a search length such as ASL, whose optimum is 1) or 'gain' "
            f"(a measure bounded by 1 such as AP or P@10), not {kind!r}"
        )
    by = as_list(by)
    table = eager(metrics, "metrics")
    require_columns(table.schema, [*by, "system", "query", measure], "metrics")
    measure_columns(table.schema, [measure], [*by, "system", "query"], "metrics", frame=table)
    check_unique(table, [*by, "system", "query"], "metrics")
    keys = [*by, "query"] if per_query else by
    values = (
        table.select(*keys, "system", pl.col(measure).cast(pl.Float64).alias("value"))
        if per_query
        else table.group_by([*by, "system"]).agg(
            pl.col(measure).cast(pl.Float64).mean().alias("value")
        )
    )
    base = values.filter(pl.col("system") == baseline)
    if base.height == 0:
        raise InputError(
            f"baseline {baseline!r} is not a system of the metrics table; its systems include "
            f"{quote_names(table['system'].unique().sort().head(5).to_list())}"
        )
    base = base.select(*keys, pl.col("value").alias("baseline_value"))
    others = values.filter(pl.col("system") != baseline)
    joined = others.join(base, on=keys, how="inner") if keys else others.join(base, how="cross")

    def error(value: pl.Expr) -> pl.Expr:
        return value - 1.0 if kind == "cost" else 1.0 - value

    base_error = error(pl.col("baseline_value"))
    return joined.select(
        *keys,
        pl.lit(measure).alias("measure"),
        pl.lit(baseline).alias("baseline"),
        "system",
        "baseline_value",
        "value",
        pl.when(base_error != 0)
        .then((base_error - error(pl.col("value"))) / base_error)
        .otherwise(None)
        .alias("rrie"),
    ).sort([*keys, "system"])


def asl_deltas(
    positions: pl.DataFrame | pl.LazyFrame,
    system_a: str,
    system_b: str,
    *,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per-document ASL of two systems and their difference, one row per relevant document.

    ASL of a relevant document (ASL paper §3.1): p_i − (i − 1) when retrieved at rank p_i
    as the i-th relevant document, ñ − r (the irrelevant documents returned) otherwise; a
    system that skipped the query scores the depth (:func:`lexiframe.metrics.exprs.asl`).
    ``delta = asl_a − asl_b``: negative where system_a ranks the document better (ASL paper
    Figure 6 plots best minus median). Documents are matched by id, so ``positions`` must
    carry the ``docs`` column (``run.lexi.positions(qrels, docs=True)``); the m − |retrieved
    by either| relevant documents neither system retrieved have a null ``doc``.

    Returns:
        ``by…, query, doc, system_a, system_b, asl_a, asl_b, delta`` sorted by ``by…,
        query, doc`` (null ids last).

    >>> import polars as pl
    >>> pos = pl.DataFrame({"system": ["x", "y"], "query": ["q", "q"],
    ...                     "positions": [[1, 3], [2]], "docs": [["d1", "d2"], ["d2"]],
    ...                     "n_rel": [3, 3], "n_ret": [10, 5]})
    >>> asl_deltas(pos, "x", "y").select("doc", "asl_a", "asl_b", "delta").rows()
    [('d1', 1.0, 4.0, -3.0), ('d2', 2.0, 2.0, 0.0), (None, 8.0, 4.0, 4.0)]
    """
    by = as_list(by)
    table = eager(positions, "positions")
    keys = [*by, "query"]
    required = [*keys, "system", "positions", "docs", "n_rel", "n_ret"]
    if "docs" not in table.schema:
        raise SchemaError(
            "asl_deltas() matches documents by id and needs the 'docs' column of the "
            "positions frame: build it with run.lexi.positions(qrels, docs=True)"
        )
    require_columns(table.schema, required, "positions")
    # Over every system of the frame: a skipped query scores the depth (exprs.skipped_depth).
    table = table.select(*required, _depth=exprs.skipped_depth(table.columns, keys))
    check_unique(table, [*keys, "system"], "positions")

    queries_a, docs_a = _system_side(table, system_a, "a", keys)
    queries_b, docs_b = _system_side(table, system_b, "b", keys)
    queries = _shared_queries(queries_a, queries_b, system_a, system_b, keys)
    retrieved = (
        docs_a.join(docs_b, on=[*keys, "doc"], how="full", coalesce=True)
        .join(queries, on=keys, how="left")
        .with_columns(
            asl_a=pl.col("asl_a").fill_null(pl.col("missing_a")),
            asl_b=pl.col("asl_b").fill_null(pl.col("missing_b")),
        )
    )
    neither = _retrieved_by_neither(queries, retrieved, keys, docs_a.schema["doc"])
    return (
        pl.concat([retrieved.select(*keys, "doc", "asl_a", "asl_b"), neither])
        .select(
            *keys,
            "doc",
            pl.lit(system_a).alias("system_a"),
            pl.lit(system_b).alias("system_b"),
            "asl_a",
            "asl_b",
            (pl.col("asl_a") - pl.col("asl_b")).alias("delta"),
        )
        .sort([*keys, "doc"], nulls_last=True)
    )


def _system_side(
    table: pl.DataFrame, system: str, suffix: str, keys: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One system's queries (with ``missing_<suffix>``, the ASL of a relevant document it
    did not retrieve) and its retrieved documents (``doc``, ``asl_<suffix>``)."""
    rows = table.filter(pl.col("system") == system)
    if rows.height == 0:
        systems = table["system"].unique().sort()
        raise InputError(
            f"system {system!r} is not in the positions frame; its "
            f"{plural(len(systems), 'system')} include {quote_names(systems.head(5).to_list())}"
        )
    per_query = rows.select(
        *keys,
        pl.col("n_rel").cast(pl.Int64),
        exprs.irrelevant_returned(depth="_depth").alias(f"missing_{suffix}"),
    )
    documents = (
        rows.select(*keys, "docs", asl=exprs.asl_retrieved())
        .explode(["docs", "asl"])
        .drop_nulls("docs")
        .select(*keys, pl.col("docs").alias("doc"), pl.col("asl").alias(f"asl_{suffix}"))
    )
    return per_query, documents


def _shared_queries(
    queries_a: pl.DataFrame, queries_b: pl.DataFrame, system_a: str, system_b: str, keys: list[str]
) -> pl.DataFrame:
    """The queries of both systems, refused unless they are the same."""
    queries = queries_a.join(queries_b.drop("n_rel"), on=keys, how="inner")
    if queries.height != queries_a.height or queries.height != queries_b.height:
        example = queries_a.join(queries_b, on=keys, how="anti").select(keys)
        example = example if example.height else queries_b.join(queries_a, on=keys, how="anti")
        raise InputError(
            f"systems {system_a!r} and {system_b!r} must have the same queries; e.g. "
            f"{format_row(example.select(keys).row(0, named=True))} is only in one of them"
        )
    return queries


def _retrieved_by_neither(
    queries: pl.DataFrame, retrieved: pl.DataFrame, keys: list[str], doc_type: pl.DataType
) -> pl.DataFrame:
    """One row (with a null ``doc``) per relevant document neither system retrieved: the
    query's m minus the documents either retrieved."""
    union = retrieved.group_by(keys).agg(pl.len().cast(pl.Int64).alias("_union"))
    return (
        queries.join(union, on=keys, how="left")
        .with_columns(_k=(pl.col("n_rel") - pl.col("_union").fill_null(0)).clip(lower_bound=0))
        .with_columns(_i=pl.int_ranges(0, pl.col("_k")))
        .explode("_i")
        .drop_nulls("_i")
        .select(
            *keys,
            pl.lit(None, dtype=doc_type).alias("doc"),
            pl.col("missing_a").alias("asl_a"),
            pl.col("missing_b").alias("asl_b"),
        )
    )
