"""Plots of the papers' figures, drawn on matplotlib axes (``pip install 'lexiframe[plot]'``).

Every function takes the frame it plots (a positions frame, a preferences table, a pair
summary or system orderings), draws on ``ax`` (a new figure's axes when ``ax`` is None)
and returns the axes. Nothing is shown: call ``ax.figure.savefig(...)`` or ``plt.show()``
yourself. matplotlib is imported when a function runs, never when lexiframe is imported.
The plotted numbers come from :mod:`lexiframe.stats` (:func:`lexiframe.stats.asl_deltas`,
:func:`lexiframe.stats.tie_fraction_by_level`, :func:`lexiframe.stats.first_difference_ecdf`):
these functions only draw them.

- :func:`asl_histogram`: relevant documents by per-document ASL for one system (atomized
  search length paper, figure 5);
- :func:`asl_delta_histogram`: per-document ASL changes between two systems (figure 6);
- :func:`ties_by_recall_level`: the fraction of ranking pairs tied at each recall level,
  δRR_i = 0 (lexiprecision paper §3.6, figure 5);
- :func:`first_difference_ecdf`: the ECDF of i*, the recall levels lexiprecision needs to
  decide (lexiprecision paper §3.6, figure 6);
- :func:`preference_matrix`: mean pairwise preferences as a heatmap;
- :func:`orderings`: several system orderings side by side (a bump chart);
- :func:`degradation`: a measure's agreement, ties or Kendall's τ as labels or queries are
  removed, with a band of ± one standard deviation over the samples (lexiprecision paper
  figures 8–9, lexirecall paper figures 12–13).

Figures made here (``ax=None``) have a title, integer ticks on integer axes, and a
resolution of :data:`DPI` dots per inch, which ``savefig`` uses unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from lexiframe import stats
from lexiframe._utils import as_list, plural, quote_names
from lexiframe.errors import InputError
from lexiframe.evaluation import RANKING_COLUMNS
from lexiframe.metrics import exprs
from lexiframe.validate import POSITION_MAX, require_columns, require_positive_int

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Bins = int | Sequence[float]

__all__ = [
    "DPI",
    "asl_delta_histogram",
    "asl_deltas",
    "asl_histogram",
    "degradation",
    "first_difference_ecdf",
    "orderings",
    "preference_matrix",
    "ties_by_recall_level",
]


def _pyplot() -> Any:
    """matplotlib.pyplot, or an ImportError saying what to install."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "lexiframe.plot needs matplotlib: pip install 'lexiframe[plot]' "
            "(or pip install matplotlib)"
        ) from error
    return plt


DPI = 150
"""Dots per inch of the figures the plot functions make: what ``savefig`` writes by default."""


def _axes(ax: Axes | None) -> Axes:
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(dpi=DPI, layout="constrained")
    return ax


ROW_INCHES = 0.16
"""The height of one system's row (and width of its column) in a figure made for many
systems: a 60-system preference matrix is 9.6 inches square, its labels about 6.5 pt."""
_SMALLEST_FIGURE = 4.8  # inches: matplotlib's default height, kept for a few systems
_LABEL_SHARE = 0.6  # of a row's height, in points, for its label's font size


def _sized_axes(ax: Axes | None, rows: int, columns: int | None = None) -> Axes:
    """Axes for ``rows`` systems (and ``columns``, a square when None): a new figure grows
    with them so that each label keeps its row; given axes are used as they are."""
    if ax is not None:
        return ax
    plt = _pyplot()
    height = max(_SMALLEST_FIGURE, rows * ROW_INCHES + 1.5)
    width = height + 1.2 if columns is None else max(6.4, columns * 1.2 + 2.0)
    _, ax = plt.subplots(figsize=(width, height), dpi=DPI, layout="constrained")
    return ax


def _row_points(ax: Axes, rows: int) -> float:
    """The font size (points) that fits one of ``rows`` rows of the axes, at most 10."""
    inches = ax.bbox.height / ax.figure.dpi
    return float(np.clip(inches / max(rows, 1) * 72 * _LABEL_SHARE, 3.0, 10.0))


