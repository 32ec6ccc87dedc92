"""Normalised discounted cumulative gain at a cutoff: trec_eval's ``ndcg_cut_k``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["ndcg"]


def ndcg(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """nDCG at cutoff ``k``, exactly as trec_eval's ``ndcg_cut_k`` (trec_eval 9.x).

    ``DCG@k  = sum over ranks i = 1..min(k, len(ranking)) with g_i > 0 of g_i / log2(i + 1)``

    where ``g_i = qrels.get(ranking[i - 1], 0)`` is the judged grade itself
    (linear gain; grades <= 0 and unjudged documents add nothing, they are
    never subtracted).

    ``IDCG@k`` is the same sum over the ideal ranking: all positive judged
    grades of the query, sorted descending, cut at ``k``; it includes the
    relevant documents the run did not retrieve.

    ``nDCG@k = DCG@k / IDCG@k``, and ``0.0`` when ``IDCG@k == 0`` (no
    document graded >= 1).

    trec_eval 8.x discounted by ``log2(i)`` with rank 1 undiscounted; 9.x
    (and pytrec_eval) use ``log2(i + 1)`` as here.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id (integer grades).
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    dcg = 0.0
    for index, doc in enumerate(ranking[:k]):
        gain = qrels.get(doc, 0)
        if gain > 0:
            dcg += gain / math.log2(index + 2)
    ideal = sorted((grade for grade in qrels.values() if grade > 0), reverse=True)[:k]
    idcg = 0.0
    for index, gain in enumerate(ideal):
        idcg += gain / math.log2(index + 2)
    if idcg <= 0.0:
        return 0.0
    return dcg / idcg
