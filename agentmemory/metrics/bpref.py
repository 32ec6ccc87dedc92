"""Binary preference: trec_eval's ``bpref`` (Buckley and Voorhees, SIGIR 2004), which reads judged non-relevant entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.ranked import Ranked, divide

__all__ = ["DEFINITION", "batch_bpref", "bpref"]


def bpref(ranking: Sequence[str], qrels: Mapping[str, int]) -> float:
    """Binary preference, exactly as trec_eval's ``bpref`` (``-l 1``).

    ``bpref = (1 / R) * sum over relevant retrieved d of (1 - min(n_d, R) / min(N, R))``

    where ``R = |{d : qrels[d] >= 1}|`` counts the relevant judged entries,
    ``N = |{d : 0 <= qrels[d] < 1}|`` the judged non-relevant ones (grade 0),
    and ``n_d`` the judged non-relevant entries ranked above ``d``; a term
    with ``n_d = 0`` is 1.  Unjudged entries and negative grades (trec_eval:
    in the pool but unjudged) are skipped: they neither count in ``N`` nor
    stand above anything.  Terms are summed in rank order.  ``bpref = 0.0``
    when ``R == 0``.  It has no cutoff: the whole ranking it is given is read
    (an evaluation gives it the top ``k``).

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant,
            a grade in ``[0, 1)`` judged non-relevant.
    """
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    if num_rel == 0:
        return 0.0
    bound = min(sum(1 for grade in qrels.values() if 0 <= grade < 1), num_rel)
    above = 0
    total = 0.0
    for doc in ranking:
        grade = qrels.get(doc)
        if grade is None:
            continue
        if grade >= 1:
            total += 1.0 - min(above, num_rel) / bound if above else 1.0
        elif grade >= 0:
            above += 1
    return total / num_rel


def batch_bpref(r: Ranked, k: None = None) -> np.ndarray:
    """bpref for every query of ``r`` at once (== :func:`bpref`): for each relevant retrieved entry, the judged
    non-relevant ones above it (``r.nonrel_rank``) counted by a binary search, the terms summed in rank order.

    ``k`` is always ``None`` (bpref takes no cutoff); it is there for the kernels' one calling shape.
    """
    width = int(max(r.rel_rank.max(initial=0), r.nonrel_rank.max(initial=0))) + 1
    nonrel_key = r.nonrel_query * width + r.nonrel_rank  # ascending: sorted by (query, rank)
    above = np.searchsorted(nonrel_key, r.rel_query * width + r.rel_rank) - np.searchsorted(
        nonrel_key, r.rel_query * width
    )
    num_rel = r.num_rel[r.rel_query]
    bound = np.minimum(r.num_nonrel[r.rel_query], num_rel)
    terms = np.ones(r.rel_query.size, dtype=np.float64)
    some = above > 0  # then bound >= 1: a judged non-relevant entry exists
    terms[some] = 1.0 - np.minimum(above[some], num_rel[some]) / bound[some]
    return divide(np.bincount(r.rel_query, weights=terms, minlength=r.n), r.num_rel)


def _per_query(query: QueryContext) -> float:
    return bpref(query.ranking, query.qrels)


DEFINITION = MeasureDef(
    "bpref",
    _per_query,
    CutoffRule.FORBIDDEN,
    "binary preference: 1/R * sum over relevant retrieved of 1 - min(judged non-relevant above, R) / min(N, R) "
    "(trec_eval bpref)",
    batch=batch_bpref,
    family="trec_eval",
)
"""``bpref`` (no cutoff; no tie-aware expectation and no provenance definition)."""
