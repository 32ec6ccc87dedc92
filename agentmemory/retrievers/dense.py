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
one partition (``np.partition`` of the negated scores), then the few entries
at or above the k-th score are sorted by the rule.

**Embeddings are computed once.**  Each ``add`` encodes only its new
entries; a batch of at least :data:`MIN_CACHED_TEXTS` texts is read from,
or written to, the on-disk cache of :mod:`agentmemory.cache` (keyed by the
encoder, its model and parameters and the sha256 of the texts), so a second
evaluation of a collection encodes nothing (an encoder with ``cacheable =
False``, such as ``PrecomputedEncoder``, is never cached).  Query vectors
are not cached.

:meth:`Dense.search_batch` scores a block of queries with one matrix product
(float32 GEMM); its scores equal :meth:`Dense.search`'s to float32 rounding,
and equal embeddings still tie exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .. import cache
from ..errors import ParameterError, check_positive_int
from ..records import Hit, MemoryEntry, Query
from .base import DocTable, as_query
from .encoders import Encoder, check_encoder, load_encoder

__all__ = ["MIN_CACHED_TEXTS", "Dense", "normalize_rows"]

MIN_CACHED_TEXTS = 8
"""Adds of fewer texts are encoded without the disk cache (encoding them costs less than a file)."""

_BLOCK_SCORES = 1 << 24  # float32 scores computed at once by search_batch (64 MB)


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``v / ||v||`` per row, computed in float64 and rounded to float32; zero rows stay zero."""
    wide = np.asarray(vectors, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    safe = np.where(norms > 0, norms, 1.0)
    return np.ascontiguousarray(wide / safe[:, None], dtype=np.float32)


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
        if not np.isfinite(vectors).all():
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
        numbers = self._docs.check_new(ids)
        for text in texts:
            if not isinstance(text, str):
                raise ParameterError("entry.text", text, "is not a str", "every entry needs a text string")
        raw = self._encode(texts, cached=self._cacheable and len(texts) >= MIN_CACHED_TEXTS)
        # commit: nothing below can fail on bad input
        rows = np.empty(len(batch), dtype=np.int64)
        fresh: list[int] = []
        index = self._row_by_vector
        for i, vector in enumerate(raw):
            digest = hashlib.blake2b(vector.tobytes(), digest_size=16).digest()
            row = index.get(digest)
            if row is None:
                row = index[digest] = self._n_unique + len(fresh)
                fresh.append(i)
            rows[i] = row
        n0 = len(self._docs)
        self._docs.extend(ids, numbers)
        self._row_of = _grow(self._row_of, n0, rows)
        if fresh:
            self._unique = _grow(self._unique, self._n_unique, normalize_rows(raw[fresh]))
            self._n_unique += len(fresh)
        self._identity = self._identity and len(fresh) == len(batch) and self._n_unique == len(self._docs)

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
        if k < n:
            kth = -np.partition(-scores, k - 1)[k - 1]  # the k-th largest score
            candidates = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
        else:
            candidates = np.flatnonzero(scores > 0)
        ids = self._docs.ids
        ranked = sorted(zip(scores[candidates].tolist(), [ids[i] for i in candidates.tolist()]), reverse=True)
        return [Hit(entry_id=i, score=s, rank=r) for r, (s, i) in enumerate(ranked[:k], start=1)]

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """The top ``k`` entries by cosine (``> 0`` only), ties by entry id descending."""
        k = check_positive_int("k", k)
        if not len(self._docs):
            return []
        return self._top(self.scores(query), k)

    def search_batch(self, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        """:meth:`search` for many queries: one encode call, one float32 matrix product per block of queries."""
        k = check_positive_int("k", k)
        texts = [as_query(q).text for q in queries]
        if not texts or not len(self._docs):
            return [[] for _ in texts]
        vectors = self._query_vectors(texts)
        matrix = self._unique[: self._n_unique]
        step = max(1, _BLOCK_SCORES // max(1, self._n_unique))
        out: list[list[Hit]] = []
        for first in range(0, len(texts), step):
            block = vectors[first : first + step] @ matrix.T
            out.extend(self._top(self._entry_scores(row), k) for row in block)
        return out

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive cosine: entry id -> score (unordered)."""
        scores = self.scores(query)
        ids = self._docs.ids
        positive = np.flatnonzero(scores > 0)
        return dict(zip([ids[i] for i in positive.tolist()], scores[positive].tolist()))


def _grow(buffer: np.ndarray, used: int, new: np.ndarray) -> np.ndarray:
    """``buffer[:used]`` followed by ``new``, in ``buffer`` when it has room, else in a larger copy (amortised growth)."""
    need = used + len(new)
    if len(buffer) < need:
        grown = np.zeros((max(need, len(buffer) * 5 // 4 + 16),) + buffer.shape[1:], dtype=buffer.dtype)
        grown[:used] = buffer[:used]
        buffer = grown
    buffer[used:need] = new
    return buffer
