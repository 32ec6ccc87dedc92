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
* ``overlap[threshold=0.5]``: the turns that explain the memory's words.
  Each token is weighted by how rare it is among the scope's ``N`` turns,
  ``w(x) = ln(1 + N / df(x))`` (``df(x)``: the turns holding ``x``; a token of
  no turn weighs nothing), and ``W(X)`` is the sum over a set of tokens.  With
  ``T(x) = set(tokenize(x))`` and ``S(t) = T(t) & T(m)``, a turn is a
  candidate when it shares at least :data:`OVERLAP_MIN_SHARED` tokens with the
  memory and its weighted containment reaches the threshold:
  ``containment(m, t) = W(S(t)) / W(T(t))`` (the share of **the turn's**
  weighted tokens found in the memory).  Candidates are then taken best first
  (containment, then ``W(S(t))``, descending; then collection order), each
  credited only when the tokens it shares that no turn credited before it
  already explains weigh at least ``min(threshold, OVERLAP_NEW) * W(T(t))``
  (:data:`OVERLAP_NEW`): a memory that is one turn is credited to that turn
  and not to the other turns whose words it also holds, and a chunk of several
  turns to each of them.  Credited turns are returned in collection order.
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
* ambiguity, over the same returned memories: how many are attributed to
  more than one entry, the mean ``|A(m)|`` over the attributed ones and the
  largest ``|A(m)|`` (a memory credited to many entries is a chunk, a summary
  or a loose attribution: read the recall it earns with that in mind);
* Judged@k: mean over queries of |{i <= k : A(m_i) holds an entry judged
  for the query (any grade)}| / k;
* the sensitivity table: R@k and nDCG@k (provenance) with the method at
  three thresholds (:data:`SENSITIVITY`); for ``sources``, ``exact`` and
  ``auto``, with ``overlap`` alone (the text only, sources ignored) at its
  three thresholds, so a reader sees what the number would be without the
  system's own sources.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import numpy as np

from agentmemory.collection import Collection
from agentmemory.errors import InputError, ParameterError, UnknownNameError, quote, shorten
from agentmemory.files.reading import decode_utf8, json_lines, read_bytes
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
    "OVERLAP_MIN_SHARED",
    "OVERLAP_NEW",
    "SENSITIVITY",
    "QUALITY_METHODS",
    "WORD_KEEPING",
    "Attributed",
    "AttributionReport",
    "Attributor",
    "CreditQuality",
    "LabelledMemory",
    "StyleQuality",
    "attribute",
    "credit_quality",
    "credit_quality_table",
    "parse_attribution",
    "read_labelled_memories",
]

ATTRIBUTION_METHODS = ("auto", "dense", "exact", "overlap", "sources")
OVERLAP_DEFAULT = 0.5
"""Default ``overlap`` threshold: half of a turn's weighted tokens in the memory."""
OVERLAP_NEW = 0.2
"""Least share of a turn's weight that its shared tokens must add to what better turns explain (capped by the
threshold)."""
OVERLAP_MIN_SHARED = 3
"""Least number of distinct tokens a turn shares with a memory for ``overlap`` to credit it (a turn of one or two
tokens, ``"Gina: ;)"``, is credited by ``exact`` only)."""
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


_EPSILON = 1e-9
"""Tolerance of the threshold comparisons (sums of weights are floating point)."""


@dataclass(frozen=True)
class _ScopeWeights:
    """A scope's turns as token sets, the postings (token -> turn positions), each token's weight, each turn's."""

    sets: list[frozenset[str]]
    postings: dict[str, list[int]]
    weight: dict[str, float]
    totals: list[float]

    def weight_of(self, tokens: Iterable[str]) -> float:
        """``W(tokens)``: the sum of the tokens' weights (0 for a token of no turn)."""
        return math.fsum(self.weight.get(t, 0.0) for t in tokens)


