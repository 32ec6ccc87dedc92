"""The plugin boundary holds against hostile memory systems and retrievers (``am_systems``).

A plugin may do anything: change the working folder, end with ``SystemExit``
or a ``BaseException`` of its own, return text no UTF-8 file can hold or
parameters no JSON can, change the list of turns it was handed.  Through the
command line each is one of two things: the run goes on as if the plugin
had behaved (the working folder, the turns), or it stops with exit status 2
and one line naming the plugin, the scope and the call, with every output
as it was.  Outputs go where the command line said, whatever the working
folder is by the time they are written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import am_systems
import pytest
from conftest import REPO_ROOT

from agentmemory.analysis.artifact import read_artifact
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import MemorySystemError, PluginError
from agentmemory.retrievers.guard import PluginBoundary, plain_json
from agentmemory.systems import Memory
from agentmemory.systems.registry import resolve_system
from agentmemory.systems.replay import replay

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
FIRST = "search 'conv-1/q0' in scope conv-1"


def _spec(fault: str) -> str:
    return f"am_systems:Hostile[fault={fault}]"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder ``tmp_path``, with the collection at ``elsewhere/loc.json``, where the plugins wander."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(SAMPLE, elsewhere / "loc.json")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(am_systems, "ELSEWHERE", str(elsewhere))
    return tmp_path


# -- the working folder -------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["start", "ingest", "search", "params", "close"])
def test_a_system_that_changes_the_working_folder_moves_no_output(
    world: Path, call: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A system calling os.chdir in any call: the input stays as it was, every output lands where the command
    line said (relative to the folder it was typed in), and the working folder is the same after the run."""
    before = (world / "elsewhere" / "loc.json").read_bytes()
    argv = ["eval", "--collection", "elsewhere/loc.json", "--retrievers", "bm25", "--system", _spec(f"chdir_{call}")]
    argv += ["--out", "loc.json", "--runs-dir", "runs", "--table-out", "table.md"]
    status, out, err = _run(argv, capsys)
    assert (status, err) == (0, "")
    tail = out.splitlines()[-3:]  # "Wrote ...", then how deep the runs go and which queries qrels.txt holds
    assert "Wrote loc.json, table.md and TREC runs in runs" in tail
    assert tail[-1].startswith("runs/qrels.txt holds the judgments of the 6 headline queries")
    assert (world / "elsewhere" / "loc.json").read_bytes() == before
    assert _files(world / "elsewhere") == ["loc.json"]
    key = f"am_systems-Hostile-fault=chdir_{call}"
    assert _files(world) == [
        "elsewhere/loc.json",
        "loc.json",
        f"runs/{key}.memories.jsonl",
        f"runs/{key}.trec",
        "runs/bm25.trec",
        "runs/qrels-all.txt",
        "runs/qrels.txt",
        "table.md",
    ]
    artifact = read_artifact(world / "loc.json")
    assert [r["name"] for r in artifact["params"]["retrievers"]] == ["bm25", _spec(f"chdir_{call}")]
    assert Path.cwd() == world


