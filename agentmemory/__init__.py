"""agentmemory: how well does an agent-memory retriever find the right memories?"""

__version__ = "0.1.0"

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
