"""`agentmemory report NOTEBOOK --out DIR -p NAME VALUE`: find the notebook, check its parameters first, run and
render it as `make report` does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO_ROOT, USER_REPORT_SAMPLE

from agentmemory.cli.app import main
from agentmemory.errors import ParameterError, ReportParameterError
from agentmemory.report import own_report
from agentmemory.report.render import render_html
from agentmemory.report.shipped import NOTEBOOK_NAMES, notebook_folder


@pytest.fixture(scope="module")
def checkout(user_report) -> Path:
    """The working folder the README's command ran in (notebooks/ and fixtures/ linked, as in a clone)."""
    return user_report[1].parent.parent


@pytest.fixture(scope="module")
def collection_report(user_report) -> tuple[subprocess.CompletedProcess[str], Path]:
    return user_report


def test_the_readme_command_writes_the_html_report(collection_report, checkout: Path) -> None:
    """`agentmemory report notebooks/collection.ipynb --out out/report -p collection <LoCoMo sample>` writes the
    executed notebook, its HTML (rendered as make report renders: code hidden, images embedded) and the artifact,
    byte for byte what `agentmemory eval` writes for the same collection."""
    done, out = collection_report
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Wrote out/report/collection.ipynb and out/report/collection.html\n"
    nb = nbformat.read(out / "collection.ipynb", as_version=4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert 'collection = "fixtures/locomo-sample/locomo-sample.json"' in injected.source
    assert 'output_dir = "out/report"' in injected.source
    html = (out / "collection.html").read_text(encoding="utf-8")
    assert html == render_html(nb)
    assert "params.collection_setup(" not in html and 'src="data:image/png;base64,' in html and "<figcaption>" in html
    cli = checkout / "cli.json"
    assert main(["eval", "--collection", str(checkout / USER_REPORT_SAMPLE), "--out", str(cli), "--no-progress"]) == 0
    assert (out / "eval-results.json").read_bytes() == cli.read_bytes()


def test_a_bad_parameter_is_one_line_before_any_kernel(checkout: Path, capsys, monkeypatch) -> None:
    """Unknown names, values the declared type refuses and values the notebook's setup refuses are each one line,
    exit 2, and nothing is written."""
    monkeypatch.chdir(checkout)
    cases = [
        (["-p", "kk", "5"], "agentmemory: error: -p: 'kk' (str) is not a parameter of collection.ipynb; choose from: "),
        (["-p", "k", "five"], "agentmemory: error: -p k: 'five' (str) is not an integer; give an integer ("),
        (["-p", "repair", "yes"], "agentmemory: error: -p repair: 'yes' (str) is not a bool; give true or false\n"),
        (["-p", "k", "0"], "agentmemory: error: k: 0 (int) is less than 1; k must be an integer >= 1\n"),
        (["-p", "collection", "no/such.json"], "agentmemory: error: no/such.json: no such collection file or folder"),
        (["-p", "k", "3", "-p", "k", "4"], "agentmemory: error: -p k: '4' (str) gives the parameter a second value"),
    ]
    for args, start in cases:
        assert main(["report", "collection", "--out", "bad", *args]) == 2
        assert capsys.readouterr().err.startswith(start)
    assert not (checkout / "bad").exists()
    assert main(["report", "collection"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: --out: None (NoneType) is missing; name the folder to write the report into: --out DIR\n"
    )


def test_notebooks_are_found_by_name_or_path(tmp_path: Path) -> None:
    """A shipped notebook's name (with or without .ipynb) finds it; a path is taken as it is; anything else lists
    the names."""
    folder = notebook_folder()
    assert folder == REPO_ROOT / "notebooks"
    for name in NOTEBOOK_NAMES:
        assert own_report.find_notebook(name) == folder / f"{name}.ipynb"
    assert own_report.find_notebook("collection.ipynb") == folder / "collection.ipynb"
    own = tmp_path / "mine.ipynb"
    own.write_text("{}", encoding="utf-8")
    assert own_report.find_notebook(str(own)) == own
    with pytest.raises(ParameterError) as info:
        own_report.find_notebook("colection")
    assert str(info.value) == (
        "NOTEBOOK: 'colection' (str) is neither a notebook file nor a shipped notebook's name; give the path of an "
        ".ipynb file or one of: eval, explore, collection, sweep, answers"
    )


def test_parameters_are_read_with_their_declared_types() -> None:
    """int, float and bool parameters are read as such; text stays text."""
    path = own_report.find_notebook("collection")
    values = own_report.read_parameters(
        path, [("k", "10"), ("repair", "True"), ("system_timeout", "2.5"), ("retrievers", "bm25,hybrid")]
    )
    assert values == {"k": 10, "repair": True, "system_timeout": 2.5, "retrievers": "bm25,hybrid"}
    with pytest.raises(ReportParameterError, match=r"^retriever: 'nope' \(str\) is not a known name"):
        own_report.check_parameters(path, {"collection": str(REPO_ROOT / USER_REPORT_SAMPLE), "retrievers": "nope"})


def test_help_notebook_writes_pairs_with_the_equals_sign(capsys) -> None:
    """--help-notebook lists every parameter with type, default and meaning; NAME=PATH pairs, comma-separated (the
    notebooks' comments cannot hold '=', which papermill's reader refuses)."""
    assert main(["report", "eval", "--help-notebook"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "Parameters of eval.ipynb (give each as -p NAME VALUE):"
    runs = next(line for line in lines if line.lstrip().startswith("runs: str"))
    assert "(default '')  other systems' run files beside the retrievers, NAME=PATH pairs, comma-separated" in runs
    assert any(line.lstrip().startswith("k: int") and "(default 5)" in line for line in lines)
    assert "Unknown type" not in text and "NAME:PATH" not in text and "equals sign" not in text


ANSWERS = (
    "zep=fixtures/answers/zep/zep_locomo_grades.json;"
    "mem0=fixtures/answers/mem0-locomo-sample.json,fixtures/answers/mem0-locomo-sample-run2.json"
)


def test_the_answers_report_of_ones_own_files(checkout: Path) -> None:
    """`agentmemory report answers --out DIR -p collection ... -p answers ...` writes the executed notebook and its
    HTML (verdict first, figures embedded) and the artifact agentmemory eval --answers writes for the same files."""
    script = Path(sys.executable).parent / "agentmemory"
    argv = [str(script), "report", "answers", "--out", "out/answers", "-p", "collection", USER_REPORT_SAMPLE]
    argv += ["-p", "answers", ANSWERS, "-p", "repair", "true", "-p", "retrievers", "bm25"]
    done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Wrote out/answers/answers.ipynb and out/answers/answers.html\n"
    out = checkout / "out" / "answers"
    nb = nbformat.read(out / "answers.ipynb", as_version=4)
    html = (out / "answers.html").read_text(encoding="utf-8")
    assert html == render_html(nb)
    assert "<strong>Verdict.</strong> 2 imported systems, zep and mem0, compared on the 15 headline questions" in html
    assert html.count('src="data:image/png;base64,') == 4 and "params.answers_setup(" not in html
    cli = checkout / "answers-cli.json"
    args = ["eval", "--collection", str(checkout / USER_REPORT_SAMPLE), "--repair", "--retrievers", "bm25"]
    for entry in ANSWERS.split(";"):
        name, files = entry.split("=")
        args += ["--answers", f"{name}=" + ",".join(str(checkout / f) for f in files.split(","))]
    args += ["--baseline", "zep", "--table-metrics", "Judge,F1,EM,BLEU-1,answer_in_context@5,R@5"]
    assert main([*args, "--out", str(cli), "--no-progress"]) == 0
    assert (out / "eval-results.json").read_bytes() == cli.read_bytes()


def test_a_bad_answers_parameter_is_one_line_before_any_kernel(checkout: Path, capsys, monkeypatch) -> None:
    """An answer file that is not there, or a system named twice: one line, exit 2, nothing written."""
    monkeypatch.chdir(checkout)
    cases = [
        (["-p", "answers", "zep=no/such.json"], "agentmemory: error: no/such.json: no such file\n"),
        (["-p", "baseline", "tags"], "agentmemory: error: baseline: 'tags' (str) is not a known name; choose from: "),
    ]
    for args, start in cases:
        assert main(["report", "answers", "--out", "bad", *args]) == 2
        assert capsys.readouterr().err.startswith(start)
    assert not (checkout / "bad").exists()
