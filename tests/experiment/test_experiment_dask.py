"""Experiments on a Dask LocalCluster (2 worker processes, shared by the module): the serial run's bytes,
through the library and `--scheduler`, and the same bytes when a worker is killed in the middle of a task."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.experiment import run_experiment

distributed = pytest.importorskip("distributed")

EXAMPLE = REPO_ROOT / "examples" / "grid.toml"
HERE = Path(__file__).resolve().parent


def outputs(folder: Path) -> dict[str, bytes]:
    files = [folder / "results.json", folder / "per_query.csv", *sorted((folder / "tables").glob("*.md"))]
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in files}


@pytest.fixture(scope="module")
def markers(tmp_path_factory) -> Path:
    """The folder the slow test retriever marks its searches in (set before the workers start, so they see it)."""
    folder = tmp_path_factory.mktemp("markers")
    before = os.environ.get("AGENTMEMORY_TEST_MARKERS")
    os.environ["AGENTMEMORY_TEST_MARKERS"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("AGENTMEMORY_TEST_MARKERS", None)
    else:
        os.environ["AGENTMEMORY_TEST_MARKERS"] = before


@pytest.fixture(scope="module")
def client(markers):
    """A LocalCluster of 2 single-threaded worker processes and its client, started once for the module."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


@pytest.fixture(scope="module")
def serial_example(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("serial") / "out"
    assert run_experiment(EXAMPLE, out=out).ok
    return outputs(out)


def test_a_local_cluster_writes_the_serial_bytes(client, serial_example, tmp_path: Path):
    """run_experiment with a Dask client (2 worker processes) writes the serial run's results, byte for byte."""
    result = run_experiment(EXAMPLE, client, out=tmp_path / "out")
    assert result.ok and result.computed == 27
    assert outputs(tmp_path / "out") == serial_example


def test_a_local_cluster_running_parts_by_scope_writes_the_serial_bytes(client, tmp_path: Path, monkeypatch):
    """LongMemEval's sample (a scope per question) on 2 Dask workers: its one batch runs as 2 parts by scope, one
    per worker, and every task file, results.json and per_query.csv are the serial run's."""
    from agentmemory.experiment import plan as plan_module

    collection = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'k = 5\nsystems = ["bm25", "bm25[k1=0.9]", "recency"]\n[[collections]]\nname = "lme"\n'
        f'path = "{collection.as_posix()}"\n',
        encoding="utf-8",
    )
    assert run_experiment(grid, out=tmp_path / "serial").ok
    monkeypatch.setattr(plan_module, "SCOPE_PART_MIN", 0)
    result = run_experiment(grid, client, out=tmp_path / "dask")
    assert result.ok and result.batches == 2
    for name in ("results.json", "per_query.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes()
    tasks = sorted((tmp_path / "serial" / "tasks").iterdir())
    assert [p.read_bytes() for p in tasks] == [(tmp_path / "dask" / "tasks" / p.name).read_bytes() for p in tasks]


def test_the_command_on_a_running_scheduler_writes_the_serial_bytes(client, serial_example, tmp_path: Path, capsys):
    """`agentmemory experiment --executor dask --scheduler ADDRESS` uses that cluster and writes the same bytes."""
    address = client.scheduler.address
    argv = ["experiment", str(EXAMPLE), "--executor", "dask", "--scheduler", address, "--out", str(tmp_path / "out")]
    assert main([*argv, "--no-progress"]) == 0
    assert "27 tasks: 0 reused, 27 computed, 0 failed" in capsys.readouterr().out
    assert outputs(tmp_path / "out") == serial_example
    assert len(client.scheduler_info()["workers"]) == 2  # the command closed its client, not the cluster


def _grid_with_one_slow_task(folder: Path) -> Path:
    """Six tasks on the seed fixture; variant 1 waits 0.3 s per search (a task of about 2 s), the others none."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "grid.toml"
    path.write_text(
        'systems = ["slow_retriever:Slow[delay=0.3,variant=1]", '
        '{ retriever = "slow_retriever:Slow", params = { delay = 0.0 }, grid = { variant = [2, 3, 4, 5, 6] } }]\n'
        f'[[collections]]\nname = "notes"\npath = "{FIXTURE_DIR.as_posix()}"\n',
        encoding="utf-8",
    )
    return path


def test_a_worker_killed_mid_task_changes_nothing(client, markers: Path, tmp_path: Path):
    """SIGKILL the worker process that is inside the slow task: Dask restarts it and runs the task again, and the
    experiment completes with the bytes of a serial run."""
    grid = _grid_with_one_slow_task(tmp_path)
    for marker in markers.iterdir():
        marker.unlink()
    finished: list = []
    runner = threading.Thread(target=lambda: finished.append(run_experiment(grid, client, out=tmp_path / "dask")))
    runner.start()
    deadline = time.monotonic() + 60
    while not any(markers.iterdir()):
        assert runner.is_alive() and time.monotonic() < deadline, "the slow task never started"
        time.sleep(0.01)
    pid = int(next(markers.iterdir()).name)
    workers = client.run(os.getpid)
    assert pid in workers.values() and pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    runner.join(timeout=120)
    assert not runner.is_alive()
    [result] = finished
    assert result.ok and result.computed == 6
    assert len({int(m.name) for m in markers.iterdir()} - {pid}) >= 1  # the task ran again, in another process
    assert run_experiment(grid, out=tmp_path / "serial").ok
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "serial")
    client.wait_for_workers(2, timeout=60)


def test_a_local_cluster_shares_indexes_and_writes_the_bytes_of_before(client, tmp_path: Path):
    """The sharing grid (tests/data/sharing) on 2 Dask workers: each collection's tasks are one Dask task, each
    index is built at most once (8 index groups for 44 tasks; fewer when a worker kept one from an earlier test's
    grid on these fixtures), and results.json and per_query.csv are those agentmemory wrote before sharing."""
    folder = REPO_ROOT / "tests" / "data" / "sharing"
    result = run_experiment(folder / "grid.toml", client, out=tmp_path / "out")
    assert result.ok and (result.computed, result.batches) == (44, 2) and 1 <= result.indexes_built <= 8
    for name in ("results.json", "per_query.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (folder / name).read_bytes(), name


def test_dask_workers_read_each_collection_once_per_grid(client, tmp_path: Path):
    """The sharing grid's 2 collections planned on the 2 Dask workers (one each) and their tasks run there: 2
    reads in all for 44 tasks; planned again on the warm workers, none (the files are unchanged); the client
    reads none; the bytes are those of tests/data/sharing."""
    from agentmemory.experiment import plan_experiment, read_grid
    from agentmemory.experiment.task import forget_collections, reads

    folder = REPO_ROOT / "tests" / "data" / "sharing"
    client.run(forget_collections)
    before = sum(client.run(reads).values())
    here = reads()
    plan = plan_experiment(read_grid(folder / "grid.toml"), client)
    assert sorted(plan.homes.values()) == sorted(client.scheduler_info()["workers"])
    assert run_experiment(plan, client, out=tmp_path / "one").ok
    assert sum(client.run(reads).values()) - before == 2
    assert run_experiment(folder / "grid.toml", client, out=tmp_path / "two").ok
    assert sum(client.run(reads).values()) - before == 2
    assert reads() == here
    for name in ("results.json", "per_query.csv"):
        assert (
            (tmp_path / "one" / name).read_bytes()
            == (folder / name).read_bytes()
            == (tmp_path / "two" / name).read_bytes()
        )
