"""The package's built-ins register in one place, agentmemory.registry.BUILTINS, and load like entry points."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import agentmemory
from agentmemory.errors import ParameterError
from agentmemory.registry import BUILTINS, Registry

PACKAGE = Path(agentmemory.__file__).parent
REGISTER_CALLS = {
    "register",
    "register_retriever",
    "register_measure",
    "register_format",
    "register_encoder",
    "register_system",
    "register_answer_format",
    "register_reader",
    "register_judge",
}


def _module_level_calls(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every call of a register function made when the module is imported (outside any def)."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in REGISTER_CALLS:
                found.append((node.lineno, name))
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in tree.body:
        visit(statement)
    return found


def test_no_module_registers_a_builtin_when_it_is_imported():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, name in _module_level_calls(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name}(...)")
    assert offenders == []


def test_the_check_finds_a_registration_at_import_time():
    tree = ast.parse(
        "from x import R\nR.register('a', 1)\nfor r in (R,):\n    r.register('b', 2)\ndef f():\n    R.register('c', 3)\n"
    )
    assert _module_level_calls(tree) == [(2, "register"), (4, "register")]


@pytest.mark.parametrize("group", sorted(BUILTINS))
def test_every_builtin_target_exists_and_its_registry_holds_it_in_order(group):
    holders = {
        "agentmemory.retrievers": ("agentmemory.retrievers", "RETRIEVERS"),
        "agentmemory.measures": ("agentmemory.metrics", "REGISTRY"),
        "agentmemory.formats": ("agentmemory.datasets", "FORMATS"),
        "agentmemory.encoders": ("agentmemory.retrievers.encoders", "ENCODERS"),
        "agentmemory.systems": ("agentmemory.systems.registry", "SYSTEMS"),
        "agentmemory.tokenizers": ("agentmemory.metrics.token_counters", "TOKEN_COUNTERS"),
        "agentmemory.answer_formats": ("agentmemory.answers", "ANSWER_FORMATS"),
        "agentmemory.readers": ("agentmemory.live", "READERS"),
        "agentmemory.judges": ("agentmemory.live", "JUDGES"),
    }
    module, attribute = holders[group]
    registry = getattr(importlib.import_module(module), attribute)
    names = [name for name, _ in BUILTINS[group]]
    assert registry.group == group
    assert registry.builtin_names == tuple(names)
    assert list(registry.registered())[: len(names)] == names


def _registry() -> Registry[int]:
    def check(name: str, obj: object) -> int:
        if not isinstance(obj, int):
            raise ParameterError("thing", obj, "is not an int", "register an int")
        return obj

    return Registry("thing", "agentmemory.tests-things", check)


def test_builtins_load_first_and_keep_their_names(monkeypatch):
    monkeypatch.setitem(BUILTINS, "agentmemory.tests-things", (("one", "math:tau"), ("two", "os:SEEK_END")))
    registry = _registry()
    with pytest.raises(
        ParameterError,
        match=r"^thing: 'one' \(str\) is the built-in 'math:tau', whose object is not an int; register an int$",
    ):
        registry.register("one", 1)  # math.tau is no int: the built-in itself is refused by the check
    monkeypatch.setitem(BUILTINS, "agentmemory.tests-things", (("one", "os:SEEK_SET"), ("two", "os:SEEK_END")))
    registry = _registry()
    registry.register("three", 3)  # before any lookup: the built-ins still come first
    assert registry.registered() == {"one": 0, "two": 2, "three": 3}
    with pytest.raises(ParameterError, match="'one'.*is already registered"):
        registry.register("one", 1)


def test_a_lookup_of_one_builtin_loads_that_one_and_listing_loads_all_in_order(monkeypatch):
    """get(name) of a built-in checks that one alone ('in' checks none); the first listing loads the others, in
    the table's order, without checking the one already loaded again."""
    monkeypatch.setitem(BUILTINS, "agentmemory.tests-things", (("one", "os:SEEK_SET"), ("two", "os:SEEK_END")))
    checked = []

    def check(name: str, obj: object) -> int:
        checked.append(name)
        return int(obj)  # type: ignore[call-overload]

    registry: Registry[int] = Registry("thing", "agentmemory.tests-things", check)
    assert "one" in registry
    assert checked == []
    assert registry.get("two") == 2
    assert checked == ["two"]
    assert registry.registered() == {"one": 0, "two": 2}
    assert checked == ["two", "one"]
    registry.unregister("two")
    assert "two" not in registry
