"""From a grid to its tasks: collections loaded once, systems resolved, every task keyed.

:func:`plan_experiment` is where bad input shows up, before anything is
run or written: a collection that does not load, format options its format
does not declare, a run file that cannot be read.  It loads each collection
(for its digest, which is part of every task's key, and for what the merge
needs: the judged queries, their groups and the headline exclusions,
:class:`~agentmemory.experiment.task.CollectionFacts`) and keeps it in the
collection cache of the process that loaded it: this one (so serial tasks do
not load it again), or, given an executor of several workers it can address,
one of its workers, which then runs that collection's tasks first
(``Plan.homes``): the client holds no collection, and each is read once per
grid.  A collection with answer systems is always loaded here (its answer
files are matched to its questions).

The tasks come in a fixed order, the order of every output: collections in
the grid's order, then ``k`` and ``seed`` in the grid's order, then the
systems (the collection's retrievers, then its runs, then its answer
systems); the tasks listed under ``[[tasks]]`` follow.  A task listed twice
is run once.  Each retriever task carries its spec's ``index_key`` (tasks of
one collection with the same one share an index), and :func:`batches` cuts
tasks into the calls a worker gets (docs/grids.md, "what each worker builds").

A collection's **answer systems** are read and matched to its questions here
(:func:`agentmemory.evaluation.answer_runs.answer_systems`), so a bad answer
file stops the plan, and what was read (every file's sha256, the companions a
reader found beside it too) is part of the task's key.  Every task of such a
collection computes the answer measures an evaluation with all of them would
(:func:`~agentmemory.evaluation.answer_runs.default_answer_measures`: a
retriever's ``answer_in_context@k``, say) and scores the questions left out
of retrieval scoring too (``EvalOptions.left_out``), so each system's values
are those of ``agentmemory eval --answers`` over the same question set.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from fractions import Fraction
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path
from typing import Any

from agentmemory import datasets  # called as datasets.load(...), looked up at call time (tests patch it)
from agentmemory.answers import ANSWER_FORMATS
from agentmemory.collection import Collection
from agentmemory.errors import AgentMemoryError, InputError
from agentmemory.evaluation.answer_runs import AnswersSpec, AnswerSystem, answer_systems, default_answer_measures
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runner import left_out_questions
from agentmemory.experiment.executors import as_executor, slots, submit_to
from agentmemory.experiment.grid import CollectionDef, Grid
from agentmemory.experiment.task import (
    AnswersSource,
    CollectionFacts,
    CollectionSource,
    SystemSource,
    TaskJob,
    answers_read,
    collection_facts,
    current_collection,
    error_line,
    splits_by_scope,
    task_key,
)
from agentmemory.files.atomic import sha256_file
from agentmemory.retrievers import RETRIEVERS, resolve_retriever
from agentmemory.retrievers.spec import parse_spec
from agentmemory.systems.registry import SYSTEMS

__all__ = [
    "CUT_INSIDE",
    "SCOPE_PART_MIN",
    "SMALL_BATCH",
    "Plan",
    "PlannedCollection",
    "Task",
    "batch_weight",
    "batches",
    "plan_experiment",
    "plugin_code",
    "scope_split",
]


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
    """A loaded collection, reduced to what the merge needs (the entries are not kept here).

    ``queries`` are the questions its tasks score, ``(id, group)`` in order: the judged ones, then, when it
    has answer systems, those left out of retrieval scoring
    (:func:`~agentmemory.evaluation.runner.left_out_questions`).
    """

    definition: CollectionDef
    source: CollectionSource
    summary: Mapping[str, Any]
    queries: tuple[tuple[str, str | None], ...]
    excluded_groups: tuple[str, ...]
    systems: tuple[SystemSource, ...]
    card: Mapping[str, Any] = field(default_factory=dict)
    """The collection's definitions card without measures (:func:`agentmemory.analysis.card.collection_card`)."""
    scopes: int = 1
    """How many scopes its judged queries are asked in: a batch of its tasks runs in at most that many parts
    (:func:`scope_split`)."""

    @property
    def name(self) -> str:
        return self.definition.name


