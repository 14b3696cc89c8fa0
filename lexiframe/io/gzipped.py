"""Gzipped files: recognised by their content, decompressed with ISA-L."""

from __future__ import annotations

import gzip
from pathlib import Path

from isal import igzip

from lexiframe.errors import InputError
from lexiframe.io.files import shown

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as raw:
        return raw.read(2) == _GZIP_MAGIC


def decompress(path: Path) -> bytes:
    try:
        data: bytes = igzip.decompress(path.read_bytes())  # type: ignore[no-untyped-call]
        return data
    except (OSError, EOFError, ValueError) as error:
        raise InputError(f"cannot decompress {shown(path)}: {error}", kind="not text") from None


def head(path: Path, size: int) -> bytes | None:
    """The first ``size`` bytes of a (possibly gzipped) file; None for other compressions."""
    with open(path, "rb") as raw:
        start = raw.read(size)
    if start[:2] == _GZIP_MAGIC:
        try:
            with gzip.open(path, "rb") as unzipped:
                return unzipped.read(size)
        except (OSError, EOFError) as error:
            raise InputError(f"cannot decompress {shown(path)}: {error}", kind="not text") from None
    if start[:4] == b"\x28\xb5\x2f\xfd":  # zstd: leave it to Polars
        return None
    return start
