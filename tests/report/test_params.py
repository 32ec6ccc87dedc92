"""Notebook parameters are validated by the library, with the library's own messages."""

from __future__ import annotations

from pathlib import Path

import nbformat
import papermill
import pytest
from conftest import REPO_ROOT

from agentmemory.collection import default_collection_path
from agentmemory.errors import (
    TRACEBACK_ENV,
    AgentMemoryError,
    ParameterError,
    ReportParameterError,
    check_positive_int,
    traceback_wanted,
)
from agentmemory.report.params import eval_setup, explore_setup
from agentmemory.report.results import SHIPPED
from agentmemory.retrievers import RETRIEVERS

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"
GOOD = {"seed": 7, "k": 5, "collection": "", "retrievers": "bm25,tags", "output_dir": ""}
GOOD_EXPLORE = {"collection": "", "query": "vegetarian dinner", "query_tags": "", "k": 5, "explain_entry": ""}


def _eval(**changes):
    return eval_setup(**{**GOOD, **changes})


def _explore(**changes):
    return explore_setup(**{**GOOD_EXPLORE, **changes})


def test_defaults_load_the_shipped_fixture():
    """collection "" (or None) means the shipped fixture; output_dir "" means write nothing."""
    for empty in ("", None):
        setup = _eval(collection=empty, output_dir=empty)
        assert setup.collection.name == default_collection_path().name == "assistant-notes"
        assert setup.source == SHIPPED
        assert setup.output_dir is None
    assert (setup.seed, setup.k, [s.key for s in setup.retrievers]) == (7, 5, ["bm25", "tags"])


def test_a_collection_path_and_output_dir_are_kept_as_given(tmp_path):
    """A relative collection path is reported as given (never made absolute); output_dir becomes a Path."""
    setup = _eval(collection=str(GARDEN), output_dir=str(tmp_path / "out"))
    assert setup.collection.name == "garden-notes"
    assert setup.source == str(GARDEN)
    assert setup.output_dir == tmp_path / "out"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"k": 0}, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"k": -3}, "k: -3 (int) is less than 1; k must be an integer >= 1"),
        ({"k": "five"}, "k: 'five' (str) is not an integer; k must be an integer >= 1"),
        ({"k": 2.5}, "k: 2.5 (float) is not an integer; k must be an integer >= 1"),
        ({"k": True}, "k: True (bool) is not an integer; k must be an integer >= 1"),
        ({"seed": "7"}, "seed: '7' (str) is not an integer; seed must be an integer >= 0"),
        (
            {"retrievers": "bm25,bm99"},
            "retriever: 'bm99' (str) is not a known name; choose from: " + ", ".join(sorted(RETRIEVERS.names())),
        ),
        (
            {"retrievers": "bm25,,tags"},
            "retrievers: 'bm25,,tags' (str) has an empty item; separate specs by single commas, e.g. 'bm25,bm25[k1=0.9]'",
        ),
        (
            {"retrievers": "tags,tags"},
            "retrievers: 'tags,tags' (str) names the retriever 'Tag scorer' twice; give each retriever once, or different "
            "parameters (labels must be unique)",
        ),
        ({"collection": "does/not/exist"}, "does/not/exist: no such collection file or folder"),
        (
            {"collection": 3},
            'collection: 3 (int) is not a path; pass a collection folder or LoCoMo .json file, or "" for the shipped fixture',
        ),
    ],
)
def test_bad_eval_parameters_raise_the_library_message(changes, message):
    """Each bad value raises ReportParameterError whose text is exactly the library's message."""
    with pytest.raises(ReportParameterError) as info:
        _eval(**changes)
    assert str(info.value) == message
    assert isinstance(info.value, AgentMemoryError) and isinstance(info.value, ValueError)
    assert isinstance(info.value.cause, AgentMemoryError)
    assert info.value._render_traceback_() == [f"ReportParameterError: {message}"]


def test_k_message_is_the_one_check_positive_int_gives():
    """The notebook's k message is not hand-written: it is check_positive_int's."""
    with pytest.raises(ParameterError) as library:
        check_positive_int("k", 0)
    with pytest.raises(ReportParameterError) as notebook:
        _eval(k=0)
    assert str(notebook.value) == str(library.value)
    assert notebook.value.cause.__class__ is library.value.__class__


def test_output_dir_that_is_a_file_is_rejected(tmp_path):
    """output_dir must be a folder (created if missing), not an existing file."""
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(ReportParameterError, match=r"^output_dir: '.*file\.txt' \(str\) is a file; pass a folder"):
        _eval(output_dir=str(target))


def test_explore_defaults():
    """Empty query_tags means derive; empty explain_entry means BM25's first hit."""
    setup = _explore()
    assert setup.query_tags is None and setup.explain_entry is None
    assert setup.collection.name == "assistant-notes"


