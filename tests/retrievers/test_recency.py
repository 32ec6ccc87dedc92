"""The recency retriever (Generative Agents' relevance + recency + importance) and Query.asked_at."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from test_hybrid import fixed

from agentmemory import MemoryEntry, Query
from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.records import NO_METADATA
from agentmemory.retrievers import Recency, make_retriever, resolve_retriever

UTC = timezone.utc
DAY1 = datetime(2024, 1, 1, tzinfo=UTC)
ENTRIES = [
    MemoryEntry("a", "entry a", created_at=DAY1, metadata={"importance": 0.9}),
    MemoryEntry("b", "entry b", created_at=DAY1 + timedelta(days=1)),
    MemoryEntry("c", "entry c", metadata={"importance": 0.2}),  # no created_at: recency 0
    MemoryEntry("d", "entry d", created_at=DAY1 + timedelta(days=2)),  # the newest; not a candidate of the base
]
BASE = fixed("Base", {"a": 4.0, "b": 2.0, "c": 1.0})


def _recency(**params) -> Recency:
    retriever = Recency(base=BASE, **params)
    retriever.add(ENTRIES)
    return retriever


def _scores(retriever: Recency, query: Query) -> list[tuple[str, float]]:
    return [(h.entry_id, h.score) for h in retriever.search(query, 5)]


# relevance (min-max over a, b, c: 4 -> 1, 2 -> 1/3, 1 -> 0); importance a 0.9, b 0.5 (default), c 0.2
@pytest.mark.parametrize(
    ("params", "asked_at", "expected"),
    [
        # no asked_at: hours from the newest entry (d, day 3): a 48 h, b 24 h; c has no created_at
        ({}, None, [("a", 1 + 0.995**48 + 0.9), ("b", 1 / 3 + 0.995**24 + 0.5), ("c", 0.2)]),
        ({}, DAY1 + timedelta(days=4), [("a", 1 + 0.995**96 + 0.9), ("b", 1 / 3 + 0.995**72 + 0.5), ("c", 0.2)]),
        ({"decay": 0.9}, None, [("a", 1 + 0.9**48 + 0.9), ("b", 1 / 3 + 0.9**24 + 0.5), ("c", 0.2)]),
        ({"decay": 1}, None, [("a", 2.9), ("b", 1 / 3 + 1.5), ("c", 0.2)]),
        ({"weights": [2, 0, 1]}, None, [("a", 2.9), ("b", 2 / 3 + 0.5), ("c", 0.2)]),
        # c scores 0 with these weights: dropped like every zero score
        ({"weights": [0, 1, 0]}, None, [("b", 0.995**24), ("a", 0.995**48)]),
        # asked before every entry: the future counts as 0 hours old (recency 1)
        ({}, DAY1 - timedelta(days=1), [("a", 2.9), ("b", 1 / 3 + 1.5), ("c", 0.2)]),
        # an asked_at with another offset is the same instant
        (
            {},
            datetime(2024, 1, 3, 2, 0, tzinfo=timezone(timedelta(hours=2))),
            [("a", 1 + 0.995**48 + 0.9), ("b", 1 / 3 + 0.995**24 + 0.5), ("c", 0.2)],
        ),
    ],
)
def test_the_score_by_hand(params: dict, asked_at, expected: list[tuple[str, float]]) -> None:
    """score = w_rel * min-max relevance + w_rec * decay ** hours + w_imp * importance, ranked by the rule."""
    got = _scores(_recency(**params), Query("q", "q", asked_at=asked_at))
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-14)


def test_without_any_time_recency_is_zero() -> None:
    """No entry has created_at and the query has no asked_at: every recency is 0, relevance and importance remain."""
    retriever = Recency(base=BASE)
    retriever.add([dataclasses.replace(e, created_at=None) for e in ENTRIES])
    assert _scores(retriever, Query("q", "q")) == [("a", 1.9), ("b", pytest.approx(1 / 3 + 0.5)), ("c", 0.2)]


def test_a_constant_base_run_gives_relevance_one() -> None:
    """When the base scores every candidate alike, relevance is 1 for each (not NaN)."""
    retriever = Recency(base=fixed("Flat", {"a": 2.0, "b": 2.0}), weights=[1, 0, 0])
    retriever.add(ENTRIES)
    assert _scores(retriever, Query("q", "q")) == [("b", 1.0), ("a", 1.0)]


def test_incremental_adds_move_the_newest_entry() -> None:
    """The query time without asked_at is the newest entry seen so far: adding d later gives one add's scores."""
    one = _recency()
    later = Recency(base=BASE)
    later.add(ENTRIES[:3])
    later.add(ENTRIES[3:])
    assert _scores(later, Query("q", "q")) == _scores(one, Query("q", "q"))


