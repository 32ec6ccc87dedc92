"""One task of an experiment: a system on a collection at one cutoff and seed, as a pure function.

:func:`execute_task` runs on a worker (this process, a process pool's or a
Dask worker's): it loads the collection (once per worker process: loaded
collections are kept by content, :data:`CACHE_SIZE` of them), evaluates the
one system with :func:`agentmemory.evaluate` and returns its per-query
rows as plain JSON-ready data.  It never raises for a bad input: a task
that fails returns ``{"error": "<one line>"}``, so the client reports it
with the task's spec and the other tasks go on (and nothing has to survive
pickling but strings).  :func:`execute_batch` runs several in a row (one
call on a worker, see :func:`agentmemory.experiment.plan.batches`).

**Shared indexes.**  A retriever task carries its spec's ``index_key``
(``TaskJob.index``, not part of its identity: it changes no row).  When an
earlier task in this process kept an index of the same collection and key
(at most :data:`INDEX_CACHE_SIZE`), the task's retriever is made over it
(the same retriever for the same spec, else ``with_params``) instead of
indexing every entry again; a task whose ``keep`` is set leaves its own
for the next.  The rows are the same either way.

**Parts by scope.**  A collection whose entries lie in several scopes (one
haystack per question, as in LongMemEval) can have a batch of retriever
tasks run in parts (:func:`execute_batch`'s ``part``): part ``i`` of ``n``
is the collection cut down to a share of its scopes
(:func:`scope_parts`, :meth:`Collection.only_scopes
<agentmemory.collection.Collection.only_scopes>`), so its worker indexes
only those scopes' entries and answers only their queries.  A query
searches its own scope alone, so its rows are those of the whole run;
:func:`join_parts` puts the parts' rows back in the collection's order and
computes the tie means over all of them, and the task's result is the one
its whole run returns, byte for byte.  A worker running a part keeps that
part, not the whole collection.  The worker that holds the collection (it
planned it) writes it once as a snapshot the other parts' workers map
(:func:`snapshot_for`, :mod:`agentmemory.collection.snapshot`) instead of
reading its files again: they share its columns, and each makes strings
of its own part's ids only.

A task is identified by its **key**, :func:`task_key`: the sha256 of the
canonical JSON of :meth:`TaskJob.identity`: the collection's digest,
format and options (every declared option, defaults included: LoCoMo's
``repair`` changes the collection, not its file), the system (a
retriever's or memory system's canonical key and label; a run's name, the sha256 of its file
and of its memories, and ``lenient``; an answer system's name and, for each
of its files, the format it was read with, the name and sha256 of every file
the reader read (a Zep file's companions too) and the reader's parameters
(a mapping file's name and sha256): :func:`answers_read`), ``k``, ``seed``, the measures,
the relevance mode, whether the questions left out of retrieval scoring are
scored (a collection with answer systems) and agentmemory's version, and what identifies the code
of every plugin the system's spec names (``SystemSource.code``, made by
:func:`agentmemory.experiment.plan.plugin_code`: the sha256 of the module
file a ``package.module:attribute`` target, or a plugin registered under a
name, is defined in, and the version of the installed distribution that
module belongs to, e.g. an entry point's).  Anything that could change a
row changes the key, so a cached task file is reused only for the same
task, and a plugin whose code changed under the same spec is computed
again.  What the key cannot see: other files a plugin's module imports
(an editable install's other modules), the program behind an MCP server's
command, and an encoder's model files (``--no-resume`` recomputes
everything).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmemory import datasets  # called as datasets.load(...), looked up at call time (tests patch it)
from agentmemory._version import __version__
from agentmemory.analysis.card import collection_card
from agentmemory.answers.records import AnswerFile
from agentmemory.collection import Collection, collection_summary
from agentmemory.collection.columns import Dense, Entries
from agentmemory.collection.snapshot import read_snapshot, write_snapshot
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import AgentMemoryError, InputError, check_positive_int, shorten
from agentmemory.evaluation.answer_runs import AnswersSpec, read_answer_files
from agentmemory.evaluation.options import EvalOptions, options_from_settings
from agentmemory.evaluation.result_records import RetrieverResult, tie_means, tie_values
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.settings import setting
from agentmemory.files.atomic import sha256_file
from agentmemory.files.reading import release_freed
from agentmemory.retrievers import RetrieverSpec, resolve_retriever
from agentmemory.store.core import MemoryStore

__all__ = [
    "CACHE_SIZE",
    "INDEX_CACHE_SIZE",
    "AnswersSource",
    "CollectionFacts",
    "CollectionSource",
    "SystemSource",
    "TaskJob",
    "answers_read",
    "collection_facts",
    "current_collection",
    "execute_batch",
    "execute_task",
    "join_parts",
    "scope_parts",
    "snapshot_for",
    "splits_by_scope",
    "forget_collections",
    "forget_indexes",
    "reads",
    "remember",
    "task_key",
]

CACHE_SIZE = 4
"""Loaded collections a worker process keeps (least recently used dropped first)."""

INDEX_CACHE_SIZE = 2
"""Built indexes a worker process keeps for later tasks that share them (least recently used dropped first);
only tasks whose ``keep`` is set (another task of the run shares the index) leave theirs."""

_CACHE: OrderedDict[tuple[Any, ...], Collection] = OrderedDict()
_PLACES: dict[tuple[str, str, str], tuple[Any, ...]] = {}  # (path, format, options) -> its latest cache key
_READS = [0]  # collections this process has read from their files (see reads())
_INDEXES: OrderedDict[tuple[Any, ...], _Kept] = OrderedDict()
_PARTS: OrderedDict[tuple[Any, ...], tuple[Collection, dict[str, int]]] = OrderedDict()  # see _part
_LOCK = threading.Lock()  # a Dask worker may run several tasks at once in threads


@dataclass(frozen=True)
class CollectionSource:
    """Where a worker finds a collection: an absolute path, a format name (never ``auto``), every option, its digest."""

    path: str
    format: str
    options: tuple[tuple[str, Any], ...]
    digest: str

    @property
    def cache_key(self) -> tuple[Any, ...]:
        return (self.digest, self.format, json.dumps(list(self.options)), self.path)

    def identity(self) -> dict[str, Any]:
        return {"digest": self.digest, "format": self.format, "options": dict(self.options)}


def answers_read(files: Sequence[AnswerFile]) -> tuple[dict[str, Any], ...]:
    """What identifies an answer system's files as read: per file (seed), the format it was read with, the name
    and sha256 of every file the reader read (``[name, sha256]`` pairs) and the reader's parameters."""
    return tuple(
        {
            "format": f.format,
            "files": [[os.path.basename(p), h] for p, h in zip(f.paths, f.sha256)],
            "params": dict(f.params),
        }
        for f in files
    )


