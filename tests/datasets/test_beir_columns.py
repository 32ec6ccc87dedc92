"""A BEIR corpus read into columns: the same entries as the line reader, texts read from the file on demand (a changed
file refused), the sha256 of the file computed while reading, and the line reader's messages for every bad line."""

from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np
import pytest
from conftest import write_collection

from agentmemory import InputError, MemoryEntry, ParameterError, Query, load, load_collection
from agentmemory.collection.columns import Dense, Entries, FileTexts, Sparse, TextList
from agentmemory.datasets import beir
from agentmemory.files import reading

QUERIES = '{"_id": "q1", "text": "alpha"}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\te1\t1\n"


def _line(entry_id: str, text: str, **more: str | None) -> str:
    return json.dumps({"_id": entry_id, "text": text, **more}) + "\n"


CORPORA = {
    "canonical": "".join(_line(f"e{i}", f"alpha text {i}") for i in range(1, 8)),
    "non-ascii": _line("e1", "alpha") + json.dumps({"_id": "é2", "text": "café naïve 東京"}, ensure_ascii=False) + "\n",
    "escaped": _line("e1", 'alpha "quoted"') + _line("e2", "two\nlines") + _line("e3", "é escaped") + _line("e4", "x"),
    "other layouts": '{"_id":"e1","text":"alpha"}\n{"text": "beta", "_id": "e2"}\n{"_id": "e3", "text": "g" }\n'
    + _line("e4", "plain"),
    "scopes": _line("e1", "alpha", scope="s1") + _line("e2", "beta", scope="s2") + _line("e3", "gamma", scope="s1"),
    "null scope": _line("e1", "alpha", scope="s1") + _line("e2", "beta", scope=None) + _line("e3", "c", scope="s1"),
    "no final newline": _line("e1", "alpha") + '{"_id": "e2", "text": "beta"}',
    "empty texts": _line("e1", "") + _line("e2", "alpha") + _line("e3", ""),
}


def _line_reader(monkeypatch: pytest.MonkeyPatch, root) -> tuple[MemoryEntry, ...]:
    """The entries as the line reader makes them (the columns' path turned off)."""
    with monkeypatch.context() as patch:
        patch.setattr(beir, "read_corpus_columns", lambda *args: None)
        entries = load_collection(root).entries
    assert isinstance(entries, tuple)
    return entries


@pytest.mark.parametrize("block", [7, 64, 1 << 24])
@pytest.mark.parametrize("name", sorted(CORPORA))
def test_columns_equal_the_line_readers_records(tmp_path, monkeypatch, name, block) -> None:
    """Every corpus the columns take gives the records the line reader gives, whatever the block size (lines
    cut across blocks); texts come back alike by index, by iteration and from the chunks' spans."""
    monkeypatch.setattr(reading, "BLOCK_BYTES", block)
    queries = QUERIES.replace('"}', '", "scope": "s1"}') if "scope" in name else QUERIES
    root = write_collection(tmp_path, CORPORA[name], queries, QRELS)
    expected = _line_reader(monkeypatch, root)
    collection = load(root)  # checked
    entries = collection.entries
    assert isinstance(entries, Entries)
    assert entries == expected and expected == tuple(entries)
    assert [entries[i] for i in range(-1, len(expected))] == [expected[-1], *expected]
    assert entries[1:3] == expected[1:3] and isinstance(entries[1:3], tuple)
    for size in (1, 10, 1 << 24):
        got = [
            bytes(chunk.buf[s:e]).decode("utf-8")
            for chunk in entries.texts.chunks(size)
            for s, e in zip(chunk.starts.tolist(), chunk.ends.tolist())
        ]
        assert got == [e.text for e in expected]
        flags = np.concatenate([chunk.ascii for chunk in entries.texts.chunks(size)])
        assert flags.tolist() == [e.text.isascii() for e in expected]
    assert collection.scope_ids == {
        s: frozenset(e.id for e in expected if e.scope == s) for s in {*map(_scope, expected)}
    }


def _scope(entry: MemoryEntry) -> str | None:
    return entry.scope


def test_texts_stay_in_the_file(tmp_path) -> None:
    """A canonical corpus keeps no text in memory: every text is a span of the file."""
    root = write_collection(tmp_path, CORPORA["canonical"], QUERIES, QRELS)
    texts = load_collection(root).entries.texts
    assert isinstance(texts, FileTexts) and texts._kept == {}
    assert texts[2] == "alpha text 3"


@pytest.mark.parametrize("block", [5, 1 << 24])
def test_sha256_is_hashlibs_of_the_file(tmp_path, monkeypatch, block) -> None:
    """The corpus's sha256, computed while its blocks are read, is hashlib's of the whole file."""
    monkeypatch.setattr(reading, "BLOCK_BYTES", block)
    root = write_collection(tmp_path, CORPORA["escaped"], QUERIES, QRELS)
    files = load_collection(root).files
    assert files["corpus.jsonl"] == hashlib.sha256((root / "corpus.jsonl").read_bytes()).hexdigest()


