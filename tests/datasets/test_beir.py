"""The beir format: the shipped fixture as loaded, the folder's rules, every bad input with its exact message, the writer."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_collection

from agentmemory import (
    Collection,
    InputError,
    MemoryEntry,
    MissingFileError,
    ParameterError,
    Query,
    load,
    load_collection,
)
from agentmemory.collection import collection_summary, default_collection_path
from agentmemory.datasets import beir
from agentmemory.files.fields import parse_timestamp
from agentmemory.records import Provenance

BEIR = REPO_ROOT / "fixtures" / "beir-sample"

# A small valid collection; each bad-input case below changes one file of it.
CORPUS = (
    '{"_id": "e1", "text": "alpha beta", "tags": ["x"], "created_at": "2026-01-01T00:00:00Z"}\n'
    '{"_id": "e2", "text": "gamma", "provenance": {"source": "derived", "derived_from": ["e1"]}}\n'
)
QUERIES = '{"_id": "q1", "text": "alpha"}\n{"_id": "q2", "text": "gamma", "tags": ["x"]}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\te1\t1\nq2\te2\t1\n"


# -- the shipped fixture ------------------------------------------------------


def test_fixture_sizes(notes) -> None:
    """The seed fixture has 16 entries, 5 queries (all judged) and 8 judgments, all grade 1."""
    assert len(notes.entries) == 16
    assert [q.id for q in notes.queries] == ["q1", "q2", "q3", "q4", "q5"]
    assert notes.unjudged_query_ids == ()
    grades = [g for judged in notes.qrels.values() for g in judged.values()]
    assert grades == [1] * 8
    assert {q: notes.relevant(q) for q in notes.qrels} == {
        "q1": ("m01", "m10"),
        "q2": ("m02", "m13"),
        "q3": ("m03", "m11"),
        "q4": ("m12",),
        "q5": ("m05",),
    }


def test_fixture_entries_have_tags_times_and_provenance(notes) -> None:
    """Every fixture entry has tags, a UTC created_at and a provenance source; m10 is derived from m01."""
    for e in notes.entries:
        assert e.tags
        assert e.created_at is not None and e.created_at.utcoffset().total_seconds() == 0
        assert e.provenance.source in {"conversation", "tool", "document", "derived"}
    m10 = notes.entry("m10")
    assert (m10.provenance.source, m10.provenance.derived_from) == ("derived", ("m01",))
    assert notes.entry("m01").created_at == datetime(2026, 1, 8, 19, 12, tzinfo=timezone.utc)


def test_fixture_file_hashes_are_sha256_of_the_bytes(notes, fixture_dir: Path) -> None:
    """files maps each input file's relative POSIX path to the sha256 of its bytes."""
    assert dict(notes.files) == {
        name: hashlib.sha256((fixture_dir / name).read_bytes()).hexdigest()
        for name in ("corpus.jsonl", "qrels/test.tsv", "queries.jsonl")
    }
    assert notes.name == "assistant-notes"


def test_collection_summary(notes) -> None:
    """collection_summary gives name, counts and file hashes, JSON-ready."""
    summary = collection_summary(notes)
    assert {k: summary[k] for k in ("name", "entries", "queries", "judged_queries", "judgments")} == {
        "name": "assistant-notes",
        "entries": 16,
        "queries": 5,
        "judged_queries": 5,
        "judgments": 8,
    }
    assert summary["files"] == dict(notes.files)
    assert (summary["skipped_queries"], summary["repairs"]) == ([], [])


def test_default_collection_is_found_from_any_working_directory(tmp_path: Path, monkeypatch) -> None:
    """default_collection_path finds the shipped fixture whatever the working directory is."""
    monkeypatch.chdir(tmp_path)
    path = default_collection_path()
    assert path == REPO_ROOT / "fixtures" / "assistant-notes"
    assert len(load_collection(path).entries) == 16


def test_digest_depends_on_every_file(tmp_path: Path) -> None:
    """The collection digest changes when any input file changes, and not otherwise."""
    a = load_collection(write_collection(tmp_path / "a", CORPUS, QUERIES, QRELS))
    b = load_collection(write_collection(tmp_path / "b", CORPUS, QUERIES, QRELS))
    c = load_collection(write_collection(tmp_path / "c", CORPUS, QUERIES, QRELS + "q1\te2\t0\n"))
    assert a.digest == b.digest
    assert a.digest != c.digest


