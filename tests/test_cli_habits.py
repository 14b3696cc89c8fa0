"""Command-line habits (version, bare help, Ctrl-C, ``evaluate -q``) and warnings that point
at the caller's line on every entry point."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.cli import main
from tests.conftest import DATA

TOY = DATA / "toy"
RUNS = sorted(str(path) for path in (TOY / "runs").iterdir())
QRELS = str(TOY / "qrels.txt")


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"lexiframe {lf.__version__}"


def test_bare_command_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: lexiframe")
    for command in ("demo", "evaluate", "trec_eval", "compare"):
        assert command in out


def test_ctrl_c_prints_one_line_and_exits_130(monkeypatch, capsys, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # Interrupted while the output is being written: no partial file, no stray temporary.
    monkeypatch.setattr(pl.DataFrame, "write_parquet", interrupted)
    target = tmp_path / "out.parquet"
    code = main(["evaluate", "--qrels", QRELS, "-m", "RR", "-o", str(target), RUNS[0]])
    assert code == 130
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "lexiframe: interrupted"
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def parse_lines(text: str) -> list[tuple[str, str, str]]:
    return [tuple(part.strip() for part in line.split("\t")) for line in text.splitlines()]


def test_evaluate_q_prints_trec_eval_lines(capsys):
    assert main(["evaluate", "-q", "--qrels", QRELS, "-m", "RR", "-m", "AP", *RUNS[:2]]) == 0
    rows = parse_lines(capsys.readouterr().out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        expected = lf.evaluate(RUNS[:2], QRELS, ["RR", "AP"])
    assert len([q for _, q, _ in rows if q != "all"]) == expected.height * 2  # RR and AP
    system_blocks = [v for m, q, v in rows if m == "runid"]
    assert system_blocks == ["sys000", "sys001"]
    first = expected.filter(pl.col("system") == "sys000").sort("query")
    lines = rows[: first.height * 2]
    assert [q for _, q, _ in lines[::2]] == first["query"].to_list()
    for (measure, query, value), row in zip(lines[::2], first.iter_rows(named=True), strict=True):
        assert measure == "RR" and query == row["query"]
        assert value == f"{row['RR']:.4f}"
    means = {(m, v) for m, q, v in rows[first.height * 2 : first.height * 2 + 4]}
    assert ("num_q", str(first.height)) in means
    assert ("AP", f"{first['AP'].mean():.4f}") in means


# ---- warnings point at the caller's line ---------------------------------------------------


def run_and_qrels() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run that answers a query without a relevant document: DroppedQueriesWarning."""
    run = pl.DataFrame(
        {"system": ["a"] * 3, "query": ["q1", "q1", "q2"], "doc": ["d1", "d2", "d1"],
         "score": [2.0, 1.0, 1.0]}
    )  # fmt: skip
    qrels = pl.DataFrame({"query": ["q1", "q2"], "doc": ["d2", "d1"], "relevance": [1, 0]})
    return run, qrels


def warned_here(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = [w for w in caught if issubclass(w.category, lf.LexiframeWarning)]
    assert ours, "expected a lexiframe warning"
    for warning in ours:
        assert Path(warning.filename) == Path(__file__), (warning.filename, warning.message)
    return ours


@pytest.mark.parametrize(
    "entry",
    ["positions", "evaluate", "namespace", "lazy", "pandas", "files", "measures", "expression"],
)
def test_warnings_point_at_the_callers_line(entry, tmp_path):
    run, qrels = run_and_qrels()
    if entry == "positions":
        warned_here(lambda: lf.positions(run, qrels))
    elif entry == "evaluate":
        warned_here(lambda: lf.evaluate(run, qrels, ["RR"]))
    elif entry == "namespace":
        warned_here(lambda: run.lexi.positions(qrels))
    elif entry == "lazy":
        warned_here(lambda: lf.positions(run.lazy(), qrels).lexi.measures(["SL3"]))
    elif entry == "pandas":
        warned_here(lambda: run.to_pandas().lexi.positions(qrels.to_pandas()))
    elif entry == "files":
        path = tmp_path / "run.txt"
        lf.write_trec_run(run, path)
        warned_here(lambda: lf.evaluate([str(path)], qrels, ["RR"]))
    elif entry == "measures":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lf.LexiframeWarning)
            frame = lf.positions(run, qrels)
        warned_here(lambda: lf.measures(frame, ["SL3"]))
    else:
        warned_here(lambda: pl.col("positions").lexi.sl3())


def test_plurals_in_messages():
    run, qrels = run_and_qrels()
    with pytest.warns(lf.DroppedQueriesWarning) as record:
        lf.positions(run, qrels)
    assert str(record[0].message).startswith("1 query of the run is not evaluated")
    assert "1 without a relevant document" in str(record[0].message)
    assert "1 query " in str(record[0].message)


def test_measures_lists_every_name_with_one_line(capsys):
    assert main(["measures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert {"AP", "nDCG@10", "ASL@g1-10", "sgnLP", "rrLP", "sgnLR"} <= set(names)
    assert len(lines) == len(lf.metrics.families()) + 3


def test_a_misspelt_measure_gets_a_suggestion(capsys):
    assert main(["evaluate", *RUNS, "--qrels", QRELS, "-m", "nDGC"]) == 2
    assert "did you mean 'nDCG'?" in capsys.readouterr().err
    with pytest.raises(lf.UnknownMeasureError, match="did you mean 'Bpref'"):
        lf.metrics.parse_measure("bperf")


def test_an_unknown_flag_is_reported_by_its_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", *RUNS, "--qrels", QRELS, "--mesure", "AP"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: lexiframe evaluate")
    assert "unrecognized arguments: --mesure AP (did you mean --measure?)" in err


def test_metric_is_another_spelling_of_measure(capsys):
    assert main(["evaluate", *RUNS, "--qrels", QRELS, "--metric", "AP", "-q"]) == 0
    assert "AP" in capsys.readouterr().out


def test_q_with_preferences_only_and_no_file_is_refused(capsys):
    assert main(["evaluate", *RUNS, "--qrels", QRELS, "-m", "sgnLP", "-q"]) == 2
    err = capsys.readouterr().err
    assert "-q prints the metrics of each query, and 'sgnLP' compares two rankings" in err
    assert "-o FILE" in err
    argv = ["evaluate", *RUNS, "--qrels", QRELS, "-m", "sgnLP", "-m", "sgnLR", "-q"]
    assert main(argv) == 2
    assert "'sgnLP', 'sgnLR' compare two rankings" in capsys.readouterr().err


def test_rrlp_and_sgnlp_orderings_are_said_to_agree(capsys):
    assert main(["evaluate", *RUNS, "--qrels", QRELS, "-m", "sgnLP", "-m", "rrLP"]) == 0
    out = capsys.readouterr().out
    assert "rrLP's mc4 ordering is sgnLP's" in out
    table = out.split("System orderings")[1]
    rows = [
        line.split("|")
        for line in table.splitlines()
        if line.startswith("| ") and "rank" not in line
    ]
    assert rows and all(row[2].strip() == row[3].strip() for row in rows)  # as said


def test_spark_without_pyspark_is_one_line_and_status_2(monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "pyspark", None)  # as if not installed
    code = main(["evaluate", "--spark", "local[1]", *RUNS, "--qrels", QRELS, "-m", "AP"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("lexiframe: error: --spark needs PySpark: pip install")
    assert len(err.strip().splitlines()) == 1
