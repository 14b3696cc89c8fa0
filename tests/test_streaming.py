"""A LazyFrame run ranked in groups of queries equals the same run ranked in memory.

The groups of a LazyFrame run are collected one after another when the frame is collected
(lexiframe.ranking._streamed); these tests compare that path with the eager one on lazily
scanned parquet, row for row.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import lexiframe as lf

KEYS = ["system", "query"]
MEASURES = ["RR", "AP", "nDCG@10", "R@100", "ASL"]


@pytest.fixture(scope="module")
def track(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small graded track with integer ids, written as parquet (some queries skipped)."""
    directory = tmp_path_factory.mktemp("track")
    lf.datasets.write_synthetic_track(
        directory, n_systems=4, n_queries=60, depth=30, id_type="int", skip_rate=0.1,
        no_relevant_queries=3, unjudged_queries=2, format="parquet", seed=3,
    )  # fmt: skip
    return directory


def runs(track: Path) -> list[Path]:
    return sorted((track / "runs").iterdir())


def eager(track: Path, **options: object) -> pl.DataFrame:
    run, qrels = lf.read_run(runs(track)), lf.read_qrels(track / "qrels.parquet")
    with pytest.warns(lf.DroppedQueriesWarning):
        return lf.positions(run, qrels, **options).sort(KEYS)


def lazy(track: Path, **options: object) -> pl.LazyFrame:
    return lf.scan_run(runs(track)).lexi.positions(
        lf.scan_qrels(track / "qrels.parquet"), **options
    )


@pytest.mark.parametrize("partitions", [None, 1, 2, 7])
@pytest.mark.parametrize("engine", ["streaming", "in-memory"])
def test_groups_equal_the_eager_frame(track: Path, partitions: int | None, engine: str):
    options = {"docs": True, "depth": 20}
    expected = eager(track, **options)
    got = lazy(track, partitions=partitions, **options).collect(engine=engine).sort(KEYS)
    assert got.schema == expected.schema
    assert got.equals(expected)
    measures = lazy(track, partitions=partitions).lexi.measures(MEASURES)
    assert (
        measures.collect(engine=engine)
        .sort(KEYS)
        .equals(eager(track).lexi.measures(MEASURES).sort(KEYS))
    )


def test_a_system_first_seen_in_a_later_group_gets_the_earlier_groups_queries(track: Path):
    # sys000 retrieves nothing for the queries of the first groups: its worst-case rows
    # for them come with the first group where it appears.
    run = lf.read_run(runs(track))
    qrels = lf.read_qrels(track / "qrels.parquet")
    group = pl.col("query").hash(seed=0) % 4
    run = run.filter((pl.col("system") != "sys000") | (group == 3))
    with pytest.warns(lf.DroppedQueriesWarning):
        expected = lf.positions(run, qrels).sort(KEYS)
    got = lf.positions(run.lazy(), qrels, partitions=4).collect().sort(KEYS)
    assert got.equals(expected)
    skipped = got.filter(pl.col("system") == "sys000", group != 3)
    assert skipped.height > 0
    assert skipped["n_ret"].max() == 0


def test_the_source_applies_filters_columns_and_row_limits(track: Path):
    frame = lazy(track, partitions=3)
    expected = eager(track)
    picked = frame.filter(pl.col("n_rel") > 10).select("query", "system", "n_rel")
    assert (
        picked.collect()
        .sort(KEYS)
        .equals(expected.filter(pl.col("n_rel") > 10).select("query", "system", "n_rel").sort(KEYS))
    )
    assert frame.head(5).collect().height == 5
    assert frame.select(pl.len()).collect().item() == expected.height


def test_bad_rankings_are_refused_in_a_group(track: Path):
    run = lf.read_run(runs(track))
    doubled = pl.concat([run, run.head(1)])
    qrels = lf.read_qrels(track / "qrels.parquet")
    with pytest.raises(lf.InputError, match="duplicate"):
        lf.positions(doubled.lazy(), qrels, partitions=3).collect()


def test_every_measure_is_the_same_on_either_engine(track: Path):
    """The property tests collect the lazy backend in memory (tests/conftest.py); here every
    measure they check is collected by both engines from one lazily scanned track."""
    from tests.test_properties import MEASURES as EVERY_FAMILY

    plan = lf.scan_run(runs(track)).lexi.evaluate(
        lf.scan_qrels(track / "qrels.parquet"), EVERY_FAMILY, n=100_000
    )
    streamed = plan.collect(engine="streaming").sort(KEYS)
    assert streamed.height > 0
    assert streamed.equals(plan.collect(engine="in-memory").sort(KEYS))
