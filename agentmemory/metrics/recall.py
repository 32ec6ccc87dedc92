"""Recall at a cutoff: trec_eval's ``recall_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["recall"]


def recall(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Recall at cutoff ``k``, exactly as trec_eval's ``recall_k``.

    ``R@k = |{d in ranking[:k] : qrels.get(d, 0) >= 1}| / R``

    where ``R = |{d : qrels[d] >= 1}|`` counts every relevant judged document
    of the query, retrieved or not.  ``R@k = 0.0`` when ``R == 0``.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    if num_rel == 0:
        return 0.0
    hits = sum(1 for doc in ranking[:k] if qrels.get(doc, 0) >= 1)
    return hits / num_rel
