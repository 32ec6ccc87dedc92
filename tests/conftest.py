"""Shared fixtures: paths, the seed fixture loaded once, and subprocess helpers.

Subprocess runs are the slow part of the suite, so everything that can be
shared is session-scoped.  Helpers that edit files insist that the text they
replace occurs exactly once, so a test whose setup silently did nothing
fails instead of passing for the wrong reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from agentmemory import evaluate, load_collection

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURE_DIR = REPO_ROOT / "fixtures" / "assistant-notes"
PYTHON = sys.executable
SUBPROCESS_TIMEOUT = 120


@pytest.fixture(scope="session", autouse=True)
def embedding_cache(tmp_path_factory) -> Iterator[Path]:
    """The cache folder of every test and of every subprocess a test starts: a temporary one, never ~/.cache.

    Set in ``os.environ`` (not monkeypatched) so that subprocesses inherit it;
    tests that need a cache of their own point ``AGENTMEMORY_CACHE`` elsewhere
    with ``monkeypatch``.
    """
    folder = tmp_path_factory.mktemp("agentmemory-cache")
    before = os.environ.get("AGENTMEMORY_CACHE")
    os.environ["AGENTMEMORY_CACHE"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("AGENTMEMORY_CACHE", None)
    else:
        os.environ["AGENTMEMORY_CACHE"] = before


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (computed from this file, not the working directory)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    """The seed's evaluation fixture, ``fixtures/assistant-notes``."""
    return FIXTURE_DIR


@pytest.fixture(scope="session")
def notes():
    """The seed fixture loaded once (a frozen Collection; never mutated)."""
    return load_collection(FIXTURE_DIR)


@pytest.fixture(scope="session")
def seed_evaluation(notes):
    """``evaluate`` of both retrievers on the seed fixture with k = 5, seed = 7."""
    return evaluate(notes, ("bm25", "tags"), k=5, seed=7)


def replace_once(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in the file ``path``; fail if it is not exactly once."""
    text = path.read_text(encoding="utf-8")
    count = text.count(old)
    if count != 1:
        raise AssertionError(f"{path}: expected {old!r} exactly once, found it {count} times")
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture
def notes_copy(tmp_path: Path) -> Path:
    """A fresh copy of the seed fixture in ``tmp_path/notes``, free to edit."""
    target = tmp_path / "notes"
    shutil.copytree(FIXTURE_DIR, target)
    return target


def write_collection(root: Path, corpus: str, queries: str, qrels: str) -> Path:
    """Write a collection folder from the literal text of its three files; return ``root``."""
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (root / "queries.jsonl").write_text(queries, encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return root


def run_python(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    executable: str = PYTHON,
) -> subprocess.CompletedProcess[str]:
    """Run ``python <args>`` (the venv's interpreter) in ``cwd``; capture text output.

    ``env`` entries are added to a copy of the current environment; a value
    of ``""`` for ``PYTHONHASHSEED`` is passed as is.
    """
    full_env = dict(os.environ)
    full_env.pop("PYTHONHASHSEED", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [executable, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="session")
def python_run() -> Callable[..., subprocess.CompletedProcess[str]]:
    """:func:`run_python`, as a fixture."""
    return run_python


@pytest.fixture(scope="session")
def console_script() -> Path:
    """The ``agentmemory`` console script installed next to the interpreter."""
    script = Path(PYTHON).parent / "agentmemory"
    if not script.is_file():
        raise AssertionError(f"console script {script} is missing; reinstall with pip install -e .")
    return script


#: (working directory, PYTHONHASHSEED) of the three subprocess runs of ``python -m agentmemory.eval``:
#: repo root, a sub-folder of the repo, and a folder outside it.
EVAL_RUN_SETTINGS = (("root", "0"), ("tests", "12345"), ("outside", "random"))


@pytest.fixture(scope="session")
def eval_runs(tmp_path_factory) -> list[tuple[subprocess.CompletedProcess[str], Path]]:
    """``python -m agentmemory.eval --seed 7 --k 5 --out X --runs-dir R`` three times (see EVAL_RUN_SETTINGS).

    Returns ``(completed process, artifact path)`` per run; the runs folder is
    the artifact's sibling ``runs/``.  The default fixture is used (no
    ``--collection``), so this also shows it is found from any working directory.
    """
    results = []
    for where, hashseed in EVAL_RUN_SETTINGS:
        base = tmp_path_factory.mktemp(f"eval-{where}")
        cwd = {"root": REPO_ROOT, "tests": REPO_ROOT / "tests", "outside": base}[where]
        out = base / "eval-results.json"
        args = [
            "-m",
            "agentmemory.eval",
            "--seed",
            "7",
            "--k",
            "5",
            "--out",
            str(out),
            "--runs-dir",
            str(base / "runs"),
        ]
        results.append((run_python(args, cwd=cwd, env={"PYTHONHASHSEED": hashseed}), out))
    return results


# The eval report's section headings, in order (read by the build and browser tests).
EVAL_SECTIONS = [
    "1. What was evaluated",
    "2. Metrics",
    "3. Per-query breakdown",
    "4. Why MRR can be 1.0 while recall is not",
    "5. Plots",
    "6. Caveats",
    "7. Statistics",
    "The artifact",
]