@pytest.mark.parametrize("change", ["same size, new time", "new size"])
def test_a_changed_file_is_refused_in_one_line(tmp_path, change) -> None:
    """Texts read after the file changed (size or modification time) are refused with one line naming the file."""
    root = write_collection(tmp_path, CORPORA["canonical"], QUERIES, QRELS)
    entries = load_collection(root).entries
    path = root / "corpus.jsonl"
    before = path.stat()
    if change == "new size":
        path.write_text(CORPORA["canonical"] + _line("e9", "more"), encoding="utf-8")
    else:
        path.write_text(CORPORA["canonical"].replace("alpha", "omega"), encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    message = (
        f"{path}: changed after it was read (size {before.st_size:,} -> {path.stat().st_size:,} bytes, or its "
        "modification time); its texts are read from the file on demand: load the collection again"
    )
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        entries[0]
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        list(entries.texts.chunks())


@pytest.mark.parametrize(
    ("corpus", "line", "problem"),
    [
        (CORPORA["canonical"] + _line("e3", "again"), 8, "duplicate _id 'e3' (first on line 3)"),
        (CORPORA["canonical"] + _line("e 9", "x"), 8, "_id 'e 9' contains whitespace"),
        (CORPORA["canonical"] + _line("", "x"), 8, "_id '' is not a non-empty string"),
        (CORPORA["canonical"] + '{"_id": "e9", "text": 3}\n', 8, "text 3 is not a string"),
        (CORPORA["canonical"] + '{"_id": "e9", "text": "x"\n', 8, "malformed JSON"),
        (CORPORA["scopes"] + '{"_id": "e9", "text": "x", "scope": 4}\n', 4, "scope 4 is not a string"),
    ],
)
def test_bad_lines_keep_the_line_readers_messages(tmp_path, monkeypatch, corpus, line, problem) -> None:
    """A bad line after blocks the columns took is named as the line reader names it, with its line."""
    monkeypatch.setattr(reading, "BLOCK_BYTES", 64)
    root = write_collection(tmp_path, corpus, QUERIES, QRELS)
    where = f"{root / 'corpus.jsonl'}:{line}: {problem}"
    with pytest.raises(InputError, match=f"^{re.escape(where)}"):
        load_collection(root)


def test_check_names_a_repeated_id_of_columns() -> None:
    """Collection.check refuses columns holding one id twice with the message it gives for records."""
    entries = Entries(["a", "b", "a"], TextList(["x", "y", "z"]))
    records = (MemoryEntry("a", "x"), MemoryEntry("b", "y"), MemoryEntry("a", "z"))
    from agentmemory import Collection

    messages = []
    for held in (entries, records):
        with pytest.raises(ParameterError) as err:
            Collection(name="c", entries=held, queries=(), qrels={}, files={}).check()
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "with two entries 'a'" in messages[0]


def test_entries_of_records_round_trip() -> None:
    """Entries.of keeps every field of the records (sparse columns for the few that differ from the default)."""
    from datetime import datetime, timezone

    from agentmemory.records import Provenance

    records = (
        MemoryEntry("a", "x"),
        MemoryEntry(
            "b",
            "y",
            tags=("t",),
            created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
            provenance=Provenance(source="derived", derived_from=("a",)),
            scope="s",
            metadata={"k": 1},
        ),
        MemoryEntry("c", "z", scope="s"),
    )
    entries = Entries.of(records)
    assert entries == records and tuple(entries) == records
    assert isinstance(entries.column("tags"), Dense) and entries.column("tags").values == [(), ("t",), ()]
    assert list(entries.provenances()) == [("b", records[1].provenance)]
    assert entries.scopes() == [None, "s"]
    many = records + tuple(MemoryEntry(f"p{i}", "w") for i in range(9))  # 1 of 12 tagged: a map of rows
    sparse = Entries.of(many)
    assert isinstance(sparse.column("tags"), Sparse) and sparse.column("tags").values == {1: ("t",)}
    assert sparse == many and list(sparse.provenances()) == [("b", records[1].provenance)]
    assert sparse.column("scope") is not None and sparse[2].scope == "s" and sparse.column("created_at") is not None


def test_a_judgment_of_an_unknown_entry_is_named_with_its_line(tmp_path) -> None:
    """A judgments line naming no entry of a corpus read as columns is refused with the line reader's message."""
    qrels = QRELS + "q1\tzz\t1\n"
    root = write_collection(tmp_path, CORPORA["canonical"], QUERIES, qrels)
    where = (
        f"{root / 'qrels' / 'test.tsv'}:3: unknown entry 'zz' (not in corpus.jsonl); judge only entries of corpus.jsonl"
    )
    with pytest.raises(InputError, match=f"^{re.escape(where)}$"):
        load_collection(root)


def test_check_names_a_judged_entry_missing_from_columns() -> None:
    """Collection.check finds a judged id the columns lack (in one pass) and names it as for records."""
    from agentmemory import Collection

    entries = Entries(["a", "b"], TextList(["x", "y"]))
    queries = (Query("q1", "x"),)
    messages = []
    for held in (entries, tuple(entries)):
        collection = Collection(name="c", entries=held, queries=queries, qrels={"q1": {"a": 1, "zz": 1}}, files={})
        with pytest.raises(ParameterError) as err:
            collection.check()
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "whose judgments of query 'q1' name entry 'zz', which is not among its entries" in messages[0]
    assert MemoryEntry("a", "x") in entries and MemoryEntry("a", "y") not in entries and "a" not in entries


def test_a_removed_file_is_refused_in_one_line(tmp_path) -> None:
    """Texts read after their file is gone are refused with one line naming it."""
    root = write_collection(tmp_path, CORPORA["canonical"], QUERIES, QRELS)
    entries = load_collection(root).entries
    path = root / "corpus.jsonl"
    path.unlink()
    message = (
        f"{path}: cannot be read again (No such file or directory); its texts are read from the file on demand: "
        "load the collection again"
    )
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        entries[0]


def test_columns_survive_pickling(tmp_path) -> None:
    """Entries read as columns (texts in their file, some kept) pickle to a worker process and come back equal."""
    import pickle

    root = write_collection(tmp_path, CORPORA["escaped"], QUERIES, QRELS)
    entries = load_collection(root).entries
    again = pickle.loads(pickle.dumps(entries))
    assert isinstance(again, Entries) and isinstance(again.texts, FileTexts)
    assert again == entries and again[0] == entries[0]
