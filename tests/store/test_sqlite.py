"""The persistent store: reopening, recorded retrievals, one writer and many readers, versions of the schema.

The behaviour a store shares with the in-memory one is tested on both in
``test_store.py``; here is what only a file has.  The crash and concurrency
tests run real processes (``kill -9`` included); none asserts a time.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import HashIds, MemoryEntry, MemoryStore, ParameterError, Provenance, Query, SteppingClock
from agentmemory.errors import MissingFileError, StoreError, StoreLockedError, StoreVersionError
from agentmemory.store import sqlite as persist
from agentmemory.store.backend import EntryVersion, anonymous_query_id
from agentmemory.store.sqlite import APPLICATION_ID, SQLiteBackend

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
V1_STORE = REPO_ROOT / "tests" / "data" / "store-v1.db"


def deterministic(namespace: str = "persist-test") -> dict:
    return {"clock": SteppingClock(T0), "ids": HashIds(namespace)}


def session(store: MemoryStore) -> None:
    """A small agent session touching every table: adds, a derive, searches, an update, a forget.

    ``tests/data/store-v1.db`` was recorded by exactly this session (schema
    version 1, ``deterministic()``), so the test of that file can compare it
    with a fresh recording.
    """
    store.add(
        [
            MemoryEntry(
                "m1",
                "Maya is vegetarian and does not eat mushrooms",
                ("diet", "food"),
                T0 - timedelta(days=30),
                Provenance("conversation", "chat/2026-01-30#4", "user"),
            ),
            MemoryEntry(
                "m2",
                "Standup is at 9:30 on weekdays",
                ("work",),
                provenance=Provenance("calendar", "cal/standup", "assistant"),
                metadata={"importance": 0.25, "source_app": {"name": "cal", "tags": ["a", "b"]}},
            ),
            MemoryEntry("u1", "Lena likes lentil soup", ("food",), scope="lena"),
        ]
    )
    store.search(Query("q-dinner", "what does Maya eat for dinner", tags=("food",)), k=3)
    store.search("standup time", k=2, retriever="tags")
    store.derive("s1", "Maya: vegetarian; standup 9:30", ["m1", "m2"], tags=("profile",), actor="assistant")
    store.update("m1", "Maya is vegan and does not eat mushrooms", reason="she changed her diet")
    store.search(Query("q-lena", "what soup does Lena like", scope="lena", group="food"), k=3)
    store.add(MemoryEntry("tmp", "a note to drop"))
    store.forget("tmp", reason="not worth keeping")
    store.search(Query("q-vegan", "vegan", asked_at=T0 + timedelta(hours=1)), k=3)


def snapshot(store: MemoryStore) -> dict:
    """Everything a store shows: entries, log, histories, searches of every retriever and scope."""
    queries = [
        Query("a", "Maya vegan mushrooms dinner", tags=("food", "diet")),
        Query("b", "lentil soup", tags=("food",), scope="lena"),
        Query("c", "standup weekdays", tags=("work", "profile")),
    ]
    return {
        "entries": list(store),
        "log": store.log.to_dicts(),
        "history": {i: store.history(i) for i in ("m1", "m2", "u1", "s1", "tmp")},
        "hits": {
            (name, q.id): store.retriever(name, q.scope).search(q, 5) for name in store.retriever_names for q in queries
        },
        "scopes": store.scopes,
    }


@pytest.fixture
def recorded(tmp_path) -> Path:
    """A store file holding :func:`session`, closed."""
    path = tmp_path / "agent.db"
    with MemoryStore.open(path, **deterministic()) as store:
        session(store)
    return path


# -- reopening ------------------------------------------------------------------------------------


def test_a_reopened_store_shows_everything_it_recorded(tmp_path) -> None:
    """Entries, log, histories and rankings after a reopen equal those of the store that wrote them, and of one in memory."""
    path = tmp_path / "agent.db"
    with MemoryStore.open(path, **deterministic()) as store:
        session(store)
        before = snapshot(store)
    memory = MemoryStore(**deterministic())
    session(memory)
    with MemoryStore.open(path, readonly=True) as again:
        assert snapshot(again) == before == snapshot(memory)


def test_reopening_with_other_retrievers_builds_their_indexes(recorded) -> None:
    """Indexes are not stored: a store reopens with any retrievers, built from its entries."""
    with MemoryStore.open(recorded, ["bm25[k1=0.9]"], readonly=True) as store:
        assert store.retriever_names == ("bm25[k1=0.9]",)
        assert [h.entry_id for h in store.search("vegan mushrooms", retriever="bm25[k1=0.9]")] == ["m1"]


def test_every_search_records_its_query_and_scored_hits(recorded) -> None:
    """A persistent store records each search's query (text, tags, scope, group, asked_at), k, label, hits and versions."""
    with MemoryStore.open(recorded, readonly=True) as store:
        found = store.retrievals()
        log = [e for e in store.log if e.type == "retrieve"]
    assert [r.event_id for r in found] == [e.event_id for e in log]
    assert [e.query_text for e in log] == [r.query.text for r in found]  # the log names what was asked, on disk too
    dinner, standup, lena, vegan = found
    assert dinner.query == Query("q-dinner", "what does Maya eat for dinner", tags=("food",))
    assert (dinner.retriever, dinner.label, dinner.k) == ("bm25", "BM25", 3)
    assert [(h.entry_id, h.rank) for h in dinner.hits] == [("m1", 1)] and dinner.versions == (1,)
    assert dinner.hits[0].score > 0 and [h.entry_id for h in dinner.hits] == list(log[0].entry_ids)
    assert (standup.query.id, standup.retriever, standup.label) == ("", "tags", "Tag scorer")
    assert standup.run_query_id == anonymous_query_id("standup time", standup.timestamp)
    assert (lena.query.scope, lena.query.group, [h.entry_id for h in lena.hits]) == ("lena", "food", ["u1"])
    assert vegan.query.asked_at == T0 + timedelta(hours=1)
    assert [h.entry_id for h in vegan.hits] == ["m1"] and vegan.versions == (2,)  # m1 was retrieved as version 2


