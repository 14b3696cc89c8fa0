"""The suite's own layout (tests/conftest.py): every test that uses what a test run makes
once (a Spark session, the standalone cluster, the docs' site) is in the group that shares
it, and each group runs whole in one worker, so that a test run makes each once."""

from __future__ import annotations

from types import SimpleNamespace

from conftest import SharedGroups, misgrouped, shared_group


def _item(nodeid: str, *fixtures: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, fixturenames=["request", *fixtures])


def test_a_test_using_a_shared_fixture_outside_its_group_is_named():
    items = [
        _item("tests/test_spark.py::test_a", "spark"),
        _item("tests/test_spark_cluster.py::test_b", "spark_cluster", "tmp_path"),
        _item("tests/test_peers.py::test_spark_reads_names", "spark"),
        _item("tests/test_docs_examples.py::test_page[scaling-out.md]"),
        _item("tests/test_docs.py::test_site_builds", "site"),
        _item("tests/test_io.py::test_c", "tmp_path"),
        _item("tests/test_io.py::test_d", "spark"),  # would start a second session
        _item("tests/test_spark.py::test_e", "spark_cluster"),  # the cluster's, elsewhere
        _item("tests/test_spark_cluster.py::test_f", "spark", "spark_cluster"),  # both
        _item("tests/test_docs_examples.py::test_g", "site"),  # would build the site again
    ]
    assert misgrouped(items) == [
        "tests/test_io.py::test_d",
        "tests/test_spark.py::test_e",
        "tests/test_spark_cluster.py::test_f",
        "tests/test_docs_examples.py::test_g",
    ]


def test_the_scheduler_sends_each_group_whole_and_other_tests_alone():
    nodeids = [
        "tests/test_spark.py::test_a[x]",
        "tests/test_paths_spark.py::test_b",
        "lexiframe/spark/ranking.py::lexiframe.spark.ranking.bucket_count",
        "tests/test_docs_examples.py::test_page[scaling-out.md]",
        "tests/test_spark_cluster.py::test_c",
        "tests/test_docs.py::test_d",
        "tests/test_io.py::test_e[x]",
    ]
    scopes = {SharedGroups._split_scope(None, nodeid) for nodeid in nodeids}  # type: ignore[arg-type]
    assert scopes == {"spark", "spark-cluster", "docs-site", "tests/test_io.py::test_e[x]"}
    assert shared_group("tests/test_docs_examples.py::test_page[README.md]") is None