@dataclass(frozen=True)
class Plan:
    """A grid's collections and tasks, ready to run."""

    grid: Grid
    collections: tuple[PlannedCollection, ...]
    tasks: tuple[Task, ...]
    homes: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """Collection name -> the worker (:func:`~agentmemory.experiment.executors.slots`) that loaded it while
    planning, when one did; the run hands that collection's tasks to it first."""

    def collection(self, name: str) -> PlannedCollection:
        return next(c for c in self.collections if c.name == name)


def _measures(
    k: int, extra: tuple[str, ...], loaded: Collection | None, answered: list[AnswerSystem], *, memories: bool = False
) -> tuple[str, ...]:
    """The measures a task at ``k`` computes: the defaults at ``k``, then the grid's others, then the answer
    measures of the collection's answer systems not among them (as ``evaluate`` orders them).

    ``memories``: the collection's systems include one returning its own memories (a memory system, a run with
    its memories), so every task of the collection computes the token-budget defaults too, as ``evaluate``
    does for such a system, and the merge compares every system on them.
    """
    chosen = [str(m) for m in EvalOptions(k=k, measures=extra).measures_for(memories=memories)]
    if answered and loaded is not None:  # a collection with answer systems is loaded here (see plan_experiment)
        chosen += [str(m) for m in default_answer_measures(loaded, answered, k) if str(m) not in chosen]
    return tuple(chosen)


def _opened(grid: Grid, definition: CollectionDef) -> tuple[str, str, tuple[tuple[str, Any], ...]]:
    """The collection's absolute path, format (detected for ``auto``) and every option, checked (no loading)."""
    try:
        names = {"path": "path = ", "format": "format ="}  # as the grid file writes them
        name = (
            datasets.detect_format(definition.path, names=names) if definition.format == "auto" else definition.format
        )
        options = datasets.FORMATS.get(name).check_options(dict(definition.options or {}))
    except AgentMemoryError as err:
        raise _collection_error(grid, definition, err) from None
    return str(definition.path.resolve()), name, tuple(options.items())


def _collection_error(grid: Grid, definition: CollectionDef, err: AgentMemoryError | str) -> InputError:
    return InputError(grid.source, definition.line, f"collection {definition.name!r}: {err}")


def _load(grid: Grid, definition: CollectionDef, opened: tuple[str, str, tuple[tuple[str, Any], ...]]) -> Collection:
    """The collection, loaded in this process (or served from its cache when its files are unchanged)."""
    try:
        return current_collection(*opened)
    except AgentMemoryError as err:
        raise _collection_error(grid, definition, err) from None


def _loaded_elsewhere(
    grid: Grid, opened: Mapping[str, tuple[str, str, tuple[tuple[str, Any], ...]]], executor: Executor | None
) -> dict[str, tuple[Any, Future[Any]]]:
    """Each collection without answer systems handed to one of ``executor``'s workers to load and describe
    (:func:`~agentmemory.experiment.task.collection_facts`), round robin, when it has several workers it can
    address (:func:`~agentmemory.experiment.executors.slots`): name -> (that worker, the facts to come)."""
    places = list(slots(executor)) if executor is not None else []
    if executor is None or len(places) < 2:
        return {}
    remote = [d for d in grid.collections if not d.answers]
    return {
        d.name: (
            places[i % len(places)],
            submit_to(executor, places[i % len(places)], collection_facts, *opened[d.name]),
        )
        for i, d in enumerate(remote)
    }


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