def test_retrievals_filter_by_retriever_and_time(recorded) -> None:
    """retrievals(retriever=key or label, since=..., until=...): since inclusive, until exclusive."""
    with MemoryStore.open(recorded, readonly=True) as store:
        every = store.retrievals()
        assert [r.query.id for r in store.retrievals("bm25")] == ["q-dinner", "q-lena", "q-vegan"]
        assert [r.retriever for r in store.retrievals("Tag scorer")] == ["tags"]
        third = every[2].timestamp
        assert [r.query.id for r in store.retrievals(since=third)] == ["q-lena", "q-vegan"]
        assert [r.query.id for r in store.retrievals("bm25", until=third)] == ["q-dinner"]


def test_anonymous_query_ids_hash_text_and_time() -> None:
    """A search without an id is named by sha256 of its UTC time and text: stable, and different at another time."""
    t = datetime(2026, 3, 1, 10, 0, tzinfo=timezone(timedelta(hours=1)))
    same = anonymous_query_id("where is the key", t.astimezone(timezone.utc))
    assert anonymous_query_id("where is the key", t) == same
    assert re.fullmatch(r"q-[0-9a-f]{16}", same)
    assert anonymous_query_id("where is the key", t + timedelta(seconds=1)) != same


def test_text_and_metadata_come_back_exactly(tmp_path) -> None:
    """Unicode, NUL characters, nested metadata, float scores and timezone offsets survive a reopen unchanged."""
    path = tmp_path / "u.db"
    odd = MemoryEntry(
        "ü-1",
        "naïve café \x00 with 🍜 and עברית",
        ("日本", "tag with space"),
        datetime(2026, 3, 1, 9, 0, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        Provenance("tool", "ref\twith tab", None, ()),
        scope="s/1",
        metadata={"n": 1, "x": 0.1, "big": 2**70, "nested": {"list": [1, "two", None, True]}, "empty": {}},
    )
    with MemoryStore.open(path) as store:
        store.add(odd)
        hits = store.search(Query("q", "café 🍜", scope="s/1"), k=1)
    with MemoryStore.open(path, readonly=True) as store:
        assert store.get("ü-1") == odd
        assert store.get("ü-1").created_at.utcoffset() == timedelta(hours=-5, minutes=-30)
        assert store.retrievals()[0].hits == tuple(hits)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            MemoryEntry("a", "x", metadata={"pair": (1, 2)}),
            "entry 'a' metadata: {'pair': (1, 2)} (dict) cannot be kept exactly: metadata['pair'] is a tuple, "
            "which JSON does not keep; a persistent store keeps metadata as JSON",
        ),
        (
            MemoryEntry("a", "x", metadata={1: "one"}),
            "cannot be kept exactly: metadata has the key 1 (int), and JSON keys are strings",
        ),
        (
            MemoryEntry("a", "bad \ud800 text"),
            "entry.text: 'bad \\ud800 text' (str) is not valid Unicode (it holds a lone surrogate); "
            "a persistent store keeps text as UTF-8",
        ),
        (MemoryEntry("a", "x", ("ok", "\udcff")), "entry.tags: '\\udcff' (str) is not valid Unicode"),
    ],
)
def test_what_a_file_cannot_keep_exactly_is_refused(tmp_path, entry, message) -> None:
    """Metadata JSON would change and text that is not valid Unicode are refused before anything is written."""
    with MemoryStore.open(tmp_path / "s.db") as store:
        with pytest.raises(ParameterError, match=re.escape(message)):
            store.add([MemoryEntry("fine", "fine"), entry])
        assert len(store) == 0 and len(store.log) == 0


