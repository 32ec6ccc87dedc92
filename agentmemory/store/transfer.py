"""A store's content to and from files: collections in, collections, runs and queries out.

What ``agentmemory store ...`` runs, as functions:

* :func:`import_collection` puts a collection's entries (one ``add``
  event), queries and judgments into a store, in one transaction;
  :func:`export_collection` writes a store back as a BEIR-style folder
  (:func:`agentmemory.collection.write_folder`).  The round trip is
  lossless: importing a folder and exporting it, twice, gives
  byte-identical folders.
* :func:`export_run` writes the searches a persistent store recorded with
  one retriever as a TREC run; :func:`export_queries` writes their queries
  as ``queries.jsonl``.  Judge those, and ``agentmemory eval --run``
  evaluates what the agent actually retrieved.  Each search's query id in
  both files is the id it was given, else
  :func:`~agentmemory.store.backend.anonymous_query_id` of its text and time.
* :func:`store_stats`: counts, first and last event, size on disk.

Functions that only read take a :class:`~agentmemory.store.core.MemoryStore` or
the path of a store file; a path is opened read-only, without building any
index, and closed again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, Union

from agentmemory.collection import Collection, check_split, query_line, write_folder
from agentmemory.errors import ParameterError, StoreError, quote
from agentmemory.files.atomic import atomic_write_text
from agentmemory.files.output_plan import OutputPlan, database_files
from agentmemory.files.trec import write_run
from agentmemory.records import Query
from agentmemory.store.backend import MemoryBackend, Retrieval
from agentmemory.store.core import MemoryStore, dependency_order, recorded_retriever, select_retrievals
from agentmemory.store.sqlite import SQLiteBackend

__all__ = [
    "UNINDEXED",
    "export_collection",
    "export_queries",
    "export_run",
    "import_collection",
    "retrievals",
    "store_collection",
    "format_stats",
    "store_stats",
]

Source = Union["MemoryStore", str, "PathLike[str]"]


class Unindexed:
    """A retriever that indexes nothing and finds nothing: for commands that move entries and never search."""

    name = "unindexed"
    label = "Unindexed"

    def add(self, entries: Any) -> None:
        """Nothing to index."""

    def search(self, query: Any, k: int) -> list[Any]:
        return []

    def params(self) -> dict[str, Any]:
        return {}


UNINDEXED = Unindexed
"""The retriever ``agentmemory store import`` opens a store with: importing 100,000 entries indexes none."""


@contextmanager
def _reading(source: Source) -> Iterator[MemoryBackend | SQLiteBackend]:
    """The backend of ``source``: a store's own, or a store file opened read-only (and closed after)."""
    if isinstance(source, MemoryStore):
        source._backend.check_open()
        yield source._backend
        return
    backend = SQLiteBackend.open(source, readonly=True)
    try:
        yield backend
    finally:
        backend.close()


def retrievals(
    source: Source,
    *,
    retriever: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    option: str = "retriever",
) -> list[Retrieval]:
    """The searches a persistent store recorded, oldest first (:func:`~agentmemory.store.core.select_retrievals`).

    ``retriever`` keeps one retriever's (its key or its label, as the
    store recorded them); ``since`` (inclusive) and ``until`` (exclusive)
    bound their time.

    Raises:
        StoreError: an in-memory store (it records no searches).
        UnknownNameError: ``retriever`` names no recorded retriever (the message lists those recorded).
    """
    with _reading(source) as backend:
        return select_retrievals(backend, retriever=retriever, since=since, until=until, option=option)


def _store_file(source: Source) -> Path | None:
    """The file ``source`` keeps its store in (``None`` for a store in memory)."""
    if isinstance(source, MemoryStore):
        return source.path
    return Path(source)


def _check_outputs(source: Source, outputs: Sequence[tuple[str, str | PathLike[str]]]) -> None:
    """Refuse an output (``(option, path)``) that is one of the store's files: the database, its ``-wal``,
    ``-shm`` or ``-journal``, or the writer's ``-lock`` (replacing the lock would let a second writer in)."""
    store = _store_file(source)
    if store is None:
        return
    plan = OutputPlan(database_files(store))
    for option, path in outputs:
        plan.file(option, path)


def _tag(key: str) -> str:
    return re.sub(r"\s+", "-", key) or "retriever"


