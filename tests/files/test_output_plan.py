"""OutputPlan: outputs declared up front, refused when they are inputs, and written all or none."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from agentmemory.errors import OutputError, ParameterError
from agentmemory.files import atomic as amio
from agentmemory.files.output_plan import DATABASE_COMPANIONS, OutputPlan, collection_inputs
from agentmemory.store.sqlite import LOCK_SUFFIX


def _exact(text: str) -> str:
    return f"^{re.escape(text)}$"


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    folder = tmp_path / "c"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        (folder / name).write_text(f"{name}\n")
    return folder


def _aliases(folder: Path) -> dict[str, Path]:
    """Ways to name corpus.jsonl other than its own path."""
    corpus = folder / "corpus.jsonl"
    (folder.parent / "sym.jsonl").symlink_to(corpus)
    (folder.parent / "chain.jsonl").symlink_to(folder.parent / "sym.jsonl")
    os.link(corpus, folder.parent / "hard.jsonl")
    (folder.parent / "linkdir").symlink_to(folder, target_is_directory=True)
    return {
        "same-path": corpus,
        "dot-dot": folder / "qrels" / ".." / "corpus.jsonl",
        "dot": folder / "." / "corpus.jsonl",
        "symlink": folder.parent / "sym.jsonl",
        "symlink-chain": folder.parent / "chain.jsonl",
        "hard-link": folder.parent / "hard.jsonl",
        "through-linked-folder": folder.parent / "linkdir" / "corpus.jsonl",
    }


@pytest.mark.parametrize(
    "alias", ["same-path", "dot-dot", "dot", "symlink", "symlink-chain", "hard-link", "through-linked-folder"]
)
@pytest.mark.parametrize("inputs_first", [True, False], ids=["inputs-first", "outputs-first"])
def test_an_output_that_is_an_input_is_refused(inputs: Path, alias: str, inputs_first: bool) -> None:
    """Any path resolving to an input file (symlinks followed, hard links by inode) is refused, whichever is named first."""
    path = _aliases(inputs)[alias]
    files = collection_inputs(inputs, ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
    message = (
        f"--out: {str(path)!r} (str) is the input file {str(inputs / 'corpus.jsonl')!r}; "
        "write outputs elsewhere: a run never replaces what it reads"
    )
    with pytest.raises(ParameterError, match=_exact(message)):
        if inputs_first:
            OutputPlan(files).file("--out", path)
        else:
            plan = OutputPlan()
            plan.file("--out", path)
            plan.add_inputs(files)
    assert (inputs / "corpus.jsonl").read_text() == "corpus.jsonl\n"


def test_collection_inputs_of_a_file_collection_include_the_file(tmp_path: Path) -> None:
    """A collection read from a file (LoCoMo) has that file as input, with any files named beside it."""
    sample = tmp_path / "locomo.json"
    sample.write_text("[]")
    assert collection_inputs(sample, ["locomo.json"]) == [sample, sample]
    with pytest.raises(ParameterError, match="is the input file"):
        OutputPlan(collection_inputs(sample, ["locomo.json"])).file("--out", sample)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("runs/bm25.trec", "--runs-dir: '{p}' (str) is also the path of --out ('{p}'); give every output its own path"),
        (
            "runs/../runs/bm25.trec",
            "--runs-dir: '{q}' (str) is also the path of --out ('{p}'); give every output its own path",
        ),
    ],
)
def test_two_outputs_on_one_path_are_refused(tmp_path: Path, second: str, message: str) -> None:
    """Two declared outputs that resolve to one file are refused: one would overwrite the other."""
    plan = OutputPlan()
    first = tmp_path / "runs" / "bm25.trec"
    plan.file("--out", first)
    with pytest.raises(ParameterError, match=_exact(message.format(p=first, q=tmp_path / second))):
        plan.file("--runs-dir", tmp_path / second)


def test_device_and_fifo_outputs_are_refused(tmp_path: Path) -> None:
    """/dev/null and a FIFO are not files an artifact can replace."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ParameterError, match=r"^--out: '/dev/null' \(str\) is a character device; "):
        OutputPlan().file("--out", "/dev/null")
    with pytest.raises(ParameterError, match=r"is a named pipe \(FIFO\); pass the path of a regular file"):
        OutputPlan().file("--out", tmp_path / "pipe")


def test_nothing_is_written_when_one_output_cannot_be(tmp_path: Path, monkeypatch) -> None:
    """If the second temporary file cannot be written, the first destination keeps its old bytes and no temporary file remains."""
    (tmp_path / "a.json").write_text("old a\n")
    plan = OutputPlan()
    a = plan.file("--out", tmp_path / "a.json")
    b = plan.file("--table-out", tmp_path / "sub" / "b.md")
    plan.put(a, "new a\n")
    plan.put(b, "new b\n")
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if "b.md" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(amio.os, "open", refuse)
    with pytest.raises(OutputError, match=_exact(f"{tmp_path / 'sub' / 'b.md'}: cannot write (Permission denied)")):
        plan.write()
    assert (tmp_path / "a.json").read_text() == "old a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]  # the folder sub/ it made is gone too


def test_text_utf8_cannot_encode_is_refused_before_writing(tmp_path: Path) -> None:
    """A lone surrogate in rendered text is a ParameterError naming the output, and nothing is written."""
    plan = OutputPlan()
    out = plan.file("--out", tmp_path / "e.json")
    with pytest.raises(ParameterError, match=r"would hold the character '\\ud800', which UTF-8 cannot encode"):
        plan.put(out, "x\ud800")
    assert plan.write() == []
    assert list(tmp_path.iterdir()) == []


def test_write_replaces_each_output_whole(tmp_path: Path) -> None:
    """Declared outputs with content are written (folders created); the others are left alone."""
    plan = OutputPlan()
    a = plan.file("--out", tmp_path / "x" / "a.json")
    plan.file("--table-out", tmp_path / "b.md")
    plan.put(a, b"bytes\n")
    assert plan.write() == [a]
    assert a.read_bytes() == b"bytes\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.json", "x"]


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal", "-lock"])
def test_a_sqlite_input_brings_its_companion_files_as_inputs(tmp_path, suffix) -> None:
    """An input that is a SQLite database makes its -wal, -shm, -journal and the store writer's -lock inputs too
    (present or not): an output there is refused, naming it."""
    assert LOCK_SUFFIX in DATABASE_COMPANIONS
    database = tmp_path / "memory.db"
    sqlite3.connect(database).execute("CREATE TABLE t (x)").connection.close()
    plan = OutputPlan([database])
    companion = tmp_path / f"memory.db{suffix}"
    message = f"--out: {str(companion)!r} (str) is the input file {str(companion)!r}; write outputs elsewhere"
    with pytest.raises(ParameterError, match=re.escape(message)):
        plan.file("--out", str(companion))


def test_a_text_input_brings_no_companions(tmp_path) -> None:
    """Only a SQLite database has companions: beside a text input, a file named like a journal is an output like any."""
    source = tmp_path / "notes.txt"
    source.write_text("not a database\n")
    assert OutputPlan([source]).file("--out", tmp_path / "notes.txt-wal") == tmp_path / "notes.txt-wal"
