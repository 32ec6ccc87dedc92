"""The LongMemEval loader: entries and judgments as the official harness builds them, skips, repairs, errors.

``official_flat_index`` and ``official_keeps`` below transcribe, in this test,
the published behaviour of LongMemEval's ``src/retrieval/run_retrieval.py``
(``process_item_flat_index``, the ``correct_docs`` line and the averaging in
``main``); nothing is imported from LongMemEval.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import longmemeval_questions

from agentmemory.collection import collection_summary
from agentmemory.datasets import load
from agentmemory.datasets.longmemeval import load_longmemeval, parse_longmemeval_date
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError
from agentmemory.records import Provenance

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"
FORM = "'YYYY/MM/DD (Ddd) HH:MM' like '2023/05/20 (Sat) 02:21'"

KEPT = ["e47becba", "gpt4_2f8be40d", "7c3d9e10", "0b8e7f3a", "gpt4_93c1a7d5", "3e6f1b2c", "gpt4_5d9a0c11"]
NO_TARGET = (
    "1a4f7c22",
    "no user turn has has_answer: true (no target turns): the official run_retrieval.py leaves such questions out "
    "of its means",
)
ABSTENTION = "abstention question ('_abs' in its id): the official retrieval scripts leave these out"
STRICT_SKIPPED = (
    NO_TARGET,
    ("6a2c8f3d_abs", ABSTENTION),
    ("9f1e2d3c_abs", ABSTENTION),
    ("4b7e1a9d", "haystack lists differ in length: 4 session ids, 3 dates, 4 sessions"),
    ("8c2d4f6a", "session id 'ultrachat_77120' is repeated (positions 0 and 3)"),
    ("2d9f8e7c", "answer session 'answer_7e6d5c4b_2' is not in the haystack"),
    (
        "5e4d3c2b",
        f"date '2023/02/30 (Thu) 11:00' of session 'ultrachat_559012' is not a real date and time (day is out of "
        f"range for month); expected {FORM}",
    ),
    (
        "c1d2e3f4",
        "user turn 3 of answer session 'answer_9a8b7c6d' has no has_answer (the official harness requires it)",
    ),
)
REPAIRS = (
    (
        "4b7e1a9d",
        "haystack cut to its first 3 sessions, as the official harness's zip does: "
        "session 'sharegpt_Qw3eR_1' at position 3 dropped",
    ),
    (
        "8c2d4f6a",
        "session 'ultrachat_77120' at position 3 (dated '2023/11/08 (Wed) 03:21') dropped: a copy of position 0",
    ),
    (
        "2d9f8e7c",
        "answer session 'answer_7e6d5c4b_2' dropped from answer_session_ids: not in the haystack "
        "(judgments come from the haystack)",
    ),
    (
        "5e4d3c2b",
        "session 'ultrachat_559012' has no known date: date '2023/02/30 (Thu) 11:00' of session 'ultrachat_559012' "
        "is not a real date and time (day is out of range for month)",
    ),
    ("c1d2e3f4", "user turn 3 of answer session 'answer_9a8b7c6d' has no has_answer: read as false"),
)
NOTES = (
    (
        "gpt4_93c1a7d5",
        "answer session 'answer_93c1a7d5_3' is not judged: none of its user turns has has_answer: true, "
        "so the official harness renames it 'noans_93c1a7d5_3'",
    ),
    (
        "gpt4_5d9a0c11",
        "session 'answer_c4e1f7a9_2' is judged (its id contains 'answer') but is not in answer_session_ids",
    ),
)


@pytest.fixture(scope="module")
def sessions():
    return load_longmemeval(SAMPLE)


@pytest.fixture(scope="module")
def turns():
    return load_longmemeval(SAMPLE, granularity="turn")


def _entries(collection, question_id):
    return [e for e in collection.entries if e.scope == question_id]


# --- the authored sample ----------------------------------------------------------------------------------


def test_strict_sample_queries_and_skips(sessions, turns):
    """Strict loading keeps 7 of the 15 questions (every type), skips the rest with the exact reasons, and
    notes both disagreements with answer_session_ids; both granularities keep the same questions."""
    for c in (sessions, turns):
        assert [q.id for q in c.queries] == KEPT
        assert c.skipped == STRICT_SKIPPED
        assert c.repairs == ()
        assert c.notes == NOTES
        assert [q.group for q in c.queries] == [
            "single-session-user",
            "single-session-user",
            "single-session-assistant",
            "single-session-preference",
            "multi-session",
            "knowledge-update",
            "temporal-reasoning",
        ]
    assert dict(sessions.settings) == {"granularity": "session", "indexed_turns": "user"}
    assert dict(turns.settings) == {"granularity": "turn", "indexed_turns": "user"}


def test_session_entries_and_judgments(sessions):
    """A session entry's id is '<question>/<session id>', its text the user turns joined by single spaces; an
    answer session whose user turns carry no has_answer: true is renamed noans and not judged."""
    ids = [e.id.split("/", 1)[1] for e in _entries(sessions, "gpt4_93c1a7d5")]
    assert ids == [
        "5a1b9c0e_2",
        "answer_93c1a7d5_1",
        "ultrachat_77120",
        "sharegpt_yk2Ljd_0",
        "answer_93c1a7d5_2",
        "noans_93c1a7d5_3",
        "e3b0c442_1",
        "sharegpt_Zx9Lm_3",
    ]
    assert dict(sessions.qrels["gpt4_93c1a7d5"]) == {
        "gpt4_93c1a7d5/answer_93c1a7d5_1": 1,
        "gpt4_93c1a7d5/answer_93c1a7d5_2": 1,
    }
    plant = sessions.entry("gpt4_93c1a7d5/ultrachat_77120")
    assert (
        plant.text
        == "How often should I water a snake plant? My fern has brown tips on its leaves. What am I doing wrong?"
    )
    assert plant.created_at == datetime(2023, 3, 11, 1, 14, tzinfo=timezone.utc)
    assert plant.provenance == Provenance(source="conversation", ref="ultrachat_77120", actor="user")
    assert plant.scope == "gpt4_93c1a7d5" and plant.tags == ()
    assert dict(plant.metadata) == {
        "question_id": "gpt4_93c1a7d5",
        "session_id": "ultrachat_77120",
        "session_position": 2,
        "session_date": "2023/03/11 (Sat) 01:14",
    }
    assert len(sessions.entries) == 45


def test_turn_entries_are_numbered_over_all_turns(turns):
    """Turn ids number every turn from 1, but only user turns are entries (1, 3, 5 ...); the user turns of an
    answer session without has_answer are renamed noans; the gold are the has_answer user turns."""
    ids = [e.id.split("/", 1)[1] for e in _entries(turns, "gpt4_2f8be40d")]
    assert ids[ids.index("noans_6c1f0e2a_1") + 1] == "answer_6c1f0e2a_3"
    assert all(i.rsplit("_", 1)[1] in ("1", "3", "5") for i in ids)
    assert dict(turns.qrels["gpt4_2f8be40d"]) == {"gpt4_2f8be40d/answer_6c1f0e2a_3": 1}
    assert dict(turns.qrels["e47becba"]) == {"e47becba/answer_280352e9_1": 1, "e47becba/answer_280352e9_3": 1}
    entry = turns.entry("e47becba/answer_280352e9_1")
    assert entry.text.startswith("I graduated with a degree in Business Administration")
    assert entry.provenance == Provenance(source="conversation", ref="answer_280352e9", actor="user")
    assert dict(entry.metadata) == {
        "question_id": "e47becba",
        "session_id": "answer_280352e9",
        "session_position": 2,
        "session_date": "2023/05/06 (Sat) 15:29",
        "turn": 1,
        "role": "user",
    }
    assert len(turns.entries) == 104


def test_turn_entries_store_each_session_once(turns):
    """At turn level the entries are columns: a session's date, provenance per role and metadata are stored once
    (codes per row), a turn adds its number and role; every record made from them is the turn's own."""
    from agentmemory.collection.columns import Codes, Layered

    metadata = turns.entries.column("metadata")
    assert isinstance(metadata, Layered)
    assert sorted(metadata.own) == ["role", "turn"]
    sessions = {(e.metadata["question_id"], e.metadata["session_id"]) for e in turns.entries}
    assert len(metadata.base.values) >= len(sessions)
    assert all(isinstance(turns.entries.column(name), Codes) for name in ("created_at", "provenance", "scope"))
    by_session: dict = {}
    for e in turns.entries:  # the turns of one session share its metadata mapping, not copies of it
        by_session.setdefault(e.metadata["session_id"] + e.scope, set()).add(id(e.metadata._base))
    assert all(len(found) == 1 for found in by_session.values())
    assert [e.metadata["turn"] for e in _entries(turns, "e47becba")][:2] == [1, 3]


