"""Outputs written all or nothing: checked before any work, replaced together at the end.

A command that writes several files (``lexiframe evaluate -o … --summary … --orderings …``)
plans them in an :class:`Outputs`: each path is checked when it is added (its folder exists
or can be made, is writable and takes the name; the path is no folder, no input, no file
inside a folder read as input, and no other output), before the computation starts. Each
table is then written to a hidden temporary file beside its target (its folder made then),
and only when every one is complete are they renamed over the targets, with the signals
that stop a command (SIGINT, SIGTERM, SIGHUP) held back for the few renames. A failure
before that removes every temporary file and the folders made, and replaces nothing; the
error names the user's paths. A target that is a symbolic link stays a link (the file it
points to is replaced), and an existing file keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lexiframe.errors import OutputError
from lexiframe.io.files import PathLike, reason_of

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


def check_output_path(path: PathLike, what: str = "output") -> Path:
    """Check now that ``path`` can be written. A missing folder is not made yet (the
    writer makes it, so that a command that fails leaves none behind): the nearest folder
    that exists must let it be made.

    Raises :class:`~lexiframe.errors.OutputError` naming ``path`` (never a temporary
    name): a folder as the path, a file in the way of its folder, an unwritable folder, a
    name too long.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> check_output_path(folder / "new" / "metrics.csv").parent.exists()
        False
        >>> check_output_path(folder)
        Traceback (most recent call last):
        ...
        lexiframe.errors.OutputError: cannot write output ...: it is a folder
    """
    target = Path(path)
    if str(path) == "" or target.name in ("", ".", ".."):
        raise OutputError(f"cannot write {what} {str(path)!r}: it names no file", kind="name")
    # os.path, not Path: Path.is_dir raises on a name too long for the file system (3.11).
    if os.path.isdir(target):
        raise OutputError(f"cannot write {what} {str(path)!r}: it is a folder", kind="folder")
    real = Path(os.path.realpath(target))  # a symbolic link: the file it points to
    existing = real.parent
    while not os.path.exists(existing) and existing != existing.parent:
        existing = existing.parent
    if len(real.name.encode()) > _name_max(existing):
        raise OutputError(f"cannot write {what} {str(path)!r}: the name is too long", kind="name")
    if existing != real.parent:  # folders to make: can they be?
        reason = (
            "a file is in the way of a folder"
            if not os.path.isdir(existing)
            else "permission denied"
            if not os.access(existing, os.W_OK | os.X_OK)
            else ""
        )
        if reason:
            raise OutputError(
                f"cannot write {what} {str(path)!r}: cannot make its folder "
                f"{str(target.parent)!r}: {reason}",
                kind="folder",
            )
        return target
    if os.path.exists(real) and not os.path.isfile(real):
        raise OutputError(
            f"cannot write {what} {str(path)!r}: it is not a regular file", kind="not a file"
        )
    probe = temporary_beside(real)
    with _signals_held():  # a stop signal between the two would leave the probe behind
        try:
            descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as error:
            raise OutputError(
                f"cannot write {what} {str(path)!r}: {reason_of(error)}", kind="permission"
            ) from None
        os.close(descriptor)
        probe.unlink(missing_ok=True)
    return target


def make_folder(target: Path, made: list[Path], what: str = "output") -> None:
    """Make the folder of ``target`` if missing, appending each folder made to ``made``
    (outermost first), so that a failure can remove them again."""
    try:
        _make_folder(Path(os.path.realpath(target)).parent, made)
    except OSError as error:
        raise OutputError(
            f"cannot write {what} {str(target)!r}: cannot make its folder "
            f"{str(target.parent)!r}: {reason_of(error)}",
            kind="folder",
        ) from None


def _make_folder(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, appending each one made to ``made``."""
    missing = []
    while not os.path.isdir(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for inner in reversed(missing):
        try:
            os.mkdir(inner)
        except FileExistsError:
            if not os.path.isdir(inner):
                raise
            continue
        made.append(inner)


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders of ``made`` that are still empty, innermost first."""
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    made.clear()


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
        inputs = list(inputs)
        self._inputs = {_identity(Path(path)): str(path) for path in inputs}
        # A folder of inputs is read whole: a file written into it becomes an input.
        self._folders = {
            os.path.realpath(path): str(path) for path in inputs if os.path.isdir(path)
        }
        self._made: list[Path] = []  # the folders made for the outputs, removed on failure
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
        folder = os.path.realpath(target.parent)
        if folder in self._folders and not target.name.startswith("."):
            raise OutputError(
                f"the {what} {str(path)!r} is inside the input folder "
                f"{self._folders[folder]!r}: the next command over that folder would read it "
                "as an input; write it to another folder",
                kind="inside input",
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
        make_folder(target, self._made, self._targets[target])
        temporary = temporary_beside(real)
        self._temporary[target] = temporary
        try:
            writer(temporary)
            _keep_mode(temporary, real)
        except OSError as error:
            raise OutputError(
                f"cannot write the {self._targets[target]} {str(target)!r}: {reason_of(error)}; "
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
                        f"{reason_of(error)}; outputs already replaced: {done}"
                    ) from None
                self.replaced.append(target)
        self._temporary.clear()
        return self.replaced

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.discard()

    def discard(self) -> None:
        """Remove every temporary file not yet renamed and, when none was renamed, the
        folders made for the outputs. A stop signal that lands here (Polars can raise
        KeyboardInterrupt twice for one Ctrl-C) is held back until the files are gone."""
        interrupted: BaseException | None = None
        while True:
            try:
                with _signals_held():
                    for target in list(self._temporary):
                        with contextlib.suppress(OSError):
                            self._temporary[target].unlink(missing_ok=True)
                        del self._temporary[target]
                    if not self.replaced:
                        _remove_folders(self._made)
                break
            except KeyboardInterrupt as error:  # already on the way out: finish, then raise
                interrupted = error
        if interrupted is not None:
            raise interrupted


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Held:
    """The stop signals held back: how deep the holds nest, and those that arrived."""

    depth = 0
    pending: list[int] = []  # noqa: RUF012  (one process-wide record)


def defer_if_held(signum: int) -> bool:
    """For a stop signal's handler: whether the signal arrived while stop signals are held
    (it is then kept and delivered again when the hold ends). Blocking a signal in the main
    thread does not hold it back once other threads run (Polars' do): the signal goes to
    one of them, and Python runs its handler in the main thread all the same."""
    if _Held.depth:
        _Held.pending.append(signum)
        return True
    return False


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back the stop signals (delivered when the block ends)."""
    _Held.depth += 1
    blocking = hasattr(signal, "pthread_sigmask")
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if blocking else None
    try:
        yield
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        _Held.depth -= 1
        if not _Held.depth and _Held.pending:
            signum = _Held.pending[0]
            _Held.pending.clear()
            signal.raise_signal(signum)


@contextlib.contextmanager
def atomic(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success.

    ``path`` is checked first (:func:`check_output_path`; its folder is made if missing,
    and an error names ``path``, never the temporary name). The temporary file is removed
    on any failure or interruption, so that a failed write leaves neither a partial
    ``path`` nor a stray file; a link stays a link and an existing file keeps its
    permission bits.
    """
    made: list[Path] = []
    target = check_output_path(path)
    make_folder(target, made)
    real = Path(os.path.realpath(target))
    temporary = temporary_beside(real)
    done = False
    try:
        yield temporary
        _keep_mode(temporary, real)
        with _signals_held():
            os.replace(temporary, real)
            done = True
    finally:
        with _signals_held(), contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        if not done:
            _remove_folders(made)
