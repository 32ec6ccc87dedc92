"""Regenerate everything under ``reports/``: ``python -m agentmemory.report.build``.

Run from the repository root (``make report`` does).  For the given seed
and k (default 7 and 5) it

1. executes with papermill (kernel ``python3``, working directory ``.``) each
   report of :data:`REPORTS`: ``notebooks/eval.ipynb`` (``output_dir =
   reports``), which writes ``reports/eval-results.json``;
   ``notebooks/explore.ipynb`` with its default query;
   ``notebooks/collection.ipynb`` on the authored LoCoMo sample with the
   modern baselines (``output_dir = reports/collection``), and again as
   ``collection-provenance`` with the derived-memory run of
   ``fixtures/locomo-derived`` judged through provenance, and as
   ``collection-longmemeval`` on the authored LongMemEval sample at turn
   granularity with LongMemEval's official measures; and
   ``notebooks/sweep.ipynb`` with its default (small) sweep;
2. strips what differs between runs (:func:`normalize_notebook`) and writes
   ``reports/<name>.ipynb`` for each: these executed notebooks are the
   references nbval checks;
3. renders each to HTML (:func:`render_html`: input hidden, images embedded,
   no script or style fetched from the network);
4. runs ``agentmemory eval`` with the same parameters as each report that
   writes an artifact (for the seed fixture also writing the TREC runs to
   ``reports/runs/``), the artifact in a temporary file, and fails unless
   each artifact is byte-identical to its notebook's.

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
from typing import Any, NamedTuple

import nbformat

from ..errors import AgentMemoryError, InputError, check_positive_int
from ..io import atomic_write_text, sha256_file
from .results import ARTIFACT_NAME

__all__ = [
    "KERNEL_NAME",
    "NOTEBOOKS",
    "REPORTS",
    "Report",
    "build",
    "execute",
    "main",
    "normalize_notebook",
    "render_html",
]

SAMPLE = "fixtures/locomo-sample/locomo-sample.json"
DERIVED = "fixtures/locomo-derived"
LONGMEMEVAL = "fixtures/longmemeval-sample/longmemeval-sample.json"
LONGMEMEVAL_MEASURES = "recall_any@5,recall_all@5,ndcg_any@5,recall_any@10,sess.recall_any@5,sess.ndcg_any@5"
_ROOT = Path(__file__).resolve().parent.parent.parent  # the source checkout holding fixtures/
BASELINES = "bm25,tags,dense,hybrid,recency"


class Report(NamedTuple):
    """One committed report: ``reports/<stem>.ipynb`` and ``.html`` from ``notebooks/<notebook>``.

    ``parameters`` are the notebook's (``output_dir`` is added when
    ``artifact`` names a folder under ``reports/``); ``cli`` are the
    ``agentmemory eval`` options that must write the same artifact, byte for
    byte (``{reports}`` is the reports folder, ``{root}`` the source checkout).
    """

    stem: str
    notebook: str
    parameters: dict[str, Any]
    artifact: str | None = None
    cli: tuple[str, ...] = ()


REPORTS: tuple[Report, ...] = (
    Report("eval", "eval.ipynb", {}, ".", ("--runs-dir", "{reports}/runs")),
    Report("explore", "explore.ipynb", {}),
    Report(
        "collection",
        "collection.ipynb",
        {"retrievers": BASELINES},
        "collection",
        ("--collection", f"{{root}}/{SAMPLE}", "--retrievers", BASELINES),
    ),
    Report(
        "collection-provenance",
        "collection.ipynb",
        {
            "runs": f"derived={DERIVED}/derived.trec",
            "memories": f"derived={DERIVED}/memories.jsonl",
            "relevance": "provenance",
        },
        "collection-provenance",
        (
            "--collection",
            f"{{root}}/{SAMPLE}",
            "--run",
            f"derived={{root}}/{DERIVED}/derived.trec",
            "--memories",
            f"{{root}}/{DERIVED}/memories.jsonl",
            "--relevance",
            "provenance",
        ),
    ),
    Report(
        "collection-longmemeval",
        "collection.ipynb",
        {
            "collection": LONGMEMEVAL,
            "format_options": "granularity=turn",
            "retrievers": "bm25,dense,hybrid",
            "metrics": LONGMEMEVAL_MEASURES,
        },
        "collection-longmemeval",
        (
            "--collection",
            f"{{root}}/{LONGMEMEVAL}",
            "--granularity",
            "turn",
            "--retrievers",
            "bm25,dense,hybrid",
            "--metrics",
            LONGMEMEVAL_MEASURES,
        ),
    ),
    Report("sweep", "sweep.ipynb", {}),
)
"""The reports ``build`` regenerates, in order."""

NOTEBOOKS = tuple(dict.fromkeys(r.notebook for r in REPORTS))
"""The source notebooks the reports come from."""

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
    written: list[Path] = []
    checks: list[tuple[Path, list[str]]] = []
    for report in REPORTS:
        parameters = {"k": k, **report.parameters}
        if report.notebook != "explore.ipynb" and report.notebook != "sweep.ipynb":
            parameters["seed"] = seed
        if report.artifact is not None:
            folder = reports / report.artifact
            parameters["output_dir"] = folder.as_posix()
            cli = [arg.format(reports=reports.as_posix(), root=_ROOT.as_posix()) for arg in report.cli]
            checks.append((folder / ARTIFACT_NAME, cli))
        nb = execute(notebooks / report.notebook, parameters, cwd)
        _write_notebook(nb, reports / f"{report.stem}.ipynb")
        atomic_write_text(reports / f"{report.stem}.html", render_html(nb))
        written += [reports / f"{report.stem}.ipynb", reports / f"{report.stem}.html"]
    for artifact, cli in checks:
        written.append(_check_against_cli(seed, k, artifact, cli))
        if "--runs-dir" in cli:
            written.append(Path(cli[cli.index("--runs-dir") + 1]))
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
