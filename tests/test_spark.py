"""lexiframe.spark gives the one-process results, on Spark in local mode.

One local session (two cores, conftest's ``spark``) serves every test. Without PySpark or
Java the tests skip with the reason, unless ``LEXIFRAME_REQUIRE_SPARK=1`` (set by CI),
which fails them.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.errors import InputError, SchemaError
from lexiframe.spark import exact_sums

pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning"
)


@pytest.fixture(scope="session")
def lfs(spark):
    from lexiframe import spark as module

    return module


def _sdf(spark, frame: pl.DataFrame):
    return spark.createDataFrame(frame.to_arrow())


def _back(sdf, like: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """A Spark result as Polars, with the one-process column types, sorted by ``keys``."""
    frame = pl.from_arrow(sdf.toArrow())
    assert frame.columns == like.columns
    return frame.cast(dict(like.schema)).sort(keys)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        return function(*args, **kwargs)


# --- tracks ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def toy():
    from conftest import DATA

    return lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")


def synthetic(seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two tracks of integer ids, with graded qrels, score ties, skipped queries (one system
    answers a single query) and dropped ones (query 11 unjudged, 12 without a relevant
    document)."""
    rng = np.random.default_rng(seed)
    rows = []
    for track in ("T1", "T2"):
        for system in ("s0", "s1", "s2", "s3", "s4"):
            for query in range(1, 13):
                if system == "s4" and (track == "T2" or query > 1):
                    continue  # s4 answers query 1 of T1 only
                if rng.random() < 0.15:
                    continue  # a skipped query
                docs = rng.choice(40, size=int(rng.integers(3, 15)), replace=False)
                scores = np.round(rng.random(len(docs)) * 4) / 4  # ties
                ranking = zip(docs, scores, strict=True)
                rows += [(track, system, query, int(d), float(s)) for d, s in ranking]
    run = pl.DataFrame(
        rows, schema=["track", "system", "query", "doc", "score"], orient="row"
    ).with_columns(pl.col("query", "doc").cast(pl.Int64))
    judgments = []
    for track in ("T1", "T2"):
        for query in [*range(1, 11), 12]:
            docs = rng.choice(40, size=10, replace=False)
            grades = rng.integers(0, 4, size=10) if query != 12 else np.zeros(10, dtype=int)
            judgments += [(track, query, int(d), int(g)) for d, g in zip(docs, grades, strict=True)]
    qrels = pl.DataFrame(
        judgments, schema=["track", "query", "doc", "relevance"], orient="row"
    ).with_columns(pl.col("query", "doc").cast(pl.Int64))
    return run, qrels


