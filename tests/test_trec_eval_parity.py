"""Parity with trec_eval on its own test collection and on the toy track.

Golden files (provenance in ``tests/data/README.md``):
- ``trec_eval/expected.all_trec.txt``: ``trec_eval -q -c -m all_trec qrels.test results.test``
- ``toy/expected/trec_eval/<run>.txt``: ``trec_eval -q -c -m all_trec qrels.txt runs/<run>``

trec_eval prints 4 decimals, so values agree within half a unit of the last digit. Measures
are requested by their trec_eval names (the registry's aliases), and compared through the
canonical column names the registry gives them.

trec_eval (10, with or without ``-c``) also evaluates, as 0, a judged query without any
relevant document (the toy track's ``999``). lexiframe drops such queries by default, so it
evaluates trec_eval's queries with ``num_rel > 0`` and its means are rescaled for the
comparison; ``no_relevant="keep"`` evaluates them too and gives trec_eval's means as they are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import re
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import DroppedQueriesWarning
from tests import reference
from tests.conftest import DATA, Backend, read_trec_qrels, read_trec_run

TOLERANCE = 5e-5 + 1e-9  # trec_eval's 4 printed decimals (and float noise on the boundary)

# trec_eval measure name patterns that lexiframe computes per query.
PARITY = re.compile(
    r"^(recip_rank|map|Rprec|ndcg|P_\d+|recall_\d+|ndcg_cut_\d+|map_cut_\d+|success_\d+"
    r"|num_ret|num_rel|num_rel_ret|set_P|set_recall|set_F|iprec_at_recall_[\d.]+"
    r"|bpref|infAP|num_nonrel_judged_ret|unj_\d+"
    r"|set_relative_P|set_map|utility|relative_P_\d+|Rprec_mult_[\d.]+|11pt_avg"
    r"|binG|G|ndcg_rel|Rndcg|rbp_resid)$"
)
# trec_eval's `all` line sums these counts over the queries instead of averaging them.
SUMMED = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


@dataclass(frozen=True)
class Golden:
    """trec_eval's output for one run: per-query values and the ``all`` line."""

    system: str
    per_query: dict[str, dict[str, float]]  # measure → query → value
    mean: dict[str, float]  # measure → ``all`` value
    num_q: int

    @property
    def queries(self) -> set[str]:
        return set(self.per_query["num_rel"])

    @property
    def queries_with_relevant(self) -> set[str]:
        return {q for q, value in self.per_query["num_rel"].items() if value > 0}

    @property
    def measures(self) -> list[str]:
        return sorted(name for name in self.per_query if PARITY.match(name))


def parse_trec_eval(path: Path) -> Golden:
    return parse_trec_eval_text(path.read_text())


def parse_trec_eval_text(text: str) -> Golden:
    """trec_eval's output for one run, read from its text (no file: the tests run in
    parallel workers)."""
    per_query: dict[str, dict[str, float]] = {}
    mean: dict[str, float] = {}
    system = ""
    num_q = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        name, query, value = line.split()
        if name == "runid":
            system = value
        elif name == "num_q":
            num_q = int(value)
        elif name == "relstring":
            continue
        elif query == "all":
            mean[name] = float(value)
        else:
            per_query.setdefault(name, {})[query] = float(value)
    return Golden(system, per_query, mean, num_q)


@dataclass(frozen=True)
class Collection:
    name: str
    run: pl.DataFrame
    qrels: pl.DataFrame
    golden: dict[str, Golden]  # system → trec_eval output

    @property
    def measures(self) -> list[str]:
        names = {name for golden in self.golden.values() for name in golden.measures}
        return sorted(names)


@cache
def collection(name: str) -> Collection:
    if name == "trec_eval":
        folder = DATA / "trec_eval"
        run = read_trec_run(folder / "results.test")
        qrels = read_trec_qrels(folder / "qrels.test")
        golden = [parse_trec_eval(folder / "expected.all_trec.txt")]
    else:
        folder = DATA / "toy"
        run = read_trec_run(*sorted((folder / "runs").iterdir()))
        qrels = read_trec_qrels(folder / "qrels.txt")
        golden = [
            parse_trec_eval(path) for path in sorted((folder / "expected/trec_eval").iterdir())
        ]
    return Collection(name, run, qrels, {g.system: g for g in golden})