@dataclass(frozen=True)
class AnswersSource:
    """An answer system as a worker reads it: its files (absolute paths, one per seed), the format and mapping
    file the grid names (``None``: detected, none), and ``read``, what the client read
    (:func:`answers_read`), which the worker's reading must equal."""

    paths: tuple[str, ...]
    format: str | None
    mapping: str | None
    read: tuple[dict[str, Any], ...]

    def spec(self, name: str) -> AnswersSpec:
        """The files as ``agentmemory eval --answers NAME=FILE,...`` names them."""
        return AnswersSpec(name, self.paths, self.format, self.mapping)


@dataclass(frozen=True)
class SystemSource:
    """A system as a worker makes it: a retriever spec or a memory system's (``spec``, resolved there), a run file,
    or an answer system's files (``answers``).

    ``name`` is the system's name in results (a retriever's key, the run's or
    the answer system's name) and ``label`` its name in tables.
    """

    kind: str
    name: str
    label: str
    spec: str = ""
    path: str | None = None
    sha256: str | None = None
    memories: str | None = None
    memories_sha256: str | None = None
    lenient: bool = False
    code: tuple[tuple[str, str, str], ...] = ()
    answers: AnswersSource | None = None

    def identity(self) -> dict[str, Any]:
        code = {"code": [list(c) for c in self.code]} if self.code else {}
        if self.kind in ("retriever", "system"):
            return {"kind": self.kind, "key": self.name, "label": self.label, **code}
        if self.answers is not None:
            return {"kind": "answers", "name": self.name, "read": list(self.answers.read), **code}
        return {
            "kind": "run",
            "name": self.name,
            "sha256": self.sha256,
            "memories_sha256": self.memories_sha256,
            "lenient": self.lenient,
        }


