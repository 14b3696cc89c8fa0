"""The plots draw the data of the papers' figures: bar heights and line data are checked."""

from __future__ import annotations

import itertools
import subprocess
import sys
import warnings
from collections import defaultdict

import numpy as np
import polars as pl
import pytest

import lexiframe as lf
from lexiframe import plot

POSITIONS_SCHEMA = {"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32}


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


@pytest.fixture
def ax(plt):
    _, axes = plt.subplots()
    return axes


def heights(ax) -> list[float]:
    return [patch.get_height() for patch in ax.patches]


def toy_positions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["a", "b", "c", "a", "b", "c"],
            "query": ["1", "1", "1", "2", "2", "2"],
            "positions": [[1, 3], [1, 4], [2], [2], [2], [1]],
            "n_rel": [3, 3, 3, 1, 1, 1],
            "n_ret": [5, 10, 10, 5, 5, 5],
        },
        schema_overrides=POSITIONS_SCHEMA,
    )


def test_plot_module_does_not_import_matplotlib():
    code = "import sys, lexiframe.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'lexiframe\[plot\]'"):
        plot.asl_histogram(toy_positions(), system="a")


def test_asl_histogram_counts_every_relevant_document(ax):
    # system a: query 1 -> [1, 3 - 1, 5 - 2] = [1, 2, 3]; query 2 -> [2]
    out = plot.asl_histogram(toy_positions(), system="a", bins=[0.5, 1.5, 2.5, 3.5], ax=ax)
    assert out is ax
    assert heights(ax) == [1, 2, 1]
    assert [patch.get_x() for patch in ax.patches] == [0.5, 1.5, 2.5]


def test_asl_histogram_counts_a_skipped_query_at_the_depth(ax):
    # system d skipped query 1 (3 relevant documents): the longest ranking of query 1 holds
    # 10 documents, so each scores 10; query 2 -> [1].
    frame = pl.concat(
        [
            toy_positions(),
            pl.DataFrame(
                {
                    "system": ["d", "d"],
                    "query": ["1", "2"],
                    "positions": [[], [1]],
                    "n_rel": [3, 1],
                    "n_ret": [0, 5],
                },
                schema_overrides=POSITIONS_SCHEMA,
            ),
        ]
    )
    plot.asl_histogram(frame, system="d", bins=[0.5, 1.5, 9.5, 10.5], ax=ax)
    assert heights(ax) == [1, 0, 3]


def test_asl_histogram_needs_a_system_when_there_are_several(ax):
    with pytest.raises(ValueError, match="system="):
        plot.asl_histogram(toy_positions(), ax=ax)
    with pytest.raises(ValueError, match="no system 'z'"):
        plot.asl_histogram(toy_positions(), system="z", ax=ax)


def test_asl_histogram_makes_axes_without_showing(plt):
    before = plt.get_fignums()
    ax = plot.asl_histogram(toy_positions().filter(pl.col("system") == "b"))
    assert len(plt.get_fignums()) == len(before) + 1
    assert sum(heights(ax)) == 4  # 3 + 1 relevant documents


def reference_deltas(track, frame, system, baseline):
    """Per-document ASL, matched by document id over all relevant documents of the qrels."""
    relevant = defaultdict(set)
    for query, doc, grade in track.qrels.iter_rows():
        if grade >= 1:
            relevant[query].add(doc)
    rows = {(row["system"], row["query"]): row for row in frame.iter_rows(named=True)}
    longest = defaultdict(int)  # a skipped query scores the longest ranking of the query
    for row in rows.values():
        longest[row["query"]] = max(longest[row["query"]], row["n_ret"])
    deltas = []
    for query in sorted(frame["query"].unique()):
        values = []
        for name in (system, baseline):
            row = rows[(name, query)]
            pairs = enumerate(zip(row["docs"], row["positions"], strict=True))
            score = {doc: p - i for i, (doc, p) in pairs}
            missing = row["n_ret"] - len(row["positions"]) if row["n_ret"] else longest[query]
            values.append({doc: score.get(doc, missing) for doc in relevant[query]})
        deltas += [values[0][doc] - values[1][doc] for doc in relevant[query]]
    return np.array(deltas, dtype=float)


