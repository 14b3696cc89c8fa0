"""A track whose files look like the official TREC 2003 Robust runs (the ``robust03`` shape
of ``run.py``), for the trec_eval drop-in's benchmark.

The synthetic tracks of :mod:`lexiframe.datasets` are tidy: doc ids ``D401-000123`` of one
length and sorted like the ranking, lines in rank order, scores of 4 decimals, qrels of a
few times the relevant documents. Real runs are not, and each difference costs a reader
and a ranker something. Here, drawn with NumPy (no loop over rows or queries):

- doc ids of the TREC disks 4 and 5 (less the Congressional Record): ``FBIS3-10082``,
  ``FT934-5418``, ``LA070389-0001``, ``FR940104-0-00001`` (7 to 16 characters), in the
  collections' proportions, in no order tied to the ranking;
- 100 topics: 50 of 303-450 and 601-650; run tags like ``pircRB04t3``;
- per run a score style: many digits (full float64 or 6 decimals, some negative, as
  log-probabilities), rounded to 2 decimals (frequent exact ties), or rank-derived
  (1000, 999, …; or 1/rank); a share of the runs writes each topic's lines in no order
  (by doc id, or shuffled), with ranks that are 0 or do not follow the scores;
- pool-style qrels: every document in the top 100 of a run, and as many again drawn from
  the candidates (the pool of the runs not in the track), about 1,250 judgments per topic,
  mostly non-relevant; 40-60 % of each run's documents unjudged; a tenth of each topic's
  candidates are documents of broad interest that other topics retrieve too, so that some
  documents are judged for several topics (7 of them for 5), as pooled qrels do.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl

# TREC disks 4 and 5 less CR: documents per collection (robust04's 528,155 in all).
_COLLECTIONS = {"FBIS": 130_471, "FT": 210_158, "LA": 131_896, "FR94": 55_630}
_TAGS = [
    "pircRB04t3", "apl04rsTDNfw", "uogRobDBase", "fub04Tge", "JuruDesAft", "SABIR04BA",
    "humR04d5e", "NLPR04OKapi", "icl04pos2f", "mpi04r01", "vtumdesc", "wdoqla1",
    "UIUCrAt", "aplrob03a", "ASU03desc", "THUIRr0301", "Sab03rbQE", "rmit4dt", "POLYU4b",
    "uwmtDsa3",
]  # fmt: skip
_CANDIDATES = 3_000  # candidate documents per topic, the runs' top 1,000 among them
_POOL_DEPTH = 100
# Documents of broad interest, among the candidates of many topics: 300 of 20,000 a topic.
_SHARED, _SHARED_PER_TOPIC = 20_000, 300
# Score styles, one per run in turn: full float64, 6 decimals, log-probability (negative,
# 6 decimals), 2 decimals (BM25 rounded: ties), 1000 - rank, 1 / rank.
_STYLES = ("full", "fixed6", "logprob", "round2", "rank", "reciprocal")
# Line order, one per run in turn: by rank, by doc id, shuffled (within each topic).
_ORDERS = ("rank", "rank", "doc", "rank", "shuffled")


def corpus_ids() -> pl.Series:
    """Every document id of the collections (528,155), in their own order."""
    fbis, ft, la, fr = (np.arange(n) for n in _COLLECTIONS.values())
    half = len(fbis) // 2
    parts = [
        # FBIS3-1 … FBIS3-65235, FBIS4-1 …
        pl.concat_str(
            pl.lit("FBIS"),
            pl.lit(pl.Series(np.where(fbis < half, 3, 4))).cast(pl.String),
            pl.lit("-"),
            pl.lit(pl.Series(np.where(fbis < half, fbis, fbis - half) + 1)).cast(pl.String),
        ),
        # FT911-1 … FT944-…: 16 quarters, numbered within each
        pl.concat_str(
            pl.lit("FT9"),
            pl.lit(pl.Series(91 + ft % 16 // 4 - 90)).cast(pl.String),
            pl.lit(pl.Series(ft % 4 + 1)).cast(pl.String),
            pl.lit("-"),
            pl.lit(pl.Series(ft // 16 + 1)).cast(pl.String),
        ),
        # LAmmddyy-nnnn: 1989 to 1991, up to 180 articles a day
        pl.concat_str(
            pl.lit("LA"),
            pl.lit(pl.Series(la // 180 % 12 + 1)).cast(pl.String).str.zfill(2),
            pl.lit(pl.Series(la // 2160 % 28 + 1)).cast(pl.String).str.zfill(2),
            pl.lit(pl.Series(89 + la // 60480)).cast(pl.String),
            pl.lit("-"),
            pl.lit(pl.Series(la % 180 + 1)).cast(pl.String).str.zfill(4),
        ),
        # FR94mmdd-v-nnnnn
        pl.concat_str(
            pl.lit("FR94"),
            pl.lit(pl.Series(fr // 2000 % 12 + 1)).cast(pl.String).str.zfill(2),
            pl.lit(pl.Series(fr // 200 % 10 * 3 + 1)).cast(pl.String).str.zfill(2),
            pl.lit("-"),
            pl.lit(pl.Series(fr // 100 % 2)).cast(pl.String),
            pl.lit("-"),
            pl.lit(pl.Series(fr + 1)).cast(pl.String).str.zfill(5),
        ),
    ]
    ids = pl.concat([pl.select(part.alias("doc")).to_series() for part in parts])
    return ids.unique(maintain_order=True)


def topics(rng: np.random.Generator, n_queries: int) -> np.ndarray:
    """Robust 2003's kind of topics: half old ones of 303-450, half new ones from 601."""
    old = np.sort(rng.choice(np.arange(303, 451), n_queries // 2, replace=False))
    return np.concatenate([old, 601 + np.arange(n_queries - n_queries // 2)])


def write_robust_like(
    directory: Path, n_systems: int = 17, n_queries: int = 100, depth: int = 1000, seed: int = 0
) -> None:
    """Write ``directory/runs/input.TAG.gz`` (one run per system) and ``qrels.txt.gz``."""
    rng = np.random.default_rng([seed, 2003])
    corpus = corpus_ids()
    n_cand = max(_CANDIDATES, 3 * depth)
    own = n_cand - _SHARED_PER_TOPIC
    if _SHARED + n_queries * own > len(corpus):
        raise ValueError(f"{n_queries} topics x {n_cand} candidates exceed the corpus")
    # each topic's candidates: a slice of a permutation of the corpus of its own, and a few
    # hundred of the documents many topics retrieve (some are judged for several topics)
    shuffled = rng.permutation(len(corpus))
    shared = shuffled[:_SHARED][
        np.argsort(rng.random((n_queries, _SHARED)), axis=1)[:, :_SHARED_PER_TOPIC]
    ]
    candidates = np.concatenate(
        [shared, shuffled[_SHARED : _SHARED + n_queries * own].reshape(n_queries, own)], axis=1
    )
    qids = topics(rng, n_queries)

    # relevance: 10 to 150 relevant documents a topic (log-uniform), a fifth of them grade 2
    expected = np.exp(rng.uniform(np.log(10), np.log(150), n_queries))
    draw = rng.random((n_queries, n_cand))
    grade = np.zeros((n_queries, n_cand), dtype=np.int8)
    grade[draw < (expected / n_cand)[:, None]] = 1
    grade[draw < (expected / n_cand / 5)[:, None]] = 2

    quality = rng.uniform(0.5, 2.0, n_systems)
    ease = rng.uniform(0.3, 1.2, n_queries)
    effect = quality[:, None] * ease[None, :] + 0.4 * rng.standard_normal((n_systems, n_queries))
    noise = rng.standard_normal((n_systems, n_queries, n_cand))
    latent = noise + np.maximum(effect, 0)[:, :, None] * np.array([0.0, 1.0, 1.5])[grade]
    # each run's top `depth` candidates, best first
    top = np.argpartition(-latent, depth - 1, axis=2)[:, :, :depth]
    top_latent = np.take_along_axis(latent, top, axis=2)
    order = np.argsort(-top_latent, axis=2, kind="stable")
    top = np.take_along_axis(top, order, axis=2)  # (systems, queries, depth) candidate index
    top_latent = np.take_along_axis(top_latent, order, axis=2)

    # the pool: the top 100 of every run, the relevant documents, and as many again drawn
    # from the candidates (what the other runs pooled)
    judged = grade > 0
    rows = np.broadcast_to(np.arange(n_queries)[None, :, None], top[:, :, :_POOL_DEPTH].shape)
    judged[rows.reshape(-1), top[:, :, :_POOL_DEPTH].reshape(-1)] = True
    extra = (1_250 - judged.sum(axis=1)).clip(0) / (n_cand - judged.sum(axis=1))
    judged |= rng.random((n_queries, n_cand)) < extra[:, None]
    query_index, cand_index = np.nonzero(judged)
    qrels = pl.DataFrame(
        {
            "query": qids[query_index],
            "q0": 0,
            "doc": corpus.gather(candidates[query_index, cand_index]),
            "relevance": grade[query_index, cand_index],
        }
    )
    (directory / "runs").mkdir(parents=True, exist_ok=True)
    _write(qrels.sort("query", "doc"), directory / "qrels.txt.gz")

    rank = np.arange(1, depth + 1)
    for system in range(n_systems):
        style = _STYLES[system % len(_STYLES)]
        score = _scores(style, top_latent[system], rank, rng)
        query = np.repeat(np.arange(n_queries), depth)
        frame = pl.DataFrame(
            {
                "query": qids[query],
                "q0": "Q0",
                "doc": corpus.gather(candidates[query, top[system].reshape(-1)]),
                "rank": np.tile(rank - (system % 7 == 3), n_queries),  # some start at 0
                "score": score.reshape(-1),
                "tag": _TAGS[system % len(_TAGS)],
            }
        )
        line_order = _ORDERS[system % len(_ORDERS)]
        if line_order == "doc":
            frame = frame.sort("query", "doc", maintain_order=True)
        elif line_order == "shuffled":
            key = query * (depth + 1) + rng.permutation(len(query)) % depth
            frame = frame[np.argsort(key, kind="stable")]
        _write(frame, directory / "runs" / f"input.{_TAGS[system % len(_TAGS)]}.gz")


def _scores(
    style: str, latent: np.ndarray, rank: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """One run's scores (queries, depth) in a style (its latent scores best first)."""
    shift = 8.0 + 4.0 * rng.random()
    if style == "full":
        return (latent + shift) * 1.7
    if style == "fixed6":
        return np.round(latent + shift, 6)
    if style == "logprob":
        return np.round(latent - 2 * shift, 6)
    if style == "round2":  # BM25 rounded to 2 decimals: ties
        return np.round((latent + shift) * 0.8, 2)
    if style == "rank":
        return np.tile((len(rank) + 1 - rank).astype(np.int64), (len(latent), 1))
    reciprocal: np.ndarray = np.round(1.0 / np.broadcast_to(rank, latent.shape), 8)
    return reciprocal


def _write(frame: pl.DataFrame, path: Path) -> None:
    """Space-separated lines, gzipped, written to a temporary name then renamed."""
    text = frame.write_csv(separator=" ", include_header=False, quote_style="never")
    partial = path.with_name(path.name + ".partial")
    with gzip.open(partial, "wb", compresslevel=1) as out:
        out.write(text.encode())
    partial.rename(path)
