"""The runs of ``lexiframe trec_eval`` read as trec_eval takes them: each text file a run,
read a batch of files in one pass; a folder one run; a parquet table one run per system;
the next batch read in a thread while the caller works on this one."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl

from lexiframe.errors import InputError

RUN_INDEX = "_run"
"""The column of a :class:`_Batch`'s rows that says which of its runs a row belongs to."""



@dataclass(frozen=True)
class Run:
    """One run as trec_eval takes it: its runid and where it came from."""

    runid: str
    source: str


@dataclass(frozen=True)
class Batch:
    """Whole runs read together: their rows, :data:`RUN_INDEX` numbering them from 0 in
    the order of ``runs``."""

    runs: list[Run]
    rows: pl.DataFrame


def read_batches(paths: Sequence[str], batch_bytes: int) -> Iterator[Batch]:
    """The runs of the paths in order, a batch of whole runs at a time. A text file is one
    run, read in one pass with the other text files of its batch; a directory is one run
    of its files; a parquet table of several systems is one run per system (trec_eval
    reads no parquet)."""
    from lexiframe.io.files import find_files, is_parquet

    texts: list[tuple[Path, str]] = []  # text files to read together, and their arguments
    for path in paths:
        files = find_files([path], "run")
        if len(files) == 1 and not is_parquet(files[0]):
            texts.append((files[0], path))
            continue
        yield from _text_batches(texts, batch_bytes)
        texts = []
        yield _other_batch(path)
    yield from _text_batches(texts, batch_bytes)


def _text_batches(texts: Sequence[tuple[Path, str]], batch_bytes: int) -> Iterator[Batch]:
    """Text files of one run each, read a batch of files at a time."""
    from lexiframe.io.layouts import RUN
    from lexiframe.io.trec import text_parts

    first = 0  # the index in texts of the batch's first file
    files = [file for file, _ in texts]
    for part, rows in text_parts(files, RUN, "field", batch_bytes, file_column=RUN_INDEX):
        rows = rows.with_columns(pl.col(RUN_INDEX) - first)
        # trec_eval's runid: the last line's (the rows come file by file)
        numbers = rows[RUN_INDEX].to_numpy()
        lasts = np.append(np.flatnonzero(np.diff(numbers)), len(numbers) - 1)[: rows.height]
        runids = dict(zip(numbers[lasts].tolist(), rows["system"].gather(lasts), strict=True))
        runs = []
        for number, (_, argument) in enumerate(texts[first : first + len(part)]):
            if number not in runids:
                raise InputError(f"{argument}: the run holds no line")
            runs.append(Run(runids[number], argument))
        first += len(part)
        yield Batch(runs, rows.drop("system"))


def _other_batch(path: str) -> Batch:
    """A run given as a directory of files or as parquet, one batch of its own."""
    from lexiframe import io
    from lexiframe.io.files import find_files, is_parquet

    rows = io.read_run(path)
    if rows.height == 0:
        raise InputError(f"{path}: the run holds no line")
    if all(is_parquet(file) for file in find_files([path], "run")):
        systems = rows["system"].unique(maintain_order=True)
        if len(systems) > 1:
            index = pl.col("system").replace_strict(
                systems, range(len(systems)), return_dtype=pl.UInt32
            )
            runs = [Run(str(system), f"{path} (system {system!r})") for system in systems]
            return Batch(runs, rows.select(pl.exclude("system"), index.alias(RUN_INDEX)))
    else:
        tags = rows["system"].unique(maintain_order=True)
        if len(tags) > 1:  # a folder is one run: several runs' files would merge
            raise InputError(
                f"{path} is a folder, read as one run of its files, but they hold "
                f"{len(tags)} run tags ({', '.join(map(repr, tags.head(3)))}"
                f"{', …' if len(tags) > 3 else ''}): to evaluate each run, name its files "
                f"({path.rstrip('/')}/*)",
                kind="several runs",
            )
    runid = rows["system"][-1]  # trec_eval keeps the last line's id
    index = pl.lit(0, dtype=pl.UInt32).alias(RUN_INDEX)
    return Batch([Run(str(runid), path)], rows.select(pl.exclude("system"), index))


Item = TypeVar("Item")


def read_ahead(items: Iterator[Item]) -> Iterator[Item]:
    """The items, the next one made by a thread while the caller works on this one
    (reading waits on the disk, and Polars parses and ranks outside Python's lock)."""
    ready: queue.Queue[tuple[Item | None, BaseException | None, bool]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        ready.put((item, None, False), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put((None, None, True))
        except BaseException as error:  # raised again in the caller's thread
            ready.put((None, error, True))

    producer = threading.Thread(target=produce, name="lexiframe-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            item, error, done = ready.get()
            if error is not None:
                raise error
            if done:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()


