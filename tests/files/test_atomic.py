"""Atomic writes: temporary files recognisably ours, stale ones removed by the next write, errors naming the destination, SIGKILL survived."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PYTHON

from agentmemory.datasets.beir import write_collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import OutputError
from agentmemory.files import atomic as amio
from agentmemory.files.atomic import TEMPORARY_SUFFIX, atomic_write_text, remove_stale_temporaries, temporary_name


def _exact(text: str) -> str:
    return f"^{re.escape(text)}$"


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(proc.stdout)


def _ours(name: str, pid: int, host: str | None = None) -> str:
    """A temporary name of ours for ``name``, as process ``pid`` on ``host`` would make it."""
    made = temporary_name(name)
    own = re.fullmatch(r".+\.(\d+-[0-9a-f]{8})-[0-9a-f]{16}\.agentmemory-tmp", made)
    assert own is not None
    own_pid, own_host = own[1].split("-")
    return made.replace(f".{own[1]}-", f".{pid}-{host or own_host}-")


def test_temporary_names_are_recognisably_ours() -> None:
    """.<name>.<pid>-<host>-<random>.agentmemory-tmp, different on every call."""
    first, second = temporary_name("eval-results.json"), temporary_name("eval-results.json")
    assert first != second
    assert re.fullmatch(rf"\.eval-results\.json\.{os.getpid()}-[0-9a-f]{{8}}-[0-9a-f]{{16}}\.agentmemory-tmp", first)


def test_the_host_part_is_a_hash_of_the_name_socket_gives(monkeypatch) -> None:
    """<host> hashes the machine's name as socket.gethostname() gives it, read without importing socket where
    os.uname exists (the two agree on POSIX), and through socket where it does not (Windows)."""
    import hashlib
    import socket

    def hashed(name: str) -> str:
        return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]

    if hasattr(os, "uname"):
        assert amio._host() == hashed(socket.gethostname())
    monkeypatch.delattr(os, "uname", raising=False)
    monkeypatch.setattr(socket, "gethostname", lambda: "garden-shed")
    assert amio._host() == hashed("garden-shed")


def test_the_next_write_removes_stale_temporaries_of_ours_and_nothing_else(tmp_path: Path) -> None:
    """Only regular files with our pattern, written on this machine by a process that no longer runs, are removed."""
    dead = _dead_pid()
    stale = [_ours("eval-results.json", dead), _ours("bm25.trec", dead)]
    kept = {
        _ours("eval-results.json", os.getpid()): "this process is writing it",
        _ours("eval-results.json", os.getppid()): "a live process is writing it",
        _ours("eval-results.json", dead, host="0123abcd"): "written on another machine",
        ".eval-results.json.k3j4l5.tmp": "not our pattern (an older or another program's temporary file)",
        "eval-results.json.bak": "not ours",
        f"x{TEMPORARY_SUFFIX}": "not the whole pattern",
    }
    for name in [*stale, *kept]:
        (tmp_path / name).write_text("partial")
    folder, link = _ours("folder", dead), _ours("link", dead)
    (tmp_path / folder).mkdir()  # our pattern, but not a file we wrote
    (tmp_path / link).symlink_to(tmp_path / "eval-results.json.bak")
    atomic_write_text(tmp_path / "eval-results.json", "new\n")
    names = set(os.listdir(tmp_path))
    assert names.isdisjoint(stale)
    assert set(kept) <= names, {n: why for n, why in kept.items() if n not in names}
    assert {folder, link, "eval-results.json"} <= names
    assert remove_stale_temporaries(tmp_path) == []


def test_an_unwritable_folder_names_the_destination_not_the_temporary_file(tmp_path: Path, monkeypatch) -> None:
    """Creating the temporary file fails: the error names the file asked for, and nothing is left."""
    dest = tmp_path / "eval-results.json"
    dest.write_text("old\n")

    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(amio.os, "open", refuse)
    with pytest.raises(OutputError, match=_exact(f"{dest}: cannot write (Permission denied)")) as info:
        atomic_write_text(dest, "new\n")
    assert isinstance(info.value, OSError) and info.value.filename == str(dest)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["eval-results.json"] and dest.read_text() == "old\n"


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user (root writes anywhere)"
)
def test_a_read_only_folder_names_the_out_path(tmp_path: Path, capsys) -> None:
    """agentmemory eval --out into a read-only folder: one line naming --out's path, exit 2."""
    from agentmemory.cli.app import main

    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "eval-results.json").write_text("old\n")
    folder.chmod(0o555)
    try:
        assert main(["eval", "--out", str(folder / "eval-results.json")]) == 2
    finally:
        folder.chmod(0o755)
    err = capsys.readouterr().err
    assert err == f"agentmemory: error: {folder / 'eval-results.json'}: cannot write (Permission denied)\n"
    assert os.listdir(folder) == ["eval-results.json"]