def test_search_deeper_than_depth_is_refused() -> None:
    """There are depth candidates only: search(q, k) with k > depth is one ParameterError line."""
    retriever = _recency(depth=2)
    with pytest.raises(
        ParameterError, match=re.escape("k: 3 (int) is more than the recency depth = 2; its candidates are")
    ):
        retriever.search("q", 3)
    assert [h.entry_id for h in retriever.search("q", 2)] == ["a", "b"]


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"decay": 0}, ParameterError, "recency decay: 0 (int) is not a number in (0, 1]; recency = decay ** hours"),
        ({"decay": 1.5}, ParameterError, "recency decay: 1.5 (float) is not a number in (0, 1]"),
        ({"decay": "fast"}, ParameterError, "recency decay: 'fast' (str) is not a number in (0, 1]"),
        ({"weights": [1, 1]}, ParameterError, "recency weights: [1, 1] (list) are not three numbers >= 0, not all 0"),
        ({"weights": [-1, 1, 1]}, ParameterError, "recency weights: [-1, 1, 1] (list) are not three numbers >= 0"),
        (
            {"weights": [0, 0, 0]},
            ParameterError,
            "recency weights: [0, 0, 0] (list) are not three numbers >= 0, not all 0",
        ),
        ({"depth": 0}, ParameterError, "recency depth: 0 (int) is less than 1"),
        (
            {"base": "nope"},
            UnknownNameError,
            "recency base: 'nope' (str) is not a known name; choose from: bm25, dense",
        ),
    ],
)
def test_bad_parameters_are_one_clear_error(params: dict, error: type, message: str) -> None:
    """Bad decay, weights, depth or base: one ParameterError line naming it and what is allowed."""
    params.setdefault("base", BASE)
    with pytest.raises(error) as caught:
        Recency(**params)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            MemoryEntry("x", "t", metadata={"importance": 1.5}),
            "entry 'x' metadata importance: 1.5 (float) is not a number in [0, 1]; give importance in [0, 1], or leave it out (default 0.5)",
        ),
        (
            MemoryEntry("x", "t", metadata={"importance": "high"}),
            "entry 'x' metadata importance: 'high' (str) is not a number",
        ),
        (
            MemoryEntry("x", "t", metadata={"importance": True}),
            "entry 'x' metadata importance: True (bool) is not a number",
        ),
        (  # MemoryEntry() itself refuses a naive created_at; built unchecked, the retriever still does
            MemoryEntry._trusted(id="x", text="t", created_at=datetime(2024, 1, 1)),
            "entry 'x' created_at: datetime.datetime(2024, 1, 1, 0, 0) (datetime) is not a timezone-aware datetime",
        ),
    ],
)
def test_bad_entries_are_refused_at_add(entry: MemoryEntry, message: str) -> None:
    """An importance outside [0, 1] or a naive created_at is refused when added, and nothing is indexed."""
    retriever = Recency(base=BASE)
    with pytest.raises(ParameterError) as caught:
        retriever.add([ENTRIES[0], entry])
    assert str(caught.value).startswith(message)
    assert len(retriever) == 0


