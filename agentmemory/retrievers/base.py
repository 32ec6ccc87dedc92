"""The retriever protocol and the one ranking rule every retriever follows.

A retriever indexes :class:`~agentmemory.records.MemoryEntry` records
(incrementally: ``add`` may be called any number of times) and answers
``search(query, k)`` with at most ``k`` :class:`~agentmemory.records.Hit`
records.

**Ranking rule (all retrievers).**  Entries are ordered by score descending,
then by entry id *descending* (byte-wise on UTF-8, which is the same as
Python's code-point order), which is trec_eval's order: a run we export
scores identically in trec_eval.  Entries whose score is 0 are not returned,
so a search may return fewer than ``k`` hits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query

__all__ = [
    "CAPABILITIES",
    "DocTable",
    "Retriever",
    "as_query",
    "capabilities",
    "is_retriever",
    "missing_members",
    "rank_candidates",
    "select_top_k",
]


@runtime_checkable
class Retriever(Protocol):
    """What every retriever offers (required).

    Optional capabilities, detected with :func:`capabilities`, never assumed:

    * ``score_all(query) -> dict[str, float]``: every entry with a positive
      score.  Enables "why not retrieved" explanations (the score and rank
      of a relevant entry below the cutoff).  Without it, tie analysis
      still works (it searches deeper until the tied scores end).
    * ``explain(query, entry_id)``: why an entry got its score, as an object
      with ``matched`` and ``missing`` (the query's features the entry has
      and lacks), ``miss_reason()`` and ``hit_reason()`` (sentence parts
      for reports); see :class:`~agentmemory.retrievers.bm25.BM25Explanation`.
    * ``remove(entry_ids)``: forget indexed entries (their ids may be added
      again after).  A :class:`~agentmemory.store.core.MemoryStore` calls it on
      ``update`` and ``forget``; a retriever without it is rebuilt from the
      scope's entries before its next search instead.

    Reports say "not available for <label>" where a capability is missing.
    """

    name: str  # registry key, e.g. "bm25"
    label: str  # display name, e.g. "BM25"

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Index more entries (ids must be new)."""

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """The top ``k`` hits for ``query`` under the ranking rule."""

    def params(self) -> dict[str, Any]:
        """The retriever's parameters, JSON-ready (for reports and artifacts)."""


REQUIRED = ("name", "label", "add", "search", "params")
"""The members every retriever has; :func:`missing_members` checks them."""

CAPABILITIES = ("score_all", "explain")
"""The optional members, in the order reports mention them."""


def missing_members(obj: object) -> list[str]:
    """The required members ``obj`` lacks (``name`` and ``label`` must be non-empty strings, the rest callable)."""
    missing = []
    for member in REQUIRED:
        value = getattr(obj, member, None)
        if member in ("name", "label"):
            if not isinstance(value, str) or not value:
                missing.append(member)
        elif not callable(value):
            missing.append(f"{member}()")
    return missing


def is_retriever(obj: object) -> bool:
    """True when ``obj`` has every required member of :class:`Retriever`."""
    return not missing_members(obj)


def capabilities(retriever: object) -> frozenset[str]:
    """Which optional members of :data:`CAPABILITIES` ``retriever`` has (callable)."""
    return frozenset(c for c in CAPABILITIES if callable(getattr(retriever, c, None)))


def as_query(query: Query | str) -> Query:
    """Accept a plain string as a query with no id and no tags."""
    if isinstance(query, Query):
        return query
    if isinstance(query, str):
        return Query(id="", text=query)
    raise ParameterError("query", query, "is neither a str nor an agentmemory.Query", "pass the query text")


