"""Synthetic tracks written to files: :func:`write_synthetic_track` a block of queries at a
time, and the demo track of ``lexiframe demo`` (:func:`demo_track`, :func:`write_demo`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from lexiframe.datasets._model import (
    Ids,
    IdType,
    Track,
    blocks,
    qrels_chunk,
    spec_of,
    synthetic_track,
    system_names,
)
from lexiframe.errors import InputError

TrackFormat = Literal["trec", "trec.gz", "parquet"]
"""File format of :func:`write_synthetic_track`."""


@dataclass(frozen=True)
class TrackFiles:
    """The files written by :func:`write_synthetic_track`: one run file per system, qrels."""

    runs: tuple[Path, ...]
    qrels: Path


@dataclass(frozen=True)
class DemoFiles:
    """The files written by :func:`write_demo`: the demo track as TREC text and parquet.

    Attributes:
        runs: ``runs/sys000.txt`` … ``runs/sys007.txt``, one TREC run file per system.
        qrels: ``qrels.txt``, the TREC qrels.
        run_parquet: ``run.parquet``, every system's run in one table (system, query, doc,
            score), for Spark and ``lf.scan_run``.
        qrels_parquet: ``qrels.parquet`` (query, doc, relevance).
    """

    runs: tuple[Path, ...]
    qrels: Path
    run_parquet: Path
    qrels_parquet: Path

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file, the runs first."""
        return (*self.runs, self.qrels, self.run_parquet, self.qrels_parquet)


DEMO_SYSTEMS = 8
"""The systems of the demo track, ``sys000`` … ``sys007``."""


_EXTENSIONS = {"trec": ("", ".txt"), "trec.gz": (".gz", ".txt.gz"), "parquet": (".parquet",) * 2}


def write_synthetic_track(
    directory: str | Path,
    *,
    n_systems: int = 8,
    n_queries: int = 20,
    depth: int = 100,
    n_docs: int | None = None,
    seed: int = 0,
    id_type: IdType = "str",
    skip_rate: float = 0.02,
    tie_rate: float = 0.125,
    relevant: tuple[int, int] = (5, 60),
    no_relevant_queries: int = 0,
    unjudged_queries: int = 0,
    format: TrackFormat = "trec",
    compression_level: int = 1,
) -> TrackFiles:
    """Write the track :func:`synthetic_track` would return, a block of queries at a time.

    Writes ``directory/runs/sys000`` … (``.gz`` or ``.parquet`` by ``format``) and
    ``directory/qrels.txt`` (``qrels.txt.gz``, ``qrels.parquet``). Memory holds one block
    of queries (all systems), never a whole system, so tracks of hundreds of millions of
    rows fit: e.g. 10 systems x 200,000 users x depth 100 with ``id_type="int"``. Each file
    is written to a temporary name and renamed when complete. The other arguments are
    those of :func:`synthetic_track`.

    Args:
        directory: created if missing.
        format: ``"trec"`` (text, space separated), ``"trec.gz"`` or ``"parquet"``.
        compression_level: gzip level of ``"trec.gz"`` (1 is fast, 9 small).

    Example:
        >>> import tempfile
        >>> from lexiframe.io import read_qrels, read_run
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     files = write_synthetic_track(tmp, n_systems=2, n_queries=3, depth=5)
        ...     run = read_run(files.runs, rank=True)
        ...     qrels = read_qrels(files.qrels)
        >>> [path.name for path in files.runs], run.height <= 2 * 3 * 5
        (['sys000', 'sys001'], True)
        >>> run.sort("system", "query", "rank").equals(
        ...     synthetic_track(n_systems=2, n_queries=3, depth=5).run)
        True
    """
    from lexiframe.io.writers import ChunkWriter

    if format not in _EXTENSIONS:
        raise InputError(f"format must be one of {list(_EXTENSIONS)}, not {format!r}")
    spec = spec_of(locals())
    root = Path(directory)
    (root / "runs").mkdir(parents=True, exist_ok=True)
    run_suffix, qrels_suffix = _EXTENSIONS[format]
    names = system_names(spec.n_systems).to_list()
    run_paths = tuple(root / "runs" / f"{name}{run_suffix}" for name in names)
    qrels_path = root / f"qrels{qrels_suffix}"
    kind: Literal["trec", "parquet"] = "parquet" if format == "parquet" else "trec"
    gzip_level = compression_level if format == "trec.gz" else None
    with contextlib.ExitStack() as stack:
        qrels_writer = stack.enter_context(
            ChunkWriter(qrels_path, kind=kind, table="qrels", gzip_level=gzip_level)
        )
        run_writers = [
            stack.enter_context(ChunkWriter(path, kind=kind, table="run", gzip_level=gzip_level))
            for path in run_paths
        ]
        systems = system_names(spec.n_systems)
        for block, rankings in blocks(spec):
            ids = Ids(spec, block.start, block.start + len(block.grades))
            qrels_writer.write(qrels_chunk(spec, block, ids))
            for part in rankings:
                frame = part.frame(systems, ids)
                counts = np.bincount(part.system, minlength=spec.n_systems) * spec.depth
                offsets = np.concatenate([[0], np.cumsum(counts)])
                for index, writer in enumerate(run_writers):  # one file per system
                    if counts[index]:
                        writer.write(frame.slice(offsets[index], counts[index]))
    return TrackFiles(runs=run_paths, qrels=qrels_path)


