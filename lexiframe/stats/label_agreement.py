"""Agreement of relevance labels on the documents two or more qrels both judge.

- :func:`cohen_kappa`: Cohen's κ of two label vectors, unweighted or weighted
  (``"linear"``: |i − j| / (K − 1) disagreement; ``"quadratic"``: its square), over the
  K grades either gives (Cohen 1960, 1968);
- :func:`krippendorff_alpha`: Krippendorff's α for any number of coders, missing labels
  allowed, at the ``"nominal"``, ``"ordinal"`` or ``"interval"`` level (Krippendorff,
  *Content Analysis*, 2004, §11.3; the coincidence-matrix form);
- :func:`label_agreement`: both, for every pair of qrels of a stacked qrels frame (one
  row per pair), and α over all of them.

Weighted κ and α read the grades as numbers (0, 1, 2, …): the weights of κ use the
grades' positions among the K grades seen, α's interval level their values.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from lexiframe.errors import InputError
from lexiframe.stats._common import check_choice, check_unique, eager, require_table

KappaWeights = Literal["none", "linear", "quadratic"]
KAPPA_WEIGHTS: tuple[KappaWeights, ...] = ("none", "linear", "quadratic")
AlphaLevel = Literal["nominal", "ordinal", "interval"]
ALPHA_LEVELS: tuple[AlphaLevel, ...] = ("nominal", "ordinal", "interval")


def _codes(*labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct values of the labels and each vector as indices into them."""
    values = np.unique(np.concatenate([v[~np.isnan(v)] for v in labels]))
    return values, [np.searchsorted(values, np.nan_to_num(v, nan=values[0])) for v in labels]


def cohen_kappa(first: ArrayLike, second: ArrayLike, *, weights: KappaWeights = "none") -> float:
    """Cohen's κ = 1 − Σ w·O / Σ w·E between two label vectors of the same items.

    O is the observed joint distribution of the labels, E the product of its margins and
    w the disagreement weight: 1 off the diagonal (``"none"``), |i − j|/(K − 1)
    (``"linear"``) or its square (``"quadratic"``), i and j the positions of the grades
    among the K grades seen. NaN when the labels are all one grade (no disagreement
    to expect).

    >>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    >>> round(cohen_kappa([0, 1, 2, 2], [0, 2, 2, 1], weights="quadratic"), 4)
    0.6364
    """
    check_choice(weights, KAPPA_WEIGHTS, "kappa weights")
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or np.isnan(a).any() or np.isnan(b).any():
        raise InputError(
            "cohen_kappa() needs two label vectors of the same length without missing "
            f"values, one label per item; got shapes {a.shape} and {b.shape}"
        )
    if a.size == 0:
        return float("nan")
    values, (i, j) = _codes(a, b)
    k = values.size
    observed = np.zeros((k, k))
    np.add.at(observed, (i, j), 1.0)
    observed /= a.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / max(k - 1, 1)
    weight = {"none": (distance > 0).astype(np.float64), "linear": distance}.get(
        weights, distance**2
    )
    denominator = float((weight * expected).sum())
    if denominator == 0.0:
        return float("nan")
    return float(1.0 - (weight * observed).sum() / denominator)


def krippendorff_alpha(labels: ArrayLike, *, level: AlphaLevel = "interval") -> float:
    """Krippendorff's α = 1 − (n − 1) Σ o·δ² / Σ n_c n_k δ², NaN marking a missing label.

    ``labels`` is an items × coders matrix. Only items with two or more labels count.
    The coincidence matrix o adds, for every item u with m_u labels, each ordered pair
    of its labels from different coders with weight 1/(m_u − 1); n_c are its margins and
    n their sum. δ² is (c ≠ k) at the nominal level, (c − k)² at the interval level and
    (Σ_{g from c to k} n_g − (n_c + n_k)/2)² at the ordinal level. NaN when fewer than
    two pairable labels or a single value (no disagreement to expect).

    >>> round(krippendorff_alpha([[0, 0], [1, 1], [2, 1], [2, 2]], level="interval"), 4)
    0.8205
    >>> krippendorff_alpha([[1, 1, float("nan")], [0, 0, 0]], level="nominal")
    1.0
    """
    check_choice(level, ALPHA_LEVELS, "alpha level")
    matrix = np.asarray(labels, dtype=np.float64)
    if matrix.ndim != 2:
        raise InputError(
            "krippendorff_alpha() needs an items × coders matrix, e.g. [[0, 1], [2, 2]], "
            f"with NaN for a missing label; got {matrix.ndim} dimension(s)"
        )
    present = ~np.isnan(matrix)
    matrix = matrix[present.sum(axis=1) >= 2]
    if matrix.size == 0 or np.isnan(matrix).all():
        return float("nan")
    values, (codes,) = _codes(matrix.ravel())
    codes = codes.reshape(matrix.shape)
    k = values.size
    counts = np.zeros((matrix.shape[0], k))  # n_uc: labels of item u equal to value c
    rows = np.broadcast_to(np.arange(matrix.shape[0])[:, None], matrix.shape)
    mask = ~np.isnan(matrix)
    np.add.at(counts, (rows[mask], codes[mask]), 1.0)
    scale = 1.0 / (counts.sum(axis=1) - 1.0)
    coincidence = (counts * scale[:, None]).T @ counts - np.diag(scale @ counts)
    margins = coincidence.sum(axis=1)
    n = margins.sum()
    if k < 2:
        return float("nan")
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "interval":
        delta = np.subtract.outer(values, values) ** 2
    else:
        cumulative = np.concatenate([[0.0], np.cumsum(margins)])
        low, high = (
            np.minimum.outer(np.arange(k), np.arange(k)),
            np.maximum.outer(np.arange(k), np.arange(k)),
        )
        between = cumulative[high + 1] - cumulative[low]
        delta = (between - (margins[low] + margins[high]) / 2.0) ** 2
    expected = float((np.outer(margins, margins) * delta).sum())
    return float(1.0 - (n - 1.0) * (coincidence * delta).sum() / expected)


