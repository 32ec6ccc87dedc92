"""Average precision at a cutoff: trec_eval's ``map_cut_k`` for one query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked, divide
from agentmemory.metrics.tie_context import TieContext

__all__ = [
    "provenance_average_precision",
    "DEFINITION",
    "average_precision",
    "batch_average_precision",
    "expected_average_precision",
]


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
    return _average_precision(ranking, qrels, k)


def _average_precision(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """:func:`average_precision` on a cutoff already checked (a measure's per-query path)."""
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


def batch_average_precision(r: Ranked, k: int) -> np.ndarray:
    """AP@k for every query of ``r`` at once: sum of found / rank at relevant ranks <= k, over R
    (== :func:`average_precision`)."""
    cut = r.rel_rank <= k
    precisions = r.rel_found[cut] / r.rel_rank[cut]
    return divide(np.bincount(r.rel_query[cut], weights=precisions, minlength=r.n), r.num_rel)


def expected_average_precision(ties: TieContext) -> float:
    """AP@k over all orderings of tied scores (``c = min(k, D)``, notation of :mod:`agentmemory.metrics.tieaware`).

    ``AP@k = (1 / R) * sum_{i <= c} rel_i * (1 / i) * sum_{j <= i} rel_j``.
    For rank ``i`` the ``u``-th rank of group ``g`` (``i = s_g + u``),
    ``E[rel_i] = r_g / t_g``; for ``j`` in an earlier group,
    ``E[rel_i rel_j] = (r_g / t_g) * E[rel_j]``, and these sum to
    ``(r_g / t_g) * B_g`` with ``B_g = sum_{h < g} r_h``; for ``j < i`` in the same group,
    ``E[rel_i rel_j] = r_g (r_g - 1) / (t_g (t_g - 1))``.  Hence
    ``E[AP@k] = (1 / R) * sum_g sum_{u=1}^{m_g(c)} [ (r_g / t_g) (1 + B_g) + (u - 1) r_g (r_g - 1) / (t_g (t_g - 1)) ] / (s_g + u)``,
    summed group by group and rank by rank, then divided by ``R``; 0 when ``R = 0``.
    """
    num_rel = ties.num_rel
    if not num_rel:
        return 0.0
    c = ties.cut
    total = 0.0
    before = 0  # B_g: relevant entries in the groups above
    for group, r in zip(ties.groups, ties.relevant):
        s, t = group.offset, group.size
        inside = group.ranks_within(c)
        if inside == 0:
            break
        if r:
            p = r / t
            pair = r * (r - 1) / (t * (t - 1)) if t > 1 else 0.0
            for u in range(1, inside + 1):
                total += (p * (1 + before) + (u - 1) * pair) / (s + u)
        before += r
    return total / num_rel


def _per_query(query: QueryContext) -> float:
    return _average_precision(query.ranking, query.qrels, query.cutoff)


def provenance_average_precision(credited: Credited, k: int | None) -> float:
    """AP@k through provenance: ``(1 / |S|) * sum over i <= k of |new(h_i)| * P@i`` (each source once, at the
    precision of the rank that first reached it; :mod:`agentmemory.metrics.provenance`); 0 when there is no source."""
    cut = check_positive_int("k", k)
    if not credited.sources:
        return 0.0
    total = 0.0
    useful = 0
    for rank, (reach, new) in enumerate(zip(credited.reach[:cut], credited.new[:cut]), start=1):
        if reach:
            useful += 1
        if new:
            total += len(new) * (useful / rank)
    return total / len(credited.sources)


DEFINITION = MeasureDef(
    "AP",
    _per_query,
    CutoffRule.REQUIRED,
    "average precision: sum of P@i at relevant ranks i <= k / all relevant judged (trec_eval map_cut_k)",
    batch=batch_average_precision,
    tie_aware=expected_average_precision,
    aliases=("MAP", "map_cut"),
    provenance=provenance_average_precision,
    family="trec_eval",
)
"""``AP@k``, aliases ``MAP@k`` and ``map_cut@k``."""
