"""``lexiframe trec_eval``: trec_eval's output, line by line, for every measure lexiframe has.

Golden files (provenance in ``tests/data/README.md``) are trec_eval 10.0's own output for the
same flags. Each test runs the drop-in, keeps the golden lines of the measures the drop-in
prints for those flags (trec_eval prints more measures than lexiframe computes), and
compares the two texts line by line: names, queries, their order and the printed values.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from unittest import mock

import polars as pl
import pytest

import lexiframe as lf
from lexiframe import _blocks
from lexiframe.cli import main
from lexiframe.cli.trec_eval_measures import resolve
from lexiframe.errors import UnknownMeasureError
from lexiframe.metrics.trec_eval import CATALOGUE, MEASURES, available
from tests.conftest import DATA

TREC = DATA / "trec_eval"
TOY = DATA / "toy"
TOY_RUNS = [str(path) for path in sorted((TOY / "runs").iterdir())]
TREC_ARGS = [str(TREC / "qrels.test"), str(TREC / "results.test")]
TOY_ARGS = [str(TOY / "qrels.txt"), *TOY_RUNS]

PARAMS = [
    *("-m", "utility.2,-1,0.5,0.001", "-m", "11pt_avg.0.2,0.5,0.8"),
    *("-m", "Rprec_mult.0.05,0.5,3", "-m", "relative_P.2,7", "-m", "rbp_resid.p=0.8"),
]
GAIN = ["rbp_resid", "G", "Rndcg", "ndcg_rel", "binG", "utility", "set_relative_P", "set_map"]
FRACTIONS = ["-q", "-c", "-m", "runid", "-m", "set_F.0.5", "-m", "ndcg.1=1,2=1.5"]
LEVEL_GAINS = ["-q", "-c", "-l", "2", "-m", "runid", "-m", "num_rel", "-m", "map", "-m", "P.10"]
LEVEL_GAINS += ["-m", "ndcg", "-m", "ndcg_cut.5,10,100", "-m", "G", "-m", "ndcg_rel"]
LEVEL_GAINS += ["-m", "Rndcg", "-m", "binG"]
DCG = ["-m", "runid", "-m", "dcg", "-m", "ideal_dcg"]
DCG_FLAGS = [(["-q", "-c"], "q.c"), (["-q", "-c", "-l", "2"], "q.c.l2"),
             (["-J", "-q", "-c"], "J.q.c"), (["-q", "-c", "-M", "10"], "q.c.M10")]  # fmt: skip
DCG_GAINS = [([], "dcg.1=-1,2=2.5", "q.c.dcg.1=-1,2=2.5"),
             ([], "dcg.1=2.5,2=2", "q.c.dcg.1=2.5,2=2"),  # out of order: no ideal to sort
             (["-l", "2"], "ideal_dcg.0=0,1=1,2=3", "q.c.l2.ideal_dcg.0=0,1=1,2=3")]  # fmt: skip
TOY_CLI = TOY / "expected/trec_eval_cli"

# (flags, golden file, qrels and runs). The toy's goldens are trec_eval run once per run
# file, concatenated in file order; lexiframe reads all runs in one call.
CASES = [
    (["-q", "-c", "-m", "all_trec"], TREC / "expected.all_trec.txt", TREC_ARGS),
    (["-q", "-m", "all_trec"], TREC / "cli/q.all_trec.txt", TREC_ARGS),
    (["-q", "-c", "-l", "2", "-m", "all_trec"], TREC / "cli/q.c.l2.all_trec.txt", TREC_ARGS),
    (["-q", "-c", "-M", "10", "-m", "all_trec"], TREC / "cli/q.c.M10.all_trec.txt", TREC_ARGS),
    (["-M", "5", "-m", "all_trec"], TREC / "cli/M5.all_trec.txt", TREC_ARGS),
    ([], TREC / "cli/official.txt", TREC_ARGS),
    (["-q", "-m", "rbp.p=0.5", "-m", "rbp"], TREC / "cli/q.rbp.txt", TREC_ARGS),
    (
        ["-q", "-c", "-l", "2", "-m", "all_trec"],
        TOY / "expected/trec_eval_cli/q.c.l2.all_trec.txt.gz",
        TOY_ARGS,
    ),
    (
        ["-q", "-c", "-M", "10", "-m", "all_trec"],
        TOY / "expected/trec_eval_cli/q.c.M10.all_trec.txt.gz",
        TOY_ARGS,
    ),
    (["-c"], TOY / "expected/trec_eval_cli/c.official.txt", TOY_ARGS),
    (
        ["-c", "-l", "3", "-m", "all_trec"],
        TOY / "expected/trec_eval_cli/c.l3.all_trec.txt",
        TOY_ARGS,
    ),
    (["-J", "-M", "20", "-q", "-m", "all_trec"], TREC / "cli/J.q.M20.all_trec.txt", TREC_ARGS),
    (
        [
            *("-n", "-q", "-c", "-N", "528155", "-R", "qrels", "-T", "trec_results", "-D", "0"),
            *("-m", "map", "-m", "P.5,10", "-m", "num_ret"),
        ],
        TREC / "cli/n.q.c.N.txt",
        TREC_ARGS,
    ),
    (
        ["-q", "-c", "-m", "infAP", "-m", "bpref", "-m", "unj", "-m", "num_nonrel_judged_ret"],
        TOY / "expected/trec_eval_cli/pooled.q.c.judged.txt.gz",
        [str(TOY / "qrels.pooled.txt"), *TOY_RUNS],
    ),
    # Parameters of the set and gain measures; -c on skipped queries (trec_eval's stand-in
    # ranking of one unjudged document keeps its utility and rbp_resid under parameters).
    (
        ["-q", "-c", "-N", "10000", *PARAMS],
        TOY / "expected/trec_eval_cli/q.c.N.params.txt.gz",
        TOY_ARGS,
    ),
    (
        ["-q", "-c", *(item for name in GAIN for item in ("-m", name))],
        TOY / "expected/trec_eval_cli/pooled.q.c.gain.txt.gz",
        [str(TOY / "qrels.pooled.txt"), *TOY_RUNS],
    ),
    # set_F's beta, and fractional gains that trec_eval's sort keeps in order.
    (FRACTIONS, TREC / "cli/q.c.setF.ndcg_frac.txt", TREC_ARGS),
    (FRACTIONS, TOY / "expected/trec_eval_cli/q.c.setF.ndcg_frac.txt.gz", TOY_ARGS),
    # Gain measures at -l 2: every positive grade gains.
    (LEVEL_GAINS, TREC / "cli/q.c.l2.gain.txt", TREC_ARGS),
    (LEVEL_GAINS, TOY / "expected/trec_eval_cli/q.c.l2.gain.txt.gz", TOY_ARGS),
    # trec_eval 10.0's dcg and ideal_dcg (not in all_trec), and each with a gain map (one
    # call each: trec_eval 10.0 shares one map among ndcg, dcg and ideal_dcg).
    *(
        ([*flags, *DCG], folder / f"{name}.dcg.txt{suffix}", files)
        for folder, suffix, files in ((TREC / "cli", "", TREC_ARGS), (TOY_CLI, ".gz", TOY_ARGS))
        for flags, name in DCG_FLAGS
    ),
    *(
        (["-q", "-c", *level, "-m", "runid", "-m", gains], folder / f"{name}.txt{suffix}", files)
        for folder, suffix, files in ((TREC / "cli", "", TREC_ARGS), (TOY_CLI, ".gz", TOY_ARGS))
        for level, gains, name in DCG_GAINS
    ),
]
# trec_eval -J: the same lines, but for the values it prints as nan (see test below).
CONDENSED_CASES = [
    (["-m", "all_trec"], TREC / "cli/J.q.c.all_trec.txt", TREC_ARGS),
    (["-m", "all_trec"], TOY / "expected/trec_eval_cli/J.q.c.all_trec.txt.gz", TOY_ARGS),
    (["-N", "10000", *PARAMS], TOY / "expected/trec_eval_cli/J.q.c.N.params.txt.gz", TOY_ARGS),
]

# What lexiframe must print for all_trec at least (the registry may add more).
CORE = {
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
    "recip_rank", "P_5", "P_10", "P_1000", "recall_10", "recall_1000", "ndcg", "ndcg_cut_10",
    "map_cut_10", "rbp",
}  # fmt: skip


def golden(path: Path) -> list[str]:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode().splitlines()
    return path.read_text().splitlines()


def with_runids(lines: list[str], runids: list[str]) -> list[str]:
    """trec_eval's lines of several runs, one after the other, with a ``runid`` line first
    in each run's ``all`` lines, as the drop-in prints it for several runs."""
    out, block, previous = [], 0, ""
    for line in lines:
        query = line.split("\t")[1]
        if query == "all" and previous != "all":
            out.append(f"{'runid':<22}\tall\t{runids[block]}")
            block += 1
        out.append(line)
        previous = query
    return out


