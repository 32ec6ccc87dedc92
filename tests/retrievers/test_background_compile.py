"""numba's kernels are compiled in the background, never inside a build that would wait for them.

``_index.compile_in_background`` starts ``agentmemory.retrievers._warm`` in a process of its own
once per kernel set and machine (a lock file in numba's cache folder), and
``_index.accelerator`` asks for it from ``ACCEL_WARM_DOCS`` entries on, while
the index itself takes the NumPy path.  The session turns background
compiles off (``tests/conftest.py``); these tests turn them on.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentmemory import BM25, MemoryEntry
from agentmemory.retrievers import _index, _warm

try:
    from agentmemory.retrievers import _accel

    HAVE_NUMBA = _accel.AVAILABLE
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

TAG = f"py{sys.version_info.major}{sys.version_info.minor}"
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba cannot be imported here")


class Recorder:
    """Stands in for ``subprocess.Popen``: records each call, starts nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict]] = []

    def __call__(self, args, **kwargs):
        self.calls.append((list(args), kwargs))
        return self


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty numba cache (``NUMBA_CACHE_DIR``), background compiles on, ``auto`` mode; the folder of our kernels."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("AGENTMEMORY_ACCEL_BACKGROUND", "on")
    monkeypatch.setenv("AGENTMEMORY_ACCEL", "auto")
    monkeypatch.setattr(_index, "_started", set())
    monkeypatch.setattr(_index, "_children", [])
    return _index.numba_cache_folder()


@pytest.fixture
def popen(monkeypatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(subprocess, "Popen", recorder)
    return recorder


def fake_cached(folder: Path, kernels: tuple[str, ...]) -> None:
    """Index files for ``kernels`` as numba names them, newer than ``_accel.py``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in kernels:
        (folder / f"_accel.{name}-1.{TAG}.nbi").write_bytes(b"")


def test_the_cache_folder_is_numbas_subfolder_of_NUMBA_CACHE_DIR(tmp_path, monkeypatch):
    """With ``NUMBA_CACHE_DIR``: ``<dir>/<the module folder's name>_<sha1 of its path>`` (numba's naming)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    parent = os.path.dirname(os.path.abspath(_index.__file__))
    expected = tmp_path / f"retrievers_{hashlib.sha1(parent.encode()).hexdigest()}"
    assert _index.numba_cache_folder() == expected


def test_a_read_only_install_caches_in_the_users_cache_folder(tmp_path, monkeypatch):
    """When ``__pycache__`` beside the module cannot be written, numba's per-user folder (``$XDG_CACHE_HOME/numba``)."""
    if sys.platform in ("win32", "darwin"):
        pytest.skip("XDG_CACHE_HOME is where numba caches on Linux and other Unix systems")
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    folder = _index.numba_cache_folder()
    assert folder.parent == tmp_path / "xdg" / "numba"
    assert folder.name.startswith("retrievers_")


