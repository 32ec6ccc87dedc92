"""The exact reference: Lucene-variant BM25 (agentmemory's formula and operation order) in plain NumPy.

Scores every document of every query into a dense float64 vector (terms in
query order, from 0.0), then ranks by (score, id) descending; ids are
``d%08d`` so id order is document-number order.  Independent of
agentmemory's code; it is also the "numpy dense" peer.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _common import K, emit, peak_mb, query_passes, settle, summary, timed
from corpus import corpus, queries

K1, B = 1.2, 0.75


def build(tokens: np.ndarray, offsets: np.ndarray, vocab: int):
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    key = np.unique(tokens.astype(np.int64) * n + doc, return_counts=True)
    term = key[0] // n
    ptr = np.searchsorted(term, np.arange(vocab + 1))
    docs = (key[0] - term * n).astype(np.int64)
    tfs = key[1].astype(np.float64)
    avgdl = float(lengths.sum()) / n
    norm = K1 * (1.0 - B + B * lengths.astype(np.float64) / avgdl)
    return n, ptr, docs, tfs, norm


def top_k(scores: np.ndarray, k: int) -> list[int]:
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        positive = np.flatnonzero(scores >= max(kth, np.nextafter(0.0, 1.0)))
    order = np.lexsort((-positive, -scores[positive]))  # score desc, then doc number (= id) desc
    return positive[order][:k].tolist()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=1)
    args = ap.parse_args()
    c = corpus(args.size)
    words = {w: i for i, w in enumerate(c.words)}
    qs = [[words[t] for t in q] for q in queries()]
    base = settle()
    seconds, (n, ptr, docs, tfs, norm) = timed(lambda: build(c.tokens, c.offsets, len(c.words)))
    peak = peak_mb()

    def score(q):
        out = np.zeros(n)
        counts: dict[int, int] = {}
        for t in q:
            counts[t] = counts.get(t, 0) + 1
        for t, qtf in counts.items():
            a, z = ptr[t], ptr[t + 1]
            df = z - a
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            d = docs[a:z]
            tf = tfs[a:z]
            out[d] += qtf * idf * tf * (K1 + 1.0) / (tf + norm[d])
        return out

    tops: list = []

    def run_all():
        tops.clear()
        tops.extend(top_k(score(q), K) for q in qs)

    qps = query_passes(run_all, args.passes, len(qs))
    emit(
        summary(
            {
                "engine": "numpy-dense",
                "size": args.size,
                "build_s": seconds,
                "base_rss_mb": base,
                "peak_rss_mb": peak,
                "top10": tops,
            },
            qps,
        )
    )


if __name__ == "__main__":
    main()
