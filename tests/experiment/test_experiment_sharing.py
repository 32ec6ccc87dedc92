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
from agentmemory.experiment.plan import CUT_INSIDE, SMALL_BATCH, batch_weight, batches

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
def synthetic(tmp_path_factory) -> Path:
    """A synthetic collection of 3,000 entries and 120 judged queries (its folder)."""
    from agentmemory.datasets.beir import write_collection
    from agentmemory.datasets.synthetic import synthetic_collection

    folder = tmp_path_factory.mktemp("heavy")
    write_collection(synthetic_collection(seed=5, n_entries=3000, n_queries=120, vocabulary=300), folder / "c")
    return folder


def synthetic_plan(folder: Path, systems: str):
    grid = folder / "grid.toml"
    grid.write_text(
        f'systems = {systems}\n[[collections]]\nname = "c"\npath = "{(folder / "c").as_posix()}"\n', encoding="utf-8"
    )
    return plan_experiment(read_grid(grid))


@pytest.fixture(scope="module")
def heavy(synthetic):
    """A grid on one synthetic collection heavy enough to cut: bm25 with 10 settings (one index group), tags."""
    return synthetic_plan(
        synthetic, '[{ retriever = "bm25", grid = { k1 = [0.5, 0.9, 1.2, 1.5, 2.0], b = [0.3, 0.75] } }, "tags"]'
    )


def shaped(plan, entries: int, judged: int):
    """``plan`` as if its collections had ``entries`` entries and ``judged`` judged queries: the batches of a grid
    of that shape (nothing is loaded or run)."""
    from dataclasses import replace

    summaries = {"entries": entries, "judged_queries": judged}
    return replace(plan, collections=tuple(replace(c, summary={**c.summary, **summaries}) for c in plan.collections))


def bm25_tasks(plan) -> tuple:
    """The plan's bm25 tasks (one index group), checked to be one."""
    tasks = tuple(t for t in plan.tasks if t.system.startswith("bm25"))
    assert len({t.job.index for t in tasks}) == 1 and len(tasks) > 1
    return tasks


def test_a_heavy_collection_is_cut_at_its_index_groups_then_inside_one(heavy):
    """Width 2: the boundary between bm25's group (10 tasks) and tags (1) is far from the middle, so the cut is
    inside bm25's group, where the heavier half (each half paying the build) is lightest; searching 120 queries
    outweighs building over 3,000 entries, so the cut pays.  Width 4: cutting either half again would leave a
    batch lighter than twice SMALL_BATCH, so the halves stay as they are."""
    two = batches(heavy, heavy.tasks, 2)
    assert [[t.system for t in b] for b in two] == [
        [t.system for t in heavy.tasks[:6]],
        [t.system for t in heavy.tasks[6:]],
    ]
    assert heavy.tasks[-1].system == "tags"
    assert batch_weight(heavy, heavy.tasks) >= 2 * SMALL_BATCH > max(batch_weight(heavy, b) for b in two)
    assert max(batch_weight(heavy, b) for b in two) <= CUT_INSIDE * batch_weight(heavy, heavy.tasks)
    assert batches(heavy, heavy.tasks, 4) == two


def test_one_index_group_whose_build_dominates_is_one_batch_on_any_pool(heavy):
    """LongMemEval-M's shape (2.5M entries, 500 judged queries): bm25's 10 settings share one index whose build
    outweighs all their searching, so cutting the group would build it again in each half for little gain: on 2
    or 4 workers it is one batch holding every task (one worker builds the index; the others get nothing)."""
    big = shaped(heavy, 2_500_000, 500)
    bm25 = bm25_tasks(big)
    for width in (2, 4):
        assert batches(big, bm25, width) == [bm25]
    best_half = batch_weight(big, bm25[: len(bm25) // 2])
    assert best_half > CUT_INSIDE * batch_weight(big, bm25)


def test_a_search_heavy_index_group_is_still_cut(heavy, synthetic):
    """The k1 x b benchmark's shape (100,000 entries, 500 judged queries), where searching outweighs the build:
    bm25's 10 settings are cut in two halves on 2 workers, and on 4 too (a half cut again would pay the build
    for too little: its heavier part would weigh more than CUT_INSIDE of it); the benchmark's own grid (40
    settings, 8 x 5) in 2 batches of 20 on 2 workers and 4 of 10 on 4."""
    mid = shaped(heavy, 100_000, 500)
    bm25 = bm25_tasks(mid)
    two = batches(mid, bm25, 2)
    assert two == [bm25[:5], bm25[5:]]
    assert batches(mid, bm25, 4) == two
    assert batch_weight(mid, bm25[:3]) > CUT_INSIDE * batch_weight(mid, bm25[:5])
    k1b = shaped(
        synthetic_plan(
            synthetic,
            '[{ retriever = "bm25", grid = { k1 = [0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.7], b = [0.3, 0.5, 0.75, 0.9, 1.0] } }]',
        ),
        100_000,
        500,
    )
    tasks = bm25_tasks(k1b)
    assert [len(b) for b in batches(k1b, tasks, 2)] == [20, 20]
    assert [len(b) for b in batches(k1b, tasks, 4)] == [10, 10, 10, 10]
    assert [t for b in batches(k1b, tasks, 4) for t in b] == list(tasks)


def test_a_build_heavy_group_is_cut_from_the_others_at_its_boundary(heavy):
    """LongMemEval-M's shape with tags too: on 2 or 4 workers the cut is at the boundary between bm25's group
    and tags (each built once, on its own worker), never inside bm25's group."""
    big = shaped(heavy, 2_500_000, 500)
    for width in (2, 4):
        assert [[t.system for t in b] for b in batches(big, big.tasks, width)] == [
            [t.system for t in big.tasks[:-1]],
            ["tags"],
        ]


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
    assert batch_weight(example, example.tasks) < SMALL_BATCH
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
