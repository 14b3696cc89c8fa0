"""The synthetic track generator: determinism, shape, the model's promises, the traps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from lexiframe.datasets import _files, _model, demo_track, synthetic_track, write_synthetic_track
from lexiframe.errors import InputError
from lexiframe.io import QRELS_SCHEMA, RUN_SCHEMA, read_qrels, read_run

RANKED_RUN = pl.Schema({**RUN_SCHEMA, "rank": pl.Int64})  # read_run(..., rank=True)
INT_RUN = pl.Schema(
    {"system": pl.String, "query": pl.Int64, "doc": pl.Int64, "score": pl.Float64, "rank": pl.Int64}
)
INT_QRELS = pl.Schema({"query": pl.Int64, "doc": pl.Int64, "relevance": pl.Int64})


def trec_rank() -> pl.Expr:
    """trec_eval's order: score descending, then doc id descending as a string."""
    return (
        pl.struct("score", pl.col("doc").cast(pl.String))
        .rank("ordinal", descending=True)
        .over("system", "query")
        .cast(pl.Int64)
    )


def test_same_seed_same_frames() -> None:
    options = {"n_systems": 5, "n_queries": 12, "depth": 30, "skip_rate": 0.2, "tie_rate": 0.4}
    first, second = synthetic_track(seed=11, **options), synthetic_track(seed=11, **options)
    assert_frame_equal(first.run, second.run)
    assert_frame_equal(first.qrels, second.qrels)
    assert_frame_equal(first.quality, second.quality)
    other = synthetic_track(seed=12, **options)
    assert not other.run.equals(first.run)
    assert not other.qrels.equals(first.qrels)


@pytest.mark.parametrize(
    ("id_type", "run_schema", "qrels_schema"),
    [("str", RANKED_RUN, QRELS_SCHEMA), ("int", INT_RUN, INT_QRELS)],
)
def test_schema_and_ids(id_type: str, run_schema: pl.Schema, qrels_schema: pl.Schema) -> None:
    track = synthetic_track(n_systems=3, n_queries=4, depth=10, id_type=id_type)
    assert track.run.schema == run_schema
    assert track.qrels.schema == qrels_schema
    assert sorted(track.run["system"].unique()) == ["sys000", "sys001", "sys002"]
    queries = sorted(track.qrels["query"].unique().to_list())
    if id_type == "str":
        assert queries == ["401", "402", "403", "404"]
        assert track.run["doc"].str.contains(r"^D40[1-4]-\d{6}$").all()
        docs = track.run.select(pl.col("doc").str.slice(1, 3) == pl.col("query"))
        assert docs.to_series().all()  # documents belong to their query
    else:
        assert queries == [401, 402, 403, 404]
        assert track.run["doc"].is_between(0, 39).all()  # a shared catalogue of n_docs items


@pytest.mark.parametrize("id_type", ["str", "int"])
@pytest.mark.parametrize("tie_rate", [0.0, 1.0])
def test_rankings_are_trec_rankings(id_type: str, tie_rate: float) -> None:
    track = synthetic_track(
        n_systems=4,
        n_queries=10,
        depth=50,
        n_docs=120,
        id_type=id_type,
        tie_rate=tie_rate,
        skip_rate=0.0,
    )
    run = track.run
    assert run.height == 4 * 10 * 50
    assert not run.select("system", "query", "doc").is_duplicated().any()
    assert run.group_by("system", "query").agg(pl.len())["len"].unique().to_list() == [50]
    assert (run["rank"] == run.select(trec_rank()).to_series()).all()
    tied = run.select("system", "query", "score").is_duplicated().mean()
    assert (tied > 0.5) if tie_rate == 1.0 else (tied < 0.05)  # 4 decimals: a few ties
    # rows come system-major, then query, then rank
    assert_frame_equal(run, run.sort("system", "query", "rank"))


