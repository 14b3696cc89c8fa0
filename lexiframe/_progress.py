"""Progress bars for long operations, through tqdm when it is installed (an optional extra).

One switch, ``progress: bool | None``, on the functions that may take long:

- ``None`` (the default): a bar only in interactive use, when the stream (standard error)
  is a terminal, the environment variable ``LEXIFRAME_PROGRESS`` is not ``"0"`` and tqdm
  is installed; scripts, pipes, CI logs and tests stay silent;
- ``True``: always a bar; an ``ImportError`` says what to install when tqdm is missing;
- ``False``: never a bar.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any, Protocol

ENV_VAR = "LEXIFRAME_PROGRESS"
"""Set to ``0`` to turn the automatic bars off."""


class Bar(Protocol):
    """What a long operation may do with its bar."""

    def update(self, n: int = 1) -> Any: ...


class _Silent:
    def update(self, n: int = 1) -> None:
        del n


def _tqdm(*, required: bool) -> Any:
    try:
        from tqdm import tqdm
    except ImportError as error:
        if required:
            raise ImportError(
                "progress=True needs tqdm: pip install 'lexiframe[progress]' (or pip install "
                "tqdm); progress=None shows a bar only when tqdm is installed"
            ) from error
        return None
    return tqdm


def _stream(file: IO[str] | None) -> IO[str]:
    return sys.stderr if file is None else file


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def enabled(progress: bool | None, *, file: IO[str] | None = None) -> bool:
    """Whether an operation asked for ``progress`` shows a bar on ``file`` (stderr).

    Raises ``ImportError`` for ``progress=True`` without tqdm.

    Example:
        >>> import io
        >>> enabled(None, file=io.StringIO()), enabled(False)
        (False, False)
    """
    if progress is None:
        return (
            os.environ.get(ENV_VAR, "").strip() != "0"
            and _is_terminal(_stream(file))
            and _tqdm(required=False) is not None
        )
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, not {progress!r}")
    if progress:
        _tqdm(required=True)
    return progress


@contextlib.contextmanager
def bar(
    total: int,
    *,
    progress: bool | None,
    desc: str,
    unit: str = "file",
    file: IO[str] | None = None,
) -> Iterator[Bar]:
    """A progress bar of ``total`` steps, or a silent stand-in when :func:`enabled` says no.

    Example:
        >>> with bar(3, progress=False, desc="reading") as steps:
        ...     for _ in range(3):
        ...         steps.update()
    """
    if not enabled(progress, file=file):
        yield _Silent()
        return
    tqdm = _tqdm(required=True)
    with tqdm(total=total, desc=desc, unit=unit, file=_stream(file), leave=False) as shown:
        yield shown
