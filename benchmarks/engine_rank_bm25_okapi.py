"""rank_bm25's BM25Okapi (k1 1.2, b 0.75), fed the token lists; queries time-budgeted.

rank_bm25 scores every document in Python/NumPy per query, so only as many
queries as fit in ``--budget`` seconds are run (at least 3), and q/s is
measured over those.  Its IDF is Okapi's (negative IDFs replaced by
0.25 x mean IDF), not Lucene's, so its top 10 differs from the exact
Lucene reference by formula, not by error.  Overlap is over the queries run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import K, emit, peak_mb, settle, summary, timed
from corpus import corpus, queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--budget", type=float, default=20.0)
    args = ap.parse_args()
    from rank_bm25 import BM25Okapi

    c = corpus(args.size)
    tokens = c.token_lists()
    qs = queries()
    base = settle()
    seconds, retriever = timed(lambda: BM25Okapi(tokens, k1=1.2, b=0.75))
    peak = peak_mb()
    tops = []
    t0 = time.perf_counter()
    while len(tops) < len(qs) and (len(tops) < 3 or time.perf_counter() - t0 < args.budget):
        scores = retriever.get_scores(qs[len(tops)])
        order = np.lexsort((-np.arange(len(scores)), -scores))[:K]
        tops.append([int(d) for d in order if scores[d] > 0])
    elapsed = time.perf_counter() - t0
    emit(
        summary(
            {
                "engine": "rank_bm25",
                "size": args.size,
                "build_s": seconds,
                "base_rss_mb": base,
                "peak_rss_mb": peak,
                "queries_run": len(tops),
                "top10": tops,
            },
            [len(tops) / elapsed],
        )
    )


if __name__ == "__main__":
    main()
