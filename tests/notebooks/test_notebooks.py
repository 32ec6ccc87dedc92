"""The notebooks themselves: parameters, the documented papermill commands, other data, bad values, the nbval net.

``make test`` also runs nbval over the committed executed notebooks
(``reports/*.ipynb``); here we check what nbval alone cannot: that the
documented commands work from two working directories, that other parameters
give the library's own results, that bad parameters stop the notebook with
the library's message, and that nbval does fail when a number changes.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest
from conftest import REPO_ROOT
from papermill.exceptions import PapermillExecutionError

from agentmemory import evaluate, load_collection
from agentmemory.cli.app import main as cli_main
from agentmemory.datasets import load
from agentmemory.collection import default_collection_path
from agentmemory.report import (
    comparison,
    explain,
    explore,
    figures,
    first_screen,
    hardest,
    grids,
    inputs,
    params,
    ranks,
    stats,
    tables,
    ties,
)
from agentmemory.report import sweep_notebook as sweeps

NOTEBOOKS = REPO_ROOT / "notebooks"
REPORTS = REPO_ROOT / "reports"
GARDEN_REL = "tests/data/garden-notes"
PAPERMILL = str(Path(sys.executable).parent / "papermill")
TIMEOUT = 180

EVAL_PARAMS = {
    "seed": "int",
    "k": "int",
    "collection": "str",
    "retrievers": "str",
    "output_dir": "str",
    "metrics": "str",
    "format": "str",
    "runs": "str",
    "memories": "str",
    "relevance": "str",
    "lenient_run": "bool",
    "baseline": "str",
    "timings": "bool",
    "as_of": "bool",
    "systems": "str",
    "attribution": "str",
    "system_timeout": "float",
    "lenient_system": "bool",
    "qrels_patch": "str",
    "claims": "str",
    "table_metrics": "str",
    "workers": "int",
    "tokenizer": "str",
    "clock": "str",
    "readers": "str",
    "judges": "str",
    "reader_prompt": "str",
    "judge_prompt": "str",
    "judge_majority": "bool",
    "offline": "bool",
    "lenient_answers": "bool",
    "prices": "str",
}
EXPLORE_PARAMS = {"collection": "str", "query": "str", "query_tags": "str", "k": "int", "explain_entry": "str"}
COLLECTION_PARAMS = {
    "collection": "str",
    "format": "str",
    "format_options": "str",
    "repair": "bool",
    "k": "int",
    "seed": "int",
    "retrievers": "str",
    "output_dir": "str",
    "metrics": "str",
    "runs": "str",
    "memories": "str",
    "relevance": "str",
    "lenient_run": "bool",
    "baseline": "str",
    "timings": "bool",
    "as_of": "bool",
    "systems": "str",
    "attribution": "str",
    "system_timeout": "float",
    "lenient_system": "bool",
    "qrels_patch": "str",
    "claims": "str",
    "table_metrics": "str",
    "workers": "int",
    "tokenizer": "str",
    "clock": "str",
    "readers": "str",
    "judges": "str",
    "reader_prompt": "str",
    "judge_prompt": "str",
    "judge_majority": "bool",
    "offline": "bool",
    "lenient_answers": "bool",
    "prices": "str",
}
SWEEP_PARAMS = {
    "collection": "str",
    "k_max": "int",
    "k": "int",
    "seeds": "str",
    "sizes": "str",
    "queries": "str",
    "mismatch_rate": "float",
    "retrievers": "str",
    "progress": "bool",
}
ANSWERS_PARAMS = {
    "collection": "str",
    "format": "str",
    "format_options": "str",
    "repair": "bool",
    "answers": "str",
    "answers_format": "str",
    "answers_mapping": "str",
    "retrievers": "str",
    "baseline": "str",
    "table_metrics": "str",
    "k": "int",
    "seed": "int",
    "attribution": "str",
    "qrels_patch": "str",
    "claims": "str",
    "output_dir": "str",
}
ALL_PARAMS = [
    ("eval", EVAL_PARAMS),
    ("explore", EXPLORE_PARAMS),
    ("collection", COLLECTION_PARAMS),
    ("sweep", SWEEP_PARAMS),
    ("answers", ANSWERS_PARAMS),
]


def _run(source: Path, out: Path, parameters: dict, cwd: Path = REPO_ROOT) -> nbformat.NotebookNode:
    papermill.execute_notebook(
        str(source),
        str(out),
        parameters=parameters,
        kernel_name="python3",
        cwd=str(cwd),
        progress_bar=False,
        log_output=False,
    )
    return nbformat.read(out, as_version=4)


def _cell(nb, cell_id: str):
    return next(c for c in nb.cells if c.id == cell_id)


def _plain(cell) -> list[str]:
    """Every output of a cell as text: text/markdown when there is one, else text/plain."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif "data" in o:
            out.append(o.data.get("text/markdown", o.data.get("text/plain")))
    return out


