"""A system that fails or breaks the protocol: one line naming system, scope, call and problem; exit 2; nothing written."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import faulty_systems
import pytest
from conftest import REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import MemorySystemError
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runner import evaluate, system_depth
from agentmemory.systems.checks import scrub_paths

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
FIRST = "search 'conv-1/q0' in scope conv-1"
ASKED = max(system_depth(m, 5) for m in EvalOptions().measures_for(memories=True))
"""How many memories a system is asked for at k = 5: past the deepest default token budget."""

CASES = [
    ("raise_ingest", "ingest in scope conv-1: raised RuntimeError: disk full"),
    ("raise_search", f"{FIRST}: raised RuntimeError: index corrupt"),
    ("not_list", f"{FIRST}: returned a dict, not a list of Memory"),
    ("nan", f"{FIRST}: memory 1 has the score nan; scores must be finite numbers or None"),
    ("inf", f"{FIRST}: memory 1 has the score inf; scores must be finite numbers or None"),
    (
        "too_many",
        f"{FIRST}: returned {ASKED + 1} memories for k={ASKED}; search(query, k) returns at most k",
    ),
    ("duplicate_ids", f"{FIRST}: memories 1 and 2 have the same id 'm1'"),
    (
        "leak",
        f"{FIRST}: memory 1 names the source 'conv-2/D1:1' of scope 'conv-2' (a leak between conversations)",
    ),
    ("unknown_source", f"{FIRST}: memory 1 names the source 'nowhere', which is not an entry of the collection"),
    ("not_str", f"{FIRST}: memory 1 has text b'bytes' (bytes), not a str"),
]


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


@pytest.mark.parametrize("fault,message", CASES)
def test_library_raises_one_memory_system_error(sample, fault: str, message: str) -> None:
    """evaluate(systems=...) raises MemorySystemError with the system, scope, call and problem, and closes the system."""
    before = faulty_systems.Faulty.closed
    spec = f"faulty_systems:Faulty[fault={fault}]"
    with pytest.raises(MemorySystemError) as caught:
        evaluate(sample, None, systems=[spec], k=5, relevance="provenance")
    assert str(caught.value) == f"{spec}: {message}"
    assert caught.value.system == spec and caught.value.scope == "conv-1"
    assert "\n" not in str(caught.value)
    assert faulty_systems.Faulty.closed == before + 1


@pytest.mark.parametrize("fault,message", CASES[:3] + CASES[7:8])
def test_cli_exits_2_with_one_line_and_leaves_the_artifact(tmp_path: Path, capsys, fault: str, message: str) -> None:
    """The command line prints the one line, exits 2 and leaves an existing artifact byte for byte."""
    out = tmp_path / "eval-results.json"
    out.write_bytes(b"earlier artifact")
    spec = f"faulty_systems:Faulty[fault={fault}]"
    code = main(["eval", "--collection", str(SAMPLE), "--system", spec, "--retrievers", "bm25", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"agentmemory: error: {spec}: {message}\n"
    assert out.read_bytes() == b"earlier artifact"


def test_timeout_is_an_error_naming_the_limit(sample) -> None:
    """A call that does not return within the timeout is an error; the hung worker is released afterwards."""
    spec = "faulty_systems:Faulty[fault=hang]"
    faulty_systems.released.clear()
    try:
        with pytest.raises(
            MemorySystemError,
            match=r"^faulty_systems:Faulty\[fault=hang\]: search 'conv-1/q0' in "
            r"scope conv-1: did not return within 0\.2 s \(--system-timeout\)$",
        ):
            evaluate(sample, None, systems=[spec], k=5, relevance="provenance", system_timeout=0.2)
    finally:
        faulty_systems.released.set()


def test_lenient_system_records_empty_rankings_and_lists_them(sample) -> None:
    """--lenient-system: every failing search scores as an empty ranking, listed with its message."""
    spec = "faulty_systems:Faulty[fault=raise_search]"
    evaluation = evaluate(sample, None, systems=[spec], k=5, relevance="provenance", lenient_system=True)
    result = evaluation.results[0]
    assert all(q.hits == () for q in result.per_query)
    assert all(value == 0.0 for value in result.means.values())
    failures = evaluation.systems[0].attributed.report.failures
    assert [q for q, _ in failures] == [q.id for q in sample.judged_queries]
    assert failures[0][1] == f"{spec}: {FIRST}: raised RuntimeError: index corrupt"
    assert result.params["failed_queries"][0] == {"query_id": "conv-1/q0", "error": failures[0][1]}


def test_unknown_system_lists_systems_and_retrievers(capsys) -> None:
    """An unknown --system name is one line listing the system names and the retriever names."""
    code = main(["eval", "--collection", str(SAMPLE), "--system", "nosuch"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("agentmemory: error: --system: 'nosuch' (str) is not a known name; choose from: ")
    assert "bm25" in err and "retriever" in err


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--attribution", "fuzzy"],
            "--attribution: 'fuzzy' (str) is not a known name; choose from: auto, dense, exact, overlap, sources",
        ),
        (
            ["--attribution", "exact[threshold=0.5]"],
            "--attribution parameter: 'threshold' (str) is not a parameter of exact; only overlap and dense take threshold, e.g. overlap[threshold=0.5]",
        ),
        (["--system-timeout", "0"], "--system-timeout: '0' (str) is not a number > 0; give seconds, e.g. 300"),
    ],
)
def test_bad_system_options_are_refused_first(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    """Bad --attribution or --system-timeout values are refused before anything is replayed."""
    code = main(["eval", "--collection", str(SAMPLE), "--system", "bm25", *args])
    assert code == 2
    assert capsys.readouterr().err == f"agentmemory: error: {message}\n"


@pytest.mark.parametrize(
    "fault,problem",
    [
        (
            "workdir_path",
            "raised FileNotFoundError: [Errno 2] No such file or directory: '<workdir>/index/memories.db'",
        ),
        ("machine_paths", "raised RuntimeError: no model in <cwd>/models nor ~/.cache"),
    ],
)
def test_lenient_artifact_carries_no_path_of_this_machine(tmp_path: Path, capsys, fault: str, problem: str) -> None:
    """--lenient-system: a system's message naming its workdir, the current or home folder is scrubbed in the artifact."""
    out = tmp_path / "eval-results.json"
    spec = f"faulty_systems:Faulty[fault={fault}]"
    args = ["eval", "--collection", str(SAMPLE), "--system", spec, "--retrievers", "", "--lenient-system"]
    assert main([*args, "--out", str(out)]) == 0
    capsys.readouterr()
    artifact = json.loads(out.read_text(encoding="utf-8"))
    (system,) = [r for r in artifact["params"]["retrievers"] if r["name"] == spec]
    failed = system["params"]["failed_queries"]
    assert failed and failed[0] == {"query_id": "conv-1/q0", "error": f"{spec}: {FIRST}: {problem}"}
    text = out.read_text(encoding="utf-8")
    for folder in (tempfile.gettempdir(), str(Path.cwd()), str(Path.home()), str(tmp_path)):
        assert folder not in text


def test_scrub_paths_keeps_lookalike_folders() -> None:
    """Only whole folder names are replaced: a sibling whose name extends the folder's stays as it is."""
    work = Path(tempfile.gettempdir()) / "agentmemory-system-abc"
    text = f"{work}/a and {work}x/b and {work}.old and {tempfile.gettempdir()}/other"
    assert (
        scrub_paths(text, work)
        == "<workdir>/a and <tmp>/agentmemory-system-abcx/b and <tmp>/agentmemory-system-abc.old and <tmp>/other"
    )
