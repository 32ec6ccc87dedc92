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
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query, _trusted_hits

__all__ = [
    "CAPABILITIES",
    "CAPABILITY_TABLE",
    "Capability",
    "DocTable",
    "Retriever",
    "as_query",
    "capabilities",
    "capability",
    "has_capability",
    "is_retriever",
    "missing_members",
    "rank_candidates",
    "select_top_k",
]


@runtime_checkable
class Retriever(Protocol):
    """What every retriever offers (required).

    Optional capabilities are declared in :data:`CAPABILITY_TABLE` (what each
    means, and what a report says or does without it) and detected with
    :func:`has_capability` / :func:`capabilities`, never assumed.
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


@dataclass(frozen=True)
class Capability:
    """One optional extension point: a member some retrievers (or their factories) have and the code may use.

    Attributes:
        name: the member's name.
        owner: ``"retriever"`` (a member of a retriever) or ``"factory"`` (of the
            class or function that makes retrievers).
        kind: ``"method"`` (present when callable) or ``"property"`` (present
            when it holds an integer >= 1).
        meaning: what it does, and the rule its results keep.
        missing: what agentmemory does, and what a report says, without it.
    """

    name: str
    owner: str
    kind: str
    meaning: str
    missing: str


CAPABILITY_TABLE: tuple[Capability, ...] = (
    Capability(
        "score_all",
        "retriever",
        "method",
        "score_all(query) -> dict[str, float]: every entry with a positive score; its top k under the ranking "
        "rule is search's.",
        "tie analysis searches deeper and deeper until the tied scores end (same numbers); the 'why not "
        "retrieved' explanation of a miss says its score and rank are not available for <label>.",
    ),
    Capability(
        "score_at_least",
        "retriever",
        "method",
        "score_at_least(query, floor) -> dict[str, float]: score_all filtered to scores >= floor, in the same "
        "order, filtered before the dict is built (used only beside score_all).",
        "score_all's result is filtered instead (same numbers, slower).",
    ),
    Capability(
        "explain",
        "retriever",
        "method",
        "explain(query, entry_id): why an entry got its score, an object with matched and missing (the "
        "query's features the entry has and lacks) and miss_reason()/hit_reason() (sentence parts for "
        "reports); see agentmemory.retrievers.bm25.BM25Explanation.",
        "reports say 'an explanation is not available for <label> (it has no explain())'.",
    ),
    Capability(
        "remove",
        "retriever",
        "method",
        "remove(entry_ids): forget indexed entries (their ids may be added again after); a MemoryStore calls "
        "it on update and forget.",
        "the store rebuilds the retriever from the scope's entries before its next search; a retriever "
        "instance (which cannot be rebuilt) makes update and forget refuse, naming it.",
    ),
    Capability(
        "search_batch",
        "retriever",
        "method",
        "search_batch(queries, k) -> list[list[Hit]]: search for many queries of one scope at once, one "
        "list per query in order, each under the ranking rule (Dense: blocked matrix products, scores equal "
        "to search's to float32 rounding), for callers who want throughput (benchmarks/engine_dense.py).",
        "nothing changes: agentmemory's own commands call search once per query either way, because a run "
        "that agentmemory retrieve writes must equal the one eval exports byte for byte, and a matrix "
        "product sums in another order than search's matrix-vector product.",
    ),
    Capability(
        "search_many",
        "retriever",
        "method",
        "search_many(queries, k) -> list[list[Hit]]: search for many queries of one scope at once, one list per "
        "query in order, each exactly what search(query, k) returns (same hits, same scores to the bit); "
        "agentmemory's commands search its own retrievers through it when they record nothing per query (no "
        "store events, no --timings); a plugin's is checked by check_retriever and guarded, and its searches "
        "go one by one through the boundary.",
        "search is called once per query (the same results).",
    ),
    Capability(
        "memory_bytes",
        "retriever",
        "method",
        "memory_bytes() -> int: the bytes its index holds (for the timings table).",
        "the timings table leaves the index size empty for <label>.",
    ),
    Capability(
        "max_k",
        "retriever",
        "property",
        "max_k: the deepest ranking it can give (hybrid, recency: their candidate depth); search refuses a deeper k.",
        "it is asked as deep as a report needs (whole-ranking reports, explanations of misses).",
    ),
    Capability(
        "with_params",
        "retriever",
        "method",
        "with_params(params) -> retriever: a retriever with other parameters over this one's index (built by the "
        "entries added so far), for parameters that change only the scoring (those its factory's "
        "index_params() does not name); params are given as a spec gives them to the factory, the others "
        "take the factory's defaults; every search equals that of a new retriever with these parameters given "
        "the same entries. Add no entries to either afterwards unless the retriever says they are independent.",
        "an experiment builds the index again for every setting of its scoring parameters.",
    ),
    Capability(
        "add_texts",
        "retriever",
        "method",
        "add_texts(ids, texts): index entries given as their ids and a TextSource of their texts "
        "(agentmemory.collection.columns: UTF-8 spans read in chunks), exactly as add() of the same records would; "
        "a MemoryStore given columns calls it for agentmemory's own retrievers, so no record is made per entry.",
        "the store makes the records from the columns and calls add() (the same index, more memory); a "
        "plugin always gets records.",
    ),
    Capability(
        "index_params",
        "factory",
        "method",
        "index_params() -> tuple[str, ...]: the names of the factory's parameters that change the index (what "
        "add builds); every other parameter changes only the scoring, and its retrievers have with_params. "
        "Settings whose index parameters agree share one index (their RetrieverSpec.index_key is the same).",
        "an experiment shares an index only between tasks of the same spec (agentmemory's own retrievers; a "
        "plugin's, never): each other setting builds its own.",
    ),
    Capability(
        "spec_label",
        "factory",
        "method",
        "spec_label(params) -> str: the table label for the parameters that differ from the factory's "
        "defaults, for factories whose parameters change what a retriever is (hybrid[method=convex]); "
        "different parameters must give different labels.",
        "the label is '<label> (k=v, ...)' with the parameters given.",
    ),
)
"""Every optional member the code uses, in the order reports mention them; nothing else is probed."""

_BY_NAME = {c.name: c for c in CAPABILITY_TABLE}

CAPABILITIES = tuple(c.name for c in CAPABILITY_TABLE if c.owner == "retriever")
"""The optional members of a retriever (``spec_label`` and ``index_params`` belong to factories), in :data:`CAPABILITY_TABLE` order."""


def capability(name: str) -> Capability:
    """The declared capability ``name``; UnknownNameError for a name :data:`CAPABILITY_TABLE` does not declare."""
    found = _BY_NAME.get(name)
    if found is None:
        raise UnknownNameError("capability", name, _BY_NAME)
    return found


def has_capability(obj: object, name: str) -> bool:
    """Whether ``obj`` (a retriever, or a factory for ``spec_label`` or ``index_params``) has the declared capability ``name``.

    A method is present when the member is callable; a property when it
    holds an int >= 1 (bools are not).  The one question "does X have
    capability Y" is answered here; asking for an undeclared name raises
    :class:`~agentmemory.errors.UnknownNameError`.
    """
    declared = capability(name)
    value = getattr(obj, name, None)
    if declared.kind == "method":
        return callable(value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


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
    """Which optional members of :data:`CAPABILITIES` ``retriever`` has (see :func:`has_capability`)."""
    return frozenset(c for c in CAPABILITIES if has_capability(retriever, c))


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
    ``pos`` maps an id back to its number.  ``pos`` is built on first use
    (an explanation, a second batch's check of new ids): an index that is
    given its entries once and only searched never holds it (a dict entry
    and an int per entry, about 50 bytes; at LongMemEval-M's shape 2.5M
    entries).  ``tie_key[i]`` is document ``i``'s position when all ids are
    sorted in descending order, so ascending ``tie_key`` is descending id;
    it is computed lazily (a full sort) and only on request: ranking itself
    (:func:`select_top_k`) compares the ids of the few candidates at the
    cut-off instead.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._pos: dict[str, int] | None = None  # built on first use (see pos)
        self._tie_key: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def pos(self) -> dict[str, int]:
        """Entry id -> document number (built on first use, then kept up to date)."""
        if self._pos is None:
            self._pos = dict(zip(self.ids, range(len(self.ids))))
        return self._pos

    def append(self, entry_id: str) -> int:
        if entry_id in self.pos:
            raise ParameterError("entry.id", entry_id, "is already indexed", "every entry id must be unique")
        number = len(self.ids)
        self.ids.append(entry_id)
        self.pos[entry_id] = number
        self._tie_key = None
        return number

    def check_new(self, entry_ids: list[str]) -> None:
        """ParameterError (as :meth:`append`) if one of ``entry_ids`` is indexed or repeated."""
        if len(set(entry_ids)) == len(entry_ids) and (not self.ids or self.pos.keys().isdisjoint(entry_ids)):
            return
        seen: set[str] = set()
        indexed = self.pos if self.ids else {}
        for entry_id in entry_ids:
            if entry_id in indexed or entry_id in seen:
                raise ParameterError("entry.id", entry_id, "is already indexed", "every entry id must be unique")
            seen.add(entry_id)
        raise AssertionError("unreachable")  # pragma: no cover

    def extend(self, entry_ids: list[str], *, checked: bool = False) -> int:
        """Append many ids (``checked``: :meth:`check_new` already passed on them).

        Returns the first new number.
        """
        if not checked:
            self.check_new(entry_ids)
        start = len(self.ids)
        self.ids.extend(entry_ids)
        if self._pos is not None:
            self._pos.update(zip(entry_ids, range(start, start + len(entry_ids))))
        self._tie_key = None
        return start

    def copy(self) -> DocTable:
        """Another table with the same ids and numbers, which later appends to this one do not change."""
        other = DocTable()
        other.ids = list(self.ids)
        other._pos = None if self._pos is None else dict(self._pos)
        other._tie_key = self._tie_key
        return other

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
    return _trusted_hits(ranked[:k])  # ids checked when their entries were added; scores Python floats


def select_top_k(docs: np.ndarray, scores: np.ndarray, k: int, table: DocTable) -> list[Hit]:
    """Apply the ranking rule to candidate ``docs`` with ``scores``; return the top ``k``.

    Only candidates with score > 0 are kept.  Candidates strictly below the
    k-th largest score are dropped before the final sort, so the cost is
    O(m) plus a sort of the survivors (see :func:`rank_candidates`).
    """
    k = check_positive_int("k", k)
    hits = rank_candidates(np.asarray(docs), np.asarray(scores, dtype=np.float64), k, table.ids)
    return [Hit(h.entry_id, h.score, h.rank) for h in hits]  # a caller's own table: its ids are checked here