def test_a_query_that_is_not_valid_unicode_is_refused_before_searching(tmp_path) -> None:
    """The query text is recorded with the search, so one the file cannot keep is refused (and nothing logged)."""
    with MemoryStore.open(tmp_path / "s.db") as store:
        store.add(MemoryEntry("a", "text"))
        with pytest.raises(ParameterError, match=re.escape("query.text: 'x \\udc80' (str) is not valid Unicode")):
            store.search("x \udc80")
        assert len(store.log) == 1


def test_an_id_source_that_repeats_ids_is_refused_without_writing(recorded) -> None:
    """Reopening with the same HashIds namespace repeats event ids: the first write says so and writes nothing."""
    with MemoryStore.open(recorded, **deterministic()) as store:
        count = len(store.log)
        with pytest.raises(
            StoreError, match=re.escape("is already in the log: the store's id source repeats ids; give each session")
        ):
            store.add(MemoryEntry("new", "text"))
        assert "new" not in store and len(store.log) == count
        with pytest.raises(StoreError, match="repeats ids"):  # the next id repeats too: nothing is recorded
            store.search("vegan")
    with MemoryStore.open(recorded, readonly=True) as store:
        assert "new" not in store and len(store.log) == count


# -- read-only handles and the writer's lock --------------------------------------------------------


def test_a_readonly_handle_records_nothing_and_refuses_changes(recorded) -> None:
    """A reader's searches log nothing; add, derive, update, forget and log.record are refused in one line."""
    with MemoryStore.open(recorded, readonly=True) as store:
        count = len(store.log)
        assert store.readonly and store.search("vegan")
        assert len(store.log) == count
        calls = [
            lambda: store.add(MemoryEntry("x", "y")),
            lambda: store.derive("x", "y", ["m1"]),
            lambda: store.update("m1", "y"),
            lambda: store.forget("m1"),
            lambda: store.log.record("add", []),
        ]
        for call in calls:
            with pytest.raises(
                StoreError, match=re.escape(f"{recorded}: is open read-only: it records nothing; open it")
            ):
                call()
    with MemoryStore.open(recorded, readonly=True) as store:
        assert len(store.log) == count


def test_a_second_writer_waits_then_gets_a_clear_lock_error(recorded) -> None:
    """While one handle writes, another writer is refused after its timeout (naming the holder); readers are not."""
    with MemoryStore.open(recorded) as writer:
        with pytest.raises(
            StoreLockedError,
            match=re.escape(f"{recorded}: store is locked by another writer (process {os.getpid()}); waited 0.2 s; "),
        ):
            MemoryStore.open(recorded, timeout=0.2)
        with MemoryStore.open(recorded, readonly=True) as reader:
            assert len(reader) == len(writer)
        writer.add(MemoryEntry("after", "the refused writer changed nothing"))
    with MemoryStore.open(recorded, timeout=0) as again:  # the lock went with the first writer
        assert "after" in again


def test_refresh_catches_a_reader_up_with_every_kind_of_change(tmp_path) -> None:
    """A reader opened before adds, a derive, updates and forgets shows, after refresh(), what the writer shows."""
    path = tmp_path / "follow.db"
    with MemoryStore.open(path, **deterministic()) as writer:
        writer.add([MemoryEntry("a", "lentil curry", ("food",)), MemoryEntry("b", "tofu", ("food",), scope="x")])
        with MemoryStore.open(path, readonly=True) as reader:
            writer.add(MemoryEntry("c", "lentil soup"))
            writer.derive("d", "lentil dishes", ["a", "c"])
            writer.update("a", "chickpea curry")
            writer.update("b", tags=("legumes",))
            writer.forget("d")
            writer.forget("c")
            writer.add(MemoryEntry("e", "lentil salad"))
            assert [e.id for e in reader] == ["a", "b"]
            assert reader.refresh() == 7  # versions written: c, d, a, b, d, c, e
            assert reader.refresh() == 0
            queries = [Query("1", "lentil curry chickpea", tags=("food",)), Query("2", "tofu", ("legumes",), scope="x")]
            for name in ("bm25", "tags"):
                assert _ranked(reader, queries, name) == _ranked(writer, queries, name)
            assert list(reader) == list(writer)
            assert reader.history("d") == writer.history("d")
            assert writer.refresh() == 0