def test_coarse_systems_have_ties() -> None:
    track = synthetic_track(n_systems=8, n_queries=10, depth=100, tie_rate=0.25)
    coarse = track.quality.filter("coarse")["system"].to_list()
    assert len(coarse) == 2
    decimals = track.run.group_by("system").agg(
        ((pl.col("score") * 10).round(6) % 1 == 0).all().alias("one_decimal"),
        pl.struct("query", "score").is_duplicated().any().alias("ties"),
    )
    expected = decimals.filter("one_decimal", "ties")["system"].sort().to_list()
    assert expected == sorted(coarse)


def test_relevance_model() -> None:
    track = synthetic_track(n_systems=2, n_queries=200, depth=100, relevant=(5, 60))
    per_query = track.qrels.group_by("query").agg(
        relevant=(pl.col("relevance") > 0).sum(),
        grade2=(pl.col("relevance") == 2).sum(),
        judged=pl.len(),
    )
    assert per_query.height == 200
    assert per_query["relevant"].min() >= 1
    assert 12 <= per_query["relevant"].median() <= 35
    assert per_query["relevant"].quantile(0.9) >= 40  # varying: some queries have many
    assert (per_query["grade2"] > 0).mean() > 0.8
    assert (per_query["judged"] > per_query["relevant"]).all()  # judged non-relevant too
    assert set(track.qrels["relevance"].unique()) == {0, 1, 2}
    assert not track.qrels.select("query", "doc").is_duplicated().any()


def test_quality_orders_the_systems() -> None:
    """A latent quality shifts relevant documents up: mean P@10 follows it."""
    track = synthetic_track(n_systems=8, n_queries=60, depth=100, seed=4)
    relevant = track.qrels.filter(pl.col("relevance") > 0).select("query", "doc")
    hits = (
        track.run.filter(pl.col("rank") <= 10)
        .join(relevant.with_columns(hit=pl.lit(1)), on=["query", "doc"], how="left")
        .group_by("system")
        .agg(precision=pl.col("hit").fill_null(0).sum() / (10 * 60))
        .join(track.quality, on="system")
    )
    correlation = hits.select(pl.corr("precision", "quality", method="spearman")).item()
    assert correlation > 0.8


def test_skipped_queries() -> None:
    full = synthetic_track(n_systems=6, n_queries=30, depth=10, skip_rate=0.0)
    assert full.run.select("system", "query").n_unique() == 6 * 30
    skipping = synthetic_track(n_systems=6, n_queries=30, depth=10, skip_rate=0.2)
    pairs = skipping.run.select("system", "query").n_unique()
    assert 6 * 30 * 0.6 < pairs < 6 * 30
    assert synthetic_track(n_systems=2, n_queries=3, depth=5, skip_rate=1.0).run.height == 0


def test_traps() -> None:
    track = synthetic_track(n_queries=10, no_relevant_queries=2, unjudged_queries=1)
    judged = track.qrels.group_by("query").agg(relevant=(pl.col("relevance") > 0).sum())
    assert sorted(judged["query"]) == [str(401 + index) for index in range(9)]
    assert judged.filter(pl.col("query").is_in(["408", "409"]))["relevant"].to_list() == [0, 0]
    assert judged.filter(~pl.col("query").is_in(["408", "409"]))["relevant"].min() >= 1
    assert "410" in track.run["query"].to_list()  # answered, never judged


