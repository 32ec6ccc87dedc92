"""Attribution: from the memories a system returned to the entries of the collection they stand for.

A benchmark judges *our* entries (LoCoMo's evidence turns); a memory system
returns *its* memories.  Attribution gives each returned memory the set
``A(m)`` of entries of its scope it is attributed to; the memory is then
scored as a derived entry whose ``derived_from`` is ``A(m)``, by the existing
provenance relevance (:mod:`agentmemory.metrics.provenance`: each judged
source credited once, to the first memory reaching it).  An unattributed
memory (``A(m)`` empty) is not relevant; it is counted and listed.

Attribution works on the **turns** a system was given
(:mod:`agentmemory.systems.turns`): below, "turn" is an entry of the scope
when each entry is one turn; when entries are coarser (LongMemEval at
session granularity), the turns found are then mapped up to the entries
holding them, ``A(m) = dedup(entry_of(t) for t in turns(m))``, so a memory
attributed to a turn counts for the session entry holding it.

Methods (``--attribution``, a spec in the retrievers' grammar):

* ``sources``: ``A(m)`` is the memory's own ``sources`` (checked during the
  replay: each an entry of the query's scope, ingested before the query);
  a memory without sources is unattributed.
* ``exact``: every turn of the scope whose text equals the memory's after
  our tokeniser's normalisation: ``tokenize(m.text) == tokenize(t.text)``
  (:func:`agentmemory.tokenize.tokenize`: NFKC, case folding, punctuation
  and spacing dropped).  A memory with no token is unattributed.
* ``overlap[threshold=0.5]``: every turn ``t`` of the scope whose token
  containment reaches the threshold, the share of **the turn's** distinct
  tokens found in the memory:
  ``containment(m, t) = |T(t) & T(m)| / |T(t)|`` with ``T(x) = set(tokenize(x))``
  (a turn without tokens is never attributed).  The turn's share, so a
  memory that is a chunk of several turns is attributed to each of them.
  Default threshold: :data:`OVERLAP_DEFAULT` (0.5).
* ``dense[threshold=0.8]``: every turn whose cosine with the memory,
  both embedded by the default encoder (``wordllama``,
  :mod:`agentmemory.retrievers.encoders`), reaches the threshold.  Default
  threshold: :data:`DENSE_DEFAULT` (0.8).
* ``auto``: per memory, ``sources`` when the memory has them (not ``None``),
  else ``exact`` when that finds a turn, else ``overlap`` at its default.

Under ``direct`` relevance (trec_eval's) a memory counts only when it *is*
one entry: attributed to exactly one entry by ``sources`` or ``exact``
(after the mapping up: turns of one session entry make that entry); it
then stands in the ranking as that entry (once: a later memory attributed
to an entry already ranked stands as itself, not relevant).  Every other
memory stands as itself, not relevant.

Each distinct memory of a scope (same system id, text and sources) gets
one id, ``mem-1``, ``mem-2``, ... in the order memories are first returned
(queries in the collection's order), prefixed with more ``m`` when such an
id is already an entry of the collection.

Figures (:class:`AttributionReport`), over the headline queries:

* coverage: attributed returned memories / returned memories (each
  query's memories counted; queries that returned nothing counted apart);
* Judged@k: mean over queries of |{i <= k : A(m_i) holds an entry judged
  for the query (any grade)}| / k;
* the sensitivity table: R@k and nDCG@k (provenance) with the method at
  three thresholds (:data:`SENSITIVITY`); for ``sources``, ``exact`` and
  ``auto``, with ``overlap`` alone (the text only, sources ignored) at its
  three thresholds, so a reader sees what the number would be without the
  system's own sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmemory.datasets.collection import Collection
from agentmemory.errors import ParameterError, UnknownNameError, shorten
from agentmemory.metrics import Measure, defined
from agentmemory.metrics.provenance import ancestors_of, credit
from agentmemory.records import MemoryEntry, Provenance
from agentmemory.retrievers.encoders import load_encoder
from agentmemory.retrievers.spec import Spec, option_named, parse_spec
from agentmemory.systems.base import Memory
from agentmemory.systems.replay import Replay
from agentmemory.systems.turns import TurnIndex, turn_index
from agentmemory.tokenize import tokenize

__all__ = [
    "ATTRIBUTION_METHODS",
    "DENSE_DEFAULT",
    "OVERLAP_DEFAULT",
    "SENSITIVITY",
    "Attributed",
    "AttributionReport",
    "Attributor",
    "attribute",
    "parse_attribution",
]

ATTRIBUTION_METHODS = ("auto", "dense", "exact", "overlap", "sources")
OVERLAP_DEFAULT = 0.5
"""Default ``overlap`` threshold: half of a turn's distinct tokens in the memory."""
DENSE_DEFAULT = 0.8
"""Default ``dense`` threshold (cosine)."""
SENSITIVITY = {"overlap": (0.3, 0.5, 0.7), "dense": (0.7, 0.8, 0.9)}
"""The thresholds of the sensitivity table, per method with a threshold."""
UNATTRIBUTED_LISTED = 5
"""Texts of unattributed memories listed in a report (the count is always whole)."""
_TEXT_SHOWN = 80


