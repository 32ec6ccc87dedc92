"""Reports at scale: a report notebook rendered once per collection, each render a task on the executor, and the
grid's own report.

:func:`render_report` runs on a worker: papermill executes the notebook
(the shipped ``collection.ipynb`` by default) with the collection's
parameters and the experiment's first ``k`` and seed, and writes into the
collection's own folder ``DIR/reports/<collection>/`` the executed notebook
(normalised as ``make report`` does), its HTML and the notebook's
``eval-results.json``.  No working directory is changed (every path passed
is absolute), so renders may share a process; each starts its own kernel.
The notebook evaluates the collection's retrievers (run files are not
notebook parameters) and its format option ``repair``; a failure is
returned as one line, as a task's is.

:func:`write_grid_report` writes the grid's own report beside them, ``DIR/reports/grid.ipynb`` and its HTML
(:func:`agentmemory.report.grids.grid_report`, from the merged ``results.json``): the heat maps of every
parameter grid with their numbers, the best settings against the default ones, and a warning for each
comparison table whose resamples are too few for any marker.  It is built by the client, without a kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmemory.errors import ParameterError
from agentmemory.experiment.task import error_line
from agentmemory.files.atomic import atomic_write_text
from agentmemory.report.shipped import notebook_folder

if TYPE_CHECKING:
    from agentmemory.experiment.grid import RunDef

__all__ = [
    "GRID_REPORT_FILES",
    "REPORT_FILES",
    "default_notebook",
    "render_report",
    "report_parameters",
    "write_grid_report",
]

REPORT_FILES = ("collection.ipynb", "collection.html", "eval-results.json")
"""What a report folder holds (the notebook's name, then its HTML and the artifact it writes)."""

GRID_REPORT_FILES = ("grid.ipynb", "grid.html")
"""The grid's own report in ``DIR/reports/``: the notebook and its HTML."""


def default_notebook() -> Path:
    """The shipped ``collection.ipynb`` (:func:`agentmemory.report.shipped.notebook_folder`: the wheel's or a source
    checkout's).

    Raises:
        ParameterError: this installation has no notebooks.
    """
    folder = notebook_folder()
    if folder is None:
        raise ParameterError(
            "--reports",
            True,
            "needs the shipped notebooks, which this installation does not have",
            "reinstall agentmemory-eval, or run from a source checkout",
        )
    return folder / "collection.ipynb"


def check_report_dependencies() -> None:
    """papermill and nbconvert must be importable (the ``report`` extra).

    Raises:
        ParameterError: one of them is missing.
    """
    import importlib.util

    missing = [m for m in ("papermill", "nbconvert", "nbformat") if importlib.util.find_spec(m) is None]
    if missing:
        raise ParameterError(
            "--reports",
            True,
            f"needs {', '.join(missing)}, which are not installed",
            "pip install 'agentmemory-eval[report]'",
        )


def report_parameters(
    *,
    collection: str,
    format: str,
    options: dict[str, Any],
    k: int,
    seed: int,
    retrievers: list[str],
    metrics: list[str],
    runs: Sequence[RunDef] = (),
    relevance: str = "direct",
) -> dict[str, Any]:
    """The notebook's parameters for one collection (``output_dir`` is added by :func:`render_report`).

    ``repair`` is the notebook's own parameter; every other format option
    goes in ``format_options`` (``KEY=VALUE``, as the notebook reads it back
    with the format's declared types).  The collection's run files become
    ``runs`` and ``memories``; ``lenient_run`` is on when any of them is lenient
    (the notebook has one switch for all); ``relevance`` is the collection's mode.
    """

    def text(value: Any) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    parameters: dict[str, Any] = {
        "collection": collection,
        "format": format,
        "format_options": ",".join(f"{key}={text(value)}" for key, value in options.items() if key != "repair"),
        "repair": bool(options.get("repair", False)),
        "k": k,
        "seed": seed,
        "retrievers": ",".join(retrievers),
        "metrics": ",".join(metrics),
        "relevance": relevance,
    }
    if runs:
        parameters["runs"] = ",".join(f"{r.name}={r.path}" for r in runs)
        parameters["memories"] = ",".join(f"{r.name}={r.memories}" for r in runs if r.memories is not None)
        parameters["lenient_run"] = any(r.lenient for r in runs)
    return parameters


def render_report(notebook: str, parameters: dict[str, Any], folder: str) -> dict[str, Any]:
    """Execute ``notebook`` with ``parameters`` into ``folder``; ``{"files": [...]}`` or ``{"error": line}``."""
    try:
        return {"files": _render(Path(notebook), parameters, Path(folder))}
    except Exception as err:  # reported with the collection's name by the client; the other reports go on
        return {"error": error_line(err)}


def _render(notebook: Path, parameters: dict[str, Any], folder: Path) -> list[str]:
    import tempfile

    import nbformat
    import papermill

    from agentmemory.report.render import KERNEL_NAME, normalize_notebook, render_html

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        executed = Path(tmp) / notebook.name
        papermill.execute_notebook(
            str(notebook),
            str(executed),
            parameters={**parameters, "output_dir": str(folder)},
            kernel_name=KERNEL_NAME,
            progress_bar=False,
            log_output=False,
        )
        nb = normalize_notebook(nbformat.read(executed, as_version=4))
    atomic_write_text(folder / REPORT_FILES[0], nbformat.writes(nb) + "\n")
    atomic_write_text(folder / REPORT_FILES[1], render_html(nb))
    return [name for name in REPORT_FILES if (folder / name).is_file()]


def write_grid_report(results: dict[str, Any], folder: Path) -> list[Path]:
    """Write the grid's own report (:data:`GRID_REPORT_FILES`) into ``folder`` (``DIR/reports``); the files written."""
    from agentmemory.report.grids import grid_report  # matplotlib and pandas, only when reports are asked for
    from agentmemory.report.render import notebook_text, render_html

    nb = grid_report(results)
    paths = [folder / name for name in GRID_REPORT_FILES]
    atomic_write_text(paths[0], notebook_text(nb))
    atomic_write_text(paths[1], render_html(nb))
    return paths
