"""agentmemory: how well does an agent-memory retriever find the right memories?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmemory._version import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

if TYPE_CHECKING:  # the public names for type checkers (`X as X`: an explicit re-export); at run time _EXPORTS
    from agentmemory.collection import Collection as Collection
    from agentmemory.datasets import load as load
    from agentmemory.datasets import register_format as register_format
    from agentmemory.datasets.beir import load_collection as load_collection
    from agentmemory.errors import (
        AgentMemoryError as AgentMemoryError,
    )
    from agentmemory.errors import (
        InputError as InputError,
    )
    from agentmemory.errors import (
        MissingFileError as MissingFileError,
    )
    from agentmemory.errors import (
        ParameterError as ParameterError,
    )
    from agentmemory.errors import (
        StoreError as StoreError,
    )
    from agentmemory.errors import (
        StoreLockedError as StoreLockedError,
    )
    from agentmemory.errors import (
        UnknownNameError as UnknownNameError,
    )
    from agentmemory.evaluation.options import EvalOptions as EvalOptions
    from agentmemory.evaluation.runner import Evaluation as Evaluation
    from agentmemory.evaluation.runner import evaluate as evaluate
    from agentmemory.metrics import (
        Measure as Measure,
    )
    from agentmemory.metrics import (
        MeasureDef as MeasureDef,
    )
    from agentmemory.metrics import (
        QueryContext as QueryContext,
    )
    from agentmemory.metrics import (
        parse_measure as parse_measure,
    )
    from agentmemory.metrics import (
        register_measure as register_measure,
    )
    from agentmemory.records import (
        Event as Event,
    )
    from agentmemory.records import (
        Hit as Hit,
    )
    from agentmemory.records import (
        MemoryEntry as MemoryEntry,
    )
    from agentmemory.records import (
        Provenance as Provenance,
    )
    from agentmemory.records import (
        Query as Query,
    )
    from agentmemory.retrievers import BM25 as BM25
    from agentmemory.retrievers import TagScorer as TagScorer
    from agentmemory.retrievers import register_retriever as register_retriever
    from agentmemory.store.core import MemoryStore as MemoryStore
    from agentmemory.store.events import EventLog as EventLog
    from agentmemory.store.events import HashIds as HashIds
    from agentmemory.store.events import SteppingClock as SteppingClock
    from agentmemory.systems.base import Memory as Memory
    from agentmemory.systems.base import Turn as Turn
    from agentmemory.systems.registry import register_system as register_system

# The public names, each listed once with the module it comes from; imported on first use (PEP 562),
# so `import agentmemory` loads in milliseconds.  The TYPE_CHECKING block above repeats them for type
# checkers, and a test checks that the two agree.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "agentmemory.datasets": (
        "load",
        "register_format",
    ),
    "agentmemory.datasets.beir": ("load_collection",),
    "agentmemory.collection": ("Collection",),
    "agentmemory.errors": (
        "AgentMemoryError",
        "InputError",
        "MissingFileError",
        "ParameterError",
        "StoreError",
        "StoreLockedError",
        "UnknownNameError",
    ),
    "agentmemory.evaluation.runner": (
        "Evaluation",
        "evaluate",
    ),
    "agentmemory.evaluation.options": ("EvalOptions",),
    "agentmemory.metrics": (
        "Measure",
        "MeasureDef",
        "QueryContext",
        "parse_measure",
        "register_measure",
    ),
    "agentmemory.records": (
        "Event",
        "Hit",
        "MemoryEntry",
        "Provenance",
        "Query",
    ),
    "agentmemory.retrievers": (
        "BM25",
        "TagScorer",
        "register_retriever",
    ),
    "agentmemory.store.core": ("MemoryStore",),
    "agentmemory.store.events": (
        "EventLog",
        "HashIds",
        "SteppingClock",
    ),
    "agentmemory.systems.base": (
        "Memory",
        "Turn",
    ),
    "agentmemory.systems.registry": ("register_system",),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> object:
    """The public names, each imported from its module on first use (a command imports only what it runs)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'agentmemory' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["__version__", *sorted(_WHERE)]

# Modules that moved when the package was regrouped (0.2.0; the collection record left agentmemory.datasets
# for agentmemory.collection after it).  For one release the old paths still
# import, with a DeprecationWarning naming the new path; each is served by the one finder below
# rather than by a stub file per old module.
_MOVED = {
    "agentmemory.artifact": "agentmemory.analysis.artifact",
    "agentmemory.backend": "agentmemory.store.backend",
    "agentmemory.batch": "agentmemory.evaluation.batch",
    "agentmemory.cache": "agentmemory.files.cache",
    "agentmemory.compare": "agentmemory.analysis.comparison_table",
    "agentmemory.datasets.collection": "agentmemory.collection",
    "agentmemory.evaluate": "agentmemory.evaluation.runner",
    "agentmemory.events": "agentmemory.store.events",
    "agentmemory.inputs": "agentmemory.files.reading",
    "agentmemory.io": "agentmemory.files.atomic",
    "agentmemory.numeric": "agentmemory.files.numbers",
    "agentmemory.outputs": "agentmemory.files.output_plan",
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
