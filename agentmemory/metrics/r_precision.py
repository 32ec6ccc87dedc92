"""R-precision: trec_eval's ``Rprec``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.ranked import Ranked, count_per_query, divide
from agentmemory.metrics.tie_context import TieContext, expected_hits

__all__ = ["provenance_r_precision", "DEFINITION", "batch_r_precision", "expected_r_precision", "r_precision"]


def r_precision(ranking: Sequence[str], qrels: Mapping[str, int]) -> float:
    """Precision at rank ``R``, exactly as trec_eval's ``Rprec``.

    ``Rprec = |{d in ranking[:R] : qrels.get(d, 0) >= 1}| / R``

    where ``R = |{d : qrels[d] >= 1}|`` is the number of relevant judged
    documents of the query.  The denominator is ``R`` even when fewer than
    ``R`` documents were retrieved.  ``Rprec = 0.0`` when ``R == 0``.  It has
    no cutoff parameter: the cutoff is ``R`` itself.

    Args:
        ranking: distinct document ids in rank order, rank 1 first.
        qrels: judged relevance per document id; a grade >= 1 is relevant.
    """
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    if num_rel == 0:
        return 0.0
    hits = sum(1 for doc in ranking[:num_rel] if qrels.get(doc, 0) >= 1)
    return hits / num_rel


def batch_r_precision(r: Ranked, k: None = None) -> np.ndarray:
    """Rprec for every query of ``r`` at once: relevant at ranks <= R, over R (== :func:`r_precision`).

    ``k`` is always ``None`` (Rprec takes no cutoff); it is there for the kernels' one calling shape.
    """
    hits = count_per_query(r.rel_query[r.rel_rank <= r.num_rel[r.rel_query]], r.n)
    return divide(hits, r.num_rel)


def expected_r_precision(ties: TieContext) -> float:
    """Rprec over all orderings of tied scores: ``H(min(R, D)) / R`` (0 when ``R = 0``)."""
    num_rel = ties.num_rel
    return expected_hits(ties, min(num_rel, ties.depth)) / num_rel if num_rel else 0.0


def _per_query(query: QueryContext) -> float:
    return r_precision(query.ranking, query.qrels)


def provenance_r_precision(credited: Credited, k: int | None) -> float:
    """Rprec through provenance: relevant sources credited within the top |S|, over |S| (0 when there is none)."""
    n = len(credited.sources)
    return credited.credited(n) / n if n else 0.0


DEFINITION = MeasureDef(
    "Rprec",
    _per_query,
    CutoffRule.FORBIDDEN,
    "precision at rank R, R = number of relevant judged documents (trec_eval Rprec)",
    batch=batch_r_precision,
    tie_aware=expected_r_precision,
    aliases=("R-precision",),
    provenance=provenance_r_precision,
    family="trec_eval",
)
"""``Rprec`` (no cutoff), alias ``R-precision``."""
