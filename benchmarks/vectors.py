"""The dense benchmark's vectors: random unit vectors, deterministic, nested by size.

* ``DIM`` (256) dimensions, wordllama's size.  A vector is a draw of ``DIM``
  standard normal float32 numbers divided by its norm (computed in float64,
  rounded to float32), so the directions are uniform on the sphere.
* The corpus of size ``n`` is the first ``n`` vectors of one stream
  (generated in chunks of ``CHUNK`` with NumPy's PCG64 seeded by the chunk
  number), so the 100k corpus is the first 100k vectors of the 1M one.
* ``QUERIES`` (1,000) query vectors come from their own stream.

Nothing is cached on disk: generating 1M vectors takes a few seconds, and
writing 1 GB would take longer.
"""

from __future__ import annotations

import numpy as np

DIM = 256
QUERIES = 1_000
SEED = 20260503
CHUNK = 100_000


def _unit(rng: np.random.Generator, n: int, out: np.ndarray) -> None:
    raw = rng.standard_normal((n, DIM), dtype=np.float32)
    wide = raw.astype(np.float64)
    out[:] = wide / np.sqrt(np.einsum("ij,ij->i", wide, wide))[:, None]


def corpus_vectors(n: int, extra_rows: int = 0) -> np.ndarray:
    """The first ``n`` corpus vectors, float32 ``(n + extra_rows, DIM)`` (the extra rows left for the caller)."""
    out = np.empty((n + extra_rows, DIM), dtype=np.float32)
    for chunk_no, start in enumerate(range(0, n, CHUNK)):
        rng = np.random.Generator(np.random.PCG64([SEED, 1, chunk_no]))
        stop = min(start + CHUNK, n)
        full = np.empty((CHUNK, DIM), dtype=np.float32)
        _unit(rng, CHUNK, full)  # a whole chunk every time, so a prefix does not depend on n
        out[start:stop] = full[: stop - start]
    return out


def query_vectors() -> np.ndarray:
    """The ``QUERIES`` query vectors, float32 ``(QUERIES, DIM)``."""
    out = np.empty((QUERIES, DIM), dtype=np.float32)
    _unit(np.random.Generator(np.random.PCG64([SEED, 2])), QUERIES, out)
    return out
