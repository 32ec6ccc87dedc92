"""Running an experiment: cached tasks reused, the others handed to an executor, one merge at the end.

:func:`run_experiment` writes into ``out``:

* ``tasks/<key>.json``: each finished task, written atomically by the client
  as soon as it comes back (``{"key", "task", "result"}``: the key, what it
  was computed from, the per-query rows).  A rerun with ``resume=True``
  reuses every file whose key and inputs match and computes only the rest,
  so an experiment stopped anywhere (the client or a worker killed) loses
  at most the tasks that were running.  Failed tasks write no file: a rerun
  tries them again.
* ``results.json``, ``per_query.csv``, ``tables/<collection>.md`` (see
  :mod:`agentmemory.experiment.merge`), and ``per_query.parquet`` with
  ``parquet=True``.
* ``reports/<collection>/`` and ``reports/grid.ipynb`` with its HTML (the heat maps of the parameter
  grids) with ``reports=True`` (see :mod:`agentmemory.experiment.reports`).

**Byte-identical results.**  A task's rows depend only on its inputs (the
key); the client always reads them back from the task file's JSON text
(floats in their shortest round-trip form), whether computed now or
reused; the merge orders everything by the plan, never by completion; and
the statistics are computed once, by the client, seeded by each
evaluation's seed.  So the serial executor, a process pool and a Dask
cluster of any size write the same bytes, in whatever order tasks finish,
and whether a task built its index or was served one another task built
(a retriever from ``with_params`` answers as one built anew).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

from agentmemory.errors import ParameterError
from agentmemory.experiment.executors import as_executor, parallelism, slots, submit_to
from agentmemory.experiment.grid import Grid, read_grid
from agentmemory.experiment.merge import PER_QUERY_COLUMNS, Evaluated, Failure, dumps_results, merge, per_query_csv
from agentmemory.experiment.plan import Plan, Task, batches, default_out, plan_experiment, scope_split
from agentmemory.experiment.reports import (
    check_report_dependencies,
    default_notebook,
    render_report,
    report_parameters,
    write_grid_report,
)
from agentmemory.experiment.task import (
    canonical_json,
    error_line,
    execute_batch,
    forget_indexes,
    join_parts,
    snapshot_for,
)
from agentmemory.files.atomic import atomic_write_bytes, atomic_write_text

__all__ = ["ExperimentResult", "run_experiment"]


@dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` did.

    ``tasks`` counts the plan's tasks; ``reused`` those read from ``out/tasks``,
    ``computed`` those run now and finished, ``failures`` those that failed
    (each with its one-line error); ``report_failures`` lists
    ``(collection, error)`` of reports that failed; ``written`` the files
    written, in order; ``indexes_built`` how many retriever indexes the
    computed tasks built (fewer than the retriever tasks when tasks shared one);
    ``batches`` how many calls the executor was given for them.
    """

    out: Path
    tasks: int
    reused: int
    computed: int
    failures: tuple[Failure, ...]
    merged: Evaluated = field(repr=False)
    written: tuple[Path, ...] = ()
    report_failures: tuple[tuple[str, str], ...] = ()
    indexes_built: int = 0
    batches: int = 0

    @property
    def ok(self) -> bool:
        """True when every task (and every report) succeeded."""
        return not self.failures and not self.report_failures

    @property
    def results(self) -> dict[str, Any]:
        """``results.json`` as data."""
        return self.merged.results

    def summary(self) -> str:
        """``12 tasks: 4 reused, 7 computed, 1 failed``."""
        return f"{self.tasks} tasks: {self.reused} reused, {self.computed} computed, {len(self.failures)} failed"


