"""The public names of ``agentmemory``: listed once for run time, once for type checkers, and the two agree."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentmemory

INIT = Path(agentmemory.__file__)


def _type_checking_names() -> dict[str, str]:
    """name -> module of every import inside ``if TYPE_CHECKING:`` blocks that re-exports (``X as X``)."""
    found = {}
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module and item.module.startswith("agentmemory"):
                    for alias in item.names:
                        if alias.asname == alias.name:
                            found[alias.name] = item.module
    return found


def test_type_checking_reexports_equal_the_runtime_table() -> None:
    """Every public name is imported from the same module for type checkers as at run time."""
    assert _type_checking_names() == agentmemory._WHERE


def test_every_public_name_resolves_to_an_object_of_its_module() -> None:
    """``agentmemory.X`` loads X from the module the table names, and ``__all__`` is the table plus __version__."""
    assert agentmemory.__all__ == ["__version__", *sorted(agentmemory._WHERE)]
    for name, module in agentmemory._WHERE.items():
        value = getattr(agentmemory, name)
        assert value is getattr(sys.modules[module], name)


def test_import_agentmemory_loads_none_of_its_modules_but_the_package() -> None:
    """A bare ``import agentmemory`` imports no submodule of ours but the version's (the names load on first use)."""
    code = "import sys, agentmemory; print(sorted(m for m in sys.modules if m.startswith('agentmemory.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['agentmemory._version']"


def test_a_memory_system_author_needs_only_the_package_face() -> None:
    """``Memory``, ``Turn`` and ``register_system`` come from ``agentmemory`` itself: the records a system returns
    and receives, and the registry call, are the ones the replay uses."""
    from agentmemory import Memory, Turn, register_system
    from agentmemory.systems import base
    from agentmemory.systems.registry import SYSTEMS, resolve_system

    assert (Memory, Turn) == (base.Memory, base.Turn)

    class Echo:
        def __init__(self, scope=None, workdir=None) -> None:
            self.turns: list[Turn] = []

        def ingest(self, turns: list[Turn]) -> None:
            self.turns += turns

        def search(self, query: str, k: int) -> list[Memory]:
            return [Memory(t.text, id=t.entry_id) for t in self.turns][:k]

        def close(self) -> None:
            pass

    register_system("echo-face-test", Echo, label="Echo", replace=True)
    try:
        assert resolve_system("echo-face-test").label == "Echo"
    finally:
        SYSTEMS.unregister("echo-face-test")
