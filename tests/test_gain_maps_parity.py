"""G, nDCGRel and RnDCG with gains per grade against trec_eval's ``G.…``, ``ndcg_rel.…`` and
``Rndcg.…``.

Golden files (provenance in ``tests/data/README.md``), trec_eval 10.0 built from NIST's
source, on trec_eval's test collection and the toy track:

- ``<flags>.gain_maps.txt``: ``trec_eval <flags> -m runid`` with each of the four sets of
  gain maps of :data:`SETS` in turn, every run file under each set (flags ``-q -c``,
  ``-q -c -l 2``, ``-J -q -c``, ``-q -c -M 10``; on the toy also ``-q -c`` against its
  pooled qrels, whose grade -1 marks a pooled document left unassessed);
- ``q.c.gain_maps.1=2.5,2=2.sys000.txt``: gains less than 1 apart, which trec_eval's sort
  takes out of order in its ideal ranking (lexiframe refuses them);
- ``q.c.Rndcg.2=0.txt``: a query with a relevant document and no positive gain, where
  trec_eval's Rndcg divides 0 by 0.

Each golden is checked through the ``lexiframe trec_eval`` drop-in (line for line), and
through the API (``lf.evaluate``, and positions then measures) within trec_eval's 4 printed
decimals.
"""

from __future__ import annotations

import gzip
import math
import re
import warnings
from pathlib import Path

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.errors import DroppedQueriesWarning
from lexiframe.metrics.gain_order import ideal_gain_order
from tests import reference
from tests.conftest import DATA, Backend
from tests.test_trec_eval_parity import COLLECTIONS, collection

TOLERANCE = 5e-5 + 1e-9  # trec_eval's 4 printed decimals

# The -m arguments of each trec_eval call, and the measure each reads as.
SETS = [
    {
        "G.1=2,2=4": "G(gains={1: 2, 2: 4})",
        "ndcg_rel.1=1,2=5": "nDCGRel(gains={1: 1, 2: 5})",
        "Rndcg.2=7": "RnDCG(gains={2: 7})",
    },
    {  # grade 0 listed; a negative gain; the ideal order by gain, not by grade
        "G.0=0,1=3,2=7": "G(gains={0: 0, 1: 3, 2: 7})",
        "ndcg_rel.1=-1,2=2.5": "nDCGRel(gains={1: -1, 2: 2.5})",
        "Rndcg.1=4,2=1": "RnDCG(gains={1: 4, 2: 1})",
    },
    {  # negative values of G; gains less than 1 apart that trec_eval's sort keeps in order
        "G.1=-1,2=2.5": "G(gains={1: -1, 2: 2.5})",
        "ndcg_rel.1=4,2=1": "nDCGRel(gains={1: 4, 2: 1})",
        "Rndcg.1=1,2=1.5": "RnDCG(gains={1: 1, 2: 1.5})",
    },
    {  # grades of one gain (one level of Rndcg)
        "G.1=1,2=1.5": "G(gains={1: 1, 2: 1.5})",
        "ndcg_rel.1=2,2=2": "nDCGRel(gains={1: 2, 2: 2})",
        "Rndcg.1=3,2=3": "RnDCG(gains={1: 3, 2: 3})",
    },
]
MEASURES = {spelling: measure for group in SETS for spelling, measure in group.items()}


def printed(spelling: str) -> str:
    """The name trec_eval prints for ``-m <spelling>``: ``G.1=2,2=4`` prints ``G_1=2,2=4``."""
    return spelling.replace(".", "_", 1)


# Golden name: (trec_eval's flags, the API's options); the toy's -l 2 prints the bytes of
# its -q -c (each of its queries with a relevant document has one of grade 2).
VARIANTS = {
    "q.c": ([], {}),
    "q.c.l2": (["-l", "2"], {"threshold": 2}),
    "J.q.c": (["-J"], {"condensed": True}),
    "q.c.M10": (["-M", "10"], {"depth": 10}),
    "pooled.q.c": ([], {}),
}
CASES = [(name, variant) for name in COLLECTIONS for variant in VARIANTS]
CASES.remove(("trec_eval", "pooled.q.c"))


