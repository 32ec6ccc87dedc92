"""The collection record every format produces: entries, queries, judgments and where they came from.

:class:`Collection` is the one typed record the readers of
:mod:`agentmemory.datasets` build (a BEIR-style folder, LoCoMo, a seeded
synthetic store, or a format a plugin registers); everything downstream
(evaluation, artifacts, reports) reads only this record.  It lives below the
formats, so importing it loads none of them.  :meth:`Collection.check` is what
:func:`agentmemory.datasets.load` holds every format's result to;
:func:`collection_summary` is its JSON-ready description for artifacts and
:func:`default_collection_path` finds the shipped fixture.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.collection.columns import Entries
from agentmemory.errors import InputError, MissingFileError, ParameterError, quote, shorten
from agentmemory.files.trec import NO_JUDGMENTS
from agentmemory.records import MemoryEntry, Query

__all__ = ["Collection", "collection_summary", "default_collection_path", "require_judgments"]


# -- judgment patches: the records a patched collection carries (read by agentmemory.datasets.judgment_patch)
REMOVE = "remove"
"""The ``grade`` that drops a judgment."""

ANSWER, EXCLUDE, EVIDENCE = "answer", "exclude", "evidence"
KEY_KINDS: tuple[str, ...] = (ANSWER, EXCLUDE, EVIDENCE)
"""The kinds of :class:`KeyCorrection`: a gold answer replaced, a question excluded, its evidence replaced."""

Judgments = tuple[tuple[str, int], ...]
"""A question's judgments in order, ``((entry_id, grade), ...)``."""


class _ScopeIds(Mapping[str | None, frozenset[str]]):
    """Scope -> the ids of its entries, each set made when asked (the last one kept): the sets of every scope at
    once held as much as the ids themselves (250 MB for LongMemEval-M's 2,500,000 turns in 500 scopes), and an
    evaluation asks for one scope at a time, query after query."""

    __slots__ = ("_ids", "_last", "_rows")

    def __init__(self, ids: Sequence[str], rows: Mapping[str | None, Any]) -> None:
        self._ids = ids
        self._rows = rows  # scope -> its rows (an int64 array)
        self._last: tuple[str | None, frozenset[str]] | None = None

    def __getitem__(self, scope: str | None) -> frozenset[str]:
        last = self._last
        if last is not None and last[0] == scope:
            return last[1]
        found = frozenset(map(self._ids.__getitem__, self._rows[scope].tolist()))
        self._last = (scope, found)
        return found

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, scope: object) -> bool:
        return scope in self._rows


