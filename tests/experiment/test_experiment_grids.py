"""A grid over a retriever's parameters: labels naming every parameter, default BM25 as the baseline, the parameter
grid in the tables and the grid's own report, and a warning when the resamples are too few for any marker."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from conftest import FIXTURE_DIR

from agentmemory.analysis.prose import marker_limit
from agentmemory.cli.app import main
from agentmemory.datasets.beir import write_collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.experiment import run_experiment
from agentmemory.experiment.reports import GRID_REPORT_FILES, write_grid_report

K1 = [0.6, 0.9, 1.2, 1.5, 2.0]
B = [0.25, 0.5, 0.75, 1.0]
# examples/grid.toml copied over 20 BM25 settings: its n_resamples and its extra measure (6 table columns),
# so Holm's family is 19 x 6 = 114 comparisons.
GRID = f"""name = "bm25-20"
k = 5
measures = ["Success@1"]
systems = [{{ retriever = "bm25", grid = {{ k1 = {K1}, b = {B} }} }}]
[statistics]
n_resamples = 2000
[[collections]]
name = "syn"
path = "syn"
"""
WARNING = (
    "agentmemory: warning: collection syn, k = 5, seed = 7: n_resamples = 2000 allows no marker in the comparison "
    "table: the smallest attainable p-value, 2/(2000 + 1), times Holm's 114 comparisons is above alpha = 0.05; "
    "set [statistics] n_resamples to 4559 or more\n"
)


@pytest.fixture(scope="module")
def twenty(tmp_path_factory) -> tuple[Path, Path]:
    """The grid's folder (the grid file and its 50-query synthetic collection) and its output folder."""
    folder = tmp_path_factory.mktemp("twenty")
    write_collection(synthetic_collection(seed=0, n_entries=200, n_queries=50), folder / "syn")
    (folder / "grid.toml").write_text(GRID, encoding="utf-8")
    return folder, folder / "out"


def test_twenty_settings_at_the_examples_resamples_warn_everywhere(twenty, capsys) -> None:
    """The CLI warns on stderr with the resamples that would suffice; the table's notation says it under the table;
    the baseline is default BM25 and the tables say so; every label names k1 and b."""
    folder, out = twenty
    assert main(["experiment", str(folder / "grid.toml"), "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == WARNING
    table = (out / "tables" / "syn.md").read_text(encoding="utf-8")
    assert marker_limit(50, 114, 2000, 0.05) in table
    assert (
        "The baseline is BM25 (k1=1.2, b=0.75), default BM25: the grid names no [statistics] baseline, and default "
        "BM25 is then the baseline of every evaluation that holds it."
    ) in table
    assert "| BM25 (k1=0.6, b=0.75) |" in table and "| BM25 (k1=1.2, b=0.75) (baseline) |" in table
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [entry] = results["evaluations"]
    assert entry["statistics"]["baseline"] == "bm25"
    assert [s["label"] for s in entry["systems"]] == [f"BM25 (k1={k1}, b={b})" for k1 in K1 for b in B]
    assert "### Parameter grid: BM25 (20 settings)" in table and "| b \\ k1 | 0.6 | 0.9 | 1.2 | 1.5 | 2.0 |" in table


def test_enough_resamples_no_warning(tmp_path: Path, capsys) -> None:
    """At 4559 resamples the same grid warns of nothing."""
    write_collection(synthetic_collection(seed=0, n_entries=200, n_queries=50), tmp_path / "syn")
    (tmp_path / "grid.toml").write_text(GRID.replace("n_resamples = 2000", "n_resamples = 4559"), encoding="utf-8")
    assert main(["experiment", str(tmp_path / "grid.toml"), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    assert "resamples" not in (tmp_path / "out" / "tables" / "syn.md").read_text(encoding="utf-8")


def test_the_grid_report_shows_the_heat_map_its_numbers_and_the_warning(twenty, tmp_path: Path) -> None:
    """reports/grid.ipynb: the warning first, then the evaluation's heat map (a PNG in the HTML), the numbers behind
    it as the library computes them from results.json, and the best setting; the same results give the same bytes."""
    from agentmemory.report import grids

    folder, out = twenty
    if not (out / "results.json").exists():
        run_experiment(folder / "grid.toml", out=out)
    results = grids.read_results(out / "results.json")
    written = write_grid_report(results, tmp_path / "a")
    assert [p.name for p in written] == list(GRID_REPORT_FILES)
    nb = nbformat.read(written[0], as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    [warning] = code[0].outputs
    assert "n_resamples = 2000 allows no marker" in warning.data["text/markdown"]
    shown = [o.data["text/plain"] for o in code[1].outputs]
    expected = grids.evaluation_grids(results, 0, number=1)
    assert shown == [repr(obj) for obj in expected]
    assert shown[0].startswith("Figure 1: BM25's headline mean nDCG@5 over k1 and b (20 settings, 50 queries)")
    assert shown[1].startswith("Numbers behind Figure 1: BM25: nDCG@5, headline mean over 50 queries, over k1 and b")
    assert "4559 resamples or more would allow one" in shown[1]
    assert shown[2].startswith("**Best setting on nDCG@5** (highest headline mean of 20 settings)")
    html = written[1].read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') == 1 and "read_results" not in html
    again = write_grid_report(results, tmp_path / "b")
    assert [p.read_bytes() for p in written] == [p.read_bytes() for p in again]


def test_a_grid_without_parameter_grid_says_so(tmp_path: Path) -> None:
    """bm25 and tags only: no parameter grid, no warning, and the report says both."""
    from agentmemory.report import grids

    (tmp_path / "grid.toml").write_text(
        f'systems = ["tags", "bm25"]\n[[collections]]\nname = "notes"\npath = "{FIXTURE_DIR.as_posix()}"\n',
        encoding="utf-8",
    )
    result = run_experiment(tmp_path / "grid.toml", out=tmp_path / "out")
    assert result.merged.warnings == ()
    [entry] = result.results["evaluations"]
    assert entry["statistics"]["baseline"] == "bm25"  # default BM25, though listed second
    nb = grids.grid_report(result.results)
    assert nb.cells[-1].source == "No evaluation holds several settings of one retriever."
    assert nb.cells[1].outputs[0].data["text/plain"].startswith("No comparison table is short of resamples")