@needs_numba
@pytest.mark.parametrize("where", ["beside the module", "NUMBA_CACHE_DIR"])
def test_the_cache_folder_is_where_numba_itself_caches_the_kernels(tmp_path, where):
    """Cross-check against numba: the folder its cache of ``_bm25_top`` uses, in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if where == "NUMBA_CACHE_DIR":
        env["NUMBA_CACHE_DIR"] = str(tmp_path)
    code = (
        "import json; from agentmemory.retrievers import _index, _accel; "
        "print(json.dumps([str(_index.numba_cache_folder()), _accel._bm25_top._cache.cache_path]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    ours, numbas = json.loads(proc.stdout)
    assert Path(ours) == Path(numbas)


def test_one_detached_compiler_per_kernel_set(cache, popen):
    """The first call starts ``_warm.main([<set>, <lock>])`` of this install in a detached process, with the kernels
    forced and no standard stream shared; a second call finds the lock held and starts nothing; another kernel
    set has a lock of its own."""
    assert _index.compile_in_background(_index.BM25_KERNELS) is True
    lock = cache / "_accel.compiling-bm25.lock"
    assert lock.is_file()
    (args, kwargs) = popen.calls[0]
    root = str(Path(_index.__file__).resolve().parents[2])
    assert args == [sys.executable, "-c", _index.WARM_COMMAND, root, "bm25", str(lock)]
    assert kwargs["stdin"] == kwargs["stdout"] == kwargs["stderr"] == subprocess.DEVNULL
    assert kwargs["env"]["AGENTMEMORY_ACCEL"] == "on"
    if sys.platform != "win32":
        assert kwargs["start_new_session"] is True
    assert _index.compile_in_background(_index.BM25_KERNELS) is False
    assert len(popen.calls) == 1
    assert _index.compile_in_background(_index.TAG_KERNELS) is True
    assert popen.calls[1][0][4:] == ["tags", str(cache / "_accel.compiling-tags.lock")]


def test_a_stale_lock_is_taken_over(cache, popen):
    """A lock older than 15 minutes is a compiler that died: the next call starts one again."""
    assert _index.compile_in_background(_index.BM25_KERNELS) is True
    lock = cache / "_accel.compiling-bm25.lock"
    old = time.time() - 16 * 60
    os.utime(lock, (old, old))
    assert _index.compile_in_background(_index.BM25_KERNELS) is True
    assert len(popen.calls) == 2
    assert time.time() - lock.stat().st_mtime < 60


@pytest.mark.parametrize(
    ("switch", "kernels"),
    [("off", _index.BM25_KERNELS), ("0", _index.BM25_KERNELS), ("on", ("_not_a_kernel",))],
)
def test_nothing_is_started_when_switched_off_or_for_an_unknown_set(cache, popen, monkeypatch, switch, kernels):
    """``AGENTMEMORY_ACCEL_BACKGROUND=off`` (or 0), or a kernel set ``KERNEL_SETS`` does not name: no process, no lock."""
    monkeypatch.setenv("AGENTMEMORY_ACCEL_BACKGROUND", switch)
    assert _index.compile_in_background(kernels) is False
    assert popen.calls == []
    assert not cache.exists() or not list(cache.glob("*.lock"))


def test_kernels_are_not_cached_while_a_compile_is_under_way(cache):
    """Index files alone do not make the kernels cached while a fresh lock says a compiler may still be writing
    one of them (the tag scorer's set shares ``_build_postings`` with BM25's; the dense set shares nothing)."""
    fake_cached(cache, _index.BM25_KERNELS)
    assert _index.kernels_cached(_index.BM25_KERNELS) is True
    (cache / "_accel.compiling-dense.lock").write_bytes(b"")
    assert _index.kernels_cached(_index.BM25_KERNELS) is True
    lock = cache / "_accel.compiling-tags.lock"
    lock.write_bytes(b"")
    assert _index.kernels_cached(_index.BM25_KERNELS) is False
    old = time.time() - 16 * 60
    os.utime(lock, (old, old))
    assert _index.kernels_cached(_index.BM25_KERNELS) is True


def test_the_policy_asks_for_a_compile_once_from_ACCEL_WARM_DOCS(cache, monkeypatch):
    """Below ACCEL_WARM_DOCS nothing; from it to ACCEL_COMPILE_DOCS, one request per kernel set and process while
    the kernels are not cached, and the NumPy path meanwhile; cached kernels are not asked for again."""
    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(_index, "compile_in_background", lambda kernels: asked.append(kernels) or True)
    assert _index.accelerator(_index.ACCEL_WARM_DOCS - 1) is None
    assert asked == []
    assert _index.accelerator(_index.ACCEL_WARM_DOCS) is None
    assert _index.accelerator(_index.ACCEL_MIN_DOCS) is None
    assert _index.accelerator(_index.ACCEL_COMPILE_DOCS - 1) is None
    assert asked == [_index.BM25_KERNELS]
    assert _index.accelerator(_index.ACCEL_MIN_DOCS, _index.TAG_KERNELS) is None
    assert asked == [_index.BM25_KERNELS, _index.TAG_KERNELS]
    fake_cached(cache, _index.DENSE_KERNELS)
    assert _index.accelerator(_index.ACCEL_WARM_DOCS, _index.DENSE_KERNELS) is None
    assert asked == [_index.BM25_KERNELS, _index.TAG_KERNELS]


def test_the_compiler_removes_its_lock_whatever_happens(tmp_path, monkeypatch):
    """``_warm.main`` lowers its priority, runs the set's exercise and removes the lock, also when the exercise
    fails (the error is the process's exit) and for a name it does not know."""
    niced: list[int] = []
    monkeypatch.setattr(os, "nice", niced.append, raising=False)
    lock = tmp_path / "x.lock"

    def broken() -> None:
        raise RuntimeError("no compiler here")

    monkeypatch.setitem(_warm.EXERCISES, "bm25", broken)
    lock.write_bytes(b"")
    with pytest.raises(RuntimeError, match="^no compiler here$"):
        _warm.main(["bm25", str(lock)])
    assert not lock.exists()
    lock.write_bytes(b"")
    assert _warm.main(["nothing-by-this-name", str(lock)]) == 0
    assert not lock.exists()
    assert niced == [10, 10]


def test_a_compile_that_loaded_older_files_marks_them_fresh(cache, monkeypatch):
    """Index files older than ``_accel.py`` (numba found them valid by its own stamp and loaded them): after the
    exercise ran, ``_warm.main`` touches the set's index files, so the next process sees the kernels cached; a
    failed exercise touches nothing."""
    kernels = _index.KERNEL_SETS["bm25"]
    fake_cached(cache, kernels)
    old = Path(_index.__file__).with_name("_accel.py").stat().st_mtime - 3600
    for f in cache.iterdir():
        os.utime(f, (old, old))
    assert not _index.kernels_cached(kernels)
    monkeypatch.setattr(os, "nice", lambda n: None, raising=False)
    monkeypatch.setitem(_warm.EXERCISES, "bm25", lambda: (_ for _ in ()).throw(RuntimeError("failed")))
    with pytest.raises(RuntimeError, match="^failed$"):
        _warm.main(["bm25", str(cache / "x.lock")])
    assert not _index.kernels_cached(kernels)
    monkeypatch.setitem(_warm.EXERCISES, "bm25", lambda: None)
    assert _warm.main(["bm25", str(cache / "x.lock")]) == 0
    assert _index.kernels_cached(kernels)


def test_every_kernel_set_has_an_exercise():
    """The background compiler knows how to compile each kernel set the policy can ask for."""
    assert set(_warm.EXERCISES) == set(_index.KERNEL_SETS)


@needs_numba
@pytest.mark.parametrize("name", sorted(_index.KERNEL_SETS))
def test_each_exercise_calls_its_kernels(name, monkeypatch):
    """Running a set's exercise with the kernels forced calls (so compiles and caches) every kernel of the set."""
    monkeypatch.setenv("AGENTMEMORY_ACCEL", "on")
    _warm.EXERCISES[name]()
    for kernel in _index.KERNEL_SETS[name]:
        assert getattr(_accel, kernel).signatures, kernel


_FIRST = r"""
import json, sys
from agentmemory.retrievers import _index
out = {"below": _index.accelerator(_index.ACCEL_WARM_DOCS - 1) is None}
out["from"] = _index.accelerator(_index.ACCEL_WARM_DOCS) is None
out["again"] = _index.accelerator(_index.ACCEL_MIN_DOCS) is None
out["started"] = len(_index._children)
out["numba"] = "numba" in sys.modules
print(json.dumps(out))
"""

_LATER = r"""
import json
from agentmemory import BM25, MemoryEntry
from agentmemory.retrievers import _accel, _index
out = {"auto": _index.accelerator(_index.ACCEL_MIN_DOCS) is not None}
import os
os.environ["AGENTMEMORY_ACCEL"] = "on"
entries = [MemoryEntry(f"m{i}", f"word{i % 7} shared text {i}") for i in range(60)]
r = BM25()
r.add(entries[:40])
r.add(entries[40:])
out["hits"] = [(h.entry_id, h.score) for h in r.search("shared word3", 3)]
kernels = ("_tokenize_ascii", "_build_postings", "_bm25_top", "_impacts")
out["compiled"] = {k: len(getattr(_accel, k).stats.cache_misses) for k in kernels}
out["loaded"] = {k: len(getattr(_accel, k).stats.cache_hits) for k in kernels}
print(json.dumps(out))
"""


@needs_numba
def test_a_large_index_compiles_in_the_background_and_the_next_process_loads_the_kernels(tmp_path):
    """End to end, in fresh processes on an empty cache: an index of ACCEL_WARM_DOCS entries starts one
    background compiler and does not import numba; once it is done, the kernels are cached, `auto` uses them
    from ACCEL_MIN_DOCS, and a real index loads every kernel it calls from the cache (nothing compiled), with
    the same hits as the NumPy path."""
    env = {
        **os.environ,
        "AGENTMEMORY_ACCEL": "auto",
        "AGENTMEMORY_ACCEL_BACKGROUND": "on",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
    }
    proc = subprocess.run([sys.executable, "-c", _FIRST], capture_output=True, text=True, env=env, check=True)
    assert json.loads(proc.stdout) == {"below": True, "from": True, "again": True, "started": 1, "numba": False}
    code = "from agentmemory.retrievers import _index; print(_index.numba_cache_folder())"
    folder = Path(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.strip())
    lock = folder / "_accel.compiling-bm25.lock"
    deadline = time.monotonic() + 600
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not lock.exists()
    proc = subprocess.run([sys.executable, "-c", _LATER], capture_output=True, text=True, env=env, check=True)
    out = json.loads(proc.stdout)
    assert out["auto"] is True
    assert out["compiled"] == {"_tokenize_ascii": 0, "_build_postings": 0, "_bm25_top": 0, "_impacts": 0}
    assert all(out["loaded"].values())
    entries = [MemoryEntry(f"m{i}", f"word{i % 7} shared text {i}") for i in range(60)]
    pure = BM25()
    pure.add(entries)
    assert [tuple(h) for h in out["hits"]] == [(h.entry_id, h.score) for h in pure.search("shared word3", 3)]


def test_the_compiler_imports_its_own_install_whatever_folder_it_starts_in(tmp_path):
    """The background compiler started in a folder holding another ``agentmemory`` (a source checkout beside an
    installed package) runs the install's ``_warm``, not the folder's: the working folder is off ``sys.path``."""
    decoy = tmp_path / "checkout" / "agentmemory" / "retrievers"
    decoy.mkdir(parents=True)
    (decoy.parent / "__init__.py").write_text("", encoding="utf-8")
    (decoy / "__init__.py").write_text("", encoding="utf-8")
    marker = tmp_path / "decoy-ran"
    (decoy / "_warm.py").write_text(
        f"def main(argv):\n    open({str(marker)!r}, 'w').close()\n    return 3\n", encoding="utf-8"
    )
    root = str(Path(_index.__file__).resolve().parents[2])
    lock = tmp_path / "x.lock"
    lock.write_bytes(b"")
    done = subprocess.run(
        [sys.executable, "-c", _index.WARM_COMMAND, root, "nothing-by-this-name", str(lock)],
        cwd=tmp_path / "checkout",
        capture_output=True,
        text=True,
    )
    assert (done.returncode, marker.exists(), lock.exists()) == (0, False, False), done.stderr
