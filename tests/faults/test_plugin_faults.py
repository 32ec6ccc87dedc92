"""Fault injection at the plugin boundary: every misbehaving plugin of ``am_faults`` gives one line and writes nothing.

Each fault runs in-process through ``agentmemory eval`` (with ``--out``,
``--table-out`` and ``--runs-dir``) and ``agentmemory retrieve --out``:
exit status 2, exactly one line on stderr naming the plugin (its spec and
label), the call and what went wrong, and no file in the output folder.
Well-behaved plugins (ties, infinite scores) go through, and their artifact
agrees with trec_eval on the run they export.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import pytrec_eval
from conftest import FIXTURE_DIR

from agentmemory.analysis.artifact import read_artifact
from agentmemory.cli.app import main
from agentmemory.errors import PluginError
from agentmemory.files.trec import read_qrels, read_run

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the fault plugins, importable as am_faults:<Name> (workers and kernels: PYTHONPATH)

import am_faults  # noqa: E402 - after its folder is on sys.path

FAULTS = am_faults.FAULTS
COLLECTION = str(FIXTURE_DIR)


def _eval(out: Path, spec: str, *extra: str) -> list[str]:
    return [
        "eval",
        "--collection",
        COLLECTION,
        "--retrievers",
        spec,
        "--out",
        str(out / "eval-results.json"),
        "--table-out",
        str(out / "table.md"),
        "--runs-dir",
        str(out / "runs"),
        *extra,
    ]


def _retrieve(out: Path, spec: str) -> list[str]:
    return ["retrieve", "--collection", COLLECTION, "--retriever", spec, "--out", str(out / "run.trec")]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _written(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


CASES = [(name, command) for name, fault in FAULTS.items() for command in ("eval", "retrieve")]


@pytest.mark.parametrize(("name", "command"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_a_misbehaving_plugin_gives_one_line_exit_2_and_writes_nothing(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fault's call, through the command: one line naming the plugin and the call, status 2, no file.

    A command that never makes the call (``retrieve`` asks for no ``params()``)
    succeeds: the plugin's other members are sound.
    """
    fault = FAULTS[name]
    out = tmp_path / "out"
    out.mkdir()
    spec = f"am_faults:{name}"
    argv = _eval(out, spec) if command == "eval" else _retrieve(out, spec)
    status, stdout, stderr = _run(argv, capsys)
    if command not in fault.commands:
        assert (status, stderr) == (0, ""), stderr
        assert _written(out) == ["run.trec"]
        return
    lines = stderr.splitlines()
    assert status == 2 and len(lines) == 1, stderr
    assert lines[0].startswith(f"agentmemory: error: retriever plugin '{spec}' (Faulty {name}): "), lines[0]
    call = "factory" if fault.member == "__init__" else fault.member
    assert f": {call}" in lines[0] and fault.says in lines[0], lines[0]
    assert "Traceback" not in stderr and stdout == ""
    assert _written(out) == []


