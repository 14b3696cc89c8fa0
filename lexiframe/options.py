"""The options of a positions frame: one typed, immutable object, each default stated once.

:func:`lexiframe.positions` and everything that builds a positions frame (``evaluate``, the
``.lexi`` namespaces, the pandas accessor, the batched reader of run files, the command
line, the ``trec_eval`` drop-in and Spark) take a :class:`PositionsOptions`, or build one
from keyword arguments with :meth:`PositionsOptions.of`; a new option is a new field here.

Example:
    >>> import lexiframe as lf
    >>> options = lf.PositionsOptions(threshold=2, depth=100)
    >>> options.threshold, options.depth, options.by
    (2, 100, ())
    >>> lf.PositionsOptions.of(options, by="track").by
    ('track',)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, Protocol, TypedDict

import polars as pl

from lexiframe import validate
from lexiframe.errors import ARGUMENT, InputError
from lexiframe.labels import fractional
from lexiframe.typing import CompatName, Labels, LevelCutoff, NoRelevant, RankBy, Ties


class DeclaredNeeds(Protocol):
    """What a measure declares it reads (:class:`lexiframe.metrics.Needs`), as far as the
    options go."""

    @property
    def judged(self) -> bool: ...
    @property
    def requires_grades(self) -> bool: ...
    @property
    def columns(self) -> tuple[str, ...]: ...


class MeasureNeeds(Protocol):
    """A measure as the options see it (:class:`lexiframe.metrics.Measure`): what it reads
    and the options it refuses. The options layer sits below the measures."""

    @property
    def needs(self) -> DeclaredNeeds: ...
    def check_options(self, options: PositionsOptions, /) -> None: ...


@dataclass(frozen=True)
class Compat:
    """The numbers of another tool: how it differs from lexiframe's default, trec_eval 10.0.

    Each field is one difference, read where it arises (docs/reproducing.md); a setting
    is one row of :data:`COMPATS`, chosen by ``compat=``.

    Example:
        >>> from lexiframe.options import COMPATS
        >>> COMPATS["trec_eval-9.0.8"].float32_scores, COMPATS["trec_eval-10.0"].level_cutoff
        (True, 'round')
    """

    name: CompatName
    float32_scores: bool = False
    """Rank by the score cast to a 32-bit float (trec_eval 9's ``float sim``): scores
    equal at float precision tie, and the tie goes to the document id."""
    level_cutoff: LevelCutoff = "round"
    """The relevant documents an interpolated precision at recall level x needs of m:
    ``"round"`` lround(x·m) (trec_eval 10), ``"up"`` floor(x·m + 0.9) (trec_eval 9)."""
    skipped_query: Literal["stand-in", "zero"] = "stand-in"
    """trec_eval ``-c``, a query the run skipped: scored on a stand-in ranking of one
    unjudged document and printed (10.0), or not evaluated and 0 in every mean (9.0.8)."""
    queries: Literal["qrels", "run"] = "qrels"
    """``"qrels"``: every system gets a row for every query of the qrels (worst case where
    it skipped one); ``"run"``: the judged queries the system answered, those without a
    relevant document too (pytrec_eval's)."""
    empty_nan: bool = False
    """An interpolated precision of an empty ranking (``condensed``: every document
    unjudged) at a level that needs no relevant document is trec_eval's 0/0, NaN, as
    pytrec_eval returns it; otherwise 0."""
    running_sums: bool = False
    """The DCG family summed one rank after another, each gain divided by C's log2 of
    its rank + 1 (trec_eval's loop), for the last bit of pytrec_eval's doubles."""
    trec_eval_absent: tuple[str, ...] = ()
    """trec_eval measures this version does not have (not in its ``all_trec``)."""


COMPATS: dict[str, Compat] = {
    compat.name: compat
    for compat in (
        Compat("trec_eval-10.0"),
        Compat(
            "trec_eval-9.0.8",
            float32_scores=True,
            level_cutoff="up",
            skipped_query="zero",
            trec_eval_absent=("rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"),
        ),
        Compat(
            "pytrec_eval",
            float32_scores=True,
            level_cutoff="up",
            queries="run",
            empty_nan=True,
            running_sums=True,
            trec_eval_absent=("rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"),
        ),
    )
}
"""Every ``compat=`` setting: trec_eval 10.0 (the default), trec_eval 9.0.8 (tag v9.0.8,
which pytrec_eval compiles) and the ``pytrec_eval`` package (pytrec-eval-terrier)."""


@dataclass(frozen=True)
class ColumnNames:
    """The caller's names of the run and qrels columns (lexiframe's names are the defaults)."""

    system: str = "system"
    query: str = "query"
    doc: str = "doc"
    score: str = "score"
    rank: str = "rank"
    relevance: str = "relevance"


@dataclass(frozen=True)
class PositionsOptions:
    """How a run and its qrels become a positions frame (docs/definitions.md §1).

    Every field has its one default here. Keyword arguments of :func:`lexiframe.positions`
    (and of ``evaluate``, ``coverage``, the namespaces) are these fields, with the column
    names (``system=``, ``query=``, ``doc=``, ``score=``, ``rank=``, ``relevance=``) given
    flat; :meth:`of` reads them.

    Attributes:
        threshold: the lowest relevant grade: a document is relevant when its
            ``relevance >= threshold``; a whole number, or with ``labels="gain"`` or
            ``"probability"`` any real number (e.g. ``threshold=0.5``).
        depth: keep only the top ``depth`` documents of each ranking. The frame then has a
            ``depth`` column too: a query a system skipped scores its atomized search length
            at this depth (without it, at the longest ranking of the query).
        by: extra key columns of the run (e.g. ``"track"``) kept in the output. When the
            qrels carry them too, they are joined on them; otherwise every query of the
            qrels applies to every group. A key that only the qrels carry (``"qrels"``,
            naming the sets of :func:`lexiframe.concat_qrels`) crosses every ranking: each
            is evaluated against each set, on that set's own queries.
        rank_by: ``"score"`` (trec_eval's order: score descending) or ``"rank"`` (an
            existing rank column, ascending; :func:`lexiframe.read_run` reads it with
            ``rank=True``); equal values are ordered as ``ties`` says.
        ties: how documents the ranking cannot tell apart (equal scores, or equal ranks
            under ``rank_by="rank"``; equal at the precision the ``compat`` setting ranks
            by) are ordered. ``"trec_eval"`` (the default): by document id descending, as a
            string, trec_eval's rule. ``"rank"``: by the run's own rank column, ascending
            (then by document id); :func:`lexiframe.read_run` reads it with ``rank=True``.
            ``"expected"``: each measure is its expectation over every ordering of the
            tied documents, each tie group permuted uniformly (McSherry and Najork, ECIR
            2008; docs/definitions.md, "Ties"): the frame then has ``tie_starts`` and
            ``tie_sizes``, the tie groups of two or more documents (the documents above
            each, its size), which :func:`lexiframe.measures` reads (drop them for
            trec_eval's order), and a measure without a closed form over tied orderings is
            refused. Not with ``depth=``: a cut inside a tie group would make the retrieved
            set itself random (cut the run first, and its tie groups are those kept).
        docs: also return ``docs``, the relevant document ids in rank order.
        grades: also return ``grades`` (the grades of the retrieved relevant documents in
            rank order) and ``ideal_grades`` (all relevant grades of the query, descending),
            which nDCG and RBP need to give trec_eval's values on graded qrels. ``None``
            (the default) keeps them when the qrels are graded (the relevant documents of
            some query differ in grade), where they change those values; ``True`` always.
            ``False`` on graded qrels is refused rather than let nDCG and RBP fall back to
            binary gains (binary nDCG beside graded measures: ``nDCG(gains={1: 1, 2: 1})``).
            ERR, G and the gain maps (``nDCG(gains=…)``, ``G(gains=…)``, …) read them on any
            qrels: ``True``. The threshold decides what is relevant, not what gains: as
            with trec_eval's ``-l``, the gain measures (nDCG, G, RBP, ERR, …) take every
            positive grade as gain at any threshold. So above ``threshold=1`` the grade
            columns hold every document graded 1 or more (``grades`` in rank order, their
            ranks in ``gain_positions``, every positive grade of the query in
            ``ideal_grades``), ``positions`` and ``n_rel`` the relevant ones; ``None`` then
            keeps them when the qrels hold a positive grade below the threshold too.
        judged: also return the judged non-relevant documents, which Bpref, infAP,
            Judged@k and Unjudged@k read: ``nonrel_positions`` (the ranks of the retrieved
            documents judged with a grade from 0 to below ``threshold``), ``n_nonrel`` (how
            many such documents the query has) and ``pooled_positions`` (the ranks of the
            retrieved documents judged with a negative grade: trec_eval's mark of a pooled
            document left unjudged, as in sampled pools). ``None`` (the default): only
            when a measure of :func:`lexiframe.evaluate` reads them; ``False``: never.
        condensed: rank only the judged documents (a grade of 0 or more), as trec_eval's
            ``-J`` and Sakai's condensed lists: the unjudged documents are removed from
            each ranking (after ``depth=``) and the rest move up. Every measure and
            preference then reads the condensed rankings; ``n_ret`` counts their documents.
        no_relevant: what to do with a judged query without a relevant document: ``"drop"``
            it (the default: such a query cannot tell systems apart; the eager call counts
            the dropped queries in a warning), or ``"keep"`` it as rows with ``n_rel = 0``,
            which score 0 on trec_eval's measures (null on SL3, RecallError and ASL,
            undefined without a relevant document), so that means equal trec_eval's ``-c``
            averages.
        columns: the caller's column names (:class:`ColumnNames`).
        partitions: plan the work as this many groups of queries (split by a hash of the
            query id), one after another, so that memory holds one group's intermediate
            tables at a time. ``None``: one group per 4 million rows of an in-memory run
            (the time is the same; 27 million rows peak at 2.8 GB instead of 4.7 GB), one
            group for a LazyFrame. For a LazyFrame larger than memory give a number (e.g.
            16 for 200 million rows): when the frame is collected, each group is read from
            the source and ranked with the streaming engine, and its rows are handed on
            before the next group starts (200 million rows peak at about 2 GB).
        compat: whose numbers to give (:class:`Compat`, docs/reproducing.md):
            ``"trec_eval-10.0"`` (the default), ``"trec_eval-9.0.8"`` (its ranking by the
            score as a 32-bit float and its interpolated precision cut-offs) or
            ``"pytrec_eval"`` (9.0.8's, on the judged queries each system answered, its
            DCG family to the last bit).
        labels: what the qrels' relevance column holds (docs/definitions.md §2,
            "Fractional labels"). ``"grades"`` (the default): whole-number grades; a
            fractional one is refused. ``"gain"``: a non-negative real gain per judgment
            (an LLM's graded score, MTEB's float gains): nDCG, DCG, G, RBP and ERR take it
            as gain, the binary measures count a document relevant when its label is at
            least ``threshold``. ``"probability"``: the probability in [0, 1] that the
            document is relevant, documents independent: each measure with a closed form
            under that model (``P@k``, ``Success@k``, ``RR``, ``RBP``, ``ERR``, ``DCG``)
            gives its expected value; the others (``AP``, ``R@k``, ``nDCG``: ratios of
            random quantities; ``IDCG``, the ideal order of a random set) are refused,
            saying why. The frame then keeps the grade columns, which hold the
            labels of every document with a positive label (in ``grades``, at the ranks of
            ``gain_positions``).
    """

    threshold: float = 1
    depth: int | None = None
    by: tuple[str, ...] = ()
    rank_by: RankBy = "score"
    ties: Ties = "trec_eval"
    docs: bool = False
    grades: bool | None = None
    judged: bool | None = None
    condensed: bool = False
    no_relevant: NoRelevant = "drop"
    columns: ColumnNames = field(default_factory=ColumnNames)
    partitions: int | None = None
    compat: CompatName = "trec_eval-10.0"
    labels: Labels = "grades"

    def __post_init__(self) -> None:
        # ``by`` may come as a string or a list; it is held as a tuple (the object is hashable).
        by: object = self.by
        if isinstance(by, str) or not isinstance(by, Iterable | None):
            keys: tuple[object, ...] = (by,)
        else:
            keys = tuple(by or ())
        if not all(isinstance(key, str) for key in keys):
            raise InputError(f"by= names key columns, a string or a list of strings, not {by!r}")
        object.__setattr__(self, "by", keys)
        _require_choice(self.labels, "labels", LABELS)
        validate.require_threshold(self.threshold, warn=False, whole=not self.fractional)
        validate.require_depth(self.depth)
        if self.partitions is not None:
            validate.require_positive_int(self.partitions, "partitions", optional=True)
        _require_choice(self.rank_by, "rank_by", ("score", "rank"))
        _require_choice(self.ties, "ties", ("trec_eval", "rank", "expected"))
        if self.ties == "expected" and self.depth is not None:
            raise InputError(
                f"{ARGUMENT}: a cut inside a tie group makes the retrieved documents "
                "themselves random",
                kind="conflict",
                argument=f"ties='expected' cannot take depth={self.depth}",
                flag=f"--ties expected cannot take --depth {self.depth}",
                hint="; cut the run at the depth first (e.g. run.filter(pl.col('rank') <= "
                "100)), and its tie groups are those of the documents kept",
                cli_hint="; cut the run files at the depth first, and their tie groups are "
                "those of the documents kept",
            )
        if self.ties == "expected" and self.labels == "probability":
            raise InputError(
                f"{ARGUMENT}: both ask for an expectation, and lexiframe has the closed forms "
                "of each alone, not of the two together",
                kind="conflict",
                argument="ties='expected' cannot take labels='probability'",
                flag="--ties expected cannot take --labels probability",
                hint="; break the ties first (ties='trec_eval' or 'rank')",
                cli_hint="; break the ties first (--ties trec_eval or rank)",
            )
        _require_choice(self.no_relevant, "no_relevant", ("drop", "keep"))
        _require_choice(self.compat, "compat", tuple(COMPATS))
        for name in ("docs", "condensed"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be True or False, not {getattr(self, name)!r}")
        for name in ("grades", "judged"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be True, False or None, not {getattr(self, name)!r}")
        if self.fractional and self.grades is False:
            raise InputError(
                f"grades=False drops the labels, which labels={self.labels!r} measures read: "
                "leave grades= unset"
            )

    @classmethod
    def of(cls, options: PositionsOptions | None = None, **kwargs: Any) -> PositionsOptions:
        """``options`` (or the defaults) with the keyword arguments of
        :func:`lexiframe.positions` applied: the fields, and the column names flat.

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions.of(query="qid", threshold=2).columns.query
            'qid'
        """
        base = options if options is not None else cls()
        if not isinstance(base, PositionsOptions):
            raise InputError(
                f"options must be a lexiframe.PositionsOptions, not {type(base).__name__}"
            )
        if not kwargs:
            return base
        unknown = [key for key in kwargs if key not in _FIELDS and key not in _COLUMNS]
        if unknown:
            known = ", ".join([*_FIELDS, *_COLUMNS])
            raise InputError(f"unknown positions option {unknown[0]}=; the options are: {known}")
        columns = {key: kwargs.pop(key) for key in list(kwargs) if key in _COLUMNS}
        for key, value in columns.items():
            if not isinstance(value, str):
                raise InputError(f"{key}= names a column, a string, not {value!r}")
        if columns:
            kwargs["columns"] = replace(base.columns, **columns)
        return replace(base, **kwargs)

    def replace(self, **changes: Any) -> PositionsOptions:
        """A copy with ``changes`` (fields or flat column names), checked as :meth:`of`."""
        return PositionsOptions.of(self, **changes)

    @property
    def kept_rows(self) -> pl.Expr | None:
        """The run rows the options keep, over the run's columns in lexiframe's names
        (``system``, ``query``, ``doc``, ``order``: the score or rank the rankings are
        ordered by, as a float, and the ``by`` keys), or ``None`` when every row is kept.

        An option that removes run rows states its condition here, and nowhere else:
        every path applies it in one place (``lexiframe.ranking.kept_run_rows``) before
        coverage is counted, files are batched or Spark checks and groups the run; a
        system whose rows are all removed keeps its rows as a system that skipped every
        query. No option removes rows yet.
        """
        return None

    @property
    def rules(self) -> Compat:
        """The differences of the ``compat`` setting (:class:`Compat`).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions(compat="pytrec_eval").rules.queries
            'run'
        """
        return COMPATS[self.compat]

    @property
    def keeps_no_relevant(self) -> bool:
        """Whether judged queries without a relevant document are evaluated:
        ``no_relevant="keep"``, or a ``compat`` whose queries are the run's (pytrec_eval
        evaluates every judged query the run answered)."""
        return self.no_relevant == "keep" or self.rules.queries == "run"

    @property
    def order(self) -> str:
        """The caller's column the rankings are ordered by: ``score``, or ``rank``."""
        return self.columns.score if self.rank_by == "score" else self.columns.rank

    @property
    def ordered_by(self) -> tuple[str, ...]:
        """The caller's columns that order the rankings: :attr:`order`, and the rank column
        too when it breaks ties (``ties="rank"``).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions(ties="rank").ordered_by
            ('score', 'rank')
        """
        if self.ties == "rank" and self.rank_by == "score":
            return (self.order, self.columns.rank)
        return (self.order,)

    @property
    def reads_every_judgment(self) -> bool:
        """Whether rankings are marked with every judgment, not only the relevant ones:
        the judged non-relevant documents have ranks of their own, or are what is ranked."""
        return bool(self.judged) or self.condensed

    @property
    def fractional(self) -> bool:
        """Whether the labels are real numbers (``labels="gain"`` or ``"probability"``)."""
        return fractional(self.labels)

    @property
    def gain_level(self) -> float:
        """The lowest grade that gains (nDCG, G, RBP, ERR, …): 1 above ``threshold=1``,
        where the threshold decides only what is relevant (trec_eval's ``-l``), else the
        threshold; with fractional labels, every positive label (the smallest positive
        double: ``label >= gain_level`` is ``label > 0``).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions(threshold=2).gain_level, PositionsOptions().gain_level
            (1, 1)
            >>> PositionsOptions(labels="gain", threshold=0.5).gain_level
            5e-324
        """
        return min(self.threshold, _SMALLEST_POSITIVE if self.fractional else 1)

    @property
    def query_level(self) -> float:
        """The label a query needs on one of its documents to be evaluated (unless
        ``no_relevant="keep"``): the threshold (a relevant document), or with
        ``labels="probability"`` a positive label (a chance of one).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions(labels="probability").query_level
            5e-324
        """
        return self.gain_level if self.labels == "probability" else self.threshold

    def for_measures(self, measures: Iterable[MeasureNeeds]) -> PositionsOptions:
        """These options with the columns ``measures`` declare they read (the judged
        non-relevant documents, the grades), asked for unless the caller said otherwise;
        a measure that the threshold rules out is refused (:meth:`Measure.check_options`).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> from lexiframe.metrics import parse_measures
            >>> PositionsOptions().for_measures(parse_measures(["Bpref", "ERR@10"]))
            ... # doctest: +ELLIPSIS
            PositionsOptions(threshold=1, ..., grades=True, judged=True, ...)
        """
        measures = list(measures)
        for measure in measures:
            measure.check_options(self)
        judged = self.judged
        if judged is None and any(measure.needs.judged for measure in measures):
            judged = True
        grades = self.grades
        if grades is None and any(measure.needs.requires_grades for measure in measures):
            grades = True
        read = {column for measure in measures for column in measure.needs.columns}
        asked = {_COLUMN_OPTIONS[column] for column in read if column in _COLUMN_OPTIONS}
        if "judged" in asked and judged is None:
            judged = True
        if "grades" in asked and grades is None:
            grades = True
        return replace(self, judged=judged, grades=grades, docs=self.docs or "docs" in asked)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as the keyword arguments :meth:`of` reads (column names flat).

        Example:
            >>> from lexiframe import PositionsOptions
            >>> PositionsOptions.of(**PositionsOptions(depth=5).as_kwargs()).depth
            5
        """
        kwargs = {name: getattr(self, name) for name in _FIELDS}
        kwargs.update((name, getattr(self.columns, name)) for name in _COLUMNS)
        return kwargs


class PositionsKwargs(TypedDict, total=False):
    """The keyword arguments that :meth:`PositionsOptions.of` reads (for type checkers)."""

    threshold: float
    depth: int | None
    by: str | Sequence[str] | None
    rank_by: RankBy
    ties: Ties
    docs: bool
    grades: bool | None
    judged: bool | None
    condensed: bool
    no_relevant: NoRelevant
    partitions: int | None
    compat: CompatName
    labels: Labels
    system: str
    query: str
    doc: str
    score: str
    rank: str
    relevance: str


_COLUMN_OPTIONS = {
    "docs": "docs",
    "grades": "grades",
    "ideal_grades": "grades",
    "gain_positions": "grades",
    "nonrel_positions": "judged",
    "n_nonrel": "judged",
    "pooled_positions": "judged",
}
"""The option that adds each optional column of a positions frame: a measure that declares
it reads the column (``Needs(columns=("docs",))``) has it asked for."""

LABELS: tuple[Labels, ...] = ("grades", "gain", "probability")
"""Every ``labels=`` setting, the default first."""

_SMALLEST_POSITIVE = math.ulp(0.0)

_FIELDS = tuple(f.name for f in fields(PositionsOptions) if f.name != "columns")
_COLUMNS = tuple(f.name for f in fields(ColumnNames))


def _require_choice(value: object, name: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(f"{name} must be {' or '.join(map(repr, choices))}, not {value!r}")
