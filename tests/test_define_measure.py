"""Measures users define (lexiframe.define_measure): their names work wherever a built-in's
do, with values computed by hand, and bad definitions are refused with the reason."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.cli import main
from lexiframe.errors import InputError, UnknownMeasureError
from lexiframe.metrics import Needs, parse_measure, unregister
from tests.conftest import DATA, Backend

RUN = pl.DataFrame(
    {
        "system": ["a"] * 4 + ["b"] * 3,
        "query": ["q1"] * 4 + ["q1"] * 3,
        "doc": ["d1", "d2", "d3", "d4", "d3", "d1", "d9"],
        "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query": ["q1", "q1", "q1"], "doc": ["d1", "d3", "d5"], "relevance": [1, 2, 1]}
)
# a: relevant at ranks 1 and 3; b: relevant at ranks 1 and 2; 3 relevant documents.


def hits(k: int) -> pl.Expr:
    return pl.col("positions").list.eval(pl.element() <= k).list.sum()


def discounted(p: float = 0.5) -> pl.Expr:
    return pl.col("positions").list.eval(pl.lit(p).pow(pl.element() - 1)).list.sum()


def top_grade() -> pl.Expr:
    return pl.col("grades").list.max().fill_null(0)


def misses() -> pl.Expr:
    return pl.col("n_rel") - pl.col("positions").list.len()


@pytest.fixture
def defined() -> Iterator[None]:
    lf.define_measure("Hits", hits, cutoff="required", summary="relevant in the top k")
    lf.define_measure("Disc", discounted, summary="sum of p^(rank - 1)", aliases=("disc_sum",))
    lf.define_measure(
        "TopGrade",
        top_grade,
        summary="top grade retrieved",
        needs=Needs(grades=True, requires_grades=True),
    )
    lf.define_measure("Misses", misses, summary="relevant missed", lower_is_better=True)
    yield
    for name in ("Hits", "Disc", "TopGrade", "Misses"):
        unregister(name)


# By hand: a has ranks [1, 3], b has [1, 2]; grades a: [1, 2], b: [2, 1].
EXPECTED = {
    "Hits@2": {"a": 1.0, "b": 2.0},
    "Disc": {"a": 1 + 0.25, "b": 1 + 0.5},
    "Disc(p=0.1)": {"a": 1 + 0.01, "b": 1 + 0.1},
    "TopGrade": {"a": 2.0, "b": 2.0},
    "Misses": {"a": 1.0, "b": 1.0},
}


def test_defined_measures_on_every_backend(defined, backend: Backend):
    result = backend.evaluate(RUN, QRELS, list(EXPECTED))
    for name, values in EXPECTED.items():
        got = dict(zip(result["system"], result[name], strict=True))
        assert got == pytest.approx(values), name


def test_defined_measure_as_an_expression_and_on_a_positions_frame(defined):
    frame = lf.positions(RUN, QRELS, grades=True)
    via_frame = frame.lexi.measures(["Hits@2", "disc_sum(p=0.1)"]).sort("system")
    assert via_frame["Hits@2"].to_list() == [1.0, 2.0]
    assert via_frame["Disc(p=0.1)"].to_list() == pytest.approx([1.01, 1.1])
    expr = parse_measure("Hits@1").expr()
    assert frame.sort("system").select(expr)["Hits@1"].to_list() == [1.0, 1.0]


def test_defined_cost_orders_lowest_first_and_summarizes(defined):
    run = pl.concat([RUN, RUN.filter(pl.col("system") == "a").with_columns(system=pl.lit("c"))])
    run = run.filter(~((pl.col("system") == "c") & (pl.col("doc") == "d3")))
    per_query = lf.evaluate(run, QRELS, ["Misses"])  # a 1, b 1, c 2
    ordering = per_query.lexi.order("Misses", method="mean")
    assert ordering["system"].to_list()[-1] == "c"
    means = lf.summarize(per_query).sort("system")
    assert means["Misses"].to_list() == [1.0, 1.0, 2.0]


def test_evaluate_builds_the_columns_a_defined_measure_declares(defined):
    # Binary qrels: grades are kept only because TopGrade requires them.
    binary = QRELS.with_columns(relevance=pl.lit(1))
    result = lf.evaluate(RUN, binary, ["TopGrade"])
    assert result["TopGrade"].to_list() == [1.0, 1.0]
    with pytest.raises(lf.SchemaError, match="grades=True"):
        lf.positions(RUN, binary).lexi.measures(["TopGrade"])


def test_cli_measures_from_a_file(tmp_path, capsys):
    source = tmp_path / "my_measures.py"
    source.write_text(
        textwrap.dedent(
            """
            import polars as pl
            import lexiframe as lf

            def hits(k: int) -> pl.Expr:
                return pl.col("positions").list.eval(pl.element() <= k).list.sum()

            lf.define_measure("CliHits", hits, cutoff="required", summary="hits")
            """
        )
    )
    runs = sorted(str(path) for path in (DATA / "toy" / "runs").iterdir())[:2]
    qrels = str(DATA / "toy" / "qrels.txt")
    out = tmp_path / "per_query.parquet"
    try:
        code = main(
            ["evaluate", "--qrels", qrels, "--measures-from", str(source), "-m", "CliHits@10",
             "-m", "P@10", *runs, "--output", str(out)]
        )
    finally:
        unregister("CliHits")
    assert code == 0
    table = pl.read_parquet(out)
    # Hits@10 is P@10 times 10, per query: two measures computed independently.
    assert (table["CliHits@10"] - 10 * table["P@10"]).abs().max() < 1e-9
    assert "CliHits@10" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "--measures-from: no file"),
        ("raise ValueError('boom')\n", "line 1: ValueError: boom"),
        ("def broken(:\n", "SyntaxError"),
    ],
)
def test_cli_measures_from_errors(tmp_path, capsys, text, message):
    source = tmp_path / "measures.py"
    if text is not None:
        source.write_text(text)
    runs = [str(DATA / "toy" / "runs" / "sys000")]
    qrels = str(DATA / "toy" / "qrels.txt")
    code = main(["evaluate", "--qrels", qrels, "--measures-from", str(source), "-m", "AP", *runs])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_definitions_are_refused(defined):
    with pytest.raises(InputError, match="taken"):
        lf.define_measure("hits", hits, cutoff="required", summary="x")
    with pytest.raises(InputError, match="taken"):
        lf.define_measure("AP2", discounted, summary="x", aliases=("map",))
    with pytest.raises(InputError, match="preference"):
        lf.define_measure("sgnLP", misses, summary="x")
    with pytest.raises(InputError, match="needs a default"):
        lf.define_measure("NoDefault", lambda p: pl.col("n_rel"), summary="x")
    with pytest.raises(InputError, match="parameter k"):
        lf.define_measure("NoK", misses, cutoff="required", summary="x")
    with pytest.raises(InputError, match="cutoff"):
        lf.define_measure("StrayK", hits, summary="x")
    with pytest.raises(InputError, match="bool, int, float or str"):
        lf.define_measure("ListParam", lambda levels=(1, 2): pl.col("n_rel"), summary="x")
    with pytest.raises(InputError, match="letter"):
        lf.define_measure("2fast", misses, summary="x")
    lf.define_measure("Hits", lambda k: pl.col("n_rel"), cutoff="required", summary="redefined",
                      replace=True)
    assert parse_measure("Hits@3").family.summary == "redefined"


def test_parameters_are_typed(defined):
    with pytest.raises(UnknownMeasureError, match="p= is a float"):
        parse_measure("Disc(p='x')")
    assert str(parse_measure("Disc(p=1)")) == "Disc(p=1.0)"  # an int reads as the float 1.0
    with pytest.raises(UnknownMeasureError, match="takes the parameters: p"):
        parse_measure("Disc(q=1)")


def test_a_measure_returning_no_expression_is_refused():
    lf.define_measure("NotAnExpr", lambda: 1.0, summary="x")
    try:
        with pytest.raises(InputError, match="not a Polars expression"):
            lf.evaluate(RUN, QRELS, ["NotAnExpr"])
    finally:
        unregister("NotAnExpr")


def test_built_ins_stay_registered():
    with pytest.raises(InputError, match="'AP' is a built-in measure"):
        unregister("AP")
    with pytest.raises(InputError, match="AP is a built-in measure and cannot be replaced"):
        lf.define_measure("AP", lambda: pl.lit(1.0), summary="x", replace=True)
    assert str(parse_measure("map")) == "AP"  # its aliases still read as the built-in
