"""The model of the synthetic tracks (see :mod:`lexiframe.datasets`): relevance grades
and runs drawn with NumPy in blocks of queries, and :func:`synthetic_track`, which returns
a whole track in memory."""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from lexiframe.errors import InputError
from lexiframe.validate import require_positive_int

IdType = Literal["str", "int"]
"""Ids of a synthetic track: TREC-like strings ('401', 'D401-000057') or integers."""

FIRST_QUERY = 401
# Elements (queries x candidate documents) of one block of relevance grades, and (systems x
# queries x candidates) of one block of scores: they bound the memory of the generator.
_GRADE_BLOCK = 1 << 22
_SCORE_BLOCK = 1 << 23
# Score weight of a document by grade + 1 (unjudged, judged non-relevant, grade 1, grade 2).
_WEIGHT = np.array([0.0, 0.0, 1.0, 1.5], dtype=np.float32)
_JITTER = 0.4
_GRADES = (0, 1, 2)

_QRELS_STREAM, _RUN_STREAM, _SYSTEM_STREAM = 0, 1, 2


@dataclass(frozen=True)
class Track:
    """A synthetic track.

    Attributes:
        run: system, query, doc, score, rank (the schema of :func:`lexiframe.io.read_run`
            with ``rank=True``, or integer query and doc ids with ``id_type="int"``), sorted
            by system, query and rank.
        qrels: query, doc, relevance (0, 1 or 2), sorted by query and doc.
        quality: system, quality (the latent quality that shifts relevant documents up) and
            coarse (whether its scores are rounded to one decimal, giving ties).
    """

    run: pl.DataFrame
    qrels: pl.DataFrame
    quality: pl.DataFrame


