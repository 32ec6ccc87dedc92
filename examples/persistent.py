"""Memories that outlive the process: record an agent's sessions, reopen them, evaluate what it retrieved.

Run it with ``python examples/persistent.py``.  It works in a temporary
folder and leaves nothing behind:

1. Two agent sessions, a day apart, write to one store file
   (``MemoryStore.open``): memories are added, one is updated, one
   forgotten, and the agent searches with BM25.  Each search's query and
   scored hits are on disk when ``search`` returns.
2. A new process reopens the store read-only and shows what it holds: an
   entry's history, the searches it recorded.
3. ``agentmemory store export``, ``export-queries`` and ``export-run`` turn
   the store into a collection folder and the agent's searches into a TREC
   run.
4. Judgments written by hand (``JUDGMENTS``: which memories each search
   should have found) complete the folder, and ``agentmemory eval --run``
   scores what the agent actually retrieved beside BM25 run again on the
   final memories (its comparison table is printed).  They differ: on day
   one the agent found "vegetarian" in p1, which says "vegan" by the time
   BM25 runs again.

The clocks and id sources are deterministic, so the output is the same on
every run; in live use leave them out (wall clock, random ids).  Each
session gets its own ``HashIds`` namespace: ids must never repeat in a store.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from agentmemory import HashIds, MemoryEntry, MemoryStore, Provenance, Query, SteppingClock

JUDGMENTS = {  # query id -> the memories a good answer needs
    "dinner": ["p1"],
    "standup": ["p2"],
    "vegan-dinner": ["p1", "p6"],
    "lena": ["p4", "p6"],
    "deploy": ["p3"],
}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def said(entry_id: str, text: str, when: str, tags: tuple[str, ...] = ()) -> MemoryEntry:
    return MemoryEntry(
        entry_id, text, tags, at(when), Provenance(source="conversation", ref=f"chat#{entry_id}", actor="user")
    )


def day_one(path: Path) -> None:
    clock = SteppingClock(at("2026-03-02T09:00:00"), timedelta(minutes=1))
    with MemoryStore.open(path, clock=clock, ids=HashIds("persistent-example:day-1")) as store:
        store.add(
            [
                said("p1", "Maya is vegetarian and does not eat mushrooms.", "2026-03-01T19:12:00", ("diet",)),
                said("p2", "Maya's standup is at 9:30 on weekdays.", "2026-03-01T19:13:00", ("schedule",)),
                said("p3", "The orbit-api service deploys to Fly.io from main.", "2026-03-01T19:20:00", ("work",)),
                said("p4", "Maya's sister Lena visits in May.", "2026-03-01T19:25:00", ("family",)),
                said("p5", "Maya prefers window seats on flights.", "2026-03-01T19:30:00", ("travel",)),
            ]
        )
        store.search(Query("dinner", "What can I cook tonight for a vegetarian?"), k=3)
        store.search(Query("standup", "When is the standup?"), k=3)


def day_two(path: Path) -> None:
    clock = SteppingClock(at("2026-03-03T18:00:00"), timedelta(minutes=1))
    with MemoryStore.open(path, clock=clock, ids=HashIds("persistent-example:day-2")) as store:
        store.update("p1", "Maya is vegan now: no meat, dairy or eggs, and still no mushrooms.", reason="went vegan")
        store.forget("p5", reason="the user asked to forget travel preferences")
        store.add(said("p6", "Book a vegan restaurant for Lena's visit in May.", "2026-03-03T17:55:00", ("family",)))
        store.search(Query("vegan-dinner", "Is there a vegan dinner plan?"), k=3)
        store.search(Query("lena", "When does Lena visit, and what is planned?"), k=3)
        store.search(Query("deploy", "Where does orbit-api deploy to?"), k=3)


def reopen(path: Path) -> None:
    """What a new process sees: run as ``persistent.py --reopen STORE``."""
    with MemoryStore.open(path, readonly=True) as store:
        print(f"reopened: {len(store)} memories, {len(store.log)} events")
        print("history of p1:")
        for version in store.history("p1"):
            why = f"  ({version.reason})" if version.reason else ""
            print(
                f"  v{version.version} {version.change:<6} {version.timestamp:%Y-%m-%d %H:%M}  {version.entry.text}{why}"
            )
        print("searches recorded:")
        for r in store.retrievals():
            hits = ", ".join(f"{h.entry_id} {h.score:.2f}" for h in r.hits)
            print(f"  {r.timestamp:%Y-%m-%d %H:%M}  {r.query.id:<12} {hits}")


def agentmemory(*args: str, cwd: Path) -> str:
    """Run ``agentmemory ARGS`` in a new process, in ``cwd``; its output."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentmemory", *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return proc.stdout


def first_table(text: str) -> str:
    """eval's comparison table in ``text``: the first Markdown table with a System column (the definitions card's
    table of measures comes before it)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| System |"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[start:end])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        store = work / "agent.db"
        day_one(store)
        day_two(store)
        again = [sys.executable, __file__, "--reopen", str(store)]
        print(subprocess.run(again, capture_output=True, text=True, check=True).stdout)
        print(agentmemory("store", "export", "agent.db", "judged", cwd=work), end="")
        print(agentmemory("store", "export-queries", "agent.db", "--out", "judged/queries.jsonl", cwd=work), end="")
        print(agentmemory("store", "export-run", "agent.db", "--retriever", "bm25", "--out", "agent.trec", cwd=work))
        lines = [f"{q}\t{e}\t1\n" for q, entries in JUDGMENTS.items() for e in entries]
        (work / "judged" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(lines))
        report = agentmemory(
            "eval", "--collection", "judged", "--retrievers", "bm25", "--run", "agent=agent.trec", "--k", "3", cwd=work
        )
        print(first_table(report))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reopen"]:
        reopen(Path(sys.argv[2]))
    else:
        main()
