"""``agentmemory store ...``: import, export, export-run, export-queries, stats; one-line errors with status 2.

Everything runs ``agentmemory.cli.app.main`` in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

import agentmemory.cli.app as cli
from agentmemory import HashIds, MemoryEntry, MemoryStore, Query, SteppingClock
from agentmemory.cli.app import main
from agentmemory.store import sqlite as persist

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
STORE_COMMANDS = ("import", "export", "export-run", "export-queries", "stats")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def imported(tmp_path, capsys) -> Path:
    """The seed fixture imported into a new store, plus two recorded searches."""
    path = tmp_path / "agent.db"
    assert run(capsys, "store", "import", str(path), str(FIXTURE_DIR))[0] == 0
    with MemoryStore.open(path, clock=SteppingClock(T0), ids=HashIds("cli")) as store:
        store.search(Query("q1", "What can Maya eat for dinner?"), k=3)
        store.search(Query("q2", "orbit-api deploy"), k=3)
    return path


def _store_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    store = top.choices["store"]
    sub = next(a for a in store._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_module_usage_lists_every_store_option() -> None:
    """The usage in agentmemory.cli.app's docstring names every store command and every option of each."""
    usage = cli.__doc__ or ""
    parsers = _store_parsers()
    assert sorted(parsers) == sorted(STORE_COMMANDS)
    lines = usage.splitlines()
    for name, parser in parsers.items():
        # the command's usage line and its continuation lines (indented, naming no other command)
        start = next((i for i, u in enumerate(lines) if f"agentmemory store {name} " in u), len(lines))
        rest = lines[start + 1 :]
        more = next((i for i, u in enumerate(rest) if "agentmemory " in u or not u.startswith("        ")), len(rest))
        line = " ".join(lines[start : start + 1 + more])
        options = [s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")]
        assert line and all(o in line for o in options), (name, options)


def test_import_reports_what_it_imported_and_stats_show_it(imported, capsys) -> None:
    """import prints the counts; stats prints entries, scopes, events, searches, judgments and size."""
    code, out, err = run(capsys, "store", "stats", str(imported))
    assert (code, err) == (0, "")
    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert lines["store"] == f"{imported} (schema version 1)"
    assert lines["entries"] == "16 live, 0 forgotten (16 versions) in 1 scope"
    assert lines["events"] == "3: add 1, retrieve 2"
    assert lines["searches"] == "bm25 2"
    assert lines["collection"] == "5 queries; judgments: test 8"
    assert lines["size on disk"].endswith(")") and int(lines["size on disk"].split()[0].replace(",", "")) > 0
    assert lines["first event"] != "-"


def test_import_prints_counts(tmp_path, capsys) -> None:
    code, out, err = run(capsys, "store", "import", str(tmp_path / "s.db"), str(FIXTURE_DIR))
    assert (code, out, err) == (
        0,
        f"Imported 16 entries, 5 queries and 8 judgments (test) into {tmp_path / 's.db'}\n",
        "",
    )


def test_stats_as_json(imported, capsys) -> None:
    code, out, _ = run(capsys, "store", "stats", str(imported), "--output-format", "json")
    stats = json.loads(out)
    assert code == 0 and (stats["entries"], stats["events"], stats["judgments"]) == (
        16,
        {"add": 1, "retrieve": 2},
        {"test": 8},
    )


def test_export_round_trips_through_import(imported, tmp_path, capsys) -> None:
    """export writes the folder; importing it into a new store and exporting again gives the same bytes."""
    code, out, _ = run(capsys, "store", "export", str(imported), str(tmp_path / "a"))
    assert (code, out) == (0, f"Wrote {tmp_path / 'a'}: corpus.jsonl, qrels/test.tsv, queries.jsonl\n")
    assert run(capsys, "store", "import", str(tmp_path / "b.db"), str(tmp_path / "a"))[0] == 0
    assert run(capsys, "store", "export", str(tmp_path / "b.db"), str(tmp_path / "b"))[0] == 0
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_export_run_and_queries(imported, tmp_path, capsys) -> None:
    """export-run writes the TREC run of one retriever's searches; export-queries their queries."""
    code, out, err = run(
        capsys, "store", "export-run", str(imported), "--retriever", "BM25", "--out", str(tmp_path / "r.trec")
    )
    assert (code, err) == (0, "")
    assert out == f"Wrote {tmp_path / 'r.trec'}: 2 queries, 6 hits (bm25)\n"
    assert {line.split()[0] for line in (tmp_path / "r.trec").read_text().splitlines()} == {"q1", "q2"}
    args = ("--since", "2026-03-01T09:00:01Z", "--until", "2026-03-02")
    code, out, _ = run(capsys, "store", "export-queries", str(imported), "--out", str(tmp_path / "q.jsonl"), *args)
    assert out == f"Wrote {tmp_path / 'q.jsonl'}: 1 queries; since 2026-03-01T09:00:01Z, until 2026-03-02\n"
    assert json.loads((tmp_path / "q.jsonl").read_text())["_id"] == "q2"


def _limit_pages(monkeypatch, extra: int) -> None:
    """Once a store is open, its file may grow by ``extra`` pages only (a full disk, as SQLite sees one)."""
    real = persist._prepare

    def then_limit(conn, path, readonly):
        version = real(conn, path, readonly)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + extra}")
        return version

    monkeypatch.setattr(persist, "_prepare", then_limit)