# -- the format -----------------------------------------------------------------


def test_format_fields(tmp_path: Path) -> None:
    """title joins the text, extra fields become metadata, integer ids become text, offsets become UTC."""
    corpus = (
        '{"_id": 7, "title": "Diet", "text": "vegetarian", "lang": "en", "created_at": "2026-03-01T10:30:00+01:00"}\n'
        "\n"
        '{"_id": "e2", "title": "", "text": "no title", "tags": null}\n'
    )
    queries = '{"_id": "q1", "text": "diet", "tags": [], "category": 4}\n{"_id": "q2", "text": "no tags"}\n'
    c = load_collection(write_collection(tmp_path / "c", corpus, queries, "query-id\tcorpus-id\tscore\nq1\t7\t2\n"))
    first, second = c.entries
    assert (first.id, first.text, dict(first.metadata)) == ("7", "Diet vegetarian", {"lang": "en"})
    assert first.created_at == datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)
    assert first.provenance.source == "unknown"
    assert (second.text, second.tags, second.created_at) == ("no title", (), None)
    q1, q2 = c.queries
    assert (q1.tags, dict(q1.metadata)) == ((), {"category": 4})
    assert q2.tags is None
    assert c.qrels == {"q1": {"7": 2}}
    assert c.unjudged_query_ids == ("q2",)
    assert [q.id for q in c.judged_queries] == ["q1"]


def test_qrels_grades_zero_and_negative_are_judged_not_relevant(tmp_path: Path) -> None:
    """Grades <= 0 are judgments (the query counts) but not relevant; the header line is optional."""
    c = load_collection(write_collection(tmp_path / "c", CORPUS, QUERIES, "q1\te1\t0\nq2\te2\t-1\nq2\te1\t3\n"))
    assert c.relevant("q1") == ()
    assert c.relevant("q2") == ("e1",)
    assert c.unjudged_query_ids == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-01T09:30:00Z", datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)),
        ("2026-03-01T09:30:00z", datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)),
        ("2026-03-01T11:30:00+02:00", datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)),
        ("2026-03-01T09:30:00.250000+00:00", datetime(2026, 3, 1, 9, 30, 0, 250000, tzinfo=timezone.utc)),
    ],
)
def test_parse_timestamp_accepts_iso_8601_with_timezone(value: str, expected: datetime) -> None:
    """ISO 8601 timestamps with a timezone (Z allowed) are read and converted to UTC."""
    parsed = parse_timestamp(value, "f.jsonl", 1)
    assert parsed == expected
    assert parsed.tzinfo == timezone.utc


# -- bad input: (file, its new content, message after "<path>") -----------------

