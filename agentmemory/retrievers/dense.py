"""Dense retrieval: exact cosine similarity between text embeddings.

For a query ``q`` and an entry ``d`` (its ``text``, the text BM25 indexes)::

    score(q, d) = cos(e(q), e(d)) = u(q) . u(d),    u(x) = e(x) / ||e(x)||  (the zero vector stays zero)

``e`` is the encoder's vector (:mod:`agentmemory.retrievers.encoders`;
default ``wordllama``; or vectors computed elsewhere, looked up by text:
``Dense(encoder=PrecomputedEncoder(texts, vectors))``).  Exactly how: ``u``
is computed in float64 from the encoder's float32 output and rounded to
float32; the scores of one query are one float32 matrix-vector product of
the entries' ``u`` (a C-contiguous float32 matrix) with the query's ``u``.
Entries whose vectors are equal get one row of that matrix, so **equal
embeddings give bit-identical scores** (and the ranking rule's id order
decides between them).

**Ranking** (:mod:`agentmemory.retrievers.base`): score descending, then
entry id descending; only scores ``> 0`` are returned.  So entries with a
**negative or zero cosine are never returned** (they point away from the
query, or are orthogonal to it), and neither is an entry with empty text or
a query with empty text: a zero vector has cosine 0 with everything.  A
search may therefore return fewer than ``k`` hits.  The search is exhaustive
(no approximate index): every entry is scored and the top ``k`` is found with
one partition (``np.partition``, for the k-th largest score), then the few
entries at or above the k-th score are sorted by the rule.

**Compiled selection**: for indexes where
:func:`~agentmemory.retrievers._index.accelerator` says so (as for BM25:
from 2,000,000 entries, or 150,000 once the kernels are in numba's cache, which an index of
10,000+ entries fills in the background;
``AGENTMEMORY_ACCEL=off|on|auto``), the entries at or above the k-th score are found by one compiled
pass over the scores instead (:mod:`._accel`: a min-heap of the ``k``
largest scores so far per query, whose root is the threshold); the scores
themselves are the same BLAS products, and the kernels only compare and copy
float32 numbers, so both paths return the same hits, scores equal to the
bit.  Up to ``k`` = 4,096 (a heap per query); beyond that, NumPy.

**Embeddings are computed once.**  Each ``add`` encodes only its new
entries; a batch of at least :data:`MIN_CACHED_TEXTS` texts is read from,
or written to, the on-disk cache of :mod:`agentmemory.files.cache` (keyed by the
encoder, its model and parameters and the sha256 of the texts), so a second
evaluation of a collection encodes nothing (an encoder with ``cacheable =
False``, such as ``PrecomputedEncoder``, is never cached).  Query vectors
are not cached.

:meth:`Dense.search_batch` answers many queries at once with float32 matrix
products (GEMM): a block of up to 1,024 queries times a block of 1 MB of
entry vectors (1,024 rows at 256 dimensions), the entry blocks in order.
Each query keeps a bound, never above its final k-th largest score: the
k-th largest score of the first entry block, raised to the k-th largest of
the candidates kept so far whenever they exceed four times ``k`` per query,
and never below the smallest positive float32.  In each block, one pass
(``argmax`` per query) finds the queries with a score at or above their
bound, and only their scores are compared with it; what reaches the bound
is kept.  So every entry scoring at least the final k-th score is kept, and
the kept candidates are ranked by the rule as in :meth:`Dense.search`.  The
compiled selection computes the same blocks (query blocks outermost) and
replaces the bounds by each query's heap, compared with every score of the
block in one pass (:meth:`Dense._candidates_compiled`).  Its
scores equal :meth:`Dense.search`'s to float32 rounding (a GEMM block sums
in another order than the one matrix-vector product); equal embeddings still
tie exactly (they share one row).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.files import cache as cache
from agentmemory.records import Hit, MemoryEntry, Query, _trusted_hits
from agentmemory.retrievers._index import DENSE_BATCH_KERNELS, DENSE_KERNELS, accelerator
from agentmemory.retrievers.base import DocTable, as_query
from agentmemory.retrievers.encoders import Encoder, all_finite, check_encoder, load_encoder

__all__ = ["MIN_CACHED_TEXTS", "Dense", "normalize_rows"]

MIN_CACHED_TEXTS = 8
"""Adds of fewer texts are encoded without the disk cache (encoding them costs less than a file)."""

_NORMALIZE_ROWS = 1 << 12  # rows normalised at once (a float64 buffer of 8 MB at 256 dimensions)
_QUERY_BLOCK = 1024  # queries per matrix product in search_batch
_ROW_BLOCK_BYTES = 1 << 20  # entry vectors per matrix product in search_batch: 1 MB (1,024 rows of 256 float32)
_POOL_PER_QUERY = 4  # search_batch refreshes its thresholds when it keeps more than this many candidates per k
_SMALLEST = np.nextafter(np.float32(0), np.float32(1))  # for float32 s: s >= _SMALLEST exactly when s > 0
_COMPILED_MAX_K = 4096  # the compiled selection keeps a heap of k scores per query: up to this k
_POOL_ROWS = 16  # the compiled search_batch's candidate pool starts with room for this many x k per query


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``v / ||v||`` per row, computed in float64 and rounded to float32; zero rows stay zero.

    Rows are done in blocks through one float64 buffer (a row's result
    depends on that row alone), so the temporaries stay small whatever the
    number of rows.
    """
    vectors = np.asarray(vectors)
    out = np.empty(vectors.shape, dtype=np.float32)
    wide = np.empty((min(_NORMALIZE_ROWS, len(vectors)),) + vectors.shape[1:], dtype=np.float64)
    for first in range(0, len(vectors), _NORMALIZE_ROWS):
        block = vectors[first : first + _NORMALIZE_ROWS]
        part = wide[: len(block)]
        part[...] = block
        norms = np.sqrt(np.einsum("ij,ij->i", part, part))
        np.divide(part, np.where(norms > 0, norms, 1.0)[:, None], out=part)
        out[first : first + len(block)] = part
    return out


