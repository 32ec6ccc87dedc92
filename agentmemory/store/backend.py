"""Where a memory store keeps what it records, and the records it keeps: entry versions and retrievals.

A :class:`~agentmemory.store.core.MemoryStore` indexes its entries in memory and
hands every change and retrieval to a backend:

* :class:`MemoryBackend` (no path, the default): the event log in a list,
  nothing on disk.  It keeps the versions of an entry only once the entry
  has been updated or forgotten (an entry that never changed has one
  version, found in the log when asked), so a million-entry evaluation
  store costs no more than before.
* :class:`agentmemory.store.sqlite.SQLiteBackend` (``MemoryStore.open(path)``):
  every change and every retrieval in a SQLite file (see
  :mod:`agentmemory.store.sqlite`).

Both answer :meth:`history` and the log identically.  Only the persistent
backend records each retrieval's query text and scored hits
(:class:`Retrieval`): an evaluation's in-memory store records the
``retrieve`` events of its artifact and nothing more.

Errors about a store as a whole (closed, read-only, locked, of another
version, on a full disk) are :class:`StoreError`, one line
``"<path>: <problem>; <what to do>"``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from agentmemory.collection import corpus_line
from agentmemory.errors import ParameterError, StoreError
from agentmemory.records import Event, Hit, MemoryEntry, Query
from agentmemory.store.events import Clock, EventLog, IdSource

__all__ = [
    "CHANGES",
    "EntryVersion",
    "MemoryBackend",
    "Retrieval",
    "anonymous_query_id",
    "check_metadata",
    "json_clean",
    "json_problem",
    "unencodable",
]

CHANGES = ("add", "derive", "update", "forget")
"""The changes that make an entry version, which are also the event types that record them."""

IN_MEMORY = "in-memory store"
"""How messages name a store that has no path."""


@dataclass(frozen=True, slots=True)
class EntryVersion:
    """One version of a memory entry: what it was, which change made it, and when.

    ``version`` counts from 1 (the entry as added or derived).  Each
    ``update`` makes the next version, whose ``supersedes`` is the version it
    replaced; ``forget`` makes a last version holding the entry as it was
    forgotten, with the ``reason`` given.  ``event_id`` and ``timestamp`` are
    those of the event that recorded the change.
    """

    entry: MemoryEntry
    version: int
    change: str
    event_id: str
    timestamp: datetime
    supersedes: int | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "change": self.change,
            "event_id": self.event_id,
            "timestamp": self.timestamp.isoformat(),
            "supersedes": self.supersedes,
            "reason": self.reason,
            "entry": self.entry.to_dict(),
        }


def anonymous_query_id(text: str, timestamp: datetime) -> str:
    """The run query id of a search made without one: ``q-`` and 16 hex digits.

    ``sha256(T + "\\n" + text)``, where ``T`` is the search's time in UTC as
    ISO 8601 (a naive time is taken as UTC): stable across exports, and
    different for the same question asked at another time.
    """
    when = timestamp.replace(tzinfo=timezone.utc) if timestamp.tzinfo is None else timestamp.astimezone(timezone.utc)
    digest = hashlib.sha256(f"{when.isoformat()}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"q-{digest[:16]}"


@dataclass(frozen=True, slots=True)
class Retrieval:
    """One search a persistent store recorded: the query as asked, the retriever, the ranked hits with scores.

    ``query`` is the query as searched (``id`` ``""`` when none was given;
    :attr:`run_query_id` then names it); ``retriever`` the retriever's key
    and ``label`` its display name at the time; ``k`` the depth asked for;
    ``versions[i]`` the version of ``hits[i]``'s entry when it was retrieved.
    """

    event_id: str
    timestamp: datetime
    retriever: str
    label: str
    query: Query
    k: int
    hits: tuple[Hit, ...]
    versions: tuple[int, ...]

    @property
    def run_query_id(self) -> str:
        """The query's id in an exported run: the id given, else :func:`anonymous_query_id` of its text and time."""
        return self.query.id or anonymous_query_id(self.query.text, self.timestamp)


