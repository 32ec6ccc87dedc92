"""A memory system of your own, evaluated: it extracts "facts" from turns and says where each came from.

Rule: every sentence of a turn that speaks of the speaker ("I", "my", "me")
becomes a fact "<speaker>: <sentence>", with the turn's id as its source.
Search ranks facts by the query tokens they contain (newest first on ties).

    python examples/my_memory_system.py
    agentmemory eval --collection fixtures/locomo-sample/locomo-sample.json \
        --system examples.my_memory_system:System --retrievers bm25
"""

from __future__ import annotations

import re

from agentmemory.systems import Memory, Turn
from agentmemory.tokenize import tokenize


class System:
    label = "Fact extractor (example)"

    def __init__(self, scope=None, workdir=None) -> None:
        self.facts: list[tuple[str, str, set[str]]] = []  # (text, source turn id, tokens)

    def ingest(self, turns: list[Turn]) -> None:
        for turn in turns:
            prefix = f"{turn.role}: "
            said = turn.text[len(prefix) :] if turn.role and turn.text.startswith(prefix) else turn.text
            for sentence in re.split(r"(?<=[.!?])\s+", said):
                if {"i", "my", "me"} & set(tokenize(sentence)):
                    fact = f"{turn.role}: {sentence}" if turn.role else sentence
                    self.facts.append((fact, turn.entry_id, set(tokenize(fact))))

    def search(self, query: str, k: int) -> list[Memory]:
        wanted = set(tokenize(query))
        scored = [(len(wanted & tokens), -i, text, source) for i, (text, source, tokens) in enumerate(self.facts)]
        best = sorted((s for s in scored if s[0] > 0), reverse=True)[:k]
        return [Memory(text, score=float(n), id=f"fact-{-i}", sources=(source,)) for n, i, text, source in best]

    def close(self) -> None:
        self.facts.clear()


if __name__ == "__main__":
    from agentmemory.analysis.comparison_table import comparison_table
    from agentmemory.analysis.statistics import evaluation_statistics
    from agentmemory.collection import default_collection_path
    from agentmemory.datasets import load
    from agentmemory.evaluation.runner import evaluate

    path = default_collection_path().parent / "locomo-sample" / "locomo-sample.json"
    evaluation = evaluate(load(path), "bm25", systems=[System], relevance="provenance", k=5)
    print(comparison_table(evaluation, evaluation_statistics(evaluation, seed=7)).render())
    report = evaluation.systems[0].attributed.report
    print(f"coverage {report.coverage:.3f}, Judged@5 {report.judged_at_k:.3f}")