def _answers_source(
    grid: Grid, definition: CollectionDef, index: int, loaded: Collection
) -> tuple[SystemSource, AnswerSystem]:
    """The collection's ``index``-th answer system, read and matched to its questions (bad files stop the plan)."""
    answers = definition.answers[index]
    paths = tuple(str(p.resolve()) for p in answers.paths)
    mapping = str(answers.mapping.resolve()) if answers.mapping is not None else None
    try:
        [answered] = answer_systems(loaded, [AnswersSpec(answers.name, paths, answers.format, mapping)])
    except AgentMemoryError as err:
        raise InputError(
            grid.source,
            answers.line or definition.line,
            f"collection {definition.name!r} answers {answers.name!r}: {err}",
        ) from None
    formats = sorted({f.format for f in answered.files})
    code = tuple(sorted({c for name in formats for c in _answer_format_code(name)}))
    source = AnswersSource(paths, answers.format, mapping, answers_read(answered.files))
    return SystemSource("answers", answers.name, answers.name, code=code, answers=source), answered


def _answer_format_code(name: str) -> list[tuple[str, str, str]]:
    """What identifies a plugin answer format's reader (none for agentmemory's own formats)."""
    module = getattr(ANSWER_FORMATS.get(name).read, "__module__", None) or ""
    return _module_code(name, module) if module and not _ours(module) else []


def _ours(module: str) -> bool:
    return module == "agentmemory" or module.startswith("agentmemory.")


@functools.lru_cache(maxsize=1)
def _distributions() -> Mapping[str, list[str]]:
    """Top-level import name -> the installed distributions providing it (read once per process)."""
    return packages_distributions()


def _module_code(target: str, module: str) -> list[tuple[str, str, str]]:
    """What identifies ``module``'s code: its file's sha256, and the version of the distribution it belongs to."""
    found = sys.modules.get(module) or importlib.import_module(module)  # resolved already: imported
    code = []
    file = getattr(found, "__file__", None)
    if isinstance(file, str) and Path(file).is_file():
        code.append((target, "sha256", sha256_file(file)))
    for name in sorted(_distributions().get(module.partition(".")[0], [])):
        try:
            code.append((target, "distribution", f"{name} {version(name)}"))
        except PackageNotFoundError:  # pragma: no cover - listed a moment ago
            continue
    return code


def _named_plugins(value: Any) -> list[str]:
    """The spec texts among a spec's parameter values (nested specs, ``of=a+b``), however deep."""
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _named_plugins(item)]
    return [value] if isinstance(value, str) else []


def plugin_code(text: str, kind: str = "retriever") -> tuple[tuple[str, str, str], ...]:
    """What identifies the code of each plugin the spec ``text`` names, for the task key (:mod:`.task`).

    Each ``package.module:attribute`` target, and each registered name whose
    factory is not agentmemory's own (an entry point's, a name registered at
    run time), gives ``(target, "sha256", <its module file's sha256>)`` and,
    when the module belongs to an installed distribution, ``(target,
    "distribution", "<name> <version>")``; the spec's parameter values are
    read as specs too (``hybrid[of=mymod:R+bm25]``, ``retriever[of=mymod:R]``).
    ``kind`` is ``"system"`` for a memory system's spec (its name is looked up
    among the systems first).  Sorted, each once.
    """
    code: set[tuple[str, str, str]] = set()
    todo, seen = [(text, kind)], set()
    while todo:
        item, what = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        try:
            spec = parse_spec(item)
        except AgentMemoryError:  # a parameter value that is no spec (a path, a word)
            continue
        if spec.is_import:
            code.update(_module_code(spec.target, spec.target.partition(":")[0]))
        else:
            registry: Any = SYSTEMS if what == "system" and spec.target in SYSTEMS else RETRIEVERS
            if spec.target not in registry:
                continue
            module = getattr(registry.get(spec.target).factory, "__module__", None) or ""
            if module and not _ours(module):
                code.update(_module_code(spec.target, module))
        todo.extend((nested, "retriever") for value in spec.params.values() for nested in _named_plugins(value))
    return tuple(sorted(code))


