"""Finding the files of a run or qrels: a path, several paths, or directories."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from lexiframe.errors import InputError

PathLike = str | os.PathLike[str]
Paths = PathLike | Sequence[PathLike]
"""One path, several paths, or a directory (every file in it, sorted by name)."""


def is_paths(value: object) -> bool:
    """Whether ``value`` names files (a path or a non-empty list or tuple of paths)."""
    if isinstance(value, str | os.PathLike):
        return True
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(item, str | os.PathLike) for item in value)
    )


def find_files(paths: Paths, table: str) -> list[Path]:
    """Expand ``paths`` (a path, paths, or directories) into a list of files."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise InputError(f"no {table} files given")
    files: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            inside = sorted(
                child
                for child in path.iterdir()
                if child.is_file() and not child.name.startswith(".")
            )
            if not inside:
                raise InputError(f"no {table} files found in directory {str(path)!r}")
            files.extend(inside)
        elif path.is_file():
            files.append(path)
        elif str(item) == "-" or path.exists():  # standard input, a FIFO, /dev/stdin
            files.append(_spooled(str(item), table))
        else:
            raise InputError(f"{table} file not found: {str(path)!r}")
    return files


_SPOOLED: dict[str, Path] = {}
_NAMES: dict[Path, str] = {}  # a stream's temporary copy -> what the user named


def shown(path: PathLike) -> str:
    """``path`` quoted as the user named it, for a message: a stream's temporary copy
    (:func:`find_files`) by the stream's name, standard input as ``'-' (standard input)``.

    Example:
        >>> shown("runs/bm25.txt")
        "'runs/bm25.txt'"
    """
    return _NAMES.get(Path(path), repr(str(path)))


def _spooled(item: str, table: str) -> Path:
    """A stream (``-`` for standard input, a FIFO, ``/dev/stdin``) copied to a temporary
    file, once: the readers look at a file's start and read it in parallel, which a stream
    cannot do. The copy is removed when the process exits."""
    if item in _SPOOLED:
        return _SPOOLED[item]
    import shutil
    import sys
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lexiframe-stream-"))
    _remove_at_exit(folder)
    name = "stdin" if item == "-" else Path(item).name or "stream"
    target = folder / name
    try:
        with open(target, "wb") as copy:
            if item == "-":
                shutil.copyfileobj(sys.stdin.buffer, copy, 1 << 20)
            else:
                with open(item, "rb") as stream:
                    shutil.copyfileobj(stream, copy, 1 << 20)
    except OSError as error:
        raise InputError(
            f"cannot read {table} {item!r}: {reason_of(error)}", kind="unreadable"
        ) from None
    _SPOOLED[item] = target
    _NAMES[target] = "'-' (standard input)" if item == "-" else repr(item)
    return target


def _remove_at_exit(folder: Path) -> None:
    import atexit
    import shutil

    atexit.register(shutil.rmtree, folder, ignore_errors=True)


def check_system_names(files: Sequence[Path]) -> None:
    """With systems named by file, two files of one name would merge into one system."""
    seen: dict[str, Path] = {}
    for path in files:
        name = system_name(path)
        if name in seen:
            raise InputError(
                f"run files {shown(seen[name])} and {shown(path)} would both be system "
                f"{name!r} (system_from='filename', --system-from filename, names a system by "
                "its file's name); rename one of them"
            )
        seen[name] = path


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def system_name(path: Path) -> str:
    """The system id of ``system_from="filename"``: the base name without .gz/.parquet."""
    name = path.name
    for suffix in (".gz", ".parquet"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def quote_files(files: Sequence[Path], limit: int = 3) -> str:
    names = ", ".join(shown(path) for path in files[:limit])
    return names + (f" and {len(files) - limit} more" if len(files) > limit else "")


def reason_of(error: OSError) -> str:
    """Why a file could not be read or written, in words (no ``[Errno 13]``).

    Example:
        >>> import errno
        >>> reason_of(PermissionError(errno.EACCES, "Permission denied"))
        'permission denied'
    """
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
        errno.ENOENT: "no such file",
        errno.EISDIR: "it is a folder",
        errno.EIO: "an input/output error of the device",
    }
    return reasons.get(error.errno or 0, (error.strerror or str(error)).lower())
