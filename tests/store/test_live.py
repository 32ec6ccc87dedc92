"""A store given a collection's entries as columns: the same store as one given the records (searches, events,
contents, updates and forgets), without making the records; a retriever with ``add_texts`` indexes the columns."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from agentmemory import MemoryEntry, MemoryStore, ParameterError, Query
from agentmemory.collection.columns import Entries, TextSource
from agentmemory.retrievers.bm25 import BM25
from agentmemory.store.events import HashIds, SteppingClock

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
RECORDS = (
    MemoryEntry("a1", "alpha beta", scope="s1", tags=("x",)),
    MemoryEntry("b1", "beta gamma", scope="s2"),
    MemoryEntry("a2", "alpha alpha delta", scope="s1"),
    MemoryEntry("b2", "gamma delta", scope="s2", tags=("y",)),
    MemoryEntry("n1", "alpha gamma"),
)
QUERIES = [Query("q1", "alpha", scope="s1"), Query("q2", "gamma delta", scope="s2"), Query("q3", "alpha")]


def _store(**kwargs) -> MemoryStore:
    return MemoryStore(["bm25", "tags"], clock=SteppingClock(T0), ids=HashIds("live-test"), **kwargs)


def _state(store: MemoryStore) -> tuple:
    hits = {
        key: [(q.id, [(h.entry_id, h.score) for h in found]) for q, found in store.search_all(QUERIES, 5, key)]
        for key in store.retriever_names
    }
    return hits, [e.to_dict() for e in store.log], tuple(store), len(store), store.scopes


def test_columns_make_the_same_store_as_records() -> None:
    """Searches, events, contents (in order), length and scopes are those of the store given the records."""
    by_records, by_columns = _store(), _store()
    by_records.add(RECORDS)
    by_columns.add(Entries.of(RECORDS))
    assert [type(s) for s in by_columns._entries._segments] == [Entries]  # held as columns, no records made
    assert _state(by_columns) == _state(by_records)
    assert by_columns.get("b2") == RECORDS[3] and "a2" in by_columns and "zz" not in by_columns
    assert by_columns.holds_exactly(Entries.of(RECORDS)) and by_columns.holds_exactly(RECORDS)


def test_updates_and_forgets_of_column_entries() -> None:
    """Updating and forgetting entries held as columns gives what it gives on records (order kept, forgotten gone)."""
    stores = _store(), _store()
    stores[0].add(RECORDS)
    stores[1].add(Entries.of(RECORDS))
    for store in stores:
        store.add(MemoryEntry("c1", "epsilon alpha", scope="s1"))
        store.update("a2", "zeta alpha")
        store.forget("b1")
        store.derive("d1", "alpha summary", ["a1", "a2"])
    assert _state(stores[1]) == _state(stores[0])
    assert stores[1].get("a2").text == "zeta alpha"
    with pytest.raises(ParameterError, match=r"^entry_id: 'b1' \(str\) was forgotten"):
        stores[1].get("b1")
    with pytest.raises(ParameterError, match=r"^entry_id: 'a1' \(str\) is a source of 'd1'"):
        stores[1].forget("a1")


def test_a_bad_batch_of_columns_is_refused_as_records_are() -> None:
    """Columns with an id the store holds (or twice) are refused with the records' message, and add nothing."""
    store = _store()
    store.add(RECORDS[:1])
    with pytest.raises(ParameterError, match=re.escape("entry.id: 'a1' (str) is already in the store")):
        store.add(Entries.of(RECORDS))
    twice = Entries.of((RECORDS[1], RECORDS[1]))
    with pytest.raises(ParameterError, match=re.escape("entry.id: 'b1' (str) is already in the store")):
        store.add(twice)
    assert len(store) == 1 and [e.type for e in store.log] == ["add"]


def test_a_store_file_gets_records(tmp_path) -> None:
    """A store on disk keeps every entry's first version: columns are added as records, the same rows and events."""
    with _store(path=tmp_path / "a.db") as by_records, _store(path=tmp_path / "b.db") as by_columns:
        by_records.add(RECORDS)
        by_columns.add(Entries.of(RECORDS))
        assert [type(s) for s in by_columns._entries._segments] == [dict]
        assert _state(by_columns) == _state(by_records)
        assert by_columns.history("a1") == by_records.history("a1")


def test_a_retriever_with_add_texts_indexes_the_columns(monkeypatch) -> None:
    """A retriever that has add_texts(ids, texts) is given each scope's ids and texts (a TextSource), not records;
    its searches are those of the records' store."""
    calls: list[tuple[list[str], list[str]]] = []
    real = BM25.add_texts

    def add_texts(self: BM25, ids: list[str], texts: TextSource) -> None:
        assert isinstance(texts, TextSource)
        calls.append((list(ids), [texts[i] for i in range(len(texts))]))
        real(self, ids, texts)

    by_records = _store()
    by_records.add(RECORDS)
    calls.clear()  # BM25.add(records) is add_texts over their texts: only the columns' calls count below
    monkeypatch.setattr(BM25, "add_texts", add_texts)
    monkeypatch.setattr(BM25, "add", lambda self, entries: pytest.fail("a store of columns gave BM25 records"))
    by_columns = _store()
    by_columns.add(Entries.of(RECORDS))
    assert calls == [(["a1", "a2"], ["alpha beta", "alpha alpha delta"]), (["b1", "b2"], ["beta gamma", "gamma delta"]),
                     (["n1"], ["alpha gamma"])]  # fmt: skip
    assert _state(by_columns)[0]["bm25"] == _state(by_records)[0]["bm25"]


def test_dependency_order_keeps_columns_none_of_which_is_derived() -> None:
    """Columns without a derived entry come back as they are (no record made); with one, sources come first."""
    from agentmemory.records import Provenance
    from agentmemory.store.core import dependency_order

    entries = Entries.of(RECORDS)
    assert dependency_order(entries) is entries
    derived = MemoryEntry("d", "summary", provenance=Provenance(source="derived", derived_from=("z",)))
    source = MemoryEntry("z", "source")
    assert dependency_order(Entries.of((derived, source))) == [source, derived]