def golden_path(name: str, variant: str) -> Path:
    if name == "trec_eval":
        return DATA / "trec_eval" / "cli" / f"{variant}.gain_maps.txt"
    stored = "q.c" if variant == "q.c.l2" else variant
    return DATA / "toy" / "expected" / "trec_eval_cli" / f"{stored}.gain_maps.txt.gz"


def read_lines(path: Path) -> list[str]:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode().splitlines()
    return path.read_text().splitlines()


def files(name: str, variant: str) -> tuple[str, list[str]]:
    """The qrels and run files of a collection, as a command line takes them."""
    if name == "trec_eval":
        folder = DATA / "trec_eval"
        return str(folder / "qrels.test"), [str(folder / "results.test")]
    folder = DATA / "toy"
    qrels = folder / ("qrels.pooled.txt" if variant.startswith("pooled") else "qrels.txt")
    return str(qrels), [str(path) for path in sorted((folder / "runs").iterdir())]


def per_query(lines: list[str]) -> dict[tuple[str, str, str], float]:
    """trec_eval's per-query values by (run id, printed name, query): each call prints its
    queries' lines, then ``runid`` first among its ``all`` lines."""
    found: dict[tuple[str, str, str], float] = {}
    pending: list[tuple[str, str, float]] = []
    for line in lines:
        name, query, value = line.split()
        if name == "runid":
            found.update(((value, n, q), v) for n, q, v in pending)
            pending = []
        elif query != "all":
            pending.append((name, query, float(value)))
    assert not pending
    return found


def quietly(function, *args, **kwargs):
    """Call ``function`` with the dropped-query warning (the toy's unjudged 888) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        return function(*args, **kwargs)


def compare(got: pl.DataFrame, golden: dict[tuple[str, str, str], float], what: str) -> int:
    """Every value trec_eval printed, the same rankings on both sides; how many."""
    rows = {(r["system"], r["query"]): r for r in got.iter_rows(named=True)}
    checked = 0
    for spelling, measure in MEASURES.items():
        expected = {(s, q): v for (s, n, q), v in golden.items() if n == printed(spelling)}
        assert set(expected) == set(rows), (what, spelling)
        for key, want in expected.items():
            assert abs(rows[key][measure] - want) <= TOLERANCE, (what, spelling, key, want)
            checked += 1
    return checked


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_the_drop_in_prints_trec_evals_lines(name, variant, capsys):
    """``lexiframe trec_eval FLAGS -m runid -m G.… -m ndcg_rel.… -m Rndcg.…``, once per
    set of gain maps: trec_eval's text, line for line."""
    qrels, runs = files(name, variant)
    flags = ["-q", "-c", *VARIANTS[variant][0], "-m", "runid"]
    printed = []
    for group in SETS:
        measures = [item for spelling in group for item in ("-m", spelling)]
        assert main(["trec_eval", *flags, *measures, qrels, *runs]) == 0
        printed += capsys.readouterr().out.splitlines()
    assert printed == read_lines(golden_path(name, variant))


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_evaluate_and_measures_give_trec_evals_values(name, variant, backend: Backend):
    """``lf.evaluate(run, qrels, ["G(gains={1: 2, 2: 4})", …])`` with the options of the
    flags, and the positions frame then its measures: trec_eval's values per query."""
    data = collection(name)
    qrels = data.qrels
    if variant.startswith("pooled"):
        qrels = lf.read_qrels(files(name, variant)[0])
    golden = per_query(read_lines(golden_path(name, variant)))
    options = {"no_relevant": "keep", **VARIANTS[variant][1]}
    names = list(MEASURES.values())
    got = quietly(backend.evaluate, data.run, qrels, names, **options)
    assert compare(got, golden, "evaluate") > 0
    pos = quietly(backend.positions, data.run, qrels, grades=True, **options)
    assert compare(backend.measures(pos, names), golden, "positions→measures") > 0


