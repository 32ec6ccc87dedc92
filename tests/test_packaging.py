"""Packaging: the wheel carries the fixture and the licence and works on its own; environment.yml matches pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT, run_python
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from agentmemory import __version__

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DIST_INFO = f"agentmemory_eval-{__version__}.dist-info"
FIXTURE_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from the repository root with pip (no network, no build isolation)."""
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [
            sys.executable,
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
    [built] = out.glob("agentmemory_eval-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def _read(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(name)


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_wheel_carries_the_fixture(wheel: Path, wheel_names: list[str], name: str) -> None:
    """The wheel holds agentmemory/_fixtures/assistant-notes/<file>, byte-identical to fixtures/assistant-notes/<file>."""
    member = f"agentmemory/_fixtures/assistant-notes/{name}"
    assert member in wheel_names
    assert _read(wheel, member) == (FIXTURE_DIR / name).read_bytes()


def test_wheel_carries_the_licence_and_metadata(wheel: Path, wheel_names: list[str]) -> None:
    """The MIT licence file and its metadata, and the console script, are in the wheel."""
    assert f"{DIST_INFO}/licenses/LICENSE" in wheel_names
    assert _read(wheel, f"{DIST_INFO}/licenses/LICENSE") == (REPO_ROOT / "LICENSE").read_bytes()
    metadata = _read(wheel, f"{DIST_INFO}/METADATA").decode()
    assert re.search(r"^License-Expression: MIT$", metadata, re.M)
    assert re.search(r"^License-File: LICENSE$", metadata, re.M)
    assert re.search(r"^Requires-Python: >=3.10$", metadata, re.M)
    assert "agentmemory = agentmemory.cli:entry_point" in _read(wheel, f"{DIST_INFO}/entry_points.txt").decode()


def test_wheel_is_published_as_agentmemory_eval(wheel: Path, pyproject: dict) -> None:
    """The distribution is agentmemory-eval (the index's `agentmemory` is another project); the import name is agentmemory."""
    assert pyproject["project"]["name"] == "agentmemory-eval"
    metadata = _read(wheel, f"{DIST_INFO}/METADATA").decode()
    assert re.search(r"^Name: agentmemory-eval$", metadata, re.M)
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install agentmemory-eval" in readme
    assert not re.search(r"pip install '?agentmemory(?![-_\w])", readme), "the README installs the wrong distribution"


def test_wheel_version_is_the_package_version(wheel: Path, pyproject: dict) -> None:
    """The version has one source, agentmemory.__version__: the build reads it, pyproject does not repeat it."""
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "agentmemory/__init__.py"
    metadata = _read(wheel, f"{DIST_INFO}/METADATA").decode()
    assert re.findall(r"^Version: (.*)$", metadata, re.M) == [__version__]
    assert wheel.name == f"agentmemory_eval-{__version__}-py3-none-any.whl"


def test_wheel_holds_only_the_package(wheel_names: list[str]) -> None:
    """Nothing but the package and its dist-info goes into the wheel (no tests, no top-level fixtures)."""
    assert all(n.startswith(("agentmemory/", f"{DIST_INFO}/")) for n in wheel_names), wheel_names
    assert "agentmemory/__init__.py" in wheel_names
    assert not any(n.startswith("agentmemory/tests/") or "/__pycache__/" in n for n in wheel_names)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> dict:
    """The wheel unpacked into a folder, and the environment to run Python on it alone.

    ``python -S`` skips site-packages' .pth files, so the editable install of
    the source tree is not on the path; PYTHONPATH is the unpacked wheel
    first, then the venv's site-packages for numpy.
    """
    root = tmp_path_factory.mktemp("installed")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(root / "lib")
    cwd = root / "elsewhere"
    cwd.mkdir()
    env = {"PYTHONPATH": f"{root / 'lib'}:{sysconfig.get_paths()['purelib']}"}
    return {"lib": root / "lib", "cwd": cwd, "env": env}


def test_unpacked_wheel_uses_its_own_package_and_fixture(installed: dict) -> None:
    """Run on the unpacked wheel, agentmemory and its default collection come from the wheel, not the source tree."""
    proc = run_python(
        [
            "-S",
            "-c",
            "import agentmemory, agentmemory.collection as c; print(agentmemory.__file__); print(c.default_collection_path())",
        ],
        cwd=installed["cwd"],
        env=installed["env"],
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    module, fixture = proc.stdout.splitlines()
    assert Path(module) == installed["lib"] / "agentmemory" / "__init__.py"
    assert Path(fixture) == installed["lib"] / "agentmemory" / "_fixtures" / "assistant-notes"


def test_unpacked_wheel_runs_the_seed_evaluation(installed: dict, eval_runs) -> None:
    """`python -m agentmemory.eval --seed 7 --k 5` from the wheel prints the seed's table and the same artifact bytes."""
    proc = run_python(
        ["-S", "-m", "agentmemory.eval", "--seed", "7", "--k", "5", "--out", "x.json"],
        cwd=installed["cwd"],
        env=installed["env"],
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    lines = proc.stdout.splitlines()
    assert "| BM25 | 0.90 | 0.28 | 1.00 |" in lines
    assert "| Tag scorer | 1.00 | 0.32 | 1.00 |" in lines
    assert lines[-1] == "Wrote x.json"
    assert (installed["cwd"] / "x.json").read_bytes() == eval_runs[0][1].read_bytes()


# -- environment.yml and pyproject.toml ------------------------------------------------


def _conda_dependencies(text: str) -> tuple[list[str], list[str]]:
    """(conda specs, pip specs) of an environment.yml's ``dependencies`` block.

    A small reader for the one shape such files have (no YAML library
    needed): ``- spec`` items, and a ``- pip:`` item with its own ``- spec`` list.
    """
    conda: list[str] = []
    pip: list[str] = []
    inside = in_pip = False
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            inside = line == "dependencies:"
            in_pip = False
            continue
        if not inside:
            continue
        item = line.strip()
        assert item.startswith("- "), f"environment.yml: unexpected line in dependencies: {raw!r}"
        value = item[2:].strip()
        indent = len(line) - len(line.lstrip())
        if value == "pip:":
            in_pip, pip_indent = True, indent
            continue
        if in_pip and indent > pip_indent:
            pip.append(value)
        else:
            in_pip = False
            conda.append(value)
    return conda, pip


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def environment() -> tuple[list[str], list[str]]:
    path = REPO_ROOT / "environment.yml"
    assert path.is_file(), "environment.yml is missing: conda users need it (same dependencies as pyproject.toml)"
    return _conda_dependencies(path.read_text(encoding="utf-8"))


def _by_name(specs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name not in out, f"{name} listed twice"
        out[name] = str(req.specifier)
    return out


def test_environment_lists_the_same_dependencies_as_pyproject(pyproject: dict, environment) -> None:
    """environment.yml lists exactly pyproject's dependencies plus the report and test extras, with the same versions."""
    project = pyproject["project"]
    wanted = (
        project["dependencies"] + project["optional-dependencies"]["report"] + project["optional-dependencies"]["test"]
    )
    expected = _by_name(list(dict.fromkeys(wanted)))
    conda, pip = environment
    specs = [s for s in conda + pip if not s.startswith("-e ")]
    listed = [s for s in specs if canonicalize_name(Requirement(s).name) not in {"python", "pip"}]
    assert _by_name(listed) == expected


def test_environment_python_matches_requires_python(pyproject: dict, environment) -> None:
    """The conda python pin is pyproject's requires-python."""
    conda, _ = environment
    [python] = [s for s in conda if Requirement(s).name == "python"]
    assert str(Requirement(python).specifier) == pyproject["project"]["requires-python"]


def test_environment_installs_the_project(environment) -> None:
    """The conda environment installs agentmemory itself (editable) through pip."""
    _, pip = environment
    assert "-e ." in pip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: x\ndependencies:\n  - numpy>=1\n  - pip\n  - pip:\n      - bm25s\nother: 1\n",
            (["numpy>=1", "pip"], ["bm25s"]),
        ),
        ("dependencies:\n  - pip:\n    - a\n  - b  # comment\n", (["b"], ["a"])),
        ("channels:\n  - conda-forge\ndependencies:\n  - c\n", (["c"], [])),
    ],
)
def test_environment_reader(text: str, expected) -> None:
    """The small environment.yml reader finds conda and pip items and nothing from other keys."""
    assert _conda_dependencies(text) == expected
