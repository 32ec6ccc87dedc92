"""Contract tests users run on their own plugins: :func:`check_retriever` and :func:`check_system`.

Like hypothesis shipping strategies, agentmemory ships the checks its own
retrievers pass, so a plugin author can run them in their test suite::

    from agentmemory.testing import check_retriever

    def test_my_retriever_keeps_the_contract():
        check_retriever(MyRetriever)            # or "mypkg.memory:MyRetriever[dim=64]"

It makes new retrievers from the factory, indexes a small built-in
collection (English and non-ASCII text, two entries with identical text
and tags so that their scores tie, one entry with empty text) and checks
what every agentmemory report relies on:

1. ``name`` and ``label`` are non-empty strings; ``params()`` is a dict that
   JSON can hold (no NaN or infinity).
2. An empty retriever answers every query with no hit (and no error).
3. The ranking rule: hits are :class:`~agentmemory.records.Hit` records ranked
   ``1..n``, with distinct ids of added entries, scores above 0 (zero scores
   are dropped; NaN is refused, ``+inf`` ranks first), ordered by score
   descending, then id descending (so the two identical entries, when found,
   come together, larger id first).  These are the plugin boundary's checks
   (:func:`agentmemory.retrievers.guard.hit_violations`, the one validator
   both use), plus scores above 0.
4. ``k``: at most ``k`` hits; ``k`` larger than the store returns every
   scoring entry without error; the top ``k`` is the first ``k`` of a deeper
   search; ``k = 0`` raises ``ValueError`` (agentmemory's ``ParameterError`` is one).
5. Incremental adds: adding the entries in two batches, or one by one, gives
   the same hits as one add (ids equal, scores equal to a relative 1e-9).
6. Determinism: two new retrievers give the same hits.
7. Optional capabilities, when present: ``score_all(query)`` gives positive
   scores whose top ``k`` under the ranking rule is ``search``'s;
   ``explain(query, entry_id)`` gives an object with ``matched`` and
   ``missing`` (sequences of str) and ``miss_reason()``/``hit_reason()`` (str);
   ``search_many(queries, k)`` gives each query exactly ``search``'s hits.
8. ``remove(entry_ids)``, when present (a store calls it on ``update`` and
   ``forget``): afterwards every query's hits are a new retriever's over the
   entries left, and adding the removed entries again restores the hits of
   one add (ids equal, scores equal to a relative 1e-9).
9. ``with_params(params)``, when present: given the spec's own parameters,
   a new retriever (not the same object) whose hits are this one's.

Every violation is collected; :class:`RetrieverContractError` (an
``AssertionError``, so pytest shows it as a failure) lists them all.  The
checks run on the plugin itself, not behind the boundary (which would stop
at the first violation).

**Memory systems.**  :func:`check_system` does the same for a memory
system (:mod:`agentmemory.systems`)::

    from agentmemory.testing import check_system

    def test_my_memory_system_keeps_the_contract():
        check_system(MySystem)                  # or "mypkg.memory:MySystem[depth=3]"

It makes a fresh system per scope of a small built-in conversation
(:data:`CONTRACT_TURNS`: two scopes with their own words, sessions, times),
ingests each scope's turns in time order (in batches of the system's
``batch_size``), asks :data:`CONTRACT_SYSTEM_QUERIES` at ``k`` = 1, 3 and 10,
closes it, and checks what the replay relies on:

1. ``label``, when present, is a non-empty string; ``batch_size``, when
   present, an integer >= 1; ``params()``, when present, a dict JSON holds
   (no NaN or infinity, string keys).
2. Every search returns a list (or tuple) of at most ``k``
   :class:`~agentmemory.systems.base.Memory` records with ``str`` text, a
   finite score or ``None``, ids unique within the result, sources a
   sequence of entry ids, ``created_at`` a ``datetime`` or ``None``: the
   replay's own check (:func:`agentmemory.systems.checks.memories_problem`).
3. Sources are turns of the scope searched: one naming a turn of the other
   scope is a leak between conversations, one naming no turn an unknown id.
4. Scopes never share memories: a memory whose text is a turn of the other
   scope (and not of its own) is a leak too; a fresh system that was given
   nothing returns no memory naming a source or holding a turn's text.
5. No call raises (making the system, ``ingest``, ``search``, ``params``,
   ``close``).

:class:`~agentmemory.errors.SystemContractError` lists every violation.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

from agentmemory.errors import ParameterError, RetrieverContractError, SystemContractError, quote, shorten
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers import RetrieverSpec, capabilities, resolve_retriever
from agentmemory.retrievers.base import missing_members
from agentmemory.retrievers.guard import GuardedRetriever, hit_violations, params_violation, scores_violation
from agentmemory.systems.base import Turn
from agentmemory.systems.checks import batch_size_problem, memories_problem, source_problem
from agentmemory.systems.processes import children_ended
from agentmemory.systems.registry import SystemLike, SystemSpec, resolve_system

__all__ = [
    "CONTRACT_ENTRIES",
    "CONTRACT_QUERIES",
    "CONTRACT_SYSTEM_QUERIES",
    "CONTRACT_TURNS",
    "RetrieverContractError",
    "SystemContractError",
    "check_retriever",
    "check_system",
]


_SHOWN = 12


CONTRACT_ENTRIES: tuple[MemoryEntry, ...] = (
    MemoryEntry("m01", "Maya is vegetarian and loves lentil curry", tags=("diet", "food")),
    MemoryEntry("m02", "Maya's sister Lena eats fish on Fridays", tags=("diet", "family")),
    MemoryEntry("m03", "Book a table at the Café Zürich for Maya's birthday", tags=("plans", "food")),
    MemoryEntry("m04", "The naïve façade of the old cinema was repainted", tags=("city",)),
    MemoryEntry("m05", "東京のラーメン屋さんが好き", tags=("food", "travel")),
    MemoryEntry("m06", "Ελληνικά μαθήματα κάθε Τρίτη", tags=("learning",)),
    MemoryEntry("twin-a", "Remember to water the basil and the mint", tags=("garden",)),
    MemoryEntry("twin-b", "Remember to water the basil and the mint", tags=("garden",)),
    MemoryEntry("m07", "Lentil soup recipe: lentils, onion, cumin, lemon", tags=("food", "recipe")),
    MemoryEntry("m08", "", tags=()),
    MemoryEntry("m09", "Maya runs the Berlin marathon in September", tags=("sport", "plans")),
    MemoryEntry("m10", "Weekly summary: plans meals around a vegetarian diet", tags=("diet", "summary")),
)
"""The built-in collection of :func:`check_retriever` (12 entries, no scopes)."""

CONTRACT_QUERIES: tuple[Query, ...] = (
    Query("q1", "what does Maya eat", tags=("diet", "food")),
    Query("q2", "lentil soup"),
    Query("q3", "water the basil"),
    Query("q4", "café Zürich"),
    Query("q5", "東京 ラーメン"),
    Query("q6", "marathon plans in September", tags=("plans",)),
    Query("q7", "zzzz qqqq xylophone"),
)
"""The queries of :func:`check_retriever`: words, tags, non-ASCII text, and one that matches nothing."""


def _hits_problem(hits: Any, k: int, known: set[str], where: str) -> list[str]:
    """Violations of the ranking rule by one search's result: the boundary's validator, plus scores above 0."""
    out = [f"{where}: {problem}" for problem in hit_violations(hits, k, known)]
    if not _is_hits(hits):
        return out
    low = [h.entry_id for h in hits if isinstance(h.score, (int, float)) and h.score <= 0]
    if low:
        out.append(
            f"{where}: {', '.join(low[:3])}{' ...' if len(low) > 3 else ''} score <= 0; such entries must be dropped"
        )
    return out


def _is_hits(hits: object) -> bool:
    return isinstance(hits, list) and all(isinstance(h, Hit) for h in hits)


def _same_hits(a: object, b: object) -> bool:
    if not (_is_hits(a) and _is_hits(b)):
        return False
    assert isinstance(a, list) and isinstance(b, list)
    return [h.entry_id for h in a] == [h.entry_id for h in b] and all(
        x.score == y.score or math.isclose(x.score, y.score, rel_tol=1e-9, abs_tol=0.0) for x, y in zip(a, b)
    )


def _show(hits: object) -> str:
    if not _is_hits(hits):
        return quote(hits, 80)
    assert isinstance(hits, list)
    return "[" + ", ".join(f"{h.entry_id} {h.score:.6g}" for h in hits[:6]) + (", ..." if len(hits) > 6 else "") + "]"


class _Contract:
    """One run of :func:`check_retriever`: the factory, the collection, the hits of one add, the violations."""

    def __init__(self, spec: RetrieverSpec, entries: Sequence[MemoryEntry], queries: Sequence[Query]) -> None:
        self.spec = spec
        self.entries = list(entries)
        self.queries = list(queries)
        self.known = {e.id for e in self.entries}
        self.deep_k = len(self.entries) + 10
        self.deep: dict[str, list[Hit]] = {}
        self.problems: list[str] = []

    def new(self) -> Any:
        """A new, empty retriever of the factory, the plugin itself (not behind the boundary: violations are listed here)."""
        made = self.spec.new()
        return made.plugin if isinstance(made, GuardedRetriever) else made

    def hits_of_one_add(self) -> dict[str, list[Hit]]:
        """Every query's hits at ``deep_k`` from a new retriever given the entries in one add."""
        other = self.new()
        other.add(self.entries)
        return {q.id: other.search(q, self.deep_k) for q in self.queries}

    def differ(self, got: dict[str, list[Hit]], what: str, reference: str = "one add gives") -> None:
        for q in self.queries:
            if not _same_hits(got[q.id], self.deep[q.id]):
                self.problems.append(f"{q.id}: {what} {_show(got[q.id])}, {reference} {_show(self.deep[q.id])}")


