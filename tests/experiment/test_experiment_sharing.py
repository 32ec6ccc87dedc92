"""Tasks that share an index: built once per worker (counted), results byte for byte those of agentmemory before
sharing (tests/data/sharing, written by main at f71f115), and the batches the plan cuts for each executor."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.experiment import plan_experiment, read_grid, run_experiment
from agentmemory.experiment import task as task_module
from agentmemory.experiment.plan import SMALL_BATCH, batches, task_weight

SHARING = REPO_ROOT / "tests" / "data" / "sharing"
GRID = SHARING / "grid.toml"
GROUPS = 8  # tags, bm25 (4 settings), recency (3), hybrid (3) on each of the 2 collections
TASKS = 44  # 11 systems x 2 k x 2 collections


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("results.json", "per_query.csv")}


def expected() -> dict[str, bytes]:
    """The files agentmemory wrote for this grid before tasks shared indexes (main at f71f115, serial)."""
    return outputs(SHARING)


def test_serial_builds_each_index_once_per_grid_and_writes_the_bytes_of_before(tmp_path: Path):
    """k1 x b, recency and hybrid settings: one index per collection and index group, the same results.json and
    per_query.csv as before sharing, and nothing kept in the client once the run is over."""
    result = run_experiment(GRID, out=tmp_path / "out")
    assert result.ok and (result.tasks, result.computed) == (TASKS, TASKS)
    assert result.indexes_built == GROUPS
    assert outputs(tmp_path / "out") == expected()
    assert not task_module._INDEXES


def test_sharing_off_builds_every_index_and_writes_the_same_bytes(tmp_path: Path):
    """share=False: every task builds its own index, as before, with the same bytes."""
    result = run_experiment(GRID, out=tmp_path / "out", share=False)
    assert result.ok and result.indexes_built == TASKS
    assert outputs(tmp_path / "out") == expected()


def test_a_process_pool_shares_within_each_worker_and_writes_the_same_bytes(tmp_path: Path):
    """Two spawned workers: each collection's tasks are one batch here, so each index is built once in all."""
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        result = run_experiment(GRID, pool, out=tmp_path / "out")
    assert result.ok and result.batches == 2
    assert result.indexes_built == GROUPS
    assert outputs(tmp_path / "out") == expected()


def test_a_rerun_builds_nothing(tmp_path: Path):
    """Reused task files need no index."""
    run_experiment(GRID, out=tmp_path / "out")
    again = run_experiment(GRID, out=tmp_path / "out")
    assert (again.reused, again.computed, again.indexes_built, again.batches) == (TASKS, 0, 0, 0)
    assert outputs(tmp_path / "out") == expected()


@pytest.fixture(scope="module")
def plan():
    return plan_experiment(read_grid(GRID))


def test_serial_batches_are_single_tasks_with_each_index_group_together(plan):
    """Width 1 (and an executor that does not say): one task per batch, collections in order, each index group's
    tasks one after another, every task exactly once."""
    for width in (1, None):
        cut = batches(plan, plan.tasks, width)
        assert all(len(b) == 1 for b in cut)
        flat = [b[0] for b in cut]
        assert sorted(t.key for t in flat) == sorted(t.key for t in plan.tasks)
        groups = [(t.collection, t.job.index) for t in flat]
        runs = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
        assert len(runs) == len(set(runs)) == GROUPS
        assert [t.collection for t in flat] == sorted((t.collection for t in flat), key=["notes", "locomo"].index)


def test_workers_get_whole_collections_and_light_work_is_not_cut(plan):
    """Width 2 or 4 on the tiny fixtures: one batch per collection (cutting light work gains nothing)."""
    serial = [b[0].key for b in batches(plan, plan.tasks, 1)]
    for width in (2, 4):
        cut = batches(plan, plan.tasks, width)
        assert [{t.collection for t in b} for b in cut] == [{"notes"}, {"locomo"}]
        assert [t.key for b in cut for t in b] == serial


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    """A grid on one synthetic collection heavy enough to cut: bm25 with 10 settings (one index group), tags."""
    from agentmemory.datasets.beir import write_collection
    from agentmemory.datasets.synthetic import synthetic_collection

    folder = tmp_path_factory.mktemp("heavy")
    write_collection(synthetic_collection(seed=5, n_entries=3000, n_queries=60, vocabulary=300), folder / "c")
    grid = folder / "grid.toml"
    grid.write_text(
        'systems = [{ retriever = "bm25", grid = { k1 = [0.5, 0.9, 1.2, 1.5, 2.0], b = [0.3, 0.75] } }, "tags"]\n'
        f'[[collections]]\nname = "c"\npath = "{(folder / "c").as_posix()}"\n',
        encoding="utf-8",
    )
    return plan_experiment(read_grid(grid))