@pytest.mark.parametrize(
    ("spec", "key", "label"),
    [
        ("recency", "recency", "Recency (BM25)"),
        ("recency[base=bm25,decay=0.995,weights=1+1+1,depth=100]", "recency", "Recency (BM25)"),
        ("recency[base=dense]", "recency[base=dense]", "Recency (Dense (wordllama))"),
        (
            "recency[decay=0.99,weights=0.5+3+2]",
            "recency[decay=0.99,weights=0.5+3+2]",
            "Recency (BM25; decay=0.99, weights=0.5+3+2)",
        ),
    ],
)
def test_keys_and_labels(spec: str, key: str, label: str) -> None:
    """Defaults drop out of the key; the label names the base and what differs."""
    resolved = resolve_retriever(spec)
    assert (resolved.key, resolved.label) == (key, label)
    assert make_retriever(spec).label == label


def test_params_are_json_ready() -> None:
    """params() states base, decay, weights, depth and the default importance."""
    params = make_retriever("recency").params()
    assert json.loads(json.dumps(params)) == params
    assert {k: params[k] for k in ("base", "decay", "weights", "depth", "importance_default")} == {
        "base": "bm25",
        "decay": 0.995,
        "weights": [1.0, 1.0, 1.0],
        "depth": 100,
        "importance_default": 0.5,
    }


def test_explain_gives_the_three_parts() -> None:
    """explain names relevance, recency and importance, and they add up to the score."""
    retriever = _recency()
    why = retriever.explain(Query("q", "q"), "b")
    assert why.candidate and why.relevance == pytest.approx(1 / 3) and why.hours == 24.0
    assert why.recency == 0.995**24 and why.importance == 0.5 and not why.importance_given
    assert why.score == retriever.score_all("q")["b"]
    assert why.hit_reason() == (
        "relevance 0.33 (Base 2, min-max over 3 candidates) + recency 0.89 (24.0 hours before the newest entry, "
        "x0.995 per hour) + importance 0.50 (the default) = 1.720"
    )
    assert "it has no created_at" in retriever.explain(Query("q", "q"), "c").hit_reason()
    outside = retriever.explain("q", "d")
    assert not outside.candidate and outside.score == 0.0
    assert outside.miss_reason() == "Base does not rank it in its top 100, so recency never scores it"
    assert outside.matched == () and outside.missing == ()


def test_explain_passes_on_the_base_retrievers_words() -> None:
    """With BM25 as base, matched and missing are BM25's query words."""
    retriever = make_retriever("recency")
    retriever.add([MemoryEntry("m1", "lentil soup", created_at=DAY1), MemoryEntry("m2", "fish", created_at=DAY1)])
    why = retriever.explain("lentil curry", "m1")
    assert (why.matched, why.missing) == (("lentil",), ("curry",))
    assert (
        retriever.explain("lentil curry", "m2")
        .miss_reason()
        .startswith(
            "BM25 does not rank it in its top 100, so recency never scores it (it contains none of the query words"
        )
    )


# -- Query.asked_at ------------------------------------------------------------------------


def test_asked_at_is_an_optional_last_field() -> None:
    """Query gains asked_at as its last field, default None: every existing constructor call stays valid."""
    assert [f.name for f in dataclasses.fields(Query)][-1] == "asked_at"
    old = Query("q1", "text", ("tag",), "scope", "group", NO_METADATA)
    assert old.asked_at is None
    assert Query("q1", "t", asked_at=DAY1).asked_at == DAY1


def test_a_naive_asked_at_is_refused() -> None:
    """asked_at must know its timezone, or ages could not be computed."""
    with pytest.raises(
        ParameterError,
        match=re.escape("asked_at: datetime.datetime(2024, 1, 1, 0, 0) (datetime) is not a timezone-aware datetime"),
    ):
        Query("q", "t", asked_at=datetime(2024, 1, 1))
    with pytest.raises(
        ParameterError, match=re.escape("asked_at: '2024-01-01' (str) is not a timezone-aware datetime")
    ):
        Query("q", "t", asked_at="2024-01-01")  # type: ignore[arg-type]
