"""Readers and writers of lexiframe.io, checked against a slow, obvious line-by-line parser."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from lexiframe.datasets import synthetic_track
from lexiframe.errors import InputError, SchemaError
from lexiframe.io import (
    QRELS_SCHEMA,
    RUN_SCHEMA,
    read_qrels,
    read_run,
    scan_qrels,
    scan_run,
    write_frame,
    write_trec_qrels,
    write_trec_run,
)

DATA = Path(__file__).parent / "data"
RUN_KEYS = ["system", "query", "doc"]
RANKED_RUN_SCHEMA = pl.Schema({**RUN_SCHEMA, "rank": pl.Int64})
QRELS_KEYS = ["query", "doc"]


def reference_run(path: Path, system: str | None = None) -> pl.DataFrame:
    """trec_eval's reading of a run file: split each non-blank line on whitespace."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as handle:
        rows = [line.split() for line in handle if line.strip()]
    return pl.DataFrame(
        {
            "system": [system or row[5] for row in rows],
            "query": [row[0] for row in rows],
            "doc": [row[2] for row in rows],
            "score": [float(row[4]) for row in rows],
            "rank": [int(row[3]) for row in rows],
        },
        schema=RANKED_RUN_SCHEMA,
    )


def reference_qrels(path: Path) -> pl.DataFrame:
    with open(path) as handle:
        rows = [line.split() for line in handle if line.strip()]
    return pl.DataFrame(
        {
            "query": [row[0] for row in rows],
            "doc": [row[2] for row in rows],
            "relevance": [int(row[3]) for row in rows],
        },
        schema=QRELS_SCHEMA,
    )


def same_run(left: pl.DataFrame, right: pl.DataFrame) -> None:
    """The same rows in the columns of ``left`` (a run read without rank has none)."""
    assert_frame_equal(left.sort(RUN_KEYS), right.select(left.columns).sort(RUN_KEYS))


def small_run() -> pl.DataFrame:
    return synthetic_track(n_systems=3, n_queries=5, depth=20, seed=7, tie_rate=0.4).run


# --- the fixtures ---------------------------------------------------------------------------


def test_trec_eval_results_test_tab_separated_and_padded() -> None:
    path = DATA / "trec_eval" / "results.test"
    assert path.read_text().startswith("301\tQ0\tFR940202-2-00150\t104\t  2.129133\tSTANDARD")
    run = read_run(path)
    assert run.schema == RUN_SCHEMA
    assert run.height == 1500
    assert run["system"].unique().to_list() == ["STANDARD"]
    first = run.filter(pl.col("doc") == "FR940202-2-00150", pl.col("query") == "301")
    assert first.rows() == [("STANDARD", "301", "FR940202-2-00150", 2.129133)]
    same_run(run, reference_run(path))
    ranked = read_run(path, rank=True)
    assert ranked.schema == RANKED_RUN_SCHEMA
    same_run(ranked, reference_run(path))


def test_trec_eval_qrels_test() -> None:
    path = DATA / "trec_eval" / "qrels.test"
    qrels = read_qrels(path)
    assert qrels.schema == QRELS_SCHEMA
    assert qrels.height == 3681
    assert_frame_equal(qrels.sort(QRELS_KEYS), reference_qrels(path).sort(QRELS_KEYS))


def test_toy_track() -> None:
    run = read_run(DATA / "toy" / "runs")
    assert run.height == 15702
    assert sorted(run["system"].unique()) == [f"sys{index:03d}" for index in range(8)]
    assert run.filter(pl.col("query") == "888")["system"].unique().to_list() == ["sys001"]
    by_name = read_run(DATA / "toy" / "runs", system_from="filename")
    same_run(run, by_name)
    expected = pl.concat(
        [reference_run(path) for path in sorted((DATA / "toy" / "runs").iterdir())]
    )
    same_run(run, expected)

    qrels = read_qrels(DATA / "toy" / "qrels.txt")
    assert qrels.height == 939
    relevant = qrels.filter(pl.col("query") == "999")["relevance"]
    assert relevant.len() > 0 and relevant.max() == 0


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run.txt", "run.txt.gz"])
def test_write_then_read_run(tmp_path: Path, name: str) -> None:
    run = small_run()
    path = write_trec_run(run, tmp_path / name)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    same_run(read_run(path), run)


