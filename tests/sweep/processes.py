"""The ``lexiframe`` command as a process, for the checks that need one: signals, limits,
a full standard output."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_cli(
    arguments: list[str],
    *,
    fsize: int | None = None,
    before: Callable[[], object] | None = None,
    **options: Any,
) -> subprocess.Popen:
    """``python -m lexiframe arguments`` on this checkout; ``fsize`` limits the size of the
    files it writes, ``before`` runs in the child before the command (e.g. to ignore a
    signal, as nohup does)."""

    def prepare() -> None:
        if before is not None:
            before()
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXIFRAME_PROGRESS": "0"}
    options.setdefault("stdout", subprocess.PIPE)
    return subprocess.Popen(
        [sys.executable, "-m", "lexiframe", *arguments],
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=prepare,
        **options,
    )


def reading_stdin(arguments: list[str], **options: Any) -> subprocess.Popen:
    """The command started on a run it reads from standard input (``-``), returned once
    it is reading it, so that its stop handlers are installed: more is written than a pipe
    holds, so the write returns only when the command has read from it. No test waits on
    time."""
    process = run_cli([*arguments, "-"], stdin=subprocess.PIPE, **options)
    lines = (
        f"{query} Q0 D{query}-{doc:06d} {doc} {-doc} run\n"
        for query in range(401, 601)
        for doc in range(1, 1001)
    )
    assert process.stdin is not None
    process.stdin.write("".join(lines).encode())  # 6 MB
    process.stdin.flush()
    return process