def _check_members(run: _Contract, first: Any) -> None:
    """1. ``name`` and ``label`` are non-empty strings; ``params()`` is a dict JSON holds."""
    for member in ("name", "label"):
        value = getattr(first, member, None)
        if not isinstance(value, str) or not value:
            run.problems.append(f"{member} is {value!r}, not a non-empty string")
    problem = params_violation(first.params())
    if problem is not None:
        run.problems.append(f"params() returned {problem}")


def _check_empty(run: _Contract, first: Any) -> None:
    """2. An empty retriever answers every query with no hit."""
    for q in run.queries:
        hits = first.search(q, 5)
        if hits != []:
            run.problems.append(f"empty retriever, {q.id}: expected no hits, got {_show(hits)}")


def _check_ranking(run: _Contract, first: Any) -> None:
    """3 and 4. The ranking rule at every depth, the top k a prefix of a deeper search, tied twins, k = 0."""
    first.add(run.entries)
    for q in run.queries:
        deep = run.deep[q.id] = first.search(q, run.deep_k)
        run.problems += _hits_problem(
            deep, run.deep_k, run.known, f"{q.id} at k = {run.deep_k} (larger than the store)"
        )
        for k in (1, 3, 5):
            top = first.search(q, k)
            run.problems += _hits_problem(top, k, run.known, f"{q.id} at k = {k}")
            if _is_hits(top) and _is_hits(deep) and not _same_hits(top, deep[:k]):
                run.problems.append(
                    f"{q.id}: the top {k} {_show(top)} is not the first {k} of a deeper search {_show(deep)}"
                )
        _check_twins(run, q, deep)
    try:
        first.search(run.queries[0], 0)
    except ValueError:
        pass
    else:
        run.problems.append("search(query, 0) did not raise ValueError (k must be an integer >= 1)")


