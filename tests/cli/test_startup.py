"""Start-up of the command line: a command builds its own parser only and imports only what it runs.

The whole process of ``agentmemory retrieve`` on a small collection is mostly start-up (issue 36's 10k
target), so the modules it does not use stay out of it: sqlite3 (a store file), socket (the host part of a
temporary file's name is read from ``os.uname``), difflib (only a refused option's "did you mean"), the
other built-in retrievers' modules (a registry lookup of one built-in loads that one), the evaluation's
settings (only eval's parser declares them).
"""

from __future__ import annotations

import gc
import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.cli import app, parsers
from agentmemory.cli.args import UsageError

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"

NOT_ON_THE_RETRIEVE_PATH = (
    "agentmemory.evaluation.settings",
    "agentmemory.retrievers.dense",
    "agentmemory.retrievers.hybrid",
    "agentmemory.retrievers.recency",
    "agentmemory.retrievers.tags",
    "agentmemory.store.sqlite",
    "concurrent.futures",
    "difflib",
    "socket",
    "sqlite3",
)

RETRIEVE_THEN_OPEN_A_STORE = """
import sys
from agentmemory.cli.app import main

lazy = {lazy!r}
status = main(["retrieve", "--collection", {collection!r}, "--k", "3", "--out", "run.trec", "--no-progress"])
print(status, sorted(m for m in lazy if m in sys.modules))
from agentmemory import MemoryStore

MemoryStore.open("notes.db").close()
from agentmemory.retrievers import TagScorer

print(sorted(m for m in lazy if m in sys.modules))
"""


def test_retrieve_imports_no_other_retriever_store_file_socket_or_difflib(tmp_path: Path, python_run) -> None:
    """`agentmemory retrieve` on a collection loads none of the modules it does not use (a fresh process: no other
    retriever, no store file); opening a store file and naming TagScorer afterwards load theirs, so the check
    sees an import when there is one."""
    code = RETRIEVE_THEN_OPEN_A_STORE.format(lazy=NOT_ON_THE_RETRIEVE_PATH, collection=str(GARDEN))
    done = python_run(["-c", code], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Wrote run.trec: ")
    assert lines[1:] == ["0 []", "['agentmemory.retrievers.tags', 'agentmemory.store.sqlite', 'sqlite3']"]
    assert (tmp_path / "run.trec").read_text(encoding="utf-8").count(" Q0 ") > 0


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["retrieve", "--out", "x"], "retrieve"),
        (["--traceback", "eval", "--k", "3"], "eval"),
        (["store", "stats", "s.db"], "store"),
        (["--help"], None),
        (["--version"], None),
        (["--traceback", "--help", "retrieve"], None),
        (["--bogus", "retrieve"], None),
        (["retrive", "--out", "x"], None),
        ([], None),
    ],
)
def test_the_command_is_known_only_when_nothing_but_traceback_comes_first(argv: list[str], command: str) -> None:
    """The subcommand whose parser alone is built; anything else first gets the whole parser (help, errors)."""
    assert app._command_named(argv) == command


def test_a_command_parser_alone_has_only_its_subcommand_and_the_whole_has_all() -> None:
    """build_parser("retrieve") holds retrieve's parser only; build_parser() every subcommand, in help's order."""

    def choices(parser) -> list[str]:
        return [name for action in parser._subparsers._group_actions for name in action.choices]

    assert choices(app.build_parser("retrieve")) == ["retrieve"]
    assert choices(app.build_parser()) == ["eval", "retrieve", "score", "experiment", "store", "report"]
    assert set(app._BUILDERS) == set(app._COMMANDS)


def _printed_help(run) -> str:
    """What ``run()`` prints before argparse's help exits with status 0."""
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as done:
        run()
    assert done.value.code == 0
    return out.getvalue()


