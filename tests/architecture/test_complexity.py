"""No function of the package is too complex to read: cyclomatic complexity <= 25 and <= 120 lines.

Complexity is radon's (McCabe's count plus one per boolean operator and comprehension), the measure the
architecture issue counted with.  Compiled kernels are exempt: numba compiles them from one loop nest each,
and the NumPy reference beside each is the readable definition (``agentmemory/retrievers/_accel.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

radon_complexity = pytest.importorskip("radon.complexity", reason="radon (the test extra) measures complexity")

PACKAGE = Path(__file__).resolve().parents[2] / "agentmemory"
MAX_COMPLEXITY = 25
MAX_LINES = 120
COMPILED = {"agentmemory/retrievers/_accel.py"}  # numba kernels (see the module docstring)


def _functions() -> list[tuple[str, str, int, int]]:
    """(file, qualified name, complexity, lines) of every function and method outside the compiled kernels."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        if relative in COMPILED or "__pycache__" in path.parts:
            continue
        source = path.read_text(encoding="utf-8")
        for block in radon_complexity.cc_visit(source):
            for item in [block, *getattr(block, "closures", [])]:
                if item.letter == "C":  # a class: its methods are listed on their own
                    continue
                name = f"{item.classname}.{item.name}" if getattr(item, "classname", None) else item.name
                found.append((relative, name, item.complexity, item.endline - item.lineno + 1))
            for method in getattr(block, "methods", []):
                found.append(
                    (relative, f"{block.name}.{method.name}", method.complexity, method.endline - method.lineno + 1)
                )
    return sorted(set(found))


def test_no_function_is_over_the_complexity_limit() -> None:
    """Every function outside the compiled kernels has radon complexity <= 25."""
    over = [(f, n, c) for f, n, c, _ in _functions() if c > MAX_COMPLEXITY]
    assert over == []


def test_no_function_is_over_the_length_limit() -> None:
    """Every function outside the compiled kernels is at most 120 lines, docstring included."""
    over = [(f, n, lines) for f, n, _, lines in _functions() if lines > MAX_LINES]
    assert over == []


def test_the_measure_sees_a_complex_function() -> None:
    """The check can fail: a function of 26 branches is counted at 27."""
    body = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(26))
    [block] = radon_complexity.cc_visit(f"def f(x):\n{body}\n    return -1\n")
    assert block.complexity == 27 and ast.parse(f"def f(x):\n{body}\n").body
