"""Reciprocal rank, uncut (trec_eval's ``recip_rank``) or cut at ``k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked
from agentmemory.metrics.tie_context import TieContext

__all__ = [
    "provenance_reciprocal_rank",
    "DEFINITION",
    "batch_reciprocal_rank",
    "expected_reciprocal_rank",
    "reciprocal_rank",
]


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
    return _reciprocal_rank(ranking, qrels, k)


def _reciprocal_rank(ranking: Sequence[str], qrels: Mapping[str, int], k: int | None = None) -> float:
    """:func:`reciprocal_rank` on a cutoff already checked (a measure's per-query path)."""
    if k is not None:
        ranking = ranking[:k]
    for rank, doc in enumerate(ranking, start=1):
        if qrels.get(doc, 0) >= 1:
            return 1.0 / rank
    return 0.0


def batch_reciprocal_rank(r: Ranked, k: int | None = None) -> np.ndarray:
    """RR(@k) for every query of ``r`` at once: 1 / rank of the first relevant document (== :func:`reciprocal_rank`)."""
    found = r.first_rank > 0
    if k is not None:
        found &= r.first_rank <= k
    out = np.zeros(r.n, dtype=np.float64)
    np.divide(1.0, r.first_rank, out=out, where=found)
    return out


def expected_reciprocal_rank(ties: TieContext) -> float:
    """RR (``c = D``) and RR@k (``c = min(k, D)``) over all orderings of tied scores.

    Only the first group with a relevant entry matters (offset ``s``, size
    ``t``, ``r`` relevant; 0 when a group starting at rank ``c + 1`` or below
    comes first).  The first relevant entry is at its ``j``-th rank with
    probability ``p_j = C(t - j, r - 1) / C(t, r)`` (computed as
    ``p_1 = r / t``, ``p_{j+1} = p_j * (t - j - r + 1) / (t - j)``), so
    ``E[RR] = sum_{j=1}^{min(t - r + 1, c - s)} p_j / (s + j)``, summed in
    that order.
    """
    c = ties.cut
    for group, r in zip(ties.groups, ties.relevant):
        if group.offset >= c:
            return 0.0
        if r == 0:
            continue
        s, t = group.offset, group.size
        p = r / t
        total = 0.0
        for j in range(1, min(t - r + 1, c - s) + 1):
            total += p / (s + j)
            p *= (t - j - r + 1) / (t - j) if t > j else 0.0
        return total
    return 0.0


def _per_query(query: QueryContext) -> float:
    return _reciprocal_rank(query.ranking, query.qrels, query.k)


def provenance_reciprocal_rank(credited: Credited, k: int | None) -> float:
    """RR(@k) through provenance: 1 / rank of the first hit reaching a relevant source (within k), 0 if none."""
    rank = credited.first_rank(k)
    return 0.0 if rank is None else 1.0 / rank


DEFINITION = MeasureDef(
    "RR",
    _per_query,
    CutoffRule.OPTIONAL,
    "reciprocal rank of the first relevant document, 0 if none in the top k"
    " (uncut: trec_eval recip_rank); its mean is MRR",
    batch=batch_reciprocal_rank,
    tie_aware=expected_reciprocal_rank,
    aliases=("MRR", "recip_rank"),
    provenance=provenance_reciprocal_rank,
    family="trec_eval",
)
"""``RR`` and ``RR@k``, aliases ``MRR`` and ``recip_rank``."""
