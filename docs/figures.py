"""The figures of the documentation, drawn from the demo track.

They are files of the repository, ``docs/figures/<name>.png``, so that they show on the
repository's own pages as on the site; ``tests/test_docs.py`` draws them again and checks
that the files are current. Each figure is one ``lexiframe.plot`` function on
``lf.datasets.demo_track()``, the track of the [tutorial](tutorial.md); the code below is the
code a reader would write. Drawing needs matplotlib (``pip install 'lexiframe[plot]'``).

    python docs/figures.py docs/figures   # draw them again after a change
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

N_SAMPLES = 10  # label-degradation samples: enough for a standard-deviation band
FRACTIONS = [0.2, 0.4, 0.6, 0.8]


@cache
def _track() -> dict[str, Any]:
    import lexiframe as lf

    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)  # 2 queries not evaluated
        positions = track.run.lexi.positions(track.qrels, docs=True)
    prefs = positions.lexi.preferences(["sgnLP", "sgnLR"], extra=["first_difference"])
    metrics = positions.lexi.measures(["RR", "AP", "ASL"])
    asl = metrics.lexi.summarize().sort("ASL")["system"].to_list()
    return {
        "track": track,
        "positions": positions,
        "prefs": prefs,
        "metrics": metrics,
        "best": asl[0],
        "median": asl[len(asl) // 2],
    }


def asl_histogram(ax) -> None:
    from lexiframe import plot

    data = _track()
    plot.asl_histogram(data["positions"], system=data["best"], bins=25, ax=ax)


def asl_deltas(ax) -> None:
    from lexiframe import plot

    data = _track()
    plot.asl_delta_histogram(data["positions"], data["best"], data["median"], ax=ax)
    ax.set_title(f"per-document ASL: {data['best']} (best) − {data['median']} (median)")


def ties_by_recall_level(ax) -> None:
    from lexiframe import plot

    plot.ties_by_recall_level(_track()["positions"], levels=20, ax=ax)


def first_difference_ecdf(ax) -> None:
    from lexiframe import plot

    plot.first_difference_ecdf(_track()["prefs"], ax=ax)


def preference_matrix(ax) -> None:
    from lexiframe import plot

    prefs = _track()["prefs"]
    order = prefs.lexi.order("sgnLP")["system"].to_list()  # MC4, best first
    plot.preference_matrix(prefs.lexi.summarize(), "sgnLP", systems=order, values=True, ax=ax)


def orderings(ax) -> None:
    from lexiframe import plot

    data = _track()
    prefs, metrics = data["prefs"], data["metrics"]
    plot.orderings(
        {
            "MC4 sgnLP": prefs.lexi.order("sgnLP"),
            "Borda sgnLP": prefs.lexi.order("sgnLP", method="borda"),
            "MC4 sgnLR": prefs.lexi.order("sgnLR"),
            "mean RR": metrics.lexi.order("RR", method="mean"),
            "mean AP": metrics.lexi.order("AP", method="mean"),
        },
        ax=ax,
    )


def degradation(ax) -> None:
    import lexiframe as lf
    from lexiframe import plot, stats

    track = _track()["track"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)
        curve = stats.label_degradation(
            track.run, track.qrels, ["sgnLP", "sgnLR", "RR", "AP"], FRACTIONS,
            seed=0, n_samples=N_SAMPLES,
        )  # fmt: skip
    plot.degradation(curve, "agreement", n_samples=N_SAMPLES, ax=ax)
    ax.set_xlabel("fraction of relevant labels removed (uniformly)")


FIGURES: dict[str, tuple[Callable[[Any], None], tuple[float, float]]] = {
    "asl_histogram": (asl_histogram, (6.4, 4.0)),
    "asl_deltas": (asl_deltas, (6.4, 4.0)),
    "ties_by_recall_level": (ties_by_recall_level, (6.4, 4.0)),
    "first_difference_ecdf": (first_difference_ecdf, (6.4, 4.0)),
    "preference_matrix": (preference_matrix, (6.4, 5.6)),
    "orderings": (orderings, (7.2, 4.8)),
    "degradation": (degradation, (6.4, 4.4)),
}
"""Each figure: the function that draws it on an axes, and its size in inches."""


def draw(folder: Path) -> list[Path]:
    """Draw every figure into ``folder`` as ``<name>.png``; returns the files."""
    from matplotlib.figure import Figure

    from lexiframe import plot

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (function, size) in FIGURES.items():
        figure = Figure(figsize=size, dpi=plot.DPI, layout="constrained")
        function(figure.add_subplot())
        path = folder / f"{name}.png"
        figure.savefig(path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in draw(Path(sys.argv[1] if len(sys.argv) > 1 else "figures")):
        print(path)
