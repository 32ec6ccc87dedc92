"""A segmented inverted index: postings of term numbers, appended to, never rebuilt.

Documents are numbered densely in the order they were added.  Each
:class:`Segment` holds the postings of a contiguous range of documents
(``base .. base + n - 1``)::

    terms   int32, sorted: the term numbers occurring in the segment
    ptr     int64, len(terms) + 1: postings of terms[i] are [ptr[i], ptr[i + 1])
    docs    int32: local document numbers (global = base + local), ascending per term
    tfs     how often the term occurs in that document: the narrowest of uint8, uint16 and int32 that holds
            the segment's largest (:func:`narrow_tfs`; uint16 or int32 where the compiled kernels read it)

Adding documents builds a new segment from them alone; then, like a binary
counter, the last two segments are merged while the older is at most twice
the size of the newer.  So there are O(log N) segments, and each document is
copied O(log N) times over its life: adding 1% more documents to a large
index costs about 1% of building it.

Because every document lives in exactly one segment, a document's score can
be computed within its segment, and per-segment results simply concatenate.

The optional accelerator (:mod:`._accel`, numba) implements the same
operations in compiled code; :func:`accelerator` decides when to use it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

from agentmemory.files.reading import release_freed

__all__ = [
    "Segment",
    "SegmentList",
    "accelerator",
    "build_segment",
    "compile_in_background",
    "kernels_cached",
    "merge_all",
    "release_freed",
    "merge_segments",
    "narrow_tfs",
    "numba_cache_folder",
]

ACCEL_MIN_DOCS = 150_000
"""Below this many documents the accelerator is never used: importing numba and loading cached kernels
(~0.5 s) costs what they save.  Measured whole processes (1,000 queries, top 10, kernels cached): 100k
entries about even, 200k 0.3-0.5 s faster, 1M 16.9 s to 11.8 s."""

ACCEL_COMPILE_DOCS = 2_000_000
"""From this size on the accelerator is used even when its kernels must be compiled first (~9 s, once per
machine), because one build saves more than that (~5 s per million entries).  Between
:data:`ACCEL_MIN_DOCS` and this size it is used only when numba's cache already holds the kernels
(:func:`kernels_cached`), so no index ever waits for a compiler that does not repay itself within the same
build: the compiling happens in the background instead (:data:`ACCEL_WARM_DOCS`)."""

ACCEL_WARM_DOCS = 10_000
"""From this size on (and below :data:`ACCEL_COMPILE_DOCS`), an index whose kernels are not in numba's cache
starts compiling them in the background (:func:`compile_in_background`): another process, at low priority,
once per machine and kernel set, that nobody waits for.  An evaluation of this size is one whose user is
likely to go larger next; by then the kernels are cached and indexes of :data:`ACCEL_MIN_DOCS`+ entries use
them at once.  ``AGENTMEMORY_ACCEL_BACKGROUND=off`` turns this off."""

BM25_KERNELS = ("_tokenize_ascii", "_build_postings", "_impacts", "_bm25_top")
TAG_KERNELS = ("_build_postings", "_segment_top")
DENSE_KERNELS = ("_dense_top",)
DENSE_BATCH_KERNELS = ("_dense_block_select",)
"""The compiled functions a first build and search call from Python (what :func:`kernels_cached` looks for;
a kernel needed only later compiles on its first use)."""

KERNEL_SETS = {"bm25": BM25_KERNELS, "tags": TAG_KERNELS, "dense": DENSE_KERNELS, "dense-batch": DENSE_BATCH_KERNELS}
"""Each kernel set by the name :mod:`._warm` compiles it under (the background compiler's argument)."""

WARM_COMMAND = (
    "import sys; root = sys.argv.pop(1)\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"
    "if root not in sys.path: sys.path.insert(0, root)\n"
    "from agentmemory.retrievers._warm import main; sys.exit(main(sys.argv[1:]))"
)
"""The background compiler's program (``python -c``; arguments: this package's folder, the kernel set, the lock
file): :func:`agentmemory.retrievers._warm.main` from this very install, whatever ``sys.path`` the child starts
with, without putting ``site-packages`` ahead of the standard library (as ``PYTHONPATH`` would).  The working
folder (``-c``'s ``''``) is taken off ``sys.path`` first: run from a source checkout with the package installed
elsewhere, the child imported (and compiled the kernels of) the checkout, and the install's cache stayed empty
(Python 3.11's ``-P``, which 3.10 lacks)."""

_ON = ("on", "1", "yes", "true", "numba")
_OFF = ("off", "0", "no", "false", "none")
_STALE_LOCK_S = 900.0  # a background compile whose lock is older than this died (it takes ~10-30 s)
_started: set[tuple[str, ...]] = set()  # kernel sets this process has looked at for a background compile
_children: list = []  # the background compilers this process started (kept: a dropped Popen warns)

_EMPTY_I32 = np.empty(0, dtype=np.int32)
_EMPTY_I64 = np.empty(0, dtype=np.int64)
_EMPTY_F64 = np.empty(0, dtype=np.float64)


def numba_cache_folder() -> Path:
    """The folder where numba caches the kernels of ``_accel.py``, found as numba finds it, without importing numba.

    numba's locators in their order: ``$NUMBA_CACHE_DIR/<module folder's
    name>_<sha1 of its path>`` when that variable is set; else the
    ``__pycache__`` folder beside the module when it can be written (a
    virtual environment, a source checkout); else the same sub-folder of the
    user's cache folder (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``;
    ``~/Library/Caches/numba`` on macOS, ``%LOCALAPPDATA%\\numba\\Cache`` on
    Windows): an install into a read-only ``site-packages``.
    """
    source = Path(__file__).with_name("_accel.py")
    parent = os.path.dirname(os.path.abspath(source))
    digest = hashlib.sha1(parent.encode()).hexdigest()  # numba's folder name, not a security use
    sub = f"{os.path.basename(parent)}_{digest}"
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if cache_dir:  # numba's UserProvidedCacheLocator
        return Path(cache_dir) / sub
    in_tree = source.with_name("__pycache__")  # InTreeCacheLocator, when numba can write there
    if os.access(in_tree if in_tree.is_dir() else in_tree.parent, os.W_OK | os.X_OK):
        return in_tree
    if sys.platform == "win32":  # UserWideCacheLocator: numba's appdirs.user_cache_dir("numba", False)
        user = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "numba" / "Cache"
    elif sys.platform == "darwin":
        user = Path.home() / "Library" / "Caches" / "numba"
    else:
        user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return user / sub


def kernels_cached(kernels: tuple[str, ...]) -> bool:
    """Whether numba's on-disk cache holds every one of ``kernels``, compiled from this ``_accel.py``.

    A look at the file system, without importing numba: in
    :func:`numba_cache_folder`, each kernel's index file
    (``_accel.<name>-<line>.pyXY.nbi``) must exist and be at least as new as
    ``_accel.py``, and no background compile of a set sharing one of them
    may be under way there (its lock file: numba writes a kernel's index
    before its code).
    """
    source = Path(__file__).with_name("_accel.py")
    try:
        stamp = source.stat().st_mtime
        folder = numba_cache_folder()
        tag = f"py{sys.version_info.major}{sys.version_info.minor}"
        fresh = {p.name.split("-", 1)[0] for p in folder.glob(f"_accel.*.{tag}.nbi") if p.stat().st_mtime >= stamp}
        busy = {p.name[17:-5] for p in folder.glob("_accel.compiling-*.lock") if _lock_held(p)}  # the set names
        if any(set(KERNEL_SETS.get(name, ())) & set(kernels) for name in busy):
            return False
    except OSError:
        return False
    return all(f"_accel.{name}" in fresh for name in kernels)


def _lock_held(lock: Path) -> bool:
    """Whether ``lock`` marks a background compile still under way (younger than ``_STALE_LOCK_S``)."""
    try:
        return time.time() - lock.stat().st_mtime < _STALE_LOCK_S
    except OSError:  # gone meanwhile
        return False


def compile_in_background(kernels: tuple[str, ...]) -> bool:
    """Start compiling ``kernels`` into numba's cache in another process; whether one was started.

    The process (:data:`WARM_COMMAND`: :mod:`agentmemory.retrievers._warm`) builds
    and searches a small index with the kernels forced, so numba compiles
    and caches exactly the signatures a real index uses, then exits.  It
    runs detached (no standard streams shared: a caller reading this
    process's output is never kept waiting), at low priority, and at most
    one per kernel set and machine: a lock file in
    :func:`numba_cache_folder` (``_accel.compiling-<set>.lock``, removed when
    it ends; ignored after 15 minutes).  Nothing is started for a kernel set
    :data:`KERNEL_SETS` does not name, with ``AGENTMEMORY_ACCEL_BACKGROUND``
    off, or where the folder cannot be written.
    """
    name = next((n for n, ks in KERNEL_SETS.items() if ks == kernels), None)
    if name is None or os.environ.get("AGENTMEMORY_ACCEL_BACKGROUND", "on").strip().lower() in _OFF:
        return False
    if not sys.executable or importlib.util.find_spec("numba") is None:
        return False
    lock = numba_cache_folder() / f"_accel.compiling-{name}.lock"
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        if lock.exists() and not _lock_held(lock):
            lock.unlink(missing_ok=True)  # a compile that died: try again
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:  # held by another process, or nowhere to write: numba could not cache either
        return False
    import subprocess  # only here: a command that never starts a compile does not pay its import

    root = str(Path(__file__).resolve().parents[2])  # the folder holding this agentmemory package
    env = {**os.environ, "AGENTMEMORY_ACCEL": "on"}
    # Windows: CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP; elsewhere a session of its own
    detach = {"creationflags": 0x08000000 | 0x00000200} if sys.platform == "win32" else {"start_new_session": True}
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", WARM_COMMAND, root, name, str(lock)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
            **detach,
        )
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    _children.append(child)
    return True


