"""The replay: a collection's conversations fed into a memory system, its questions asked, its answers kept.

For each scope that has a judged query (a LoCoMo conversation, a
LongMemEval haystack; the whole collection when it has no scopes), in the
order the scopes first appear among the collection's entries:

1. a fresh system: ``spec.make(scope, workdir)`` with ``workdir`` a new
   temporary folder, removed after the scope;
2. the scope's entries handed to ``ingest`` as :class:`~agentmemory.systems.base.Turn`
   records **in time order**: entries without ``created_at`` first, then
   by ``created_at`` ascending; entries with equal (or no) times keep the
   collection's order (a stable sort).  At most ``batch_size`` turns per
   call when the system declares it, else everything due at once;
3. the scope's judged queries asked with ``search(query.text, depth)``:
   without ``as_of``, after every turn was ingested, in the collection's
   order; with ``as_of``, *during* the replay: queries sorted by
   ``asked_at`` (stable; queries without ``asked_at`` last), and before each
   one every turn created at or before its ``asked_at`` is ingested;
4. ``close()``, also when a call failed.

Every call runs in a worker thread with a deadline when ``timeout`` is
given; a call that does not return in time is an error (the thread is
abandoned, the system closed, the scope's remaining queries not asked).
What a call returns is checked (:mod:`agentmemory.systems.checks`).  A
failure is a :class:`~agentmemory.errors.MemorySystemError` naming the
system, the scope, the call and the problem; with ``lenient``, a failing
``search`` is recorded as an empty answer and listed in
:attr:`Replay.failures` (a failing ``ingest`` or a timeout lists every
query of the scope not yet answered), and the replay goes on.

Latencies (:class:`ReplayTimings`) are wall-clock seconds: kept for
``--timings``, never written to an artifact.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from agentmemory.datasets.collection import Collection
from agentmemory.errors import MemorySystemError, shorten
from agentmemory.records import MemoryEntry, Query
from agentmemory.systems.base import Memory, MemorySystem, Turn
from agentmemory.systems.checks import batch_size_problem, memories_problem, sources_problem
from agentmemory.systems.registry import SystemSpec

__all__ = ["Replay", "ReplayTimings", "replay", "scope_turns", "turn_of"]

T = TypeVar("T")


@dataclass(frozen=True)
class ReplayTimings:
    """Wall-clock seconds: per ingest call, its seconds divided by its turns; per search call, its seconds."""

    ingest_per_turn: tuple[float, ...]
    search: tuple[float, ...]

    @staticmethod
    def percentile(values: Sequence[float], q: float) -> float:
        """The ``q``-th percentile (numpy's linear interpolation); 0.0 when there is none."""
        import numpy as np  # numpy is a core dependency, but the replay does not need it otherwise

        return float(np.percentile(np.asarray(values), q)) if values else 0.0


@dataclass(frozen=True)
class Replay:
    """What one system answered: per judged query id, its memories (best first), and the failures let pass.

    ``failures`` lists ``(query_id, message)`` for the queries ``lenient``
    recorded as empty answers; ``params`` the system's ``params()`` of its
    first scope (when it has that member), else the spec's parameters.
    """

    key: str
    label: str
    params: dict[str, Any]
    answers: Mapping[str, tuple[Memory, ...]]
    scopes: Mapping[str, str | None]
    failures: tuple[tuple[str, str], ...] = ()
    timings: ReplayTimings = field(default_factory=lambda: ReplayTimings((), ()), repr=False, compare=False)


def turn_of(entry: MemoryEntry) -> Turn:
    """The turn a system is given for ``entry``: its id, text, speaker (``provenance.actor``), time, session, scope."""
    session = entry.metadata.get("session_id", entry.metadata.get("session"))
    return Turn(
        entry_id=entry.id,
        text=entry.text,
        role=entry.provenance.actor,
        created_at=entry.created_at,
        session=None if session is None else str(session),
        scope=entry.scope,
    )


def scope_turns(entries: Sequence[MemoryEntry]) -> list[Turn]:
    """``entries`` as turns in replay order: undated first, then by ``created_at``; ties keep the given order."""
    return [turn_of(e) for e in sorted(entries, key=_time_key)]


def _time_key(entry: MemoryEntry) -> tuple[int, Any]:
    return (0, 0) if entry.created_at is None else (1, entry.created_at)


class _Call:
    """Runs one system call, with a deadline when ``timeout`` is set; failures become MemorySystemError."""

    def __init__(self, key: str, scope: str | None, timeout: float | None) -> None:
        self.key = key
        self.scope = scope
        self.timeout = timeout
        self.timed_out = False

    def error(self, call: str, problem: str) -> MemorySystemError:
        return MemorySystemError(self.key, self.scope, call, problem)

    def __call__(self, call: str, fn: Callable[[], T]) -> T:
        if self.timeout is None:
            try:
                return fn()
            except MemorySystemError:
                raise
            except Exception as err:  # the system's own failure, said as one line
                raise self.error(call, _raised(err)) from None
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = fn()
            except BaseException as err:  # handed to the caller's thread
                box["error"] = err

        worker = threading.Thread(target=run, name=f"system {self.key} {call}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            self.timed_out = True
            raise self.error(call, f"did not return within {self.timeout:g} s (--system-timeout)")
        if "error" in box:
            failure: BaseException = box["error"]
            if isinstance(failure, MemorySystemError) or not isinstance(failure, Exception):
                raise failure
            raise self.error(call, _raised(failure)) from None
        value: T = box["value"]
        return value


def _raised(err: Exception) -> str:
    text = " ".join(str(err).split())
    return f"raised {type(err).__name__}: {shorten(text)}" if text else f"raised {type(err).__name__}"


def _ask_order(queries: Sequence[Query], as_of: bool) -> list[Query]:
    if not as_of:
        return list(queries)
    return sorted(queries, key=lambda q: (q.asked_at is None, q.asked_at or datetime.min))


def replay(
    spec: SystemSpec,
    collection: Collection,
    *,
    depth: int,
    as_of: bool = False,
    timeout: float | None = None,
    lenient: bool = False,
) -> Replay:
    """Replay ``collection`` into the system ``spec`` and ask each judged query for ``depth`` memories.

    See the module docstring for the order and the rules.

    Raises:
        MemorySystemError: a call failed, timed out or returned something
            the checks refuse (unless ``lenient`` and the call was ``search``).
    """
    queries_of: dict[str | None, list[Query]] = {}
    for query in collection.judged_queries:
        queries_of.setdefault(query.scope, []).append(query)
    entries_of: dict[str | None, list[MemoryEntry]] = {}
    for entry in collection.entries:
        entries_of.setdefault(entry.scope, []).append(entry)
    scope_of = {e.id: e.scope for e in collection.entries}
    order = [s for s in entries_of if s in queries_of] + [s for s in queries_of if s not in entries_of]
    answers: dict[str, tuple[Memory, ...]] = {}
    failures: list[tuple[str, str]] = []
    ingest_times: list[float] = []
    search_times: list[float] = []
    params: dict[str, Any] | None = None
    for scope in order:
        entries = sorted(entries_of.get(scope, []), key=_time_key)
        call = _Call(spec.key, scope, timeout)
        with tempfile.TemporaryDirectory(prefix="agentmemory-system-") as folder:
            system = call("start", partial(spec.make, scope, Path(folder)))
            failed = False
            try:
                if params is None:
                    params = _params(system, spec, call)
                batch = getattr(system, "batch_size", None)
                problem = batch_size_problem(batch)
                if problem is not None:
                    raise call.error("start", problem)
                state = _ScopeState(system, call, batch, ingest_times)
                pending = list(entries)
                for query in _ask_order(queries_of[scope], as_of):
                    if call.timed_out or state.failed is not None:
                        reason = state.failed or "not asked: an earlier call of this scope timed out"
                        failures.append((query.id, reason))
                        answers[query.id] = ()
                        continue
                    due = (
                        pending
                        if not as_of or query.asked_at is None
                        else [e for e in pending if e.created_at is None or e.created_at <= query.asked_at]
                    )
                    if due:
                        pending = pending[len(due) :]
                        try:
                            state.ingest(due)
                        except MemorySystemError as err:
                            if not lenient or call.timed_out:
                                raise
                            state.failed = str(err)
                            failures.append((query.id, str(err)))
                            answers[query.id] = ()
                            continue
                    name = f"search {query.id!r}"
                    started = time.perf_counter()
                    try:
                        result = call(name, partial(system.search, query.text, depth))
                        search_times.append(time.perf_counter() - started)
                        problem = memories_problem(result, depth)
                        if problem is None:
                            problem = sources_problem(tuple(result), scope, scope_of, state.ingested)
                        if problem is not None:
                            raise call.error(name, problem)
                    except MemorySystemError as err:
                        if not lenient or call.timed_out:
                            raise
                        failures.append((query.id, str(err)))
                        answers[query.id] = ()
                        continue
                    answers[query.id] = tuple(result)
            except BaseException:
                failed = True
                raise
            finally:
                if not call.timed_out:
                    try:
                        call("close", system.close)
                    except MemorySystemError:
                        if not failed:  # the first failure is the one reported
                            raise
    return Replay(
        spec.key,
        spec.label,
        params if params is not None else dict(spec.params),
        answers,
        {q.id: q.scope for q in collection.judged_queries},
        tuple(failures),
        ReplayTimings(tuple(ingest_times), tuple(search_times)),
    )


def _params(system: MemorySystem, spec: SystemSpec, call: _Call) -> dict[str, Any]:
    method = getattr(system, "params", None)
    if not callable(method):
        return dict(spec.params)
    value = call("params", method)
    if not isinstance(value, dict):
        raise call.error("params", f"returned a {type(value).__name__}, not a dict")
    return value


class _ScopeState:
    """The turns given to one scope's system so far, given in batches of at most ``batch``."""

    def __init__(self, system: MemorySystem, call: _Call, batch: int | None, times: list[float]) -> None:
        self.system = system
        self.call = call
        self.batch = batch
        self.times = times
        self.ingested: set[str] = set()
        self.failed: str | None = None

    def ingest(self, entries: Sequence[MemoryEntry]) -> None:
        turns = [turn_of(e) for e in entries]
        size = self.batch or len(turns)
        for start in range(0, len(turns), size):
            chunk = turns[start : start + size]
            began = time.perf_counter()
            self.call("ingest", partial(self.system.ingest, chunk))
            self.times.append((time.perf_counter() - began) / len(chunk))
            self.ingested.update(t.entry_id for t in chunk)