def _ranked(store: MemoryStore, queries: list[Query], name: str) -> list[list[tuple[str, float]]]:
    return [[(h.entry_id, h.score) for h in store.retriever(name, q.scope).search(q, 10)] for q in queries]


WRITER = r"""
import sys
from agentmemory import MemoryEntry, MemoryStore
store = MemoryStore.open(sys.argv[1], "bm25")
print("open", flush=True)
for i in range(int(sys.argv[2])):
    store.add(MemoryEntry(f"e{i:04d}", f"entry {i} about lentils"))
    if i % 10 == 0:
        store.search(f"entry {i}", k=3)
sys.stdin.read()  # hold the lock until the test is done checking it
store.close()
print("closed", flush=True)
"""


def test_readers_search_while_another_process_writes(tmp_path) -> None:
    """One writer process adds 300 entries; meanwhile a reader refreshes and searches, always seeing a consistent prefix.

    A second writer is refused while the first holds the store; the reader's
    searches are never recorded; the file passes integrity_check at the end.
    """
    path = tmp_path / "busy.db"
    with MemoryStore.open(path, "bm25") as first:
        first.add(MemoryEntry("seed", "lentils to start"))
    n = 300
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "open\n"
        with pytest.raises(StoreLockedError, match=re.escape(f"(process {proc.pid}); waited 0.1 s")):
            MemoryStore.open(path, timeout=0.1)
        seen = []
        with MemoryStore.open(path, "bm25", readonly=True) as reader:
            deadline = time.monotonic() + 60  # far beyond the writer's time, even on a loaded machine
            while time.monotonic() < deadline:
                reader.refresh()
                ids = [e.id for e in reader]
                assert ids == ["seed"] + [f"e{i:04d}" for i in range(len(ids) - 1)]
                hits = reader.search("reader probe lentils", k=5)
                assert {h.entry_id for h in hits} <= set(ids)
                seen.append(len(ids))
                if len(ids) == n + 1:
                    break
                time.sleep(0.002)
            assert seen[-1] == n + 1
            assert reader._backend.integrity_check() == ["ok"]
        assert len(set(seen)) > 2  # the reader saw the store grow while it was written
        proc.stdin.close()  # type: ignore[union-attr]
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with MemoryStore.open(path) as store:
        assert len(store) == n + 1
        assert all("reader probe" not in r.query.text for r in store.retrievals())
        assert [r.query.text for r in store.retrievals()][:2] == ["entry 0", "entry 10"]


# -- durability --------------------------------------------------------------------------------------

KILLED = r"""
import sys
from agentmemory import MemoryEntry, MemoryStore
store = MemoryStore.open(sys.argv[1], "bm25", timeout=30)
i = int(sys.argv[2])
mine = []
print("ready", flush=True)
while True:
    if i % 3 == 2:
        batch = [MemoryEntry(f"b{i}-{j}", f"batch {i} entry {j}") for j in range(4)]
        store.add(batch)
        print("batch", *[e.id for e in batch], flush=True)
    else:
        store.add(MemoryEntry(f"e{i}", f"entry {i} about lentils"))
        mine.append(f"e{i}")
        print("entry", f"e{i}", flush=True)
    if i % 4 == 0:
        store.search(f"entry {i}", k=3)
        print("search", flush=True)
    if i % 7 == 0 and mine:
        store.update(mine[-1], f"updated at {i}")
        print("update", mine[-1], i, flush=True)
    if i % 11 == 0 and len(mine) > 2:
        gone = mine.pop(0)
        store.forget(gone, reason="test")
        print("forget", gone, flush=True)
    i += 1
"""


def _forgotten(store: MemoryStore, entry_id: str) -> bool:
    """Whether the store holds ``entry_id``'s history, ending with a forget."""
    try:
        return store.history(entry_id)[-1].change == "forget"
    except ParameterError:  # never stored
        return False