@dataclass(frozen=True)
class TaskJob:
    """Everything a worker needs for one task (small and picklable: paths, not data)."""

    collection: CollectionSource
    system: SystemSource
    k: int
    seed: int
    measures: tuple[str, ...]
    relevance: str = "direct"
    version: str = __version__
    index: str | None = None  # the retriever's index_key: tasks of one collection with the same one share an index
    keep: bool = False  # keep this task's index for another task of the run (set by run_experiment)
    left_out: bool = False  # score the questions left out of retrieval scoring too (a collection with answers)
    settings: tuple[tuple[str, Any], ...] = ()  # the grid's other settings, by field (SETTINGS), as read

    def identity(self) -> dict[str, Any]:
        """What the task's result depends on (its key is the hash of this)."""
        return {
            "agentmemory": self.version,
            "collection": self.collection.identity(),
            "system": self.system.identity(),
            "k": self.k,
            "seed": self.seed,
            "measures": list(self.measures),
            "relevance": self.relevance,
            **({"left_out": True} if self.left_out else {}),
            **({"settings": _settings_identity(self.settings)} if self.settings else {}),
        }

    def options(self) -> EvalOptions:
        """The evaluation's options: k, seed, every measure, the relevance mode, the run's ``lenient``, and
        whether the questions left out of retrieval scoring are scored."""
        given = {"k": self.k, "seed": self.seed, "measures": self.measures, "relevance": self.relevance}
        given |= {"lenient_run": self.system.lenient, **dict(self.settings)}
        return options_from_settings(given, "grid", left_out=self.left_out)


def _settings_identity(settings: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The grid's other settings as they identify a task: a file's name and sha256 for a path, else the value."""
    out: dict[str, Any] = {}
    for name, value in settings:
        if setting(name).kind == "path":
            with open(value, "rb") as file:
                out[name] = [os.path.basename(value), hashlib.sha256(file.read()).hexdigest()]
        else:
            out[name] = value
    return out


def canonical_json(data: Any) -> str:
    """Keys sorted, no spaces, UTF-8 kept: the one text a value hashes as."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def task_key(job: TaskJob) -> str:
    """The task's content hash: sha256 of the canonical JSON of :meth:`TaskJob.identity` (64 hex digits)."""
    return hashlib.sha256(canonical_json(job.identity()).encode("utf-8")).hexdigest()


def remember(source: CollectionSource, collection: Collection) -> None:
    """Keep an already loaded ``collection`` in this process's cache (the client's, before serial tasks)."""
    with _LOCK:
        _keep(source, collection)


def _keep(source: CollectionSource, collection: Collection) -> None:
    _CACHE[source.cache_key] = collection
    _CACHE.move_to_end(source.cache_key)
    _PLACES[source.path, source.format, json.dumps(list(source.options))] = source.cache_key
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)


def reads() -> int:
    """How many times this process has read a collection from its files (a task or a plan served from the
    cache reads none): what tests and benchmarks count."""
    return _READS[0]


def _read(path: str, format: str, options: tuple[tuple[str, Any], ...]) -> Collection:
    _READS[0] += 1
    return datasets.load(path, format=format, **dict(options))