@pytest.mark.parametrize("name, expected", ALL_PARAMS)
def test_parameters_cell_is_tagged_annotated_and_first(name, expected):
    """The first code cell is tagged parameters; every parameter has a type and a help text; no absolute path."""
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].metadata.get("tags") == ["parameters"]
    assert sum("parameters" in c.metadata.get("tags", []) for c in nb.cells) == 1
    inferred = papermill.inspect_notebook(str(path))
    assert {n: p["inferred_type_name"] for n, p in inferred.items()} == expected
    assert all(len(p["help"]) > 20 for p in inferred.values())
    assert "/" not in "".join(p["default"] for p in inferred.values())
    assert f"params.{name}_setup(" in code[1].source, "the first cell after the parameters validates them"
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", ["eval", "explore", "collection", "sweep", "answers"])
def test_notebooks_hold_no_library_logic(name):
    """Cells only call agentmemory: no def, class, lambda or computation of their own, imports from agentmemory only."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in nb.cells[1:]:
        if cell.cell_type != "code" or "parameters" in cell.metadata.get("tags", []):
            continue
        tree = ast.parse(cell.source)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Lambda, ast.BinOp, ast.Compare)), (
                cell.source
            )
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert module.startswith("agentmemory"), cell.source
        assert len(tree.body) <= 4, cell.source  # a few statements: calls into the library, one per line or wrapped


def test_help_notebook_documents_every_parameter():
    """papermill --help-notebook lists each parameter with its type and meaning."""
    done = subprocess.run(
        [PAPERMILL, "--help-notebook", "notebooks/eval.ipynb"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    text = " ".join(done.stdout.split())
    for name, kind in EVAL_PARAMS.items():
        assert f"{name}: {kind} (default" in text
    assert "Unknown type" not in text
    assert "rank cutoff: the metrics look at each retriever's top k hits" in text


def _cli_artifact(tmp_path: Path, *args: str) -> bytes:
    out = tmp_path / "cli" / "eval-results.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["eval", *args, "--out", str(out), "--no-progress"]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("where", ["root", "notebooks"])
def test_documented_command_works_from_root_and_from_notebooks(where, tmp_path):
    """`papermill [notebooks/]eval.ipynb out.ipynb -p seed 7 -p k 5` gives the committed report's outputs.

    From notebooks/ it also writes eval-results.json (output_dir given), byte-identical to agentmemory eval's.
    """
    out = tmp_path / "out.ipynb"
    cwd, source = (REPO_ROOT, "notebooks/eval.ipynb") if where == "root" else (NOTEBOOKS, "eval.ipynb")
    extra = [] if where == "root" else ["-p", "output_dir", str(tmp_path / "nb")]
    done = subprocess.run(
        [PAPERMILL, source, str(out), "-p", "seed", "7", "-p", "k", "5", *extra],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    fresh = nbformat.read(out, as_version=4)
    committed = nbformat.read(REPORTS / "eval.ipynb", as_version=4)
    compared = 0
    for cell in committed.cells:
        if cell.cell_type == "code" and cell.id not in ("injected-parameters", "write"):
            assert _plain(_cell(fresh, cell.id)) == _plain(cell), cell.id
            compared += bool(cell.outputs)
    assert compared >= 8
    if where == "notebooks":
        written = (tmp_path / "nb" / "eval-results.json").read_bytes()
        assert written == _cli_artifact(tmp_path, "--seed", "7", "--k", "5")
        assert json.loads(written)["params"]["k"] == 5
    assert not (cwd / "eval-results.json").exists() and not (NOTEBOOKS / "reports").exists()


def test_other_collection_and_k_give_the_librarys_results(tmp_path):
    """k = 3 on tests/data/garden-notes: table, per-query tables and explanation are the library's; MRR < 1."""
    nb = _run(
        NOTEBOOKS / "eval.ipynb",
        tmp_path / "out.ipynb",
        {"k": 3, "collection": GARDEN_REL, "output_dir": str(tmp_path / "nb")},
    )
    evaluation = evaluate(load_collection(REPO_ROOT / GARDEN_REL), ("bm25", "tags"), k=3, seed=7)

    [table] = _cell(nb, "metrics").outputs
    assert table.data["text/plain"] == repr(tables.metric_table(evaluation))
    assert table.data["text/html"] == tables.metric_table(evaluation)._repr_html_()
    assert "BM25          0.88             0.33 0.88" in table.data["text/plain"]
    assert "Tag scorer          0.75             0.33 0.62" in table.data["text/plain"]

    statistics = stats.run_statistics(evaluation)
    assert _plain(_cell(nb, "per-query")) == [repr(comparison.per_query(evaluation, statistics))]
    figure, *shown = first_screen.headline(evaluation, statistics, number=1)  # Figure 1, the table, its notation,
    expected = [repr(figure), repr(shown[0]), shown[1].text, repr(shown[2]), shown[3].text]  # the costs, their notes
    assert _plain(_cell(nb, "comparison")) == expected
    assert _plain(_cell(nb, "verdict")) == [first_screen.verdict(evaluation, statistics).text]

    [why] = _plain(_cell(nb, "why"))
    assert why == explain.mrr_vs_recall(evaluation).text
    assert "**MRR below 1 (0.88).**" in why and "**MRR below 1 (0.62).**" in why
    assert "Every query's first hit was relevant" not in why

    [overview] = _plain(_cell(nb, "overview"))
    assert f"`garden-notes` ({GARDEN_REL})" in overview and "k = 3" in overview
    written = (tmp_path / "nb" / "eval-results.json").read_bytes()
    assert written == _cli_artifact(tmp_path, "--collection", GARDEN_REL, "--seed", "7", "--k", "3")