@pytest.mark.parametrize("argv", [["retrieve", "--help"], ["--traceback", "store", "import", "--help"], ["--help"]])
def test_help_is_the_whole_parsers(argv: list[str]) -> None:
    """main's help (one command's parser, or the whole for --help) is the text the whole parser prints."""
    shown = _printed_help(lambda: app.main(argv))
    assert "usage: agentmemory" in shown
    assert shown == _printed_help(lambda: app.build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["retrieve", "--retriver", "bm25", "--out", "x"],
        ["retrieve"],
        ["store", "stats"],
        ["score", "q.txt", "--format", "json"],
    ],
)
def test_refusals_are_the_whole_parsers(argv: list[str], capsys) -> None:
    """A refused command line gives main the line the whole parser gives (did-you-mean included)."""
    with pytest.raises(UsageError) as whole:
        app.build_parser().parse_args(argv)
    assert app.main(argv) == 2
    assert capsys.readouterr().err == f"agentmemory: error: {whole.value}\n"


def test_main_builds_the_parser_of_the_command_it_runs_only(tmp_path: Path, monkeypatch, capsys) -> None:
    """`agentmemory retrieve` never calls another command's builder (eval's settings, store's, ...)."""

    def refuse(sub) -> None:
        raise AssertionError("another command's parser was built")

    for name, builder in app._BUILDERS.items():
        if name != "retrieve":
            monkeypatch.setattr(parsers, builder, refuse)
    out = tmp_path / "run.trec"
    assert app.main(["retrieve", "--collection", str(GARDEN), "--k", "3", "--out", str(out), "--no-progress"]) == 0
    assert out.read_text(encoding="utf-8").count(" Q0 ") > 0
    with pytest.raises(AssertionError, match="another command's parser was built"):
        app.main(["--help"])


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_the_command_imports_and_left_as_it_was(monkeypatch, enabled: bool) -> None:
    """The command's module is imported with the garbage collector off; main leaves it on or off as it found it,
    and freezes nothing in its caller's process."""
    seen = []

    def fake_import(name: str):
        seen.append((name, gc.isenabled()))
        return type("Command", (), {"run": staticmethod(lambda args: 0)})

    monkeypatch.setattr(app.importlib, "import_module", fake_import)
    was, frozen = gc.isenabled(), gc.get_freeze_count()
    (gc.enable if enabled else gc.disable)()
    try:
        assert app.main(["score", "q.txt", "r.txt"]) == 0
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [("agentmemory.cli.score_cmd", False)]
    assert gc.get_freeze_count() <= frozen  # a freeze would add every live object; frozen ones may be freed


def test_the_console_script_freezes_what_the_command_imported(monkeypatch) -> None:
    """entry_point (a process of the command's own) freezes the objects alive once the command is imported."""
    frozen_at_run = []

    def run(args) -> int:
        frozen_at_run.append(gc.get_freeze_count())
        return 0

    monkeypatch.setattr(app.importlib, "import_module", lambda name: type("Command", (), {"run": staticmethod(run)}))
    monkeypatch.setattr(app.sys, "argv", ["agentmemory", "score", "q.txt", "r.txt"])
    monkeypatch.setattr(app.sys, "path", list(app.sys.path))  # entry_point puts the working folder first
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as done:
            app.entry_point()
    finally:
        gc.unfreeze()  # the test process's objects back in the collector's care
    assert done.value.code == 0
    assert frozen_at_run[0] > 0


@pytest.mark.parametrize(("given", "seen"), [(None, "22"), ("28", "28")])
def test_openblas_idle_threads_sleep_soon_unless_the_user_said(monkeypatch, given: str | None, seen: str) -> None:
    """OPENBLAS_THREAD_TIMEOUT is 22 (~2 ms of spinning) when the command's imports run (NumPy loads OpenBLAS
    then), unless the environment already sets it."""
    at_import = []

    def fake_import(name: str):
        at_import.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
        return type("Command", (), {"run": staticmethod(lambda args: 0)})

    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", given or "unset")  # so that the test's end restores it
    if given is None:
        monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT")
    monkeypatch.setattr(app.importlib, "import_module", fake_import)
    assert app.main(["score", "q.txt", "r.txt"]) == 0
    assert at_import == [seen]
