"""Recall at a cutoff: trec_eval's ``recall_k``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.budget import budget_form
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked, count_per_query, divide
from agentmemory.metrics.tie_context import TieContext, expected_hits

__all__ = ["BUDGET_DEFINITION", "provenance_recall", "DEFINITION", "batch_recall", "expected_recall", "recall"]


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
    return _recall(ranking, qrels, k)


def _recall(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """:func:`recall` on a cutoff already checked (a measure's per-query path)."""
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    if num_rel == 0:
        return 0.0
    hits = sum(1 for doc in ranking[:k] if qrels.get(doc, 0) >= 1)
    return hits / num_rel


def batch_recall(r: Ranked, k: int) -> np.ndarray:
    """R@k for every query of ``r`` at once: relevant at ranks <= k, over R (== :func:`recall`)."""
    return divide(count_per_query(r.rel_query[r.rel_rank <= k], r.n), r.num_rel)


def expected_recall(ties: TieContext) -> float:
    """R@k over all orderings of tied scores: ``H(c) / R`` (0 when ``R = 0``), ``c = min(k, D)``."""
    return expected_hits(ties, ties.cut) / ties.num_rel if ties.num_rel else 0.0


def _per_query(query: QueryContext) -> float:
    return _recall(query.ranking, query.qrels, query.cutoff)


def provenance_recall(credited: Credited, k: int | None) -> float:
    """R@k through provenance: relevant sources credited in the top k, over all relevant sources (0 when none)."""
    cut = check_positive_int("k", k)
    return credited.credited(cut) / len(credited.sources) if credited.sources else 0.0


BUDGET_DEFINITION = budget_form(
    _recall,
    provenance_recall,
    name="R",
    description="recall of the hits that fit in T tokens read top down, the crossing hit excluded (context budget: recall_k at k = hits read)",
)
"""``R@<T>tok``: the budget form of ``R@k`` (:mod:`agentmemory.metrics.budget`)."""

DEFINITION = MeasureDef(
    "R",
    _per_query,
    CutoffRule.REQUIRED,
    "recall: relevant in the top k / all relevant judged (trec_eval recall_k)",
    batch=batch_recall,
    tie_aware=expected_recall,
    aliases=("recall",),
    provenance=provenance_recall,
    family="trec_eval",
    budget_form=BUDGET_DEFINITION,
)
"""``R@k``, alias ``recall@k``."""
