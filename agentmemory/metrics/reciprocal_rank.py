"""Reciprocal rank, uncut (trec_eval's ``recip_rank``) or cut at ``k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["reciprocal_rank"]


def reciprocal_rank(ranking: Sequence[str], qrels: Mapping[str, int], k: int | None = None) -> float:
    """Reciprocal rank of the first relevant document.

    ``RR = 1 / r`` where ``r`` is the 1-based rank of the first document with
    ``qrels.get(d, 0) >= 1``; ``RR = 0.0`` when there is none.  With ``k``,
    only ``ranking[:k]`` is looked at, so ``RR@k = RR`` if ``r <= k`` and
    ``0.0`` otherwise.  ``k=None`` is trec_eval's ``recip_rank`` (which has no
    cutoff).  The mean over queries is MRR.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1, or ``None`` for the whole ranking.
    """
    if k is not None:
        check_positive_int("k", k)
        ranking = ranking[:k]
    for rank, doc in enumerate(ranking, start=1):
        if qrels.get(doc, 0) >= 1:
            return 1.0 / rank
    return 0.0
