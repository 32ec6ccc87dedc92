"""agentmemory: how well does an agent-memory retriever find the right memories?"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562), so `agentmemory` loads in milliseconds
    from agentmemory.datasets import load, register_format
    from agentmemory.datasets.beir import load_collection
    from agentmemory.datasets.collection import Collection
    from agentmemory.errors import (
        AgentMemoryError,
        InputError,
        MissingFileError,
        ParameterError,
        StoreError,
        StoreLockedError,
        UnknownNameError,
    )
    from agentmemory.evaluation.options import EvalOptions
    from agentmemory.evaluation.runner import Evaluation, evaluate
    from agentmemory.metrics import Measure, MeasureDef, QueryContext, parse_measure, register_measure
    from agentmemory.records import Event, Hit, MemoryEntry, Provenance, Query
    from agentmemory.retrievers import BM25, TagScorer, register_retriever
    from agentmemory.store.core import MemoryStore
    from agentmemory.store.events import EventLog, HashIds, SteppingClock

_WHERE = {
    "StoreError": "errors",
    "StoreLockedError": "errors",
    "Collection": "datasets.collection",
    "load": "datasets",
    "register_format": "datasets",
    "load_collection": "datasets.beir",
    "AgentMemoryError": "errors",
    "InputError": "errors",
    "MissingFileError": "errors",
    "ParameterError": "errors",
    "UnknownNameError": "errors",
    "EvalOptions": "evaluation.options",
    "Evaluation": "evaluation.runner",
    "evaluate": "evaluation.runner",
    "EventLog": "store.events",
    "HashIds": "store.events",
    "SteppingClock": "store.events",
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
    "MemoryStore": "store.core",
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
    "EvalOptions",
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

# Modules that moved when the package was regrouped (0.2.0).  For one release the old paths still
# import, with a DeprecationWarning naming the new path; each is served by the one finder below
# rather than by a stub file per old module.
_MOVED = {
    "agentmemory.artifact": "agentmemory.analysis.artifact",
    "agentmemory.backend": "agentmemory.store.backend",
    "agentmemory.batch": "agentmemory.evaluation.batch",
    "agentmemory.cache": "agentmemory.files.cache",
    "agentmemory.collection": "agentmemory.datasets.collection",
    "agentmemory.compare": "agentmemory.analysis.comparison_table",
    "agentmemory.evaluate": "agentmemory.evaluation.runner",
    "agentmemory.events": "agentmemory.store.events",
    "agentmemory.inputs": "agentmemory.files.reading",
    "agentmemory.io": "agentmemory.files.atomic",
    "agentmemory.numeric": "agentmemory.files.numbers",
    "agentmemory.outputs": "agentmemory.files.plan",
    "agentmemory.persist": "agentmemory.store.sqlite",
    "agentmemory.provenance": "agentmemory.metrics.provenance",
    "agentmemory.report.sweeps": "agentmemory.report.sweep_notebook",
    "agentmemory.runs": "agentmemory.evaluation.runfiles",
    "agentmemory.scoring": "agentmemory.metrics.scoring",
    "agentmemory.stats": "agentmemory.analysis.statistics",
    "agentmemory.storeio": "agentmemory.store.transfer",
    "agentmemory.sweep": "agentmemory.evaluation.sweeps",
    "agentmemory.tables": "agentmemory.analysis.text_tables",
    "agentmemory.tieaware": "agentmemory.metrics.tieaware",
    "agentmemory.trec": "agentmemory.files.trec",
}


class _MovedModuleFinder:
    """Imports an old module path as the module that now lives at the new one, with a DeprecationWarning."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, self)  # type: ignore[arg-type]

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        import importlib
        import warnings

        old = spec.name
        new = _MOVED[old]
        warnings.warn(f"{old} is now {new}; the old path will be removed in 0.3.0", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


def _install_moved_module_finder() -> None:
    import sys

    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


_install_moved_module_finder()