def one_track(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run and qrels of :func:`synthetic`'s track T1, without the track column."""
    run, qrels = synthetic(seed=seed)
    return (
        run.filter(pl.col("track") == "T1").drop("track"),
        qrels.filter(pl.col("track") == "T1").drop("track"),
    )


MEASURES = [
    "RR",
    "AP",
    "nDCG",
    "nDCG@10",
    "nDCG(gains={1: 0, 2: 3})",
    "DCG@10",
    "IDCG",
    "P@5",
    "R@10",
    "RP",
    "ASL",
    "ASL@g1-3",
    "TSE",
    "ERR@10",
]


# --- per-query results ----------------------------------------------------------------------


def test_toy_track_evaluate_and_measures_equal_one_process(spark, lfs, toy):
    run, qrels = toy
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    keys = ["system", "query"]
    positions = _quiet(lf.positions, run, qrels).sort(keys)
    spark_positions = lfs.positions(run_sdf, qrels_sdf)
    assert_frame_equal(_back(spark_positions, positions, keys), positions, check_exact=True)
    expected = _quiet(lf.evaluate, run, qrels, MEASURES).sort(keys)
    assert "grades" in positions.columns  # graded nDCG
    got = _back(lfs.evaluate(run_sdf, qrels_sdf, MEASURES), expected, keys)
    assert_frame_equal(got, expected, check_exact=True)
    from_positions = _back(lfs.measures(spark_positions, MEASURES), expected, keys)
    assert_frame_equal(from_positions, expected, check_exact=True)


def test_measures_at_cut_offs_alone_equal_those_of_the_whole_lists(spark, lfs, toy):
    # The groups' lists stop at the deepest cut-off (rank 10 here, not 3) where the rows of
    # a ranking come in trec_eval's order: the values are those of the whole lists.
    run, qrels = toy
    keys = ["system", "query"]
    doc = pl.col("doc").cast(pl.String)
    ranked = run.sort([*keys, "score", doc], descending=[False, False, True, True])
    names = ["RR@3", "P@5", "nDCG@10", "AP@10"]
    expected = lf.measures(_quiet(lf.positions, run, qrels), names).sort(keys)
    got = _back(lfs.evaluate(_sdf(spark, ranked), _sdf(spark, qrels), names), expected, keys)
    assert_frame_equal(got, expected, check_exact=True)


JUDGED_MEASURES = ["Bpref", "infAP", "Judged@10", "Unjudged@10", "NumNonRelJudgedRet", "AP"]


def test_judged_and_condensed_rankings_equal_one_process(spark, lfs):
    """positions(judged=True) and condensed rankings (trec_eval's -J) on Spark, with the
    measures that read the judged non-relevant documents (requested by evaluate)."""
    run, qrels = synthetic()
    qrels = qrels.with_columns(  # some pooled but unassessed judgments (grade -1)
        pl.when(pl.col("doc") % 7 == 0).then(-1).otherwise(pl.col("relevance")).alias("relevance")
    )
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    keys = ["track", "system", "query"]
    for options in ({"judged": True}, {"judged": True, "condensed": True, "depth": 8}):
        positions = _quiet(lf.positions, run, qrels, by="track", **options).sort(keys)
        assert positions["nonrel_positions"].list.len().sum() > 0
        got = _back(lfs.positions(run_sdf, qrels_sdf, by="track", **options), positions, keys)
        assert_frame_equal(got, positions, check_exact=True)
    options = {"by": "track", "condensed": True}
    expected = _quiet(lf.evaluate, run, qrels, JUDGED_MEASURES, **options).sort(keys)
    got = _back(lfs.evaluate(run_sdf, qrels_sdf, JUDGED_MEASURES, **options), expected, keys)
    assert_frame_equal(got, expected, check_exact=True)


def test_measures_that_read_the_grades_on_binary_qrels(spark, lfs, toy):
    """ERR and the gain maps (nDCG, G, nDCGRel, RnDCG with gains=…) read the grades on
    binary qrels too: lfs.evaluate asks the positions for them, as lf.evaluate does, and
    gives the same numbers."""
    run, qrels = toy
    binary = qrels.with_columns(pl.col("relevance").ge(1).cast(pl.Int64))
    names = ["ERR@10", "nDCG(gains={1: -1})", "nDCG(gains={1: 2})@5", "G(gains={1: 2})"]
    names += ["nDCGRel(gains={1: -1})", "RnDCG(gains={1: 3})", "DCG(gains={1: -1})@5"]
    keys = ["system", "query"]
    expected = _quiet(lf.evaluate, run, binary, names).sort(keys)
    assert expected["ERR@10"].max() > 0 and expected["nDCG(gains={1: -1})"].max() == 0
    got = _back(lfs.evaluate(_sdf(spark, run), _sdf(spark, binary), names), expected, keys)
    assert_frame_equal(got, expected, check_exact=True)


def test_gain_measures_at_a_level_equal_one_process(spark, lfs, toy):
    """threshold=2: the level decides what is relevant, and nDCG, G, RBP keep every positive
    grade as gain (trec_eval's -l 2), on Spark as in one process; on binary qrels too."""
    run, qrels = toy
    names = ["AP", "nDCG", "nDCG@10", "G", "nDCGRel", "RnDCG", "RBP(p=0.9)", "ERR@10"]
    keys = ["system", "query"]
    options = {"threshold": 2, "no_relevant": "keep"}
    binary = qrels.with_columns(pl.col("relevance").ge(1).cast(pl.Int64))
    for judgments in (qrels, binary):
        positions = _quiet(lf.positions, run, judgments, **options).sort(keys)
        assert "gain_positions" in positions.columns
        spark_positions = lfs.positions(_sdf(spark, run), _sdf(spark, judgments), **options)
        assert_frame_equal(_back(spark_positions, positions, keys), positions, check_exact=True)
        expected = _quiet(lf.evaluate, run, judgments, names, **options).sort(keys)
        assert expected["nDCG"].max() > 0
        got = lfs.evaluate(_sdf(spark, run), _sdf(spark, judgments), names, **options)
        assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)


@pytest.mark.parametrize(
    ("qrels_by", "no_relevant"),
    [(True, "drop"), (False, "drop"), (True, "keep")],
    ids=["qrels-by-track", "qrels-shared", "no-relevant-kept"],
)
def test_by_keys_skipped_and_dropped_queries(spark, lfs, qrels_by, no_relevant):
    run, qrels = synthetic()
    if not qrels_by:
        qrels = qrels.filter(pl.col("track") == "T1").drop("track")
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    keys = ["track", "system", "query"]
    options = dict(by="track", depth=8, no_relevant=no_relevant)
    expected = _quiet(lf.evaluate, run, qrels, MEASURES, **options).sort(keys)
    got = lfs.evaluate(run_sdf, qrels_sdf, MEASURES, buckets=4, **options)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
    # s4 answered one query of T1 only: it is scored, worst case, on every judged query.
    s4 = expected.filter(pl.col("system") == "s4")
    evaluated = qrels if no_relevant == "keep" else qrels.filter(pl.col("relevance") >= 1)
    assert s4.height == evaluated["query"].n_unique()
    dropped = [11] if no_relevant == "keep" else [11, 12]
    assert expected.filter(pl.col("query").is_in(dropped)).height == 0

    positions = _quiet(lf.positions, run, qrels, **options).sort(keys)
    spark_positions = lfs.positions(run_sdf, qrels_sdf, buckets=4, **options)
    assert_frame_equal(_back(spark_positions, positions, keys), positions, check_exact=True)
    coverage = lf.coverage(run, qrels, by="track", no_relevant=no_relevant)
    got_coverage = lfs.coverage(run_sdf, qrels_sdf, by="track", no_relevant=no_relevant)
    assert_frame_equal(got_coverage, coverage)
    assert coverage["skipped"].sum() > 0 and coverage["unjudged"].sum() > 0
    assert (coverage["no_relevant"].sum() > 0) == (no_relevant == "drop")
    # The command's way: the coverage counted by the groups, beside the evaluation.
    from lexiframe.spark.ranking import with_coverage

    given = lf.PositionsOptions(**options)
    got, counted, _ = _quiet(with_coverage, run_sdf, qrels_sdf, MEASURES, buckets=4, options=given)
    assert_frame_equal(counted, coverage)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
    got, counted, _ = _quiet(with_coverage, run_sdf, qrels_sdf, buckets=4, options=given)
    assert_frame_equal(counted, coverage)
    assert_frame_equal(_back(got, positions, keys), positions, check_exact=True)


