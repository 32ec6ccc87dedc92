"""Atomic file writing: nothing is ever left half-written.

Every artifact agentmemory writes goes through :func:`atomic_write_text` (or
:func:`atomic_write_bytes`, for the embedding cache): the content is written to
a temporary file in the destination folder, flushed, and renamed over the
destination with :func:`os.replace`, which is atomic on POSIX and Windows.  On
any error the temporary file is removed and the destination is untouched, so
a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from os import PathLike
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "sha256_file"]


def atomic_write_text(path: str | PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line endings) to ``path`` atomically.

    Creates missing parent folders.
    """
    _atomic_write(path, text.encode("utf-8"))  # no newline translation: "\n" stays "\n" on every platform


def atomic_write_bytes(path: str | PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    Creates missing parent folders.
    """
    _atomic_write(path, bytes(data))


def _atomic_write(path: str | PathLike[str], data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the mode open() would
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256_file(path: str | PathLike[str]) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
