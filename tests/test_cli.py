"""The ``lexiframe`` command: demo, evaluate with metrics, preferences or both, errors."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lexiframe as lf
from lexiframe.cli import main

TOY = Path(__file__).parent / "data" / "toy"
RUNS = sorted(str(path) for path in (TOY / "runs").iterdir())
QRELS = str(TOY / "qrels.txt")


def toy_positions() -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        return lf.positions(lf.read_run(RUNS), lf.read_qrels(QRELS), grades=True)


def evaluate(*arguments: str) -> int:
    return main(["evaluate", "--qrels", QRELS, *arguments, *RUNS])


def test_help_documents_both_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "demo" in out and "evaluate" in out
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    for option in ("--measure", "--output", "--summary", "--orderings", "--order", "sgnLP"):
        assert option in out


def test_demo_says_synthetic_and_shows_orderings_and_ties(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out
    assert "sgnLP (mc4)" in out and "RR (mean)" in out
    assert "Tied by RR" in out and "sgnLP breaks" in out


def test_metrics_output_equals_the_library(tmp_path, capsys):
    target = tmp_path / "per_query.parquet"
    assert evaluate("-m", "RR", "-m", "nDCG@10", "--output", str(target)) == 0
    expected = lf.measures(toy_positions(), ["RR", "nDCG@10"]).sort("system", "query")
    assert_frame_equal(pl.read_parquet(target), expected)
    captured = capsys.readouterr()
    assert "per-query metrics written to" in captured.err
    assert "RR (mean)" in captured.out


def test_preferences_output_matches_the_library_and_the_reference(tmp_path, capsys):
    target = tmp_path / "prefs.parquet"
    assert evaluate("-m", "sgnLP", "-m", "rrLP", "-m", "sgnLR", "-o", str(target)) == 0
    written = pl.read_parquet(target)
    assert_frame_equal(written, lf.preferences(toy_positions()))
    # One pair checked against pref_eval's own line (runi < runj, so no sign flip).
    line = next(
        json.loads(text)
        for text in (TOY / "expected" / "pref_eval.jsonl").read_text().splitlines()
        if '"type": "preference"' in text or '"type":"preference"' in text
    )
    row = written.filter(
        (pl.col("query") == line["qid"])
        & (pl.col("system_a") == min(line["runi"], line["runj"]))
        & (pl.col("system_b") == max(line["runi"], line["runj"]))
    ).row(0, named=True)
    flip = 1 if line["runi"] < line["runj"] else -1
    assert row["sgnLP"] == flip * line["lexiprecision"]
    assert row["sgnLR"] == flip * line["lexirecall"]
    out = capsys.readouterr().out
    assert "Mean preference per pair of systems" in out
    assert "sgnLP (mc4)" in out and "sgnLR (mc4)" in out


def test_mixed_measures_write_two_tables_and_say_where(tmp_path, capsys):
    output, summary = tmp_path / "out.parquet", tmp_path / "summary.csv"
    orderings = tmp_path / "orderings.jsonl"
    arguments = ["-m", "AP", "-m", "ASL", "-m", "lexiprecision", "--order", "borda"]
    files = ["-o", str(output), "--summary", str(summary), "--orderings", str(orderings)]
    assert evaluate(*arguments, *files) == 0
    err = capsys.readouterr().err
    names = [
        "out-metrics.parquet",
        "out-preferences.parquet",
        "summary-metrics.csv",
        "summary-preferences.csv",
        "orderings.jsonl",
    ]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names)
    for name in names:
        assert name in err
    positions = toy_positions()
    prefs = lf.preferences(positions, "sgnLP")
    assert_frame_equal(pl.read_parquet(tmp_path / "out-preferences.parquet"), prefs)
    pair_summary = pl.read_csv(tmp_path / "summary-preferences.csv")
    assert pair_summary.height == 28 and "sgnLP_wins" in pair_summary.columns
    table = pl.read_ndjson(orderings)
    assert set(table["ordering"]) == {"sgnLP (borda)", "AP (mean)", "ASL (mean)"}
    borda = table.filter(pl.col("ordering") == "sgnLP (borda)").drop("ordering")
    expected = lf.order(prefs, "sgnLP", method="borda")
    assert borda["system"].to_list() == expected["system"].to_list()
    # ASL is a cost: its ordering starts from the smallest mean.
    asl = table.filter(pl.col("ordering") == "ASL (mean)")
    assert asl["score"].to_list() == sorted(asl["score"].to_list())


def test_unknown_measure_is_an_error_listing_both_kinds(tmp_path, capsys):
    target = tmp_path / "out.parquet"
    assert evaluate("-m", "RR", "-m", "sgnXX", "-o", str(target)) == 2
    err = capsys.readouterr().err
    assert "'sgnXX'" in err and "did you mean 'sgnL" in err  # a name meant
    assert evaluate("-m", "RR", "-m", "Zzz", "-o", str(target)) == 2
    err = capsys.readouterr().err
    assert "'Zzz'" in err and "sgnLP" in err and "nDCG" in err  # no name close: both kinds
    assert not target.exists()


def test_bad_extension_fails_before_anything_is_written(tmp_path, capsys):
    output, summary = tmp_path / "out.parquet", tmp_path / "summary.xlsx"
    assert evaluate("-m", "sgnLP", "-o", str(output), "--summary", str(summary)) == 2
    assert ".xlsx" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_missing_qrels_file_is_an_error(tmp_path, capsys):
    code = main(["evaluate", "--qrels", str(tmp_path / "none.txt"), *RUNS])
    assert code == 2
    assert "none.txt" in capsys.readouterr().err


def test_measures_needing_n_print_one_note_without_n_and_refuse_a_small_n(capsys):
    assert evaluate("-m", "SL3", "-m", "RR") == 0
    out, err = capsys.readouterr()
    assert err.count("needs the corpus size n") == 1
    assert "Pass the corpus size with --n." in err  # the flag, not the API's n=
    # Every toy system missed a relevant document: no SL3 mean, so no SL3 ordering (not one
    # ranked by the tie-break), said in the command's words; RR is still ordered.
    assert "note: no ordering by SL3: no system has a mean of 'SL3'" in err
    assert "Pass the corpus size with --n" in err and "method=" not in err and "n=" not in err
    assert "| RR (mean) |" in out and "SL3 (mean)" not in out
    assert evaluate("-m", "SL3", "--n", "5") == 2  # toy rankings hold 100 documents
    assert "--n 5 is too small" in capsys.readouterr().err


def test_asl_of_skipped_queries_equals_the_library(tmp_path):
    # The toy track's sys002 skipped query 413: it scores the depth on both paths.
    target = tmp_path / "asl.parquet"
    assert evaluate("-m", "ASL", "--depth", "50", "--output", str(target)) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        run, qrels = lf.read_run(RUNS), lf.read_qrels(QRELS)
        expected = lf.evaluate(run, qrels, ["ASL"], depth=50).sort("system", "query")
    got = pl.read_parquet(target)
    assert_frame_equal(got, expected)
    skipped = got.filter((pl.col("system") == "sys002") & (pl.col("query") == "413"))
    assert skipped["ASL"].to_list() == [50.0]


def test_a_pipe_in_a_run_tag_keeps_every_markdown_table_whole(tmp_path, capsys):
    # A run tag such as bm25|rm3 is one cell of each table evaluate and compare print.
    import re

    runs = []
    for path, tag in zip(RUNS[:3], ("bm25|rm3", "plain", "a|b|c"), strict=True):
        lines = Path(path).read_text().splitlines()
        target = tmp_path / Path(path).name
        target.write_text("".join(line.rsplit(" ", 1)[0] + f" {tag}\n" for line in lines))
        runs.append(str(target))
    for argv in (["evaluate", "-m", "AP", "-m", "sgnLP"], ["compare", "-m", "AP", "-m", "sgnLP"]):
        assert main([*argv, "--qrels", QRELS, *runs]) == 0
        out = capsys.readouterr().out
        assert "bm25\\|rm3" in out and "a\\|b\\|c" in out
        widths = set()
        for block in out.split("\n\n"):
            rows = [line for line in block.splitlines() if line.startswith("|")]
            widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
            assert len(widths) <= 1, (argv[0], block)


def test_demo_write_never_replaces_a_file(tmp_path, capsys):
    mine = tmp_path / "runs" / "sys000.txt"
    mine.parent.mkdir()
    mine.write_text("my own run\n")
    assert main(["demo", "--write", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lexiframe: error: demo --write") and "exists" in err
    assert mine.read_text() == "my own run\n"
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["runs", "sys000.txt"]
    fresh = tmp_path / "fresh"
    assert main(["demo", "--write", str(fresh)]) == 0
    assert sorted(path.name for path in fresh.iterdir()) == [
        "qrels.parquet",
        "qrels.txt",
        "run.parquet",
        "runs",
    ]
