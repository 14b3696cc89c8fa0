"""The one contract of tests/test_paths.py on Spark: every positions option and a measure
a user defines of each kind give on Spark the frame one process gives, with the same
systems and queries. The measures travel to Spark's workers with the job: they are defined
here inside a fixture, so that Spark pickles their functions by value."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import InputError
from lexiframe.metrics import Needs, unregister
from lexiframe.options import PositionsOptions
from tests.test_paths import (
    LABELLED,
    OPTIONS,
    QRELS,
    RUNS,
    N,
    _assert_same,
    _quietly,
    _sorted,
    labelled_qrels,
    measures_for,
)


@pytest.fixture(scope="module")
def spark_measures() -> Iterator[list[str]]:
    def hits(k: int) -> pl.Expr:
        return pl.col("positions").list.eval(pl.element() <= k).list.sum()

    def wasted() -> pl.Expr:
        return pl.col("n_ret") - pl.col("positions").list.len()

    def discounted(p: float = 0.5) -> pl.Expr:
        return pl.col("positions").list.eval(pl.lit(p).pow(pl.element() - 1)).list.sum()

    def top_grade() -> pl.Expr:
        return pl.col("grades").list.max().fill_null(0)

    def unretrieved(n: int | None = None) -> pl.Expr:
        return pl.lit(n) - pl.col("n_ret")

    def first_doc_length() -> pl.Expr:
        return pl.col("docs").list.first().str.len_chars().fill_null(0)

    defined: dict[str, tuple[Any, dict[str, Any]]] = {
        "SparkHits": (hits, {"cutoff": "required"}),
        "SparkWasted": (wasted, {"lower_is_better": True}),
        "SparkDisc": (discounted, {}),
        "SparkTopGrade": (top_grade, {"needs": Needs(grades=True, requires_grades=True)}),
        "SparkUnretrieved": (unretrieved, {}),
        "SparkFirstDoc": (first_doc_length, {"needs": Needs(columns=("docs",))}),
    }
    for name, (function, declared) in defined.items():
        lf.define_measure(name, function, summary=name, **declared)
    yield ["SparkHits@10", "SparkWasted", "SparkDisc(p=0.8)", "SparkTopGrade",
           "SparkUnretrieved", "SparkFirstDoc"]  # fmt: skip
    for name in defined:
        unregister(name)


# partitions= plans one process's memory; Spark groups queries its own way.
SPARK_OPTIONS = [(name, options) for name, options, _ in OPTIONS if "partitions" not in options]


@pytest.mark.parametrize(
    "options", [o for _, o in SPARK_OPTIONS], ids=[n for n, _ in SPARK_OPTIONS]
)
def test_an_option_means_the_same_on_spark(spark, spark_measures, options):
    from lexiframe import spark as lfs

    run, qrels = lf.read_run(RUNS, rank=True), lf.read_qrels(QRELS)
    names = measures_for(options, spark_measures)
    expected = _quietly(lambda: lf.evaluate(run, qrels, names, n=N, **options))
    run_sdf = spark.createDataFrame(run.to_arrow())
    qrels_sdf = spark.createDataFrame(qrels.to_arrow())
    got = pl.from_arrow(lfs.evaluate(run_sdf, qrels_sdf, names, n=N, **options).toArrow())
    assert isinstance(got, pl.DataFrame)
    _assert_same({"one process": _sorted(expected), "spark": _sorted(got)})
    one = _quietly(lambda: lf.coverage(run, qrels, **options))
    assert lfs.coverage(run_sdf, qrels_sdf, **options).equals(one)


@pytest.mark.parametrize(
    ("label", "options", "names"),
    [(label, options, names) for _, label, options, _, names in LABELLED],
    ids=[case[0] for case in LABELLED],
)
def test_fractional_labels_mean_the_same_on_spark(spark, tmp_path, label, options, names):
    """Real labels from a Spark frame and from a TREC qrels file Spark reads."""
    from lexiframe import spark as lfs
    from lexiframe.spark import io as spark_io

    run = lf.read_run(RUNS, rank=True)
    labelled, path = labelled_qrels(lf.read_qrels(QRELS), label, tmp_path)
    expected = _quietly(lambda: lf.evaluate(run, labelled, names, n=N, **options))
    run_sdf = spark.createDataFrame(run.to_arrow())
    read = spark_io.read_qrels(spark, str(path), labels=options["labels"])
    for qrels_sdf in (spark.createDataFrame(labelled.to_arrow()), read):
        got = pl.from_arrow(lfs.evaluate(run_sdf, qrels_sdf, names, n=N, **options).toArrow())
        assert isinstance(got, pl.DataFrame)
        _assert_same({"one process": _sorted(expected), "spark": _sorted(got)})
    one = _quietly(lambda: lf.coverage(run, labelled, **options))
    assert lfs.coverage(run_sdf, read, **options).equals(one)
    with pytest.raises(InputError, match=r"is not an integer.*labels='gain'"):
        spark_io.read_qrels(spark, str(path))  # undeclared: refused, naming the option


class DropsLowScores(PositionsOptions):
    """Options that remove the run rows scored 1.5 or less: a row-removing option as a new
    one would state it (PositionsOptions.kept_rows), defined here."""

    @property
    def kept_rows(self) -> pl.Expr:
        return pl.col("order") > 1.5


def test_an_option_that_removes_rows_reaches_spark(spark):
    """The rows an option removes are removed on Spark by the one-process function, in
    evaluate and coverage alike; a system whose rows are all removed keeps worst-case rows.
    The options travel to Spark's workers by value (this module is pickled by value)."""
    from pyspark import cloudpickle

    from lexiframe import spark as lfs

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    run, qrels = lf.read_run(RUNS), lf.read_qrels(QRELS)
    run = run.with_columns(
        score=pl.when(pl.col("system") == "sys000").then(pl.col("score") - 100).otherwise("score")
    )
    options = DropsLowScores()
    expected = _quietly(lambda: lf.evaluate(run, qrels, ["AP", "ASL"], options=options))
    assert expected.filter(pl.col("system") == "sys000")["AP"].max() == 0
    run_sdf = spark.createDataFrame(run.to_arrow())
    qrels_sdf = spark.createDataFrame(qrels.to_arrow())
    got = pl.from_arrow(lfs.evaluate(run_sdf, qrels_sdf, ["AP", "ASL"], options=options).toArrow())
    assert isinstance(got, pl.DataFrame)
    _assert_same({"one process": _sorted(expected), "spark": _sorted(got)})
    coverage = lfs.coverage(run_sdf, qrels_sdf, options)
    assert coverage.equals(_quietly(lambda: lf.coverage(run, qrels, options)))
    row = coverage.filter(pl.col("system") == "sys000").row(0, named=True)
    assert row["skipped"] == row["evaluated"] > 0


