"""The persistent store's file: SQLite, crash-safe, one writer and any number of readers.

:class:`SQLiteBackend` is what ``MemoryStore.open(path)`` records into (the
store keeps its retriever indexes in memory and rebuilds them from the
entries on open).  Only the standard library's :mod:`sqlite3` is used.

**Durability.**  The file is in WAL mode with ``synchronous=FULL``, and
every change (``add``, ``derive``, ``update``, ``forget``) and every
recorded ``search`` is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``),
committed before the call returns: an operation that returned survives a
``kill -9`` or a power cut, and one interrupted leaves nothing behind (a
batch ``add`` is all or nothing).  A write SQLite refuses (a full disk, a
read-only file) is rolled back and raised as
:class:`~agentmemory.store.backend.StoreError`; the store stays usable.

**One writer, many readers.**  A writer holds an exclusive lock on the file
``<store>-lock`` beside the store (``flock``; the operating system releases
it when the process ends, however it ends) for as long as it is open; a
second writer waits up to ``timeout`` seconds and then gets
:class:`~agentmemory.store.backend.StoreLockedError` ("store is locked by another
writer").  Read-only handles (``readonly=True``) take no lock, open the file
with ``mode=ro`` and record nothing; WAL lets them read while the writer
writes, each read seeing a committed state.

**Schema** (version :data:`SCHEMA_VERSION`; the file's
``PRAGMA application_id`` is :data:`APPLICATION_ID`)::

    schema_version(version)                        one row
    store_info(key, value)                         created_at, created_by
    events(seq, event_id, type, timestamp, at_us, entry_ids, query_id, retriever)
                                                   the append-only log; seq = position + 1;
                                                   at_us the time in microseconds since 1970 UTC
    entries(seq, id, version, forgotten)           one row per entry id, in the order added;
                                                   version = its newest version
    versions(entry_id, version, change, event, supersedes, reason,
             text, tags, created_at, source, ref, actor, derived_from, scope, metadata)
                                                   every version of every entry (history)
    retrievals(event, query_text, query_tags, scope, query_group, asked_at, k, label)
    hits(event, rank, entry_id, version, score)    each recorded search's ranked hits
    queries(seq, id, text, tags, scope, query_group, metadata)
    judgments(seq, split, query_id, entry_id, grade)
                                                   an imported collection's queries and qrels

Lists and metadata are JSON text; timestamps ISO 8601 text as recorded.

**Versions.**  A store written by a newer schema is refused
(:class:`~agentmemory.store.backend.StoreVersionError`).  An older one is
migrated when opened for writing, by the explicit functions in
:data:`MIGRATIONS` (``MIGRATIONS[n]`` turns version ``n`` into ``n + 1``),
each in one transaction; a read-only handle refuses it until then.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, Concatenate, ParamSpec, TypeVar

from agentmemory._version import __version__
from agentmemory.errors import (
    AgentMemoryError,
    MissingFileError,
    ParameterError,
    StoreError,
    StoreLockedError,
    StoreVersionError,
    shorten,
)
from agentmemory.records import NO_METADATA, Event, Hit, MemoryEntry, Provenance, Query
from agentmemory.store.backend import EntryVersion, Retrieval, check_metadata, unencodable
from agentmemory.store.events import Clock, EventLog, IdSource

__all__ = [
    "APPLICATION_ID",
    "DEFAULT_TIMEOUT",
    "LOCK_SUFFIX",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SQLiteBackend",
    "StoredEventLog",
]

SCHEMA_VERSION = 1
"""The schema this agentmemory writes (see the module docstring)."""

APPLICATION_ID = 0x414D454D
"""``PRAGMA application_id`` of every store file ("AMEM"): how a store is told from other SQLite files."""

DEFAULT_TIMEOUT = 5.0
"""Seconds a writer waits for another writer to close the store (and SQLite for a busy file)."""

LOCK_SUFFIX = "-lock"
"""The writer's lock file is the store's path plus this (beside SQLite's ``-wal`` and ``-shm``)."""

_HEADER = b"SQLite format 3\x00"

_SCHEMA = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        at_us INTEGER NOT NULL,
        entry_ids TEXT NOT NULL,
        query_id TEXT,
        retriever TEXT
    )""",
    "CREATE INDEX events_at ON events (at_us)",
    """CREATE TABLE entries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL,
        forgotten INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE versions (
        entry_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        change TEXT NOT NULL CHECK (change IN ('add', 'derive', 'update', 'forget')),
        event INTEGER NOT NULL REFERENCES events (seq),
        supersedes INTEGER,
        reason TEXT,
        text TEXT NOT NULL,
        tags TEXT NOT NULL,
        created_at TEXT,
        source TEXT NOT NULL,
        ref TEXT,
        actor TEXT,
        derived_from TEXT NOT NULL,
        scope TEXT,
        metadata TEXT,
        PRIMARY KEY (entry_id, version)
    ) WITHOUT ROWID""",
    "CREATE INDEX versions_event ON versions (event)",
    """CREATE TABLE retrievals (
        event INTEGER PRIMARY KEY REFERENCES events (seq),
        query_text TEXT NOT NULL,
        query_tags TEXT,
        scope TEXT,
        query_group TEXT,
        asked_at TEXT,
        k INTEGER NOT NULL,
        label TEXT NOT NULL
    )""",
    """CREATE TABLE hits (
        event INTEGER NOT NULL REFERENCES retrievals (event),
        rank INTEGER NOT NULL,
        entry_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (event, rank)
    ) WITHOUT ROWID""",
    """CREATE TABLE queries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        text TEXT NOT NULL,
        tags TEXT,
        scope TEXT,
        query_group TEXT,
        metadata TEXT
    )""",
    """CREATE TABLE judgments (
        seq INTEGER PRIMARY KEY,
        split TEXT NOT NULL,
        query_id TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        grade INTEGER NOT NULL,
        UNIQUE (split, query_id, entry_id)
    )""",
)

MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}
"""``MIGRATIONS[n](connection)`` turns a schema-``n`` store into schema ``n + 1`` (inside a transaction that
the opener commits, with the new version number, or rolls back).  Empty while there is one version: the
first migration goes here, with a test on a schema-1 file committed under ``tests/data/``."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True)
_NO_TAGS = "[]"


