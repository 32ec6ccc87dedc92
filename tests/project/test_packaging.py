"""Packaging: the wheel carries the fixture and the licence, works installed in a fresh venv; environment.yml matches pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import FIXTURE_DIR, REPO_ROOT, FreshVenv
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
def wheel(built_wheel: Path) -> Path:
    """The wheel built once per session from the repository root (conftest's ``built_wheel``)."""
    return built_wheel


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


@pytest.mark.parametrize("name", ["eval", "explore", "collection", "sweep", "answers"])
def test_wheel_carries_the_notebooks(wheel: Path, wheel_names: list[str], name: str) -> None:
    """The wheel holds agentmemory/_notebooks/<name>.ipynb, byte-identical to notebooks/<name>.ipynb, so that
    `agentmemory report NAME` finds a shipped notebook in an installed package."""
    member = f"agentmemory/_notebooks/{name}.ipynb"
    assert member in wheel_names
    assert _read(wheel, member) == (REPO_ROOT / "notebooks" / f"{name}.ipynb").read_bytes()


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
    """The version has one source, agentmemory/_version.py (the bottom layer; the package face re-exports it as
    agentmemory.__version__): the build reads it there, pyproject does not repeat it."""
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "agentmemory/_version.py"
    metadata = _read(wheel, f"{DIST_INFO}/METADATA").decode()
    assert re.findall(r"^Version: (.*)$", metadata, re.M) == [__version__]
    assert wheel.name == f"agentmemory_eval-{__version__}-py3-none-any.whl"


def test_wheel_holds_only_the_package(wheel_names: list[str]) -> None:
    """Nothing but the package and its dist-info goes into the wheel (no tests, no top-level fixtures)."""
    assert all(n.startswith(("agentmemory/", f"{DIST_INFO}/")) for n in wheel_names), wheel_names
    assert "agentmemory/__init__.py" in wheel_names
    assert not any(n.startswith("agentmemory/tests/") or "/__pycache__/" in n for n in wheel_names)


# -- the wheel installed in a fresh venv, run from a folder outside the repository ----------

SEED_TABLE = ("| BM25 | 0.90 | 0.28 | 1.00 |", "| Tag scorer | 1.00 | 0.32 | 1.00 |")


def test_fresh_venv_imports_the_installed_package(fresh_venv: FreshVenv) -> None:
    """In the fresh venv, agentmemory, its version and its default collection come from the wheel, not the source tree."""
    code = (
        "import sys, importlib.metadata as md, agentmemory, agentmemory.collection as c\n"
        "print(sys.prefix); print(agentmemory.__file__); print(c.default_collection_path())\n"
        "print(md.version('agentmemory-eval')); print(agentmemory.__version__)"
    )
    proc = fresh_venv.run(["python", "-c", code])
    assert (proc.returncode, proc.stderr) == (0, "")
    prefix, module, fixture, dist_version, version = proc.stdout.splitlines()
    package = fresh_venv.site_packages / "agentmemory"
    assert Path(prefix) == fresh_venv.root
    assert Path(module) == package / "__init__.py"
    assert Path(fixture) == package / "_fixtures" / "assistant-notes"
    assert dist_version == version == __version__
    assert REPO_ROOT not in Path(module).parents


@pytest.fixture(scope="module")
def venv_eval_runs(fresh_venv: FreshVenv) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    """`agentmemory eval` and `python -m agentmemory.eval` (seed 7, k 5) in the fresh venv, each in its own empty folder."""
    runs = {}
    for name, command in {"script": ["agentmemory", "eval"], "module": ["python", "-m", "agentmemory.eval"]}.items():
        cwd = fresh_venv.cwd / name
        cwd.mkdir()
        proc = fresh_venv.run([*command, "--seed", "7", "--k", "5", "--out", "x.json"], cwd=cwd)
        runs[name] = (proc, cwd / "x.json")
    return runs


@pytest.mark.parametrize("how", ["script", "module"])
def test_fresh_venv_reproduces_the_seed_table(venv_eval_runs, eval_runs, how: str) -> None:
    """The installed `agentmemory eval` (console script or -m) prints the seed's table and the source tree's artifact bytes."""
    proc, artifact = venv_eval_runs[how]
    assert (proc.returncode, proc.stderr) == (0, "")
    lines = proc.stdout.splitlines()
    for row in SEED_TABLE:
        assert row in lines
    assert lines[-1] == "Wrote x.json"
    assert artifact.read_bytes() == eval_runs[0][1].read_bytes()


def test_fresh_venv_script_and_module_agree(venv_eval_runs) -> None:
    """`python -m agentmemory.eval` is `agentmemory eval`: same output, same artifact."""
    (script, script_out), (module, module_out) = venv_eval_runs["script"], venv_eval_runs["module"]
    assert script.stdout == module.stdout
    assert script_out.read_bytes() == module_out.read_bytes()


def test_fresh_venv_runs_the_eval_notebook(fresh_venv: FreshVenv, tmp_path: Path) -> None:
    """papermill -k python3 runs notebooks/eval.ipynb on the venv's interpreter, with agentmemory from the wheel.

    A copy of the notebook gets one last cell reporting the kernel's
    interpreter and where it imported agentmemory from.
    """
    nb = nbformat.read(REPO_ROOT / "notebooks" / "eval.ipynb", as_version=4)
    nb.cells.append(
        nbformat.v4.new_code_cell("import sys, agentmemory\nprint(sys.executable)\nprint(agentmemory.__file__)")
    )
    source = tmp_path / "eval.ipynb"
    nbformat.write(nb, source)
    out = tmp_path / "out.ipynb"
    proc = fresh_venv.run(["python", "-m", "papermill", "-k", "python3", "--no-progress-bar", source, out])
    assert proc.returncode == 0, proc.stderr
    executed = nbformat.read(out, as_version=4)
    texts = [
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        for cell in executed.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    ]
    assert any(
        re.search(r"^\s*BM25\s+0\.90\s+0\.28\s+1\.00\s", t, re.M)
        and re.search(r"^Tag scorer\s+1\.00\s+0\.32\s+1\.00\s", t, re.M)
        for t in texts
    ), texts
    executable, module = texts[-1].splitlines()
    assert Path(executable) == fresh_venv.python
    assert Path(module) == fresh_venv.site_packages / "agentmemory" / "__init__.py"


def test_fresh_venv_runs_a_shipped_notebook_by_name(fresh_venv: FreshVenv) -> None:
    """`agentmemory report eval --out out` in an empty folder: the installed package finds its own eval notebook, runs
    it on the shipped fixture and writes the HTML beside the artifact, the committed report's artifact to the byte."""
    cwd = fresh_venv.cwd / "report-by-name"
    cwd.mkdir()
    # nbconvert's templates are data files of its installation, which the fresh venv borrows (site-packages only):
    # they are lent here, alone, where a venv holding nbconvert has them.
    templates = fresh_venv.cwd / "jupyter-data" / "nbconvert"
    templates.mkdir(parents=True)
    (templates / "templates").symlink_to(Path(sys.prefix) / "share" / "jupyter" / "nbconvert" / "templates")
    proc = fresh_venv.run(
        ["agentmemory", "report", "eval", "--out", "out"], cwd=cwd, env={"JUPYTER_PATH": str(templates.parent)}
    )
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert proc.stdout == "Wrote out/eval.ipynb and out/eval.html\n"
    executed = nbformat.read(cwd / "out" / "eval.ipynb", as_version=4)
    assert executed.metadata["kernelspec"]["name"] == "python3"
    assert "<figcaption>" in (cwd / "out" / "eval.html").read_text(encoding="utf-8")
    assert (cwd / "out" / "eval-results.json").read_bytes() == (
        REPO_ROOT / "reports" / "eval-results.json"
    ).read_bytes()


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