def test_blocks_do_not_show(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With tiny blocks (many grade blocks and system groups) the track is still sorted and
    the writer writes exactly what the generator returns."""
    monkeypatch.setattr(_model, "_GRADE_BLOCK", 100)
    monkeypatch.setattr(_model, "_SCORE_BLOCK", 700)
    options = {"n_systems": 5, "n_queries": 9, "depth": 8, "n_docs": 40, "seed": 3}
    track = synthetic_track(**options)
    assert_frame_equal(track.run, track.run.sort("system", "query", "rank"))
    assert track.qrels["query"].n_unique() == 9
    assert not track.run.select("system", "query", "doc").is_duplicated().any()
    files = write_synthetic_track(tmp_path, **options)
    assert_frame_equal(read_run(files.runs, rank=True).sort("system", "query", "rank"), track.run)
    assert_frame_equal(read_qrels(files.qrels).sort("query", "doc"), track.qrels)


@pytest.mark.parametrize("file_format", ["trec", "trec.gz", "parquet"])
@pytest.mark.parametrize("id_type", ["str", "int"])
def test_write_synthetic_track(tmp_path: Path, file_format: str, id_type: str) -> None:
    options = {
        "n_systems": 3,
        "n_queries": 6,
        "depth": 20,
        "seed": 9,
        "id_type": id_type,
        "skip_rate": 0.2,
        "tie_rate": 0.5,
        "unjudged_queries": 1,
    }
    files = write_synthetic_track(tmp_path / "track", format=file_format, **options)
    suffix = {"trec": "", "trec.gz": ".gz", "parquet": ".parquet"}[file_format]
    assert [path.name for path in files.runs] == [f"sys00{index}{suffix}" for index in range(3)]
    assert (
        files.qrels.name
        == {"trec": "qrels.txt", "trec.gz": "qrels.txt.gz", "parquet": "qrels.parquet"}[file_format]
    )
    track = synthetic_track(**options)
    run, qrels = read_run(files.runs, system_from="filename", rank=True), read_qrels(files.qrels)
    if id_type == "int" and file_format != "parquet":  # TREC text ids are strings
        run = run.with_columns(pl.col("query", "doc").cast(pl.Int64))
        qrels = qrels.with_columns(pl.col("query", "doc").cast(pl.Int64))
    assert_frame_equal(run.sort("system", "query", "rank"), track.run)
    assert_frame_equal(qrels.sort("query", "doc"), track.qrels)
    leftovers = [path.name for path in (tmp_path / "track").rglob(".*")]
    assert leftovers == []


def test_write_synthetic_track_failure_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(_files, "qrels_chunk", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_synthetic_track(tmp_path, n_systems=2, n_queries=2, depth=5)
    assert [path.name for path in tmp_path.rglob("*") if path.is_file()] == []


def test_larger_track_sanity() -> None:
    track = synthetic_track(n_systems=20, n_queries=100, depth=1000, id_type="int", seed=1)
    assert 0.95 * 2_000_000 < track.run.height <= 2_000_000
    assert track.run["doc"].max() < 4000
    sample = track.run.filter(pl.col("system").is_in(["sys000", "sys013"]))
    assert not sample.select("system", "query", "doc").is_duplicated().any()
    assert np.isfinite(track.run["score"].to_numpy()).all()


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"n_systems": 0}, "n_systems must be a positive integer"),
        ({"depth": 10, "n_docs": 5}, "n_docs must be an integer >= depth"),
        ({"id_type": "uuid"}, "id_type"),
        ({"skip_rate": 1.5}, "skip_rate"),
        ({"relevant": (0, 3)}, "relevant"),
        ({"n_queries": 2, "unjudged_queries": 2, "no_relevant_queries": 1}, "exceeds"),
    ],
)
def test_bad_arguments(options: dict[str, object], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        synthetic_track(**options)  # type: ignore[arg-type]


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="format"):
        write_synthetic_track(tmp_path, format="csv")  # type: ignore[arg-type]


def test_demo_track() -> None:
    track = demo_track()
    assert "synthetic" in (demo_track.__doc__ or "")
    run, qrels = track.run, track.qrels
    assert run.schema == RANKED_RUN and qrels.schema == QRELS_SCHEMA
    assert run["system"].n_unique() == 8
    assert run["query"].n_unique() == 27
    assert not run.select("system", "query", "doc").is_duplicated().any()
    assert (run["rank"] == run.select(trec_rank()).to_series()).all()
    # skipped queries
    assert run.filter(pl.col("query") != "427").select("system", "query").n_unique() < 8 * 26
    # a judged query without relevant document; an unjudged query answered by sys001 only
    assert qrels.filter(pl.col("query") == "426")["relevance"].max() == 0
    assert "427" not in qrels["query"].to_list()
    assert run.filter(pl.col("query") == "427")["system"].unique().to_list() == ["sys001"]
    # sys003 has coarse scores: ties
    coarse = run.filter(pl.col("system") == "sys003")
    assert coarse.select("query", "score").is_duplicated().any()
    assert track.quality.filter("coarse")["system"].to_list() == ["sys003"]
    assert_frame_equal(demo_track().run, run)