def _label(encoder: str, model: str | None) -> str:
    return f"Dense ({encoder})" if model is None else f"Dense ({encoder}: {model})"


class Dense:
    """Exact cosine similarity over the entries' text embeddings (formula and ranking in the module docstring).

    Args:
        encoder: a registered encoder name (:data:`~agentmemory.retrievers.encoders.ENCODERS`), default
            ``wordllama``; or an encoder object, used as it is (e.g.
            :class:`~agentmemory.retrievers.encoders.PrecomputedEncoder` for vectors computed elsewhere).
        model: the encoder's model, a name or a local folder (default: the encoder's own); not with an object.

    Raises:
        ParameterError: an unknown encoder, an extra that is not installed,
            a model that does not exist or does not load, an object that is
            not an encoder, or a model given with an object.
    """

    name = "dense"
    label = "Dense (wordllama)"

    @staticmethod
    def spec_label(params: dict[str, Any]) -> str:
        """The label of ``dense[...]`` with ``params`` (those differing from the defaults)."""
        return _label(str(params.get("encoder", "wordllama")), params.get("model"))

    def __init__(self, encoder: str | Encoder = "wordllama", model: str | None = None) -> None:
        if isinstance(encoder, str):
            self.encoder: Encoder = load_encoder(encoder, model)
            self._encoder_name = encoder
        else:
            if model is not None:
                raise ParameterError(
                    "model", model, "is given with an encoder object", "an encoder object brings its model: drop model"
                )
            self.encoder = check_encoder(encoder, encoder)
            self._encoder_name = self.encoder.name
        self.label = _label(self._encoder_name, model)
        self._cacheable = getattr(self.encoder, "cacheable", True) is not False
        self._docs = DocTable()
        dim = self.encoder.dim
        self._unique = np.zeros((0, dim), dtype=np.float32)  # distinct unit vectors; rows [:_n_unique] are used
        self._n_unique = 0
        self._row_of = np.zeros(0, dtype=np.int64)  # entry number -> row of _unique; [:len(_docs)] are used
        self._row_by_vector: dict[bytes, int] = {}  # digest of an encoder vector -> its row
        self._identity = True  # every entry has its own row, in entry order (no gather needed)
        self._by_row: tuple[np.ndarray, np.ndarray] | None = None  # (starts, entries): each row's entries, when shared

    def params(self) -> dict[str, Any]:
        return {
            "encoder": self._encoder_name,
            "dim": self.encoder.dim,
            "similarity": "cosine",
            "encoder_params": self.encoder.params(),
        }

    def __len__(self) -> int:
        return len(self._docs)

    def memory_bytes(self) -> int:
        """Bytes of the index's arrays: the distinct unit vectors and the entry -> row map (ids excluded)."""
        return int(self._unique[: self._n_unique].nbytes) + int(self._row_of[: len(self._docs)].nbytes)

    # -- indexing -------------------------------------------------------------------
    def _encode(self, texts: list[str], *, cached: bool) -> np.ndarray:
        """The encoder's vectors for ``texts`` (float32, checked), through the disk cache when ``cached``."""
        dim = self.encoder.dim
        fields: dict[str, Any] | None = None
        if cached:
            fields = {"params": self.encoder.params(), "texts_sha256": cache.texts_sha256(texts), "n": len(texts)}
            found = cache.load_embeddings(self.encoder.name, fields, len(texts), dim)
            if found is not None:
                return found
        vectors = np.asarray(self.encoder.encode(texts))
        if vectors.shape != (len(texts), dim) or not np.issubdtype(vectors.dtype, np.floating):
            raise ParameterError(
                "encoder",
                self.encoder.name,
                f"returned an array of {vectors.dtype} {vectors.shape} for {len(texts)} texts",
                f"an encoder returns a float array of shape (texts, {dim})",
            )
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not all_finite(vectors):
            raise ParameterError(
                "encoder", self.encoder.name, "returned non-finite numbers", "fix the encoder or its model"
            )
        if fields is not None:
            cache.save_embeddings(self.encoder.name, fields, vectors)
        return vectors

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Embed and index ``entries`` (only these are encoded; see the module docstring for the cache)."""
        batch = list(entries)
        if not batch:
            return
        ids = [e.id for e in batch]
        texts = [e.text for e in batch]
        self._docs.check_new(ids)
        for text in texts:
            if not isinstance(text, str):
                raise ParameterError("entry.text", text, "is not a str", "every entry needs a text string")
        raw = self._encode(texts, cached=self._cacheable and len(texts) >= MIN_CACHED_TEXTS)
        # commit: nothing below can fail on bad input
        found: list[int] = []
        fresh: list[int] = []
        index, blake2b = self._row_by_vector, hashlib.blake2b
        for i, vector in enumerate(raw):  # rows of a C-contiguous array: blake2b reads their bytes in place
            digest = blake2b(vector, digest_size=16).digest()
            row = index.get(digest)
            if row is None:
                row = index[digest] = self._n_unique + len(fresh)
                fresh.append(i)
            found.append(row)
        rows = np.asarray(found, dtype=np.int64)
        n0 = len(self._docs)
        self._docs.extend(ids, checked=True)
        self._row_of = _grow(self._row_of, n0, rows)
        if fresh:
            unit = normalize_rows(raw if len(fresh) == len(raw) else raw[fresh])
            self._unique = _grow(self._unique, self._n_unique, unit)
            self._n_unique += len(fresh)
        self._identity = self._identity and len(fresh) == len(batch) and self._n_unique == len(self._docs)
        self._by_row = None

    # -- scoring --------------------------------------------------------------------
    def _query_vectors(self, texts: list[str]) -> np.ndarray:
        return normalize_rows(self._encode(texts, cached=False))

    def _entry_scores(self, unique_scores: np.ndarray) -> np.ndarray:
        """Scores of the distinct vectors spread to the entries (a view when every entry has its own vector)."""
        if self._identity:
            return unique_scores
        return unique_scores[self._row_of[: len(self._docs)]]

    def scores(self, query: Query | str) -> np.ndarray:
        """The cosine of ``query`` with every entry, float32, in the order added (negatives included)."""
        if not len(self._docs):
            return np.zeros(0, dtype=np.float32)
        q = self._query_vectors([as_query(query).text])[0]
        return self._entry_scores(self._unique[: self._n_unique] @ q)

    def _top(self, scores: np.ndarray, k: int) -> list[Hit]:
        """The ranking rule over one query's scores: top ``k`` of those ``> 0``, ties by id descending."""
        n = len(scores)
        accel = accelerator(n, DENSE_KERNELS) if k < n and k <= _COMPILED_MAX_K else None
        if accel is not None:  # one compiled pass: the same candidates, in the same order
            candidates = accel.dense_top(np.ascontiguousarray(scores), k)
        elif k < n:
            candidates = _at_least_kth(scores, k)
        else:
            candidates = np.flatnonzero(scores > 0)
        return self._ranked(candidates.tolist(), scores[candidates].tolist(), k)

    def _ranked(self, entries: list[int], scores: list[float], k: int) -> list[Hit]:
        """The top ``k`` of candidate ``entries`` (numbers) with their ``scores`` by (score, id), both descending."""
        ids = self._docs.ids
        ranked = sorted(zip(scores, [ids[i] for i in entries]), reverse=True)
        return _trusted_hits(ranked[:k])  # ids checked by add, scores Python floats

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """The top ``k`` entries by cosine (``> 0`` only), ties by entry id descending."""
        k = check_positive_int("k", k)
        if not len(self._docs):
            return []
        return self._top(self.scores(query), k)

    def search_batch(self, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        """:meth:`search` for many queries: one encode call, blocked matrix products, per-query bounds (module docstring)."""
        k = check_positive_int("k", k)
        texts = [as_query(q).text for q in queries]
        if not texts or not len(self._docs):
            return [[] for _ in texts]
        vectors = self._query_vectors(texts)
        accel = (
            accelerator(len(self._docs), DENSE_BATCH_KERNELS) if k < self._n_unique and k <= _COMPILED_MAX_K else None
        )
        if accel is not None:
            starts, rows, scores = self._candidates_compiled(vectors, k, accel)
        else:
            starts, rows, scores = self._candidates(vectors, k)
        if not self._identity:
            starts, rows, scores = self._spread(starts, rows, scores)
        entries, values, bounds = rows.tolist(), scores.tolist(), starts.tolist()
        return [self._ranked(entries[a:b], values[a:b], k) for a, b in zip(bounds[:-1], bounds[1:])]

    def _candidates(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each query's rows of the vector matrix that can be in its top ``k`` (the bounds of the module docstring).

        Returns ``(starts, rows, scores)``: query ``i``'s candidates are
        ``rows[starts[i]:starts[i + 1]]``, with their ``scores``, by score
        descending.  They are every row scoring ``> 0`` and at least the
        query's bound, which never exceeds its final k-th largest entry
        score (a row stands for one entry or several, so the k-th largest of
        some rows' scores is at most it).
        """
        matrix = self._unique[: self._n_unique]
        n_queries, dim = vectors.shape
        width = max(1, _ROW_BLOCK_BYTES // (4 * dim))
        bound = np.full(n_queries, _SMALLEST, dtype=np.float32)
        queries = [np.zeros(0, dtype=np.int64)]
        rows = [np.zeros(0, dtype=np.int64)]
        scores = [np.zeros(0, dtype=np.float32)]
        kept, limit = 0, _POOL_PER_QUERY * k * n_queries
        tile = min(_QUERY_BLOCK, n_queries) * min(width, len(matrix))
        score_buf, mask_buf = np.empty(tile, dtype=np.float32), np.empty(tile, dtype=bool)
        every = np.arange(min(_QUERY_BLOCK, n_queries))
        for first in range(0, len(matrix), width):
            block = matrix[first : first + width]
            w = len(block)
            for q0 in range(0, n_queries, _QUERY_BLOCK):
                part = vectors[q0 : q0 + _QUERY_BLOCK]
                b = len(part)
                block_scores = np.matmul(part, block.T, out=score_buf[: b * w].reshape(b, w))
                at_least = bound[q0 : q0 + b]
                if first == 0 and w >= k:  # the k-th largest score of the first block: a first bound
                    np.maximum(at_least, np.partition(block_scores, w - k, axis=1)[:, w - k], out=at_least)
                best = block_scores.argmax(axis=1)  # one pass finds the rows (queries) with a score to keep
                hit = np.flatnonzero(block_scores[every[:b], best] >= at_least)
                if not len(hit):
                    continue
                if 2 * len(hit) >= b:  # many: compare the whole block (rows without a hit add nothing)
                    mask = np.greater_equal(block_scores, at_least[:, None], out=mask_buf[: b * w].reshape(b, w))
                    q, column = np.divmod(np.flatnonzero(mask), w)
                else:  # few: compare their rows only
                    q, column = np.divmod(np.flatnonzero(block_scores[hit] >= at_least[hit, None]), w)
                    q = hit[q]
                queries.append(q + q0)
                rows.append(column + first)
                scores.append(block_scores[q, column])
                kept += len(q)
            if kept > limit:
                queries, rows, scores = _refresh(queries, rows, scores, bound, k)
                kept = len(scores[0])
                limit = max(limit, 2 * kept)
        queries, rows, scores = _refresh(queries, rows, scores, bound, k)
        starts = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(queries[0], minlength=n_queries), out=starts[1:])
        return starts, rows[0], scores[0]

    def _candidates_compiled(
        self, vectors: np.ndarray, k: int, accel: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_candidates` with the compiled selection: the same matrix products, another way to keep candidates.

        The tiles (a block of queries times a block of entry vectors) are
        those of :meth:`_candidates`, so the scores are the same float32
        numbers; query blocks come first here.  Each query keeps a heap of
        the ``k`` largest scores seen (its root, never above the final k-th
        largest row score, is the query's threshold); one compiled pass over
        each tile compares every score with its query's threshold and keeps
        those at or above it in a pool, which is cut down to the scores at
        or above the current thresholds whenever it fills.  The result is
        every row scoring ``> 0`` and at least its query's final k-th
        largest row score, as :meth:`_candidates` describes.
        """
        matrix = self._unique[: self._n_unique]
        n_queries, dim = vectors.shape
        width = min(max(1, _ROW_BLOCK_BYTES // (4 * dim)), len(matrix))
        n_block = min(_QUERY_BLOCK, n_queries)
        score_buf = np.empty(n_block * width, dtype=np.float32)
        heaps = np.empty((n_block, k), dtype=np.float32)
        pool = _Pool(max(4 * width, _POOL_ROWS * k * n_block))
        queries, rows, scores = [], [], []
        for q0 in range(0, n_queries, _QUERY_BLOCK):
            part = vectors[q0 : q0 + _QUERY_BLOCK]
            b = len(part)
            heaps[:b] = _SMALLEST
            for first in range(0, len(matrix), width):
                block = matrix[first : first + width]
                w = len(block)
                block_scores = np.matmul(part, block.T, out=score_buf[: b * w].reshape(b, w))
                done = 0
                while True:
                    done, pool.used = accel.dense_block_select(
                        block_scores, q0, first, heaps, pool.q, pool.r, pool.s, pool.used, done
                    )
                    if done == b:
                        break
                    pool.cut(heaps, q0, room=w)
            q, r, s = pool.cut(heaps, q0, room=0)
            queries.append(q.copy())
            rows.append(r.copy())
            scores.append(s.copy())
            pool.used = 0
        q, r, s = np.concatenate(queries), np.concatenate(rows), np.concatenate(scores)
        order = np.argsort((q << 32) - s.view(np.int32))  # query ascending, then score descending (see _refresh)
        starts = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(q, minlength=n_queries), out=starts[1:])
        return starts, r[order], s[order]

    def _spread(
        self, starts: np.ndarray, rows: np.ndarray, scores: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_candidates`'s rows turned into the entries that have them (rows shared by equal vectors)."""
        if self._by_row is None:
            row_of = self._row_of[: len(self._docs)]
            first = np.zeros(self._n_unique + 1, dtype=np.int64)
            np.cumsum(np.bincount(row_of, minlength=self._n_unique), out=first[1:])
            self._by_row = (first, np.argsort(row_of, kind="stable"))
        first, entries = self._by_row
        counts = first[rows + 1] - first[rows]
        ends = np.cumsum(counts)
        at = np.repeat(first[rows] - (ends - counts), counts) + np.arange(int(ends[-1]) if len(ends) else 0)
        new_starts = np.concatenate(([0], ends))[starts]
        return new_starts, entries[at], np.repeat(scores, counts)

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive cosine: entry id -> score (unordered)."""
        scores = self.scores(query)
        ids = self._docs.ids
        positive = np.flatnonzero(scores > 0)
        return dict(zip([ids[i] for i in positive.tolist()], scores[positive].tolist()))


_BLOCK = 1024  # scores per block of _at_least_kth's first pass


def _at_least_kth(scores: np.ndarray, k: int) -> np.ndarray:
    """The positions of the scores ``> 0`` and at least the ``k``-th largest (``k < len(scores)``), ascending.

    The k-th largest of the blocks' maxima bounds the k-th largest score from below (k blocks hold a score at
    least that high), so one pass of block maxima and one comparison leave a few candidates, among which the
    k-th largest is found; the result is that of one partition of every score, at a third of its cost.
    """
    n = len(scores)
    width = max(_BLOCK, n // (8 * k))
    whole = n // width * width
    if whole // width < 8 * k:  # too few blocks to bound anything
        kth = np.partition(scores, n - k)[n - k]
        return np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
    maxima = scores[:whole].reshape(-1, width).max(axis=1)
    bound = np.partition(maxima, len(maxima) - k)[len(maxima) - k]
    if not bound > 0:
        return np.flatnonzero(scores > 0)
    candidates = np.flatnonzero(scores >= bound)
    found = scores[candidates]
    kth = np.partition(found, len(found) - k)[len(found) - k]
    return candidates[found >= kth]


def _refresh(
    queries: list[np.ndarray], rows: list[np.ndarray], scores: list[np.ndarray], bound: np.ndarray, k: int
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """The kept candidates in one piece, by (query, score descending), with the bounds raised.

    A query with ``k`` or more kept candidates gets its bound raised to the
    k-th largest of their scores; candidates below their query's bound are
    dropped (``bound`` is updated in place).
    """
    q, r, s = np.concatenate(queries), np.concatenate(rows), np.concatenate(scores)
    # one integer key: query ascending, then score descending (the bits of positive float32 numbers, read as
    # int32, are in the numbers' order, and below 2**31)
    order = np.argsort((q << 32) - s.view(np.int32))
    q, r, s = q[order], r[order], s[order]
    counts = np.bincount(q, minlength=len(bound))
    first = np.zeros(len(bound), dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    full = np.flatnonzero(counts >= k)
    bound[full] = np.maximum(bound[full], s[first[full] + k - 1])
    keep = s >= bound[q]
    return [q[keep]], [r[keep]], [s[keep]]


class _Pool:
    """The candidates of :meth:`Dense._candidates_compiled`: (query, row, score) triples, ``used`` of them."""

    def __init__(self, size: int) -> None:
        self.q = np.empty(size, dtype=np.int64)
        self.r = np.empty(size, dtype=np.int64)
        self.s = np.empty(size, dtype=np.float32)
        self.used = 0

    def cut(self, heaps: np.ndarray, q0: int, room: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keep the candidates at or above their query's threshold (heap root); then make room for ``room`` more.

        Returns views of what is kept.  The pool doubles when what is kept
        leaves less than half of it for ``room``.
        """
        n = self.used
        q, r, s = self.q[:n], self.r[:n], self.s[:n]
        keep = s >= heaps[q - q0, 0]
        q, r, s = q[keep], r[keep], s[keep]
        m = len(s)
        if 2 * (m + room) > len(self.s):
            size = 2 * (m + room)
            self.q, self.r, self.s = (np.empty(size, dtype=a.dtype) for a in (self.q, self.r, self.s))
        self.q[:m], self.r[:m], self.s[:m] = q, r, s
        self.used = m
        return self.q[:m], self.r[:m], self.s[:m]


def _grow(buffer: np.ndarray, used: int, new: np.ndarray) -> np.ndarray:
    """``buffer[:used]`` followed by ``new``, in ``buffer`` when it has room, else in a larger copy (amortised growth).

    An empty ``buffer`` too small for ``new`` is replaced by ``new`` itself
    (no copy: callers pass arrays nobody else holds).
    """
    need = used + len(new)
    if used == 0 and len(buffer) < need and new.dtype == buffer.dtype and new.flags.c_contiguous:
        return new
    if len(buffer) < need:
        grown = np.zeros((max(need, len(buffer) * 5 // 4 + 16),) + buffer.shape[1:], dtype=buffer.dtype)
        grown[:used] = buffer[:used]
        buffer = grown
    buffer[used:need] = new
    return buffer
