"""Issue 31's second half: no process outlives a run, lenient is lenient, messages name what the user typed.

* Processes: a hung MCP server is gone after ``--system-timeout`` (closed, its group killed), and a Python
  system's own child process is ended with its scope; the processes descended from this one are listed from
  ``/proc`` before and after (Linux).
* ``--lenient-system``: a timed-out call (start, ingest or search) lists every query of its scope not yet
  answered and the run goes on; an MCP tool error's text is scrubbed of this machine's folders.
* Messages name the option (``--system``, ``--attribution``, ``--tokenizer``, a grid key), and empty
  values are refused.
* A grid's task key holds the plugin's code: a changed module file is computed again, an unchanged one reused.
* A grid path that is a folder is called a folder; an empty store's export is refused in one line.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import am_processes
import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory import MemoryStore
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import InputError
from agentmemory.evaluation.runner import evaluate
from agentmemory.experiment import parse_grid, run_experiment
from agentmemory.metrics.token_counters import DEFAULT_TOKEN_COUNTER, TOKEN_COUNTERS

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
SYSTEMS_TESTS = REPO_ROOT / "tests" / "systems"
FAKE_SERVER = SYSTEMS_TESTS / "fake_mcp_server.py"
FAKE_PROFILE = SYSTEMS_TESTS / "fake-profile.toml"

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the processes are read from /proc")


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


def _scopes(sample) -> dict[str, list[str]]:
    """The judged query ids of each scope, in the collection's order."""
    scopes: dict[str, list[str]] = {}
    for query in sample.judged_queries:
        scopes.setdefault(query.scope, []).append(query.id)
    return scopes


# -- processes, listed from /proc ---------------------------------------------------------------------------------
def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _processes_below(root: int) -> set[int]:
    """Every running process descended from ``root`` (a zombie has ended: it only waits to be collected)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (found := _stat(int(name))) is not None and found[0] not in ("Z", "X"):
            parent[int(name)] = found[1]
    below: set[int] = set()
    grew = True
    while grew:
        more = {pid for pid, up in parent.items() if (up == root or up in below) and pid not in below}
        below |= more
        grew = bool(more)
    return below


def _left(pids: list[int]) -> list[tuple[int, tuple[str, int] | None]]:
    """The pids still running (a zombie has ended)."""
    states = [(pid, _stat(pid)) for pid in pids]
    return [(pid, s) for pid, s in states if s is not None and s[0] not in ("Z", "X")]


def _mcp(mode: str, pids: Path) -> str:
    command = f"{sys.executable} {FAKE_SERVER} {mode} {pids}"
    return f'mcp[profile={FAKE_PROFILE},command="{command}"]'


@linux
def test_a_hung_mcp_server_is_gone_after_the_system_timeout(tmp_path: Path, python_run) -> None:
    """A server that never answers: `agentmemory eval` prints one line and nothing else, and the server is
    gone when the command has returned (the replay closes a system whose call timed out: the server's group is
    killed after its grace period)."""
    pytest.importorskip("mcp", reason="the mcp extra (the MCP SDK) is not installed")
    pids = tmp_path / "pids"
    spec = _mcp("hang", pids)
    # 5 s: a new process starts the MCP SDK and the server within the deadline too, even on a busy machine
    args = ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--system", spec, "--system-timeout", "5"]
    done = python_run(["-m", "agentmemory", *args], cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"agentmemory: error: {spec}: search 'conv-1/q0' in scope conv-1: did not return within 5 s "
        "(--system-timeout)\n"
    )
    servers = [int(p) for p in pids.read_text().split()]
    assert len(servers) == 1
    assert _left(servers) == []


@linux
def test_lenient_hung_mcp_servers_are_gone_and_the_run_goes_on(tmp_path: Path, capsys, sample) -> None:
    """Under --lenient-system each scope's hung server times out, every query is listed as failed, each server
    is gone, and the command succeeds."""
    pytest.importorskip("mcp", reason="the mcp extra (the MCP SDK) is not installed")
    pids, out = tmp_path / "pids", tmp_path / "eval-results.json"
    spec = _mcp("hang", pids)
    args = ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--system", spec, "--lenient-system"]
    assert main([*args, "--system-timeout", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    (system,) = json.loads(out.read_text(encoding="utf-8"))["params"]["retrievers"]
    failed = system["params"]["failed_queries"]
    scopes = _scopes(sample)
    assert [f["query_id"] for f in failed] == [q for ids in scopes.values() for q in ids]
    servers = [int(p) for p in pids.read_text().split()]
    assert len(servers) == len(scopes)
    assert _left(servers) == []


@linux
def test_a_python_systems_child_process_is_ended_with_its_scope(sample) -> None:
    """A system that starts a child and never ends it: after the run, no process it started is left (the
    processes below this one are the same before and after, and none of the children runs)."""
    am_processes.started.clear()
    before = _processes_below(os.getpid())
    evaluate(sample, None, systems=["am_processes:Spawner"], k=5, relevance="provenance")
    assert len(am_processes.started) == len(_scopes(sample))
    assert _left(am_processes.started) == []
    assert _processes_below(os.getpid()) == before


def test_end_processes_ends_what_ignores_sigterm(tmp_path: Path) -> None:
    """A process that ignores SIGTERM gets SIGKILL after the grace period; its exit status is its Popen's."""
    import subprocess

    from agentmemory.systems.processes import children_ended

    ready = tmp_path / "ready"
    code = (
        "import signal, time, pathlib; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(600)"
    )
    with children_ended(grace=0.2):
        child = subprocess.Popen([sys.executable, "-c", code])
        for _ in range(500):
            if ready.exists():
                break
            __import__("time").sleep(0.01)
    if sys.platform.startswith("linux"):
        assert _left([child.pid]) == []
    assert child.wait(timeout=5) == -9  # SIGKILL, collected by its owner


