"""Collection.check: what datasets.load holds every format's result to, a plugin's included."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

import memlist_format
import pytest

from agentmemory import Collection, MemoryEntry, Query, load
from agentmemory.datasets import FORMATS, register_format
from agentmemory.errors import ParameterError

ALLOWED = "a format's read returns every entry its judgments name and every scope its queries name, each id once"


@pytest.fixture
def memlist(tmp_path: Path):
    """The memlist plugin format (tests/datasets/memlist_format.py) registered for one test, and a file of it."""
    with memlist_format.registered(tmp_path) as path:
        yield path


def test_a_plugin_format_whose_judgments_name_a_missing_entry_is_refused_in_one_line(memlist: Path) -> None:
    """limit=1 keeps m1 only while q1's judgment names m2: load names the format, the query and the entry."""
    message = (
        "format: 'memlist' (str) read a collection whose judgments of query 'q1' name entry 'm2', which is not "
        f"among its entries; {ALLOWED}"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        load(memlist, limit=1)
    assert [e.id for e in load(memlist, limit=2).entries] == ["m1", "m2"]  # m2 kept: it loads


def _plugin(tmp_path: Path, collection: Collection) -> Path:
    """A format ``handmade`` whose read returns ``collection`` whatever the file, and a file of it."""
    register_format("handmade", None, lambda path: collection, description="a collection made by hand")
    path = tmp_path / "any.txt"
    path.write_text("x", encoding="utf-8")
    return path


ENTRIES = (MemoryEntry("e1", "one", scope="s"), MemoryEntry("e2", "two", scope="s"))
QUERIES = (Query("q1", "first?", scope="s"), Query("q2", "second?", scope="s"))
QRELS = {"q1": {"e1": 1}, "q2": {"e2": 0}}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"entries": (*ENTRIES, MemoryEntry("e1", "again", scope="s"))}, "with two entries 'e1'"),
        ({"queries": (*QUERIES, Query("q2", "again?", scope="s"))}, "with two queries 'q2'"),
        (
            {"queries": (QUERIES[0], Query("q2", "second?", scope="t"))},
            "whose query 'q2' has scope 't', which no entry has",
        ),
        (
            {"qrels": {**QRELS, "q9": {"e1": 1}}},
            "with judgments of query 'q9', which is not among its queries",
        ),
        (
            {"qrels": {"q1": {"e1": 1, "e'3\\n": 0}}},
            "whose judgments of query 'q1' name entry \"e'3\\\\n\", which is not among its entries",
        ),
    ],
)
def test_each_disagreement_is_refused_naming_the_format_and_the_value(
    tmp_path: Path, changes: dict, problem: str
) -> None:
    """Duplicate ids, a query in no entry's scope, judgments of no query or naming no entry: one line each,
    the bad value quoted (agentmemory.errors.quote)."""
    fields = {"entries": ENTRIES, "queries": QUERIES, "qrels": QRELS, **changes}
    collection = Collection("hand", fields["entries"], fields["queries"], MappingProxyType(fields["qrels"]), {})
    path = _plugin(tmp_path, collection)
    message = f"format: 'handmade' (str) read a collection {problem}; {ALLOWED}"
    try:
        with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
            load(path, "handmade")
    finally:
        FORMATS.unregister("handmade")


def test_a_collection_that_agrees_loads_and_check_returns_it(tmp_path: Path) -> None:
    """The same collection without the disagreement loads (a grade-0 judgment and unscoped entries are fine)."""
    collection = Collection("hand", (*ENTRIES, MemoryEntry("e3", "shared")), QUERIES, MappingProxyType(QRELS), {})
    assert collection.check() is collection
    path = _plugin(tmp_path, collection)
    try:
        assert load(path, "handmade").entries == collection.entries
    finally:
        FORMATS.unregister("handmade")


def test_a_collection_without_a_format_is_named_by_its_name() -> None:
    """check() on a collection no format read names the collection instead."""
    collection = Collection("hand", ENTRIES, QUERIES, MappingProxyType({"q1": {"e9": 1}}), {})
    with pytest.raises(ParameterError, match=r"^collection: 'hand' \(str\) is a collection whose judgments"):
        collection.check()


def test_the_built_in_sample_files_pass() -> None:
    """Every built-in format's sample loads through the check (the shipped fixtures)."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    for path in (
        fixtures / "beir-sample",
        fixtures / "locomo-sample" / "locomo-sample.json",
        fixtures / "longmemeval-sample" / "longmemeval-sample.json",
        fixtures / "beam-sample",
    ):
        collection = load(path)
        assert collection.format is not None and collection.check() is collection


def test_importing_the_record_or_the_store_loads_no_format() -> None:
    """agentmemory.collection sits below the formats, and the store exports through it: neither loads a format."""
    import subprocess
    import sys

    code = (
        "import sys, agentmemory.collection, agentmemory.store.transfer, agentmemory.files.fields; "
        "print(sorted(m for m in sys.modules if m.startswith('agentmemory.datasets')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


def test_the_old_module_path_still_imports_the_record_with_a_warning(monkeypatch) -> None:
    """agentmemory.datasets.collection (where the record lived) imports agentmemory.collection for one release,
    with a DeprecationWarning naming the new path."""
    import importlib
    import sys

    import agentmemory.collection

    monkeypatch.delitem(sys.modules, "agentmemory.datasets.collection", raising=False)
    message = "agentmemory.datasets.collection is now agentmemory.collection; the old path will be removed in 0.3.0"
    with pytest.warns(DeprecationWarning, match=f"^{re.escape(message)}$"):
        old = importlib.import_module("agentmemory.datasets.collection")
    assert old.Collection is agentmemory.collection.Collection is Collection
