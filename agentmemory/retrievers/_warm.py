"""The background compiler: ``main([SET, LOCK])`` in a process of its own fills numba's cache, then exits.

Started by :func:`agentmemory.retrievers._index.compile_in_background`
(never imported by the package), with ``AGENTMEMORY_ACCEL=on``.  It builds
and searches a small index of the kernel set's retriever, so numba compiles
the very signatures a real index calls (array types, read-only buffers and
all) and writes them to its cache; every later process loads them from
there instead of compiling.  It runs at low priority, and removes ``LOCK``
(made by its parent) when it ends, whatever happens.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from agentmemory.records import MemoryEntry, Query
from agentmemory.retrievers._index import KERNEL_SETS, numba_cache_folder
from agentmemory.retrievers.bm25 import BM25
from agentmemory.retrievers.dense import Dense
from agentmemory.retrievers.encoders import PrecomputedEncoder
from agentmemory.retrievers.tags import TagScorer

__all__ = ["EXERCISES", "main", "mark_fresh"]

_N = 3_000  # entries: a merge of segments (the impacts kernel), and nothing that takes long in compiled code


def _texts(n: int) -> list[str]:
    """``n`` ASCII texts of 6-13 words from a vocabulary of 500 (the compiled tokeniser's input)."""
    return [" ".join(f"w{(i * 7 + j * 13) % 500}" for j in range(6 + i % 8)) for i in range(n)]


def _bm25() -> None:
    """BM25: tokenise and build two segments that merge (impacts), then search one query and a batch; once with
    term frequencies that fit uint8 (nearly every index) and once with one that needs uint16 (each its own
    compiled signature, see ``_index.KERNEL_TFS``)."""
    texts = _texts(_N)
    for repeated in (0, 300):
        if repeated:
            texts[1] = " ".join(["w1"] * repeated)
        index = BM25()
        index.add(MemoryEntry(f"e{i}", t) for i, t in enumerate(texts[: 2 * _N // 3]))
        index.add(MemoryEntry(f"e{i}", t) for i, t in enumerate(texts[2 * _N // 3 :], 2 * _N // 3))
        index.search(texts[0], 10)
        index.search_many(texts[:3], 10)


def _tags() -> None:
    """The tag scorer: build, then search by given tags."""
    index = TagScorer()
    index.add(MemoryEntry(f"e{i}", "text", tags=(f"t{i % 50}", f"t{i % 7}")) for i in range(_N))
    index.search(Query("q", "t1 t3", tags=("t1", "t3")), 10)


def _dense() -> None:
    """Dense, precomputed unit vectors: one query (``dense_top``) and a batch (``dense_block_select``)."""
    texts = [f"e{i}" for i in range(_N)]
    vectors = np.random.default_rng(0).standard_normal((_N, 8)).astype(np.float32)
    index = Dense(encoder=PrecomputedEncoder(texts, vectors))
    index.add(MemoryEntry(t, t) for t in texts)
    index.search(texts[0], 10)
    index.search_batch(texts[:3], 10)


EXERCISES = {"bm25": _bm25, "tags": _tags, "dense": _dense, "dense-batch": _dense}
"""What compiles each kernel set of :data:`agentmemory.retrievers._index.KERNEL_SETS`."""


def mark_fresh(kernels: tuple[str, ...]) -> int:
    """Touch the index files of ``kernels`` in numba's cache once they have served (compiled or loaded): how many.

    ``kernels_cached`` trusts an index file as new as ``_accel.py``.  numba
    itself checks its own stamp of the source (size and modification time)
    and may find a cache valid whose files are older than the source file
    (a reinstall that rewrote ``_accel.py`` as it was): it then loads them
    and writes nothing, and every later process would start this compiler
    again.  An exercise that just ran the kernels from these files shows
    they are this source's.
    """
    folder = numba_cache_folder()
    touched = 0
    for kernel in kernels:
        for index in folder.glob(f"_accel.{kernel}-*.py{sys.version_info.major}{sys.version_info.minor}.nbi"):
            try:
                os.utime(index)
                touched += 1
            except OSError:  # gone, or not ours to touch: the next process compiles again, as before
                pass
    return touched


def main(argv: list[str]) -> int:
    """Compile the kernel set ``argv[0]`` (a :data:`EXERCISES` name), then remove the lock file ``argv[1]``."""
    name, lock = argv
    try:
        if hasattr(os, "nice"):
            os.nice(10)  # the user's own work comes first
        if name in KERNEL_SETS:
            EXERCISES[name]()
            mark_fresh(KERNEL_SETS[name])
    finally:
        Path(lock).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