BAD_INPUTS = [
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"_id": "e3" "text": "x"}\n',
        ":3: malformed JSON (Expecting ',' delimiter at column 14); expected one JSON object per line",
        id="malformed-json",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '["e3", "x"]\n',
        ":3: expected a JSON object, found list",
        id="not-an-object",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"text": "no id"}\n',
        ":3: missing _id; every line needs a string _id",
        id="missing-id",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"_id": "", "text": "empty id"}\n',
        ":3: _id '' is not a non-empty string; every line needs a string _id",
        id="empty-id",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"_id": "e3"}\n',
        ":3: text None is not a string; every line needs a text",
        id="missing-text",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"_id": "e1", "text": "again"}\n',
        ":3: duplicate _id 'e1' (first on line 1); every entry _id must be unique",
        id="duplicate-entry-id",
    ),
    pytest.param(
        "queries.jsonl",
        QUERIES + '{"_id": "q1", "text": "again"}\n',
        ":3: duplicate _id 'q1' (first on line 1); every query _id must be unique",
        id="duplicate-query-id",
    ),
    pytest.param(
        "queries.jsonl",
        '{"text": "no id"}\n',
        ":1: missing _id; every line needs a string _id",
        id="query-missing-id",
    ),
    pytest.param(
        "queries.jsonl",
        QUERIES + '{"_id": "q3", "text": "where?", "scope": "elsewhere"}\n',
        ":3: scope 'elsewhere' is the scope of no entry in corpus.jsonl; a query finds only the entries of its own "
        "scope (leave scope out for the entries without one)",
        id="query-scope-of-no-entry",
    ),
    pytest.param(
        "qrels/test.tsv",
        QRELS + "q1\te9\t1\n",
        ":4: unknown entry 'e9' (not in corpus.jsonl); judge only entries of corpus.jsonl",
        id="qrels-unknown-entry",
    ),
    pytest.param(
        "qrels/test.tsv",
        QRELS + "q9\te1\t1\n",
        ":4: unknown query 'q9' (not in queries.jsonl); judge only queries of queries.jsonl",
        id="qrels-unknown-query",
    ),
    pytest.param(
        "qrels/test.tsv",
        QRELS + "q1 e2 1\n",
        ":4: expected 3 tab-separated fields query-id, corpus-id, score; found 1",
        id="qrels-spaces-not-tabs",
    ),
    pytest.param(
        "qrels/test.tsv",
        QRELS + "q1\te2\tyes\n",
        ":4: score 'yes' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        id="qrels-grade-not-integer",
    ),
    pytest.param(
        "qrels/test.tsv",
        QRELS + "q1\te1\t2\n",
        ":4: query 'q1' judges entry 'e1' twice (first on line 2); judge each pair once",
        id="qrels-pair-twice",
    ),
    pytest.param(
        "corpus.jsonl",
        "",
        ": the corpus has no entries; add at least one JSON line",
        id="empty-corpus",
    ),
    pytest.param(
        "corpus.jsonl",
        "\n  \n",
        ": the corpus has no entries; add at least one JSON line",
        id="blank-corpus",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "created_at": "1 March 2026"}\n',
        ":1: created_at '1 March 2026' is not ISO 8601; expected e.g. 2026-03-01T09:30:00Z",
        id="bad-created-at",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "created_at": "2026-03-01T09:30:00"}\n',
        ":1: created_at '2026-03-01T09:30:00' has no timezone; add one, e.g. 2026-03-01T09:30:00Z",
        id="created-at-without-timezone",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "created_at": 1767225600}\n',
        ":1: created_at 1767225600 is not a string; expected ISO 8601 like 2026-03-01T09:30:00Z",
        id="created-at-not-a-string",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "tags": "diet"}\n',
        ":1: tags 'diet' is not a list of strings",
        id="tags-not-a-list",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "provenance": {"source": "chat", "when": "today"}}\n',
        ":1: provenance has unknown field 'when'; allowed: actor, derived_from, ref, source",
        id="provenance-unknown-field",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "provenance": {"derived_from": "e0"}}\n',
        ":1: provenance.derived_from 'e0' is not a list of entry ids",
        id="derived-from-not-a-list",
    ),
    pytest.param(
        "corpus.jsonl",
        CORPUS + '{"_id": "e3", "text": "c", "provenance": {"derived_from": ["e1", "e7"]}}\n',
        ":3: provenance.derived_from names unknown entry 'e7'; derived_from may only name entries of this corpus",
        id="derived-from-unknown",
    ),
    pytest.param(
        "corpus.jsonl",
        '{"_id": "e1", "text": "a", "provenance": {"actor": 3}}\n',
        ":1: provenance.actor 3 is not a string",
        id="provenance-actor-not-a-string",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS)
def test_bad_input_is_refused_with_file_line_and_message(tmp_path: Path, name: str, content: str, message: str) -> None:
    """Each malformed collection is an InputError (a ValueError) naming the file, the line and what to do."""
    root = write_collection(tmp_path / "c", CORPUS, QUERIES, QRELS)
    (root / name).write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=f"^{re.escape(str(root / name) + message)}$") as info:
        load_collection(root)
    assert isinstance(info.value, ValueError)
    assert info.value.path == str(root / name)


