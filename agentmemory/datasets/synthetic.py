"""Seeded synthetic collections: small stores whose difficulty is set by parameters.

:func:`synthetic_collection` builds a :class:`~agentmemory.collection.Collection`
from ``numpy.random.default_rng(seed)`` alone, so the same arguments give the
same collection (on the same numpy version; numpy does not promise the same
random stream across versions, and the collection's digest would show a
change).  The model, step by step:

1. **Vocabulary.**  ``vocabulary`` words ``w000, w001, ...`` are shuffled and
   cut into ``n_tags`` topic lexicons of ``L = vocabulary // (n_tags + 1)``
   words each; the remaining words (at least ``L``) are background words
   any entry may use.  Tag ``j`` is named ``topic<j>`` and stands for topic ``j``.
2. **Queries** ``q1 .. q<n_queries>``: each has 1 or 2 topics (its ``tags``)
   and a text of 2 to 4 distinct words drawn from its topics' lexicons.
3. **Relevant entries**: each query gets between ``relevant_per_query[0]``
   and ``relevant_per_query[1]`` entries of its own (grade 1; an entry is
   relevant to one query only).  Each carries one of the query's topics
   among its ``tags_per_entry`` tags.  With probability ``1 - mismatch_rate``
   its text contains 1 or 2 of the query's words; with probability
   ``mismatch_rate`` it is a **vocabulary mismatch**: it shares tags with the
   query but none of its words (its text avoids every query word), so a
   word-matching retriever such as BM25 cannot find it.
4. **Distractors**: the other entries, with random topics as tags.
5. Entry texts have ``entry_length`` words: the shared query words, then
   words drawn with replacement from the entry's topic lexicons and the
   background (minus the query's words for a mismatch), shuffled.  Distractors
   may contain query words by chance, as in real stores.
6. Entries are shuffled and numbered ``e00 ..`` in their final order (so
   relevance does not follow the id order that breaks ties); ``created_at``
   is 2026-01-01T00:00Z plus one minute per entry; provenance source is
   ``"synthetic"``.  Metadata of a relevant entry records
   ``{"relevant_to": query id, "mismatch": bool}``; distractors have none.

Ranges such as ``relevant_per_query=(1, 2)`` are inclusive at both ends.

There are no input files: :attr:`Collection.files` maps ``"synthetic.json"``
to the sha256 of the collection's canonical JSON serialisation (generator
version, parameters, entries, queries and qrels, keys sorted, no spaces;
entries and queries in the lines :func:`~agentmemory.datasets.beir.write_collection`
writes), so :attr:`Collection.digest` changes whenever the content does.
``write_collection`` writes a real BEIR-style folder that
:func:`~agentmemory.datasets.beir.load_collection` (and ``load``) reads back.

**Not a registered format.**  A format in :data:`agentmemory.datasets.FORMATS`
says how to *read a path*; this generator reads nothing: its input is a seed
and shape parameters (tuples and floats, not the one-line option types a
format declares), and its ``files`` entry is a content hash, not a file.
Registering it would need a fake path argument and would offer
``load("anything", format="synthetic")``.  To evaluate a synthetic
collection from the command line, write it with ``write_collection`` and
pass that folder.  :data:`GENERATOR` (``"agentmemory.synthetic/1"``) and the
entries' provenance actor ``"agentmemory.synthetic"`` name the generating
model, not this module's path: they are part of every synthetic digest, so
they stay as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import numpy as np

from agentmemory.collection import Collection, corpus_line, query_line
from agentmemory.errors import ParameterError, check_positive_int, check_seed
from agentmemory.records import MemoryEntry, Provenance, Query

__all__ = ["GENERATOR", "synthetic_collection"]

GENERATOR = "agentmemory.synthetic/1"
"""Name and version of the generating model; bump it when the model changes."""

_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _check_range(name: str, value: object, minimum: int) -> tuple[int, int]:
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )
    if not ok or not minimum <= value[0] <= value[1]:  # type: ignore[index]
        raise ParameterError(
            name, value, "is not a range (low, high)", f"give two integers with {minimum} <= low <= high, e.g. (1, 3)"
        )
    return int(value[0]), int(value[1])  # type: ignore[index]


def _names(prefix: str, count: int) -> list[str]:
    width = len(str(max(count - 1, 0)))
    return [f"{prefix}{i:0{width}d}" for i in range(count)]


def synthetic_collection(
    *,
    seed: int,
    n_entries: int = 16,
    n_queries: int = 5,
    n_tags: int = 12,
    vocabulary: int = 200,
    mismatch_rate: float = 0.2,
    relevant_per_query: tuple[int, int] = (1, 2),
    tags_per_entry: tuple[int, int] = (1, 3),
    entry_length: tuple[int, int] = (8, 20),
) -> Collection:
    """A seeded synthetic collection (the model is in the module docstring).

    The collection is named ``f"synthetic-seed{seed}-n{n_entries}"``; every
    query is judged; qrels hold grade 1 for each relevant entry.

    Raises:
        ParameterError: a count is not a positive integer; ``mismatch_rate``
            is not in [0, 1]; a range is not ``(low, high)`` with
            ``1 <= low <= high`` (``entry_length`` low >= 2);
            ``tags_per_entry`` high exceeds ``n_tags``; ``vocabulary`` is below
            ``2 * (n_tags + 1)``; or ``n_entries`` cannot hold
            ``n_queries * relevant_per_query[1]`` relevant entries.
    """
    params = _checked(
        seed=seed,
        n_entries=n_entries,
        n_queries=n_queries,
        n_tags=n_tags,
        vocabulary=vocabulary,
        mismatch_rate=mismatch_rate,
        relevant_per_query=relevant_per_query,
        tags_per_entry=tags_per_entry,
        entry_length=entry_length,
    )
    model = _Model(params)
    queries, drafts, owners = model.queries_and_relevant()
    while len(drafts) < params.n_entries:
        topics = model.entry_topics(None)
        drafts.append((topics, model.text_of([], topics, set()), {}))
        owners.append(None)
    entries, qrels = _placed(model, params, queries, drafts, owners)
    frozen_qrels = MappingProxyType({q: MappingProxyType(dict(sorted(d.items()))) for q, d in qrels.items()})
    return Collection(
        name=f"synthetic-seed{params.seed}-n{params.n_entries}",
        entries=tuple(entries),
        queries=tuple(queries),
        qrels=frozen_qrels,
        files=MappingProxyType({"synthetic.json": _fingerprint(params, entries, queries, frozen_qrels)}),
    )


@dataclass(frozen=True, slots=True)
class _Params:
    """:func:`synthetic_collection`'s parameters, checked (ranges as ``(low, high)`` integers)."""

    seed: int
    n_entries: int
    n_queries: int
    n_tags: int
    vocabulary: int
    mismatch_rate: float
    relevant_per_query: tuple[int, int]
    tags_per_entry: tuple[int, int]
    entry_length: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """The parameters as the fingerprint records them (ranges as lists)."""
        return {
            "seed": self.seed,
            "n_entries": self.n_entries,
            "n_queries": self.n_queries,
            "n_tags": self.n_tags,
            "vocabulary": self.vocabulary,
            "mismatch_rate": self.mismatch_rate,
            "relevant_per_query": list(self.relevant_per_query),
            "tags_per_entry": list(self.tags_per_entry),
            "entry_length": list(self.entry_length),
        }