def _task_file(task: Task, result: dict[str, Any]) -> str:
    """A task file's text: one JSON line, keys in a fixed order."""
    data = {"key": task.key, "task": task.job.identity(), "result": result}
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def _cached(path: Path, task: Task) -> dict[str, Any] | None:
    """The result stored for ``task`` at ``path``, if the file is there, readable and for exactly this task."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != task.key or "result" not in data:
        return None
    if canonical_json(data.get("task")) != canonical_json(task.job.identity()):
        return None
    result = data["result"]
    return result if isinstance(result, dict) and "error" not in result else None


def _submitted(
    executor: Executor, plan: Plan, tasks: Sequence[Task], share: bool, counts: dict[str, int]
) -> Iterator[tuple[Task, dict[str, Any], int]]:
    """Each task with its result (or ``{"error": ...}``) and the indexes it built, as its batch finishes.

    The tasks go to ``executor`` in batches (:func:`~agentmemory.experiment.plan.batches`),
    each one call of :func:`~agentmemory.experiment.task.execute_batch`; at
    most twice the executor's parallelism of them are submitted at once (one
    at a time for the serial executor, so each task is written before the
    next starts), or every batch when the executor does not say.  On an
    executor whose workers can be addressed (:func:`~agentmemory.experiment.executors.slots`),
    each worker gets at most one more than it runs at once, its own collections' first (see :class:`_Placer`).
    A task whose index another task of this run shares is marked ``keep``; with
    ``share`` false no task shares (each builds its own index).  Where the
    batches leave workers idle, a batch may run in parts by scope
    (:func:`~agentmemory.experiment.plan.scope_split`): its tasks come back
    when every part has, joined (:func:`~agentmemory.experiment.task.join_parts`).
    ``counts`` receives the number of calls (batches and parts).
    """
    width = parallelism(executor)
    whole = batches(plan, _marked(tasks, share), width)
    cut = [
        _Batch(batch, number, None if n == 1 else (i, n))
        for number, (batch, n) in enumerate(zip(whole, scope_split(plan, whole, width)))
        for i in range(n)
    ]
    counts["batches"] = len(cut)
    window = max(1, len(cut) if width is None else 1 if width == 1 else 2 * width)
    places = slots(executor) if width != 1 else {}
    placer = _Placer(cut, places, plan.homes) if len(places) > 1 else None
    waiting = iter(cut)
    pending: dict[Future[Any], tuple[_Batch, Any]] = {}
    parts: dict[int, dict[int, list[tuple[dict[str, Any], int]]]] = {}  # batch number -> part -> outcomes

    def fill() -> None:
        if placer is not None:
            for placed, slot in placer.take():
                call = (execute_batch, placed.jobs, placed.part, placed.snapshot)
                pending[submit_to(executor, slot, *call)] = placed, slot
            return
        while len(pending) < window:
            batch = next(waiting, None)
            if batch is None:
                return
            pending[executor.submit(execute_batch, batch.jobs, batch.part, batch.snapshot)] = batch, None

    scratch: list[str] = []  # the snapshots' folder, removed however the run ends
    try:
        _snapshots(executor, plan, cut, places, width, scratch)
        fill()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f][0].order):
                batch, slot = pending.pop(future)
                if placer is not None:
                    placer.finished(slot)
                try:
                    outcomes = future.result()
                except BaseException as err:  # the worker died, the pool broke, the batch was cancelled
                    if isinstance(err, (KeyboardInterrupt, SystemExit)):
                        raise
                    outcomes = [({"error": error_line(err)}, 0)] * len(batch)
                if batch.part is not None:  # a part: the tasks come back once every part of the batch has
                    got = parts.setdefault(batch.number, {})
                    got[batch.part[0]] = outcomes
                    if len(got) < batch.part[1]:
                        continue
                    del parts[batch.number]
                    outcomes = [
                        (join_parts([got[i][t][0] for i in range(len(got))]), max(got[i][t][1] for i in got))
                        for t in range(len(batch))
                    ]
                for task, (outcome, built) in zip(batch, outcomes):
                    yield task, outcome, built
            fill()
    finally:
        for future in pending:
            future.cancel()
        for folder in scratch:
            shutil.rmtree(folder, ignore_errors=True)


def _snapshots(
    executor: Executor,
    plan: Plan,
    cut: Sequence[_Batch],
    places: Mapping[Any, int],
    width: int | None,
    scratch: list[str],
) -> None:
    """Each collection that more than one call reads (a batch in parts, an index group cut in two, several
    batches) on an executor of several workers, written once as a snapshot that their workers map instead of
    reading its files (:func:`~agentmemory.experiment.task.snapshot_for`): by the worker that planned it
    (``Plan.homes``), else by this process when it loaded it.  Written into a folder made for this run (added
    to ``scratch`` as soon as it is made, for the caller to remove when the run ends, however it ends), each
    call told the path (``_Batch.snapshot``).  A snapshot that is not written leaves the calls to read the
    collection's files."""
    if width is not None and width <= 1:
        return
    calls: dict[str, list[_Batch]] = {}
    for batch in cut:
        calls.setdefault(batch[0].collection, []).append(batch)
    shared = [name for name, batches in calls.items() if len(batches) > 1]
    if not shared:
        return
    folder = tempfile.mkdtemp(prefix="agentmemory-parts-")
    scratch.append(folder)
    written: dict[str, Any] = {}
    for name in shared:
        source = calls[name][0][0].job.collection
        home = plan.homes.get(name)
        if home is not None and home in places:
            written[name] = submit_to(executor, home, snapshot_for, source, folder)
        else:
            written[name] = snapshot_for(source, folder)
    for name, made in written.items():
        if isinstance(made, Future):
            try:
                made = made.result()
            except Exception:  # the worker died or broke: the calls read the files (and report what fails)
                made = None
        for batch in calls[name]:
            batch.snapshot = made


