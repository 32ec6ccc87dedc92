"""Shared fixtures: paths, the seed fixture loaded once, and subprocess helpers.

Subprocess runs are the slow part of the suite, so everything that can be
shared is session-scoped.  Helpers that edit files insist that the text they
replace occurs exactly once, so a test whose setup silently did nothing
fails instead of passing for the wrong reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from agentmemory import evaluate, load_collection

# Tests never assert timings: Hypothesis's per-example deadline would fail a property on a busy machine
# (two pytest-xdist workers on two cores) for no fault of the code.
settings.register_profile("agentmemory", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentmemory")

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


@pytest.fixture(scope="session", autouse=True)
def no_background_compiles() -> Iterator[None]:
    """No test, nor any subprocess a test starts, compiles numba's kernels in the background unless it asks.

    A large enough index starts a background compiler by default
    (``agentmemory.retrievers._index.compile_in_background``); the tests of
    that behaviour turn it on themselves.
    """
    before = os.environ.get("AGENTMEMORY_ACCEL_BACKGROUND")
    os.environ["AGENTMEMORY_ACCEL_BACKGROUND"] = "off"
    yield
    if before is None:
        os.environ.pop("AGENTMEMORY_ACCEL_BACKGROUND", None)
    else:
        os.environ["AGENTMEMORY_ACCEL_BACKGROUND"] = before


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
    """``evaluate`` of the default retrievers on the seed fixture with k = 5, seed = 7: bm25 and tags, since its
    queries carry tags (as ``agentmemory eval`` chooses them)."""
    return evaluate(notes, k=5, seed=7)


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
    "3. Every query, side by side",
    "4. Why MRR can be 1.0 while recall is not",
    "5. Plots",
    "6. Caveats",
    "7. Statistics",
    "Definitions",
    "Timings",
    "Appendix: inputs, the event log and the artifact",
]
"""The section headings of reports/eval.html, in order (the title and the first screen come before them)."""
ANSWERS_SECTIONS = [
    "1. Per category",
    "2. Every pair of systems",
    "3. Where the wrong answers come from",
    "4. The answer key",
    "5. The judges",
    "6. Seeds",
    "7. Published numbers beside ours",
    "Definitions",
    "Caveats",
    "Appendix: the artifact",
]
"""The section headings of reports/answers.html, in order (the title and the first screen come before them)."""


# -- the built wheel, installed in a fresh virtual environment ---------------------------------

#: The distribution's name in wheel file names (agentmemory-eval, normalised).
WHEEL_PREFIX = "agentmemory_eval-"
#: Variables that would let a subprocess see the source tree or another environment.
_LEAKY_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "JUPYTER_PATH", "PYTHONHASHSEED")


def build_wheel(out: Path) -> Path:
    """Build the project's wheel into ``out`` with pip (no network, no build isolation); return its path."""
    proc = subprocess.run(
        [
            PYTHON,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    [built] = out.glob(f"{WHEEL_PREFIX}*.whl")
    return built


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """The project's wheel, built once per session from the repository root."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _is_project_or_editable(dist_info: Path) -> bool:
    """Whether an installed distribution is this project or an editable install (a source tree, not a package)."""
    if dist_info.name.lower().startswith(("agentmemory-", "agentmemory_eval-")):
        return True
    try:
        url = json.loads((dist_info / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(url.get("dir_info", {}).get("editable"))


def dependency_links(target: Path) -> Path:
    """A folder of links to the current environment's installed packages, minus this project and editable installs.

    Put on a fresh venv's path (by a ``.pth`` file), it lends that venv
    numpy, scipy, papermill, pip... without downloading anything, while the
    fresh venv's own site-packages (searched first) holds what is installed
    into it.  Left out: every file of this project's or an editable
    install's record (so the source tree's metadata and entry points are not
    seen twice), and ``.pth`` files (never processed outside a site folder).
    """
    target.mkdir(parents=True)
    sources = dict.fromkeys(Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib"))
    for source in sources:
        excluded: set[str] = set()
        for dist_info in source.glob("*.dist-info"):
            if _is_project_or_editable(dist_info):
                excluded.add(dist_info.name)
                record = dist_info / "RECORD"
                lines = record.read_text(encoding="utf-8").splitlines() if record.is_file() else []
                for line in lines:
                    top = line.split(",", 1)[0].split("/", 1)[0]
                    if top and top != "..":
                        excluded.add(top)
        for entry in sorted(source.iterdir()):
            name = entry.name
            if name in excluded or name.endswith(".pth") or name == "__pycache__" or (target / name).exists():
                continue
            (target / name).symlink_to(entry, target_is_directory=entry.is_dir())
    return target


@dataclass(frozen=True)
class FreshVenv:
    """A virtual environment made for the tests, with the project's wheel installed in it.

    Its interpreter is the base interpreter (not the test venv's); it sees
    the test venv's installed packages through :attr:`deps` but not the
    source tree, not this project's editable install, and not ``PYTHONPATH``.
    """

    root: Path  #: the venv folder
    python: Path  #: its interpreter, ``root/bin/python``
    site_packages: Path  #: its own site-packages (searched before :attr:`deps`)
    deps: Path  #: links to the test venv's packages, listed in ``site_packages/_test_dependencies.pth``
    wheel: Path  #: the project's wheel, installed with ``pip install --no-deps --no-index``
    cwd: Path  #: an empty working folder outside the repository (the default for :meth:`run`)

    def bin(self, name: str) -> Path:
        """The venv's script ``name`` (e.g. ``agentmemory``)."""
        return self.root / "bin" / name

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a user of this venv would have: its ``bin`` first, nothing pointing elsewhere."""
        env = {k: v for k, v in os.environ.items() if k not in _LEAKY_VARIABLES}
        env["PATH"] = f"{self.root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        # Kernel specs of the user's own Jupyter setup must not stand in for this venv's python3.
        env["JUPYTER_DATA_DIR"] = str(self.root / "share" / "jupyter-user")
        env.update(extra or {})
        return env

    def run(
        self, args: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``args`` (a bare first word is a script of the venv, e.g. ``python`` or ``agentmemory``)."""
        first = str(args[0])
        program = first if os.sep in first else str(self.bin(first))
        return subprocess.run(
            [program, *map(str, args[1:])],
            cwd=cwd or self.cwd,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT,
            check=False,
        )

    def pip_install(self, *requirements: str | Path) -> subprocess.CompletedProcess[str]:
        """``pip install --no-deps --no-index`` into this venv (wheels or folders on disk); fail on an error.

        Options pass through: ``pip_install("--no-build-isolation", folder)``
        builds a source folder with the hatchling the test venv lends.
        """
        proc = self.run(
            ["python", "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", "-q"]
            + [str(r) for r in requirements]
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc


def make_fresh_venv(root: Path, wheel: Path) -> FreshVenv:
    """Create a venv in ``root/venv`` without pip, lend it the test venv's packages, install ``wheel``."""
    venv = root / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=SUBPROCESS_TIMEOUT)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            timeout=SUBPROCESS_TIMEOUT,
        ).stdout.strip()
    )
    deps = dependency_links(root / "deps")
    (site_packages / "_test_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    cwd = root / "work"
    cwd.mkdir()
    fresh = FreshVenv(root=venv, python=python, site_packages=site_packages, deps=deps, wheel=wheel, cwd=cwd)
    fresh.pip_install(wheel)
    return fresh


@pytest.fixture(scope="session")
def fresh_venv_factory(tmp_path_factory, built_wheel: Path) -> Callable[[str], FreshVenv]:
    """Make another fresh venv with the wheel installed (for a test that must not change the shared one)."""
    return lambda name: make_fresh_venv(tmp_path_factory.mktemp(name), built_wheel)


@pytest.fixture(scope="session")
def fresh_venv(fresh_venv_factory) -> Iterator[FreshVenv]:
    """One fresh venv per session with the built wheel installed: see :class:`FreshVenv`.

    Shared by every test that asks for it: a test that installs into it
    (``fresh_venv.pip_install(plugin_wheel)``) changes it for the tests that
    run after; use ``fresh_venv_factory("name")`` for a private one.
    """
    yield fresh_venv_factory("fresh-venv")


# -- a report of one's own: `agentmemory report` as the README shows it ------------------------------

USER_REPORT_SAMPLE = "fixtures/locomo-sample/locomo-sample.json"


@pytest.fixture(scope="session")
def user_report(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``agentmemory report notebooks/collection.ipynb --out out/report -p collection <the LoCoMo sample>`` run by the
    console script in a folder holding the repository's notebooks/ and fixtures/ (links, as a clone's root has them).

    Returns the finished process and the ``out/report`` folder.
    """
    root = tmp_path_factory.mktemp("clone")
    for name in ("notebooks", "fixtures"):
        (root / name).symlink_to(REPO_ROOT / name, target_is_directory=True)
    script = Path(PYTHON).parent / "agentmemory"
    argv = [str(script), "report", "notebooks/collection.ipynb", "--out", "out/report", "-p", "collection"]
    done = subprocess.run(
        [*argv, USER_REPORT_SAMPLE], cwd=root, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, check=False
    )
    return done, root / "out" / "report"