def test_a_retriever_that_changes_the_working_folder_moves_no_output(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin retriever calling os.chdir in add, search and params: outputs where asked; the folder is put back."""
    argv = ["eval", "--collection", "elsewhere/loc.json", "--retrievers", "am_systems:Wandering"]
    status, out, err = _run([*argv, "--out", "loc.json", "--runs-dir", "runs", "--table-out", "t.csv"], capsys)
    assert (status, err) == (0, "")
    assert _files(world / "elsewhere") == ["loc.json"]
    assert _files(world) == [
        "elsewhere/loc.json",
        "loc.json",
        "runs/am_systems-Wandering.trec",
        "runs/qrels-all.txt",
        "runs/qrels.txt",
        "t.csv",
    ]
    assert Path.cwd() == world


def test_the_boundary_puts_the_working_folder_back_after_every_call(world: Path) -> None:
    """PluginBoundary.call goes back to the folder it started in, whether the call returned or raised."""

    class Boundary(PluginBoundary):
        kind = "retriever"

    boundary = Boundary("mine:Plugin", "Mine")
    assert boundary.call("add", os.chdir, "elsewhere") is None
    assert Path.cwd() == world

    def wander_and_fail() -> None:
        os.chdir("elsewhere")
        raise SystemExit(4)

    with pytest.raises(PluginError, match=r"^retriever plugin 'mine:Plugin' \(Mine\): search raised SystemExit: 4$"):
        boundary.call("search", wander_and_fail)
    assert Path.cwd() == world


GRID = """
name = "wander"
k = [5]
relevance = "provenance"
systems = ["bm25", {{ system = "{spec}" }}]

[[collections]]
path = "elsewhere/loc.json"
name = "loc"
"""


@pytest.mark.parametrize("out", [["--out", "grid-out"], []], ids=["out", "default-out"])
def test_a_grid_whose_system_changes_the_working_folder_writes_where_asked(
    world: Path, out: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """agentmemory experiment with a chdir-ing system: results.json, per_query.csv, tasks/ and tables/ in --out
    (or experiments/<grid name>) of the folder the command was typed in; nothing lands elsewhere."""
    (world / "grid.toml").write_text(GRID.format(spec=_spec("chdir_ingest")), encoding="utf-8")
    status, printed, err = _run(["experiment", "grid.toml", "--no-progress", *out], capsys)
    folder = out[1] if out else "experiments/wander"
    assert (status, err) == (0, "")
    assert printed.splitlines()[-1] == f"Wrote {folder}/: results.json, per_query.csv, tables/"
    assert _files(world / "elsewhere") == ["loc.json"]
    written = _files(world / folder)
    assert written[:2] == ["per_query.csv", "results.json"] and written[2:3] == ["tables/loc.md"]
    assert len([w for w in written if w.startswith("tasks/")]) == 2
    assert Path.cwd() == world


# -- SystemExit and every other BaseException ---------------------------------------------------

EXITS = [
    ("exit0_ingest", "ingest in scope conv-1: raised SystemExit: 0"),
    ("exit3_search", f"{FIRST}: raised SystemExit: 3"),
    ("exit3_start", "start in scope conv-1: raised SystemExit: 3"),
    ("exit3_params", "params in scope conv-1: raised SystemExit: 3"),
    ("exit3_close", "close in scope conv-1: raised SystemExit: 3"),
    ("generatorexit_search", f"{FIRST}: raised GeneratorExit"),
    ("stop_search", f"{FIRST}: raised Stop: stopped on purpose"),
]


@pytest.mark.parametrize("timeout", [[], ["--system-timeout", "30"]], ids=["in-thread", "worker-thread"])
@pytest.mark.parametrize(("fault", "message"), EXITS, ids=[f for f, _ in EXITS])
def test_system_exit_in_a_system_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, message: str, timeout: list[str]
) -> None:
    """sys.exit(0), sys.exit(3), GeneratorExit or a BaseException of the system's own, in the factory, ingest,
    search, params or close (run here or in the deadline's worker thread): one line naming the system, the
    scope and the call; exit status 2; the artifact already there unchanged."""
    artifact = tmp_path / "eval-results.json"
    artifact.write_text("kept\n", encoding="utf-8")
    argv = ["eval", "--collection", str(SAMPLE), "--system", _spec(fault), "--out", str(artifact), *timeout]
    status, out, err = _run(argv, capsys)
    assert (status, out) == (2, "")
    assert err == f"agentmemory: error: {_spec(fault)}: {message}\n"
    assert artifact.read_text(encoding="utf-8") == "kept\n"


def test_system_exit_in_a_grid_fails_its_task_only(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sys.exit(3) in a system's search inside a grid: that task fails with the one line, the others are
    written, and the command exits 1 (a failed task), not 3."""
    (world / "grid.toml").write_text(GRID.format(spec=_spec("exit3_search")), encoding="utf-8")
    status, printed, err = _run(["experiment", "grid.toml", "--out", "out", "--no-progress"], capsys)
    assert status == 1
    assert err == (
        f"agentmemory: task failed: collection loc, system {_spec('exit3_search')}, k 5, seed 7: "
        f"{_spec('exit3_search')}: {FIRST}: raised SystemExit: 3\n"
    )
    assert printed.splitlines()[0] == "Experiment wander: 2 tasks: 0 reused, 1 computed, 1 failed; 1 evaluations."
    results = json.loads((world / "out" / "results.json").read_text(encoding="utf-8"))
    assert [s["name"] for e in results["evaluations"] for s in e["systems"]] == ["bm25"]


# -- values nothing could write -----------------------------------------------------------------

REFUSED = [
    (
        "surrogate_text",
        f"{FIRST}: memory 1 has text 'caf\\udce9' holding the character '\\udce9', which UTF-8 cannot encode",
    ),
    (
        "surrogate_id",
        f"{FIRST}: memory 1 has id 'm-\\ud800' holding the character '\\ud800', which UTF-8 cannot encode",
    ),
    (
        "surrogate_source",
        f"{FIRST}: memory 1 has the source 'conv-1/\\ud800' holding the character '\\ud800', which UTF-8 cannot encode",
    ),
    (
        "params_set",
        "params in scope conv-1: returned a dict which JSON cannot hold: the value at ['tags'] is a set "
        "(strings, finite numbers, booleans, None, lists and dicts with string keys)",
    ),
    (
        "params_nan",
        "params in scope conv-1: returned a dict which JSON cannot hold: the value at ['threshold'] is nan; "
        "JSON holds finite numbers only",
    ),
    (
        "params_key",
        "params in scope conv-1: returned a dict which JSON cannot hold: the dict has the key 1 (int); "
        "keys must be strings",
    ),
]


@pytest.mark.parametrize("out", [False, True], ids=["no-out", "out"])
@pytest.mark.parametrize(("fault", "message"), REFUSED, ids=[f for f, _ in REFUSED])
def test_a_value_no_writer_can_hold_is_refused_where_it_enters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, message: str, out: bool
) -> None:
    """A lone surrogate in a memory's text, id or source, a set, NaN or an int key in params(): one line naming
    the system, the scope, the call (and the query and the memory's position), exit 2, with or without --out."""
    argv = ["eval", "--collection", str(SAMPLE), "--system", _spec(fault)]
    argv += ["--out", str(tmp_path / "e.json"), "--runs-dir", str(tmp_path / "runs")] if out else []
    status, printed, err = _run(argv, capsys)
    assert (status, printed) == (2, "")
    assert err == f"agentmemory: error: {_spec(fault)}: {message}\n"
    assert _files(tmp_path) == []


def test_a_lenient_failure_whose_message_utf8_cannot_encode_is_written_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--lenient-system records a failing search's message in the artifact: a lone surrogate in it is written
    as its escape, so the artifact is written (exit 0) and holds the message."""
    out = tmp_path / "e.json"
    argv = ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--lenient-system"]
    status, printed, err = _run([*argv, "--system", _spec("raise_surrogate"), "--out", str(out)], capsys)
    assert (status, err) == (0, "")
    [system] = read_artifact(out)["params"]["retrievers"]
    failed = system["params"]["failed_queries"][0]
    assert failed == {
        "query_id": "conv-1/q0",
        "error": f"{_spec('raise_surrogate')}: {FIRST}: raised RuntimeError: caf\\udce9 broke",
    }


def test_a_retriever_whose_params_hold_a_set_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A plugin retriever's params() with a set: one line naming it, exit 2 (the artifact writer never sees it)."""
    status, printed, err = _run(["eval", "--retrievers", "am_systems:ParamsSet"], capsys)
    assert (status, printed) == (2, "")
    assert err == (
        "agentmemory: error: retriever plugin 'am_systems:ParamsSet' (Params set): params returned a dict which "
        "JSON cannot hold: the value at ['stopwords'] is a set (strings, finite numbers, booleans, None, lists and "
        "dicts with string keys)\n"
    )


def test_plain_json_copies_into_json_types_and_names_what_it_refuses() -> None:
    """Tuples become lists, number types their plain forms; the first part JSON cannot hold is named by path."""
    import numpy as np

    copied = plain_json({"k1": np.float64(0.9), "n": np.int64(3), "seq": (1, "a", None, True), "d": {"x": [2.5]}})
    assert copied == {"k1": 0.9, "n": 3, "seq": [1, "a", None, True], "d": {"x": [2.5]}}
    assert [type(copied["k1"]), type(copied["n"]), type(copied["seq"])] == [float, int, list]
    cases = [
        ({"a": [1, {"b": float("inf")}]}, "the value at ['a'][1]['b'] is inf; JSON holds finite numbers only"),
        ({"a": {(1, 2): 0}}, "the dict at ['a'] has the key (1, 2) (tuple); keys must be strings"),
        ({"a": b"x"}, "the value at ['a'] is a bytes (strings, finite numbers, booleans, None, lists and dicts "),
        ({"a": "\udcff"}, "the value at ['a'] holds the character '\\udcff', which UTF-8 cannot encode"),
        ({"a": 10**5000}, "the value at ['a'] is an integer of more than 4,300 digits"),
    ]
    for value, message in cases:
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            plain_json(value)
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match=r"^the value is nested too deeply \(or holds itself\)$"):
        plain_json({"a": looped})