def parse_attribution(text: object, *, option: str = "attribution") -> Spec:
    """An attribution spec (``"auto"``, ``"overlap[threshold=0.4]"``) checked: its method and threshold.

    ``option`` is what the messages name: the option the spec was read from (``--attribution`` on the command
    line), by default ``attribution``.

    Raises:
        UnknownNameError: an unknown method.
        ParameterError: empty or malformed text, a parameter other than ``threshold``, a threshold on a
            method without one, a threshold outside [0, 1].
    """
    if isinstance(text, Spec):
        spec = text
    elif isinstance(text, str):
        with option_named(option):
            spec = parse_spec(text)
    else:
        raise ParameterError(option, text, "is not text", "choose from: " + ", ".join(ATTRIBUTION_METHODS))
    if spec.target not in ATTRIBUTION_METHODS:
        raise UnknownNameError(option, spec.target, ATTRIBUTION_METHODS)
    for key, value in spec.params.items():
        if key != "threshold" or spec.target not in SENSITIVITY:
            raise ParameterError(
                f"{option} parameter",
                key,
                f"is not a parameter of {spec.target}",
                "only overlap and dense take threshold, e.g. overlap[threshold=0.5]",
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ParameterError(
                f"{option} threshold", value, "is not a number in [0, 1]", "write e.g. overlap[threshold=0.5]"
            )
    return spec


def _threshold(spec: Spec) -> float:
    default = DENSE_DEFAULT if spec.target == "dense" else OVERLAP_DEFAULT
    return float(spec.params.get("threshold", default))


class Attributor:
    """The turns of a collection by scope, with what each method needs computed once (tokens, vectors)."""

    def __init__(self, collection: Collection) -> None:
        self.index: TurnIndex = turn_index(collection)
        self.turns = self.index.by_scope
        self._exact: dict[str | None, dict[tuple[str, ...], tuple[str, ...]]] = {}
        self._postings: dict[str | None, tuple[list[int], dict[str, list[int]]]] = {}
        self._vectors: dict[str | None, np.ndarray] = {}
        self._containment: dict[tuple[str | None, str], dict[int, float]] = {}
        self._cosine: dict[tuple[str | None, str], np.ndarray] = {}
        self._encoder: Any = None

    def exact(self, scope: str | None, text: str) -> tuple[str, ...]:
        """Ids of the scope's turns whose tokens equal the text's (collection order); none for a text without tokens."""
        index = self._exact.get(scope)
        if index is None:
            index = {}
            for entry in self.turns.get(scope, []):
                key = tuple(tokenize(entry.text))
                index[key] = (*index.get(key, ()), entry.id)
            self._exact[scope] = index
        key = tuple(tokenize(text))
        return index.get(key, ()) if key else ()

    def containment(self, scope: str | None, text: str) -> dict[int, float]:
        """``|T(t) & T(m)| / |T(t)|`` for each turn position ``t`` of the scope sharing a token with the text."""
        cached = self._containment.get((scope, text))
        if cached is not None:
            return cached
        built = self._postings.get(scope)
        if built is None:
            sizes: list[int] = []
            postings: dict[str, list[int]] = {}
            for position, entry in enumerate(self.turns.get(scope, [])):
                tokens = set(tokenize(entry.text))
                sizes.append(len(tokens))
                for token in tokens:
                    postings.setdefault(token, []).append(position)
            built = (sizes, postings)
            self._postings[scope] = built
        sizes, postings = built
        counts: dict[int, int] = {}
        for token in set(tokenize(text)):
            for position in postings.get(token, ()):
                counts[position] = counts.get(position, 0) + 1
        shares = {p: c / sizes[p] for p, c in counts.items()}
        self._containment[(scope, text)] = shares
        return shares

    def overlap(self, scope: str | None, text: str, threshold: float) -> tuple[str, ...]:
        turns = self.turns.get(scope, ())
        shares = self.containment(scope, text)
        return tuple(turns[p].id for p in sorted(shares) if shares[p] >= threshold)

    def cosine(self, scope: str | None, text: str) -> np.ndarray:
        """Cosine of the text with each turn of the scope (the default encoder; a zero vector gives 0)."""
        cached = self._cosine.get((scope, text))
        if cached is not None:
            return cached
        if self._encoder is None:
            self._encoder = load_encoder("wordllama")
        vectors = self._vectors.get(scope)
        if vectors is None:
            texts = [e.text for e in self.turns.get(scope, [])]
            vectors = _unit(np.asarray(self._encoder.encode(texts), dtype=np.float64)) if texts else np.zeros((0, 1))
            self._vectors[scope] = vectors
        mine = _unit(np.asarray(self._encoder.encode([text]), dtype=np.float64))[0]
        values = vectors @ mine if len(vectors) else np.zeros(0)
        self._cosine[(scope, text)] = values
        return values

    def dense(self, scope: str | None, text: str, threshold: float) -> tuple[str, ...]:
        turns = self.turns.get(scope, ())
        values = self.cosine(scope, text)
        return tuple(turns[i].id for i in range(len(turns)) if values[i] >= threshold)

    def attribute(self, spec: Spec, scope: str | None, memory: Memory) -> tuple[tuple[str, ...], str]:
        """``(A(m), how)``: the entries ``memory`` is attributed to, and the method that attributed it."""
        turns, how = self.attribute_turns(spec, scope, memory)
        return self.index.up(turns), how

    def attribute_turns(self, spec: Spec, scope: str | None, memory: Memory) -> tuple[tuple[str, ...], str]:
        """``(turns(m), how)``: the turns ``memory`` is attributed to (before mapping up), and the method."""
        method = spec.target
        if method == "sources" or (method == "auto" and memory.sources is not None):
            return tuple(dict.fromkeys(memory.sources or ())), "sources"
        if method in ("exact", "auto"):
            found = self.exact(scope, memory.text)
            if found or method == "exact":
                return found, "exact"
            return self.overlap(scope, memory.text, OVERLAP_DEFAULT), "overlap"
        if method == "overlap":
            return self.overlap(scope, memory.text, _threshold(spec)), "overlap"
        return self.dense(scope, memory.text, _threshold(spec)), "dense"


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


@dataclass(frozen=True)
class AttributionReport:
    """How a system's memories were attributed (see the module docstring for each figure)."""

    method: str
    returned: int
    attributed: int
    empty_queries: tuple[str, ...]
    judged_at_k: float
    unattributed: int
    unattributed_texts: tuple[str, ...]
    failures: tuple[tuple[str, str], ...] = ()
    sensitivity: tuple[tuple[str, float, float], ...] = ()

    @property
    def coverage(self) -> float:
        """Attributed / returned memories (0.0 when nothing was returned)."""
        return self.attributed / self.returned if self.returned else 0.0

    def summary(self) -> dict[str, Any]:
        """JSON-ready, for the artifact."""
        return {
            "attribution": self.method,
            "returned_memories": self.returned,
            "attributed_memories": self.attributed,
            "coverage": self.coverage,
            "judged_at_k": self.judged_at_k,
            "queries_returning_nothing": list(self.empty_queries),
            "unattributed_memories": self.unattributed,
            "unattributed_examples": list(self.unattributed_texts),
            "failed_queries": [{"query_id": q, "error": e} for q, e in self.failures],
            "sensitivity": [{"attribution": a, "recall": r, "ndcg": n} for a, r, n in self.sensitivity],
        }


@dataclass(frozen=True)
class Attributed:
    """One system's answers attributed: its memories as entries, and per query the ranking to score.

    ``memories`` are the distinct memories as :class:`~agentmemory.records.MemoryEntry`
    records (``provenance.derived_from`` = ``A(m)``, ``scope`` the query's);
    ``how`` maps each memory id to the method that attributed it (``"none"``
    when unattributed); ``rankings`` holds, per judged query, the ids to
    score under the given relevance (memory ids under ``provenance``;
    entry ids where a memory is one entry under ``direct``); ``turns``, only
    when entries are coarser than turns, maps each memory id to the turns it
    was attributed to before the mapping up.
    """

    key: str
    label: str
    params: dict[str, Any]
    relevance: str
    memories: tuple[MemoryEntry, ...]
    how: Mapping[str, str]
    rankings: Mapping[str, tuple[str, ...]]
    report: AttributionReport = field(repr=False)
    turns: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)


