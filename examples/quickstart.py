"""Quickstart: a memory store, a few memories with provenance, two retrievers.

Run it with ``python examples/quickstart.py``.  The clock and the id source
are deterministic (:class:`~agentmemory.SteppingClock`,
:class:`~agentmemory.HashIds`), so the output is the same on every run; in
live use leave them out and the store uses the wall clock and random ids.
"""

from __future__ import annotations

from datetime import datetime, timezone

from agentmemory import HashIds, MemoryEntry, MemoryStore, Provenance, Query, SteppingClock


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def main() -> None:
    store = MemoryStore(
        ["bm25", "tags"],
        clock=SteppingClock(at("2026-03-01T09:00:00")),
        ids=HashIds("quickstart"),
    )
    store.add(
        [
            MemoryEntry(
                id="n1",
                text="Maya is vegetarian and does not eat mushrooms.",
                tags=("diet", "food"),
                created_at=at("2026-01-08T19:12:00"),
                provenance=Provenance(source="conversation", ref="chat/2026-01-08#msg-14", actor="user"),
            ),
            MemoryEntry(
                id="n2",
                text="Team standup is at 9:30 on weekdays; book nothing before 10.",
                tags=("schedule", "work"),
                created_at=at("2026-01-09T08:40:00"),
                provenance=Provenance(source="conversation", ref="chat/2026-01-09#msg-3", actor="user"),
            ),
            MemoryEntry(
                id="n3",
                text="Batch-cooks lentil curry on Sundays.",
                tags=("food",),
                created_at=at("2026-02-03T09:00:00"),
                provenance=Provenance(source="tool", ref="calendar/recurring-sunday", actor="assistant"),
            ),
            MemoryEntry(
                id="n4",
                text="The orbit-api project deploys to Fly.io from the main branch.",
                tags=("project-orbit", "deployment"),
                created_at=at("2026-01-12T10:05:00"),
                provenance=Provenance(source="document", ref="orbit-api/README.md#L1-L20", actor="assistant"),
            ),
        ]
    )
    print(f"{len(store)} memories in the store")

    query = Query(id="dinner", text="What does Maya eat for dinner?", tags=("food",))
    for retriever in ("bm25", "tags"):
        print(f"\n{retriever}: {query.text}")
        for hit in store.search(query, k=3, retriever=retriever):
            entry = store.get(hit.entry_id)
            p = entry.provenance
            print(f"  {hit.rank}. {hit.entry_id}  score={hit.score:.4f}  {entry.text}")
            print(f"     from {p.source} {p.ref} by {p.actor}")

    print("\nevent log:")
    for event in store.log:
        print(f"  {event.timestamp.isoformat()}  {event.event_id}  {event.type:<8} {', '.join(event.entry_ids)}")


if __name__ == "__main__":
    main()
