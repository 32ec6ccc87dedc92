"""agentmemory's tag scorer against a full scan of every entry's tags (the exact reference).

Entries carry 1..3 tags (Zipf over 2,000 tags); queries give 1..3 tags.  The
full scan compares every entry's tag row with the query (O(N) per query, in
NumPy); the tag scorer only counts the postings of the query's tags.  Both
rank by (shared tags, id) descending.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import K, emit, peak_mb, query_passes, settle, summary, timed
from corpus import tag_numbers, tag_queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    from agentmemory import MemoryEntry, Query, TagScorer

    n = args.size
    rows = tag_numbers(n)
    names = [f"topic-{j}" for j in range(int(rows.max()) + 1 if rows.size else 0)]
    tag_lists = [tuple(names[t] for t in row if t >= 0) for row in rows.tolist()]
    qs = tag_queries()
    queries = [Query(f"q{i}", "", tags=tuple(f"topic-{t}" for t in q)) for i, q in enumerate(qs)]
    base = settle()
    records_s, entries = timed(lambda: [MemoryEntry(f"d{i:08d}", "", tags=t) for i, t in enumerate(tag_lists)])
    scorer = TagScorer()
    add_s, _ = timed(lambda: scorer.add(entries))
    peak = peak_mb()
    tops: list = []

    def run_all():
        tops.clear()
        tops.extend(scorer.search(q, K) for q in queries)

    qps = query_passes(run_all, args.passes, len(queries))
    ours = [[int(h.entry_id[1:]) for h in hits] for hits in tops]

    ref: list = []
    docs = np.arange(n)

    def scan_all():
        ref.clear()
        for q in qs:
            count = np.zeros(n, dtype=np.int64)
            for t in q:
                count += (rows == t).any(axis=1)
            hit = np.flatnonzero(count)
            order = np.lexsort((-docs[hit], -count[hit]))[:K]
            ref.append(hit[order].tolist())

    scan_qps = query_passes(scan_all, 1, len(qs), budget_s=60.0)
    result = summary(
        {
            "engine": "agentmemory-tags",
            "size": n,
            "build_s": records_s + add_s,
            "records_s": records_s,
            "add_s": add_s,
            "base_rss_mb": base,
            "peak_rss_mb": peak,
        },
        qps,
    )
    result["scan_qps"] = scan_qps[0]
    result["identical_top10"] = sum(a == b for a, b in zip(ours, ref)) / len(ref)
    emit(result)


if __name__ == "__main__":
    main()
