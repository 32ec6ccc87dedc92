"""Which measures have a definition under each relevance mode, and the one refusal of a measure that has none.

A measure's own per-query function judges a hit by its judged grade (``direct``
relevance, trec_eval's).  Under ``provenance`` a hit is credited with the
judged sources its ``derived_from`` chain reaches, and a measure has a value
there only through its provenance definition (``MeasureDef.provenance``), or
when it reads no judgment at all (an answer measure, ``MeasureDef.reads_answer``).
:func:`require_defined` refuses, in one line naming the measure and the mode,
a measure asked for under a mode where it has no definition, instead of leaving
it out of the numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from agentmemory.errors import ParameterError
from agentmemory.metrics.base import REGISTRY, Measure
from agentmemory.metrics.definition import MeasureDef

__all__ = ["DEFINED_UNDER", "defined_under", "require_defined"]

DEFINED_UNDER: Mapping[str, Callable[[MeasureDef], bool]] = MappingProxyType(
    {
        "direct": lambda definition: True,  # every measure's own per-query function
        "provenance": lambda definition: definition.provenance is not None or definition.reads_answer,
    }
)
"""Relevance mode -> whether a measure's definition gives it a value under that mode."""


def defined_under(measure: Measure, mode: str) -> bool:
    """Whether ``measure`` (its definition: the budget form under a budget) has a value under relevance ``mode``."""
    return DEFINED_UNDER[mode](measure.definition)


def require_defined(measures: Iterable[Measure], mode: str) -> tuple[Measure, ...]:
    """``measures``, once each has a definition under relevance ``mode`` (:data:`DEFINED_UNDER`).

    Raises:
        ParameterError: ``measure: 'recall_any@5' (str) has no definition under relevance = provenance; ...``,
            for the first that has none, listing the registered measures that have one.
    """
    chosen = tuple(measures)
    for measure in chosen:
        if not defined_under(measure, mode):
            having = sorted(d.name for d in REGISTRY.registered().values() if DEFINED_UNDER[mode](d))
            raise ParameterError(
                "measure",
                str(measure),
                f"has no definition under relevance = {mode}",
                f"leave it out, or evaluate it under another relevance; under {mode} these have one: "
                + ", ".join(having),
            )
    return chosen
