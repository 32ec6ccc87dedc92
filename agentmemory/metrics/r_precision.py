"""R-precision: trec_eval's ``Rprec``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["r_precision"]


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
