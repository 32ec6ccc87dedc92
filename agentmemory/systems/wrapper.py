"""Any retriever as a memory system: keep each turn verbatim as an entry, search them with the retriever.

:class:`RetrieverSystem` is what ``--system bm25`` (or ``retriever[of=bm25]``)
runs.  ``ingest`` adds each turn as a :class:`~agentmemory.records.MemoryEntry`
with the turn's entry id, text, ``created_at`` and scope (a turn carries no
tags, so a tag-based retriever sees none); ``search`` asks the retriever for
the top ``k`` and returns each hit as a :class:`~agentmemory.systems.base.Memory`
with ``id`` and ``sources`` the hit's entry id and ``score`` its score, in the
retriever's order.  So under ``sources`` (or ``exact``) attribution it is
scored exactly as the retriever is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentmemory.records import MemoryEntry, Provenance, Query
from agentmemory.retrievers import make_retriever
from agentmemory.systems.base import Memory, Turn

__all__ = ["RetrieverSystem"]


class RetrieverSystem:
    """The retriever ``of`` (a retriever spec, e.g. ``"bm25[k1=0.9]"``) over the turns of one scope, verbatim."""

    label = "retriever as a system"

    def __init__(self, of: str, scope: str | None = None, workdir: Path | None = None) -> None:
        self.of = of
        self.scope = scope
        self.retriever = make_retriever(of)
        self._texts: dict[str, Turn] = {}

    def params(self) -> dict[str, Any]:
        return {"of": self.of, "retriever": self.retriever.params()}

    def ingest(self, turns: Sequence[Turn]) -> None:
        entries = [
            MemoryEntry(
                t.entry_id,
                t.text,
                created_at=t.created_at,
                provenance=Provenance(source="conversation", ref=t.entry_id, actor=t.role),
                scope=t.scope,
            )
            for t in turns
        ]
        self._texts.update((t.entry_id, t) for t in turns)
        self.retriever.add(entries)

    def search(self, query: str, k: int) -> list[Memory]:
        if not self._texts:
            return []
        hits = self.retriever.search(Query("", query, scope=self.scope), k)
        return [
            Memory(
                self._texts[h.entry_id].text,
                score=h.score,
                id=h.entry_id,
                sources=(h.entry_id,),
                created_at=self._texts[h.entry_id].created_at,
            )
            for h in hits
        ]

    def close(self) -> None:
        self._texts.clear()
