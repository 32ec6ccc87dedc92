"""bm25s with its numba backend (Lucene variant, k1 1.2, b 0.75), fed the token lists.

JIT compilation is timed apart (``jit_s``: indexing and querying a tiny
corpus compiles bm25s's numba CSC builder and scorer).  Queries go through
``retrieve`` in one batch call, single-threaded (its fastest one-thread form).
"""

from __future__ import annotations

import argparse
import time

from _common import K, emit, peak_mb, query_passes, settle, summary, timed
from corpus import corpus, queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    c = corpus(args.size)
    tokens = c.token_lists()
    qs = queries()
    t0 = time.perf_counter()
    import bm25s

    tiny = bm25s.BM25(k1=1.2, b=0.75, method="lucene", backend="numba")
    tiny.index(tokens[:200], show_progress=False)
    tiny.retrieve(qs[:5], k=K, n_threads=1, show_progress=False)
    jit_s = time.perf_counter() - t0
    del tiny
    base = settle()

    def build():
        r = bm25s.BM25(k1=1.2, b=0.75, method="lucene", backend="numba")
        r.index(tokens, show_progress=False)
        return r

    seconds, retriever = timed(build)
    peak = peak_mb()
    out = {}

    def run_all():
        out["docs"] = retriever.retrieve(qs, k=K, n_threads=1, show_progress=False).documents

    qps = query_passes(run_all, args.passes, len(qs))
    tops = [[int(d) for d in row] for row in out["docs"]]
    emit(
        summary(
            {
                "engine": "bm25s-numba",
                "size": args.size,
                "build_s": seconds,
                "jit_s": jit_s,
                "base_rss_mb": base,
                "peak_rss_mb": peak,
                "top10": tops,
            },
            qps,
        )
    )


if __name__ == "__main__":
    main()
