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
tokenised with :func:`agentmemory.tokenize.tokenize`; scores are accumulated
in float64, terms in order of first occurrence in the query.  Ties follow
:mod:`agentmemory.retrievers.base`.

Only entries that contain a query term are scored (postings of the query's
terms); every other entry has score 0 and is never returned.  Adding entries
updates ``N``, ``n(t)`` and ``avgdl``, so scores after ``add`` equal those of
a fresh index over all entries.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import ParameterError
from ..records import Hit, MemoryEntry, Query
from ..tokenize import tokenize
from .base import DocTable, as_query, select_top_k

__all__ = ["BM25", "TermContribution"]


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


class BM25:
    """Lucene-variant BM25 over memory entries (formula in the module docstring)."""

    name: ClassVar[str] = "bm25"
    label: ClassVar[str] = "BM25"

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        if isinstance(k1, bool) or not isinstance(k1, (int, float)) or not k1 >= 0:
            raise ParameterError("k1", k1, "is not a number >= 0", "BM25 needs k1 >= 0 (default 1.2)")
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 1:
            raise ParameterError("b", b, "is not a number in [0, 1]", "BM25 needs 0 <= b <= 1 (default 0.75)")
        self.k1 = float(k1)
        self.b = float(b)
        self._docs = DocTable()
        self._vocab: dict[str, int] = {}
        self._post_docs: list[array] = []
        self._post_tfs: list[array] = []
        self._doc_len = array("i")
        self._total_len = 0
        self._doc_len_np: np.ndarray | None = None

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "variant": "lucene"}

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Index ``entries``; statistics are updated for every later search."""
        vocab, post_docs, post_tfs = self._vocab, self._post_docs, self._post_tfs
        for entry in entries:
            tokens = tokenize(entry.text)
            number = self._docs.append(entry.id)
            self._doc_len.append(len(tokens))
            self._total_len += len(tokens)
            for term, tf in Counter(tokens).items():
                term_id = vocab.get(term)
                if term_id is None:
                    term_id = vocab[term] = len(post_docs)
                    post_docs.append(array("i"))
                    post_tfs.append(array("i"))
                post_docs[term_id].append(number)
                post_tfs[term_id].append(tf)
        self._doc_len_np = None

    def _lengths(self) -> np.ndarray:
        if self._doc_len_np is None:
            self._doc_len_np = np.frombuffer(self._doc_len, dtype=np.int32).astype(np.float64)
        return self._doc_len_np

    def idf(self, term: str) -> float:
        """``ln(1 + (N - n + 0.5) / (n + 0.5))`` for ``term`` (n = 0 when unknown)."""
        n_docs = len(self._docs)
        term_id = self._vocab.get(term)
        df = 0 if term_id is None else len(self._post_docs[term_id])
        return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def _query_terms(self, text: str) -> list[tuple[int, int]]:
        counts = Counter(tokenize(text))  # insertion order = first occurrence
        return [(self._vocab[t], q) for t, q in counts.items() if t in self._vocab]

    def score_candidates(self, query: Query | str) -> tuple[np.ndarray, np.ndarray]:
        """Every entry sharing a term with ``query``: (document numbers, scores)."""
        terms = self._query_terms(as_query(query).text)
        n_docs = len(self._docs)
        if not terms or n_docs == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        lengths = self._lengths()
        avgdl = self._total_len / n_docs
        k1, b = self.k1, self.b
        all_docs, all_parts = [], []
        for term_id, qtf in terms:
            docs = np.frombuffer(self._post_docs[term_id], dtype=np.int32)
            tfs = np.frombuffer(self._post_tfs[term_id], dtype=np.int32).astype(np.float64)
            df = len(docs)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = k1 * (1.0 - b + b * lengths[docs] / avgdl) if avgdl > 0 else np.full(df, k1 * (1.0 - b))
            all_docs.append(docs)
            all_parts.append(qtf * idf * tfs * (k1 + 1.0) / (tfs + norm))
        docs = np.concatenate(all_docs)
        parts = np.concatenate(all_parts)
        unique, inverse = np.unique(docs, return_inverse=True)
        scores = np.bincount(inverse, weights=parts, minlength=len(unique))
        return unique.astype(np.int64), scores

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive score for ``query``: entry id -> score (unordered)."""
        docs, scores = self.score_candidates(query)
        ids = self._docs.ids
        return {ids[int(d)]: float(s) for d, s in zip(docs, scores) if s > 0}

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """Top ``k`` entries by BM25 score; ties by entry id descending; no zero scores."""
        docs, scores = self.score_candidates(query)
        return select_top_k(docs, scores, k, self._docs)

    def explain(self, query: Query | str, entry_id: str) -> list[TermContribution]:
        """Each distinct query term's contribution to ``entry_id``'s score.

        The contributions sum to the entry's score (terms the entry lacks
        contribute 0 and are listed too, so a reader sees what was missing).
        """
        number = self._docs.pos.get(entry_id)
        if number is None:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        n_docs = len(self._docs)
        dl = self._doc_len[number]
        avgdl = self._total_len / n_docs
        out = []
        for term, qtf in Counter(tokenize(as_query(query).text)).items():
            term_id = self._vocab.get(term)
            tf = 0
            df = 0
            if term_id is not None:
                docs = np.frombuffer(self._post_docs[term_id], dtype=np.int32)
                df = len(docs)
                where = np.flatnonzero(docs == number)
                if len(where):
                    tf = self._post_tfs[term_id][int(where[0])]
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * dl / avgdl) if avgdl > 0 else self.k1 * (1.0 - self.b)
            part = qtf * idf * tf * (self.k1 + 1.0) / (tf + norm) if tf else 0.0
            out.append(TermContribution(term, qtf, tf, df, idf, dl, avgdl, part))
        return out