def accelerator(n_docs: int, kernels: tuple[str, ...] = BM25_KERNELS):
    """The numba kernels module when it should be used for an index of ``n_docs``, else None.

    ``AGENTMEMORY_ACCEL=off`` disables it, ``=on`` uses it at any size (for
    tests, or to compile the kernels ahead of time); the default ``auto``
    uses it from :data:`ACCEL_COMPILE_DOCS` documents on, and from
    :data:`ACCEL_MIN_DOCS` on when the ``kernels`` the caller needs are
    already compiled in numba's cache (:func:`kernels_cached`).  When they
    are not, an index of :data:`ACCEL_WARM_DOCS` to :data:`ACCEL_COMPILE_DOCS`
    documents starts compiling them in the background, once per process
    (:func:`compile_in_background`), and takes the NumPy path meanwhile.
    Without numba (a broken install) every index takes the NumPy path,
    which gives the same results.
    """
    mode = os.environ.get("AGENTMEMORY_ACCEL", "auto").strip().lower()
    if mode in _OFF:
        return None
    if mode not in _ON and n_docs < ACCEL_COMPILE_DOCS:
        if n_docs < ACCEL_WARM_DOCS:
            return None
        if n_docs < ACCEL_MIN_DOCS:  # too small to use them: only see that they get compiled, once
            if kernels not in _started:
                _started.add(kernels)
                if not kernels_cached(kernels):
                    compile_in_background(kernels)
            return None
        if not kernels_cached(kernels):
            if kernels not in _started:
                _started.add(kernels)
                compile_in_background(kernels)
            return None
    try:
        from agentmemory.retrievers import _accel
    except ImportError:  # numba missing or broken: the pure path is exact too
        return None
    return _accel if _accel.AVAILABLE else None