def _checked(
    *,
    seed: int,
    n_entries: int,
    n_queries: int,
    n_tags: int,
    vocabulary: int,
    mismatch_rate: float,
    relevant_per_query: tuple[int, int],
    tags_per_entry: tuple[int, int],
    entry_length: tuple[int, int],
) -> _Params:
    """The parameters of :func:`synthetic_collection`, checked in order (see its Raises)."""
    seed = check_seed(seed)
    n_entries = check_positive_int("n_entries", n_entries)
    n_queries = check_positive_int("n_queries", n_queries)
    n_tags = check_positive_int("n_tags", n_tags)
    vocabulary = check_positive_int("vocabulary", vocabulary)
    if isinstance(mismatch_rate, bool) or not isinstance(mismatch_rate, (int, float)) or not 0 <= mismatch_rate <= 1:
        raise ParameterError("mismatch_rate", mismatch_rate, "is not a probability", "use a number in [0, 1]")
    relevant = _check_range("relevant_per_query", relevant_per_query, 1)
    tag_range = _check_range("tags_per_entry", tags_per_entry, 1)
    length = _check_range("entry_length", entry_length, 2)
    if tag_range[1] > n_tags:
        raise ParameterError(
            "tags_per_entry", tags_per_entry, f"asks for more tags than n_tags={n_tags}", "keep its high end <= n_tags"
        )
    if vocabulary < 2 * (n_tags + 1):
        raise ParameterError(
            "vocabulary",
            vocabulary,
            f"is too small for n_tags={n_tags}",
            f"use at least 2 * (n_tags + 1) = {2 * (n_tags + 1)} words",
        )
    if n_entries < n_queries * relevant[1]:
        raise ParameterError(
            "n_entries",
            n_entries,
            f"cannot hold {n_queries} queries x up to {relevant[1]} relevant entries",
            f"use n_entries >= {n_queries * relevant[1]}, or fewer queries or relevant entries",
        )
    return _Params(seed, n_entries, n_queries, n_tags, vocabulary, float(mismatch_rate), relevant, tag_range, length)


_Draft = tuple[list[int], str, dict[str, Any]]  # an entry before it is placed: (topics, text, metadata)