COLLECTIONS = ["trec_eval", "toy"]


def dropped_queries_expected(data: Collection) -> bool:
    """Does the run answer a query without a relevant judgment (toy: 888 of sys001)?"""
    relevant = data.qrels.filter(pl.col("relevance") >= 1)["query"].unique()
    return not data.run["query"].unique().is_in(relevant.implode()).all()


def evaluate_checking_drops(data: Collection, evaluate, names: list[str]) -> pl.DataFrame:
    """Run ``evaluate``; the dropped-query warning must fire exactly when queries drop."""
    if dropped_queries_expected(data):
        with pytest.warns(DroppedQueriesWarning, match="888"):
            return evaluate(data.run, data.qrels, names)
    return evaluate(data.run, data.qrels, names)


def assert_close(got: float, expected: float, what: str) -> None:
    assert abs(got - expected) <= TOLERANCE, f"{what}: lexiframe {got!r}, trec_eval {expected!r}"


@pytest.mark.parametrize("name", COLLECTIONS)
def test_fixtures_are_what_the_readme_says(name):
    data = collection(name)
    assert data.measures, "no comparable trec_eval measure found"
    for required in ["recip_rank", "map", "Rprec", "ndcg", "P_10", "recall_10", "ndcg_cut_10"]:
        assert required in data.measures
    assert set(data.golden) == set(data.run["system"].unique())


@pytest.mark.parametrize("name", COLLECTIONS)
def test_per_query_parity(name, backend: Backend):
    """Every per-query value trec_eval prints for the measures of PARITY (all_trec but
    relstring, the geometric means and runid, num_q)."""
    data = collection(name)
    names = data.measures
    columns = {te: str(lf.parse_measure(te)) for te in names}

    if backend.warns_on_drop:
        got = evaluate_checking_drops(data, backend.evaluate, names)
    else:
        # A LazyFrame plan cannot warn; warnings are errors, so none may fire here.
        got = backend.evaluate(data.run, data.qrels, names)
    assert set(got.columns) == {"system", "query", *columns.values()}

    checked = 0
    for system, golden in data.golden.items():
        mine = got.filter(pl.col("system") == system)
        # The evaluated queries are trec_eval's, less the ones without a relevant document.
        assert set(mine["query"].to_list()) == golden.queries_with_relevant
        assert mine.height == len(golden.queries_with_relevant)
        rows = {row["query"]: row for row in mine.iter_rows(named=True)}
        for te_name in names:
            for query in golden.queries_with_relevant:
                expected = golden.per_query[te_name][query]
                value = rows[query][columns[te_name]]
                assert_close(value, expected, f"{system} {query} {te_name}")
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", COLLECTIONS)
def test_counts_match_num_rel_num_ret_num_rel_ret(name):
    data = collection(name)
    if dropped_queries_expected(data):
        with pytest.warns(DroppedQueriesWarning):
            pos = data.run.lexi.positions(data.qrels)
    else:
        pos = data.run.lexi.positions(data.qrels)
    for system, golden in data.golden.items():
        for row in pos.filter(pl.col("system") == system).iter_rows(named=True):
            query = row["query"]
            assert row["n_rel"] == golden.per_query["num_rel"][query], (system, query)
            assert row["n_ret"] == golden.per_query["num_ret"][query], (system, query)
            assert len(row["positions"]) == golden.per_query["num_rel_ret"][query], (system, query)


@pytest.mark.parametrize("name", COLLECTIONS)
def test_all_line_means(name):
    """trec_eval -c means: a skipped query scores 0 and still counts.

    trec_eval's ``num_q`` also counts judged queries without a relevant document (scored 0);
    lexiframe does not evaluate them, so its mean over n_queries is rescaled by
    n_queries/num_q before the comparison.
    """
    data = collection(name)
    names = data.measures
    per_query = evaluate_checking_drops(data, lf.evaluate, names)
    summary = lf.summarize(per_query)
    for system, golden in data.golden.items():
        row = summary.filter(pl.col("system") == system).row(0, named=True)
        without_relevant = golden.queries - golden.queries_with_relevant
        assert golden.num_q == len(golden.queries)
        assert row["n_queries"] == golden.num_q - len(without_relevant)
        for te_name in names:
            if te_name not in golden.mean or te_name in SUMMED:
                continue  # sums cover the queries without relevant documents too: see below
            mean = row[str(lf.parse_measure(te_name))]
            assert_close(mean * row["n_queries"] / golden.num_q, golden.mean[te_name], te_name)


