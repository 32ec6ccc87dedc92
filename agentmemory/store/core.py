"""A memory store: entries, their provenance, retrievers and the event log.

Every change (``add``, ``derive``, ``update``, ``forget``) and every
retrieval (``search``) is recorded in :attr:`MemoryStore.log`, an
append-only :class:`~agentmemory.store.events.EventLog`.  Retrievers are updated
incrementally on every addition.

**In memory or on disk.**  ``MemoryStore()`` lives in memory;
``MemoryStore.open(path)`` (or ``MemoryStore(path=...)``) keeps everything
in a SQLite file (:mod:`agentmemory.store.sqlite`): each change and each search
is on disk when the call returns, the store reopens with every entry,
version and event, and each search's query and scored hits are recorded
(:meth:`MemoryStore.retrievals`) to be exported as a run.  Both behave
alike otherwise.  Retriever indexes live in memory: they are rebuilt from
the entries when a store is opened.

**Versions.**  ``update`` makes a new version of an entry (same id; the
version records what it ``supersedes``), ``forget`` hides one from every
retrieval; both are events and :meth:`MemoryStore.history` lists every
version.  A retriever that has ``remove(entry_ids)`` is updated in place;
one without it is rebuilt for that scope, from the entries, before its
next search.

**Scopes.**  The store is partitioned by :attr:`MemoryEntry.scope`: each
scope has its own retriever instances, so an entry is only found by queries
of its own scope (``Query.scope``; a plain string query has scope ``None``).
Entries and queries without a scope share the ``None`` partition.  Statistics
such as BM25's IDF and average length are per partition.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from itertools import islice
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmemory.collection.columns import Entries
from agentmemory.collection.lines import RESERVED_CORPUS_KEYS
from agentmemory.errors import ParameterError, StoreError, UnknownNameError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Provenance, Query
from agentmemory.retrievers import DEFAULT_RETRIEVERS, Retriever, RetrieverLike, RetrieverSpec, resolve_retrievers
from agentmemory.retrievers.base import as_query, has_capability
from agentmemory.retrievers.guard import GuardedRetriever
from agentmemory.store.backend import EntryVersion, MemoryBackend, Retrieval, check_metadata, json_clean
from agentmemory.store.events import Clock, EventLog, IdSource
from agentmemory.store.live import LiveEntries

if TYPE_CHECKING:  # imported where a store file is opened: an in-memory store needs no sqlite3
    from agentmemory.store.sqlite import SQLiteBackend

DEFAULT_TIMEOUT = 5.0
"""Seconds a writer waits for another writer of the same store file (:mod:`agentmemory.store.sqlite`)."""

__all__ = ["MemoryStore", "dependency_order"]

_RESERVED = frozenset(RESERVED_CORPUS_KEYS)
"""Metadata keys a collection line reserves for a field (``check_metadata`` names a clash)."""

_RUN_QUERIES = 1024  # queries a search_all without records hands a retriever's search_many at once
_RECORD_RUN = 1 << 18  # records a built-in retriever without add_texts is given at once from a batch of columns


def _depth(searcher: Any, depth: int, clamp: bool) -> int:
    """``depth``, or with ``clamp`` at most the retriever's ``max_k`` (a declared capability) when it has one."""
    if clamp:
        cap = getattr(searcher, "max_k", None)
        return min(depth, cap) if isinstance(cap, int) and cap >= 1 else depth
    return depth


def _takes_columns(retriever: Any) -> bool:
    """Whether ``retriever`` (not a plugin: plugins get records) has the declared capability ``add_texts(ids,
    texts)``, indexing straight from a :class:`~agentmemory.collection.columns.TextSource`.  While the capability
    table does not declare it, no retriever is asked (every one gets records)."""
    if isinstance(retriever, GuardedRetriever):
        return False
    try:
        return has_capability(retriever, "add_texts")
    except UnknownNameError:
        return False


_ID = attrgetter("id")
_SCOPE = attrgetter("scope")
_DERIVED_FROM = attrgetter("provenance.derived_from")
_METADATA = attrgetter("metadata")


