"""Version-dependent choices, kept in one place."""

from __future__ import annotations

from typing import Final

import polars as pl

# Eager entry points (DataFrame in, DataFrame out) collect their internal lazy plans with the
# in-memory engine: its list aggregations are faster than the streaming engine's. LazyFrame
# results are handed back uncollected, so users keep the engine of their choice.
EAGER_ENGINE: Final = "in-memory"


def collect(frame: pl.LazyFrame) -> pl.DataFrame:
    """Collect an internal plan for an eager caller."""
    return frame.collect(engine=EAGER_ENGINE)