@dataclass(frozen=True)
class Correction:
    """One judgment a patch changes: the judgment of ``entry_id`` for ``query_id`` goes from ``before`` to ``after``.

    ``before`` is ``None`` when the pair was not judged (the line adds it),
    ``after`` ``None`` when the line removes it; ``line`` is its line in the
    file.  A grade line is one correction; an evidence or exclusion line
    (:class:`KeyCorrection`) is one per judgment it changes, each with the
    line and reason of that line.
    """

    line: int
    query_id: str
    entry_id: str
    before: int | None
    after: int | None
    reason: str

    @property
    def kind(self) -> str:
        """``"removed"``, ``"added"`` or ``"regraded"``."""
        return "removed" if self.after is None else "added" if self.before is None else "regraded"

    def to_dict(self) -> dict[str, Any]:
        """``{"line", "query_id", "entry_id", "from", "to", "reason"}`` (``from``/``to`` ``null`` when absent)."""
        return {
            "line": self.line,
            "query_id": self.query_id,
            "entry_id": self.entry_id,
            "from": self.before,
            "to": self.after,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class KeyCorrection:
    """One line of a patch that corrects a question's answer key: its gold answer, its place in the means, its evidence.

    ``kind`` (:data:`KEY_KINDS`):

    * ``"answer"``: ``before`` and ``after`` are the gold answer
      (``query.metadata["answer"]``), the one read and the corrected one;
    * ``"exclude"``: the question leaves every mean under the corrected key
      (its judgments are removed: it is unjudged); ``before`` and ``after`` are ``None``;
    * ``"evidence"``: ``before`` and ``after`` are the question's judgments
      (:data:`Judgments`; the new ones each of grade 1).  ``before`` is
      ``None`` for a question the loader left out of retrieval scoring (one of
      :attr:`Collection.left_out_queries`, taken from an errata file): the
      correction is recorded and counted, and judges nothing.

    ``line`` is its line in the file (an errata file: the line its entry starts on).
    """

    line: int
    query_id: str
    kind: str
    before: Any
    after: Any
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"line", "query_id", "kind", "from", "to", "reason"}``: judgments as ``{entry_id: grade}`` objects."""
        before, after = self.before, self.after
        if self.kind == EVIDENCE:
            before, after = (None if before is None else dict(before)), dict(after)
        return {
            "line": self.line,
            "query_id": self.query_id,
            "kind": self.kind,
            "from": before,
            "to": after,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class JudgmentPatch:
    """A checked patch: the file's name (no folder) and sha256, its judgment corrections and its answer-key ones.

    ``corrections`` are the judgments changed, in file order (those of an
    evidence or exclusion line included, see :class:`Correction`);
    ``answer_key`` the lines that correct a question's answer key
    (:class:`KeyCorrection`), in file order.  ``originals`` holds, for every
    question whose judgments change, its position among the collection's
    judged questions (``None``: it was unjudged) and its judgments as read,
    so :meth:`revert` gives them back exactly, order included
    (:func:`~agentmemory.datasets.judgment_patch.read_judgment_patch` fills it).

    Raises:
        ParameterError: a correction changes the judgments of a question ``originals`` lacks.
    """

    name: str
    sha256: str
    corrections: tuple[Correction, ...]
    answer_key: tuple[KeyCorrection, ...] = ()
    originals: Mapping[str, tuple[int | None, Mapping[str, int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        replaced = [k.query_id for k in self.answer_key if k.kind == EVIDENCE and k.before is not None]
        changed = [c.query_id for c in self.corrections] + replaced
        lacking = next((q for q in changed if q not in self.originals), None)
        if lacking is not None:
            raise ParameterError(
                "originals",
                dict(self.originals),
                f"lacks the judgments query {quote(lacking)} had before the patch",
                "read patches with agentmemory.datasets.judgment_patch.read_judgment_patch",
            )

    def counts(self) -> dict[str, int]:
        """``{"changed", "removed", "regraded", "added", "queries"}``: judgments changed, by kind, and queries touched;
        with answer-key corrections also ``answers`` (replaced), ``excluded`` and ``evidence`` (questions)."""
        kinds = [c.kind for c in self.corrections]
        counts = {
            "changed": len(self.corrections),
            "removed": kinds.count("removed"),
            "regraded": kinds.count("regraded"),
            "added": kinds.count("added"),
            "queries": len({c.query_id for c in self.corrections}),
        }
        if self.answer_key:
            key = [k.kind for k in self.answer_key]
            counts.update(answers=key.count(ANSWER), excluded=key.count(EXCLUDE), evidence=key.count(EVIDENCE))
        return counts

    def summary(self) -> str:
        """``"3 judgments changed (1 removed, 1 regraded, 1 added) on 2 queries by patch.jsonl"``; answer-key
        corrections follow, those that occur: ``"..., 2 answers replaced, 1 question excluded, 3 evidence lists
        replaced (1 not judged: left out by the loader) by errata.json"`` (the judgments only when one changes)."""
        n = self.counts()
        parts = []
        if n["changed"] or not self.answer_key:
            judgments = "judgment" if n["changed"] == 1 else "judgments"
            queries = "query" if n["queries"] == 1 else "queries"
            parts.append(
                f"{n['changed']} {judgments} changed ({n['removed']} removed, {n['regraded']} regraded, "
                f"{n['added']} added) on {n['queries']} {queries}"
            )
        if self.answer_key:
            unjudged = sum(k.kind == EVIDENCE and k.before is None for k in self.answer_key)
            shown = [
                (n["answers"], "answer replaced", "answers replaced"),
                (n["excluded"], "question excluded", "questions excluded"),
                (n["evidence"], "evidence list replaced", "evidence lists replaced"),
            ]
            parts += [f"{count} {one if count == 1 else many}" for count, one, many in shown if count]
            if unjudged:
                parts[-1] += f" ({unjudged} not judged: left out by the loader)"
        return f"{', '.join(parts)} by {self.name}"

    @property
    def excluded(self) -> tuple[str, ...]:
        """The ids of the questions the patch excludes, in file order: out of every mean under the corrected key."""
        return tuple(k.query_id for k in self.answer_key if k.kind == EXCLUDE)

    @property
    def answers(self) -> dict[str, Any]:
        """``{query_id: corrected gold answer}`` for every answer the patch replaces, in file order."""
        return {k.query_id: k.after for k in self.answer_key if k.kind == ANSWER}

    def apply(self, collection: Collection) -> Collection:
        """``collection`` with the corrected judgments and answers, carrying this patch (``judgment_patch``).

        A question whose every judgment goes (an exclusion, an empty evidence
        list, every judgment removed) is unjudged: left out of every mean.  A
        replaced answer is the question's ``metadata["answer"]`` (in
        ``queries`` or ``left_out_queries``).
        """
        judged = {q: dict(collection.qrels.get(q, {})) for q in self.originals}
        for c in self.corrections:
            _set(judged, c.query_id, c.entry_id, c.after)
        for k in self.answer_key:
            if k.kind == EVIDENCE and k.before is not None:
                judged[k.query_id] = dict(k.after)  # the new judgments in their order
        qrels = {q: judged.pop(q, j) for q, j in collection.qrels.items()}
        qrels.update(judged)  # questions unjudged before the patch
        answers = self.answers
        return dataclasses.replace(
            collection,
            queries=_answered(collection.queries, answers),
            left_out_queries=_answered(collection.left_out_queries, answers),
            qrels=MappingProxyType(_kept(qrels)),
            judgment_patch=self,
        )

    def revert(self, collection: Collection) -> Collection:
        """The collection :meth:`apply` was given back, from the patched one: its own judgments (each question's in
        their order, the questions in theirs), answers and queries, without the patch."""
        untouched = [(q, j) for q, j in collection.qrels.items() if q not in self.originals]
        restored = sorted((p, q, j) for q, (p, j) in self.originals.items() if p is not None)
        for position, query_id, judgments in restored:
            untouched.insert(position, (query_id, judgments))
        answers = {k.query_id: k.before for k in self.answer_key if k.kind == ANSWER}
        return dataclasses.replace(
            collection,
            queries=_answered(collection.queries, answers),
            left_out_queries=_answered(collection.left_out_queries, answers),
            qrels=MappingProxyType(dict(untouched)),
            judgment_patch=None,
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"file", "sha256", "changed", "removed", "regraded", "added", "queries", "corrections"}``; with
        answer-key corrections also their counts and ``answer_key`` (each :meth:`KeyCorrection.to_dict`)."""
        data = {"file": self.name, "sha256": self.sha256, **self.counts()}
        data["corrections"] = [c.to_dict() for c in self.corrections]
        if self.answer_key:
            data["answer_key"] = [k.to_dict() for k in self.answer_key]
        return data


def _set(qrels: dict[str, dict[str, int]], query_id: str, entry_id: str, grade: int | None) -> None:
    judged = qrels.setdefault(query_id, {})
    if grade is None:
        judged.pop(entry_id, None)
    else:
        judged[entry_id] = grade


def _kept(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, Mapping[str, int]]:
    """The judgments in their order, without the queries left with none (those are unjudged now)."""
    return {q: judged for q, judged in qrels.items() if judged}


def _answered(queries: Iterable[Query], answers: Mapping[str, Any]) -> tuple[Query, ...]:
    """``queries`` in order, each named in ``answers`` with that gold answer (``metadata["answer"]``)."""
    if not answers:
        return tuple(queries)
    return tuple(
        q
        if q.id not in answers
        else dataclasses.replace(q, metadata=MappingProxyType({**q.metadata, ANSWER: answers[q.id]}))
        for q in queries
    )


@dataclass(frozen=True)
class Collection:
    """Entries, queries and relevance judgments, plus the hashes of the files they came from.

    ``qrels[query_id][entry_id]`` is the judged relevance (an int; >= 1 is relevant).
    ``files`` maps each input file's path relative to the collection folder
    (POSIX form) to its sha256.  ``skipped`` lists ``(query_id, reason)`` for
    queries a loader left out (malformed evidence, say) and ``repairs``
    ``(query_id, what was changed)`` for those it repaired on request; both
    are reported in artifacts and reports, never dropped silently.
    ``headline_excludes`` names query groups left out of the headline means
    and shown separately (LoCoMo's adversarial category 5, as most published
    numbers do); their queries are still evaluated and appear in the group means.
    ``notes`` lists ``(query_id, remark)`` for what a loader noticed about a
    query it kept without changing anything (LongMemEval: judgments that
    disagree with the file's own ``answer_session_ids``); ``settings`` records,
    for the artifact, how the loader built the entries and judgments when that
    changes the numbers (LongMemEval: ``granularity`` and ``indexed_turns``).
    Both are reported beside ``skipped`` and ``repairs``.  Code reads what one
    entry is from ``granularity``, never from ``settings``.
    ``granularity`` is what one entry is (``"turn"``, ``"session"``) when the
    format declares it (LoCoMo and LongMemEval at either granularity), else
    ``None``: the definitions card states it and the claims check compares it.
    ``turns`` maps an entry id to the conversation turns the entry holds, in
    order, each as a :class:`~agentmemory.records.MemoryEntry` (its own id,
    the turn's text, role as ``provenance.actor``, ``created_at``, ``scope``),
    when entries are coarser than turns (LongMemEval at session granularity);
    it is empty when every entry is one turn.  Memory systems ingest turns
    (:mod:`agentmemory.systems`).
    ``session_of`` maps an entry id to the id of the conversation session it
    belongs to: the format's rule, which the ``sess.`` measures
    (:mod:`agentmemory.metrics.longmemeval_official`) use to score a turn run
    at session level (LongMemEval: the id without its last ``_`` part;
    LoCoMo: ``<sample_id>/D3:7 -> <sample_id>/S3``).  ``None`` when the
    format declares none; the ``sess.`` measures then use LongMemEval's rule.
    ``format`` names the format that read the collection and ``format_options``
    every option it read it with, defaults included (both set by the
    format's reader, or by :func:`agentmemory.datasets.load` for a reader
    that does not; ``None`` and empty for a collection made otherwise): the definitions card states them (:mod:`agentmemory.analysis.card`).
    ``judgment_patch`` is the patch applied to the judgments, when one was
    (:meth:`agentmemory.datasets.judgment_patch.JudgmentPatch.apply`); it may
    correct the answer key too (gold answers, exclusions, evidence).
    ``left_out_queries`` are the questions a loader left out of retrieval
    scoring (each also in ``skipped``) for a reason that does not stop an
    answer to it from being scored (missing or malformed evidence, an
    abstention question), as :class:`~agentmemory.records.Query` records like
    the kept ones (``metadata`` with the gold ``answer``), in file order; no
    artifact shows them.
    """

    name: str
    entries: Sequence[MemoryEntry]
    queries: tuple[Query, ...]
    qrels: Mapping[str, Mapping[str, int]]
    files: Mapping[str, str]
    skipped: tuple[tuple[str, str], ...] = ()
    repairs: tuple[tuple[str, str], ...] = ()
    headline_excludes: tuple[str, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    granularity: str | None = None
    turns: Mapping[str, tuple[MemoryEntry, ...]] = field(default_factory=dict, compare=False, repr=False)
    session_of: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    format: str | None = field(default=None, compare=False)
    format_options: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    judgment_patch: JudgmentPatch | None = field(default=None, compare=False, repr=False)
    left_out_queries: tuple[Query, ...] = field(default=(), compare=False, repr=False)

    @property
    def digest(self) -> str:
        """sha256 over the sorted ``name  sha256`` lines of the input files."""
        text = "".join(f"{name}  {sha}\n" for name, sha in sorted(self.files.items()))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @cached_property
    def scope_ids(self) -> Mapping[str | None, frozenset[str]]:
        """Each scope's entry ids (``None``: entries without a scope), computed once per collection (for columns
        of many scopes, each scope's set when asked: :class:`_ScopeIds`)."""
        entries = self.entries
        if isinstance(entries, Entries):  # from the columns: no record made
            ids = entries.ids
            rows = entries.scope_rows()
            if len(rows) == 1:
                return {scope: frozenset(ids) for scope in rows}
            return _ScopeIds(ids, rows)
        scopes: dict[str | None, set[str]] = {}
        for entry in entries:
            scopes.setdefault(entry.scope, set()).add(entry.id)
        return {scope: frozenset(ids) for scope, ids in scopes.items()}

    @property
    def judged_queries(self) -> tuple[Query, ...]:
        """Queries with at least one judgment line (in file order)."""
        return tuple(q for q in self.queries if q.id in self.qrels)

    @property
    def headline_queries(self) -> tuple[Query, ...]:
        """The judged queries behind the headline means: those whose group is not in ``headline_excludes``."""
        excluded = self.headline_excludes
        return tuple(q for q in self.judged_queries if q.group not in excluded)

    @property
    def unjudged_query_ids(self) -> tuple[str, ...]:
        """Ids of queries with no judgment at all (left out of every mean)."""
        return tuple(q.id for q in self.queries if q.id not in self.qrels)

    @property
    def excluded_query_ids(self) -> tuple[str, ...]:
        """Ids of the questions the judgment patch excludes (in its order): out of every mean, answers' included."""
        return () if self.judgment_patch is None else self.judgment_patch.excluded

    def relevant(self, query_id: str) -> tuple[str, ...]:
        """Ids judged relevant (grade >= 1) for ``query_id``, sorted."""
        return tuple(sorted(d for d, g in self.qrels.get(query_id, {}).items() if g >= 1))

    def check(self) -> Collection:
        """This collection, once its parts agree; what :func:`agentmemory.datasets.load` holds every format's
        result to, a plugin's included (plugins are untrusted).

        Refused, each in one line naming the format that read the collection
        (``format``; the collection's ``name`` when none is recorded) and the
        bad value: two entries with one id; two queries with one id; a query
        whose scope no entry has (it could retrieve nothing); a judgment of a
        query the collection does not hold (kept or left out); a judgment
        naming no entry (relevant but unreachable).

        Raises:
            ParameterError: ``format: 'mine' (str) read ...; a format's read ...``.
        """
        entries = self.entries
        if isinstance(entries, Entries):  # the columns: ids checked in bulk, the first repeated one found if any
            problem = None if entries.unique else _duplicate("entry", entries.ids)
        else:
            problem = _duplicate("entry", (e.id for e in entries))
        problem = problem or _duplicate("query", (q.id for q in (*self.queries, *self.left_out_queries)))
        if problem is None:
            problem = self._unreachable()
        if problem is not None:
            if self.format is None:
                raise ParameterError("collection", self.name, f"is a collection {problem}", _CHECK_ALLOWED)
            raise ParameterError("format", self.format, f"read a collection {problem}", _CHECK_ALLOWED)
        return self

    def _unreachable(self) -> str | None:
        """What a query or judgment names that the collection does not hold, in a message's words, or ``None``."""
        entries = self.entries
        scopes = set(entries.scopes()) if isinstance(entries, Entries) else self.scope_ids
        asked = {q.id for q in (*self.queries, *self.left_out_queries)}
        for query in self.queries:
            if query.scope is not None and query.scope not in scopes:
                return f"whose query {quote(query.id)} has scope {quote(query.scope)}, which no entry has"
        if isinstance(entries, Entries):  # the judged ids not among the columns' ids, found in one pass
            known: Container[str] = entries.membership(e for judged in self.qrels.values() for e in judged)
        else:
            known = self._by_id
        for query_id, judged in self.qrels.items():
            if query_id not in asked:
                return f"with judgments of query {quote(query_id)}, which is not among its queries"
            missing = next((e for e in judged if e not in known), None)
            if missing is not None:
                return f"whose judgments of query {quote(query_id)} name entry {quote(missing)}, which is not among its entries"
        return None

    def only_scopes(self, scopes: Iterable[str | None]) -> Collection:
        """This collection cut down to ``scopes`` (``None``: the entries and queries without a scope).

        Kept: every entry of those scopes, every query (judged, unjudged, left
        out) asked in one of them with all its judgments, and the entries
        those judgments name in other scopes (so no judged entry goes
        missing).  A query searches its own scope's entries only
        (:mod:`agentmemory.store.core`), so each kept query is searched and
        scored as in the whole collection: that is what lets an experiment
        split a collection's queries among workers by scope.  Everything
        else is kept as it is: name, files (so the digest), skipped, repairs,
        notes, settings, granularity, format, turns, the judgment patch.
        Entries kept as columns stay columns (texts still in their file).
        """
        kept = set(scopes)
        queries = tuple(q for q in self.queries if q.scope in kept)
        left_out = tuple(q for q in self.left_out_queries if q.scope in kept)
        asked = {q.id for q in (*queries, *left_out)}
        qrels = {qid: judged for qid, judged in self.qrels.items() if qid in asked}
        named = {entry_id for judged in qrels.values() for entry_id in judged}
        entries = self.entries
        if isinstance(entries, Entries):
            import numpy as np

            wanted = np.zeros(len(entries), dtype=bool)
            for scope, rows in entries.scope_rows().items():
                if scope in kept:
                    wanted[rows] = True
            if named:  # one pass over the ids (no map of every id is made)
                wanted |= np.fromiter((e in named for e in entries.ids), dtype=bool, count=len(entries))
            cut: Sequence[MemoryEntry] = entries.take(np.flatnonzero(wanted))
        else:
            cut = tuple(e for e in entries if e.scope in kept or e.id in named)
        return dataclasses.replace(self, entries=cut, queries=queries, qrels=qrels, left_out_queries=left_out)

    def entry(self, entry_id: str) -> MemoryEntry:
        """The entry ``entry_id`` (``KeyError`` when there is none); from the columns, made when asked."""
        entries = self.entries
        if isinstance(entries, Entries):
            return entries[entries.positions[entry_id]]
        return self._by_id[entry_id]

    @property
    def _by_id(self) -> dict[str, MemoryEntry]:
        cache = self.__dict__.get("_by_id_cache")
        if cache is None:
            cache = {e.id: e for e in self.entries}
            object.__setattr__(self, "_by_id_cache", cache)
        return cache


_CHECK_ALLOWED = "a format's read returns every entry its judgments name and every scope its queries name, each id once"


def _duplicate(kind: str, ids: Iterable[str]) -> str | None:
    """``"with two entries 'e1'"`` for the first id ``ids`` holds twice, else ``None``."""
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            plural = "entries" if kind == "entry" else "queries"
            return f"with two {plural} {quote(item)}"
        seen.add(item)
    return None


def require_judgments(collection: Collection, path: str | PathLike[str] | None = None) -> None:
    """Refuse to evaluate a collection without a judged query: its means would print as 0.00, as if measured.

    Said the way ``agentmemory score`` refuses an empty qrels file: when
    ``path`` (where the collection was read from) holds a BEIR-style
    judgments file ``qrels/<split>.tsv``, the error names it ("holds no
    judgments"); otherwise it names the collection and, when a loader left
    questions out (a LoCoMo file whose every question was skipped), how many
    for each reason (the five most frequent reasons, each shortened, most
    frequent first; the rest counted together) and where to see them (the
    skipped list) or how to keep them (``--repair``).

    Raises:
        InputError: the collection's judgments file holds no judgment.
        ParameterError: the collection has no judged query otherwise.
    """
    if collection.judged_queries:
        return
    if path is not None:
        root = Path(path)
        judgments = [name for name in collection.files if name.startswith("qrels/")]
        if judgments:
            base = root if root.is_dir() else root.parent
            raise InputError(
                base / judgments[0],
                None,
                f"{NO_JUDGMENTS}; expected at least one line query-id<TAB>corpus-id<TAB>score",
            )
    if not collection.skipped:
        raise ParameterError(
            "collection", collection.name, "has no judged query", "evaluate a collection with judgments"
        )
    raise ParameterError(
        "collection",
        collection.name,
        f"has no judged query; {_left_out(collection)}",
        "see why each was left out in the collection's skipped list (Collection.skipped; skipped_queries in the "
        "artifact), load it with --repair (repair=True) where its format repairs malformed questions, "
        "or evaluate a collection with judgments",
    )


_REASONS_SHOWN = 5  # the most frequent reasons a message names; the rest are counted together


def _left_out(collection: Collection) -> str:
    """How many questions a loader left out, for each reason (the most frequent first, ties in first-seen order)."""
    skipped = collection.skipped
    counts = Counter(reason for _, reason in skipped)
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: ties keep the order first seen
    shown = [f"{n} for: {shorten(reason)}" for reason, n in ranked[:_REASONS_SHOWN]]
    rest = ranked[_REASONS_SHOWN:]
    if rest:
        shown.append(f"{sum(n for _, n in rest)} for {len(rest)} other reasons")
    every = "all " if not collection.queries and len(skipped) > 1 else ""
    were = "question was" if len(skipped) == 1 else "questions were"
    return f"{every}{len(skipped)} {were} left out ({' | '.join(shown)})"


def default_collection_path() -> Path:
    """The shipped fixture of the seed evaluation, found from any working directory.

    Installed wheels carry it inside the package (``agentmemory/_fixtures``);
    a source checkout or editable install finds ``fixtures/`` beside the package.
    """
    here = Path(__file__).resolve().parent.parent  # the package folder
    for candidate in (here / "_fixtures" / "assistant-notes", here.parent / "fixtures" / "assistant-notes"):
        if (candidate / "corpus.jsonl").is_file():
            return candidate
    raise MissingFileError(here / "_fixtures" / "assistant-notes", "folder (the shipped fixture)")


def collection_summary(collection: Collection) -> dict[str, Any]:
    """Name, sizes and file hashes, JSON-ready (for artifacts and reports).

    ``settings`` and ``notes`` appear only when the collection has them (so
    the artifacts of other collections keep their exact bytes).
    """
    summary = {
        "name": collection.name,
        "entries": len(collection.entries),
        "queries": len(collection.queries),
        "judged_queries": len(collection.judged_queries),
        "judgments": sum(len(d) for d in collection.qrels.values()),
        "files": dict(collection.files),
        "skipped_queries": [{"query_id": q, "reason": r} for q, r in collection.skipped],
        "repairs": [{"query_id": q, "change": r} for q, r in collection.repairs],
        "headline_excludes": list(collection.headline_excludes),
    }
    if collection.settings:
        summary["settings"] = dict(collection.settings)
    if collection.notes:
        summary["notes"] = [{"query_id": q, "note": n} for q, n in collection.notes]
    return summary