class Segment:
    """Postings of documents ``base .. base + n - 1`` (see the module docstring)."""

    __slots__ = ("base", "n", "terms", "ptr", "docs", "tfs", "bound", "impact", "bound_avgdl")

    def __init__(self, base: int, n: int, terms: np.ndarray, ptr: np.ndarray, docs: np.ndarray, tfs: np.ndarray):
        self.base = base
        self.n = n
        self.terms = terms
        self.ptr = ptr
        self.docs = docs
        self.tfs = tfs
        # BM25's max-score pruning data, computed for one average length
        # (bound_avgdl): per posting an approximate weight (float32), per term
        # slot the largest exact weight.  None until the retriever asks.
        self.bound: np.ndarray | None = None
        self.impact: np.ndarray | None = None
        self.bound_avgdl = 0.0

    def slot(self, term: int) -> int:
        """Index of ``term`` in :attr:`terms`, or -1."""
        i = int(np.searchsorted(self.terms, term))
        return i if i < len(self.terms) and self.terms[i] == term else -1

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """(local docs, tfs) of ``term`` (empty when absent)."""
        i = self.slot(term)
        if i < 0:
            return _EMPTY_I32, _EMPTY_I32
        a, b = int(self.ptr[i]), int(self.ptr[i + 1])
        return self.docs[a:b], self.tfs[a:b]

    @property
    def nbytes(self) -> int:
        extra = sum(a.nbytes for a in (self.bound, self.impact) if a is not None)
        return self.terms.nbytes + self.ptr.nbytes + self.docs.nbytes + self.tfs.nbytes + extra


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values in the non-empty ``values`` starts (a bool mask, not an int64 ``diff``)."""
    new = np.empty(len(values), dtype=bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return np.flatnonzero(new)


def build_segment(base: int, ids: np.ndarray, lengths: np.ndarray, accel=None, bm25=None) -> Segment:
    """The segment of documents whose tokens are ``ids`` (term numbers, document after document).

    ``lengths[i]`` is document ``i``'s token count.  Pure path: one sort of
    ``term << shift | doc`` keys (``shift`` the bits of the largest document
    number), then run-length encoding.  With ``accel`` and
    ``bm25 = (avgdl, k1, b)``, the BM25 impacts are computed on the way.
    """
    n = len(lengths)
    if accel is not None and len(ids):
        terms, ptr, docs, tfs, bound, impact = accel.build_postings(ids, lengths, bm25)
        # a chunk's segment keeps uint16 documents until the merge: the chunks of a batch then hold 4 bytes a
        # posting, not 6 (at 1M entries, 80 MB less beside the merged index while it is filled)
        seg = Segment(base, n, terms, ptr, docs.astype(doc_type(n), copy=False), narrow_tfs(tfs, KERNEL_TFS))
        if bm25 is not None:
            seg.bound, seg.impact, seg.bound_avgdl = bound, impact, bm25[0]
        return seg
    if len(ids) == 0:
        return Segment(base, n, _EMPTY_I32, np.zeros(1, np.int64), _EMPTY_I32, _EMPTY_I32)
    # key = term << shift | doc (the document's number in the low bits), sorted in place; each step frees what
    # the next no longer needs (peak memory)
    shift = max(int(n - 1).bit_length(), 1)
    key = ids.astype(np.int64)
    key <<= shift
    key |= np.repeat(np.arange(n, dtype=np.int32 if n < 2**31 else np.int64), lengths)
    key.sort()
    first = _run_starts(key)  # the first token of each (term, doc) pair
    tfs = np.empty(len(first), dtype=np.int32)
    np.subtract(first[1:], first[:-1], out=tfs[:-1], casting="unsafe")
    tfs[-1] = len(key) - first[-1]
    key = key[first]
    del first
    terms = np.flatnonzero(np.bincount(ids, minlength=int(ids.max()) + 1)).astype(np.int32)  # present, ascending
    tfirst = np.searchsorted(key, terms.astype(np.int64) << shift)  # each term's first pair (no array of N terms)
    key &= (1 << shift) - 1
    docs = key.astype(doc_type(n))
    del key
    ptr = np.append(tfirst, len(docs)).astype(np.int64)
    return Segment(base, n, terms, ptr, docs, narrow_tfs(tfs))


def doc_type(n: int) -> np.dtype:
    """The type of a segment's document numbers (local, ``0 .. n - 1``): uint16 for up to 65,536 documents (an
    index per scope: half the bytes of its largest array), else int32.  The compiled kernels widen a uint16
    segment to int32 once, when they first meet it (``_accel``)."""
    return np.dtype(np.uint16) if n <= 1 << 16 else np.dtype(np.int32)


TFS = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int32))
"""The types a segment's term frequencies may have, narrowest first."""
KERNEL_TFS = TFS
"""Those the compiled kernels are given: all of :data:`TFS`, each its own compiled signature.  The background
compiler (:mod:`._warm`) compiles uint8 (every term at most 255 times in an entry: nearly every index) and
uint16; int32 (a term more than 65,535 times in one entry) compiles when first met.  uint8 rather than widening
to uint16 saves a byte a posting: 40 MB of a 1M-entry index, where the kernels are used."""