def test_asl_deltas_match_documents_by_id(ax):
    track = lf.datasets.demo_track()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.DroppedQueriesWarning)
        frame = track.run.lexi.positions(track.qrels, docs=True)
    expected = reference_deltas(track, frame, "sys005", "sys002")
    got = plot.asl_deltas(frame, "sys005", "sys002")
    assert np.array_equal(np.sort(got), np.sort(expected))
    edges = np.linspace(-100, 100, 11)
    plot.asl_delta_histogram(frame, "sys005", "sys002", bins=edges, ax=ax)
    assert heights(ax) == np.histogram(expected, bins=edges)[0].tolist()


def test_asl_deltas_need_the_docs_column():
    with pytest.raises(lf.SchemaError, match="docs=True"):
        plot.asl_deltas(toy_positions(), "a", "b")


def test_asl_delta_histogram_default_bins_are_symmetric(ax):
    frame = pl.DataFrame(
        {
            "system": ["a", "b"],
            "query": ["q", "q"],
            "positions": [[1, 4], [2]],
            "docs": [["x", "y"], ["y"]],
            "n_rel": [3, 3],
            "n_ret": [10, 5],
        },
        schema_overrides=POSITIONS_SCHEMA,
    )
    plot.asl_delta_histogram(frame, "a", "b", bins=4, ax=ax)  # deltas -3, 1, 4
    assert [patch.get_x() for patch in ax.patches] == [-4.0, -2.0, 0.0, 2.0]
    assert heights(ax) == [1, 0, 1, 1]


def test_ties_by_recall_level(ax):
    # query 1 (3 relevant): (a, b) tie at 1 and 3; (a, c) and (b, c) tie at 3 only.
    # query 2 (1 relevant): (a, b) tie at 1; it counts at level 1 only (n_rel >= i).
    plot.ties_by_recall_level(toy_positions(), levels=3, ax=ax)
    (line,) = ax.lines
    assert line.get_xdata().tolist() == [1, 2, 3]
    assert np.allclose(line.get_ydata(), [2 / 6, 0 / 3, 3 / 3])


def test_ties_by_recall_level_one_line_per_group(ax):
    frame = pl.concat(
        [
            toy_positions().with_columns(track=pl.lit("t1")),
            toy_positions().filter(pl.col("query") == "2").with_columns(track=pl.lit("t2")),
        ]
    )
    plot.ties_by_recall_level(frame, levels=2, by="track", ax=ax)
    assert [line.get_label() for line in ax.lines] == ["t1", "t2"]
    # t2 holds query 2 only, with one relevant document: no pair counts at level 2
    assert ax.lines[1].get_xdata().tolist() == [1]
    assert np.allclose(ax.lines[1].get_ydata(), [1 / 3])


def test_ties_by_recall_level_draws_the_stats_numbers(ax):
    frame = toy_positions()
    plot.ties_by_recall_level(frame, levels=3, ax=ax)
    expected = lf.stats.tie_fraction_by_level(frame, max_level=3)
    assert ax.lines[0].get_xdata().tolist() == expected["level"].to_list()
    assert ax.lines[0].get_ydata().tolist() == expected["tie_fraction"].to_list()


def test_first_difference_ecdf(ax):
    prefs = toy_positions().lexi.preferences(extra=["first_difference"])
    # i*: query 1 -> (a, b) 2, (a, c) 1, (b, c) 1; query 2 -> 1, 1, and (a, b) identical
    plot.first_difference_ecdf(prefs, ax=ax)
    (line,) = ax.lines
    assert line.get_xdata().tolist() == [1, 2]
    assert np.allclose(line.get_ydata(), [4 / 5, 1.0])
    assert line.get_drawstyle() == "steps-post"


def test_first_difference_ecdf_draws_the_stats_numbers(ax):
    frame = toy_positions()
    plot.first_difference_ecdf(frame.lexi.preferences(extra=["first_difference"]), ax=ax)
    expected = lf.stats.first_difference_ecdf(frame)  # from the positions themselves
    assert ax.lines[0].get_xdata().tolist() == expected["level"].to_list()
    assert ax.lines[0].get_ydata().tolist() == expected["ecdf"].to_list()


def test_first_difference_ecdf_needs_the_column(ax):
    with pytest.raises(lf.SchemaError, match="first_difference"):
        plot.first_difference_ecdf(toy_positions().lexi.preferences(), ax=ax)