# -- lenient ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("at", ["start", "ingest", "search"])
def test_lenient_timeouts_list_every_unanswered_query_and_go_on(sample, at: str) -> None:
    """--lenient-system with --system-timeout: a call that times out lists every query of its scope, each
    with that call's message, the system is still closed, and the next scope is replayed (no error)."""
    spec = f"am_processes:Hangs[at={at}]"
    am_processes.released.clear()
    closed = am_processes.Hangs.closed
    try:
        evaluation = evaluate(
            sample, None, systems=[spec], k=5, relevance="provenance", system_timeout=0.3, lenient_system=True
        )
    finally:
        am_processes.released.set()
    scopes = _scopes(sample)
    expected = []
    for scope, ids in scopes.items():
        call = {"start": "start", "ingest": "ingest", "search": f"search {ids[0]!r}"}[at]
        key = "am_processes:Hangs" if at == "search" else spec  # the key leaves out a default parameter
        line = f"{key}: {call} in scope {scope}: did not return within 0.3 s (--system-timeout)"
        expected += [(qid, line) for qid in ids]
    assert list(evaluation.systems[0].attributed.report.failures) == expected
    assert all(q.hits == () for q in evaluation.results[0].per_query)
    assert am_processes.Hangs.closed == closed + (0 if at == "start" else len(scopes))


@linux
def test_an_mcp_tool_error_is_scrubbed_of_this_machines_folders(tmp_path: Path, capsys, monkeypatch) -> None:
    """An MCP server's tool error naming its workdir, the current folder, home and the temporary folder goes
    into the artifact under --lenient-system with those folders replaced, whichever adapter raised it."""
    pytest.importorskip("mcp", reason="the mcp extra (the MCP SDK) is not installed")
    shutil.copy(FAKE_SERVER, tmp_path / "fake_mcp_server.py")
    profile = FAKE_PROFILE.read_text(encoding="utf-8") + '\n[env]\nWORKDIR = "{workdir}"\n'
    (tmp_path / "p.toml").write_text(profile.replace("batch_size = 2\n", "batch_size = 2\n"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the spec names no folder: the server and profile are found from here
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    spec = 'mcp[profile=p.toml,command="python fake_mcp_server.py tool-error"]'
    args = ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--system", spec, "--lenient-system"]
    assert main([*args, "--out", "eval-results.json"]) == 0
    capsys.readouterr()
    text = (tmp_path / "eval-results.json").read_text(encoding="utf-8")
    (system,) = json.loads(text)["params"]["retrievers"]
    assert system["params"]["failed_queries"][0] == {
        "query_id": "conv-1/q0",
        "error": f"{spec}: search (tool recall) in scope conv-1: the tool answered an error: no index at "
        "<workdir>/index.db (cwd <cwd>, cache ~/.cache, scratch <tmp>/scratch)",
    }
    for folder in (tempfile.gettempdir(), str(tmp_path), str(Path.home())):
        assert folder not in text


# -- option names and empty values ---------------------------------------------------------------------------------
GRAMMAR = (
    "write NAME, NAME[key=value,...] or package.module:attribute[key=value,...]; a value is a number, true, "
    "false, null, a \"quoted string\", a bare token, a nested spec, or items joined by '+'"
)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--system", ""], f"--system: '' (str) is empty; {GRAMMAR}"),
        (["--system", "bm25["], f"--system: 'bm25[' (str) has a '[' without its ']'; {GRAMMAR}"),
        (["--system", "mcp[profile=]"], f"--system: 'mcp[profile=]' (str) has an empty value; {GRAMMAR}"),
        (
            ["--system", "mcp[x=1]"],
            "--system mcp parameter: 'x' (str) is not a known name; choose from: batch_size, command, profile, timeout",
        ),
        (
            ["--system", "nowhere_module:X"],
            "--system: 'nowhere_module:X' (str) cannot be imported: ModuleNotFoundError: No module named "
            "'nowhere_module'; name an importable package.module:attribute (is the package installed?)",
        ),
        (["--attribution", ""], f"--attribution: '' (str) is empty; {GRAMMAR}"),
        (["--attribution", "overlap["], f"--attribution: 'overlap[' (str) has a '[' without its ']'; {GRAMMAR}"),
        (
            ["--attribution", "overlap[threshold=2]"],
            "--attribution threshold: 2 (int) is not a number in [0, 1]; write e.g. overlap[threshold=0.5]",
        ),
        (
            ["--tokenizer", ""],
            f"--tokenizer: '' (str) is empty; choose from: {', '.join(sorted(TOKEN_COUNTERS.names()))} (leave it out "
            f"for the default, {DEFAULT_TOKEN_COUNTER})",
        ),
        (["--retrievers", "bm25[k1"], f"--retrievers: 'bm25[k1' (str) has a '[' without its ']'; {GRAMMAR}"),
    ],
)
def test_spec_errors_name_the_option_typed(capsys, args: list[str], message: str) -> None:
    """Every spec error names the option the user typed, not 'retriever spec'; an empty value is refused."""
    code = main(["eval", "--collection", str(SAMPLE), "--system", "bm25", *args])
    assert code == 2
    assert capsys.readouterr().err == f"agentmemory: error: {message}\n"


