"""The tag scorer: ranks entries by how many tags they share with the query.

Tags are compared in their normalised form
(:func:`agentmemory.tokenize.normalize_tag`: tokens joined by ``-``, so
``"Dietary Preferences"`` equals ``"dietary-preferences"``).  With ``T(x)``
the set of normalised tags of ``x``::

    score(q, d) = |T(q) ∩ T(d)|

an integer, so ties are common and the ranking rule's id order decides them
(see :mod:`agentmemory.retrievers.base`).

Query tags: a :class:`~agentmemory.records.Query` whose ``tags`` is not
``None`` uses them as given.  Otherwise they are derived from the query text
against the vocabulary of tags of the indexed entries: a tag belongs to
``T(q)`` when every one of its tokens occurs among the query text's tokens
(``"dietary-preferences"`` needs both ``dietary`` and ``preferences``).

Only entries holding one of the query's tags are looked at: each tag has a
posting list of entries (in segments, like BM25's, so ``add`` costs what
is added), and a search counts, per entry, the postings of the query's
tags (no scan of the whole store).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers._index import (
    EMPTY_F64,
    EMPTY_I64,
    TAG_KERNELS,
    SegmentList,
    accelerator,
    build_segment,
    concat,
    dedupe,
)
from agentmemory.retrievers.base import DocTable, as_query, rank_candidates, scores_by_id
from agentmemory.tokenize import normalize_tag, tokenize

__all__ = ["TagOverlap", "TagScorer"]


@dataclass(frozen=True, slots=True)
class TagOverlap:
    """Why an entry got its tag score (see :meth:`TagScorer.explain`)."""

    query_tags: tuple[str, ...]
    entry_tags: tuple[str, ...]
    shared: tuple[str, ...]
    derived: bool

    @property
    def score(self) -> int:
        return len(self.shared)

    @property
    def matched(self) -> tuple[str, ...]:
        """The query tags the entry has (the ``explain`` capability's common field)."""
        return self.shared

    @property
    def missing(self) -> tuple[str, ...]:
        """The query tags the entry lacks."""
        return tuple(t for t in self.query_tags if t not in self.shared)

    def _origin(self) -> str:
        return "derived from the query text" if self.derived else "given with the query"

    def miss_reason(self) -> str:
        """Why a relevant entry scored too low: the query tags it has and lacks, and its own tags."""
        entry_tags = _quoted(self.entry_tags) or "none"
        if not self.query_tags:
            return (
                "the query has no tags (none given, and no indexed tag is spelled out in its text), "
                "so the tag scorer scores every entry 0"
            )
        if not self.shared:
            return (
                f"it has none of the query tags ({_quoted(self.query_tags)}; {self._origin()}): its tags are "
                f"{entry_tags}, so its tag score is 0"
            )
        if not self.missing:
            return f"it has every query tag ({_quoted(self.query_tags)}; {self._origin()}); its tags are {entry_tags}"
        return (
            f"it has {_quoted(self.shared)} of the query tags ({_quoted(self.query_tags)}; {self._origin()}) "
            f"but lacks {_quoted(self.missing)}; its tags are {entry_tags}"
        )

    def hit_reason(self) -> str:
        """Why a hit was retrieved: the query tags it has."""
        return f"it has the query tags {_quoted(self.shared)}"


def _quoted(items: tuple[str, ...]) -> str:
    return ", ".join(f"'{t}'" for t in items)


class TagScorer:
    """Tag-overlap retriever (formula in the module docstring)."""

    name = "tags"
    label = "Tag scorer"

    def __init__(self) -> None:
        self._docs = DocTable()
        self._tag_ids: dict[str, int] = {}  # normalised tag -> term number
        self._entry_tags: list[tuple[str, ...]] = []
        self._tags_by_token: dict[str, set[str]] = {}
        self._normal: dict[str, str] = {}  # cache: raw tag -> normalised tag
        self._segs = SegmentList()
        self._touched: np.ndarray | None = None
        self._accel = None  # the compiled kernels, when this index uses them (decided in add)

    def params(self) -> dict[str, Any]:
        return {"score": "|T(q) & T(d)|", "query_tags": "given, else derived from text"}

    def __len__(self) -> int:
        return len(self._docs)

    def memory_bytes(self) -> int:
        """Bytes of the index's arrays: the tag postings (ids and the tag vocabulary excluded)."""
        return self._segs.nbytes

    def _normalize(self, tag: str) -> str:
        out = self._normal.get(tag)
        if out is None:
            out = normalize_tag(tag)
            if len(self._normal) < 1_000_000:
                self._normal[tag] = out
        return out

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        batch = list(entries)
        if not batch:
            return
        ids = [e.id for e in batch]
        self._docs.check_new(ids)
        norm = self._normalize
        entry_tags = [tuple(sorted({t for t in map(norm, e.tags) if t})) for e in batch]
        tag_ids = self._tag_ids
        flat: list[int] = []
        for tags in entry_tags:
            for tag in tags:
                number = tag_ids.get(tag)
                if number is None:
                    number = tag_ids[tag] = len(tag_ids)
                    for token in tag.split("-"):
                        self._tags_by_token.setdefault(token, set()).add(tag)
                flat.append(number)
        lengths = np.fromiter(map(len, entry_tags), dtype=np.int64, count=len(entry_tags))
        n0 = len(self._docs)
        accel = self._accel = accelerator(n0 + len(batch), TAG_KERNELS)
        segment = build_segment(n0, np.asarray(flat, dtype=np.int32), lengths, accel)
        self._docs.extend(ids, checked=True)
        self._entry_tags.extend(entry_tags)
        self._segs.append(segment)
        self._touched = None

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """Every normalised tag of the indexed entries, sorted."""
        return tuple(sorted(self._tag_ids))

    def query_tags(self, query: Query | str) -> tuple[tuple[str, ...], bool]:
        """``(T(q), derived)``: the query's normalised tags, sorted, and whether they were derived."""
        query = as_query(query)
        if query.tags is not None:
            return tuple(sorted({t for t in map(normalize_tag, query.tags) if t})), False
        tokens = set(tokenize(query.text))
        candidates = set().union(*(self._tags_by_token.get(t, set()) for t in tokens)) if tokens else set()
        return tuple(sorted(t for t in candidates if set(t.split("-")) <= tokens)), True

    def _terms(self, query: Query | str) -> list[int]:
        tags, _ = self.query_tags(query)
        tag_ids = self._tag_ids
        return [tag_ids[t] for t in tags if t in tag_ids]

    def _all_counts(self, terms: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every entry holding a query tag (global numbers) and how many of them it holds."""
        qt = np.asarray(terms, dtype=np.int32)
        out_docs, out_scores = [], []
        with self._segs.lock:
            acc, mark = self._segs.scratch()
            for seg in self._segs.segments:
                slots = np.searchsorted(seg.terms, qt)
                found = []
                for j, i in enumerate(slots.tolist()):
                    if i < len(seg.terms) and seg.terms[i] == qt[j]:
                        docs = seg.docs[int(seg.ptr[i]) : int(seg.ptr[i + 1])]
                        acc[docs] += 1.0
                        found.append(docs)
                if not found:
                    continue
                docs = found[0] if len(found) == 1 else dedupe(np.concatenate(found), mark)
                out_scores.append(acc[docs])
                acc[docs] = 0.0
                out_docs.append(np.add(docs, seg.base, dtype=np.int64))  # docs may be uint16
        return concat(out_docs, EMPTY_I64), concat(out_scores, EMPTY_F64)

    def score_candidates(self, query: Query | str) -> tuple[np.ndarray, np.ndarray]:
        """Every entry sharing a tag with ``query``: (document numbers ascending, scores)."""
        terms = self._terms(query)
        if not terms:
            return EMPTY_I64.copy(), EMPTY_F64.copy()
        docs, scores = self._all_counts(terms)
        order = np.argsort(docs, kind="stable")
        return docs[order].astype(np.int64), scores[order]

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive score for ``query``: entry id -> score (unordered)."""
        return scores_by_id(*self.score_candidates(query), self._docs)

    def score_at_least(self, query: Query | str, floor: float) -> dict[str, float]:
        """:meth:`score_all` restricted to scores >= ``floor``, without building the rest."""
        return scores_by_id(*self.score_candidates(query), self._docs, floor)

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """Top ``k`` entries by shared-tag count; ties by entry id descending; no zero scores."""
        k = check_positive_int("k", k)
        terms = self._terms(query)
        if not terms:
            return []
        accel = self._accel
        if accel is None:
            docs, scores = self._all_counts(terms)
        else:
            if self._touched is None:
                self._touched = np.zeros(max(s.n for s in self._segs.segments), dtype=np.int32)
            acc, _ = self._segs.scratch()
            qt = np.asarray(terms, dtype=np.int64)
            ones = np.ones(len(terms), dtype=np.float64)
            parts = [
                accel.segment_top(seg, qt, ones, EMPTY_I32_DL, 1.0, 0.0, 0.0, True, k, acc, self._touched)
                for seg in self._segs.segments
            ]
            docs = concat([p[0] for p in parts], EMPTY_I64)
            scores = concat([p[1] for p in parts], EMPTY_F64)
        return rank_candidates(docs, scores, k, self._docs.ids)

    def explain(self, query: Query | str, entry_id: str) -> TagOverlap:
        """The query's tags, the entry's tags and those they share."""
        number = self._docs.pos.get(entry_id)
        if number is None:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        tags, derived = self.query_tags(query)
        entry_tags = self._entry_tags[number]
        return TagOverlap(tags, entry_tags, tuple(t for t in tags if t in set(entry_tags)), derived)


EMPTY_I32_DL = np.zeros(1, dtype=np.int32)  # the plain (counting) kernel reads no lengths