def test_invalid_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    """A corpus that is not UTF-8 is refused naming the line of the first bad byte."""
    root = write_collection(tmp_path / "c", CORPUS, QUERIES, QRELS)
    (root / "corpus.jsonl").write_bytes(CORPUS.encode() + b'{"_id": "e3", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match=re.escape(f"{root / 'corpus.jsonl'}:3: is not valid UTF-8")):
        load_collection(root)


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file_is_named(tmp_path: Path, missing: str) -> None:
    """A collection without one of its files is a MissingFileError (a FileNotFoundError) naming that file."""
    root = write_collection(tmp_path / "c", CORPUS, QUERIES, QRELS)
    (root / missing).unlink()
    with pytest.raises(MissingFileError, match=f"^{re.escape(str(root / missing))}: no such file$") as info:
        load_collection(root)
    assert isinstance(info.value, FileNotFoundError)


def test_missing_folder_and_file_instead_of_folder(tmp_path: Path) -> None:
    """A collection path that does not exist, or is a file, is refused with what a collection is."""
    with pytest.raises(MissingFileError, match=re.escape(f"{tmp_path / 'nope'}: no such collection folder")):
        load_collection(tmp_path / "nope")
    file = tmp_path / "corpus.jsonl"
    file.write_text(CORPUS)
    with pytest.raises(
        InputError,
        match=re.escape(f"{file}: is not a folder; a collection is a folder with corpus.jsonl, queries.jsonl, qrels/"),
    ):
        load_collection(file)


def test_other_split_is_read(tmp_path: Path) -> None:
    """split='dev' reads qrels/dev.tsv; a missing split file is named."""
    root = write_collection(tmp_path / "c", CORPUS, QUERIES, QRELS)
    (root / "qrels" / "dev.tsv").write_text("q2\te1\t1\n")
    assert load_collection(root, split="dev").qrels == {"q2": {"e1": 1}}
    with pytest.raises(MissingFileError, match=re.escape(f"{root / 'qrels' / 'train.tsv'}: no such file")):
        load_collection(root, split="train")


def test_progress_bar_only_when_asked(capsys):
    """load_collection shows a tqdm bar over the corpus on stderr with progress=True, and nothing by default."""
    load_collection(default_collection_path())
    assert capsys.readouterr().err == ""
    load_collection(default_collection_path(), progress=True)
    err = capsys.readouterr().err
    assert "load corpus.jsonl" in err
    assert "16/16" in err or "16 entries" in err


# -- the BEIR sample through load(): a plain BEIR dataset without memory fields ---------------------


def test_beir_title_joined_to_text():
    """A non-empty title is prepended to the text with one space; empty or absent titles are not."""
    collection = load(BEIR)
    texts = {e.id: e.text for e in collection.entries}
    assert texts == {
        "doc1": "Tomato seedlings Harden off tomato seedlings for a week before planting them outdoors.",
        "doc2": "Basil Basil wilts below 10 degrees Celsius; keep it indoors until late May.",
        "doc3": "Water potted plants in the morning so the leaves dry before night.",
        "doc4": "Compost needs a mix of green and brown material, roughly one part green to three parts brown.",
        "doc5": "Slugs Copper tape around raised beds keeps most slugs away from lettuce.",
    }


def test_beir_extra_fields_kept_in_metadata():
    """Fields beyond _id/text/title land in metadata, for entries and queries."""
    collection = load(BEIR)
    meta = {e.id: dict(e.metadata) for e in collection.entries}
    assert meta == {
        "doc1": {"metadata": {"source": "garden-notes"}},
        "doc2": {"metadata": {"source": "garden-notes"}, "url": "https://example.org/basil"},
        "doc3": {"metadata": {}},
        "doc4": {},
        "doc5": {"metadata": {"source": "forum"}, "lang": "en"},
    }
    assert {q.id: dict(q.metadata) for q in collection.queries} == {
        "q1": {"metadata": {}},
        "q2": {},
        "q3": {},
        "q4": {"metadata": {"difficulty": "easy"}},
        "q5": {},
    }


def test_beir_without_memory_fields():
    """Without tags, created_at or provenance, entries get no tags, no time and unknown provenance."""
    for entry in load(BEIR).entries:
        assert entry.tags == ()
        assert entry.created_at is None
        assert entry.provenance == Provenance()
        assert entry.scope is None
    assert all(q.tags is None and q.group is None and q.scope is None for q in load(BEIR).queries)


def test_beir_test_split():
    """split='test' (the default) reads qrels/test.tsv, grades as written; dev-only queries are unjudged."""
    collection = load(BEIR)
    assert {q: dict(d) for q, d in collection.qrels.items()} == {
        "q1": {"doc1": 1},
        "q2": {"doc2": 2, "doc3": 0},
        "q3": {"doc3": 1},
    }
    assert [q.id for q in collection.judged_queries] == ["q1", "q2", "q3"]
    assert collection.unjudged_query_ids == ("q4", "q5")
    assert collection.relevant("q2") == ("doc2",)
    assert collection.name == "beir-sample"
    assert collection.skipped == () and collection.repairs == ()


def test_beir_dev_split_and_file_hashes():
    """split='dev' reads qrels/dev.tsv and hashes exactly the files it read."""
    collection = load(BEIR, split="dev")
    assert {q: dict(d) for q, d in collection.qrels.items()} == {"q4": {"doc4": 1}, "q5": {"doc5": 1}}
    assert dict(collection.files) == {
        name: hashlib.sha256((BEIR / name).read_bytes()).hexdigest()
        for name in ("corpus.jsonl", "qrels/dev.tsv", "queries.jsonl")
    }


def test_beir_missing_split():
    """A split with no qrels file raises MissingFileError naming the file."""
    with pytest.raises(MissingFileError, match=re.escape(f"{BEIR / 'qrels' / 'train.tsv'}: no such file")):
        load(BEIR, split="train")


# -- the writer -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry_metadata,query_metadata,message",
    [
        (
            {"title": "Diet"},
            {},
            "entry 'e1' metadata: 'title' (str) is a reserved field name; "
            "rename the metadata key; reserved: _id, text, title, tags, created_at, provenance, scope",
        ),
        (
            {"scope": "x"},
            {},
            "entry 'e1' metadata: 'scope' (str) is a reserved field name; "
            "rename the metadata key; reserved: _id, text, title, tags, created_at, provenance, scope",
        ),
        (
            {},
            {"group": "g"},
            "query 'q1' metadata: 'group' (str) is a reserved field name; "
            "rename the metadata key; reserved: _id, text, tags, scope, group, asked_at",
        ),
        (
            {},
            {"asked_at": "2026-01-01T00:00:00Z"},
            "query 'q1' metadata: 'asked_at' (str) is a reserved field name; "
            "rename the metadata key; reserved: _id, text, tags, scope, group, asked_at",
        ),
    ],
)
def test_writer_refuses_metadata_the_reader_would_misread(tmp_path, entry_metadata, query_metadata, message):
    """A metadata key the reader interprets (a title would be joined to the text) is refused, nothing written."""
    collection = Collection(
        "c",
        (MemoryEntry("e1", "vegetarian", metadata=entry_metadata),),
        (Query("q1", "diet", metadata=query_metadata),),
        {"q1": {"e1": 1}},
        {},
    )
    with pytest.raises(ParameterError) as info:
        beir.write_collection(collection, tmp_path / "out")
    assert str(info.value) == message
    assert not (tmp_path / "out").exists()


