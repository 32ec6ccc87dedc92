"""Reading a collection folder's JSONL in one process: agentmemory's reader against plain parsers.

    python benchmarks/engine_whole_reader.py --mode agentmemory|orjson|json --collection DIR

``agentmemory``: ``load_collection(DIR)`` (corpus, queries and judgments read,
every line checked, the entries' columns built: what ``agentmemory retrieve`` loads);
``orjson`` / ``json``: ``corpus.jsonl`` and ``queries.jsonl`` read as bytes,
split into lines and each line parsed into a dict (``orjson.loads``,
``json.loads``), nothing checked, no records.  Prints the seconds of that
step alone (imports excluded) as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["agentmemory", "orjson", "json"], required=True)
    ap.add_argument("--collection", required=True)
    args = ap.parse_args()
    root = Path(args.collection)
    if args.mode == "agentmemory":
        import numpy  # noqa: F401  (imports excluded: what the reader imports on its first call, imported here)

        import agentmemory.datasets.beir  # noqa: F401
        import agentmemory.datasets.beir_columns  # noqa: F401
        from agentmemory import load_collection

        t0 = time.perf_counter()
        n = len(load_collection(root).entries)
    else:
        loads = json.loads
        if args.mode == "orjson":
            import orjson

            loads = orjson.loads
        t0 = time.perf_counter()
        n = 0
        for name in ("corpus.jsonl", "queries.jsonl"):
            objs = [loads(line) for line in (root / name).read_bytes().splitlines() if line.strip()]
            n += len(objs) if name == "corpus.jsonl" else 0
    print(json.dumps({"seconds": time.perf_counter() - t0, "entries": n}))


if __name__ == "__main__":
    main()