def drop_in(capsys, *arguments: str) -> list[str]:
    assert main(["trec_eval", *arguments]) == 0
    return capsys.readouterr().out.splitlines()


def measure_args(flags: list[str]) -> list[str]:
    return [flags[i + 1] for i, flag in enumerate(flags) if flag == "-m"]


@pytest.mark.parametrize(
    ("flags", "path", "files"), CASES, ids=[f"{c[1].parent.name}/{c[1].name}" for c in CASES]
)
def test_lines_are_trec_evals(flags, path, files, capsys):
    printed = {line.printed for line in resolve(measure_args(flags))}
    if "all_trec" in flags:
        assert printed >= CORE
    expected = [line for line in golden(path) if line.split("\t")[0].rstrip() in printed]
    if len(files) > 2 and "runid" not in printed:  # several runs: each block says its runid
        expected = with_runids(expected, [lf.read_run(file)["system"][-1] for file in files[1:]])
    got = drop_in(capsys, *flags, *files)
    assert got == expected


def test_rankings_in_trec_evals_order_cut_at_the_cut_offs_give_trec_evals_lines(
    tmp_path, capsys
):
    # Measures that read no deeper than their cut-offs: rankings that come in trec_eval's
    # order are marked to rank 5 only. trec_eval's lines do not depend on the rows' order.
    rows = [line.split() for line in (TREC / "results.test").read_text().splitlines()]
    rows.sort(key=lambda row: row[2], reverse=True)  # ties: document id descending
    rows.sort(key=lambda row: (row[0], -float(row[4])))  # stable: score descending
    run = tmp_path / "results.ranked"
    run.write_text("".join(" ".join(row) + "\n" for row in rows))
    flags = ["-q", "-c", "-m", "P.5", "-m", "ndcg_cut.5", "-m", "map_cut.5"]
    flags += ["-m", "recall.5", "-m", "success.1,5"]
    printed = {line.printed for line in resolve(measure_args(flags))}
    expected = [line for line in golden(TREC / "expected.all_trec.txt")
                if line.split("\t")[0].rstrip() in printed]  # fmt: skip
    with mock.patch.object(_blocks, "first_rows", wraps=_blocks.first_rows) as cut:
        got = drop_in(capsys, *flags, str(TREC / "qrels.test"), str(run))
    assert got == expected
    assert [call.args[1] for call in cut.call_args_list] == [5]