def _json(value: Any) -> str:
    return _JSON.encode(value)


def _micros(moment: datetime) -> int:
    """``moment`` as integer microseconds since 1970-01-01 UTC (a naive time is taken as UTC)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    return (aware - _EPOCH) // _MICROSECOND


_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=timezone.utc) - _EPOCH


_make_entry: Callable[..., MemoryEntry] = getattr(MemoryEntry, "_trusted", MemoryEntry)
"""How entries read back from the file are built: without re-checking their fields where records offer
that (they were checked when added), else by the ordinary constructor."""


# -- checks on what is about to be written ---------------------------------------------------------


_UNICODE_ADVICE = (
    "a persistent store keeps text as UTF-8: replace the lone surrogate (e.g. text.encode('utf-8', 'replace').decode())"
)


def _check_text(name: str, value: object) -> None:
    if isinstance(value, str) and unencodable(value):
        raise ParameterError(name, value, "is not valid Unicode (it holds a lone surrogate)", _UNICODE_ADVICE)


# -- opening ----------------------------------------------------------------------------------------


def _as_path(path: object) -> Path:
    if isinstance(path, (str, PathLike)) and str(path):
        return Path(path)
    raise ParameterError("path", path, "is not a file path", "pass the path of a store file, e.g. 'agent-memory.db'")


def _check_file(path: Path) -> None:
    """Refuse a folder, and a file that does not start like a SQLite database, before SQLite sees it."""
    if path.is_dir():
        raise StoreError(path, "is a folder", "pass the path of a store file (a new path creates one)")
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_HEADER))
    except FileNotFoundError:
        return
    except OSError as err:
        raise StoreError(
            path, f"cannot be read ({err.strerror or err})", "check the path and its permissions"
        ) from None
    if head and head != _HEADER:
        raise StoreError(
            path,
            "is not a SQLite file (it does not start with 'SQLite format 3')",
            "pass the path of an agentmemory store, or a new path to create one",
        )
    if head:
        _check_foreign(path)


_NOT_A_STORE_ADVICE = "pass the path of a store made by MemoryStore.open or agentmemory store import, or a new path"


def _not_a_store(path: Path, tables: list[str]) -> StoreError:
    shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
    return StoreError(
        path, f"is a SQLite database but not an agentmemory store (tables: {shown or 'none'})", _NOT_A_STORE_ADVICE
    )


def _check_foreign(path: Path) -> None:
    """Refuse another program's SQLite database before anything is created beside it (no lock, ``-wal``, ``-shm``).

    The header's ``application_id`` (bytes 68-71) is read from the file; when it is not ours, the file's
    tables are listed through an ``immutable`` read-only connection, which creates no file and takes no lock.
    A database with tables is refused here; one that shows none (empty, or a store whose creator has not
    checkpointed yet) is left to the checks made once the store is open (:func:`_prepare`).
    """
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return  # the open that follows reports it
    if len(header) < 72 or int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro&immutable=1", uri=True, isolation_level=None)
        try:
            tables = _tables(conn)
        finally:
            conn.close()
    except sqlite3.Error as err:
        problem, advice = _sqlite_problem(err)
        raise StoreError(path, problem, advice) from None
    if tables:
        raise _not_a_store(path, tables)


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock on the open file ``fd`` without waiting; False when another process holds it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """`` (process N)`` from the lock file, when the writer wrote its process id there."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip() if hasattr(os, "pread") else ""
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (a lock file removed or replaced meanwhile does not)."""
    try:
        mine, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def _lock(path: Path, timeout: float) -> tuple[int, bool]:
    """The open, locked ``<path>-lock`` file's descriptor, and whether this call created the file.

    Waits up to ``timeout`` seconds for another writer.  A lock taken on a file that is no longer at
    ``<path>-lock`` (a writer that created it removed it when its open failed, see
    :func:`_unlock_created`) does not count: the lock file is opened again.
    """
    deadline = time.monotonic() + timeout
    while True:
        fd, created = _lock_once(path, deadline, timeout)
        if _same_file(fd, path.with_name(path.name + LOCK_SUFFIX)):
            return fd, created
        os.close(fd)


def _unlock_created(fd: int, path: Path) -> None:
    """Remove the lock file this process created for a store it then failed to open, and release it.

    Removed while still locked, so that a writer waiting for it finds (by :func:`_same_file`) that it is gone
    and opens a new one, rather than two writers holding two different files.
    """
    lock_path = path.with_name(path.name + LOCK_SUFFIX)
    try:
        if _same_file(fd, lock_path):
            lock_path.unlink()
    except OSError:  # a lock file left behind is harmless
        pass
    finally:
        os.close(fd)


def _lock_once(path: Path, deadline: float, timeout: float) -> tuple[int, bool]:
    lock_path = path.with_name(path.name + LOCK_SUFFIX)
    if not path.parent.is_dir():
        raise StoreError(
            path,
            f"cannot be created: its folder {path.parent} does not exist",
            "create the folder first, or pass a path in an existing folder",
        )
    created = False
    try:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            created = True
        except FileExistsError:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:
        raise StoreError(
            path,
            f"cannot be opened for writing: its lock file {lock_path.name} cannot be created ({err.strerror or err})",
            "open it read-only (readonly=True), or keep the store in a folder you can write to",
        ) from None
    while not _try_lock(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            holder = _holder(fd)
            os.close(fd)  # never removed here: the file is another writer's lock now
            raise StoreLockedError(
                path,
                f"store is locked by another writer{holder}; waited {timeout:g} s",
                "close the other writer first, or open the store read-only (readonly=True) to search while it writes",
            )
        time.sleep(min(0.05, left))
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    except OSError:  # the pid is only a courtesy for the message above
        pass
    return fd, created


DAMAGED_ADVICE = (
    "run PRAGMA integrity_check on it (sqlite3 FILE 'PRAGMA integrity_check') to see what is wrong, "
    "and restore the store from a backup"
)
"""What a message about a damaged store file tells the user to do."""


def _sqlite_problem(err: sqlite3.Error) -> tuple[str, str]:
    """(problem, advice) for a SQLite error, in a message's words."""
    name = getattr(err, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_FULL"):
        return (
            "the disk is full (SQLite: database or disk is full)",
            "nothing of this change was written; free some space and retry",
        )
    if name.startswith("SQLITE_READONLY"):
        return (
            f"cannot be written ({err})",
            "open it read-only (readonly=True), or make the file and its folder writable",
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return f"is busy ({err})", "retry, or raise the timeout"
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return f"is damaged (SQLite: {err})", DAMAGED_ADVICE
    if name.startswith("SQLITE_CANTOPEN"):
        return f"cannot be opened ({err})", "check that the folder exists and that you may read (and write) there"
    if name.startswith("SQLITE_IOERR"):
        return f"could not be read or written ({err})", "check the disk; nothing of this change was written"
    return f"SQLite refused it ({err})", "nothing of this change was written"


def _connect(path: Path, readonly: bool, timeout: float) -> sqlite3.Connection:
    if readonly:
        uri = path.resolve().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _tables(conn: sqlite3.Connection) -> list[str]:
    return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


def _create(conn: sqlite3.Connection) -> None:
    """Make an empty SQLite file a store: WAL mode, then the schema, in one transaction."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise sqlite3.OperationalError(f"the file system does not allow WAL mode (journal_mode stays {mode})")
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        now = datetime.now(timezone.utc).isoformat()
        conn.executemany(
            "INSERT INTO store_info (key, value) VALUES (?, ?)",
            [("created_at", now), ("created_by", f"agentmemory {__version__}")],
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _migrate(conn: sqlite3.Connection, path: Path, version: int) -> int:
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise StoreVersionError(
                path,
                f"has schema version {version}, and this agentmemory has no migration from it to {version + 1}",
                "open it with the agentmemory that wrote it, export it (agentmemory store export) and import that",
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            step(conn)
            conn.execute("UPDATE schema_version SET version = ?", (version + 1,))
            conn.execute("COMMIT")
        except BaseException as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(err, Exception):
                raise StoreVersionError(
                    path,
                    f"could not be migrated from schema version {version} to {version + 1} "
                    f"({type(err).__name__}: {err})",
                    "the store is unchanged; report this with the agentmemory version",
                ) from err
            raise
        version += 1
    return version


def _prepare(conn: sqlite3.Connection, path: Path, readonly: bool) -> int:
    """Check that ``conn`` holds a store of a version we read (creating or migrating it when writing); its version."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = _tables(conn)
    if app != APPLICATION_ID:
        if app == 0 and not tables:
            if readonly:
                raise StoreError(
                    path, "is an empty SQLite file, not a store yet", "open it once for writing to make it one"
                )
            _create(conn)
            return SCHEMA_VERSION
        raise _not_a_store(path, tables)
    if "schema_version" not in tables:
        raise StoreError(path, "is marked as a store but has no schema_version table", "restore it from a copy")
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    version = row[0] if row else None
    if not isinstance(version, int):
        raise StoreError(path, f"has no valid schema version ({version!r})", "restore it from a copy")
    if version > SCHEMA_VERSION:
        raise StoreVersionError(
            path,
            f"was written by a newer agentmemory (schema version {version}; this one reads up to {SCHEMA_VERSION})",
            "upgrade agentmemory (pip install -U agentmemory-eval)",
        )
    if version < SCHEMA_VERSION:
        if readonly:
            raise StoreVersionError(
                path,
                f"has schema version {version}, older than this agentmemory's {SCHEMA_VERSION}",
                "open it once for writing to migrate it",
            )
        version = _migrate(conn, path, version)
    if not readonly and str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    return version


# -- reading rows back ------------------------------------------------------------------------------

_VERSION_COLUMNS = "v.text, v.tags, v.created_at, v.source, v.ref, v.actor, v.derived_from, v.scope, v.metadata"


def _entry(entry_id: str, row: Sequence[Any]) -> MemoryEntry:
    """A :class:`MemoryEntry` from ``_VERSION_COLUMNS`` of a versions row."""
    text, tags, created, source, ref, actor, derived, scope, metadata = row
    return _make_entry(
        id=entry_id,
        text=text,
        tags=() if tags == _NO_TAGS else tuple(json.loads(tags)),
        created_at=None if created is None else datetime.fromisoformat(created),
        provenance=Provenance(
            source=source, ref=ref, actor=actor, derived_from=() if derived == _NO_TAGS else tuple(json.loads(derived))
        ),
        scope=scope,
        metadata=NO_METADATA if metadata is None else MappingProxyType(json.loads(metadata)),
    )


def _event(row: Sequence[Any]) -> Event:
    event_id, kind, stamp, entry_ids, query_id, retriever, query_text = row
    return Event(
        event_id=event_id,
        type=kind,
        timestamp=datetime.fromisoformat(stamp),
        entry_ids=tuple(json.loads(entry_ids)),
        query_id=query_id,
        retriever=retriever,
        query_text=query_text,
    )


# A retrieve event's query text is kept once, with the search it records (the retrievals table).
_EVENT_COLUMNS = "e.event_id, e.type, e.timestamp, e.entry_ids, e.query_id, e.retriever, r.query_text"
_EVENTS = "events e LEFT JOIN retrievals r ON r.event = e.seq"


_P = ParamSpec("_P")
_R = TypeVar("_R")

_UNDECODABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError)
"""What decoding a row the file holds raises when the row is not what this module wrote (damaged bytes)."""


def _reads(what: str) -> Callable[[Callable[Concatenate[Any, _P], _R]], Callable[Concatenate[Any, _P], _R]]:
    """A :class:`SQLiteBackend` (or event log) method that reads ``what`` (``"its entries"``): any SQLite error,
    and any row that does not decode, becomes one :class:`StoreError` naming the file and ``what``."""

    def wrap(method: Callable[Concatenate[Any, _P], _R]) -> Callable[Concatenate[Any, _P], _R]:
        @functools.wraps(method)
        def guarded(self: Any, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            backend: SQLiteBackend = getattr(self, "_backend", self)
            with backend.reading(what):
                return method(self, *args, **kwargs)

        return guarded

    return wrap


class StoredEventLog(EventLog):
    """The event log of a persistent store: read from the file, appended to inside the store's transactions.

    Behaves as :class:`~agentmemory.store.events.EventLog` (``len``, indexing,
    iteration oldest first, ``to_dicts``, ``record``, ``now``); a read-only
    handle reads the writer's log and refuses ``record``.
    """

    def __init__(self, backend: SQLiteBackend, clock: Clock | None, ids: IdSource | None) -> None:
        super().__init__(clock, ids)
        self._backend = backend

    def record(
        self,
        type: str,
        entry_ids: Sequence[str] = (),
        *,
        query_id: str | None = None,
        retriever: str | None = None,
        timestamp: datetime | None = None,
        query_text: str | None = None,
    ) -> Event:
        self._backend.check_writable()
        event = Event(
            event_id=self._ids(),
            type=type,
            timestamp=self._clock() if timestamp is None else timestamp,
            entry_ids=tuple(entry_ids),
            query_id=query_id,
            retriever=retriever,
            query_text=query_text,
        )
        self._backend.insert_event(event)
        return event

    def __len__(self) -> int:
        return self._backend.event_count()

    @_reads("its event log")
    def __iter__(self) -> Iterator[Event]:
        rows = self._backend.read(f"SELECT {_EVENT_COLUMNS} FROM {_EVENTS} ORDER BY e.seq")
        return iter(tuple(_event(r) for r in rows))

    def __getitem__(self, index: int) -> Event:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"event log indices must be integers, not {type(index).__name__}")
        count = len(self)
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            raise IndexError("event log index out of range")
        with self._backend.reading("its event log"):
            rows = self._backend.read(f"SELECT {_EVENT_COLUMNS} FROM {_EVENTS} WHERE e.seq = ?", (position + 1,))
            return _event(rows[0])

    def to_dicts(self) -> list[dict]:
        return [event.to_dict() for event in self]


class SQLiteBackend:
    """A store file, open: its connection, the writer's lock, and every statement the store runs on it.

    Open with :meth:`open`; see the module docstring for the guarantees.
    Usable without a :class:`~agentmemory.store.core.MemoryStore` (the export
    commands read a store this way, without building any index).
    """

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        lock: int | None,
        readonly: bool,
        version: int,
        clock: Clock | None,
        ids: IdSource | None,
    ) -> None:
        self.path = str(path)
        self.readonly = readonly
        self.schema_version = version
        self.closed = False
        self._file = path
        self._conn = conn
        self._lock = lock
        self._depth = 0
        self._last_event: tuple[str, int] | None = None
        self._seen = 0  # the last event seq whose changes the store has applied (see changes_since)
        self._doing: str | None = None  # what is being read, for messages (see reading)
        self._created_lock = False  # whether opening created the lock file (see abandon)
        self.log = StoredEventLog(self, clock, ids)

    @classmethod
    def open(
        cls,
        path: str | PathLike[str],
        *,
        readonly: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Clock | None = None,
        ids: IdSource | None = None,
    ) -> SQLiteBackend:
        """Open the store at ``path`` (created when missing, unless ``readonly``).

        Raises:
            ParameterError: ``path`` is not a path or ``timeout`` not a number >= 0.
            MissingFileError: ``readonly`` and there is no such file.
            StoreLockedError: another writer holds the store for longer than ``timeout`` seconds.
            StoreVersionError: the store's schema is newer than this agentmemory's (or older, read-only).
            StoreError: a folder, a file that is not SQLite or not a store, a place that cannot be written.
        """
        file = _as_path(path)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not timeout >= 0
            or math.isinf(timeout)
        ):
            raise ParameterError("timeout", timeout, "is not a number of seconds >= 0", "pass e.g. 5.0 (the default)")
        _check_file(file)
        if readonly and not file.exists():
            raise MissingFileError(file, "store")
        lock, created = (None, False) if readonly else _lock(file, float(timeout))
        conn = None
        try:
            if not readonly and file.exists() and not os.access(file, os.W_OK):
                raise StoreError(file, "is a read-only file", "open it read-only (readonly=True), or make it writable")
            conn = _connect(file, readonly, float(timeout))
            version = _prepare(conn, file, readonly)
        except BaseException as err:
            if conn is not None:
                conn.close()
            if lock is not None:
                if created:  # a refused file keeps nothing of this attempt beside it
                    _unlock_created(lock, file)
                else:
                    os.close(lock)
            if isinstance(err, sqlite3.Error):
                problem, advice = _sqlite_problem(err)
                raise StoreError(file, problem, advice) from None
            raise
        backend = cls(file, conn, lock, readonly, version, clock, ids)
        backend._created_lock = created
        return backend

    @property
    def where(self) -> str:
        return self.path

    def abandon(self) -> None:
        """Close a store whose opening failed after this handle was made (its entries would not load): as
        :meth:`close`, and the lock file is removed when this handle created it, so a refused file keeps
        nothing of the attempt beside it."""
        if self.closed:
            return
        lock, self._lock = self._lock, None
        try:
            self.close()
        finally:
            if lock is not None:
                if self._created_lock:
                    _unlock_created(lock, self._file)
                else:
                    os.close(lock)

    def close(self) -> None:
        """Close the connection (SQLite checkpoints the log into the file) and release the writer's lock."""
        if self.closed:
            return
        self.closed = True
        try:
            self._conn.close()
        finally:
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None

    # -- transactions ---------------------------------------------------------------------------
    def check_writable(self) -> None:
        if self.closed:
            raise StoreError(self.path, "is closed", "open it again with MemoryStore.open(path)")
        if self.readonly:
            raise StoreError(
                self.path,
                "is open read-only: it records nothing",
                "open it without readonly=True to add, derive, update, forget or record searches (one writer at a time)",
            )

    def check_open(self) -> None:
        if self.closed:
            raise StoreError(self.path, "is closed", "open it again with MemoryStore.open(path)")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``); nested ones join the outermost.

        On any error the transaction is rolled back; SQLite's errors are
        raised as :class:`StoreError`.
        """
        self.check_writable()
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:  # the connection is gone; nothing was committed either way
                        pass
                raise
            finally:
                self._depth = 0
                self._last_event = None
        except sqlite3.Error as err:
            problem, advice = _sqlite_problem(err)
            raise StoreError(self.path, problem, advice) from None

    def _error(self, err: sqlite3.Error) -> StoreError:
        """``err`` as one line naming the file, what failed (what was being read, when known) and what to do."""
        problem, advice = _sqlite_problem(err)
        if self._doing is not None:
            problem = f"{problem} while reading {self._doing}"
        return StoreError(self.path, problem, advice)

    @contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """Reads of ``what`` (``"its entries"``): a SQLite error, or a row that does not decode as this module
        wrote it (the bytes of a damaged file), is raised as one :class:`StoreError` naming the file and ``what``."""
        outer = self._doing
        self._doing = outer or what
        try:
            yield
        except sqlite3.Error as err:
            raise self._error(err) from None
        except _UNDECODABLE as err:
            if isinstance(err, AgentMemoryError) and not isinstance(err, ParameterError):
                raise
            raise StoreError(
                self.path,
                f"is damaged: a row of {self._doing} does not decode ({type(err).__name__}: {shorten(str(err), 80)})",
                DAMAGED_ADVICE,
            ) from None
        finally:
            self._doing = outer

    def read(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row of one query (a committed state; inside a transaction, its own writes too)."""
        self.check_open()
        try:
            return self._conn.execute(sql, parameters).fetchall()
        except sqlite3.Error as err:
            raise self._error(err) from None

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Several reads that see one committed state (a read transaction; within a write one, nothing more).

        A SQLite error starting or ending it is a :class:`StoreError`; when a read inside failed, ending the
        read transaction cannot replace that read's error.
        """
        self.check_open()
        if self._conn.in_transaction:
            yield
            return
        try:
            self._conn.execute("BEGIN")
        except sqlite3.Error as err:
            raise self._error(err) from None
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:  # a read transaction leaves nothing to undo
                    pass
            raise
        if self._conn.in_transaction:
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as err:
                raise self._error(err) from None

    # -- checks ----------------------------------------------------------------------------------
    def check_entry(self, entry: MemoryEntry) -> None:
        """Refuse what the file cannot keep exactly: text that is not valid Unicode, metadata JSON would change."""
        if entry.created_at is not None and not isinstance(entry.created_at, datetime):
            raise ParameterError(
                "entry.created_at", entry.created_at, "is not a datetime", "pass a timezone-aware datetime or None"
            )
        p = entry.provenance
        for name, value in (
            ("entry.id", entry.id),
            ("entry.text", entry.text),
            ("entry.scope", entry.scope),
            ("provenance.source", p.source),
            ("provenance.ref", p.ref),
            ("provenance.actor", p.actor),
        ):
            _check_text(name, value)
        for tag in entry.tags:
            _check_text("entry.tags", tag)
        for source in p.derived_from:
            _check_text("provenance.derived_from", source)
        if entry.metadata:
            check_metadata(entry, "a persistent store keeps metadata as JSON", exact=True)

    def check_query(self, query: Query) -> None:
        """Refuse a query whose text the file cannot keep (it is recorded with the search)."""
        _check_text("query.text", query.text)
        _check_text("query.id", query.id)
        _check_text("query.scope", query.scope)
        for tag in query.tags or ():
            _check_text("query.tags", tag)

    # -- writing ---------------------------------------------------------------------------------
    def insert_event(self, event: Event) -> int:
        with self.transaction():
            try:
                cursor = self._conn.execute(
                    "INSERT INTO events (event_id, type, timestamp, at_us, entry_ids, query_id, retriever) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        event.event_id,
                        event.type,
                        event.timestamp.isoformat(),
                        _micros(event.timestamp),
                        _json(list(event.entry_ids)),
                        event.query_id,
                        event.retriever,
                    ),
                )
            except sqlite3.IntegrityError:
                raise StoreError(
                    self.path,
                    f"event id {event.event_id!r} is already in the log: the store's id source repeats ids",
                    "give each session its own id source (HashIds counts from 0 again: use a new namespace), "
                    "or leave ids out for random ones",
                ) from None
            seq = int(cursor.lastrowid or 0)
            self._last_event = (event.event_id, seq)
            return seq

    def _seq(self, event: Event) -> int:
        if self._last_event is not None and self._last_event[0] == event.event_id:
            return self._last_event[1]
        rows = self._conn.execute("SELECT seq FROM events WHERE event_id = ?", (event.event_id,)).fetchall()
        if not rows:
            raise StoreError(self.path, f"event {event.event_id!r} is not in the log", "record the event first")
        return int(rows[0][0])

    def record_versions(
        self, event: Event, versions: Sequence[EntryVersion], previous: MemoryEntry | None = None
    ) -> None:
        """Write ``versions`` (all made by ``event``): new entries' first versions, or an update or forget."""
        with self.transaction():
            seq = self._seq(event)
            firsts = [v for v in versions if v.version == 1]
            if firsts:
                start = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM entries").fetchone()[0]) + 1
                self._conn.executemany(
                    "INSERT INTO entries (seq, id, version) VALUES (?, ?, 1)",
                    [(start + i, v.entry.id) for i, v in enumerate(firsts)],
                )
            for v in versions:
                if v.version > 1:
                    self._conn.execute(
                        "UPDATE entries SET version = ?, forgotten = ? WHERE id = ?",
                        (v.version, int(v.change == "forget"), v.entry.id),
                    )
            self._conn.executemany(
                "INSERT INTO versions (entry_id, version, change, event, supersedes, reason, text, tags, created_at, "
                "source, ref, actor, derived_from, scope, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [_version_row(v, seq) for v in versions],
            )

    def record_retrieval(
        self, event: Event, query: Query, hits: list[Hit], k: int, label: str, versions: list[int]
    ) -> None:
        with self.transaction():
            seq = self._seq(event)
            self._conn.execute(
                "INSERT INTO retrievals (event, query_text, query_tags, scope, query_group, asked_at, k, label) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    seq,
                    query.text,
                    None if query.tags is None else _json(list(query.tags)),
                    query.scope,
                    query.group,
                    None if query.asked_at is None else query.asked_at.isoformat(),
                    k,
                    label,
                ),
            )
            self._conn.executemany(
                "INSERT INTO hits (event, rank, entry_id, version, score) VALUES (?, ?, ?, ?, ?)",
                [(seq, h.rank, h.entry_id, v, float(h.score)) for h, v in zip(hits, versions)],
            )

    def write_queries(self, queries: list[Query]) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO queries (id, text, tags, scope, query_group, metadata) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        q.id,
                        q.text,
                        None if q.tags is None else _json(list(q.tags)),
                        q.scope,
                        q.group,
                        _json(dict(q.metadata)) if q.metadata else None,
                    )
                    for q in queries
                ],
            )

    def write_judgments(self, split: str, qrels: Mapping[str, Mapping[str, int]]) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO judgments (split, query_id, entry_id, grade) VALUES (?, ?, ?, ?)",
                [(split, q, e, int(g)) for q, judged in qrels.items() for e, g in judged.items()],
            )

    # -- reading ---------------------------------------------------------------------------------
    @_reads("its recorded searches")
    def recorded_retrievers(self) -> list[tuple[str, str, int]]:
        """(key, label, searches) of every retriever whose searches were recorded, by key."""
        return [
            (str(key), str(label), int(n))
            for key, label, n in self.read(
                "SELECT e.retriever, r.label, count(*) FROM events e JOIN retrievals r ON r.event = e.seq "
                "GROUP BY e.retriever, r.label ORDER BY e.retriever, r.label"
            )
        ]

    @_reads("its event log")
    def event_count(self) -> int:
        return int(self.read("SELECT coalesce(max(seq), 0) FROM events")[0][0])

    @_reads("its entries")
    def live_entries(self) -> list[MemoryEntry]:
        """Every entry that is not forgotten, at its newest version, in the order first added.

        Marks the log as read up to its end (see :meth:`changes_since`); call it in a :meth:`snapshot`
        with the other reads of an opening store.
        """
        rows = self.read(
            f"SELECT e.id, {_VERSION_COLUMNS} FROM entries e JOIN versions v ON v.entry_id = e.id "
            "AND v.version = e.version WHERE e.forgotten = 0 ORDER BY e.seq"
        )
        self._seen = self.event_count()
        return [_entry(r[0], r[1:]) for r in rows]

    @_reads("its entries")
    def forgotten_ids(self) -> set[str]:
        return {r[0] for r in self.read("SELECT id FROM entries WHERE forgotten = 1")}

    @_reads("its entries")
    def changed_versions(self) -> dict[str, int]:
        """The newest version of every entry that has more than one."""
        return {r[0]: r[1] for r in self.read("SELECT id, version FROM entries WHERE version > 1")}

    @_reads("its entry versions")
    def changes_since(self) -> list[EntryVersion]:
        """Every entry version written after the last read (by another handle: a reader catching up), oldest first."""
        with self.snapshot():
            rows = self.read(
                f"SELECT v.entry_id, v.version, v.change, v.supersedes, v.reason, ev.event_id, ev.timestamp, "
                f"{_VERSION_COLUMNS} FROM versions v JOIN events ev ON ev.seq = v.event "
                "JOIN entries n ON n.id = v.entry_id WHERE v.event > ? ORDER BY v.event, n.seq",
                (self._seen,),
            )
            self._seen = self.event_count()
        return [_version(r) for r in rows]

    @_reads("its entry versions")
    def history(self, entry_id: str, current: MemoryEntry | None = None) -> list[EntryVersion]:
        rows = self.read(
            f"SELECT v.entry_id, v.version, v.change, v.supersedes, v.reason, ev.event_id, ev.timestamp, "
            f"{_VERSION_COLUMNS} FROM versions v JOIN events ev ON ev.seq = v.event "
            "WHERE v.entry_id = ? ORDER BY v.version",
            (entry_id,),
        )
        return [_version(r) for r in rows]

    @_reads("its queries")
    def queries(self) -> list[Query]:
        rows = self.read("SELECT id, text, tags, scope, query_group, metadata FROM queries ORDER BY seq")
        return [
            Query(
                id=r[0],
                text=r[1],
                tags=None if r[2] is None else tuple(json.loads(r[2])),
                scope=r[3],
                group=r[4],
                metadata=NO_METADATA if r[5] is None else MappingProxyType(json.loads(r[5])),
            )
            for r in rows
        ]

    @_reads("its judgments")
    def judgments(self) -> dict[str, dict[str, dict[str, int]]]:
        out: dict[str, dict[str, dict[str, int]]] = {}
        for split, query_id, entry_id, grade in self.read(
            "SELECT split, query_id, entry_id, grade FROM judgments ORDER BY seq"
        ):
            out.setdefault(split, {}).setdefault(query_id, {})[entry_id] = grade
        return out

    @_reads("its recorded searches")
    def retrievals(
        self,
        *,
        retriever: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[Retrieval]:
        """The recorded searches, oldest first: of ``retriever`` (its key) only, at or after ``since``, before ``until``."""
        where: list[str] = ["1"]
        params: list[Any] = []
        if retriever is not None:
            where.append("e.retriever = ?")
            params.append(retriever)
        if since is not None:
            where.append("e.at_us >= ?")
            params.append(_micros(since))
        if until is not None:
            where.append("e.at_us < ?")
            params.append(_micros(until))
        with self.snapshot():
            rows = self.read(
                "SELECT e.seq, e.event_id, e.timestamp, e.query_id, e.retriever, r.query_text, r.query_tags, r.scope, "
                "r.query_group, r.asked_at, r.k, r.label FROM events e JOIN retrievals r ON r.event = e.seq "
                f"WHERE {' AND '.join(where)} ORDER BY e.seq",
                params,
            )
            hits: dict[int, list[tuple[int, str, int, float]]] = {}
            if rows:
                for seq, rank, entry_id, version, score in self.read(
                    "SELECT event, rank, entry_id, version, score FROM hits WHERE event BETWEEN ? AND ? "
                    "ORDER BY event, rank",
                    (rows[0][0], rows[-1][0]),
                ):
                    hits.setdefault(seq, []).append((rank, entry_id, version, score))
        out = []
        for seq, event_id, stamp, query_id, key, text, tags, scope, group, asked, k, label in rows:
            found = hits.get(seq, [])
            out.append(
                Retrieval(
                    event_id=event_id,
                    timestamp=datetime.fromisoformat(stamp),
                    retriever=key,
                    label=label,
                    query=Query(
                        id=query_id or "",
                        text=text,
                        tags=None if tags is None else tuple(json.loads(tags)),
                        scope=scope,
                        group=group,
                        asked_at=None if asked is None else datetime.fromisoformat(asked),
                    ),
                    k=k,
                    hits=tuple(Hit(entry_id, score, rank) for rank, entry_id, _, score in found),
                    versions=tuple(version for _, _, version, _ in found),
                )
            )
        return out

    @_reads("its statistics")
    def stats(self) -> dict[str, Any]:
        """What ``agentmemory store stats`` prints: counts, first and last event, size on disk."""
        with self.snapshot():
            live, forgotten = self.read(
                "SELECT coalesce(sum(forgotten = 0), 0), coalesce(sum(forgotten), 0) FROM entries"
            )[0]
            scopes = self.read(
                "SELECT DISTINCT v.scope FROM entries e "
                "JOIN versions v ON v.entry_id = e.id AND v.version = e.version WHERE e.forgotten = 0"
            )
            versions = self.read("SELECT count(*) FROM versions")[0][0]
            by_type = dict(self.read("SELECT type, count(*) FROM events GROUP BY type ORDER BY type"))
            first = self.read("SELECT timestamp FROM events ORDER BY seq LIMIT 1")
            last = self.read("SELECT timestamp FROM events ORDER BY seq DESC LIMIT 1")
            retrievers = dict(
                self.read(
                    "SELECT e.retriever, count(*) FROM events e JOIN retrievals r ON r.event = e.seq "
                    "GROUP BY e.retriever ORDER BY e.retriever"
                )
            )
            queries = self.read("SELECT count(*) FROM queries")[0][0]
            judgments = dict(self.read("SELECT split, count(*) FROM judgments GROUP BY split ORDER BY split"))
        files = {
            "database": self._file,
            "wal": self._file.with_name(self._file.name + "-wal"),
            "shm": self._file.with_name(self._file.name + "-shm"),
        }
        sizes = {name: (p.stat().st_size if p.exists() else 0) for name, p in files.items()}
        return {
            "path": self.path,
            "schema_version": self.schema_version,
            "entries": int(live),
            "forgotten": int(forgotten),
            "versions": int(versions),
            "scopes": len(scopes),
            "events": {str(k): int(v) for k, v in by_type.items()},
            "first_event": first[0][0] if first else None,
            "last_event": last[0][0] if last else None,
            "retrievals": {str(k): int(v) for k, v in retrievers.items()},
            "queries": int(queries),
            "judgments": {str(k): int(v) for k, v in judgments.items()},
            "bytes": {**sizes, "total": sum(sizes.values())},
        }

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check``: ``["ok"]`` for a sound file, else SQLite's list of what is wrong."""
        return [r[0] for r in self.read("PRAGMA integrity_check")]


def _version_row(v: EntryVersion, event_seq: int) -> tuple[Any, ...]:
    e = v.entry
    p = e.provenance
    return (
        e.id,
        v.version,
        v.change,
        event_seq,
        v.supersedes,
        v.reason,
        e.text,
        _json(list(e.tags)) if e.tags else _NO_TAGS,
        None if e.created_at is None else e.created_at.isoformat(),
        p.source,
        p.ref,
        p.actor,
        _json(list(p.derived_from)) if p.derived_from else _NO_TAGS,
        e.scope,
        _json(dict(e.metadata)) if e.metadata else None,
    )


def _version(row: Sequence[Any]) -> EntryVersion:
    entry_id, version, change, supersedes, reason, event_id, stamp = row[:7]
    return EntryVersion(
        entry=_entry(entry_id, row[7:]),
        version=version,
        change=change,
        event_id=event_id,
        timestamp=datetime.fromisoformat(stamp),
        supersedes=supersedes,
        reason=reason,
    )
