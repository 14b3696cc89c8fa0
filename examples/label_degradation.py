"""How robust are the measures to missing labels and to fewer queries?

Two studies on the bundled synthetic track, each averaged over seeded samples:

- label degradation (lexiprecision paper Figures 8a and 9, lexirecall paper Figures
  12-13): remove a fraction of the relevant labels of every query, uniformly or weighted by
  how many systems retrieved each document, and record per measure the fraction of tied
  ranking pairs and how often its preference keeps the sign it has with every label;
- query subsampling (lexiprecision paper Figure 8b): remove a fraction of the queries and
  record Kendall's τ between the system ordering on the remaining queries and the ordering
  on all of them, and the discriminative power left.

Writes ``lexiframe-output/label_degradation/`` under the current directory, with a plot of
agreement against the fraction removed when matplotlib is installed
(``pip install 'lexiframe[plot]'``):

    python examples/label_degradation.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl

import lexiframe as lf
from lexiframe import stats

OUT = Path("lexiframe-output") / "label_degradation"
MEASURES = ["sgnLP", "sgnLR", "RR", "AP"]
FRACTIONS = [0.2, 0.4, 0.6, 0.8]
N_SAMPLES = 10  # enough for a standard-deviation band
SEED = 0


def degrade(track: lf.datasets.Track) -> pl.DataFrame:
    """Ties and sign agreement with the full labels, per weighting, fraction and measure."""
    parts = []
    for weighting in ("uniform", "retrieved"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lf.DroppedQueriesWarning)  # 2 queries not evaluated
            curve = stats.label_degradation(
                track.run,
                track.qrels,
                MEASURES,
                FRACTIONS,
                seed=SEED,
                n_samples=N_SAMPLES,
                weighting=weighting,
            )
        parts.append(curve.select(pl.lit(weighting).alias("weighting"), pl.all()))
    return pl.concat(parts)


def subsample(positions: pl.DataFrame) -> pl.DataFrame:
    """Kendall's τ with the all-query ordering, and discriminative power, per fraction."""
    prefs = positions.lexi.preferences(["sgnLP"])
    metrics = positions.lexi.measures(["AP"])
    full = {"sgnLP": prefs.lexi.order("sgnLP"), "AP": metrics.lexi.order("AP", method="mean")}

    def analysis(fraction: float, rng: np.random.Generator) -> pl.DataFrame:
        kept = stats.subsample_queries(positions, fraction, seed=rng)
        sub_prefs = kept.lexi.preferences(["sgnLP"])
        sub_metrics = kept.lexi.measures(["AP"])
        sub = {
            "sgnLP": sub_prefs.lexi.order("sgnLP"),
            "AP": sub_metrics.lexi.order("AP", method="mean"),
        }
        power = pl.concat(
            [
                stats.discriminative_power(sub_prefs, ["sgnLP"]),
                stats.discriminative_power(sub_metrics, ["AP"]),
            ]
        ).select("measure", "discriminative_power")
        taus = pl.concat(
            [
                stats.kendall_tau(
                    stats.system_scores({"all": full[name], "subsample": sub[name]}),
                    "all",
                    ["subsample"],
                ).select(pl.lit(name).alias("measure"), "tau")
                for name in full
            ]
        )
        return taus.join(power, on="measure").with_columns(n_queries=kept["query"].n_unique())

    curve = stats.degradation_curve(analysis, FRACTIONS, seed=SEED, n_samples=N_SAMPLES)
    return stats.average_over_samples(curve, keys=["measure", "n_queries"])


def plot_agreement(labels: pl.DataFrame, queries: pl.DataFrame, path: Path) -> bool:
    """Agreement against the fraction removed, with a band of ± one standard deviation over
    the samples (Kendall's τ clipped to [−1, 1]).

    Returns False, drawing nothing, when matplotlib is not installed.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return False
    from lexiframe import plot

    figure = Figure(figsize=(12, 4), dpi=plot.DPI, layout="constrained")
    axes = figure.subplots(1, 3)
    for ax, weighting in zip(axes[:2], ("uniform", "retrieved"), strict=True):
        part = labels.filter(pl.col("weighting") == weighting)
        plot.degradation(part, "agreement", n_samples=N_SAMPLES, ax=ax)
        ax.set_title(f"relevant labels removed ({weighting})")
        ax.set_xlabel("fraction of relevant labels removed")
    plot.degradation(queries, "tau", n_samples=N_SAMPLES, ax=axes[2])
    axes[2].set_title("queries removed")
    axes[2].set_xlabel("fraction of queries removed")
    axes[2].set_ylabel("Kendall's τ with the ordering on all queries")
    figure.savefig(path)
    return True


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)
        positions = track.run.lexi.positions(track.qrels)

    labels = degrade(track)
    print(labels)
    labels.write_parquet(OUT / "label_degradation.parquet")

    queries = subsample(positions)
    print(queries)
    queries.write_parquet(OUT / "query_subsampling.parquet")

    if not plot_agreement(labels, queries, OUT / "agreement.png"):
        print("matplotlib is not installed: no plot (pip install 'lexiframe[plot]')")
    print(f"results written to {OUT}/")


if __name__ == "__main__":
    main()
