"""Regenerate everything under ``reports/``: ``python -m agentmemory.report.build``.

Run from the repository root (``make report`` does).  For the given seed
and k (default 7 and 5) it

1. executes with papermill (kernel ``python3``, working directory ``.``):
   ``notebooks/eval.ipynb`` (``output_dir = reports``), which writes
   ``reports/eval-results.json``; ``notebooks/explore.ipynb`` with its
   default query; ``notebooks/collection.ipynb`` on the authored LoCoMo
   sample (``output_dir = reports/collection``), which writes
   ``reports/collection/eval-results.json``; and ``notebooks/sweep.ipynb``
   with its default (small) sweep;
2. strips what differs between runs (:func:`normalize_notebook`) and writes
   ``reports/<name>.ipynb`` for each: these executed notebooks are the
   references nbval checks;
3. renders each to HTML (:func:`render_html`: input hidden, images embedded,
   no script or style fetched from the network);
4. runs ``agentmemory eval`` with the same parameters (for the seed
   fixture, writing the TREC runs to ``reports/runs/``; for the LoCoMo
   sample, ``--collection`` it) with the artifact in a temporary file, and
   fails unless each artifact is byte-identical to its notebook's.

Running it twice without changes gives byte-identical files.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import logging
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

from ..errors import AgentMemoryError, InputError, check_positive_int
from ..io import atomic_write_text, sha256_file
from .params import sample_collection_path
from .results import ARTIFACT_NAME

__all__ = ["KERNEL_NAME", "NOTEBOOKS", "build", "execute", "main", "normalize_notebook", "render_html"]

NOTEBOOKS = ("eval.ipynb", "explore.ipynb", "collection.ipynb", "sweep.ipynb")
"""The notebooks ``build`` runs, in order; each gives ``reports/<name>.ipynb`` and ``reports/<name>.html``."""

KERNEL_NAME = "python3"
"""The stock kernelspec, which resolves to the interpreter running the build (never a machine's own kernel name)."""

_KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
_VOLATILE_CELL_KEYS = ("papermill", "execution")  # timings and timestamps of each run
_NBCONVERT_LOG = logging.getLogger("agentmemory.report.build.nbconvert")
# nbconvert warns about images without alternative text; render_html adds it right after.
_NBCONVERT_LOG.addFilter(lambda record: "Alternative text is missing" not in record.getMessage())
_NO_ALT = re.compile(r'alt="No description has been provided for this image"')  # nbconvert's placeholder
_EXTERNAL = re.compile(r"""<script[^>]*\bsrc=["']https?://[^"']*["'][^>]*>\s*</script>\s*""", re.IGNORECASE)


def normalize_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove what changes between two runs of the same notebook; keep every output and execution count.

    Removed: the notebook's ``papermill`` metadata (times, duration, input
    and output paths), each cell's ``papermill`` and ``execution`` metadata
    (times), empty ``tags`` lists, the Python patch version in
    ``language_info``.  The kernelspec is set to the stock ``python3``.  The
    cell papermill injects gets the fixed id ``injected-parameters`` instead
    of a random one.  Changes ``nb`` in place and returns it.
    """
    nb.metadata.pop("papermill", None)
    nb.metadata["kernelspec"] = dict(_KERNELSPEC)
    nb.metadata.get("language_info", {}).pop("version", None)
    for cell in nb.cells:
        for key in _VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        tags = cell.metadata.get("tags")
        if tags == []:
            del cell.metadata["tags"]
        elif tags and "injected-parameters" in tags:
            cell.id = "injected-parameters"
    return nb


def execute(source: Path, parameters: dict[str, Any], cwd: Path) -> nbformat.NotebookNode:
    """Run ``source`` with papermill and the given parameters; return the normalised executed notebook."""
    import papermill

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / source.name
        papermill.execute_notebook(
            str(source),
            str(out),
            parameters=parameters,
            kernel_name=KERNEL_NAME,
            cwd=str(cwd),
            progress_bar=False,
            log_output=False,
        )
        nb = nbformat.read(out, as_version=4)
    return normalize_notebook(nb)


def render_html(nb: nbformat.NotebookNode) -> str:
    """The notebook as one self-contained HTML page for reading.

    nbconvert's ``lab`` template with input cells and prompts hidden (the
    ``--no-input`` of ``jupyter nbconvert``); PNG outputs are embedded as
    ``data:`` URIs, with their caption as alternative text; the ``<script src="https://...">`` tags the template adds
    (require.js, MathJax, for interactive widgets and LaTeX, neither used
    here) are removed so the page needs no network.
    """
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
        log=_NBCONVERT_LOG,
    )
    body, _ = exporter.from_notebook_node(nb)
    captions = iter(_image_captions(nb))
    body = _NO_ALT.sub(lambda _: f'alt="{html.escape(next(captions, "Figure"))}"', body)
    return _EXTERNAL.sub("", body)


def _image_captions(nb: nbformat.NotebookNode) -> list[str]:
    """The plain-text form of every PNG output, in order: the images' alternative text."""
    return [
        output["data"].get("text/plain", "Figure")
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]


