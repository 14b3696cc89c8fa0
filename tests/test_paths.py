"""One contract on every path: a positions option or a measure (built-in or defined by a
user) gives the same frame, with the same systems and queries, whether the run is a Polars
DataFrame, a LazyFrame, a pandas frame, files read in one batch or in many, or the
command line. Spark runs the same harness in tests/test_spark.py.

A new option is one entry of :data:`OPTIONS`; a new kind of user measure one function of
:data:`USER_MEASURES`. Several qrels sets in one frame (a by= key of the qrels alone) take
every path too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe._batched import positions_of_files
from lexiframe.cli import main
from lexiframe.errors import LexiframeWarning
from lexiframe.metrics import Needs, parse_measures, unregister
from lexiframe.options import PositionsOptions
from tests.conftest import DATA, polars_to_pandas

RUNS = sorted((DATA / "toy" / "runs").iterdir())
QRELS = DATA / "toy" / "qrels.txt"
N = 10_000
"""The corpus size given to the measures that need one."""


# Each option: its keyword arguments and its command-line flags (None: no flag).
OPTIONS: list[tuple[str, dict[str, Any], list[str] | None]] = [
    ("defaults", {}, []),
    ("threshold=2", {"threshold": 2}, ["--threshold", "2"]),
    ("depth=7", {"depth": 7}, ["--depth", "7"]),
    ("condensed", {"condensed": True}, ["--condensed"]),
    ("no_relevant=keep", {"no_relevant": "keep"}, ["--no-relevant", "keep"]),
    ("judged", {"judged": True}, None),
    ("grades", {"grades": True}, None),
    ("docs", {"docs": True}, None),
    ("rank_by=rank", {"rank_by": "rank"}, None),
    ("partitions=3", {"partitions": 3}, None),
    ("depth+threshold+keep", {"depth": 20, "threshold": 2, "no_relevant": "keep"},
     ["--depth", "20", "--threshold", "2", "--no-relevant", "keep"]),
    ("compat=trec_eval-9.0.8", {"compat": "trec_eval-9.0.8"}, ["--compat", "9.0.8"]),
    ("compat=pytrec_eval", {"compat": "pytrec_eval"}, ["--compat", "pytrec_eval"]),
    ("ties=rank", {"ties": "rank"}, ["--ties", "rank"]),
    ("ties=expected", {"ties": "expected"}, ["--ties", "expected"]),
    ("ties=expected+condensed+9.0.8", {"ties": "expected", "condensed": True,
                                       "compat": "trec_eval-9.0.8"},
     ["--ties", "expected", "--condensed", "--compat", "9.0.8"]),
]  # fmt: skip

BUILT_IN = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "ASL", "ERR@10", "SL3", "TSE(exposure='ap')",
            "IPrec@0.3"]  # fmt: skip
EXPECTED_OVER_TIES = ["AP", "AP@5", "nDCG@10", "P@5", "RR", "Bpref", "RBP", "Success@3", "RP",
                      "R@10", "SetF"]  # fmt: skip
"""Measures with a closed form over tied orderings: those ``ties="expected"`` takes (the
others, and the users' measures, are refused under it)."""


def measures_for(options: dict[str, Any], users: list[str]) -> list[str]:
    """The measures an option is run with: :data:`EXPECTED_OVER_TIES` under
    ``ties="expected"``, else the built-ins and the users' ``users``."""
    return EXPECTED_OVER_TIES if options.get("ties") == "expected" else BUILT_IN + users

# Fractional labels: the toy qrels' grades made real (grade g: gain 0.4 g, probability g / 2),
# with their options, flags and the measures they give.
EXPECTED = ["P@5", "Success@10", "RR", "RR@3", "ERR@10", "RBP(p=0.5)"]
LABELLED: list[tuple[str, pl.Expr, dict[str, Any], list[str], list[str]]] = [
    ("labels=gain", pl.col("relevance") * 0.4, {"labels": "gain", "threshold": 0.5},
     ["--labels", "gain", "--threshold", "0.5"], BUILT_IN),
    ("labels=probability", pl.col("relevance") / 2, {"labels": "probability"},
     ["--labels", "probability"], EXPECTED),
]  # fmt: skip


def _hits(k: int) -> pl.Expr:  # a cut-off
    return pl.col("positions").list.eval(pl.element() <= k).list.sum()


def _wasted() -> pl.Expr:  # a cost
    return pl.col("n_ret") - pl.col("positions").list.len()


def _discounted(p: float = 0.5) -> pl.Expr:  # a parameter
    return pl.col("positions").list.eval(pl.lit(p).pow(pl.element() - 1)).list.sum()


def _top_grade() -> pl.Expr:  # the grades
    return pl.col("grades").list.max().fill_null(0)


def _unretrieved(n: int | None = None) -> pl.Expr:  # the corpus size
    return pl.lit(n) - pl.col("n_ret")


def _first_doc_length() -> pl.Expr:  # a declared column
    return pl.col("docs").list.first().str.len_chars().fill_null(0)


USER_MEASURES: dict[str, tuple[Callable[..., pl.Expr], dict[str, Any]]] = {
    "PathHits": (_hits, {"cutoff": "required"}),
    "PathWasted": (_wasted, {"lower_is_better": True}),
    "PathDisc": (_discounted, {}),
    "PathTopGrade": (_top_grade, {"needs": Needs(grades=True, requires_grades=True)}),
    "PathUnretrieved": (_unretrieved, {}),
    "PathFirstDoc": (_first_doc_length, {"needs": Needs(columns=("docs",))}),
}
USER_NAMES = ["PathHits@10", "PathWasted", "PathDisc(p=0.8)", "PathTopGrade", "PathUnretrieved",
              "PathFirstDoc"]  # fmt: skip


@pytest.fixture(scope="module")
def user_measures() -> Iterator[None]:
    for name, (function, declared) in USER_MEASURES.items():
        lf.define_measure(name, function, summary=name, **declared)
    yield
    for name in USER_MEASURES:
        unregister(name)


@pytest.fixture(scope="module")
def run() -> pl.DataFrame:
    return lf.read_run(RUNS, rank=True)


@pytest.fixture(scope="module")
def qrels() -> pl.DataFrame:
    return lf.read_qrels(QRELS)


KEYS = ["system", "query"]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(KEYS).select(*KEYS, pl.exclude(KEYS))


def _quietly(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        return call()


def _paths(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    names: list[str],
    options: dict[str, Any],
    flags: list[str] | None,
    tmp: Path,
    qrels_path: Path = QRELS,
) -> dict[str, pl.DataFrame]:
    """The same evaluation on every path, each brought back to a sorted Polars frame."""
    kwargs = {"n": N, **options}
    files = {"system_from": "field"} if options.get("rank_by") != "rank" else {}
    results = {
        "eager": lf.evaluate(run, qrels, names, **kwargs),
        "lazy": lf.evaluate(run.lazy(), qrels.lazy(), names, **kwargs).collect(),
        "pandas": pl.from_pandas(
            polars_to_pandas(run).lexi.evaluate(polars_to_pandas(qrels), names, **kwargs)
        ),
    }
    if not files:  # the rank column of TREC files is read by read_run(rank=True) only
        return {key: _sorted(value) for key, value in results.items()}
    results["files"] = lf.evaluate(RUNS, qrels_path, names, **kwargs)
    completed = PositionsOptions.of(**options).for_measures(parse_measures(names))
    for batch_bytes in (3_000, 40_000):  # many batches, rankings split between them
        frame = positions_of_files(RUNS, qrels, completed, batch_bytes=batch_bytes)
        per_query = lf.measures(frame, names, n=N, compat=completed.compat, labels=completed.labels)
        results[f"files in batches of {batch_bytes} bytes"] = per_query
    if flags is not None:
        out = tmp / "per_query.parquet"
        measures = [flag for name in names for flag in ("-m", name)]
        argv = ["evaluate", "--qrels", str(qrels_path), *measures, *flags, "--n", str(N)]
        assert main([*argv, *map(str, RUNS), "--output", str(out)]) == 0
        results["cli"] = pl.read_parquet(out)
    return {key: _sorted(value) for key, value in results.items()}


def _assert_same(results: dict[str, pl.DataFrame]) -> None:
    reference_name, reference = next(iter(results.items()))
    assert reference.height > 0
    for name, frame in results.items():
        assert frame.columns == reference.columns, name
        # The same rankings: every system and query, nothing added or dropped.
        assert frame.select(KEYS).equals(reference.select(KEYS)), (name, reference_name)
        assert_frame_equal(frame, reference, check_dtypes=False, abs_tol=1e-12), name


@pytest.mark.parametrize(("options", "flags"), [(o, f) for _, o, f in OPTIONS],
                         ids=[name for name, _, _ in OPTIONS])  # fmt: skip
def test_an_option_means_the_same_on_every_path(
    run, qrels, user_measures, tmp_path, options, flags
):
    names = measures_for(options, USER_NAMES)
    results = _quietly(lambda: _paths(run, qrels, names, options, flags, tmp_path))
    assert len(results) >= 3
    _assert_same(results)


def labelled_qrels(qrels: pl.DataFrame, label: pl.Expr, tmp: Path) -> tuple[pl.DataFrame, Path]:
    """The qrels with real labels, as a frame and as a TREC qrels file."""
    labelled = qrels.with_columns(label.alias("relevance"))
    path = tmp / "qrels.txt"
    rows = labelled.select(pl.format("{} 0 {} {}", "query", "doc", "relevance"))
    path.write_text("\n".join(rows.to_series()) + "\n")
    return labelled, path


@pytest.mark.parametrize(
    ("label", "options", "flags", "names"),
    [case[1:] for case in LABELLED],
    ids=[case[0] for case in LABELLED],
)
def test_fractional_labels_mean_the_same_on_every_path(
    run, qrels, user_measures, tmp_path, label, options, flags, names
):
    labelled, path = labelled_qrels(qrels, label, tmp_path)
    assert not labelled["relevance"].dtype.is_integer()
    results = _quietly(lambda: _paths(run, labelled, names, options, flags, tmp_path, path))
    assert len(results) >= 5
    _assert_same(results)


def test_a_user_measure_of_each_kind_is_its_definition(run, qrels, user_measures, tmp_path):
    """The users' measures against values computed here from the run and qrels directly."""
    got = _quietly(lambda: lf.evaluate(run, qrels, USER_NAMES, n=N))
    judged = run.join(qrels.filter(pl.col("relevance") >= 1), on=["query", "doc"], how="left")
    # trec_eval's order: score descending, then document id descending.
    ranked = judged.sort([*KEYS, "score", "doc"], descending=[False, False, True, True])
    ranked = ranked.with_columns(rank=pl.int_range(1, pl.len() + 1).over(KEYS))
    per = ranked.group_by(KEYS).agg(
        hits=(pl.col("relevance").is_not_null() & (pl.col("rank") <= 10)).sum(),
        n_ret=pl.len(),
        rel=pl.col("relevance").is_not_null().sum(),
        top=pl.col("relevance").max(),
    )
    table = got.join(per, on=KEYS, how="inner")
    assert table.height > 100
    assert (table["PathHits@10"] == table["hits"]).all()
    assert (table["PathWasted"] == table["n_ret"] - table["rel"]).all()
    assert (table["PathUnretrieved"] == N - table["n_ret"]).all()
    assert (table["PathTopGrade"] == table["top"].fill_null(0)).all()


def test_an_option_that_removes_rows_reaches_every_path(run, qrels, tmp_path, monkeypatch):
    """The one place an option removes run rows (PositionsOptions.kept_rows) is applied on
    every path before coverage, batching and ranking: each gives what the run with those
    rows taken out gives, and a system whose rows are all removed keeps its rows as a
    system that skipped every query."""
    cut = 1.5
    kept_rows = property(lambda self: pl.col("order") > cut)
    monkeypatch.setattr(PositionsOptions, "kept_rows", kept_rows)
    # sys000 loses every row: it must stay, with worst-case rows.
    run = run.with_columns(
        score=pl.when(pl.col("system") == "sys000").then(pl.col("score") - 100).otherwise("score")
    )
    runs = tmp_path / "runs"
    runs.mkdir()
    for (system,), rows in run.group_by("system"):
        rows.with_columns(Q0=pl.lit("Q0"), it=pl.lit(1)).select(
            "query", "Q0", "doc", "it", "score", "system"
        ).write_csv(runs / str(system), separator=" ", include_header=False)
    names = ["AP", "nDCG@10", "ASL", "Bpref"]
    systems = run.select("system").unique()
    kept = run.filter(pl.col("score") > cut)
    expected = _quietly(lambda: lf.measures(
        lf.positions(kept, qrels, systems=systems, judged=True, grades=True), names
    ))  # fmt: skip
    assert "sys000" in expected["system"].to_list()
    files = sorted(runs.iterdir())
    out = tmp_path / "out.parquet"
    argv = ["evaluate", "--qrels", str(QRELS), *[f for n in names for f in ("-m", n)]]
    batched = PositionsOptions(judged=True, grades=True)
    assert _quietly(lambda: main([*argv, *map(str, files), "-o", str(out)])) == 0
    results = _quietly(lambda: {
        "expected": expected,
        "eager": lf.evaluate(run, qrels, names),
        "lazy": lf.evaluate(run.lazy(), qrels.lazy(), names).collect(),
        "pandas": pl.from_pandas(
            polars_to_pandas(run).lexi.evaluate(polars_to_pandas(qrels), names)
        ),
        "files": lf.evaluate(files, QRELS, names),
        "files in batches": lf.measures(
            positions_of_files(files, qrels, batched, batch_bytes=3_000), names
        ),
        "cli": pl.read_parquet(out),
    })  # fmt: skip
    _assert_same({key: _sorted(value) for key, value in results.items()})
    coverage = _quietly(lambda: lf.coverage(run, qrels))
    row = coverage.filter(pl.col("system") == "sys000").row(0, named=True)
    assert row["skipped"] == row["evaluated"] > 0
    assert lf.coverage(run.lazy(), qrels).equals(coverage)


def _sorted_keyed(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("qrels", *KEYS).select("qrels", *KEYS, pl.exclude("qrels", *KEYS))


def test_several_qrels_mean_the_same_on_every_path(run, qrels, tmp_path):
    """Several qrels sets in one frame (a by= key of the qrels alone, lf.concat_qrels) give
    the same frame on every path, and each set's rows are those of the set evaluated
    alone (the second set judges a query the first does not, and leaves one out)."""
    from tests.test_multiqrels import llm_qrels

    llm = llm_qrels(run, qrels)
    llm_file = tmp_path / "llm.txt"
    lf.write_trec_qrels(llm, llm_file)
    sets = {"human": qrels, "llm": llm}
    keyed = lf.concat_qrels(sets)
    names, kwargs = BUILT_IN, {"n": N, "by": "qrels"}
    completed = PositionsOptions(by=("qrels",)).for_measures(parse_measures(names))
    out = tmp_path / "per_query.parquet"
    argv = ["evaluate", "--qrels", f"human={QRELS}", "--qrels", f"llm={llm_file}",
            *[flag for name in names for flag in ("-m", name)], "--n", str(N)]  # fmt: skip
    results = _quietly(lambda: {
        "one call per qrels": pl.concat(
            lf.evaluate(run, q, names, n=N).with_columns(qrels=pl.lit(name))
            for name, q in sets.items()
        ),
        "eager": lf.evaluate(run, keyed, names, **kwargs),
        "lazy": lf.evaluate(run.lazy(), keyed.lazy(), names, **kwargs).collect(),
        "pandas": pl.from_pandas(
            polars_to_pandas(run).lexi.evaluate(polars_to_pandas(keyed), names, **kwargs)
        ),
        "files": lf.evaluate(RUNS, keyed, names, **kwargs),
        **{
            f"files in batches of {size} bytes": lf.measures(
                positions_of_files(RUNS, keyed, completed, batch_bytes=size), names, n=N
            )
            for size in (3_000, 40_000)
        },
    })  # fmt: skip
    assert _quietly(lambda: main([*argv, *map(str, RUNS), "-o", str(out)])) == 0
    results["cli"] = pl.read_parquet(out)
    assert set(results["eager"]["qrels"]) == {"human", "llm"}
    _assert_same({key: _sorted_keyed(value) for key, value in results.items()})
