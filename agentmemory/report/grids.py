"""Parameter grids in reports: a heat map of the headline measure over each pair of parameters, its numbers, the
best setting against the default one.

* :func:`heatmap_figure`: the heat maps of one :class:`~agentmemory.analysis.parameter_grid.ParameterGrid`,
  a panel per pair of varying parameters, each cell labelled with its mean (and ``▲``/``▼`` against the
  comparison table's baseline), the best setting outlined, the default one marked;
* :func:`heatmap_numbers`: the same numbers as tables (nbval does not compare images);
* :func:`best_setting`: :meth:`ParameterGrid.best_text` as Markdown;
* :func:`evaluation_grids` and :func:`grid_warnings`: the grids and the resamples warnings of an experiment's
  ``results.json`` (:func:`read_results`), what ``agentmemory experiment --reports`` shows;
* :func:`grid_report`: that report as an executed notebook, ``reports/grid.ipynb`` (and its HTML), built here
  without a kernel: each code cell's outputs are what running it gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

import matplotlib
import matplotlib.style
import nbformat
import pandas as pd
from matplotlib.patches import Rectangle

from agentmemory.analysis.parameter_grid import HeatMap, ParameterGrid, headline_measure, parameter_grids, value_text
from agentmemory.analysis.prose import resamples_warning
from agentmemory.analysis.statistics import Statistics
from agentmemory.analysis.text_tables import column_name
from agentmemory.files.reading import read_json
from agentmemory.report.display import Markdown, Png, Table
from agentmemory.report.figures import _RC, _behind, _caption, _figure, png_bytes

__all__ = [
    "best_setting",
    "evaluation_grids",
    "grid_report",
    "grid_warnings",
    "heatmap_figure",
    "heatmap_numbers",
    "read_results",
]


def heatmap_figure(grid: ParameterGrid, *, number: int | None = None) -> Png:
    """The grid's headline measure as a heat map over each pair of varying parameters (one panel each, the first
    parameter across), every cell labelled with its mean and marker; the best setting outlined, the default one
    marked ``default``; a setting the grid does not hold left blank.  Every panel shares one colour scale."""
    heats = grid.heat_maps()
    values = [v for h in heats for row in h.values() for v in row if v is not None]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        widest = max(len(h.xs) for h in heats)
        fig = _figure(min(16.0, (2.0 + 1.1 * widest) * len(heats) + 1.0), 1.6 + 0.55 * max(len(h.ys) for h in heats))
        axes = fig.subplots(1, len(heats), squeeze=False)[0]
        images = [_panel(ax, grid, heat, low, high) for ax, heat in zip(axes, heats)]
        image = images[-1]  # every panel has the same scale
        bar = fig.colorbar(image, ax=list(axes), fraction=0.04, pad=0.02)
        bar.set_label(f"headline mean {column_name(grid.measure)}")
        data = png_bytes(fig)
    pairs = "; ".join(h.over()[len("over ") :] for h in heats)
    return Png(
        data,
        _caption(
            number,
            f"{grid.name}'s headline mean {grid.measure} over {pairs} ({len(grid.settings)} settings, {grid.queries} "
            f"queries); red outline: the best setting; ▲/▼ significantly better/worse than {grid.baseline_label}",
        ),
    )


def _panel(ax: Any, grid: ParameterGrid, heat: HeatMap, low: float, high: float) -> Any:
    """One heat map on ``ax`` (colour scale ``low`` to ``high``); returns the image, for the colour bar."""
    data = [[math.nan if v is None else v for v in row] for row in heat.values()]
    image = ax.imshow(data, cmap="viridis", vmin=low, vmax=high if high > low else low + 1e-9, aspect="auto")
    best = grid.best()
    for i, row in enumerate(heat.cells):
        for j, cell in enumerate(row):
            if cell is None or cell.mean is None:
                continue
            shade = (cell.mean - low) / (high - low) if high > low else 0.5
            marker = grid.marker(cell)
            text = (
                f"{cell.mean:.3f}"
                + (f" {marker}" if marker else "")
                + ("\ndefault" if cell.name == grid.retriever else "")
            )
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if shade > 0.55 else "white")
            if best is not None and cell.name == best.name:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    ax.set_xticks(range(len(heat.xs)), [value_text(v) for v in heat.xs])
    ax.set_xlabel(heat.x)
    if heat.y is None:
        ax.set_yticks([])
    else:
        ax.set_yticks(range(len(heat.ys)), [value_text(v) for v in heat.ys])
        ax.set_ylabel(heat.y)
    ax.set_title(f"{grid.name}: {grid.measure} {heat.over()}", fontsize=9)
    ax.tick_params(length=0)
    return image


def heatmap_numbers(grid: ParameterGrid, *, number: int | None = None) -> list[Table]:
    """The numbers of :func:`heatmap_figure`, one table per heat map (:meth:`ParameterGrid.rows`), each under
    :meth:`ParameterGrid.caption`."""
    tables = []
    for heat in grid.heat_maps():
        header, rows = grid.rows(heat)
        tables.append(Table(pd.DataFrame(rows, columns=header), _behind(number, "the heat map", grid.caption(heat))))
    return tables


def best_setting(grid: ParameterGrid) -> Markdown:
    """:meth:`ParameterGrid.best_text`: the best setting, its difference from the default, the test."""
    return Markdown(grid.best_text())


def read_results(path: str | PathLike[str]) -> dict[str, Any]:
    """An experiment's ``results.json`` as data.

    Raises:
        InputError: the file cannot be read or is not UTF-8 JSON.
    """
    data, _ = read_json(path, "results.json")
    return dict(data)


def _grids(entry: Mapping[str, Any]) -> tuple[ParameterGrid, ...]:
    """The parameter grids of one evaluation of ``results.json``."""
    if not entry.get("systems"):
        return ()
    statistics = Statistics.from_dict(entry["statistics"])
    systems = [(s["name"], s["label"], s["kind"], s["params"]) for s in entry["systems"]]
    return parameter_grids(systems, statistics, headline_measure(list(statistics.shown_measures), entry["k"]))


def evaluation_grids(results: Mapping[str, Any], index: int, *, number: int | None = None) -> list[Any]:
    """What the report shows of evaluation ``index`` of ``results``: for each parameter grid its heat map (Figure
    ``number``, the next grid ``number + 1``, ...), the numbers behind it and the best setting; a line when it has
    none."""
    entry = results["evaluations"][index]
    grids = _grids(entry)
    if not grids:
        return [Markdown("No retriever with several settings in this evaluation: no parameter grid.")]
    shown: list[Any] = []
    for offset, grid in enumerate(grids):
        figure = None if number is None else number + offset
        shown += [heatmap_figure(grid, number=figure), *heatmap_numbers(grid, number=figure), best_setting(grid)]
    return shown


def grid_warnings(results: Mapping[str, Any]) -> Markdown:
    """Each evaluation whose resamples are too few for any marker of its comparison table
    (:func:`~agentmemory.analysis.prose.resamples_warning`), or that there is none."""
    lines = []
    for entry in results["evaluations"]:
        if not entry.get("systems"):
            continue
        warning = resamples_warning(Statistics.from_dict(entry["statistics"]))
        if warning is not None:
            lines.append(f"- **{entry['collection']}, k = {entry['k']}, seed = {entry['seed']}:** {warning}.")
    if not lines:
        n = results["grid"]["statistics"]["n_resamples"]
        return Markdown(
            f"No comparison table is short of resamples: with n_resamples = {n} a marker can appear in each (where the queries allow one)."
        )
    return Markdown("**Warning: too few resamples for any marker.**\n\n" + "\n".join(lines))


_SETUP = 'from agentmemory.report import grids\n\nresults = grids.read_results("../results.json")\ngrids.grid_warnings(results)'


def grid_report(results: Mapping[str, Any]) -> nbformat.NotebookNode:
    """The grid's own report, ``reports/grid.ipynb`` beside ``results.json``'s folder's ``reports/<collection>/``.

    A title, the resamples warnings (:func:`grid_warnings`), then for each evaluation holding a parameter grid a
    heading and :func:`evaluation_grids` (figures numbered in order).  The code cells are computed here, in this
    process, and their outputs are what running them in a kernel from the ``reports`` folder gives; the notebook
    holds no time and no absolute path, so the same ``results.json`` gives the same bytes.
    """
    name = results["grid"]["name"]
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# Grid {name}: parameter grids\n\nFor each evaluation of the grid (collection, k, seed) that holds "
            "several settings of one retriever: a heat map of the headline measure over each pair of parameters, "
            "the numbers behind it, and the best setting against the retriever's default one. Every label names "
            "every parameter; the comparison tables are in `tables/`."
        ),
        _code(_SETUP, [grid_warnings(results)]),
    ]
    number = 1
    for index, entry in enumerate(results["evaluations"]):
        grids = _grids(entry)
        if not grids:
            continue
        cells.append(
            nbformat.v4.new_markdown_cell(f"## {entry['collection']}, k = {entry['k']}, seed = {entry['seed']}")
        )
        source = f"display(*grids.evaluation_grids(results, {index}, number={number}))"
        cells.append(_code(source, evaluation_grids(results, index, number=number)))
        number += len(grids)
    if number == 1:
        cells.append(nbformat.v4.new_markdown_cell("No evaluation holds several settings of one retriever."))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    count = 0
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # fixed ids: the same results give the same bytes
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for output in cell.outputs:
                if "execution_count" in output:
                    output.execution_count = count
    return nb


def _code(source: str, shown: Sequence[Markdown | Table | Png]) -> nbformat.NotebookNode:
    """A code cell with ``shown`` as its display outputs (each object's Markdown, HTML and plain forms)."""
    outputs = []
    for obj in shown:
        data = {"text/plain": repr(obj)}
        if isinstance(obj, Markdown):
            data["text/markdown"] = obj._repr_markdown_()
        else:  # a Table or a Png: HTML
            data["text/html"] = obj._repr_html_()
        outputs.append(nbformat.v4.new_output("display_data", data=data))
    return nbformat.v4.new_code_cell(source, outputs=outputs)