def _library_message(**changes) -> str:
    base = {"seed": 7, "k": 5, "collection": "", "retrievers": "bm25,tags", "output_dir": ""}
    with pytest.raises(params.ReportParameterError) as info:
        params.eval_setup(**{**base, **changes})
    return str(info.value)


@pytest.mark.parametrize(
    "bad",
    [{"k": 0}, {"k": "five"}, {"retrievers": "bm25,bm99"}, {"collection": "no/such/collection"}],
    ids=["k=0", "k=five", "unknown-retriever", "missing-collection"],
)
def test_bad_parameters_stop_at_the_validation_cell(bad, tmp_path):
    """The notebook stops in the first cell after the parameters, with one line: the library's message."""
    out = tmp_path / "out.ipynb"
    with pytest.raises(PapermillExecutionError) as info:
        _run(NOTEBOOKS / "eval.ipynb", out, bad)
    message = _library_message(**bad)
    assert (info.value.ename, info.value.evalue) == ("ReportParameterError", message)
    nb = nbformat.read(out, as_version=4)
    validate = _cell(nb, "validate")
    [error] = validate.outputs
    assert error.traceback == [f"ReportParameterError: {message}"]
    after = nb.cells[nb.cells.index(validate) + 1 :]
    assert all(c.execution_count is None and not c.outputs for c in after if c.cell_type == "code")


