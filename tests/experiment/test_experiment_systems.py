"""Memory systems in a grid: ``{ system = SPEC }`` in ``systems`` replays the system in each task, with the
same bytes serially, on a process pool and on Dask, and the values of ``agentmemory.evaluate(systems=...)``."""

from __future__ import annotations

import csv
import io
import json
import logging
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load
from agentmemory.errors import InputError
from agentmemory.evaluation.options import BUDGET_DEFAULTS
from agentmemory.experiment import run_experiment
from agentmemory.experiment.grid import parse_grid

LOCOMO = (REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json").as_posix()
EXAMPLE = "examples.my_memory_system:System"
GRID = f"""
name = "systems"
k = [3, 5]
relevance = "provenance"
systems = ["bm25", {{ system = "{EXAMPLE}" }}, {{ system = "agentrecall" }}]

[[collections]]
path = "{LOCOMO}"
name = "locomo"
"""


def outputs(folder: Path) -> dict[str, bytes]:
    files = [folder / "results.json", folder / "per_query.csv", *sorted((folder / "tables").glob("*.md"))]
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in files}


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("grid") / "systems.toml"
    path.write_text(GRID, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def serial(grid_file, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("serial") / "out"
    result = run_experiment(grid_file, out=out)
    assert result.ok and (result.tasks, result.computed) == (6, 6)
    return outputs(out)


def test_a_system_table_is_a_memory_system() -> None:
    grid = parse_grid(GRID)
    assert [(s.key, s.label, s.kind) for s in grid.systems] == [
        ("bm25", "BM25", "retriever"),
        (EXAMPLE, "Fact extractor (example)", "system"),
        ("agentrecall", "agentrecall-db", "system"),
    ]


@pytest.mark.parametrize(
    "item, message",
    [
        ('{ system = "nosuch" }', r"systems system: 'nosuch' \(str\) is not a known name; choose from: agentrecall, "),
        (
            '{ system = "agentrecall", grid = { k1 = [1] } }',
            "unknown key 'grid' in a memory-system table of systems; allowed: system$",
        ),
        ("{ system = 3 }", r"systems system: 3 \(int\) is not a non-empty string$"),
    ],
)
def test_a_bad_system_table_is_refused_naming_the_file_and_line(item: str, message: str) -> None:
    with pytest.raises(InputError, match=rf"^g\.toml:1: {message}"):
        parse_grid(f"systems = [{item}]\n[[collections]]\npath = {LOCOMO!r}\n", source="g.toml")


def test_the_rows_are_the_evaluations(serial) -> None:
    """Each system's per-query values are agentmemory.evaluate's with the system replayed (k = 5)."""
    evaluation = evaluate(load(LOCOMO), None, systems=[EXAMPLE, "agentrecall"], k=5, relevance="provenance")
    rows = list(csv.DictReader(io.StringIO(serial["per_query.csv"].decode("utf-8"))))
    for result in evaluation.results:
        mine = {
            (r["query_id"], r["measure"]): float(r["value"])
            for r in rows
            if r["system"] == result.name and r["k"] == "5"
        }
        expected = {(q.query_id, m): v for q in result.per_query for m, v in q.metrics.items()}
        assert mine == expected and len(mine) == len(evaluation.measures) * len(result.per_query)
    assert {str(m) for m in evaluation.measures} >= set(BUDGET_DEFAULTS)  # a memory system's defaults, every row
    text = serial["results.json"].decode("utf-8")
    assert '"Fact extractor (example)"' in text and '"agentrecall-db"' in text and json.loads(text)


def test_a_process_pool_writes_the_serial_bytes(grid_file, serial, tmp_path: Path) -> None:
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        assert run_experiment(grid_file, pool, out=tmp_path / "out").ok
    assert outputs(tmp_path / "out") == serial


def test_dask_writes_the_serial_bytes(grid_file, serial, tmp_path: Path, monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # the workers import examples.my_memory_system
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    try:
        with distributed.Client(cluster) as client:
            assert run_experiment(grid_file, client, out=tmp_path / "out").ok
    finally:
        cluster.close()
    assert outputs(tmp_path / "out") == serial
