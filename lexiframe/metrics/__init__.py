"""Measures of one ranking: expression functions and the registry of canonical names."""

from lexiframe.metrics.custom import define_measure
from lexiframe.metrics.registry import (
    FAMILIES,
    Context,
    Family,
    Measure,
    Needs,
    families,
    known_names,
    parse_measure,
    parse_measures,
    register,
    unregister,
)

__all__ = [
    "FAMILIES",
    "Context",
    "Family",
    "Measure",
    "Needs",
    "define_measure",
    "families",
    "known_names",
    "parse_measure",
    "parse_measures",
    "register",
    "unregister",
]