def test_the_goldens_hold_what_the_gains_test():
    """Each gain map changes the numbers of the plain measure (the toy's grades are 0, 1,
    2), G goes negative, and -J and -M 10 change values: the goldens test the gains."""
    plain = collection("toy").golden["sys000"].per_query
    golden = per_query(read_lines(golden_path("toy", "q.c")))
    for spelling in MEASURES:
        root, _, _ = spelling.partition(".")
        mine = {q: v for (s, n, q), v in golden.items() if s == "sys000" and n == printed(spelling)}
        assert mine != plain[root], spelling
    assert min(v for (_, n, _), v in golden.items() if n == "G_1=-1,2=2.5") < 0
    for variant in ("J.q.c", "q.c.M10", "pooled.q.c"):
        assert per_query(read_lines(golden_path("toy", variant))) != golden, variant
    trec_eval = per_query(read_lines(golden_path("trec_eval", "q.c")))
    at_level_2 = per_query(read_lines(golden_path("trec_eval", "q.c.l2")))
    # qrels.test has no grade 2: at -l 2 no query has a relevant document, and Rndcg is 0.
    changed = {key[1] for key, value in at_level_2.items() if value != trec_eval[key]}
    assert changed == {"Rndcg_2=7", "Rndcg_1=4,2=1", "Rndcg_1=1,2=1.5", "Rndcg_1=3,2=3"}


def test_trec_evals_spellings_are_the_measures():
    for spelling, measure in MEASURES.items():
        assert str(lf.parse_measure(spelling)) == measure  # as -m takes it
        assert str(lf.parse_measure(printed(spelling))) == measure  # as trec_eval prints it
        assert str(lf.parse_measure(measure)) == measure


# trec_eval -q -c -m runid -m G.1=2.5,2=2 -m ndcg_rel.1=2.5,2=2 -m Rndcg.1=2.5,2=2 qrels.txt
# runs/sys000 (provenance in tests/data/README.md)
ORDER_GOLDEN = DATA / "toy/expected/trec_eval_cli/q.c.gain_maps.1=2.5,2=2.sys000.txt"
ORDER_MEASURES = {
    "G.1=2.5,2=2": (reference.g, "G(gains={1: 2.5, 2: 2})"),
    "ndcg_rel.1=2.5,2=2": (reference.ndcg_rel, "nDCGRel(gains={1: 2.5, 2: 2})"),
    "Rndcg.1=2.5,2=2": (reference.r_ndcg, "RnDCG(gains={1: 2.5, 2: 2})"),
}


def test_trec_evals_order_of_fractional_gains_is_what_lexiframe_refuses(capsys):
    """trec_eval's sort compares two gains by their difference cut to a whole number, so
    2.5 and 2 tie and its ideal ranking takes grade 2 (gain 2) before grade 1 (gain 2.5).
    G, ndcg_rel and Rndcg computed over the ideal ranking ``ideal_gain_order`` models give
    trec_eval's printed values query by query (G's inf and -nan where the lag's logarithm is
    0 or of a negative number); lexiframe refuses such gains rather than print another
    number."""
    gains = {0: 0.0, 1: 2.5, 2: 2.0}
    data = collection("toy")
    run = data.run.filter(pl.col("system") == "sys000")
    frame = quietly(lf.positions, run, data.qrels, no_relevant="keep", grades=True)
    golden = per_query(ORDER_GOLDEN.read_text().splitlines())
    assert {q for _, _, q in golden} == set(frame["query"])
    differs = nan = 0
    for row in frame.iter_rows(named=True):
        ranking = reference.Ranking(
            positions=row["positions"],
            n_rel=row["n_rel"],
            n_ret=row["n_ret"],
            grades=row["grades"],
            ideal_grades=row["ideal_grades"],
            gain_positions=row["positions"],
        )
        order = ideal_gain_order([(1, 2.5), (2, 2.0)], row["ideal_grades"])
        by_gain = {gains[g]: g for g in set(row["ideal_grades"])}
        ideal = [gain for gain in order for _ in range(row["ideal_grades"].count(by_gain[gain]))]
        differs += order != sorted(order, reverse=True)
        for spelling, (function, _) in ORDER_MEASURES.items():
            want = golden[("sys000", printed(spelling), row["query"])]
            got = function(ranking, True, gains, ideal)
            nan += math.isnan(want)
            assert math.isnan(got) == math.isnan(want), (spelling, row["query"])
            close = got == want or abs(got - want) <= TOLERANCE  # G's inf too
            assert math.isnan(want) or close, (spelling, row["query"])
    assert differs > 0 and nan > 0  # the order matters on this track
    refusal = "trec_eval compares gains by their difference cut to a whole number"
    qrels, runs = files("toy", "q.c")
    for spelling, (_, measure) in ORDER_MEASURES.items():
        with pytest.raises(lf.InputError, match=re.escape(refusal)):
            lf.evaluate(run, data.qrels, [measure])
        assert main(["trec_eval", "-q", "-c", "-m", spelling, qrels, runs[0]]) == 2
        assert refusal in capsys.readouterr().err
    # Gains 1 apart or more keep their order in trec_eval's sort: computed.
    assert lf.evaluate(run, data.qrels, ["G(gains={1: 3.5, 2: 2})"]).height > 0