def _check_twins(run: _Contract, q: Query, deep: Any) -> None:
    """Entries with identical text and tags score the same, larger id first."""
    if not _is_hits(deep):
        return
    twins = [h for h in deep if h.entry_id in ("twin-a", "twin-b")]
    if twins and not (len(twins) == 2 and twins[0].score == twins[1].score and twins[0].entry_id == "twin-b"):
        run.problems.append(
            f"{q.id}: entries twin-a and twin-b have identical text and tags, so they must score the same, "
            f"twin-b first (id descending); got {_show(twins)}"
        )


def _check_incremental(run: _Contract) -> None:
    """5. Two adds, or one add per entry, give the hits of one add."""
    half = len(run.entries) // 2
    for name, batches in (
        ("two adds", [run.entries[:half], run.entries[half:]]),
        ("one add per entry", [[e] for e in run.entries]),
    ):
        other = run.new()
        for batch in batches:
            other.add(batch)
        run.differ({q.id: other.search(q, run.deep_k) for q in run.queries}, f"{name} give")


def _check_determinism(run: _Contract) -> None:
    """6. A second new retriever gives the same hits."""
    run.differ(run.hits_of_one_add(), "a second new retriever gives", "the first")


def _check_score_all(run: _Contract, first: Any) -> None:
    """7a. ``score_all``: positive scores whose top 5 under the ranking rule is ``search``'s."""
    for q in run.queries:
        scores = first.score_all(q)
        problem = scores_violation(scores, run.known)
        if not isinstance(scores, dict):
            run.problems.append(f"{q.id}: score_all returned {type(scores).__name__}, not a dict")
            continue
        bad = [i for i, s in scores.items() if not s > 0]
        if bad:
            run.problems.append(f"{q.id}: score_all gives scores <= 0 (or NaN) for {bad[:5]}")
        elif problem is not None:
            run.problems.append(f"{q.id}: score_all returned {problem}")
        ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:5]
        top = first.search(q, 5)
        if [(h.entry_id, h.score) for h in top] != ranked:
            run.problems.append(f"{q.id}: the top 5 of score_all {ranked} is not search's {_show(top)}")


