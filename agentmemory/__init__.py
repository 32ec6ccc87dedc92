"""agentmemory: how well does an agent-memory retriever find the right memories?"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so `agentmemory` loads in milliseconds
    from .backend import StoreError, StoreLockedError
    from .collection import Collection
    from .datasets import load, register_format
    from .datasets.beir import load_collection
    from .errors import AgentMemoryError, InputError, MissingFileError, ParameterError, UnknownNameError
    from .evaluate import Evaluation, evaluate
    from .events import EventLog, HashIds, SteppingClock
    from .metrics import Measure, MeasureDef, QueryContext, parse_measure, register_measure
    from .records import Event, Hit, MemoryEntry, Provenance, Query
    from .retrievers import BM25, TagScorer, register_retriever
    from .store import MemoryStore

_WHERE = {
    "StoreError": "backend",
    "StoreLockedError": "backend",
    "Collection": "collection",
    "load": "datasets",
    "register_format": "datasets",
    "load_collection": "datasets.beir",
    "AgentMemoryError": "errors",
    "InputError": "errors",
    "MissingFileError": "errors",
    "ParameterError": "errors",
    "UnknownNameError": "errors",
    "Evaluation": "evaluate",
    "evaluate": "evaluate",
    "EventLog": "events",
    "HashIds": "events",
    "SteppingClock": "events",
    "Measure": "metrics",
    "MeasureDef": "metrics",
    "QueryContext": "metrics",
    "parse_measure": "metrics",
    "register_measure": "metrics",
    "Event": "records",
    "Hit": "records",
    "MemoryEntry": "records",
    "Provenance": "records",
    "Query": "records",
    "BM25": "retrievers",
    "TagScorer": "retrievers",
    "register_retriever": "retrievers",
    "MemoryStore": "store",
}


def __getattr__(name: str) -> object:
    """The public names, each imported from its module on first use (a command imports only what it runs)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'agentmemory' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "BM25",
    "AgentMemoryError",
    "Collection",
    "Evaluation",
    "Event",
    "EventLog",
    "HashIds",
    "Hit",
    "InputError",
    "Measure",
    "MeasureDef",
    "MemoryEntry",
    "MemoryStore",
    "MissingFileError",
    "ParameterError",
    "Provenance",
    "Query",
    "QueryContext",
    "SteppingClock",
    "StoreError",
    "StoreLockedError",
    "TagScorer",
    "UnknownNameError",
    "__version__",
    "evaluate",
    "load",
    "load_collection",
    "parse_measure",
    "register_format",
    "register_measure",
    "register_retriever",
]
