"""Retrieval measures as values (``P@5``, ``RR``, ``nDCG@10`` ...), with trec_eval semantics."""

from agentmemory.metrics.base import (
    ALIASES,
    REGISTRY,
    CutoffRule,
    Measure,
    MeasureDef,
    compute_measures,
    parse_measure,
    parse_measures,
)

__all__ = [
    "ALIASES",
    "REGISTRY",
    "CutoffRule",
    "Measure",
    "MeasureDef",
    "compute_measures",
    "parse_measure",
    "parse_measures",
]