def _check_search_many(run: _Contract, first: Any) -> None:
    """7c. ``search_many``: for every query, exactly ``search``'s hits (same ids, same scores), at two depths."""
    for k in (1, 5):
        many = first.search_many(run.queries, k)
        if not isinstance(many, list) or len(many) != len(run.queries):
            run.problems.append(f"search_many(queries, {k}) returned {many!r:.80}, not {len(run.queries)} lists")
            continue
        for q, got in zip(run.queries, many):
            one = first.search(q, k)
            if got != one:
                run.problems.append(f"{q.id}: search_many(..., {k}) gives {_show(got)}, search gives {_show(one)}")


def _check_explain(run: _Contract, first: Any) -> None:
    """7b. ``explain``: ``matched``/``missing`` sequences of str, ``miss_reason()``/``hit_reason()`` str."""
    for q in run.queries:
        for h in run.deep[q.id][:2]:
            why = first.explain(q, h.entry_id)
            for member in ("matched", "missing"):
                value = getattr(why, member, None)
                if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
                    run.problems.append(
                        f"{q.id}, {h.entry_id}: explain(...).{member} is {value!r}, not a sequence of str"
                    )
            for method in ("miss_reason", "hit_reason"):
                call = getattr(why, method, None)
                if not callable(call) or not isinstance(call(), str):
                    run.problems.append(f"{q.id}, {h.entry_id}: explain(...).{method}() does not return a str")


def _check_with_params(run: _Contract, first: Any) -> None:
    """9. ``with_params`` with the spec's own parameters: a new retriever with the same hits."""
    other = first.with_params(dict(run.spec.params))
    if other is first or missing_members(other):
        what = "the retriever itself" if other is first else f"{quote(other, 60)}, not a retriever"
        run.problems.append(f"with_params({dict(run.spec.params)}) returned {what}, not a new retriever")
        return
    run.differ({q.id: other.search(q, run.deep_k) for q in run.queries}, "with_params(its own parameters) gives")