class _Batch(tuple):
    """A batch of tasks (a tuple of :class:`~agentmemory.experiment.plan.Task`), or part ``part`` (``(i, n)``)
    of batch ``number`` by scope (:func:`~agentmemory.experiment.plan.scope_split`); each part its own object."""

    number: int
    part: tuple[int, int] | None
    snapshot: str | None

    def __new__(cls, tasks: tuple[Task, ...], number: int, part: tuple[int, int] | None) -> _Batch:
        made = super().__new__(cls, tasks)
        made.number = number
        made.part = part
        made.snapshot = None
        return made

    @property
    def jobs(self) -> tuple[Any, ...]:
        return tuple(t.job for t in self)

    @property
    def order(self) -> tuple[int, int]:
        return self.number, 0 if self.part is None else self.part[0]


class _Placer:
    """Which worker runs which batch, so that each keeps reading the collections it holds.

    A worker holds the collections it loaded while planning (``Plan.homes``)
    and those of the batches it was given.  Whenever calls are handed out,
    each worker with none running takes one, then each with one running
    another, and so on up to one more than it runs at once (``places``: worker
    -> how many): the first waiting batch of a collection it holds, else of
    one no worker holds, else (only a worker with a free thread) the first
    waiting batch: an idle worker reads a collection again rather than wait.
    """

    def __init__(self, cut: Sequence[_Batch], places: Mapping[Any, int], homes: Mapping[str, Any]) -> None:
        self.waiting = list(cut)
        self.capacity = dict(places)
        self.running = dict.fromkeys(self.capacity, 0)
        self.held: dict[str, set[Any]] = {}
        for name, place in homes.items():
            if place in self.running:
                self.held.setdefault(name, set()).add(place)

    def take(self) -> list[tuple[_Batch, Any]]:
        given = []
        for depth in range(max(self.capacity.values()) + 1):
            for place, capacity in self.capacity.items():
                if self.running[place] > depth or depth > capacity or not self.waiting:
                    continue
                batch = self._choose(place, steal=self.running[place] < capacity)
                if batch is None:
                    continue
                del self.waiting[next(i for i, b in enumerate(self.waiting) if b is batch)]
                self.running[place] += 1
                self.held.setdefault(batch[0].collection, set()).add(place)
                given.append((batch, place))
        return given

    def _choose(self, place: Any, steal: bool) -> _Batch | None:
        for batch in self.waiting:
            if place in self.held.get(batch[0].collection, ()):
                return batch
        for batch in self.waiting:
            if not self.held.get(batch[0].collection):
                return batch
        return self.waiting[0] if steal else None

    def finished(self, place: Any) -> None:
        self.running[place] -= 1