class _Model:
    """The generative model of the module docstring, drawing from ``default_rng(seed)`` in a fixed order."""

    def __init__(self, params: _Params) -> None:
        self.params = params
        self.rng = np.random.default_rng(params.seed)
        self.words = _names("w", params.vocabulary)
        self.tags = _names("topic", params.n_tags)
        shuffled = self.rng.permutation(params.vocabulary)
        size = params.vocabulary // (params.n_tags + 1)
        self.lexicons = [shuffled[t * size : (t + 1) * size] for t in range(params.n_tags)]
        self.background = shuffled[params.n_tags * size :]

    def pool(self, topics: list[int], exclude: set[int]) -> np.ndarray:
        """The words an entry on ``topics`` draws its filler from: their lexicons and the background."""
        candidates = np.concatenate([*(self.lexicons[t] for t in topics), self.background])
        return np.array([w for w in candidates.tolist() if w not in exclude], dtype=np.int64)

    def text_of(self, shared: list[int], topics: list[int], exclude: set[int]) -> str:
        """An entry's text: ``shared`` words (cut to its length) and filler from :meth:`pool`, shuffled."""
        len_lo, len_hi = self.params.entry_length
        rng = self.rng
        length = int(rng.integers(len_lo, len_hi + 1))
        shared = shared[:length]
        filler = rng.choice(self.pool(topics, exclude), size=length - len(shared), replace=True).tolist()
        body = [int(w) for w in rng.permutation(np.array(shared + filler, dtype=np.int64))]
        return " ".join(self.words[w] for w in body)

    def entry_topics(self, required: int | None) -> list[int]:
        """An entry's topics, sorted: ``tags_per_entry`` of them, ``required`` among them when given."""
        tag_lo, tag_hi = self.params.tags_per_entry
        n_tags = self.params.n_tags
        rng = self.rng
        count = int(rng.integers(tag_lo, tag_hi + 1))
        if required is None:
            return sorted(int(t) for t in rng.choice(n_tags, size=count, replace=False))
        others = [t for t in range(n_tags) if t != required]
        extra: list[int] = (
            rng.choice(np.array(others, dtype=np.int64), size=count - 1, replace=False).tolist() if count > 1 else []
        )
        return sorted([required, *(int(t) for t in extra)])

    def queries_and_relevant(self) -> tuple[list[Query], list[_Draft], list[str | None]]:
        """Every query, and the drafts of its relevant entries with the query each is relevant to."""
        params, rng, words, tags = self.params, self.rng, self.words, self.tags
        rel_lo, rel_hi = params.relevant_per_query
        queries: list[Query] = []
        drafts: list[_Draft] = []
        owners: list[str | None] = []
        for number in range(1, params.n_queries + 1):
            qid = f"q{number}"
            q_topics = sorted(
                int(t)
                for t in rng.choice(params.n_tags, size=int(rng.integers(1, min(2, params.n_tags) + 1)), replace=False)
            )
            lexicon = np.concatenate([self.lexicons[t] for t in q_topics])
            q_words = [
                int(w) for w in rng.choice(lexicon, size=min(int(rng.integers(2, 5)), len(lexicon)), replace=False)
            ]
            queries.append(
                Query(id=qid, text=" ".join(words[w] for w in q_words), tags=tuple(tags[t] for t in q_topics))
            )
            for _ in range(int(rng.integers(rel_lo, rel_hi + 1))):
                topics = self.entry_topics(int(rng.choice(q_topics)))
                mismatch = bool(rng.random() < params.mismatch_rate)
                if mismatch:
                    text = self.text_of([], topics, set(q_words))
                else:
                    n_shared = int(rng.integers(1, min(2, len(q_words)) + 1))
                    shared = [int(w) for w in rng.choice(np.array(q_words), size=n_shared, replace=False)]
                    text = self.text_of(shared, topics, set())
                drafts.append((topics, text, {"relevant_to": qid, "mismatch": mismatch}))
                owners.append(qid)
        return queries, drafts, owners


def _placed(
    model: _Model, params: _Params, queries: list[Query], drafts: list[_Draft], owners: list[str | None]
) -> tuple[list[MemoryEntry], dict[str, dict[str, int]]]:
    """The drafts in a random order as entries ``e0 ..``, a minute apart, and the judgments naming them."""
    order = model.rng.permutation(params.n_entries).tolist()
    ids = _names("e", params.n_entries)
    entries: list[MemoryEntry] = []
    qrels: dict[str, dict[str, int]] = {q.id: {} for q in queries}
    for position, draft_index in enumerate(order):
        topics, text, metadata = drafts[draft_index]
        entry_id = ids[position]
        entries.append(
            MemoryEntry(
                id=entry_id,
                text=text,
                tags=tuple(model.tags[t] for t in topics),
                created_at=_START + timedelta(minutes=position),
                provenance=Provenance(source="synthetic", ref=f"seed{params.seed}", actor="agentmemory.synthetic"),
                metadata=MappingProxyType(metadata),
            )
        )
        owner = owners[draft_index]
        if owner is not None:
            qrels[owner][entry_id] = 1
    return entries, qrels


def _fingerprint(
    params: _Params, entries: list[MemoryEntry], queries: list[Query], qrels: Mapping[str, Mapping[str, int]]
) -> str:
    """The sha256 of the collection's canonical JSON (generator, parameters, corpus, queries, judgments)."""
    canonical = json.dumps(
        {
            "generator": GENERATOR,
            "params": params.to_dict(),
            "corpus": [corpus_line(e) for e in entries],
            "queries": [query_line(q) for q in queries],
            "qrels": {q: dict(d) for q, d in qrels.items()},
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
