"""``hybrid[of=bm25+dense]`` (RRF, depth 100) against the sum of its parts.

The corpus's texts (``corpus.py``) go to a ``Hybrid`` over BM25 (numba
kernels when installed, as the BM25 row) and dense with the default
``wordllama`` encoder (embeddings computed here, into a temporary cache
folder, so the build includes encoding every text).  One query at a time,
top 10, passes alternating:

* **hybrid**: ``hybrid.search(q, 10)``: each component's top 100 plus ties
  (it asks each for 101 hits), the union fused by reciprocal rank;
* **bm25@101** and **dense@101**: the hybrid's own components asked
  ``search(q, 101)`` directly, what the hybrid asks of them;

so hybrid - (bm25@101 + dense@101) is what fusing costs.  One thread (BLAS
and the tokenizer's pool off through the environment).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from _common import K, emit, os_threads, peak_mb, settle, single_thread, timed

DEPTH = 100


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    single_thread()
    cache = tempfile.TemporaryDirectory(prefix="agentmemory-bench-")
    os.environ["AGENTMEMORY_CACHE"] = cache.name  # no embeddings reused from, or left in, the user's cache
    from corpus import corpus, queries

    from agentmemory import MemoryEntry
    from agentmemory.retrievers import Hybrid, make_retriever
    from agentmemory.retrievers._index import accelerator

    if accelerator(10**9) is not None:  # load (or compile) the BM25 kernels once, as the BM25 engine does
        warm = make_retriever("bm25")
        os.environ["AGENTMEMORY_ACCEL"] = "on"
        warm.add([MemoryEntry("a", "warm up the kernels"), MemoryEntry("b", "kernels")])
        warm.search("kernels", 1)
        del os.environ["AGENTMEMORY_ACCEL"]
    c = corpus(args.size)
    entries = [MemoryEntry(i, t) for i, t in zip(c.ids(), c.texts())]
    qs = [" ".join(q) for q in queries()]
    base = settle()
    hybrid = Hybrid(of=("bm25", "dense"), method="rrf", depth=DEPTH)
    build_s, _ = timed(lambda: hybrid.add(entries))
    peak = peak_mb() - base
    bm25, dense = hybrid._components
    runs = {
        "hybrid": lambda q: hybrid.search(q, K),
        "bm25": lambda q: bm25.search(q, DEPTH + 1),
        "dense": lambda q: dense.search(q, DEPTH + 1),
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    out: dict = {}
    for _ in range(args.passes):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            out[name] = [fn(q) for q in qs]
            rates[name].append(len(qs) / (time.perf_counter() - t0))
    ms = {name: 1000 / statistics.median(r) for name, r in rates.items()}
    union = statistics.fmean(
        len({h.entry_id for h in a} | {h.entry_id for h in b}) for a, b in zip(out["bm25"], out["dense"])
    )
    emit(
        {
            "engine": "hybrid-rrf",
            "size": args.size,
            "depth": DEPTH,
            "encoder": hybrid.params()["components"][1]["params"]["encoder_params"],
            "bm25_accelerated": bm25._accel is not None,
            "build_s": build_s,
            "peak_mb": peak,
            "qps": {name: statistics.median(r) for name, r in rates.items()},
            "qps_passes": {name: [round(x, 1) for x in r] for name, r in rates.items()},
            "ms_per_query": ms,
            "parts_ms": ms["bm25"] + ms["dense"],
            "fusion_ms": ms["hybrid"] - ms["bm25"] - ms["dense"],
            "ratio_to_parts": ms["hybrid"] / (ms["bm25"] + ms["dense"]),
            "mean_candidates": union,
            "threads": os_threads(),
        }
    )
    cache.cleanup()


if __name__ == "__main__":
    main()
