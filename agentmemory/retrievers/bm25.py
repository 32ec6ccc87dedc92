"""BM25, Lucene variant, with exact scores and incremental adds.

For a query with distinct terms ``t`` (each occurring ``qtf(t)`` times in the
tokenised query) and an entry ``d``::

    score(q, d) = sum over t of  qtf(t) * idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + K(d))
    idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    K(d)        = k1 * (1 - b + b * dl(d) / avgdl)

``N`` is the number of indexed entries, ``n(t)`` the number of entries that
contain ``t``, ``tf(t, d)`` how often ``t`` occurs in ``d``, ``dl(d)`` the
number of tokens of ``d`` and ``avgdl`` the mean of ``dl`` over all ``N``
entries.  Defaults ``k1 = 1.2``, ``b = 0.75`` (Lucene's).  The IDF is never
negative (the Lucene / tantivy form, not Okapi's).  The TF part keeps the
constant ``(k1 + 1)`` factor (as rank_bm25 and tantivy do; bm25s and Lucene
drop it, which scales scores but never changes a ranking).  Entries are
tokenised with :func:`agentmemory.tokenize.tokenize`.

Exactly how it is computed, in IEEE double precision: ``avgdl = total / N``
(``total`` the sum of ``dl``), ``idf`` with :func:`math.log`, a term's part
``((qtf * idf) * tf) * (k1 + 1) / (tf + K(d))`` evaluated left to right with
``K(d) = k1 * ((1 - b) + (b * dl(d)) / avgdl)``, and the parts summed
starting from 0.0 in order of the terms' first occurrence in the query.
Every code path (NumPy, and the optional compiled kernels) performs these
same operations in this order, so scores are reproducible bit for bit, and
ties (equal scores) are decided by :mod:`agentmemory.retrievers.base`'s rule.

Only entries that contain a query term are scored (postings of the query's
terms); every other entry has score 0 and is never returned.  Adding entries
updates ``N``, ``n(t)`` and ``avgdl``, so scores after ``add`` equal those of
a fresh index over all entries.  The postings live in segments
(:mod:`agentmemory.retrievers._index`): an ``add`` indexes the new entries
only and merges small segments, so its cost grows with the entries added,
not with the index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentmemory.collection.columns import TextList, TextSource
from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query, _trusted_hits
from agentmemory.retrievers._analysis import encode_chunks, query_tokens
from agentmemory.retrievers._index import (
    EMPTY_F64,
    EMPTY_I64,
    Segment,
    SegmentList,
    accelerator,
    build_segment,
    concat,
    dedupe,
    merge_all,
    release_freed,
)
from agentmemory.retrievers._vocab import Vocabulary
from agentmemory.retrievers.base import DocTable, as_query, rank_candidates, scores_by_id
from agentmemory.tokenize import tokenize

__all__ = ["BM25", "BM25Explanation", "TermContribution"]

_BATCH_CELLS = 1 << 19
"""search_many scores a group of queries at once in a float64 accumulator of (queries x entries) cells: at most
this many (4 MB, which stays in cache), so a group is 524 queries at 1,000 entries and 52 at 10,000."""
_BATCH_MIN = 8
"""Fewer queries than this per group (indexes of more than 65,536 entries): each query is searched on its own,
which costs less there (a query's postings are long enough that slicing them beats gathering them; measured at
100,000 entries: 155-160 us a query either way, against 31-46 us batched instead of 66 us at 10,000)."""
_BATCH_MAX = 2048  # queries per group (a query's number must fit in the 11 bits search_many's sort key gives it)


@dataclass(frozen=True, slots=True)
class TermContribution:
    """One query term's part of an entry's BM25 score (see :meth:`BM25.explain`)."""

    term: str
    qtf: int
    tf: int
    df: int
    idf: float
    dl: int
    avgdl: float
    contribution: float


def _quoted(terms: Iterable[str]) -> str:
    return ", ".join(f"'{t}'" for t in terms)


class BM25Explanation(tuple):
    """:meth:`BM25.explain`'s answer: a tuple of :class:`TermContribution`, one per distinct query term.

    The contributions sum (in query order) to the entry's score; terms the
    entry lacks are listed with contribution 0.  ``matched`` and ``missing``
    and the two ``*_reason`` sentences are what reports show (the optional
    ``explain`` capability of :mod:`agentmemory.retrievers.base`).
    """

    __slots__ = ()

    @property
    def matched(self) -> tuple[str, ...]:
        """The query words the entry contains, in query order."""
        return tuple(p.term for p in self if p.tf)

    @property
    def missing(self) -> tuple[str, ...]:
        """The query words the entry lacks, in query order."""
        return tuple(p.term for p in self if not p.tf)

    @property
    def score(self) -> float:
        """The entry's score: the contributions summed in query order from 0.0."""
        total = 0.0
        for p in self:
            total += p.contribution
        return total

    def miss_reason(self) -> str:
        """Why a relevant entry scored too low: the query words it has (with their contributions) and lacks."""
        if not self.matched:
            return f"it contains none of the query words ({_quoted(self.missing)}), so its BM25 score is 0"
        gives = ", ".join(f"'{p.term}' {p.contribution:.2f}" for p in self if p.tf)
        return f"it contains only {_quoted(self.matched)} (contributions {gives}) and lacks {_quoted(self.missing) or 'none'}"

    def hit_reason(self) -> str:
        """Why a hit was retrieved: the query words it matches, with their contributions."""
        return "it matches " + ", ".join(f"'{p.term}' ({p.contribution:.2f})" for p in self if p.tf)


