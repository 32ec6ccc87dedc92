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
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import ParameterError
from ..records import Hit, MemoryEntry, Query
from ..tokenize import normalize_tag, tokenize
from .base import DocTable, as_query, select_top_k

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


class TagScorer:
    """Tag-overlap retriever (formula in the module docstring)."""

    name: ClassVar[str] = "tags"
    label: ClassVar[str] = "Tag scorer"

    def __init__(self) -> None:
        self._docs = DocTable()
        self._postings: dict[str, array] = {}
        self._entry_tags: list[tuple[str, ...]] = []
        self._tags_by_token: dict[str, set[str]] = {}

    def params(self) -> dict[str, Any]:
        return {"score": "|T(q) & T(d)|", "query_tags": "given, else derived from text"}

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        for entry in entries:
            number = self._docs.append(entry.id)
            tags = tuple(sorted({t for t in map(normalize_tag, entry.tags) if t}))
            self._entry_tags.append(tags)
            for tag in tags:
                posting = self._postings.get(tag)
                if posting is None:
                    posting = self._postings[tag] = array("i")
                    for token in tag.split("-"):
                        self._tags_by_token.setdefault(token, set()).add(tag)
                posting.append(number)

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """Every normalised tag of the indexed entries, sorted."""
        return tuple(sorted(self._postings))

    def query_tags(self, query: Query | str) -> tuple[tuple[str, ...], bool]:
        """``(T(q), derived)``: the query's normalised tags, sorted, and whether they were derived."""
        query = as_query(query)
        if query.tags is not None:
            return tuple(sorted({t for t in map(normalize_tag, query.tags) if t})), False
        tokens = set(tokenize(query.text))
        candidates = set().union(*(self._tags_by_token.get(t, set()) for t in tokens)) if tokens else set()
        return tuple(sorted(t for t in candidates if set(t.split("-")) <= tokens)), True

    def score_candidates(self, query: Query | str) -> tuple[np.ndarray, np.ndarray]:
        """Every entry sharing a tag with ``query``: (document numbers, scores)."""
        tags, _ = self.query_tags(query)
        postings = [np.frombuffer(self._postings[t], dtype=np.int32) for t in tags if t in self._postings]
        if not postings:
            return np.empty(0, np.int64), np.empty(0, np.float64)
        docs, counts = np.unique(np.concatenate(postings), return_counts=True)
        return docs.astype(np.int64), counts.astype(np.float64)

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every entry with a positive score for ``query``: entry id -> score (unordered)."""
        docs, scores = self.score_candidates(query)
        ids = self._docs.ids
        return {ids[int(d)]: float(s) for d, s in zip(docs, scores) if s > 0}

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """Top ``k`` entries by shared-tag count; ties by entry id descending; no zero scores."""
        docs, scores = self.score_candidates(query)
        return select_top_k(docs, scores, k, self._docs)

    def explain(self, query: Query | str, entry_id: str) -> TagOverlap:
        """The query's tags, the entry's tags and those they share."""
        number = self._docs.pos.get(entry_id)
        if number is None:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        tags, derived = self.query_tags(query)
        entry_tags = self._entry_tags[number]
        return TagOverlap(tags, entry_tags, tuple(t for t in tags if t in set(entry_tags)), derived)