def test_sources_given_as_a_list_are_accepted_as_a_tuple(sample, capsys: pytest.CaptureFixture[str]) -> None:
    """Memory(sources=[...]) holds a tuple; a system whose memories' sources are lists (set past the record)
    is replayed as one giving tuples: the same answers, and eval scores it (exit 0)."""
    assert Memory("x", sources=["a", "b"]).sources == ("a", "b")  # type: ignore[arg-type]
    listed = replay(resolve_system(_spec("list_sources")), sample, depth=5)
    plain = replay(resolve_system(_spec("none")), sample, depth=5)
    assert listed.answers == plain.answers
    assert all(type(m.sources) is tuple for answer in listed.answers.values() for m in answer)
    status, printed, err = _run(["eval", "--collection", str(SAMPLE), "--system", _spec("list_sources")], capsys)
    assert (status, err) == (0, "")


def test_a_grade_past_the_range_in_a_judgment_patch_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 401-digit grade in a --qrels-patch line: one line naming the file, the line and the range; exit 2."""
    patch = tmp_path / "fixes.jsonl"
    lines = [("conv-2/D2:4", 1), ("conv-2/D2:5", 10**400)]
    patch.write_text(
        "".join(
            json.dumps({"query_id": "conv-2/q2", "entry_id": e, "grade": g, "reason": "r"}) + "\n" for e, g in lines
        ),
        encoding="utf-8",
    )
    status, printed, err = _run(["eval", "--collection", str(SAMPLE), "--qrels-patch", str(patch)], capsys)
    assert (status, printed) == (2, "")
    assert err == (
        f"agentmemory: error: {patch}:2: grade 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000... (401 characters) is outside -32768..32767, the grades "
        "trec_eval and pytrec_eval score; give a grade such as 1 or 0\n"
    )


# -- the turns handed to ingest -----------------------------------------------------------------


@pytest.mark.parametrize("fault", ["empty_turns", "pop_turn"])
def test_a_system_that_changes_its_turns_changes_nothing_of_the_replay(
    sample, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A system that empties the list of turns it was given, or pops one, is replayed as one that kept it:
    the same answers as a system that leaves it alone, no ZeroDivisionError, no false 'not ingested yet'."""
    changed = replay(resolve_system(_spec(fault)), sample, depth=5)
    plain = replay(resolve_system(_spec("none")), sample, depth=5)
    assert changed.answers == plain.answers and changed.answers
    status, printed, err = _run(["eval", "--collection", str(SAMPLE), "--system", _spec(fault)], capsys)
    assert (status, err) == (0, "")