def test_string_ids_integer_widths_and_options(spark, lfs):
    run, qrels = one_track(seed=3)
    keys = ["system", "query"]
    # Integer ids of different widths on the two sides hash to the same group.
    narrow = run.with_columns(pl.col("query").cast(pl.Int32))
    expected = _quiet(lf.evaluate, narrow, qrels, MEASURES, threshold=2).sort(keys)
    got = lfs.evaluate(_sdf(spark, narrow), _sdf(spark, qrels), MEASURES, threshold=2)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
    # String ids, caller's column names, ranked by a rank column, docs kept.
    renamed = run.select(
        pl.col("system").alias("run_id"),
        pl.col("query").cast(pl.String).alias("qid"),
        pl.col("doc").cast(pl.String).alias("docno"),
        pl.col("score")
        .rank("ordinal", descending=True)
        .over("system", "query")
        .cast(pl.Int64)
        .alias("r"),
    )
    judged = qrels.select(
        pl.col("query").cast(pl.String).alias("qid"),
        pl.col("doc").cast(pl.String).alias("docno"),
        pl.col("relevance").alias("grade"),
    )
    names = dict(system="run_id", query="qid", doc="docno", rank="r", relevance="grade")
    options = dict(rank_by="rank", docs=True, **names)
    expected = _quiet(lf.positions, renamed, judged, **options).sort(keys)
    got = lfs.positions(_sdf(spark, renamed), _sdf(spark, judged), **options)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)


def test_the_groups_rank_with_the_callers_options_object(spark, toy):
    from lexiframe.spark.ranking import _prepare

    run, qrels = toy
    given = lf.PositionsOptions(depth=50, threshold=2, partitions=4)
    job = _quiet(
        _prepare, _sdf(spark, run), _sdf(spark, qrels), given, measures=[], n=None, buckets=2
    ).job
    # The same object: a new option reaches the workers; Spark's buckets are the groups,
    # and each group decides the grades as one process does (grades=None).
    assert job.options == given.replace(partitions=None)


# --- preferences, summaries, orderings ------------------------------------------------------


@pytest.fixture(scope="session")
def track_positions(spark, lfs):
    run, qrels = synthetic(seed=11)
    positions = _quiet(lf.positions, run, qrels, by="track")
    spark_positions = lfs.positions(_sdf(spark, run), _sdf(spark, qrels), by="track").cache()
    return positions, spark_positions


def test_preferences_summaries_and_orders(lfs, track_positions):
    positions, spark_positions = track_positions
    pair_keys = ["track", "query", "system_a", "system_b"]
    extra = ["first_difference", "last_difference"]
    expected = lf.preferences(positions, by="track", extra=extra).sort(pair_keys)
    spark_prefs = lfs.preferences(spark_positions, by="track", extra=extra)
    assert_frame_equal(_back(spark_prefs, expected, pair_keys), expected, check_exact=True)

    summary = lf.summarize(expected, by="track")
    got = pl.from_arrow(lfs.summarize(spark_prefs, by="track").toArrow())
    assert got.columns == summary.columns
    got = got.cast(dict(summary.schema))
    counts = [name for name in summary.columns if name.endswith(("_wins", "_losses", "_ties"))]
    exact = ["track", "system_a", "system_b", "n_queries", "sgnLP", "sgnLR", *counts]
    assert_frame_equal(got.select(exact), summary.select(exact), check_exact=True)
    assert_frame_equal(got.select("rrLP"), summary.select("rrLP"), rel_tol=1e-12, abs_tol=0)

    for method in ("mc4", "borda", "winrate"):
        for measure in ("sgnLP", "sgnLR"):
            expected_order = lf.order(expected, measure, method=method, by="track")
            got_order = lfs.order(spark_prefs, measure, method=method, by="track")
            assert_frame_equal(got_order, expected_order, check_exact=True)


def test_metric_summaries_and_orders(lfs, track_positions):
    positions, spark_positions = track_positions
    keys = ["track", "system", "query"]
    expected = lf.measures(positions, MEASURES).sort(keys)
    spark_metrics = lfs.measures(spark_positions, MEASURES)
    assert_frame_equal(_back(spark_metrics, expected, keys), expected, check_exact=True)
    summary = lf.summarize(expected, by="track")
    got = pl.from_arrow(lfs.summarize(spark_metrics, by="track").toArrow())
    got = got.cast(dict(summary.schema))
    assert_frame_equal(got, summary, rel_tol=1e-12, abs_tol=0)
    for method in ("mc4", "mean"):
        for measure in ("AP", "ASL"):
            expected_order = lf.order(expected, measure, method=method, by="track")
            got_order = lfs.order(spark_metrics, measure, method=method, by="track")
            assert_frame_equal(got_order, expected_order, check_exact=True)


