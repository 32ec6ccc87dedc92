"""Precision at a cutoff: trec_eval's ``P_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.budget import budget_form
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked, count_per_query, over_k
from agentmemory.metrics.tie_context import TieContext, expected_hits

__all__ = [
    "BUDGET_DEFINITION",
    "provenance_precision",
    "DEFINITION",
    "batch_precision",
    "expected_precision",
    "precision",
]


def precision(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Precision at cutoff ``k``, exactly as trec_eval's ``P_k``.

    ``P@k = |{d in ranking[:k] : qrels.get(d, 0) >= 1}| / k``

    The denominator is ``k`` even when fewer than ``k`` documents were
    retrieved, so a run that returns one relevant document scores
    ``P@5 = 0.2``.  Unjudged documents are not relevant.

    Args:
        ranking: distinct document ids in rank order, rank 1 first (ties
            already broken; see :func:`agentmemory.files.trec.trec_order`).
        qrels: judged relevance per document id; a grade >= 1 is relevant.
        k: the cutoff, an integer >= 1.
    """
    check_positive_int("k", k)
    return _precision(ranking, qrels, k)


def _precision(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """:func:`precision` on a cutoff already checked (a measure's per-query path)."""
    hits = sum(1 for doc in ranking[:k] if qrels.get(doc, 0) >= 1)
    return hits / k


def batch_precision(r: Ranked, k: int) -> np.ndarray:
    """P@k for every query of ``r`` at once: relevant at ranks <= k, over k (== :func:`precision`)."""
    return over_k(count_per_query(r.rel_query[r.rel_rank <= k], r.n), k)


def expected_precision(ties: TieContext) -> float:
    """P@k over all orderings of tied scores: ``H(c) / k``, ``c = min(k, D)`` (:mod:`agentmemory.metrics.tieaware`)."""
    return expected_hits(ties, ties.cut) / ties.cutoff


def _per_query(query: QueryContext) -> float:
    return _precision(query.ranking, query.qrels, query.cutoff)


def provenance_precision(credited: Credited, k: int | None) -> float:
    """P@k through provenance: hits in the top k that reach a relevant source, over k (:mod:`agentmemory.metrics.provenance`)."""
    cut = check_positive_int("k", k)
    return credited.useful(cut) / cut


BUDGET_DEFINITION = budget_form(
    _precision,
    provenance_precision,
    name="P",
    description="relevant / hits read, over the hits that fit in T tokens read top down; 0 when none fits (context budget: P_k at k = hits read)",
)
"""``P@<T>tok``: the budget form of ``P@k`` (:mod:`agentmemory.metrics.budget`)."""

DEFINITION = MeasureDef(
    "P",
    _per_query,
    CutoffRule.REQUIRED,
    "precision: relevant in the top k / k (trec_eval P_k)",
    batch=batch_precision,
    tie_aware=expected_precision,
    aliases=("precision",),
    provenance=provenance_precision,
    family="trec_eval",
    budget_form=BUDGET_DEFINITION,
)
"""``P@k``, alias ``precision@k``."""
