"""The turns a memory system is given, whatever the collection's granularity, and the entry each turn counts for.

Systems always ingest **turns**.  When each entry of a collection is one
turn (LoCoMo, a BEIR-style folder, LongMemEval at turn granularity), the
turns are the entries.  When entries are coarser (LongMemEval at session
granularity), :attr:`~agentmemory.collection.Collection.turns`
gives the turns each entry holds, and a memory attributed to a turn counts
for the entry holding it: ``entry_of(t)``.  Attribution
(:mod:`agentmemory.systems.attribution`) works on turns, then maps each set
of turns ``A`` up to ``dedup(entry_of(t) for t in A)`` (first-seen order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentmemory.collection import Collection
from agentmemory.errors import ParameterError, quote
from agentmemory.records import MemoryEntry

__all__ = ["TurnIndex", "turn_index"]


@dataclass(frozen=True)
class TurnIndex:
    """A collection's turns by scope (collection order), each turn's scope, and the entry each turn counts for.

    ``coarse`` is true when some entry holds turns other than itself
    (``entry_of`` is then not the identity).
    """

    by_scope: Mapping[str | None, tuple[MemoryEntry, ...]]
    scope_of: Mapping[str, str | None]
    entry_of: Mapping[str, str]
    coarse: bool

    def up(self, turn_ids: tuple[str, ...]) -> tuple[str, ...]:
        """The entries holding ``turn_ids``, each once, in the order first reached."""
        if not self.coarse:
            return turn_ids
        return tuple(dict.fromkeys(self.entry_of[t] for t in turn_ids))


def turn_index(collection: Collection) -> TurnIndex:
    """The turns of ``collection``: ``collection.turns[entry.id]`` where given, else the entry itself.

    Raises:
        ParameterError: two turns of the collection have the same id (a
            memory attributed to it would count for either entry).
    """
    by_scope: dict[str | None, list[MemoryEntry]] = {}
    scope_of: dict[str, str | None] = {}
    entry_of: dict[str, str] = {}
    held = collection.turns
    coarse = False
    for entry in collection.entries:
        turns = held.get(entry.id) if held else None
        if turns is None:
            turns = (entry,)
        else:
            coarse = True
        bucket = by_scope.setdefault(entry.scope, [])
        for turn in turns:
            if turn.id in entry_of:
                raise ParameterError(
                    "collection",
                    collection.name,
                    f"has the turn id {quote(turn.id, 60)} in entries {quote(entry_of[turn.id], 60)} and "
                    f"{quote(entry.id, 60)}",
                    "give every turn its own id (a memory system's memories are attributed to turns)",
                )
            entry_of[turn.id] = entry.id
            scope_of[turn.id] = entry.scope
            bucket.append(turn)
    return TurnIndex({s: tuple(t) for s, t in by_scope.items()}, scope_of, entry_of, coarse)
