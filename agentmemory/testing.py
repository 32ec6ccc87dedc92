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
   ``1..n``, with distinct ids of added entries, finite scores above 0 (zero
   scores are dropped), ordered by score descending, then id descending
   (so the two identical entries, when found, come together, larger id first).
4. ``k``: at most ``k`` hits; ``k`` larger than the store returns every
   scoring entry without error; the top ``k`` is the first ``k`` of a deeper
   search; ``k = 0`` raises ``ValueError`` (agentmemory's ``ParameterError`` is one).
5. Incremental adds: adding the entries in two batches, or one by one, gives
   the same hits as one add (ids equal, scores equal to a relative 1e-9).
6. Determinism: two new retrievers give the same hits.
7. Optional capabilities, when present: ``score_all(query)`` gives positive
   scores whose top ``k`` under the ranking rule is ``search``'s;
   ``explain(query, entry_id)`` gives an object with ``matched`` and
   ``missing`` (sequences of str) and ``miss_reason()``/``hit_reason()`` (str).
8. ``remove(entry_ids)``, when present (a store calls it on ``update`` and
   ``forget``): afterwards every query's hits are a new retriever's over the
   entries left, and adding the removed entries again restores the hits of
   one add (ids equal, scores equal to a relative 1e-9).

Every violation is collected; :class:`RetrieverContractError` (an
``AssertionError``, so pytest shows it as a failure) lists them all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from agentmemory.errors import ParameterError, RetrieverContractError
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers import RetrieverSpec, capabilities, resolve_retriever

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
    """Violations of the ranking rule by one search's result."""
    if not isinstance(hits, list) or not all(isinstance(h, Hit) for h in hits):
        return [f"{where}: search returned {type(hits).__name__}, not a list of agentmemory.Hit"]
    out = []
    if len(hits) > k:
        out.append(f"{where}: {len(hits)} hits for k = {k}")
    if [h.rank for h in hits] != list(range(1, len(hits) + 1)):
        out.append(f"{where}: ranks {[h.rank for h in hits]} are not 1..{len(hits)}")
    ids = [h.entry_id for h in hits]
    if len(set(ids)) != len(ids):
        out.append(f"{where}: an entry is returned twice ({ids})")
    strangers = [i for i in ids if i not in known]
    if strangers:
        out.append(f"{where}: ids that were never added: {strangers}")
    odd = [
        h
        for h in hits
        if not isinstance(h.score, (int, float)) or isinstance(h.score, bool) or not math.isfinite(h.score)
    ]
    if odd:
        return out + [
            f"{where}: {', '.join(f'{h.entry_id} {h.score!r}' for h in odd[:3])}: scores must be finite numbers"
        ]
    low = [h.entry_id for h in hits if h.score <= 0]
    if low:
        out.append(
            f"{where}: {', '.join(low[:3])}{' ...' if len(low) > 3 else ''} score <= 0; such entries must be dropped"
        )
    for a, b in zip(hits, hits[1:]):
        if (a.score, a.entry_id) < (b.score, b.entry_id):
            out.append(
                f"{where}: {a.entry_id} ({a.score!r}) ranks above {b.entry_id} ({b.score!r}); the rule is score "
                "descending, then id descending"
            )
            break
    return out


def _same_hits(a: list[Hit], b: list[Hit]) -> bool:
    return [h.entry_id for h in a] == [h.entry_id for h in b] and all(
        math.isclose(x.score, y.score, rel_tol=1e-9, abs_tol=0.0) for x, y in zip(a, b)
    )


def _show(hits: list[Hit]) -> str:
    return "[" + ", ".join(f"{h.entry_id} {h.score:.6g}" for h in hits[:6]) + (", ..." if len(hits) > 6 else "") + "]"


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
    entries = list(entries)
    queries = list(queries)
    known = {e.id for e in entries}
    n = len(entries)
    problems: list[str] = []

    first = spec.new()
    for member in ("name", "label"):
        if not isinstance(getattr(first, member, None), str) or not getattr(first, member):
            problems.append(f"{member} is {getattr(first, member, None)!r}, not a non-empty string")
    try:
        params = first.params()
        if not isinstance(params, dict):
            problems.append(f"params() returned {type(params).__name__}, not a dict")
        else:
            json.dumps(params, allow_nan=False)
    except (TypeError, ValueError) as err:
        problems.append(f"params() is not JSON-ready: {err}")

    for q in queries:  # 2. empty
        hits = first.search(q, 5)
        if hits != []:
            problems.append(f"empty retriever, {q.id}: expected no hits, got {_show(hits)}")

    first.add(entries)
    deep: dict[str, list[Hit]] = {}
    for q in queries:  # 3 and 4
        deep[q.id] = first.search(q, n + 10)
        problems += _hits_problem(deep[q.id], n + 10, known, f"{q.id} at k = {n + 10} (larger than the store)")
        for k in (1, 3, 5):
            top = first.search(q, k)
            problems += _hits_problem(top, k, known, f"{q.id} at k = {k}")
            if isinstance(top, list) and not _same_hits(top, deep[q.id][:k]):
                problems.append(
                    f"{q.id}: the top {k} {_show(top)} is not the first {k} of a deeper search {_show(deep[q.id])}"
                )
        twins = [h for h in deep[q.id] if h.entry_id in ("twin-a", "twin-b")]
        if twins and not (len(twins) == 2 and twins[0].score == twins[1].score and twins[0].entry_id == "twin-b"):
            problems.append(
                f"{q.id}: entries twin-a and twin-b have identical text and tags, so they must score the same, "
                f"twin-b first (id descending); got {_show(twins)}"
            )
    try:
        first.search(queries[0], 0)
    except ValueError:
        pass
    else:
        problems.append("search(query, 0) did not raise ValueError (k must be an integer >= 1)")

    half = len(entries) // 2  # 5. incremental adds
    for name, batches in (
        ("two adds", [entries[:half], entries[half:]]),
        ("one add per entry", [[e] for e in entries]),
    ):
        other = spec.new()
        for batch in batches:
            other.add(batch)
        for q in queries:
            got = other.search(q, n + 10)
            if not _same_hits(got, deep[q.id]):
                problems.append(f"{q.id}: {name} give {_show(got)}, one add gives {_show(deep[q.id])}")

    again = spec.new()  # 6. determinism
    again.add(entries)
    for q in queries:
        got = again.search(q, n + 10)
        if not _same_hits(got, deep[q.id]):
            problems.append(f"{q.id}: a second new retriever gives {_show(got)}, the first {_show(deep[q.id])}")

    found = capabilities(first)  # 7. optional capabilities
    if "score_all" in found:
        for q in queries:
            scores = first.score_all(q)
            if not isinstance(scores, dict):
                problems.append(f"{q.id}: score_all returned {type(scores).__name__}, not a dict")
                continue
            bad = [i for i, s in scores.items() if not s > 0]
            if bad:
                problems.append(f"{q.id}: score_all gives scores <= 0 (or NaN) for {bad[:5]}")
            ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:5]
            top = first.search(q, 5)
            if [(h.entry_id, h.score) for h in top] != ranked:
                problems.append(f"{q.id}: the top 5 of score_all {ranked} is not search's {_show(top)}")
    if "explain" in found:
        for q in queries:
            for h in deep[q.id][:2]:
                why = first.explain(q, h.entry_id)
                for member in ("matched", "missing"):
                    value = getattr(why, member, None)
                    if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
                        problems.append(
                            f"{q.id}, {h.entry_id}: explain(...).{member} is {value!r}, not a sequence of str"
                        )
                for method in ("miss_reason", "hit_reason"):
                    call = getattr(why, method, None)
                    if not callable(call) or not isinstance(call(), str):
                        problems.append(f"{q.id}, {h.entry_id}: explain(...).{method}() does not return a str")
    if callable(getattr(first, "remove", None)):  # 8. remove (last: it changes `first`)
        gone = [e.id for e in entries[:: max(1, n // 3)]][:3]
        left = [e for e in entries if e.id not in gone]
        fresh = spec.new()
        fresh.add(left)
        first.remove(gone)
        for q in queries:
            got, want = first.search(q, n + 10), fresh.search(q, n + 10)
            if not _same_hits(got, want):
                problems.append(
                    f"{q.id}: after remove({gone}) the hits are {_show(got)}, a new retriever over the entries "
                    f"left gives {_show(want)}"
                )
        try:
            first.add([e for e in entries if e.id in gone])
        except Exception as err:  # a retriever that still holds them may refuse the ids: that is the violation
            problems.append(f"adding the removed entries {gone} again raised {type(err).__name__}: {err}")
        else:
            for q in queries:
                got = first.search(q, n + 10)
                if not _same_hits(got, deep[q.id]):
                    problems.append(
                        f"{q.id}: removed entries added again give {_show(got)}, one add {_show(deep[q.id])}"
                    )
    if problems:
        raise RetrieverContractError(spec.label, problems)