class MemoryStore:
    """Memories with provenance, searchable by every attached retriever.

    Args:
        retrievers: anything :func:`agentmemory.retrievers.resolve_retrievers`
            takes: registry names, specs with parameters (``"bm25[k1=0.9]"``),
            ``"package.module:attribute"``, factories or one retriever instance
            (default: ``bm25`` and ``tags``, always exactly these two).
            Each is reached by its key (:attr:`retriever_names`).
        clock, ids: where event timestamps and ids come from (default: wall
            clock and random ids; pass :class:`~agentmemory.store.events.SteppingClock`
            and :class:`~agentmemory.store.events.HashIds` for reproducible logs).
        path: a store file to keep everything in (created when missing);
            ``None`` (the default) keeps the store in memory.  See :meth:`open`.
        readonly: open ``path`` to read only: no lock is taken, nothing
            (not even a search) is recorded, and the store can be open for
            writing in another process at the same time (:meth:`refresh`
            catches up with what it wrote).
        timeout: seconds to wait for another process that has ``path`` open
            for writing, before :class:`~agentmemory.store.backend.StoreLockedError`.

    A retriever *instance* serves one partition only: adding entries of a
    second scope is an error saying a factory is needed.
    """

    def __init__(
        self,
        retrievers: RetrieverLike | Sequence[RetrieverLike] | None = None,
        *,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        path: str | PathLike[str] | None = None,
        readonly: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if isinstance(retrievers, tuple) and retrievers and all(isinstance(r, RetrieverSpec) for r in retrievers):
            chosen = retrievers  # resolved by the caller (an evaluation resolves its retrievers once)
        else:
            chosen = resolve_retrievers(DEFAULT_RETRIEVERS if retrievers is None else retrievers)
        self._specs: dict[str, RetrieverSpec] = {spec.key: spec for spec in chosen}
        self._entries = LiveEntries()  # records, and column batches whose records are made when asked
        self._partitions: dict[str | None, dict[str, Retriever]] = {}
        self._index_seconds: dict[str, float] = dict.fromkeys(self._specs, 0.0)
        self._stale: dict[str | None, set[str]] = {}  # per scope, retrievers to rebuild before their next search
        self._forgotten: set[str] = set()
        self._versions: dict[str, int] = {}  # the newest version of entries that have more than one
        self._partition(None)  # builds each retriever once now: bad parameter values are refused here
        if not isinstance(readonly, bool):
            raise ParameterError("readonly", readonly, "is not True or False", "pass readonly=True to only read")
        self._backend: MemoryBackend | SQLiteBackend
        if path is None:
            if readonly:
                raise ParameterError("readonly", readonly, "needs a path", "open a store file read-only: path=...")
            self._backend = MemoryBackend(clock, ids)
        else:
            from agentmemory.store.sqlite import SQLiteBackend

            self._backend = SQLiteBackend.open(path, readonly=readonly, timeout=timeout, clock=clock, ids=ids)
            try:
                self._load()
            except BaseException:
                self._backend.abandon()
                raise
        self.log: EventLog = self._backend.log

    @classmethod
    def open(
        cls,
        path: str | PathLike[str],
        retrievers: RetrieverLike | Sequence[RetrieverLike] | None = None,
        *,
        readonly: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Clock | None = None,
        ids: IdSource | None = None,
    ) -> MemoryStore:
        """The store kept in the SQLite file ``path`` (created when missing, unless ``readonly``).

        Every entry (at its newest version), forgotten id and event is read
        back, and each retriever's index is built from the entries.  Use it
        as a context manager, or call :meth:`close`: the file is locked
        against other writers until then.

        Raises:
            StoreLockedError: another process has the store open for writing
                and did not close it within ``timeout`` seconds.
            StoreVersionError: the file was written by a newer agentmemory.
            StoreError: ``path`` is a folder, not a SQLite file, a SQLite file
                that is not a store, or cannot be written (unless ``readonly``).
            MissingFileError: ``readonly`` and there is no such file.
        """
        return cls(retrievers, clock=clock, ids=ids, path=path, readonly=readonly, timeout=timeout)

    def _load(self) -> None:
        """Read the entries and versions of a store file, and index the entries."""
        backend = self._backend
        with backend.snapshot():
            entries = backend.live_entries()
            self._forgotten = backend.forgotten_ids()
            self._versions = backend.changed_versions()
        self._index(entries)
        self._entries.add_records(list(map(_ID, entries)), entries)

    # -- the file ---------------------------------------------------------
    @property
    def path(self) -> Path | None:
        """The store file, or ``None`` for a store in memory."""
        where = self._backend.path
        return None if where is None else Path(where)

    @property
    def readonly(self) -> bool:
        """True for a handle that only reads (records nothing)."""
        return self._backend.readonly

    @property
    def closed(self) -> bool:
        return self._backend.closed

    def close(self) -> None:
        """Close the store (a file's lock is released); any later change or search is an error. Idempotent."""
        self._backend.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> int:
        """Catch up with the changes another process wrote since this read-only handle last read; how many.

        A writer sees its own changes already: for it this does nothing and returns 0.
        """
        if not self.readonly:
            return 0
        changes = self._backend.changes_since()
        added: list[MemoryEntry] = []
        for version in changes:
            if version.change in ("add", "derive"):
                added.append(version.entry)
                continue
            self._apply_added(added)
            added = []
            self._apply_changed(version)
        self._apply_added(added)
        return len(changes)

    def _apply_added(self, batch: list[MemoryEntry]) -> None:
        if not batch:
            return
        with self._changing({e.scope for e in batch}):
            self._index(batch)
        for entry in batch:
            self._entries[entry.id] = entry

    def _apply_changed(self, version: EntryVersion) -> None:
        entry = version.entry
        old = self._entries.get(entry.id, entry)
        with self._changing({entry.scope}):
            self._unindex(old, None if version.change == "forget" else entry)
        if version.change == "forget":
            self._entries.pop(entry.id, None)
            self._forgotten.add(entry.id)
        else:
            self._entries[entry.id] = entry
        self._versions[entry.id] = version.version

    def _partition(self, scope: str | None) -> dict[str, Retriever]:
        part = self._partitions.get(scope)
        if part is None:
            shared = [s for s in self._specs.values() if s.shared]
            if shared and self._partitions and not (set(self._partitions) == {None} and not self._entries):
                raise ParameterError(
                    "retrievers",
                    shared[0].key,
                    f"is a retriever instance, which can serve one scope only, and scope {scope!r} is a second one",
                    "pass a factory or a spec (a class, a registry name) so that each scope gets its own retriever",
                )
            if shared:
                self._partitions.clear()  # the instance moves to the first scope that has entries
            part = {key: spec.new() for key, spec in self._specs.items()}
            self._partitions[scope] = part
        return part

    # -- contents -------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[MemoryEntry]:
        return iter(tuple(self._entries.records()))

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def holds_exactly(self, entries: Iterable[MemoryEntry]) -> bool:
        """Whether the store's live entries have exactly the ids of ``entries`` (compared as sets, in bulk)."""
        return self._entries.same_ids(entries.ids if isinstance(entries, Entries) else map(_ID, entries))

    def get(self, entry_id: str) -> MemoryEntry:
        """The entry with ``entry_id`` (its newest version); ParameterError if there is none."""
        try:
            return self._entries[entry_id]
        except (KeyError, TypeError):
            if isinstance(entry_id, str) and entry_id in self._forgotten:
                raise ParameterError(
                    "entry_id",
                    entry_id,
                    "was forgotten",
                    "pass the id of a stored entry (history(entry_id) lists a forgotten entry's versions)",
                ) from None
            raise ParameterError("entry_id", entry_id, "is not in the store", "pass the id of a stored entry") from None

    @property
    def retriever_names(self) -> tuple[str, ...]:
        """The keys of the attached retrievers, in the order given (``("bm25", "tags")`` by default)."""
        return tuple(self._specs)

    def attach(self, retriever: RetrieverLike, *, like: str) -> RetrieverSpec:
        """Attach ``retriever`` over the index of the attached retriever ``like``, in every scope; its spec.

        For settings that change only the scoring (BM25's ``k1`` and ``b``):
        the two specs must have the same ``index_key`` (see
        :class:`~agentmemory.retrievers.RetrieverSpec`), and each scope's
        retriever is ``like``'s or made from it by its ``with_params``, so
        nothing is indexed again.  Its searches are those of a store built
        with ``retriever`` from the same entries.  Add no entries to the store
        while it is attached: :meth:`detach` it first.

        Raises:
            ParameterError: ``retriever`` is attached already, or does not share ``like``'s index.
            UnknownNameError: ``like`` is not attached.
        """
        spec = resolve_retrievers([retriever])[0]
        if like not in self._specs:
            raise UnknownNameError("retriever", like, self._specs)
        if spec.key in self._specs:
            raise ParameterError("retriever", spec.key, "is attached already", "attach each retriever once")
        owner = self._specs[like]
        views = {scope: spec.share(self.retriever(like, scope), owner) for scope in list(self._partitions)}
        self._specs[spec.key] = spec
        self._index_seconds[spec.key] = 0.0
        for scope, view in views.items():
            self._partitions[scope][spec.key] = view
        return spec

    def detach(self, name: str) -> None:
        """Take the attached retriever ``name`` out of every scope (``like``'s index stays)."""
        if name not in self._specs:
            raise UnknownNameError("retriever", name, self._specs)
        del self._specs[name]
        del self._index_seconds[name]
        for part in self._partitions.values():
            part.pop(name, None)
        for stale in self._stale.values():
            stale.discard(name)

    def index_seconds(self, name: str) -> float:
        """Wall-clock seconds retriever ``name`` has spent indexing entries in this store (all scopes)."""
        if name not in self._specs:
            raise UnknownNameError("retriever", name, self._specs)
        return self._index_seconds[name]

    @property
    def retriever_specs(self) -> tuple[RetrieverSpec, ...]:
        """The attached retrievers' specs (key, label, parameters), in the order given."""
        return tuple(self._specs.values())

    @property
    def scopes(self) -> tuple[str | None, ...]:
        """Every scope that has entries: ``None`` first when present, the others sorted."""
        found = self._entries.scopes()
        return ((None,) if None in found else ()) + tuple(sorted(s for s in found if s is not None))

    def retriever(self, name: str, scope: str | None = None) -> Retriever:
        """The retriever ``name`` of partition ``scope`` (to call ``search`` or ``explain`` directly).

        Searching through it records no event; :meth:`search` does.  A
        retriever an ``update`` or ``forget`` left to rebuild is rebuilt here.
        """
        if name not in self._specs:
            raise UnknownNameError("retriever", name, self._specs)
        part = self._partition(scope)
        stale = self._stale.get(scope)
        if stale and name in stale:
            self._rebuild(scope, name)
        return part[name]

    def _rebuild(self, scope: str | None, key: str) -> None:
        """A new retriever ``key`` for ``scope``, indexing the scope's entries in the order added."""
        started = time.perf_counter()
        fresh = self._specs[key].new()
        fresh.add([e for e in self._entries.records() if e.scope == scope])
        self._partitions[scope][key] = fresh
        self._index_seconds[key] += time.perf_counter() - started
        stale = self._stale[scope]
        stale.discard(key)
        if not stale:
            del self._stale[scope]

    @contextmanager
    def _changing(self, scopes: Iterable[str | None]) -> Iterator[None]:
        """Steps of one change: if one fails, the retrievers of ``scopes`` are rebuilt (from the entries
        as they were) before their next search, so no half-indexed change is ever searched."""
        try:
            yield
        except BaseException:
            for scope in scopes:
                if scope in self._partitions:
                    keys = {k for k, spec in self._specs.items() if not spec.shared}
                    if keys:
                        self._stale.setdefault(scope, set()).update(keys)
            raise

    def _unindex(self, old: MemoryEntry, new: MemoryEntry | None) -> None:
        """Take ``old`` out of its scope's retrievers (and put ``new``, its next version, in): with
        ``remove(entry_ids)`` where a retriever has it, else by marking it for a rebuild."""
        scope = old.scope
        part = self._partition(scope)
        stale = self._stale.get(scope, set())
        for key, retriever in part.items():
            if key in stale:
                continue
            remove = getattr(retriever, "remove", None)
            if callable(remove):
                started = time.perf_counter()
                remove([old.id])
                if new is not None:
                    retriever.add([new])
                self._index_seconds[key] += time.perf_counter() - started
            else:
                self._stale.setdefault(scope, set()).add(key)

    # -- changes --------------------------------------------------------
    def _check_new(self, entry: MemoryEntry, pending: set[str]) -> None:
        if not isinstance(entry, MemoryEntry):
            raise ParameterError("entries", entry, "is not a MemoryEntry", "add agentmemory.MemoryEntry records")
        if entry.id in self._entries or entry.id in pending:
            raise ParameterError("entry.id", entry.id, "is already in the store", "every entry id must be unique")
        if entry.id in self._forgotten:
            raise ParameterError(
                "entry.id", entry.id, "was forgotten", "every entry id must be unique: give the new entry a new id"
            )
        self._backend.check_entry(entry)
        for source in entry.provenance.derived_from:
            if source not in self._entries and source not in pending:
                raise ParameterError(
                    "provenance.derived_from",
                    source,
                    "is not in the store",
                    "add source entries before the entries derived from them",
                )

    def _index(self, batch: list[MemoryEntry]) -> None:
        """Give each retriever of each entry's scope the entries (not yet in ``_entries``; the caller adds them)."""
        scopes = set(map(_SCOPE, batch))
        by_scope: dict[str | None, list[MemoryEntry]] = {}
        if len(scopes) == 1:
            by_scope[scopes.pop()] = batch
        else:
            for entry in batch:
                by_scope.setdefault(entry.scope, []).append(entry)
        for scope, entries in by_scope.items():
            stale = self._stale.get(scope, ())
            for key, retriever in self._partition(scope).items():
                if key in stale:  # rebuilt from _entries before its next search, these included
                    continue
                started = time.perf_counter()
                retriever.add(entries)
                self._index_seconds[key] += time.perf_counter() - started

    def _check_writable(self) -> None:
        self._backend.check_writable()

    def add(self, entries: MemoryEntry | Iterable[MemoryEntry]) -> None:
        """Add one entry or many; records one ``add`` event naming them all, in order.

        All or nothing: a batch with one bad entry adds none, and in a
        store on disk the batch is one transaction.
        """
        self._check_writable()
        if isinstance(entries, Entries) and self._columns_fit(entries):
            self._add_columns(entries)
            return
        # A lone dict, str or other non-iterable is one (bad) entry, reported as such below.
        if isinstance(entries, (MemoryEntry, Mapping, str)) or not isinstance(entries, Iterable):
            batch: list[Any] = [entries]
        else:
            batch = list(entries)
        if not self._all_new(batch):
            pending: set[str] = set()
            for entry in batch:  # the first bad entry raises, named
                self._check_new(entry, pending)
                pending.add(entry.id)
        else:
            for entry in filter(_METADATA, batch):  # what the bulk check leaves: metadata the export must carry
                check_metadata(entry)
        self._add(batch)

    def _all_new(self, batch: list[Any]) -> bool:
        """True when every entry of ``batch`` passes :meth:`_check_new`, checked in bulk (C loops, no Python code
        per entry): plain MemoryEntry records, ids unique, new and never forgotten, none derived, kept in memory.
        False means "check each entry" (which finds what is wrong, if anything is)."""
        if not batch or set(map(type, batch)) != {MemoryEntry} or not isinstance(self._backend, MemoryBackend):
            return False
        ids = list(map(_ID, batch))
        return (
            len(set(ids)) == len(ids)
            and self._entries.isdisjoint(ids)
            and self._forgotten.isdisjoint(ids)
            and not any(map(_DERIVED_FROM, batch))
        )

    def _columns_fit(self, entries: Entries) -> bool:
        """True when a batch of columns passes :meth:`_check_new` as a whole, checked in bulk (see :meth:`_all_new`):
        then it is kept as columns.  False means "add it as records" (which names what is wrong, if anything is)."""
        if not len(entries) or not isinstance(self._backend, MemoryBackend):
            return False
        if not entries.unique or any(p.derived_from for p in entries.distinct("provenance")):
            return False
        if not (self._entries.isdisjoint(entries.ids) and self._forgotten.isdisjoint(entries.ids)):
            return False
        # what the bulk check leaves: metadata the export must carry (check_metadata names the first problem)
        for row, metadata in entries.metadata_checks():  # a layered column: each shared part once
            if not _RESERVED.isdisjoint(metadata) or not json_clean(metadata, tuples=True):
                check_metadata(entries[row])
        return True

    def _add_columns(self, entries: Entries) -> None:
        """Index a checked batch of columns scope by scope and record its ``add`` event; the batch stays columns.

        A retriever with ``add_texts(ids, texts)`` (a :class:`~agentmemory.collection.columns.TextSource`) indexes
        straight from the columns; any other gets records: a plugin all of its scope's at once, a built-in one
        in runs of :data:`_RECORD_RUN` (made from the columns as it indexes, so they never all exist at once).
        """
        rows = entries.scope_rows()
        with self._changing(rows):
            for scope, at in rows.items():
                self._index_columns(scope, entries if len(rows) == 1 else entries.take(at))
            with self._backend.transaction():
                self.log.record("add", entries.ids)
        self._entries.add_columns(entries)

    def _index_columns(self, scope: str | None, entries: Entries) -> None:
        stale = self._stale.get(scope, ())
        for key, retriever in self._partition(scope).items():
            if key in stale:  # rebuilt from _entries before its next search, these included
                continue
            started = time.perf_counter()
            if _takes_columns(retriever):
                retriever.add_texts(entries.ids, entries.texts)  # type: ignore[attr-defined]
            elif isinstance(retriever, GuardedRetriever) or len(entries) <= _RECORD_RUN:
                retriever.add(list(entries))
            else:
                records = iter(entries)  # made chunk by chunk from the columns
                while run := list(islice(records, _RECORD_RUN)):
                    retriever.add(run)
            self._index_seconds[key] += time.perf_counter() - started

    def _add(self, batch: list[MemoryEntry], also: Any = None) -> None:
        """Index ``batch`` and record its ``add`` event (and ``also()``, in the same transaction)."""
        backend = self._backend
        ids = list(map(_ID, batch))
        with self._changing(set(map(_SCOPE, batch))):
            self._index(batch)
            with backend.transaction():
                event = self.log.record("add", ids)
                if not isinstance(backend, MemoryBackend):  # an in-memory store keeps no first versions
                    backend.record_versions(
                        event, [EntryVersion(e, 1, "add", event.event_id, event.timestamp) for e in batch]
                    )
                if also is not None:
                    also()
        self._entries.add_records(ids, batch)

    def derive(
        self,
        entry_id: str,
        text: str,
        sources: Sequence[str],
        *,
        tags: Sequence[str] = (),
        actor: str | None = None,
        ref: str | None = None,
    ) -> MemoryEntry:
        """Add a new entry derived from ``sources`` (a summary, a merged fact).

        Its provenance is ``source="derived"`` with ``derived_from=sources``;
        its scope is the sources' common scope; ``created_at`` is the store
        clock's time, read once: the ``derive`` event carries the same
        timestamp.  The event's ``entry_ids`` are the new id followed by the
        sources.
        """
        self._check_writable()
        if not sources:
            raise ParameterError("sources", sources, "is empty", "name at least one source entry id")
        for source in sources:
            if source not in self._entries:
                raise ParameterError("sources", source, "is not in the store", "derive only from stored entry ids")
        if (
            entry_id in self._entries
        ):  # checked before the clock is read, so a refused call leaves the log's clock alone
            raise ParameterError("entry.id", entry_id, "is already in the store", "every entry id must be unique")
        scopes = {self.get(s).scope for s in sources}
        if len(scopes) != 1:
            raise ParameterError("sources", list(sources), "span several scopes", "derive from entries of one scope")
        entry = MemoryEntry(
            id=entry_id,
            text=text,
            tags=tuple(tags),
            created_at=self.log.now(),
            provenance=Provenance(source="derived", ref=ref, actor=actor, derived_from=tuple(sources)),
            scope=scopes.pop(),
        )
        self._check_new(entry, set())
        backend = self._backend
        with self._changing({entry.scope}):
            self._index([entry])
            with backend.transaction():
                event = self.log.record("derive", [entry_id, *sources], timestamp=entry.created_at)
                backend.record_versions(event, [EntryVersion(entry, 1, "derive", event.event_id, event.timestamp)])
        self._entries[entry.id] = entry
        return entry

    def _check_changeable(self, what: str) -> None:
        """An entry can be updated or forgotten unless a retriever instance that cannot remove would need a rebuild."""
        for key, spec in self._specs.items():
            if spec.shared and not callable(getattr(spec.instance, "remove", None)):
                raise ParameterError(
                    "retrievers",
                    key,
                    f"is a retriever instance without remove(entry_ids), which cannot be rebuilt after {what}",
                    "pass a factory or a spec (a class, a registry name), or give the retriever a remove method",
                )

    def update(
        self,
        entry_id: str,
        text: str | None = None,
        *,
        tags: Sequence[str] | None = None,
        reason: str | None = None,
    ) -> MemoryEntry:
        """Make a new version of entry ``entry_id`` with a new ``text`` and/or ``tags``; return it.

        The new version keeps the id, scope, provenance and metadata; its
        ``created_at`` is the store clock's time, read once (the ``update``
        event carries the same).  It records the version it ``supersedes``
        (see :meth:`history`).  Retrieval sees the new version only.

        Raises:
            ParameterError: no such (live) entry, nothing to change, a text or
                tags of the wrong type.
        """
        self._check_writable()
        old = self.get(entry_id)
        if text is None and tags is None:
            raise ParameterError("update", entry_id, "changes nothing", "pass text=... and/or tags=...")
        if text is not None and not isinstance(text, str):
            raise ParameterError("text", text, "is not a str", "pass the new text of the entry")
        if tags is not None and (
            isinstance(tags, str) or not isinstance(tags, Sequence) or not all(isinstance(t, str) for t in tags)
        ):
            raise ParameterError("tags", tags, "is not a sequence of strings", "pass e.g. tags=('diet', 'food')")
        if reason is not None and not isinstance(reason, str):
            raise ParameterError("reason", reason, "is not a str", "say why in words, or leave it out")
        self._check_changeable("an update")
        new = replace(
            old,
            text=old.text if text is None else text,
            tags=old.tags if tags is None else tuple(tags),
            created_at=None,
        )
        self._backend.check_entry(new)
        new = replace(new, created_at=self.log.now())
        version = self._versions.get(entry_id, 1) + 1
        backend = self._backend
        with self._changing({old.scope}):
            self._unindex(old, new)
            with backend.transaction():
                event = self.log.record("update", [entry_id], timestamp=new.created_at)
                made = EntryVersion(new, version, "update", event.event_id, event.timestamp, version - 1, reason)
                backend.record_versions(event, [made], old)
        self._entries[entry_id] = new
        self._versions[entry_id] = version
        return new

    def forget(self, entry_id: str, reason: str | None = None) -> None:
        """Hide entry ``entry_id`` from every retrieval, for good; records a ``forget`` event.

        Its versions stay in :meth:`history` (``forget`` hides, it does not
        erase), and its id cannot be used again.

        Raises:
            ParameterError: no such (live) entry, or live entries are derived
                from it (forget those first, so no lineage breaks).
        """
        self._check_writable()
        old = self.get(entry_id)
        if reason is not None and not isinstance(reason, str):
            raise ParameterError("reason", reason, "is not a str", "say why in words, or leave it out")
        dependents = self._entries.derived_from(entry_id)
        if dependents:
            shown = ", ".join(repr(d) for d in dependents[:5]) + (" ..." if len(dependents) > 5 else "")
            raise ParameterError(
                "entry_id",
                entry_id,
                f"is a source of {shown}",
                "forget the entries derived from it first, so that no lineage breaks",
            )
        self._check_changeable("a forget")
        version = self._versions.get(entry_id, 1) + 1
        backend = self._backend
        with self._changing({old.scope}):
            self._unindex(old, None)
            with backend.transaction():
                event = self.log.record("forget", [entry_id])
                made = EntryVersion(old, version, "forget", event.event_id, event.timestamp, version - 1, reason)
                backend.record_versions(event, [made], old)
        del self._entries[entry_id]
        self._forgotten.add(entry_id)
        self._versions[entry_id] = version

    def history(self, entry_id: str) -> list[EntryVersion]:
        """Every version of ``entry_id``, oldest first: added or derived, each update, and its forget if forgotten.

        Raises:
            ParameterError: the store never held ``entry_id``.
        """
        if entry_id not in self._entries and entry_id not in self._forgotten:
            raise ParameterError("entry_id", entry_id, "is not in the store", "pass the id of a stored entry")
        return self._backend.history(entry_id, self._entries.get(entry_id))

    # -- reading --------------------------------------------------------
    def search(self, query: Query | str, k: int = 5, retriever: str = "bm25") -> list[Hit]:
        """The top ``k`` hits of ``retriever`` in the query's scope; records a ``retrieve`` event."""
        self._backend.check_open()
        k = check_positive_int("k", k)
        query = as_query(query)
        self._backend.check_query(query)
        hits = self.retriever(retriever, query.scope).search(query, k)
        self._record_retrieval(query, hits, k, retriever)
        return hits

    def _record_retrieval(self, query: Query, hits: list[Hit], k: int, key: str) -> None:
        """The ``retrieve`` event (with, on disk, the query and the scored hits); nothing on a read-only handle."""
        backend = self._backend
        if backend.readonly:
            return
        with backend.transaction():
            event = self.log.record(
                "retrieve", [h.entry_id for h in hits], query_id=query.id or None, retriever=key, query_text=query.text
            )
            versions = [self._versions.get(h.entry_id, 1) for h in hits]
            backend.record_retrieval(event, query, hits, k, self._specs[key].label, versions)

    def retrievals(
        self,
        retriever: str | None = None,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[Retrieval]:
        """The searches this store recorded (on disk only), oldest first; see :class:`~agentmemory.store.backend.Retrieval`.

        ``retriever`` keeps one retriever's (its key or label); ``since``
        (inclusive) and ``until`` (exclusive) bound their time.
        """
        self._backend.check_open()
        return select_retrievals(self._backend, retriever=retriever, since=since, until=until)

    def search_all(
        self,
        queries: Iterable[Query],
        k: int,
        retriever: str = "bm25",
        *,
        extra: int = 0,
        record: bool = True,
        progress: bool = False,
        durations: list[float] | None = None,
        clamp: bool = False,
    ) -> Iterator[tuple[Query, list[Hit]]]:
        """Every query's top ``k + extra`` hits of ``retriever``, each in its own scope, in the order given.

        The one loop over queries that batch retrieval and evaluation share.
        With ``record``, each query logs a ``retrieve`` event of its top
        ``k`` (the ``extra`` hits below the cutoff are looked at, not
        retrieved: evaluation uses one to see a tie across the cutoff).
        ``progress`` shows a tqdm bar (on stderr) labelled with the
        retriever's label.  ``durations``, when given, receives each search's
        wall-clock seconds (for latency figures; never part of an artifact).
        Without ``durations``, runs of consecutive queries of one scope go to
        the retriever's ``search_many`` (a declared capability: the same hits
        as ``search``), and each query's event is recorded after its run, in
        query order: the same events.
        ``clamp`` searches a retriever that ranks at most ``max_k`` entries
        (``hybrid``, ``recency``: their candidate depth) only that deep, instead
        of letting it refuse (for reports that ask for "the whole ranking").
        """
        self._backend.check_open()
        k = check_positive_int("k", k)
        if isinstance(extra, bool) or not isinstance(extra, int) or extra < 0:
            raise ParameterError("extra", extra, "is not an integer >= 0", "pass 0 or more extra hits")
        spec = self._specs.get(retriever)
        if spec is None:
            raise UnknownNameError("retriever", retriever, self._specs)
        items: Iterable[Query] = queries
        if progress:
            from tqdm.auto import tqdm

            items = tqdm(queries, desc=spec.label, unit="query")
        if durations is None:  # nothing timed per query: runs of one scope searched together
            if not record:
                yield from self._search_runs(items, k + extra, retriever, clamp)
                return
            # Each query is checked before its run is searched and its retrieval recorded after, in query
            # order: the same events as searching and recording query by query.
            for query, hits in self._search_runs(self._checked(items), k + extra, retriever, clamp):
                self._record_retrieval(query, hits[:k], k, retriever)
                yield query, hits
            return
        for query in items:
            if record:
                self._backend.check_query(query)
            searcher = self.retriever(retriever, query.scope)
            depth = _depth(searcher, k + extra, clamp)
            started = time.perf_counter()
            hits = searcher.search(query, depth)
            if durations is not None:
                durations.append(time.perf_counter() - started)
            if record:
                self._record_retrieval(query, hits[:k], k, retriever)
            yield query, hits

    def _checked(self, queries: Iterable[Query]) -> Iterator[Query]:
        """``queries``, each checked by the backend (:meth:`search_all` with records) as it is taken."""
        for query in queries:
            self._backend.check_query(query)
            yield query

    def _search_runs(
        self, queries: Iterable[Query], depth: int, key: str, clamp: bool
    ) -> Iterator[tuple[Query, list[Hit]]]:
        """:meth:`search_all` without records: each run of consecutive queries of one scope (up to
        :data:`_RUN_QUERIES`) goes to the retriever's ``search_many`` when it has one (the same hits as ``search``,
        computed together; a declared capability), else to ``search`` query by query.  A plugin is always asked
        query by query, so that the boundary checks and names each of its searches."""
        run: list[Query] = []
        for query in queries:
            if run and (query.scope != run[0].scope or len(run) == _RUN_QUERIES):
                yield from self._search_run(run, depth, key, clamp)
                run = []
            run.append(query)
        if run:
            yield from self._search_run(run, depth, key, clamp)

    def _search_run(self, run: list[Query], depth: int, key: str, clamp: bool) -> Iterator[tuple[Query, list[Hit]]]:
        searcher: Any = self.retriever(key, run[0].scope)  # search_many: a declared capability, checked below
        depth = _depth(searcher, depth, clamp)
        if not isinstance(searcher, GuardedRetriever) and has_capability(searcher, "search_many"):
            yield from zip(run, searcher.search_many(run, depth))
        else:
            for query in run:
                yield query, searcher.search(query, depth)

    def lineage(self, entry_id: str) -> list[MemoryEntry]:
        """Every entry ``entry_id`` was derived from, transitively, depth-first, each once."""
        out: list[MemoryEntry] = []
        seen = {entry_id}
        stack = list(reversed(self.get(entry_id).provenance.derived_from))
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            entry = self.get(current)
            out.append(entry)
            stack.extend(reversed(entry.provenance.derived_from))
        return out

    def describe(self, entry_id: str) -> dict[str, Any]:
        """The entry as a dict plus its resolved lineage ids (for printing)."""
        out = self.get(entry_id).to_dict()
        out["lineage"] = [e.id for e in self.lineage(entry_id)]
        return out


def dependency_order(entries: Sequence[MemoryEntry]) -> Sequence[MemoryEntry]:
    """``entries`` with every entry after the entries of the batch it is derived from; otherwise in order.

    Columns (:class:`~agentmemory.collection.columns.Entries`) of which none is derived come back as they are
    (no record made: a store keeps them as columns); anything else as a list.

    The order :meth:`MemoryStore.add` needs (a source before what is derived from it): how a collection
    is imported, and how an evaluation ``as_of`` adds each moment's entries.

    Raises:
        ParameterError: entries derived from each other in a cycle.
    """
    if isinstance(entries, Entries):
        if not any(p.derived_from for p in entries.distinct("provenance")):
            return entries
        entries = list(entries)
    if not any(map(_DERIVED_FROM, entries)):  # nothing derived: the order given (no Python code per entry)
        return list(entries)
    by_id = {e.id: e for e in entries}
    placed: set[str] = set()
    out: list[MemoryEntry] = []
    for entry in entries:
        if entry.id in placed:
            continue
        stack: list[tuple[MemoryEntry, int]] = [(entry, 0)]
        on_path = {entry.id}
        while stack:
            current, i = stack[-1]
            sources = [s for s in current.provenance.derived_from if s in by_id and s not in placed]
            if i < len(sources):
                stack[-1] = (current, i + 1)
                source = sources[i]
                if source in on_path:
                    raise ParameterError(
                        "derived_from",
                        source,
                        f"is part of a cycle through entry {current.id!r}",
                        "an entry cannot be derived, directly or not, from itself",
                    )
                stack.append((by_id[source], 0))
                on_path.add(source)
                continue
            stack.pop()
            on_path.discard(current.id)
            if current.id not in placed:
                placed.add(current.id)
                out.append(current)
    return out


if TYPE_CHECKING:
    Backend = MemoryBackend | SQLiteBackend
    """Either backend a store can have."""


def recorded_retriever(backend: Backend, retriever: str, option: str = "retriever") -> str:
    """The key of the recorded retriever named ``retriever`` (its key or its label, as the store recorded them).

    Raises:
        StoreError: an in-memory store (it records no searches), or a store that recorded none.
        UnknownNameError: no recorded retriever has that key or label (the message lists the keys).
        ParameterError: ``retriever`` is the label of several recorded retrievers.
    """
    if isinstance(backend, MemoryBackend):
        backend.retrievals()  # raises: an in-memory store records none
    assert not isinstance(backend, MemoryBackend)
    known = backend.recorded_retrievers()
    keys = sorted({key for key, label, _ in known if retriever in (key, label)})
    if len(keys) == 1:
        return keys[0]
    if not known:
        raise StoreError(backend.where, "has recorded no searches", "search it with a store opened for writing first")
    if not keys:
        raise UnknownNameError(option, retriever, sorted({key for key, _, _ in known}))
    raise ParameterError(option, retriever, f"is the label of several retrievers ({', '.join(keys)})", "pass a key")


def select_retrievals(
    backend: Backend,
    *,
    retriever: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    option: str = "retriever",
) -> list[Retrieval]:
    """The searches ``backend`` recorded, oldest first: of ``retriever`` (key or label) only, at or after
    ``since``, before ``until`` (what :meth:`MemoryStore.retrievals <agentmemory.store.core.MemoryStore.retrievals>`
    and :func:`agentmemory.store.transfer.retrievals` return).

    Raises:
        StoreError: an in-memory store (it records no searches).
        UnknownNameError: ``retriever`` names no recorded retriever (the message lists those recorded).
        ParameterError: ``since`` or ``until`` is not a datetime.
    """
    for name, moment in (("since", since), ("until", until)):
        if moment is not None and not isinstance(moment, datetime):
            raise ParameterError(name, moment, "is not a datetime", "pass a timezone-aware datetime, or None")
    if isinstance(backend, MemoryBackend):
        return backend.retrievals()
    key = None if retriever is None else recorded_retriever(backend, retriever, option)
    return backend.retrievals(retriever=key, since=since, until=until)
