"""Normalised discounted cumulative gain at a cutoff: trec_eval's ``ndcg_cut_k``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.budget import budget_form
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked, divide, log2_table
from agentmemory.metrics.tie_context import TieContext

__all__ = [
    "BUDGET_DEFINITION",
    "provenance_ndcg",
    "provenance_ndcg_read",
    "DEFINITION",
    "batch_ndcg",
    "expected_ndcg",
    "ndcg",
]


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
    return _ndcg(ranking, qrels, k)


def _ndcg(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """:func:`ndcg` on a cutoff already checked (a measure's per-query path)."""
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


def batch_ndcg(r: Ranked, k: int) -> np.ndarray:
    """nDCG@k for every query of ``r`` at once: DCG over the ideal DCG, gain = grade, discount
    ``math.log2(rank + 1)`` summed in rank order (== :func:`ndcg`)."""
    cut = r.gain_rank <= k
    ranks = r.gain_rank[cut]
    ideal_cut = r.ideal_pos < k
    positions = r.ideal_pos[ideal_cut]
    longest = max(int(ranks.max(initial=0)), int(positions.max(initial=-1)) + 1)
    log2 = log2_table(longest)  # log2[i] == math.log2(i + 2)
    dcg = np.bincount(r.gain_query[cut], weights=r.gain[cut] / log2[ranks - 1], minlength=r.n)
    idcg = np.bincount(r.ideal_query[ideal_cut], weights=r.ideal_gain[ideal_cut] / log2[positions], minlength=r.n)
    return divide(dcg, idcg)


def expected_ndcg(ties: TieContext) -> float:
    """nDCG@k over all orderings of tied scores (``c = min(k, D)``, notation of :mod:`agentmemory.metrics.tieaware`).

    Each rank ``i`` of group ``g`` has expected gain ``G_g / t_g`` (``G_g``:
    the sum of the group's positive grades), so
    ``E[DCG@k] = sum_g (G_g / t_g) * sum_{i = s_g + 1}^{min(s_g + t_g, c)} 1 / log2(i + 1)``
    (the inner sum by :func:`math.fsum`; groups with ``G_g <= 0`` skipped)
    and ``E[nDCG@k] = E[DCG@k] / IDCG@k``, where ``IDCG@k`` (the
    :func:`math.fsum` of ``grade / log2(i + 2)`` over the ``k`` highest
    positive grades judged, ``i`` from 0) does not depend on the order; 0
    when it is 0.
    """
    qrels, k = ties.qrels, ties.cutoff
    ideal = sorted((grade for grade in qrels.values() if grade > 0), reverse=True)[:k]
    idcg = math.fsum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    if idcg <= 0.0:
        return 0.0
    c = ties.cut
    total = 0.0
    for group in ties.groups:
        gain = float(sum(max(qrels.get(e, 0), 0) for e in group.entry_ids))
        last = min(group.offset + group.size, c)
        if gain <= 0 or last <= group.offset:
            continue
        discount = math.fsum(1.0 / math.log2(i + 1) for i in range(group.offset + 1, last + 1))
        total += gain / group.size * discount
    return total / idcg


def _per_query(query: QueryContext) -> float:
    return _ndcg(query.ranking, query.qrels, query.cutoff)


def provenance_ndcg(credited: Credited, k: int | None) -> float:
    """nDCG@k through provenance: each hit takes one place, or one place per source it newly credits (highest
    grade first), in rank order; ``DCG@k`` sums ``grade / log2(place + 1)`` over the places up to k, and the
    ideal is trec_eval's over all relevant sources sorted by grade (:mod:`agentmemory.metrics.provenance`).

    A hit that credits one source or none takes one place, so without derived
    entries the places are the ranks and this is :func:`ndcg`; a hit reaching
    two new sources takes two places (the hits after it move down one), so
    its sources cannot earn more than the ideal: nDCG stays <= 1.
    """
    cut = check_positive_int("k", k)
    grades = credited.sources
    places: list[int] = []  # the gain of each place, in order
    for new in credited.new[:cut]:
        if new:
            places.extend(grades[s] for s in new)
        else:
            places.append(0)
    dcg = 0.0
    for index, gain in enumerate(places[:cut]):
        if gain > 0:
            dcg += gain / math.log2(index + 2)
    ideal = sorted(grades.values(), reverse=True)[:cut]
    idcg = 0.0
    for index, gain in enumerate(ideal):
        idcg += gain / math.log2(index + 2)
    return dcg / idcg if idcg > 0.0 else 0.0


def _ndcg_read(ranking: Sequence[str], qrels: Mapping[str, int], read: int) -> float:
    """nDCG of the first ``read`` hits against the whole ideal: trec_eval's ``ndcg`` (no cutoff) of ``ranking[:read]``.

    ``DCG`` sums ``grade / log2(rank + 1)`` over the hits read; ``IDCG`` is
    the same sum over every positive judged grade, highest first, uncut; 0
    when there is none.  (The ideal is not cut at ``read``: a system that
    returned fewer texts than the budget holds would otherwise be compared
    with a shorter ideal and gain by returning less.)
    """
    return _ndcg(ranking[:read], qrels, max(read, len(qrels)))


def provenance_ndcg_read(credited: Credited, read: int | None) -> float:
    """:func:`_ndcg_read` through provenance: :func:`provenance_ndcg` of the first ``read`` hits, places and ideal
    uncut (every place of the hits read, every relevant source in the ideal)."""
    cut = check_positive_int("read", read)
    head = Credited(credited.sources, credited.reach[:cut], credited.new[:cut])
    return provenance_ndcg(head, cut + len(credited.sources))


BUDGET_DEFINITION = budget_form(
    _ndcg_read,
    provenance_ndcg_read,
    name="nDCG",
    description="nDCG of the hits that fit in T tokens read top down, against the whole ideal (context budget: trec_eval ndcg of the hits read)",
)
"""``nDCG@<T>tok``: the budget form of ``nDCG@k`` (:mod:`agentmemory.metrics.budget`)."""

DEFINITION = MeasureDef(
    "nDCG",
    _per_query,
    CutoffRule.REQUIRED,
    "normalised DCG, gain = grade, discount log2(rank + 1) (trec_eval ndcg_cut_k)",
    batch=batch_ndcg,
    tie_aware=expected_ndcg,
    aliases=("ndcg_cut",),
    provenance=provenance_ndcg,
    family="trec_eval",
    budget_form=BUDGET_DEFINITION,
)
"""``nDCG@k``, alias ``ndcg_cut@k``."""
