"""Typed records at the edges: memories, queries, hits and events.

Files and dicts are converted into these frozen dataclasses once, when they
are loaded; nothing inside the library passes raw dicts around.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .errors import ParameterError

__all__ = ["Event", "Hit", "MemoryEntry", "Provenance", "Query", "is_aware"]


def is_aware(value: object) -> bool:
    """True when ``value`` is a :class:`datetime` that knows its UTC offset (so ages can be computed from it)."""
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() is not None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from.

    Attributes:
        source: the kind of source (``"conversation"``, ``"tool"``, ``"document"``,
            ``"derived"``, ...).
        ref: a reference inside that source (a message id, a file and line, a URL).
        actor: who produced it (``"user"``, ``"assistant"``, a tool name).
        derived_from: ids of the memory entries this one was derived from, in order.
    """

    source: str = "unknown"
    ref: str | None = None
    actor: str | None = None
    derived_from: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "ref": self.ref,
            "actor": self.actor,
            "derived_from": list(self.derived_from),
        }


class _EmptyMapping(Mapping[str, Any]):
    """An immutable, hashable empty mapping: the one shared default for ``metadata``.

    A fresh ``dict()`` per record costs allocation and garbage-collector
    time that shows at a million entries; one shared immutable empty
    mapping costs nothing and cannot be mutated by accident.
    """

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "{}"


NO_METADATA: Mapping[str, Any] = _EmptyMapping()
UNKNOWN_PROVENANCE = Provenance()


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory: an id, its text, tags, when it was created and where it came from.

    ``created_at`` is a timezone-aware :class:`datetime` (or ``None`` when unknown).
    ``scope`` partitions a store: an entry is only searchable by queries of
    the same scope (a LoCoMo conversation, a user); ``None`` is the shared
    default partition.  ``metadata`` keeps any extra fields a loader found.
    """

    id: str
    text: str
    tags: tuple[str, ...] = ()
    created_at: datetime | None = None
    provenance: Provenance = UNKNOWN_PROVENANCE
    scope: str | None = None
    metadata: Mapping[str, Any] = NO_METADATA

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "tags": list(self.tags),
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
            "provenance": self.provenance.to_dict(),
        }
        if self.scope is not None:
            out["scope"] = self.scope
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True, slots=True)
class Query:
    """A query: an id, its text and, optionally, the tags it asks about.

    ``tags is None`` means the query carries no tags; the tag scorer then
    derives them from the text (see :mod:`agentmemory.retrievers.tags`).
    ``scope`` restricts the search to entries of the same scope (see
    :class:`MemoryEntry`); ``group`` names the query's group in reports (a
    LoCoMo category, say), ``None`` for none.  ``asked_at`` is when the
    query was asked, a timezone-aware :class:`datetime` (``None`` when
    unknown); time-aware retrievers (``recency``) measure ages from it.

    Raises:
        ParameterError: ``asked_at`` is not a timezone-aware datetime.
    """

    id: str
    text: str
    tags: tuple[str, ...] | None = None
    scope: str | None = None
    group: str | None = None
    metadata: Mapping[str, Any] = NO_METADATA
    asked_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.asked_at is not None and not is_aware(self.asked_at):
            raise ParameterError(
                "asked_at",
                self.asked_at,
                "is not a timezone-aware datetime",
                "pass e.g. datetime(2024, 5, 8, 13, 56, tzinfo=timezone.utc), or None when unknown",
            )


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result: the entry id, its score and its 1-based rank."""

    entry_id: str
    score: float
    rank: int

    def to_dict(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "score": self.score, "rank": self.rank}


@dataclass(frozen=True, slots=True)
class Event:
    """One line of a memory store's append-only log.

    ``type`` is ``"add"`` (entries added), ``"derive"`` (an entry derived from
    others), ``"update"`` (a new version of ``entry_ids[0]``), ``"forget"``
    (``entry_ids[0]`` forgotten) or ``"retrieve"`` (a search; ``entry_ids``
    are the hits in rank order, ``query_id`` the query's id (``None`` for a
    free-text query), ``query_text`` what was asked and ``retriever`` who
    answered).
    """

    event_id: str
    type: str
    timestamp: datetime
    entry_ids: tuple[str, ...] = ()
    query_id: str | None = None
    retriever: str | None = None
    query_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "type": self.type,
            "timestamp": self.timestamp.isoformat(),
            "entry_ids": list(self.entry_ids),
            "query_id": self.query_id,
            "query_text": self.query_text,
            "retriever": self.retriever,
        }
