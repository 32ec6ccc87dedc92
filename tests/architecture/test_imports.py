"""The package's import graph against ARCHITECTURE.md: layers, no cycles, deferred imports listed, names.

The graph is read from the source with :mod:`ast` (nothing is imported): every ``import agentmemory...``
and ``from agentmemory... import ...`` of every module, resolved to the module it names.  Imports under
``if TYPE_CHECKING:`` never run; they are held to the layers but cannot make a cycle.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "agentmemory"
DOC = ROOT / "ARCHITECTURE.md"
SHARED_ROLES = {"__init__", "base", "registry"}  # module names that play the same role in several packages


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    deferred: bool  # made inside a function
    type_only: bool  # under ``if TYPE_CHECKING:``
    names: tuple[str, ...]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def resolve(dotted: str) -> str | None:
    while dotted and dotted not in MODULES:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))

    def walk(node: ast.AST, deferred: bool, type_only: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            typed = type_only or _is_type_checking(child)
            if isinstance(child, ast.ImportFrom) and child.module and child.module.split(".")[0] == "agentmemory":
                by_target: dict[str, list[str]] = defaultdict(list)
                for alias in child.names:
                    target = resolve(f"{child.module}.{alias.name}") or resolve(child.module)
                    if target and target != module:
                        by_target[target].append(alias.name)
                for target, names in by_target.items():
                    yield Import(module, target, child.lineno, inner, typed, tuple(names))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    target = resolve(alias.name) if alias.name.split(".")[0] == "agentmemory" else None
                    if target and target != module:
                        yield Import(module, target, child.lineno, inner, typed, ())
            yield from walk(child, inner, typed)

    yield from walk(tree, False, False)


IMPORTS = [edge for module in MODULES for edge in imports_of(module)]


def _block(kind: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"```{kind}\n(.*?)```", text, re.S)
    assert found, f"ARCHITECTURE.md has no ```{kind} block"
    return [line.strip() for line in found.group(1).splitlines() if line.strip()]


LAYERS = [line.split() for line in _block("layers")]
LAYER_OF = {name: index for index, names in enumerate(LAYERS) for name in names}


def top(module: str) -> str:
    """The layer name of a module: its package under agentmemory, or the top-level module's own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_package(name: str) -> bool:
    return (PACKAGE / name / "__init__.py").is_file()


def test_every_module_belongs_to_a_stated_layer() -> None:
    """ARCHITECTURE.md's layer list names every top-level module and package, and nothing that does not exist."""
    present = {top(m) for m in MODULES if m != "agentmemory"}
    assert present == set(LAYER_OF)


def test_at_most_nine_modules_at_the_top_level() -> None:
    """The top level keeps the basics (eval.py, __main__, the package face and _version.py included): at most 9
    modules."""
    top_level = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top_level) <= 9, top_level


def test_imports_point_down_the_layers() -> None:
    """A module imports only from its own package and from layers below it (type-only imports included)."""
    wrong = []
    for edge in IMPORTS:
        if edge.importer == "agentmemory":
            continue  # the package face re-exports every layer's public names
        if edge.imported == "agentmemory":  # the face imports every layer: taking anything from it runs up them
            wrong.append(f"{edge.importer}:{edge.line} takes {edge.names} from the package face")
            continue
        source, target = top(edge.importer), top(edge.imported)
        if source == target and _is_package(source):
            continue
        if LAYER_OF[target] >= LAYER_OF[source]:
            wrong.append(f"{edge.importer}:{edge.line} imports {edge.imported} ({target} is not below {source})")
    assert wrong == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(edges) | {w for targets in edges.values() for w in targets}):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or around a loop (imports inside functions count)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for edge in IMPORTS:
        if not edge.type_only and "agentmemory" not in (edge.importer, edge.imported):
            edges[edge.importer].add(edge.imported)
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a loop of three and a pair are found, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}) == [
        ["a", "b", "c"],
        ["d", "e"],
    ]


DEFERRED_LINE = re.compile(r"^(?P<importer>[\w.]+) -> (?P<imported>[\w.]+): (?P<reason>.+)$")


def _listed_deferred() -> dict[tuple[str, str], str]:
    listed = {}
    for line in _block("deferred"):
        match = DEFERRED_LINE.match(line)
        assert match, f"ARCHITECTURE.md deferred imports: cannot read {line!r} (want 'importer -> imported: reason')"
        listed[(match["importer"], match["imported"])] = match["reason"]
    return listed


def test_imports_inside_functions_are_exactly_the_listed_ones() -> None:
    """Every import of our own modules made inside a function is listed with its reason, and no listed one is gone."""
    actual = {(e.importer, e.imported) for e in IMPORTS if e.deferred and not e.type_only}
    assert sorted(actual - set(_listed_deferred())) == [], "deferred imports not listed in ARCHITECTURE.md"
    assert sorted(set(_listed_deferred()) - actual) == [], "listed in ARCHITECTURE.md but no longer deferred"


@pytest.mark.parametrize("name", sorted({m.rsplit(".", 1)[-1] for m in MODULES if m.count(".") >= 2}))
def test_no_two_packages_hold_a_module_of_one_name(name: str) -> None:
    """A module name says what it holds, so it stands in one package only (``base``/``__init__`` play one role)."""
    holders = sorted(m for m in MODULES if m.count(".") >= 2 and m.rsplit(".", 1)[-1] == name)
    if name.lstrip("_") not in SHARED_ROLES:
        assert len(holders) == 1, holders
