"""Running a report notebook and rendering it for reading: the pieces every report build shares.

:func:`execute` runs a notebook with papermill (kernel ``python3``) and
:func:`normalize_notebook` strips what differs between two runs (times, paths,
the injected cell's random id), so an executed notebook is the same bytes
every time; :func:`render_html` turns it into one self-contained HTML page
(input hidden, images embedded with their captions as alternative text, no
script fetched from the network); :func:`notebook_text` is the file's text.
``make report`` (:mod:`agentmemory.report.build`) and ``agentmemory experiment
--reports`` (:mod:`agentmemory.experiment.reports`) both use them.
"""

from __future__ import annotations

import html
import logging
import re
import tempfile
from pathlib import Path
from typing import Any

import nbformat

__all__ = ["KERNEL_NAME", "execute", "normalize_notebook", "notebook_text", "render_html"]

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
    """Run ``source`` with papermill and the given parameters; return the normalised executed notebook.

    The kernel talks to papermill over Unix sockets in a temporary folder (IPC transport) rather than
    TCP ports on localhost: nothing else on the machine can reach it, and ipykernel has no reason to
    warn that the connection is unencrypted.
    """
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
            kernel_manager_class=_ipc_kernel_manager(Path(tmp) / "kernel"),
        )
        nb = nbformat.read(out, as_version=4)
    return normalize_notebook(nb)


def _ipc_kernel_manager(sockets: Path) -> type:
    """A jupyter_client ``KernelManager`` class whose kernels listen on Unix sockets named ``sockets-<n>``."""
    from jupyter_client.manager import KernelManager
    from traitlets import CaselessStrEnum, default

    class IPCKernelManager(KernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        @default("ip")
        def _ip_default(self) -> str:
            return str(sockets)

    return IPCKernelManager


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
    body, _ = exporter.from_notebook_node(_stderr_folded(nb))
    captions = iter(_image_captions(nb))
    body = _NO_ALT.sub(lambda _: f'alt="{html.escape(next(captions, "Figure"))}"', body)
    body = _EXTERNAL.sub("", body)
    return _with_contents(body).replace("</head>", f"{_PRINT_STYLE}</head>", 1)


_H1_INTRO = re.compile(r"</h1>(\s*<p>.*?</p>)?", re.DOTALL)
_H2 = re.compile(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', re.DOTALL)
_PRINT_STYLE = (
    "<style>@page { margin: 12mm; } @media print { body { font-size: 9pt; } .jp-Cell { padding: 0; } "
    ".jp-RenderedHTMLCommon { font-size: 9pt; } .jp-RenderedHTMLCommon table { font-size: 8pt; width: 100%; "
    "table-layout: fixed; } .jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { overflow-wrap: anywhere; } "
    "figure img { max-width: 80%; height: auto; } figure { margin: 0; break-inside: avoid; } "
    ".jp-Cell, .jp-Cell-outputWrapper, .jp-OutputArea, .jp-OutputArea-child, .jp-OutputArea-output "
    "{ display: block !important; } .jp-OutputArea-child { break-inside: auto !important; } }</style>\n"
)
"""A printed report: a smaller font, no cell padding, tables within the page's width, no figure split across pages, and the cells laid out as blocks
and let split across pages (JupyterLab keeps each output whole, as a flex box and by ``break-inside: avoid-page``,
so a long table would leave the rest of a page blank)."""


def _with_contents(body: str) -> str:
    """``body`` with a table of contents (a line of links to every ``<h2>``, by the anchors nbconvert gives them)
    after the title and its first paragraph; unchanged without a title or with fewer than two sections."""
    sections = [(anchor, re.sub(r"<[^>]+>", "", text).strip()) for anchor, text in _H2.findall(body)]
    title = _H1_INTRO.search(body)
    if title is None or len(sections) < 2:
        return body
    links = " · ".join(f'<a href="#{html.escape(anchor)}">{text}</a>' for anchor, text in sections)
    nav = f'<nav class="agentmemory-contents"><p><strong>Contents:</strong> {links}</p></nav>'
    return body[: title.end()] + nav + body[title.end() :]


def _stderr_folded(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose stderr streams (what a plugin, a library or a memory system's server printed while the
    cell ran) are each one folded ``<details>`` section, its summary counting the lines, instead of nbconvert's red
    block; the notebook itself keeps them as they were."""
    import copy

    shown = copy.deepcopy(nb)
    for cell in shown.cells:
        if cell.cell_type != "code":
            continue
        for i, output in enumerate(cell.outputs):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = output.get("text", "")
                lines = len(text.rstrip("\n").splitlines())
                folded = (
                    f"<details><summary>Messages written to stderr while this ran ({lines} "
                    f"{'line' if lines == 1 else 'lines'})</summary><pre>{html.escape(text)}</pre></details>"
                )
                cell.outputs[i] = nbformat.v4.new_output("display_data", data={"text/html": folded, "text/plain": text})
    return shown


def _image_captions(nb: nbformat.NotebookNode) -> list[str]:
    """The plain-text form of every PNG output, in order: the images' alternative text."""
    return [
        output["data"].get("text/plain", "Figure")
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """The notebook's file text (nbformat's JSON, one trailing newline)."""
    return nbformat.writes(nb) + "\n"