def _marked(tasks: Sequence[Task], share: bool) -> list[Task]:
    """``tasks`` with ``keep`` set where another of them shares the index; with ``share`` false, none shares."""
    if not share:
        return [replace(t, job=replace(t.job, index=None)) for t in tasks]
    sizes: dict[tuple[str, str], int] = {}
    for task in tasks:
        if task.job.index is not None:
            sizes[task.collection, task.job.index] = sizes.get((task.collection, task.job.index), 0) + 1
    return [
        replace(t, job=replace(t.job, keep=True)) if t.job.index and sizes[t.collection, t.job.index] > 1 else t
        for t in tasks
    ]


@contextlib.contextmanager
def _own_indexes_dropped() -> Iterator[None]:
    """The indexes tasks run in this process kept (serial, threads) are dropped when the tasks are done: they
    served this run; a worker process keeps its own (at most INDEX_CACHE_SIZE) for the next run it serves."""
    try:
        yield
    finally:
        forget_indexes()


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total, initial=initial, disable=not enabled, desc="tasks", unit="task", file=sys.stderr, leave=True
    )


def _check_parquet() -> None:
    import importlib.util

    if importlib.util.find_spec("pandas") is None:
        raise ParameterError(
            "--parquet", True, "needs pandas, which is not installed", "pip install 'agentmemory-eval[report]'"
        )
    if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("fastparquet") is None:
        raise ParameterError(
            "--parquet",
            True,
            "needs fastparquet or pyarrow, neither is installed",
            "pip install 'agentmemory-eval[report]'",
        )


def _parquet_bytes(rows: Sequence[tuple[Any, ...]], folder: Path) -> bytes:
    import tempfile

    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=list(PER_QUERY_COLUMNS))
    frame = frame.astype({"k": "int64", "seed": "int64", "value": "float64"})
    with tempfile.TemporaryDirectory(dir=folder) as tmp, warnings.catch_warnings():
        # fastparquet reads a pandas option pandas 3 deprecates; nothing the user can act on.
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="fastparquet")
        warnings.filterwarnings("ignore", category=FutureWarning, module="fastparquet")
        target = Path(tmp) / "per_query.parquet"
        frame.to_parquet(target, index=False)
        return target.read_bytes()