def test_explore_with_ones_own_query(tmp_path):
    """A typed query and a chosen entry: side-by-side hits and explanations are the library's."""
    parameters = {"query": "Is Maya allergic to penicillin?", "explain_entry": "m12", "k": 3}
    nb = _run(NOTEBOOKS / "explore.ipynb", tmp_path / "out.ipynb", parameters)
    setup = params.explore_setup(collection="", query_tags="", **parameters)
    exploration = explore.Exploration(setup)
    assert _plain(_cell(nb, "side-by-side")) == [
        repr(explore.scores_figure(exploration, number=1)),
        repr(explore.side_by_side(exploration)),
    ]
    assert _plain(_cell(nb, "verdict")) == [explore.verdict(exploration).text]
    assert "m12" in explore.verdict(exploration).text
    terms, overlap = _plain(_cell(nb, "explain"))
    assert terms == repr(explore.bm25_terms(exploration, "m12"))
    assert "penicillin" in terms and "BM25 for m12" in terms
    assert overlap == explore.tag_overlap(exploration, "m12").text
    assert _plain(_cell(nb, "log")) == [repr(explore.event_log(exploration))]


def test_explore_bad_entry_stops_with_the_library_message(tmp_path):
    with pytest.raises(PapermillExecutionError) as info:
        _run(NOTEBOOKS / "explore.ipynb", tmp_path / "out.ipynb", {"explain_entry": "m99"})
    assert info.value.evalue.startswith("explain_entry: 'm99' (str) is not an entry of the collection")


@pytest.mark.parametrize(
    "cell_id, old, new",
    [
        ("metrics", "BM25          0.90", "BM25          0.91"),
        ("plot-cutoff", " 5      0.9000         0.2800", " 5      0.9000         0.2900"),
    ],
    ids=["metric-table", "plot-numbers"],
)
def test_nbval_fails_when_a_number_changes(cell_id, old, new, tmp_path):
    """The regression net works: alter one value in a copy of the committed reference and nbval fails on that cell."""
    nb = nbformat.read(REPORTS / "eval.ipynb", as_version=4)
    cell = _cell(nb, cell_id)
    plain = [o for o in cell.outputs if old in o.get("data", {}).get("text/plain", "")]
    assert len(plain) == 1 and plain[0].data["text/plain"].count(old) == 1
    plain[0].data["text/plain"] = plain[0].data["text/plain"].replace(old, new)
    copy = tmp_path / "eval.ipynb"
    nbformat.write(nb, copy)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider", "-q", str(copy)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1, done.stdout
    index = [c.id for c in nb.cells if c.cell_type == "code"].index(cell_id)  # nbval counts code cells
    assert "1 failed, " in done.stdout, done.stdout
    assert f"FAILED eval.ipynb::Cell {index} " in done.stdout, done.stdout
    assert new.split()[-1] in done.stdout and old.split()[-1] in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.ipynb"], "nbval wrote files where it ran"


def test_default_collection_is_found_from_any_working_directory(tmp_path):
    """collection = "" resolves the shipped fixture even when the kernel runs elsewhere."""
    shutil.copy(NOTEBOOKS / "eval.ipynb", tmp_path / "eval.ipynb")
    nb = _run(tmp_path / "eval.ipynb", tmp_path / "out.ipynb", {"k": 5}, cwd=tmp_path)
    [overview] = _plain(_cell(nb, "overview"))
    assert f"`{default_collection_path().name}` (the shipped fixture)" in overview


