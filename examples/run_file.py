"""Another memory system's output, evaluated beside ours: a run file as a system.

Run it with ``python examples/run_file.py``.  Your pipeline (mem0, Zep, Letta,
your own) writes what it retrieved for each question, as a TREC run or as
JSON lines ``{"query_id": ..., "hits": [{"entry_id": ..., "score": ...}]}``;
``agentmemory eval --run mine=PATH`` (or ``evaluate(..., runs=[("mine", PATH)])``)
scores it with trec_eval's rules beside the built-in retrievers, in every
table.  Here the "external system" is a few lines that write such a file to
a temporary folder: a keyword matcher that only looks at entry tags.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from agentmemory import evaluate, load
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.collection import default_collection_path


def external_system(collection, path: Path) -> None:
    """Score = the number of the query's words that are tags of the entry; write the hits as JSON lines."""
    with path.open("w", encoding="utf-8") as out:
        for query in collection.queries:
            words = set(query.text.lower().replace("?", "").split())
            hits = [
                {"entry_id": e.id, "score": len(words & {t.lower() for t in e.tags})}
                for e in collection.entries
                if words & {t.lower() for t in e.tags}
            ]
            out.write(json.dumps({"query_id": query.id, "hits": hits}) + "\n")


def main() -> None:
    collection = load(default_collection_path())
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "keywords.jsonl"
        external_system(collection, run)
        evaluation = evaluate(collection, ["bm25", "tags"], runs=[("keywords", str(run))], k=5, seed=7)
    statistics = evaluation_statistics(evaluation, seed=7)
    print(comparison_table(evaluation, statistics).render(), end="")
    keywords = evaluation.result("keywords")
    print(f"\nkeywords: {keywords.kind} file {keywords.params['run']}, up to {keywords.params['depth']} hits a query")


if __name__ == "__main__":
    main()
