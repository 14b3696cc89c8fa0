"""How the built-in families build their expressions from a parsed measure and its
context, and the checks they declare: the pieces the catalogue's declarations share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from lexiframe._utils import format_row, quote_names
from lexiframe.errors import InputError
from lexiframe.metrics import converters, expected, exprs, parts, running, sets, ties
from lexiframe.metrics import gain as gain_measures
from lexiframe.metrics.gain_order import check_gain_order
from lexiframe.metrics.parts import EXPONENTIAL, Gains, mapped_gains
from lexiframe.metrics.spec import LEVEL, Context, Measure, Needs, gain_map_of

AT_LEVEL: dict[str, object] = {LEVEL: None}
"""The parameter of a measure with a relevance level of its own (``AP(rel=2)``), unset."""

RBP_P = {"p": exprs.RBP_PERSISTENCE}
"""The persistence parameter of RBP, RBPResid and TSE's rbp exposure, with its default."""

P_CONVERTER = {"p": converters.number(f"p={exprs.RBP_PERSISTENCE}")}


def required(rank: int | None) -> int:
    """The cut-off of a family whose cut-off is required (the parser saw to it)."""
    assert rank is not None
    return rank


def ndcg_gains(measure: Measure) -> Gains | None:
    """nDCG's ``gains=``: a map of grades to gains, ``"exp"`` (2^g - 1), or ``None``."""
    if measure.param("gains") == EXPONENTIAL:
        return EXPONENTIAL
    return gain_map_of(measure)


def graded_ndcg(measure: Measure, context: Context) -> pl.Expr:
    if context.rules.running_sums:  # trec_eval's loop, to the last bit
        if not context.graded:
            return running.ndcg(context.positions, None, None, k=measure.rank, n_rel=context.n_rel)
        doc_gains, ideal_gains = mapped_gains(
            context.grades, context.ideal_grades, ndcg_gains(measure)
        )
        return running.ndcg(context.gain_positions, doc_gains, ideal_gains, k=measure.rank)
    return exprs.normalised(graded_dcg(measure, context), graded_idcg(measure, context))


def graded_dcg(measure: Measure, context: Context) -> pl.Expr:
    """DCG: binary, or of the grades under the measure's ``gains=``."""
    if context.graded:
        return exprs.dcg(
            context.gain_positions, k=measure.rank, grades=context.grades, gains=ndcg_gains(measure)
        )
    return exprs.dcg(context.positions, k=measure.rank)


def graded_idcg(measure: Measure, context: Context) -> pl.Expr:
    """The ideal DCG: of n_rel gains of 1, or of the query's positive gains, best first."""
    if not context.graded:
        return exprs.ideal_dcg(n_rel=context.n_rel, k=measure.rank)
    _, ideal_gains = mapped_gains(context.grades, context.ideal_grades, ndcg_gains(measure))
    return exprs.ideal_dcg(k=measure.rank, ideal_gains=ideal_gains)


def empty_nan(value: pl.Expr, lowest_level: float, context: Context) -> pl.Expr:
    """An interpolated precision where the compat setting keeps trec_eval's 0/0
    (:attr:`lexiframe.options.Compat.empty_nan`): an empty ranking, from a level whose
    cut-off is no relevant document."""
    if not context.rules.empty_nan:
        return value
    rule = context.rules.level_cutoff
    empty = (context.n_ret == 0) & sets.no_level_cutoff(lowest_level, context.n_rel, rule)
    return pl.when(empty).then(float("nan")).otherwise(value)


def check_max_grade(measures: Sequence[Measure], frame: pl.DataFrame, keys: Sequence[str]) -> None:
    """Refuse a frame with a grade above the ``max_grade`` of an ERR measure (gdeval refuses
    such qrels: the stopping probability would pass 1)."""
    if "ideal_grades" not in frame.columns:
        return
    limit = min(m.whole("max_grade") for m in measures)
    top = pl.col("ideal_grades").list.max()
    bad = frame.filter(top > limit)
    if not bad.height:
        return
    needing = [m for m in measures if m.param("max_grade") == limit]
    row = bad.head(1).with_columns(_top=top).row(0, named=True)
    wider = replace(needing[0], params=(("max_grade", row["_top"]),))
    raise InputError(
        f"{quote_names([m.name for m in needing])}: the stopping probability "
        f"(2^g - 1)/2^G needs every grade g at most G = max_grade = {limit}, but "
        f"{format_row({key: row[key] for key in keys})} has a document of grade "
        f"{row['_top']}; name the measure with a larger max_grade, e.g. {wider}"
    )


UTILITY_PARAMS = ("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")
"""The parameters of Utility, in trec_eval's order of utility's four weights."""