def _unchanged(path: str, collection: Collection) -> bool:
    """Whether every file ``collection`` was read from (``Collection.files``, named relative to ``path``'s
    folder) still has the sha256 it had then; ``False`` when a name is not a file there."""
    base = Path(path)
    if not base.is_dir():
        base = base.parent
    for name, sha in collection.files.items():
        file = base / name
        if not file.is_file() or sha256_file(file) != sha:
            return False
    return bool(collection.files)


def current_collection(path: str, format: str, options: tuple[tuple[str, Any], ...]) -> Collection:
    """The collection at ``path`` as its files are now: this process's cached copy when its files' sha256 are
    unchanged (a grid planned again on warm workers), else read again (and cached)."""
    with _LOCK:
        key = _PLACES.get((path, format, json.dumps(list(options))))
        cached = _CACHE.get(key) if key is not None else None
        if key is not None and cached is not None and _unchanged(path, cached):
            _CACHE.move_to_end(key)
            return cached
        collection = _read(path, format, options)
        _keep(CollectionSource(path, format, options, collection.digest), collection)
        return collection


@dataclass(frozen=True)
class CollectionFacts:
    """What planning needs of a loaded collection (small, picklable): its digest, summary, judged queries
    (``(id, group)``), headline exclusions and definitions card."""

    digest: str
    summary: Mapping[str, Any]
    judged: tuple[tuple[str, str | None], ...]
    excluded_groups: tuple[str, ...]
    card: Mapping[str, Any]
    scopes: int = 1
    """How many scopes its judged queries are asked in (:func:`scope_parts`): into how many parts by scope a batch
    of its tasks can be cut at most."""

    @classmethod
    def of(cls, collection: Collection) -> CollectionFacts:
        judged = tuple((q.id, q.group) for q in collection.judged_queries)
        return cls(
            collection.digest,
            collection_summary(collection),
            judged,
            tuple(collection.headline_excludes),
            collection_card(collection),
            len(_judged_scopes(collection)[0]),
        )


def collection_facts(
    path: str, format: str, options: tuple[tuple[str, Any], ...], version: str = __version__
) -> CollectionFacts | str:
    """Plan a collection on a worker: load it (kept in this worker's cache for its tasks,
    :func:`current_collection`) and return its :class:`CollectionFacts`, or the one-line error of a
    collection that does not load (the client reports it with the grid's line); ``version`` is the client's
    agentmemory version, which the worker's must equal."""
    if version != __version__:
        return f"a worker runs agentmemory {__version__}, the client {version}; install the same version"
    try:
        return CollectionFacts.of(current_collection(path, format, options))
    except AgentMemoryError as err:
        return str(err)


def forget_collections() -> None:
    """Drop the collections (and parts of collections) this process keeps (the next task or plan reads each from
    its files again)."""
    with _LOCK:
        _CACHE.clear()
        _PARTS.clear()
        _PLACES.clear()


def forget_indexes() -> None:
    """Drop the indexes this process keeps for later tasks (the client's own, when a run on it ends)."""
    with _LOCK:
        _INDEXES.clear()


def _collection(source: CollectionSource, snapshot: str | None = None) -> Collection:
    """The collection, loaded once per process and checked against the digest the client planned with: mapped
    from ``snapshot`` when that is one of it (:func:`snapshot_for`; its ids made strings of this process), else
    read from its files."""

    with _LOCK:  # one load at a time: threads of a worker wait for it instead of loading it again
        cached = _CACHE.get(source.cache_key)
        if cached is not None:
            _CACHE.move_to_end(source.cache_key)
            return cached
        mapped = None if snapshot is None else read_snapshot(snapshot, source.digest, _snapshot_key(source))
        if mapped is not None:
            if isinstance(mapped.entries, Entries):  # a whole collection's ids as a list, as a read gives them
                mapped.entries.ids = list(mapped.entries.ids)
            _keep(source, mapped)
            return mapped
        collection = _read(source.path, source.format, source.options)
        if collection.digest != source.digest:
            raise InputError(
                source.path,
                None,
                f"its files have changed since the experiment was planned (digest {collection.digest[:12]}, "
                f"planned {source.digest[:12]}); run the experiment again",
            )
        _keep(source, collection)
        return collection