class BM25:
    """Lucene-variant BM25 over memory entries (formula in the module docstring)."""

    name = "bm25"
    label = "BM25"

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        if isinstance(k1, bool) or not isinstance(k1, (int, float)) or not k1 >= 0:
            raise ParameterError("k1", k1, "is not a number >= 0", "BM25 needs k1 >= 0 (default 1.2)")
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 1:
            raise ParameterError("b", b, "is not a number in [0, 1]", "BM25 needs 0 <= b <= 1 (default 0.75)")
        self.k1 = float(k1)
        self.b = float(b)
        self._docs = DocTable()
        self._vocab = Vocabulary()  # term numbers: the words themselves live once per process (_vocab.TERMS)
        self._df = np.zeros(0, dtype=np.int32)  # entries containing each term (int32: an index holds < 2**31 entries)
        self._dl_buf = np.zeros(0, dtype=np.int32)  # token count per entry (capacity grows)
        self._total_len = 0
        self._segs = SegmentList()
        self._norm: np.ndarray | None = None  # K(d) for the current N and avgdl (pure path)
        self._touched: np.ndarray | None = None  # int32 scratch of the compiled path
        self._acc32: np.ndarray | None = None  # float32 scratch of the compiled path, all zero between searches
        self._accel = None  # the compiled kernels, when this index uses them (decided in add)

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "variant": "lucene"}

    @staticmethod
    def index_params() -> tuple[str, ...]:
        """None: ``k1`` and ``b`` weigh the postings at search time, the index is the same for all (capability)."""
        return ()

    def with_params(self, params: Mapping[str, Any]) -> BM25:
        """A BM25 with other ``k1`` and ``b`` (``params``; defaults for those not given) over this one's index.

        Nothing is tokenised again: the postings are shared (they are never
        changed in place), the vocabulary, document lengths and frequencies
        copied; only what depends on ``k1`` and ``b`` (the lengths' norms, the
        compiled path's impacts and bounds) is computed anew, on first search.
        Its scores are those of ``BM25(**params)`` given the same entries, bit
        for bit; later adds to either do not reach the other.
        """
        other = BM25(**params)
        other._docs = self._docs.copy()
        other._vocab = self._vocab.copy()
        other._df = self._df.copy()
        other._dl_buf = self._dl_buf.copy()
        other._total_len = self._total_len
        other._segs.segments = [Segment(s.base, s.n, s.terms, s.ptr, s.docs, s.tfs) for s in self._segs.segments]
        other._accel = self._accel
        return other

    def __len__(self) -> int:
        return len(self._docs)

    def memory_bytes(self) -> int:
        """Bytes of the index's arrays: postings, document lengths, document frequencies (ids and vocabulary excluded)."""
        return self._segs.nbytes + int(self._dl_buf.nbytes) + int(self._df.nbytes)

    @property
    def _dl(self) -> np.ndarray:
        return self._dl_buf[: len(self._docs)]

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Index ``entries``; statistics are updated for every later search."""
        batch = list(entries)
        if not batch:
            return
        texts = [e.text for e in batch]
        for text in texts:
            if not isinstance(text, str):
                raise ParameterError("entry.text", text, "is not a str", "every entry needs a text string")
        self.add_texts([e.id for e in batch], TextList(texts))

    def add_texts(self, ids: Sequence[str], texts: TextSource) -> None:
        """Index text ``i`` of ``texts`` under ``ids[i]``: :meth:`add` of those entries, bit for bit.

        The texts are tokenised chunk by chunk straight from the UTF-8 bytes
        ``texts`` holds (:class:`~agentmemory.collection.columns.TextSource`),
        so no Python string per text is made for them (only for a text that
        is not ASCII).
        """
        if len(texts) != len(ids):
            raise ParameterError(
                "len(texts)", len(texts), f"differs from len(ids) = {len(ids)}", "pass one text per id"
            )
        if not len(ids):
            return
        ids = list(ids)
        self._docs.check_new(ids)
        n0 = len(self._docs)
        n_new = len(ids)
        accel = self._accel = accelerator(n0 + n_new)
        # a segment per chunk, then one merge: the tokens of one chunk at a time, never of all texts
        parts: list[Segment] = []
        len_parts: list[np.ndarray] = []
        done = 0
        for tokens, lengths in encode_chunks(texts, self._vocab.numbers, accel):
            parts.append(build_segment(n0 + done, tokens, lengths, accel))
            len_parts.append(lengths)
            done += len(lengths)
            del tokens
        if done != n_new:
            raise ParameterError(
                "texts.chunks()",
                done,
                f"texts came for len(texts) = {n_new}",
                "chunks hold each text of the source once",
            )
        lengths = concat(len_parts, EMPTY_I64)
        total = self._total_len + int(lengths.sum())
        merged = len(parts) > 1
        segment = merge_all(parts)
        if merged:
            release_freed()  # the chunk segments, before the impacts are allocated
        # commit: nothing below can fail on bad input
        self._docs.extend(ids, checked=True)
        n1 = n0 + n_new
        if len(self._dl_buf) < n1:
            grown = np.zeros(max(n1, len(self._dl_buf) * 5 // 4 + 16), dtype=np.int32)
            grown[:n0] = self._dl_buf[:n0]
            self._dl_buf = grown
        self._dl_buf[n0:n1] = lengths
        self._total_len = total
        if len(self._df) < len(self._vocab):
            grown_df = np.zeros(max(len(self._vocab), len(self._df) * 5 // 4 + 16), dtype=np.int32)
            grown_df[: len(self._df)] = self._df
            self._df = grown_df
        self._df[segment.terms] += np.diff(segment.ptr)
        self._segs.append(segment)
        self._norm = None
        self._touched = None
        if accel is not None:
            self._bounds(accel)

    def _bounds(self, accel) -> None:
        """Give every segment its impacts and per-term bounds of ``tf * (k1 + 1) / (tf + K)`` (max-score pruning)."""
        avgdl = self._total_len / len(self._docs)
        for seg in self._segs.segments:
            if seg.bound is None:
                seg.bound, seg.impact = accel.impacts(seg, self._dl, avgdl, self.k1, self.b)
                seg.bound_avgdl = avgdl

    def idf(self, term: str) -> float:
        """``ln(1 + (N - n + 0.5) / (n + 0.5))`` for ``term`` (n = 0 when unknown)."""
        n_docs = len(self._docs)
        term_id = self._vocab.get(term)
        df = 0 if term_id is None else int(self._df[term_id])
        return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def _query_terms(self, text: str) -> list[tuple[int, int]]:
        """(term number, qtf) of the query's indexed terms, in order of first occurrence."""
        counts: dict[int, int] = {}
        for term_id in self._vocab.lookup(query_tokens(text)):
            if term_id >= 0:
                counts[term_id] = counts.get(term_id, 0) + 1
        return list(counts.items())

    def _weights(self, query: Query | str) -> tuple[list[int], list[float]]:
        """Term numbers and ``qtf * idf`` of the query's indexed terms, in query order."""
        terms = self._query_terms(as_query(query).text)
        n_docs = len(self._docs)
        df = self._df.item
        weights = []
        for term_id, qtf in terms:
            n = df(term_id)
            weights.append(qtf * math.log(1.0 + (n_docs - n + 0.5) / (n + 0.5)))
        return [t for t, _ in terms], weights

    def _norms(self) -> np.ndarray:
        """K(d) of every entry, for the current N and avgdl."""
        if self._norm is None:
            avgdl = self._total_len / len(self._docs)
            if avgdl > 0:
                self._norm = self.k1 * (1.0 - self.b + self.b * self._dl.astype(np.float64) / avgdl)
            else:
                self._norm = np.full(len(self._docs), self.k1 * (1.0 - self.b))
        return self._norm

    def _segment_scores(self, seg, terms: np.ndarray, weights: list[float], acc, mark) -> tuple[np.ndarray, np.ndarray]:
        """Exact scores of every entry of ``seg`` that has a query term (pure NumPy)."""
        k1p1 = self.k1 + 1.0
        norm = self._norms()[seg.base : seg.base + seg.n]
        slots = np.searchsorted(seg.terms, terms)
        n_terms = len(seg.terms)
        found = []
        for j, i in enumerate(slots.tolist()):
            if i >= n_terms or seg.terms[i] != terms[j]:
                continue
            a, z = int(seg.ptr[i]), int(seg.ptr[i + 1])
            docs = seg.docs[a:z]
            tfs = seg.tfs[a:z]
            acc[docs] += weights[j] * tfs * k1p1 / (tfs + norm[docs])
            found.append(docs)
        if not found:
            return EMPTY_I64, EMPTY_F64
        docs = found[0] if len(found) == 1 else dedupe(np.concatenate(found), mark)
        scores = acc[docs]
        acc[docs] = 0.0
        return np.add(docs, seg.base, dtype=np.int64), scores  # docs may be uint16 (see doc_type)

    def _all_scores(self, terms: list[int], weights: list[float]) -> tuple[np.ndarray, np.ndarray]:
        qt = np.asarray(terms, dtype=np.int32)
        with self._segs.lock:
            acc, mark = self._segs.scratch()
            parts = [self._segment_scores(seg, qt, weights, acc, mark) for seg in self._segs.segments]
        return concat([p[0] for p in parts], EMPTY_I64), concat([p[1] for p in parts], EMPTY_F64)

    def _top_candidates(self, terms: list[int], weights: list[float], k: int) -> tuple[np.ndarray, np.ndarray]:
        """A superset of the top ``k`` (every entry scoring at least the k-th best in its segment)."""
        n_docs = len(self._docs)
        accel = self._accel
        if accel is None:
            return self._all_scores(terms, weights)
        if self._touched is None:
            largest = max(s.n for s in self._segs.segments)
            self._touched = np.zeros(largest, dtype=np.int32)
            self._acc32 = np.zeros(largest, dtype=np.float32)
            self._bounds(accel)
        acc = self._acc32
        qt = np.asarray(terms, dtype=np.int64)
        w = np.asarray(weights, dtype=np.float64)
        avgdl = self._total_len / n_docs
        dl, k1, b, touched = self._dl, self.k1, self.b, self._touched
        # Pruning sums float32 impacts into a float32 accumulator: relative error at most
        # about (terms + 2) * 2**-24; eps covers it several times over.
        eps = 1e-6 + (len(terms) + 2) * 2.4e-7
        parts = []
        for seg in self._segs.segments:
            if not len(seg.terms):  # only empty texts: nothing to find (and no bounds to scale)
                continue
            # The TF part at avgdl lies within [min(1, r), max(1, r)] times its value at
            # bound_avgdl, r = avgdl / bound_avgdl.
            r = avgdl / seg.bound_avgdl
            lo_f, hi_f = min(1.0, r) * (1.0 - eps), max(1.0, r) * (1.0 + eps)
            parts.append(accel.bm25_top(seg, lo_f, hi_f, qt, w, dl, avgdl, k1, b, k, acc, touched))
        return concat([p[0] for p in parts], EMPTY_I64), concat([p[1] for p in parts], EMPTY_F64)

    def score_candidates(self, query: Query | str) -> tuple[np.ndarray, np.ndarray]:
        """Every entry sharing a term with ``query``: (document numbers ascending, scores)."""
        terms, weights = self._weights(query)
        if not terms or not len(self._docs):
            return EMPTY_I64.copy(), EMPTY_F64.copy()
        docs, scores = self._all_scores(terms, weights)
        order = np.argsort(docs, kind="stable")
        return docs[order].astype(np.int64), scores[order]

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive score for ``query``: entry id -> score (unordered)."""
        return scores_by_id(*self.score_candidates(query), self._docs)

    def score_at_least(self, query: Query | str, floor: float) -> dict[str, float]:
        """:meth:`score_all` restricted to scores >= ``floor``, without building the rest."""
        return scores_by_id(*self.score_candidates(query), self._docs, floor)

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """Top ``k`` entries by BM25 score; ties by entry id descending; no zero scores."""
        k = check_positive_int("k", k)
        return self._top(*self._weights(query), k)

    def search_many(self, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        """:meth:`search` of every query, in order: the same hits with the same scores, bit for bit.

        With the compiled kernels, and for indexes of more than 65,536
        entries, each query is searched on its own (see :data:`_BATCH_MIN`).
        Otherwise a group of
        queries is scored together: the postings of every (query, term) pair
        are gathered at once and each term's parts are added to a (query,
        entry) accumulator term position by term position, so every score is
        summed in the order :meth:`search` sums it; then one sort finds each
        query's k-th largest score (on the score's leading 52 bits: a
        superset of the top k, ties at the cut-off included) and the
        survivors are ranked by the rule.  The cost per query is the
        postings' arithmetic, without one NumPy call per term and query.
        """
        k = check_positive_int("k", k)
        if type(self).search is not BM25.search:  # a subclass with a search of its own: that search, query by query
            return [self.search(q, k) for q in queries]
        prepared = [self._weights(q) for q in queries]
        n_docs = len(self._docs)
        group = min(_BATCH_MAX, _BATCH_CELLS // max(n_docs, 1), len(prepared))
        if self._accel is not None or not n_docs or group < min(_BATCH_MIN, len(prepared)):
            return [self._top(terms, weights, k) for terms, weights in prepared]
        acc = np.zeros(group * n_docs, dtype=np.float64)  # all zero between groups (each resets what it reached)
        out: list[list[Hit]] = []
        for first in range(0, len(prepared), group):
            out.extend(self._group_top(prepared[first : first + group], k, acc))
        return out

    def _top(self, terms: list[int], weights: list[float], k: int) -> list[Hit]:
        if not terms:
            return []
        docs, scores = self._top_candidates(terms, weights, k)
        return rank_candidates(docs, scores, k, self._docs.ids)

    def _group_top(self, prepared: list[tuple[list[int], list[float]]], k: int, acc: np.ndarray) -> list[list[Hit]]:
        """The top ``k`` of a group of queries (term numbers and weights each), scored together (see search_many)."""
        n_docs = len(self._docs)
        pairs: list[tuple[int, int, float]] = []  # (query, term, weight) by term position, then query
        bounds = [0]
        for j in range(max(len(terms) for terms, _ in prepared)):
            pairs.extend((q, terms[j], weights[j]) for q, (terms, weights) in enumerate(prepared) if j < len(terms))
            bounds.append(len(pairs))
        if not pairs:
            return [[] for _ in prepared]
        query_of = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
        term_of = np.fromiter((p[1] for p in pairs), dtype=np.int32, count=len(pairs))
        weight_of = np.fromiter((p[2] for p in pairs), dtype=np.float64, count=len(pairs))
        norm, k1p1 = self._norms(), self.k1 + 1.0
        blocks = []  # per segment: (keys, parts, offsets of each term position's postings)
        for seg in self._segs.segments:
            if not len(seg.terms):
                continue
            slots = np.minimum(np.searchsorted(seg.terms, term_of), len(seg.terms) - 1)
            present = seg.terms[slots] == term_of
            start = np.where(present, seg.ptr[slots], 0)
            sizes = np.where(present, seg.ptr[slots + 1], 0) - start
            ends = np.cumsum(sizes)
            pair = np.repeat(np.arange(len(pairs)), sizes)
            where = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(start - (ends - sizes), sizes)
            docs = seg.docs[where] + np.int64(seg.base)
            tfs = seg.tfs[where]
            parts = weight_of[pair] * tfs * k1p1 / (tfs + norm[docs])  # search's expression, element by element
            offsets = np.concatenate(([0], ends))[bounds].tolist()
            blocks.append((query_of[pair] * n_docs + docs, parts, offsets))
        found = [EMPTY_I64]
        for j in range(len(bounds) - 1):  # term position by term position: each score summed in query order
            for keys, parts, offsets in blocks:
                a, z = offsets[j], offsets[j + 1]
                if a < z:
                    cells = keys[a:z]  # no cell twice: one term's postings hold each entry once
                    before = acc[cells]
                    found.append(cells[before == 0.0])  # parts are > 0: a zero cell is one not reached yet
                    acc[cells] = before + parts[a:z]
        cells = np.concatenate(found)
        scores = acc[cells]
        acc[cells] = 0.0
        return self._ranked_groups(cells // n_docs, cells % n_docs, scores, len(prepared), k)

    def _ranked_groups(
        self, query: np.ndarray, docs: np.ndarray, scores: np.ndarray, n_queries: int, k: int
    ) -> list[list[Hit]]:
        """Each query's top ``k`` of its candidates (``query``, ``docs``, ``scores``: one element per candidate)."""
        counts = np.bincount(query, minlength=n_queries)
        if len(scores) and counts.max() > k:
            # positive float64 numbers order as their bits do; the leading 52 bits (a rounding down, which keeps
            # the order) and the query above them give one integer key, sorted at once
            key = (query << 52) | (scores.view(np.int64) >> 11)
            ends = np.cumsum(counts)
            kth = np.full(n_queries, -1, dtype=np.int64)
            over = np.flatnonzero(counts > k)
            kth[over] = np.sort(key)[ends[over] - k]
            keep = key >= kth[query]
            query, docs, scores = query[keep], docs[keep], scores[keep]
        order = np.argsort(query, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(query, minlength=n_queries)))).tolist()
        ids = self._docs.ids
        names = [ids[d] for d in docs[order].tolist()]
        values = scores[order].tolist()
        return [
            _trusted_hits(sorted(zip(values[a:z], names[a:z]), reverse=True)[:k]) for a, z in zip(bounds, bounds[1:])
        ]

    def explain(self, query: Query | str, entry_id: str) -> BM25Explanation:
        """Each distinct query term's contribution to ``entry_id``'s score.

        The contributions sum to the entry's score (terms the entry lacks
        contribute 0 and are listed too, so a reader sees what was missing).
        """
        number = self._docs.pos.get(entry_id)
        if number is None:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        n_docs = len(self._docs)
        dl = int(self._dl[number])
        avgdl = self._total_len / n_docs
        counts: dict[str, int] = {}
        for term in tokenize(as_query(query).text):
            counts[term] = counts.get(term, 0) + 1
        out = []
        for term, qtf in counts.items():
            term_id = self._vocab.get(term)
            tf = df = 0
            if term_id is not None:
                df = int(self._df[term_id])
                tf = self._segs.tf(term_id, number)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * dl / avgdl) if avgdl > 0 else self.k1 * (1.0 - self.b)
            part = qtf * idf * tf * (self.k1 + 1.0) / (tf + norm) if tf else 0.0
            out.append(TermContribution(term, qtf, tf, df, idf, dl, avgdl, part))
        return BM25Explanation(out)
