"""The default encoder's cost: loading wordllama's shipped model, and encoding the benchmark's texts.

* **Load**: ``WordLlamaEncoder()`` in this fresh process (importing
  ``tokenizers`` and ``safetensors``, reading the 16 MB model and the
  tokenizer from the installed wheel), and ``import agentmemory`` before it
  apart.
* **Entries**: ``encode`` of the first ``--size`` corpus texts (``corpus.py``:
  30-60 pseudo-words each, which the Llama tokenizer cuts into several
  pieces) in one call, as ``Dense.add`` does; entries per second, median of
  the passes.
* **Queries**: the 1,000 benchmark queries encoded one call each, as
  ``Dense.search`` does (per-query latency), and in one call.

One thread: the tokenizer's own parallelism and BLAS are switched off
through the environment before anything loads.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import emit, os_threads, single_thread, timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    single_thread()
    t0 = time.perf_counter()
    import agentmemory  # noqa: F401

    import_s = time.perf_counter() - t0
    from agentmemory.retrievers.encoders import WordLlamaEncoder

    load_s, encoder = timed(WordLlamaEncoder)
    from corpus import corpus, queries

    texts = corpus(args.size).texts()
    qs = [" ".join(q) for q in queries()]
    tokens = sum(len(e.ids) for e in encoder._tokenizer.encode_batch(texts[:10_000], add_special_tokens=False))
    entry_rates, single_rates, batch_rates = [], [], []
    for _ in range(args.passes):
        seconds, vectors = timed(lambda: encoder.encode(texts))
        entry_rates.append(len(texts) / seconds)
        seconds, _ = timed(lambda: [encoder.encode([q]) for q in qs])
        single_rates.append(len(qs) / seconds)
        seconds, _ = timed(lambda: encoder.encode(qs))
        batch_rates.append(len(qs) / seconds)
    emit(
        {
            "engine": "wordllama",
            "size": args.size,
            "dim": int(vectors.shape[1]),
            "model": encoder.params(),
            "import_agentmemory_s": import_s,
            "load_s": load_s,
            "tokens_per_entry": tokens / min(len(texts), 10_000),
            "entries_per_s": statistics.median(entry_rates),
            "entries_per_s_passes": [round(r) for r in entry_rates],
            "queries_one_call_each_per_s": statistics.median(single_rates),
            "queries_one_call_per_s": statistics.median(batch_rates),
            "threads": os_threads(),
        }
    )


if __name__ == "__main__":
    main()