def _judged_scopes(collection: Collection) -> tuple[dict[str | None, int], list[str | None]]:
    """The scopes of the judged queries (in order of first appearance) with their entries' count, and the other
    scopes questions are asked in (a question left out of retrieval scoring, an unjudged one), in order.  A
    scope no question is asked in is searched by nobody."""
    entries = collection.entries
    if isinstance(entries, Entries):
        sizes = entries.scope_sizes()
    else:
        sizes = {}
        for entry in entries:
            sizes[entry.scope] = sizes.get(entry.scope, 0) + 1
    judged = {q.scope: sizes.get(q.scope, 0) for q in collection.judged_queries}
    asked = (*collection.queries, *collection.left_out_queries)
    return judged, [s for s in dict.fromkeys(q.scope for q in asked) if s not in judged]


def scope_parts(collection: Collection, parts: int) -> list[tuple[str | None, ...]]:
    """The scopes questions are asked in, in ``parts`` groups (fewer when fewer scopes hold a judged question),
    each group in the scopes' order.  The scopes of judged questions first, the largest (entries; ties: the
    first to appear) to the group holding the fewest entries so far (ties: the lowest numbered), so each group
    holds a judged question and about as many entries as the others; then each other scope (asked only by
    questions left out of retrieval scoring or unjudged) to the lightest group.  Depends only on the collection
    and ``parts``."""
    check_positive_int("parts", parts)
    judged, others = _judged_scopes(collection)
    order = {scope: i for i, scope in enumerate((*judged, *others))}
    groups: list[list[str | None]] = [[] for _ in range(min(parts, len(judged)))]
    if not groups:
        return []
    loads = [0] * len(groups)
    for scope in (*sorted(judged, key=lambda s: (-judged[s], order[s])), *others):
        lightest = min(range(len(groups)), key=lambda g: (loads[g], g))
        groups[lightest].append(scope)
        loads[lightest] += judged.get(scope, 0)
    return [tuple(sorted(group, key=order.__getitem__)) for group in groups]


def splits_by_scope(job: TaskJob) -> bool:
    """Whether the task can run in parts by scope (see the module docstring): a retriever's, under direct
    relevance, not as of each question's time, without a judgment patch or live readers (each of which reads
    across scopes)."""
    if job.system.kind != "retriever" or job.relevance != "direct":
        return False
    options = job.options()
    return not options.as_of and options.qrels_patch is None and options.live is None


def _snapshot_key(source: CollectionSource) -> str:
    return json.dumps(list(source.cache_key))


def _maps_well(collection: Collection) -> bool:
    """Whether a snapshot of ``collection`` is quicker to map than its files are to read: entries as columns
    without a column of one object per row (:class:`~agentmemory.collection.columns.Dense`), whose objects a
    pickle writes and makes one by one.  Measured on 100,000 synthetic entries read as records (tags, a date
    and a provenance each): written in 1.6 s and mapped in 1.4 s, where the files are read in 1.1 s."""
    entries = collection.entries
    return isinstance(entries, Entries) and not any(isinstance(c, Dense) for c in entries.columns.values())


def snapshot_for(source: CollectionSource, folder: str) -> str | None:
    """Write the collection this process holds for ``source`` into ``folder`` as a snapshot that other processes
    of the machine map instead of reading its files (:mod:`agentmemory.collection.snapshot`), hold the mapped
    collection from then on (its ids the same strings), so that the machine keeps one copy of its columns, and
    return its path.  ``None`` when this process holds no such collection (nothing is read for it), when a
    snapshot of it would take longer to map than its files to read (:func:`_maps_well`) or when it cannot be
    written (the calls then read the files)."""
    with _LOCK:
        held = _CACHE.get(source.cache_key)
    if held is None or not _maps_well(held):
        return None
    name = hashlib.sha256(_snapshot_key(source).encode("utf-8")).hexdigest()[:32]
    path = Path(folder) / f"{name}.snapshot"
    try:
        write_snapshot(held, path, _snapshot_key(source))
    except (OSError, pickle.PicklingError, TypeError, AttributeError):  # a plugin's unpicklable collection
        return None
    mapped = read_snapshot(path, source.digest, _snapshot_key(source))
    if mapped is not None and isinstance(mapped.entries, Entries) and isinstance(held.entries, Entries):
        mapped.entries.ids = held.entries.ids  # this process's strings: none made again
        with _LOCK:  # and its columns the snapshot's pages from now on, one copy with the other calls'
            if _CACHE.get(source.cache_key) is held:
                _CACHE[source.cache_key] = mapped
    return str(path)


