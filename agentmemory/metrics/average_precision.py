"""Average precision at a cutoff: trec_eval's ``map_cut_k`` for one query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentmemory.errors import check_positive_int

__all__ = ["average_precision"]


def average_precision(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Average precision at cutoff ``k``, exactly as trec_eval's ``map_cut_k``.

    ``AP@k = (sum over ranks i <= k holding a relevant document of P@i) / R``

    where ``P@i`` is precision at rank ``i`` (relevant documents in the top
    ``i``, divided by ``i``) and ``R = |{d : qrels[d] >= 1}|`` counts *every*
    relevant judged document of the query: the denominator is ``R``, not
    ``min(k, R)``.  ``AP@k = 0.0`` when ``R == 0``.  The mean over queries is
    MAP@k.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    if num_rel == 0:
        return 0.0
    found = 0
    total = 0.0
    for rank, doc in enumerate(ranking[:k], start=1):
        if qrels.get(doc, 0) >= 1:
            found += 1
            total += found / rank
    return total / num_rel
