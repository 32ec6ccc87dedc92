"""A contract test users run on their own retriever: :func:`check_retriever`.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from agentmemory.errors import ParameterError, RetrieverContractError, quote
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers import RetrieverSpec, capabilities, resolve_retriever
from agentmemory.retrievers.base import missing_members
from agentmemory.retrievers.guard import GuardedRetriever, hit_violations, params_violation, scores_violation

__all__ = ["CONTRACT_ENTRIES", "CONTRACT_QUERIES", "RetrieverContractError", "check_retriever"]


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