def _integer_ticks(axis: Any) -> None:
    """Ticks only at whole numbers (counts, ranks, recall levels)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _eager(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _one_system(positions: pl.DataFrame, system: str | None) -> str:
    systems = positions["system"].unique().sort().to_list()
    if system is None:
        if len(systems) != 1:
            raise InputError(
                f"the positions frame holds {plural(len(systems), 'system')}; choose one with "
                f"system= (e.g. {quote_names(systems[:3])})"
            )
        return str(systems[0])
    if system not in systems:
        raise InputError(f"no system {system!r} in the positions frame")
    return system


def _bars(ax: Axes, values: np.ndarray, bins: Bins, **bar: Any) -> Axes:
    counts, edges = np.histogram(values, bins=bins)
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", **bar)
    return ax


# --- atomized search length -----------------------------------------------------------------


def asl_histogram(
    positions: pl.DataFrame | pl.LazyFrame,
    *,
    system: str | None = None,
    bins: Bins = 20,
    ax: Axes | None = None,
    **bar: Any,
) -> Axes:
    """Relevant documents by per-document ASL, for one system (ASL paper §4.5, figure 5).

    Each relevant document of each evaluated query counts once: a retrieved one with the
    irrelevant documents ranked above it plus one, an unretrieved one with ñ − r, and each
    one of a skipped query with the depth (:func:`lexiframe.metrics.exprs.asl`); the
    unretrieved ones pile up in the rightmost bars.

    Args:
        positions: a positions frame (system, query, positions, n_rel, n_ret).
        system: the system to plot; may be omitted when the frame holds one system.
        bins: number of equal-width bins, or the bin edges (as ``numpy.histogram``).
        ax: the axes to draw on; a new figure's when None.
        **bar: passed to ``Axes.bar`` (color, alpha, …).

    Returns:
        The axes, with one bar per bin whose height is the number of relevant documents.
    """
    frame = _eager(positions)
    require_columns(frame.schema, ["system", "positions", "n_rel", "n_ret"], "positions")
    name = _one_system(frame, system)
    # A skipped query scores the depth, found over every system of the frame.
    query_keys = [key for key in frame.columns if key not in RANKING_COLUMNS and key != "system"]
    depth = exprs.skipped_depth(frame.columns, query_keys)
    values = (
        frame.with_columns(_depth=depth)
        .filter(pl.col("system") == name)
        .select(exprs.asl(depth="_depth").alias("asl"))
        .explode("asl")["asl"]
        .drop_nulls()
        .to_numpy()
    )
    ax = _axes(ax)
    _bars(ax, values, bins, **bar)
    ax.set_xlabel("per-document ASL (irrelevant documents above, plus one)")
    ax.set_ylabel("relevant documents")
    _integer_ticks(ax.yaxis)
    ax.set_title(f"{name}: per-document ASL")
    return ax


def asl_deltas(
    positions: pl.DataFrame | pl.LazyFrame,
    system: str,
    baseline: str,
    *,
    by: str | Sequence[str] | None = None,
) -> np.ndarray:
    """Per-document ASL of ``system`` minus that of ``baseline``, one value per relevant
    document of each query (negative: ``system`` ranks it higher).

    The ``delta`` column of :func:`lexiframe.stats.asl_deltas` (``system_a=system``,
    ``system_b=baseline``), in its order: documents are matched by id, so the positions
    frame needs the ``docs`` column (``run.lexi.positions(qrels, docs=True)``), and both
    systems must have the same queries. A relevant document that a system did not retrieve
    scores ñ − r for it, as in :func:`lexiframe.metrics.exprs.asl`.

    Example:
        >>> import polars as pl
        >>> pos = pl.DataFrame({"system": ["a", "b"], "query": ["q", "q"],
        ...                     "positions": [[1, 4], [2]], "docs": [["x", "y"], ["y"]],
        ...                     "n_rel": [3, 3], "n_ret": [10, 5]},
        ...                    schema_overrides={"positions": pl.List(pl.UInt32),
        ...                                      "n_rel": pl.UInt32, "n_ret": pl.UInt32})
        >>> sorted(asl_deltas(pos, "a", "b").tolist())
        [-3.0, 1.0, 4.0]
    """
    return stats.asl_deltas(positions, system, baseline, by=by)["delta"].to_numpy()


def asl_delta_histogram(
    positions: pl.DataFrame | pl.LazyFrame,
    system: str,
    baseline: str,
    *,
    by: str | Sequence[str] | None = None,
    bins: Bins = 21,
    ax: Axes | None = None,
    **bar: Any,
) -> Axes:
    """Relevant documents by per-document ASL change, ``system`` minus ``baseline``
    (ASL paper §4.5, figure 6: best system minus median system).

    Negative changes are documents ``system`` ranks higher (wins), positive ones losses.
    The values are :func:`asl_deltas`; the positions frame needs ``docs=True``.

    Args:
        positions: a positions frame with the ``docs`` column.
        system: the system compared.
        baseline: the system it is compared with.
        by: extra key columns of the frame (e.g. ``"track"``).
        bins: number of equal-width bins, symmetric around 0 by default, or the bin edges.
        ax: the axes to draw on; a new figure's when None.
        **bar: passed to ``Axes.bar``.

    Returns:
        The axes, with one bar per bin whose height is the number of relevant documents.
    """
    deltas = asl_deltas(positions, system, baseline, by=by)
    edges: Bins = bins
    if isinstance(bins, int):
        reach = max(float(np.abs(deltas).max()) if deltas.size else 0.0, 0.5)
        edges = np.linspace(-reach, reach, bins + 1).tolist()
    ax = _axes(ax)
    _bars(ax, deltas, edges, **bar)
    ax.axvline(0.0, color="0.3", linewidth=0.8)
    ax.set_xlabel(f"per-document ASL change ({system} − {baseline}; < 0: {system} wins)")
    ax.set_ylabel("relevant documents")
    _integer_ticks(ax.yaxis)
    ax.set_title(f"per-document ASL: {system} − {baseline}")
    return ax


# --- ties and recall levels -----------------------------------------------------------------


def _label(group: tuple[object, ...]) -> str:
    return " / ".join(str(value) for value in group)


def ties_by_recall_level(
    positions: pl.DataFrame | pl.LazyFrame,
    *,
    levels: int = 20,
    by: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    **line: Any,
) -> Axes:
    """Fraction of ranking pairs tied at each recall level i, δRR_i = 0 (lexiprecision paper
    §3.6, figure 5).

    The values are :func:`lexiframe.stats.tie_fraction_by_level`: ranking pairs are every
    two systems of a query, and a pair counts at level i only when its query has at least
    i relevant documents; a level that neither ranking reaches is a tie (both reciprocal
    ranks are 0). A group's line stops at its last such level.

    Args:
        positions: a positions frame.
        levels: recall levels 1 … ``levels`` on the x axis.
        by: group keys (e.g. ``"track"``): one line per group.
        ax: the axes to draw on; a new figure's when None.
        **line: passed to ``Axes.plot``.

    Returns:
        The axes, with one line per group: x the levels, y the fraction of tied pairs.
    """
    levels = require_positive_int(levels, "levels", maximum=POSITION_MAX)
    keys = as_list(by)
    table = stats.tie_fraction_by_level(positions, max_level=levels, by=keys)
    ax = _axes(ax)
    for group, part in _by_group(table, keys):
        ax.plot(
            part["level"].to_numpy(),
            part["tie_fraction"].to_numpy(),
            marker="o",
            label=_label(group) if keys else None,
            **line,
        )
    ax.set_xlabel("recall level i")
    ax.set_ylabel(r"fraction of ranking pairs with $\delta\mathrm{RR}_i = 0$")
    ax.set_ylim(0.0, 1.0)
    _integer_ticks(ax.xaxis)
    ax.set_title("ties by recall level")
    if keys:
        ax.legend()
    return ax


def _by_group(
    table: pl.DataFrame, keys: list[str]
) -> list[tuple[tuple[object, ...], pl.DataFrame]]:
    """The rows of each (by…) group, groups in sorted key order; one group without keys."""
    if not keys:
        return [((), table)]
    return sorted(table.partition_by(keys, as_dict=True, maintain_order=True).items())


def first_difference_ecdf(
    prefs: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    **line: Any,
) -> Axes:
    """ECDF of i*, the recall level needed to distinguish two rankings (lexiprecision paper
    §3.6, figure 6).

    Args:
        prefs: a preferences table with the ``first_difference`` column:
            ``positions.lexi.preferences(extra=["first_difference"])``. Pairs with identical
            position vectors (null i*) are left out: no level distinguishes them. The
            values are :func:`lexiframe.stats.first_difference_ecdf`.
        by: group keys (e.g. ``"track"``): one line per group.
        ax: the axes to draw on; a new figure's when None.
        **line: passed to ``Axes.step``.

    Returns:
        The axes, with one step line per group: x the recall levels, y the fraction of
        distinguished pairs decided at that level or before.
    """
    keys = as_list(by)
    table = stats.first_difference_ecdf(prefs, by=keys)
    ax = _axes(ax)
    for group, part in _by_group(table, keys):
        x, y = part["level"].to_numpy(), part["ecdf"].to_numpy()
        ax.step(x, y, where="post", label=_label(group) if keys else None, **line)
    ax.set_xlabel("recall level needed, i*")
    ax.set_ylabel("fraction of distinguished ranking pairs")
    ax.set_ylim(0.0, 1.0)
    _integer_ticks(ax.xaxis)
    ax.set_title("recall levels needed to decide (ECDF of i*)")
    if keys:
        ax.legend()
    return ax


# --- preferences and orderings --------------------------------------------------------------


def preference_matrix(
    summary: pl.DataFrame | pl.LazyFrame,
    measure: str = "sgnLP",
    *,
    systems: Sequence[str] | None = None,
    ax: Axes | None = None,
    colorbar: bool = True,
    cmap: str = "RdBu",
    values: bool = False,
    fmt: str = "{:.2f}",
) -> Axes:
    """Mean pairwise preferences as a heatmap: the cell (row a, column b) is the mean
    preference of a over b.

    Args:
        summary: a pair summary, ``lexiframe.summarize_preferences(prefs)``, of one group
            (filter a ``by`` group first). Only pairs a < b are needed: preferences are
            antisymmetric, so the cell (b, a) is minus the cell (a, b); the diagonal is 0.
        measure: the preference column (``sgnLP``, ``rrLP``, ``sgnLR``, …).
        systems: the row and column order, e.g. an ordering's ``system`` column; by default
            the systems sorted by name.
        ax: the axes to draw on; a new figure's when None.
        colorbar: add a colour bar next to the axes, labelled with what the colour means.
        cmap: a diverging colour map, centred on 0.
        values: print each cell's value in it.
        fmt: the format of the printed values.

    Returns:
        The axes, with the image (``ax.images[0]``) holding the matrix. A new figure
        grows with the number of systems (:data:`ROW_INCHES` per system), and the labels
        and printed values shrink to their row, so that 60 systems stay readable.
    """
    frame = _eager(summary)
    require_columns(frame.schema, ["system_a", "system_b", measure], "pair summary")
    if frame.select(pl.struct("system_a", "system_b").is_duplicated().any()).item():
        raise InputError(
            "the pair summary has several rows for one (system_a, system_b): plot one by "
            "group at a time (filter it first)"
        )
    names = sorted(set(frame["system_a"].to_list()) | set(frame["system_b"].to_list()))
    order = list(systems) if systems is not None else names
    unknown = sorted(set(names) - set(order))
    if unknown:
        raise InputError(f"systems= leaves out {quote_names(unknown)}")
    index = {name: i for i, name in enumerate(order)}
    a = frame["system_a"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    b = frame["system_b"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    value = frame[measure].cast(pl.Float64).to_numpy()
    matrix = np.zeros((len(order), len(order)))
    matrix[a, b] = value
    matrix[b, a] = -value
    reach = float(np.abs(matrix).max()) or 1.0
    ax = _sized_axes(ax, len(order))
    image = ax.imshow(matrix, cmap=cmap, vmin=-reach, vmax=reach)
    size = _row_points(ax, len(order))
    ax.set_xticks(range(len(order)), labels=order, rotation=90, fontsize=size)
    ax.set_yticks(range(len(order)), labels=order, fontsize=size)
    ax.set_xlabel("system b")
    ax.set_ylabel("system a")
    ax.set_title(f"mean {measure} of a over b")
    if values:
        for (row, column), value in np.ndenumerate(matrix):
            dark = abs(value) > 0.6 * reach  # the strong ends of the colour map
            ax.text(
                column,
                row,
                fmt.format(value),
                ha="center",
                va="center",
                fontsize=size * 0.55,  # "-0.25" fits its cell's width
                color="white" if dark else "black",
            )
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax)
        bar.set_label(f"mean {measure} of a over b (> 0: a preferred)")
    return ax


def orderings(
    frames: Mapping[str, pl.DataFrame | pl.LazyFrame],
    *,
    ax: Axes | None = None,
    **line: Any,
) -> Axes:
    """Several orderings of the same systems side by side (a bump chart).

    Args:
        frames: a label per ordering (e.g. ``"MC4 sgnLP"``, ``"mean AP"``) and the frame
            :func:`lexiframe.order` returned (``system``, ``rank``), for one group.
        ax: the axes to draw on; a new figure's when None.
        **line: passed to ``Axes.plot``.

    Returns:
        The axes: one line per system (labelled by the system), x the orderings in the
        given order, y the rank (rank 1 at the top). A new figure grows with the number of
        systems (:data:`ROW_INCHES` per rank) and the labels shrink to their row.
    """
    if not frames:
        raise InputError("orderings() needs at least one ordering")
    labels = list(frames)
    ranks: dict[str, dict[str, int]] = {}
    for label, frame in frames.items():
        table = _eager(frame)
        require_columns(table.schema, ["system", "rank"], "ordering")
        if table["system"].is_duplicated().any():
            raise InputError(
                f"ordering {label!r} ranks a system twice: plot one by group at a time"
            )
        ranks[label] = dict(zip(table["system"].to_list(), table["rank"].to_list(), strict=True))
    systems = sorted(ranks[labels[0]], key=ranks[labels[0]].__getitem__)
    for label in labels[1:]:
        if set(ranks[label]) != set(systems):
            raise InputError(f"ordering {label!r} does not hold the same systems as {labels[0]!r}")
    ax = _sized_axes(ax, len(systems), len(labels))
    size = _row_points(ax, len(systems))
    marker = min(6.0, size * 0.6)
    x = np.arange(len(labels))
    for system in systems:
        y = [ranks[label][system] for label in labels]
        ax.plot(x, y, marker="o", markersize=marker, label=system, **line)
        ax.annotate(
            system, (x[-1], y[-1]), xytext=(6, 0), textcoords="offset points", va="center",
            fontsize=size,
        )  # fmt: skip
    ax.set_xticks(x, labels=labels)
    ax.set_ylabel("rank")
    ax.set_yticks(range(1, len(systems) + 1))
    ax.tick_params(axis="y", labelsize=size)
    ax.set_ylim(len(systems) + 0.5, 0.5)
    ax.set_xlim(-0.3, len(labels) - 0.4)
    ax.set_title("system orderings")
    return ax


# --- degradation ----------------------------------------------------------------------------

_RANGES = {"tau": (-1.0, 1.0)}
_LABELS = {
    "agreement": "agreement with all labels",
    "tie_fraction": "fraction of tied ranking pairs",
    "tau": "Kendall's τ with the full ordering",
    "discriminative_power": "discriminative power",
}


def degradation(
    curve: pl.DataFrame | pl.LazyFrame,
    value: str = "agreement",
    *,
    n_samples: int | None = None,
    ax: Axes | None = None,
    **line: Any,
) -> Axes:
    """A value against the fraction removed, one line per measure, with a band of ± one
    standard deviation over the samples (lexiprecision paper figures 8–9, lexirecall paper
    figures 12–13).

    The band says how much the value varies from one random removal to the next; it is
    clipped to the value's range ([−1, 1] for Kendall's τ, [0, 1] for fractions), which a
    mean ± std can overstep. A band needs several samples: with fewer than 2 (std null)
    only the line is drawn.

    Args:
        curve: ``fraction, measure, <value>, <value>_std``, as
            :func:`lexiframe.stats.label_degradation` returns it or
            :func:`lexiframe.stats.average_over_samples` makes it; one group only.
        value: the column to plot: ``agreement``, ``tie_fraction``, ``tau``, …
        n_samples: how many samples the means are over, said in the legend when given.
        ax: the axes to draw on; a new figure's when None.
        **line: passed to ``Axes.plot``.

    Returns:
        The axes: x the fraction removed, y the mean value, one line and band per measure.
    """
    table = _eager(curve)
    spread = f"{value}_std"
    require_columns(table.schema, ["fraction", "measure", value], "degradation curve")
    low, high = _RANGES.get(value, (0.0, 1.0))
    ax = _axes(ax)
    for (measure,), part in sorted(table.partition_by("measure", as_dict=True).items()):
        part = part.sort("fraction")
        x = part["fraction"].to_numpy()
        y = part[value].to_numpy().astype(float)
        (drawn,) = ax.plot(x, np.clip(y, low, high), marker="o", label=measure, **line)
        if spread in part.columns and part[spread].null_count() < part.height:
            std = part[spread].fill_null(0.0).to_numpy().astype(float)
            ax.fill_between(
                x,
                np.clip(y - std, low, high),
                np.clip(y + std, low, high),
                color=drawn.get_color(),
                alpha=0.15,
                linewidth=0,
            )
    ax.set_ylim(low - 0.02 * (high - low), high + 0.02 * (high - low))
    ax.set_xlabel("fraction removed")
    ax.set_ylabel(_LABELS.get(value, value))
    band = "band: ± one standard deviation"
    band += f" over {n_samples} samples" if n_samples else " over the samples"
    ax.set_title(f"{_LABELS.get(value, value)} as data is removed")
    ax.legend(title=band, title_fontsize="small", fontsize="small")
    return ax