def test_preference_matrix_is_antisymmetric_in_the_given_order(ax):
    summary = lf.summarize_preferences(toy_positions().lexi.preferences())
    order = ["c", "a", "b"]
    plot.preference_matrix(summary, "rrLP", systems=order, ax=ax, colorbar=False)
    matrix = np.asarray(ax.images[0].get_array())
    assert np.allclose(matrix, -matrix.T)
    assert np.allclose(np.diag(matrix), 0.0)
    for a, b, value in summary.select("system_a", "system_b", "rrLP").iter_rows():
        assert matrix[order.index(a), order.index(b)] == pytest.approx(value)
    assert [label.get_text() for label in ax.get_yticklabels()] == order


def test_preference_matrix_rejects_several_groups(ax):
    prefs = pl.concat(
        [toy_positions().lexi.preferences().with_columns(track=pl.lit(t)) for t in "xy"]
    )
    summary = lf.summarize_preferences(prefs, by="track")
    with pytest.raises(ValueError, match="one by group"):
        plot.preference_matrix(summary, ax=ax)


def test_orderings_bump_chart(ax):
    frame = toy_positions()
    prefs = frame.lexi.preferences()
    per_query = frame.lexi.measures(["RR"])
    frames = {
        "MC4 sgnLP": lf.order(prefs, "sgnLP"),
        "Borda sgnLR": lf.order(prefs, "sgnLR", method="borda"),
        "mean RR": lf.order(per_query, "RR", method="mean"),
    }
    plot.orderings(frames, ax=ax)
    assert [tick.get_text() for tick in ax.get_xticklabels()] == list(frames)
    for line in ax.lines:
        system = line.get_label()
        expected = [
            frame.filter(pl.col("system") == system)["rank"].item() for frame in frames.values()
        ]
        assert line.get_ydata().tolist() == expected
    assert {line.get_label() for line in ax.lines} == {"a", "b", "c"}
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # rank 1 at the top


def test_orderings_need_the_same_systems(ax):
    prefs = toy_positions().lexi.preferences()
    full = lf.order(prefs, "sgnLP")
    with pytest.raises(ValueError, match="same systems"):
        plot.orderings({"all": full, "two": full.head(2)}, ax=ax)


# --- figures a paper would print ------------------------------------------------------------


def degradation_curve() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "fraction": [0.2, 0.5, 0.2, 0.5],
            "measure": ["AP", "AP", "sgnLP", "sgnLP"],
            "tau": [0.95, 0.7, -0.9, 0.1],
            "tau_std": [0.2, 0.1, 0.3, 0.1],
        }
    )


def figures(plt) -> dict[str, object]:
    """Every plot function on a figure of its own (ax=None)."""
    frame = toy_positions()
    docs = frame.with_columns(docs=pl.col("positions").cast(pl.List(pl.String)))
    prefs = frame.lexi.preferences(extra=["first_difference"])
    summary = lf.summarize_preferences(prefs)
    order = prefs.lexi.order("sgnLP")
    return {
        "asl_histogram": plot.asl_histogram(frame, system="a"),
        "asl_delta_histogram": plot.asl_delta_histogram(docs, "a", "b"),
        "ties_by_recall_level": plot.ties_by_recall_level(frame, levels=3),
        "first_difference_ecdf": plot.first_difference_ecdf(prefs),
        "preference_matrix": plot.preference_matrix(summary),
        "orderings": plot.orderings({"sgnLP": order, "again": order}),
        "degradation": plot.degradation(degradation_curve(), "tau", n_samples=5),
    }


def test_every_figure_has_a_title_and_print_resolution(plt, tmp_path):
    drawn = figures(plt)
    assert sorted(drawn) == sorted(
        name for name in plot.__all__ if name not in ("DPI", "asl_deltas")
    )
    for name, ax in drawn.items():
        assert ax.get_title(), name
        assert ax.figure.dpi >= 150, name
    path = tmp_path / "figure.png"
    drawn["orderings"].figure.savefig(path)
    width, height = plt.imread(path).shape[1::-1]
    inches = drawn["orderings"].figure.get_size_inches()
    assert width == pytest.approx(inches[0] * plot.DPI, abs=2)
    assert height == pytest.approx(inches[1] * plot.DPI, abs=2)