def test_kill_minus_nine_never_loses_an_acknowledged_write(tmp_path) -> None:
    """20 times: a child adds, updates, forgets and searches, printing each once the call returned; it is killed at a
    random moment.

    After each kill the store reopens with every printed entry, update and
    forget, every batch whole or absent, at least as many retrieve events as
    acknowledged searches, versions consistent with the entries table, and a
    file that passes ``PRAGMA integrity_check``.
    """
    path = tmp_path / "crash.db"
    rng = random.Random(20260301)
    added: set[str] = set()
    updated: dict[str, int] = {}
    forgotten: set[str] = set()
    searches = 0
    for round_ in range(20):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED, str(path), str(round_ * 100_000)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"  # started: imports and open done
        time.sleep(rng.uniform(0.05, 0.6))
        proc.kill()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == -9, f"round {round_}: the child ended before the kill: {err[-500:]}"
        for line in out.splitlines(keepends=True):
            if not line.endswith("\n"):
                continue  # cut off by the kill: not acknowledged
            kind, *rest = line.split()
            if kind == "search":
                searches += 1
            elif kind == "update":
                updated[rest[0]] = int(rest[1])
            elif kind == "forget":
                forgotten.add(rest[0])
            else:
                added.update(rest)
        with MemoryStore.open(path, "bm25") as store:
            backend = store._backend
            assert backend.integrity_check() == ["ok"]
            # an entry may be gone by a forget the kill cut off before it was printed: its history says so
            lost = sorted(i for i in added if i not in store and not _forgotten(store, i))
            assert lost == [], f"round {round_}: acknowledged but lost: {lost[:5]}"
            assert [i for i in forgotten if i in store or not _forgotten(store, i)] == []
            for entry_id, at in updated.items():
                if entry_id not in forgotten and entry_id in store:  # an unacknowledged forget may have landed
                    assert int(store.get(entry_id).text.split()[-1]) >= at, (round_, entry_id)
            stored = {e.id for e in store}
            for prefix in {e.split("-")[0] for e in stored if e.startswith("b")}:
                members = [e for e in stored if e.startswith(prefix + "-")]
                assert len(members) == 4, f"round {round_}: batch {prefix} is partly stored: {members}"
            assert sum(1 for e in store.log if e.type == "retrieve") >= searches
            assert backend.read(
                "SELECT count(*) FROM entries e WHERE e.version != "
                "(SELECT max(v.version) FROM versions v WHERE v.entry_id = e.id) "
                "OR e.forgotten != (SELECT v.change = 'forget' FROM versions v "
                "WHERE v.entry_id = e.id AND v.version = e.version)"
            ) == [(0,)]
    assert len(added) > 20 and updated and forgotten  # kills landed between writes, not only during start-up


# -- schema versions and migrations -----------------------------------------------------------------


def test_a_store_file_carries_its_application_id_and_schema_version(recorded) -> None:
    """The file says what it is: PRAGMA application_id, a one-row schema_version table, WAL mode."""
    conn = sqlite3.connect(recorded)
    try:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(persist.SCHEMA_VERSION,)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {
            "schema_version",
            "store_info",
            "events",
            "entries",
            "versions",
            "retrievals",
            "hits",
            "queries",
            "judgments",
        }
    finally:
        conn.close()


def _copy_v1(tmp_path: Path) -> Path:
    target = tmp_path / "v1.db"
    shutil.copyfile(V1_STORE, target)
    return target


def test_the_committed_schema_1_store_opens_with_what_it_recorded(tmp_path) -> None:
    """tests/data/store-v1.db (recorded by session() at schema 1) opens and shows what a fresh recording shows."""
    with MemoryStore.open(_copy_v1(tmp_path), readonly=True) as old:
        assert old._backend.schema_version == 1
        kept = snapshot(old)
        retrievals = old.retrievals()
    fresh = MemoryStore.open(tmp_path / "fresh.db", **deterministic())
    session(fresh)
    assert kept == snapshot(fresh)
    assert retrievals == fresh.retrievals()
    fresh.close()


def _add_note_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE store_info ADD COLUMN note TEXT")
    conn.execute("UPDATE store_info SET note = 'migrated'")