def utility(measure: Measure, context: Context) -> pl.Expr:
    weights = [measure.number(key) for key in UTILITY_PARAMS]
    return sets.utility(context.positions, n_rel=context.n_rel, weights=weights, n=context.n)


def graded(build: Callable[..., pl.Expr]) -> Callable[[Measure, Context], pl.Expr]:
    """A gain measure of :mod:`lexiframe.metrics.gain`: graded when the frame has grades,
    under the measure's ``gains=`` (which needs them)."""

    def measure_expr(measure: Measure, context: Context) -> pl.Expr:
        running = context.rules.running_sums  # trec_eval's arithmetic to the last bit
        if context.graded:
            return build(
                context.gain_positions,
                grades=context.grades,
                ideal_grades=context.ideal_grades,
                gains=gain_map_of(measure),
                running=running,
            )
        return build(context.positions, n_rel=context.n_rel, running=running)

    return measure_expr


def reads_gains(measure: Measure) -> Needs:
    """The grades, and without fail under ``gains=`` (binary qrels too)."""
    return Needs(grades=True, requires_grades=measure.param("gains") is not None)


GAIN_MAP: dict[str, Any] = {
    "params": {"gains": None},
    "converters": {"gains": converters.gain_map},
    "param_text": {"gains": converters.as_dict},
    "check_frame": check_gain_order,
}
"""The fields of a family that takes a gain map (``gains=``, trec_eval's ``ndcg.1=…``,
``G.1=…``): the parameter, read and printed as a dict, and trec_eval's order of the gains
checked on the frame."""

NDCG_GAINS: dict[str, Any] = {
    **GAIN_MAP,
    "converters": {"gains": converters.ndcg_gains},
    "param_text": {"gains": converters.gains_text},
}
"""nDCG's gains: a gain map, or ``'exp'`` (2^g - 1: ir_measures' ``dcg='exp-log2'``,
ranx's ``ndcg_burges``)."""


def r_ndcg(measure: Measure, context: Context) -> pl.Expr:
    # trec_eval's Rndcg is 0 for a query without a relevant document at the level (-l),
    # though every positive grade gains.
    value = graded(gain_measures.r_ndcg)(measure, context)
    return pl.when(context.n_rel > 0).then(value).otherwise(0.0)


def graded_rbp(measure: Measure, context: Context) -> pl.Expr:
    p = measure.number("p")
    if measure.level is not None:  # binary at its level: the positions of that level
        return exprs.rbp(context.positions, p=p)
    if context.graded:
        return exprs.rbp(
            context.gain_positions, p=p, grades=context.grades, ideal_grades=context.ideal_grades
        )
    return exprs.rbp(context.positions, p=p)


def order_free(measure: Measure, context: Context) -> pl.Expr:
    """The expectation over tied orderings of a measure whose value does not depend on the
    order of the retrieved documents (a count, a set measure): the measure itself."""
    return measure.family.build(measure, context)


def expected_dcg(measure: Measure, context: Context) -> pl.Expr:
    """E[DCG@k] over tied orderings: each document's gain times the mean discount
    1/log2(place + 1) of its group's places above the cut-off."""
    if not context.graded:
        return ties.discounted(context.positions, k=measure.rank)
    gains = parts.gains_of(context.grades, ndcg_gains(measure))
    return ties.discounted(context.gain_positions, gains=gains, k=measure.rank)


def expected_ndcg(measure: Measure, context: Context) -> pl.Expr:
    """E[nDCG@k] = E[DCG@k]/IDCG@k: the ideal DCG does not depend on the run's order."""
    return exprs.normalised(expected_dcg(measure, context), graded_idcg(measure, context))


def probable_dcg(measure: Measure, context: Context) -> pl.Expr:
    """E[DCG@k] when each document is relevant with its probability: a relevant document
    gains 1 (so does it under ``gains='exp'``, 2^1 - 1); a gain map of grades is refused,
    as probabilities are no grades."""
    if isinstance(measure.param("gains"), tuple):
        raise InputError(
            f"{measure} maps grades to gains, but under labels='probability' a document is "
            "relevant (gain 1) or not with the probability its label gives, and has no "
            f"grade to map: name {replace(measure, params=())}"
        )
    return expected.dcg(context.gain_positions, context.grades, k=measure.rank)


def expected_rbp(measure: Measure, context: Context) -> pl.Expr:
    """E[RBP]: each document's gain times the mean of (1 − p)·p^(place − 1) over its
    group's places."""
    weight = ties.rbp_weights(measure.number("p"))
    if measure.level is not None or not context.graded:  # binary (at its level)
        return parts.positive_zero(ties.discounted(context.positions, discount=weight))
    gains = exprs.rbp_gains(context.grades, context.ideal_grades)
    return parts.positive_zero(
        ties.discounted(context.gain_positions, gains=gains, discount=weight)
    )