def test_integer_axes_get_integer_ticks(plt):
    drawn = figures(plt)
    for name, axis in [
        ("asl_histogram", "yaxis"),
        ("asl_delta_histogram", "yaxis"),
        ("ties_by_recall_level", "xaxis"),
        ("first_difference_ecdf", "xaxis"),
        ("orderings", "yaxis"),
    ]:
        ticks = getattr(drawn[name], axis).get_ticklocs()
        assert len(ticks) and np.allclose(ticks, np.round(ticks)), (name, ticks)


def test_preference_matrix_labels_its_colour_bar_and_can_print_values(plt):
    summary = lf.summarize_preferences(toy_positions().lexi.preferences())
    ax = plot.preference_matrix(summary, "sgnLP", values=True, fmt="{:.1f}")
    bar = ax.figure.axes[-1]
    assert "mean sgnLP" in bar.get_ylabel()
    matrix = np.asarray(ax.images[0].get_array())
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert len(texts) == matrix.size
    for (row, column), value in np.ndenumerate(matrix):
        assert texts[row, column].get_text() == f"{value:.1f}"
    assert not plot.preference_matrix(summary, "sgnLP", colorbar=False).texts


def test_degradation_clips_tau_and_explains_its_band(plt):
    ax = plot.degradation(degradation_curve(), "tau", n_samples=5)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert np.allclose(lines["AP"].get_ydata(), [0.95, 0.7])
    bands = ax.collections
    assert len(bands) == 2
    for band in bands:
        ys = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
        assert ys.max() <= 1.0 and ys.min() >= -1.0
    # AP at 0.2 reaches 0.95 + 0.2 = 1.15, clipped to 1; sgnLP at 0.2 reaches -1.2, clipped
    tops = [np.concatenate([p.vertices[:, 1] for p in b.get_paths()]) for b in bands]
    assert max(t.max() for t in tops) == pytest.approx(1.0)
    assert min(t.min() for t in tops) == pytest.approx(-1.0)
    assert "standard deviation over 5 samples" in ax.get_legend().get_title().get_text()
    low, high = ax.get_ylim()
    assert low >= -1.1 and high <= 1.1


def test_degradation_without_spread_draws_no_band(plt):
    curve = degradation_curve().drop("tau_std").rename({"tau": "agreement"})
    curve = curve.with_columns(pl.col("agreement").abs())
    ax = plot.degradation(curve)
    assert len(ax.get_lines()) == 2 and not ax.collections
    assert "agreement" in ax.get_ylabel()


def _overlaps(labels) -> int:
    """How many neighbouring tick labels' boxes overlap once drawn."""
    boxes = sorted(
        (label.get_window_extent() for label in labels if label.get_text()), key=lambda b: b.y0
    )
    return sum(lower.y1 > upper.y0 + 0.5 for lower, upper in itertools.pairwise(boxes))


@pytest.mark.parametrize("systems", [5, 37, 60])
def test_preference_matrix_and_orderings_stay_readable(plt, systems):
    names = [f"system_{i:02d}" for i in range(systems)]
    rng = np.random.default_rng(systems)
    a, b = np.triu_indices(systems, k=1)
    summary = pl.DataFrame(
        {"system_a": [names[i] for i in a], "system_b": [names[j] for j in b],
         "sgnLP": rng.uniform(-1, 1, len(a))}
    )  # fmt: skip
    ax = plot.preference_matrix(summary, values=True)
    ax.figure.canvas.draw()
    assert ax.figure.get_figheight() >= systems * plot.ROW_INCHES  # grows with the systems
    for labels in (ax.get_yticklabels(), ax.get_xticklabels()):
        assert all(label.get_fontsize() >= 3 for label in labels)
    assert _overlaps(ax.get_yticklabels()) == 0
    # every printed value fits inside its cell
    cell = ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0]
    widths = [text.get_window_extent().width for text in ax.texts]
    assert len(widths) == systems**2 and max(widths) <= cell
    orders = {
        name: pl.DataFrame({"system": names, "rank": rng.permutation(systems) + 1})
        for name in ("MC4", "Borda", "mean")
    }
    ax = plot.orderings(orders)
    ax.figure.canvas.draw()
    assert _overlaps(ax.get_yticklabels()) == 0
    ends = sorted((text.get_window_extent() for text in ax.texts), key=lambda box: box.y0)
    assert all(low.y1 <= high.y0 + 0.5 for low, high in itertools.pairwise(ends))
    plt.close("all")
