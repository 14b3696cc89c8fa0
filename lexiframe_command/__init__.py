"""The ``lexiframe`` command's entry point, outside the lexiframe package.

Importing lexiframe takes about half a second (Polars, NumPy). A stop signal in that time
must end the command as it does later, with one line and the exit status 128 + the
signal, not with a traceback (Ctrl-C) or without a word (SIGTERM, SIGHUP). So the entry
point installs the stop handlers first, with nothing imported but the standard library,
and then imports the command. A signal the command was started ignoring (``nohup``, a
background job) stays ignored.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

STOP_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")
"""The signals that stop a command."""


class Stopped(KeyboardInterrupt):
    """A stop signal turned into an exception, so that every temporary output file is
    removed on the way out; ``signum`` is the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stopped_line(stop: KeyboardInterrupt) -> tuple[str, int]:
    """The line the command prints when ``stop`` ends it, and its exit status (128 + the
    signal, as shells report it; Ctrl-C is SIGINT).

    Example:
        >>> stopped_line(KeyboardInterrupt())
        ('lexiframe: interrupted', 130)
        >>> stopped_line(Stopped(signal.SIGTERM))
        ('lexiframe: stopped by SIGTERM', 143)
    """
    signum = getattr(stop, "signum", signal.SIGINT)
    if signum == signal.SIGINT:
        return "lexiframe: interrupted", 128 + signum
    return f"lexiframe: stopped by {signal.Signals(signum).name}", 128 + signum


def stop(signum: int, frame: object) -> None:
    """The stop handler: raise :class:`Stopped` (``KeyboardInterrupt`` for SIGINT)."""
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


def install(handler: object = stop) -> dict[int, object]:
    """Install ``handler`` for every stop signal not ignored; return the handlers replaced."""
    previous: dict[int, object] = {}
    for name in STOP_NAMES:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, handler)  # type: ignore[arg-type]
    return previous


def run() -> NoReturn:
    """The ``lexiframe`` command: stop handlers first, then the command itself."""
    install()
    try:
        from lexiframe.cli import run as command

        command()  # ends the process; it handles the stop signals from here on
    except KeyboardInterrupt as interrupted:  # a stop before the command took over
        line, status = stopped_line(interrupted)
        print(line, file=sys.stderr)
        os._exit(status)
    raise AssertionError("unreachable: the command ends the process")
