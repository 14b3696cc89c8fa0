"""Option types of the public API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import polars as pl

RankBy = Literal["score", "rank"]
"""How a ranking is ordered: trec_eval's rule on ``score`` (and ``doc``), or a ``rank`` column."""

Ties = Literal["trec_eval", "rank", "expected"]
"""How documents of equal score are ordered: trec_eval's rule (document id descending), the
run's own ranks, or the expectation over every ordering of them (``ties=``)."""

CompatName = Literal["trec_eval-10.0", "trec_eval-9.0.8", "pytrec_eval"]
"""Whose numbers a positions frame and its measures give (``compat=``)."""

LevelCutoff = Literal["round", "up"]
"""How an interpolated precision's recall level becomes a count of relevant documents:
trec_eval 10's lround(x·m) or trec_eval 9's floor(x·m + 0.9)."""

NoRelevant = Literal["drop", "keep"]
"""What ``positions`` does with a judged query without a relevant document."""

Labels = Literal["grades", "gain", "probability"]
"""What the qrels' relevance column holds (:attr:`lexiframe.PositionsOptions.labels`)."""

ExposureName = Literal["rr", "ap", "ndcg", "rbp", "linear"]
"""Named exposure functions of the recall-level family (lexirecall paper, Definition 2.1)."""

Exposure = ExposureName | Callable[[pl.Expr], pl.Expr]
"""A named exposure, or a function from a position expression to an exposure expression."""

SystemFrom = Literal["field", "filename"]
"""Where a TREC run's system id comes from: its sixth field, or the file name."""
