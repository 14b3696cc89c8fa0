"""Random rankings, to check the closed-form tie probabilities by simulation.

A ranking drawn uniformly from the n! permutations places its m relevant documents at a
uniform m-subset of {1, …, n}; :func:`random_positions` draws such subsets (sorted) with
an explicit seed, :func:`random_rankings` returns pairs of them as a positions frame, and
:func:`simulate_ties` counts how often each measure ties the two rankings of a pair
(lexirecall paper §5.3 and Figure 6; Tables 3–4 for the exact values).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from lexiframe._utils import as_list
from lexiframe.stats._common import Seed, generator
from lexiframe.stats.closed_forms import check_counts, parse_tie_measure, tie_probability
from lexiframe.validate import require_positive_int

_DENSE_LIMIT = 1 << 24  # rows × n below which subsets come from random keys
_MAX_REDRAWS = 64


def random_positions(*, n: int, m: int, size: int, seed: Seed) -> np.ndarray:
    """``size`` uniform m-subsets of {1, …, n}, each sorted ascending: a (size, m) int64 array.

    Small problems take the m smallest of n uniform keys per row; large ones draw with
    replacement and redraw the rows that repeat a position (rare when m² ≪ n).

    >>> random_positions(n=10, m=3, size=2, seed=0).shape
    (2, 3)
    >>> bool((random_positions(n=5, m=5, size=3, seed=1) == [1, 2, 3, 4, 5]).all())
    True
    """
    n, m = check_counts(n, m)
    size = require_positive_int(size, "size", zero=True)
    rng = generator(seed)
    if size * n <= _DENSE_LIMIT:
        keys = rng.random((size, n))
        chosen = np.argpartition(keys, m - 1, axis=1)[:, :m] + 1 if m < n else None
        out = np.broadcast_to(np.arange(1, n + 1), (size, n)).copy() if chosen is None else chosen
        out.sort(axis=1)
        return out.astype(np.int64)
    out = np.sort(rng.integers(1, n + 1, size=(size, m)), axis=1)
    for _ in range(_MAX_REDRAWS):
        repeated = (np.diff(out, axis=1) == 0).any(axis=1)
        if not repeated.any():
            return out
        out[repeated] = np.sort(rng.integers(1, n + 1, size=(int(repeated.sum()), m)), axis=1)
    for row in np.flatnonzero((np.diff(out, axis=1) == 0).any(axis=1)):  # pathological m ≈ n
        out[row] = np.sort(rng.choice(n, size=m, replace=False) + 1)
    return out


def _check_pairs(n_pairs: int) -> int:
    return require_positive_int(
        n_pairs, "n_pairs", zero=True, meaning="the number of ranking pairs to draw"
    )


def random_rankings(
    *, n: int, m: int, n_pairs: int, seed: Seed, depth: int | None = None
) -> pl.DataFrame:
    """A positions frame of ``n_pairs`` pairs of uniformly random rankings.

    Systems ``"a"`` and ``"b"``, one query per pair (``query`` = 0, 1, …); ``positions``
    keeps the relevant positions within ``depth`` (all of them by default), ``n_ret`` is
    ``depth`` (or n) and ``n_rel`` is m. Feed it to :func:`lexiframe.measures` (with
    ``n=`` for TSE) or :func:`lexiframe.preferences`, then to
    :func:`lexiframe.stats.tie_fraction`.

    >>> random_rankings(n=100, m=3, n_pairs=2, seed=0).columns
    ['system', 'query', 'positions', 'n_rel', 'n_ret']
    """
    if depth is not None:
        depth = require_positive_int(depth, "depth", optional=True)
    n_pairs = _check_pairs(n_pairs)
    positions = random_positions(n=n, m=m, size=2 * n_pairs, seed=seed)
    depth = n if depth is None else min(depth, n)
    kept = positions <= depth
    lengths = kept.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    import pyarrow as pa  # imported where it is used (start-up time)

    values = pa.array(positions[kept].astype(np.uint32))
    lists = pl.Series("positions", pa.ListArray.from_arrays(pa.array(offsets), values))
    rows = 2 * n_pairs
    return pl.DataFrame(
        {
            "system": np.tile(np.array(["a", "b"]), n_pairs),
            "query": np.repeat(np.arange(n_pairs, dtype=np.int64), 2),
            "positions": lists,
            "n_rel": np.full(rows, m, dtype=np.uint32),
            "n_ret": np.full(rows, depth, dtype=np.uint32),
        }
    )


def simulate_ties(
    measures: str | Iterable[str],
    *,
    n: int,
    m: int,
    n_pairs: int,
    seed: Seed,
    k: int | None = None,
) -> pl.DataFrame:
    """Monte Carlo tie rates of random complete rankings next to the closed forms.

    Draws ``n_pairs`` pairs of uniform rankings and counts the pairs a measure ties
    (TSE: equal p_m; RR: equal p_1; R@k and RP: equal counts in the top k or m; LR, LP:
    equal vectors). ``std_error`` = √(rate·(1 − rate)/n_pairs) of the estimate.

    Returns:
        ``measure, n, m, k, n_pairs, n_ties, tie_rate, std_error, closed_form``, one row
        per measure in the order given.

    >>> out = simulate_ties(["RP", "LR"], n=50, m=3, n_pairs=2000, seed=0)
    >>> out.select("measure", "closed_form").rows()  # RP: Σ_i hypergeom(50, 3, 3)(i)²
    [('RP', 0.7118...), ('LR', 5.10...e-05)]
    >>> bool(abs(out["tie_rate"][0] - out["closed_form"][0]) < 4 * out["std_error"][0])
    True
    """
    _check_pairs(n_pairs)
    rng = generator(seed)
    a = random_positions(n=n, m=m, size=n_pairs, seed=rng)
    b = random_positions(n=n, m=m, size=n_pairs, seed=rng)
    rows = []
    for measure in dict.fromkeys(as_list(measures)):
        name, cutoff = parse_tie_measure(measure, k)
        if name in ("LR", "LP"):
            tied = (a == b).all(axis=1)
        elif name == "TSE":
            tied = a[:, -1] == b[:, -1]
        elif name == "RR":
            tied = a[:, 0] == b[:, 0]
        else:
            top = m if name == "RP" else cutoff
            tied = (a <= top).sum(axis=1) == (b <= top).sum(axis=1)
        n_ties = int(tied.sum())
        rate = n_ties / n_pairs if n_pairs else float("nan")
        rows.append(
            {
                "measure": measure,
                "n": n,
                "m": m,
                "k": cutoff,
                "n_pairs": n_pairs,
                "n_ties": n_ties,
                "tie_rate": rate,
                "std_error": float(np.sqrt(rate * (1 - rate) / n_pairs)) if n_pairs else None,
                "closed_form": tie_probability(name, n=n, m=m, k=cutoff),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "measure": pl.String,
            "n": pl.Int64,
            "m": pl.Int64,
            "k": pl.Int64,
            "n_pairs": pl.Int64,
            "n_ties": pl.Int64,
            "tie_rate": pl.Float64,
            "std_error": pl.Float64,
            "closed_form": pl.Float64,
        },
    )