def _write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    atomic_write_text(path, nbformat.writes(nb) + "\n")


def build(
    *, seed: int = 7, k: int = 5, notebooks: Path = Path("notebooks"), reports: Path = Path("reports")
) -> list[Path]:
    """Regenerate ``reports`` (see the module docstring); return the files written."""
    k = check_positive_int("k", k)
    for name in NOTEBOOKS:
        if not (notebooks / name).is_file():
            raise InputError(notebooks / name, None, "not found; run from the repository root or pass --notebooks")
    reports.mkdir(parents=True, exist_ok=True)
    cwd = Path.cwd()
    written = []
    collection_dir = reports / "collection"

    parameters: dict[str, dict[str, Any]] = {
        "eval.ipynb": {"seed": seed, "k": k, "output_dir": reports.as_posix()},
        "explore.ipynb": {"k": k},
        "collection.ipynb": {"seed": seed, "k": k, "output_dir": collection_dir.as_posix()},
        "sweep.ipynb": {"k": k},
    }
    for name in NOTEBOOKS:
        nb = execute(notebooks / name, parameters[name], cwd)
        stem = Path(name).stem
        _write_notebook(nb, reports / f"{stem}.ipynb")
        atomic_write_text(reports / f"{stem}.html", render_html(nb))
        written += [reports / f"{stem}.ipynb", reports / f"{stem}.html"]

    written.append(_check_against_cli(seed, k, reports / ARTIFACT_NAME, ["--runs-dir", str(reports / "runs")]))
    written.append(reports / "runs")
    sample = ["--collection", str(sample_collection_path())]
    written.append(_check_against_cli(seed, k, collection_dir / ARTIFACT_NAME, sample))
    return written


def _check_against_cli(seed: int, k: int, artifact: Path, extra: list[str]) -> Path:
    """Run ``agentmemory eval`` with the same parameters (and ``extra`` options); fail unless its artifact
    equals the notebook's byte for byte.  Returns ``artifact``."""
    from ..cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        cli_out = Path(tmp) / ARTIFACT_NAME
        with contextlib.redirect_stdout(io.StringIO()):
            status = cli_main(
                ["eval", "--seed", str(seed), "--k", str(k), "--out", str(cli_out), *extra, "--no-progress"]
            )
        if status != 0:
            raise RuntimeError(f"agentmemory eval exited with status {status}")
        if cli_out.read_bytes() != artifact.read_bytes():
            raise RuntimeError(
                f"{artifact} (written by the notebook) differs from what agentmemory eval writes "
                f"for seed {seed}, k {k}: sha256 {sha256_file(artifact)} against {sha256_file(cli_out)}"
            )
    return artifact


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentmemory.report.build",
        description="Regenerate reports/: executed notebooks, their HTML and the eval-results.json artifacts.",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the evaluation (default 7)")
    parser.add_argument("--k", type=int, default=5, help="rank cutoff (default 5)")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="folder of the source notebooks")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="folder to regenerate")
    args = parser.parse_args(argv)
    try:
        written = build(seed=args.seed, k=args.k, notebooks=args.notebooks, reports=args.reports)
    except AgentMemoryError as err:
        print(f"agentmemory.report.build: error: {err}", file=sys.stderr)
        return 2
    for path in written:
        if path.is_file():
            print(f"{sha256_file(path)}  {path.as_posix()}")
        else:
            print(f"{'(folder)':>64}  {path.as_posix()}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