@pytest.mark.parametrize(
    "systems,message",
    [
        ('["bm25["]', f"systems: 'bm25[' (str) has a '[' without its ']'; {GRAMMAR}"),
        ('[{ system = "bm25[" }]', f"systems system: 'bm25[' (str) has a '[' without its ']'; {GRAMMAR}"),
        ('[{ system = "" }]', "systems system: '' (str) is not a non-empty string"),
        ('[""]', f"systems: '' (str) is empty; {GRAMMAR}"),
        (
            '[{ retriever = "bm25", params = { k1 = "" } }]',
            "systems params: k1 = '' is empty; give a value, or leave k1 out",
        ),
        (
            '[{ retriever = "bm25", grid = { k1 = [0.9, ""] } }]',
            "systems grid: k1 = [0.9, ''] holds an empty value; give each a value",
        ),
    ],
)
def test_grid_spec_errors_name_the_key(systems: str, message: str) -> None:
    """In a grid file, a spec's error names the key it was written under, after the file and line."""
    text = f'systems = {systems}\n[[collections]]\npath = "{FIXTURE_DIR.as_posix()}"\n'
    with pytest.raises(InputError) as caught:
        parse_grid(text, source="grid.toml")
    assert str(caught.value) == f"grid.toml:1: {message}"


# -- resume after a code change ------------------------------------------------------------------------------------
PLUGIN = """
from agentmemory.retrievers import BM25
from agentmemory.systems import Memory


class Mine(BM25):
    name = "mine"
    label = "Mine"


class System:
    def __init__(self):
        self.turns = []

    def ingest(self, turns):
        self.turns.extend(turns)

    def search(self, query, k):
        words = set(query.lower().split())
        found = [t for t in self.turns if words & set(t.text.lower().split())]
        return [Memory(t.text, score=1.0, id=t.entry_id, sources=(t.entry_id,)) for t in found[:k]]

    def close(self):
        pass
"""


def test_a_grid_recomputes_a_plugin_whose_code_changed(tmp_path: Path, monkeypatch) -> None:
    """A rerun reuses every task while the plugin's module file is unchanged; once it changes, the tasks of
    its retriever and memory system are computed again, and bm25's are still reused."""
    module = tmp_path / "plugin_mem.py"
    module.write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plugin_mem", raising=False)
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'systems = ["bm25", "plugin_mem:Mine", { system = "plugin_mem:System" }]\n'
        f'[[collections]]\npath = "{SAMPLE.as_posix()}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"

    def counts() -> tuple[int, int]:
        result = run_experiment(grid, out=out)
        assert result.ok
        return result.reused, result.computed

    assert counts() == (0, 3)
    assert counts() == (3, 0)  # unchanged: reused
    module.write_text(PLUGIN.replace('label = "Mine"', 'label = "Mine"\n    k1 = 1.2'), encoding="utf-8")
    del sys.modules["plugin_mem"]  # as a new process would: the changed file is what runs
    assert counts() == (1, 2)  # bm25 reused, the plugin's two tasks computed again
    assert counts() == (3, 0)


# -- the older cases -----------------------------------------------------------------------------------------------
def test_a_grid_path_that_is_a_folder_is_called_a_folder(tmp_path: Path, capsys) -> None:
    """`agentmemory experiment FOLDER` says it is a folder, in one line (not "no such grid file")."""
    assert main(["experiment", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: {tmp_path}: is a folder, not a grid file; give the path of a grid's .toml file\n"
    )


def test_an_empty_stores_export_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    """A store without entries is not exported (no loader reads a corpus without entries); nothing is written.
    A store with entries exports to a folder that loads back."""
    empty = tmp_path / "empty.db"
    MemoryStore.open(empty).close()
    assert main(["store", "export", str(empty), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: {empty}: holds no entries, and a collection folder without entries does not load, so "
        "nothing was exported; add entries first (agentmemory store import, or MemoryStore.add), then export\n"
    )
    assert not (tmp_path / "out").exists()
    full = tmp_path / "full.db"
    assert main(["store", "import", str(full), str(FIXTURE_DIR)]) == 0
    assert main(["store", "export", str(full), str(tmp_path / "back")]) == 0
    capsys.readouterr()
    assert len(load(tmp_path / "back").entries) == len(load(FIXTURE_DIR).entries)