def test_toy_traps_are_handled():
    """The toy track's traps: skipped queries score 0, 888 and 999 are not evaluated."""
    data = collection("toy")
    with pytest.warns(DroppedQueriesWarning):
        per_query = data.run.lexi.evaluate(data.qrels, ["RR", "AP"])
    assert "999" not in per_query["query"].to_list()
    assert "888" not in per_query["query"].to_list()
    # sys002 did not answer 413; it still has a row, scored as its worst case.
    skipped = per_query.filter((pl.col("system") == "sys002") & (pl.col("query") == "413"))
    assert skipped.select("RR", "AP").row(0) == (0.0, 0.0)
    cov = lf.coverage(data.run, data.qrels).filter(pl.col("system").is_in(["sys001", "sys002"]))
    assert cov.sort("system").select("system", "evaluated", "skipped", "unjudged").rows() == [
        ("sys001", 20, 0, 1),
        ("sys002", 20, 1, 0),
    ]
    assert set(collection("toy").golden["sys001"].queries) - set(per_query["query"]) == {"999"}


@pytest.mark.parametrize("name", COLLECTIONS)
def test_reference_implementation_matches_trec_eval(name):
    """The pure-Python reference the property tests trust agrees with trec_eval too."""
    data = collection(name)
    rankings = reference.positions(
        data.run.select("system", "query", "doc", "score").iter_rows(),
        data.qrels.iter_rows(),
    )
    for (system, query), ranking in rankings.items():
        golden = data.golden[system]
        for te_name in ["recip_rank", "map", "Rprec", "P_10", "recall_100", "ndcg", "ndcg_cut_10"]:
            value = reference.measure(str(lf.parse_measure(te_name)), ranking)
            assert_close(value, golden.per_query[te_name][query], f"{system} {query} {te_name}")
    assert {query for _, query in rankings} == set.union(
        *(golden.queries_with_relevant for golden in data.golden.values())
    )


