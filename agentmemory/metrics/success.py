"""Success (hit rate) at a cutoff: trec_eval's ``success_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["success"]


def success(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Success at cutoff ``k``, exactly as trec_eval's ``success_k``.

    ``Success@k = 1.0`` if some ``d in ranking[:k]`` has ``qrels.get(d, 0) >= 1``,
    else ``0.0``.  The mean over queries is the hit rate.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    return 1.0 if any(qrels.get(doc, 0) >= 1 for doc in ranking[:k]) else 0.0