def narrow_tfs(tfs: np.ndarray, types: tuple[np.dtype, ...] = TFS) -> np.ndarray:
    """``tfs`` (term frequencies, >= 1) in the first of ``types`` that holds its largest value: exact, smaller."""
    top = int(tfs.max()) if len(tfs) else 0
    for dtype in types:
        if top <= np.iinfo(dtype).max:
            return tfs if tfs.dtype == dtype else tfs.astype(dtype)
    return tfs.astype(np.int32)  # pragma: no cover - types always ends with int32


def union_terms(parts: list[np.ndarray]) -> np.ndarray:
    """The term numbers of any of ``parts`` (each ascending, >= 0), ascending, as int32.

    A mark per term number instead of a sort: linear, and ``np.unique`` (``np.union1d``) would import
    ``numpy.ma`` on first use, 7 ms of a small process's whole run."""
    present = np.zeros(max((int(p[-1]) + 1 for p in parts if len(p)), default=0), dtype=bool)
    for part in parts:
        present[part] = True
    return np.flatnonzero(present).astype(np.int32)


def merge_segments(a: Segment, b: Segment) -> Segment:
    """One segment holding ``a``'s documents then ``b``'s (``b.base == a.base + a.n``)."""
    terms = union_terms([a.terms, b.terms])
    ca = np.zeros(len(terms), dtype=np.int64)
    cb = np.zeros(len(terms), dtype=np.int64)
    ia = np.searchsorted(terms, a.terms)
    ib = np.searchsorted(terms, b.terms)
    ca[ia] = np.diff(a.ptr)
    cb[ib] = np.diff(b.ptr)
    ptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(ca + cb, out=ptr[1:])
    total = int(ptr[-1])
    docs = np.empty(total, dtype=doc_type(a.n + b.n))
    tfs = np.empty(total, dtype=np.result_type(a.tfs, b.tfs))
    for seg, idx, shift, extra in ((a, ia, 0, None), (b, ib, a.n, ca)):
        counts = np.diff(seg.ptr)
        dest_start = ptr[idx] if extra is None else ptr[idx] + extra[idx]
        # destination of posting p of term slot j: dest_start[j] + (p - seg.ptr[j])
        pos = np.repeat(dest_start - seg.ptr[:-1], counts)
        pos += np.arange(len(seg.docs), dtype=np.int64)
        docs[pos] = seg.docs if shift == 0 else seg.docs + np.int32(shift)
        tfs[pos] = seg.tfs
    return Segment(a.base, a.n + b.n, terms, ptr, docs, tfs)


