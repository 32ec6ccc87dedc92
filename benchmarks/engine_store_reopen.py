"""Reopening a persistent store and answering a first query, against building the same index from JSONL.

Setup (untimed, once per run): the benchmark corpus's first ``--size``
entries, each with its text, 1-3 tags, a ``created_at`` and a provenance,
written as a collection folder (``corpus.jsonl``) and imported into a store
file with :func:`agentmemory.store.transfer.import_collection` (what ``agentmemory
store import`` runs; its time is reported as ``import_s``).

Timed, each in a fresh interpreter after ``import agentmemory``, median of
``--passes``:

* ``jsonl``: ``load_collection(folder)``, a ``MemoryStore()`` (BM25 and the
  tag scorer), ``add`` of every entry, and one search: building the index
  from the JSONL;
* ``reopen``: ``MemoryStore.open(path, readonly=True)`` (every entry read
  back, BM25 and the tag scorer built from them) and one search;
* ``read``: only reading the entries back (``SQLiteBackend.live_entries``),
  the part of ``reopen`` that JSON parsing is to ``jsonl``.

Both searches give the same top 10 (checked).  Files are in the OS cache
(the setup has just written them), as they are for an agent restarting.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import HERE, emit
from corpus import corpus, queries, tag_numbers

CHILD = r"""
import json, sys, time
mode, folder, store_path, query = sys.argv[1:5]
import agentmemory
from agentmemory import MemoryStore, load_collection
t0 = time.perf_counter()
if mode == "jsonl":
    store = MemoryStore()
    store.add(load_collection(folder).entries)
    hits = store.search(query, k=10)
elif mode == "reopen":
    store = MemoryStore.open(store_path, readonly=True)
    hits = store.search(query, k=10)
else:
    from agentmemory.store.sqlite import SQLiteBackend
    backend = SQLiteBackend.open(store_path, readonly=True)
    hits = backend.live_entries()[:0]
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "top10": [[h.entry_id, h.score] for h in hits]}))
"""


def write_collection(folder: Path, n: int) -> None:
    """The corpus's first ``n`` entries as a collection folder, in our format."""
    c = corpus(n)
    texts, ids, tags = c.texts(), c.ids(), tag_numbers(n)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for i, (entry_id, text) in enumerate(zip(ids, texts)):
            line = {
                "_id": entry_id,
                "text": text,
                "tags": [f"topic-{t}" for t in tags[i] if t >= 0],
                "created_at": f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
                "provenance": {"source": "conversation", "ref": f"chat/{i // 40}#msg-{i % 40}", "actor": "user"},
            }
            out.write(json.dumps(line) + "\n")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")


def child(mode: str, folder: Path, store: Path, query: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(folder), str(store), query],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    query = " ".join(queries()[0])
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        folder, store = Path(tmp) / "collection", Path(tmp) / "store.db"
        write_collection(folder, args.size)

        from agentmemory import MemoryStore, load_collection
        from agentmemory.store.transfer import UNINDEXED, import_collection

        t0 = time.perf_counter()
        with MemoryStore.open(store, UNINDEXED) as target:
            import_collection(target, load_collection(folder))
        import_s = time.perf_counter() - t0
        child("jsonl", folder, store, query)  # warm up: numba's cache, the OS's file cache
        runs: dict[str, list[dict]] = {"jsonl": [], "reopen": [], "read": []}
        for _ in range(args.passes):
            for mode in runs:
                runs[mode].append(child(mode, folder, store, query))
        same = all(r["top10"] == runs["jsonl"][0]["top10"] for r in runs["jsonl"] + runs["reopen"])
        result = {
            "engine": "store-reopen",
            "size": args.size,
            "passes": args.passes,
            "import_s": import_s,
            "jsonl_mb": (folder / "corpus.jsonl").stat().st_size / 2**20,
            "store_mb": store.stat().st_size / 2**20,
            "same_top10": same,
        }
        for mode, measured in runs.items():
            seconds = [m["seconds"] for m in measured]
            result[f"{mode}_s"] = statistics.median(seconds)
            result[f"{mode}_passes"] = [round(s, 3) for s in seconds]
        result["ratio"] = result["reopen_s"] / result["jsonl_s"]
    emit(result)


if __name__ == "__main__":
    main()
