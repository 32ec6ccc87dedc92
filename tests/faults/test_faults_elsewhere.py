"""Three faults of ``am_faults`` through a notebook (papermill on eval.ipynb) and through the Dask executor.

The notebook's kernel and the Dask workers are other processes: they find
the fault plugins through ``PYTHONPATH``, set here before they start.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import papermill
import pytest
from conftest import FIXTURE_DIR, REPO_ROOT
from papermill.exceptions import PapermillExecutionError

from agentmemory.cli.app import main

HERE = Path(__file__).resolve().parent
THREE = {  # spec -> (the cell that stops, the exception it shows)
    "am_faults_exit:Anything": ("validate", "ReportParameterError"),
    "am_faults:SearchRaisesKeyError": ("evaluate", "PluginError"),
    "am_faults:SearchGhostIds": ("evaluate", "PluginError"),
}


@pytest.fixture
def plugin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fault plugins on PYTHONPATH (for kernels and workers) and on sys.path (for this process)."""
    paths = [str(HERE), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    monkeypatch.syspath_prepend(str(HERE))


def _written(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("spec", list(THREE))
def test_a_faulty_plugin_stops_the_notebook_with_one_line_naming_it(spec: str, plugin_path, tmp_path: Path) -> None:
    """papermill eval.ipynb -p retrievers <plugin>: the failing cell shows one line naming the plugin; no artifact."""
    out_dir = tmp_path / "results"
    out_dir.mkdir()
    executed = tmp_path / "out.ipynb"
    with pytest.raises(PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(REPO_ROOT / "notebooks" / "eval.ipynb"),
            str(executed),
            parameters={"retrievers": spec, "output_dir": str(out_dir)},
            kernel_name="python3",
            cwd=str(REPO_ROOT),
            progress_bar=False,
            log_output=False,
        )
    cell_id, ename = THREE[spec]
    assert info.value.ename == ename
    assert info.value.evalue.startswith(f"retriever plugin '{spec}'"), info.value.evalue
    nb = nbformat.read(executed, as_version=4)
    [cell] = [c for c in nb.cells if c.get("id") == cell_id]
    [error] = [o for o in cell.outputs if o.output_type == "error"]
    assert error.traceback == [f"{ename}: {info.value.evalue}"]
    assert _written(out_dir) == []


def _grid(tmp_path: Path, spec: str) -> Path:
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'name = "faults"\nk = [5]\nseeds = [7]\nsystems = ["{spec}"]\n\n'
        f'[[collections]]\nname = "notes"\npath = "{FIXTURE_DIR.as_posix()}"\n',
        encoding="utf-8",
    )
    return grid


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("am_faults_exit:Anything", "import raised SystemExit: 3"),
        ("am_faults_import:Anything", "import raised ValueError: this plugin module cannot be imported on purpose"),
        ("am_faults:raising_factory", "factory raised RuntimeError: the factory broke on purpose"),
    ],
)
def test_a_plugin_failing_at_resolution_stops_a_dask_experiment_before_anything_is_written(
    spec: str, problem: str, plugin_path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """agentmemory experiment --executor dask: the grid's specs are resolved first, so the error is one line,
    exit 2, and neither the output folder nor a cluster is made."""
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    status = main(["experiment", str(_grid(tmp_path, spec)), "--executor", "dask", "--workers", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    [line] = err.splitlines()
    assert line.startswith("agentmemory: error: ") and f"retriever plugin '{spec}': {problem}" in line
    assert not out.exists()


def test_a_plugin_failing_in_a_dask_worker_is_a_failed_task_naming_it(
    plugin_path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A search that raises inside a Dask worker fails its task (the experiment's rule: the other tasks go on,
    exit 1) with one line naming the plugin, its label, the call and the exception."""
    pytest.importorskip("distributed")
    spec = "am_faults:SearchRaisesKeyError"
    out = tmp_path / "out"
    status = main(["experiment", str(_grid(tmp_path, spec)), "--executor", "dask", "--workers", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1, err
    failed = [line for line in err.splitlines() if line.startswith("agentmemory: task failed: ")]
    assert len(failed) == 1, err
    assert failed[0].endswith(
        f"retriever plugin '{spec}' (Faulty SearchRaisesKeyError): search raised KeyError: 'search broke on purpose'"
    )
    assert "Traceback" not in err