def test_a_folder_that_cannot_be_created_names_the_destination(tmp_path: Path, monkeypatch) -> None:
    """A missing parent that cannot be made: the error names the destination and the folder."""
    dest = tmp_path / "a" / "b" / "e.json"

    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(amio.os, "mkdir", refuse)
    with pytest.raises(
        OutputError, match=_exact(f"{dest}: cannot create the folder {tmp_path / 'a'} (Permission denied)")
    ):
        atomic_write_text(dest, "x")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


# -- SIGKILL at random moments ---------------------------------------------------------------------

TRIES = 10


@pytest.fixture(scope="module")
def big_collection(tmp_path_factory) -> Path:
    """A synthetic collection whose artifact (k = 40) is about a megabyte: a write that takes a while."""
    folder = tmp_path_factory.mktemp("big") / "c"
    write_collection(synthetic_collection(seed=3, n_entries=800, n_queries=160), folder)
    return folder


def _eval(collection: Path, out: Path, seed: int) -> list[str]:
    return [PYTHON, "-m", "agentmemory", "eval", "--collection", str(collection), "--out", str(out), "--k", "40",
            "--seed", str(seed), "--retrievers", "bm25", "--no-progress"]  # fmt: skip


def _debris(folder: Path, keep: str) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n != keep)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_sigkill_at_random_moments_leaves_old_or_new_and_the_next_run_cleans_up(
    big_collection: Path, tmp_path: Path
) -> None:
    """Kill the writer 10 times (half at a random moment of the run, half just after its temporary file appears).

    After each kill the artifact is the old bytes or the new complete ones, and
    anything else in the folder is a temporary file of ours; once the next run
    has finished, the folder holds only the new artifact.
    """
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "eval-results.json"
    subprocess.run(_eval(big_collection, out, 1), check=True, capture_output=True, timeout=120)
    old = out.read_bytes()
    started = time.monotonic()
    subprocess.run(_eval(big_collection, out, 2), check=True, capture_output=True, timeout=120)
    new = out.read_bytes()
    duration = time.monotonic() - started
    assert old != new and len(new) > 500_000  # about a megabyte
    rng = random.Random(20261203)
    killed_while_writing = 0
    for attempt in range(TRIES):
        out.write_bytes(old)
        proc = subprocess.Popen(_eval(big_collection, out, 2), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt % 2 == 0:
            time.sleep(rng.uniform(0.0, duration))
        else:
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if any(n.endswith(TEMPORARY_SUFFIX) for n in os.listdir(folder)):
                    time.sleep(rng.uniform(0.0, 0.003))
                    break
                time.sleep(0.0005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        left = _debris(folder, out.name)
        killed_while_writing += bool(left)
        assert out.read_bytes() in (old, new), f"try {attempt}: a partial artifact"
        assert all(
            re.fullmatch(rf"\.eval-results\.json\.{proc.pid}-[0-9a-f]{{8}}-[0-9a-f]{{16}}\.agentmemory-tmp", n)
            for n in left
        ), left
        subprocess.run(_eval(big_collection, out, 2), check=True, capture_output=True, timeout=120)
        assert _debris(folder, out.name) == [], f"try {attempt}: the next run left {_debris(folder, out.name)}"
        assert out.read_bytes() == new
    print(f"{killed_while_writing} of {TRIES} kills left a temporary file; the next run removed each", file=sys.stderr)
