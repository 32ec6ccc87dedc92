"""The order an evaluation adds entries and answers queries in: all at once, or by time with ``as_of``
(:func:`time_slices`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agentmemory.collection import Collection
from agentmemory.records import Query
from agentmemory.store.core import dependency_order

__all__ = ["Slices", "time_slices"]


class Slices(list):
    """``(entries to add, queries to answer then)`` in time order, and each query's visible entries in its scope."""

    visible: dict[str, int]


def time_slices(collection: Collection, queries: Sequence[Query], as_of: bool, *, added: bool) -> Slices:
    """The order an evaluation adds entries and answers queries in.

    Without ``as_of``: every entry (unless ``added``: a reused store holds them
    already; sources before what is derived from them), then every query.  With it: entries without ``created_at`` first,
    then, for each distinct ``asked_at`` in ascending order, the entries created
    up to it and the queries asked then; the queries without ``asked_at`` last,
    after every entry.

    An entry exists once it was created *and* its sources exist: its time is the
    latest of its own ``created_at`` and its sources' times (an undated entry
    derived from a dated one comes with that source, not before it), and each
    slice adds sources before the entries derived from them.
    """
    slices = Slices()
    slices.visible = {}
    if not as_of:
        slices.append(((() if added else dependency_order(collection.entries)), tuple(queries)))  # columns stay columns
        return slices
    ordered = dependency_order(collection.entries)
    exists: dict[str, datetime | None] = {}
    for entry in ordered:
        dated = [exists[s] for s in entry.provenance.derived_from if exists.get(s) is not None]
        if entry.created_at is not None:
            dated.append(entry.created_at)
        exists[entry.id] = max(dated) if dated else None  # type: ignore[type-var]
    timed = sorted((e for e in ordered if exists[e.id] is not None), key=lambda e: exists[e.id])  # type: ignore[arg-type,return-value]
    pending = [e for e in ordered if exists[e.id] is None]
    by_time: dict[datetime | None, list[Query]] = {}
    for query in queries:
        by_time.setdefault(query.asked_at, []).append(query)
    times = sorted(t for t in by_time if t is not None)
    counts: dict[str | None, int] = {}
    position = 0
    for moment in [*times, None]:
        asked = by_time.get(moment, [])
        while position < len(timed) and (moment is None or exists[timed[position].id] <= moment):  # type: ignore[operator]
            pending.append(timed[position])
            position += 1
        for entry in pending:
            counts[entry.scope] = counts.get(entry.scope, 0) + 1
        if asked or pending:
            slices.append((tuple(pending), tuple(asked)))
        pending = []
        for query in asked:
            slices.visible[query.id] = counts.get(query.scope, 0)
    return slices