def test_an_older_store_is_migrated_when_opened_for_writing(tmp_path, monkeypatch) -> None:
    """With a schema 2 and MIGRATIONS[1], the schema-1 file is migrated on a writable open, content unchanged."""
    path = _copy_v1(tmp_path)
    monkeypatch.setattr(persist, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(persist, "MIGRATIONS", {1: _add_note_column})
    with pytest.raises(
        StoreVersionError,
        match=re.escape(
            "v1.db: has schema version 1, older than this agentmemory's 2; open it once for writing to migrate it"
        ),
    ):
        MemoryStore.open(path, readonly=True)
    with MemoryStore.open(path) as store:
        assert store._backend.schema_version == 2
        assert "m1" in store and store.get("m1").text.startswith("Maya is vegan")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
    assert {r[0] for r in conn.execute("SELECT note FROM store_info")} == {"migrated"}
    conn.close()


def test_a_failing_migration_leaves_the_store_unchanged(tmp_path, monkeypatch) -> None:
    """A migration that raises is rolled back: the file keeps schema 1 and opens with the old code."""
    path = _copy_v1(tmp_path)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE store_info ADD COLUMN note TEXT")
        raise RuntimeError("half way")

    monkeypatch.setattr(persist, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(persist, "MIGRATIONS", {1: broken})
    with pytest.raises(
        StoreVersionError,
        match=re.escape(
            "could not be migrated from schema version 1 to 2 (RuntimeError: half way); the store is unchanged"
        ),
    ):
        MemoryStore.open(path)
    monkeypatch.setattr(persist, "SCHEMA_VERSION", 1)
    with MemoryStore.open(path, readonly=True) as store:
        assert store._backend.schema_version == 1 and "m1" in store
    conn = sqlite3.connect(path)
    assert "note" not in [r[1] for r in conn.execute("PRAGMA table_info(store_info)")]
    conn.close()


def test_a_missing_migration_is_a_clear_error(tmp_path, monkeypatch) -> None:
    """An older schema with no migration from it is refused, naming the versions."""
    monkeypatch.setattr(persist, "SCHEMA_VERSION", 2)
    with pytest.raises(StoreVersionError, match="has schema version 1, and this agentmemory has no migration"):
        MemoryStore.open(_copy_v1(tmp_path))


def test_a_store_of_a_newer_schema_is_refused(recorded) -> None:
    """A file from a newer agentmemory is refused for reading and writing, and left as it was."""
    conn = sqlite3.connect(recorded)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    before = recorded.read_bytes()
    message = (
        f"{recorded}: was written by a newer agentmemory (schema version 99; this one reads up to 1); "
        "upgrade agentmemory (pip install -U agentmemory-eval)"
    )
    for readonly in (True, False):
        with pytest.raises(StoreVersionError, match=re.escape(message)):
            MemoryStore.open(recorded, readonly=readonly)
    assert recorded.read_bytes() == before


# -- bad input -------------------------------------------------------------------------------------


def _sqlite_file(path: Path, statement: str) -> Path:
    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "is a folder; pass the path of a store file (a new path creates one)"),
        (
            lambda d: (d / "notes.txt", (d / "notes.txt").write_text("hello\n"))[0],
            "is not a SQLite file (it does not start with 'SQLite format 3'); pass the path of an agentmemory store",
        ),
        (
            lambda d: _sqlite_file(d / "other.db", "CREATE TABLE people (name TEXT)"),
            "is a SQLite database but not an agentmemory store (tables: people); pass the path of a store",
        ),
    ],
    ids=["folder", "text-file", "other-sqlite"],
)
@pytest.mark.parametrize("readonly", [False, True])
def test_a_path_that_is_not_a_store_is_refused_and_left_alone(tmp_path, make, message, readonly) -> None:
    """A folder, a text file and another program's SQLite database are refused in one line, and not modified."""
    path = make(tmp_path)
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(StoreError, match=re.escape(f"{path}: {message}")):
        MemoryStore.open(path, readonly=readonly)
    if before is not None:
        assert path.read_bytes() == before


def test_a_missing_store_is_created_for_writing_but_not_for_reading(tmp_path) -> None:
    """A new path becomes a store when opened for writing; read-only, it is a missing file."""
    with pytest.raises(MissingFileError, match=re.escape(f"{tmp_path / 'new.db'}: no such store")):
        MemoryStore.open(tmp_path / "new.db", readonly=True)
    assert not (tmp_path / "new.db").exists()
    with MemoryStore.open(tmp_path / "new.db") as store:
        assert len(store) == 0