def test_a_heavy_collection_is_cut_at_its_index_groups_then_inside_one(heavy):
    """Width 2: the boundary between bm25's group (10 tasks) and tags (1) is far from the middle, so the cut is
    inside bm25's group (each half builds that index once); no batch is cut below SMALL_BATCH."""
    weights = [task_weight(heavy, t) for t in heavy.tasks]
    assert len(set(weights)) == 1 and weights[0] * 11 >= 2 * SMALL_BATCH > weights[0] * 6
    two = batches(heavy, heavy.tasks, 2)
    assert [[t.system for t in b] for b in two] == [
        [t.system for t in heavy.tasks[:6]],
        [t.system for t in heavy.tasks[6:]],
    ]
    assert heavy.tasks[-1].system == "tags"
    # Width 4: a half of a half would be lighter than SMALL_BATCH, so the halves stay as they are.
    assert batches(heavy, heavy.tasks, 4) == two


def test_a_heavy_grid_on_two_workers_builds_an_index_once_per_worker(heavy, tmp_path: Path):
    """The cut bm25 group on a pool of 2: its index is built once in each worker, tags once; the serial bytes."""
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        result = run_experiment(heavy, pool, out=tmp_path / "pool")
    serial = run_experiment(heavy, out=tmp_path / "serial")
    assert result.ok and serial.ok and serial.indexes_built == 2 and result.indexes_built == 3
    assert outputs(tmp_path / "pool") == outputs(tmp_path / "serial")


def test_light_batches_are_merged_while_every_worker_keeps_one(plan):
    """examples/grid.toml (three tiny collections): on 2 workers the two lightest neighbours go together, on 3 or
    more each collection stays a batch; no tasks, no batch."""
    example = plan_experiment(read_grid(REPO_ROOT / "examples" / "grid.toml"))
    weights = {t.collection: task_weight(example, t) for t in example.tasks}
    assert sum(task_weight(example, t) for t in example.tasks) < SMALL_BATCH, weights
    assert [sorted({t.collection for t in b}) for b in batches(example, example.tasks, 2)] == [
        ["garden", "notes"],
        ["locomo"],
    ]
    for width in (3, 4):
        assert [{t.collection for t in b} for b in batches(example, example.tasks, width)] == [
            {"notes"},
            {"garden"},
            {"locomo"},
        ]
    assert batches(plan, [], 2) == []


def test_an_index_is_kept_only_for_another_task_and_dropped_least_recent_first(plan, monkeypatch):
    """execute_batch keeps a task's store only when ``keep`` says another task shares it, at most
    INDEX_CACHE_SIZE of them; the next task of the group builds nothing."""
    from dataclasses import replace

    monkeypatch.setattr(task_module, "_INDEXES", type(task_module._INDEXES)())
    bm25 = [t.job for t in plan.tasks if t.collection == "notes" and t.system.startswith("bm25")]
    [(first, built)] = task_module.execute_batch((bm25[0],))
    assert "error" not in first and built == 1 and not task_module._INDEXES  # keep is False
    outcomes = task_module.execute_batch(tuple(replace(job, keep=True) for job in bm25))
    assert [b for _, b in outcomes] == [1] + [0] * (len(bm25) - 1)
    assert len(task_module._INDEXES) == 1
    others = [t.job for t in plan.tasks if t.collection == "notes" and t.system in ("tags", "recency")][:2]
    task_module.execute_batch(tuple(replace(job, keep=True) for job in others))
    assert len(task_module._INDEXES) == task_module.INDEX_CACHE_SIZE == 2
    assert not any(key[1] == bm25[0].index for key in task_module._INDEXES)  # the oldest went first