def test_queries_carry_type_date_and_answer(turns):
    """Query: the question, scope its own id, group its type, asked_at its question_date, metadata the rest."""
    q = turns.queries[KEPT.index("gpt4_93c1a7d5")]
    assert (q.text, q.scope, q.group, q.tags) == (
        "How many musical instruments have I bought this year?",
        "gpt4_93c1a7d5",
        "multi-session",
        None,
    )
    assert q.asked_at == parse_longmemeval_date(q.metadata["question_date"])
    assert dict(q.metadata) == {
        "question_type": "multi-session",
        "question_date": "2023/03/23 (Thu) 19:56",
        "answer": 3,
        "answer_session_ids": ("answer_93c1a7d5_1", "answer_93c1a7d5_2", "answer_93c1a7d5_3"),
    }


def test_repair_keeps_twelve_and_lists_every_change():
    """With repair, the five malformed questions are kept and every change is listed; the no-target and
    abstention questions are still left out."""
    c = load_longmemeval(SAMPLE, granularity="turn", repair=True)
    assert [q.id for q in c.queries] == [*KEPT, "4b7e1a9d", "8c2d4f6a", "2d9f8e7c", "5e4d3c2b", "c1d2e3f4"]
    assert c.skipped == STRICT_SKIPPED[:3]
    assert c.repairs == REPAIRS
    assert c.notes == NOTES
    assert [e.id for e in _entries(c, "4b7e1a9d")][-1] == "4b7e1a9d/e3b0c442_1_5"  # the last session cut
    assert sum(e.id.startswith("8c2d4f6a/ultrachat_77120_") for e in c.entries) == 2  # one copy, two user turns
    assert c.entry("5e4d3c2b/ultrachat_559012_1").created_at is None
    assert c.entry("c1d2e3f4/noans_9a8b7c6d_3").text == "What grinder should I buy?"
    assert dict(c.qrels["c1d2e3f4"]) == {"c1d2e3f4/answer_9a8b7c6d_1": 1}