def _big(tmp_path: Path) -> Path:
    """A collection of 50 entries of 2,100 characters: more than a few pages."""
    folder = tmp_path / "big"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"x{i}", "text": "lentil " * 300}) + "\n" for i in range(50))
    )
    (folder / "queries.jsonl").write_text('{"_id": "x", "text": "lentil"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nx\tx1\t1\n")
    return folder


def test_an_import_on_a_full_disk_fails_whole(imported, tmp_path, capsys, monkeypatch) -> None:
    """An import that does not fit: one line, status 2, nothing of it in the store, which still opens."""
    _limit_pages(monkeypatch, 3)
    code, out, err = run(capsys, "store", "import", str(imported), str(_big(tmp_path)))
    assert (code, out) == (2, "")
    assert err == (
        f"agentmemory: error: {imported}: the disk is full (SQLite: database or disk is full); "
        "nothing of this change was written; free some space and retry\n"
    )
    monkeypatch.undo()
    with MemoryStore.open(imported, readonly=True) as store:
        assert len(store) == 16 and store._backend.integrity_check() == ["ok"]


def test_a_failed_import_into_a_new_store_leaves_no_file(tmp_path, capsys, monkeypatch) -> None:
    """When the store did not exist, a failed import removes the file it made."""
    big = _big(tmp_path)
    _limit_pages(monkeypatch, 3)
    code, _, err = run(capsys, "store", "import", str(tmp_path / "new.db"), str(big))
    assert code == 2 and "the disk is full" in err
    assert [p.name for p in tmp_path.iterdir()] == ["big"]


def _not_utf8(tmp_path: Path) -> Path:
    folder = tmp_path / "latin1"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes(b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "caf\xe9"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\ta\t1\n")
    return folder


def _newer(tmp_path: Path) -> Path:
    path = tmp_path / "newer.db"
    MemoryStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 7")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            lambda t: ["store", "import", str(t / "s.db"), str(_not_utf8(t))],
            lambda t: f"{t / 'latin1' / 'corpus.jsonl'}:2: is not valid UTF-8",
        ),
        (
            lambda t: ["store", "stats", str(t / "missing.db")],
            lambda t: f"{t / 'missing.db'}: no such store",
        ),
        (
            lambda t: ["store", "stats", str((t / "x.txt", (t / "x.txt").write_text("hello"))[0])],
            lambda t: f"{t / 'x.txt'}: is not a SQLite file (it does not start with 'SQLite format 3'); pass the path",
        ),
        (
            lambda t: ["store", "export", str(_newer(t)), str(t / "out")],
            lambda t: (
                f"{t / 'newer.db'}: was written by a newer agentmemory (schema version 7; this one reads up to 1)"
            ),
        ),
        (
            lambda t: ["store", "export-run", str(t / "missing.db"), "--retriever", "bm25", "--out", str(t / "r")],
            lambda t: f"{t / 'missing.db'}: no such store",
        ),
        (
            lambda t: ["store", "export-run", "x.db", "--retriever", "bm25", "--out", str(t), "--since", "now"],
            lambda t: "--since: 'now' (str) is not an ISO 8601 time; write an ISO 8601 time with a timezone",
        ),
        (
            lambda t: ["store", "stats", "x.db", "--output-format", "yaml"],
            lambda t: "--output-format: 'yaml' (str) is not a known name; choose from: json, table",
        ),
        (
            lambda t: ["store", "stats", "x.db", "--format", "json"],
            lambda t: (
                "agentmemory store stats --format is now --output-format (--format names a collection format, "
                "in eval and retrieve); write --output-format json or table"
            ),
        ),
        (
            lambda t: ["store", "import", str(t / "s.db"), str(FIXTURE_DIR), "--timeout", "soon"],
            lambda t: "--timeout: 'soon' (str) is not a number; give seconds, e.g. 5 or 0.5",
        ),
        (
            lambda t: ["store", "export-run", "x.db", "--out", "r.trec"],
            lambda t: "the following arguments are required: --retriever (see 'agentmemory store export-run --help')",
        ),
    ],
    ids=[
        "not-utf8",
        "missing",
        "not-sqlite",
        "newer-schema",
        "missing-run",
        "bad-time",
        "bad-format",
        "old-format-flag",
        "bad-timeout",
        "no-retriever",
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, capsys, monkeypatch, args, message) -> None:
    """Every refusal is one line on stderr with status 2, and writes nothing.

    (SQLite's own -wal and -shm files may appear beside a store it opened to read: they are not ours to remove.)
    """
    monkeypatch.chdir(tmp_path)
    argv = args(tmp_path)

    def files() -> list[str]:
        return sorted(p.name for p in tmp_path.rglob("*") if not p.name.endswith(("-wal", "-shm")))

    before = files()
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"agentmemory: error: {message(tmp_path)}") and err.count("\n") == 1, err
    assert files() == before


