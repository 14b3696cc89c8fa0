"""What every step of a positions frame shares: its keys, the type of its ranks, the
flags of a ranking's checks and the options with what the qrels decide resolved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import polars as pl

from lexiframe.options import PositionsOptions
from lexiframe.typing import RankBy

POSITION: Final = pl.UInt32()
KEYS = ("system", "query")
DUPLICATE_FLAGS = ("_n_rows", "_n_docs")
VALUE_FLAGS = ("_score_nan_max", "_null_scores", "_null_ids")
TIE_RANK = "tie_rank"
"""The run's rank column, as the canonical run holds it when it breaks ties (``ties="rank"``)."""
TIE_COLUMNS = ("tie_starts", "tie_sizes")
"""What ``ties="expected"`` adds to a positions frame: per ranking, its tie groups of two or
more documents in rank order, as the documents above each group and its size."""


@dataclass(frozen=True)
class Request:
    """What :func:`positions` builds: the options, with what the qrels decide resolved."""

    options: PositionsOptions
    qrels_keys: list[str]
    """The keys that join a ranking to its judgments: the by= keys the qrels carry, query."""
    grades: bool
    """Whether the frame keeps the grade columns (``options.grades`` resolved on the qrels)."""
    crossed: pl.DataFrame | None = None
    """The values of the by= keys that only the qrels carry (each qrels set's name), when
    each ranking is ranked once and its ranks crossed with them (:func:`ranked_lists`)."""

    @property
    def by(self) -> list[str]:
        return list(self.options.by)

    @property
    def keys(self) -> list[str]:
        """The keys of one ranking of the frame: by…, system, query."""
        return [*self.options.by, *KEYS]

    @property
    def crossed_keys(self) -> list[str]:
        return [] if self.crossed is None else self.crossed.columns

    @property
    def run_keys(self) -> list[str]:
        """The keys of one ranking of the run: :attr:`keys` but the crossed ones."""
        return [key for key in self.keys if key not in self.crossed_keys]

    @property
    def run_options(self) -> PositionsOptions:
        """The options with the by= keys of the run alone, for the checks of its rows."""
        if self.crossed is None:
            return self.options
        return self.options.replace(by=self.run_keys[: -len(KEYS)])

    @property
    def depth(self) -> int | None:
        return self.options.depth

    @property
    def rank_by(self) -> RankBy:
        return self.options.rank_by

    @property
    def docs(self) -> bool:
        return self.options.docs

    @property
    def threshold(self) -> float:
        return self.options.threshold

    @property
    def judged(self) -> bool:
        return bool(self.options.judged)

    @property
    def condensed(self) -> bool:
        return self.options.condensed

    @property
    def reads_every_judgment(self) -> bool:
        return self.options.reads_every_judgment

    @property
    def gain_level(self) -> float:
        """The lowest grade whose documents the grade columns hold: every positive grade
        above ``threshold=1`` (:attr:`PositionsOptions.gain_level`), else the threshold."""
        return self.options.gain_level if self.grades else self.threshold

    @property
    def gains_below_threshold(self) -> bool:
        """Whether documents below the threshold gain: the frame has ``gain_positions``."""
        return self.gain_level < self.threshold
