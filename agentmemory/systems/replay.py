"""The replay: a collection's conversations fed into a memory system, its questions asked, its answers kept.

For each scope that has a judged query (a LoCoMo conversation, a
LongMemEval haystack; the whole collection when it has no scopes), in the
order the scopes first appear among the collection's entries:

1. a fresh system: ``spec.make(scope, workdir)`` with ``workdir`` a new
   temporary folder, removed after the scope;
2. the scope's turns handed to ``ingest`` as :class:`~agentmemory.systems.base.Turn`
   records **in time order**: turns without ``created_at`` first, then
   by ``created_at`` ascending; turns with equal (or no) times keep the
   collection's order (a stable sort).  The turns are the entries, or, when
   entries are coarser (LongMemEval at session granularity), the turns each
   entry holds (:mod:`agentmemory.systems.turns`).  At most ``batch_size`` turns per
   call when the system declares it, else everything due at once;
3. the scope's judged queries asked with ``search(query.text, depth)``:
   without ``as_of``, after every turn was ingested, in the collection's
   order; with ``as_of``, *during* the replay: queries sorted by
   ``asked_at`` (stable; queries without ``asked_at`` last), and before each
   one every turn created at or before its ``asked_at`` is ingested;
4. ``close()``, also when a call failed or timed out (then with a deadline
   of at least :data:`CLOSE_GRACE` seconds); then every process
   the scope started (descendants of this process: an MCP server, a
   Python system's own helper) still running is ended: ``SIGTERM``, then
   ``SIGKILL`` after a grace period (:mod:`agentmemory.systems.processes`).

Every call runs in a worker thread with a deadline when ``timeout`` is
given; a call that does not return in time is an error (the thread is
abandoned, the system closed under it, the scope's remaining queries not
asked).
Each ``ingest`` call gets a fresh list of its turns: the replay keeps its
own, so a system that empties or changes the list changes nothing of the
replay's.  The working folder is put back after every call (a system's
``os.chdir`` moves nothing agentmemory reads or writes).
What a call returns is checked and copied into plain records
(:mod:`agentmemory.systems.checks`; ``params()`` by
:func:`~agentmemory.retrievers.guard.plain_json`).  A
failure (anything the system raises but ``KeyboardInterrupt``:
``SystemExit``, ``GeneratorExit`` and its own ``BaseException`` included) is a
:class:`~agentmemory.errors.MemorySystemError` naming the
system, the scope, the call and the problem; with ``lenient``, a failing
``search`` is recorded as an empty answer and listed in
:attr:`Replay.failures` (a failing ``ingest``, or a call of ``start``,
``ingest`` or ``search`` that times out, lists every query of the scope not
yet answered, each with that call's message), and the replay goes on with
the next scope; a failing ``start`` (not a timeout) or ``close`` is an
error still.  A message, whichever adapter raised it (a system's own
:class:`~agentmemory.errors.MemorySystemError`, MCP's included), never
carries the scope's workdir or another folder of this machine
(:func:`~agentmemory.systems.checks.scrub_paths`: ``<workdir>``, ``<tmp>``,
...), so it can go into an artifact.

Each scope is an independent, picklable task (:func:`scope_tasks` makes a
:class:`ScopeTask` per scope, :func:`run_scope` replays one and returns a
:class:`ScopeResult`), so ``replay(..., executor=...)`` can run them on any
``concurrent.futures.Executor`` (a process pool, a Dask client's
``get_executor()``) with the same answers, failures and errors as serially.
The factory must then be importable by the workers (a module-level class or
function).  Sources are checked against the scope's own turns in the
worker; one outside them is resolved in the caller, against every turn of
the collection, into a leak or an unknown id.

Latencies (:class:`ReplayTimings`) are wall-clock seconds: kept for
``--timings``, never written to an artifact.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from agentmemory.collection import Collection
from agentmemory.errors import MemorySystemError, UnknownNameError, shorten
from agentmemory.records import MemoryEntry, Query
from agentmemory.retrievers.guard import WorkingFolder, params_violation, plain_json
from agentmemory.systems.base import Memory, MemorySystem, Turn
from agentmemory.systems.checks import (
    batch_size_problem,
    memories_problem,
    plain_memories,
    scrub_paths,
    source_problem,
)
from agentmemory.systems.processes import children_ended
from agentmemory.systems.progress import ReplayProgress
from agentmemory.systems.registry import SystemSpec
from agentmemory.systems.turns import turn_index

__all__ = [
    "CLOCKS",
    "Replay",
    "ReplayTimings",
    "ScopeResult",
    "ScopeTask",
    "SourceFault",
    "replay",
    "run_scope",
    "scope_tasks",
    "scope_turns",
    "turn_of",
]

T = TypeVar("T")

CLOCKS = {
    "real": "the system sees this machine's clock",
    "conversation": "the system sees the conversation's time as now: the newest turn's created_at during an "
    "ingest call, the question's asked_at (else the newest turn's time so far) during a search; frozen there "
    "(time-machine); only this Python process: a server the system started keeps the real clock",
}
"""What ``clock`` may be (``--clock``), with its meaning."""

CLOSE_GRACE = 5.0
"""Seconds ``close()`` may take after a call of the scope timed out, when the timeout is shorter: a system may
need a grace period to end what the hung call holds (an MCP server gets two seconds to exit before its process
group is killed)."""


@dataclass(frozen=True)
class ReplayTimings:
    """Wall-clock seconds: per ingest call, its seconds divided by its turns; per search call, its seconds; per
    scope, ``(scope, seconds from making its system to closing it)``; ``total``, the whole replay's seconds
    (with an executor running scopes at once, less than the scopes' sum)."""

    ingest_per_turn: tuple[float, ...]
    search: tuple[float, ...]
    scopes: tuple[tuple[str | None, float], ...] = ()
    total: float = 0.0
    turns: int = 0  # the turns of the scopes replayed

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
    first scope (when it has that member), else the spec's parameters;
    ``clock`` the clock the system saw (:data:`CLOCKS`).
    """

    key: str
    label: str
    params: dict[str, Any]
    answers: Mapping[str, tuple[Memory, ...]]
    scopes: Mapping[str, str | None]
    failures: tuple[tuple[str, str], ...] = ()
    timings: ReplayTimings = field(default_factory=lambda: ReplayTimings((), ()), repr=False, compare=False)
    clock: str = "real"


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
        self.workdir: Path | None = None

    def error(self, call: str, problem: str) -> MemorySystemError:
        """The failure as one line, without the scope's workdir or another folder of this machine."""
        return MemorySystemError(self.key, self.scope, call, scrub_paths(problem, self.workdir))

    def scrubbed(self, err: MemorySystemError) -> MemorySystemError:
        """A system's own MemorySystemError (an adapter's, such as MCP's), its problem scrubbed as :meth:`error`'s."""
        return MemorySystemError(err.system, err.scope, err.call, scrub_paths(err.problem, self.workdir))

    def __call__(self, call: str, fn: Callable[[], T]) -> T:
        """``fn()``, with the working folder put back after it; whatever it raises (any ``BaseException``
        but ``KeyboardInterrupt``: ``SystemExit`` too) becomes one MemorySystemError naming ``call``."""
        folder = WorkingFolder()
        try:
            return self._run(call, fn)
        finally:
            lost = folder.restore()
            if lost is not None:
                raise self.error(call, lost)

    def _run(self, call: str, fn: Callable[[], T]) -> T:
        if self.timeout is None:
            try:
                return fn()
            except KeyboardInterrupt:
                raise
            except MemorySystemError as err:
                raise self.scrubbed(err) from None
            except BaseException as err:  # noqa: BLE001 - the system's own failure, of any kind, said as one line
                raise self.error(call, _raised(err, self.workdir)) from None
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
            if isinstance(failure, MemorySystemError):
                raise self.scrubbed(failure) from None
            if isinstance(failure, KeyboardInterrupt):
                raise failure
            raise self.error(call, _raised(failure, self.workdir)) from None
        value: T = box["value"]
        return value


def _raised(err: BaseException, workdir: Path | None) -> str:
    """``raised <type>: <message>`` on one line, without this machine's folders, and UTF-8-safe: a character
    UTF-8 cannot encode (a lone surrogate) is written as its escape, since the line may go into an artifact."""
    try:
        said = str(err)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - the system's exception, whose __str__ is the system's code too
        said = "(a message that could not be read)"
    text = scrub_paths(" ".join(said.split()), workdir)  # before shortening, which could cut a path
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return f"raised {type(err).__name__}: {shorten(text)}" if text else f"raised {type(err).__name__}"


def _ask_order(queries: Sequence[Query], as_of: bool) -> list[Query]:
    if not as_of:
        return list(queries)
    return sorted(queries, key=lambda q: (q.asked_at is None, q.asked_at or datetime.min))


@dataclass(frozen=True)
class ScopeTask:
    """One scope's replay, self-contained and picklable, so scopes can run on any executor.

    ``turns`` are in replay order (see the module docstring); ``queries``
    are ``(query id, text, asked_at)`` in ask order; ``want_params`` asks
    the system for its ``params()`` (the first scope only); ``clock`` is
    ``"real"`` or ``"conversation"`` (:data:`CLOCKS`).
    """

    spec: SystemSpec
    scope: str | None
    turns: tuple[Turn, ...]
    queries: tuple[tuple[str, str, datetime | None], ...]
    depth: int
    as_of: bool = False
    timeout: float | None = None
    lenient: bool = False
    want_params: bool = False
    clock: str = "real"


@dataclass(frozen=True)
class SourceFault:
    """A memory's source outside the scope's turns, found in a worker: the parent says whether it is a leak."""

    call: str
    position: int
    source: str
    shown: str  # the source as a message may show it (this machine's folders scrubbed)


@dataclass(frozen=True)
class ScopeResult:
    """What one scope's replay gave back: answers, failures let pass, the error that ended it, params, timings.

    ``failures`` and ``error`` hold ``(query id or None, call, problem)``;
    a problem is a message's words or a :class:`SourceFault`.
    """

    scope: str | None
    answers: tuple[tuple[str, tuple[Memory, ...]], ...]
    failures: tuple[tuple[str, str, str | SourceFault], ...]
    error: tuple[str, str | SourceFault] | None
    params: dict[str, Any] | None
    ingest_per_turn: tuple[float, ...]
    search: tuple[float, ...]
    seconds: float = 0.0  # wall clock from making the system to closing it


class _Stop(Exception):
    """Ends a scope's replay with its first (not let pass) failure."""

    def __init__(self, call: str, problem: str | SourceFault) -> None:
        super().__init__(call)
        self.call = call
        self.problem = problem


def scope_tasks(
    spec: SystemSpec,
    collection: Collection,
    *,
    depth: int,
    as_of: bool = False,
    timeout: float | None = None,
    lenient: bool = False,
    clock: str = "real",
) -> list[ScopeTask]:
    """The replay of ``collection`` into ``spec`` as one task per scope with a judged query, in scope order."""
    queries_of: dict[str | None, list[Query]] = {}
    for query in collection.judged_queries:
        queries_of.setdefault(query.scope, []).append(query)
    index = turn_index(collection)
    turns_of = index.by_scope
    order = [s for s in turns_of if s in queries_of] + [s for s in queries_of if s not in turns_of]
    tasks = []
    for position, scope in enumerate(order):
        turns = tuple(turn_of(e) for e in sorted(turns_of.get(scope, ()), key=_time_key))
        asked = tuple((q.id, q.text, q.asked_at) for q in _ask_order(queries_of[scope], as_of))
        tasks.append(ScopeTask(spec, scope, turns, asked, depth, as_of, timeout, lenient, position == 0, clock))
    return tasks


def _due(task: ScopeTask, pending: list[Turn], asked_at: datetime | None) -> list[Turn]:
    """The pending turns to ingest before a question: all of them, or with ``as_of`` those up to its time."""
    if not task.as_of or asked_at is None:
        return pending
    return [t for t in pending if t.created_at is None or t.created_at <= asked_at]


def _answer(system: Any, text: str, depth: int) -> tuple[tuple[Memory, ...], str | None]:
    """``system.search(text, depth)`` checked and copied into plain records, or the problem with it.

    Runs inside the guarded call, so code of the system's that reading its result runs (a property, a
    ``str`` subclass's method) is guarded as the call is.
    """
    result = system.search(text, depth)
    problem = memories_problem(result, depth)
    return ((), problem) if problem is not None else (plain_memories(result), None)


def _search_checked(
    task: ScopeTask,
    system: Any,
    call: _Call,
    qid: str,
    text: str,
    known: set[str],
    state: _ScopeState,
    times: list[float],
) -> tuple[Memory, ...]:
    """One question asked and its memories checked (shape, sources); a fault is :class:`_Stop`."""
    name = f"search {qid!r}"
    started = time.perf_counter()
    try:
        with _clock_at(task.clock, state.asked):
            memories, found = call(name, partial(_answer, system, text, task.depth))
    except MemorySystemError as err:
        raise _Stop(err.call, err.problem) from None
    times.append(time.perf_counter() - started)
    fault: str | SourceFault | None = found
    if fault is None:
        fault = _sources_fault(name, memories, known, state.ingested, call.workdir)
    if fault is not None:
        raise _Stop(name, fault)
    return memories


@contextlib.contextmanager
def _clock_at(clock: str, when: datetime | None) -> Iterator[None]:
    """Under ``clock="conversation"`` with a time, this process's clock stands at ``when`` inside (time-machine,
    imported only here; ``time.monotonic`` and ``perf_counter`` run on).  Entered around a guarded call, in the
    replay's own thread: a call that times out leaves the clock restored when the replay moves on."""
    if clock != "conversation" or when is None:
        yield
        return
    import time_machine  # a dependency, imported only under --clock conversation

    with time_machine.travel(when, tick=False):
        yield


def _ask_all(
    task: ScopeTask,
    system: Any,
    call: _Call,
    state: _ScopeState,
    known: set[str],
    answers: dict[str, tuple[Memory, ...]],
    failures: list[tuple[str, str, str | SourceFault]],
    search_times: list[float],
) -> None:
    """Every question of the scope in order, the turns due before each ingested first; with ``lenient``
    a failing ingest or search is recorded (an empty answer) instead of stopping the scope."""
    pending = list(task.turns)
    for qid, text, asked_at in task.queries:
        if call.timed_out or state.failed is not None:
            failures.append((qid, "", state.failed or "not asked: an earlier call of this scope timed out"))
            answers[qid] = ()
            continue
        due = _due(task, pending, asked_at)
        if due:
            pending = pending[len(due) :]
            try:
                state.ingest(due)
            except MemorySystemError as err:
                if not task.lenient:
                    raise _Stop(err.call, err.problem) from None
                state.failed = str(err)
                failures.append((qid, "", str(err)))
                answers[qid] = ()
                continue
        state.asked = asked_at if asked_at is not None else state.newest
        try:
            answers[qid] = _search_checked(task, system, call, qid, text, known, state, search_times)
            state.tick(0, 1)
        except _Stop as stop:
            if not task.lenient:
                raise stop from None
            failures.append((qid, stop.call, stop.problem))
            answers[qid] = ()
            if call.timed_out:  # the system is given up on: the scope's other queries are listed, not asked
                state.failed = str(MemorySystemError(call.key, call.scope, stop.call, str(stop.problem)))


def _list_unanswered(
    task: ScopeTask,
    answers: dict[str, tuple[Memory, ...]],
    failures: list[tuple[str, str, str | SourceFault]],
    message: str,
) -> None:
    """``lenient`` after a timeout outside ingest and search: every query of the scope not yet answered is failed."""
    for qid, _, _ in task.queries:
        if qid not in answers:
            failures.append((qid, "", message))
            answers[qid] = ()


def run_scope(task: ScopeTask, tick: Callable[[int, int], None] | None = None) -> ScopeResult:
    """Replay one scope (a fresh system, its turns ingested, its queries asked, closed); never raises for the system.

    A module-level function of a picklable task, for ``executor.submit(run_scope, task)``.  ``tick(turns,
    questions)``, when given, is told of each ingest call's turns and each question answered (progress).
    """
    began = time.perf_counter()
    call = _Call(task.spec.key, task.scope, task.timeout)
    answers: dict[str, tuple[Memory, ...]] = {}
    failures: list[tuple[str, str, str | SourceFault]] = []
    ingest_times: list[float] = []
    search_times: list[float] = []
    params: dict[str, Any] | None = None
    error: tuple[str, str | SourceFault] | None = None
    known = {t.entry_id for t in task.turns}
    # The scope's processes end with it (agentmemory.systems.processes), after close(), before its folder goes.
    with tempfile.TemporaryDirectory(prefix="agentmemory-system-") as folder, children_ended():
        call.workdir = Path(folder)
        try:
            system = call("start", partial(task.spec.make, task.scope, Path(folder)))
        except MemorySystemError as err:
            if not (task.lenient and call.timed_out):
                return ScopeResult(task.scope, (), (), (err.call, err.problem), None, (), ())
            _list_unanswered(task, answers, failures, str(err))
            return ScopeResult(task.scope, tuple(answers.items()), tuple(failures), None, None, (), ())
        try:
            if task.want_params:
                params = _params(system, task.spec, call)
            batch = call("start", partial(getattr, system, "batch_size", None))
            problem = batch_size_problem(batch)
            if problem is not None:
                raise call.error("start", problem)
            state = _ScopeState(system, call, batch, ingest_times, task.clock, tick)
            _ask_all(task, system, call, state, known, answers, failures, search_times)
        except _Stop as stop:
            error = (stop.call, stop.problem)
        except MemorySystemError as err:
            if task.lenient and call.timed_out:
                _list_unanswered(task, answers, failures, str(err))
            else:
                error = (err.call, err.problem)
        finally:
            error = _close(system, call, error)
    return ScopeResult(
        task.scope,
        tuple(answers.items()),
        tuple(failures),
        error,
        params,
        tuple(ingest_times),
        tuple(search_times),
        time.perf_counter() - began,
    )


def _close(
    system: Any, call: _Call, error: tuple[str, str | SourceFault] | None
) -> tuple[str, str | SourceFault] | None:
    """``close()`` the scope's system, also after a failure or a timed-out call (a hung call's thread is left
    behind, the system closed under it); the scope's error: the first one, and close()'s own failure reported only
    when nothing failed before it and no call of the scope timed out."""
    gave_up = call.timed_out
    limit = call.timeout
    if gave_up and limit is not None:  # its own grace to end what the hung call holds (MCP: 2 s, then the group)
        call.timeout = max(limit, CLOSE_GRACE)
    try:
        call("close", system.close)
    except MemorySystemError as err:
        if error is None and not gave_up:
            return (err.call, err.problem)
    finally:
        call.timeout = limit
    return error


def _sources_fault(
    call: str, result: tuple[Memory, ...], known: set[str], ingested: set[str], workdir: Path | None
) -> str | SourceFault | None:
    """A source outside the scope's turns (a :class:`SourceFault`), or one not ingested yet (a problem), or None."""
    for position, memory in enumerate(result, start=1):
        for source in memory.sources or ():
            if source not in known:
                return SourceFault(call, position, source, scrub_paths(source, workdir))
            if source not in ingested:
                return source_problem(position, scrub_paths(source, workdir), "not_ingested")
    return None


def replay(
    spec: SystemSpec,
    collection: Collection,
    *,
    depth: int,
    as_of: bool = False,
    timeout: float | None = None,
    lenient: bool = False,
    executor: Executor | None = None,
    clock: str = "real",
    progress: ReplayProgress | bool = False,
) -> Replay:
    """Replay ``collection`` into the system ``spec`` and ask each judged query for ``depth`` memories.

    See the module docstring for the order and the rules.  Each scope is an
    independent task (:func:`scope_tasks`, :func:`run_scope`): without
    ``executor`` they run here one after the other, stopping at the first
    failing scope; with one (a ``concurrent.futures.Executor``: a
    ``ProcessPoolExecutor``, a Dask client's ``get_executor()``) every scope
    is submitted at once and the results are read back in scope order, so
    answers, failures and the error raised are the same either way (the
    scopes after a failing one may have run; their results are dropped).

    ``clock`` is one of :data:`CLOCKS`: under ``"conversation"`` the
    system's ``datetime.now()`` and ``time.time()`` read the conversation's
    time (the newest turn's during an ingest call, the question's
    ``asked_at`` during a search).  ``progress`` (``True``, or a
    :class:`~agentmemory.systems.progress.ReplayProgress`) shows the replay on
    stderr: a bar on a terminal, else a plain line every ten seconds.

    Raises:
        MemorySystemError: a call failed, timed out or returned something
            the checks refuse (unless ``lenient`` and the call was ``search``).
        ParameterError: ``clock`` is not one of :data:`CLOCKS`.
    """
    if clock not in CLOCKS:
        raise UnknownNameError("clock", clock, list(CLOCKS))
    began = time.perf_counter()
    tasks = scope_tasks(spec, collection, depth=depth, as_of=as_of, timeout=timeout, lenient=lenient, clock=clock)
    scope_of = turn_index(collection).scope_of
    shown = progress if isinstance(progress, ReplayProgress) else (ReplayProgress() if progress else None)
    if shown is not None:
        shown.start(spec.label, len(tasks))
    if executor is None:
        results: Iterator[ScopeResult] = _serially(tasks, shown)
    else:
        futures = [executor.submit(run_scope, task) for task in tasks]
        results = _read_back(futures, tasks, shown)
    answers: dict[str, tuple[Memory, ...]] = {}
    failures: list[tuple[str, str]] = []
    ingest_times: list[float] = []
    search_times: list[float] = []
    scope_seconds: list[tuple[str | None, float]] = []
    params: dict[str, Any] | None = None
    try:
        for task, done in zip(tasks, results, strict=True):
            if task.want_params:
                params = done.params
            for qid, call_name, problem in done.failures:
                text = str(_error(spec.key, task.scope, call_name, problem, scope_of)) if call_name else str(problem)
                failures.append((qid, text))
            if done.error is not None:
                raise _error(spec.key, task.scope, done.error[0], done.error[1], scope_of)
            answers.update(done.answers)
            ingest_times.extend(done.ingest_per_turn)
            search_times.extend(done.search)
            scope_seconds.append((task.scope, done.seconds))
    finally:
        if executor is not None:
            for future in futures:
                future.cancel()
        if shown is not None:
            shown.finish()
    return Replay(
        spec.key,
        spec.label,
        params if params is not None else dict(spec.params),
        answers,
        {q.id: q.scope for q in collection.judged_queries},
        tuple(failures),
        ReplayTimings(
            tuple(ingest_times),
            tuple(search_times),
            tuple(scope_seconds),
            time.perf_counter() - began,
            sum(len(task.turns) for task in tasks),
        ),
        clock,
    )


def _serially(tasks: Sequence[ScopeTask], shown: ReplayProgress | None) -> Iterator[ScopeResult]:
    """Each scope replayed here in turn, the progress told of each scope, ingest batch and question."""
    for position, task in enumerate(tasks):
        if shown is not None:
            shown.scope(position)
        yield run_scope(task, None if shown is None else shown.tick)


def _read_back(
    futures: Sequence[Future[ScopeResult]], tasks: Sequence[ScopeTask], shown: ReplayProgress | None
) -> Iterator[ScopeResult]:
    """Each scope's result from its executor, in scope order, the progress told as each is read."""
    for position, (future, task) in enumerate(zip(futures, tasks)):
        done = _result(future, task)
        if shown is not None:
            shown.tick(len(task.turns), len(task.queries))
            shown.scope(position + 1)
        yield done


def _result(future: Future[ScopeResult], task: ScopeTask) -> ScopeResult:
    """A scope's result from its executor; a worker process that ended (the system called ``os._exit``, or
    crashed) is the scope's error, not a success and not a traceback."""
    try:
        return future.result()
    except BrokenExecutor as err:
        problem = f"the worker process ended during the scope ({type(err).__name__}): did the system exit or crash?"
        return ScopeResult(task.scope, (), (), ("replay", problem), None, (), ())


def _error(
    key: str, scope: str | None, call: str, problem: str | SourceFault, scope_of: Mapping[str, str | None]
) -> MemorySystemError:
    """The one-line error; a source outside the scope is a leak when it is a turn of another scope."""
    if isinstance(problem, SourceFault):
        kind = "leak" if problem.source in scope_of else "unknown"
        problem = source_problem(problem.position, problem.shown, kind, scope_of.get(problem.source))
    return MemorySystemError(key, scope, call, problem)


def _params(system: MemorySystem, spec: SystemSpec, call: _Call) -> dict[str, Any]:
    """The system's ``params()``, checked (a dict :func:`~agentmemory.retrievers.guard.plain_json` holds) and
    copied into plain JSON values; the spec's parameters when it has no such member."""
    method = call("params", partial(getattr, system, "params", None))
    if not callable(method):
        return dict(spec.params)
    value, problem = call("params", partial(_plain_params, method))
    if problem is not None:
        raise call.error("params", problem)
    return value


def _plain_params(method: Callable[[], Any]) -> tuple[dict[str, Any], str | None]:
    value = method()
    problem = params_violation(value)
    return ({}, f"returned {problem}") if problem is not None else (plain_json(value), None)


class _ScopeState:
    """The turns given to one scope's system so far, given in batches of at most ``batch``."""

    def __init__(
        self,
        system: MemorySystem,
        call: _Call,
        batch: int | None,
        times: list[float],
        clock: str = "real",
        tick: Callable[[int, int], None] | None = None,
    ) -> None:
        self.system = system
        self.call = call
        self.batch = batch
        self.times = times
        self.clock = clock
        self.progress = tick
        self.ingested: set[str] = set()
        self.failed: str | None = None
        self.newest: datetime | None = None  # the newest created_at ingested so far
        self.asked: datetime | None = None  # "now" of the question being asked, under the conversation's clock

    def tick(self, turns: int, questions: int) -> None:
        """Tell the progress (when there is one) of turns ingested and questions answered."""
        if self.progress is not None:
            self.progress(turns, questions)

    def ingest(self, turns: Sequence[Turn]) -> None:
        """``turns`` given in batches; each call gets a fresh list (the system may keep or change it), and the
        replay counts and records the batch from its own tuple."""
        size = self.batch or len(turns)
        for start in range(0, len(turns), size):
            chunk = tuple(turns[start : start + size])
            dated = [t.created_at for t in chunk if t.created_at is not None]
            if dated:
                self.newest = max(dated) if self.newest is None else max(self.newest, *dated)
            began = time.perf_counter()
            with _clock_at(self.clock, self.newest):
                self.call("ingest", partial(self.system.ingest, list(chunk)))
            self.times.append((time.perf_counter() - began) / len(chunk))
            self.ingested.update(t.entry_id for t in chunk)
            self.tick(len(chunk), 0)