def _part(
    source: CollectionSource, part: tuple[int, int], snapshot: str | None = None
) -> tuple[Collection, dict[str, int]]:
    """Part ``part`` (``(i, n)``) of the collection (:func:`scope_parts`) and the position of each of its
    queries in the whole collection's order (kept queries, then those left out); kept per process (as
    :data:`CACHE_SIZE` collections), the whole collection dropped from the cache once cut.  The whole
    collection is this process's copy when it holds one, else the ``snapshot`` mapped when it is one of this
    collection, else read from its files."""
    key = (source.cache_key, part)
    with _LOCK:
        cached = _PARTS.get(key)
        if cached is not None:
            _PARTS.move_to_end(key)
            return cached
        whole: Collection | None = _CACHE.get(source.cache_key)
    if whole is None and snapshot is not None:
        whole = read_snapshot(snapshot, source.digest, _snapshot_key(source))
    if whole is None:
        whole = _collection(source)
    index, parts = part
    groups = scope_parts(whole, parts)
    if not 0 <= index < parts or len(groups) != parts:
        raise InputError(
            source.path,
            None,
            f"has {len(groups)} scope(s) with judged questions, so it has no part {index + 1} of {parts}; plan again",
        )
    cut = whole.only_scopes(groups[index])
    everyone = (*whole.queries, *whole.left_out_queries)
    positions = {q.id: i for i, q in enumerate(everyone)}
    made = (cut, {q.id: positions[q.id] for q in (*cut.queries, *cut.left_out_queries)})
    del whole, everyone, positions
    with _LOCK:
        _PARTS[key] = made
        while len(_PARTS) > CACHE_SIZE:
            _PARTS.popitem(last=False)
        _CACHE.pop(source.cache_key, None)  # the part is what this worker holds now
    release_freed()
    return made


def _part_rows(result: RetrieverResult, positions: Mapping[str, int]) -> dict[str, Any]:
    """What :func:`join_parts` needs of a part's result: each row's position in the whole collection, each
    headline query's tie reports (position and ``measure: [value under the rule, expected, minimum, maximum]``,
    or ``None``) and the measures the means are over, in order."""
    return {
        "rows": [positions[q.query_id] for q in result.per_query],
        "ties": [
            [positions[q.query_id], None if q.ties is None else {m: tie_values(t) for m, t in q.ties.items()}]
            for q in result.headline
        ],
        "means": list(result.means),
    }


_SAME_IN_PARTS = ("system", "measures", "unscored", "dropped", "skipped_hits", "tokenizer")


