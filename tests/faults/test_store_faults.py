"""Damaged stores: a truncated file, a flipped page, another program's database, a held lock.

Every case runs each store command in-process (``agentmemory store stats``, ``export``, ``export-run``,
``export-queries``, ``import``) and the library's ``MemoryStore.open`` (to write and to read), and asserts:
one line (our ``StoreError``, never ``sqlite3.DatabaseError``), exit status 2 from the command line, and
nothing written: the damaged file keeps its bytes, no output appears, no lock file is left behind.  A
read-only handle of a SQLite store in WAL mode may leave SQLite's own ``-wal`` (empty) and ``-shm`` beside
it, as any SQLite reader does; nothing else appears.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR

from agentmemory import HashIds, MemoryStore, Query, SteppingClock
from agentmemory.cli.app import main
from agentmemory.errors import StoreError, StoreLockedError
from agentmemory.store.sqlite import DAMAGED_ADVICE

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
PAGE = 4096
SQLITE_READER_FILES = {"-wal", "-shm"}  # what any reader of a WAL database may create beside it


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    """A sound store: the seed collection imported (entries, queries, judgments) and two recorded searches."""
    path = tmp_path_factory.mktemp("sound") / "agent.db"
    assert main(["store", "import", str(path), str(FIXTURE_DIR)]) == 0
    with MemoryStore.open(path, clock=SteppingClock(T0), ids=HashIds("faults")) as store:
        store.search(Query("q1", "What can Maya eat for dinner?"), k=3)
        store.search(Query("q2", "orbit-api deploy"), k=3)
    assert sorted(p.name for p in path.parent.iterdir()) == ["agent.db", "agent.db-lock"]
    return path


def _commands(store: Path, out: Path) -> dict[str, list[str]]:
    """Every store command on ``store``, each writing (if at all) under ``out``."""
    return {
        "stats": ["store", "stats", str(store)],
        "export": ["store", "export", str(store), str(out / "collection")],
        "export-run": ["store", "export-run", str(store), "--retriever", "bm25", "--out", str(out / "run.trec")],
        "export-queries": ["store", "export-queries", str(store), "--out", str(out / "queries.jsonl")],
        "import": ["store", "import", str(store), str(FIXTURE_DIR), "--timeout", "0"],
    }


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _run(capsys, args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _assert_refused(capsys, store: Path, out: Path, name: str, args: list[str], before: dict[str, bytes]) -> str:
    """The command exits 2 with one line on stderr naming the store, and writes nothing."""
    code, printed, err = _run(capsys, args)
    assert (code, printed) == (2, ""), (name, code, printed, err)
    assert err.startswith(f"agentmemory: error: {store}: ") and err.endswith("\n"), (name, err)
    assert err.count("\n") == 1 and "Traceback" not in err, (name, err)
    assert not any(out.iterdir()), (name, sorted(out.iterdir()))
    after = _snapshot(store.parent)
    assert {k: v for k, v in after.items() if k in before} == before, name  # the damaged file keeps its bytes
    new = {k[len(store.name) :] for k in after.keys() - before.keys()}
    assert new <= SQLITE_READER_FILES and after.get(store.name + "-wal", b"") == b"", (name, new)
    return err


def _copy(sound: Path, folder: Path, data: bytes) -> Path:
    """``data`` as a store file alone in ``folder`` (no lock file, no journal), and an empty output folder."""
    folder.mkdir()
    (folder / "out").mkdir()
    path = folder / "agent.db"
    path.write_bytes(data)
    return path


def _open_both_ways(path: Path) -> list[StoreError]:
    """``MemoryStore.open`` to write and to read; the StoreErrors they raised (any other exception fails)."""
    errors = []
    for readonly in (False, True):
        try:
            MemoryStore.open(path, readonly=readonly, timeout=0).close()
        except StoreError as err:
            errors.append(err)
    return errors


# -- a truncated file ---------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [PAGE + 10, 3 * PAGE, "half"], ids=["one-page", "three-pages", "half"])
def test_a_truncated_store_is_one_line_everywhere_and_nothing_is_written(sound, tmp_path, capsys, keep) -> None:
    """A store cut short (a copy interrupted, a full disk): every command exits 2 with '<file>: is damaged ...',
    the advice names PRAGMA integrity_check and a backup, and nothing is written."""
    data = sound.read_bytes()
    size = len(data) // 2 if keep == "half" else keep
    store = _copy(sound, tmp_path / "cut", data[:size])
    before = _snapshot(store.parent)
    for name, args in _commands(store, store.parent / "out").items():
        err = _assert_refused(capsys, store, store.parent / "out", name, args, before)
        assert "is damaged (SQLite: database disk image is malformed)" in err and DAMAGED_ADVICE in err, err
    for error in _open_both_ways(store):
        assert "is damaged" in str(error) and "\n" not in str(error)
    assert len(_open_both_ways(store)) == 2
    assert store.read_bytes() == data[:size] and not (store.parent / "agent.db-lock").exists()


# -- a flipped page -----------------------------------------------------------------------------------


def test_a_flipped_page_anywhere_is_one_line_or_harmless(sound, tmp_path, capsys) -> None:
    """Each page of the store in turn gets its first 8 bytes inverted: each command either works as on a sound
    store (the page is one it does not read) or exits 2 with one line naming the file, 'is damaged' and what it
    was reading; never a sqlite3 traceback, never a file written.  Most pages break something."""
    data = sound.read_bytes()
    pages = len(data) // PAGE
    broken = 0
    for page in range(2, pages + 1):  # page 1 is the header: test_a_truncated_store covers a bad one
        damaged = bytearray(data)
        for i in range(8):
            damaged[(page - 1) * PAGE + i] ^= 0xFF
        store = _copy(sound, tmp_path / f"p{page}", bytes(damaged))
        out = store.parent / "out"
        before = _snapshot(store.parent)
        for name, args in _commands(store, out).items():
            if name == "import":
                continue  # a write would change the file when the page is one it does not read: below, on its own
            code, printed, err = _run(capsys, args)
            if code == 0:
                shutil.rmtree(out)
                out.mkdir()
                continue
            broken += 1
            assert code == 2 and printed == "" and err.count("\n") == 1, (page, name, err)
            assert err.startswith(f"agentmemory: error: {store}: is damaged (SQLite: "), (page, name, err)
            assert err.rstrip("\n").endswith(DAMAGED_ADVICE), (page, name, err)
            assert not any(out.iterdir()), (page, name)
            assert store.read_bytes() == before[store.name], (page, name)
        for error in _open_both_ways(store):
            assert str(error).startswith(f"{store}: is damaged") and "\n" not in str(error), (page, str(error))
    assert broken >= pages  # on average, more than one command per page refuses


def test_a_flipped_entries_page_refuses_the_writer_and_leaves_no_lock(sound, tmp_path) -> None:
    """Opening a store to write reads every entry; a damaged entries page is refused (naming what was read)
    before anything changes, and the lock file it created is removed."""
    data = sound.read_bytes()
    for page in range(2, len(data) // PAGE + 1):
        damaged = bytearray(data)
        for i in range(8):
            damaged[(page - 1) * PAGE + i] ^= 0xFF
        store = _copy(sound, tmp_path / f"p{page}", bytes(damaged))
        try:
            MemoryStore.open(store, timeout=0).close()
        except StoreError as err:
            if "while reading its entries" in str(err):
                assert str(err) == (
                    f"{store}: is damaged (SQLite: database disk image is malformed) while reading its entries; "
                    f"{DAMAGED_ADVICE}"
                )
                assert sorted(p.name for p in store.parent.iterdir()) == ["agent.db", "out"]
                assert store.read_bytes() == bytes(damaged)
                return
    pytest.fail("no page of the entries table was found")


# -- another program's database -----------------------------------------------------------------------


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_programs_database_is_refused_before_anything_is_created_beside_it(tmp_path, capsys, journal) -> None:
    """A SQLite file that is not a store (rollback journal or WAL mode): every command and MemoryStore.open,
    to write or to read, refuses it in one line listing its tables, and no file (lock, -wal, -shm) appears."""
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "out").mkdir()
    foreign = folder / "app.db"
    conn = sqlite3.connect(foreign)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('maya')")
    conn.commit()
    conn.close()
    before = _snapshot(folder)
    assert sorted(before) == ["app.db"]
    message = (
        f"{foreign}: is a SQLite database but not an agentmemory store (tables: users); pass the path of a store "
        "made by MemoryStore.open or agentmemory store import, or a new path"
    )
    for name, args in _commands(foreign, folder / "out").items():
        code, printed, err = _run(capsys, args)
        assert (code, printed, err) == (2, "", f"agentmemory: error: {message}\n"), name
        assert _snapshot(folder) == before, name
    for readonly in (False, True):
        with pytest.raises(StoreError) as info:
            MemoryStore.open(foreign, readonly=readonly)
        assert str(info.value) == message
        assert _snapshot(folder) == before and sorted(p.name for p in folder.iterdir()) == ["app.db", "out"]


# -- a held lock --------------------------------------------------------------------------------------


def test_a_held_lock_refuses_a_second_writer_in_one_line_and_readers_still_read(sound, tmp_path, capsys) -> None:
    """While a writer holds the store: ``store import --timeout 0`` and ``MemoryStore.open(timeout=0)`` are one
    line (exit 2 from the command line) and change nothing; the read-only commands still work, and no output
    may replace the lock (or any file of the store)."""
    folder = tmp_path / "held"
    folder.mkdir()
    (folder / "out").mkdir()
    store = folder / "agent.db"
    shutil.copyfile(sound, store)
    commands = _commands(store, folder / "out")
    with MemoryStore.open(store) as writer:
        held = _snapshot(folder)
        code, printed, err = _run(capsys, commands["import"])
        assert (code, printed) == (2, "")
        assert err == (
            f"agentmemory: error: {store}: store is locked by another writer (process {os.getpid()}); waited 0 s; "
            "close the other writer first, or open the store read-only (readonly=True) to search while it writes\n"
        )
        assert _snapshot(folder) == held and len(writer) == len(MemoryStore.open(store, readonly=True))
        with pytest.raises(StoreLockedError, match=r"store is locked by another writer"):
            MemoryStore.open(store, timeout=0)
        for name in ("stats", "export-run", "export-queries"):
            assert _run(capsys, commands[name])[0] == 0, name
        for companion in ("-lock", "-wal", "-shm", ""):
            target = f"{store}{companion}"
            code, printed, err = _run(
                capsys, ["store", "export-run", str(store), "--retriever", "bm25", "--out", target]
            )
            assert (code, printed) == (2, "") and "is the input file" in err and err.count("\n") == 1, companion
        with pytest.raises(StoreLockedError):
            MemoryStore.open(store, timeout=0)
    MemoryStore.open(store, timeout=0).close()  # released with the writer
