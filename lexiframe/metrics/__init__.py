"""Measures of one ranking: expression functions and the registry of canonical names.

- :mod:`.spec`: what a measure is (:class:`Family`, :class:`Measure`, :class:`Needs`,
  :class:`Context`);
- :mod:`.catalogue`: the built-in families, declarations only;
- :mod:`.registry`: which names read as which family; :mod:`.parser` reads a name,
  :mod:`.spellings` trec_eval's spellings, :mod:`.peer_spellings` ir_measures' and
  ranx's, :mod:`.hints` words what does not parse;
- :mod:`.converters`: how parameters are checked and printed;
- :mod:`.exprs`, :mod:`.sets`, :mod:`.judged`, :mod:`.gain`: the expressions;
- :mod:`.custom`: measures users define; :mod:`.trec_eval`: trec_eval's catalogue.
"""

from lexiframe.metrics.catalogue import FAMILIES
from lexiframe.metrics.custom import define_measure
from lexiframe.metrics.parser import needs_n_hint, parse_measure, parse_measures
from lexiframe.metrics.registry import families, known_names, register, unregister
from lexiframe.metrics.spec import Context, Family, Measure, Needs, deepest_rank_read

__all__ = [
    "FAMILIES",
    "Context",
    "Family",
    "Measure",
    "Needs",
    "deepest_rank_read",
    "define_measure",
    "families",
    "known_names",
    "needs_n_hint",
    "parse_measure",
    "parse_measures",
    "register",
    "unregister",
]
