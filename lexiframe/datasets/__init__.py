"""Synthetic TREC-style tracks: runs and graded qrels drawn from a seeded model.

The model, per query ``q`` of a candidate set of ``n_docs`` documents:

- relevance: each document is relevant with a probability that gives the query between
  ``relevant[0]`` and ``relevant[1]`` relevant documents on average (log-uniform per query,
  at least one), a share of them with grade 2; a few times more documents are judged
  non-relevant (grade 0); the rest are unjudged;
- a run of system ``s`` scores every candidate ``noise + e[s, q] * w[grade]`` with standard
  normal noise, ``w = (0, 1, 1.5)`` for grades 0, 1, 2 and an effectiveness
  ``e[s, q] = max(0, quality[s] * ease[q] + 0.4 * N(0, 1))``: a latent system quality
  shifts relevant documents up, a per-query ease makes some queries hard for everyone, and
  the per-(system, query) jitter lets a weaker system win some queries;
- the run keeps the top ``depth`` documents, scores rounded to 4 decimals (1 decimal, many
  ties, for a share ``tie_rate`` of the systems), ranked the trec_eval way (score
  descending, then document id descending as a string); each (system, query) is skipped
  with probability ``skip_rate``.

Everything is drawn with NumPy in blocks of queries (no Python loop over rows, queries or
systems), from generators seeded by ``numpy.random.default_rng([seed, stream, block])``: the
same arguments give identical frames, and :func:`write_synthetic_track` writes exactly the
rows :func:`synthetic_track` returns, a block at a time.
"""

from lexiframe.datasets._files import (
    DemoFiles,
    TrackFiles,
    TrackFormat,
    demo_files,
    demo_track,
    write_demo,
    write_synthetic_track,
)
from lexiframe.datasets._model import FIRST_QUERY, IdType, Track, synthetic_track

__all__ = [
    "FIRST_QUERY",
    "DemoFiles",
    "IdType",
    "Track",
    "TrackFiles",
    "TrackFormat",
    "demo_files",
    "demo_track",
    "synthetic_track",
    "write_demo",
    "write_synthetic_track",
]