def test_writer_checks_the_split(tmp_path):
    """write_collection refuses a split that is not a plain file name, as the reader does."""
    with pytest.raises(ParameterError) as info:
        beir.write_collection(load(BEIR), tmp_path / "out", split="../dev")
    assert str(info.value) == (
        "split: '../dev' (str) is not a split name; a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'"
    )


def test_bulk_corpus_path_equals_the_line_by_line_path(tmp_path):
    """A corpus of {_id, text} lines (read in bulk) gives the entries the line-by-line reader gives."""
    from agentmemory.datasets.beir import _corpus, _corpus_lines
    from agentmemory.files.reading import json_lines

    lines = [json.dumps({"_id": f"d{i}", "text": f"text {i} \u00e9"}) for i in range(50)]
    text = "\n".join(lines[:20]) + "\n\n" + "\n".join(lines[20:]) + "\n"
    path = tmp_path / "corpus.jsonl"
    bulk = _corpus(path, text, progress=False)
    slow = _corpus_lines(path, json_lines(path, text), None)
    assert bulk == slow
    assert bulk[1]["d20"] == 22  # the blank line counts


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"_id": "a b", "text": "x"}', "_id 'a b' contains whitespace"),
        ('{"_id": "", "text": "x"}', "_id '' is not a non-empty string"),
        ('{"_id": "d1", "text": 5}', "text 5 is not a string"),
        ('{"_id": "d0", "text": "again"}', "duplicate _id 'd0' (first on line 1)"),
        ("[1]", "expected a JSON object, found list"),
    ],
)
def test_bulk_corpus_path_falls_back_to_name_the_line(tmp_path, line, message):
    """When a bulk check fails, the line-by-line reader names the bad line, as it always did."""
    from agentmemory.datasets.beir import _corpus

    text = '{"_id": "d0", "text": "x"}\n' + line + "\n"
    with pytest.raises(InputError, match=re.escape(f"corpus.jsonl:2: {message}")):
        _corpus(tmp_path / "corpus.jsonl", text, progress=False)
