"""The docs teach by example: every page opens with one, and every example still prints what the page says.

An example is a fenced block of one of two kinds:

* ``console``: lines starting ``$ `` are shell commands (a line ending in ``\\`` continues on the next), the
  lines after one its output; a line ``...`` alone stands for any number of output lines (the page shows the
  part it talks about);
* ``pycon``: a Python session (``>>>`` and ``...`` prompts, the output after), checked by :mod:`doctest` with
  ``ELLIPSIS`` (``...`` inside an output line stands for anything).

Each page's examples run in order, in one fresh folder holding links to the repository's ``fixtures/`` and
``examples/`` (so the relative paths the pages use resolve, and what an example writes lands in the
folder), with the installed ``agentmemory`` first on ``PATH``.  The outputs on the pages were produced by
running the commands; when the code changes what a command prints, this test shows the new output to paste.
"""

from __future__ import annotations

import contextlib
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from plugins import restored

DOCS = REPO_ROOT / "docs"
TIMEOUT = 300
FENCE = re.compile(r"^```(console|pycon)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXEMPT = {
    "changelog.md": "the changelog is a record of changes, not something to run",
    "architecture.md": "the map of the code (ARCHITECTURE.md, which tests/architecture reads): its pages hold the examples",
}
"""Pages that need not open with an example, each with why."""


def _pages() -> list[Path]:
    return sorted([*DOCS.glob("*.md"), *DOCS.glob("protocols/*.md")])


def _source(page: Path) -> str:
    """The page's Markdown with each ``--8<-- "FILE"`` line replaced by the file (as pymdownx.snippets does)."""
    text = page.read_text(encoding="utf-8")
    return re.sub(
        r'^--8<-- "([^"]+)"$', lambda m: (REPO_ROOT / m[1]).read_text(encoding="utf-8"), text, flags=re.MULTILINE
    )


def _commands(block: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of a console block."""
    out: list[tuple[str, list[str]]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"console block: output before any command: {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\"):  # continued: bash reads the backslash-newline as a space
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        out.append((command, expected))
    return out


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` with each ``...`` line standing for any run of lines (none included);
    trailing blank lines and trailing spaces do not count."""
    expected = [line.rstrip() for line in expected]
    actual = [line.rstrip() for line in actual]
    while actual and not actual[-1]:
        actual.pop()
    while expected and not expected[-1]:
        expected.pop()
    segments: list[list[str]] = [[]]
    for line in expected:
        if line == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    if len(segments) == 1:
        return actual == expected
    first, *middle, last = segments
    end = len(actual) - len(last)
    if actual[: len(first)] != first or end < len(first) or actual[end:] != last:
        return False
    position = len(first)
    for segment in middle:
        found = next(
            (i for i in range(position, end - len(segment) + 1) if actual[i : i + len(segment)] == segment), None
        )
        if found is None:
            return False
        position = found + len(segment)
    return True


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fresh folder where the pages' relative paths (fixtures/, examples/) resolve."""
    for name in ("fixtures", "examples"):
        (tmp_path / name).symlink_to(REPO_ROOT / name)
    return tmp_path


def _run_console(block: str, workdir: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("AGENTMEMORY_TRACEBACK", None)
    env["COLUMNS"] = "100"
    for command, expected in _commands(block):
        done = subprocess.run(
            ["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        actual = (done.stdout + done.stderr).splitlines()
        assert _matches(expected, actual), f"$ {command}\nprinted:\n" + "\n".join(actual)


def _run_pycon(block: str, workdir: Path, name: str, globs: dict) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block, globs, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    before = Path.cwd()
    os.chdir(workdir)
    try:
        messages: list[str] = []
        runner.run(test, out=messages.append)
    finally:
        os.chdir(before)
    assert runner.failures == 0, "".join(messages)


def test_every_page_opens_with_an_example() -> None:
    """Every page (but those of EXEMPT) has a console or pycon block before its first second-level heading."""
    missing = []
    for page in _pages():
        name = page.relative_to(DOCS).as_posix()
        if name in EXEMPT:
            continue
        text = _source(page)
        head = re.split(r"^## ", text, maxsplit=1, flags=re.MULTILINE)[0]
        if not FENCE.search(head):
            missing.append(name)
    assert missing == [], f"pages without an example before their first ## heading: {missing}"


@pytest.mark.parametrize("page", [p for p in _pages() if FENCE.search(_source(p))], ids=lambda p: p.stem)
def test_the_examples_print_what_the_page_shows(page: Path, workdir: Path) -> None:
    """Each example of the page, run in order in a fresh folder, prints the output the page shows; what an example
    registers (a stand-in judge, a plugin retriever) is gone afterwards, so no other test sees it."""
    globs: dict = {}
    with contextlib.ExitStack() as stack:
        for registry in _registries():
            stack.enter_context(restored(registry))
        for kind, block in FENCE.findall(_source(page)):
            if kind == "console":
                _run_console(block, workdir)
            else:
                _run_pycon(block, workdir, page.stem, globs)


def _registries() -> list:
    """Every registry of the package, as the examples may extend them."""
    from agentmemory.answers.formats import ANSWER_FORMATS
    from agentmemory.datasets.base import FORMATS
    from agentmemory.live.roles import JUDGES, READERS
    from agentmemory.metrics.base import REGISTRY
    from agentmemory.metrics.token_counters import TOKEN_COUNTERS
    from agentmemory.retrievers.encoders import ENCODERS
    from agentmemory.retrievers.registry import RETRIEVERS
    from agentmemory.systems.registry import SYSTEMS

    return [ANSWER_FORMATS, FORMATS, JUDGES, READERS, REGISTRY, TOKEN_COUNTERS, ENCODERS, RETRIEVERS, SYSTEMS]


@pytest.mark.parametrize(
    ("expected", "actual", "matched"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["...", "c"], ["a", "b", "c"], True),
        (["a", "..."], ["a", "b"], True),
        (["a", "...", "d"], ["a", "b", "c"], False),
        ([], [], True),
    ],
)
def test_an_ellipsis_line_stands_for_any_lines(expected: list[str], actual: list[str], matched: bool) -> None:
    """The console blocks' ``...`` line: any run of lines, none included; everything else as shown."""
    assert _matches(expected, actual) is matched