def _index_key(system: SystemSource) -> str | None:
    """The retriever's :attr:`~agentmemory.retrievers.RetrieverSpec.index_key` (``None`` for runs and memory systems)."""
    if system.kind != "retriever":
        return None
    return resolve_retriever(system.spec).index_key  # checked when the grid was read


def plan_experiment(grid: Grid, executor: Any = None) -> Plan:
    """Load the grid's collections and list its tasks (see the module docstring).

    With ``executor`` (the one the tasks will run on) of several workers it can address (a pool from
    :func:`~agentmemory.experiment.executors.open_executor`, a Dask client), each collection without answer
    systems is loaded on one of its workers instead of here, which keeps it for the collection's tasks
    (``Plan.homes`` says where); the plan is the same.

    Raises:
        InputError: a collection that does not load (its message after the
            grid file's line and the collection's name), or a run file that
            cannot be read.
    """
    collections = []
    tasks: dict[tuple[str, str, int, int], Task] = {}
    explicit = {c.name: [t for t in grid.tasks if t.collection == c.name] for c in grid.collections}
    pool = as_executor(executor) if executor is not None else None
    opened = {d.name: _opened(grid, d) for d in grid.collections}  # every path, format and options checked first
    remote = _loaded_elsewhere(grid, opened, pool)
    for definition in grid.collections:
        loaded, facts = _facts(grid, definition, opened[definition.name], remote)
        source = CollectionSource(*opened[definition.name], facts.digest)
        systems, runs, crossed, answered = _systems(grid, definition, loaded, explicit[definition.name])
        left_out = left_out_questions(loaded) if answered and loaded is not None else ()
        judged = (*facts.judged, *((q.id, q.group) for q in left_out))
        planned = PlannedCollection(
            definition,
            source,
            facts.summary,
            judged,
            facts.excluded_groups,
            tuple(systems.values()),
            facts.card,
            facts.scopes,
        )
        collections.append(planned)
        pairs = [(k, seed) for k in grid.k for seed in grid.seeds]
        wanted = [(k, seed, system) for k, seed in pairs for system in crossed]
        for listed in explicit[definition.name]:
            system = runs.get(listed.system)
            if system is None:
                system = systems[resolve_retriever(listed.system).key]
            wanted.append((listed.k, listed.seed, system))
        for task in _tasks(grid, planned, wanted, loaded, answered):
            tasks.setdefault((task.collection, task.system, task.k, task.seed), task)
    homes = {name: place for name, (place, _) in remote.items()}
    return Plan(grid, tuple(collections), tuple(tasks.values()), homes)


def _systems(
    grid: Grid, definition: CollectionDef, loaded: Collection | None, explicit: Sequence[Any]
) -> tuple[dict[str, SystemSource], dict[str, SystemSource], list[SystemSource], list[AnswerSystem]]:
    """The collection's systems by name (the grid's or its own, its runs and answer systems, then those only
    ``[[tasks]]`` name), its runs and answer systems by name, the systems crossed with every k and seed, and its
    answer systems as read (``loaded`` is the collection when it has any)."""
    own = definition.systems if definition.systems is not None else grid.systems
    systems: dict[str, SystemSource] = {}
    for spec in own:
        code = plugin_code(spec.text, spec.kind)
        systems.setdefault(spec.key, SystemSource(spec.kind, spec.key, spec.label, spec=spec.text, code=code))
    runs = {run.name: _run_source(grid, definition, i) for i, run in enumerate(definition.runs)}
    read = [_answers_source(grid, definition, i, loaded) for i in range(len(definition.answers)) if loaded is not None]
    runs.update({s.name: s for s, _ in read})  # bound to the collection, as runs are
    systems.update(runs)
    crossed = list(systems.values())
    for listed in explicit:
        if listed.system in runs:
            continue
        resolved = resolve_retriever(listed.system)  # checked when the grid was read
        code = plugin_code(listed.system)
        systems.setdefault(
            resolved.key, SystemSource("retriever", resolved.key, resolved.label, spec=listed.system, code=code)
        )
    return systems, runs, crossed, [a for _, a in read]


