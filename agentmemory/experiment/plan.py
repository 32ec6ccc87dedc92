"""From a grid to its tasks: collections loaded once on the client, systems resolved, every task keyed.

:func:`plan_experiment` is where bad input shows up, before anything is
run or written: a collection that does not load, format options its format
does not declare, a run file that cannot be read.  It loads each collection
(for its digest, which is part of every task's key, and for what the merge
needs: the judged queries, their groups and the headline exclusions) and
keeps it in this process's collection cache, so serial tasks do not load
it again.

The tasks come in a fixed order, the order of every output: collections in
the grid's order, then ``k`` and ``seed`` in the grid's order, then the
systems (the collection's retrievers, then its runs); the tasks listed under
``[[tasks]]`` follow.  A task listed twice is run once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmemory import datasets  # called as datasets.load(...), looked up at call time (tests patch it)
from agentmemory.analysis.card import collection_card
from agentmemory.datasets.collection import collection_summary
from agentmemory.errors import AgentMemoryError, InputError
from agentmemory.evaluation.options import EvalOptions
from agentmemory.experiment.grid import CollectionDef, Grid
from agentmemory.experiment.task import CollectionSource, SystemSource, TaskJob, remember, task_key
from agentmemory.files.atomic import sha256_file
from agentmemory.retrievers import resolve_retriever

__all__ = ["Plan", "PlannedCollection", "Task", "plan_experiment"]


@dataclass(frozen=True)
class Task:
    """One task: which collection, system, k and seed (names, for messages and outputs), its key and its job."""

    collection: str
    system: str
    k: int
    seed: int
    key: str
    job: TaskJob

    def describe(self) -> str:
        """``collection notes, system bm25[k1=0.9], k 5, seed 7``: the task's spec in a message."""
        return f"collection {self.collection}, system {self.system}, k {self.k}, seed {self.seed}"


@dataclass(frozen=True)
class PlannedCollection:
    """A loaded collection, reduced to what the merge needs (the entries are not kept here)."""

    definition: CollectionDef
    source: CollectionSource
    summary: Mapping[str, Any]
    queries: tuple[tuple[str, str | None], ...]
    excluded_groups: tuple[str, ...]
    systems: tuple[SystemSource, ...]
    card: Mapping[str, Any] = field(default_factory=dict)
    """The collection's definitions card without measures (:func:`agentmemory.analysis.card.collection_card`)."""

    @property
    def name(self) -> str:
        return self.definition.name


@dataclass(frozen=True)
class Plan:
    """A grid's collections and tasks, ready to run."""

    grid: Grid
    collections: tuple[PlannedCollection, ...]
    tasks: tuple[Task, ...]

    def collection(self, name: str) -> PlannedCollection:
        return next(c for c in self.collections if c.name == name)


def _measures(k: int, extra: tuple[str, ...]) -> tuple[str, ...]:
    """The measures a task at ``k`` computes: the defaults at ``k``, then the grid's others (as ``evaluate`` does)."""
    return tuple(str(m) for m in EvalOptions(k=k, measures=extra).all_measures)


def _load(grid: Grid, definition: CollectionDef) -> tuple[CollectionSource, Any]:

    try:
        names = {"path": "path = ", "format": "format ="}  # as the grid file writes them
        name = (
            datasets.detect_format(definition.path, names=names) if definition.format == "auto" else definition.format
        )
        fmt = datasets.FORMATS.get(name)
        options = fmt.check_options(dict(definition.options or {}))
        collection = datasets.load(definition.path, format=name, **options)
    except AgentMemoryError as err:
        raise InputError(grid.source, definition.line, f"collection {definition.name!r}: {err}") from None
    source = CollectionSource(str(definition.path.resolve()), name, tuple(options.items()), collection.digest)
    return source, collection


def _run_source(grid: Grid, definition: CollectionDef, index: int) -> SystemSource:
    run = definition.runs[index]
    try:
        sha = sha256_file(run.path)
        memories_sha = sha256_file(run.memories) if run.memories is not None else None
    except OSError as err:
        raise InputError(grid.source, definition.line, f"run {run.name!r}: {err.strerror or err}") from None
    return SystemSource(
        "run",
        run.name,
        run.name,
        path=str(run.path.resolve()),
        sha256=sha,
        memories=str(run.memories.resolve()) if run.memories is not None else None,
        memories_sha256=memories_sha,
        lenient=run.lenient,
    )


def plan_experiment(grid: Grid) -> Plan:
    """Load the grid's collections and list its tasks (see the module docstring).

    Raises:
        InputError: a collection that does not load (its message after the
            grid file's line and the collection's name), or a run file that
            cannot be read.
    """
    collections = []
    tasks: dict[tuple[str, str, int, int], Task] = {}
    explicit = {c.name: [t for t in grid.tasks if t.collection == c.name] for c in grid.collections}
    for definition in grid.collections:
        source, loaded = _load(grid, definition)
        remember(source, loaded)
        own = definition.systems if definition.systems is not None else grid.systems
        systems: dict[str, SystemSource] = {}
        for spec in own:
            systems.setdefault(spec.key, SystemSource(spec.kind, spec.key, spec.label, spec=spec.text))
        runs = {run.name: _run_source(grid, definition, i) for i, run in enumerate(definition.runs)}
        systems.update(runs)
        crossed = list(systems.values())
        for listed in explicit[definition.name]:
            if listed.system in runs:
                continue
            resolved = resolve_retriever(listed.system)  # checked when the grid was read
            systems.setdefault(
                resolved.key, SystemSource("retriever", resolved.key, resolved.label, spec=listed.system)
            )
        judged = tuple((q.id, q.group) for q in loaded.judged_queries)
        planned = PlannedCollection(
            definition,
            source,
            collection_summary(loaded),
            judged,
            tuple(loaded.headline_excludes),
            tuple(systems.values()),
            collection_card(loaded),
        )
        collections.append(planned)
        pairs = [(k, seed) for k in grid.k for seed in grid.seeds]
        wanted = [(k, seed, system) for k, seed in pairs for system in crossed]
        for listed in explicit[definition.name]:
            system = runs.get(listed.system)
            if system is None:
                system = systems[resolve_retriever(listed.system).key]
            wanted.append((listed.k, listed.seed, system))
        for k, seed, system in wanted:
            job = TaskJob(source, system, k, seed, _measures(k, grid.measures), grid.relevance_of(definition.name))
            tasks.setdefault(
                (definition.name, system.name, k, seed), Task(definition.name, system.name, k, seed, task_key(job), job)
            )
    return Plan(grid, tuple(collections), tuple(tasks.values()))


def default_out(grid: Grid) -> Path:
    """Where ``agentmemory experiment`` writes without ``--out``: ``experiments/<grid name>`` in the working folder."""
    return Path("experiments") / grid.name