def test_all_turns():
    """all_turns indexes the assistant's turns too: the single-session-assistant question whose evidence is the
    assistant's turn is kept and judged by it; session texts are role-prefixed lines."""
    c = load_longmemeval(SAMPLE, granularity="turn", all_turns=True)
    assert "1a4f7c22" in [q.id for q in c.queries]
    assert dict(c.qrels["1a4f7c22"]) == {"1a4f7c22/answer_b7d2e9f1_2": 1}
    assert c.entry("1a4f7c22/answer_b7d2e9f1_2").provenance.actor == "assistant"
    assert dict(c.settings) == {"granularity": "turn", "indexed_turns": "all"}
    assert c.notes == NOTES[1:]  # answer_93c1a7d5_3 is judged through its assistant turn
    s = load_longmemeval(SAMPLE, all_turns=True)
    assert s.entry("gpt4_93c1a7d5/answer_93c1a7d5_1").text == (
        "user: Got myself a ukulele this week and want to learn some easy songs on it.\n"
        "assistant: Start with four chords: C, G, Am and F cover many songs."
    )
    assert s.entry("gpt4_93c1a7d5/answer_93c1a7d5_1").provenance.actor is None


def test_user_turns_only_is_the_default():
    """user_turns_only=True changes nothing; with all_turns it is refused."""
    assert load_longmemeval(SAMPLE, granularity="turn", user_turns_only=True) == load_longmemeval(
        SAMPLE, granularity="turn"
    )
    with pytest.raises(ParameterError) as info:
        load_longmemeval(SAMPLE, all_turns=True, user_turns_only=True)
    assert str(info.value) == (
        "all_turns: True (bool) contradicts user_turns_only=True; index the user's turns only (the official "
        "setting, the default) or all turns, not both"
    )


def test_load_dispatches_with_options():
    """load() detects the file and passes the format's options through."""
    assert load(SAMPLE) == load_longmemeval(SAMPLE)
    assert load(SAMPLE, granularity="turn", repair=True) == load_longmemeval(SAMPLE, granularity="turn", repair=True)


def test_summary_records_settings_and_notes(turns):
    """The artifact's collection summary carries the settings and the notes (and only collections that have them)."""
    summary = collection_summary(turns)
    assert summary["settings"] == {"granularity": "turn", "indexed_turns": "user"}
    assert summary["notes"] == [{"query_id": q, "note": n} for q, n in NOTES]
    assert summary["skipped_queries"][0] == {"query_id": NO_TARGET[0], "reason": NO_TARGET[1]}


# --- parity with the official harness (Hypothesis) --------------------------------------------------------


def official_flat_index(session, granularity, session_id):
    """(texts, corpus ids) of one session, as the official process_item_flat_index builds them."""
    if granularity == "session":
        text = " ".join(turn["content"] for turn in session if turn["role"] == "user")
        ids = [session_id]
        user = [turn for turn in session if turn["role"] == "user"]
        if "answer" in session_id and all(not turn["has_answer"] for turn in user):
            ids = [session_id.replace("answer", "noans")]
        return [text], ids
    texts, ids = [], []
    for index, turn in enumerate(session):
        if turn["role"] == "user":
            texts.append(turn["content"])
            turn_id = session_id + "_" + str(index + 1)
            if "answer" in session_id and not turn["has_answer"]:
                turn_id = turn_id.replace("answer", "noans")
            ids.append(turn_id)
    return texts, ids


def official_keeps(item):
    """Whether the official main() averages the question in: not an abstention, and some user turn has_answer."""
    if "_abs" in item["question_id"]:
        return False
    users = [turn for session in item["haystack_sessions"] for turn in session if turn["role"] == "user"]
    return any(("has_answer" in turn) and turn["has_answer"] for turn in users)


@given(st.lists(longmemeval_questions(), min_size=1, max_size=4), st.sampled_from(["session", "turn"]))
def test_entries_and_judgments_equal_the_official_harness(tmp_path_factory, items, granularity):
    """For random well-formed questions, the loaded entries (ids, texts, order) and judgments are the official
    corpus and correct_docs; a question is kept exactly when the official script averages it in and it has a
    gold item (the one documented difference: no gold item at all is left out here)."""
    for index, item in enumerate(items):
        item["question_id"] = f"q{index}" + ("_abs" if index == 2 else "")
    path = tmp_path_factory.mktemp("lme") / "questions.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    c = load_longmemeval(path, granularity=granularity)
    kept = {q.id for q in c.queries}
    for item in items:
        qid = item["question_id"]
        texts, ids = [], []
        for session_id, session in zip(item["haystack_session_ids"], item["haystack_sessions"]):
            t, i = official_flat_index(session, granularity, session_id)
            texts += t
            ids += i
        correct_docs = {doc for doc in ids if "answer" in doc}
        assert (qid in kept) == (official_keeps(item) and bool(correct_docs))
        if qid not in kept:
            continue
        entries = [e for e in c.entries if e.scope == qid]
        assert [e.id for e in entries] == [f"{qid}/{doc}" for doc in ids]
        assert [e.text for e in entries] == texts
        assert set(c.qrels[qid]) == {f"{qid}/{doc}" for doc in correct_docs}


