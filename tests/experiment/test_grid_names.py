"""A grid's name is one folder name: never a path that leads out of ./experiments/."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURE_DIR

from agentmemory.cli.app import main
from agentmemory.errors import InputError
from agentmemory.experiment import parse_grid, read_grid

NOTES = FIXTURE_DIR.as_posix()
RULE = "use letters, digits, '.', '_' and '-', starting with a letter or digit"


def _text(name: str) -> str:
    return f'name = "{name}"\nsystems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n'


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/escaped", "..", ".", "a/b", "a\\\\b", ".hidden", "-x"])
def test_a_grid_name_that_is_not_one_folder_name_is_refused(name: str) -> None:
    """``..``, an absolute path, a separator, a leading dot or dash: one line naming the file, line and value."""
    shown = name.replace("\\\\", "\\")
    with pytest.raises(InputError) as info:
        parse_grid(_text(name), source="grid.toml", base=FIXTURE_DIR)
    assert str(info.value) == (
        f"grid.toml:1: name: {shown!r} is not usable as a folder name (experiments/<name>); {RULE}"
    )


def test_the_default_name_is_the_file_name_made_a_folder_name(tmp_path: Path) -> None:
    """Without ``name``, the grid file's name without .toml, runs of other characters made '-'."""
    grid = tmp_path / "my grid (v2).toml"
    grid.write_text(f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n', encoding="utf-8")
    assert read_grid(grid).name == "my-grid-v2"


@pytest.mark.parametrize("name", ["../../escaped", "ABSOLUTE"])
def test_without_out_nothing_is_written_outside_the_experiments_folder(tmp_path, monkeypatch, capsys, name) -> None:
    """``agentmemory experiment`` without --out on a grid named ``../../escaped`` or an absolute path: exit 2, one
    line, and no file or folder appears anywhere (it used to write outside ./experiments/)."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    target = tmp_path / "escaped-abs"
    value = target.as_posix() if name == "ABSOLUTE" else name
    (work / "grid.toml").write_text(_text(value), encoding="utf-8")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.chdir(work)
    assert main(["experiment", "grid.toml", "--executor", "serial"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"agentmemory: error: grid.toml:1: name: {value!r} is not usable as a folder name (experiments/<name>); "
        f"{RULE}\n"
    )
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
