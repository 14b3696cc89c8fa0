"""The examples run in a fresh directory, quickly, and write only their outputs there."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
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
    ],
    "pandas_workflow": ["per_query.parquet", "pair_summary.parquet", "orderings.parquet"],
    "by_track": ["means.parquet", "pair_summary.parquet", "orderings.parquet"],
    "asl_analysis": ["asl_per_system.parquet", "asl_histogram.png", "asl_deltas.png"],
}
NEEDS = {"asl_analysis": "matplotlib"}


def test_every_example_is_tested():
    assert sorted(path.stem for path in EXAMPLES.glob("*.py")) == sorted(OUTPUTS)


def run_example(name: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"examples/{name}.py needs {NEEDS[name]}")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_example_writes_its_outputs(name, tmp_path):
    run_example(name, tmp_path)
    out = tmp_path / "lexiframe-output" / name
    for relative in OUTPUTS[name]:
        assert (out / relative).stat().st_size > 0, relative
    written = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    assert all(path.parts[:2] == ("lexiframe-output", name) for path in written), written


def test_trec_track_orderings_rank_every_system(tmp_path):
    run_example("trec_track", tmp_path)
    orderings = pl.read_parquet(tmp_path / "lexiframe-output" / "trec_track" / "orderings.parquet")
    assert orderings.height == 8
    for column in orderings.columns[1:]:
        assert sorted(orderings[column].to_list()) == list(range(1, 9))
