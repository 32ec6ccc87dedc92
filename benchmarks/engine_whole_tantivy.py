"""Whole process, tantivy: read a collection folder's JSONL, index with one thread, write a TREC run.

    python benchmarks/engine_whole_tantivy.py --collection DIR --out RUN [--k 10]

What a user's script does: ``json.loads`` every line of ``corpus.jsonl`` and
``queries.jsonl``, one ``tantivy.Document`` per entry (a ``whitespace``
tokenizer, so the same tokens as agentmemory's on the benchmark's texts;
frequencies indexed, the id stored), one writer thread, a commit; then per
query ``parse_query`` + ``search(q, k)`` and the stored ids read back; the run
written as ``query_id Q0 entry_id rank score tantivy``.  tantivy's BM25 is
k1 1.2, b 0.75 with quantised lengths.  Entries with a ``scope`` are not
supported here (the many-scopes row uses bm25s).
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
    import tantivy

    root = Path(args.collection)
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    sb.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    index = tantivy.Index(sb.build())
    writer = index.writer(heap_size=512_000_000, num_threads=1)
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                writer.add_document(tantivy.Document(body=obj["text"], id=obj["_id"]))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    out = []
    for q in queries:
        hits = searcher.search(index.parse_query(q["text"], ["body"]), args.k).hits
        for rank, (score, addr) in enumerate(hits, start=1):
            out.append(f"{q['_id']} Q0 {searcher.doc(addr)['id'][0]} {rank} {score!r} tantivy\n")
    Path(args.out).write_text("".join(out), encoding="utf-8")


if __name__ == "__main__":
    main()