@dataclass(frozen=True)
class _Spec:
    n_systems: int
    n_queries: int
    depth: int
    n_docs: int
    seed: int
    id_type: IdType
    skip_rate: float
    tie_rate: float
    relevant: tuple[int, int]
    no_relevant_queries: int
    unjudged_queries: int

    @property
    def grade_block(self) -> int:
        """Queries per block of relevance grades (independent of the number of systems)."""
        return max(1, _GRADE_BLOCK // self.n_docs)

    @property
    def system_block(self) -> int:
        """Systems scored at once, on the queries of a grade block."""
        queries = min(self.n_queries, self.grade_block)
        return max(1, _SCORE_BLOCK // (queries * self.n_docs))


def check_spec(
    *,
    n_systems: int,
    n_queries: int,
    depth: int,
    n_docs: int | None,
    seed: int,
    id_type: str,
    skip_rate: float,
    tie_rate: float,
    relevant: tuple[int, int],
    no_relevant_queries: int,
    unjudged_queries: int,
) -> _Spec:
    counts = {"n_systems": n_systems, "n_queries": n_queries, "depth": depth}
    for name, value in counts.items():
        require_positive_int(value, name)
    n_docs = 4 * depth if n_docs is None else n_docs
    if not isinstance(n_docs, int) or n_docs < depth:
        raise InputError(f"n_docs must be an integer >= depth ({depth}), not {n_docs!r}")
    if not isinstance(seed, int | np.integer):
        raise InputError(f"seed must be an integer, not {seed!r}")
    if id_type not in ("str", "int"):
        raise InputError(f"id_type must be 'str' or 'int', not {id_type!r}")
    for name, rate in {"skip_rate": skip_rate, "tie_rate": tie_rate}.items():
        if not 0.0 <= rate <= 1.0:
            raise InputError(f"{name} must be between 0 and 1, not {rate!r}")
    low, high = relevant
    if not 1 <= low <= high:
        raise InputError(f"relevant must be a range (low, high) with 1 <= low <= high: {relevant}")
    traps = {"no_relevant_queries": no_relevant_queries, "unjudged_queries": unjudged_queries}
    for name, value in traps.items():
        require_positive_int(value, name, zero=True)
    if no_relevant_queries + unjudged_queries > n_queries:
        raise InputError(
            f"no_relevant_queries + unjudged_queries ({no_relevant_queries + unjudged_queries})"
            f" exceeds n_queries ({n_queries})"
        )
    return _Spec(
        n_systems=n_systems,
        n_queries=n_queries,
        depth=depth,
        n_docs=n_docs,
        seed=int(seed),
        id_type=id_type,  # type: ignore[arg-type]
        skip_rate=float(skip_rate),
        tie_rate=float(tie_rate),
        relevant=(int(low), int(high)),
        no_relevant_queries=no_relevant_queries,
        unjudged_queries=unjudged_queries,
    )


_SPEC_ARGUMENTS = tuple(inspect.signature(check_spec).parameters)


def spec_of(arguments: Mapping[str, Any]) -> _Spec:
    """The checked model of a generator's arguments (its ``locals()``, which hold the
    arguments of :func:`check_spec` among others): one call for every generator."""
    return check_spec(**{name: arguments[name] for name in _SPEC_ARGUMENTS})


def _rng(spec: _Spec, *stream: int) -> np.random.Generator:
    return np.random.default_rng([spec.seed, *stream])


def system_names(n_systems: int) -> pl.Series:
    width = max(3, len(str(n_systems - 1)))
    return (
        pl.select(
            pl.concat_str(pl.lit("sys"), pl.int_range(n_systems).cast(pl.String).str.zfill(width))
        )
        .to_series()
        .alias("system")
    )


def _systems(spec: _Spec) -> pl.DataFrame:
    """Latent quality of each system, and which systems round their scores coarsely."""
    rng = _rng(spec, _SYSTEM_STREAM)
    quality = rng.uniform(0.5, 2.5, spec.n_systems)
    n_coarse = round(spec.tie_rate * spec.n_systems)
    coarse = np.zeros(spec.n_systems, dtype=bool)
    coarse[rng.permutation(spec.n_systems)[:n_coarse]] = True
    return pl.DataFrame(
        {"system": system_names(spec.n_systems), "quality": quality, "coarse": coarse}
    )


def _query_ids(spec: _Spec, start: int, stop: int) -> pl.Series:
    ids = pl.int_range(FIRST_QUERY + start, FIRST_QUERY + stop, dtype=pl.Int64, eager=True)
    return (ids if spec.id_type == "int" else ids.cast(pl.String)).alias("query")


def _doc_order(spec: _Spec) -> np.ndarray:
    """Rank of each candidate's id in string order (trec_eval breaks score ties on it)."""
    if spec.id_type == "str":  # zero-padded: string order is numeric order
        return np.arange(spec.n_docs, dtype=np.int64)
    order = np.argsort(np.arange(spec.n_docs).astype(str), kind="stable")
    inverse = np.empty(spec.n_docs, dtype=np.int64)
    inverse[order] = np.arange(spec.n_docs)
    return inverse


@dataclass(frozen=True)
class _GradeBlock:
    """Latent relevance grades of a block of queries (all their candidate documents)."""

    start: int
    grades: np.ndarray  # (queries, n_docs) int8: -1 unjudged, 0, 1, 2
    ease: np.ndarray  # (queries,) float32


def _grade_block(spec: _Spec, block: int) -> _GradeBlock:
    start = block * spec.grade_block
    size = min(spec.n_queries, start + spec.grade_block) - start
    rng = _rng(spec, _QRELS_STREAM, block)
    low, high = spec.relevant
    expected = np.exp(rng.uniform(math.log(low), math.log(high + 1), size))
    p_relevant = np.minimum(expected / spec.n_docs, 0.5)
    p_grade2 = p_relevant * rng.uniform(0.15, 0.5, size)
    p_judged = np.minimum(p_relevant * rng.uniform(1.5, 5.0, size), 0.9)
    ease = rng.uniform(0.4, 1.2, size).astype(np.float32)
    draw = rng.random((size, spec.n_docs), dtype=np.float32)
    grades = np.full((size, spec.n_docs), -1, dtype=np.int8)
    grades[draw < (p_relevant + p_judged)[:, None]] = 0
    grades[draw < p_relevant[:, None]] = 1
    grades[draw < p_grade2[:, None]] = 2
    # every query has at least one relevant document: its lowest draw
    rows = np.arange(size)
    lowest = draw.argmin(axis=1)
    grades[rows, lowest] = np.maximum(grades[rows, lowest], 1)
    return _GradeBlock(start=start, grades=grades, ease=ease)


class Ids:
    """Query and doc ids of a range of queries ([start, stop)), as Polars series."""

    def __init__(self, spec: _Spec, start: int, stop: int) -> None:
        self.spec, self.start = spec, start
        self.queries = _query_ids(spec, start, stop)
        self.docs: pl.Series | None = None
        if spec.id_type == "str":  # every candidate's id, gathered from (cheap for views)
            width = max(6, len(str(spec.n_docs - 1)))
            numbers = pl.int_range(spec.n_docs).cast(pl.String).str.zfill(width)
            self.docs = pl.select(
                pl.concat_str(
                    pl.lit("D"),
                    pl.lit(self.queries).repeat_by(spec.n_docs).explode(),
                    pl.lit("-"),
                    numbers.implode().repeat_by(stop - start).explode().explode(),
                ).alias("doc")
            ).to_series()

    def query(self, query_index: np.ndarray) -> pl.Series:
        return self.queries.gather(_index(query_index - self.start))

    def doc(self, query_index: np.ndarray, doc_index: np.ndarray) -> pl.Series:
        if self.docs is None:
            return pl.Series("doc", doc_index, dtype=pl.Int64)
        offset = (query_index - self.start).astype(np.int64) * self.spec.n_docs
        return self.docs.gather(_index(offset + doc_index))


def _index(values: np.ndarray) -> np.ndarray:
    """Indices in Polars' own integer type when they fit (no conversion on gather)."""
    return values.astype(np.uint32) if values.size and values.max() < 2**32 else values


def qrels_chunk(spec: _Spec, block: _GradeBlock, ids: Ids) -> pl.DataFrame:
    """The judged documents of a block of queries, with the traps applied."""
    unjudged_from = spec.n_queries - spec.unjudged_queries
    no_relevant_from = unjudged_from - spec.no_relevant_queries
    index = block.start + np.arange(len(block.grades))
    rows, docs = np.nonzero((block.grades >= 0) & (index < unjudged_from)[:, None])
    relevance = block.grades[rows, docs].astype(np.int64)
    queries = rows + block.start
    relevance[queries >= no_relevant_from] = 0
    return pl.DataFrame(
        {
            "query": ids.query(queries),
            "doc": ids.doc(queries, docs),
            "relevance": pl.Series(relevance, dtype=pl.Int64),
        }
    )


@dataclass(frozen=True)
class _Rankings:
    """The rankings of (system, query) pairs: ``depth`` documents each, in rank order."""

    system: np.ndarray  # (pairs,) system index
    query: np.ndarray  # (pairs,) query index (in the whole track)
    doc: np.ndarray  # (pairs, depth) candidate index
    score: np.ndarray  # (pairs, depth)

    @staticmethod
    def concat(parts: list[_Rankings]) -> _Rankings:
        return _Rankings(
            *(
                np.concatenate([getattr(part, name) for part in parts])
                for name in ("system", "query", "doc", "score")
            )
        )

    def take(self, order: np.ndarray) -> _Rankings:
        return _Rankings(self.system[order], self.query[order], self.doc[order], self.score[order])

    def frame(self, systems: pl.Series, ids: Ids) -> pl.DataFrame:
        pairs, depth = self.doc.shape
        query = np.repeat(self.query.astype(np.int32), depth)
        return pl.DataFrame(
            {
                "system": systems.gather(np.repeat(self.system.astype(np.uint32), depth)),
                "query": ids.query(query),
                "doc": ids.doc(query, self.doc.reshape(-1)),
                "score": self.score.reshape(-1),
                "rank": np.tile(np.arange(1, depth + 1, dtype=np.int64), pairs),
            }
        )


def _rankings(
    spec: _Spec,
    systems: pl.DataFrame,
    doc_order: np.ndarray,
    block: _GradeBlock,
    block_index: int,
    part: int,
) -> _Rankings:
    """Rankings of one group of systems for the queries of a grade block, system-major."""
    group = slice(part * spec.system_block, (part + 1) * spec.system_block)
    quality = systems["quality"].to_numpy()[group].astype(np.float32)
    scale = np.where(systems["coarse"].to_numpy()[group], 10.0, 10_000.0).astype(np.float32)
    n_sys, (n_q, n_docs), depth = len(quality), block.grades.shape, spec.depth
    rng = _rng(spec, _RUN_STREAM, block_index, part)
    effect = quality[:, None] * block.ease[None, :] + _JITTER * rng.standard_normal(
        (n_sys, n_q), dtype=np.float32
    )
    np.maximum(effect, 0, out=effect)
    scores = rng.standard_normal((n_sys, n_q, n_docs), dtype=np.float32)
    scores += effect[:, :, None] * _WEIGHT[block.grades.astype(np.intp) + 1][None, :, :]
    skipped = rng.random((n_sys, n_q)) < spec.skip_rate
    system_index, query_index = np.nonzero(~skipped)
    scores = scores[system_index, query_index]  # (pairs, n_docs)
    scores *= scale[system_index, None]
    # One integer key per candidate orders the trec_eval way: score (rounded to ticks of
    # 1e-4, or 0.1 for coarse systems) descending, then doc id descending as a string.
    key = np.rint(scores).astype(np.int64)
    key *= n_docs
    key += doc_order
    if depth < n_docs:
        key = np.partition(key, n_docs - depth, axis=1)[:, n_docs - depth :]
    np.negative(key, out=key)
    key.sort(axis=1)
    np.negative(key, out=key)  # descending
    ticks, order = np.divmod(key, n_docs)
    doc = order if spec.id_type == "str" else np.argsort(doc_order)[order]
    return _Rankings(
        system=system_index + group.start,
        query=query_index + block.start,
        doc=doc.astype(np.int32),
        score=ticks / scale[system_index, None].astype(np.float64),
    )


def blocks(spec: _Spec) -> Iterator[tuple[_GradeBlock, Iterator[_Rankings]]]:
    """Yield each grade block with an iterator over its rankings, a group of systems at a time."""
    systems = _systems(spec)
    doc_order = _doc_order(spec)
    n_blocks = -(-spec.n_queries // spec.grade_block)
    n_parts = -(-spec.n_systems // spec.system_block)
    for block_index in range(n_blocks):
        block = _grade_block(spec, block_index)
        parts = (
            _rankings(spec, systems, doc_order, block, block_index, part) for part in range(n_parts)
        )
        yield block, parts


def synthetic_track(
    *,
    n_systems: int = 8,
    n_queries: int = 20,
    depth: int = 100,
    n_docs: int | None = None,
    seed: int = 0,
    id_type: IdType = "str",
    skip_rate: float = 0.02,
    tie_rate: float = 0.125,
    relevant: tuple[int, int] = (5, 60),
    no_relevant_queries: int = 0,
    unjudged_queries: int = 0,
) -> Track:
    """Generate a synthetic TREC-style track in memory (see the module docstring's model).

    Args:
        n_systems: number of runs, named ``sys000``, ``sys001``, …
        n_queries: number of queries, ids 401, 402, …
        depth: documents retrieved per (system, query).
        n_docs: candidate documents per query (default ``4 * depth``), ids ``D401-000057``
            (or the integers 0 … n_docs - 1, shared by all queries, with ``id_type="int"``:
            a recommender's catalogue of items).
        seed: the same seed gives identical frames.
        id_type: ``"str"`` (TREC-like) or ``"int"`` (integer query and doc ids).
        skip_rate: probability that a system skips a query (returns nothing for it).
        tie_rate: share of the systems whose scores are rounded to one decimal (ties).
        relevant: range of the expected number of relevant documents of a query.
        no_relevant_queries: the last queries before the unjudged ones are judged without
            any relevant document (evaluation tools drop them).
        unjudged_queries: the last queries are answered by the runs but absent from the
            qrels.

    Example:
        >>> track = synthetic_track(n_systems=3, n_queries=4, depth=10, seed=1)
        >>> track.run.columns, track.run.height <= 3 * 4 * 10
        (['system', 'query', 'doc', 'score', 'rank'], True)
        >>> track.run.row(0)
        ('sys000', '401', 'D401-...', ..., 1)
        >>> dict(track.qrels.schema)
        {'query': String, 'doc': String, 'relevance': Int64}
    """
    spec = spec_of(locals())
    ids = Ids(spec, 0, spec.n_queries)
    quality = _systems(spec)
    qrels: list[pl.DataFrame] = []
    parts: list[_Rankings] = []
    for block, rankings in blocks(spec):
        qrels.append(qrels_chunk(spec, block, ids))
        parts.extend(rankings)
    if len(qrels) > 1:
        # parts are system-major within a block of queries: a stable sort on the system
        # makes the run system-major, then query, then rank
        merged = _Rankings.concat(parts)
        parts = [merged.take(np.argsort(merged.system, kind="stable"))]
    run = pl.concat([part.frame(quality["system"], ids) for part in parts], rechunk=False)
    return Track(run=run, qrels=pl.concat(qrels, rechunk=True), quality=quality)
