"""CI's habits: `.ci/run` runs lint, typecheck, docs and test in that order and stops at the first failure,
and `make lint` / `make typecheck` fail on a lint, a format and a type error.

The make targets run for real, with this repository's Makefile and pyproject.toml
(so ruff's and mypy's configuration is the one under test), on a small clean
package in a temporary folder: first clean (both targets pass), then with one
error injected at a time (the target fails and names it).  The package itself is
not the subject: its own lint and type state is CI's business, not this test's.
`.ci/run` itself runs with `make` replaced by a recorder, so nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

VENV = Path(sys.prefix)
MAKE = shutil.which("make")
TIMEOUT = 120

pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")

CLEAN_PACKAGE = '''"""A small clean package: ruff's rules, ruff's format and mypy all accept it."""

from __future__ import annotations


def double(x: int) -> int:
    """Twice ``x``."""
    return 2 * x
'''
CLEAN_MODULE = '"""Nothing to lint."""\n'


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    """One mypy cache for every copy, so only the first run reads the standard library's stubs."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A clean project: this repository's Makefile, pyproject.toml and constraints.txt around a tiny package."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy2(REPO_ROOT / name, root / name)
    (root / "agentmemory").mkdir()
    (root / "agentmemory" / "__init__.py").write_text(CLEAN_PACKAGE, encoding="utf-8")
    for folder in ("tests", "examples", "benchmarks"):
        (root / folder).mkdir()
        (root / folder / "clean.py").write_text(CLEAN_MODULE, encoding="utf-8")
    return root


