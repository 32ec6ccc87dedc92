"""Retrievers behind one protocol, and their registry.

``RETRIEVERS`` maps a registry name (``"bm25"``, ``"tags"``) to its class;
:func:`make_retriever` and :func:`parse_retrievers` turn names into
instances, rejecting unknown names with the registry's own list.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..errors import ParameterError, UnknownNameError
from .base import Retriever, select_top_k
from .bm25 import BM25, TermContribution
from .tags import TagOverlap, TagScorer

__all__ = [
    "BM25",
    "RETRIEVERS",
    "Retriever",
    "TagOverlap",
    "TagScorer",
    "TermContribution",
    "make_retriever",
    "parse_retrievers",
    "select_top_k",
]

RETRIEVERS: dict[str, type] = {cls.name: cls for cls in (BM25, TagScorer)}


def make_retriever(name: str, **params: Any) -> Retriever:
    """A new, empty retriever of the registered ``name`` with ``params``."""
    cls = RETRIEVERS.get(name)
    if cls is None:
        raise UnknownNameError("retriever", name, RETRIEVERS)
    allowed = [p for p in inspect.signature(cls).parameters if p != "self"]
    for key in params:
        if key not in allowed and not allowed:
            raise ParameterError(f"{name} parameter", key, "is not accepted", f"the {name} retriever takes no parameters")
        if key not in allowed:
            raise UnknownNameError(f"{name} parameter", key, allowed)
    return cls(**params)


def parse_retrievers(spec: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``"bm25,tags"`` or ``["bm25", "tags"]`` -> ``("bm25", "tags")``, validated.

    Names are stripped; empty items, duplicates and unknown names are errors.
    """
    if isinstance(spec, str):
        items = [s.strip() for s in spec.split(",")]
    elif isinstance(spec, (list, tuple)) and all(isinstance(s, str) for s in spec):
        items = [s.strip() for s in spec]
    else:
        raise ParameterError(
            "retrievers", spec, "is not a list of names", "pass e.g. 'bm25,tags' or ['bm25', 'tags']"
        )
    if not items or any(not s for s in items):
        raise ParameterError(
            "retrievers", spec, "has an empty name", "choose from: " + ", ".join(sorted(RETRIEVERS))
        )
    for item in items:
        if item not in RETRIEVERS:
            raise UnknownNameError("retriever", item, RETRIEVERS)
    if len(set(items)) != len(items):
        raise ParameterError("retrievers", spec, "names a retriever twice", "name each retriever once")
    return tuple(items)