def test_summary_means_are_the_same_bits_however_spark_splits_the_rows(spark, lfs):
    """The workers' partial sums are exact: every split gives the bits of the partial sums
    of the whole frame in one piece, within two units in the last place of the exact mean
    (rationals)."""
    rng = np.random.default_rng(3)
    values = rng.random(600) * 10.0 ** rng.integers(-6, 6, 600)  # sums that round
    values[::7] *= -1.0
    frame = pl.DataFrame(
        {
            "system": np.repeat(["a", "b", "c"], 200),
            "query": np.tile(np.arange(200), 3),
            "AP": values,
        }
    )
    sdf = _sdf(spark, frame)
    splits = (sdf.repartition(1), sdf.repartition(7, "query"), sdf.repartition(5).sort("AP"))
    summaries = [pl.from_arrow(lfs.summarize(split).toArrow()) for split in splits]
    adaptive = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "true")  # off in this test session
    try:
        summaries += [pl.from_arrow(lfs.summarize(split).toArrow()) for split in splits]
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    for summary in summaries[1:]:
        assert_frame_equal(summary, summaries[0], check_exact=True)
    whole = exact_sums.partial_sums(frame, ["system"], ["AP"])
    in_one_piece = exact_sums.means(whole, ["system"], ["AP"]).sort("system")
    assert summaries[0]["AP"].to_list() == in_one_piece["AP"].to_list()
    for system, group in frame.group_by("system"):
        exact = sum(map(Fraction, group["AP"])) / group.height
        got = summaries[0].filter(pl.col("system") == system[0])["AP"].item()
        assert abs(Fraction(got) - exact) <= 2 * math.ulp(got), system


def test_a_measure_named_with_a_dot_is_summarised_and_ordered(lfs, track_positions):
    """Spark reads a dot in a column name as a nested field: RBP(p=0.9) is quoted."""
    positions, spark_positions = track_positions
    names = ["RBP(p=0.9)", "nDCG@10"]
    expected = lf.summarize(lf.measures(positions, names), by="track")
    got = lfs.summarize(lfs.measures(spark_positions, names), by="track")
    got = pl.from_arrow(got.toArrow()).cast(dict(expected.schema))
    assert_frame_equal(got, expected, rel_tol=1e-12, abs_tol=0)
    per_query = lf.measures(positions, names)
    spark_per_query = lfs.measures(spark_positions, names)
    for method in ("mc4", "mean"):
        expected_order = lf.order(per_query, names[0], method=method, by="track")
        got_order = lfs.order(spark_per_query, names[0], method=method, by="track")
        assert_frame_equal(got_order, expected_order, check_exact=True)


def test_a_nan_preference_is_refused_by_the_summary_as_in_one_process(spark, lfs):
    prefs = pl.DataFrame(
        {"query": ["1", "2"], "system_a": ["x", "x"], "system_b": ["y", "y"], "rrLP": [0.5, np.nan]}
    )
    with pytest.raises(InputError) as one_process:
        lf.summarize(prefs)
    with pytest.raises(InputError) as on_spark:
        lfs.summarize(_sdf(spark, prefs))
    assert str(one_process.value).split(". Drop")[0] == str(on_spark.value).split(". Drop")[0]
    assert "F.isnan" in str(on_spark.value)


def test_a_summary_counts_the_queries_of_a_measure_null_without_n(lfs, track_positions):
    positions, spark_positions = track_positions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.MissingCorpusSizeWarning)
        expected = lf.summarize(lf.measures(positions, ["SL3", "AP"]), by="track")
        got = lfs.summarize(lfs.measures(spark_positions, ["SL3", "AP"]), by="track")
    assert expected.columns == ["track", "system", "n_queries", "SL3", "n_queries_SL3", "AP"]
    assert (expected["n_queries_SL3"] < expected["n_queries"]).any()  # some SL3 are null
    got = pl.from_arrow(got.toArrow()).cast(dict(expected.schema))
    assert_frame_equal(got, expected, rel_tol=1e-12, abs_tol=0)


# --- the driver's checks --------------------------------------------------------------------

