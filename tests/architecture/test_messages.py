"""Messages about what was read from a file quote values through errors.quote, never a bare repr.

A 5 MB value quoted by ``{value!r}`` made a 5 MB error line (class 6 of the
bad-input issue).  The root fix is one helper, :func:`agentmemory.errors.quote`;
this test keeps every reader on it: no exception raised in a module that reads
input files builds its message with a ``!r`` conversion.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "agentmemory"
READERS = [
    "datasets/beir.py",
    "datasets/locomo.py",
    "datasets/longmemeval.py",
    "datasets/base.py",
    "files/trec.py",
    "evaluation/runfiles.py",
    "files/reading.py",
    "files/output_plan.py",
    "files/atomic.py",
    "records.py",
    "metrics/provenance.py",
    "cli/app.py",
    "answers/formats.py",
    "answers/shape.py",
    "answers/labels.py",
    "answers/mapping.py",
    "answers/matching.py",
    "answers/zep.py",
    "answers/evermemos.py",
]


def _bare_reprs(source: str) -> list[int]:
    """Line numbers of ``{x!r}`` inside the arguments of a call to ``...Error(...)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if not name.endswith("Error"):
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for inner in ast.walk(arg):
                if isinstance(inner, ast.FormattedValue) and inner.conversion == ord("r"):
                    lines.append(inner.lineno)
    return lines


@pytest.mark.parametrize("module", READERS)
def test_error_messages_quote_values_through_errors_quote(module: str) -> None:
    """No f-string in an error raised by a reader of inputs uses !r: values go through errors.quote (cut to 160 characters)."""
    assert _bare_reprs((PACKAGE / module).read_text(encoding="utf-8")) == []


def test_the_check_finds_a_bare_repr() -> None:
    """The check itself sees a !r inside an error's message, and nothing elsewhere."""
    assert _bare_reprs('raise InputError(p, 1, f"tags {value!r} bad")\nx = f"{y!r}"\n') == [1]
