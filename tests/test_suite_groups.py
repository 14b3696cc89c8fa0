"""The suite's own layout (tests/conftest.py): every test that uses a Spark session or the
standalone cluster is in the group that shares it, and each group runs whole in one worker,
so that a test run starts one session and one cluster."""

from __future__ import annotations

from types import SimpleNamespace

from conftest import SparkGroups, misgrouped, spark_group


def _item(nodeid: str, *fixtures: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, fixturenames=["request", *fixtures])


def test_a_test_using_a_shared_fixture_outside_its_group_is_named():
    items = [
        _item("tests/test_spark.py::test_a", "spark"),
        _item("tests/test_spark_cluster.py::test_b", "spark_cluster", "tmp_path"),
        _item("tests/test_peers.py::test_spark_reads_names", "spark"),
        _item("tests/test_docs_examples.py::test_page[scaling-out.md]"),
        _item("tests/test_io.py::test_c", "tmp_path"),
        _item("tests/test_io.py::test_d", "spark"),  # would start a second session
        _item("tests/test_spark.py::test_e", "spark_cluster"),  # the cluster's, elsewhere
        _item("tests/test_spark_cluster.py::test_f", "spark", "spark_cluster"),  # both
    ]
    assert misgrouped(items) == [
        "tests/test_io.py::test_d",
        "tests/test_spark.py::test_e",
        "tests/test_spark_cluster.py::test_f",
    ]


def test_the_scheduler_sends_each_group_whole_and_other_tests_alone():
    split = SparkGroups._split_scope
    scopes = {
        nodeid: split(None, nodeid)  # type: ignore[arg-type]  # reads the node id only
        for nodeid in [
            "tests/test_spark.py::test_a[x]",
            "tests/test_paths_spark.py::test_b",
            "lexiframe/spark/ranking.py::lexiframe.spark.ranking.bucket_count",
            "tests/test_docs_examples.py::test_page[scaling-out.md]",
            "tests/test_spark_cluster.py::test_c",
            "tests/test_io.py::test_d[x]",
        ]
    }
    assert set(scopes.values()) == {"spark", "spark-cluster", "tests/test_io.py::test_d[x]"}
    assert spark_group("tests/test_docs_examples.py::test_page[README.md]") is None
