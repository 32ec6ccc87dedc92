"""Systems ingest turns whatever the granularity; at session granularity a turn's memory counts for its session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.collection import Collection
from agentmemory.datasets.longmemeval import load_longmemeval
from agentmemory.evaluation.runfiles import read_memories
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.system_runs import memories_text
from agentmemory.records import MemoryEntry, Query
from agentmemory.systems import Memory
from agentmemory.systems.registry import resolve_system
from agentmemory.systems.replay import replay
from agentmemory.systems.turns import turn_index

SAMPLE = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"


def _turn(e: MemoryEntry) -> tuple:
    return (e.id, e.text, e.provenance, e.created_at, e.scope, dict(e.metadata))


@pytest.fixture(scope="module", params=[False, True], ids=["user-turns", "all-turns"])
def both(request) -> tuple[Collection, Collection]:
    """The sample at session and at turn granularity, with the same turns indexed."""
    return (
        load_longmemeval(SAMPLE, all_turns=request.param),
        load_longmemeval(SAMPLE, granularity="turn", all_turns=request.param),
    )


def test_session_entries_hold_the_turn_entries(both) -> None:
    """Each session entry's turns are exactly the turn granularity's entries of that session, in order."""
    sessions, turns = both
    assert not turns.turns and len(sessions.turns) == len(sessions.entries)
    held = [t for e in sessions.entries for t in sessions.turns[e.id]]
    assert [_turn(t) for t in held] == [_turn(t) for t in turns.entries]
    for entry in sessions.entries:
        assert all(t.metadata["session_id"] == entry.metadata["session_id"] for t in sessions.turns[entry.id])


class _Recorder:
    """Records the turns of every ingest call."""

    seen: list = []

    def __init__(self, scope=None) -> None:
        pass

    def ingest(self, turns) -> None:
        _Recorder.seen.extend(turns)

    def search(self, query: str, k: int):
        return []

    def close(self) -> None:
        pass


def test_systems_are_given_the_same_turns_at_both_granularities(both) -> None:
    """The replay hands a system the turns (ids, texts, roles, times, sessions), never the session entries."""
    given = []
    for collection in both:
        _Recorder.seen = []
        replay(resolve_system(_Recorder), collection, depth=5)
        given.append(list(_Recorder.seen))
    assert given[0] == given[1] and len(given[0]) == len(both[1].entries)
    assert {t.entry_id for t in given[0]}.isdisjoint(e.id for e in both[0].entries)


def test_a_turn_source_counts_for_its_session() -> None:
    """A memory whose source is an evidence turn is attributed to the session entry holding it."""
    sessions = load_longmemeval(SAMPLE)
    query = sessions.judged_queries[0]
    gold_turn = "e47becba/answer_280352e9_1"
    assert query.id == "e47becba" and gold_turn not in {e.id for e in sessions.entries}

    class Points:
        def ingest(self, turns) -> None:
            self.texts = {t.entry_id: t.text for t in turns}

        def search(self, q: str, k: int):
            if gold_turn not in self.texts:  # another question's haystack
                return []
            return [Memory("made up", sources=(gold_turn,)), Memory(self.texts[gold_turn])]

        def close(self) -> None:
            pass

    evaluation = evaluate(sessions, None, systems=[Points], k=5, relevance="provenance", attribution="auto")
    attributed = evaluation.systems[0].attributed
    first, second = attributed.memories[:2]
    assert first.provenance.derived_from == ("e47becba/answer_280352e9",)
    assert attributed.turns[first.id] == (gold_turn,)
    assert second.provenance.derived_from == ("e47becba/answer_280352e9",) and attributed.how[second.id] == "exact"
    relevant = sessions.relevant(query.id)
    per_query = {q.query_id: q for q in evaluation.results[0].per_query}
    assert per_query[query.id].metrics["R@5"] == 1 / len(relevant)
    lines = [json.loads(line) for line in memories_text(attributed).splitlines()]
    assert lines[0]["turns"] == [gold_turn] and lines[0]["derived_from"] == ["e47becba/answer_280352e9"]


def _session_of(collection: Collection) -> dict[tuple[str, str], str]:
    return {(e.scope or "", e.metadata["session_id"]): e.id for e in collection.entries}


@pytest.mark.parametrize("relevance,attribution", [("provenance", "sources"), ("direct", "exact")])
def test_session_values_follow_from_the_turns_reached(relevance: str, attribution: str) -> None:
    """bm25 as a system at session granularity: R@k is the share of gold sessions its top k turns reach."""
    sessions = load_longmemeval(SAMPLE)
    turns = load_longmemeval(SAMPLE, granularity="turn")
    k = 3
    by_turns = evaluate(turns, None, systems=["bm25"], k=k, relevance="provenance", attribution="sources")
    ranked = {qid: [m.id for m in answer[:k]] for qid, answer in by_turns.systems[0].replay.answers.items()}
    session_of = _session_of(sessions)
    turn = {e.id: e for e in turns.entries}
    result = evaluate(sessions, None, systems=["bm25"], k=k, relevance=relevance, attribution=attribution).results[0]
    checked = 0
    for row in result.per_query:
        reached = {session_of[(turn[t].scope or "", turn[t].metadata["session_id"])] for t in ranked[row.query_id]}
        gold = set(sessions.relevant(row.query_id))
        assert row.metrics[f"R@{k}"] == len(reached & gold) / len(gold), row.query_id
        checked += bool(reached & gold)
    assert checked >= 3  # some queries reach a gold session, so the test can fail


def test_memories_file_of_a_session_run_reads_back(tmp_path: Path) -> None:
    """The memories file (with turns) of a session-granularity system is a valid --memories file."""
    sessions = load_longmemeval(SAMPLE)
    run = evaluate(sessions, None, systems=["bm25"], k=5, relevance="provenance").systems[0]
    path = tmp_path / "m.jsonl"
    path.write_text(memories_text(run.attributed), encoding="utf-8")
    read, _ = read_memories(path)
    assert [m.provenance.derived_from for m in read] == [m.provenance.derived_from for m in run.attributed.memories]
    assert all(len(set(m.provenance.derived_from)) == 1 for m in read)  # each turn of one session


def test_a_repeated_turn_id_is_refused() -> None:
    """Two entries holding a turn with the same id: one line naming the turn and both entries."""
    a = MemoryEntry("s1", "x y", scope="q")
    b = MemoryEntry("s2", "z", scope="q")
    c = Collection(
        "c",
        (a, b),
        (Query("q", "x", scope="q"),),
        {"q": {"s1": 1}},
        {"f": "0"},
        turns={"s1": (MemoryEntry("t", "x", scope="q"),), "s2": (MemoryEntry("t", "z", scope="q"),)},
    )
    with pytest.raises(ValueError, match=r"^collection: 'c' \(str\) has the turn id 't' in entries 's1' and 's2'"):
        turn_index(c)
