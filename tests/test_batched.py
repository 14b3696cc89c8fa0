"""Run files ranked a batch of files at a time give the frame of the whole run read at once."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe._batched import positions_of_files
from lexiframe.datasets import write_synthetic_track
from lexiframe.errors import DroppedQueriesWarning
from lexiframe.io import read_run_batches

MEASURES = ["RR", "AP", "nDCG", "R@1000", "RP", "ASL"]
KEYS = ["system", "query"]


def one_shot(runs: list[Path] | Path, qrels: Path, **options: object) -> pl.DataFrame:
    run = lf.read_run(runs, system_from=options.pop("system_from", "field"))
    return lf.positions(run, lf.read_qrels(qrels), **options).sort(KEYS)


@pytest.fixture(scope="module")
def track(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("track")
    return write_synthetic_track(
        root, n_systems=6, n_queries=30, depth=40, format="trec.gz", seed=3, skip_rate=0.2
    )


@pytest.mark.parametrize("batch_bytes", [1, 3_000, 1 << 30], ids=["file", "some", "all"])
def test_batches_give_the_positions_of_the_whole_run(track, batch_bytes: int) -> None:
    batches = list(read_run_batches(track.runs, batch_bytes=batch_bytes))
    assert sum(frame.height for frame in batches) == lf.read_run(track.runs).height
    if batch_bytes == 1:  # a file per batch at least, larger files in pieces
        assert len(batches) >= len(track.runs)
    # Each ranking is whole in one batch.
    keys = pl.concat(frame.select(KEYS).unique() for frame in batches)
    assert not keys.is_duplicated().any()
    qrels = lf.read_qrels(track.qrels)
    batched = positions_of_files(track.runs, qrels, batch_bytes=batch_bytes, depth=30)
    assert_frame_equal(batched.sort(KEYS), one_shot(track.runs, track.qrels, depth=30))


def test_evaluate_over_paths_equals_evaluate_over_frames(track) -> None:
    from_paths = lf.evaluate(track.runs, track.qrels, MEASURES)
    run, qrels = lf.read_run(track.runs), lf.read_qrels(track.qrels)
    assert_frame_equal(from_paths.sort(KEYS), lf.evaluate(run, qrels, MEASURES).sort(KEYS))
    folder = track.runs[0].parent
    assert_frame_equal(lf.evaluate(folder, track.qrels, MEASURES).sort(KEYS), from_paths.sort(KEYS))


def test_a_system_split_over_two_batches_is_ranked_at_once(tmp_path: Path) -> None:
    # One system's rankings in two files (a query split between them), read one file a batch.
    lines = [f"40{q} Q0 D{d} {d} {10 - d}.0 alpha" for q in (1, 2) for d in range(1, 6)]
    (tmp_path / "a1").write_text("\n".join(lines[:7]) + "\n")
    (tmp_path / "a2").write_text("\n".join(lines[7:]) + "\n")
    (tmp_path / "b").write_text("401 Q0 D3 1 1.0 beta\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("401 0 D2 1\n402 0 D5 1\n403 0 D1 1\n")
    runs = sorted(path for path in tmp_path.iterdir() if path.name != "qrels")
    batched = positions_of_files(runs, lf.read_qrels(qrels), batch_bytes=1)
    assert_frame_equal(batched.sort(KEYS), one_shot(runs, qrels))
    # D5 has the fifth score of query 402: two of its documents were in one file, three
    # in the other.
    assert batched.filter(system="alpha", query="402")["positions"].to_list() == [[5]]


def test_dropped_queries_are_counted_once_over_all_batches(tmp_path: Path) -> None:
    for name, queries in (("a", ("401", "901")), ("b", ("401", "902"))):
        text = "".join(f"{query} Q0 D1 1 1.0 {name}\n" for query in queries)
        (tmp_path / name).write_text(text)
    qrels = pl.DataFrame({"query": ["401"], "doc": ["D1"], "relevance": [1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = positions_of_files([tmp_path / "a", tmp_path / "b"], qrels, batch_bytes=1)
    dropped = [w for w in caught if issubclass(w.category, DroppedQueriesWarning)]
    assert len(dropped) == 1
    assert str(dropped[0].message).startswith("2 queries of the run are not evaluated")
    assert frame.sort(KEYS)["positions"].to_list() == [[1], [1]]


def test_parquet_files_are_batches_of_their_own(tmp_path: Path) -> None:
    files = write_synthetic_track(tmp_path, n_systems=3, n_queries=5, depth=10, format="parquet")
    assert len(list(read_run_batches(files.runs))) == 3
    from_paths = lf.evaluate(files.runs, files.qrels, MEASURES).sort(KEYS)
    run, qrels = lf.read_run(files.runs), lf.read_qrels(files.qrels)
    assert_frame_equal(from_paths, lf.evaluate(run, qrels, MEASURES).sort(KEYS))


def test_system_names_from_file_names(track) -> None:
    batched = positions_of_files(
        track.runs, lf.read_qrels(track.qrels), system_from="filename", batch_bytes=1
    )
    assert_frame_equal(
        batched.sort(KEYS), one_shot(track.runs, track.qrels, system_from="filename")
    )
