"""The notebooks that ship with agentmemory, by name, and where an installation keeps them.

Nothing here imports more than :mod:`pathlib`, so the experiment runner and the command line can find the
notebooks without loading the report's dependencies.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

__all__ = ["NOTEBOOK_NAMES", "notebook_folder"]

NOTEBOOK_NAMES = ("eval", "explore", "collection", "sweep", "answers")
"""The shipped notebooks, by name (``notebooks/<name>.ipynb``); each has a setup function in
:mod:`agentmemory.report.params` (``<name>_setup``)."""


def notebook_folder(package_dir: str | PathLike[str] | None = None) -> Path | None:
    """Where the shipped notebooks are: ``agentmemory/_notebooks`` in an installed wheel, ``notebooks/`` beside the
    package in a source checkout (``package_dir`` defaults to the imported ``agentmemory`` folder); ``None`` when
    neither holds all of :data:`NOTEBOOK_NAMES`."""
    here = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent.parent
    for folder in (here / "_notebooks", here.parent / "notebooks"):
        if all((folder / f"{name}.ipynb").is_file() for name in NOTEBOOK_NAMES):
            return folder
    return None