def test_the_summary_of_an_evaluation_reads_the_groups_sums_with_the_same_bits(spark, lfs):
    """The frame lfs.evaluate returns is summarised from the partial sums its groups added
    (no Spark job), with the bits a pass over its rows gives (a frame derived from it is
    read), on two tracks where the groups are evaluated again (s4 answers one query; the
    grades kept), by track or over both, with a measure null on some queries (SL3)."""
    from lexiframe.spark.summary import summary_table

    run, qrels = synthetic(seed=7)
    names = ["AP", "nDCG@10", "SL3", "P@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_query = lfs.evaluate(_sdf(spark, run), _sdf(spark, qrels), names, buckets=4, by="track")
        expected = lf.evaluate(run, qrels, names, by="track")
    context = spark.sparkContext
    for by, measures in (("track", None), (None, ["SL3", "AP"]), ("track", ["P@5"])):
        context.setJobGroup("lexiframe-summary-test", "the groups' sums")
        try:
            got = summary_table(per_query, by=by, measures=measures)
            jobs = context.statusTracker().getJobIdsForGroup("lexiframe-summary-test")
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
        assert jobs == []
        read = summary_table(per_query.select("*"), by=by, measures=measures)
        assert_frame_equal(got, read, check_exact=True)
        one_process = lf.summarize(expected, by=by, measures=measures)
        assert_frame_equal(got.cast(dict(one_process.schema)), one_process, rel_tol=1e-12)
        assert got.height == one_process.height > 0



def test_bad_input_is_refused_on_the_driver(spark, lfs, toy):
    run, qrels = toy
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    with pytest.raises(SchemaError, match="'score'"):
        lfs.positions(run_sdf.drop("score"), qrels_sdf)
    with pytest.raises(InputError, match="grades=False"):
        lfs.positions(run_sdf, qrels_sdf, grades=False)
    with pytest.raises(SchemaError, match="query ids are strings in the run"):
        lfs.positions(run_sdf, _sdf(spark, qrels.with_columns(pl.col("query").cast(pl.Int64))))
    with pytest.raises(InputError, match="buckets"):
        lfs.positions(run_sdf, qrels_sdf, buckets=0)


def test_workers_use_the_callers_python(spark):
    import subprocess
    import sys

    worker = spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).first()
    assert os.path.realpath(worker) == os.path.realpath(os.environ["PYSPARK_PYTHON"])
    env = {key: value for key, value in os.environ.items() if key != "PYSPARK_PYTHON"}
    script = (
        "import os, sys, lexiframe.spark; print(os.environ['PYSPARK_PYTHON'] == sys.executable)"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


# --- the command ----------------------------------------------------------------------------


def test_cli_evaluate_on_spark_writes_the_same_files(spark, toy, tmp_path, capsys):
    from conftest import DATA

    from lexiframe.cli import main

    outputs = {}
    for label, extra in (("here", []), ("spark", ["--spark", "local[2]"])):
        folder = tmp_path / label
        folder.mkdir()
        # On Spark, the summaries and the orderings go to URIs, written by Spark's writer.
        where = folder.as_uri() if extra else str(folder)
        argv = [
            "evaluate",
            str(DATA / "toy" / "runs"),
            "--qrels",
            str(DATA / "toy" / "qrels.txt"),
            *[
                arg
                for m in ("RR", "AP", "nDCG@10", "ERR@10", "ASL", "sgnLP", "sgnLR")
                for arg in ("-m", m)
            ],
            *("--depth", "50", "--order", "mc4"),
            *("-o", str(folder / "per-query.parquet")),
            *("--summary", f"{where}/summary.parquet"),
            *("--orderings", f"{where}/orderings.parquet"),
            *extra,
        ]
        assert main(argv) == 0
        outputs[label] = (folder, capsys.readouterr().out)
    here, spark_folder = outputs["here"][0], outputs["spark"][0]
    assert outputs["here"][1] == outputs["spark"][1]  # the printed tables
    for name, keys in (
        ("per-query-metrics", ["system", "query"]),
        ("per-query-preferences", ["query", "system_a", "system_b"]),
    ):
        expected = pl.read_parquet(here / f"{name}.parquet")
        assert expected.equals(expected.sort(keys))
        # Spark's writer: a folder of part files, in the order of the rows' keys.
        got = _parts(spark_folder / f"{name}.parquet")
        assert_frame_equal(got.cast(dict(expected.schema)), expected)
    # Spark's writer, one part file each; unsigned counts and ranks widened to signed.
    expected = pl.read_parquet(here / "orderings.parquet")
    got = _parts(spark_folder / "orderings.parquet")
    assert_frame_equal(got, expected.cast({"rank": pl.Int64}))
    for name in ("summary-metrics", "summary-preferences"):
        expected = pl.read_parquet(here / f"{name}.parquet")
        got = _parts(spark_folder / f"{name}.parquet")
        widened = {k: pl.Int64 for k, v in expected.schema.items() if v == pl.UInt32}
        assert_frame_equal(got, expected.cast(widened), rel_tol=1e-12, abs_tol=0)


def _parts(folder) -> pl.DataFrame:
    """The part files Spark wrote to ``folder``, read in their names' order."""
    parts = sorted(folder.glob("part-*.parquet"))
    assert parts and (folder / "_SUCCESS").exists(), folder
    return pl.concat([pl.read_parquet(part) for part in parts])


def test_cli_on_spark_notes_a_measure_without_an_ordering_as_one_process_does(spark, toy, capsys):
    # SL3 and TSE(exposure='linear') without --n: no system has a mean (TSE: no value at
    # all). Both paths print AP's ordering and a note for each, in the command's words.
    from conftest import DATA

    from lexiframe.cli import main

    argv = ["evaluate", str(DATA / "toy" / "runs"), "--qrels", str(DATA / "toy" / "qrels.txt")]
    argv += ["-m", "AP", "-m", "SL3", "-m", "TSE(exposure='linear')"]
    printed = {}
    for label, extra in (("here", []), ("spark", ["--spark", "local[2]"])):
        assert main([*argv, *extra]) == 0, label
        printed[label] = capsys.readouterr()
        err = printed[label].err
        assert "note: no ordering by SL3: no system has a mean of 'SL3'" in err, label
        assert "note: no ordering by TSE(exposure='linear')" in err, label
        assert "n=" not in err and "lexiframe." not in err, label
    assert printed["here"].out == printed["spark"].out
    assert "| AP (mean) |" in printed["spark"].out


# --- reading and writing with Spark ---------------------------------------------------------


def test_runs_and_qrels_read_by_spark_from_folders_uris_and_text(spark, toy, tmp_path):
    """Spark's own parquet folders (part files, _SUCCESS, partitionBy folders), file://
    URIs and TREC text (split by Spark) read as lexiframe.read_run reads the files."""
    from conftest import DATA

    from lexiframe.spark import io as sio

    run, qrels = toy
    keys = ["system", "query", "doc"]
    plain, partitioned = tmp_path / "plain", tmp_path / "by-system"
    _sdf(spark, run).write.parquet(str(plain))
    _sdf(spark, run).write.partitionBy("system").parquet(str(partitioned))
    assert (plain / "_SUCCESS").exists() and (partitioned / "system=sys000").is_dir()
    expected = run.sort(keys)
    for source in (str(plain), partitioned.as_uri(), str(DATA / "toy" / "runs")):
        got = pl.from_arrow(sio.read_run(spark, source).toArrow())
        assert_frame_equal(got.select(expected.columns).sort(keys), expected)
    text_qrels = pl.from_arrow(
        sio.read_qrels(spark, (DATA / "toy" / "qrels.txt").as_uri()).toArrow()
    )
    assert_frame_equal(text_qrels.sort("query", "doc"), qrels.sort("query", "doc"))
    by_name = sio.read_run(spark, str(DATA / "toy" / "runs"), system_from="filename")
    names = sorted(row[0] for row in by_name.select("system").distinct().collect())
    assert names == sorted(path.name for path in (DATA / "toy" / "runs").iterdir())


def test_malformed_text_and_missing_sources_are_refused(spark, tmp_path):
    from lexiframe.spark import io as sio

    bad = tmp_path / "bad.txt"
    bad.write_text("401 Q0 D1 1 12.5 bm25\n\n401 Q0 D2 2 high bm25\n")
    # One process's message, word for word: the file as named, the line's number.
    said = []
    for read, spark_read in ((lf.read_run, sio.read_run), (lf.read_qrels, sio.read_qrels)):
        for source in (str(bad), str(tmp_path)):
            expected = _one_process_error(read, source)
            with pytest.raises(InputError) as caught:
                spark_read(spark, source)
            assert str(caught.value) == str(expected), source
            said.append(str(expected))
    assert "bad.txt', line 3: score 'high' is not a number: '401 Q0 D2" in said[0]
    assert "bad.txt', line 1: expected 4 whitespace-separated fields" in said[2]
    assert "found 6 fields (1 more malformed lines)" in said[2]
    with pytest.raises(InputError, match=r"run file not found: 'nowhere/run\.txt'"):
        sio.read_run(spark, "nowhere/run.txt")


# --- errors as in one process ---------------------------------------------------------------


def _one_process_error(function, *args, **kwargs) -> Exception:
    with pytest.raises(lf.LexiframeError) as caught:
        _quiet(function, *args, **kwargs)
    return caught.value


def test_errors_have_the_one_process_types_and_messages(spark, lfs, toy):
    run, qrels = toy
    cases = {
        "null score": (
            run.with_columns(
                pl.when(pl.col("doc") == pl.col("doc").max())
                .then(None)
                .otherwise(pl.col("score"))
                .alias("score")
            ),
            qrels,
        ),
        "NaN score": (
            run.with_columns(
                pl.when(pl.col("doc") == pl.col("doc").min())
                .then(float("nan"))
                .otherwise(pl.col("score"))
                .alias("score")
            ),
            qrels,
        ),
        "string grades": (run, qrels.with_columns(pl.lit("rel").alias("relevance"))),
        "id kinds": (run, qrels.with_columns(pl.col("query").cast(pl.Int64))),
        "null grade": (
            run,
            qrels.with_columns(
                pl.when(pl.col("doc") == pl.col("doc").min())
                .then(None)
                .otherwise(pl.col("relevance"))
                .alias("relevance")
            ),
        ),
        "empty run": (run.clear(), qrels),
        "empty qrels": (run, qrels.clear()),
    }
    for label, (bad_run, bad_qrels) in cases.items():
        expected = _one_process_error(lf.evaluate, bad_run, bad_qrels, ["AP"])
        with pytest.raises(type(expected)) as caught:
            lfs.evaluate(_sdf(spark, bad_run), _sdf(spark, bad_qrels), ["AP"])
        assert str(caught.value) == str(expected), label


@pytest.mark.parametrize("twice", ["ranked", "judged"])
def test_a_document_ranked_or_judged_twice_is_found_in_a_worker(spark, lfs, toy, twice):
    """Found in the worker that evaluates the query, raised as the one-process InputError
    by the call that computes the frame."""
    run, qrels = toy
    if twice == "ranked":
        run = pl.concat([run, run.head(1)])
    else:
        qrels = pl.concat([qrels, qrels.filter(pl.col("relevance") > 0).head(1)])
    expected = _one_process_error(lf.evaluate, run, qrels, ["AP"])
    with pytest.raises(InputError) as caught:
        lfs.evaluate(_sdf(spark, run), _sdf(spark, qrels), ["AP"])
    assert str(caught.value) == str(expected)


def test_the_command_ends_a_failed_spark_job_with_one_line(spark, toy, tmp_path, capsys):
    from conftest import DATA

    from lexiframe.cli import main

    run_file = tmp_path / "twice.txt"
    first = sorted((DATA / "toy" / "runs").iterdir())[0].read_text().splitlines()
    run_file.write_text("\n".join([*first, first[0]]) + "\n")
    argv = ["evaluate", str(run_file), "--qrels", str(DATA / "toy" / "qrels.txt"), "-m", "AP"]
    assert main([*argv, "--spark", "local[2]"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lexiframe: error: duplicate"), err
    assert main([*argv, "--buckets", "3"]) == 2
    assert capsys.readouterr().err.strip() == (
        "lexiframe: error: --buckets needs --spark MASTER (e.g. --spark 'local[*]')"
    )


def test_buckets_are_chosen_from_the_data(spark, lfs, toy, monkeypatch):
    from lexiframe.spark import ranking

    run, _ = toy
    run_sdf = _sdf(spark, run)
    assert ranking.bucket_count(run_sdf, None) == spark.sparkContext.defaultParallelism
    assert ranking.bucket_count(run_sdf, 7) == 7
    size = ranking._estimated_bytes(run_sdf)
    assert size > 10_000  # Spark's estimate of the frame, not a fallback
    monkeypatch.setattr(ranking, "BYTES_PER_BUCKET", size // 5)
    assert ranking.bucket_count(run_sdf, None) in (5, 6)  # size / (size // 5), rounded up


def test_the_partitioning_hash_is_sparks(spark):
    """The bucket labels are chosen by Spark's own Murmur3 hash (seed 42) of a bigint, which
    its hash partitioning applies: the Python copy gives F.hash's values."""
    from pyspark.sql import functions as F

    from lexiframe.spark._partitioning import spark_hash_long

    values = [0, 1, -1, 7, 2**31, 2**40 + 7, -(2**63), 2**63 - 1, 123_456_789_012]
    hashed = spark.createDataFrame([(v,) for v in values], "v bigint").select(F.hash("v"))
    assert [row[0] for row in hashed.collect()] == [spark_hash_long(v) for v in values]


@pytest.mark.parametrize("buckets", [1, 2, 3, 8, 15, 16, 41])
def test_each_bucket_has_a_partition_of_its_own(spark, buckets):
    """Numbered 0 to n - 1, buckets collide in Spark's hash partitioning (2 buckets fill
    one partition, 8 fill 4): labelled, each of the n partitions holds one bucket, so that
    each task evaluates one group of queries."""
    from lexiframe.spark import ranking

    queries = spark.range(0, 20 * buckets).withColumnRenamed("id", "query")
    by_bucket = ranking.partitioned(queries, "query", buckets)
    per_partition = by_bucket.rdd.glom().map(lambda rows: {row[1] for row in rows}).collect()
    assert len(per_partition) == buckets
    assert [len(labels) for labels in per_partition] == [1] * buckets


def test_a_positions_frame_is_cut_as_the_evaluation_that_computed_it(spark, lfs, toy):
    """Spark sizes what a Python function returns at about a gigabyte (200 buckets for a
    toy); the preferences of a positions frame are cut in as many buckets as it was."""
    from lexiframe.spark import ranking

    run, qrels = toy
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    pos = lfs.positions(run_sdf, qrels_sdf).cache()
    chosen = ranking.bucket_count(run_sdf, None)
    assert chosen == spark.sparkContext.defaultParallelism
    assert ranking.bucket_count(pos, None) == chosen
    pos.count()  # cached: its plan reads the cache, whose size Spark guesses too
    assert ranking.bucket_count(pos, None) == chosen
    given = lfs.positions(run_sdf, qrels_sdf, buckets=chosen + 1)
    assert ranking.bucket_count(given, None) == chosen + 1


def test_the_docs_app_runs_twice_and_prints(spark, toy, tmp_path, capsys):
    """docs/scaling-out.md's app, as pasted, on this session: a second run overwrites the
    per-query folder, and the summaries, the ordering and the coverage are printed."""
    from test_spark_cluster import _docs_app

    run, qrels = toy
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    # This session's JVM resolves relative paths from its own working directory.
    source = _docs_app()
    for name in ("run.parquet", "qrels.parquet", "per-query.parquet"):
        source = source.replace(f'"{name}"', repr(str(tmp_path / name)))
    code = compile(source, "app.py", "exec")
    for _ in range(2):
        exec(code, {"__name__": "__main__"})
        out = capsys.readouterr().out
        assert "sgnLP_wins" in out and "rank" in out and "evaluated" in out, out
    keys = ["system", "query"]
    expected = _quiet(lf.evaluate, run, qrels, ["AP", "nDCG@10", "ASL"], depth=100).sort(keys)
    got = pl.read_parquet(tmp_path / "per-query.parquet" / "*.parquet")
    assert_frame_equal(got.cast(dict(expected.schema)).sort(keys), expected, check_exact=True)


def test_the_driver_python_warning_only_where_lexiframe_chose_it(monkeypatch):
    from lexiframe import spark as package
    from lexiframe.spark import ranking

    class Conf:
        def __init__(self, python):
            self.python = python

        def get(self, key):
            return self.python if key == "spark.pyspark.python" else None

    def session(master, python=None):
        context = type("Context", (), {"master": master, "getConf": lambda self: Conf(python)})
        return type("Session", (), {"sparkContext": context()})()

    monkeypatch.setattr(package, "SETS_PYSPARK_PYTHON", True)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setattr(ranking, "_warned", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranking._warn_driver_python(session("local[4]"))  # local mode: right, silent
        ranking._warn_driver_python(session("yarn", python="/opt/env/bin/python"))
        monkeypatch.setattr(package, "SETS_PYSPARK_PYTHON", False)  # the caller set it
        ranking._warn_driver_python(session("spark://host:7077"))
    monkeypatch.setattr(package, "SETS_PYSPARK_PYTHON", True)
    with pytest.warns(lf.LexiframeWarning, match="executors of spark://host:7077 run"):
        ranking._warn_driver_python(session("spark://host:7077"))


def test_the_wait_for_resources_is_checked_and_local_mode_does_not_wait(spark, lfs):
    refused = pytest.raises(InputError, match="seconds must be a positive integer, not 0")
    with refused, lfs.resource_wait(spark, 0):
        pass
    with lfs.resource_wait(spark, 1):  # local mode: the driver is the executor
        assert spark.range(3).count() == 3


# --- what the groups decide ---------------------------------------------------------------


def test_a_group_of_unjudged_queries_is_checked_and_counted(spark, lfs):
    """A group whose queries the qrels do not judge evaluates nothing, and its rows are
    still checked and counted as one process checks and counts them."""
    from lexiframe.spark import ranking
    from lexiframe.spark.ranking import with_coverage

    run, qrels = one_track(seed=13)
    copies = [
        run.filter(pl.col("query") == 2).with_columns(pl.col("query") + (q - 2))
        for q in range(100, 140)
    ]
    run = pl.concat([run, *copies])
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, qrels)
    buckets = 24

    def labels(sdf):
        return {row[0] for row in sdf.select(ranking.bucket("query", buckets)).distinct().collect()}

    assert labels(run_sdf) - labels(qrels_sdf)  # a group with run rows and no judgment
    keys = ["system", "query"]
    expected = _quiet(lf.evaluate, run, qrels, MEASURES).sort(keys)
    got, counted, _ = _quiet(with_coverage, run_sdf, qrels_sdf, MEASURES, buckets=buckets)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
    assert_frame_equal(counted, lf.coverage(run, qrels))
    assert counted["unjudged"].min() == 40
    twice = pl.concat([run, run.filter(pl.col("query") == 139).head(1)])
    message = _one_process_error(lf.evaluate, twice, qrels, ["AP"])
    with pytest.raises(InputError) as caught:
        lfs.evaluate(_sdf(spark, twice), qrels_sdf, ["AP"], buckets=buckets)
    assert str(caught.value) == str(message)


@pytest.mark.parametrize("skipping", [False, True], ids=["every-system-everywhere", "one-query"])
def test_only_the_groups_that_missed_a_system_are_evaluated_again(
    spark, lfs, skipping, monkeypatch
):
    """A run whose systems answer queries of every group is read once; a system that
    answered one query (s4) is missing from the other groups, which are evaluated again
    with every system, so that it gets worst-case rows there as in one process."""
    from lexiframe.spark import ranking

    run, qrels = one_track(seed=9)
    qrels = qrels.with_columns(pl.col("relevance").clip(0, 1))  # no grades to decide
    if not skipping:
        run = run.filter(pl.col("system") != "s4")
    cogrouped = []
    cogroup = ranking._cogroup
    monkeypatch.setattr(
        ranking, "_cogroup", lambda *args, **kwargs: cogrouped.append(1) or cogroup(*args, **kwargs)
    )
    keys = ["system", "query"]
    expected = _quiet(lf.evaluate, run, qrels, MEASURES).sort(keys)
    got = lfs.evaluate(_sdf(spark, run), _sdf(spark, qrels), MEASURES, buckets=4)
    assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
    assert len(cogrouped) == (2 if skipping else 1)
    # The rows collected by the jobs that compute them, those evaluated again included.
    collected = ranking.with_coverage(
        _sdf(spark, run), _sdf(spark, qrels), MEASURES, buckets=4, collect=True
    ).rows
    assert collected is not None and collected.columns == expected.columns
    assert_frame_equal(collected.cast(dict(expected.schema)).sort(keys), expected, check_exact=True)


@pytest.mark.parametrize("graded", ["one-query", "none"], ids=["one-graded-query", "binary"])
def test_the_grades_kept_by_one_group_are_kept_by_every_group(spark, lfs, graded):
    """Each group decides the grades over its own judgments; where one keeps them and
    others do not, those are evaluated again keeping them, as one process keeps the grades
    of every query or of none (and binary qrels give no grade columns)."""
    from lexiframe.metrics import parse_measures

    run, qrels = one_track(seed=5)
    # Query 3 keeps its two grades; every other relevant document is graded 2, which
    # unnormalised gains (DCG) read as 2 where the grades are kept and as 1 where not.
    kept = (pl.col("query") == 3) if graded == "one-query" else pl.lit(False)
    relevance = pl.col("relevance")
    uniform = relevance.clip(0, 1) * (2 if graded == "one-query" else 1)
    binary = qrels.with_columns(pl.when(kept).then(relevance).otherwise(uniform))
    keys = ["system", "query"]
    run_sdf, qrels_sdf = _sdf(spark, run), _sdf(spark, binary)
    positions = _quiet(lf.positions, run, binary).sort(keys)
    assert ("grades" in positions.columns) == (graded == "one-query")
    got = lfs.positions(run_sdf, qrels_sdf, buckets=4)
    assert_frame_equal(_back(got, positions, keys), positions, check_exact=True)
    # Measures that read the grades when kept, without asking for them (grades=None).
    names = ["nDCG", "DCG@10", "RBP(p=0.9)", "AP"]
    assert lf.PositionsOptions().for_measures(parse_measures(names)).grades is None
    from lexiframe.spark.ranking import with_coverage

    for measures in (names, MEASURES):
        expected = _quiet(lf.evaluate, run, binary, measures).sort(keys)
        got = lfs.evaluate(run_sdf, qrels_sdf, measures, buckets=4)
        assert_frame_equal(_back(got, expected, keys), expected, check_exact=True)
        rows = with_coverage(run_sdf, qrels_sdf, measures, buckets=4, collect=True).rows
        assert rows is not None
        assert_frame_equal(rows.cast(dict(expected.schema)).sort(keys), expected, check_exact=True)