def test_explore_tags_and_entry():
    """query_tags is split on commas and stripped; explain_entry must be an entry id."""
    setup = _explore(query_tags=" diet , food ", explain_entry="m10")
    assert setup.query_tags == ("diet", "food")
    assert setup.explain_entry == "m10"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"k": 0}, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"query": "?!"}, "query: '?!' (str) has no words; type a query with at least one letter or digit"),
        ({"query": 5}, "query: 5 (int) is not text; type a query such as 'what does Maya eat'"),
        ({"query_tags": ", ,"}, 'query_tags: \', ,\' (str) names no tag; pass e.g. "diet,food", or "" to derive them'),
        (
            {"explain_entry": "m99"},
            "explain_entry: 'm99' (str) is not an entry of the collection; pass one of its 16 entry ids "
            '(m01, m02, m03, m04, m05, ...), or "" for BM25\'s first hit',
        ),
        ({"collection": "nowhere"}, "nowhere: no such collection file or folder"),
    ],
)
def test_bad_explore_parameters_raise_the_library_message(changes, message):
    """Each bad value of explore.ipynb raises ReportParameterError with one clear message."""
    with pytest.raises(ReportParameterError) as info:
        _explore(**changes)
    assert str(info.value) == message


def test_relative_collection_resolves_against_the_working_directory(monkeypatch):
    """A relative collection path is relative to the kernel's working directory, as the parameter help says."""
    monkeypatch.chdir(REPO_ROOT / "tests")
    setup = _eval(collection=str(Path("data") / "garden-notes"))
    assert setup.collection.name == "garden-notes"


# -- our errors in a notebook: one line, the parameter first (through papermill) -------------------------


def _failing_notebook(tmp_path: Path, source: str) -> tuple[Path, Path]:
    """A one-cell notebook running ``source``, and where papermill writes the executed copy."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "failing.ipynb"
    nbformat.write(notebook, path)
    return path, tmp_path / "out.ipynb"


def _papermill_error(notebook: Path, out: Path) -> papermill.PapermillExecutionError:
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(notebook),
            str(out),
            kernel_name="python3",
            progress_bar=False,
            log_output=False,
            cwd=str(notebook.parent),
        )
    return info.value


K_ZERO = "k: 0 (int) is less than 1; k must be an integer >= 1"


def test_a_library_error_in_a_notebook_cell_is_one_line_naming_the_parameter_first(tmp_path, monkeypatch):
    """Any of our errors (here a ParameterError from MemoryStore.search, not a notebook parameter) shows in the failing
    cell as one line, ``ParameterError: k: ...``, not the frames inside the library; papermill's error names the
    parameter too."""
    monkeypatch.delenv("AGENTMEMORY_TRACEBACK", raising=False)
    notebook, out = _failing_notebook(tmp_path, "from agentmemory import MemoryStore\nMemoryStore().search('x', k=0)")
    err = _papermill_error(notebook, out)
    assert (err.ename, err.evalue) == ("ParameterError", K_ZERO)
    assert err.traceback == [f"ParameterError: {K_ZERO}"]
    assert K_ZERO in str(err)
    [cell] = [c for c in nbformat.read(out, as_version=4).cells if "search" in c.source]
    [output] = cell.outputs
    assert output.traceback == [f"ParameterError: {K_ZERO}"]


def test_the_full_traceback_is_one_environment_variable_away(tmp_path, monkeypatch):
    """With AGENTMEMORY_TRACEBACK=1 the same cell shows IPython's full traceback, frames inside the library included."""
    monkeypatch.setenv("AGENTMEMORY_TRACEBACK", "1")
    notebook, out = _failing_notebook(tmp_path, "from agentmemory import MemoryStore\nMemoryStore().search('x', k=0)")
    err = _papermill_error(notebook, out)
    text = "\n".join(err.traceback)
    assert err.ename == "ParameterError" and len(err.traceback) > 3
    assert "check_positive_int" in text and "core.py" in text


@pytest.mark.parametrize(("value", "wanted"), [("1", True), ("yes", True), ("", False), ("0", False), ("false", False)])
def test_traceback_wanted_reads_the_environment_variable(monkeypatch, value, wanted):
    """The one setting: AGENTMEMORY_TRACEBACK set to anything but '', 0, false or no; then an error has no
    _render_traceback_ (IPython checks with hasattr, and renders its own traceback)."""
    monkeypatch.setenv(TRACEBACK_ENV, value)
    assert traceback_wanted() is wanted
    err = ParameterError("k", 0, "is less than 1", "k must be an integer >= 1")
    assert hasattr(err, "_render_traceback_") is not wanted
    if not wanted:
        assert err._render_traceback_() == [f"ParameterError: {K_ZERO}"]
