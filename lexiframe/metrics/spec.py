"""What a measure is: its family (name, documentation, parameters, what it reads, how its
expression is built), a parsed measure (:class:`Measure`, whose canonical name users type
and output columns carry) and the context its expression is built in.

The built-in families are declared in :mod:`lexiframe.metrics.catalogue`, registered by
:mod:`lexiframe.metrics.registry` and read from names by :mod:`lexiframe.metrics.parser`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import polars as pl

from lexiframe.errors import ARGUMENT, InputError, SchemaError, UnknownMeasureError
from lexiframe.options import Compat, PositionsOptions
from lexiframe.typing import Labels

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
    grades: pl.Expr = field(default_factory=lambda: pl.col("grades"))
    """The grades of the documents at ``gain_positions``, in rank order (when ``graded``)."""
    ideal_grades: pl.Expr = field(default_factory=lambda: pl.col("ideal_grades"))
    """Every gaining grade of the query, highest first (when ``graded``)."""
    n_ret: pl.Expr = field(default_factory=lambda: pl.col("n_ret"))
    """How many documents the ranking returned."""
    rules: Compat = field(default_factory=lambda: PositionsOptions().rules)
    """The differences of the ``compat`` setting the measures give the numbers of."""
    ties: bool = False
    """The frame holds its tie groups (``ties="expected"``): each measure is its expectation
    over the orderings of the tied documents (:attr:`Family.expected_over_ties`)."""
    labels: Labels = PositionsOptions.labels
    """What ``grades`` holds (:attr:`PositionsOptions.labels`): with ``"probability"``,
    the chance that each document at ``gain_positions`` is relevant, and a measure is
    its :attr:`Family.expectation`."""


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
    kept = context.grades.list.eval(pl.arg_where(pl.element() >= level))
    count = context.ideal_grades.list.eval((pl.element() >= level).sum()).list.first()
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
    method: str | None = None
    """The name of its method in the ``.lexi`` expression namespace, on a positions list
    column (``pl.col("positions").lexi.rr()``), generated from this declaration; ``None``
    for a measure that reads other columns of the frame than the ranks (Bpref's judged
    documents, NumRet's count)."""
    trec_eval_cutoff: str = ""
    """trec_eval's root whose spelling ``<root>_<k>`` is this family at cut-off k (``P_10``,
    ``ndcg_cut_10``), matched without regard to case."""
    trec_eval_gains: str = ""
    """trec_eval's root of this family with gains per grade (``ndcg.1=1,2=3``, printed
    ``ndcg_1=1,2=3``): read as ``gains={1: 1, 2: 3}``."""
    scale_free: bool = False
    """The value is the same for gains scaled by one factor (nDCG and its kin; not G, whose
    ideal ranks count at least 1): what the advice for a refused gain map says."""
    expected_over_ties: Callable[[Measure, Context], pl.Expr] | None = field(
        default=None, repr=False
    )
    """Its expectation over every ordering of the tied documents of a ranking (``ties=
    "expected"``), built as :attr:`build` from a context whose frame holds the tie groups;
    ``None``: no closed form, and ``ties="expected"`` is refused for the measure."""
    reads_to_cutoff: bool = False
    """With a rank cut-off k, it reads no relevant document ranked below k (the positions
    up to k, ``n_rel``, the ideal grades): a positions frame built for such measures alone
    may stop at their deepest cut-off (:func:`deepest_rank_read`)."""
    defined_by_user: bool = False
    """Registered by :func:`lexiframe.define_measure`: its expression reads the frame's
    columns by name, so it is given the frame as :func:`lexiframe.metrics.custom.user_view`
    presents it (``grades`` in step with ``positions`` at any threshold)."""
    expectation: Callable[[Measure, Context], pl.Expr] | None = field(default=None, repr=False)
    """Its expected value when each document is relevant with the probability its label
    gives, independently (``labels="probability"``; docs/definitions.md §2): an expression
    over the context's ``gain_positions`` and ``grades`` (the probabilities), or ``None``
    for a measure without a closed form there, which refuses such labels."""


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
    def deepest_rank(self) -> int | None:
        """The deepest rank whose documents the measure reads (its cut-off, for a family
        that reads no deeper, :attr:`Family.reads_to_cutoff`), or None: any rank. A
        relevance level of its own (``rel=``) reads the grades' lists: None."""
        if not self.family.reads_to_cutoff or self.level is not None:
            return None
        return self.cutoff if isinstance(self.cutoff, int) else None

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
        if options.ties == "expected":
            require_expectation(self)
        self.check_labels(options.labels)
        if self.family.check_options is not None:
            self.family.check_options(self, options)

    def check_labels(self, labels: Labels) -> None:
        """Refuse probabilities as labels (``labels="probability"``) for a measure without
        an :attr:`Family.expectation`, or with a relevance level of its own, saying why and
        which measures take them.

        Example:
            >>> from lexiframe.metrics import parse_measure
            >>> parse_measure("P@10").check_labels("probability")
            >>> parse_measure("AP").check_labels("probability")
            Traceback (most recent call last):
            ...
            lexiframe.errors.InputError: AP has no closed-form expected value when ...
        """
        if labels != "probability":
            return
        offered = ", ".join(f.name for f in _registered() if f.expectation is not None)
        if self.family.expectation is None:
            raise InputError(
                f"{self} has no closed-form expected value when each document is relevant "
                "with the probability its label gives: it divides by, compares or orders "
                "random quantities (AP, R@k and nDCG divide by the number of relevant "
                "documents, itself random; IDCG is the DCG of the random set of relevant "
                "documents in its ideal order), and the expectation of a ratio is not the "
                f"ratio of expectations. The measures with one: {offered}",
                hint="; or threshold the probabilities: labels='gain', threshold=0.5",
                cli_hint="; or threshold the probabilities: --labels gain --threshold 0.5",
            )
        if self.level is not None:
            without = replace(self, params=tuple(p for p in self.params if p[0] != LEVEL))
            raise InputError(
                f"{self} sets a relevance level of its own (rel=), which probabilities do "
                f"not have (labels='probability'): name it without rel=, e.g. {without}"
            )

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
        if context.labels == "probability":
            if context.ties:
                raise InputError(
                    f"{self.name}: a frame with tie groups (ties='expected') cannot be measured "
                    "with labels='probability': lexiframe has the closed forms of each "
                    "expectation alone, not of the two together"
                )
            self.check_labels(context.labels)
            assert self.family.expectation is not None  # check_labels refused the others
            if not context.graded:
                raise SchemaError(
                    f"{self.name} under labels='probability' reads the probabilities in the "
                    "grades of the positions frame, which has no grades column: build it "
                    "with positions(qrels, labels='probability')"
                )
            return self.family.expectation(self, context).alias(self.name)
        if level is not None:
            context = at_level(context, level, self.name)
        elif self.requires_grades and not context.graded:
            raise SchemaError(
                f"{self.name} reads the grades of the positions frame, which has no grades "
                "and ideal_grades columns: build it with positions(qrels, grades=True) "
                "(lf.evaluate does so by itself)"
            )
        if context.ties:
            build = require_expectation(self)
            return build(self, context).alias(self.name)
        return self.family.build(self, context).alias(self.name)

    @property
    def level(self) -> object:
        """The measure's own relevance level (``rel=``), or ``None`` for the frame's."""
        return dict(self.params).get(LEVEL)

    @property
    def requires_grades(self) -> bool:
        """Whether the measure cannot be computed without the grade columns: a relevance
        level of its own (``rel=``), ERR's and G's grades, a gain map (``gains=``)."""
        return self.needs.requires_grades


_registered: Callable[[], Sequence[Family]] = tuple
"""The registered families, which the refusals name (the families that offer what a measure
lacks): :func:`lexiframe.metrics.registry.families`, set by the registry when it is
imported (it reads this module, so this module does not import it)."""


def deepest_rank_read(measures: Iterable[Measure]) -> int | None:
    """The deepest rank that any of ``measures`` reads, or None when one may read any
    (:attr:`Measure.deepest_rank`): what :func:`lexiframe.positions`' ``reach`` takes.

    Example:
        >>> from lexiframe.metrics import parse_measures
        >>> deepest_rank_read(parse_measures(["P@10", "nDCG@20"]))
        20
        >>> deepest_rank_read(parse_measures(["P@10", "AP"])) is None
        True
    """
    ranks = [measure.deepest_rank for measure in measures]
    if not ranks or any(rank is None for rank in ranks):
        return None
    return max(rank for rank in ranks if rank is not None)


def read_families_from(source: Callable[[], Sequence[Family]]) -> None:
    """Where the refusals find the registered families (called once, by the registry)."""
    global _registered
    _registered = source


def gain_map_of(measure: Measure) -> dict[int, float] | None:
    """A measure's ``gains=`` (held as (grade, gain) pairs) as a dict, or ``None``."""
    gains = measure.param("gains")
    return None if gains is None else dict(gains)  # type: ignore[call-overload]


def require_expectation(measure: Measure) -> Callable[[Measure, Context], pl.Expr]:
    """The builder of a measure's expectation over tied orderings, or an error that names
    the measure and the families that have one (``ties="expected"``)."""
    build = measure.family.expected_over_ties
    if build is not None:
        return build
    having = [family.name for family in _registered() if family.expected_over_ties is not None]
    raise InputError(
        f"{measure} has no closed form over the orderings of tied documents, so "
        f"{ARGUMENT} cannot give it (docs/definitions.md, 'Ties'); the measures that "
        f"have one: {', '.join(having)}",
        kind="no closed form",
        argument="ties='expected'",
        flag="--ties expected",
        hint=f". Evaluate {measure} with ties='trec_eval' or ties='rank'",
        cli_hint=f". Evaluate {measure} with --ties trec_eval or --ties rank",
    )