def label_agreement(
    judgments: pl.DataFrame | pl.LazyFrame,
    *,
    qrels: str = "qrels",
    reference: str | None = None,
) -> pl.DataFrame:
    """κ and α of every pair of qrels on the (query, doc) both judge, and α over all.

    ``judgments`` stacks the qrels (``query, doc, relevance`` and the key column
    ``qrels`` naming each), e.g. ``pl.concat([human.with_columns(qrels=pl.lit("human")),
    llm.with_columns(qrels=pl.lit("llm"))])``. With ``reference``, the pairs are the
    reference against each other qrels; else every pair, in the order the qrels first
    appear. A last row with ``qrels_b`` ``"*"`` (when there are three qrels or more) gives
    α over all of them, every (query, doc) any two judge.

    Returns:
        ``qrels_a, qrels_b, n_shared, kappa, kappa_linear, kappa_quadratic,
        alpha_nominal, alpha_ordinal, alpha_interval`` (κ null on the row of all qrels).

    >>> import polars as pl
    >>> human = pl.DataFrame({"query": ["1"] * 4, "doc": list("abcd"), "relevance": [0, 1, 2, 2]})
    >>> llm = human.with_columns(relevance=pl.Series([0, 2, 2, 1]))
    >>> both = pl.concat([human.with_columns(qrels=pl.lit("human")),
    ...                   llm.with_columns(qrels=pl.lit("llm"))])
    >>> label_agreement(both).select("qrels_a", "qrels_b", "n_shared", "kappa").rows()
    [('human', 'llm', 4, 0.19999999999999996)]
    """
    table = eager(judgments, "judgments")
    keys = [qrels, "query", "doc"]
    require_table(
        table.schema,
        [*keys, "relevance"],
        "judgments",
        f"Stack the qrels with a {qrels!r} column naming each, e.g. "
        f"pl.concat([human.with_columns({qrels}=pl.lit('human')), "
        f"llm.with_columns({qrels}=pl.lit('llm'))]).",
    )
    check_unique(table, keys, "judgments", todo="a qrels judges a document once per query")
    names = [str(name) for name in table[qrels].unique(maintain_order=True).to_list()]
    pairs = qrels_pairs(names, reference)
    wide = table.pivot(on=qrels, index=["query", "doc"], values="relevance").select(names)
    grades = wide.cast(pl.Float64).to_numpy()
    columns = {name: i for i, name in enumerate(names)}
    rows = [_pair_row(grades[:, [columns[a], columns[b]]], a, b) for a, b in pairs]
    if len(names) >= 3:
        rows.append({"qrels_a": "*", "qrels_b": "*", **_alphas(grades)})
    return pl.DataFrame(rows, schema=_SCHEMA, orient="row")


_SCHEMA = {
    "qrels_a": pl.String, "qrels_b": pl.String, "n_shared": pl.UInt32, "kappa": pl.Float64,
    "kappa_linear": pl.Float64, "kappa_quadratic": pl.Float64, "alpha_nominal": pl.Float64,
    "alpha_ordinal": pl.Float64, "alpha_interval": pl.Float64,
}  # fmt: skip


def qrels_pairs(names: Sequence[str], reference: str | None) -> list[tuple[str, str]]:
    """The (a, b) pairs of qrels compared: the reference against each, or every pair."""
    if len(names) < 2:
        raise InputError(
            f"comparing qrels needs two or more, and the frame holds {len(names)}: "
            f"{names}; stack them with a column naming each, e.g. qrels='human' and 'llm'"
        )
    if reference is None:
        return list(combinations(names, 2))
    if reference not in names:
        raise InputError(
            f"reference={reference!r} is none of the qrels {names}; pass one of them, "
            f"e.g. reference={names[0]!r}"
        )
    return [(reference, name) for name in names if name != reference]


def _alphas(grades: np.ndarray) -> dict[str, object]:
    shared = int((~np.isnan(grades)).sum(axis=1).__ge__(2).sum())
    return {
        "n_shared": shared,
        **{f"alpha_{level}": krippendorff_alpha(grades, level=level) for level in ALPHA_LEVELS},
    }


def _pair_row(grades: np.ndarray, a: str, b: str) -> dict[str, object]:
    shared = grades[~np.isnan(grades).any(axis=1)]
    kappas = {
        f"kappa{'' if w == 'none' else '_' + w}": cohen_kappa(shared[:, 0], shared[:, 1], weights=w)
        for w in KAPPA_WEIGHTS
    }
    return {"qrels_a": a, "qrels_b": b, **kappas, **_alphas(shared)}