# --- malformed questions, one at a time --------------------------------------------------------------------


def _question(**changes):
    """A minimal valid question: a filler and an answer session, two user turns each."""
    item = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Which kayak did I buy?",
        "answer": "a red one",
        "question_date": "2023/06/10 (Sat) 12:00",
        "haystack_session_ids": ["fill_1", "answer_k1"],
        "haystack_dates": ["2023/06/01 (Thu) 09:00", "2023/06/03 (Sat) 20:30"],
        "haystack_sessions": [
            [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
            [
                {"role": "user", "content": "I bought a red kayak.", "has_answer": True},
                {"role": "assistant", "content": "Nice!", "has_answer": False},
                {"role": "user", "content": "Where can I paddle?", "has_answer": False},
            ],
        ],
        "answer_session_ids": ["answer_k1"],
    }
    item.update(changes)
    return item


def _load(tmp_path, items, **options):
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return load_longmemeval(path, **options)


def test_minimal_question(tmp_path):
    """The minimal question loads at both levels with the expected ids and gold."""
    c = _load(tmp_path, [_question()], granularity="turn")
    assert [e.id for e in c.entries] == ["q1/fill_1_1", "q1/answer_k1_1", "q1/noans_k1_3"]
    assert dict(c.qrels["q1"]) == {"q1/answer_k1_1": 1}
    assert (c.skipped, c.repairs, c.notes) == ((), (), ())
    assert _load(tmp_path, _question()).qrels["q1"] == {"q1/answer_k1": 1}  # one question object works too


@pytest.mark.parametrize(
    ("changes", "strict", "repaired"),
    [
        pytest.param(
            {"haystack_session_ids": ["fill_1", "answer_k1", "fill_2"]},
            "haystack lists differ in length: 3 session ids, 2 dates, 2 sessions",
            [
                "haystack cut to its first 2 sessions, as the official harness's zip does: session 'fill_2' at "
                "position 2 dropped"
            ],
            id="lengths",
        ),
        pytest.param(
            {"haystack_dates": ["2023/06/01 (Thu) 09:00"]},
            "haystack lists differ in length: 2 session ids, 1 dates, 2 sessions",
            None,  # the cut drops the answer session: nothing left to judge
            id="lengths-drop-the-answer",
        ),
        pytest.param(
            {"question_date": "2023/06/10 12:00"},
            f"question_date '2023/06/10 12:00' is not a LongMemEval date; expected {FORM}",
            ["the question has no known date: question_date '2023/06/10 12:00' is not a LongMemEval date"],
            id="question-date",
        ),
        pytest.param(
            {"haystack_dates": ["2023/06/31 (Sat) 09:00", "2023/06/03 (Sat) 20:30"]},
            f"date '2023/06/31 (Sat) 09:00' of session 'fill_1' is not a real date and time (day is out of range "
            f"for month); expected {FORM}",
            [
                "session 'fill_1' has no known date: date '2023/06/31 (Sat) 09:00' of session 'fill_1' is not a real "
                "date and time (day is out of range for month)"
            ],
            id="no-such-day",
        ),
        pytest.param(
            {"question_date": "2023/06/10 (Sat) 24:00"},
            f"question_date '2023/06/10 (Sat) 24:00' is not a real date and time (hour must be in 0..23); "
            f"expected {FORM}",
            [
                "the question has no known date: question_date '2023/06/10 (Sat) 24:00' is not a real date and time "
                "(hour must be in 0..23)"
            ],
            id="no-such-hour",
        ),
        pytest.param(
            {"answer_session_ids": ["answer_k1", "answer_k2"]},
            "answer session 'answer_k2' is not in the haystack",
            [
                "answer session 'answer_k2' dropped from answer_session_ids: not in the haystack (judgments come from "
                "the haystack)"
            ],
            id="answer-not-in-haystack",
        ),
    ],
)
def test_malformed_question_strict_and_repaired(tmp_path, changes, strict, repaired):
    """Strict: skipped with the reason; repair: kept with every change listed (or skipped when nothing is left)."""
    item = _question(**changes)
    c = _load(tmp_path, [item], granularity="turn")
    assert (c.queries, c.skipped) == ((), (("q1", strict),))
    r = _load(tmp_path, [item], granularity="turn", repair=True)
    if repaired is None:
        assert r.queries == () and r.skipped[0][1].startswith("no user turn has has_answer: true")
    else:
        assert [q.id for q in r.queries] == ["q1"]
        assert r.repairs == tuple(("q1", change) for change in repaired)


