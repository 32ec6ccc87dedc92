"""A store's content to and from files: the lossless collection round trip, recorded searches as runs and queries."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT, write_collection

from agentmemory import (
    HashIds,
    MemoryEntry,
    MemoryStore,
    ParameterError,
    Query,
    SteppingClock,
    UnknownNameError,
    evaluate,
    load_collection,
)
from agentmemory.errors import StoreError
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.files.fields import parse_time
from agentmemory.files.trec import read_run
from agentmemory.store.backend import anonymous_query_id
from agentmemory.store.transfer import (
    export_collection,
    export_queries,
    export_run,
    import_collection,
    retrievals,
    store_collection,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
BEIR_SAMPLE = REPO_ROOT / "fixtures" / "beir-sample"


@pytest.fixture(params=["memory", "sqlite"])
def new_store(request, tmp_path):
    """A factory of empty writable stores of one backend (closed after the test)."""
    made: list[MemoryStore] = []

    def factory() -> MemoryStore:
        path = tmp_path / f"s{len(made)}.db" if request.param == "sqlite" else None
        store = MemoryStore(path=path, clock=SteppingClock(T0), ids=HashIds(f"io-{len(made)}"))
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _tricky(root: Path) -> Path:
    """A collection with what a round trip could lose: metadata, a derived entry before its source, scopes, groups,
    queries with and without tags, unicode, timezones."""
    corpus = [
        {
            "_id": "d1",
            "text": "summary of s1",
            "tags": ["sum"],
            "provenance": {"source": "derived", "derived_from": ["s1"]},
        },
        {
            "_id": "s1",
            "text": "naïve café ☕ and a tab\there",
            "tags": [],
            "created_at": "2026-02-01T08:00:00+05:30",
            "provenance": {"source": "conversation", "ref": "chat#1", "actor": "user"},
            "scope": None,
            "importance": 0.75,
            "nested": {"a": [1, 2, {"b": None}], "z": True},
        },
        {"_id": "u1", "text": "scoped memory", "tags": ["x"], "scope": "user-1", "url": "https://example.org/?q=1"},
    ]
    queries = [
        {"_id": "q1", "text": "what café", "tags": []},
        {"_id": "q2", "text": "summary", "group": "single-hop"},
        {"_id": "q3", "text": "scoped", "scope": "user-1", "tags": ["x"], "extra": [1, "two"]},
    ]
    return write_collection(
        root,
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in corpus),
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in queries),
        "query-id\tcorpus-id\tscore\nq1\ts1\t1\nq2\td1\t2\nq2\ts1\t0\nq3\tu1\t1\n",
    )


@pytest.mark.parametrize("source", ["assistant-notes", "beir-sample", "tricky"])
def test_import_export_twice_gives_byte_identical_folders(new_store, tmp_path, source) -> None:
    """import, export, import, export: the two exported folders are byte-identical, and the first import holds
    exactly the collection's entries, queries and judgments."""
    folder = {"assistant-notes": FIXTURE_DIR, "beir-sample": BEIR_SAMPLE}.get(source) or _tricky(tmp_path / "tricky")
    collection = load_collection(folder)
    first = new_store()
    counts = import_collection(first, collection)
    assert counts == {
        "entries": len(collection.entries),
        "queries": len(collection.queries),
        "judgments": sum(len(j) for j in collection.qrels.values()),
    }
    held = store_collection(first)
    assert sorted(held.entries, key=lambda e: e.id) == sorted(collection.entries, key=lambda e: e.id)
    assert (held.queries, held.qrels) == (collection.queries, collection.qrels)
    export_collection(first, tmp_path / "a")
    second = new_store()
    import_collection(second, load_collection(tmp_path / "a"))
    export_collection(second, tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert sorted(_files(tmp_path / "a")) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]


def test_a_derived_entry_is_imported_after_its_source(new_store, tmp_path) -> None:
    """The store adds sources first; otherwise the collection's order is kept (one add event names them all)."""
    store = new_store()
    import_collection(store, load_collection(_tricky(tmp_path / "t")))
    assert [e.id for e in store] == ["s1", "d1", "u1"]
    [event] = list(store.log)
    assert (event.type, event.entry_ids) == ("add", ("s1", "d1", "u1"))
    assert [e.id for e in store.lineage("d1")] == ["s1"]


def test_an_import_that_clashes_imports_nothing(new_store) -> None:
    """An import whose entry id or query id the store has is refused whole: no entry, query or judgment."""
    collection = load_collection(FIXTURE_DIR)
    store = new_store()
    store.add(MemoryEntry(collection.entries[5].id, "already here"))
    with pytest.raises(ParameterError, match=re.escape(f"entry.id: '{collection.entries[5].id}' (str) is already")):
        import_collection(store, collection)
    assert len(store) == 1 and store_collection(store).queries == ()
    clean = new_store()
    import_collection(clean, collection)
    with pytest.raises(ParameterError, match=re.escape("query.id: 'q1' (str) is already in the store")):
        import_collection(clean, collection)
    assert len(clean) == len(collection.entries)


