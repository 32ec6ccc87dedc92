"""agentmemory's dense retriever against faiss-cpu's exact ``IndexFlatIP``, over random unit vectors.

Both run in this one process, on one thread (BLAS limited through the
environment before numpy and faiss load; ``faiss.omp_set_num_threads(1)``),
and their query passes alternate (agentmemory, faiss, agentmemory, ...), so
that load from elsewhere on the machine slows both alike.

* **agentmemory**: the vectors (``vectors.py``) reach ``Dense`` through
  ``PrecomputedEncoder``: entry ``d%08d`` has its id as its text and its
  corpus vector as the encoder's row, query ``q%04d`` likewise; no model
  runs.  Build: ``Dense.add`` of the entries (the encoder's lookup, the
  finiteness check, the index of distinct vectors, the normalisation).
  Queries: ``search_batch`` of all 1,000, and ``search`` one at a time.
* **faiss**: ``IndexFlatIP(256).add`` of the very float32 unit vectors
  agentmemory's index holds (``normalize_rows`` of the corpus, done before
  the timed build: faiss expects normalised input for cosine).  Queries:
  ``search`` of all 1,000 in one call, and of a 1-row matrix one at a time.

Memory: each build's peak RSS over the process's RSS just before it (Linux
``VmHWM``, reset), and what it still holds after (RSS after, garbage
collected, minus before); agentmemory's build comes first.  Both keep their
input (the encoder's table; the normalised matrix faiss copies from).

Ties: faiss lists tied scores by id descending too, but where a tie
straddles the k-th place it keeps the lowest ids (a later equal score does
not enter its heap; checked with faiss 1.15.1), the ranking rule the
highest.  ``run.py`` compares the two top 10s allowing for that, and for
scores that tie within float32 rounding.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import K, emit, os_threads, peak_mb, settle, single_thread, timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--single", type=int, default=1000, help="queries answered one at a time per pass (the first N)")
    args = ap.parse_args()
    single_thread()
    import numpy as np
    from vectors import DIM, QUERIES, corpus_vectors, query_vectors

    from agentmemory import MemoryEntry
    from agentmemory.retrievers import Dense
    from agentmemory.retrievers.dense import normalize_rows
    from agentmemory.retrievers.encoders import PrecomputedEncoder

    n = args.size
    table = corpus_vectors(n, extra_rows=QUERIES)  # the entries' rows, then the queries'
    table[n:] = query_vectors()
    ids = [f"d{i:08d}" for i in range(n)]
    keys = [f"q{i:04d}" for i in range(QUERIES)]
    encoder = PrecomputedEncoder(ids + keys, table)
    entries = [MemoryEntry(i, i) for i in ids]
    single_keys = keys[: args.single]

    ours: dict = {"engine": "agentmemory-dense", "size": n, "dim": DIM}
    base = settle()
    dense = Dense(encoder=encoder)
    ours["build_s"], _ = timed(lambda: dense.add(entries))
    ours["peak_mb"] = peak_mb() - base
    ours["retained_mb"] = settle() - base
    ours["index_mb"] = dense.memory_bytes() / 2**20

    theirs: dict = {"engine": "faiss-flat-ip", "size": n, "dim": DIM}
    try:
        import faiss
    except ImportError as err:
        faiss = None
        theirs["error"] = f"not installed ({err}); pip install faiss-cpu"
    index = None
    if faiss is not None:
        faiss.omp_set_num_threads(1)
        theirs["version"] = faiss.__version__
        corpus = normalize_rows(table[:n])
        queries = normalize_rows(table[n:])
        base = settle()
        index = faiss.IndexFlatIP(DIM)
        theirs["build_s"], _ = timed(lambda: index.add(corpus))
        theirs["peak_mb"] = peak_mb() - base
        theirs["retained_mb"] = settle() - base
        theirs["index_mb"] = index.ntotal * index.d * 4 / 2**20

    out: dict = {}

    def timed_qps(key: str, fn, count: int) -> None:
        t0 = time.perf_counter()
        out[key] = fn()
        seconds = time.perf_counter() - t0
        (ours if key.startswith("ours") else theirs).setdefault(key.split("_", 1)[1] + "_passes", []).append(
            count / seconds
        )

    for _ in range(args.passes):
        timed_qps("ours_batch", lambda: dense.search_batch(keys, K), len(keys))
        if index is not None:
            timed_qps("faiss_batch", lambda: index.search(queries, K), len(keys))
        timed_qps("ours_single", lambda: [dense.search(q, K) for q in single_keys], len(single_keys))
        if index is not None:
            timed_qps(
                "faiss_single",
                lambda: [index.search(queries[i : i + 1], K) for i in range(len(single_keys))],
                len(single_keys),
            )
    for row in (ours, theirs):
        for kind in ("batch", "single"):
            passes = row.get(f"{kind}_passes")
            if passes:
                row[f"{kind}_qps"] = statistics.median(passes)
                row[f"{kind}_passes"] = [round(q, 1) for q in passes]
        row["single_queries"] = len(single_keys)
        row["threads"] = os_threads()

    batch, singles = out["ours_batch"], out["ours_single"]
    ours["top10"] = [[int(h.entry_id[1:]) for h in hits] for hits in batch]
    ours["top10_scores"] = [[h.score for h in hits] for hits in batch]
    ours["single_equals_batch_ids"] = [[h.entry_id for h in hits] for hits in singles] == [
        [h.entry_id for h in hits] for hits in batch[: len(singles)]
    ]
    ours["single_batch_max_score_diff"] = max(
        (abs(a.score - b.score) for x, y in zip(singles, batch) for a, b in zip(x, y)), default=0.0
    )
    if index is not None:
        scores, labels = out["faiss_batch"]
        theirs["top10"] = [[int(i) for i in row if i >= 0] for row in labels]
        theirs["top10_scores"] = [[float(s) for s, i in zip(sr, lr) if i >= 0] for sr, lr in zip(scores, labels)]
        single_labels = np.concatenate([lab for _, lab in out["faiss_single"]])
        theirs["single_equals_batch_ids"] = bool(np.array_equal(single_labels, labels[: len(single_labels)]))
        single_scores = np.concatenate([s for s, _ in out["faiss_single"]])
        theirs["single_batch_max_score_diff"] = float(np.abs(single_scores - scores[: len(single_scores)]).max())
    emit({"agentmemory": ours, "faiss": theirs})


if __name__ == "__main__":
    main()