@pytest.mark.parametrize("repair", [False, True])
def test_a_wrong_weekday_is_read_and_noted(tmp_path, repair):
    """A date whose weekday is not its date's (2023/02/04 was a Saturday) is read as the date it names and noted,
    in both modes: the question is kept (the official harness never reads dates), nothing is skipped or repaired."""
    item = _question(
        haystack_dates=["2023/02/04 (Mon) 09:00", "2023/06/03 (Sat) 20:30"], question_date="2023/06/10 (Fri) 12:00"
    )
    c = _load(tmp_path, [item], granularity="turn", repair=repair)
    assert [q.id for q in c.queries] == ["q1"]
    assert (c.skipped, c.repairs) == ((), ())
    assert c.notes == (
        (
            "q1",
            "date '2023/02/04 (Mon) 09:00' of session 'fill_1' names the weekday Mon, but that date is a Sat: read "
            "as the date it names (the official harness never reads dates)",
        ),
        (
            "q1",
            "question_date '2023/06/10 (Fri) 12:00' names the weekday Fri, but that date is a Sat: read as the date "
            "it names (the official harness never reads dates)",
        ),
    )
    assert c.entry("q1/fill_1_1").created_at == datetime(2023, 2, 4, 9, 0, tzinfo=timezone.utc)
    assert c.queries[0].asked_at == datetime(2023, 6, 10, 12, 0, tzinfo=timezone.utc)


def test_duplicate_sessions(tmp_path):
    """A repeated session id: an identical later copy is dropped on repair; different turns cannot be repaired."""
    item = _question()
    item["haystack_session_ids"].append("fill_1")
    item["haystack_dates"].append("2023/06/05 (Mon) 10:00")
    item["haystack_sessions"].append(copy.deepcopy(item["haystack_sessions"][0]))
    r = _load(tmp_path, [item], granularity="turn", repair=True)
    assert r.repairs == (
        ("q1", "session 'fill_1' at position 2 (dated '2023/06/05 (Mon) 10:00') dropped: a copy of position 0"),
    )
    item["haystack_sessions"][2][0]["content"] = "Hello again"
    for repair in (False, True):
        c = _load(tmp_path, [item], granularity="turn", repair=repair)
        assert c.skipped == (("q1", "session id 'fill_1' names two different sessions (positions 0 and 2)"),)


def test_renamed_id_collision_is_skipped_in_both_modes(tmp_path):
    """A session renamed noans whose new id is another session's id cannot be loaded (ids must be unique)."""
    item = _question()
    item["haystack_session_ids"] = ["noans_k2", "answer_k1", "answer_k2"]
    item["haystack_dates"].append("2023/06/05 (Mon) 10:00")
    item["haystack_sessions"].append([{"role": "user", "content": "Hm", "has_answer": False}])
    for repair in (False, True):
        c = _load(tmp_path, [item], repair=repair)
        assert c.skipped == (
            (
                "q1",
                "corpus id 'noans_k2' of session 'answer_k2' is also the id of an item of session 'noans_k2' "
                "(after the official renaming to noans)",
            ),
        )


def test_has_answer_only_outside_answer_sessions(tmp_path):
    """has_answer turns only in sessions whose id lacks 'answer': nothing is gold, so the question is left out
    (the official script would average it in with recall_all 1); the reason says so."""
    item = _question()
    item["haystack_sessions"][1][0]["has_answer"] = False
    item["haystack_sessions"][0][0]["has_answer"] = True
    c = _load(tmp_path, [item], granularity="turn")
    assert c.skipped == (
        (
            "q1",
            "nothing to judge: every user turn with has_answer: true is in a session whose id lacks 'answer' (the "
            "official harness would average in recall_all 1, recall_any 0, ndcg_any 0)",
        ),
    )


def test_an_answer_session_without_user_turns(tmp_path):
    """A session with no user turn is an empty-text entry at session level (renamed noans when it is an answer
    session: all() of no turns is true) and no entry at turn level."""
    item = _question()
    item["haystack_session_ids"].append("answer_k9")
    item["haystack_dates"].append("2023/06/05 (Mon) 10:00")
    item["haystack_sessions"].append([{"role": "assistant", "content": "Anything else?", "has_answer": True}])
    item["answer_session_ids"].append("answer_k9")
    c = _load(tmp_path, [item])
    assert c.entry("q1/noans_k9").text == ""
    assert c.notes == (
        (
            "q1",
            "answer session 'answer_k9' is not judged: none of its user turns has has_answer: true, so the "
            "official harness renames it 'noans_k9'",
        ),
    )
    assert "q1/noans_k9" not in {e.id for e in _load(tmp_path, [item], granularity="turn").entries}


# --- errors -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda q: q.pop("haystack_dates"),
            "$[0].haystack_dates: missing; every question needs question_id, "
            "question_type, question, answer, question_date, haystack_session_ids, haystack_dates, haystack_sessions, "
            "answer_session_ids",
        ),
        (lambda q: q.update(question_id=""), "$[0].question_id: expected a non-empty string; found '' (a string)"),
        (
            lambda q: q.update(question_type="abstention"),
            "$[0].question_type: 'abstention' is not a LongMemEval "
            "question type; expected one of single-session-user, single-session-preference, single-session-assistant, "
            "multi-session, temporal-reasoning, knowledge-update",
        ),
        (
            lambda q: q.update(haystack_session_ids="fill_1"),
            "$[0].haystack_session_ids: expected a list of session ids; found 'fill_1' (a string)",
        ),
        (
            lambda q: q["haystack_session_ids"].__setitem__(0, 7),
            "$[0].haystack_session_ids[0]: expected a non-empty string (session ids); found 7 (a number)",
        ),
        (
            lambda q: q["haystack_dates"].__setitem__(1, None),
            "$[0].haystack_dates[1]: expected a date string; found null",
        ),
        (
            lambda q: q["haystack_sessions"].__setitem__(1, {}),
            "$[0].haystack_sessions[1]: expected a session, a list of turns; found an empty object",
        ),
        (
            lambda q: q["haystack_sessions"][1][0].update(role="system"),
            "$[0].haystack_sessions[1][0].role: expected 'user' or 'assistant'; found 'system' (a string)",
        ),
        (
            lambda q: q["haystack_sessions"][1][0].pop("content"),
            "$[0].haystack_sessions[1][0].content: missing; every turn needs a role and a content",
        ),
        (
            lambda q: q["haystack_sessions"][1][0].update(has_answer=1),
            "$[0].haystack_sessions[1][0].has_answer: expected true or false; found 1 (a number)",
        ),
        (
            lambda q: q.update(answer_session_ids=None),
            "$[0].answer_session_ids: expected a list of session ids; found null",
        ),
    ],
)
def test_shape_errors_name_the_json_path(tmp_path, mutate, message):
    """Anything not LongMemEval-shaped raises InputError naming the file and the JSON path, to the letter."""
    item = _question()
    mutate(item)
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([item]), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_longmemeval(path)
    assert str(info.value) == f"{path}: {message}"