def test_a_store_in_a_missing_folder_is_refused(tmp_path) -> None:
    """A new store is not made in a folder that does not exist (no folders are created behind the caller's back)."""
    path = tmp_path / "nowhere" / "s.db"
    with pytest.raises(
        StoreError,
        match=re.escape(
            f"{path}: cannot be created: its folder {path.parent} does not exist; create the folder first, "
            "or pass a path in an existing folder"
        ),
    ):
        MemoryStore.open(path)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_becomes_a_store(tmp_path) -> None:
    """A zero-byte file (touch store.db) is an empty SQLite database: it is made a store."""
    (tmp_path / "empty.db").write_bytes(b"")
    with MemoryStore.open(tmp_path / "empty.db") as store:
        store.add(MemoryEntry("a", "text"))
    with MemoryStore.open(tmp_path / "empty.db", readonly=True) as store:
        assert "a" in store


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": 5}, "path: 5 (int) is not a file path; pass the path of a store file"),
        ({"path": "x.db", "timeout": -1}, "timeout: -1 (int) is not a number of seconds >= 0"),
        ({"path": "x.db", "timeout": "5"}, "timeout: '5' (str) is not a number of seconds >= 0"),
        ({"path": "x.db", "readonly": "yes"}, "readonly: 'yes' (str) is not True or False"),
    ],
)
def test_bad_open_parameters_are_refused(tmp_path, monkeypatch, kwargs, message) -> None:
    """A path that is not a path, a negative or textual timeout, a readonly that is not a bool."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError, match=re.escape(message)):
        MemoryStore(**kwargs)
    assert list(tmp_path.iterdir()) == []


def _limit_pages(store: MemoryStore, extra: int) -> None:
    """Let the file grow by ``extra`` pages at most: a full disk, as SQLite sees one."""
    conn = store._backend._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + extra}")


def test_a_full_disk_refuses_the_change_whole_and_the_store_stays_usable(recorded) -> None:
    """A batch that does not fit is refused in one line, nothing of it written; the store keeps working and reopens."""
    with MemoryStore.open(recorded, **deterministic("full-disk")) as store:
        before = snapshot(store)
        _limit_pages(store, 2)
        batch = [MemoryEntry(f"big{i}", "lentil " * 400) for i in range(40)]
        with pytest.raises(
            StoreError,
            match=re.escape(
                f"{recorded}: the disk is full (SQLite: database or disk is full); nothing of this change was "
                "written; free some space and retry"
            ),
        ):
            store.add(batch)
        assert snapshot(store) == before  # not in memory either: the indexes forgot the batch
        store._backend._conn.execute("PRAGMA max_page_count = 1073741823")
        store.add(batch[:1])
    with MemoryStore.open(recorded, readonly=True) as store:
        assert store._backend.integrity_check() == ["ok"]
        assert [e.id for e in store if e.id.startswith("big")] == ["big0"]


def test_a_full_disk_refuses_a_search_it_cannot_record(recorded) -> None:
    """A search is on disk when it returns: one that cannot be recorded raises instead of returning."""
    with MemoryStore.open(recorded, **deterministic("full-disk")) as store:
        count = len(store.log)
        _limit_pages(store, 0)
        long = " ".join(f"word{i}" for i in range(3000))
        with pytest.raises(StoreError, match="the disk is full"):
            store.search(long + " vegan", k=3)
        assert len(store.log) == count


def test_a_read_only_file_is_refused_for_writing_but_reads(recorded) -> None:
    """A store file without write permission opens read-only, and is refused (in one line) for writing."""
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    recorded.chmod(0o444)
    try:
        with pytest.raises(StoreError, match=re.escape(f"{recorded}: is a read-only file; open it read-only")):
            MemoryStore.open(recorded)
        with MemoryStore.open(recorded, readonly=True) as store:
            assert "m1" in store
    finally:
        recorded.chmod(0o644)


def test_a_folder_that_cannot_be_written_is_refused_for_writing(recorded, monkeypatch) -> None:
    """Where the lock file cannot be created (a read-only location), opening for writing is refused in one line."""
    real_open = os.open

    def refuse(path, flags, *args):
        if str(path).endswith("-lock"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(
        StoreError,
        match=re.escape(
            f"{recorded}: cannot be opened for writing: its lock file agent.db-lock cannot be created "
            "(Permission denied); open it read-only (readonly=True)"
        ),
    ):
        MemoryStore.open(recorded)
    with MemoryStore.open(recorded, readonly=True) as store:
        assert "m1" in store


UNSHARE = shutil.which("unshare")


def _in_namespace(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``sh -c script`` as root of a new user and mount namespace (tiny and read-only file systems)."""
    return subprocess.run(
        [UNSHARE or "unshare", "-r", "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


@pytest.mark.skipif(UNSHARE is None, reason="needs unshare(1)")
def test_a_really_full_disk_and_a_read_only_mount(tmp_path) -> None:
    """On a 512 KiB tmpfs a growing store hits ENOSPC and says so; remounted read-only it cannot be written, only read."""
    probe = _in_namespace("mkdir -p m && mount -t tmpfs -o size=64k tmpfs m", tmp_path)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount in a user namespace here: {probe.stderr.strip()}")
    child = tmp_path / "fill.py"
    child.write_text(
        "import sys\n"
        "from agentmemory import MemoryEntry, MemoryStore, StoreError\n"
        "path = sys.argv[1]\n"
        "store = MemoryStore.open(path, 'bm25')\n"
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        store.add([MemoryEntry(f'e{n}-{j}', 'lentil ' * 200) for j in range(20)])\n"
        "        n += 1\n"
        "except StoreError as err:\n"
        "    print('refused', n, err)\n"
        "store.close()\n"
        "with MemoryStore.open(path, 'bm25', readonly=True) as again:\n"
        "    print('kept', len(again), again._backend.integrity_check())\n",
        encoding="utf-8",
    )
    reader = tmp_path / "read.py"
    reader.write_text(
        "import sys\n"
        "from agentmemory import MemoryEntry, MemoryStore, StoreError\n"
        "try:\n"
        "    MemoryStore.open(sys.argv[1])\n"
        "except StoreError as err:\n"
        "    print('writer refused:', err)\n"
        "with MemoryStore.open(sys.argv[1], readonly=True) as store:\n"
        "    print('reader sees', len(store))\n",
        encoding="utf-8",
    )
    python = sys.executable
    script = (
        "set -e; mkdir -p m && mount -t tmpfs -o size=512k tmpfs m; "
        f"{python} fill.py m/s.db; mount -o remount,ro m; {python} read.py m/s.db"
    )
    proc = _in_namespace(script, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    refused = next(line for line in lines if line.startswith("refused"))
    n = int(refused.split()[1])
    assert "the disk is full" in refused or "could not be read or written" in refused
    assert lines[1] == f"kept {n * 20} ['ok']"
    assert (
        lines[2].startswith("writer refused: m/s.db: cannot be opened for writing")
        and "Read-only file system" in lines[2]
    )
    assert lines[3] == f"reader sees {n * 20}"


def test_the_backend_reads_a_store_without_building_indexes(recorded) -> None:
    """SQLiteBackend.open(readonly=True) reads entries, queries, stats and retrievals without a MemoryStore."""
    backend = SQLiteBackend.open(recorded, readonly=True)
    try:
        assert [e.id for e in backend.live_entries()] == ["m1", "m2", "u1", "s1"]
        stats = backend.stats()
        assert (stats["entries"], stats["forgotten"], stats["versions"], stats["scopes"]) == (4, 1, 7, 2)
        assert stats["events"] == {"add": 2, "derive": 1, "forget": 1, "retrieve": 4, "update": 1}
        assert stats["retrievals"] == {"bm25": 3, "tags": 1}
        assert stats["first_event"] == T0.isoformat() and stats["bytes"]["total"] > 0
        assert isinstance(backend.history("m1")[-1], EntryVersion)
    finally:
        backend.close()


def test_a_writer_waiting_on_a_lock_file_that_is_removed_opens_the_new_one(tmp_path) -> None:
    """A writer that created the lock file and failed to open the store removes the file while still holding it;
    a second writer that was waiting on that file then finds it gone and locks the new one, so a third writer is
    still kept out (locking the removed file would have let the third one in: two writers)."""
    path = tmp_path / "s.db"
    MemoryStore.open(path).close()
    lock_path = Path(f"{path}{persist.LOCK_SUFFIX}")
    first = MemoryStore.open(path)
    opened: list[MemoryStore] = []
    waiting = threading.Thread(target=lambda: opened.append(MemoryStore.open(path, timeout=10)))
    waiting.start()
    time.sleep(0.3)  # the second writer is waiting on the lock file's inode
    lock_path.unlink()  # what a failed opener that created the file does, still holding the lock
    first.close()
    waiting.join(timeout=10)
    assert len(opened) == 1 and lock_path.exists()
    with pytest.raises(StoreLockedError, match="store is locked by another writer"):
        MemoryStore.open(path, timeout=0)
    opened[0].close()
    MemoryStore.open(path, timeout=0).close()
