"""Atomized search length per system, and the per-document plots of the ASL paper.

ASL and ASL@g1-10 per system on the bundled synthetic track; the histogram of per-document
ASL of the best system (paper figure 5) and of the per-document changes between the best
and the median system (figure 6), saved as PNG. Needs matplotlib
(``pip install 'lexiframe[plot]'``). Writes ``lexiframe-output/asl_analysis/`` under the
current directory:

    python examples/asl_analysis.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import lexiframe as lf
from lexiframe import plot

try:
    from matplotlib.figure import Figure
except ImportError:  # the plot extra is not installed
    sys.exit(
        "examples/asl_analysis.py draws figures with matplotlib: pip install 'lexiframe[plot]'"
    )

OUT = Path("lexiframe-output") / "asl_analysis"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)
        positions = track.run.lexi.positions(track.qrels, docs=True)

    # ASL is a cost: lower is better, 1 is the best a relevant document can score.
    means = positions.lexi.measures(["ASL", "ASL@g1-10", "AP"]).lexi.summarize().sort("ASL")
    print(means)
    means.write_parquet(OUT / "asl_per_system.parquet")
    systems = means["system"].to_list()
    best, median = systems[0], systems[len(systems) // 2]

    figure = Figure(figsize=(6, 4), dpi=plot.DPI, layout="constrained")
    plot.asl_histogram(positions, system=best, bins=25, ax=figure.add_subplot())
    figure.savefig(OUT / "asl_histogram.png")

    figure = Figure(figsize=(6, 4), dpi=plot.DPI, layout="constrained")
    ax = plot.asl_delta_histogram(positions, best, median, ax=figure.add_subplot())
    ax.set_title(f"per-document ASL: {best} (best) − {median} (median)")
    figure.savefig(OUT / "asl_deltas.png")
    print(f"best {best}, median {median}; plots written to {OUT}/")


if __name__ == "__main__":
    main()