def test_file_errors(tmp_path):
    """Missing file, a folder, bad UTF-8, malformed JSON, another JSON shape, a repeated question_id."""
    with pytest.raises(MissingFileError):
        load_longmemeval(tmp_path / "none.json")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path}: is a folder; expected a LongMemEval JSON file")):
        load_longmemeval(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[\n{"question_id": "\xff"}]')
    with pytest.raises(InputError, match=re.escape(f"{bad}:2: is not valid UTF-8")):
        load_longmemeval(bad)
    bad.write_text('[{"question_id": "q1",\n "x": }]', encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{bad}:2: malformed JSON (Expecting value at column 7)")):
        load_longmemeval(bad)
    bad.write_text(json.dumps([{"conversation": {}, "qa": []}]), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_longmemeval(bad)
    assert str(info.value) == (
        f"{bad}: is not a LongMemEval file: expected a list of questions with 'question_id' and 'haystack_sessions' "
        "(found a list whose first item is an object with keys 'conversation', 'qa')"
    )
    bad.write_text(json.dumps([_question(), _question()]), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_longmemeval(bad)
    assert str(info.value) == f"{bad}: $[1].question_id: 'q1' repeats the question_id of $[0]"


def test_unknown_granularity():
    """granularity is session or turn."""
    with pytest.raises(UnknownNameError) as info:
        load_longmemeval(SAMPLE, granularity="sentence")
    assert str(info.value) == "granularity: 'sentence' (str) is not a known name; choose from: session, turn"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=timezone.utc)),
        ("2024/02/29 (Thu) 23:59", datetime(2024, 2, 29, 23, 59, tzinfo=timezone.utc)),
    ],
)
def test_parse_dates(text, expected):
    """LongMemEval dates are read as UTC."""
    assert parse_longmemeval_date(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("2023/05/20 02:21", "is not a LongMemEval date"),
        ("2023-05-20 (Sat) 02:21", "is not a LongMemEval date"),
        ("2023/5/20 (Sat) 02:21", "is not a LongMemEval date"),
        ("2023/05/20 (sat) 02:21", "is not a LongMemEval date"),
        ("2023/02/30 (Thu) 11:00", "is not a real date and time (day is out of range for month)"),
        ("2023/05/20 (Sat) 24:00", "is not a real date and time (hour must be in 0..23)"),
        ("2023/05/20 (Sun) 02:21", "names the weekday Sun, but that date is a Sat"),
        (None, "is not a LongMemEval date"),
    ],
)
def test_parse_date_errors(text, problem):
    """Anything else is refused with the reason and the expected form."""
    with pytest.raises(ParameterError) as info:
        parse_longmemeval_date(text)
    assert str(info.value).endswith(f" {problem}; expected {FORM}")


# --- the command line, against the hand computation --------------------------------------------------------

