"""Measures of one ranking: expression functions and the registry of canonical names."""

from lexiframe.metrics.registry import (
    FAMILIES,
    Context,
    Family,
    Measure,
    known_names,
    parse_measure,
    parse_measures,
)

__all__ = [
    "FAMILIES",
    "Context",
    "Family",
    "Measure",
    "known_names",
    "parse_measure",
    "parse_measures",
]