def join_parts(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A task's result from its parts' (:func:`execute_batch` with ``part``, in part order): the first error
    if a part failed; else the rows of every part in the whole collection's order and the tie means over all
    of them (:func:`~agentmemory.evaluation.result_records.tie_means`): the result of the task run whole."""
    for result in results:
        if "error" in result:
            return result
    first = results[0]
    for result in results[1:]:
        for name in _SAME_IN_PARTS:
            if result.get(name) != first.get(name):
                return {"error": f"the parts of this task disagree on its {name}; run it again without parts"}
    rows = sorted((p, i, row) for i, r in enumerate(results) for p, row in zip(r["part"]["rows"], r["per_query"]))
    ties = sorted((p, i, t) for i, r in enumerate(results) for p, t in r["part"]["ties"])
    joined: dict[str, Any] = {}
    for name, value in first.items():  # the keys in the order a whole run gives them
        if name == "per_query":
            joined[name] = [row for _, _, row in rows]
        elif name == "tie_aware":
            joined[name] = tie_means(first["part"]["means"], [t for _, _, t in ties])
        elif name != "part":
            joined[name] = value
    return joined


def error_line(err: BaseException) -> str:
    """One line saying what went wrong: an agentmemory error's own message, else the exception's type and text."""
    text = str(err).strip()
    first = text.splitlines()[0] if text else ""
    if not isinstance(err, AgentMemoryError):
        first = f"{type(err).__name__}: {first}" if first else type(err).__name__
    return shorten(first, 400)


def execute_task(job: TaskJob) -> dict[str, Any]:
    """Run one task; its per-query rows (see the module docstring), or ``{"error": line}``.

    The result: ``system`` (name, label, kind, params), ``measures`` (text
    forms, in order), ``unscored`` (measures with no provenance definition
    under ``relevance="provenance"``), ``per_query`` (``query_id`` and
    ``metrics`` of every judged query, in collection order, then with
    ``left_out`` of the questions left out of retrieval scoring), ``tie_aware``
    (the headline means of the tie reports), ``dropped`` (run lines left
    out by ``lenient``) and, when a run names questions the loader skipped,
    ``skipped_hits`` (``[query_id, hits]`` each, ignored).
    """
    return _attempt(job)[0]


def execute_batch(
    jobs: tuple[TaskJob, ...], part: tuple[int, int] | None = None, snapshot: str | None = None
) -> list[tuple[dict[str, Any], int]]:
    """Run several tasks in this process, in order: each one's :func:`execute_task` result and the number of
    indexes it built (0 when it used one kept by an earlier task, see :data:`INDEX_CACHE_SIZE`).

    With ``part`` ``(i, n)`` each task runs on part ``i`` of ``n`` of its collection by scope (see the module
    docstring; every job must :func:`split by scope <splits_by_scope>`), and its result carries what
    :func:`join_parts` needs to join it with the other parts' (``"part"``).  ``snapshot`` is where
    :func:`snapshot_for` wrote the collection, mapped instead of reading its files when this process does not
    hold it (with or without ``part``)."""
    return [_attempt(job, part, snapshot) for job in jobs]


def _attempt(
    job: TaskJob, part: tuple[int, int] | None = None, snapshot: str | None = None
) -> tuple[dict[str, Any], int]:
    try:
        return _execute(job, part, snapshot)
    except Exception as err:  # reported with the task's spec by the client; the other tasks go on
        return {"error": error_line(err)}, 0


def _execute(
    job: TaskJob, part: tuple[int, int] | None = None, snapshot: str | None = None
) -> tuple[dict[str, Any], int]:
    if job.version != __version__:
        raise InputError(
            "worker", None, f"runs agentmemory {__version__}, the client {job.version}; install the same version"
        )
    if job.options().live is not None:  # each reader's answers would be a system of their own, not this task's
        raise InputError(
            "grid", None, "readers: a task evaluates one system, so live readers run with agentmemory eval --reader"
        )
    positions: dict[str, int] | None = None
    if part is None:
        collection = _collection(job.collection, snapshot)
    elif not splits_by_scope(job):
        raise InputError("grid", None, f"task of {job.system.name} cannot run in parts by scope; plan again")
    else:
        collection, positions = _part(job.collection, part, snapshot)
    patch = job.options().qrels_patch
    if patch is not None:  # the grid's judgment patch, checked against this collection line by line
        collection = read_judgment_patch(patch, collection).apply(collection)
    system = job.system
    built = 0
    if system.kind == "retriever":
        evaluation, built = _evaluate_retriever(collection, job, part)
    elif system.kind == "system":  # a memory system, replayed over the collection here (attribution auto)
        evaluation = evaluate(collection, None, systems=[system.spec], options=job.options())
    elif system.answers is not None:
        evaluation = _evaluate_answers(collection, job, system.answers)
    else:
        assert system.path is not None  # a run always has its path (see plan)
        run = read_run_file(system.path, system.name, memories=system.memories)
        if run.sha256 != system.sha256 or run.memories_sha256 != system.memories_sha256:
            raise InputError(system.path, None, "has changed since the experiment was planned; run it again")
        evaluation = evaluate(collection, None, runs=[run], options=job.options())
    [result] = evaluation.results
    if (result.name, result.label) != (system.name, system.label):
        raise InputError(
            system.spec or system.name,
            None,
            f"is {result.name!r} ({result.label}) on this worker but {system.name!r} ({system.label}) on the "
            "client; install the same plugins everywhere",
        )
    return {
        "system": {"name": result.name, "label": result.label, "kind": result.kind, "params": result.params},
        "measures": [str(m) for m in evaluation.measures],
        "unscored": list(evaluation.unscored),
        "per_query": [{"query_id": q.query_id, "metrics": q.metrics} for q in result.per_query],
        "tie_aware": result.tie_means(),
        "dropped": [list(d) for d in result.dropped],
        **({"skipped_hits": [list(s) for s in result.skipped_hits]} if result.skipped_hits else {}),
        **({"tokenizer": dict(evaluation.tokenizer)} if evaluation.tokenizer is not None else {}),
        **({"part": _part_rows(result, positions)} if positions is not None else {}),
    }, built


def _evaluate_answers(collection: Collection, job: TaskJob, answers: AnswersSource) -> Evaluation:
    """An answer system's evaluation: its files read here (as ``agentmemory eval --answers`` reads them) and
    checked against what the client read when it planned."""
    files = read_answer_files(answers.spec(job.system.name))
    for path, now, planned in zip(answers.paths, answers_read(files), answers.read):
        if canonical_json(now) != canonical_json(planned):
            raise InputError(
                path, None, "has changed, or a file read with it has, since the experiment was planned; run it again"
            )
    return evaluate(collection, None, answers=[files], options=job.options())


@dataclass
class _Kept:
    """A store whose retriever ``spec`` holds a collection's index, kept for the next tasks that share it."""

    store: MemoryStore
    spec: RetrieverSpec
    lock: threading.Lock = field(default_factory=threading.Lock)


def _evaluate_retriever(
    collection: Collection, job: TaskJob, part: tuple[int, int] | None = None
) -> tuple[Evaluation, int]:
    """The task's evaluation, over an index kept by an earlier task when one shares it; the indexes built (0 or 1).

    A retriever whose index an earlier task of this process kept (same
    collection, same ``job.index``) is attached to that task's store
    (:meth:`~agentmemory.store.core.MemoryStore.attach`: the same retriever
    for the same spec, else its ``with_params``), evaluated and detached, so
    nothing is indexed again; the store is used by one task at a time.
    Otherwise the evaluation builds its own, and keeps its store when
    ``job.keep`` says another task will want it.
    """
    spec = resolve_retriever(job.system.spec)
    slot = (job.collection.cache_key, part, job.index)
    with _LOCK:
        kept = _INDEXES.get(slot) if job.index is not None else None
        if kept is not None:
            _INDEXES.move_to_end(slot)
    if kept is None or spec.index_key != job.index:
        evaluation = evaluate(collection, (spec,), options=job.options())
        if job.keep and job.index is not None and spec.index_key == job.index and evaluation.store is not None:
            with _LOCK:
                _INDEXES[slot] = _Kept(evaluation.store, spec)
                while len(_INDEXES) > INDEX_CACHE_SIZE:
                    _INDEXES.popitem(last=False)
        return evaluation, 1
    with kept.lock:
        if spec.key == kept.spec.key:
            return evaluate(collection, (spec,), store=kept.store, options=job.options()), 0
        kept.store.attach(spec, like=kept.spec.key)
        try:
            return evaluate(collection, (spec,), store=kept.store, options=job.options()), 0
        finally:
            kept.store.detach(spec.key)
