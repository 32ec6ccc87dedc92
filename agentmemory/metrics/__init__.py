"""Retrieval measures as values (``P@5``, ``RR``, ``nDCG@10`` ...), with trec_eval semantics, in an open registry."""

from agentmemory.metrics.base import (
    ALIASES,
    REGISTRY,
    Measure,
    compute_measures,
    parse_measure,
    parse_measures,
    register_measure,
)
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext

__all__ = [
    "ALIASES",
    "REGISTRY",
    "CutoffRule",
    "Measure",
    "MeasureDef",
    "QueryContext",
    "compute_measures",
    "parse_measure",
    "parse_measures",
    "register_measure",
]
