"""Outputs written all or nothing: checked before any work, replaced together at the end.

A command that writes several files (``lexiframe evaluate -o … --summary … --orderings …``)
plans them in an :class:`Outputs`: each path is checked when it is added (its folder exists
or is made, is writable and takes the name; the path is no folder, no input and no other
output), before the computation starts. Each table is then written to a hidden temporary
file beside its target, and only when every one is complete are they renamed over the
targets, with the signals that stop a command (SIGINT, SIGTERM, SIGHUP) held back for the
few renames. A failure before that removes every temporary file and replaces nothing; the
error names the user's paths. A target that is a symbolic link stays a link (the file it
points to is replaced), and an existing file keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lexiframe.errors import OutputError
from lexiframe.io.files import PathLike

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a command: held back while outputs are renamed."""


def temporary_beside(target: Path) -> Path:
    """A hidden, unused name in the folder of ``target``: ``.<name>.<random>.tmp``, the
    name shortened when the whole would be too long for the file system."""
    token = secrets.token_hex(8)
    name = target.name[:200]
    return target.parent / f".{name}.{token}.tmp"


def _identity(path: Path) -> tuple[int, int] | str:
    """What makes two paths the same file: device and inode if it exists, else the real path."""
    try:
        info = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (info.st_dev, info.st_ino)


def _reason(error: OSError) -> str:
    reasons = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "the file system is read-only",
        errno.ENAMETOOLONG: "the name is too long",
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.EFBIG: "the file is too large (a file size limit or the file system's)",
        errno.ENOTDIR: "a file is in the way of a folder",
        errno.EEXIST: "a file is in the way of a folder",
    }
    return reasons.get(error.errno or 0, error.strerror or str(error))


def check_output_path(path: PathLike, what: str = "output") -> Path:
    """Check now that ``path`` can be written, making its folder if missing.

    Raises :class:`~lexiframe.errors.OutputError` naming ``path`` (never a temporary
    name): a folder as the path, a file in the way of its folder, an unwritable folder, a
    name too long.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> check_output_path(folder / "new" / "metrics.csv").parent.is_dir()
        True
        >>> check_output_path(folder)
        Traceback (most recent call last):
        ...
        lexiframe.errors.OutputError: cannot write output ...: it is a folder
    """
    target = Path(path)
    if str(path) == "" or target.name in ("", ".", ".."):
        raise OutputError(f"cannot write {what} {str(path)!r}: it names no file")
    # os.path, not Path: Path.is_dir raises on a name too long for the file system (3.11).
    if os.path.isdir(target):
        raise OutputError(f"cannot write {what} {str(path)!r}: it is a folder")
    real = Path(os.path.realpath(target))  # a symbolic link: the file it points to
    if len(real.name.encode()) > _name_max(real.parent):
        raise OutputError(f"cannot write {what} {str(path)!r}: the name is too long")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(
            f"cannot write {what} {str(path)!r}: cannot make its folder "
            f"{str(target.parent)!r}: {_reason(error)}"
        ) from None
    if os.path.exists(real) and not os.path.isfile(real):
        raise OutputError(f"cannot write {what} {str(path)!r}: it is not a regular file")
    probe = temporary_beside(real)
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise OutputError(f"cannot write {what} {str(path)!r}: {_reason(error)}") from None
    os.close(descriptor)
    probe.unlink(missing_ok=True)
    return target


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _keep_mode(temporary: Path, target: Path) -> None:
    """Give the new file the permission bits of the file it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return
    os.chmod(temporary, mode)


class Outputs:
    """A set of output files written all or nothing.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> with Outputs(inputs=[]) as outputs:
        ...     a = outputs.add(folder / "a.txt", "per-query metrics")
        ...     b = outputs.add(folder / "b.txt", "summary")
        ...     outputs.write(a, lambda path: path.write_text("1\\n"))
        ...     outputs.write(b, lambda path: path.write_text("2\\n"))
        ...     _ = outputs.commit()
        >>> sorted(path.name for path in folder.iterdir())
        ['a.txt', 'b.txt']
    """

    def __init__(self, inputs: Iterable[PathLike] = ()) -> None:
        self._inputs = {_identity(Path(path)): str(path) for path in inputs}
        self._targets: dict[Path, str] = {}  # the user's path -> what it holds
        self._seen: dict[tuple[int, int] | str, str] = {}
        self._temporary: dict[Path, Path] = {}
        self.replaced: list[Path] = []

    def add(self, path: PathLike, what: str) -> Path:
        """Plan an output: check it now (see :func:`check_output_path`) and that it is
        neither an input nor another output."""
        target = check_output_path(path, what)
        identity = _identity(target)
        if identity in self._inputs:
            raise OutputError(
                f"the {what} {str(path)!r} is also an input ({self._inputs[identity]!r}): "
                "writing it would replace the input; choose another path"
            )
        if identity in self._seen:
            raise OutputError(
                f"the {what} and the {self._seen[identity]} would both be written to "
                f"{str(path)!r}; give them different paths"
            )
        self._seen[identity] = what
        self._targets[target] = what
        return target

    def write(self, target: Path, writer: Callable[[Path], object]) -> None:
        """Write one planned output to its temporary file with ``writer(temporary_path)``."""
        real = Path(os.path.realpath(target))
        temporary = temporary_beside(real)
        self._temporary[target] = temporary
        try:
            writer(temporary)
            _keep_mode(temporary, real)
        except OSError as error:
            raise OutputError(
                f"cannot write the {self._targets[target]} {str(target)!r}: {_reason(error)}; "
                f"{self._unchanged()}"
            ) from None
        except Exception as error:
            if type(error).__module__.startswith("polars") and "os error" in str(error).lower():
                raise OutputError(
                    f"cannot write the {self._targets[target]} {str(target)!r}: "
                    f"{_short(str(error))}; {self._unchanged()}"
                ) from None
            raise

    def _unchanged(self) -> str:
        names = ", ".join(repr(str(path)) for path in self._targets)
        return f"no output was replaced ({names} left as they were)"

    def commit(self) -> list[Path]:
        """Rename every temporary file over its target, the stop signals held back."""
        missing = [target for target in self._targets if target not in self._temporary]
        if missing:
            raise RuntimeError(f"outputs planned but not written: {missing}")
        with _signals_held():
            for target, temporary in self._temporary.items():
                real = Path(os.path.realpath(target))
                try:
                    os.replace(temporary, real)
                except OSError as error:
                    done = ", ".join(repr(str(path)) for path in self.replaced) or "none"
                    raise OutputError(
                        f"cannot replace the {self._targets[target]} {str(target)!r}: "
                        f"{_reason(error)}; outputs already replaced: {done}"
                    ) from None
                self.replaced.append(target)
        self._temporary.clear()
        return self.replaced

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.discard()

    def discard(self) -> None:
        """Remove every temporary file not yet renamed."""
        for temporary in self._temporary.values():
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        self._temporary.clear()


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back the stop signals (delivered when the block ends)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def atomic(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success.

    ``path`` is checked first (:func:`check_output_path`: its folder is made if missing,
    and an error names ``path``, never the temporary name). The temporary file is removed
    on any failure or interruption, so that a failed write leaves neither a partial
    ``path`` nor a stray file; a link stays a link and an existing file keeps its
    permission bits.
    """
    target = check_output_path(path)
    real = Path(os.path.realpath(target))
    temporary = temporary_beside(real)
    try:
        yield temporary
        _keep_mode(temporary, real)
        with _signals_held():
            os.replace(temporary, real)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
