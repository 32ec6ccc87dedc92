"""Atomic file writing: nothing is ever left half-written, and nothing of ours is left lying around.

Every file agentmemory writes goes through this module (usually through an
:class:`agentmemory.files.output_plan.OutputPlan`, or :func:`atomic_write_text` /
:func:`atomic_write_bytes` for one file): the content is written to a
temporary file in the destination folder (:func:`stage`), flushed to disk,
and renamed over the destination with :func:`os.replace` (:func:`commit`),
which is atomic on POSIX and Windows.  A reader sees the old file or the new
one, never half of one.

**Temporary files** are named so that they are recognisably ours:
``.<name>.<pid>-<host>-<random>.agentmemory-tmp`` (``<pid>`` the writing
process, ``<host>`` eight hex digits of a hash of the machine's name).  On
any error the temporary file is removed.  Only a killed writer (``SIGKILL``,
a power cut) can leave one behind; the next write into that folder removes
every such file whose writer, on this machine, no longer runs
(:func:`remove_stale_temporaries`).  Nothing else is ever removed: not a file
of another name, not one of a live writer, not one written from another
machine.

**Errors** name the destination, never the temporary file:
:class:`~agentmemory.errors.OutputError` (an ``OSError`` too) with
``"<destination>: cannot write (<reason>)"``.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from os import PathLike
from pathlib import Path

from agentmemory.errors import OutputError

__all__ = [
    "TEMPORARY_SUFFIX",
    "atomic_write_bytes",
    "atomic_write_text",
    "commit",
    "make_folders",
    "remove_folders",
    "remove_stale_temporaries",
    "sha256_file",
    "stage",
    "temporary_name",
]

TEMPORARY_SUFFIX = ".agentmemory-tmp"
"""How every temporary file of ours ends (see the module docstring for the whole name)."""

_TEMPORARY = re.compile(r"\..+\.(?P<pid>[0-9]{1,10})-(?P<host>[0-9a-f]{8})-[0-9a-f]{16}" + re.escape(TEMPORARY_SUFFIX))


def _host() -> str:
    try:  # the machine's name as socket.gethostname() gives it on POSIX, without importing socket (2-5 ms)
        name = os.uname().nodename
    except AttributeError:  # Windows: no os.uname
        import socket

        name = socket.gethostname()
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def temporary_name(name: str) -> str:
    """The name of a new temporary file for the destination file ``name`` (see the module docstring)."""
    return f".{name}.{os.getpid()}-{_host()}-{os.urandom(8).hex()}{TEMPORARY_SUFFIX}"


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (``True`` when unsure)."""
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def remove_stale_temporaries(folder: str | PathLike[str]) -> list[Path]:
    """Remove the temporary files of ours in ``folder`` whose writer no longer runs; return them.

    A file is removed only when its whole name has our pattern, it is a
    regular file (not a link, not a folder), it was written on this machine,
    and its writing process is neither this one nor any that still runs.
    Errors (another process removed it first, no permission) are ignored.
    """
    removed: list[Path] = []
    host, me = _host(), os.getpid()
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMPORARY.fullmatch(name)
        if match is None or match["host"] != host:
            continue
        pid = int(match["pid"])
        if pid == me or _running(pid):
            continue
        path = Path(folder, name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def make_folders(folder: str | PathLike[str], destination: str | PathLike[str] | None = None) -> list[Path]:
    """Create ``folder`` and its missing parents; return the folders created, outermost first.

    Raises:
        OutputError: a folder cannot be created (names ``destination``, the
            file it was wanted for, when given).
    """
    folder = Path(folder)
    missing = [p for p in (folder, *folder.parents) if not p.is_dir()][::-1]
    created: list[Path] = []
    for path in missing:
        try:
            os.mkdir(path)
        except FileExistsError:
            if not path.is_dir():
                remove_folders(created)
                raise OutputError(
                    destination or folder, f"cannot create the folder {path} (a file is in the way)"
                ) from None
            continue
        except OSError as err:
            remove_folders(created)
            raise OutputError(
                destination or folder, f"cannot create the folder {path} ({err.strerror or err})", err
            ) from None
        created.append(path)
    return created


def remove_folders(created: list[Path]) -> None:
    """Remove the folders ``created`` (as :func:`make_folders` returned them) that are empty, innermost first."""
    for path in reversed(created):
        try:
            os.rmdir(path)
        except OSError:
            pass


def stage(path: str | PathLike[str], data: bytes) -> Path:
    """Write ``data`` to a new temporary file beside ``path`` (flushed to disk); return the temporary file.

    ``path``'s folder must exist.  Stale temporary files of ours in that
    folder are removed first (:func:`remove_stale_temporaries`).

    Raises:
        OutputError: the temporary file cannot be created or written (names
            ``path``); nothing is left behind.
    """
    path = Path(path)
    remove_stale_temporaries(path.parent)
    tmp = path.parent / temporary_name(path.name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as err:
        raise OutputError(path, f"cannot write ({err.strerror or err})", err) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as err:
        _discard(tmp)
        if isinstance(err, OSError):
            raise OutputError(path, f"cannot write ({err.strerror or err})", err) from None
        raise
    return tmp


def commit(tmp: str | PathLike[str], path: str | PathLike[str]) -> None:
    """Rename the staged ``tmp`` over ``path`` (atomic); on failure remove ``tmp`` and raise.

    Raises:
        OutputError: the rename failed (names ``path``); ``path`` is unchanged.
    """
    try:
        os.replace(tmp, path)
    except BaseException as err:
        _discard(tmp)
        if isinstance(err, OSError):
            raise OutputError(path, f"cannot write ({err.strerror or err})", err) from None
        raise


def _discard(tmp: str | PathLike[str]) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write_text(path: str | PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line endings as given) to ``path`` atomically.

    Creates missing parent folders.

    Raises:
        OutputError: the file cannot be written (names ``path``); ``path``
            is unchanged and no temporary file remains.
    """
    atomic_write_bytes(path, text.encode("utf-8"))  # no newline translation: "\n" stays "\n" on every platform


def atomic_write_bytes(path: str | PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    Creates missing parent folders (and removes them again if the write fails).

    Raises:
        OutputError: as :func:`atomic_write_text`.
    """
    path = Path(path)
    created = make_folders(path.parent, path)
    try:
        commit(stage(path, bytes(data)), path)
    except BaseException:
        remove_folders(created)
        raise


def sha256_file(path: str | PathLike[str]) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