def run_experiment(
    grid: Grid | Plan | str | PathLike[str],
    executor: Any = None,
    *,
    out: str | PathLike[str] | None = None,
    resume: bool = True,
    reports: bool = False,
    parquet: bool = False,
    progress: bool = False,
    notebook: str | PathLike[str] | None = None,
    share: bool = True,
) -> ExperimentResult:
    """Run the grid's tasks on ``executor`` and merge them into ``out`` (see the module docstring).

    Args:
        grid: a grid file's path, a :class:`~agentmemory.experiment.grid.Grid`
            or a :class:`~agentmemory.experiment.plan.Plan`.
        executor: any :class:`concurrent.futures.Executor` (a
            ``ProcessPoolExecutor``, a Dask ``Client.get_executor()``), a Dask
            ``Client``, or ``None`` to run each task here, one after another.
        out: the output folder (default ``experiments/<grid name>``), relative to the working folder when
            this is called (fixed then: a plugin that changes the working folder moves no output).
        resume: reuse the task files already in ``out/tasks``.
        reports: also render ``notebook`` (default ``notebooks/collection.ipynb``)
            for each collection, as tasks on ``executor``.
        parquet: also write ``per_query.parquet`` (needs pandas and fastparquet or pyarrow).
        progress: a progress bar on stderr (tasks done out of all, failures).
        share: tasks of one collection whose retrievers share an index build it once per
            worker (see :func:`~agentmemory.experiment.plan.batches`); ``False`` builds it
            for every task (the same results, for measuring what sharing saves).

    A task that fails does not stop the others: it is in
    ``result.failures`` and in ``results.json``; ``result.ok`` says whether
    all succeeded.

    Raises:
        AgentMemoryError: bad input (the grid, a collection, a missing
            report dependency), before anything is written.
    """
    here = Path.cwd()  # every output is fixed here, before any plugin can change the working folder
    pool = as_executor(executor)
    plan = (
        grid if isinstance(grid, Plan) else plan_experiment(grid if isinstance(grid, Grid) else read_grid(grid), pool)
    )
    if parquet:
        _check_parquet()
    source = None
    if reports:
        check_report_dependencies()
        source = here / notebook if notebook is not None else default_notebook()
    folder = here / (Path(out) if out is not None else default_out(plan.grid))
    tasks_dir = folder / "tasks"

    unique: dict[str, Task] = {}
    for task in plan.tasks:
        unique.setdefault(task.key, task)
    outputs: dict[str, dict[str, Any]] = {}
    if resume:
        for key, task in unique.items():
            cached = _cached(tasks_dir / f"{key}.json", task)
            if cached is not None:
                outputs[key] = cached
    reused_keys = set(outputs)
    todo = [task for key, task in unique.items() if key not in outputs]
    errors: dict[str, str] = {}
    indexes_built = 0
    counts = {"batches": 0}
    folder.mkdir(parents=True, exist_ok=True)
    with _progress_bar(len(unique), len(reused_keys), progress) as bar, _own_indexes_dropped():
        for task, outcome, built in _submitted(pool, plan, todo, share, counts):
            indexes_built += built
            if "error" in outcome:
                errors[task.key] = str(outcome["error"])
                bar.set_postfix(failed=len(errors))
            else:
                text = _task_file(task, outcome)
                atomic_write_text(tasks_dir / f"{task.key}.json", text)
                outputs[task.key] = json.loads(text)["result"]
            bar.update(1)
    failures = tuple(Failure(t, errors[t.key]) for t in plan.tasks if t.key in errors)
    merged = merge(plan, outputs, failures)

    written = []
    results_path = folder / "results.json"
    atomic_write_text(results_path, dumps_results(merged.results))
    written.append(results_path)
    csv_path = folder / "per_query.csv"
    atomic_write_text(csv_path, per_query_csv(merged.rows))
    written.append(csv_path)
    if parquet:
        parquet_path = folder / "per_query.parquet"
        atomic_write_bytes(parquet_path, _parquet_bytes(merged.rows, folder))
        written.append(parquet_path)
    for name, text in merged.tables.items():
        path = folder / "tables" / f"{name}.md"
        atomic_write_text(path, text)
        written.append(path)
    report_failures: list[tuple[str, str]] = []
    if source is not None:
        written += _reports(plan, pool, source, folder, report_failures)
        written += write_grid_report(merged.results, folder / "reports")
    reused = sum(1 for t in plan.tasks if t.key in reused_keys)
    return ExperimentResult(
        out=folder,
        tasks=len(plan.tasks),
        reused=reused,
        computed=len(plan.tasks) - reused - len(failures),
        failures=failures,
        merged=merged,
        written=tuple(written),
        report_failures=tuple(report_failures),
        indexes_built=indexes_built,
        batches=counts["batches"],
    )


def _reports(plan: Plan, pool: Executor, notebook: Path, folder: Path, failures: list[tuple[str, str]]) -> list[Path]:
    """Render the report of every collection with a retriever or a run file, as tasks on ``pool``; the folders written."""
    jobs = []
    for collection in plan.collections:
        retrievers = [s.spec for s in collection.systems if s.kind == "retriever"]
        runs = collection.definition.runs
        mine = [t for t in plan.tasks if t.collection == collection.name]
        if not (retrievers or runs) or not mine:
            continue
        parameters = report_parameters(
            collection=collection.source.path,
            format=collection.source.format,
            options=dict(collection.source.options),
            k=mine[0].k,
            seed=mine[0].seed,
            retrievers=retrievers,
            metrics=list(plan.grid.measures),
            runs=runs,
            relevance=plan.grid.relevance_of(collection.name),
        )
        target = (folder / "reports" / collection.name).resolve()
        jobs.append(
            (collection.name, target, pool.submit(render_report, str(notebook.resolve()), parameters, str(target)))
        )
    written = []
    for name, target, future in jobs:
        try:
            outcome = future.result()
        except Exception as err:  # the worker died or the pool broke
            outcome = {"error": error_line(err)}
        if "error" in outcome:
            failures.append((name, str(outcome["error"])))
        else:
            written.append(target)
    return written
