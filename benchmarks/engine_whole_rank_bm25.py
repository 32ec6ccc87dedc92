"""Whole process, rank_bm25: read a collection folder's JSONL, build ``BM25Okapi``, write a TREC run.

    python benchmarks/engine_whole_rank_bm25.py --collection DIR --out RUN [--k 10] [--budget 30]

``json.loads`` every line, ``text.lower().split()`` (the same tokens on the
benchmark's texts), ``BM25Okapi(tokens, k1=1.2, b=0.75)`` (Okapi's IDF, not
Lucene's), then ``get_scores`` per query, top ``k`` by score.  rank_bm25
scores every entry per query in Python, so queries stop once ``--budget``
seconds of querying have passed (at least 3 queries): the process prints
``queries_run`` and the seconds spent querying on its last line, and the run
file holds only those queries.  The runner reports the measured whole process
and the time extrapolated to every query.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--collection", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--budget", type=float, default=30.0)
    args = ap.parse_args()
    import numpy as np
    from rank_bm25 import BM25Okapi

    root = Path(args.collection)
    ids, tokens = [], []
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                ids.append(obj["_id"])
                tokens.append(obj["text"].lower().split())
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    retriever = BM25Okapi(tokens, k1=1.2, b=0.75)
    out = []
    t0 = time.perf_counter()
    done = 0
    for q in queries:
        if done >= 3 and time.perf_counter() - t0 > args.budget:
            break
        scores = retriever.get_scores(q["text"].lower().split())
        top = np.argsort(-scores, kind="stable")[: args.k]
        for rank, d in enumerate(top.tolist(), start=1):
            out.append(f"{q['_id']} Q0 {ids[d]} {rank} {float(scores[d])!r} rank_bm25\n")
        done += 1
    query_s = time.perf_counter() - t0
    Path(args.out).write_text("".join(out), encoding="utf-8")
    print(json.dumps({"queries_run": done, "queries_total": len(queries), "query_s": query_s}))


if __name__ == "__main__":
    main()
