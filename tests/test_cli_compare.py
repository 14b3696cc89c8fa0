"""``lexiframe compare``: the report of lexiframe.stats, printed and written (Markdown, LaTeX)."""

from __future__ import annotations

import warnings

import polars as pl

import lexiframe as lf
from lexiframe import stats
from lexiframe.cli import main
from tests.conftest import DATA

TOY = DATA / "toy"
RUNS = sorted(str(path) for path in (TOY / "runs").iterdir())[:4]
QRELS = str(TOY / "qrels.txt")


def per_query(names: list[str]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lf.LexiframeWarning)
        return lf.evaluate(RUNS, QRELS, names)


def compare(capsys, *arguments: str) -> str:
    assert main(["compare", "--qrels", QRELS, *arguments, *RUNS]) == 0
    return capsys.readouterr().out


def test_markdown_report_and_pair_tests(capsys):
    out = compare(capsys, "-m", "AP", "-m", "RR", "-m", "sgnLP")
    report = stats.to_markdown(stats.report(per_query(["AP", "RR"]), ["AP", "RR"], ci=0.95))
    assert out.startswith(report) and "[" in report.splitlines()[2]  # the intervals
    pair_rows = [line for line in out.splitlines() if line.startswith("| AP |")]
    assert len(pair_rows) == 6  # 4 systems: 6 pairs
    assert "| p (holm) |" in out
    sign_rows = [line for line in out.splitlines() if line.startswith("| sgnLP |")]
    assert len(sign_rows) == 6 and all(row.endswith("| sign |") for row in sign_rows)


def test_pair_p_values_are_the_reports(capsys):
    out = compare(capsys, "-m", "AP", "--correction", "bonferroni")
    tests = stats.significance(per_query(["AP"]), "AP", test="t", correction="bonferroni")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| AP |")]
    for cells, expected in zip(rows, tests.iter_rows(named=True), strict=True):
        assert cells[1].strip() == expected["system_a"]
        assert float(cells[7]) == float(f"{expected['p_adjusted']:.4g}")


def test_latex_written_atomically_and_printed(capsys, tmp_path):
    target = tmp_path / "report.tex"
    out = compare(capsys, "-m", "AP", "--baseline", "sys000", "-o", str(target))
    assert target.read_text(encoding="utf-8") == out
    assert out.count(r"\begin{table}") == 2
    assert "holm correction" in out
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.tex"]
    rows = [line for line in out.splitlines() if line.startswith("AP & ")]
    assert len(rows) == 3  # the baseline against the 3 others


def test_one_system_is_refused(capsys):
    assert main(["compare", "--qrels", QRELS, RUNS[0]]) == 2
    assert "at least 2 systems" in capsys.readouterr().err


def test_fisher_and_bootstrap_pairs_with_effect_sizes(capsys):
    out = compare(capsys, "-m", "AP", "-m", "rrLP", "--test", "fisher", "--seed", "1")
    header = next(line for line in out.splitlines() if line.startswith("| measure |"))
    assert "| d | ES_HSD | 95% CI | test |" in header
    expected = stats.significance(per_query(["AP"]), "AP", test="fisher", seed=1, correction="holm")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| AP |")]
    for cells, row in zip(rows, expected.iter_rows(named=True), strict=True):
        assert float(cells[6]) == float(f"{row['p_value']:.4g}")
        assert float(cells[8]) == round(row["cohens_d"], 4)
        assert float(cells[9]) == round(row["es_hsd"], 4)
        assert cells[-1].strip() == "fisher"
    rr_rows = [line for line in out.splitlines() if line.startswith("| rrLP |")]
    assert len(rr_rows) == 6 and all(row.endswith("| fisher |") for row in rr_rows)
    boot = compare(capsys, "-m", "AP", "--test", "bootstrap", "--seed", "1", "--replicates", "200")
    assert "| 95% CI | test |" in boot and "| bootstrap |" in boot


def test_one_way_hsd_is_named(capsys):
    out = compare(capsys, "-m", "AP", "--test", "hsd", "--one-way")
    assert "hsd_one_way test" in out and out.count("| hsd_one_way |") == 6


def test_random_tests_need_a_seed(capsys):
    assert main(["compare", "--qrels", QRELS, "--test", "bootstrap", *RUNS]) == 2
    assert "--seed" in capsys.readouterr().err


def test_sgnlp_keeps_the_sign_test_and_preferences_take_auto_under_the_hsd_tests(capsys):
    # fisher and bootstrap test rrLP; sgnLP keeps its sign test (blank interval), and
    # under the HSD tests, which read metrics, the preferences take auto's tests.
    prefs = ["-m", "AP", "-m", "sgnLP", "-m", "rrLP"]
    for test, rr_test in (("fisher", "fisher"), ("bootstrap", "bootstrap"), ("hsd", "t")):
        out = compare(capsys, *prefs, "--test", test, "--seed", "0", "--replicates", "200")
        rows = [line for line in out.splitlines() if line.startswith(("| sgnLP |", "| rrLP |"))]
        assert len(rows) == 12, test
        assert all(row.endswith("| sign |") for row in rows[:6]), test
        assert all(row.endswith(f"| {rr_test} |") for row in rows[6:]), test
        assert "[, ]" not in out
    out = compare(capsys, *prefs, "--test", "hsd", "--one-way")
    assert out.count("| hsd_one_way |") == 6 and out.count("| sign |") == 6


def test_one_way_is_refused_in_the_commands_words_outside_the_hsd_tests(capsys):
    argv = ["compare", "--qrels", QRELS, "--test", "fisher", "--seed", "0", "--one-way", *RUNS]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--one-way" in err and "--test hsd" in err and "blocking=" not in err


def test_a_measure_null_without_n_says_to_pass_n(capsys):
    assert main(["compare", "--qrels", QRELS, "-m", "AP", "-m", "SL3", *RUNS]) == 2
    err = capsys.readouterr().err
    assert "column 'SL3'" in err and "Pass the corpus size with --n" in err
    assert "n=" not in err and "fill or drop" not in err.lower()


def test_pair_intervals_are_t_intervals_of_the_differences(capsys):
    from scipy import stats as scipy_stats

    out = compare(capsys, "-m", "AP", "--ci", "0.9")
    wide = per_query(["AP"]).pivot(on="system", index="query", values="AP")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| AP |")]
    assert "90% CI" in out and len(rows) == 6
    for cells in rows:
        a, b = cells[1].strip(), cells[2].strip()
        d = (wide[a] - wide[b]).to_numpy()
        low, high = scipy_stats.t.interval(0.9, len(d) - 1, d.mean(), scipy_stats.sem(d))
        assert cells[10].strip() == f"[{low:.4f}, {high:.4f}]"


def test_compare_intervals_flag(capsys):
    out = compare(capsys, "-m", "AP", "--ci", "0")
    assert out.startswith(stats.to_markdown(stats.report(per_query(["AP"]), ["AP"])))
    assert main(["compare", "--qrels", QRELS, "-m", "AP", "--ci", "95", *RUNS]) == 2
    err = capsys.readouterr().err
    assert "--ci must be a level in (0, 1)" in err and "pass --ci 0.95" in err
