"""Warm workers: a collection read once per grid (counted by each process's ``reads()``), the serial bytes on a
pool whose workers plan the collections, a changed collection file read again (never served stale), and which
worker gets which batch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import REPO_ROOT

from agentmemory._version import __version__
from agentmemory.errors import InputError
from agentmemory.experiment import plan_experiment, read_grid, run_experiment
from agentmemory.experiment.executors import WarmPool, open_executor, slots
from agentmemory.experiment.run import _Placer
from agentmemory.experiment.task import forget_collections, reads

SHARING = REPO_ROOT / "tests" / "data" / "sharing"
NOTES = REPO_ROOT / "fixtures" / "assistant-notes"


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("results.json", "per_query.csv")}


def worker_reads(pool: WarmPool) -> list[int]:
    return [pool.submit_to(slot, reads).result() for slot in pool.slots]


def notes_grid(folder: Path, collection: Path) -> Path:
    grid = folder / "grid.toml"
    grid.write_text(
        f'name = "notes"\nk = 5\nsystems = ["bm25", "tags", "recency"]\n[statistics]\nn_resamples = 200\n'
        f'[[collections]]\nname = "notes"\npath = "{collection.as_posix()}"\n',
        encoding="utf-8",
    )
    return grid


@pytest.fixture(scope="module")
def pool():
    with WarmPool(2) as warm:
        yield warm


def test_the_workers_plan_and_read_each_collection_once_per_grid(pool: WarmPool, tmp_path: Path):
    """Two collections, 44 tasks on 2 workers: each collection is read by one worker, once, while planning, and
    its tasks go to that worker; planning the grid again on the warm workers reads nothing (the files' sha256
    are unchanged); the bytes are the serial run's of tests/data/sharing, and the client read nothing."""
    before = sum(worker_reads(pool))
    here = reads()
    plan = plan_experiment(read_grid(SHARING / "grid.toml"), pool)
    assert sorted(plan.homes.values()) == [0, 1]
    result = run_experiment(plan, pool, out=tmp_path / "one")
    assert result.ok and result.computed == 44
    assert sum(worker_reads(pool)) - before == 2
    again = run_experiment(SHARING / "grid.toml", pool, out=tmp_path / "two")
    assert again.ok and again.computed == 44
    assert sum(worker_reads(pool)) - before == 2
    assert reads() == here
    assert outputs(tmp_path / "one") == outputs(SHARING) == outputs(tmp_path / "two")


def test_a_changed_collection_is_read_again_not_served_from_a_worker_cache(pool: WarmPool, tmp_path: Path):
    """The same grid twice on the same warm workers, one of the collection's files changed in between: the
    second run reads it again and writes what the serial executor writes for the changed collection."""
    collection = tmp_path / "notes"
    shutil.copytree(NOTES, collection)
    grid = notes_grid(tmp_path, collection)
    first = run_experiment(grid, pool, out=tmp_path / "first")
    assert first.ok
    qrels = collection / "qrels" / "test.tsv"
    lines = qrels.read_text(encoding="utf-8").splitlines(keepends=True)
    qrels.write_text("".join(lines[:-1]), encoding="utf-8")  # one judgment fewer
    before = sum(worker_reads(pool))
    second = run_experiment(grid, pool, out=tmp_path / "second")
    assert second.ok
    assert sum(worker_reads(pool)) - before == 1
    forget_collections()
    serial = run_experiment(grid, out=tmp_path / "serial")
    assert serial.ok
    assert outputs(tmp_path / "second") == outputs(tmp_path / "serial")
    assert outputs(tmp_path / "second") != outputs(tmp_path / "first")


def test_a_serial_run_reads_a_changed_collection_again(tmp_path: Path):
    """This process's cache serves an unchanged collection to a second plan, and reads a changed one again."""
    collection = tmp_path / "notes"
    shutil.copytree(NOTES, collection)
    grid = notes_grid(tmp_path, collection)
    forget_collections()
    start = reads()
    first = run_experiment(grid, out=tmp_path / "first")
    run_experiment(grid, out=tmp_path / "same")
    assert reads() - start == 1
    queries = collection / "queries.jsonl"
    queries.write_text(queries.read_text(encoding="utf-8").replace("?", "?!", 1), encoding="utf-8")
    second = run_experiment(grid, out=tmp_path / "second")
    assert reads() - start == 2
    assert first.ok and second.ok
    assert outputs(tmp_path / "first") == outputs(tmp_path / "same")
    assert outputs(tmp_path / "second") != outputs(tmp_path / "first")