def test_an_import_into_a_file_is_one_transaction(tmp_path, monkeypatch) -> None:
    """If writing the judgments fails, the entries and queries of the import are not in the file either."""
    path = tmp_path / "s.db"
    with MemoryStore.open(path) as store:
        store.add(MemoryEntry("before", "kept"))

        def fail(split, qrels):
            raise RuntimeError("disk trouble")

        monkeypatch.setattr(store._backend, "write_judgments", fail)
        with pytest.raises(RuntimeError, match="disk trouble"):
            import_collection(store, load_collection(FIXTURE_DIR))
        assert [e.id for e in store] == ["before"]
    with MemoryStore.open(path, readonly=True) as store:
        assert [e.id for e in store] == ["before"] and store_collection(store).queries == ()
        assert len(store.log) == 1


def test_an_export_writes_the_newest_versions_and_leaves_out_the_forgotten(new_store, tmp_path) -> None:
    """export writes the live entries at their newest version; a forgotten one is not in the corpus."""
    store = new_store()
    import_collection(store, load_collection(FIXTURE_DIR))
    store.update("m01", "Maya is vegan now")
    store.forget("m16")
    export_collection(store, tmp_path / "out")
    corpus = [json.loads(line) for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    assert corpus[0]["text"] == "Maya is vegan now" and "m16" not in {c["_id"] for c in corpus}
    assert len(corpus) == 15


def test_a_store_without_judgments_exports_a_folder_that_loads(new_store, tmp_path) -> None:
    """Without queries or judgments the export still has queries.jsonl and qrels/test.tsv (empty but for the header)."""
    store = new_store()
    store.add(MemoryEntry("a", "text"))
    export_collection(store, tmp_path / "out")
    assert (tmp_path / "out" / "qrels" / "test.tsv").read_text() == "query-id\tcorpus-id\tscore\n"
    assert (tmp_path / "out" / "queries.jsonl").read_text() == ""
    assert [e.id for e in load_collection(tmp_path / "out").entries] == ["a"]


# -- recorded searches as runs and queries -------------------------------------------------------


@pytest.fixture
def production(tmp_path) -> Path:
    """A store file an agent used: the fixture's memories, then searches with and without query ids."""
    path = tmp_path / "agent.db"
    with MemoryStore.open(path, clock=SteppingClock(T0), ids=HashIds("production")) as store:
        import_collection(store, load_collection(FIXTURE_DIR))
        store.search(Query("q1", "What can Maya eat for dinner?"), k=3)
        store.search(Query("q1", "What can Maya eat for dinner?", tags=("food",)), k=3, retriever="tags")
        store.search("when is the standup", k=2)
        store.search(Query("q9", "zzz nothing matches"), k=3)
        store.search(Query("q2", "orbit-api deployment"), k=3)
    return path


def test_export_run_writes_each_search_with_its_scores(production, tmp_path) -> None:
    """One ranking per search of the retriever: the given query id, else the anonymous one; scores as recorded."""
    out = tmp_path / "run.trec"
    done = export_run(production, out, "BM25")
    with MemoryStore.open(production, readonly=True) as store:
        searches = store.retrievals("bm25")
    anonymous = anonymous_query_id("when is the standup", searches[1].timestamp)
    assert done == {"retriever": "bm25", "label": "BM25", "queries": 4, "empty": 1, "hits": 8}
    run = read_run(out)
    assert list(run) == sorted(["q1", anonymous, "q2"])  # q9 found nothing: no line
    assert run["q1"] == {h.entry_id: h.score for h in searches[0].hits}
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"bm25"}


def test_export_run_and_queries_take_a_time_window(production, tmp_path) -> None:
    """--since is inclusive and --until exclusive, on the searches' times."""
    with MemoryStore.open(production, readonly=True) as store:
        times = [r.timestamp for r in store.retrievals()]
    export_run(production, tmp_path / "r.trec", "bm25", since=times[2], until=times[4])
    assert len(read_run(tmp_path / "r.trec")) == 1  # the standup search; q9 (times[3]) found nothing
    n = export_queries(production, tmp_path / "q.jsonl", since=times[1], until=times[3])
    lines = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert n == 2 and [q["_id"] for q in lines][0] == "q1"


def test_export_queries_writes_one_line_per_query(production, tmp_path) -> None:
    """queries.jsonl: each query id once, in the order first searched, with when it was asked."""
    assert export_queries(production, tmp_path / "q.jsonl", retriever="bm25") == 4
    lines = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "_id": "q1",
        "text": "What can Maya eat for dinner?",
        "asked_at": (T0 + timedelta(seconds=1)).isoformat(),
    }
    assert [q["_id"] for q in lines][2:] == ["q9", "q2"]