def test_where_trec_evals_rndcg_divides_0_by_0_the_drop_in_prints_its_nan(capsys):
    """``-m Rndcg.2=0``: toy query 408 has relevant documents, all of grade 2, so no
    positive gain; trec_eval's Rndcg divides 0 by 0 there and prints -nan (and a -nan
    mean), as the drop-in does. lexiframe's RnDCG is 0 there, as nDCG and nDCGRel are for
    a query without a positive ideal gain."""
    qrels, runs = files("toy", "q.c")
    assert main(["trec_eval", "-q", "-c", "-m", "runid", "-m", "Rndcg.2=0", qrels, *runs]) == 0
    got = capsys.readouterr().out.splitlines()
    expected = read_lines(DATA / "toy/expected/trec_eval_cli/q.c.Rndcg.2=0.txt")
    assert got == expected
    nan_lines = [line for line in expected if line.endswith("\t  -nan")]
    assert len(nan_lines) == 2 * len(runs)  # query 408 and the mean, in each run's block
    # With -l 2 and no gain for grade 2 either, no query has a positive gain.
    flags = ["-q", "-c", "-J", "-l", "2", "-m", "runid", "-m", "Rndcg.1=0,2=0"]
    assert main(["trec_eval", *flags, qrels, *runs]) == 0
    got = capsys.readouterr().out.splitlines()
    assert got == read_lines(DATA / "toy/expected/trec_eval_cli/J.l2.q.c.Rndcg.1=0,2=0.txt")
    assert sum(line.endswith("\t  -nan") for line in got) > 2 * len(runs)
    data = collection("toy")
    per_query = quietly(lf.evaluate, data.run, data.qrels, ["RnDCG(gains={2: 0})"])
    values = per_query.filter(pl.col("query") == "408")["RnDCG(gains={2: 0})"]
    assert values.len() == len(runs) and (values == 0.0).all()


def test_gains_trec_eval_reads_outside_the_positions_frame_are_refused():
    """trec_eval's G.0=1 gives the judged non-relevant documents a gain and G.-1=1 the
    unjudged ones (its get_gain of their relevance -1): the positions frame holds neither."""
    for name in ["G.0=1", "ndcg_rel.-1=2", "RnDCG(gains={0: 0.5})"]:
        with pytest.raises(lf.UnknownMeasureError, match="cannot add a gain"):
            lf.parse_measure(name)


def test_a_gain_map_reads_the_grades_on_binary_qrels_and_not_without_them():
    """With gains= the measures read the frame's grades (lf.evaluate asks for them on
    binary qrels too); a frame without grades is refused with the fix."""
    run = pl.DataFrame({"system": ["s"] * 3, "query": ["q"] * 3, "doc": ["a", "b", "c"],
                        "score": [3.0, 2.0, 1.0]})  # fmt: skip
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["b", "c"], "relevance": [1, 1]})
    names = ["G(gains={1: 2})", "nDCGRel(gains={1: 2})", "RnDCG(gains={1: 2})"]
    got = lf.evaluate(run, qrels, [*names, "G", "nDCGRel", "RnDCG"])
    # nDCGRel and RnDCG are the same for gains scaled by one factor; G is not.
    assert got["nDCGRel(gains={1: 2})"].item() == pytest.approx(got["nDCGRel"].item())
    assert got["RnDCG(gains={1: 2})"].item() == pytest.approx(got["RnDCG"].item())
    assert got["G(gains={1: 2})"].item() != pytest.approx(got["G"].item())
    binary = lf.positions(run, qrels, grades=False)
    for name in names[1:]:
        with pytest.raises(lf.SchemaError, match="grades=True"):
            lf.measures(binary, [name])