def test_several_qrels_mean_the_same_on_spark(spark, tmp_path, capsys):
    """Several qrels sets in one table (a by= key of the qrels alone) give on Spark, in the
    API and the command, the frame and the tables one process gives."""
    from lexiframe import spark as lfs
    from lexiframe.cli import main
    from tests.test_multiqrels import llm_qrels
    from tests.test_paths import _sorted_keyed

    run, human = lf.read_run(RUNS), lf.read_qrels(QRELS)
    llm = llm_qrels(run, human)
    keyed = lf.concat_qrels({"human": human, "llm": llm})
    names = ["AP", "nDCG@10", "Bpref", "ASL", "ERR@10"]
    expected = _quietly(lambda: lf.evaluate(run, keyed, names, n=N, by="qrels"))
    run_sdf = spark.createDataFrame(run.to_arrow())
    qrels_sdf = spark.createDataFrame(keyed.to_arrow())
    got = pl.from_arrow(lfs.evaluate(run_sdf, qrels_sdf, names, n=N, by="qrels").toArrow())
    assert isinstance(got, pl.DataFrame)
    _assert_same({"one process": _sorted_keyed(expected), "spark": _sorted_keyed(got)})
    one = _quietly(lambda: lf.coverage(run, keyed, by="qrels"))
    assert lfs.coverage(run_sdf, qrels_sdf, by="qrels").equals(one)

    llm_file = tmp_path / "llm.txt"
    lf.write_trec_qrels(llm, llm_file)
    printed, tables = {}, {}
    for label, extra in (("here", []), ("spark", ["--spark", "local[2]"])):
        out = tmp_path / f"{label}.parquet"
        argv = ["evaluate", *map(str, RUNS), "--qrels", f"human={QRELS}", "--qrels",
                f"llm={llm_file}", "-m", "AP", "-m", "sgnLP", "-o", str(out), *extra]  # fmt: skip
        assert main(argv) == 0
        printed[label] = capsys.readouterr().out
        metrics = out.with_name(f"{label}-metrics.parquet")
        tables[label] = pl.read_parquet(metrics if metrics.is_file() else metrics / "*.parquet")
    assert printed["here"] == printed["spark"] and "sgnLP (mc4) qrels=llm" in printed["here"]
    _assert_same({key: _sorted_keyed(value) for key, value in tables.items()})
