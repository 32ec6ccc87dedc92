"""agentmemory's BM25: build from texts, top-10 queries one call each, incremental add.

``--mode auto`` uses the compiled numba kernels (this benchmark compiles them
first, so it measures a warm cache: by default they are used from 150,000
entries on once cached); ``--mode off`` forces the pure NumPy path.  Build time includes creating the MemoryEntry records from the
texts (reported apart as ``records_s``); ``add_s`` is ``BM25.add`` alone.
"""

from __future__ import annotations

import argparse
import os
import time

from _common import K, emit, peak_mb, query_passes, settle, summary, timed
from corpus import corpus, queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--mode", choices=["auto", "off"], default="auto")
    ap.add_argument("--incremental", action="store_true", help="also add 1%% more entries and compare to a rebuild")
    args = ap.parse_args()
    os.environ["AGENTMEMORY_ACCEL"] = args.mode
    extra = args.size // 100 if args.incremental else 0
    c = corpus(args.size + extra)
    texts = c.texts()
    ids = c.ids()
    qs = [" ".join(q) for q in queries()]

    t0 = time.perf_counter()
    import agentmemory  # noqa: F401  (import cost is part of the JIT/warm-up column)
    from agentmemory import BM25, MemoryEntry
    from agentmemory.retrievers._index import accelerator

    accel = accelerator(10**9) if args.mode == "auto" else None
    if accel is not None:  # load (or compile) the kernels once, as bm25s's warm-up does
        os.environ["AGENTMEMORY_ACCEL"] = "on"
        warm = BM25()
        warm.add([MemoryEntry("a", "warm up the kernels"), MemoryEntry("b", "kernels")])
        warm.search("kernels", 1)
        os.environ["AGENTMEMORY_ACCEL"] = args.mode
    jit_s = time.perf_counter() - t0

    n = args.size
    base = settle()
    records_s, entries = timed(lambda: [MemoryEntry(i, t) for i, t in zip(ids[:n], texts[:n])])
    retriever = BM25()
    add_s, _ = timed(lambda: retriever.add(entries))
    peak = peak_mb()
    tops: list = []

    def run_all():
        tops.clear()
        tops.extend(retriever.search(q, K) for q in qs)

    qps = query_passes(run_all, args.passes, len(qs))
    result = {
        "engine": "agentmemory" if args.mode == "auto" else "agentmemory-numpy",
        "size": n,
        "build_s": records_s + add_s,
        "records_s": records_s,
        "add_s": add_s,
        "jit_s": jit_s,
        "accelerated": accelerator(n) is not None,
        "segments": len(retriever._segs.segments),
        "index_mb": retriever._segs.nbytes / 2**20,
        "base_rss_mb": base,
        "peak_rss_mb": peak,
        "top10": [[int(h.entry_id[1:]) for h in hits] for hits in tops],
    }
    if extra:
        before = [[(h.entry_id, h.score) for h in hits] for hits in tops]
        more_records_s, more = timed(lambda: [MemoryEntry(i, t) for i, t in zip(ids[n:], texts[n:])])
        inc_add_s, _ = timed(lambda: retriever.add(more))
        first_s, _ = timed(lambda: retriever.search(qs[0], K))
        inc_tops = [[(h.entry_id, h.score) for h in retriever.search(q, K)] for q in qs]
        inc_all = [retriever.score_all(q) for q in qs[:50]]
        inc_qps = query_passes(run_all, 3, len(qs))
        del retriever, entries, tops[:]
        rebuilt = BM25()
        rebuild_add_s, _ = timed(lambda: rebuilt.add([MemoryEntry(i, t) for i, t in zip(ids, texts)]))
        full_tops = [[(h.entry_id, h.score) for h in rebuilt.search(q, K)] for q in qs]
        full_all = [rebuilt.score_all(q) for q in qs[:50]]
        result["incremental"] = {
            "added": extra,
            "records_s": more_records_s,
            "add_s": inc_add_s,
            "first_query_s": first_s,
            "qps_after": sorted(inc_qps)[len(inc_qps) // 2],
            "rebuild_add_s": rebuild_add_s,
            "top10_equal_rebuild": inc_tops == full_tops,
            "score_all_equal_rebuild_50q": inc_all == full_all,
            "top10_ids_changed_by_add": sum([i for i, _ in a] != [i for i, _ in b] for a, b in zip(before, inc_tops)),
        }
    emit(summary(result, qps))


if __name__ == "__main__":
    main()