def test_a_collection_that_does_not_load_on_a_worker_stops_the_plan_with_the_grids_line(pool: WarmPool, tmp_path: Path):
    """A collection a worker cannot read: the same one line as when the client reads it, before anything runs."""
    collection = tmp_path / "notes"
    shutil.copytree(NOTES, collection)
    (collection / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{not json\n', encoding="utf-8")
    grid = notes_grid(tmp_path, collection)
    with pytest.raises(InputError) as here:
        plan_experiment(read_grid(grid))
    with pytest.raises(InputError) as there:
        plan_experiment(read_grid(grid), pool)
    assert str(there.value) == str(here.value)
    assert str(there.value).startswith(f"{grid}:6: collection 'notes': {collection / 'corpus.jsonl'}:2: ")


def test_open_executor_processes_is_a_warm_pool_whose_workers_can_be_addressed():
    with open_executor("processes", workers=2) as executor:
        assert isinstance(executor, WarmPool)
        assert slots(executor) == {0: 1, 1: 1}
        assert len({executor.submit_to(slot, _pid).result() for slot in (0, 1)}) == 2


def _pid() -> int:
    import os

    return os.getpid()


def batch(collection: str) -> tuple[SimpleNamespace, ...]:
    return (SimpleNamespace(collection=collection),)


def test_each_worker_gets_the_batches_of_the_collections_it_planned():
    """Four collections planned round robin on two workers: each worker runs its own two, none is read twice."""
    cut = [batch(f"c{i}") for i in range(4)]
    placer = _Placer(cut, {"a": 1, "b": 1}, {"c0": "a", "c1": "b", "c2": "a", "c3": "b"})  # type: ignore[arg-type]
    given = [(b[0].collection, place) for b, place in placer.take()]
    assert sorted(given) == [("c0", "a"), ("c1", "b"), ("c2", "a"), ("c3", "b")]
    assert placer.take() == []


def test_an_idle_worker_takes_a_batch_of_a_collection_another_worker_holds():
    """One collection cut in two halves: the worker that planned it runs one, the idle one reads it and runs the
    other (rather than wait); a second-in-line batch is only ever one a worker holds or no worker does."""
    cut = [batch("c0"), batch("c0"), batch("c0")]
    placer = _Placer(cut, {"a": 1, "b": 1}, {"c0": "a"})  # type: ignore[arg-type]
    first = [place for _, place in placer.take()]
    assert first == ["a", "b", "a"]
    placer.finished("b")
    assert placer.take() == []


def test_a_worker_of_several_threads_gets_one_batch_more_than_its_threads():
    """Five batches of one collection: a worker of 2 threads that holds it takes 3 (one more than its threads),
    a worker of 1 thread 2 (it reads the collection too: it is idle)."""
    cut = [batch("c0") for _ in range(5)]
    placer = _Placer(cut, {"a": 2, "b": 1}, {"c0": "a"})  # type: ignore[arg-type]
    assert [place for _, place in placer.take()] == ["a", "b", "a", "b", "a"]


def test_a_worker_of_another_version_stops_the_plan_with_one_line(pool: WarmPool, tmp_path: Path):
    """A worker whose agentmemory is not the client's: planning there says so, with the grid's line."""
    from agentmemory.experiment.task import collection_facts

    answer = pool.submit_to(0, collection_facts, str(NOTES), "beir", (("split", "test"),), "0.0.1").result()
    assert answer == f"a worker runs agentmemory {__version__}, the client 0.0.1; install the same version"


def test_a_worker_that_dies_while_planning_stops_the_plan_with_one_line(tmp_path: Path):
    """The pool breaks under the plan (a worker killed): one line naming the collection, no traceback."""
    grid = notes_grid(tmp_path, NOTES)
    with WarmPool(2) as broken:
        broken.submit_to(0, os._exit, 1)
        broken.submit_to(1, os._exit, 1)
        with pytest.raises(InputError, match=r"grid\.toml:6: collection 'notes': a worker could not load it: "):
            plan_experiment(read_grid(grid), broken)