def _memory_ids(collection: Collection) -> str:
    taken = {e.id for e in collection.entries}
    prefix = "mem-"
    while any(i.startswith(prefix) for i in taken):
        prefix = "m" + prefix
    return prefix


def _new_memory_entry(
    helper: Attributor,
    spec: Spec,
    scope: str | None,
    memory: Memory,
    entry_id: str,
    how: dict[str, str],
    turns_of: dict[str, tuple[str, ...]],
    unattributed: list[str],
) -> MemoryEntry:
    """A returned memory as an entry ``derived_from`` the entries it is attributed to (how, in ``how``)."""
    turns, used = helper.attribute_turns(spec, scope, memory)
    found = helper.index.up(turns)
    entry = MemoryEntry(
        entry_id,
        memory.text,
        provenance=Provenance(source="derived", ref=memory.id, derived_from=found),
        scope=scope,
    )
    how[entry.id] = used if found else "none"
    if helper.index.coarse:
        turns_of[entry.id] = turns
    if not found:
        unattributed.append(memory.text)
    return entry


def attribute(
    replay: Replay,
    collection: Collection,
    method: str | Spec = "auto",
    *,
    k: int,
    relevance: str = "provenance",
    attributor: Attributor | None = None,
    sensitivity: str | Spec | None = None,
) -> Attributed:
    """Attribute every memory ``replay`` holds (see the module docstring) and build the rankings to score.

    ``sensitivity`` is the method whose thresholds the sensitivity table
    varies (default: ``method``); a recorded system's memories are attributed
    by their recorded ``sources`` but varied as the method that made them.

    Raises:
        ParameterError: a bad method; ``direct`` relevance with ``overlap`` or
            ``dense`` (whose memories are never one entry).
    """
    spec = parse_attribution(method)
    if relevance == "direct" and spec.target in ("overlap", "dense"):
        raise ParameterError(
            "attribution",
            spec.text(),
            "never makes a memory one entry, so nothing counts under relevance direct",
            "use --attribution sources, exact or auto with --relevance direct, or --relevance provenance",
        )
    helper = attributor or Attributor(collection)
    prefix = _memory_ids(collection)
    memories: dict[tuple[Any, ...], MemoryEntry] = {}
    how: dict[str, str] = {}
    turns_of: dict[str, tuple[str, ...]] = {}
    rankings: dict[str, tuple[str, ...]] = {}
    ranked_memories: dict[str, tuple[str, ...]] = {}
    returned = attributed = 0
    empty: list[str] = []
    unattributed: list[str] = []
    headline = {q.id for q in collection.headline_queries}
    judged_shares: list[float] = []
    for query in collection.judged_queries:
        scope = replay.scopes.get(query.id, query.scope)
        answer = replay.answers.get(query.id, ())
        ids: list[str] = []
        direct: list[str] = []
        placed: set[str] = set()
        judged = collection.qrels[query.id]
        hits_judged = 0
        for position, memory in enumerate(answer):
            identity = (scope, memory.id, memory.text, memory.sources)
            entry = memories.get(identity)
            if entry is None:
                entry = memories[identity] = _new_memory_entry(
                    helper, spec, scope, memory, f"{prefix}{len(memories) + 1}", how, turns_of, unattributed
                )
            found = entry.provenance.derived_from
            ids.append(entry.id)
            one = len(found) == 1 and how[entry.id] in ("sources", "exact") and found[0] not in placed
            direct.append(found[0] if one else entry.id)
            if one:
                placed.add(found[0])
            if query.id in headline:
                returned += 1
                attributed += bool(found)
                if position < k and any(s in judged for s in found):
                    hits_judged += 1
        if query.id in headline:
            if not answer:
                empty.append(query.id)
            judged_shares.append(hits_judged / k)
        ranked_memories[query.id] = tuple(ids)
        rankings[query.id] = tuple(direct) if relevance == "direct" else tuple(ids)
    entries = tuple(memories.values())
    texts = tuple(dict.fromkeys(shorten(" ".join(t.split()), _TEXT_SHOWN) for t in unattributed))
    report = AttributionReport(
        method=spec.text() if sensitivity is None else parse_attribution(sensitivity).text(),
        returned=returned,
        attributed=attributed,
        empty_queries=tuple(empty),
        judged_at_k=float(np.mean(judged_shares)) if judged_shares else 0.0,
        unattributed=sum(1 for e in entries if how[e.id] == "none"),
        unattributed_texts=texts[:UNATTRIBUTED_LISTED],
        failures=replay.failures,
        sensitivity=_sensitivity(
            spec if sensitivity is None else parse_attribution(sensitivity),
            memories,
            ranked_memories,
            collection,
            helper,
            k,
        ),
    )
    return Attributed(replay.key, replay.label, replay.params, relevance, entries, how, rankings, report, turns_of)