@pytest.mark.parametrize("name", ["qrels.txt", "qrels.txt.gz"])
def test_write_then_read_qrels(tmp_path: Path, name: str) -> None:
    qrels = synthetic_track(n_queries=6, seed=3).qrels
    path = write_trec_qrels(qrels, tmp_path / name)
    assert_frame_equal(read_qrels(path).sort(QRELS_KEYS), qrels.sort(QRELS_KEYS))


def test_write_run_with_integer_ids_and_without_rank(tmp_path: Path) -> None:
    run = pl.DataFrame(
        {"system": ["a"] * 3, "query": [7] * 3, "doc": [9, 10, 11], "score": [1.0, 1.0, 2.0]}
    )
    path = write_trec_run(run, tmp_path / "run")
    # trec_eval's order: score descending, then doc id descending *as a string* ("9" > "11")
    assert path.read_text().splitlines() == [
        "7 Q0 11 1 2.0 a",
        "7 Q0 9 2 1.0 a",
        "7 Q0 10 3 1.0 a",
    ]


# --- separators, whitespace, compression ----------------------------------------------------

LINES = [
    ("401", "Q0", "D1", "1", "12.5", "bm25"),
    ("401", "Q0", "D2", "2", "-3e-2", "bm25"),
    ("402", "Q0", "D1", "1", "7", "bm25"),
]
EXPECTED = pl.DataFrame(
    {
        "system": ["bm25"] * 3,
        "query": ["401", "401", "402"],
        "doc": ["D1", "D2", "D1"],
        "score": [12.5, -0.03, 7.0],
        "rank": [1, 2, 1],
    },
    schema=RANKED_RUN_SCHEMA,
)
LAYOUTS = {
    "spaces": lambda fields: " ".join(fields) + "\n",
    "tabs": lambda fields: "\t".join(fields) + "\n",
    "padded-tabs": lambda fields: (
        "\t".join(f"  {value}" if index == 4 else value for index, value in enumerate(fields))
        + "\n"
    ),
    "runs-of-spaces": lambda fields: "   ".join(fields) + "\n",
    "leading-trailing": lambda fields: "  " + " ".join(fields) + " \t\n",
    "mixed": lambda fields: (
        f"{fields[0]}\t{fields[1]} {' '.join(fields[2:4])}\t\t{' '.join(fields[4:])}\n"
    ),
    "crlf": lambda fields: " ".join(fields) + "\r\n",
    "blank-lines": lambda fields: "\n" + " ".join(fields) + "\n   \n",
    "padded-string-field-in-tabs": lambda fields: (
        "\t".join(f" {value} " if index == 2 else value for index, value in enumerate(fields))
        + "\n"
    ),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("compress", [False, True])
def test_separators(tmp_path: Path, layout: str, compress: bool) -> None:
    text = "".join(LAYOUTS[layout](fields) for fields in LINES)
    path = tmp_path / ("run.gz" if compress else "run")
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    same_run(read_run(path), EXPECTED)
    same_run(read_run(path, rank=True), EXPECTED)
    same_run(scan_run(path).collect(), EXPECTED)
    same_run(scan_run(path, rank=True).collect(), EXPECTED)


def test_gzip_is_detected_by_content(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"  # gzipped, without the extension
    path.write_bytes(gzip.compress("".join(LAYOUTS["tabs"](f) for f in LINES).encode()))
    same_run(read_run(path), EXPECTED)


def test_irregular_line_after_the_sniffed_lines(tmp_path: Path) -> None:
    """The separator is guessed from the first lines; a later irregular line still reads."""
    run = synthetic_track(n_systems=1, n_queries=3, depth=400, seed=1).run
    plain = tmp_path / "plain"
    write_trec_run(run, plain)
    lines = plain.read_text().splitlines()
    lines[-1] = "  " + lines[-1].replace(" ", "\t ")  # tabs, runs, leading whitespace
    lines[-2] = lines[-2].replace(" ", "\t", 2)  # a tab among spaces: 5 space-separated fields
    irregular = tmp_path / "irregular"
    irregular.write_text("\n".join(lines) + "\n")
    same_run(read_run(irregular), run)
    same_run(read_run([irregular, plain]), pl.concat([run, run]))


def test_padded_string_field_after_the_sniffed_lines(tmp_path: Path) -> None:
    run = synthetic_track(n_systems=1, n_queries=3, depth=400, seed=1).run
    lines = [
        "\t".join(fields)
        for fields in run.select(
            "query",
            pl.lit("Q0"),
            "doc",
            pl.col("rank").cast(str),
            pl.col("score").cast(str),
            "system",
        ).rows()
    ]
    lines[-1] = lines[-1].replace("\tQ0\t", "\tQ0\t ")  # " D…": the doc id is padded
    path = tmp_path / "run"
    path.write_text("\n".join(lines) + "\n")
    same_run(read_run(path), run)


# --- many files, directories, system names --------------------------------------------------


def _write_systems(directory: Path, run: pl.DataFrame, suffix: str = "") -> list[Path]:
    directory.mkdir(exist_ok=True)
    paths = []
    for (system,), rows in run.group_by("system"):
        paths.append(write_trec_run(rows, directory / f"{system}{suffix}"))
    return paths


def test_directory_and_lists(tmp_path: Path) -> None:
    run = small_run()
    paths = _write_systems(tmp_path / "runs", run)
    (tmp_path / "runs" / ".hidden").write_text("not a run\n")
    (tmp_path / "runs" / "subfolder").mkdir()
    same_run(read_run(tmp_path / "runs"), run)
    same_run(read_run([str(path) for path in paths]), run)
    same_run(read_run(tmp_path / "runs", system_from="filename"), run)


def test_system_from_filename(tmp_path: Path) -> None:
    run = small_run().filter(pl.col("system") == "sys000").with_columns(system=pl.lit("field"))
    folder = tmp_path / "runs"
    folder.mkdir()
    write_trec_run(run, folder / "alpha.gz")
    write_trec_run(run, folder / "beta.txt")
    run.write_parquet(folder / "gamma.parquet")
    assert read_run(folder)["system"].unique().to_list() == ["field"]
    by_name = read_run(folder, system_from="filename")
    assert sorted(by_name["system"].unique()) == ["alpha", "beta.txt", "gamma"]
    for name in ("alpha", "beta.txt", "gamma"):
        same_run(by_name.filter(pl.col("system") == name), run.with_columns(system=pl.lit(name)))


def test_many_files_read_in_one_go(tmp_path: Path) -> None:
    run = synthetic_track(n_systems=40, n_queries=4, depth=10, seed=5).run
    _write_systems(tmp_path / "runs", run, ".gz")
    same_run(read_run(tmp_path / "runs"), run)
    same_run(scan_run(tmp_path / "runs").collect(), run)


# --- parquet --------------------------------------------------------------------------------


def test_parquet_in(tmp_path: Path) -> None:
    run = small_run()
    run.write_parquet(tmp_path / "run.parquet")
    same_run(read_run(tmp_path / "run.parquet"), run)
    same_run(scan_run(tmp_path / "run.parquet").collect(), run)
    by_name = read_run(tmp_path / "run.parquet", system_from="filename")
    assert by_name["system"].unique().to_list() == ["run"]


def test_parquet_without_rank_gets_trec_ranks(tmp_path: Path) -> None:
    run = small_run()
    run.drop("rank").write_parquet(tmp_path / "run.parquet")
    same_run(read_run(tmp_path / "run.parquet", rank=True), run)


def test_parquet_keeps_integer_ids_and_casts_types(tmp_path: Path) -> None:
    run = pl.DataFrame(
        {
            "system": pl.Series(["a", "a"], dtype=pl.Categorical),
            "query": pl.Series([1, 1], dtype=pl.Int32),
            "doc": [5, 6],
            "score": pl.Series([1.0, 2.0], dtype=pl.Float32),
            "extra": [0, 0],
        }
    )
    run.write_parquet(tmp_path / "run.parquet")
    read = read_run(tmp_path / "run.parquet", rank=True)
    assert read.schema == pl.Schema(
        {
            "system": pl.String,
            "query": pl.Int64,
            "doc": pl.Int64,
            "score": pl.Float64,
            "rank": pl.Int64,
        }
    )
    assert read.sort("rank")["doc"].to_list() == [6, 5]


def test_parquet_qrels(tmp_path: Path) -> None:
    qrels = synthetic_track(n_queries=3).qrels
    qrels.write_parquet(tmp_path / "qrels.parquet")
    assert_frame_equal(read_qrels(tmp_path / "qrels.parquet"), qrels, check_row_order=False)
    assert_frame_equal(
        scan_qrels(tmp_path / "qrels.parquet").collect(), qrels, check_row_order=False
    )


@pytest.mark.parametrize(
    ("frame", "fragments"),
    [
        (pl.DataFrame({"query": ["1"], "doc": ["d"], "score": [1.0]}), ["no column 'system'"]),
        (
            pl.DataFrame({"system": ["s"], "query": ["1"], "doc": ["d"], "score": ["x"]}),
            ["'score'", "numeric"],
        ),
        (
            pl.DataFrame({"system": ["s"], "query": [1.5], "doc": ["d"], "score": [1.0]}),
            ["'query'", "strings or integers"],
        ),
    ],
)
def test_parquet_schema_errors(tmp_path: Path, frame: pl.DataFrame, fragments: list[str]) -> None:
    path = tmp_path / "bad.parquet"
    frame.write_parquet(path)
    with pytest.raises(SchemaError) as error:
        read_run(path)
    for fragment in [str(path), *fragments]:
        assert fragment in str(error.value)


def test_parquet_qrels_relevance_must_be_integer(tmp_path: Path) -> None:
    path = tmp_path / "qrels.parquet"
    pl.DataFrame({"query": ["1"], "doc": ["d"], "relevance": [0.5]}).write_parquet(path)
    with pytest.raises(InputError, match=r"'relevance'.*whole numbers.*relevance=0.5"):
        read_qrels(path)


# --- bad input ------------------------------------------------------------------------------

GOOD = "401 Q0 D1 1 2.5 bm25\n"


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ("401 Q0 D2 2 1.5", "expected 6 whitespace-separated fields"),
        ("401 Q0 D2 2 1.5 bm25 extra", "found 7 fields"),
        ("401 Q0 D2 2 high bm25", "score 'high' is not a number"),
        ("401 Q0 D2 two 1.5 bm25", "rank 'two' is not an integer"),
        ("401\tQ0\tD2\t2\t\tbm25", "found 5 fields"),
    ],
)
@pytest.mark.parametrize("where", ["early", "late"])
@pytest.mark.parametrize("compress", [False, True])
def test_malformed_line(
    tmp_path: Path, bad_line: str, problem: str, where: str, compress: bool
) -> None:
    good_lines = 3 if where == "early" else 2000  # "late": past the sniffed lines
    text = GOOD * good_lines + bad_line + "\n" + GOOD
    path = tmp_path / ("run.gz" if compress else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    (tmp_path / "other.txt").write_text(GOOD)
    # The rank field is read, and checked, on request only.
    rank = "rank" in problem
    for read in (read_run, lambda paths, **options: scan_run(paths, **options).collect()):
        with pytest.raises(InputError) as error:
            read([tmp_path / "other.txt", path], rank=rank)
        message = str(error.value)
        assert str(path) in message
        assert f"line {good_lines + 1}" in message
        assert problem in message
        assert repr(bad_line) in message


@pytest.mark.parametrize("compress", [False, True])
def test_rank_and_q0_fields_are_not_checked_unless_rank_is_read(
    tmp_path: Path, compress: bool
) -> None:
    # trec_eval ignores both fields; so does read_run without rank=True.
    text = GOOD * 2000 + "401 anything D2 two 1.5 bm25\n"
    path = tmp_path / ("run.gz" if compress else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    run = read_run(path)
    assert run.schema == RUN_SCHEMA
    assert run.row(-1) == ("bm25", "401", "D2", 1.5)
    with pytest.raises(InputError, match="rank 'two' is not an integer"):
        read_run(path, rank=True)


def test_every_malformed_line_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text(GOOD + "a b c\n" + GOOD + "d e\n")
    with pytest.raises(InputError, match=r"line 2: .*\(1 more malformed lines\)"):
        read_run(path)


def test_malformed_qrels_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_text("401 0 D1 1\n401 0 D2 yes\n")
    with pytest.raises(InputError, match=r"qrels file .*qrels', line 2: relevance 'yes'"):
        read_qrels(path)
    path.write_text("401 0 D1 1\n401 D2 1\n")
    with pytest.raises(InputError, match=r"line 2: expected 4 whitespace-separated fields"):
        read_qrels(path)


@pytest.mark.parametrize("content", ["", "\n\n", "  \n\t\n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=r"run file .*run\.txt' is empty"):
        read_run(path)
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(content.encode()))
    with pytest.raises(InputError, match="is empty"):
        read_run(gz)


def test_no_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no run files given"):
        read_run([])
    with pytest.raises(InputError, match="no run files found in directory"):
        read_run(tmp_path)
    with pytest.raises(InputError, match=r"qrels file not found: .*missing"):
        read_qrels(tmp_path / "missing")
    with pytest.raises(InputError, match="run file not found"):
        scan_run(tmp_path / "missing")


def test_empty_parquet_run(tmp_path: Path) -> None:
    pl.DataFrame(schema=RUN_SCHEMA).write_parquet(tmp_path / "run.parquet")
    with pytest.raises(InputError, match="hold no rows"):
        read_run(tmp_path / "run.parquet")


def test_bad_system_from(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="system_from"):
        read_run(tmp_path, system_from="column")  # type: ignore[arg-type]


def test_truncated_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "run.gz"
    # Past the sniffed head, so that the fast path decompresses it and fails.
    path.write_bytes(gzip.compress((GOOD * 5000).encode())[:-20])
    with pytest.raises(InputError, match=f"cannot decompress '{path}'"):
        read_run(path)
    assert list(tmp_path.iterdir()) == [path]


def test_gzip_members_and_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Several gzip members in one file (as written a chunk at a time), and files read in
    # several batches of decompressed text.
    monkeypatch.setattr("lexiframe.io.trec._BATCH_BYTES", 1)
    lines = [
        "".join(LAYOUTS["spaces"](fields) for fields in LINES[:2]),
        LAYOUTS["spaces"](LINES[2]),
    ]
    (tmp_path / "a.gz").write_bytes(b"".join(gzip.compress(part.encode()) for part in lines))
    (tmp_path / "b.gz").write_bytes(gzip.compress("".join(lines).encode()))
    run = read_run(tmp_path)
    same_run(run, pl.concat([EXPECTED, EXPECTED]))
    assert run.height == 6


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(GOOD.encode() + b"401 Q0 D\xff\xfe 2 1.5 bm25\n")
    with pytest.raises(InputError, match=f"run file '{path}', line 2: not UTF-8 text") as info:
        read_run(path)
    assert info.value.kind == "not text"


# --- lazy reading ---------------------------------------------------------------------------


def test_scan_run_is_lazy_and_pushes_down(tmp_path: Path) -> None:
    run = small_run()
    _write_systems(tmp_path / "runs", run)
    lazy = scan_run(tmp_path / "runs")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == RUN_SCHEMA
    query = run["query"][0]
    picked = lazy.filter(pl.col("query") == query).select("system", "doc").collect()
    expected = run.filter(pl.col("query") == query).select("system", "doc")
    assert_frame_equal(picked.sort("system", "doc"), expected.sort("system", "doc"))
    assert lazy.head(3).collect().height == 3


def test_scan_errors_surface_on_collect(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text(GOOD + "401 Q0 D2 2 nan? bm25\n")
    lazy = scan_run(path)  # the first line is fine: nothing is raised yet
    with pytest.raises(InputError, match="line 2"):
        lazy.collect()


# --- write_frame ----------------------------------------------------------------------------

FRAME = pl.DataFrame(
    {
        "system": ["a", "b"],
        "positions": [[1, 4, 9], []],
        "n_rel": pl.Series([3, 0], dtype=pl.UInt32),
    }
)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".ndjson"])
def test_write_frame_round_trip(tmp_path: Path, suffix: str) -> None:
    path = write_frame(FRAME, tmp_path / f"out{suffix}")
    if suffix == ".parquet":
        back = pl.read_parquet(path)
    else:
        back = pl.read_ndjson(path, schema=FRAME.schema)
    assert_frame_equal(back, FRAME)
    assert os.listdir(tmp_path) == [path.name]


def test_write_frame_csv_joins_lists(tmp_path: Path) -> None:
    path = write_frame(FRAME.lazy(), tmp_path / "out.csv")
    assert path.read_text().splitlines() == ["system,positions,n_rel", "a,1 4 9,3", 'b,"",0']


def test_write_frame_refuses_structs_in_csv(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match=r"'s'.*parquet or jsonl"):
        write_frame(pl.DataFrame({"s": [{"x": 1}]}), tmp_path / "out.csv")
    assert os.listdir(tmp_path) == []


def test_write_frame_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\.xlsx.*\.parquet, \.csv, \.jsonl, \.ndjson"):
        write_frame(FRAME, tmp_path / "out.xlsx")
    assert os.listdir(tmp_path) == []


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    broken = pl.DataFrame({"a": [1, 2]}).with_columns(b=pl.Series([object(), object()]))
    with pytest.raises(Exception):  # noqa: B017  (whatever Polars raises)
        write_frame(broken, tmp_path / "out.parquet")
    assert os.listdir(tmp_path) == []
    # an existing file is kept as it was
    write_frame(FRAME, tmp_path / "out.parquet")
    before = (tmp_path / "out.parquet").read_bytes()
    with pytest.raises(Exception):  # noqa: B017
        write_frame(broken, tmp_path / "out.parquet")
    assert (tmp_path / "out.parquet").read_bytes() == before
    assert os.listdir(tmp_path) == ["out.parquet"]


def test_write_trec_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    run = small_run()
    with pytest.raises(SchemaError, match="no column 'score'"):
        write_trec_run(run.drop("score"), tmp_path / "run")
    with pytest.raises(InputError, match="nulls in 'score'"):
        write_trec_run(run.with_columns(score=pl.lit(None, pl.Float64)), tmp_path / "run")
    with pytest.raises(InputError, match=r"whitespace.*'D 1'"):
        write_trec_run(run.with_columns(doc=pl.lit("D 1")), tmp_path / "run")
    qrels = pl.DataFrame({"query": ["1"], "doc": ["d"], "relevance": [0.5]})
    with pytest.raises(SchemaError, match="integer"):
        write_trec_qrels(qrels, tmp_path / "qrels")
    assert os.listdir(tmp_path) == []
