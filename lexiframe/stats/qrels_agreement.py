"""What changes when the same runs are judged by two or more qrels (human and LLM labels).

:func:`qrels_agreement` reads per-query frames that carry a key column naming the qrels
(``qrels="human"`` / ``"llm"``: evaluate against every qrels at once,
``lf.evaluate(run, lf.concat_qrels({"human": human, "llm": llm}), names, by="qrels")``)
and reports, for every pair of qrels (or each against a reference) and every measure or
preference:

- the agreement of the system orderings: Kendall's τ-b (:func:`lexiframe.stats.kendall_tau`),
  τ_AP and the top-k overlap (:mod:`lexiframe.stats.ordering_agreement`);
- the agreement of the significance decisions (:func:`lexiframe.stats.significance`, the
  test and correction named): pairs significant under each, both, one only, and the
  false-positive and false-negative rates with respect to the first qrels of the pair;
- the bias per system: the difference of its means, its rank shift and, given the run and
  the judgments, the correlation of that difference with the system's hole size
  (:func:`lexiframe.stats.hole_size`);
- with the judgments, the agreement of the labels themselves
  (:func:`lexiframe.stats.label_agreement`).

Faggioli et al. (ICTIR 2023) and Thomas et al. (SIGIR 2024) read the ordering agreement;
Otero, Parapar and Barreiro (2024) the false positives of LLM qrels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from lexiframe._utils import as_list
from lexiframe.aggregate import METHODS, Method, is_cost, order
from lexiframe.errors import InputError
from lexiframe.stats._common import Seed, check_choice, check_fraction, eager, require_table
from lexiframe.stats.agreement import kendall_tau
from lexiframe.stats.corrections import Correction
from lexiframe.stats.holes import hole_size
from lexiframe.stats.label_agreement import label_agreement, qrels_pairs
from lexiframe.stats.ordering_agreement import tau_ap, top_k_overlap
from lexiframe.stats.significance import Test, significance
from lexiframe.validate import require_columns, require_positive_int

Frames = pl.DataFrame | pl.LazyFrame | Sequence[pl.DataFrame | pl.LazyFrame]


@dataclass(frozen=True)
class QrelsAgreement:
    """The report of :func:`qrels_agreement`: three Polars frames.

    Attributes:
        summary: one row per (qrels_a, qrels_b, measure): the ordering, significance and
            bias agreement.
        systems: one row per (qrels_a, qrels_b, measure, system): the means under each
            qrels, their difference (b − a), the ranks, the rank shift (rank under a −
            rank under b: positive when b moves the system up) and the hole size.
        labels: one row per pair of qrels: κ and α on the shared judgments (None without
            ``judgments``).
    """

    summary: pl.DataFrame
    systems: pl.DataFrame
    labels: pl.DataFrame | None


def qrels_agreement(
    per_query: Frames,
    measures: str | Sequence[str],
    *,
    qrels: str = "qrels",
    reference: str | None = None,
    method: Method = "mean",
    k: int = 10,
    test: Test = "auto",
    correction: Correction | None = None,
    alpha: float = 0.05,
    run: pl.DataFrame | pl.LazyFrame | None = None,
    judgments: pl.DataFrame | pl.LazyFrame | None = None,
    top_docs: int = 10,
    seed: Seed | None = None,
) -> QrelsAgreement:
    """Agreement of two or more qrels on the same runs: orderings, significance, bias, labels.

    Args:
        per_query: a metrics table (``qrels, system, query, <measure>…``) or a pair table
            (``qrels, query, system_a, system_b, <preference>…``), or a list of both; each
            measure is read from the first frame that has it.
        measures: the metrics and preferences to compare.
        qrels: the key column naming the qrels of each row.
        reference: compare it with each other qrels (the false positives and negatives,
            τ_AP and the holes are with respect to it); by default every pair, the first
            of a pair (in the order the qrels first appear; a frame evaluated against
            several qrels at once holds its rows in no set order: name the reference, or
            sort the frame) taken as its reference.
        method: how each measure orders the systems (:func:`lexiframe.order`: ``"mean"``,
            ``"mc4"``, ``"borda"``, ``"winrate"``).
        k: the top-k of the ordering overlap.
        test, correction: those of :func:`lexiframe.stats.significance` (``"auto"``: the
            paired t-test for metrics, the sign test for sgnLP and sgnLR, the t-test for
            rrLP; Holm's correction within each qrels and measure).
        alpha: the level at which a pair is significant (adjusted p-value below it).
        run, judgments: the run and the stacked qrels (``qrels, query, doc, relevance``)
            for the hole sizes and the label agreement; either may be left out.
        top_docs: the k of the hole size: the share of a system's top ``top_docs``
            documents the reference leaves unjudged.
        seed: the seed of the tests that draw at random (``"fisher"``, ``"bootstrap"``).

    Only the queries that every qrels evaluates count (under one qrels a query may have
    no relevant document, under another some), so that each difference is paired.

    The ordering columns are ``tau`` and ``tau_p_value`` (τ-b of the ordering scores:
    the mean, negated for costs, or the MC4, Borda, win-rate score), ``tau_ap`` (of b
    against a) and ``tau_ap_symmetric`` (the mean of both directions), on the ranks of
    :func:`lexiframe.order` over the systems both qrels order (ties broken by its rule),
    and ``top_k_overlap``. The significance columns count the system pairs significant
    under a, under b, under both in the same direction (``n_both``), under one only, and
    under both in opposite directions (``n_opposite``); ``agreement`` is the share of
    pairs with the same decision (both in the same direction, or neither);
    ``false_positive_rate`` is b's significant pairs among those a does not find
    significant, ``false_negative_rate`` a's significant pairs b misses; ``test`` names
    the test of the rows (``"paired_t+sign"`` when a t-test without variance fell back to
    the sign test for some pairs) and ``correction`` the correction. ``mean_bias`` is
    the mean over systems of (mean under b − mean under a); ``hole_spearman`` and
    ``hole_p_value`` the Spearman correlation of that difference with the hole size.

    >>> import polars as pl
    >>> human = pl.DataFrame({"system": list("xxyyzz"), "query": list("121212"),
    ...                       "AP": [0.9, 0.8, 0.5, 0.4, 0.2, 0.1]})
    >>> llm = human.with_columns(pl.col("AP") + pl.Series([0.0, 0.0, 0.5, 0.5, 0.0, 0.0]))
    >>> per_query = pl.concat([human.with_columns(qrels=pl.lit("human")),
    ...                        llm.with_columns(qrels=pl.lit("llm"))])
    >>> report = qrels_agreement(per_query, "AP", k=1)
    >>> report.summary.select("qrels_a", "qrels_b", "tau", "tau_ap", "top_k_overlap").rows()
    [('human', 'llm', 0.33333333333333337, 0.0, 0.0)]
    >>> report.systems.select("system", pl.col("mean_difference").round(6), "rank_shift").rows()
    [('x', 0.0, -1), ('y', 0.5, 1), ('z', 0.0, 0)]
    """
    names = list(dict.fromkeys(as_list(measures)))
    if not names:
        raise InputError("qrels_agreement() needs at least one measure, e.g. measures=['AP']")
    check_choice(method, METHODS, "ordering method")
    k = require_positive_int(k, "k")
    alpha = check_fraction(alpha, "alpha")
    frames = _frames(per_query, qrels)
    qrels_names = _qrels_names(frames, qrels)
    pairs = qrels_pairs(qrels_names, reference)
    top_docs = require_positive_int(top_docs, "top_docs")
    if run is not None and judgments is None:
        raise InputError(
            "the hole sizes need the qrels as well as the run: pass judgments= (the qrels "
            "stacked with a column naming each), or leave out run="
        )
    holes = None
    if run is not None and judgments is not None:
        stacked = eager(judgments, "judgments")
        require_columns(stacked.schema, [qrels, "query", "doc"], "judgments")
        holes = {
            name: hole_size(run, stacked.filter(pl.col(qrels).cast(pl.String) == name), k=top_docs)
            for name in dict.fromkeys(a for a, _ in pairs)
        }
    summaries, systems = [], []
    for name in names:
        frame = _frame_of(frames, name)
        ordering = order(frame, name, method=method, by=qrels)
        means = order(frame, name, method="mean", by=qrels)
        tests = significance(
            _coded(frame, qrels, qrels_names), name, test=test, correction=correction,
            by=qrels, seed=seed,
        )  # fmt: skip
        flip = method == "mean" and is_cost(name)
        for a, b in pairs:
            per_system = _per_system(ordering, means, qrels, a, b)
            if holes is not None:
                per_system = per_system.join(
                    holes[a].select("system", "hole"), on="system", how="left"
                )
            else:
                per_system = per_system.with_columns(hole=pl.lit(None, pl.Float64))
            row = {
                "qrels_a": a,
                "qrels_b": b,
                "measure": name,
                "method": method,
                **_ordering_row(per_system, a, b, k, flip),
                # the test of each row (a t-test without variance falls back to the sign test)
                "test": "+".join(tests["test"].unique(maintain_order=True).to_list()),
                "correction": tests["correction"][0] if tests.height else correction,
                "alpha": alpha,
                **_significance_row(
                    tests, qrels, qrels_names.index(a), qrels_names.index(b), alpha
                ),
                **_bias_row(per_system, top_docs if holes is not None else None),
            }
            summaries.append(row)
            systems.append(
                per_system.select(
                    pl.lit(a).alias("qrels_a"),
                    pl.lit(b).alias("qrels_b"),
                    pl.lit(name).alias("measure"),
                    "system",
                    "mean_a",
                    "mean_b",
                    "mean_difference",
                    "rank_a",
                    "rank_b",
                    "rank_shift",
                    "hole",
                )
            )
    labels = None
    if judgments is not None:
        labels = label_agreement(judgments, qrels=qrels, reference=reference)
    return QrelsAgreement(
        summary=pl.DataFrame(summaries, schema=_SUMMARY, orient="row"),
        systems=pl.concat(systems).sort("qrels_a", "qrels_b", "measure", "system"),
        labels=labels,
    )


_SUMMARY = {
    "qrels_a": pl.String, "qrels_b": pl.String, "measure": pl.String, "method": pl.String,
    "n_systems": pl.UInt32, "tau": pl.Float64, "tau_p_value": pl.Float64,
    "tau_ap": pl.Float64, "tau_ap_symmetric": pl.Float64, "k": pl.UInt32,
    "top_k_overlap": pl.Float64, "test": pl.String, "correction": pl.String,
    "alpha": pl.Float64, "n_pairs": pl.UInt32, "n_significant_a": pl.UInt32,
    "n_significant_b": pl.UInt32, "n_both": pl.UInt32, "n_a_only": pl.UInt32,
    "n_b_only": pl.UInt32, "n_opposite": pl.UInt32, "agreement": pl.Float64,
    "false_positive_rate": pl.Float64, "false_negative_rate": pl.Float64,
    "mean_bias": pl.Float64, "top_docs": pl.UInt32, "hole_spearman": pl.Float64,
    "hole_p_value": pl.Float64,
}  # fmt: skip


def _frames(per_query: Frames, qrels: str) -> list[pl.DataFrame]:
    given = [per_query] if isinstance(per_query, pl.DataFrame | pl.LazyFrame) else per_query
    frames = [eager(frame, "per-query") for frame in given]
    for frame in frames:
        require_table(
            frame.schema,
            [qrels],
            "per-query",
            "Evaluate against every qrels at once, with a column naming each, e.g. "
            "lf.evaluate(run, lf.concat_qrels({'human': human, 'llm': llm}"
            f"{'' if qrels == 'qrels' else f', key={qrels!r}'}), ['AP'], by={qrels!r}).",
        )
    # the queries every qrels evaluates: a difference of means is over the same queries
    return [
        frame.filter(pl.col(qrels).n_unique().over("query") == frame[qrels].n_unique())
        if "query" in frame.columns
        else frame
        for frame in frames
    ]


def _qrels_names(frames: list[pl.DataFrame], qrels: str) -> list[str]:
    names = [
        str(name)
        for frame in frames
        for name in frame[qrels].cast(pl.String).unique(maintain_order=True).to_list()
    ]
    return list(dict.fromkeys(names))


def _frame_of(frames: list[pl.DataFrame], measure: str) -> pl.DataFrame:
    for frame in frames:
        if measure in frame.columns:
            return frame
    columns = sorted({c for frame in frames for c in frame.columns})
    raise InputError(
        f"no per-query frame has a column {measure!r}; their columns are {columns}. "
        "Evaluate the measure first, e.g. lf.evaluate(run, qrels, [...]), or pass the pair "
        "table of a preference with the metrics table, per_query=[metrics, prefs]"
    )


def _per_system(
    ordering: pl.DataFrame, means: pl.DataFrame, qrels: str, a: str, b: str
) -> pl.DataFrame:
    """The systems both qrels order: their means, ranks (1…n over those systems), scores."""

    def side(name: str, suffix: str) -> pl.DataFrame:
        ranks = ordering.filter(pl.col(qrels).cast(pl.String) == name).select(
            "system",
            pl.col("rank").alias(f"_rank_{suffix}"),
            pl.col("score").alias(f"score_{suffix}"),
        )
        mean = means.filter(pl.col(qrels).cast(pl.String) == name).select(
            "system", pl.col("score").alias(f"mean_{suffix}")
        )
        return ranks.join(mean, on="system", how="left")

    both = side(a, "a").join(side(b, "b"), on="system", how="inner")
    return (
        both.with_columns(
            # ranks again over the systems both qrels order, so that they are 1…n without ties
            rank_a=pl.col("_rank_a").rank("ordinal").cast(pl.Int64),
            rank_b=pl.col("_rank_b").rank("ordinal").cast(pl.Int64),
            mean_difference=pl.col("mean_b") - pl.col("mean_a"),
        )
        .with_columns(rank_shift=pl.col("rank_a") - pl.col("rank_b"))
        .sort("system")
    )


def _ordering_row(systems: pl.DataFrame, a: str, b: str, k: int, flip: bool) -> dict[str, object]:
    sign = -1.0 if flip else 1.0
    scores = systems.select(
        "system", (sign * pl.col("score_a")).alias("_a"), (sign * pl.col("score_b")).alias("_b")
    )
    tau = kendall_tau(scores, "_a", ["_b"]).row(0, named=True)
    rank_a, rank_b = systems["rank_a"].to_numpy(), systems["rank_b"].to_numpy()
    forward, backward = tau_ap(rank_a, rank_b), tau_ap(rank_b, rank_a)
    return {
        "n_systems": systems.height,
        "tau": tau["tau"],
        "tau_p_value": tau["p_value"],
        "tau_ap": _number(forward),
        "tau_ap_symmetric": _number((forward + backward) / 2.0),
        "k": k,
        "top_k_overlap": _number(top_k_overlap(rank_a, rank_b, k)),
    }


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _coded(frame: pl.DataFrame, qrels: str, names: list[str]) -> pl.DataFrame:
    """The frame with integer keys for the significance tests (qrels: its index in
    ``names``). The tests sort every pair of systems of every query, and integers sort
    several times faster than strings; the system codes follow the names' order, so a
    pair keeps its ``system_a < system_b`` orientation."""
    columns = [c for c in ("system", "system_a", "system_b") if c in frame.columns]
    systems = pl.concat([frame[c].cast(pl.String) for c in columns]).unique().sort()
    codes = dict(zip(systems.to_list(), range(systems.len()), strict=True))
    return frame.with_columns(
        *(pl.col(c).cast(pl.String).replace_strict(codes, return_dtype=pl.UInt32) for c in columns),
        pl.col("query").rank("dense").cast(pl.UInt32),
        pl.col(qrels)
        .cast(pl.String)
        .replace_strict({name: i for i, name in enumerate(names)}, return_dtype=pl.UInt32),
    )


def _significance_row(
    tests: pl.DataFrame, qrels: str, a: int, b: int, alpha: float
) -> dict[str, object]:
    def side(name: int, suffix: str) -> pl.DataFrame:
        return tests.filter(pl.col(qrels) == name).select(
            "system_a",
            "system_b",
            (pl.col("p_adjusted") < alpha).alias(f"sig_{suffix}"),
            pl.col("mean").sign().alias(f"sign_{suffix}"),
        )

    joined = side(a, "a").join(side(b, "b"), on=["system_a", "system_b"], how="inner")
    sig_a, sig_b = pl.col("sig_a"), pl.col("sig_b")
    same = pl.col("sign_a") == pl.col("sign_b")
    counts = joined.select(
        pl.len().alias("n_pairs"),
        sig_a.sum().alias("n_significant_a"),
        sig_b.sum().alias("n_significant_b"),
        (sig_a & sig_b & same).sum().alias("n_both"),
        (sig_a & ~sig_b).sum().alias("n_a_only"),
        (~sig_a & sig_b).sum().alias("n_b_only"),
        (sig_a & sig_b & ~same).sum().alias("n_opposite"),
    ).row(0, named=True)
    n, n_a = counts["n_pairs"], counts["n_significant_a"]
    neither = n - counts["n_a_only"] - counts["n_b_only"] - counts["n_both"] - counts["n_opposite"]
    return {
        **counts,
        "agreement": (counts["n_both"] + neither) / n if n else None,
        "false_positive_rate": counts["n_b_only"] / (n - n_a) if n > n_a else None,
        "false_negative_rate": counts["n_a_only"] / n_a if n_a else None,
    }


def _bias_row(systems: pl.DataFrame, top_docs: int | None) -> dict[str, object]:
    row: dict[str, object] = {
        "mean_bias": systems["mean_difference"].mean(),
        "top_docs": top_docs,
        "hole_spearman": None,
        "hole_p_value": None,
    }
    valid = systems.drop_nulls(["mean_difference", "hole"])
    x, y = valid["hole"].to_numpy(), valid["mean_difference"].to_numpy()
    if top_docs is not None and valid.height >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        from scipy import stats  # imported here: SciPy takes half a second to import

        result = stats.spearmanr(x, y)
        row["hole_spearman"] = float(result.statistic)
        row["hole_p_value"] = float(result.pvalue)
    return row