def _facts(
    grid: Grid,
    definition: CollectionDef,
    opened: tuple[str, str, tuple[tuple[str, Any], ...]],
    remote: Mapping[str, tuple[Any, Future[Any]]],
) -> tuple[Collection | None, CollectionFacts]:
    """The collection loaded here (``None`` when a worker loaded it) and what the plan needs of it."""
    if definition.name not in remote:
        loaded = _load(grid, definition, opened)
        return loaded, CollectionFacts.of(loaded)
    try:
        facts = remote[definition.name][1].result()
    except Exception as err:  # the worker died, the pool broke, the worker runs other code
        raise _collection_error(grid, definition, f"a worker could not load it: {error_line(err)}") from None
    if isinstance(facts, str):
        raise _collection_error(grid, definition, facts)
    return None, facts


def _tasks(
    grid: Grid,
    planned: PlannedCollection,
    wanted: Sequence[tuple[int, int, SystemSource]],
    loaded: Collection | None,
    answered: list[AnswerSystem],
) -> list[Task]:
    """The collection's tasks, in the order of ``wanted`` (``(k, seed, system)`` each)."""
    shared = {system.name: _index_key(system) for system in planned.systems}
    memories = any(s.kind == "system" or s.memories is not None for s in planned.systems)
    out = []
    for k, seed, system in wanted:
        job = TaskJob(
            planned.source,
            system,
            k,
            seed,
            _measures(k, grid.measures, loaded, answered, memories=memories),
            grid.relevance_of(planned.name),
            index=shared[system.name],
            left_out=bool(answered),
            settings=grid.settings,
        )
        out.append(Task(planned.name, system.name, k, seed, task_key(job), job))
    return out


SMALL_BATCH = 20_000
"""A batch lighter than this (in :func:`batch_weight` units: a collection of a few thousand entries) is merged
with the next light one on an executor of several workers, as long as each worker still gets one: a Dask
scheduler costs milliseconds per task (benchmarks/README.md), a noticeable share of such a task's work."""

CUT_INSIDE = Fraction(3, 4)
"""A batch is cut inside an index group only when the heavier half, each half paying that group's build, weighs
at most this share of the whole batch (:func:`batches`): with even halves, only when the group's searching
weighs at least as much as its build.  A group whose build dominates stays whole in one batch."""


def build_weight(plan: Plan, task: Task) -> int:
    """A rough measure of building a task's index: its collection's entries (paid once per batch by an index
    group, see :func:`batch_weight`)."""
    return int(plan.collection(task.collection).summary.get("entries", 0))


def task_weight(plan: Plan, task: Task) -> int:
    """A rough measure of a task's own work once its index is built: 50 per judged query (searching and
    measuring them)."""
    return 50 * int(plan.collection(task.collection).summary.get("judged_queries", 0))


def batch_weight(plan: Plan, tasks: Sequence[Task]) -> int:
    """A rough measure of a batch's work: each of its index groups' :func:`build_weight` once (the first of its
    tasks in the batch builds the index, the others reuse it), plus each task's :func:`task_weight`."""
    builds = {_group(t): build_weight(plan, t) for t in tasks}
    return sum(builds.values()) + sum(task_weight(plan, t) for t in tasks)


def _group(task: Task) -> tuple[str, str]:
    """The task's index group: its collection and ``index_key`` (a task that shares no index is one alone)."""
    return task.collection, task.job.index or f"task {task.key}"