def demo_track() -> Track:
    """The small synthetic track of ``lexiframe demo`` (generated on the fly, not real data).

    8 systems x 27 queries (401-427) x depth 100, seed 2024, with the traps of real tracks:
    some systems skip some queries, ``sys003`` has coarse scores (many ties), query ``426``
    is judged but has no relevant document, and query ``427`` is unjudged and answered by
    ``sys001`` only. Evaluation tools score the 25 queries 401-425.

    Example:
        >>> track = demo_track()
        >>> track.run["system"].n_unique(), track.qrels["query"].n_unique()
        (8, 26)
        >>> track.run.filter(pl.col("query") == "427")["system"].unique().to_list()
        ['sys001']
    """
    track = synthetic_track(
        n_systems=DEMO_SYSTEMS,
        n_queries=27,
        depth=100,
        seed=2024,
        skip_rate=0.02,
        tie_rate=0.0,
        no_relevant_queries=1,
        unjudged_queries=1,
    )
    coarse = pl.col("system") == "sys003"
    run = track.run.filter((pl.col("query") != "427") | (pl.col("system") == "sys001"))
    # coarse scores for sys003; ranks follow trec_eval's order on the rounded scores
    run = run.with_columns(
        score=pl.when(coarse).then(pl.col("score").round(1)).otherwise(pl.col("score"))
    ).with_columns(
        rank=pl.struct("score", "doc")
        .rank("ordinal", descending=True)
        .over("system", "query")
        .cast(pl.Int64)
    )
    quality = track.quality.with_columns(coarse=coarse)
    return Track(run=run.sort("system", "query", "rank"), qrels=track.qrels, quality=quality)


def write_demo(directory: str | Path = ".") -> DemoFiles:
    """Write the demo track (:func:`demo_track`) into ``directory``, for the documentation's
    examples and your own first steps; ``lexiframe demo --write DIR`` does the same, but
    refuses to replace a file (:func:`demo_files` names them).

    Writes ``runs/sys000.txt`` … ``runs/sys007.txt`` (TREC run files), ``qrels.txt`` (TREC
    qrels), and the same data as ``run.parquet`` and ``qrels.parquet``. Folders are made
    when missing; existing files of these names are replaced, each atomically.

    Example:
        >>> import tempfile
        >>> from lexiframe.io import read_qrels, read_run
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     files = write_demo(tmp)
        ...     run, qrels = read_run(files.runs), read_qrels(files.qrels)
        ...     keys = ["system", "query", "doc"]
        ...     same = run.sort(keys).equals(read_run(files.run_parquet).sort(keys))
        >>> len(files.runs), run["system"].n_unique(), qrels["query"].n_unique(), same
        (8, 8, 26, True)
    """
    from lexiframe.io import write_frame, write_trec_qrels, write_trec_run

    files = demo_files(directory)
    track = demo_track()
    for path, (_, rows) in zip(
        files.runs, sorted(track.run.partition_by("system", as_dict=True).items()), strict=True
    ):
        write_trec_run(rows, path)
    write_trec_qrels(track.qrels, files.qrels)
    write_frame(track.run.drop("rank"), files.run_parquet)
    write_frame(track.qrels, files.qrels_parquet)
    return files


def demo_files(directory: str | Path = ".") -> DemoFiles:
    """The files :func:`write_demo` writes into ``directory`` (without writing them).

    Example:
        >>> [path.as_posix() for path in demo_files("demo").paths[-3:]]
        ['demo/qrels.txt', 'demo/run.parquet', 'demo/qrels.parquet']
    """
    root = Path(directory)
    return DemoFiles(
        runs=tuple(root / "runs" / f"{name}.txt" for name in system_names(DEMO_SYSTEMS)),
        qrels=root / "qrels.txt",
        run_parquet=root / "run.parquet",
        qrels_parquet=root / "qrels.parquet",
    )