def _by_query(found: list[Retrieval], where: str, what: str) -> dict[str, Retrieval]:
    """Each search under its run query id; the same id searched twice (by one retriever) is an error."""
    out: dict[str, Retrieval] = {}
    twice: list[str] = []
    for r in found:
        qid = r.run_query_id
        if qid in out:
            twice.append(qid)
        else:
            out[qid] = r
    if twice:
        shown = ", ".join(repr(q) for q in dict.fromkeys(twice)) if len(set(twice)) <= 5 else f"{len(set(twice))} ids"
        raise StoreError(
            where,
            f"{what} search the same query id more than once ({shown}): a run holds one ranking per query",
            "give each search its own query id, or pick one of them with --since/--until (since=, until=)",
        )
    return out


def export_run(
    source: Source,
    out: str | PathLike[str],
    retriever: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    option: str = "retriever",
) -> dict[str, Any]:
    """Write ``retriever``'s recorded searches as a TREC run file ``out``; return what was written.

    One ranking per query: each search's hits with the scores they had,
    under the query id the search was given (else its anonymous id); the
    run's tag is the retriever's key.  A search that found nothing writes
    no line (a run cannot hold an empty ranking; trec_eval -c counts it as 0).

    Returns:
        ``{"retriever": key, "label": ..., "queries": n, "empty": m, "hits": h}``.

    Raises:
        StoreError: one query id searched twice in the window.
        UnknownNameError: no such recorded retriever.
    """
    if not isinstance(retriever, str) or not retriever:
        raise ParameterError(option, retriever, "is not a retriever name", "name a recorded retriever (key or label)")
    _check_outputs(source, [("out", out)])
    with _reading(source) as backend:
        if isinstance(backend, MemoryBackend):
            backend.retrievals()
        assert not isinstance(backend, MemoryBackend)
        key = recorded_retriever(backend, retriever, option)
        found = backend.retrievals(retriever=key, since=since, until=until)
        where = backend.where
    ranked = _by_query(found, where, f"the recorded searches of {key}")
    write_run(out, {qid: [(h.entry_id, h.score) for h in r.hits] for qid, r in ranked.items()}, tag=_tag(key))
    labels = sorted({r.label for r in found})
    return {
        "retriever": key,
        "label": labels[-1] if labels else key,
        "queries": len(ranked),
        "empty": sum(1 for r in ranked.values() if not r.hits),
        "hits": sum(len(r.hits) for r in ranked.values()),
    }


def export_queries(
    source: Source,
    out: str | PathLike[str],
    *,
    retriever: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    option: str = "retriever",
) -> int:
    """Write the recorded searches' queries as ``queries.jsonl`` (our collection format); return how many.

    One line per query id (the id given, else the anonymous one), in the
    order first searched: ``_id``, ``text``, and the query's ``tags``,
    ``scope`` and ``group`` when it had them, plus ``asked_at``: the
    query's own time when it had one, else when it was searched.  A query
    id searched with different texts (or tags, scope, group) is an error.
    """
    _check_outputs(source, [("out", out)])
    found = retrievals(source, retriever=retriever, since=since, until=until, option=option)
    lines: dict[str, Query] = {}
    where = str(source) if isinstance(source, (str, PathLike)) else str(source.path)
    for r in found:
        q = r.query
        asked = q.asked_at or r.timestamp
        query = Query(
            r.run_query_id,
            q.text,
            tags=q.tags,
            scope=q.scope,
            group=q.group,
            asked_at=asked,
        )
        first = lines.get(query.id)
        if first is None:
            lines[query.id] = query
        elif (first.text, first.tags, first.scope, first.group) != (q.text, q.tags, q.scope, q.group):
            raise StoreError(
                where,
                f"query id {query.id!r} was searched with two different queries ({first.text!r} and {q.text!r})",
                "give different queries different ids, or pick one with --since/--until (since=, until=)",
            )
    text = "".join(_json_line(query_line(q)) for q in lines.values())
    atomic_write_text(out, text)
    return len(lines)


def _json_line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def import_collection(store: MemoryStore, collection: Collection, *, split: str = "test") -> dict[str, int]:
    """Put ``collection``'s entries, queries and judgments (as ``split``) into ``store``, all or nothing.

    The entries are added in the collection's order (an entry derived
    from a later one moves after it) by one ``add`` event; queries and
    judgments are kept beside them (:func:`store_collection` reads them back).

    Returns:
        ``{"entries": n, "queries": m, "judgments": j}``.

    Raises:
        ParameterError: an entry or query id the store already has; a query whose scope no entry (stored or
            imported) has, which an exported folder could not load back.
    """
    check_split(split)
    store._check_writable()
    backend = store._backend
    have = {q.id for q in backend.queries()}
    scopes = set(store.scopes) | {e.scope for e in collection.entries}
    for query in collection.queries:
        if query.id in have:
            raise ParameterError("query.id", query.id, "is already in the store", "every query id must be unique")
        if query.scope is not None and query.scope not in scopes:
            raise ParameterError(
                "query.scope",
                query.scope,
                f"of query {quote(query.id)} is the scope of no entry in the store or the collection",
                "a query finds only the entries of its own scope (leave scope out for the entries without one)",
            )
    entries = list(dependency_order(collection.entries))
    pending: set[str] = set()
    for entry in entries:
        store._check_new(entry, pending)
        pending.add(entry.id)
    qrels = {q: dict(judged) for q, judged in collection.qrels.items()}

    def keep() -> None:
        backend.write_queries(list(collection.queries))
        backend.write_judgments(split, qrels)

    if entries:
        store._add(entries, also=keep)
    else:
        with backend.transaction():
            keep()
    return {
        "entries": len(entries),
        "queries": len(collection.queries),
        "judgments": sum(len(j) for j in qrels.values()),
    }


