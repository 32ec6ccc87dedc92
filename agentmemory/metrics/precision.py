"""Precision at a cutoff: trec_eval's ``P_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["precision"]


def precision(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Precision at cutoff ``k``, exactly as trec_eval's ``P_k``.

    ``P@k = |{d in ranking[:k] : qrels.get(d, 0) >= 1}| / k``

    The denominator is ``k`` even when fewer than ``k`` documents were
    retrieved, so a run that returns one relevant document scores
    ``P@5 = 0.2``.  Unjudged documents are not relevant.

    Args:
        ranking: distinct document ids in rank order, rank 1 first (ties
            already broken; see :func:`agentmemory.trec.trec_order`).
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    hits = sum(1 for doc in ranking[:k] if qrels.get(doc, 0) >= 1)
    return hits / k
