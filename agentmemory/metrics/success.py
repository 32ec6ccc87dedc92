"""Success (hit rate) at a cutoff: trec_eval's ``success_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.budget import budget_form
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked
from agentmemory.metrics.tie_context import TieContext

__all__ = ["BUDGET_DEFINITION", "provenance_success", "DEFINITION", "batch_success", "expected_success", "success"]


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


def batch_success(r: Ranked, k: int) -> np.ndarray:
    """Success@k for every query of ``r`` at once: 1.0 when a relevant document is at rank <= k (== :func:`success`)."""
    return ((r.first_rank > 0) & (r.first_rank <= k)).astype(np.float64)


def expected_success(ties: TieContext) -> float:
    """Success@k over all orderings of tied scores (``c = min(k, D)``, notation of :mod:`agentmemory.metrics.tieaware`).

    ``1`` if a group wholly inside the top ``c`` holds a relevant entry
    (groups taken highest first, stopping at the first group with no rank
    inside); otherwise, for the group cut by ``c`` (taking ``m = c - s_g``
    of its ``t`` ranks, ``r`` of its entries relevant),
    ``1 - prod_{i=0}^{m-1} (t - r - i) / (t - i)`` (one minus the chance
    that all ``m`` ranks inside hold non-relevant entries; the product stops
    once it is 0.0); 0 if no relevant entry is within reach.
    """
    c = ties.cut
    for group, r in zip(ties.groups, ties.relevant):
        inside = group.ranks_within(c)
        if inside == 0:
            break
        if r == 0:
            continue
        if inside == group.size:
            return 1.0
        t = group.size
        none_inside = 1.0
        for i in range(inside):
            none_inside *= (t - r - i) / (t - i)
            if none_inside == 0.0:
                break
        return 1.0 - none_inside
    return 0.0


def _per_query(query: QueryContext) -> float:
    return success(query.ranking, query.qrels, query.cutoff)


def provenance_success(credited: Credited, k: int | None) -> float:
    """Success@k through provenance: 1.0 when a hit in the top k reaches a relevant source, else 0.0."""
    return 0.0 if credited.first_rank(check_positive_int("k", k)) is None else 1.0


BUDGET_DEFINITION = budget_form(
    success,
    provenance_success,
    name="Success",
    description="1 if a relevant hit is among those that fit in T tokens read top down, else 0 (context budget: success_k at k = hits read)",
)
"""``Success@<T>tok``: the budget form of ``Success@k`` (:mod:`agentmemory.metrics.budget`)."""

DEFINITION = MeasureDef(
    "Success",
    _per_query,
    CutoffRule.REQUIRED,
    "1 if a relevant document is in the top k, else 0 (trec_eval success_k)",
    batch=batch_success,
    tie_aware=expected_success,
    aliases=("hit_rate",),
    provenance=provenance_success,
    family="trec_eval",
    budget_form=BUDGET_DEFINITION,
)
"""``Success@k``, alias ``hit_rate@k``."""
