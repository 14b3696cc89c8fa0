"""ir_measures' and ranx's spellings give those tools' numbers: each spelling evaluated by
lexiframe against the tool itself, live, on the fixtures (the trec_eval test collection,
the eight toy runs, the run whose scores tie at float precision).

- ir_measures (its default pipeline): the measures it computes with pytrec_eval equal
  lexiframe's with ``compat="pytrec_eval"`` to the last bit (ir_measures adds 0 for a
  judged query the run skipped, which pytrec_eval leaves out); ``RR@k`` and ``Judged@k``, its
  own code, equal lexiframe's on rankings in its order (score descending, document id
  ascending; trec_eval breaks ties by id descending); ``nDCG(dcg='exp-log2')@k`` and
  ``ERR@k``, the TREC Web track's gdeval (perl), agree within half a unit of its fifth
  printed decimal; ``RBP(rel=1)``, cwl_eval's, within 1e-12 on rankings without ties.
- ranx: on rankings without tied scores, equal to the last bit (P, R, RR, AP, R-precision,
  hits, hit_rate, bpref, the set measures), nDCG and F1@k within 1e-12 (ranx adds with
  NumPy's pairwise sum and log2, and divides in another order); ranx orders tied
  scores its own way (an unstable sort), so runs with ties are compared on the queries
  without them. ranx's bpref divides by 0 for a query that judges no document relevant, or
  none non-relevant, and then gives NaN or 0, for the other queries of the call too (ranx
  0.3.21): bpref is compared where every query judges both kinds.

ir_measures and ranx are optional: these tests skip where they are not installed.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import lexiframe as lf
from lexiframe.metrics import parse_measure
from tests.conftest import DATA

COLLECTIONS = {
    "trec_eval": (DATA / "trec_eval/qrels.test", [DATA / "trec_eval/results.test"]),
    "toy": (DATA / "toy/qrels.txt", sorted((DATA / "toy/runs").iterdir())),
    "float32": (DATA / "toy/qrels.txt", [DATA / "toy/float32/f32ties"]),
}
GDEVAL_TOLERANCE = 5e-6 + 1e-9
"""gdeval prints 5 decimals."""


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    frame = lf.read_qrels(path)
    out: dict[str, dict[str, int]] = {}
    for query, doc, grade in frame.select("query", "doc", "relevance").iter_rows():
        out.setdefault(str(query), {})[doc] = int(grade)
    return out


def _run(path: Path) -> pl.DataFrame:
    return lf.read_run(path).select("system", pl.col("query").cast(pl.String), "doc", "score")


def _as_dict(run: pl.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for query, doc, score in run.select("query", "doc", "score").iter_rows():
        out.setdefault(query, {})[doc] = score
    return out


def _ranked(run: pl.DataFrame, doc_descending: bool) -> pl.DataFrame:
    """The run with distinct scores in the order of score descending, then document id
    (descending: trec_eval's order; ascending: ir_measures' own code's)."""
    order = run.sort(["query", "score", "doc"], descending=[False, True, doc_descending])
    return order.with_columns(score=-pl.int_range(pl.len()).over("query").cast(pl.Float64))


def _lexiframe(run: pl.DataFrame, qrels: Path, names: list[str], **options: object) -> dict:
    """lexiframe's values by (query, spelling)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        table = lf.evaluate(run, lf.read_qrels(qrels), names, **options)  # type: ignore[arg-type]
    return {
        (str(row["query"]), name): row[parse_measure(name).name]
        for row in table.iter_rows(named=True)
        for name in names
    }


def _cases() -> list[tuple[str, Path, Path]]:
    return [(case, qrels, run) for case, (qrels, runs) in COLLECTIONS.items() for run in runs]


CASES = _cases()
IDS = [f"{case}-{run.name}" for case, _, run in CASES]


# --- ir_measures --------------------------------------------------------------------------

PYTREC_EVAL = [
    "nDCG", "nDCG@10", "NDCG@5", "nDCG(gains={0:0,1:1,2:3})@10", "nDCG(dcg='log2')@20",
    "AP", "MAP@100", "AP(rel=2)", "AP(rel=2)@10", "P@10", "P(rel=2)@5", "Precision@20",
    "R@100", "Recall@10", "RR", "MRR", "RR(rel=2)", "Rprec", "RPrec(rel=2)", "Success@10",
    "Success(rel=2)@5", "Bpref", "infAP", "IPrec@0.5", "IPrec@0.2", "NumRet", "NumRel",
    "NumRelRet", "NumRet(rel=2)", "SetP", "SetP(rel=2)", "SetR", "SetF", "SetF(beta=0.5)",
    "SetAP", "SetRelP", "SetP(relative=True)",
]  # fmt: skip
"""ir_measures' spellings of the measures its default pipeline takes from pytrec_eval."""
OWN_CODE = ["RR@10", "RR@5", "MRR(rel=2)@10", "Judged@10", "Judged@5"]
"""Computed by ir_measures' own code (its msmarco and judged providers)."""
GDEVAL = ["nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@20", "ERR@10", "ERR@20"]


def _ir_measures(run: pl.DataFrame, qrels: Path, names: list[str]) -> dict:
    """ir_measures' values per (query, name). A gain map goes in a call of its own: trec_eval
    keeps ndcg's gains in a global table, so pytrec_eval's evaluators of one call, plain nDCG
    beside nDCG(gains=…), are right only in the order ir_measures happens to build them (a
    set's order, which changes with Python's hash seed: 1 seed in 8 gave every nDCG the
    gains)."""
    ir_measures = pytest.importorskip("ir_measures")
    found = {}
    for group in ([n for n in names if "gains=" not in n], [n for n in names if "gains=" in n]):
        if not group:
            continue
        measures = {ir_measures.parse_measure(name): name for name in group}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = ir_measures.iter_calc(list(measures), _qrels(qrels), _as_dict(run))
            found |= {(m.query_id, measures[m.measure]): m.value for m in values}
    return found


def _differences(ours: dict, theirs: dict, tolerance: float = 0.0) -> list:
    assert theirs
    missing = sorted(set(theirs) - set(ours))
    assert not missing, missing[:5]
    return [
        (key, ours[key], value)
        for key, value in theirs.items()
        if not (ours[key] == value or abs(ours[key] - value) <= tolerance)
    ]


@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ir_measures_pytrec_eval_measures_to_the_last_bit(case, qrels, path):
    run = _run(path)
    theirs = _ir_measures(run, qrels, PYTREC_EVAL)
    ours = _lexiframe(run, qrels, PYTREC_EVAL, compat="pytrec_eval")
    # ir_measures adds 0 for each judged query the run skipped; pytrec_eval (and lexiframe
    # with its compat setting) leaves them out.
    skipped = set(_qrels(qrels)) - set(run["query"])
    assert {query for query, _ in theirs} - {query for query, _ in ours} == skipped
    assert {theirs[key] for key in theirs if key[0] in skipped} <= {0.0}
    shared = {key: value for key, value in theirs.items() if key[0] not in skipped}
    assert _differences(ours, shared) == []


@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ir_measures_own_code_in_its_order(case, qrels, path):
    run = _ranked(_run(path), doc_descending=False)
    theirs = _ir_measures(run, qrels, OWN_CODE)
    ours = _lexiframe(run, qrels, OWN_CODE, no_relevant="keep")
    assert _differences(ours, theirs) == []


CWL_EVAL = ["RBP(rel=1)", "RBP(p=0.9, rel=1)", "RBP(p=0.5, rel=2)"]
"""ir_measures' RBP, binary at a level, computed by cwl_eval."""


@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ir_measures_cwl_eval_rbp(case, qrels, path):
    """cwl_eval takes tied scores in the run's order and sums with NumPy's dot: within
    1e-12 on rankings without ties."""
    pytest.importorskip("cwl")
    run = _ranked(_run(path), doc_descending=True)
    theirs = _ir_measures(run, qrels, CWL_EVAL)
    ours = _lexiframe(run, qrels, CWL_EVAL, no_relevant="keep")
    assert _differences(ours, theirs, 1e-12) == []


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval is a perl script")
@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ir_measures_gdeval_measures(case, qrels, path):
    run = _run(path)
    theirs = _ir_measures(run, qrels, GDEVAL)
    ours = _lexiframe(run, qrels, GDEVAL, no_relevant="keep")
    assert _differences(ours, theirs, GDEVAL_TOLERANCE) == []


# --- ranx ---------------------------------------------------------------------------------

RANX_EXACT = [
    "mrr", "mrr@10", "precision@10", "precision@10-l2", "recall@100", "recall@10-l2",
    "hit_rate@10", "hit_rate@5-l2", "hits@10", "hits", "r-precision", "precision", "recall",
    "f1", "map", "map@100", "map-l2", "bpref",
]  # fmt: skip
RANX_CLOSE = [
    "ndcg", "ndcg@10", "ndcg@10-l2", "ndcg_burges@10", "ndcg_burges", "f1@10", "f1@5-l2",
    "dcg", "dcg@10", "dcg@10-l2", "dcg_burges@10", "dcg_burges",
]  # fmt: skip
"""Equal within 1e-12, not to the last bit: ranx adds (n)DCG with NumPy's pairwise sum over
every rank and NumPy's log2, and computes F as 2 ((P R)/(P + R)), P = hits/k."""


def _ranx(run: pl.DataFrame, qrels: Path, names: list[str]) -> dict:
    ranx = pytest.importorskip("ranx")
    ranx_qrels = ranx.Qrels(_qrels(qrels))
    ranx_run = ranx.Run(_as_dict(run))
    ranx.evaluate(ranx_qrels, ranx_run, names, make_comparable=True)
    scores = ranx_run.scores
    return {(query, name): value for name in names for query, value in scores[name].items()}


def _ranx_differences(run: pl.DataFrame, qrels: Path) -> tuple[list, list]:
    """The values ranx and lexiframe do not share, on the queries both score (ranx scores a
    query without a relevant document 0; lexiframe leaves it out by default), for the
    measures compared exactly and within 1e-12."""
    names = RANX_EXACT + RANX_CLOSE
    theirs = _ranx(run, qrels, names)
    ours = _lexiframe(run, qrels, names)
    assert {q for q, _ in ours} <= {q for q, _ in theirs}
    # ranx's bpref divides by 0 for a query without a relevant or a judged non-relevant
    # document, and then gives NaN or 0 for other queries of the call too.
    grades = [set(judged.values()) for judged in _qrels(qrels).values()]
    bpref_fails = any(min(g) > 0 or max(g) < 1 for g in grades)
    shared = {
        key: value
        for key, value in theirs.items()
        if key in ours and not (key[1] == "bpref" and bpref_fails)
    }
    exact = {key: value for key, value in shared.items() if key[1] in RANX_EXACT}
    close = {key: value for key, value in shared.items() if key[1] in RANX_CLOSE}
    return _differences(ours, exact), _differences(ours, close, 1e-12)


@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ranx_on_rankings_without_ties(case, qrels, path):
    assert _ranx_differences(_ranked(_run(path), doc_descending=True), qrels) == ([], [])


@pytest.mark.parametrize(("case", "qrels", "path"), CASES, ids=IDS)
def test_ranx_on_the_queries_whose_scores_do_not_tie(case, qrels, path):
    run = _run(path)
    tied = run.filter(pl.col("score").is_duplicated().over("query"))["query"].unique()
    untied = run.filter(~pl.col("query").is_in(tied.implode()))
    if untied.is_empty():
        pytest.skip("every query has tied scores")
    assert _ranx_differences(untied, qrels) == ([], [])


def test_ranx_bpref_without_a_judged_non_relevant_document_is_not_trec_evals():
    """The one difference of ranx's bpref: a query that judges no document non-relevant
    (ranx divides by min(R, N) = 0), where ranx 0.3.21 gives NaN or 0, and then for the
    other queries of the call too."""
    ranx = pytest.importorskip("ranx")
    qrels = {"1": {"a": 1, "b": 1}, "2": {"x": 1}}
    run = {"1": {"a": 2.0, "c": 1.0}, "2": {"x": 1.0}}
    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, "bpref")
    theirs = ranx_run.scores["bpref"]
    ours = dict(
        lf.evaluate(
            pl.DataFrame({"system": "s", "query": ["1", "1", "2"], "doc": ["a", "c", "x"],
                          "score": [2.0, 1.0, 1.0]}),
            pl.DataFrame({"query": ["1", "1", "2"], "doc": ["a", "b", "x"], "relevance": 1}),
            ["bpref"],
        ).select("query", "Bpref").iter_rows()
    )  # fmt: skip
    # trec_eval: a relevant document without a non-relevant one above counts 1
    assert ours == {"1": 0.5, "2": 1.0}
    assert theirs["1"] != 0.5 and theirs["2"] != 1.0  # NaN or 0: ranx divides by 0


@st.composite
def tracks(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, dict[str, int]]]:
    """A run of distinct scores and graded qrels over a small pool: unjudged and judged
    non-relevant documents, queries without a relevant document, skipped queries."""
    docs = [f"d{i:02d}" for i in range(10)]
    rows, qrels = [], {}
    for query in ("1", "2", "3"):
        size = 1 if query == "1" else 0  # ranx takes no empty run
        ranked = draw(st.lists(st.sampled_from(docs), min_size=size, max_size=8, unique=True))
        rows += [(query, doc, float(len(ranked) - i)) for i, doc in enumerate(ranked)]
        judged = draw(st.dictionaries(st.sampled_from(docs), st.integers(0, 3), min_size=1))
        qrels[query] = judged
    schema = {"query": pl.String, "doc": pl.String, "score": pl.Float64}
    run = pl.DataFrame(rows, schema=schema, orient="row")
    return run.with_columns(system=pl.lit("s")), qrels


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tracks())
def test_ranx_on_generated_tracks(tmp_path_factory, track):
    run, qrels = track
    assume(any(grade > 0 for judged in qrels.values() for grade in judged.values()))
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    assert _ranx_differences(run, path) == ([], [])
