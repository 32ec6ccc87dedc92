"""Your own retriever beside the built-ins: BM25 with a boost for recent memories, in about 30 lines.

Run it with ``python examples/custom_retriever.py``.  Any class with
``name``, ``label``, ``add``, ``search`` and ``params`` is a retriever; pass
the class (a factory: each scope of a collection gets its own instance) to
:func:`agentmemory.evaluate`, or register it with
``agentmemory.register_retriever("recent-bm25", RecentBM25)`` to use its name
(and parameters, ``recent-bm25[boost=1.0]``) on the command line and in the notebooks.
"""

from __future__ import annotations

from agentmemory import BM25, Hit, evaluate, load
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.collection import default_collection_path
from agentmemory.testing import check_retriever


class RecentBM25:
    """score = BM25 score x (1 + boost / (1 + days between the entry and the newest entry)); ties by id descending."""

    name = "recent-bm25"
    label = "BM25 + recency"

    def __init__(self, boost: float = 2.0) -> None:
        self.boost = boost
        self._bm25 = BM25()
        self._created: dict = {}

    def add(self, entries) -> None:
        entries = list(entries)
        self._bm25.add(entries)
        self._created.update((e.id, e.created_at) for e in entries)

    def search(self, query, k: int) -> list[Hit]:
        if k < 1:
            raise ValueError("k must be an integer >= 1")
        stamps = [t for t in self._created.values() if t is not None]
        newest = max(stamps) if stamps else None
        scored = []
        for hit in self._bm25.search(query, max(len(self._created), 1)):  # every entry BM25 scores above 0
            created = self._created[hit.entry_id]
            days = (newest - created).total_seconds() / 86400 if created and newest else float("inf")
            scored.append((hit.score * (1 + self.boost / (1 + days)), hit.entry_id))
        scored.sort(reverse=True)
        return [Hit(entry_id, score, rank) for rank, (score, entry_id) in enumerate(scored[:k], start=1)]

    def params(self) -> dict:
        return {"base": "bm25", "boost": self.boost}


def main() -> None:
    check_retriever(RecentBM25)  # raises, listing every violation, if the contract is broken
    print("RecentBM25 keeps the retriever contract.\n")
    evaluation = evaluate(load(default_collection_path()), ["bm25", "tags", RecentBM25], k=5, seed=7)
    statistics = evaluation_statistics(evaluation, seed=7)
    print(comparison_table(evaluation, statistics).render(), end="")


if __name__ == "__main__":
    main()
