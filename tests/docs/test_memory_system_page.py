"""docs/protocols/memory-system.md writes out the records' fields and the optional members in Markdown (readable
in the repository, not only on the built site), and what it writes is what the code declares."""

from __future__ import annotations

import dataclasses
import re

from conftest import REPO_ROOT

from agentmemory.systems import SYSTEM_CAPABILITIES, Memory, Turn

PAGE = REPO_ROOT / "docs" / "protocols" / "memory-system.md"


def _rows(first_cell: str) -> list[list[str]]:
    """The cells of every table row of the page whose first cell starts with ``first_cell``."""
    rows = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| `{first_cell}"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def test_record_tables_list_every_field_with_its_type_and_default():
    """The Turn and Memory tables hold each field of the dataclass, in order, with its type and default."""
    for record in (Turn, Memory):
        rows = _rows(f"{record.__name__}.")
        fields = dataclasses.fields(record)
        assert [r[0] for r in rows] == [f"`{record.__name__}.{f.name}`" for f in fields]
        for row, field in zip(rows, fields):
            default = "required" if field.default is dataclasses.MISSING else f"`{field.default!r}`"
            assert (row[1], row[2]) == (f"`{field.type}`", default), field.name
            assert row[3], field.name  # what it holds, in words


def test_capability_table_lists_every_declared_member_with_its_meaning():
    """The optional members' table is SYSTEM_CAPABILITIES, member by member, meaning by meaning."""
    text = PAGE.read_text(encoding="utf-8")
    rows = [r for r in (_rows(name) for name in SYSTEM_CAPABILITIES) for r in r[:1]]
    assert [(r[0], r[1]) for r in rows] == [(f"`{n}`", m) for n, m in SYSTEM_CAPABILITIES.items()]
    assert "<!-- generated:" not in text