def batches(plan: Plan, tasks: Sequence[Task], width: int | None) -> list[tuple[Task, ...]]:
    """``tasks`` cut into batches, each run by one worker in the order given (see :func:`execute_batch
    <agentmemory.experiment.task.execute_batch>`); every task in exactly one batch.

    Tasks are ordered by collection (the plan's order), then by **index group**
    (tasks of one collection whose retrievers have the same ``index_key``,
    which share one index), then as planned.  With ``width`` 1 (the serial
    executor) or ``None`` (an executor that does not say how many tasks it
    runs at once) each task is a batch of its own: a worker process keeps a
    shared index for the next task (:data:`~agentmemory.experiment.task.INDEX_CACHE_SIZE`),
    and the serial executor then builds each index once per grid.

    With ``width`` workers, each collection's tasks form one batch (a worker
    loads the collection and builds each index once for all of them).  A
    batch's work is :func:`batch_weight`: each index group's build once per
    batch that holds any of its tasks, plus each task's searching.  Then the
    heaviest batch that can still be cut, while it weighs at least twice
    :data:`SMALL_BATCH`, is cut in two when that lowers what the slowest
    worker does: when both halves, and the whole work (builds paid again
    included) over ``width``, are lighter than it.  The cut is at the index
    group boundary nearest its middle when that leaves at least a quarter on
    each side; else inside an index group, where the heavier half is the
    lightest, only if that half (each half paying the group's build) weighs at
    most :data:`CUT_INSIDE` of the batch; else at the group boundary nearest
    the middle, if it has one.  A batch of one index group whose build
    dominates is thus never cut: one worker builds its index, and the other
    workers get other batches, or none.  Last, neighbouring batches lighter
    than :data:`SMALL_BATCH` are merged while each worker still gets a batch.
    The batches depend only on the plan, the tasks and ``width``.
    """
    groups: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        groups.setdefault(_group(task), []).append(task)
    order = {c.name: i for i, c in enumerate(plan.collections)}
    ordered = sorted(groups.values(), key=lambda g: order[g[0].collection])  # stable: groups keep their order
    if width is None or width <= 1 or not tasks:
        return [(task,) for group in ordered for task in group]
    bundles: dict[str, list[list[Task]]] = {}
    for group in ordered:
        bundles.setdefault(group[0].collection, []).append(group)
    builds = {_group(g[0]): build_weight(plan, g[0]) for g in ordered}
    own = {t.key: task_weight(plan, t) for t in tasks}

    def weigh(bundle: list[list[Task]]) -> int:
        return sum(builds[k] for k in {_group(g[0]) for g in bundle}) + sum(own[t.key] for g in bundle for t in g)

    cut = _cut(list(bundles.values()), weigh, lambda group: builds[_group(group[0])], own, width)
    merged: list[list[list[Task]]] = []
    for i, bundle in enumerate(cut):
        light = merged and weigh(merged[-1] + bundle) < SMALL_BATCH
        if light and len(merged) + (len(cut) - i - 1) >= width:  # the batches there will be, merged
            merged[-1] = merged[-1] + bundle
        else:
            merged.append(bundle)
    return [tuple(t for g in bundle for t in g) for bundle in merged]


_Bundle = list[list[Task]]
"""A batch in the making: its tasks by index group, in order."""


def _cut(
    cut: list[_Bundle],
    weigh: Callable[[_Bundle], int],
    build: Callable[[list[Task]], int],
    own: Mapping[str, int],
    width: int,
) -> list[_Bundle]:
    """``cut`` with its heaviest batches cut in two while that pays (see :func:`batches`)."""
    weights = [weigh(bundle) for bundle in cut]
    whole = [False] * len(cut)  # batches found not worth cutting
    while not all(whole):
        heaviest = max((i for i in range(len(cut)) if not whole[i]), key=lambda i: (weights[i], -i))
        heavy, total = weights[heaviest], sum(weights)
        if heavy * width <= total or heavy < 2 * SMALL_BATCH:
            break  # so is every lighter batch
        halves = _halves(cut[heaviest], build, own)
        parts = [weigh(half) for half in halves] if halves else [heavy]
        if halves is None or max(parts) >= heavy or (total - heavy + sum(parts)) >= heavy * width:
            whole[heaviest] = True
            continue
        cut[heaviest : heaviest + 1] = halves
        weights[heaviest : heaviest + 1] = parts
        whole[heaviest : heaviest + 1] = [False, False]
    return cut


