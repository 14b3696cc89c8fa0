"""The examples run in a fresh directory, quickly, and write only their outputs there."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

OUTPUTS = {
    "trec_track": [
        "runs/sys000.txt",
        "qrels.txt",
        "positions.parquet",
        "per_query.parquet",
        "preferences.parquet",
        "pair_summary.parquet",
        "orderings.parquet",
        "discriminative_power.parquet",
        "report.parquet",
        "report.md",
        "report.tex",
    ],
    "pandas_workflow": ["per_query.parquet", "pair_summary.parquet", "orderings.parquet"],
    "by_track": ["means.parquet", "pair_summary.parquet", "orderings.parquet"],
    "asl_analysis": ["asl_per_system.parquet", "asl_histogram.png", "asl_deltas.png"],
    "label_degradation": ["label_degradation.parquet", "query_subsampling.parquet"],
    "significance": ["tests.parquet", "p_values.parquet", "discriminative_power.parquet"],
}
NEEDS = {"asl_analysis": "matplotlib"}
"""Examples that cannot run without an optional package."""
OPTIONAL = {"label_degradation": ("matplotlib", ["agreement.png"])}
"""Outputs an example writes only when an optional package is installed."""


def test_every_example_is_tested():
    assert sorted(path.stem for path in EXAMPLES.glob("*.py")) == sorted(OUTPUTS)


def run_example(
    name: str, cwd: Path, *, without: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run examples/<name>.py in ``cwd``; ``without`` hides an installed package from it."""
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"examples/{name}.py needs {NEEDS[name]}")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "error"}
    script = str(EXAMPLES / f"{name}.py")
    hide = (
        f"import runpy, sys; sys.modules[{without!r}] = None; "
        f"runpy.run_path({script!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, *(["-c", hide] if without else [script])],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory) -> Callable[[str], Path]:
    """Runs an example once in its own fresh directory; returns that directory."""
    done: dict[str, Path] = {}

    def run(name: str) -> Path:
        if name not in done:
            cwd = tmp_path_factory.mktemp(name)
            run_example(name, cwd)
            done[name] = cwd
        return done[name]

    return run


def expected_outputs(name: str) -> list[str]:
    package, optional = OPTIONAL.get(name, (None, []))
    has_package = package is not None and importlib.util.find_spec(package) is not None
    return OUTPUTS[name] + (optional if has_package else [])


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_example_writes_its_outputs(name, example_dir):
    cwd = example_dir(name)
    out = cwd / "lexiframe-output" / name
    for relative in expected_outputs(name):
        assert (out / relative).stat().st_size > 0, relative
    written = {path.relative_to(cwd) for path in cwd.rglob("*") if path.is_file()}
    assert all(path.parts[:2] == ("lexiframe-output", name) for path in written), written


def test_trec_track_orderings_rank_every_system(example_dir):
    out = example_dir("trec_track") / "lexiframe-output" / "trec_track"
    orderings = pl.read_parquet(out / "orderings.parquet")
    assert orderings.height == 8
    for column in orderings.columns[1:]:
        assert sorted(orderings[column].to_list()) == list(range(1, 9))


def test_trec_track_ends_with_significance(example_dir):
    out = example_dir("trec_track") / "lexiframe-output" / "trec_track"
    power = pl.read_parquet(out / "discriminative_power.parquet")
    tests = dict(power.select("measure", "test").iter_rows())
    assert tests == {"sgnLP": "sign", "rrLP": "t", "RR": "paired_t", "AP": "paired_t"}
    assert power["correction"].to_list() == ["holm"] * 4
    assert power["n_pairs"].to_list() == [28] * 4  # 8 systems
    assert power["discriminative_power"].is_between(0, 1).all()
    report = pl.read_parquet(out / "report.parquet")
    assert report["system"].to_list() == [f"sys00{i}" for i in range(8)]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("| | system | RR | AP | nDCG@10 | ASL@g1-10 |")
    assert "paired_t test, holm correction" in markdown
    latex = (out / "report.tex").read_text(encoding="utf-8")
    assert latex.startswith("\\begin{table}") and "ASL@g1-10" in latex


def test_label_degradation_covers_both_weightings(example_dir):
    out = example_dir("label_degradation") / "lexiframe-output" / "label_degradation"
    labels = pl.read_parquet(out / "label_degradation.parquet")
    assert sorted(labels["weighting"].unique()) == ["retrieved", "uniform"]
    assert sorted(labels["measure"].unique()) == ["AP", "RR", "sgnLP", "sgnLR"]
    assert labels.height == 2 * 4 * 4  # weightings x fractions x measures
    assert labels["agreement"].is_between(0, 1).all()
    queries = pl.read_parquet(out / "query_subsampling.parquet")
    assert queries["tau"].is_between(-1, 1).all()
    # 25 evaluated queries: removing 20 % leaves 20, 80 % leaves 5
    assert queries.sort("fraction")["n_queries"].unique(maintain_order=True).to_list() == [
        20,
        15,
        10,
        5,
    ]


def test_label_degradation_runs_without_matplotlib(tmp_path):
    done = run_example("label_degradation", tmp_path, without="matplotlib")
    assert "matplotlib is not installed" in done.stdout
    out = tmp_path / "lexiframe-output" / "label_degradation"
    assert sorted(path.name for path in out.iterdir()) == sorted(OUTPUTS["label_degradation"])


def test_significance_corrections_side_by_side(example_dir):
    out = example_dir("significance") / "lexiframe-output" / "significance"
    table = pl.read_parquet(out / "p_values.parquet")
    assert table.height == 28
    none, holm, bonferroni = (
        table[f"paired_t ({correction})"].to_numpy()
        for correction in ("none", "holm", "bonferroni")
    )
    assert (none <= holm + 1e-12).all() and (holm <= bonferroni + 1e-12).all()
    assert {"hsd_blocked (none)", "randomized_hsd_blocked (none)"} <= set(table.columns)


def test_asl_analysis_without_matplotlib_says_what_to_install(tmp_path):
    script = str(EXAMPLES / "asl_analysis.py")
    hide = (
        "import runpy, sys; sys.modules['matplotlib'] = None; "
        f"runpy.run_path({script!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", hide], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "pip install 'lexiframe[plot]'" in done.stderr
    assert "Traceback" not in done.stderr