def store_collection(source: Source, *, split: str = "test", name: str | None = None) -> Collection:
    """The store's content as a :class:`Collection`: its live entries (newest versions), queries and ``split``'s judgments."""
    if isinstance(source, MemoryStore):
        entries = tuple(source)
        backend = source._backend
        queries, judgments = backend.queries(), backend.judgments()
        where = source.path
    else:
        with _reading(source) as reader:
            with reader.snapshot():
                entries = tuple(reader.live_entries())
                queries, judgments = reader.queries(), reader.judgments()
        where = Path(source)
    qrels = judgments.get(split, {})
    return Collection(
        name=name or (where.stem if where is not None else "store"),
        entries=entries,
        queries=tuple(queries),
        qrels=MappingProxyType({q: MappingProxyType(d) for q, d in qrels.items()}),
        files=MappingProxyType({}),
    )


def export_collection(source: Source, folder: str | PathLike[str]) -> dict[str, str]:
    """Write the store as a BEIR-style folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

    One qrels file per split the store holds judgments of (``test``,
    empty but for its header, when it holds none), so the folder loads.
    Returns the written files (relative POSIX path -> sha256), sorted.

    Raises:
        StoreError: the store holds no live entry (a corpus without entries is
            a folder no loader reads, so nothing is written).
    """
    if isinstance(source, MemoryStore):
        splits = list(source._backend.judgments()) or ["test"]
    else:
        with _reading(source) as reader:
            splits = list(reader.judgments()) or ["test"]
    root = Path(folder)
    names = ["corpus.jsonl", "queries.jsonl", *(f"qrels/{split}.tsv" for split in splits)]
    _check_outputs(source, [("folder", root / name) for name in names])
    collections = [store_collection(source, split=split) for split in splits]
    if not collections[0].entries:
        where = _store_file(source) or "in-memory store"
        raise StoreError(
            where,
            "holds no entries, and a collection folder without entries does not load, so nothing was exported",
            "add entries first (agentmemory store import, or MemoryStore.add), then export",
        )
    written: dict[str, str] = {}
    for split, collection in zip(splits, collections):
        written.update(write_folder(collection, folder, split=split))
    return dict(sorted(written.items()))


def store_stats(source: Source) -> dict[str, Any]:
    """A store file's counts (see :meth:`agentmemory.store.sqlite.SQLiteBackend.stats`)."""
    with _reading(source) as backend:
        if isinstance(backend, MemoryBackend):
            raise StoreError(backend.where, "has no file to describe", "open a store file with MemoryStore.open(path)")
        return backend.stats()


def format_stats(stats: dict[str, Any]) -> str:
    """:func:`store_stats` as the lines ``agentmemory store stats`` prints."""

    def counts(mapping: dict[str, int]) -> str:
        return ", ".join(f"{k} {v:,}" for k, v in mapping.items()) or "none"

    events = stats["events"]
    size = stats["bytes"]
    rows = [
        ("store", f"{stats['path']} (schema version {stats['schema_version']})"),
        (
            "entries",
            f"{stats['entries']:,} live, {stats['forgotten']:,} forgotten ({stats['versions']:,} versions) "
            f"in {stats['scopes']:,} scope{'s' if stats['scopes'] != 1 else ''}",
        ),
        ("events", f"{sum(events.values()):,}: {counts(events)}"),
        ("first event", stats["first_event"] or "-"),
        ("last event", stats["last_event"] or "-"),
        ("searches", counts(stats["retrievals"])),
        ("collection", f"{stats['queries']:,} queries; judgments: {counts(stats['judgments'])}"),
        (
            "size on disk",
            f"{size['total']:,} bytes (database {size['database']:,}, wal {size['wal']:,}, shm {size['shm']:,})",
        ),
    ]
    return "\n".join(f"{name:<13} {value}" for name, value in rows)
