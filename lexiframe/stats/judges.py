"""A second, synthetic qrels with a known bias and noise: a stand-in for a language model.

:func:`simulated_judge` labels the pool of a run (its top ``depth`` documents per ranking)
and every document the human qrels judge, from the human grade (0 where the human did not
judge) moved by a known ``bias``, Gaussian ``noise`` and, optionally, an extra bias for
the documents some systems retrieve (a judge that favours them). Studies of LLM
judgments report exactly these effects: a lenient judge (more false positives: Otero,
Parapar and Barreiro 2024), noise on the grades (Faggioli et al., ICTIR 2023) and
systems favoured by a judge close to them; with the truth known, an analysis can be
checked to recover them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from lexiframe.errors import InputError
from lexiframe.io.layouts import trec_rank
from lexiframe.stats._common import Seed, check_fraction, eager, generator, require_table
from lexiframe.validate import require_columns, require_positive_int


def simulated_judge(
    qrels: pl.DataFrame | pl.LazyFrame,
    run: pl.DataFrame | pl.LazyFrame,
    *,
    seed: Seed,
    bias: float = 0.0,
    noise: float = 0.5,
    unjudged: float = 0.0,
    depth: int = 20,
    favoured: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """Qrels of a synthetic judge: round(grade + bias + favour + noise·Z), clipped.

    The judged documents are the union of the human qrels' and the top ``depth`` of each
    ranking of ``run`` (trec_eval's order: score descending, then doc id descending);
    the grade of a document the human did not judge is 0. Z is standard normal, drawn
    from ``seed`` (an integer or a ``numpy.random.Generator``) in the (query, doc) order,
    so the same seed gives the same qrels. ``favour`` is the largest ``favoured[system]``
    over the systems whose top ``depth`` holds the document (0 for the others). The result
    is rounded to a whole grade and clipped to [0, the largest human grade]; then a
    uniform ``unjudged`` share of the labels is dropped (a judge that failed to answer).

    Returns:
        ``query, doc, relevance`` (Int64), sorted by ``query, doc``.

    >>> import polars as pl
    >>> qrels = pl.DataFrame({"query": ["1"] * 3, "doc": list("abc"), "relevance": [0, 1, 2]})
    >>> run = pl.DataFrame({"system": ["x"] * 3, "query": ["1"] * 3, "doc": list("abd"),
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> simulated_judge(qrels, run, seed=0, noise=0.0, bias=1.0).rows()
    [('1', 'a', 1), ('1', 'b', 2), ('1', 'c', 2), ('1', 'd', 1)]
    """
    rng = generator(seed)
    unjudged = check_fraction(unjudged, "unjudged")
    depth = require_positive_int(depth, "depth")
    for name, value in (("bias", bias), ("noise", noise)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise InputError(
                f"{name} must be a finite number of grades, e.g. {name}=0.5, not {value!r}"
            )
    if noise < 0:
        raise InputError(
            f"noise is a standard deviation and cannot be negative, e.g. noise=0.5, not {noise!r}"
        )
    human = eager(qrels, "qrels")
    require_columns(human.schema, ["query", "doc", "relevance"], "qrels")
    table = eager(run, "run")
    require_table(
        table.schema,
        ["system", "query", "doc", "score"],
        "run",
        "Pass the run the judge pools, e.g. lf.read_run(...) or lf.datasets.demo_track().run.",
    )
    pooled = (
        table.select(
            "system", pl.col("query").cast(pl.String), pl.col("doc").cast(pl.String), "score"
        )
        .filter(trec_rank() <= depth)
        .with_columns(
            favour=pl.col("system").replace_strict(
                dict(favoured or {}), default=0.0, return_dtype=pl.Float64
            )
        )
        .group_by("query", "doc")
        .agg(pl.col("favour").max())
    )
    labels = human.select(
        pl.col("query").cast(pl.String), pl.col("doc").cast(pl.String), "relevance"
    )
    top = int(labels["relevance"].max() or 0)  # type: ignore[arg-type]
    pool = (
        labels.join(pooled, on=["query", "doc"], how="full", coalesce=True)
        .with_columns(pl.col("relevance").fill_null(0), pl.col("favour").fill_null(0.0))
        .sort("query", "doc")
    )
    latent = (
        pool["relevance"].cast(pl.Float64).to_numpy()
        + bias
        + pool["favour"].to_numpy()
        + noise * rng.standard_normal(pool.height)
    )
    grade = np.clip(np.round(latent), 0, max(top, 1)).astype(np.int64)
    kept = rng.random(pool.height) >= unjudged
    return pool.select("query", "doc", pl.Series("relevance", grade, dtype=pl.Int64)).filter(
        pl.Series(kept)
    )