def merge_all(segs: list[Segment]) -> Segment:
    """One segment holding the documents of ``segs`` (consecutive, in order), which is emptied as they are copied.

    Each term's postings are those of the segments in order: one allocation
    of the result, and each segment's postings scattered into it, then let go.
    """
    if len(segs) == 1:
        return segs.pop()
    base, n = segs[0].base, sum(s.n for s in segs)
    terms = union_terms([s.terms for s in segs])
    counts = np.zeros(len(terms), dtype=np.int64)
    slots = []
    for seg in segs:
        idx = np.searchsorted(terms, seg.terms)
        counts[idx] += np.diff(seg.ptr)
        slots.append(idx)
    ptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    del counts
    fill = ptr[:-1].copy()  # where each term's next postings go
    docs = np.empty(int(ptr[-1]), dtype=doc_type(n))
    tfs = np.empty(int(ptr[-1]), dtype=np.result_type(*(s.tfs for s in segs)))
    segs.reverse()
    for idx in slots:
        seg = segs.pop()
        sizes = np.diff(seg.ptr)
        pos = np.repeat(fill[idx] - seg.ptr[:-1], sizes)
        pos += np.arange(len(seg.docs), dtype=np.int64)
        docs[pos] = seg.docs + np.int32(seg.base - base) if seg.base > base else seg.docs
        tfs[pos] = seg.tfs
        fill[idx] += sizes
        del seg, pos
    return Segment(base, n, terms, ptr, docs, tfs)


class SegmentList:
    """The segments of one index, in document order, with the merge policy."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.lock = threading.Lock()  # guards shared scratch arrays of the pure path
        self._acc: np.ndarray | None = None  # float64 scratch, all zero between searches
        self._mark: np.ndarray | None = None  # int64 scratch for de-duplication

    @property
    def n_docs(self) -> int:
        last = self.segments[-1] if self.segments else None
        return 0 if last is None else last.base + last.n

    def append(self, seg: Segment) -> None:
        segs = self.segments
        segs.append(seg)
        while len(segs) >= 2 and segs[-2].n <= 2 * segs[-1].n:
            b = segs.pop()
            a = segs.pop()
            segs.append(merge_segments(a, b))
        self._acc = None
        self._mark = None

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_docs
        acc, mark = self._acc, self._mark
        if acc is None or mark is None or len(acc) < n:
            acc = self._acc = np.zeros(n, dtype=np.float64)
            mark = self._mark = np.zeros(n, dtype=np.int64)
        return acc, mark

    def tf(self, term: int, doc: int) -> int:
        """How often ``term`` occurs in document ``doc`` (0 when it does not)."""
        for seg in self.segments:
            if seg.base <= doc < seg.base + seg.n:
                docs, tfs = seg.postings(term)
                i = int(np.searchsorted(docs, doc - seg.base))
                return int(tfs[i]) if i < len(docs) and docs[i] == doc - seg.base else 0
        return 0

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)


def dedupe(docs: np.ndarray, mark: np.ndarray) -> np.ndarray:
    """``docs`` without repeats (the last occurrence of each is kept), in O(len) with ``mark`` scratch."""
    m = len(docs)
    where = np.arange(m, dtype=np.int64)
    mark[docs] = where
    return docs[mark[docs] == where]


def concat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
    if not parts:
        return empty
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


__all__ += ["concat", "dedupe"]
EMPTY_I64 = _EMPTY_I64
EMPTY_F64 = _EMPTY_F64