def unencodable(text: str) -> bool:
    """Whether ``text`` holds a character UTF-8 cannot encode (a lone surrogate)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_problem(value: Any, where: str, *, tuples: bool = False) -> str | None:
    """Why ``value`` would not come back from JSON as it is (``None`` when it would): a type JSON does not
    keep, a key that is not a string, text that is not valid Unicode, or a NaN or infinite number (strict
    JSON, which our exports write and our loaders read, has no such numbers).  With ``tuples``, a tuple
    passes as a list (it comes back as one)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, which JSON cannot carry"
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, str):
        return f"{where} is text that is not valid Unicode (a lone surrogate)" if unencodable(value) else None
    if isinstance(value, list) or (tuples and isinstance(value, tuple)):
        for i, item in enumerate(value):
            problem = json_problem(item, f"{where}[{i}]", tuples=tuples)
            if problem:
                return problem
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r} ({type(key).__name__}), and JSON keys are strings"
            problem = json_problem(key, f"{where} key") or json_problem(item, f"{where}[{key!r}]", tuples=tuples)
            if problem:
                return problem
        return None
    return f"{where} is a {type(value).__name__}, which JSON does not keep"


def json_clean(value: Any, *, tuples: bool = False) -> bool:
    """Whether :func:`json_problem` finds nothing in ``value``: the same tests in the same order, without building
    its messages (the bulk check of a batch's metadata; at 250,000 LongMemEval turns the messages' text took
    5.4 s of a store's 10.7 s ``add``)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, str):
        return not unencodable(value)
    if isinstance(value, list) or (tuples and isinstance(value, tuple)):
        return all(json_clean(item, tuples=tuples) for item in value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str) or not (key.isascii() or not unencodable(key)):
                return False
            if isinstance(item, str):  # the usual values inline (no call each): text, then numbers and None
                if not (item.isascii() or not unencodable(item)):
                    return False
            elif isinstance(item, float):
                if not math.isfinite(item):
                    return False
            elif not (item is None or isinstance(item, (bool, int)) or json_clean(item, tuples=tuples)):
                return False
        return True
    return False


_METADATA_ALLOWED = "use dicts with string keys, lists, strings, finite numbers, booleans and None"


def check_metadata(entry: MemoryEntry, keeps: str = "", *, exact: bool = False) -> None:
    """Refuse ``entry``'s metadata when a store could not export it and read it back: :func:`json_problem`
    (NaN and infinities included), or a key the collection format reserves for a field (it would come back
    as that field, not as metadata).  Unless ``exact`` (a store file), a tuple passes: exported as a list.

    Raises:
        ParameterError: ``entry '<id>' metadata: {...} (dict) cannot be kept exactly: <why>; <keeps>: <allowed>``.
    """
    problem = json_problem(entry.metadata, "metadata", tuples=not exact)
    if problem:
        raise ParameterError(
            f"entry {entry.id!r} metadata",
            dict(entry.metadata),
            f"cannot be kept exactly: {problem}",
            f"{keeps or 'a store exports metadata as JSON'}: {_METADATA_ALLOWED}",
        )
    corpus_line(entry)  # a key the format reserves is refused here, named


class MemoryBackend:
    """What an in-memory store records: the event log, and the versions of entries that changed.

    Also holds the queries and judgments of an imported collection
    (:func:`agentmemory.store.transfer.import_collection`), so that a store in
    memory and one on disk import and export alike.
    """

    path: str | None = None
    readonly = False

    def __init__(self, clock: Clock | None = None, ids: IdSource | None = None) -> None:
        self.log = EventLog(clock, ids)
        self.closed = False
        self._versions: dict[str, list[EntryVersion]] = {}
        self._queries: dict[str, Query] = {}
        self._judgments: dict[str, dict[str, dict[str, int]]] = {}

    @property
    def where(self) -> str:
        return IN_MEMORY

    def close(self) -> None:
        self.closed = True

    def check_open(self) -> None:
        if self.closed:
            raise StoreError(IN_MEMORY, "is closed", "make a new MemoryStore")

    def check_writable(self) -> None:
        self.check_open()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Nothing to commit in memory: the store applies a change only once every step of it succeeded."""
        self.check_writable()
        yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        yield

    def changes_since(self) -> list[EntryVersion]:
        return []

    def check_entry(self, entry: MemoryEntry) -> None:
        """Whether ``entry`` can be kept so that the store exports it: its metadata (:func:`check_metadata`)."""
        if entry.metadata:
            check_metadata(entry)

    def check_query(self, query: Query) -> None:
        """Whether ``query`` can be recorded (nothing is, in memory)."""

    # -- what the store loads when it opens ------------------------------------------
    def live_entries(self) -> list[MemoryEntry]:
        return []

    def forgotten_ids(self) -> set[str]:
        return set()

    def changed_versions(self) -> dict[str, int]:
        return {}

    # -- changes ----------------------------------------------------------------------
    def record_versions(
        self, event: Event, versions: Sequence[EntryVersion], previous: MemoryEntry | None = None
    ) -> None:
        """Keep ``versions`` (made by ``event``); ``previous`` is the entry an update or a forget supersedes.

        First versions are not kept: :meth:`history` finds them in the log.
        """
        for version in versions:
            if version.change in ("add", "derive"):
                continue
            kept = self._versions.get(version.entry.id)
            if kept is None:
                if previous is None:
                    raise StoreError(IN_MEMORY, "an update or forget needs the version it supersedes", "this is a bug")
                kept = self._versions[version.entry.id] = self._first_version(previous)
            kept.append(version)

    def record_retrieval(
        self, event: Event, query: Query, hits: list[Hit], k: int, label: str, versions: list[int]
    ) -> None:
        """Nothing: an in-memory store records ``retrieve`` events, not their queries and scores."""

    def _first_version(self, entry: MemoryEntry) -> list[EntryVersion]:
        """Version 1 of ``entry`` (which never changed): the entry and the event that added or derived it."""
        for event in self.log:
            if (event.type == "add" and entry.id in event.entry_ids) or (
                event.type == "derive" and event.entry_ids[:1] == (entry.id,)
            ):
                return [EntryVersion(entry, 1, event.type, event.event_id, event.timestamp)]
        raise StoreError(IN_MEMORY, f"entry {entry.id!r} has no add or derive event in the log", "this is a bug")

    def history(self, entry_id: str, current: MemoryEntry | None) -> list[EntryVersion]:
        """Every version of ``entry_id``, oldest first (``current`` is the live entry, when it is live)."""
        versions = self._versions.get(entry_id)
        if versions is not None:
            return list(versions)
        assert current is not None  # an entry without versions never changed, so it is live
        return self._first_version(current)

    # -- collections ------------------------------------------------------------------
    def write_queries(self, queries: list[Query]) -> None:
        for query in queries:
            self._queries[query.id] = query

    def write_judgments(self, split: str, qrels: Mapping[str, Mapping[str, int]]) -> None:
        into = self._judgments.setdefault(split, {})
        for query_id, judged in qrels.items():
            into.setdefault(query_id, {}).update(judged)

    def queries(self) -> list[Query]:
        return list(self._queries.values())

    def judgments(self) -> dict[str, dict[str, dict[str, int]]]:
        return {split: {q: dict(d) for q, d in qrels.items()} for split, qrels in self._judgments.items()}

    def retrievals(self, **_: Any) -> list[Retrieval]:
        raise StoreError(
            IN_MEMORY,
            "records no retrievals (only a persistent store keeps query texts and scored hits)",
            "open a store on disk with MemoryStore.open(path) to record them",
        )
