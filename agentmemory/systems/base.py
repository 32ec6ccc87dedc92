"""The :class:`MemorySystem` protocol: a memory system that ingests a conversation and answers searches itself.

A retriever (:mod:`agentmemory.retrievers`) searches *our* entries and
returns *our* ids.  A memory system keeps its own memories: it ingests the
conversation turn by turn, in time order (:meth:`MemorySystem.ingest`), may
keep, rewrite, merge or drop turns as it likes, and answers a search with
:class:`Memory` records carrying *its* texts and ids
(:meth:`MemorySystem.search`).  Attribution
(:mod:`agentmemory.systems.attribution`) maps those memories back to our
entries so the existing provenance relevance can score them.

A system spec resolves to a **factory**, called once per scope as
``factory(scope=..., workdir=Path)`` and returning a fresh system
(``workdir`` is a fresh temporary folder for that scope), so conversations
never leak into each other; :meth:`MemorySystem.close` is called after each
scope, and on error.

Optional members, declared in :data:`SYSTEM_CAPABILITIES` with their meanings,
are detected with ``hasattr``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

__all__ = ["SYSTEM_CAPABILITIES", "Memory", "MemorySystem", "Turn"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn handed to a system's ingest, in time order."""

    entry_id: str  # our entry id (MemoryEntry.id) - what attribution maps back to
    text: str
    role: str | None  # speaker or role ("user", "assistant", "Caroline", ...)
    created_at: datetime | None
    session: str | None  # session id within the scope, when the collection has sessions
    scope: str | None  # the conversation / haystack (MemoryEntry.scope)


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory a system returned, best first.

    ``sources`` may be given as any sequence of entry ids (a list, a tuple); a
    list becomes a tuple here, and the replay copies every memory it accepts
    into a plain record (:func:`agentmemory.systems.checks.plain_memories`).
    Text and ids must be strings UTF-8 can encode (no lone surrogate): they
    are written to UTF-8 files.
    """

    text: str
    score: float | None = None
    id: str | None = None  # the system's own id
    sources: tuple[str, ...] | None = None  # our entry ids it was derived from, if the system says
    created_at: datetime | None = None

    def __post_init__(self) -> None:
        if isinstance(self.sources, list):  # the record is frozen: set once, here
            object.__setattr__(self, "sources", tuple(self.sources))


@runtime_checkable
class MemorySystem(Protocol):
    """What a memory system must offer: ingest turns, search its memories, close.

    * ``ingest(turns)``: a batch of turns of one scope, in time order (see
      :mod:`agentmemory.systems.replay` for the order and the batch size);
      a fresh list on every call, the system's to keep or change.
    * ``search(query, k)``: at most ``k`` memories, best first.
    * ``close()``: release files, connections, subprocesses; called once
      after the scope, also when a call failed.
    """

    def ingest(self, turns: Sequence[Turn]) -> None: ...

    def search(self, query: str, k: int) -> Sequence[Memory]: ...

    def close(self) -> None: ...


SYSTEM_CAPABILITIES: dict[str, str] = {
    "batch_size": "int >= 1: the most turns per ingest call (default: all turns up to the next question at once)",
    "label": "str: the name shown in tables (default: the spec's key)",
    "label_for": "label_for(params) -> str, on the factory (a class method): the label from the spec's parameters "
    "(default: label, then the parameters)",
    "params": "params() -> dict: JSON-serialisable parameters, stated in the artifact",
    "reset": "reset(): forget everything ingested (the replay uses a fresh system per scope instead)",
}
"""Optional members of a memory system, by name, with their meanings."""
