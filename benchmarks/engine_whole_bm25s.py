"""Whole process, bm25s: read a collection folder's JSONL, index, write a TREC run.

    python benchmarks/engine_whole_bm25s.py --collection DIR --out RUN [--k 10]

``json.loads`` every line of ``corpus.jsonl`` and ``queries.jsonl``;
``bm25s.tokenize`` (no stopwords, no stemming: on the benchmark's texts the
same tokens as agentmemory's), ``bm25s.BM25(method="lucene", k1=1.2, b=0.75)``
with its default NumPy backend (what ``pip install bm25s`` runs), ``index``,
``retrieve`` of all queries in one call, one thread; the run written as
``query_id Q0 entry_id rank score bm25s`` (scores float32, hits scoring 0
dropped).  Entries with a ``scope`` get one index per scope, built when the
scope's queries are retrieved and dropped after (what LongMemEval harnesses do
with bm25s); each query searches its own scope.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--collection", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    import bm25s

    root = Path(args.collection)
    by_scope: dict = {}
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                ids, texts = by_scope.setdefault(obj.get("scope"), ([], []))
                ids.append(obj["_id"])
                texts.append(obj["text"])
    queries_by_scope: dict = {}
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                queries_by_scope.setdefault(obj.get("scope"), []).append(obj)
    out = []
    for scope, queries in queries_by_scope.items():
        ids, texts = by_scope.get(scope, ([], []))
        if not ids:
            continue
        retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        retriever.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)
        tokens = bm25s.tokenize([q["text"] for q in queries], stopwords=None, show_progress=False)
        k = min(args.k, len(ids))
        docs, scores = retriever.retrieve(tokens, k=k, n_threads=1, show_progress=False)
        for q, row, row_scores in zip(queries, docs.tolist(), scores.tolist()):
            rank = 0
            for d, s in zip(row, row_scores):
                if s > 0:
                    rank += 1
                    out.append(f"{q['_id']} Q0 {ids[d]} {rank} {s!r} bm25s\n")
        del retriever
    Path(args.out).write_text("".join(out), encoding="utf-8")


if __name__ == "__main__":
    main()
