"""A collection written as a snapshot and mapped back: the same collection (records, queries, judgments, turns), its
columns over a read-only mapping with the ids packed, nothing accepted that is not this collection's snapshot, and
packed ids that read back as the strings they were."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO_ROOT, write_collection

from agentmemory import datasets
from agentmemory.collection import snapshot as snapshot_module
from agentmemory.collection.columns import BufferTexts, Entries, FileTexts, PackedIds
from agentmemory.collection.snapshot import MAGIC, read_snapshot, write_snapshot

FIXTURES = {
    "longmemeval": REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json",
    "locomo": REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json",
    "beam": REPO_ROOT / "fixtures" / "beam-sample",
    "beir": REPO_ROOT / "fixtures" / "beir-sample",
    "notes": REPO_ROOT / "fixtures" / "assistant-notes",
}


def _line(entry_id: str, text: str, scope: str) -> str:
    return json.dumps({"_id": entry_id, "text": text, "scope": scope}, ensure_ascii=False) + "\n"


def beir_columns(root: Path):
    """A BEIR folder read as columns, texts in the file: ASCII, non-ASCII and escaped (kept in memory) texts."""
    corpus = (
        _line("e1", "alpha one", "s1")
        + _line("é2", "café naïve", "s2")
        + json.dumps({"_id": "e3", "text": 'two\nlines "quoted"', "scope": "s1"})
        + "\n"
        + _line("e4", "delta", "s2")
    )
    queries = '{"_id": "q1", "text": "alpha", "scope": "s1"}\n{"_id": "q2", "text": "delta", "scope": "s2"}\n'
    qrels = "query-id\tcorpus-id\tscore\nq1\te1\t1\nq2\te4\t1\n"
    return datasets.load(write_collection(root, corpus, queries, qrels))


@pytest.mark.parametrize("name", [*sorted(FIXTURES), "beir-columns"])
def test_a_snapshot_maps_back_to_the_same_collection(tmp_path: Path, name: str):
    whole = beir_columns(tmp_path / "c") if name == "beir-columns" else datasets.load(FIXTURES[name])
    path = tmp_path / "c.snapshot"
    write_snapshot(whole, path, "key")
    assert path.read_bytes().startswith(MAGIC)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # written, then renamed
    mapped = read_snapshot(path, whole.digest, "key")
    assert mapped is not None and mapped is not whole
    assert mapped == whole and list(mapped.entries) == list(whole.entries)
    assert (mapped.queries, dict(mapped.qrels), mapped.left_out_queries) == (
        whole.queries,
        dict(whole.qrels),
        whole.left_out_queries,
    )
    assert dict(mapped.turns) == dict(whole.turns) and mapped.session_of is whole.session_of
    assert mapped.settings == whole.settings and mapped.format == whole.format
    if isinstance(whole.entries, Entries):
        assert isinstance(mapped.entries, Entries) and isinstance(mapped.entries.ids, PackedIds)
        assert list(mapped.entries.ids) == list(whole.entries.ids)
        assert mapped.entries.columns.keys() == whole.entries.columns.keys()


def test_the_columns_of_a_mapped_snapshot_are_read_only_and_a_part_takes_strings(tmp_path: Path):
    whole = datasets.load(FIXTURES["longmemeval"])
    assert isinstance(whole.entries, Entries) and isinstance(whole.entries.texts, BufferTexts)
    write_snapshot(whole, tmp_path / "s", "key")
    mapped = read_snapshot(tmp_path / "s", whole.digest, "key")
    assert mapped is not None
    entries = mapped.entries
    assert isinstance(entries, Entries)
    buffer = entries.texts._buf  # type: ignore[attr-defined]
    assert isinstance(buffer, np.ndarray) and not buffer.flags.writeable
    scope = whole.judged_queries[0].scope
    part, expected = mapped.only_scopes([scope]), whole.only_scopes([scope])
    assert isinstance(part.entries, Entries) and type(part.entries.ids) is list
    assert list(part.entries) == list(expected.entries) and part.queries == expected.queries


def test_texts_left_in_their_file_stay_there_in_a_snapshot(tmp_path: Path):
    whole = beir_columns(tmp_path / "c")
    assert isinstance(whole.entries, Entries) and isinstance(whole.entries.texts, FileTexts)
    write_snapshot(whole, tmp_path / "s", "key")
    assert b"alpha one" not in (tmp_path / "s").read_bytes()  # spans of the corpus file, not its texts
    mapped = read_snapshot(tmp_path / "s", whole.digest, "key")
    assert mapped is not None and [e.text for e in mapped.entries] == [e.text for e in whole.entries]


def test_only_this_collections_snapshot_is_accepted(tmp_path: Path, monkeypatch):
    whole = datasets.load(FIXTURES["locomo"])
    path = tmp_path / "s"
    write_snapshot(whole, path, "key")
    assert read_snapshot(path, whole.digest, "key") is not None
    assert read_snapshot(path, "0" * 64, "key") is None  # another collection
    assert read_snapshot(path, whole.digest, "other") is None  # read under another source
    assert read_snapshot(tmp_path / "missing", whole.digest, "key") is None
    monkeypatch.setattr(snapshot_module, "__version__", "0.0.0")
    assert read_snapshot(path, whole.digest, "key") is None  # written by another agentmemory
    monkeypatch.undo()
    data = path.read_bytes()
    for name, bad in {"empty": b"", "not one": b"{}" * 40, "cut": data[: len(data) // 2], "garbled": data[:-3]}.items():
        (tmp_path / name).write_bytes(bad)
        assert read_snapshot(tmp_path / name, whole.digest, "key") is None, name
    header = b"[]"  # a header that is JSON, but not an object
    (tmp_path / "list").write_bytes(MAGIC + header + (8).to_bytes(8, "little") + len(header).to_bytes(8, "little"))
    assert read_snapshot(tmp_path / "list", whole.digest, "key") is None


def test_a_snapshot_replaces_an_older_one_at_its_path(tmp_path: Path):
    one, two = datasets.load(FIXTURES["notes"]), datasets.load(FIXTURES["locomo"])
    path = tmp_path / "s"
    write_snapshot(one, path, "key")
    write_snapshot(two, path, "key")
    assert read_snapshot(path, one.digest, "key") is None
    assert read_snapshot(path, two.digest, "key") == two
    assert sorted(os.listdir(tmp_path)) == ["s"]


IDS = ["a", "bé", "", "x\udc80y", "東京", *(f"e{i}" for i in range(150_000))]


@pytest.mark.parametrize("ids", [IDS, [f"e{i}" for i in range(70_000)]], ids=["unicode", "ascii"])
def test_packed_ids_read_back_as_the_strings_they_were(ids: list[str]):
    packed = PackedIds.of(ids)
    assert len(packed) == len(ids) and list(packed) == ids
    assert packed == ids and ids == packed and packed != ids[:-1] and packed != "".join(ids)
    assert [packed[i] for i in (0, 1, 3, -1, len(ids) - 2)] == [ids[i] for i in (0, 1, 3, -1, len(ids) - 2)]
    assert packed[2:6] == ids[2:6] and packed[-3:] == ids[-3:]
    rows = np.array([0, 4, 5, len(ids) - 1], dtype=np.int64)
    assert packed.take(rows) == [ids[i] for i in rows.tolist()] and packed.take(rows[:0]) == []
    assert ids[-1] in packed and "absent" not in packed
    with pytest.raises(IndexError):
        packed[len(ids)]
    assert PackedIds.of(packed) is not packed and list(PackedIds.of(packed)) == ids