#: BM25's ranking of each kept question at turn level (the top 10 corpus ids; fewer when fewer entries score
#: above 0), gold marked by the judgments.  The hand computation below reads the ranks of the gold off these.
BM25_TOP10 = {
    "e47becba": "answer_280352e9_1 answer_280352e9_3 ultrachat_559012_1 e3b0c442_1_5 sharegpt_yk2Ljd_0_5 "
    "5a1b9c0e_2_1 5a1b9c0e_2_3 sharegpt_yk2Ljd_0_1 sharegpt_yk2Ljd_0_3",
    "gpt4_2f8be40d": "answer_6c1f0e2a_3 sharegpt_Qw3eR_1_3 ultrachat_20391_1 sharegpt_Zx9Lm_3_3 sharegpt_Zx9Lm_3_5 "
    "ultrachat_77120_1 e3b0c442_1_3 noans_6c1f0e2a_1 e3b0c442_1_1 sharegpt_Zx9Lm_3_1",
    "7c3d9e10": "sharegpt_yk2Ljd_0_5 e3b0c442_1_1 ultrachat_20391_1 sharegpt_yk2Ljd_0_1 5a1b9c0e_2_1 "
    "answer_3f0a6b5c_1 ultrachat_77120_3 noans_3f0a6b5c_3 ultrachat_20391_3 sharegpt_yk2Ljd_0_3",
    "0b8e7f3a": "e3b0c442_1_1 sharegpt_Qw3eR_1_3 sharegpt_Qw3eR_1_5 b94d27b9_4_3 ultrachat_77120_1 noans_a1c9d7e2_3",
    "gpt4_93c1a7d5": "5a1b9c0e_2_3 answer_93c1a7d5_2_1 sharegpt_Zx9Lm_3_3 answer_93c1a7d5_1_1 ultrachat_77120_1 "
    "sharegpt_yk2Ljd_0_1 sharegpt_yk2Ljd_0_3 e3b0c442_1_5 e3b0c442_1_3 noans_93c1a7d5_2_3",
    "3e6f1b2c": "answer_5d8e2c4a_1_1 b94d27b9_4_3 sharegpt_Qw3eR_1_5 b94d27b9_4_1 ultrachat_559012_5 "
    "answer_5d8e2c4a_2_1 sharegpt_Qw3eR_1_1 ultrachat_559012_1 5a1b9c0e_2_3",
    "gpt4_5d9a0c11": "answer_c4e1f7a9_2_1 answer_c4e1f7a9_1_1 e3b0c442_1_5 noans_c4e1f7a9_2_3 sharegpt_yk2Ljd_0_1 "
    "e3b0c442_1_3 ultrachat_77120_3 ultrachat_77120_1 ultrachat_20391_1 sharegpt_yk2Ljd_0_5",
}

# By hand, from the gold ranks above (official discount: rank 1 and 2 count 1, rank r >= 3 counts 1/log2 r):
#   (recall_any@5, recall_all@5, ndcg_any@5, recall_any@10)
HAND = {
    "e47becba": (1, 1, (1 + 1) / (1 + 1), 1),  # gold at ranks 1 and 2
    "gpt4_2f8be40d": (1, 1, 1 / 1, 1),  # rank 1
    "7c3d9e10": (0, 0, 0, 1),  # rank 6
    "0b8e7f3a": (0, 0, 0, 0),  # never retrieved: it shares no word with the question
    "gpt4_93c1a7d5": (1, 1, (1 + 1 / 2) / (1 + 1), 1),  # ranks 2 and 4: 1/log2(2) + 1/log2(4)
    "3e6f1b2c": (1, 0, 1 / (1 + 1), 1),  # ranks 1 and 6
    "gpt4_5d9a0c11": (1, 1, (1 + 1) / (1 + 1), 1),  # ranks 1 and 2
}
TYPES = {
    "single-session-user": ["e47becba", "gpt4_2f8be40d"],
    "single-session-assistant": ["7c3d9e10"],
    "single-session-preference": ["0b8e7f3a"],
    "multi-session": ["gpt4_93c1a7d5"],
    "knowledge-update": ["3e6f1b2c"],
    "temporal-reasoning": ["gpt4_5d9a0c11"],
}
MEASURES = ["recall_any@5", "recall_all@5", "ndcg_any@5", "recall_any@10"]
COMMAND = ["eval", "--collection", str(SAMPLE), "--format", "longmemeval", "--granularity", "turn",
           "--metrics", ",".join(MEASURES)]  # fmt: skip


def _mean(ids, column):
    return sum(HAND[q][column] for q in ids) / len(ids)


def test_bm25_rankings_are_the_goldens(turns):
    """The hand computation rests on these rankings: BM25's top 10 of each question, as written above."""
    from agentmemory.evaluation.runner import evaluate

    result = evaluate(turns, "bm25", k=10, ties=False).results[0]
    assert {q.query_id: " ".join(h.entry_id.split("/", 1)[1] for h in q.hits) for q in result.per_query} == BM25_TOP10