def _halves(bundle: _Bundle, build: Callable[[list[Task]], int], own: Mapping[str, int]) -> list[_Bundle] | None:
    """``bundle`` (index groups, in order) in two (``None`` when it cannot be cut): at the group boundary nearest
    the middle when it leaves at least a quarter on each side, else inside a group where the heavier half is
    lightest if it weighs at most :data:`CUT_INSIDE` of the whole, else at the boundary nearest the middle.

    ``build(group)`` is the group's build weight and ``own`` each task's weight (:func:`batch_weight`)."""
    sizes = [build(group) + sum(own[t.key] for t in group) for group in bundle]
    total = sum(sizes)
    before = 0
    boundaries: list[tuple[int, int]] = []  # (the heavier half, where): a cut before group i
    inside: list[tuple[int, int, int]] = []  # (the heavier half, i, j): a cut before task j of group i
    for i, group in enumerate(bundle):
        if i:
            boundaries.append((max(before, total - before), i))
        running = before + build(group)  # the head pays the group's build, and so does the tail
        for j, task in enumerate(group[:-1], start=1):
            running += own[task.key]
            inside.append((max(running, total - running + build(group)), i, j))
        before += sizes[i]
    even = [cut for cut in boundaries if 4 * cut[0] <= 3 * total]
    if even:
        _, i = min(even)  # the first of the nearest
        return [bundle[:i], bundle[i:]]
    if inside and min(inside)[0] <= CUT_INSIDE * total:
        _, i, j = min(inside)  # the first of the lightest
        return [bundle[:i] + [bundle[i][:j]], [bundle[i][j:]] + bundle[i + 1 :]]
    if boundaries:  # the later of two as near, as the cut at the edge of the group holding the middle was
        _, i = min(boundaries, key=lambda cut: (cut[0], -cut[1]))
        return [bundle[:i], bundle[i:]]
    return None


SCOPE_PART_MIN = 2 * SMALL_BATCH
"""A batch lighter than this (:func:`batch_weight`) is never run in parts by scope (:func:`scope_split`): each
part reads the whole collection once more, which only a batch of some weight repays."""


def scope_split(plan: Plan, cut: Sequence[tuple[Task, ...]], width: int | None) -> list[int]:
    """Into how many parts by scope to run each batch of ``cut`` (1: whole) on ``width`` workers.

    When :func:`batches` leaves workers without a batch (a collection whose
    index group's build dominates stays one batch), the batches that can
    run in parts take them: one whose tasks all :func:`split by scope
    <agentmemory.experiment.task.splits_by_scope>`, whose collection has
    more scopes than the batch has parts and which weighs at least
    :data:`SCOPE_PART_MIN`.  One more part at a time goes to the batch with
    the most work per part (ties: the first), until every worker has a batch
    or a part or no batch can take one.  Each part indexes only its scopes'
    entries and answers only their questions, so a part costs a reading of
    the collection, not another build of the whole index.  Depends only on
    the plan, ``cut`` and ``width``.
    """
    counts = [1] * len(cut)
    if width is None or width <= len(cut):
        return counts
    weights = [batch_weight(plan, batch) for batch in cut]
    room = [
        plan.collection(batch[0].collection).scopes
        if weight >= SCOPE_PART_MIN
        and len({t.collection for t in batch}) == 1
        and all(splits_by_scope(t.job) for t in batch)
        else 1
        for batch, weight in zip(cut, weights)
    ]
    for _ in range(width - len(cut)):
        open_ = [i for i in range(len(cut)) if counts[i] < room[i]]
        if not open_:
            break
        chosen = max(open_, key=lambda i: (Fraction(weights[i], counts[i]), -i))
        counts[chosen] += 1
    return counts


def default_out(grid: Grid) -> Path:
    """Where ``agentmemory experiment`` writes without ``--out``: ``experiments/<grid name>`` in the working folder."""
    return Path("experiments") / grid.name
