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


# What a user's measure receives, at any threshold -----------------------------------------


@pytest.mark.filterwarnings("ignore::lexiframe.errors.DroppedQueriesWarning")
def test_grades_are_in_step_with_positions_at_any_threshold(backend: Backend):
    """Above threshold=1 the built-ins' frame holds every positive grade (trec_eval's -l);
    a user's measure sees the grades of its positions and the query's relevant grades."""
    track = lf.datasets.demo_track()

    def in_step() -> pl.Expr:
        return (pl.col("grades").list.len() == pl.col("positions").list.len()).cast(pl.Float64)

    def relevant_grades() -> pl.Expr:  # the grades of the retrieved relevant documents
        return pl.col("grades").list.sum()

    def ideal_count() -> pl.Expr:
        return pl.col("ideal_grades").list.len()

    needs = Needs(grades=True, requires_grades=True)
    lf.define_measure("InStep", in_step, summary="x", needs=needs)
    lf.define_measure("RelGrades", relevant_grades, summary="x", needs=needs)
    lf.define_measure("IdealCount", ideal_count, summary="x", needs=needs)
    try:
        got = backend.evaluate(
            track.run, track.qrels, ["InStep", "RelGrades", "IdealCount", "NumRel", "AP"],
            threshold=2,
        )
    finally:
        for name in ("InStep", "RelGrades", "IdealCount"):
            unregister(name)
    # Independently: the run's documents of grade 2 or more, summed per ranking.
    qrels = track.qrels.filter(pl.col("relevance") >= 2)
    expected = (
        track.run.join(qrels, on=["query", "doc"])
        .group_by("system", "query")
        .agg(pl.col("relevance").sum().cast(pl.Float64).alias("expected"))
    )
    table = got.join(expected, on=["system", "query"], how="left").with_columns(
        pl.col("expected").fill_null(0.0)
    )
    assert table["InStep"].min() == 1.0
    assert (table["RelGrades"] - table["expected"]).abs().max() == 0
    assert (table["IdealCount"] == table["NumRel"]).all()
    # The built-ins keep trec_eval's -l 2 (the same AP as threshold=2 without user measures).
    plain = backend.evaluate(track.run, track.qrels, ["AP"], threshold=2)
    keys = ["system", "query"]
    assert got.sort(keys)["AP"].to_list() == plain.sort(keys)["AP"].to_list()


def test_a_declared_column_is_built_on_every_path(tmp_path, backend: Backend):
    def first_doc_is_d1() -> pl.Expr:
        return (pl.col("docs").list.first() == "d1").cast(pl.Float64).fill_null(0.0)

    lf.define_measure("FirstD1", first_doc_is_d1, summary="x", needs=Needs(columns=("docs",)))
    try:
        got = backend.evaluate(RUN, QRELS, ["FirstD1"])
        assert dict(zip(got["system"], got["FirstD1"], strict=True)) == {"a": 1.0, "b": 0.0}
        run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
        RUN.with_columns(Q0=pl.lit("Q0"), rank=pl.lit(1), tag=pl.col("system")).select(
            "query", "Q0", "doc", "rank", "score", "tag"
        ).write_csv(run, separator=" ", include_header=False)
        QRELS.with_columns(it=pl.lit(0)).select("query", "it", "doc", "relevance").write_csv(
            qrels, separator=" ", include_header=False
        )
        out = tmp_path / "out.parquet"
        args = ["evaluate", "--qrels", str(qrels), "-m", "FirstD1", str(run), "-o", str(out)]
        assert main(args) == 0
        table = pl.read_parquet(out)
        assert dict(zip(table["system"], table["FirstD1"], strict=True)) == {"a": 1.0, "b": 0.0}
    finally:
        unregister("FirstD1")


# A user's measure that fails is lexiframe's error, naming it --------------------------------


def _raises() -> pl.Expr:
    raise ZeroDivisionError("division by zero")


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (_raises, "measure Broken: its function raised ZeroDivisionError: division by zero"),
        (lambda: pl.col("nope").list.len(), "measure Broken cannot be computed"),
        (lambda: pl.col("positions").list.first().cast(pl.String) + "x", "measure Broken"),
        (lambda: pl.col("positions").explode(), "measure Broken cannot be computed"),
        (lambda: pl.col("positions"), "measure Broken cannot be computed"),
    ],
    ids=["raises", "missing-column", "string", "more-rows", "a-list"],
)
def test_a_failing_measure_is_named_on_every_path(backend: Backend, function, message):
    lf.define_measure("Broken", function, summary="x")
    try:
        with pytest.raises(InputError, match=message):
            result = backend.evaluate(RUN, QRELS, ["AP", "Broken"])
            if isinstance(result, pl.LazyFrame):  # pragma: no cover - planning raises
                result.collect()
    finally:
        unregister("Broken")


def test_a_failing_measure_at_the_command_line_is_one_line_exit_2(tmp_path, capsys):
    source = tmp_path / "measures.py"
    source.write_text(
        "import polars as pl\nimport lexiframe as lf\n"
        "lf.define_measure('CliBroken', lambda: pl.col('nope'), summary='x')\n"
    )
    runs = [str(DATA / "toy" / "runs" / "sys000")]
    qrels = str(DATA / "toy" / "qrels.txt")
    try:
        code = main(
            ["evaluate", "--qrels", qrels, "--measures-from", str(source), "-m", "CliBroken", *runs]
        )
    finally:
        unregister("CliBroken")
    err = capsys.readouterr().err
    assert code == 2
    assert "measure CliBroken cannot be computed" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_sys_exit_in_a_measures_file_is_an_error_naming_it(tmp_path, capsys):
    source = tmp_path / "measures.py"
    source.write_text("import sys\nsys.exit(3)\n")
    runs = [str(DATA / "toy" / "runs" / "sys000")]
    qrels = str(DATA / "toy" / "qrels.txt")
    code = main(["evaluate", "--qrels", qrels, "--measures-from", str(source), "-m", "AP", *runs])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--measures-from {source} line 2: the file called sys.exit(3)" in err


# Names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["system", "query", "n_queries", "Positions", "sgnLP", "lexirecall"]
)
def test_names_of_columns_and_preferences_are_refused(name):
    with pytest.raises(InputError, match=r"taken by a preference|names a column"):
        lf.define_measure(name, lambda: pl.lit(1.0), summary="x")


def test_replace_keeps_the_aliases_it_replaces(defined):
    assert str(parse_measure("disc_sum")) == "Disc"
    lf.define_measure("Disc", discounted, summary="again", replace=True)
    assert parse_measure("disc_sum").family.summary == "again"
    with pytest.raises(InputError, match="taken \\(by Disc\\); choose another name, or pass"):
        lf.define_measure("Disc", discounted, summary="again")
    with pytest.raises(InputError, match="taken \\(by AP, a built-in measure\\)"):
        lf.define_measure("Mine", discounted, summary="x", aliases=("map",))