def _cli_means(text):
    """{(group or 'all'): [the BM25 mean of each of MEASURES]} read from the printed tables."""
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| System |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in lines if line.startswith("| BM25 (baseline) |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    out = {"all": [float(cells[columns.index(m)].split()[0]) for m in MEASURES]}
    group_header = next(line for line in lines if line.startswith("| Group |"))
    group_columns = [c.strip() for c in group_header.strip("|").split("|")]
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == len(group_columns) and cells[2] == "BM25":
            out[cells[0]] = [float(cells[group_columns.index(m)].split()[0]) for m in MEASURES]
    return out


def test_cli_prints_per_type_and_overall_numbers_equal_to_the_hand_computation(capsys):
    """`agentmemory eval ... --granularity turn --metrics recall_any@5,recall_all@5,ndcg_any@5,recall_any@10`
    prints overall (3 decimals) and per-question-type (2 decimals) means equal to the hand computation, with the
    settings, skips and notes.  (--k 10: the evaluation ranks the top --k, and recall_any@10 needs 10.)"""
    from agentmemory.cli.app import main

    assert main([*COMMAND, "--k", "10", "--retrievers", "bm25"]) == 0
    text = capsys.readouterr().out
    means = _cli_means(text)
    assert means["all"] == [round(_mean(list(HAND), c), 3) for c in range(4)]
    assert means["all"] == [0.714, 0.571, 0.607, 0.857]  # 5/7, 4/7, 4.25/7, 6/7
    for group, ids in TYPES.items():
        assert means[group] == [round(_mean(ids, c), 2) for c in range(4)], group
    assert "LongMemEval official definitions (recall_any@5, recall_all@5, ndcg_any@5, recall_any@10)" in text
    assert "Loaded with granularity = turn, indexed_turns = user." in text
    assert "Skipped queries (8), left out of every number:" in text
    assert "Notes (2), nothing changed:" in text


def test_cli_as_written_in_the_issue(capsys):
    """The command exactly as the issue writes it (default --k 5) gives the same numbers."""
    from agentmemory.cli.app import main

    assert main(COMMAND) == 0
    assert _cli_means(capsys.readouterr().out)["all"] == [0.714, 0.571, 0.607, 0.857]


def test_session_level_of_a_turn_run_by_hand(turns):
    """sess. measures of BM25's turn run, two by hand: 7c3d9e10's top 5 turns span 4 sessions, so k widens to 6,
    which holds the gold session (recall 1, nDCG 1/log2 6 over an ideal of its one gold turn); 3e6f1b2c widens to
    6 too, with gold turns at ranks 1 and 6: (1 + 1/log2 6) / (1 + 1)."""
    import math

    from agentmemory.evaluation.runner import evaluate

    measures = "sess.recall_any@5,sess.recall_all@5,sess.ndcg_any@5"
    result = evaluate(turns, "bm25", k=20, ties=False, measures=measures).results[0]
    values = {q.query_id: q.metrics for q in result.per_query}
    assert values["7c3d9e10"]["sess.recall_any@5"] == 1.0
    assert values["7c3d9e10"]["sess.ndcg_any@5"] == pytest.approx(1 / math.log2(6), rel=1e-15)
    assert values["3e6f1b2c"]["sess.recall_all@5"] == 1.0  # recall_all@5 at turn level is 0
    assert values["3e6f1b2c"]["sess.ndcg_any@5"] == pytest.approx((1 + 1 / math.log2(6)) / 2, rel=1e-15)
    assert values["0b8e7f3a"]["sess.recall_any@5"] == 0.0


def test_cli_session_granularity_and_options(tmp_path, capsys):
    """Session granularity and the format's flags work from the command line; the artifact records the settings."""
    from agentmemory.cli.app import main

    out = tmp_path / "eval.json"
    args = ["eval", "--collection", str(SAMPLE), "--granularity", "session", "--repair", "--retrievers", "bm25"]
    assert main([*args, "--metrics", "recall_any@5", "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["collection"]["settings"] == {"granularity": "session", "indexed_turns": "user"}
    assert data["collection"]["judged_queries"] == 12
    assert len(data["collection"]["repairs"]) == 5
    capsys.readouterr()
    assert main(["eval", "--collection", str(SAMPLE), "--all-turns", "--user-turns-only"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: all_turns: True (bool) contradicts user_turns_only=True; index the user's turns only "
        "(the official setting, the default) or all turns, not both\n"
    )
    assert main(["eval", "--collection", str(SAMPLE), "--granularity", "sentence"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: granularity: 'sentence' (str) is not a known name; choose from: session, turn\n"
    )


def test_session_measures_see_the_whole_ranking_at_any_k(turns):
    """sess.* widen their own cutoff, so their values do not depend on the evaluation's k (7c3d9e10 needs rank 6)."""
    from agentmemory.evaluation.runner import evaluate

    measures = "sess.recall_any@5,sess.ndcg_any@5,recall_any@10"
    shallow = evaluate(turns, "bm25", k=5, ties=False, measures=measures).results[0]
    deep = evaluate(turns, "bm25", k=20, ties=False, measures=measures).results[0]
    names = measures.split(",")
    assert [[q.metrics[n] for n in names] for q in shallow.per_query] == [
        [q.metrics[n] for n in names] for q in deep.per_query
    ]
    assert {q.query_id: q.metrics for q in shallow.per_query}["7c3d9e10"]["sess.recall_any@5"] == 1.0


def test_the_collection_carries_the_official_session_rule(sessions, turns):
    """A LongMemEval collection's session_of is the official strip_turn_id, the same rule as the sess. measures'
    default, on every entry id of the sample at both granularities (so no LongMemEval value moves)."""
    from agentmemory.datasets.longmemeval import longmemeval_session_of
    from agentmemory.metrics.longmemeval_official import session_of

    for c in (sessions, turns):
        assert c.session_of is longmemeval_session_of
        assert all(longmemeval_session_of(e.id) == session_of(e.id) for e in c.entries)
    assert longmemeval_session_of("q1/answer_ab12_1_3") == "q1/answer_ab12_1"
    assert longmemeval_session_of("nounderscore") == ""


def test_the_progress_bar_follows_the_file_and_ends_full(capsys):
    """progress=True shows a bar over the file's characters on stderr (the questions are parsed one at a time, so
    their number is not known up front); it ends at the file's size, and the collection is the one without it."""
    quiet = load_longmemeval(SAMPLE, granularity="turn")
    shown = load_longmemeval(SAMPLE, granularity="turn", progress=True)
    assert shown == quiet
    err = capsys.readouterr().err
    size = len(SAMPLE.read_text(encoding="utf-8"))
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith(f"load {SAMPLE.name}: 100%|██████████|"), last  # a full bar: every character read
    assert f"{size / 1000:.1f}k/{size / 1000:.1f}k" in last, last