NDCG = ["ndcg", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_100"]


def _runs_and_qrels(name: str) -> tuple[list[str], str]:
    if name == "trec_eval":
        return [str(DATA / "trec_eval" / "results.test")], str(DATA / "trec_eval" / "qrels.test")
    runs = sorted(str(path) for path in (DATA / "toy" / "runs").iterdir())
    return runs, str(DATA / "toy" / "qrels.txt")


def assert_ndcg_parity(data: Collection, got: pl.DataFrame, path: str) -> int:
    checked = 0
    for system, golden in data.golden.items():
        rows = {r["query"]: r for r in got.filter(pl.col("system") == system).iter_rows(named=True)}
        assert set(rows) == golden.queries_with_relevant, (path, system)
        for te_name in NDCG:
            column = str(lf.parse_measure(te_name))
            for query, row in rows.items():
                expected = golden.per_query[te_name][query]
                assert_close(row[column], expected, f"{path}: {system} {query} {te_name}")
                checked += 1
    return checked


@pytest.mark.parametrize("name", COLLECTIONS)
def test_ndcg_is_trec_evals_through_positions_then_measures(name, backend: Backend):
    """One name, one number: the README's path (positions, then measures) gives trec_eval's
    graded ndcg and ndcg_cut_k, on every backend, as evaluate does."""
    data = collection(name)
    if backend.warns_on_drop and dropped_queries_expected(data):
        with pytest.warns(DroppedQueriesWarning):
            pos = backend.positions(data.run, data.qrels)
    else:
        pos = backend.positions(data.run, data.qrels)
    names = [str(lf.parse_measure(te_name)) for te_name in NDCG]
    assert assert_ndcg_parity(data, backend.measures(pos, names), "positions→measures") > 0


@pytest.mark.parametrize("name", COLLECTIONS)
def test_ndcg_is_trec_evals_through_the_cli(name, tmp_path, capsys):
    from lexiframe.cli import main

    runs, qrels = _runs_and_qrels(name)
    target = tmp_path / "per_query.parquet"
    measures = [arg for te_name in NDCG for arg in ("-m", te_name)]
    assert main(["evaluate", "--qrels", qrels, *measures, "--output", str(target), *runs]) == 0
    capsys.readouterr()
    assert assert_ndcg_parity(collection(name), pl.read_parquet(target), "CLI") > 0


def test_toy_sys007_ndcg_at_10_is_one_number():
    """The toy track's sys007: nDCG@10 per query and its mean over the 20 evaluated queries
    are trec_eval's on the positions path, evaluate, a LazyFrame and pandas alike."""
    data = collection("toy")
    golden = data.golden["sys007"]
    expected_mean = sum(
        golden.per_query["ndcg_cut_10"][q] for q in golden.queries_with_relevant
    ) / len(golden.queries_with_relevant)
    with pytest.warns(DroppedQueriesWarning):
        by_positions = data.run.lexi.positions(data.qrels).lexi.measures(["nDCG@10"])
    with pytest.warns(DroppedQueriesWarning):
        by_evaluate = lf.evaluate(data.run, data.qrels, ["nDCG@10"])
    lazy = lf.evaluate(data.run.lazy(), data.qrels.lazy(), ["nDCG@10"]).collect()
    with pytest.warns(DroppedQueriesWarning):
        by_pandas = pl.from_pandas(
            data.run.to_pandas().lexi.evaluate(data.qrels.to_pandas(), ["nDCG@10"])
        )
    means = [
        frame.filter(pl.col("system") == "sys007")["nDCG@10"].mean()
        for frame in (by_positions, by_evaluate, lazy, by_pandas)
    ]
    assert means == pytest.approx([means[0]] * 4, abs=1e-15)
    assert_close(means[0], expected_mean, "sys007 mean of the printed per-query values")
    # trec_eval's `all` averages 21 queries (999 has no relevant document and scores 0).
    assert_close(means[0] * 20 / golden.num_q, golden.mean["ndcg_cut_10"], "sys007 all")


RBP_FILES = {
    # p: trec_eval's measure name in the golden files (p = 0.9 is its default, in all_trec)
    0.5: "rbp_p=0.5",
    0.8: "rbp_p=0.8",
    0.9: "rbp",
}


@cache
def rbp_golden(name: str, p: float) -> dict[str, Golden]:
    """trec_eval 10's ``rbp`` per query and system (provenance in tests/data/README.md)."""
    if p == 0.9:
        return collection(name).golden
    if name == "trec_eval":
        paths = [DATA / "trec_eval" / f"expected.rbp_p={p}.txt"]
    else:
        paths = sorted((DATA / "toy" / "expected" / f"trec_eval_rbp_p={p}").iterdir())
    goldens = [parse_trec_eval(path) for path in paths]
    return {golden.system: golden for golden in goldens}


@pytest.mark.parametrize("p", sorted(RBP_FILES))
@pytest.mark.parametrize("name", COLLECTIONS)
def test_rbp_is_trec_evals_graded_rbp(name, p, backend: Backend):
    """RBP(p) on graded qrels: the grades scaled to [0, 1] by the query's top grade, per
    query as trec_eval 10 prints ``rbp`` (``-m rbp.p=…``), on every backend and through both
    the positions path and evaluate. A judged query without a relevant document (toy 999)
    and a skipped query score 0 there too."""
    data = collection(name)
    measure = str(lf.parse_measure(f"RBP(p={p})"))
    expecting_drops = backend.warns_on_drop and dropped_queries_expected(data)
    with pytest.warns(DroppedQueriesWarning) if expecting_drops else contextlib.nullcontext():
        by_evaluate = backend.evaluate(data.run, data.qrels, [measure])
    with pytest.warns(DroppedQueriesWarning) if expecting_drops else contextlib.nullcontext():
        pos = backend.positions(data.run, data.qrels)
    by_positions = backend.measures(pos, [measure])
    golden = rbp_golden(name, p)
    assert set(golden) == set(data.golden)
    te_name = RBP_FILES[p]
    for got in (by_evaluate, by_positions):
        checked = 0
        for system, expected in golden.items():
            rows = dict(got.filter(pl.col("system") == system).select("query", measure).rows())
            assert set(rows) == data.golden[system].queries_with_relevant
            assert set(expected.per_query[te_name]) >= set(rows)
            for query, value in expected.per_query[te_name].items():
                if query in rows:
                    assert_close(rows[query], value, f"{system} {query} {te_name}")
                    checked += 1
                else:
                    assert value == 0.0, (system, query)  # not evaluated: no relevant document
        assert checked > 0


def test_binary_rbp_stays_available():
    """Binary RBP stays available: the expression ``pl.col("positions").lexi.rbp(p=…)``
    (binary gains, the sum of TSE's rbp exposure over the retrieved relevant documents) is
    what the RBP measure gives on binary qrels, as the reference computes it."""
    data = collection("toy")
    binary = data.qrels.with_columns(pl.col("relevance").ge(1).cast(pl.Int64))
    with pytest.warns(DroppedQueriesWarning):
        pos = data.run.lexi.positions(binary)
    assert "grades" not in pos.columns
    got = pos.lexi.measures(["RBP(p=0.5)"]).join(
        pos.select("system", "query", exposure=pl.col("positions").lexi.rbp(p=0.5)),
        on=["system", "query"],
    )
    assert got["RBP(p=0.5)"].to_list() == pytest.approx(got["exposure"].to_list(), abs=1e-15)
    ranking = reference.positions(
        data.run.select("system", "query", "doc", "score").iter_rows(), binary.iter_rows()
    )
    for row in pos.iter_rows(named=True):
        want = reference.rbp(ranking[(row["system"], row["query"])].positions, 0.5)
        assert got.filter((pl.col("system") == row["system"]) & (pl.col("query") == row["query"]))[
            "RBP(p=0.5)"
        ].item() == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("name", COLLECTIONS)
def test_keeping_queries_without_relevant_documents_gives_trec_evals_means(name, backend):
    """``no_relevant="keep"``: the judged query without a relevant document (toy 999) is
    evaluated and scores 0, so the per-system means are trec_eval -c's ``all`` lines, over
    its ``num_q`` queries, with no rescaling."""
    data = collection(name)
    names = [*data.measures, "RBP(p=0.9)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)  # 888: unjudged, still dropped
        per_query = backend.evaluate(data.run, data.qrels, names, no_relevant="keep")
    summary = backend.summarize(per_query)
    for system, golden in data.golden.items():
        row = summary.filter(pl.col("system") == system).row(0, named=True)
        assert row["n_queries"] == golden.num_q
        for te_name in [*data.measures, "rbp"]:
            column = "RBP(p=0.9)" if te_name == "rbp" else str(lf.parse_measure(te_name))
            value = row[column] * row["n_queries"] if te_name in SUMMED else row[column]
            assert_close(value, golden.mean[te_name], f"{system} all {te_name}")
        rows = per_query.filter(pl.col("system") == system)
        assert set(rows["query"].to_list()) == golden.queries


def test_keeping_queries_without_relevant_documents_through_the_cli(tmp_path, capsys):
    from lexiframe.cli import main

    runs, qrels = _runs_and_qrels("toy")
    target = tmp_path / "summary.csv"
    arguments = ["-m", "map", "-m", "ndcg_cut_10", "--summary", str(target)]
    assert main(["evaluate", "--qrels", qrels, *arguments, "--no-relevant", "keep", *runs]) == 0
    capsys.readouterr()
    summary = pl.read_csv(target)
    for system, golden in collection("toy").golden.items():
        row = summary.filter(pl.col("system") == system).row(0, named=True)
        assert row["n_queries"] == golden.num_q == 21
        assert_close(row["AP"], golden.mean["map"], f"{system} map")
        assert_close(row["nDCG@10"], golden.mean["ndcg_cut_10"], f"{system} ndcg_cut_10")


def test_coverage_counts_the_kept_queries():
    data = collection("toy")
    drop = lf.coverage(data.run, data.qrels).sort("system")
    keep = lf.coverage(data.run, data.qrels, no_relevant="keep").sort("system")
    # Every toy system skips 999 (judged, no relevant document): dropped by default, a
    # skipped evaluated query when kept; sys002 also skips 413.
    assert keep["evaluated"].to_list() == [
        golden.num_q for _, golden in sorted(data.golden.items())
    ]
    assert (keep["skipped"] - drop["skipped"]).to_list() == [1] * 8
    assert keep.filter(pl.col("system") == "sys002")["skipped"].item() == 2
    assert keep["no_relevant"].sum() == 0
    assert keep["unjudged"].to_list() == drop["unjudged"].to_list()


@pytest.mark.parametrize("name", COLLECTIONS)
def test_rbp_by_trec_evals_names_gives_trec_evals_numbers(name):
    """``rbp`` is trec_eval's RBP with its default p = 0.9; ``rbp_p=0.5`` as it prints it."""
    assert str(lf.parse_measure("rbp")) == "RBP(p=0.9)"
    assert str(lf.parse_measure("rbp_p=0.5")) == "RBP(p=0.5)"
    assert str(lf.parse_measure("RBP")) == "RBP"  # the canonical name keeps p = 0.8
    data = collection(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        got = lf.evaluate(data.run, data.qrels, ["rbp", "rbp_p=0.5"])
    for te_name, column, p in (("rbp", "RBP(p=0.9)", 0.9), ("rbp_p=0.5", "RBP(p=0.5)", 0.5)):
        for system, golden in rbp_golden(name, p).items():
            rows = dict(got.filter(pl.col("system") == system).select("query", column).rows())
            for query, value in rows.items():
                assert_close(value, golden.per_query[te_name][query], f"{system} {query}")


# trec_eval measures that follow -l (its relevance level); nDCG, rbp, G, ndcg_rel and Rndcg
# read the grades, and rbp_resid the judgments.
LEVELED = re.compile(
    r"^(recip_rank|map|Rprec|P_\d+|recall_\d+|map_cut_\d+|success_\d+|num_rel|num_rel_ret"
    r"|set_P|set_recall|set_F|iprec_at_recall_[\d.]+"
    r"|set_relative_P|set_map|utility|relative_P_\d+|Rprec_mult_[\d.]+|11pt_avg|binG)$"
)
LEVEL_2 = {
    # trec_eval -q -c -l 2 -m all_trec (provenance in tests/data/README.md)
    "trec_eval": DATA / "trec_eval" / "cli" / "q.c.l2.all_trec.txt",
    "toy": DATA / "toy" / "expected" / "trec_eval_cli" / "q.c.l2.all_trec.txt.gz",
}


def parse_runs(path: Path) -> dict[str, Golden]:
    """Several trec_eval outputs one after another (one per run), by run id."""
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else None
    lines = (text if text is not None else path.read_text()).splitlines()
    blocks: list[list[str]] = [[]]
    for line in lines:
        is_summary = line.split()[1:2] == ["all"] if line.strip() else False
        if blocks[-1] and not is_summary and blocks[-1][-1].split()[1] == "all":
            blocks.append([])
        blocks[-1].append(line)
    found = {}
    for block in blocks:
        golden = parse_trec_eval_text("\n".join(block))
        found[golden.system] = golden
    return found


def at_level(te_name: str, level: int) -> lf.metrics.Measure:
    measure = lf.parse_measure(te_name)
    params = tuple((key, level if key == "rel" else value) for key, value in measure.params)
    return dataclasses.replace(measure, params=params)


@pytest.mark.parametrize("name", COLLECTIONS)
def test_measures_at_their_own_level_are_trec_evals_minus_l(name, backend: Backend):
    """``P(rel=2)@10``, ``AP(rel=2)``, …: per query and per run, what ``trec_eval -l 2``
    prints, with every other measure of the call at the frame's own level."""
    data = collection(name)
    golden_runs = parse_runs(LEVEL_2[name])
    assert set(golden_runs) == set(data.golden)
    te_names = sorted({n for g in golden_runs.values() for n in g.per_query if LEVELED.match(n)})
    assert len(te_names) > 40
    measures = {te: at_level(te, 2) for te in te_names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)  # 888: unjudged, still dropped
        # Binary qrels at level 2: every value is 0, as trec_eval prints, and said in a warning.
        warnings.filterwarnings("ignore", message=".*above the highest grade")
        got = backend.evaluate(data.run, data.qrels, [*measures.values(), "AP"], no_relevant="keep")
    checked = 0
    for system, golden in golden_runs.items():
        rows = {r["query"]: r for r in got.filter(pl.col("system") == system).iter_rows(named=True)}
        assert set(rows) == golden.queries
        for te_name, measure in measures.items():
            for query, row in rows.items():
                want = golden.per_query[te_name][query]
                assert_close(row[str(measure)], want, f"{system} {query} {measure}")
                checked += 1
            # the same measure at the frame's level is still trec_eval's without -l
        for query, row in rows.items():
            assert_close(row["AP"], data.golden[system].per_query["map"][query], "AP")
    assert checked > 0


def test_a_level_needs_the_grades_and_cannot_go_below_the_threshold():
    pos = pl.DataFrame(
        {"system": ["a"], "query": ["q"], "positions": [[1]], "n_rel": [1], "n_ret": [3]},
        schema_overrides={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32},
    )
    with pytest.raises(lf.SchemaError, match="grades=True"):
        lf.measures(pos, ["AP(rel=2)"])
    run = pl.DataFrame({"system": ["a"], "query": ["q"], "doc": ["d"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["d"], "relevance": [2]})
    with pytest.raises(lf.InputError, match="threshold=2"):
        lf.evaluate(run, qrels, ["AP(rel=1)"], threshold=2)
    for wrong in ["AP(rel=0)", "AP(rel='2')", "AP(rel=1.5)"]:
        with pytest.raises(lf.UnknownMeasureError, match="rel= is a relevance grade"):
            lf.evaluate(run, qrels, [wrong])
    # qrels of one relevant grade: lf.evaluate keeps the grades by itself.
    with pytest.warns(lf.LexiframeWarning, match=r"'AP\(rel=3\)': the relevance level is above"):
        got = lf.evaluate(run, qrels, ["AP(rel=2)", "AP(rel=3)", "AP"])
    assert got.select("AP(rel=2)", "AP(rel=3)", "AP").row(0) == (1.0, 0.0, 1.0)


GAIN_LEVEL_2 = {
    # trec_eval -q -c -l 2 -m runid -m num_rel -m map -m P.10 -m ndcg -m ndcg_cut.5,10,100
    # -m G -m ndcg_rel -m Rndcg -m binG (provenance in tests/data/README.md); rbp is read
    # from the -l 2 all_trec golden: trec_eval's rbp reads its scaling's minimum and maximum
    # uninitialised, so after ndcg or G in one call it may print another number.
    "trec_eval": DATA / "trec_eval" / "cli" / "q.c.l2.gain.txt",
    "toy": DATA / "toy" / "expected" / "trec_eval_cli" / "q.c.l2.gain.txt.gz",
}
GAIN_NAMES = ["num_rel", "map", "P_10", "ndcg", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_100"]
GAIN_NAMES += ["G", "ndcg_rel", "Rndcg", "binG"]


def gain_columns() -> dict[str, str]:
    """trec_eval's printed names of the gain golden and the columns lexiframe names them."""
    return {
        name: "n_rel" if name == "num_rel" else str(lf.parse_measure(name)) for name in GAIN_NAMES
    }


def assert_gain_level_2(name: str, got: pl.DataFrame, path: str) -> int:
    """Every per-query value of trec_eval -l 2's gain measures, and of num_rel, map and
    P_10 at the level; the number of values compared."""
    checked = 0
    goldens = parse_runs(GAIN_LEVEL_2[name])
    assert set(goldens) == set(got["system"].unique()), path
    for system, golden in goldens.items():
        rows = {r["query"]: r for r in got.filter(pl.col("system") == system).iter_rows(named=True)}
        assert set(rows) == golden.queries, (path, system)
        for te_name, column in gain_columns().items():
            for query, row in rows.items():
                want = golden.per_query[te_name][query]
                assert_close(row[column], want, f"{path}: {system} {query} {te_name}")
                checked += 1
    return checked


@pytest.mark.parametrize("name", COLLECTIONS)
def test_the_gain_golden_tells_gains_from_the_level(name):
    """In trec_eval's output, -l 2 changes map but not ndcg (the level decides what is
    relevant, not what gains); on qrels.test (grades 0 and 1) some query has nothing
    relevant at level 2 and an nDCG above 0."""
    data = collection(name)
    changed = 0
    for system, golden in parse_runs(GAIN_LEVEL_2[name]).items():
        level_1 = data.golden[system].per_query
        for query, ndcg in golden.per_query["ndcg"].items():
            assert ndcg == level_1["ndcg"].get(query, 0.0), (system, query)
            changed += golden.per_query["map"][query] != level_1["map"].get(query, 0.0)
            if name == "trec_eval" and golden.per_query["num_rel"][query] == 0:
                assert ndcg > 0, (system, query)
    assert changed > 0


@pytest.mark.parametrize("name", COLLECTIONS)
def test_gain_measures_at_a_level_are_trec_evals_minus_l(name, backend: Backend):
    """threshold=2 is trec_eval's -l 2: the level decides what is relevant (num_rel, map,
    P_10, binG), and nDCG, G, nDCGRel, RnDCG and RBP keep every positive grade as gain.
    Through evaluate and through positions then measures, on every backend."""
    data = collection(name)
    options = {"threshold": 2, "no_relevant": "keep"}
    names = [column for column in gain_columns().values() if column != "n_rel"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)  # 888: unjudged, still dropped
        got = backend.evaluate(data.run, data.qrels, names, **options)
        pos = backend.positions(data.run, data.qrels, **options)
    n_rel = pos.select("system", "query", "n_rel")
    got = got.join(n_rel, on=["system", "query"])
    assert assert_gain_level_2(name, got, "evaluate") > 0
    measured = backend.measures(pos, names).join(n_rel, on=["system", "query"])
    assert assert_gain_level_2(name, measured, "positions→measures") > 0


@pytest.mark.parametrize("name", COLLECTIONS)
def test_gain_measures_at_a_level_through_the_cli(name, tmp_path, capsys):
    """lexiframe evaluate --threshold 2 prints trec_eval -l 2's values."""
    from lexiframe.cli import main

    runs, qrels = _runs_and_qrels(name)
    target = tmp_path / "per_query.parquet"
    measures = [f"-m={column}" for column in gain_columns().values() if column != "n_rel"]
    options = ["--threshold", "2", "--no-relevant", "keep", "--output", str(target)]
    assert main(["evaluate", "--qrels", qrels, *measures, *options, *runs]) == 0
    capsys.readouterr()
    got = pl.read_parquet(target)
    data = collection(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        pos = lf.positions(data.run, data.qrels, threshold=2, no_relevant="keep")
    got = got.join(pos.select("system", "query", "n_rel"), on=["system", "query"])
    assert assert_gain_level_2(name, got, "lexiframe evaluate") > 0


@pytest.mark.parametrize("name", COLLECTIONS)
def test_gain_measures_at_a_level_through_the_drop_in(name, capsys):
    """lexiframe trec_eval -l 2 prints the golden line for line."""
    from lexiframe.cli import main

    runs, qrels = _runs_and_qrels(name)
    flags = ["-q", "-c", "-l", "2", "-m", "runid", "-m", "num_rel", "-m", "map", "-m", "P.10"]
    for measure in ["ndcg", "ndcg_cut.5,10,100", "G", "ndcg_rel", "Rndcg", "binG"]:
        flags += ["-m", measure]
    golden = GAIN_LEVEL_2[name]
    text = gzip.decompress(golden.read_bytes()).decode() if golden.suffix == ".gz" else None
    expected = text if text is not None else golden.read_text()
    printed = []
    for run in runs:  # one trec_eval call per run, as the golden was made
        assert main(["trec_eval", *flags, qrels, run]) == 0
        printed.append(capsys.readouterr().out)
    assert "".join(printed).splitlines() == expected.splitlines()


@pytest.mark.parametrize("name", COLLECTIONS)
def test_rbp_at_a_level_is_trec_evals_minus_l(name, backend: Backend):
    """RBP's gains at threshold=2 are every positive grade, scaled as at level 1: the rbp
    of trec_eval -l 2's all_trec output (the gain golden leaves rbp out)."""
    data = collection(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        got = backend.evaluate(data.run, data.qrels, ["rbp"], threshold=2, no_relevant="keep")
    checked = 0
    for system, golden in parse_runs(LEVEL_2[name]).items():
        rows = {r["query"]: r for r in got.filter(pl.col("system") == system).iter_rows(named=True)}
        assert set(rows) == golden.queries
        for query, row in rows.items():
            assert_close(row["RBP(p=0.9)"], golden.per_query["rbp"][query], f"{system} {query}")
            checked += 1
    assert checked > 0
