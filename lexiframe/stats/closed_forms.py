"""Closed-form tie probabilities for random rankings (lexirecall Appendix D, lexiprecision §2).

For two rankings drawn uniformly from the n! permutations of a corpus of n documents, m of
them relevant, the relevant positions p (sorted) of each ranking are a uniform m-subset of
{1, …, n}: every subset has probability C(n, m)⁻¹. A measure ties the two rankings with
probability Σ_v Pr(value = v)²:

- LR, LP (lexirecall Theorem D.1): the vectors must be equal: Pr = C(n, m)⁻¹;
- TSE (Theorem D.2): p_m, the last relevant position, has Pr(p_m = i) = C(i − 1, m − 1) /
  C(n, m), so Pr = C(n, m)⁻² Σ_{i=m}^{n} C(i − 1, m − 1)²;
- R@k (Theorem D.3): the number of relevant documents in the top k is hypergeometric,
  Pr = C(n, m)⁻² Σ_i C(k, i)² C(n − k, m − i)²;
- RP (Theorem D.4): R@k with k = m;
- RR (lexiprecision §2): p_1 has Pr(p_1 = i) = C(n − i, m − 1) / C(n, m) (the mirror image
  of p_m, so RR ties exactly as often as TSE).

Everything is computed in log space with ``scipy.special.gammaln`` and the hypergeometric
pmf of ``scipy.stats``, in blocks, so n up to 10⁷ and beyond is exact to rounding.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lexiframe._utils import quote_names
from lexiframe.errors import InputError, UnknownMeasureError
from lexiframe.metrics import parse_measure
from lexiframe.metrics.registry import family_named
from lexiframe.preferences import is_preference, preference_measure
from lexiframe.validate import require_positive_int

_BLOCK = 1 << 20
CLOSED_FORM_MEASURES = ("TSE", "R@k", "RP", "LR", "LP", "RR")
_FAMILIES = {"TSE": "TSE", "RP": "RP", "RR": "RR", "R": "R@k"}
"""The registry's families with a closed form, by the name of the form (any exposure of TSE
ties where the last relevant document's position does)."""


def _log_choose(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    from scipy import special  # SciPy is imported where it is used (start-up time)

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    logs: np.ndarray = special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)
    return logs


def check_counts(n: int, m: int) -> tuple[int, int]:
    """The corpus size n and the number of relevant documents m, checked (m ≤ n).

    >>> check_counts(1000, 10)
    (1000, 10)
    """
    n = require_positive_int(n, "n", meaning="the corpus size")
    m = require_positive_int(m, "m", meaning="the number of relevant documents")
    if m > n:
        raise InputError(f"m (relevant documents, {m}) cannot exceed n (corpus size, {n})")
    return n, m


def parse_tie_measure(measure: str, k: int | None = None) -> tuple[str, int | None]:
    """Canonical name and cutoff of a measure with a closed form: ``"R@1000"`` → ("R@k", 1000).

    >>> parse_tie_measure("R@1000"), parse_tie_measure("sgnLR"), parse_tie_measure("MRR")
    (('R@k', 1000), ('LR', None), ('RR', None))
    """
    if not isinstance(measure, str):
        raise UnknownMeasureError(f"a measure name must be a string, not {measure!r}")
    text = measure.strip()
    unknown = UnknownMeasureError(
        f"no closed-form tie probability for {measure!r}; the known measures are "
        f"{quote_names(CLOSED_FORM_MEASURES)} (R@k as e.g. 'R@1000'), under any of their "
        "names (MRR, recip_rank, Recall@1000, sgnLR, …)"
    )
    if text.lower() in ("lr", "lp"):
        return text.upper(), None
    if is_preference(text):
        return ("LP" if preference_measure(text).level == "first" else "LR"), None
    family = family_named(text)
    if family is not None and family.name == "R":  # R@k with k= given apart
        if k is None:
            raise InputError("R@k needs a cutoff: pass k=, or name it like 'R@1000'")
        return "R@k", k
    try:
        parsed = parse_measure("R@1" if text.lower() == "r@k" else text)
    except UnknownMeasureError:
        raise unknown from None
    name = _FAMILIES.get(parsed.family.name)
    if name is None or parsed.level is not None or (name != "R@k" and parsed.cutoff is not None):
        raise unknown
    if name != "R@k":
        return name, None
    if text.lower() == "r@k":
        if k is None:
            raise InputError("R@k needs a cutoff: pass k=, or name it like 'R@1000'")
        return "R@k", k
    if k is not None and k != parsed.rank:
        raise InputError(f"measure {measure!r} has cutoff {parsed.rank}, but k={k}")
    return "R@k", parsed.rank