# -- what cannot be caught in the process ------------------------------------------------------


@pytest.fixture
def plugin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This folder on PYTHONPATH, so worker processes import am_systems too."""
    here = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])]))


def test_os_exit_in_a_grid_worker_fails_the_grid(
    world: Path, plugin_path: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """os._exit(0) in a system running in a process pool's worker: the grid says the task failed, exits 1."""
    (world / "grid.toml").write_text(GRID.format(spec=_spec("osexit_search")), encoding="utf-8")
    argv = ["experiment", "grid.toml", "--out", "out", "--no-progress", "--executor", "processes", "--workers", "1"]
    status, printed, err = _run(argv, capsys)
    assert status == 1
    assert f"agentmemory: task failed: collection loc, system {_spec('osexit_search')}, k 5, seed 7: " in err


def test_os_exit_in_a_replay_worker_is_the_scope_error(sample, plugin_path: None) -> None:
    """replay(executor=a process pool) with a system calling os._exit: a MemorySystemError naming the scope."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with (
        ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool,
        pytest.raises(MemorySystemError) as caught,
    ):
        replay(resolve_system(_spec("osexit_search")), sample, depth=5, executor=pool)
    assert str(caught.value) == (
        f"{_spec('osexit_search')}: replay in scope conv-1: the worker process ended during the scope "
        "(BrokenProcessPool): did the system exit or crash?"
    )