def _check_remove(run: _Contract, first: Any) -> None:
    """8. ``remove``: a new retriever's hits over the entries left; adding them again restores one add's."""
    n = len(run.entries)
    gone = [e.id for e in run.entries[:: max(1, n // 3)]][:3]
    left = [e for e in run.entries if e.id not in gone]
    fresh = run.new()
    fresh.add(left)
    first.remove(gone)
    for q in run.queries:
        got, want = first.search(q, run.deep_k), fresh.search(q, run.deep_k)
        if not _same_hits(got, want):
            run.problems.append(
                f"{q.id}: after remove({gone}) the hits are {_show(got)}, a new retriever over the entries "
                f"left gives {_show(want)}"
            )
    try:
        first.add([e for e in run.entries if e.id in gone])
    except Exception as err:  # a retriever that still holds them may refuse the ids: that is the violation
        run.problems.append(f"adding the removed entries {gone} again raised {type(err).__name__}: {err}")
    else:
        run.differ(
            {q.id: first.search(q, run.deep_k) for q in run.queries}, "removed entries added again give", "one add"
        )


def check_retriever(
    factory: Callable[..., Any] | str | RetrieverSpec,
    *,
    entries: Sequence[MemoryEntry] = CONTRACT_ENTRIES,
    queries: Sequence[Query] = CONTRACT_QUERIES,
) -> None:
    """Check that retrievers made by ``factory`` keep the retriever contract (the module docstring lists it).

    Args:
        factory: a class or function returning a new, empty retriever, or any
            spec :func:`agentmemory.retrievers.resolve_retriever` takes
            (``"bm25[k1=0.9]"``, ``"mypkg.memory:MyRetriever"``); not an
            instance (the checks need new, empty retrievers).
        entries, queries: the collection to check on (default: the built-in one).

    Raises:
        RetrieverContractError: every violation found, listed.
        ParameterError: ``factory`` is not a factory or spec.
    """
    spec = resolve_retriever(factory)
    if spec.shared:
        raise ParameterError(
            "factory",
            spec.key,
            "is a retriever instance",
            "pass its class or a factory: the checks need new, empty retrievers",
        )
    run = _Contract(spec, entries, queries)
    first = run.new()
    _check_members(run, first)
    _check_empty(run, first)
    _check_ranking(run, first)
    if all(_is_hits(run.deep[q.id]) for q in run.queries):
        _check_incremental(run)
        _check_determinism(run)
    found = capabilities(first)
    if "score_all" in found:
        _check_score_all(run, first)
    if "explain" in found:
        _check_explain(run, first)
    if "with_params" in found:
        _check_with_params(run, first)
    if "search_many" in found:
        _check_search_many(run, first)
    if "remove" in found:  # last: it changes `first`
        _check_remove(run, first)
    if run.problems:
        raise RetrieverContractError(spec.label, run.problems)


# -- memory systems -----------------------------------------------------------------------------------------------
def _turns(scope: str, day: int, lines: Sequence[tuple[str, str]]) -> tuple[Turn, ...]:
    start = datetime(2023, 5, day, 9, 0, tzinfo=timezone.utc)
    return tuple(
        Turn(
            f"{scope}/D{1 + i // 3}:{1 + i % 3}",
            text,
            role,
            start + timedelta(hours=i),
            f"{scope}/S{1 + i // 3}",
            scope,
        )
        for i, (role, text) in enumerate(lines)
    )


CONTRACT_TURNS: tuple[Turn, ...] = _turns(
    "conv-a",
    7,
    [
        ("Maya", "I adopted a grey kitten called Pixel yesterday"),
        ("Lena", "Pixel is a lovely name for a kitten"),
        ("Maya", "Pixel already sleeps on my violin case"),
        ("Lena", "Do you still practise the violin every evening?"),
        ("Maya", "Yes, Bach partitas, and Pixel listens"),
        ("Lena", "Café Zürich has a concert on Friday"),
    ],
) + _turns(
    "conv-b",
    9,
    [
        ("Omar", "We planted tomatoes and basil on the balcony"),
        ("Jun", "Basil needs sun; the balcony faces south"),
        ("Omar", "The tomatoes are called Sungold"),
        ("Jun", "東京の友達が種を送ってくれた"),
        ("Omar", "Next spring we try peppers"),
    ],
)
"""The conversation of :func:`check_system`: two scopes with words of their own, two sessions each, dated turns."""

CONTRACT_SYSTEM_QUERIES: dict[str, tuple[str, ...]] = {
    "conv-a": ("What is the kitten called?", "violin practice", "Pixel", "tomatoes on the balcony"),
    "conv-b": ("Which tomatoes did Omar plant?", "basil", "Pixel the kitten", "種"),
}
"""The questions asked of each scope; each scope is also asked about the other's words (a leak would answer)."""

_SYSTEM_KS = (1, 3, 10)


class _SystemContract:
    """One run of :func:`check_system`: the spec, the turns by scope, the violations."""

    def __init__(self, spec: SystemSpec, turns: Sequence[Turn], queries: dict[str, tuple[str, ...]]) -> None:
        self.spec = spec
        self.queries = queries
        self.scopes: dict[str, list[Turn]] = {}
        for turn in turns:
            self.scopes.setdefault(turn.scope or "", []).append(turn)
        self.scope_of = {t.entry_id: t.scope or "" for t in turns}
        self.text_scopes: dict[str, set[str]] = {}
        for turn in turns:
            self.text_scopes.setdefault(turn.text, set()).add(turn.scope or "")
        self.problems: list[str] = []

    def call(self, where: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """``(True, fn())``, or ``(False, None)`` with the exception listed as a violation."""
        try:
            return True, fn()
        except Exception as err:  # noqa: BLE001 - the system's own failure is a violation to list
            self.problems.append(f"{where} raised {type(err).__name__}: {shorten(' '.join(str(err).split()))}")
            return False, None

    def members(self, system: Any, where: str) -> None:
        """1. ``label``, ``batch_size`` and ``params()`` when present."""
        label = getattr(system, "label", None)
        if label is not None and (not isinstance(label, str) or not label.strip()):
            self.problems.append(f"{where}: label is {quote(label)}, not a non-empty string")
        problem = batch_size_problem(getattr(system, "batch_size", None))
        if problem is not None:
            self.problems.append(f"{where}: {problem}")
        params = getattr(system, "params", None)
        if callable(params):
            ok, value = self.call(f"{where}: params()", params)
            problem = params_violation(value) if ok else None
            if problem is not None:
                self.problems.append(f"{where}: params() returned {problem}")

    def memories(self, result: Any, k: int, scope: str, ingested: set[str], where: str) -> None:
        """2 to 4. The result's shape at every ``k``, then (at the deepest) each memory's sources and text."""
        problem = memories_problem(result, k)
        if problem is not None:
            self.problems.append(f"{where}: {problem}")
            return
        if k != _SYSTEM_KS[-1]:
            return
        for position, memory in enumerate(result, start=1):
            for source in memory.sources or ():
                owner = self.scope_of.get(source)
                if owner is None:
                    self.problems.append(f"{where}: {source_problem(position, source, 'unknown')}")
                elif owner != scope:
                    self.problems.append(f"{where}: {source_problem(position, source, 'leak', owner)}")
                elif source not in ingested:
                    self.problems.append(f"{where}: {source_problem(position, source, 'not_ingested')}")
            owners = self.text_scopes.get(memory.text, set())
            if owners and scope not in owners:
                self.problems.append(
                    f"{where}: memory {position} holds the text of a turn of scope {quote(sorted(owners)[0])} "
                    "(a leak between conversations)"
                )
            elif owners and not ingested:
                self.problems.append(f"{where}: memory {position} holds the text of a turn it was never given")

    def scope(self, scope: str, turns: Sequence[Turn] | None) -> None:
        """A fresh system for ``scope``: ``turns`` ingested (none: an empty system), the questions asked, closed."""
        where = f"scope {scope}" if turns is not None else f"scope {scope}, nothing ingested"
        with tempfile.TemporaryDirectory(prefix="agentmemory-check-") as folder, children_ended():
            ok, system = self.call(f"{where}: making the system", lambda: self.spec.make(scope, Path(folder)))
            if not ok:
                return
            try:
                if turns is not None and scope == next(iter(self.scopes)):  # the members once, of the first system
                    self.members(system, where)
                ingested: set[str] = set()
                size = getattr(system, "batch_size", None)
                size = size if batch_size_problem(size) is None and size else len(turns or ()) or 1
                for start in range(0, len(turns or ()), size):
                    chunk = list((turns or ())[start : start + size])
                    if not self.call(f"{where}: ingest", partial(system.ingest, chunk))[0]:
                        return
                    ingested.update(t.entry_id for t in chunk)
                for text in self.queries.get(scope, ()):
                    for k in _SYSTEM_KS:
                        asked = f"{where}: search({text!r}, {k})"
                        ok, result = self.call(asked, partial(system.search, text, k))
                        if ok:
                            self.memories(result, k, scope, ingested, asked)
            finally:
                self.call(f"{where}: close()", system.close)


def check_system(
    factory: SystemLike,
    *,
    turns: Sequence[Turn] = CONTRACT_TURNS,
    queries: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """Check that memory systems made by ``factory`` keep the memory-system contract (the module docstring).

    Args:
        factory: a class or function returning a fresh memory system (called as the replay calls it,
            ``factory(scope=..., workdir=..., **params)``, with what its signature takes), or any spec
            :func:`agentmemory.systems.registry.resolve_system` takes (``"mypkg.memory:MySystem[depth=3]"``,
            ``"mcp[profile=server-memory]"``); not an instance (each scope needs a fresh system).
        turns: the conversation, in time order, its turns' ``scope`` naming the scopes (default: the built-in one).
        queries: the questions per scope (default: :data:`CONTRACT_SYSTEM_QUERIES`).

    Raises:
        SystemContractError: every violation found, listed.
        ParameterError: ``factory`` is not a factory or spec.
    """
    if not callable(factory) and all(callable(getattr(factory, m, None)) for m in ("ingest", "search", "close")):
        raise ParameterError(
            "factory",
            factory,
            "is a memory system instance",
            "pass its class or a factory: each scope needs a fresh system",
        )
    spec = resolve_system(factory, option="factory")
    run = _SystemContract(spec, turns, CONTRACT_SYSTEM_QUERIES if queries is None else queries)
    for scope, scope_turns in run.scopes.items():
        run.scope(scope, scope_turns)
    run.scope(next(iter(run.scopes), ""), None)  # an empty system: nothing to remember, nothing to name
    if run.problems:
        raise SystemContractError(spec.label, list(dict.fromkeys(run.problems)))
