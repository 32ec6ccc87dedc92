"""Provenance: a memory derived from others, the event log, and a hit traced to its sources.

Run it with ``python examples/provenance.py``.  An assistant keeps two notes
from a chat, later writes a weekly summary derived from them, and then a
summary of summaries.  A search finds the newest summary; ``store.lineage``
walks back to the chat messages it rests on.  The clock and ids are
deterministic, so the output is the same on every run.
"""

from __future__ import annotations

from datetime import datetime, timezone

from agentmemory import HashIds, MemoryEntry, MemoryStore, Provenance, SteppingClock


def main() -> None:
    store = MemoryStore(
        clock=SteppingClock(datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)),
        ids=HashIds("provenance-example"),
    )
    store.add(
        [
            MemoryEntry(
                id="chat-1",
                text="Maya said she is vegetarian.",
                tags=("diet",),
                provenance=Provenance(source="conversation", ref="chat/2026-01-08#msg-14", actor="user"),
            ),
            MemoryEntry(
                id="chat-2",
                text="Maya batch-cooks lentil curry on Sundays.",
                tags=("food",),
                provenance=Provenance(source="conversation", ref="chat/2026-02-01#msg-3", actor="user"),
            ),
        ]
    )
    store.add(
        MemoryEntry(
            id="cal-1",
            text="Dinner with the orbit-api team on Friday at 19:00.",
            tags=("work", "food"),
            provenance=Provenance(source="tool", ref="calendar/event-team-dinner", actor="assistant"),
        )
    )
    store.derive(
        "summary-w05",
        "Weekly summary: vegetarian diet, plans meals and cooks lentil curry.",
        ["chat-1", "chat-2"],
        tags=("diet", "food"),
        actor="assistant",
        ref="weekly-summary/2026-W05",
    )
    store.derive(
        "profile",
        "Profile: vegetarian; eats out with the team on Fridays.",
        ["summary-w05", "cal-1"],
        tags=("diet",),
        actor="assistant",
        ref="profile/v1",
    )

    print("entries:")
    for entry in store:
        p = entry.provenance
        origin = f"derived from {', '.join(p.derived_from)}" if p.derived_from else f"{p.source} {p.ref}"
        print(f"  {entry.id:<12} {origin}")

    hits = store.search("vegetarian profile", k=1, retriever="bm25")
    top = hits[0]
    print(f"\nsearch 'vegetarian profile' -> {top.entry_id} (score {top.score:.4f})")
    print("traced back to its sources:")
    for source in store.lineage(top.entry_id):
        p = source.provenance
        print(f"  {source.id:<12} {p.source:<12} {p.ref}  ({p.actor})")

    print("\nevent log:")
    for event in store.log:
        print(f"  {event.timestamp.isoformat()}  {event.event_id}  {event.type:<8} {', '.join(event.entry_ids)}")


if __name__ == "__main__":
    main()
