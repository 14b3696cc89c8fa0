"""The measure registry: canonical names that users type and that name output columns.

A measure is a family (``nDCG``), optional parameters (``TSE(exposure='ap')``) and an
optional cutoff (``nDCG@10``, ``ASL@g1-10``). Names are parsed, not split by hand; the
canonical string of a parsed measure is its output column. The registry holds specs only:
the documentation pages of the measures are generated from :data:`FAMILIES` by
``docs/generate.py``.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from lexiframe._utils import format_row, quote_names, shorten
from lexiframe.errors import InputError, SchemaError, UnknownMeasureError
from lexiframe.metrics import exprs, judged, sets
from lexiframe.metrics import gain as gain_measures
from lexiframe.validate import POSITION_MAX

if TYPE_CHECKING:
    from lexiframe.options import PositionsOptions

CutoffRule = Literal["none", "optional", "required"]

LEVEL = "rel"
"""The parameter of a measure's own relevance level: ``P(rel=2)@10`` is trec_eval -l 2's P_10."""
_AT_LEVEL = {LEVEL: None}


@dataclass(frozen=True)
class Context:
    """What a measure may use besides the positions: corpus size and graded columns."""

    n: int | str | pl.Expr | None = None
    graded: bool = False
    depth: pl.Expr | None = None
    """The depth at which a skipped ranking is scored (ASL): see ``exprs.skipped_depth``."""
    positions: pl.Expr = field(default_factory=lambda: pl.col("positions"))
    """The ranks of the relevant documents; at a relevance level of its own (``rel=``), the
    ranks of the documents graded at least that level."""
    n_rel: pl.Expr = field(default_factory=lambda: pl.col("n_rel"))
    """How many relevant documents the query has (at the measure's level)."""
    gain_positions: pl.Expr = field(default_factory=lambda: pl.col("positions"))
    """The ranks of the documents whose grades ``grades`` holds: ``positions``, or above
    threshold=1 the frame's ``gain_positions`` (every positive grade gains at any level,
    as with trec_eval's ``-l``)."""


def at_level(context: Context, level: object, name: str) -> Context:
    """The context of a measure with a relevance level of its own (``AP(rel=2)``): its
    relevant documents are those graded ``level`` or more, as trec_eval's ``-l level``.

    The level reads the positions frame's ``grades`` (retrieved relevant documents) and
    ``ideal_grades`` (all relevant grades of the query), so it must be at least the frame's
    ``threshold``. Above threshold=1 the grades are those of every positive-grade document,
    at the ranks of ``gain_positions``.
    """
    if not isinstance(level, int) or isinstance(level, bool) or level < 1:
        raise UnknownMeasureError(f"{name}: rel= is a relevance grade of at least 1, e.g. rel=2")
    if not context.graded:
        raise SchemaError(
            f"{name} reads the grades of the positions frame, which has no grades and "
            "ideal_grades columns: build it with positions(qrels, grades=True) (lf.evaluate "
            "does so by itself)"
        )
    kept = pl.col("grades").list.eval(pl.arg_where(pl.element() >= level))
    count = pl.col("ideal_grades").list.eval((pl.element() >= level).sum()).list.first()
    return replace(context, positions=context.gain_positions.list.gather(kept), n_rel=count)


@dataclass(frozen=True)
class Needs:
    """What a measure reads beyond the ``positions`` and ``n_rel`` columns: measuring, the
    command line, the ``trec_eval`` drop-in, Spark and the docs read these declarations.

    Example:
        >>> from lexiframe.metrics import parse_measure
        >>> parse_measure("Bpref").needs.judged, parse_measure("ERR@10").needs.requires_grades
        (True, True)
    """

    grades: bool = False
    """Reads ``grades`` and ``ideal_grades`` when the frame has them (graded values)."""
    requires_grades: bool = False
    """Cannot be computed without the grade columns (ERR, G, a gain map ``gains=…``, a
    level of its own): :meth:`PositionsOptions.for_measures` asks for ``grades=True``."""
    judged: bool = False
    """Reads the judged non-relevant documents: a positions frame built with judged=True."""
    n: bool = False
    """Needs the corpus size n (null where n is needed and not given)."""
    columns: tuple[str, ...] = ()
    """Other columns of the positions frame it reads (e.g. ``n_ret``)."""


@dataclass(frozen=True)
class Family:
    """A measure family: its name, documentation and how to build its expression."""

    name: str
    summary: str
    formula: str
    """LaTeX math without delimiters, e.g. ``r"\\mathrm{RR} = 1/p_1"``; the docs wrap it."""
    source: str
    build: Callable[[Measure, Context], pl.Expr] = field(repr=False)
    cutoff: CutoffRule = "none"
    cutoff_prefix: str = ""
    fractional_cutoff: bool = False
    """The cutoff is a level in [0, 1] (``IPrec@0.5``), not a rank."""
    cutoff_max: float | None = 1.0
    """The largest fractional cutoff; ``None``: any non-negative number (``RPrecMult@2.0``)."""
    params: Mapping[str, object] = field(default_factory=dict)
    choices: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    lower_is_better: bool = False
    """A cost (SL3, RecallError, ASL): orderings put the smallest value first."""
    example: str = ""
    needs: Needs | Callable[[Measure], Needs] = field(default_factory=lambda: Needs(), repr=False)
    """What the measure reads beyond the positions and ``n_rel`` (:class:`Needs`), or a
    function of the parsed measure when its parameters decide."""
    converters: Mapping[str, Callable[[object], object]] = field(default_factory=dict, repr=False)
    """Per parameter: check a parsed value and return its canonical form (a ``ValueError``
    says why a value is refused)."""
    param_text: Mapping[str, Callable[[object], str]] = field(default_factory=dict, repr=False)
    """Per parameter: how its canonical value prints in the measure's name (default: repr)."""
    check_options: Callable[[Measure, PositionsOptions], None] | None = field(
        default=None, repr=False
    )
    """Refuse positions options under which the measure would lose what it reads (an
    :class:`~lexiframe.errors.InputError` that says why and what to change)."""
    check_frame: Callable[[Sequence[Measure], pl.DataFrame, Sequence[str]], None] | None = field(
        default=None, repr=False
    )
    """Refuse a positions frame (one batch of it) on which the family's measures (all those
    of one call) are undefined; given the frame's key columns for the message."""


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, parameters and cutoff. ``str(measure)`` is its canonical name.

    Example:
        >>> from lexiframe.metrics import parse_measure
        >>> str(parse_measure("ndcg_cut_10")), str(parse_measure("TSE(exposure='ap')"))
        ('nDCG@10', "TSE(exposure='ap')")
    """

    family: Family
    cutoff: int | float | None = None
    params: tuple[tuple[str, object], ...] = ()

    def param(self, name: str) -> object:
        return dict(self.params).get(name, self.family.params[name])

    def number(self, name: str) -> float:
        """A numeric parameter as a float (``p``, ``beta``, the weights)."""
        value = self.param(name)
        assert isinstance(value, int | float), (name, value)  # its converter checked it
        return float(value)

    def whole(self, name: str) -> int:
        """A whole-number parameter (``max_grade``)."""
        value = self.param(name)
        assert isinstance(value, int), (name, value)
        return value

    @property
    def rank(self) -> int | None:
        """The cut-off as a rank (``P@10``: 10), or ``None`` without one."""
        assert self.cutoff is None or isinstance(self.cutoff, int), self.cutoff
        return self.cutoff

    @property
    def level_cutoff(self) -> float:
        """A fractional cut-off (``IPrec@0.5``, ``RPrecMult@2.0``), required by its family."""
        assert self.cutoff is not None, self.name
        return float(self.cutoff)

    @property
    def lower_is_better(self) -> bool:
        return self.family.lower_is_better

    @property
    def needs(self) -> Needs:
        """What the measure reads beyond the positions (:class:`Needs`); a relevance level
        of its own (``rel=``) reads the grades on any qrels."""
        needs = self.family.needs
        resolved = needs(self) if callable(needs) else needs
        if self.level is not None and not resolved.requires_grades:
            resolved = replace(resolved, grades=True, requires_grades=True)
        return resolved

    @property
    def needs_n(self) -> bool:
        """Whether the measure needs the corpus size n: without it, some values are null."""
        return self.needs.n

    def check_options(self, options: PositionsOptions) -> None:
        """Refuse positions options under which this measure loses what it reads: a
        relevance level below the frame's threshold, and its family's own checks."""
        if isinstance(self.level, int) and self.level < options.threshold:
            raise InputError(
                f"{self} counts documents of grade {self.level} as relevant, but the "
                f"positions are built at threshold={options.threshold}; lower threshold= to "
                f"{self.level} (the other measures keep their level with "
                f"rel={options.threshold})"
            )
        if self.family.check_options is not None:
            self.family.check_options(self, options)

    @property
    def name(self) -> str:
        text = self.family.name
        changed = [(key, value) for key, value in self.params if value != self.family.params[key]]
        if changed:
            text += "(" + ", ".join(self._param_text(key, value) for key, value in changed) + ")"
        if self.cutoff is not None:
            text += f"@{self.family.cutoff_prefix}{self.cutoff}"
        return text

    def __str__(self) -> str:
        return self.name

    def _param_text(self, key: str, value: object) -> str:
        """``p=0.5``, ``exposure='ap'``; a parameter with a printer of its own (a gain map
        as a dict) through it."""
        printer = self.family.param_text.get(key, repr)
        return f"{key}={printer(value)}"

    def expr(self, context: Context | None = None) -> pl.Expr:
        """The measure as an expression over a positions frame, named by its canonical name."""
        context = context or Context()
        level = self.level
        if level is not None:
            context = at_level(context, level, self.name)
        elif self.requires_grades and not context.graded:
            raise SchemaError(
                f"{self.name} reads the grades of the positions frame, which has no grades "
                "and ideal_grades columns: build it with positions(qrels, grades=True) "
                "(lf.evaluate does so by itself)"
            )
        return self.family.build(self, context).alias(self.name)

    @property
    def level(self) -> object:
        """The measure's own relevance level (``rel=``), or ``None`` for the frame's."""
        return dict(self.params).get(LEVEL)

    @property
    def needs_judged(self) -> bool:
        """Whether the measure reads the judged columns (positions(judged=True))."""
        return self.needs.judged

    @property
    def needs_grades(self) -> bool:
        """Whether the measure reads the grade columns of the positions frame."""
        return self.needs.grades or self.needs.requires_grades

    @property
    def requires_grades(self) -> bool:
        """Whether the measure cannot be computed without the grade columns: a relevance
        level of its own (``rel=``), ERR's and G's grades, a gain map (``gains=``)."""
        return self.needs.requires_grades


def _as_dict(value: object) -> str:
    """A gain map, held as (grade, gain) pairs, as the dict a user types."""
    return repr(dict(value))  # type: ignore[call-overload]


def _as_list(value: object) -> str:
    """Recall levels, held as a tuple, as the list a user types (no nested parentheses)."""
    return repr(list(value))  # type: ignore[call-overload]


def _required(rank: int | None) -> int:
    """The cut-off of a family whose cut-off is required (the parser saw to it)."""
    assert rank is not None
    return rank


def gain_map_of(measure: Measure) -> dict[int, float] | None:
    """A measure's ``gains=`` (held as (grade, gain) pairs) as a dict, or ``None``."""
    gains = measure.param("gains")
    return None if gains is None else dict(gains)  # type: ignore[call-overload]


def _graded_ndcg(measure: Measure, context: Context) -> pl.Expr:
    if context.graded:
        return exprs.ndcg(
            context.gain_positions,
            k=measure.rank,
            grades="grades",
            ideal_grades="ideal_grades",
            gains=gain_map_of(measure),
        )
    return exprs.ndcg(k=measure.rank)


def _gains(value: object) -> tuple[tuple[int, int | float], ...] | None:
    """A gain map ``{grade: gain}`` as sorted (grade, gain) pairs (``None``: the grades)."""
    if value is None:
        return None
    example = "e.g. gains={0: 0, 1: 1, 2: 3}"
    if not isinstance(value, dict):
        raise ValueError(f"gains= maps relevance grades to gains, {example}")
    pairs = []
    for grade, gain in value.items():
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise ValueError(f"the grades of gains= are integers, {example}")
        if isinstance(gain, bool) or not isinstance(gain, int | float) or not math.isfinite(gain):
            raise ValueError(f"the gain of grade {grade} must be a finite number, {example}")
        if grade < 1 and gain != 0:
            raise ValueError(
                f"gains= gives grade {grade} a gain of {gain!r}, but a positions frame holds "
                "the documents graded 1 or more only, so a non-relevant or unjudged document "
                "cannot add a gain (trec_eval's ndcg.0=…, G.0=… or G.-1=… has no equivalent "
                "here): give the grades below 1 a gain of 0 or leave them out of the map"
            )
        pairs.append((grade, int(gain) if float(gain).is_integer() else float(gain)))
    return tuple(sorted(pairs)) or None


def _trec_eval():
    """The trec_eval spellings module (it reads this one)."""
    from lexiframe.metrics import trec_eval

    return trec_eval


def _check_max_grade(measures: Sequence[Measure], frame: pl.DataFrame, keys: Sequence[str]) -> None:
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


def _max_grade(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("max_grade= is a positive whole number, e.g. max_grade=4")
    if value > exprs.ERR_MAX_GRADE_LIMIT:
        raise ValueError(
            f"max_grade= is at most {exprs.ERR_MAX_GRADE_LIMIT} (ERR divides by 2^max_grade, a "
            "floating-point number)"
        )
    return value


def _levels(value: object) -> tuple[float, ...]:
    """Recall levels in [0, 1], ascending (IPrecAvg), as a tuple of floats."""
    example = "e.g. levels=[0.2, 0.5, 0.8]"
    if not isinstance(value, tuple | list) or not value:
        raise ValueError(f"levels= is a list of recall levels, {example}")
    levels = []
    for level in value:
        if isinstance(level, bool) or not isinstance(level, int | float) or not 0 <= level <= 1:
            raise ValueError(f"the levels of levels= are recall levels in [0, 1], {example}")
        levels.append(float(level))
    if levels != sorted(levels):
        raise ValueError(f"levels= go in ascending order, as trec_eval reads them, {example}")
    return tuple(levels)


def _weight(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("the weights of Utility are finite numbers, e.g. nonrel_ret=-2")
    return float(value)


def _number(example: str) -> Callable[[object], object]:
    """A converter that refuses a parameter that is not a number (``p=x`` reads as the
    string 'x'); its range is the expression's to check, and an int keeps its spelling."""

    def convert(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{example.split('=')[0]}= is a number, e.g. {example}")
        return value

    return convert


UTILITY_WEIGHTS = ("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")
"""The parameters of Utility, in trec_eval's order of utility's four weights."""


def _utility(measure: Measure, context: Context) -> pl.Expr:
    weights = [measure.number(key) for key in UTILITY_WEIGHTS]
    return sets.utility(context.positions, n_rel=context.n_rel, weights=weights, n=context.n)


def _graded(build: Callable[..., pl.Expr]) -> Callable[[Measure, Context], pl.Expr]:
    """A gain measure of :mod:`lexiframe.metrics.gain`: graded when the frame has grades,
    under the measure's ``gains=`` (which needs them)."""

    def measure_expr(measure: Measure, context: Context) -> pl.Expr:
        if context.graded:
            return build(
                context.gain_positions,
                grades="grades",
                ideal_grades="ideal_grades",
                gains=gain_map_of(measure),
            )
        return build()

    return measure_expr


def _check_gain_order(
    measures: Sequence[Measure], frame: pl.DataFrame, keys: Sequence[str]
) -> None:
    """Refuse a gain map that trec_eval's sort takes out of order for a query of the frame
    (:func:`lexiframe.metrics.trec_eval.check_gain_order`)."""
    _trec_eval().check_gain_order(measures, frame, keys)


def _reads_gains(measure: Measure) -> Needs:
    """The grades, and without fail under ``gains=`` (binary qrels too)."""
    return Needs(grades=True, requires_grades=measure.param("gains") is not None)


GAIN_MAP: dict[str, Any] = {
    "params": {"gains": None},
    "converters": {"gains": _gains},
    "param_text": {"gains": _as_dict},
    "check_frame": _check_gain_order,
}
"""The fields of a family that takes a gain map (``gains=``, trec_eval's ``ndcg.1=…``,
``G.1=…``): the parameter, read and printed as a dict, and trec_eval's order of the gains
checked on the frame."""


def _r_ndcg(measure: Measure, context: Context) -> pl.Expr:
    # trec_eval's Rndcg is 0 for a query without a relevant document at the level (-l),
    # though every positive grade gains.
    value = _graded(gain_measures.r_ndcg)(measure, context)
    return pl.when(context.n_rel > 0).then(value).otherwise(0.0)


def _graded_rbp(measure: Measure, context: Context) -> pl.Expr:
    p = measure.number("p")
    if context.graded:
        return exprs.rbp(context.gain_positions, p=p, grades="grades", ideal_grades="ideal_grades")
    return exprs.rbp(p=p)


FAMILIES: tuple[Family, ...] = (
    Family(
        name="RR",
        summary="Reciprocal rank of the first relevant document (0 if none above the cutoff).",
        formula=r"\mathrm{RR} = 1/p_1",
        source="trec_eval recip_rank; lexiprecision paper §1",
        build=lambda m, c: exprs.rr(c.positions, k=m.rank),
        cutoff="optional",
        aliases=("MRR", "recip_rank", "RecipRank"),
        params=_AT_LEVEL,
        example="RR@10",
    ),
    Family(
        name="AP",
        summary="Average precision over the m relevant documents (map_cut_k with a cutoff).",
        formula=r"\mathrm{AP} = \frac{1}{m} \sum_{i \le r} \frac{i}{p_i}",
        source="trec_eval map",
        build=lambda m, c: exprs.ap(c.positions, n_rel=c.n_rel, k=m.rank),
        cutoff="optional",
        aliases=("MAP", "map"),
        params=_AT_LEVEL,
        example="AP",
    ),
    Family(
        name="nDCG",
        summary="Normalised DCG with log2(rank+1) discounts; the gains are the grades, as in "
        "trec_eval (positions frames of graded qrels keep them). gains= maps grades to gains "
        "as trec_eval's ndcg.1=1,2=3 (read as nDCG(gains={1: 1, 2: 3})): unlisted grades "
        "keep their grade, negative gains count, the ideal DCG takes the positive ones; "
        "nDCG(gains={1: 1, 2: 1}) is binary nDCG on grades 1 and 2. trec_eval sorts gains by "
        "their difference cut to a whole number: gains it would take out of order in the "
        "ideal DCG (less than 1 apart, e.g. {1: 2.5, 2: 2}) are refused.",
        formula=r"\mathrm{nDCG} = \frac{\sum_{i \le r} g_i / \log_2(p_i + 1)}"
        r"{\sum_{j \le m} g^*_j / \log_2(j + 1)}",
        source="trec_eval ndcg, ndcg_cut_k; Järvelin and Kekäläinen (2002)",
        build=_graded_ndcg,
        cutoff="optional",
        aliases=("NDCG", "ndcg"),
        **GAIN_MAP,
        needs=_reads_gains,
        example="nDCG@10",
    ),
    Family(
        name="P",
        summary="Precision at k.",
        formula=r"\mathrm{P}@k = \#\{i : p_i \le k\} / k",
        source="trec_eval P_k",
        build=lambda m, c: exprs.precision(c.positions, k=_required(m.rank)),
        cutoff="required",
        aliases=("Precision",),
        params=_AT_LEVEL,
        example="P@10",
    ),
    Family(
        name="R",
        summary="Recall at k.",
        formula=r"\mathrm{R}@k = \#\{i : p_i \le k\} / m",
        source="trec_eval recall_k",
        build=lambda m, c: exprs.recall(c.positions, k=_required(m.rank), n_rel=c.n_rel),
        cutoff="required",
        aliases=("Recall",),
        params=_AT_LEVEL,
        example="R@1000",
    ),
    Family(
        name="RP",
        summary="R-precision: precision at rank m.",
        formula=r"\mathrm{RP} = \#\{i : p_i \le m\} / m",
        source="trec_eval Rprec",
        build=lambda m, c: exprs.r_precision(c.positions, n_rel=c.n_rel),
        aliases=("Rprec", "RPrec"),
        params=_AT_LEVEL,
        example="RP",
    ),
    Family(
        name="RBP",
        summary="Rank-biased precision with persistence p (its residual is RBPResid); on graded "
        "qrels the gains are the grades scaled to [0, 1] by the query's top grade, as trec_eval's "
        "rbp. trec_eval's names rbp (its default p = 0.9) and rbp_p=0.8 read as RBP(p=0.9) and "
        "RBP(p=0.8).",
        formula=r"\mathrm{RBP} = (1 - p) \sum_{i \le r} g_i\, p^{\,p_i - 1},\ "
        r"g_i = \mathrm{grade}_i / \max(1, \text{top grade})",
        source="Moffat and Zobel (2008); trec_eval rbp; lexirecall paper §2",
        build=_graded_rbp,
        params={"p": 0.8},
        converters={"p": _number("p=0.8")},
        needs=Needs(grades=True),
        example="RBP(p=0.5)",
    ),
    Family(
        name="ERR",
        summary="Expected reciprocal rank: the cascade user stops at a document of grade g "
        "with probability (2^g - 1)/2^G (G = max_grade, gdeval's 4); the expected reciprocal "
        "of the rank where they stop. Non-relevant documents take ranks but stop no one; a "
        "grade above max_grade is refused.",
        formula=r"\mathrm{ERR} = \sum_{i \le r} \frac{R_i}{p_i} \prod_{j < i} (1 - R_j),\ "
        r"R_i = \frac{2^{g_i} - 1}{2^G}",
        source="Chapelle, Metzler, Zhang and Grinspan (CIKM 2009); TREC Web track gdeval "
        "(ir_measures ERR@k)",
        build=lambda m, c: exprs.err(
            c.gain_positions,
            grades="grades",
            k=m.rank,
            max_grade=m.whole("max_grade"),
        ),
        cutoff="optional",
        aliases=("err",),
        params={"max_grade": exprs.ERR_MAX_GRADE},
        converters={"max_grade": _max_grade},
        needs=Needs(grades=True, requires_grades=True),
        check_frame=_check_max_grade,
        example="ERR@10",
    ),
    Family(
        name="TSE",
        summary="Total search efficiency: the exposure of the last relevant document.",
        formula=r"\mathrm{TSE}_e = e(\hat p_m),\quad e(x) = \begin{cases} 1/x & "
        r"\mathrm{rr}, \mathrm{ap} \\ 1/\log_2(x + 1) & \mathrm{ndcg} \\ "
        r"(1 - p)\,p^{\,x - 1} & \mathrm{rbp} \\ 1 - x/n & \mathrm{linear} \end{cases}",
        source="lexirecall paper §3.2, eq. 3 (the exposures of §2.3.1, Definition 2.1)",
        build=lambda m, c: exprs.tse(
            exposure=m.param("exposure"),  # type: ignore[arg-type]
            n=c.n,
            p=m.number("p"),
        ),
        params={"exposure": "rr", "p": 0.8},
        converters={"p": _number("p=0.8")},
        choices={"exposure": ("rr", "ap", "ndcg", "rbp", "linear")},
        example="TSE(exposure='ndcg')",
        needs=lambda m: Needs(n=m.param("exposure") == "linear"),
    ),
    Family(
        name="SL3",
        summary="Cooper's type 3 search length (lower is better; needs n when r < m).",
        formula=r"\mathrm{SL3} = \hat p_m - m",
        source="lexirecall paper §3.2",
        build=lambda m, c: exprs.sl3(n=c.n),
        lower_is_better=True,
        example="SL3",
        needs=Needs(n=True),
    ),
    Family(
        name="RecallError",
        summary="Rocchio's recall error (lower is better; needs n when r < m).",
        formula=r"\mathrm{RecallError} = \frac{1}{m} \sum_{i \le m} \hat p_i - \frac{m + 1}{2}",
        source="lexirecall paper §3.2",
        build=lambda m, c: exprs.recall_error(n=c.n),
        aliases=("RE",),
        lower_is_better=True,
        example="RecallError",
        needs=Needs(n=True),
    ),
    Family(
        name="ASL",
        summary="Atomized search length: mean over relevant documents of the irrelevant "
        "documents above each, plus one (lower is better); @g1-k averages the first k. A "
        "skipped query scores the depth (ñ = depth).",
        formula=r"\mathrm{ASL} = \frac{1}{m} \Big[\sum_{i \le r} (p_i - i + 1)"
        r" + (m - r)(\tilde n - r)\Big]",
        source="atomized search length paper §3.1, eq. 1–5",
        build=lambda m, c: exprs.asl_mean(first=m.rank, depth=c.depth),
        cutoff="optional",
        cutoff_prefix="g1-",
        lower_is_better=True,
        needs=Needs(columns=("n_ret",)),
        example="ASL@g1-10",
    ),
    Family(
        name="Success",
        summary="1 when a relevant document is ranked at the cutoff or above, else 0.",
        formula=r"\mathrm{Success@}k = [\, r > 0 \wedge p_1 \le k \,]",
        source="trec_eval success_k",
        build=lambda m, c: sets.success(c.positions, k=_required(m.rank)),
        cutoff="required",
        aliases=("success",),
        params=_AT_LEVEL,
        example="Success@10",
    ),
    Family(
        name="NumRet",
        summary="How many documents the ranking returned (after depth=).",
        formula=r"\mathrm{NumRet} = \tilde{n}",
        source="trec_eval num_ret",
        build=lambda m, c: sets.num_ret(),
        aliases=("num_ret",),
        example="NumRet",
    ),
    Family(
        name="NumRel",
        summary="How many relevant documents the query has.",
        formula=r"\mathrm{NumRel} = m",
        source="trec_eval num_rel",
        build=lambda m, c: sets.num_rel(c.n_rel),
        aliases=("num_rel",),
        params=_AT_LEVEL,
        example="NumRel",
    ),
    Family(
        name="NumRelRet",
        summary="How many relevant documents the ranking returned.",
        formula=r"\mathrm{NumRelRet} = r",
        source="trec_eval num_rel_ret",
        build=lambda m, c: sets.num_rel_ret(c.positions),
        aliases=("num_rel_ret",),
        params=_AT_LEVEL,
        example="NumRelRet",
    ),
    Family(
        name="SetP",
        summary="Precision of the whole retrieved set (0 when nothing was returned).",
        formula=r"\mathrm{SetP} = r / \tilde{n}",
        source="trec_eval set_P",
        build=lambda m, c: sets.set_precision(c.positions),
        aliases=("set_P",),
        params=_AT_LEVEL,
        example="SetP",
    ),
    Family(
        name="SetR",
        summary="Recall of the whole retrieved set.",
        formula=r"\mathrm{SetR} = r / m",
        source="trec_eval set_recall",
        build=lambda m, c: sets.set_recall(c.positions, n_rel=c.n_rel),
        aliases=("set_recall", "SetRecall"),
        params=_AT_LEVEL,
        example="SetR",
    ),
    Family(
        name="SetF",
        summary="F of the retrieved set; beta weighs recall as trec_eval's set_F does.",
        formula=r"\mathrm{SetF}_\beta = \frac{(\beta + 1)\, \mathrm{SetP} \cdot \mathrm{SetR}}"
        r"{\beta\, \mathrm{SetP} + \mathrm{SetR}}",
        source="trec_eval set_F",
        build=lambda m, c: sets.set_f(c.positions, n_rel=c.n_rel, beta=m.number("beta")),
        params={"beta": 1.0, **_AT_LEVEL},
        converters={"beta": _number("beta=0.5")},
        aliases=("set_F",),
        example="SetF(beta=0.5)",
    ),
    Family(
        name="IPrec",
        summary="Interpolated precision at a recall level: the best precision at or below "
        "the rank where the ranking reaches that recall (0 if it never does).",
        formula=r"\mathrm{IPrec@}x = \max_{i \ge \max(c, 1)} i / p_i,\ "
        r"c = \operatorname{round}(x\, m)",
        source="trec_eval iprec_at_recall_x",
        build=lambda m, c: sets.interpolated_precision(
            c.positions, recall=m.level_cutoff, n_rel=c.n_rel
        ),
        cutoff="required",
        fractional_cutoff=True,
        aliases=("iprec_at_recall",),
        params=_AT_LEVEL,
        example="IPrec@0.5",
    ),
    Family(
        name="Bpref",
        summary="Binary preference: how many judged non-relevant documents rank above each "
        "relevant one, out of min(N, R); unjudged documents are ignored.",
        formula=r"\mathrm{Bpref} = \frac{1}{R} \sum_{i \le r} \Big(1 - "
        r"\frac{\min(n_i, R)}{\min(N, R)}\Big)",
        source="Buckley and Voorhees (SIGIR 2004); trec_eval bpref",
        build=lambda m, c: judged.bpref(),
        aliases=("bpref",),
        needs=Needs(judged=True),
        example="Bpref",
    ),
    Family(
        name="infAP",
        summary="Inferred average precision: AP estimated from a sample of the pool; the "
        "pooled documents left unjudged (negative grades) are assumed relevant in the "
        "proportion of the judged ones.",
        formula=r"\mathrm{infAP} = \frac{1}{R} \sum_{i \le r} \Big(\frac{1}{p_i} + "
        r"\frac{a_i + b_i + u_i}{p_i} \cdot \frac{a_i + \epsilon}{a_i + b_i + 2\epsilon}\Big)",
        source="Yilmaz and Aslam (CIKM 2006); trec_eval infAP",
        build=lambda m, c: judged.inf_ap(),
        aliases=("infap", "InfAP"),
        needs=Needs(judged=True),
        example="infAP",
    ),
    Family(
        name="Judged",
        summary="The share of the top min(k, ñ) documents that the qrels judge, whatever the "
        "grade (0 for an empty ranking).",
        formula=r"\mathrm{Judged@}k = \#\{\text{judged in the top } \min(k, \tilde n)\} / "
        r"\min(k, \tilde n)",
        source="ir_measures Judged",
        build=lambda m, c: judged.judged_at(k=m.rank),
        cutoff="optional",
        aliases=("judged",),
        needs=Needs(judged=True),
        example="Judged@10",
    ),
    Family(
        name="Unjudged",
        summary="The share of the top k ranks that hold an unjudged document (outside the "
        "qrels, or pooled with a negative grade); ranks past the ranking's end count as judged.",
        formula=r"\mathrm{Unjudged@}k = \#\{\text{unjudged in the top } k\} / k",
        source="trec_eval unj",
        build=lambda m, c: judged.unjudged_at(k=_required(m.rank)),
        cutoff="required",
        aliases=("unj",),
        needs=Needs(judged=True),
        lower_is_better=True,
        example="Unjudged@10",
    ),
    Family(
        name="NumNonRelJudgedRet",
        summary="How many judged non-relevant documents the ranking returned.",
        formula=r"\mathrm{NumNonRelJudgedRet} = \#\{\text{judged non-relevant retrieved}\}",
        source="trec_eval num_nonrel_judged_ret",
        build=lambda m, c: judged.num_nonrel_judged_ret(),
        aliases=("num_nonrel_judged_ret",),
        needs=Needs(judged=True),
        example="NumNonRelJudgedRet",
    ),
    Family(
        name="SetRelativeP",
        summary="Precision of the retrieved set over the best a set of that size can reach "
        "(0 when nothing was returned or nothing is relevant).",
        formula=r"\mathrm{SetRelativeP} = r / \min(\tilde{n}, m)",
        source="trec_eval set_relative_P",
        build=lambda m, c: sets.set_relative_precision(c.positions, n_rel=c.n_rel),
        aliases=("set_relative_P",),
        params=_AT_LEVEL,
        example="SetRelativeP",
    ),
    Family(
        name="SetAP",
        summary="Unranked average precision of the retrieved set: every retrieved relevant "
        "document has the set's precision, every missed one 0 (SetP times SetR).",
        formula=r"\mathrm{SetAP} = \frac{r^2}{\tilde{n}\, m}",
        source="trec_eval set_map",
        build=lambda m, c: sets.set_ap(c.positions, n_rel=c.n_rel),
        aliases=("set_map", "SetMAP"),
        params=_AT_LEVEL,
        example="SetAP",
    ),
    Family(
        name="Utility",
        summary="A weighted count of the retrieved set's contingency table: relevant and "
        "non-relevant documents retrieved, and not retrieved; trec_eval's default weights "
        "(1, -1, 0, 0) give r - (ñ - r). A weight for the non-relevant documents not "
        "retrieved needs the corpus size n. trec_eval's utility.1,-1,0,0 reads as "
        "Utility(rel_ret=1, nonrel_ret=-1, rel_nonret=0, nonrel_nonret=0).",
        formula=r"\mathrm{Utility} = w_1 r + w_2 (\tilde n - r) + w_3 (m - r)"
        r" + w_4 (n - \tilde n - m + r)",
        source="trec_eval utility",
        build=_utility,
        aliases=("utility",),
        params={
            "rel_ret": sets.UTILITY_WEIGHTS[0],
            "nonrel_ret": sets.UTILITY_WEIGHTS[1],
            "rel_nonret": sets.UTILITY_WEIGHTS[2],
            "nonrel_nonret": sets.UTILITY_WEIGHTS[3],
            **_AT_LEVEL,
        },
        converters={key: _weight for key in UTILITY_WEIGHTS},
        example="Utility(nonrel_ret=-0.5)",
        needs=lambda m: Needs(n=m.param("nonrel_nonret") != 0.0),
    ),
    Family(
        name="RelativeP",
        summary="Precision at k over the best precision possible at k: precision while "
        "k <= m, recall beyond (0 when nothing is relevant).",
        formula=r"\mathrm{RelativeP@}k = \#\{i : p_i \le k\} / \min(k, m)",
        source="trec_eval relative_P_k",
        build=lambda m, c: sets.relative_precision(
            c.positions,
            k=_required(m.rank),
            n_rel=c.n_rel,
        ),
        cutoff="required",
        aliases=("relative_P",),
        params=_AT_LEVEL,
        example="RelativeP@10",
    ),
    Family(
        name="RPrecMult",
        summary="Precision at a multiple x of m, the rank c = floor(x m + 0.9) as trec_eval "
        "rounds it (0 when c = 0); RPrecMult@1.0 is R-precision.",
        formula=r"\mathrm{RPrecMult@}x = \#\{i : p_i \le c\} / c,\ "
        r"c = \lfloor x\, m + 0.9 \rfloor",
        source="trec_eval Rprec_mult_x",
        build=lambda m, c: sets.r_precision_multiple(
            c.positions,
            x=m.level_cutoff,
            n_rel=c.n_rel,
        ),
        cutoff="required",
        fractional_cutoff=True,
        cutoff_max=None,
        aliases=("Rprec_mult", "RprecMult"),
        params=_AT_LEVEL,
        example="RPrecMult@2.0",
    ),
    Family(
        name="IPrecAvg",
        summary="Interpolated precision averaged over recall levels: by default the eleven "
        "levels 0, 0.1, ..., 1 (trec_eval's 11pt_avg); levels= takes others, in ascending "
        "order (11pt_avg.0.2,0.5,0.8 reads as IPrecAvg(levels=[0.2, 0.5, 0.8])).",
        formula=r"\mathrm{IPrecAvg} = \frac{1}{\lvert L \rvert} \sum_{x \in L} \mathrm{IPrec@}x,\ "
        r"L = \{0, 0.1, \dots, 1\}",
        source="trec_eval 11pt_avg",
        build=lambda m, c: sets.interpolated_precision_average(
            c.positions,
            levels=m.param("levels"),  # type: ignore[arg-type]
            n_rel=c.n_rel,
        ),
        aliases=("11pt_avg",),
        params={"levels": sets.ELEVEN_POINTS, **_AT_LEVEL},
        converters={"levels": _levels},
        param_text={"levels": _as_list},
        example="IPrecAvg",
    ),
    Family(
        name="BinG",
        summary="Binary G: the mean over the m relevant documents of 1/log2(2 + the "
        "non-relevant documents above it), 0 for one not retrieved.",
        formula=r"\mathrm{BinG} = \frac{1}{m} \sum_{i \le r} \frac{1}{\log_2(2 + p_i - i)}",
        source="trec_eval binG",
        build=lambda m, c: gain_measures.binary_g(c.positions, n_rel=c.n_rel),
        aliases=("binG",),
        params=_AT_LEVEL,
        example="BinG",
    ),
    Family(
        name="G",
        summary="Normalised gain: each retrieved relevant document's gain, discounted by "
        "log2(2 + how far the gain gathered down to it lags the ideal ranking's, each ideal "
        "rank counting at least 1), over the query's total gain. Gains are the grades, as in "
        "trec_eval (binary qrels: G is BinG); G is not scale-free (grades 2 and 2 do not give "
        "the value of grades 1 and 1), so it reads the frame's grades on any qrels. gains= "
        "maps grades to gains as trec_eval's G.1=2,2=4 (read as G(gains={1: 2, 2: 4})), as "
        "nDCG's does: unlisted grades keep their grade, negative gains count, the ideal "
        "ranking takes the positive ones; a map trec_eval's sort would take out of order "
        "(gains less than 1 apart) is refused.",
        formula=r"\mathrm{G} = \frac{1}{\sum_j g^*_j} \sum_{i \le r} "
        r"\frac{g_i}{\log_2(2 + C(p_i) - \sum_{l \le i} g_l)},\ "
        r"C(p) = \sum_{j \le p} \max(1, g^*_j)",
        source="trec_eval G",
        build=_graded(gain_measures.g),
        **GAIN_MAP,
        needs=Needs(grades=True, requires_grades=True),
        example="G",
    ),
    Family(
        name="nDCGRel",
        summary="nDCG averaged over the relevant documents: at the rank of each retrieved "
        "one (the ideal cut at m at most), and the whole ranking's nDCG for each one missed. "
        "Gains are the grades, as in trec_eval's ndcg. gains= maps grades to gains as "
        "trec_eval's ndcg_rel.1=1,2=5 (read as nDCGRel(gains={1: 1, 2: 5})), as nDCG's "
        "does; the relevant documents are then those of positive gain, as in trec_eval.",
        formula=r"\mathrm{nDCGRel} = \frac{1}{m} \Big[\sum_{i \le r} "
        r"\frac{\mathrm{DCG}(p_i)}{\mathrm{IDCG}(\min(p_i, m))} + (m - r)\, "
        r"\frac{\mathrm{DCG}}{\mathrm{IDCG}}\Big]",
        source="trec_eval ndcg_rel",
        build=_graded(gain_measures.ndcg_rel),
        aliases=("ndcg_rel",),
        **GAIN_MAP,
        needs=_reads_gains,
        example="nDCGRel",
    ),
    Family(
        name="RnDCG",
        summary="nDCG averaged at the R levels: at each rank where the ideal ranking's gain "
        "drops (after each grade's documents, highest grade first), and for the whole ranking "
        "when it runs on more than one document past m. Gains are the grades, as in "
        "trec_eval's ndcg. gains= maps grades to gains as trec_eval's Rndcg.2=7 (read as "
        "RnDCG(gains={2: 7})), as nDCG's does; grades of one gain make one level.",
        formula=r"\mathrm{RnDCG} = \frac{1}{\lvert J \rvert + [\tilde n > m + 1]} "
        r"\Big[\sum_{j \in J} "
        r"\mathrm{nDCG@}j + [\tilde n > m + 1]\, \mathrm{nDCG}\Big]",
        source="trec_eval Rndcg",
        build=_r_ndcg,
        aliases=("Rndcg",),
        **GAIN_MAP,
        needs=_reads_gains,
        example="RnDCG",
    ),
    Family(
        name="RBPResid",
        summary="The residual of RBP(p): what RBP could still gain if the unjudged "
        "documents of the ranking, and the ranks past its end, were relevant (0 when every "
        "retrieved document is judged). trec_eval's rbp_resid (its default p = 0.9) reads as "
        "RBPResid(p=0.9).",
        formula=r"\mathrm{RBPResid} = p^{\tilde n} + (1 - p) "
        r"\sum_{i \le \tilde n \text{ unjudged}} p^{\,i - 1}",
        source="Moffat and Zobel (2008); trec_eval rbp_resid",
        build=lambda m, c: judged.rbp_residual(p=m.number("p")),
        aliases=("RBPResidual",),
        params={"p": 0.8},
        converters={"p": _number("p=0.8")},
        needs=Needs(judged=True),
        lower_is_better=True,
        example="RBPResid(p=0.9)",
    ),
)

_BY_NAME: dict[str, Family] = {}
"""Every registered family under its name and aliases, lower-cased."""
_REGISTERED: dict[str, Family] = {}
"""Every registered family by name, in registration order (the built-ins first)."""


def register(family: Family, *, replace: bool = False) -> Family:
    """Add ``family`` to the registry: its name and aliases then parse everywhere a measure
    name is read (expressions, :func:`lexiframe.evaluate`, the command line, Spark).

    A name or alias already taken is refused unless ``replace`` (a family replaced keeps
    none of its old aliases). :func:`lexiframe.define_measure` builds a family from a
    Polars expression; the built-in families are registered by this function too.
    """
    names = [family.name, *family.aliases]
    if not _NAME_PART.fullmatch(family.name):
        raise InputError(
            f"a measure name is a letter followed by letters, digits or _, not {family.name!r}"
        )
    old = _REGISTERED.get(family.name)
    if old is not None and replace:
        for alias in (old.name, *old.aliases):
            _BY_NAME.pop(alias.lower(), None)
    taken = [name for name in names if name.lower() in _BY_NAME]
    if taken:
        owner = _BY_NAME[taken[0].lower()].name
        raise InputError(
            f"the measure name {taken[0]!r} is taken (by {owner}); choose another name"
            + (", or pass replace=True to redefine it" if owner == family.name else "")
        )
    _REGISTERED[family.name] = family
    for name in names:
        _BY_NAME[name.lower()] = family
    return family


def unregister(name: str) -> None:
    """Remove a measure defined with :func:`lexiframe.define_measure` (by its name); the
    built-in families stay."""
    family = _REGISTERED.get(name)
    if family is None or family in FAMILIES:
        raise InputError(f"{name!r} is not a measure defined with define_measure")
    del _REGISTERED[name]
    for alias in (family.name, *family.aliases):
        _BY_NAME.pop(alias.lower(), None)


def families() -> list[Family]:
    """Every registered family: the built-ins (:data:`FAMILIES`), then those defined with
    :func:`lexiframe.define_measure`, in the order they were registered."""
    return list(_REGISTERED.values())


_NAME_PART = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

for _family in FAMILIES:
    register(_family)

_NAME = re.compile(
    r"^(?P<family>[A-Za-z][A-Za-z0-9_]*?)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@]+))?$"
)


def known_names() -> list[str]:
    """The family names of the registry, in documentation order."""
    return [family.name for family in families()]


def _did_you_mean(name: str) -> str:
    """``" (did you mean 'nDCG'?)"`` for a name close to a known one (any case), else ``""``."""
    spellings = {
        spelling.lower(): family.name
        for family in families()
        for spelling in (family.name, *family.aliases)
    }
    spellings.update({name.lower(): name for name in ("sgnLP", "rrLP", "sgnLR")})
    close = difflib.get_close_matches(name.lower(), list(spellings), n=1, cutoff=0.6)
    return f" (did you mean {spellings[close[0]]!r}?)" if close else ""


def unknown_measure(name: str, why: str) -> UnknownMeasureError:
    """The error for a measure name that does not parse: ``name`` (shortened), ``why``, and
    the names it could have been (trec_eval's spellings raise it too).

    Example:
        >>> str(unknown_measure("P@x", "the cutoff is a number")).split(". Known")[0]
        "unknown measure 'P@x': the cutoff is a number"
    """
    examples = ", ".join(family.example or family.name for family in families())
    return UnknownMeasureError(
        f"unknown measure {shorten(repr(name))}: {why}. Known measures: {', '.join(known_names())} "
        f"(e.g. {examples}); preferences: sgnLP, rrLP, sgnLR"
    )


def _parse_params(name: str, family: Family, text: str | None) -> tuple[tuple[str, object], ...]:
    """The parameters of ``NAME(key=value, …)`` as Python reads keyword arguments: values are
    literals (``0.5``, ``'ap'``, ``{1: 1, 2: 3}``); a bare word reads as a string (``ap``)."""
    values = dict(family.params)
    if not text or not text.strip():
        return tuple(values.items())
    allowed = ", ".join(family.params) or "none"
    source = f"f({text})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
        raise unknown_measure(
            name, f"its parameters do not read as param=value; {family.name} takes: {allowed}"
        )
    seen: set[str] = set()
    for keyword in call.keywords:
        key = str(keyword.arg)
        if key not in family.params:
            raise unknown_measure(name, f"{family.name} takes the parameters: {allowed}")
        if key in seen:
            raise unknown_measure(name, f"{key}= is given twice")
        seen.add(key)
        value = _literal(keyword.value, source)
        if isinstance(value, dict) and len(value) != len(getattr(keyword.value, "keys", ())):
            raise unknown_measure(name, f"{key}= names a key twice")
        if key == LEVEL and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise unknown_measure(name, "rel= is a relevance grade of at least 1, e.g. rel=2")
        if key in family.choices and value not in family.choices[key]:
            raise unknown_measure(name, f"{key} must be one of {family.choices[key]}")
        if key in family.converters:
            try:
                value = family.converters[key](value)
            except ValueError as error:
                raise unknown_measure(name, str(error)) from None
        values[key] = value
    return tuple(values.items())


def _literal(node: ast.expr, source: str) -> object:
    """A parameter's value: a Python literal, else its text (``exposure=ap`` reads 'ap')."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        if isinstance(node, ast.Name):
            return node.id
        return ast.get_source_segment(source, node) or ""


def _parse_cutoff(name: str, family: Family, text: str | None) -> int | float | None:
    if text is None:
        if family.cutoff == "required":
            example = 0.5 if family.fractional_cutoff else 10
            cutoff = f"{family.name}@{family.cutoff_prefix}{example}"
            raise unknown_measure(name, f"{family.name} needs a cutoff, e.g. {cutoff}")
        return None
    if family.cutoff == "none":
        raise unknown_measure(name, f"{family.name} takes no cutoff")
    if family.fractional_cutoff:
        try:
            level = float(text)
        except ValueError:
            level = -1.0
        top = math.inf if family.cutoff_max is None else family.cutoff_max
        if not (0.0 <= level <= top and math.isfinite(level)):
            if family.cutoff_max is None:
                raise unknown_measure(
                    name, f"the cutoff of {family.name} is a non-negative number, e.g. @0.5"
                )
            raise unknown_measure(
                name, f"the cutoff of {family.name} is a level in [0, {top:g}], e.g. @0.5"
            )
        return level
    digits = text[len(family.cutoff_prefix) :] if text.startswith(family.cutoff_prefix) else ""
    if not digits.isdigit() or len(digits) > 10 or not 1 <= int(digits) <= POSITION_MAX:
        raise unknown_measure(
            name,
            f"the cutoff must look like @{family.cutoff_prefix}10, a whole number from 1 to "
            f"{POSITION_MAX}",
        )
    return int(digits)


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name such as ``"nDCG@10"``, ``"RBP(p=0.5)"`` or ``"P_10"``.

    Family names are matched without regard to case; trec_eval's names (``recip_rank``,
    ``map``, ``Rprec``, ``P_10``, ``recall_1000``, ``ndcg_cut_10``) are understood too, and
    give trec_eval's numbers: ``rbp``, trec_eval's spelling, is ``RBP(p=0.9)`` (its default
    persistence) and ``rbp_p=0.8`` is ``RBP(p=0.8)``; ``ndcg_1=1,2=3`` (trec_eval's
    ``-m ndcg.1=1,2=3``) is ``nDCG(gains={1: 1, 2: 3})``, and ``G_1=2,2=4``,
    ``ndcg_rel_1=1,2=5`` and ``Rndcg_2=7`` are ``G``, ``nDCGRel`` and ``RnDCG`` with gains.

    Example:
        >>> from lexiframe.metrics import parse_measure
        >>> str(parse_measure("ndcg@10")), str(parse_measure("asl@g1-5"))
        ('nDCG@10', 'ASL@g1-5')
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a measure is a name such as 'nDCG@10', not {type(name).__name__}")
    text = _trec_eval().from_trec_eval(name, name.strip())
    match = _NAME.match(text)
    if not match:
        raise unknown_measure(name, "it does not read as NAME, NAME@k or NAME(param=value)")
    family = _BY_NAME.get(match.group("family").lower())
    if family is None and match.group("family").lower() in ("sgnlp", "rrlp", "sgnlr"):
        raise UnknownMeasureError(
            f"{name!r} is a preference between two rankings, not a measure of one: compute it "
            f"with lexiframe.preferences(positions, [{name!r}]) (at the command line, "
            "lexiframe evaluate -m takes both kinds)"
        )
    if family is None:
        asked = match.group("family")
        raise unknown_measure(name, f"no measure is called {asked!r}{_did_you_mean(asked)}")
    return Measure(
        family=family,
        cutoff=_parse_cutoff(name, family, match.group("cutoff")),
        params=_parse_params(name, family, match.group("params")),
    )


def needs_n_hint(column: str) -> str:
    """The fix for a column of a measure that is null without the corpus size (SL3,
    RecallError, ``TSE(exposure='linear')``), to end a message with; else ``""``.

    Example:
        >>> needs_n_hint("SL3").split(" to ")[0], needs_n_hint("AP")
        (' Pass the corpus size n= (--n at the command line)', '')
    """
    try:
        parsed = parse_measure(column)
    except (UnknownMeasureError, TypeError):
        return ""
    if parsed.name == column and parsed.needs_n:
        return " Pass the corpus size n= (--n at the command line) to give every ranking a value."
    return ""


def parse_measures(names: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse one or several measure names; duplicates (after canonicalisation) are kept once."""
    if isinstance(names, str | Measure):
        names = [names]
    if not isinstance(names, Iterable):
        raise InputError(
            f"measures are a list of names such as ['RR', 'AP', 'nDCG@10'], not "
            f"{type(names).__name__}"
        )
    parsed: dict[str, Measure] = {}
    for name in names:
        measure = parse_measure(name)
        parsed.setdefault(measure.name, measure)
    if not parsed:
        raise UnknownMeasureError("no measure was named; e.g. measures=['RR', 'AP', 'nDCG@10']")
    return list(parsed.values())