def _sensitivity(
    spec: Spec,
    memories: Mapping[tuple[Any, ...], MemoryEntry],
    ranked: Mapping[str, tuple[str, ...]],
    collection: Collection,
    helper: Attributor,
    k: int,
) -> tuple[tuple[str, float, float], ...]:
    """Mean provenance R@k and nDCG@k over the headline queries, re-attributed at each sensitivity threshold."""
    target = spec.target if spec.target in SENSITIVITY else "overlap"
    recall, ndcg = Measure("R", k), Measure("nDCG", k)
    rows = []
    headline = collection.headline_queries
    for threshold in SENSITIVITY[target]:
        variant = Spec(target, {"threshold": threshold})
        derived = []
        for (scope, own_id, text, sources), entry in memories.items():
            found, _ = helper.attribute(variant, scope, Memory(text, id=own_id, sources=sources))
            derived.append(MemoryEntry(entry.id, text, provenance=Provenance(derived_from=found), scope=scope))
        ancestors = ancestors_of((*collection.entries, *derived))
        r_values, n_values = [], []
        for query in headline:
            credited = credit(list(ranked.get(query.id, ())), collection.qrels[query.id], ancestors)
            r_values.append(defined(recall.definition.provenance(credited, recall.cutoff), recall))  # type: ignore[misc]
            n_values.append(defined(ndcg.definition.provenance(credited, ndcg.cutoff), ndcg))  # type: ignore[misc]
        label = f"{target}[threshold={threshold:g}]"
        rows.append(
            (label, float(np.mean(r_values)) if r_values else 0.0, float(np.mean(n_values)) if n_values else 0.0)
        )
    return tuple(rows)