class Attributor:
    """The turns of a collection by scope, with what each method needs computed once (tokens, vectors)."""

    def __init__(self, collection: Collection) -> None:
        self.index: TurnIndex = turn_index(collection)
        self.turns = self.index.by_scope
        self._exact: dict[str | None, dict[tuple[str, ...], tuple[str, ...]]] = {}
        self._postings: dict[str | None, _ScopeWeights] = {}
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

    def _weights(self, scope: str | None) -> _ScopeWeights:
        built = self._postings.get(scope)
        if built is None:
            sets = [frozenset(tokenize(entry.text)) for entry in self.turns.get(scope, [])]
            postings: dict[str, list[int]] = {}
            for position, tokens in enumerate(sets):
                for token in tokens:
                    postings.setdefault(token, []).append(position)
            n = len(sets)
            weight = {token: math.log1p(n / len(held)) for token, held in postings.items()}
            totals = [math.fsum(weight[t] for t in tokens) for tokens in sets]
            built = self._postings[scope] = _ScopeWeights(sets, postings, weight, totals)
        return built

    def containment(self, scope: str | None, text: str) -> dict[int, float]:
        """``W(T(t) & T(m)) / W(T(t))`` for each turn position ``t`` of the scope sharing a token with the text."""
        cached = self._containment.get((scope, text))
        if cached is not None:
            return cached
        built = self._weights(scope)
        weights: dict[int, list[float]] = {}
        for token in set(tokenize(text)):
            for position in built.postings.get(token, ()):
                weights.setdefault(position, []).append(built.weight[token])
        # fsum is exact, so a share does not depend on the order tokens are met (string hashes vary by process)
        shares = {p: math.fsum(w) / built.totals[p] if built.totals[p] else 0.0 for p, w in weights.items()}
        self._containment[(scope, text)] = shares
        return shares

    def overlap(self, scope: str | None, text: str, threshold: float) -> tuple[str, ...]:
        """The turns credited by ``overlap`` at ``threshold`` (see the module docstring), in collection order."""
        turns = self.turns.get(scope, ())
        built = self._weights(scope)
        mine = frozenset(tokenize(text))
        candidates = []
        for p, share in self.containment(scope, text).items():
            if share < threshold - _EPSILON:
                continue
            tokens = built.sets[p] & mine
            if len(tokens) >= OVERLAP_MIN_SHARED:
                candidates.append((-round(share, 9), -round(built.weight_of(tokens), 9), p, tokens))
        candidates.sort()
        least = min(threshold, OVERLAP_NEW)
        explained: set[str] = set()
        credited = []
        for _, _, p, tokens in candidates:
            if built.weight_of(tokens - explained) >= least * built.totals[p] - _EPSILON:
                credited.append(p)
                explained |= tokens
        return tuple(turns[p].id for p in sorted(credited))

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
    credits: int = 0
    ambiguous: int = 0
    most_credits: int = 0

    @property
    def coverage(self) -> float:
        """Attributed / returned memories (0.0 when nothing was returned)."""
        return self.attributed / self.returned if self.returned else 0.0

    @property
    def credits_per_memory(self) -> float:
        """Mean ``|A(m)|`` over the attributed returned memories (0.0 when none is attributed)."""
        return self.credits / self.attributed if self.attributed else 0.0

    def summary(self) -> dict[str, Any]:
        """JSON-ready, for the artifact."""
        return {
            "attribution": self.method,
            "returned_memories": self.returned,
            "attributed_memories": self.attributed,
            "coverage": self.coverage,
            "ambiguous_memories": self.ambiguous,
            "credits_per_memory": self.credits_per_memory,
            "most_credits": self.most_credits,
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
    score: the memory ids, or, with ``ranks_entries``, the entry a memory is
    exactly one of in its place (what trec_eval's direct judgments can score); ``turns``, only
    when entries are coarser than turns, maps each memory id to the turns it
    was attributed to before the mapping up; ``stand_ins``, per judged query,
    maps each entry a memory stands in for (a memory that is one entry, as
    the ``direct`` ranking places it) to that memory's id, so that what a
    reader or a budget reads at that rank is the memory's own text.
    """

    key: str
    label: str
    params: dict[str, Any]
    ranks_entries: bool
    memories: tuple[MemoryEntry, ...]
    how: Mapping[str, str]
    rankings: Mapping[str, tuple[str, ...]]
    report: AttributionReport = field(repr=False)
    turns: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    stand_ins: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False)


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


def _direct_id(entry: MemoryEntry, how: str, placed: set[str], collection: Collection, standing: dict[str, str]) -> str:
    """The id ``entry`` (a memory) takes in the ``direct`` ranking: the one entry it is (by its sources or its
    exact text), the first time that entry is placed, else its own id.  A memory standing in for an entry with
    another text is noted in ``standing`` (its own text is what the system returned there)."""
    found = entry.provenance.derived_from
    if len(found) != 1 or how not in ("sources", "exact") or found[0] in placed:
        return entry.id
    placed.add(found[0])
    if entry.text != collection.entry(found[0]).text:
        standing[found[0]] = entry.id
    return found[0]


def attribute(
    replay: Replay,
    collection: Collection,
    method: str | Spec = "auto",
    *,
    k: int,
    ranks_entries: bool = False,
    attributor: Attributor | None = None,
    sensitivity: str | Spec | None = None,
) -> Attributed:
    """Attribute every memory ``replay`` holds (see the module docstring) and build the rankings to score.

    ``sensitivity`` is the method whose thresholds the sensitivity table
    varies (default: ``method``); a recorded system's memories are attributed
    by their recorded ``sources`` but varied as the method that made them.

    ``ranks_entries`` ranks, in a memory's place, the one entry it exactly is (attributed by ``sources`` or
    ``exact``, and not placed higher already), else the memory: what judgments of entries can score directly.

    Raises:
        ParameterError: a bad method.
    """
    spec = parse_attribution(method)
    helper = attributor or Attributor(collection)
    prefix = _memory_ids(collection)
    memories: dict[tuple[Any, ...], MemoryEntry] = {}
    how: dict[str, str] = {}
    turns_of: dict[str, tuple[str, ...]] = {}
    rankings: dict[str, tuple[str, ...]] = {}
    ranked_memories: dict[str, tuple[str, ...]] = {}
    stand_ins: dict[str, dict[str, str]] = {}
    returned = attributed = credits = ambiguous = most = 0
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
        standing: dict[str, str] = {}
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
            direct.append(_direct_id(entry, how[entry.id], placed, collection, standing))
            if query.id in headline:
                returned += 1
                attributed += bool(found)
                credits += len(found)
                ambiguous += len(found) > 1
                most = max(most, len(found))
                if position < k and any(s in judged for s in found):
                    hits_judged += 1
        if query.id in headline:
            if not answer:
                empty.append(query.id)
            judged_shares.append(hits_judged / k)
        ranked_memories[query.id] = tuple(ids)
        if standing:
            stand_ins[query.id] = standing
        rankings[query.id] = tuple(direct) if ranks_entries else tuple(ids)
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
        credits=credits,
        ambiguous=ambiguous,
        most_credits=most,
        sensitivity=_sensitivity(
            spec if sensitivity is None else parse_attribution(sensitivity),
            memories,
            ranked_memories,
            collection,
            helper,
            k,
        ),
    )
    return Attributed(
        replay.key, replay.label, replay.params, ranks_entries, entries, how, rankings, report, turns_of, stand_ins
    )


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


# -- credit quality: each method measured against memories whose sources are known ---------------------------

WORD_KEEPING = ("verbatim", "restyled", "unprefixed", "two-turn chunk", "session chunk")
"""The styles of labelled memories that keep their sources' words (a turn as given, restyled, cut, joined)."""
QUALITY_METHODS = (
    "sources",
    "exact",
    "overlap[threshold=0.3]",
    "overlap[threshold=0.5]",
    "overlap[threshold=0.7]",
    "dense",
    "auto",
)
"""The methods whose credit quality the documentation tables (every method, ``overlap`` at three thresholds)."""
_FIXTURE_FIELDS = {"text": "a string", "style": "a string", "scope": "a string", "sources_truth": "a list of ids"}


@dataclass(frozen=True)
class LabelledMemory:
    """A memory whose sources are known: ``truth``, the turns it came from; ``sources``, what it declares."""

    text: str
    style: str
    scope: str
    truth: tuple[str, ...]
    sources: tuple[str, ...] | None = None


def _ids(path: str, line: int, name: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
        raise InputError(path, line, f"{name}: expected a list of turn ids (strings); found {quote(value, 60)}")
    return tuple(value)


def read_labelled_memories(path: str | PathLike[str]) -> tuple[LabelledMemory, ...]:
    """The labelled memories of a JSON-lines file: ``text``, ``style``, ``scope``, ``sources_truth``, ``sources``.

    ``sources_truth`` is the list of turn ids a memory came from (empty for
    a memory no turn gave); ``sources``, optional, what the memory declares.

    Raises:
        InputError: a line that is not an object with those fields of those types, naming the file and line.
    """
    text = decode_utf8(path, read_bytes(path, "labelled memories file"))
    out = []
    for line, record in json_lines(path, text):
        if not isinstance(record, dict):
            raise InputError(
                path, line, f"expected an object with {', '.join(_FIXTURE_FIELDS)}; found {quote(record, 60)}"
            )
        for name, kind in _FIXTURE_FIELDS.items():
            value = record.get(name)
            if name != "sources_truth" and not isinstance(value, str):
                raise InputError(path, line, f"{name}: expected {kind}; found {quote(value, 60)}")
        sources = record.get("sources")
        out.append(
            LabelledMemory(
                record["text"],
                record["style"],
                record["scope"],
                _ids(str(path), line, "sources_truth", record.get("sources_truth")),
                None if sources is None else _ids(str(path), line, "sources", sources),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class StyleQuality:
    """One style's counts: memories, turns credited, of them false, true sources, of them credited, memories whose
    every source was credited (``complete``; a memory with no source is complete when credited to nothing)."""

    style: str
    memories: int
    credits: int
    false_credits: int
    sources: int
    found: int
    complete: int


@dataclass(frozen=True)
class CreditQuality:
    """How one attribution method credits the labelled memories: per style, and for those declaring sources.

    ``precision = sum(credits - false_credits) / sum(credits)`` (1.0 when
    nothing is credited), ``recall = sum(found) / sum(sources)``, summed over
    the styles; ``false_share = 1 - precision``.
    """

    method: str
    styles: tuple[StyleQuality, ...]
    declared: int
    declared_complete: int

    def _sum(self, name: str, styles: Iterable[str] | None = None) -> int:
        wanted = None if styles is None else set(styles)
        return sum(getattr(s, name) for s in self.styles if wanted is None or s.style in wanted)

    @property
    def credits(self) -> int:
        return self._sum("credits")

    @property
    def false_credits(self) -> int:
        return self._sum("false_credits")

    @property
    def precision(self) -> float:
        return 1 - self.false_share

    @property
    def false_share(self) -> float:
        return self.false_credits / self.credits if self.credits else 0.0

    @property
    def recall(self) -> float:
        sources = self._sum("sources")
        return self._sum("found") / sources if sources else 0.0

    def complete_share(self, styles: Iterable[str] = WORD_KEEPING) -> float:
        """Share of the memories of ``styles`` whose every source was credited (0.0 when there is none)."""
        styles = tuple(styles)
        memories = self._sum("memories", styles)
        return self._sum("complete", styles) / memories if memories else 0.0

    @property
    def declared_share(self) -> float:
        """Share of the memories declaring sources whose every source was credited (1.0 when none declares)."""
        return self.declared_complete / self.declared if self.declared else 1.0


def credit_quality(
    method: str | Spec,
    memories: Iterable[LabelledMemory],
    collection: Collection,
    *,
    attributor: Attributor | None = None,
) -> CreditQuality:
    """Attribute each labelled memory by ``method`` (its declared ``sources`` as the replay would pass them) and
    count, per style, the turns credited against the turns it came from.

    Raises:
        ParameterError: a bad method; a labelled memory whose scope is not one of the collection's, or whose
            truth or sources name a turn outside its scope.
    """
    spec = parse_attribution(method)
    helper = attributor or Attributor(collection)
    counts: dict[str, list[int]] = {}
    declared = declared_complete = 0
    for labelled in memories:
        _check_labelled(helper, labelled)
        memory = Memory(labelled.text, sources=labelled.sources)
        got = set(helper.attribute_turns(spec, labelled.scope, memory)[0])
        truth = set(labelled.truth)
        complete = truth <= got and (bool(truth) or not got)
        row = counts.setdefault(labelled.style, [0] * 6)
        for i, value in enumerate((1, len(got), len(got - truth), len(truth), len(got & truth), complete)):
            row[i] += value
        if labelled.sources is not None:
            declared += 1
            declared_complete += complete
    styles = tuple(StyleQuality(style, *row) for style, row in counts.items())
    return CreditQuality(spec.text(), styles, declared, declared_complete)


def _check_labelled(helper: Attributor, labelled: LabelledMemory) -> None:
    if labelled.scope not in helper.turns:
        raise ParameterError(
            "labelled memory scope",
            labelled.scope,
            "is not a scope of the collection",
            "choose from: " + ", ".join(sorted(str(s) for s in helper.turns)),
        )
    for name, ids in (("sources_truth", labelled.truth), ("sources", labelled.sources or ())):
        for turn in ids:
            if helper.index.scope_of.get(turn, _NO_SCOPE) != labelled.scope:
                raise ParameterError(
                    f"labelled memory {name}",
                    turn,
                    f"is not a turn of scope {quote(labelled.scope, 60)}",
                    "name turns of the memory's own scope by their ids",
                )


_NO_SCOPE = object()


def credit_quality_table(qualities: Iterable[CreditQuality]) -> str:
    """Markdown: per method the credits, false credits, precision, recall and complete shares; then per style."""
    qualities = tuple(qualities)
    lines = [
        "| method | credits | false credits | precision | recall | word-keeping memories complete | "
        "declaring memories complete |",
        "|---|---|---|---|---|---|---|",
    ]
    for q in qualities:
        lines.append(
            f"| `{q.method}` | {q.credits} | {q.false_credits} | {q.precision:.3f} | {q.recall:.3f} | "
            f"{q.complete_share():.3f} | {q.declared_share:.3f} |"
        )
    styles = list(dict.fromkeys(s.style for q in qualities for s in q.styles))
    lines += ["", "| method | " + " | ".join(styles) + " |", "|---|" + "---|" * len(styles)]
    for q in qualities:
        by_style = {s.style: s for s in q.styles}
        cells = []
        for style in styles:
            s = by_style[style]
            cells.append(f"{s.complete}/{s.memories}" + (f" ({s.false_credits} false)" if s.false_credits else ""))
        lines.append(f"| `{q.method}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)