def _sum_squared_extreme(n: int, m: int) -> float:
    """Σ_{i=m}^{n} (C(i − 1, m − 1) / C(n, m))², in log space, a block of i at a time."""
    from scipy import special

    log_total = _log_choose(n, m)
    partial = []
    for start in range(m, n + 1, _BLOCK):
        i = np.arange(start, min(n, start + _BLOCK - 1) + 1, dtype=np.float64)
        log_pmf = _log_choose(i - 1, m - 1) - log_total
        partial.append(special.logsumexp(2.0 * log_pmf))
    return float(np.exp(special.logsumexp(partial)))


def _sum_squared_hypergeometric(n: int, m: int, k: int) -> float:
    """Σ_i Pr(i relevant in the top k)², the count being hypergeometric(n, k, m)."""
    from scipy import stats

    i = np.arange(0, min(m, k) + 1)
    pmf = stats.hypergeom.pmf(i, n, k, m)
    return float(np.sum(pmf**2))


def tie_probability(measure: str, *, n: int, m: int, k: int | None = None) -> float:
    """Probability that two uniformly random rankings tie under ``measure``.

    Lexirecall paper Appendix D (Theorems D.1–D.4) and Tables 3–4; the RR case is the
    lexiprecision paper's §2 averaged over p_1. See the module docstring for the formulas.

    Args:
        measure: ``"TSE"``, ``"R@k"`` (or ``"R@1000"``), ``"RP"``, ``"LR"``, ``"LP"``
            (ties only for identical position vectors, like LR) or ``"RR"``.
        n: corpus size (complete rankings of n documents).
        m: number of relevant documents.
        k: the cutoff of R@k.

    >>> round(tie_probability("R@1000", n=10_000, m=10), 3)  # lexirecall Table 3
    0.313
    >>> round(tie_probability("TSE", n=1000, m=10), 3)
    0.005
    >>> tie_probability("LR", n=10, m=2)  # 1 / C(10, 2)
    0.0222...
    """
    name, k = parse_tie_measure(measure, k)
    n, m = check_counts(n, m)
    if name in ("LR", "LP"):
        return float(np.exp(-_log_choose(n, m)))
    if name in ("TSE", "RR"):
        return _sum_squared_extreme(n, m)
    if name == "RP":
        return _sum_squared_hypergeometric(n, m, m)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
        raise InputError(f"the cutoff k of R@k must be an integer in [1, n={n}], not {k!r}")
    return _sum_squared_hypergeometric(n, m, int(k))


def rr_tie_probability(p1: ArrayLike, *, n: int, m: int) -> np.ndarray:
    """Pr(p′_1 = p_1 | p_1): the chance that a uniformly random ranking ties RR with one
    whose first relevant document is at ``p1`` (lexiprecision paper §2, Figure 2).

    Pr = C(n − p_1, m − 1) / C(n, m), zero outside 1 ≤ p_1 ≤ n − m + 1. Vectorised over
    ``p1``.

    >>> rr_tie_probability([1, 2, 4], n=4, m=2).round(4).tolist()  # 3/6, 2/6, 0
    [0.5, 0.3333, 0.0]
    """
    n, m = check_counts(n, m)
    first = np.asarray(p1, dtype=np.float64)
    valid = (first >= 1) & (first <= n - m + 1)
    out = np.zeros(first.shape)
    out[valid] = np.exp(_log_choose(n - first[valid], m - 1) - _log_choose(n, m))
    return out
