"""tantivy (Python bindings): the pre-tokenised text joined by spaces, a whitespace tokenizer.

One indexing thread; the query is the same text, parsed by the index's query
parser (whitespace tokens, OR).  Timed queries return tantivy's hits (score,
address); the entry numbers for the overlap are read in an untimed pass.
"""

from __future__ import annotations

import argparse

from _common import K, emit, peak_mb, query_passes, settle, summary, timed
from corpus import corpus, queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    import tantivy

    c = corpus(args.size)
    texts = c.texts()
    qs = [" ".join(q) for q in queries()]
    base = settle()

    def build():
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
        sb.add_unsigned_field("num", stored=True, indexed=False)
        index = tantivy.Index(sb.build())
        writer = index.writer(heap_size=512_000_000, num_threads=1)
        for i, t in enumerate(texts):
            writer.add_document(tantivy.Document(body=t, num=i))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return index

    seconds, index = timed(build)
    peak = peak_mb()
    searcher = index.searcher()

    found: list = []

    def run_all():
        found.clear()
        found.extend(searcher.search(index.parse_query(q, ["body"]), K).hits for q in qs)

    qps = query_passes(run_all, args.passes, len(qs))
    tops = [
        [searcher.doc(addr)["num"][0] for _, addr in searcher.search(index.parse_query(q, ["body"]), K).hits]
        for q in qs
    ]
    emit(
        summary(
            {
                "engine": "tantivy",
                "size": args.size,
                "build_s": seconds,
                "base_rss_mb": base,
                "peak_rss_mb": peak,
                "segments": searcher.num_segments,
                "top10": tops,
            },
            qps,
        )
    )


if __name__ == "__main__":
    main()
