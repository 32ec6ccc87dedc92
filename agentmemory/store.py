"""A memory store: entries, their provenance, retrievers and the event log.

Every change (``add``, ``derive``) and every retrieval (``search``) is
recorded in :attr:`MemoryStore.log`, an append-only
:class:`~agentmemory.events.EventLog`.  Retrievers are updated incrementally
on every addition.

**Scopes.**  The store is partitioned by :attr:`MemoryEntry.scope`: each
scope has its own retriever instances, so an entry is only found by queries
of its own scope (``Query.scope``; a plain string query has scope ``None``).
Entries and queries without a scope share the ``None`` partition.  Statistics
such as BM25's IDF and average length are per partition.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .errors import ParameterError, UnknownNameError, check_positive_int
from .events import Clock, EventLog, IdSource
from .records import Hit, MemoryEntry, Provenance, Query
from .retrievers import DEFAULT_RETRIEVERS, Retriever, RetrieverLike, RetrieverSpec, resolve_retrievers
from .retrievers.base import as_query

__all__ = ["MemoryStore"]


class MemoryStore:
    """Memories with provenance, searchable by every attached retriever.

    Args:
        retrievers: anything :func:`agentmemory.retrievers.resolve_retrievers`
            takes: registry names, specs with parameters (``"bm25[k1=0.9]"``),
            ``"package.module:attribute"``, factories or one retriever instance
            (default: ``bm25`` and ``tags``, always exactly these two).
            Each is reached by its key (:attr:`retriever_names`).
        clock, ids: where event timestamps and ids come from (default: wall
            clock and random ids; pass :class:`~agentmemory.events.SteppingClock`
            and :class:`~agentmemory.events.HashIds` for reproducible logs).

    A retriever *instance* serves one partition only: adding entries of a
    second scope is an error saying a factory is needed.
    """

    def __init__(
        self,
        retrievers: RetrieverLike | Sequence[RetrieverLike] | None = None,
        *,
        clock: Clock | None = None,
        ids: IdSource | None = None,
    ) -> None:
        self.log = EventLog(clock, ids)
        chosen = resolve_retrievers(DEFAULT_RETRIEVERS if retrievers is None else retrievers)
        self._specs: dict[str, RetrieverSpec] = {spec.key: spec for spec in chosen}
        self._entries: dict[str, MemoryEntry] = {}
        self._partitions: dict[str | None, dict[str, Retriever]] = {}
        self._index_seconds: dict[str, float] = dict.fromkeys(self._specs, 0.0)
        self._partition(None)  # builds each retriever once now: bad parameter values are refused here

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
        return iter(tuple(self._entries.values()))

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def get(self, entry_id: str) -> MemoryEntry:
        """The entry with ``entry_id``; ParameterError if there is none."""
        try:
            return self._entries[entry_id]
        except KeyError:
            raise ParameterError("entry_id", entry_id, "is not in the store", "pass the id of a stored entry") from None

    @property
    def retriever_names(self) -> tuple[str, ...]:
        """The keys of the attached retrievers, in the order given (``("bm25", "tags")`` by default)."""
        return tuple(self._specs)

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
        found = {e.scope for e in self._entries.values()}
        return ((None,) if None in found else ()) + tuple(sorted(s for s in found if s is not None))

    def retriever(self, name: str, scope: str | None = None) -> Retriever:
        """The retriever ``name`` of partition ``scope`` (to call ``search`` or ``explain`` directly).

        Searching through it records no event; :meth:`search` does.
        """
        if name not in self._specs:
            raise UnknownNameError("retriever", name, self._specs)
        return self._partition(scope)[name]

    # -- changes --------------------------------------------------------
    def _check_new(self, entry: MemoryEntry, pending: set[str]) -> None:
        if not isinstance(entry, MemoryEntry):
            raise ParameterError("entries", entry, "is not a MemoryEntry", "add agentmemory.MemoryEntry records")
        if entry.id in self._entries or entry.id in pending:
            raise ParameterError("entry.id", entry.id, "is already in the store", "every entry id must be unique")
        for source in entry.provenance.derived_from:
            if source not in self._entries and source not in pending:
                raise ParameterError(
                    "provenance.derived_from",
                    source,
                    "is not in the store",
                    "add source entries before the entries derived from them",
                )

    def _index(self, batch: list[MemoryEntry]) -> None:
        by_scope: dict[str | None, list[MemoryEntry]] = {}
        for entry in batch:
            by_scope.setdefault(entry.scope, []).append(entry)
        for scope, entries in by_scope.items():
            for key, retriever in self._partition(scope).items():
                started = time.perf_counter()
                retriever.add(entries)
                self._index_seconds[key] += time.perf_counter() - started
        for entry in batch:
            self._entries[entry.id] = entry

    def add(self, entries: MemoryEntry | Iterable[MemoryEntry]) -> None:
        """Add one entry or many; records one ``add`` event naming them all, in order."""
        # A lone dict, str or other non-iterable is one (bad) entry, reported as such below.
        if isinstance(entries, (MemoryEntry, Mapping, str)) or not isinstance(entries, Iterable):
            batch: list[Any] = [entries]
        else:
            batch = list(entries)
        pending: set[str] = set()
        for entry in batch:
            self._check_new(entry, pending)
            pending.add(entry.id)
        self._index(batch)
        self.log.record("add", [e.id for e in batch])

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
        self._index([entry])
        self.log.record("derive", [entry_id, *sources], timestamp=entry.created_at)
        return entry

    # -- reading --------------------------------------------------------
    def search(self, query: Query | str, k: int = 5, retriever: str = "bm25") -> list[Hit]:
        """The top ``k`` hits of ``retriever`` in the query's scope; records a ``retrieve`` event."""
        k = check_positive_int("k", k)
        query = as_query(query)
        hits = self.retriever(retriever, query.scope).search(query, k)
        self.log.record(
            "retrieve",
            [h.entry_id for h in hits],
            query_id=query.id or None,
            retriever=retriever,
            query_text=query.text,
        )
        return hits

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
        ``clamp`` searches a retriever that ranks at most ``max_k`` entries
        (``hybrid``, ``recency``: their candidate depth) only that deep, instead
        of letting it refuse (for reports that ask for "the whole ranking").
        """
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
        for query in items:
            searcher = self.retriever(retriever, query.scope)
            depth = k + extra
            if clamp:
                cap = getattr(searcher, "max_k", None)
                depth = min(depth, cap) if isinstance(cap, int) and cap >= 1 else depth
            started = time.perf_counter()
            hits = searcher.search(query, depth)
            if durations is not None:
                durations.append(time.perf_counter() - started)
            if record:
                self.log.record(
                    "retrieve",
                    [h.entry_id for h in hits[:k]],
                    query_id=query.id or None,
                    retriever=retriever,
                    query_text=query.text,
                )
            yield query, hits

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