def make(root: Path, target: str, mypy_cache: Path, *, dry_run: bool = False) -> subprocess.CompletedProcess[str]:
    """``make <target>`` in ``root`` with the running venv's tools, never (re)installing anything.

    The stamp that guards installation is replaced by a file that exists and is
    marked old-but-fine (``-o``), so the venv is used as it is.
    """
    stamp = root / ".stamp"
    stamp.touch()
    args = [MAKE, "--no-print-directory", f"VENV={VENV}", f"STAMP={stamp}", "-o", str(stamp), target]
    if dry_run:
        args.insert(1, "-n")
    env = {**os.environ, "MYPY_CACHE_DIR": str(mypy_cache), "NO_COLOR": "1"}
    env.pop("MAKEFLAGS", None)
    return subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def _tools_or_skip() -> None:
    missing = [tool for tool in ("ruff", "mypy") if not (VENV / "bin" / tool).is_file()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {VENV} (the `dev` extra)")


@pytest.mark.parametrize("target", ["lint", "typecheck"])
def test_targets_only_run_the_tools(project: Path, target: str, mypy_cache: Path) -> None:
    """The dry run of each target calls ruff or mypy from the venv and installs nothing."""
    proc = make(project, target, mypy_cache, dry_run=True)
    assert proc.returncode == 0, proc.stderr
    commands = proc.stdout.splitlines()
    assert commands, "the target runs nothing"
    assert all(c.startswith(f"{VENV}/bin/") for c in commands), commands
    assert not any(" pip " in c or " venv " in c for c in commands), commands


@pytest.mark.parametrize("target", ["lint", "typecheck"])
def test_clean_project_passes(project: Path, target: str, mypy_cache: Path) -> None:
    """Without an injected error both targets succeed, so a failure below is the error's doing."""
    _tools_or_skip()
    proc = make(project, target, mypy_cache)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# (target, file, text, what the output must name)
ERRORS = {
    "lint": ("lint", "agentmemory/bad.py", '"""Unused import."""\n\nimport os\n', ["F401", "agentmemory/bad.py"]),
    "format": (
        "lint",
        "agentmemory/bad.py",
        '"""Lint-clean, badly formatted."""\n\nLIMITS = {"low":1,   "high":2}\n',
        ["agentmemory/bad.py", "reformatted"],
    ),
    "type": (
        "typecheck",
        "agentmemory/bad.py",
        '"""A wrong return type."""\n\n\ndef one() -> int:\n    return "one"\n',
        ["agentmemory/bad.py:5: error: Incompatible return value type", "[return-value]"],
    ),
    "type in an unannotated function": (
        "typecheck",
        "agentmemory/bad.py",
        '"""Checked because of check_untyped_defs."""\n\n\ndef broken():\n    return 1 + "one"\n',
        ["agentmemory/bad.py:5: error: Unsupported operand types", "[operator]"],
    ),
}


@pytest.mark.parametrize("kind", list(ERRORS))
def test_target_fails_on_injected_error(project: Path, kind: str, mypy_cache: Path) -> None:
    """A lint error, a format error and type errors each make their target fail, naming file and problem."""
    _tools_or_skip()
    target, name, text, expected = ERRORS[kind]
    (project / name).write_text(text, encoding="utf-8")
    proc = make(project, target, mypy_cache)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    for fragment in expected:
        assert fragment in output, output
    if kind == "format":
        # ruff's rules passed: the formatter's check is what failed.
        assert "All checks passed!" in output, output


# -- .ci/run -----------------------------------------------------------------------------


@pytest.fixture
def ci_checkout(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """``.ci/run`` in a folder, with ``make`` replaced by a recorder that fails on ``$FAIL_TARGET``.

    A stand-in ``chromium`` and a ``kpsewhich`` that finds booktabs keep the script from installing anything;
    a stand-in ``apt-get`` records what it would install (``$APT_LOG``), should it be called.
    """
    root = tmp_path / "checkout"
    (root / ".ci").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / ".ci" / "run", root / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "make.log"
    tools = {
        "make": '#!/bin/sh\necho "$*" >> "$MAKE_LOG"\n[ "$*" = "$FAIL_TARGET" ] && exit 2\nexit 0\n',
        "chromium": "#!/bin/sh\nexit 0\n",
        "kpsewhich": '#!/bin/sh\n[ "$1" = booktabs.sty ] && echo /usr/share/texmf/tex/latex/booktabs/booktabs.sty\nexit 0\n',
        "apt-get": '#!/bin/sh\necho "$*" >> "$APT_LOG"\nexit 0\n',
    }
    for tool, script in tools.items():
        (bin_dir / tool).write_text(script, encoding="utf-8")
        (bin_dir / tool).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "MAKE_LOG": str(log),
        "APT_LOG": str(tmp_path / "apt.log"),
    }
    return root, log, env


@pytest.mark.parametrize(
    ("fail", "ran"),
    [
        ("", ["lint", "typecheck", "docs", "test"]),
        ("lint", ["lint"]),
        ("typecheck", ["lint", "typecheck"]),
        ("docs", ["lint", "typecheck", "docs"]),
        ("test", ["lint", "typecheck", "docs", "test"]),
    ],
)
def test_ci_runs_lint_typecheck_test_and_stops_at_first_failure(ci_checkout, fail: str, ran: list[str]) -> None:
    """`.ci/run` runs `make lint`, `make typecheck`, `make docs`, `make test` in that order; a failing one ends
    the run, failing."""
    root, log, env = ci_checkout
    proc = subprocess.run(
        [str(root / ".ci" / "run")],
        cwd=root,
        env={**env, "FAIL_TARGET": fail},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert (proc.returncode != 0) == bool(fail), proc.stdout + proc.stderr
    assert log.read_text(encoding="utf-8").splitlines() == ran


@pytest.mark.parametrize(
    ("missing", "installed"),
    [
        ((), []),
        (("kpsewhich",), ["update -qq", "install -y -qq --no-install-recommends texlive-latex-recommended"]),
        (("chromium",), ["update -qq", "install -y -qq chromium"]),
        (
            ("chromium", "kpsewhich"),
            [
                "update -qq",
                "install -y -qq chromium",
                "install -y -qq --no-install-recommends texlive-latex-recommended",
            ],
        ),
    ],
)
def test_ci_installs_chromium_and_booktabs_when_missing(ci_checkout, missing: tuple[str, ...], installed) -> None:
    """Without chromium, `.ci/run` installs it; when `kpsewhich booktabs.sty` finds nothing (a TeX without booktabs,
    or no TeX), it installs texlive-latex-recommended (pdflatex and booktabs), updating the package lists once."""
    root, _, env = ci_checkout
    bin_dir = Path(env["PATH"].split(os.pathsep)[0])
    for tool in missing:
        if tool == "kpsewhich":  # a TeX that knows no booktabs.sty: kpsewhich prints nothing
            (bin_dir / tool).write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        else:
            (bin_dir / tool).unlink()
    for tool in ("bash", "dirname"):  # the only other programs the script runs: PATH holds nothing else
        (bin_dir / tool).symlink_to(shutil.which(tool))
    proc = subprocess.run(
        [str(root / ".ci" / "run")],
        cwd=root,
        env={**env, "PATH": str(bin_dir), "FAIL_TARGET": ""},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    apt_log = Path(env["APT_LOG"])
    assert (apt_log.read_text(encoding="utf-8").splitlines() if apt_log.exists() else []) == installed