@pytest.mark.parametrize("command", ["eval", "retrieve"])
def test_ghost_ids_are_refused_by_eval_and_retrieve(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin returning an entry id the store does not hold is refused (before: exit 0, the ghost ranked)."""
    spec = "am_faults:SearchGhostIds"
    argv = _eval(tmp_path, spec) if command == "eval" else _retrieve(tmp_path, spec)
    status, _, stderr = _run(argv, capsys)
    assert status == 2, stderr
    assert stderr == (
        f"agentmemory: error: retriever plugin '{spec}' (Faulty SearchGhostIds): search (query 'q1', k = "
        f"{6 if command == 'eval' else 10}) returned ids never added to it: ['ghost-1']\n"
    )
    assert _written(tmp_path) == []


@pytest.mark.parametrize(
    ("module", "problem"),
    [
        ("am_faults_exit", "import raised SystemExit: 3"),
        ("am_faults_import", "import raised ValueError: this plugin module cannot be imported on purpose"),
    ],
)
@pytest.mark.parametrize("command", ["eval", "retrieve"])
def test_a_plugin_module_that_fails_on_import_gives_one_line(
    module: str, problem: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sys.exit(3) or an exception while the module is imported: one line naming the spec, status 2 (not 3)."""
    spec = f"{module}:Anything"
    argv = _eval(tmp_path, spec) if command == "eval" else _retrieve(tmp_path, spec)
    status, _, stderr = _run(argv, capsys)
    assert (status, stderr) == (2, f"agentmemory: error: retriever plugin '{spec}': {problem}\n")
    assert _written(tmp_path) == []


@pytest.mark.parametrize(
    ("module", "problem"),
    [
        ("am_faults_import", "import raised ValueError: this plugin module cannot be imported on purpose"),
        ("am_no_such_module", None),
    ],
)
def test_a_system_module_that_does_not_import_is_called_a_system(
    module: str, problem: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``--system`` module that raises on import, or is not there, is one line naming it a system (not a
    retriever spec), status 2."""
    spec = f"{module}:Anything"
    argv = ["eval", "--collection", COLLECTION, "--system", spec, "--out", str(tmp_path / "eval-results.json")]
    status, _, stderr = _run(argv, capsys)
    if problem is not None:
        assert (status, stderr) == (2, f"agentmemory: error: system plugin '{spec}': {problem}\n")
    else:
        assert (status, stderr) == (
            2,
            f"agentmemory: error: --system: '{spec}' (str) cannot be imported: ModuleNotFoundError: No module named "
            f"'{module}'; name an importable package.module:attribute (is the package installed?)\n",
        )
    assert "retriever" not in stderr
    assert _written(tmp_path) == []


def test_a_function_factory_that_raises_is_named_when_its_spec_is_resolved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A function factory has no declared label, so it is asked for one at resolution: its error comes first."""
    status, _, stderr = _run(_eval(tmp_path, "am_faults:raising_factory"), capsys)
    assert (status, stderr) == (
        2,
        "agentmemory: error: retriever plugin 'am_faults:raising_factory': factory raised RuntimeError: "
        "the factory broke on purpose\n",
    )
    assert _written(tmp_path) == []


def test_the_full_traceback_is_one_setting_away(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """--traceback (or AGENTMEMORY_TRACEBACK=1) shows the plugin's own frame and exception before the line."""
    spec = "am_faults:SearchRaisesKeyError"
    status, _, stderr = _run(["--traceback", *_retrieve(tmp_path, spec)], capsys)
    assert status == 2
    assert "Traceback (most recent call last)" in stderr and "KeyError: 'search broke on purpose'" in stderr
    assert stderr.splitlines()[-1].startswith(f"agentmemory: error: retriever plugin '{spec}'")
    monkeypatch.setenv("AGENTMEMORY_TRACEBACK", "1")
    status, _, again = _run(_retrieve(tmp_path, spec), capsys)
    assert status == 2 and "Traceback (most recent call last)" in again


def test_the_error_renders_as_one_line_in_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    """IPython shows _render_traceback_: the one line; with AGENTMEMORY_TRACEBACK=1 there is none, so IPython
    renders its own full traceback (the renderer every error of ours shares, agentmemory.errors)."""
    try:
        try:
            raise KeyError("x")
        except KeyError as err:
            raise PluginError.raised("retriever", "m:X", "X", "search", err) from err
    except PluginError as caught:
        error = caught
    assert error._render_traceback_() == ["PluginError: retriever plugin 'm:X' (X): search raised KeyError: 'x'"]
    monkeypatch.setenv("AGENTMEMORY_TRACEBACK", "1")
    assert not hasattr(error, "_render_traceback_")


# -- one ranking: the artifact and the exported run agree --------------------------------------------


MEASURES = {"RR": "recip_rank", "P@5": "P_5", "R@5": "recall_5", "nDCG@5": "ndcg_cut_5", "AP@5": "map_cut_5"}


def _trec_eval(runs: Path) -> dict[str, dict[str, float]]:
    [run_file] = [p for p in runs.glob("*.trec")]
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(runs / "qrels.txt"), set(MEASURES.values()))
    return evaluator.evaluate(read_run(run_file))


@pytest.mark.parametrize(
    "name", ["Good", "Tied", "Infinite", "SearchAscending", "SearchNegated", "SearchDuplicates", "SearchGhostIds"]
)
def test_the_artifact_equals_trec_eval_on_the_exported_run(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """For any plugin, the artifact's per-query values are trec_eval's on the run --runs-dir exported, or the
    plugin is refused and nothing is written.

    A plugin listing its hits in ascending score order (or with negated
    scores) was scored on the list order while its exported run, re-sorted by
    score as trec_eval does, scored differently (RR 0.5 against 0.33): one
    evaluation, two answers.  Now its ranking is refused at the boundary.
    """
    status, _, stderr = _run(_eval(tmp_path, f"am_faults:{name}"), capsys)
    if status != 0:
        assert status == 2 and f"retriever plugin 'am_faults:{name}'" in stderr
        assert _written(tmp_path) == []
        return
    artifact = read_artifact(tmp_path / "eval-results.json")
    official = _trec_eval(tmp_path / "runs")
    rows = [row for row in artifact["per_query"] if row["retriever"] == f"am_faults:{name}"]
    assert rows
    for row in rows:
        theirs = official.get(row["query_id"], {})
        for ours, measure in MEASURES.items():
            assert row["metrics"][ours] == pytest.approx(theirs.get(measure, 0.0), abs=1e-12), (row["query_id"], ours)


def test_infinite_scores_round_trip_through_the_artifact_and_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """+inf and -inf scores are written (Infinity in the artifact, inf in the TREC run) and read back as such."""
    status, _, stderr = _run(_eval(tmp_path, "am_faults:Infinite"), capsys)
    assert status == 0, stderr
    text = (tmp_path / "eval-results.json").read_text(encoding="utf-8")
    assert '"score": Infinity' in text and '"score": -Infinity' in text
    artifact = read_artifact(tmp_path / "eval-results.json")
    scores = [h["score"] for row in artifact["per_query"] for h in row["hits"]]
    assert math.inf in scores and -math.inf in scores
    [run_file] = list((tmp_path / "runs").glob("*.trec"))
    run = read_run(run_file)
    for row in artifact["per_query"]:
        assert [(h["entry_id"], h["score"]) for h in row["hits"]] == list(run.get(row["query_id"], {}).items())
    assert json.loads(text) == artifact  # Python's json reads the same tokens