def test_the_same_query_id_with_another_text_is_an_error(production, tmp_path) -> None:
    """q1 searched with tags by one retriever and without by another cannot be one line of queries.jsonl."""
    with pytest.raises(StoreError, match=re.escape("query id 'q1' was searched with two different queries")):
        export_queries(production, tmp_path / "q.jsonl")
    assert not (tmp_path / "q.jsonl").exists()


def test_a_query_id_searched_twice_by_one_retriever_is_an_error(tmp_path) -> None:
    """A run holds one ranking per query: two searches under one id are refused, naming the id."""
    path = tmp_path / "twice.db"
    with MemoryStore.open(path) as store:
        store.add(MemoryEntry("a", "lentils"))
        store.search(Query("q", "lentils"))
        store.search(Query("q", "lentils"))
    with pytest.raises(
        StoreError,
        match=re.escape("the recorded searches of bm25 search the same query id more than once ('q'): a run holds one"),
    ):
        export_run(path, tmp_path / "r.trec", "bm25")
    assert not (tmp_path / "r.trec").exists()


def test_export_run_names_the_recorded_retrievers(production, tmp_path) -> None:
    """An unknown retriever is refused with the keys the store recorded."""
    with pytest.raises(
        UnknownNameError, match=re.escape("retriever: 'dense' (str) is not a known name; choose from: bm25, tags")
    ):
        export_run(production, tmp_path / "r.trec", "dense")


def test_an_in_memory_store_has_no_recorded_searches() -> None:
    """Only a persistent store keeps query texts and scored hits."""
    store = MemoryStore()
    store.add(MemoryEntry("a", "x"))
    store.search("x")
    with pytest.raises(StoreError, match=re.escape("in-memory store: records no retrievals")):
        retrievals(store)


def test_an_exported_run_evaluates_against_judgments(production, tmp_path) -> None:
    """export + export-run + export-queries + authored qrels make a collection and a run that evaluate() scores."""
    folder = tmp_path / "judged"
    export_collection(production, folder)
    export_run(production, tmp_path / "agent.trec", "bm25")
    export_queries(production, folder / "queries.jsonl", retriever="bm25")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tm01\t1\nq2\tm03\t1\n")
    evaluation = evaluate(load_collection(folder), None, runs=[read_run_file(tmp_path / "agent.trec", "agent")], k=3)
    [result] = evaluation.results
    assert [q.query_id for q in result.per_query] == ["q1", "q2"]
    with MemoryStore.open(production, readonly=True) as store:
        recorded = {r.query.id: [h.entry_id for h in r.hits] for r in store.retrievals("bm25")}
    expected = [1 / (recorded["q1"].index("m01") + 1), 1 / (recorded["q2"].index("m03") + 1)]
    assert [q.metrics["RR"] for q in result.per_query] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-01", datetime(2026, 3, 1, tzinfo=timezone.utc)),
        ("2026-03-01T09:30:00Z", datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)),
        ("2026-03-01T09:30:00+02:00", datetime(2026, 3, 1, 7, 30, tzinfo=timezone.utc)),
    ],
)
def test_parse_time_reads_iso_times_and_dates(text, expected) -> None:
    """A date is midnight UTC; a time needs a timezone."""
    assert parse_time(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"), [("2026-03-01T09:30", "has no timezone"), ("yesterday", "is not an ISO 8601 time")]
)
def test_parse_time_refuses_times_without_a_zone(text, problem) -> None:
    with pytest.raises(ParameterError, match=re.escape(f"--since: {text!r} (str) {problem}; write an ISO 8601 time")):
        parse_time(text, "--since")


def test_a_query_in_a_scope_no_entry_has_is_refused_keeping_nothing() -> None:
    """A query scoped to a user with no entry, in the store or the collection, is refused in one line before
    anything is kept: the exported folder would not load back (the loader refuses such a query)."""
    from agentmemory import Collection

    store = MemoryStore()
    store.add(MemoryEntry("m0", "already here", scope="u0"))
    collection = Collection(
        name="scoped",
        entries=(MemoryEntry("m1", "one", scope="u1"),),
        queries=(Query("q1", "one?", scope="u0"), Query("q2", "two?", scope="u2")),
        qrels={},
        files={},
    )
    with pytest.raises(ParameterError, match=r"^query\.scope: 'u2' \(str\) of query 'q2' is the scope of no entry"):
        import_collection(store, collection)
    assert [e.id for e in store] == ["m0"]
    fine = Collection(name="scoped", entries=collection.entries, queries=collection.queries[:1], qrels={}, files={})
    assert import_collection(store, fine) == {"entries": 1, "queries": 1, "judgments": 0}