def test_help_notebook_documents_the_new_notebooks():
    """papermill --help-notebook lists collection.ipynb's and sweep.ipynb's parameters with types, no Unknown type."""
    for name, expected in (("collection", COLLECTION_PARAMS), ("sweep", SWEEP_PARAMS), ("answers", ANSWERS_PARAMS)):
        done = subprocess.run(
            [PAPERMILL, "--help-notebook", f"notebooks/{name}.ipynb"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        )
        text = " ".join(done.stdout.split())
        for parameter, kind in expected.items():
            assert f"{parameter}: {kind} (default" in text
        assert "Unknown type" not in text and "Unable to parse" not in done.stdout + done.stderr


def test_collection_notebook_with_repair_and_k3_run_from_elsewhere(tmp_path):
    """repair=True, k = 3, kernel in a foreign folder: the sample is still found, every table is the library's,
    and eval-results.json is byte-identical to agentmemory eval --repair --k 3."""
    shutil.copy(NOTEBOOKS / "collection.ipynb", tmp_path / "collection.ipynb")
    out_dir = tmp_path / "nb"
    nb = _run(
        tmp_path / "collection.ipynb",
        tmp_path / "out.ipynb",
        {"repair": True, "k": 3, "output_dir": str(out_dir), "retrievers": "bm25,tags"},
        cwd=tmp_path,
    )
    setup = params.collection_setup(
        collection="", format="auto", repair=True, k=3, seed=7, retrievers="bm25,tags", output_dir=str(out_dir)
    )
    evaluation = evaluate(load(params.sample_collection_path(), repair=True), ("bm25", "tags"), k=3, seed=7)
    statistics = stats.run_statistics(evaluation)

    [overview] = _plain(_cell(nb, "overview"))
    assert overview == inputs.collection_overview(evaluation, setup).text
    assert "(the shipped LoCoMo sample), read as `locomo`, malformed evidence repaired on request" in overview
    assert "- **Queries:** 14 evaluated" in overview
    skipped, repairs = _plain(_cell(nb, "skipped"))
    assert skipped == repr(inputs.skipped_table(evaluation)) and "Skipped by the loader (3)" in skipped
    assert repairs == repr(inputs.repairs_table(evaluation)) and "nothing was changed" not in repairs
    assert _plain(_cell(nb, "groups")) == [repr(inputs.groups_table(evaluation))]
    assert _plain(_cell(nb, "verdict")) == [first_screen.verdict(evaluation, statistics).text]
    assert _plain(_cell(nb, "headline-note")) == [inputs.headline_note(evaluation).text]
    group_figure, *group_tables = _plain(_cell(nb, "per-group"))
    assert group_figure == repr(stats.group_figure(evaluation, statistics, number=2))
    assert group_tables == [repr(t) for t in stats.group_tables(evaluation, statistics)]
    matrix = stats.pairs_matrix(evaluation, statistics)
    assert _plain(_cell(nb, "significance")) == [stats.comparison_summary(matrix).text]
    heatmap, numbers = _plain(_cell(nb, "comparisons"))
    assert heatmap == repr(figures.comparison_heatmap(matrix, number=3))
    assert numbers == repr(stats.comparison_matrix(matrix, number=3)) and "BM25 − Tag scorer" in numbers
    assert _plain(_cell(nb, "hardest")) == [repr(hardest.hardest_table(evaluation, n)) for n in ("bm25", "tags")]
    caption, numbers, note = _plain(_cell(nb, "first-rank"))
    assert caption == "Figure 4: headline queries by rank of the first relevant hit, by system (k = 3)"
    assert numbers == repr(figures.first_rank_numbers(ranks.first_rank_frame(evaluation), number=4))
    assert "not found in top 3" in numbers and note == ranks.first_rank_note(evaluation).text
    assert _plain(_cell(nb, "tie-flags")) == [ties.tie_flags(evaluation, per_query=False).text]
    assert _plain(_cell(nb, "tie-queries")) == [repr(t) for t in ties.tie_tables(evaluation)]
    [artifact] = _plain(_cell(nb, "artifact"))
    assert (
        "`agentmemory eval --collection fixtures/locomo-sample/locomo-sample.json --repair --seed 7 --k 3 " in artifact
    )
    written = (out_dir / "eval-results.json").read_bytes()
    assert written == _cli_artifact(
        tmp_path, "--collection", str(params.sample_collection_path()), "--repair", "--seed", "7", "--k", "3",
        "--retrievers", "bm25,tags",
    )
    assert json.loads(written)["params"]["k"] == 3 and len(json.loads(written)["collection"]["repairs"]) > 0


def test_collection_notebook_reads_longmemeval_at_session_granularity(tmp_path):
    """format_options "granularity=session" (the committed report is at turn granularity): the overview says so, the
    loader's notes are listed, and eval-results.json is byte-identical to agentmemory eval --granularity session."""
    sample = "fixtures/longmemeval-sample/longmemeval-sample.json"
    measures = "recall_any@5,ndcg_any@5"
    out_dir = tmp_path / "nb"
    parameters = {"collection": sample, "format_options": "granularity=session", "retrievers": "bm25"}
    nb = _run(
        NOTEBOOKS / "collection.ipynb",
        tmp_path / "out.ipynb",
        {**parameters, "metrics": measures, "output_dir": str(out_dir)},
    )
    setup = params.collection_setup(
        format="auto", repair=False, k=5, seed=7, metrics=measures, output_dir=str(out_dir), **parameters
    )
    evaluation = evaluate(load(REPO_ROOT / sample, granularity="session"), "bm25", k=5, seed=7, measures=measures)
    [overview] = _plain(_cell(nb, "overview"))
    assert overview == inputs.collection_overview(evaluation, setup).text
    assert "read as `longmemeval`" in overview and "granularity = session, indexed_turns = user" in overview
    skipped, repairs, notes = _plain(_cell(nb, "skipped"))
    assert [skipped, repairs, notes] == [repr(t) for t in inputs.loader_tables(evaluation)]
    assert "Noted by the loader (" in notes
    [artifact] = _plain(_cell(nb, "artifact"))
    assert (
        f"`agentmemory eval --collection {sample} --granularity session --seed 7 --k 5 --retrievers bm25 " in artifact
    )
    written = (out_dir / "eval-results.json").read_bytes()
    cli = ["--collection", str(REPO_ROOT / sample), "--granularity", "session", "--retrievers", "bm25"]
    assert written == _cli_artifact(tmp_path, *cli, "--metrics", measures)
    assert json.loads(written)["collection"]["settings"] == {"granularity": "session", "indexed_turns": "user"}


@pytest.mark.parametrize("notebook", ["eval", "collection"])
def test_table_metrics_choose_the_columns_as_the_command_line_does(tmp_path, notebook):
    """table_metrics "Success@3,R@5,nDCG@5": the comparison table shows those columns in that order (Success@3
    computed though not asked for in metrics), the artifact's command says --table-metrics, and eval-results.json
    is byte-identical to agentmemory eval --table-metrics's."""
    chosen = "Success@3,R@5,nDCG@5"
    out_dir = tmp_path / "nb"
    nb = _run(
        NOTEBOOKS / f"{notebook}.ipynb",
        tmp_path / "out.ipynb",
        {"table_metrics": chosen, "output_dir": str(out_dir), "retrievers": "bm25,tags"},
    )
    [figure, comparison, *_] = _plain(_cell(nb, "comparison"))
    assert figure.startswith("Figure 1: R@5 of each system over the headline questions")
    header = next(line.split() for line in comparison.splitlines() if line.strip().startswith("System"))
    assert header == ["System", "Success@3", "R@5", "nDCG@5"], header
    [artifact] = _plain(_cell(nb, "artifact"))
    assert f"--table-metrics {chosen} --out" in artifact
    written = (out_dir / "eval-results.json").read_bytes()
    assert json.loads(written)["statistics"]["table_measures"] == chosen.split(",")
    collection = [] if notebook == "eval" else ["--collection", str(params.sample_collection_path())]
    assert written == _cli_artifact(tmp_path, *collection, "--retrievers", "bm25,tags", "--table-metrics", chosen)


def test_table_metrics_that_name_no_measure_are_one_line_before_anything_runs(tmp_path):
    """A table_metrics value that lists a measure twice, names an unknown one or is not text is refused in one line,
    before the collection is read."""
    with pytest.raises(params.ReportParameterError, match=r"^table_metrics: 'P@5,P@5' \(str\) names P@5 twice"):
        params.eval_setup(seed=7, k=5, collection=None, retrievers="bm25", output_dir="", table_metrics="P@5,P@5")
    with pytest.raises(params.ReportParameterError, match=r"^metric: 'XYZ@5' \(str\) is not a known name"):
        params.collection_setup(
            collection="missing.json",
            format="auto",
            repair=False,
            k=5,
            seed=7,
            retrievers="bm25",
            output_dir="",
            table_metrics="XYZ@5",
        )
    with pytest.raises(params.ReportParameterError, match=r"^table_metrics: 5 \(int\) is not text"):
        params.eval_setup(seed=7, k=5, collection=None, retrievers="bm25", output_dir="", table_metrics=5)


def test_sweep_notebook_with_a_small_sweep(tmp_path):
    """Seeds 3-5, shapes 16 x 5 and 40 x 10, k = 3, k_max = 4: the tables, the statement and the parameter grid's
    heat map, numbers and best setting are the library's."""
    parameters = {"seeds": "3-5", "sizes": "16,40", "queries": "5,10", "k": 3, "k_max": 4}
    nb = _run(NOTEBOOKS / "sweep.ipynb", tmp_path / "out.ipynb", parameters)
    setup = params.sweep_setup(collection="", mismatch_rate=0.2, retrievers="bm25,tags", progress=False, **parameters)
    rows = sweeps.seed_rows(setup)
    summary = sweeps.summaries(rows)
    grid = sweeps.parameter_grid(setup)  # BM25's k1 x b on the seed-3 collection of 40 entries and 10 queries
    assert _plain(_cell(nb, "verdict")) == [sweeps.verdict(summary, rows, grid, 3).text]
    caption, quantiles = _plain(_cell(nb, "seed-figure"))
    assert caption == "Figure 1: recall@3, precision@3, MRR across 3 seeds, by collection shape and retriever"
    assert quantiles == repr(sweeps.quantile_table(summary, 3))
    _, k_numbers = _plain(_cell(nb, "k-sweep"))
    assert k_numbers == repr(figures.k_sweep_numbers(sweeps.k_curves(setup), number=2))
    assert _plain(_cell(nb, "seed-numbers")) == [repr(figures.sweep_numbers(rows, sweeps.sweep_measures(3), number=1))]
    [statement] = _plain(_cell(nb, "spread"))
    assert statement == sweeps.spread_statement(summary, rows, 3).text
    assert statement.startswith("**How much a 16-entry, 5-query evaluation moves across seeds.** Each of the 3 seeds")
    figure, *numbers, best = _plain(_cell(nb, "grid"))
    assert figure == repr(grids.heatmap_figure(grid, number=3))
    assert numbers == [repr(t) for t in grids.heatmap_numbers(grid, number=3)]
    assert best == grid.best_text()
    assert [[cell.name for cell in row] for row in grid.heat_maps()[0].cells][2][2] == "bm25"  # b = 0.75, k1 = 1.2
    assert not any(o.output_type == "stream" for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize(
    "name, bad, message",
    [
        ("collection", {"repair": "yes"}, "repair: 'yes' (str) is not a bool; pass repair=True or repair=False"),
        (
            "sweep",
            {"seeds": "abc"},
            "seeds: 'abc' (str) is not a count or a range; pass a number of seeds such as 20 (seeds 0..19) or an "
            'inclusive range such as "100-199"',
        ),
        (
            "answers",
            {"answers": "zep=fixtures/answers/zep/zep_locomo_grades.json;;"},
            "answers: 'zep=fixtures/answers/zep/zep_locomo_grades.json;;' (str) has an empty entry; separate "
            'entries by single ";"',
        ),
    ],
    ids=["collection-repair", "sweep-seeds", "answers-entry"],
)
def test_new_notebooks_stop_at_the_validation_cell(name, bad, message, tmp_path):
    """A bad parameter stops collection.ipynb and sweep.ipynb at the validation cell with the library's one line."""
    out = tmp_path / "out.ipynb"
    with pytest.raises(PapermillExecutionError) as info:
        _run(NOTEBOOKS / f"{name}.ipynb", out, bad)
    assert (info.value.ename, info.value.evalue) == ("ReportParameterError", message)
    nb = nbformat.read(out, as_version=4)
    validate = _cell(nb, "validate")
    assert validate.outputs[0].traceback == [f"ReportParameterError: {message}"]
    after = nb.cells[nb.cells.index(validate) + 1 :]
    assert all(c.execution_count is None and not c.outputs for c in after if c.cell_type == "code")


def test_answers_notebook_with_ones_own_files_gives_the_librarys_results(tmp_path):
    """answers.ipynb with two systems of one's own choosing (no retriever, no patch, k = 3, strict loading): the
    verdict, the comparison table and the seeds cell are what the library gives for the same parameters."""
    from agentmemory.report import answer_report as answers

    parameters = {
        "collection": "fixtures/locomo-sample/locomo-sample.json",
        "answers": "mem0=fixtures/answers/mem0-locomo-sample.json,fixtures/answers/mem0-locomo-sample-run2.json;"
        "evermemos=fixtures/answers/evermemos-locomo-sample.json",
        "k": 3,
    }
    nb = _run(NOTEBOOKS / "answers.ipynb", tmp_path / "out.ipynb", parameters)
    defaults = {name: p["default"] for name, p in papermill.inspect_notebook(str(NOTEBOOKS / "answers.ipynb")).items()}
    values = {name: ast.literal_eval(text) for name, text in defaults.items()} | parameters
    setup = params.answers_setup(**values)
    evaluation = setup.evaluate()
    statistics = setup.statistics(evaluation)
    assert _plain(_cell(nb, "verdict")) == [answers.verdict(evaluation, statistics).text]
    _, table, *_ = answers.headline(evaluation, statistics)
    assert _plain(_cell(nb, "comparison"))[1] == repr(table)
    assert "mem0 (baseline)" in repr(table) and "answer_in_context@3" in repr(table)
    assert _plain(_cell(nb, "seeds")) == [repr(answers.seeds(evaluation, statistics))]
    [key] = _plain(_cell(nb, "key"))
    assert key.startswith("No answer-key patch")


def test_a_users_run_appears_beside_the_built_ins(tmp_path, notes):
    """papermill eval.ipynb -p runs "mine=PATH": the run is a row of the comparison table and a column of every
    per-query table, with the values trec_eval gives it (here BM25's own ranking, so BM25's numbers)."""
    from agentmemory.files.trec import write_run

    bm25 = evaluate(notes, "bm25", k=5, seed=7).results[0]
    run = tmp_path / "mine.trec"
    write_run(run, {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in bm25.per_query})
    nb = _run(NOTEBOOKS / "eval.ipynb", tmp_path / "out.ipynb", {"runs": f"mine={run}"})
    _, table, notation, costs, _ = _plain(_cell(nb, "comparison"))  # Figure 1, then the cost table and its notes
    row = next(line for line in table.splitlines() if line.strip().startswith("mine"))
    assert any(line.strip().startswith("mine ") for line in costs.splitlines())
    assert "0.900 [0.700, 1.000] +0/−0" in row and "0.280 [0.200, 0.360] +0/−0" in row
    assert "Holm's correction over the 10 comparisons of this table" in notation  # RR and RR@5 counted once
    [per_query] = _plain(_cell(nb, "per-query"))
    assert "mine R@5" in per_query and "Δ R@5 mine" in per_query
    [overview] = _plain(_cell(nb, "overview"))
    assert "  - mine: run file `mine.trec` (trec, 5 queries, up to 5 hits each" in overview
    [why] = _plain(_cell(nb, "why"))
    assert "an explanation is not available for mine (a run file gives none)" in why


@pytest.mark.parametrize("name", ["eval", "collection", "sweep"])
def test_help_notebook_lists_the_registered_retrievers_and_formats(name):
    """The parameters cell names every registered retriever (and eval's every format) where it says "registry names
    (...)", so `papermill --help-notebook` shows the registry, not an old list."""
    from agentmemory.datasets.base import FORMATS
    from agentmemory.retrievers.registry import RETRIEVERS

    source = json.loads((REPO_ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in source["cells"] if "parameters" in c["metadata"].get("tags", []))
    text = "".join(cell["source"])
    listed = re.search(r"registry names \(([^)]*), or a plugin's\)", text)
    assert listed is not None and listed.group(1).split(", ") == sorted(RETRIEVERS.names())
    formats = re.search(r"a registered format's name \(([^)]*), or a plugin's\)", text)
    if formats is not None:
        assert formats.group(1).split(", ") == sorted(FORMATS.names())
    assert name != "eval" or formats is not None
