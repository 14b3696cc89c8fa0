"""The papers' analyses over positions, preference and metric frames (docs/definitions.md §5).

- ties: :func:`tie_fraction`, :func:`tie_fraction_by_level`, :func:`first_difference_ecdf`;
- agreement: :func:`sign_agreement`, :func:`kendall_tau`, :func:`system_scores`,
  :func:`metric_pairs`;
- significance: :func:`significance`, :func:`tukey_hsd`, :func:`randomized_tukey_hsd`,
  :func:`discriminative_power`, :func:`adjust_p_values` (Holm, Bonferroni,
  Benjamini–Hochberg, Benjamini–Yekutieli);
- elementary tests of many pairs at once: :func:`sign_test`, :func:`t_test`,
  :func:`wilcoxon_test`;
- resampling: :func:`randomization_test` (Fisher's), :func:`bootstrap_test` (paired,
  with percentile intervals);
- degradation: :func:`degrade_labels`, :func:`subsample_queries`,
  :func:`degradation_curve`, :func:`average_over_samples`, :func:`label_degradation`;
- closed forms and simulation: :func:`tie_probability`, :func:`rr_tie_probability`,
  :func:`random_positions`, :func:`random_rankings`, :func:`simulate_ties`;
- atomized search length: :func:`rrie`, :func:`asl_deltas`;
- reports: :func:`report`, :func:`to_markdown`, :func:`to_latex`.
- several qrels (human and LLM labels): :func:`qrels_agreement`, :func:`hole_size`,
  :func:`label_agreement`, :func:`cohen_kappa`, :func:`krippendorff_alpha`,
  :func:`tau_ap`, :func:`top_k_overlap`, :func:`simulated_judge`;
- a few human labels: :func:`ppi_mean` (prediction-powered intervals).

Every function returns a Polars DataFrame sorted by explicit keys (the closed forms and
elementary tests return numbers or NumPy arrays), groups by ``by=`` keys where that makes
sense, and takes an explicit ``seed`` (an integer or a ``numpy.random.Generator``) when it
draws random numbers.
"""

from lexiframe.stats._common import metric_pairs
from lexiframe.stats.agreement import kendall_tau, sign_agreement, system_scores
from lexiframe.stats.asl import asl_deltas, rrie
from lexiframe.stats.closed_forms import rr_tie_probability, tie_probability
from lexiframe.stats.corrections import adjust_p_values
from lexiframe.stats.degradation import (
    average_over_samples,
    degradation_curve,
    degrade_labels,
    label_degradation,
    subsample_queries,
)
from lexiframe.stats.elementary import sign_test, t_test, wilcoxon_test
from lexiframe.stats.holes import hole_size
from lexiframe.stats.judges import simulated_judge
from lexiframe.stats.label_agreement import cohen_kappa, krippendorff_alpha, label_agreement
from lexiframe.stats.ordering_agreement import tau_ap, top_k_overlap
from lexiframe.stats.ppi import ppi_mean
from lexiframe.stats.qrels_agreement import QrelsAgreement, qrels_agreement
from lexiframe.stats.report import report
from lexiframe.stats.resampling import bootstrap_test, randomization_test
from lexiframe.stats.significance import (
    discriminative_power,
    randomized_tukey_hsd,
    significance,
    tukey_hsd,
)
from lexiframe.stats.simulate import random_positions, random_rankings, simulate_ties
from lexiframe.stats.tables import to_latex, to_markdown
from lexiframe.stats.ties import first_difference_ecdf, tie_fraction, tie_fraction_by_level

__all__ = [
    "QrelsAgreement",
    "adjust_p_values",
    "asl_deltas",
    "average_over_samples",
    "bootstrap_test",
    "cohen_kappa",
    "degradation_curve",
    "degrade_labels",
    "discriminative_power",
    "first_difference_ecdf",
    "hole_size",
    "kendall_tau",
    "krippendorff_alpha",
    "label_agreement",
    "label_degradation",
    "metric_pairs",
    "ppi_mean",
    "qrels_agreement",
    "random_positions",
    "random_rankings",
    "randomization_test",
    "randomized_tukey_hsd",
    "report",
    "rr_tie_probability",
    "rrie",
    "sign_agreement",
    "sign_test",
    "significance",
    "simulate_ties",
    "simulated_judge",
    "subsample_queries",
    "system_scores",
    "t_test",
    "tau_ap",
    "tie_fraction",
    "tie_fraction_by_level",
    "tie_probability",
    "to_latex",
    "to_markdown",
    "top_k_overlap",
    "tukey_hsd",
    "wilcoxon_test",
]