class DocTable:
    """Dense document numbers for entry ids, plus the tie-break key.

    ``ids[i]`` is the id of document ``i`` (numbered in the order added) and
    ``pos`` maps an id back to its number.  ``tie_key[i]`` is document ``i``'s
    position when all ids are sorted in descending order, so ascending
    ``tie_key`` is descending id; it is computed lazily (a full sort) and
    only on request: ranking itself (:func:`select_top_k`) compares the ids
    of the few candidates at the cut-off instead.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self._tie_key: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, entry_id: str) -> int:
        if entry_id in self.pos:
            raise ParameterError("entry.id", entry_id, "is already indexed", "every entry id must be unique")
        number = len(self.ids)
        self.ids.append(entry_id)
        self.pos[entry_id] = number
        self._tie_key = None
        return number

    def check_new(self, entry_ids: list[str]) -> dict[str, int]:
        """The numbers ``entry_ids`` would get; ParameterError (as :meth:`append`) if one is indexed or repeated."""
        start = len(self.ids)
        numbers = dict(zip(entry_ids, range(start, start + len(entry_ids))))
        if len(numbers) == len(entry_ids) and (not self.pos or self.pos.keys().isdisjoint(numbers)):
            return numbers
        seen: set[str] = set()
        for entry_id in entry_ids:
            if entry_id in self.pos or entry_id in seen:
                raise ParameterError("entry.id", entry_id, "is already indexed", "every entry id must be unique")
            seen.add(entry_id)
        raise AssertionError("unreachable")  # pragma: no cover

    def extend(self, entry_ids: list[str], numbers: dict[str, int] | None = None) -> int:
        """Append many ids; ``numbers`` is :meth:`check_new`'s result when already checked.

        Returns the first new number.
        """
        if numbers is None:
            numbers = self.check_new(entry_ids)
        start = len(self.ids)
        self.ids.extend(entry_ids)
        if self.pos:
            self.pos.update(numbers)
        else:
            self.pos = numbers
        self._tie_key = None
        return start

    @property
    def tie_key(self) -> np.ndarray:
        if self._tie_key is None or len(self._tie_key) != len(self.ids):
            order = sorted(range(len(self.ids)), key=self.ids.__getitem__, reverse=True)
            key = np.empty(len(self.ids), dtype=np.int64)
            key[np.asarray(order, dtype=np.int64)] = np.arange(len(self.ids), dtype=np.int64)
            self._tie_key = key
        return self._tie_key


def scores_by_id(docs: np.ndarray, scores: np.ndarray, table: DocTable, floor: float | None = None) -> dict[str, float]:
    """Candidates with a positive score as entry id -> score (for ``score_all``), in ``docs`` order.

    ``floor`` keeps only scores >= ``floor`` as well (for ``score_at_least``); the test is made on the
    arrays, before any Python object is built.
    """
    ids = table.ids
    keep = scores > 0
    if floor is not None:
        keep &= scores >= floor
    return {ids[d]: s for d, s in zip(docs[keep].tolist(), scores[keep].tolist())}


def rank_candidates(docs: np.ndarray, scores: np.ndarray, k: int, ids: list[str]) -> list[Hit]:
    """The top ``k`` of candidate ``docs`` (numbers into ``ids``) under the ranking rule.

    Keeps scores > 0; finds the k-th largest score with one partition, keeps
    every candidate at or above it (so all entries tied at the cut-off are
    compared), and sorts those survivors by (score, id), both descending.
    ``docs`` must not repeat a document.  Cost: O(m) plus a sort of the
    survivors (usually k of them).
    """
    m = len(scores)
    if m == 0:
        return []
    positive = scores > 0
    if not positive.all():
        docs, scores = docs[positive], scores[positive]
        m = len(scores)
    if m > k:
        kth = np.partition(scores, m - k)[m - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    ranked = sorted(zip(scores.tolist(), [ids[d] for d in docs.tolist()]), reverse=True)
    return [Hit(entry_id=i, score=s, rank=r) for r, (s, i) in enumerate(ranked[:k], start=1)]


def select_top_k(docs: np.ndarray, scores: np.ndarray, k: int, table: DocTable) -> list[Hit]:
    """Apply the ranking rule to candidate ``docs`` with ``scores``; return the top ``k``.

    Only candidates with score > 0 are kept.  Candidates strictly below the
    k-th largest score are dropped before the final sort, so the cost is
    O(m) plus a sort of the survivors (see :func:`rank_candidates`).
    """
    k = check_positive_int("k", k)
    return rank_candidates(np.asarray(docs), np.asarray(scores, dtype=np.float64), k, table.ids)