def test_a_locked_store_refuses_an_import_after_the_timeout(imported, capsys) -> None:
    """While another writer holds the store, import waits --timeout seconds and says who holds it."""
    with MemoryStore.open(imported):
        code, out, err = run(capsys, "store", "import", str(imported), str(FIXTURE_DIR), "--timeout", "0.1")
    assert (code, out) == (2, "")
    assert err == (
        f"agentmemory: error: {imported}: store is locked by another writer (process {os.getpid()}); waited 0.1 s; "
        "close the other writer first, or open the store read-only (readonly=True) to search while it writes\n"
    )


def test_exports_read_a_store_while_it_is_being_written(imported, tmp_path, capsys) -> None:
    """export, export-run and stats open the store read-only: they work while a writer holds it."""
    with MemoryStore.open(imported) as writer:
        writer.add(MemoryEntry("new", "written while exporting"))
        assert run(capsys, "store", "export", str(imported), str(tmp_path / "out"))[0] == 0
        assert (
            run(capsys, "store", "export-run", str(imported), "--retriever", "bm25", "--out", str(tmp_path / "r"))[0]
            == 0
        )
        assert run(capsys, "store", "stats", str(imported))[0] == 0
    assert "written while exporting" in (tmp_path / "out" / "corpus.jsonl").read_text()


def test_a_read_only_location_refuses_an_import(imported, capsys, monkeypatch) -> None:
    """Where the lock file cannot be created, import fails in one line and the store is untouched."""
    real_open = os.open

    def refuse(path, flags, *rest):
        if str(path).endswith("-lock"):
            raise OSError(30, "Read-only file system", str(path))
        return real_open(path, flags, *rest)

    monkeypatch.setattr(os, "open", refuse)
    before = imported.read_bytes()
    code, _, err = run(capsys, "store", "import", str(imported), str(FIXTURE_DIR))
    assert code == 2 and err == (
        f"agentmemory: error: {imported}: cannot be opened for writing: its lock file agent.db-lock cannot be "
        "created (Read-only file system); open it read-only (readonly=True), or keep the store in a folder you can "
        "write to\n"
    )
    assert imported.read_bytes() == before


@pytest.mark.parametrize("suffix", ["-lock", "-wal", "-shm", ""])
@pytest.mark.parametrize("command", ["export-run", "export-queries"])
def test_an_export_never_replaces_a_file_of_the_store_while_a_writer_holds_it(
    imported, capsys, command, suffix
) -> None:
    """``--out`` naming the store, its -wal, -shm or the writer's lock file is refused (exit 2, one line), and the
    lock still keeps a second writer out: replacing the lock file used to let a second writer open the store."""
    target = Path(str(imported) + suffix)
    with MemoryStore.open(imported) as writer:
        writer.search(Query("q3", "Maya dinner"), k=2)
        before = target.read_bytes() if target.exists() else None
        extra = ["--retriever", "bm25"] if command == "export-run" else []
        code, out, err = run(capsys, "store", command, str(imported), *extra, "--out", str(target))
        assert code == 2 and out == ""
        assert err == (
            f"agentmemory: error: --out: {str(target)!r} (str) is the input file {str(target)!r}; "
            "write outputs elsewhere: a run never replaces what it reads\n"
        )
        assert (target.read_bytes() if target.exists() else None) == before
        with pytest.raises(persist.StoreLockedError, match="store is locked by another writer"):
            MemoryStore.open(imported, timeout=0)


@pytest.mark.parametrize(
    ("collection", "options", "counts"),
    [
        ("locomo-sample/locomo-sample.json", [], "33 entries, 8 queries and 11 judgments"),
        ("locomo-sample/locomo-sample.json", ["--granularity", "session"], "6 entries, 8 queries and 10 judgments"),
        ("longmemeval-sample/longmemeval-sample.json", [], "45 entries, 7 queries and 10 judgments"),
        ("beam-sample", ["--format", "beam"], "26 entries, 12 queries and 23 judgments"),
    ],
)
def test_import_takes_every_format_and_its_options(tmp_path, capsys, collection, options, counts) -> None:
    """`store import` reads a collection as `eval` does (format detected or named, the format's options), so a
    LoCoMo, LongMemEval or BEAM file goes into a store, and the store exports what the loader gave."""
    path = tmp_path / "s.db"
    code, out, err = run(capsys, "store", "import", str(path), str(REPO_ROOT / "fixtures" / collection), *options)
    assert (code, err) == (0, "")
    assert f"Imported {counts} (test) into {path}" in out
    code, _, err = run(capsys, "store", "export", str(path), str(tmp_path / "out"))
    assert (code, err) == (0, "")
    assert (tmp_path / "out" / "corpus.jsonl").read_text(encoding="utf-8").count("\n") == int(counts.split()[0])


def test_import_refuses_an_option_its_format_does_not_take(tmp_path, capsys) -> None:
    path = tmp_path / "s.db"
    code, _, err = run(capsys, "store", "import", str(path), str(FIXTURE_DIR), "--granularity", "session")
    assert code == 2 and err.count("\n") == 1 and "granularity" in err
    assert not path.exists()