@pytest.mark.parametrize(
    ("measures", "path", "files"), CONDENSED_CASES, ids=[c[1].name for c in CONDENSED_CASES]
)
def test_condensed_lines_are_trec_evals_nan_included(measures, path, files, capsys):
    """``-J`` ranks the judged documents alone. Where a condensed ranking is empty (toy
    query 409 of sys003, and 999, which every run skips: trec_eval's stand-in ranking for
    it is one unjudged document, which -J removes), trec_eval divides 0 by 0 in
    iprec_at_recall and 11pt_avg at the levels that round to no relevant document and
    prints -nan (and a -nan mean): so does the drop-in."""
    flags = ["-J", "-q", "-c", *measures]
    printed = {line.printed for line in resolve(measure_args(flags))}
    expected = [line for line in golden(path) if line.split("\t")[0].rstrip() in printed]
    if len(files) > 2 and "runid" not in printed:
        expected = with_runids(expected, [lf.read_run(file)["system"][-1] for file in files[1:]])
    got = drop_in(capsys, *flags, *files)
    assert got == expected
    if path.parent.name == "trec_eval_cli":
        assert any(line.endswith("\t  -nan") for line in got), "the toy's -nan lines"


def test_interpolated_precision_stays_a_number_outside_the_drop_in():
    """The -nan is trec_eval's printing of its 0/0 under -J; the measure itself is 0 on an
    empty ranking, on every other path."""
    positions = pl.DataFrame(
        {"system": ["a"], "query": ["q"], "positions": [[]], "n_rel": [1], "n_ret": [0]},
        schema_overrides={"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32},
    )
    values = lf.measures(positions, ["IPrec@0.0", "IPrecAvg"]).row(0, named=True)
    assert values["IPrec@0.0"] == 0.0 and values["IPrecAvg"] == 0.0


def test_measures_with_parameters_are_trec_evals(capsys):
    """``-m P.3,7`` style parameters; measures lexiframe does not compute yet are skipped."""
    wanted = ["P.3,7", "ndcg_cut.4", "map_cut.2", "recall.2", "success.2", "iprec_at_recall.0.5"]
    usable = []
    for argument in wanted:
        try:
            resolve([argument])
        except UnknownMeasureError:
            continue
        usable.append(argument)
    assert {"P.3,7", "ndcg_cut.4", "map_cut.2", "recall.2"} <= set(usable)
    flags = ["-q"] + [item for argument in usable for item in ("-m", argument)]
    printed = {line.printed for line in resolve(usable)}
    expected = [line for line in golden(TREC / "cli/q.params.txt") if line.split()[0] in printed]
    assert drop_in(capsys, *flags, *TREC_ARGS) == expected


def test_several_runs_print_one_block_each_in_the_order_given(capsys):
    flags = ["-m", "runid", "-m", "map", "-m", "P.10", str(TOY / "qrels.txt")]
    one = drop_in(capsys, *flags, TOY_RUNS[1])
    two = drop_in(capsys, *flags, TOY_RUNS[0])
    both = drop_in(capsys, *flags, *TOY_RUNS[1::-1])
    assert both == one + two
    assert one[0] == "runid                 \tall\tsys001"


def test_a_query_the_run_skipped_counts_only_with_c(capsys):
    """trec_eval 10.0 stops when a run skips a judged query without -c; lexiframe evaluates
    the queries both have (the toy's sys000 skips 999), as trec_eval's documentation says."""
    without = drop_in(capsys, "-m", "num_q", "-m", "map", str(TOY / "qrels.txt"), TOY_RUNS[0])
    with_c = drop_in(capsys, "-c", "-m", "num_q", str(TOY / "qrels.txt"), TOY_RUNS[0])
    assert without[0] == "num_q                 \tall\t20"
    assert with_c == ["num_q                 \tall\t21"]


def test_trec_evals_printed_names_are_read_as_measures():
    assert [line.printed for line in resolve(["P_5", "ndcg_cut_10", "map"])] == [
        "map",
        "P_5",
        "ndcg_cut_10",
    ]
    assert [line.column for line in resolve(["recip_rank"])] == ["RR"]


def test_the_first_parameters_given_for_a_measure_win():
    assert [line.printed for line in resolve(["P.5", "P.10"])] == ["P_5"]


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("nosuch", "illegal measure 'nosuch'"),
        ("relstring", "not computed by lexiframe"),
        ("P.5,x", "cutoffs are comma-separated whole numbers"),
        ("P.5,5", "positive and distinct"),
        # Parameters trec_eval takes that lexiframe does not compute: the reason, never
        # "not computed" for a measure lexiframe has.
        ("rbp.p=0.8,1=1,2=5", "rbp, which scales them by a minimum and maximum it reads"),
        ("rbp_resid.p=0.8,2=3", "rbp_resid reads no gains per grade (2=3"),
        ("binG.1=2", "binG takes no parameters"),
        ("set_F.0.5,2", "set_F takes one non-negative beta"),
        ("G.0=1", "a non-relevant or unjudged document cannot add a gain"),
        # trec_eval sorts gains by their difference cut to a whole number: 0.5 and grade
        # 0's 0 tie, and its ideal DCG stops at grade 0 (it prints 0 for query 301).
        ("ndcg.1=0.5", "trec_eval compares gains by their difference cut to a whole"),
        ("G.1=0.5", "trec_eval compares gains by their difference cut to a whole"),
        ("ndcg_rel.1=0.5", "trec_eval compares gains by their difference cut to a whole"),
        ("Rndcg.1=0.5", "trec_eval compares gains by their difference cut to a whole"),
        ("ideal_dcg.1=0.5", "trec_eval compares gains by their difference cut to a whole"),
        ("dcg.0=1", "a non-relevant or unjudged document cannot add a gain"),
        # ... and keeps gains less than 1 apart in the order of its pairs.
        ("Rndcg.2=1.5,1=1", "give the pairs in that order (Rndcg.1=1,2=1.5)"),
    ],
)
def test_bad_measures_are_refused_with_exit_status_2(argument, message, capsys):
    assert main(["trec_eval", "-m", argument, *TREC_ARGS]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


@pytest.mark.parametrize(
    "measures",
    [["dcg.1=2", "ndcg"], ["dcg", "ideal_dcg.1=2"], ["ndcg.1=2", "dcg"], ["dcg.1=2", "all_trec"]],
)
def test_a_gain_map_with_another_of_ndcg_dcg_ideal_dcg_is_refused(measures, capsys):
    """trec_eval 10.0's ndcg, dcg and ideal_dcg hold one gain map between them: with a map
    on one and another asked for, it aborts (a double free, or a segmentation fault for
    ``-m dcg -m ideal_dcg.1=2``) before its output is whole. Each alone takes its map."""
    arguments = [item for name in measures for item in ("-m", name)]
    assert main(["trec_eval", *arguments, *TREC_ARGS]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "holds one gain map for ndcg, dcg and ideal_dcg" in captured.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-R", "prefs"], "-R prefs: only trec_eval's default qrels format"),
        (["-T", "trec_top"], "-T trec_top: only trec_eval's default trec_results"),
        (["-D", "1"], "-D 1: trec_eval's debugging output"),
    ],
)
def test_formats_and_debugging_it_does_not_reproduce_are_refused(flags, message, capsys):
    assert main(["trec_eval", *flags, *TREC_ARGS]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_utility_weighing_the_unretrieved_non_relevant_needs_n(capsys):
    """trec_eval counts a collection of 0 documents without -N; the drop-in asks for it."""
    assert main(["trec_eval", "-m", "utility.1,-1,0,0.5", *TREC_ARGS]) == 2
    assert "give it with -N" in capsys.readouterr().err
    # Without a fourth weight no -N is needed; trec_eval prints the weights in the name.
    (line,) = drop_in(capsys, "-m", "utility.1,-1,0,0", *TREC_ARGS)
    mean = [line for line in golden(TREC / "expected.all_trec.txt") if line.startswith("utility ")]
    assert line.split("\t") == ["utility_1,-1,0,0      ", "all", mean[-1].split("\t")[-1]]


def test_no_summary_without_q_prints_nothing(capsys):
    assert drop_in(capsys, "-n", "-m", "map", *TREC_ARGS) == []


def test_a_run_without_judged_queries_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    run.write_text("999999 Q0 d1 1 1.0 x\n")
    assert main(["trec_eval", str(TREC / "qrels.test"), str(run)]) == 2
    assert "no query with both results and relevance" in capsys.readouterr().err


def test_the_catalogue_is_trec_evals_order_and_all_trec_is_a_subset():
    names = [measure.name for measure in MEASURES]
    assert names[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert len(set(names)) == len(names)
    assert all(name in CATALOGUE for name in names)
    assert available(CATALOGUE["map"]) and not available(CATALOGUE["relstring"])


def test_several_runs_say_their_runid_and_a_parquet_of_systems_is_one_run_each(tmp_path, capsys):
    runs = sorted(str(path) for path in (TOY / "runs").iterdir())
    lf.read_run(runs[:2]).write_parquet(tmp_path / "two.parquet")
    got = drop_in(capsys, "-m", "map", str(TOY / "qrels.txt"), str(tmp_path / "two.parquet"))
    one_by_one = [drop_in(capsys, "-m", "map", str(TOY / "qrels.txt"), run)[0] for run in runs[:2]]
    assert got == [
        f"{'runid':<22}\tall\tsys000",
        one_by_one[0],
        f"{'runid':<22}\tall\tsys001",
        one_by_one[1],
    ]
    assert drop_in(capsys, "-m", "map", str(TOY / "qrels.txt"), runs[0]) == [one_by_one[0]]


def test_a_file_twice_and_a_folder_among_files_are_runs_in_the_order_given(
    monkeypatch, tmp_path, capsys
):
    """Text files are read a batch at a time in one pass: each file given is a run of its
    own, the same file given twice is two runs, and a folder is one run of its files (here
    one), read on its own between them."""
    from lexiframe.cli import trec_eval

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "run").write_bytes(Path(TOY_RUNS[1]).read_bytes())
    qrels = str(TOY / "qrels.txt")
    given = [TOY_RUNS[0], TOY_RUNS[1], TOY_RUNS[0], str(folder), TOY_RUNS[2]]
    alone = [drop_in(capsys, "-q", "-m", "map", qrels, run) for run in given]
    for batch_bytes in (1, trec_eval.BATCH_BYTES):  # a file per batch, or all in one
        monkeypatch.setattr(trec_eval, "BATCH_BYTES", batch_bytes)
        got = drop_in(capsys, "-q", "-m", "map", qrels, *given)
        expected = []
        for run, lines in zip(given, alone, strict=True):  # runid first among the all lines
            runid = lf.read_run(run)["system"][-1]
            expected += [*lines[:-1], f"{'runid':<22}\tall\t{runid}", lines[-1]]
        assert got == expected


def test_runs_in_batches_print_what_one_batch_prints(monkeypatch, capsys):
    """Memory holds one batch of runs: ranked a run or two at a time, and measured a chunk
    of rankings at a time, every run's lines are those of the runs evaluated together."""
    from lexiframe.cli import trec_eval, trec_eval_measures

    flags = ["-q", "-c", "-m", "all_trec", *TOY_ARGS]
    together = drop_in(capsys, *flags)
    batches, chunks = [], []
    ranked, measured = trec_eval_measures.ranked, trec_eval_measures.measured
    monkeypatch.setattr(
        trec_eval_measures,
        "ranked",
        lambda runs, *a, **k: batches.append(runs[trec_eval_measures.RUN_INDEX].n_unique())
        or ranked(runs, *a, **k),
    )
    monkeypatch.setattr(
        trec_eval_measures,
        "measured",
        lambda frame, *a: chunks.append(frame.height) or measured(frame, *a),
    )
    # a batch's files counted in gzipped bytes, a plain file as a fifth of its size
    size_of_one = max(Path(run).stat().st_size for run in TOY_RUNS) // 5
    # a chunk closes once it holds CHUNK_RANKINGS rankings: after every batch, never before
    # the end, or after a few batches
    for size, chunk, measured_in in ((1, 1, "each batch"), (2, 10_000, "one"), (1, 50, "a few")):
        batches.clear()
        chunks.clear()
        monkeypatch.setattr(trec_eval, "BATCH_BYTES", size * size_of_one)
        monkeypatch.setattr(trec_eval, "CHUNK_RANKINGS", chunk)
        assert drop_in(capsys, *flags) == together
        assert len(batches) > len(TOY_RUNS) / (size + 1) and max(batches) <= size
        expected = {"each batch": len(batches), "one": 1}.get(measured_in)
        if expected is None:
            assert 1 < len(chunks) < len(batches)
        else:
            assert len(chunks) == expected


def test_a_bad_run_in_a_later_batch_prints_nothing(monkeypatch, tmp_path, capsys):
    from lexiframe.cli import trec_eval

    bad = tmp_path / "bad"
    bad.write_text("q1 Q0 d1 1 not-a-score x\n")
    monkeypatch.setattr(trec_eval, "BATCH_BYTES", 1)  # every run a batch of its own
    assert main(["trec_eval", "-q", "-m", "map", *TOY_ARGS, str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "not-a-score" in err


def test_a_query_without_a_relevant_document_at_the_level_gains_in_ndcg_not_rndcg(tmp_path, capsys):
    """-l 2: q1 has a grade-1 document only. Expected lines: NIST trec_eval 10.0's output
    for ``trec_eval -q -l 2 -m Rndcg -m ndcg`` on these two files."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq2 0 d4 1\n")
    run = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d4 1 2.0 r\nq2 Q0 d3 2 1.0 r\n"
    (tmp_path / "run").write_text(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    got = drop_in(capsys, "-q", "-l", "2", "-m", "Rndcg", "-m", "ndcg", *files)
    assert got == [
        "ndcg                  \tq1\t1.0000",
        "Rndcg                 \tq1\t0.0000",
        "ndcg                  \tq2\t0.8597",
        "Rndcg                 \tq2\t0.6799",
        "ndcg                  \tall\t0.9299",
        "Rndcg                 \tall\t0.3399",
    ]


def test_an_error_stops_the_reading_ahead(monkeypatch, tmp_path, capsys):
    """The next batch is read while one is evaluated; an error in either ends both."""
    import threading
    import time

    from lexiframe.cli import trec_eval

    unjudged = tmp_path / "unjudged"
    unjudged.write_text("999999 Q0 d1 1 1.0 x\n")
    monkeypatch.setattr(trec_eval, "BATCH_BYTES", 1)  # every run a batch of its own
    assert main(["trec_eval", "-m", "map", str(TOY / "qrels.txt"), str(unjudged), *TOY_RUNS]) == 2
    assert "no query with both results and relevance" in capsys.readouterr().err
    deadline = time.monotonic() + 5
    while any(t.name == "lexiframe-read-ahead" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the thread reading ahead is still running"
        time.sleep(0.05)


def test_a_collection_too_small_is_said_with_trec_evals_flag_and_the_runs_file(capsys):
    """The error comes from the measures' corpus-size check (n=), worded from its fields:
    -N for n=, and the run by its file rather than by its index among the runs."""
    args = ["trec_eval", "-N", "5", "-m", "utility.1,-1,0,1", str(TOY / "qrels.txt")]
    assert main([*args, *TOY_RUNS[:2]]) == 2
    err = capsys.readouterr().err
    assert "-N 5 is too small" in err and "n=" not in err
    assert any(f"of run {run!r}" in err for run in TOY_RUNS[:2]) and "system=" not in err


def test_a_dot_without_parameters_is_refused_as_trec_eval_refuses_it(capsys):
    """NIST trec_eval 10.0: ``-m P.`` prints "improper measure in parameter 'P'"."""
    assert main(["trec_eval", "-m", "P.", str(TOY / "qrels.txt"), TOY_RUNS[0]]) == 2
    err = capsys.readouterr().err
    assert "'P.'" in err and "e.g. P.5,10" in err and len(err.strip().splitlines()) == 1
