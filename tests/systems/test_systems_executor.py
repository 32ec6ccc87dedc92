"""Each scope's replay is a task: serially or on a process pool, the same answers and byte-identical values."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest
from conftest import REPO_ROOT

from agentmemory.datasets import load
from agentmemory.datasets.longmemeval import load_longmemeval
from agentmemory.errors import MemorySystemError
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.system_runs import system_runs
from agentmemory.systems.registry import resolve_system
from agentmemory.systems.replay import replay, run_scope, scope_tasks

LOCOMO = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
LONGMEMEVAL = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"
SYSTEMS = ["bm25", "examples.my_memory_system:System"]


@pytest.fixture(scope="module")
def pool():
    """Two worker processes started fresh (spawn, as the experiment grid's process executor does)."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as executor:
        yield executor


def _values(collection, executor) -> list[tuple[str, str, str, str]]:
    runs = system_runs(collection, SYSTEMS, k=5, depth=10, relevance="provenance", executor=executor)
    evaluation = evaluate(collection, None, runs=[r.run for r in runs], k=5, relevance="provenance")
    return [
        (result.name, q.query_id, measure, value.hex())
        for result in evaluation.results
        for q in result.per_query
        for measure, value in sorted(q.metrics.items())
    ]


@pytest.mark.parametrize("path", [LOCOMO, LONGMEMEVAL], ids=["locomo", "longmemeval-session"])
def test_serial_and_process_pool_give_byte_identical_values(pool, path) -> None:
    """Per-query values (float hex) of every system are the same run serially and on a 2-process pool."""
    collection = load(path)
    serial = _values(collection, None)
    pooled = _values(collection, pool)
    assert len(serial) > 50 and any(float.fromhex(v) > 0 for *_, v in serial)
    assert serial == pooled


def test_tasks_are_one_per_scope_and_picklable() -> None:
    """scope_tasks gives one self-contained task per scope with a judged query; each survives pickling."""
    collection = load_longmemeval(LONGMEMEVAL)
    tasks = scope_tasks(resolve_system("bm25"), collection, depth=5)
    assert [t.scope for t in tasks] == [q.scope for q in collection.judged_queries]
    assert [t.want_params for t in tasks] == [True] + [False] * (len(tasks) - 1)
    again = pickle.loads(pickle.dumps(tasks[0]))
    assert again.turns == tasks[0].turns and again.queries == tasks[0].queries
    assert run_scope(again).answers == run_scope(tasks[0]).answers


@pytest.mark.parametrize("fault", ["leak", "raise_search"])
def test_the_first_failing_scope_is_the_error_on_a_pool_too(pool, fault: str) -> None:
    """A failure is the same one-line error with or without an executor (a leak is found across processes)."""
    collection = load(LOCOMO)
    spec = resolve_system(f"faulty_systems:Faulty[fault={fault}]")
    messages = []
    for executor in (None, pool):
        with pytest.raises(MemorySystemError) as caught:
            replay(spec, collection, depth=5, executor=executor)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "in scope conv-1" in messages[0]


def test_lenient_failures_are_the_same_on_a_pool(pool) -> None:
    """--lenient-system's recorded failures are the same lines, in the same order, with or without an executor."""
    collection = load(LOCOMO)
    spec = resolve_system("faulty_systems:Faulty[fault=raise_search]")
    serial = replay(spec, collection, depth=5, lenient=True)
    pooled = replay(spec, collection, depth=5, lenient=True, executor=pool)
    assert serial.failures == pooled.failures and len(serial.failures) == len(collection.judged_queries)
