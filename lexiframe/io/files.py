"""Finding the files of a run or qrels: a path, several paths, or directories."""

from __future__ import annotations

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
        else:
            raise InputError(f"{table} file not found: {str(path)!r}")
    return files


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
    shown = ", ".join(repr(str(path)) for path in files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")
