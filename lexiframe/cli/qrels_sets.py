"""``--qrels`` of the commands that evaluate against several qrels sets: ``NAME=FILE``,
repeated (human and LLM labels, say), read into one frame whose ``qrels`` column names
each set (:func:`lexiframe.concat_qrels`); ``lexiframe evaluate`` also takes one bare
``FILE``, as before, with no such column."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from lexiframe.errors import InputError
from lexiframe.io.qrels import QRELS_KEY
from lexiframe.typing import Labels


def add_qrels_argument(
    parser: argparse.ArgumentParser, help: str, metavar: str = "NAME=FILE"
) -> None:
    """``--qrels``, repeated (a parser with ``conflict_handler="resolve"`` puts it in place
    of :func:`lexiframe.cli._shared.add_track_arguments`'s).

    >>> parser = argparse.ArgumentParser()
    >>> add_qrels_argument(parser, "the qrels")
    >>> parser.parse_args(["--qrels", "h=a.txt", "--qrels", "l=b.txt"]).qrels
    ['h=a.txt', 'l=b.txt']
    """
    parser.add_argument("--qrels", action="append", required=True, metavar=metavar, help=help)


def _is_named(spec: str) -> bool:
    """Whether ``spec`` is ``NAME=FILE``: it holds ``=`` and is not itself a file's path."""
    return "=" in spec and not Path(spec).is_file()


def qrels_files(specs: Sequence[str]) -> dict[str, str]:
    """``NAME=FILE`` (or a bare ``FILE``, named by its stem) for each ``--qrels``.

    >>> qrels_files(["human=qrels.txt", "llm=umbrela.txt"])
    {'human': 'qrels.txt', 'llm': 'umbrela.txt'}
    """
    files: dict[str, str] = {}
    for spec in specs:
        name, _, path = spec.partition("=") if _is_named(spec) else (Path(spec).stem, "", spec)
        if not name or not path:
            raise InputError(
                f"--qrels {spec!r}: write NAME=FILE, e.g. --qrels human=qrels.txt "
                "--qrels llm=llm-qrels.txt"
            )
        if name in files:
            raise InputError(
                f"--qrels names {name!r} twice; name each qrels once, e.g. --qrels "
                "human=qrels.txt --qrels llm=llm-qrels.txt"
            )
        files[name] = path
    return files


def qrels_sets(specs: Sequence[str]) -> dict[str, str] | None:
    """The named qrels sets of ``lexiframe evaluate``'s ``--qrels``, or None for one bare
    ``FILE`` (evaluated as one qrels, without a ``qrels`` column).

    >>> qrels_sets(["qrels.txt"]) is None, qrels_sets(["human=qrels.txt"])
    (True, {'human': 'qrels.txt'})
    """
    if len(specs) == 1 and not _is_named(specs[0]):
        return None
    return qrels_files(specs)


def qrels_paths(specs: str | Sequence[str]) -> list[str]:
    """The files ``--qrels`` reads (one ``FILE`` or ``NAME=FILE`` each).

    >>> qrels_paths(["human=qrels.txt", "llm=llm.txt"]), qrels_paths("qrels.txt")
    (['qrels.txt', 'llm.txt'], ['qrels.txt'])
    """
    specs = [specs] if isinstance(specs, str) else list(specs)
    named = qrels_sets(specs)
    return specs if named is None else list(named.values())


def read_qrels_sets(
    specs: Sequence[str], labels: Labels | None = None
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """The qrels of ``--qrels`` and the by= key that names their sets: one bare ``FILE`` as
    it is, with no key; ``NAME=FILE`` sets stacked with a ``qrels`` column
    (:func:`lexiframe.concat_qrels`), which every ranking is evaluated against; ``labels``
    as :func:`lexiframe.read_qrels` reads them.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("401 0 D1 2\\n")
    >>> qrels, by = read_qrels_sets([f"human={path}", f"llm={path}"])
    >>> qrels.columns, by
    (['qrels', 'query', 'doc', 'relevance'], ('qrels',))
    """
    from lexiframe import io

    named = qrels_sets(specs)
    if named is None:
        return io.read_qrels(specs[0], labels=labels), ()
    stacked = io.concat_qrels(
        {name: io.read_qrels(path, labels=labels) for name, path in named.items()}
    )
    return (stacked.collect() if isinstance(stacked, pl.LazyFrame) else stacked), (QRELS_KEY,)
