"""Retrieval measures as values (``P@5``, ``RR``, ``nDCG@10`` ...), with trec_eval semantics, in an open registry.

What a measure author needs is public here: :class:`MeasureDef` (one record per measure), the per-query
:class:`QueryContext`, a token :class:`Budget` (the cutoff of ``R@512tok``), the batch kernel's input :class:`Ranked` with its helpers, and the tie primitives
:class:`TieContext` / :func:`expected_hits` for a tie-aware expectation.
"""

from agentmemory.metrics.base import (
    ALIASES,
    REGISTRY,
    Measure,
    compute_measures,
    defined,
    distinct_measures,
    parse_measure,
    parse_measures,
    register_measure,
)
from agentmemory.metrics.definition import FIRST, Budget, CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.ranked import Ranked, count_per_query, divide, log2_table, over_k
from agentmemory.metrics.tie_context import TieContext, TieGroup, expected_hits

__all__ = [
    "ALIASES",
    "FIRST",
    "REGISTRY",
    "Budget",
    "CutoffRule",
    "Measure",
    "MeasureDef",
    "QueryContext",
    "Ranked",
    "TieContext",
    "TieGroup",
    "compute_measures",
    "count_per_query",
    "distinct_measures",
    "divide",
    "expected_hits",
    "log2_table",
    "over_k",
    "parse_measure",
    "parse_measures",
    "register_measure",
    "defined",
]
