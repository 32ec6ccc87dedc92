"""The LoCoMo loader: entries, queries, evidence handling (strict and repair) and bad input."""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentmemory.collection import collection_summary
from agentmemory.datasets import load
from agentmemory.datasets.locomo import CATEGORIES, load_locomo, locomo_session_of, parse_session_datetime
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError
from agentmemory.records import Provenance

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "locomo-sample" / "locomo-sample.json"

STRICT_SKIPPED = (
    ("conv-1/q2", "evidence 'D1:6; D2:3' holds several ids in one string"),
    ("conv-1/q3", "evidence 'D:2:2' is not a dialogue id like D3:7 (extra ':' after 'D')"),
    ("conv-1/q4", "evidence 'D3:02' is not a dialogue id like D3:7 (leading zero)"),
    ("conv-1/q6", "evidence 'D' is not a dialogue id like D3:7"),
    ("conv-1/q7", "no evidence"),
    ("conv-2/q3", "evidence 'D3:9' names no turn in conv-2"),
    ("conv-2/q6", "evidence 'D3:08' is not a dialogue id like D3:7 (leading zero)"),
    ("conv-2/q7", "evidence 'D4:1' names no turn in conv-2"),
    ("conv-2/q8", "evidence 'D2:1' is listed twice"),
)
REPAIR_SKIPPED = (
    ("conv-1/q7", "no evidence"),
    ("conv-2/q6", "no usable evidence: evidence 'D3:08' dropped: no turn D3:8 in conv-2"),
    ("conv-2/q7", "no usable evidence: evidence 'D4:1' dropped: no turn D4:1 in conv-2"),
)
REPAIRS = (
    ("conv-1/q2", "evidence 'D1:6; D2:3' split into D1:6, D2:3"),
    ("conv-1/q3", "evidence 'D:2:2' normalised to D2:2"),
    ("conv-1/q4", "evidence 'D3:02' normalised to D3:2"),
    ("conv-1/q6", "evidence 'D' dropped: not a dialogue id like D3:7"),
    ("conv-2/q3", "evidence 'D3:9' dropped: no turn D3:9 in conv-2"),
    ("conv-2/q8", "evidence 'D2:1' dropped: D2:1 is listed twice"),
)
FORM = "expected 'h:mm am|pm on D Month, YYYY' like '1:56 pm on 8 May, 2023'"


@pytest.fixture(scope="module")
def strict():
    return load_locomo(SAMPLE)


@pytest.fixture(scope="module")
def repaired():
    return load_locomo(SAMPLE, repair=True)


def _sample(evidence=("D1:1",), **changes):
    """A minimal valid conversation: two sessions of two turns, one QA item with ``evidence``."""
    sample = {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "9:00 am on 1 June, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I bought a red kayak."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!"},
            ],
            "session_2_date_time": "8:30 pm on 3 June, 2023",
            "session_2": [
                {"speaker": "Bo", "dia_id": "D2:1", "text": "Did you paddle yet?"},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Yes, on the lake."},
            ],
        },
        "qa": [{"question": "What colour is Ann's kayak?", "answer": "red", "evidence": list(evidence), "category": 4}],
    }
    sample.update(changes)
    return sample


def _write(tmp_path: Path, document, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# -- entries ---------------------------------------------------------------


def test_entries_ids_in_file_then_session_then_turn_order(strict):
    """Entry ids are <sample_id>/<dia_id>, in conversation, session and turn order."""
    ids = [e.id for e in strict.entries]
    assert len(ids) == 33
    assert ids[:7] == [
        "conv-1/D1:1",
        "conv-1/D1:2",
        "conv-1/D1:3",
        "conv-1/D1:4",
        "conv-1/D1:5",
        "conv-1/D1:6",
        "conv-1/D2:1",
    ]
    assert ids[16:18] == ["conv-1/D3:5", "conv-2/D1:1"]
    assert ids[-1] == "conv-2/D3:5"


def test_entry_text_tags_provenance_scope_metadata(strict):
    """A turn becomes '<speaker>: <text>' with speaker and session tags, conversation provenance and its scope."""
    entry = strict.entry("conv-2/D2:3")
    assert entry.text == "Jonas: My sister Lena is getting married in Porto in April, by the way."
    assert entry.tags == ("jonas", "session-2")
    assert entry.provenance == Provenance(source="conversation", ref="conv-2/D2:3", actor="Jonas")
    assert entry.scope == "conv-2"
    assert dict(entry.metadata) == {
        "sample_id": "conv-2",
        "dia_id": "D2:3",
        "session": 2,
        "session_date_time": "6:30 pm on 28 January, 2024",
    }


def test_created_at_is_session_time_plus_turn_position_seconds(strict):
    """Turn i (0-based) of a session is created i seconds after the session's date-time, in UTC."""
    start = datetime(2023, 3, 19, 10, 2, tzinfo=timezone.utc)
    session = [e for e in strict.entries if e.id.startswith("conv-1/D2:")]
    assert [e.created_at for e in session] == [start + timedelta(seconds=i) for i in range(6)]
    assert strict.entry("conv-2/D3:1").created_at == datetime(2024, 2, 15, 12, 0, tzinfo=timezone.utc)


def test_created_at_strictly_increases_within_each_conversation(strict):
    """Within a conversation (sessions in order, turns in order) created_at strictly increases."""
    for scope in ("conv-1", "conv-2"):
        times = [e.created_at for e in strict.entries if e.scope == scope]
        assert all(a < b for a, b in zip(times, times[1:]))


def test_captions_are_appended_only_with_include_captions():
    """include_captions appends ' [image: <blip_caption>]' to captioned turns and nothing else."""
    plain = load_locomo(SAMPLE)
    with_captions = load_locomo(SAMPLE, include_captions=True)
    assert plain.entry("conv-1/D2:2").text == (
        "Priya: Better than expected. I made a small green mug; the handle cracked in the kiln, "
        "but the teacher says that happens to everyone."
    )
    assert with_captions.entry("conv-1/D2:2").text == (
        "Priya: Better than expected. I made a small green mug; the handle cracked in the kiln, "
        "but the teacher says that happens to everyone. [image: a small green ceramic mug with a cracked handle]"
    )
    changed = [a.id for a, b in zip(plain.entries, with_captions.entries) if a.text != b.text]
    assert changed == ["conv-1/D1:6", "conv-1/D2:2", "conv-2/D2:2"]
    assert dict(plain.entry("conv-1/D1:6").metadata) == {
        "sample_id": "conv-1",
        "dia_id": "D1:6",
        "session": 1,
        "session_date_time": "2:15 pm on 4 March, 2023",
        "blip_caption": "a pair of blue running shoes on a wooden floor",
        "img_url": ["https://example.org/locomo-sample/shoes.jpg"],
        "query": "running shoes",
    }


# -- queries ---------------------------------------------------------------


def test_strict_keeps_only_queries_with_wellformed_evidence(strict):
    """Strict loading keeps the 8 queries whose evidence is all well formed, with exact qrels."""
    assert [q.id for q in strict.queries] == [
        "conv-1/q0",
        "conv-1/q1",
        "conv-1/q5",
        "conv-2/q0",
        "conv-2/q1",
        "conv-2/q2",
        "conv-2/q4",
        "conv-2/q5",
    ]
    assert {q: dict(d) for q, d in strict.qrels.items()} == {
        "conv-1/q0": {"conv-1/D1:1": 1},
        "conv-1/q1": {"conv-1/D2:6": 1},
        "conv-1/q5": {"conv-1/D2:6": 1},
        "conv-2/q0": {"conv-2/D1:4": 1},
        "conv-2/q1": {"conv-2/D1:4": 1, "conv-2/D3:1": 1},
        "conv-2/q2": {"conv-2/D1:1": 1, "conv-2/D2:3": 1, "conv-2/D2:5": 1},
        "conv-2/q4": {"conv-2/D1:6": 1},
        "conv-2/q5": {"conv-2/D2:3": 1},
    }
    assert strict.skipped == STRICT_SKIPPED
    assert strict.repairs == ()


def test_query_fields_scope_group_and_metadata(strict):
    """A QA item becomes a query: question text, no tags, the conversation's scope, its category group."""
    by_id = {q.id: q for q in strict.queries}
    query = by_id["conv-2/q1"]
    assert query.text == "When did Jonas's band play at the Blue Lantern?"
    assert query.tags is None
    assert query.scope == "conv-2"
    assert query.group == "2 temporal"
    assert dict(query.metadata) == {"category": 2, "evidence": ["D1:4", "D3:1"], "answer": "3 February 2024"}
    assert dict(by_id["conv-1/q5"].metadata) == {
        "category": 5,
        "evidence": ["D2:6"],
        "adversarial_answer": "A beagle",
    }
    assert sorted({q.group for q in strict.queries}) == ["1 multi-hop", "2 temporal", "4 single-hop", "5 adversarial"]


def test_categories_registry():
    """The five LoCoMo categories map to their conventional group names."""
    assert dict(CATEGORIES) == {
        1: "1 multi-hop",
        2: "2 temporal",
        3: "3 open-domain",
        4: "4 single-hop",
        5: "5 adversarial",
    }


def test_every_judged_entry_exists_and_shares_the_query_scope(repaired):
    """Every judged entry id is an entry of the query's own conversation."""
    scopes = {q.id: q.scope for q in repaired.queries}
    for query_id, judged in repaired.qrels.items():
        for entry_id in judged:
            assert repaired.entry(entry_id).scope == scopes[query_id]


def test_repair_outcome_exact(repaired):
    """repair=True keeps 14 queries, lists every change and skips only the unrepairable ones."""
    assert repaired.skipped == REPAIR_SKIPPED
    assert repaired.repairs == REPAIRS
    assert len(repaired.queries) == 14
    assert {q: dict(repaired.qrels[q]) for q in ("conv-1/q2", "conv-1/q3", "conv-1/q4", "conv-1/q6")} == {
        "conv-1/q2": {"conv-1/D1:6": 1, "conv-1/D2:3": 1},
        "conv-1/q3": {"conv-1/D1:1": 1, "conv-1/D2:2": 1},
        "conv-1/q4": {"conv-1/D3:2": 1},
        "conv-1/q6": {"conv-1/D3:1": 1},
    }
    assert {q: dict(repaired.qrels[q]) for q in ("conv-2/q3", "conv-2/q8")} == {
        "conv-2/q3": {"conv-2/D2:2": 1},
        "conv-2/q8": {"conv-2/D2:1": 1},
    }
    groups = {q.id: q.group for q in repaired.queries}
    assert groups["conv-1/q3"] == "3 open-domain"


def test_skipped_and_repairs_reach_the_summary(repaired):
    """collection_summary reports skipped queries and repairs, so they reach artifacts."""
    summary = collection_summary(repaired)
    assert summary["skipped_queries"][0] == {"query_id": "conv-1/q7", "reason": "no evidence"}
    assert summary["repairs"][0] == {"query_id": "conv-1/q2", "change": "evidence 'D1:6; D2:3' split into D1:6, D2:3"}
    assert summary["queries"] == 14
    assert summary["entries"] == 33


@pytest.mark.parametrize(
    "evidence,strict_reason,repairs,qrels",
    [
        (
            ["D1:2, D:2:1"],
            "evidence 'D1:2, D:2:1' holds several ids in one string",
            ["evidence 'D1:2, D:2:1' split into D1:2, D:2:1", "evidence 'D:2:1' normalised to D2:1"],
            {"s1/D1:2": 1, "s1/D2:1": 1},
        ),
        (
            ["D1:1 D2:2"],
            "evidence 'D1:1 D2:2' holds several ids in one string",
            ["evidence 'D1:1 D2:2' split into D1:1, D2:2"],
            {"s1/D1:1": 1, "s1/D2:2": 1},
        ),
        (
            ["D1:1; D9"],
            "evidence 'D1:1; D9' holds several ids in one string",
            ["evidence 'D1:1; D9' split into D1:1, D9", "evidence 'D9' dropped: not a dialogue id like D3:7"],
            {"s1/D1:1": 1},
        ),
        (
            [" D1:2 "],
            "evidence ' D1:2 ' is not a dialogue id like D3:7",
            ["evidence ' D1:2 ' stripped to D1:2"],
            {"s1/D1:2": 1},
        ),
        (
            ["D01:02"],
            "evidence 'D01:02' is not a dialogue id like D3:7 (leading zero)",
            ["evidence 'D01:02' normalised to D1:2"],
            {"s1/D1:2": 1},
        ),
        (
            ["D1:1", "D1:01"],
            "evidence 'D1:01' is not a dialogue id like D3:7 (leading zero)",
            ["evidence 'D1:01' dropped: D1:1 is listed twice"],
            {"s1/D1:1": 1},
        ),
        (
            ["d1:1", "D2:2"],
            "evidence 'd1:1' is not a dialogue id like D3:7",
            ["evidence 'd1:1' dropped: not a dialogue id like D3:7"],
            {"s1/D2:2": 1},
        ),
        (
            ["D1:1", "D2:3", "D:"],
            "evidence 'D2:3' names no turn in s1; evidence 'D:' is not a dialogue id like D3:7",
            ["evidence 'D2:3' dropped: no turn D2:3 in s1", "evidence 'D:' dropped: not a dialogue id like D3:7"],
            {"s1/D1:1": 1},
        ),
    ],
)
def test_evidence_table_strict_and_repair(tmp_path, evidence, strict_reason, repairs, qrels):
    """Each malformed evidence list: the exact strict skip reason, repair changes and repaired qrels."""
    path = _write(tmp_path, [_sample(evidence)])
    strict = load_locomo(path)
    assert strict.queries == ()
    assert strict.skipped == (("s1/q0", strict_reason),)
    repaired = load_locomo(path, repair=True)
    assert repaired.skipped == ()
    assert repaired.repairs == tuple(("s1/q0", r) for r in repairs)
    assert dict(repaired.qrels["s1/q0"]) == qrels


def test_wellformed_evidence_needs_no_repair(tmp_path):
    """Clean evidence loads the same with and without repair, and repair lists nothing."""
    path = _write(tmp_path, [_sample(["D1:1", "D2:2"])])
    for repair in (False, True):
        collection = load_locomo(path, repair=repair)
        assert collection.skipped == () and collection.repairs == ()
        assert dict(collection.qrels["s1/q0"]) == {"s1/D1:1": 1, "s1/D2:2": 1}


def test_missing_evidence_field_is_skipped_and_said(tmp_path):
    """A QA item without an 'evidence' field is skipped with its own reason in both modes."""
    sample = _sample()
    del sample["qa"][0]["evidence"]
    path = _write(tmp_path, [sample])
    for repair in (False, True):
        assert load_locomo(path, repair=repair).skipped == (("s1/q0", "no evidence (no 'evidence' field)"),)


# -- files, names, single conversation, selection --------------------------


def test_name_and_file_hash(strict):
    """The collection is named after the file's stem and records its sha256 under its base name."""
    import hashlib

    assert strict.name == "locomo-sample"
    assert dict(strict.files) == {"locomo-sample.json": hashlib.sha256(SAMPLE.read_bytes()).hexdigest()}


def test_single_conversation_object(tmp_path):
    """A file holding one conversation object loads like a one-item list."""
    path = _write(tmp_path, _sample(), "one.json")
    collection = load_locomo(path)
    assert [e.id for e in collection.entries] == ["s1/D1:1", "s1/D1:2", "s1/D2:1", "s1/D2:2"]
    assert [q.id for q in collection.queries] == ["s1/q0"]
    assert collection.entry("s1/D2:2").created_at == datetime(2023, 6, 3, 20, 30, 1, tzinfo=timezone.utc)


def test_conversations_filter(tmp_path):
    """conversations= keeps only the named samples (a string or a list), in file order."""
    one = load_locomo(SAMPLE, conversations="conv-2")
    assert {e.scope for e in one.entries} == {"conv-2"}
    assert [s[0] for s in one.skipped] == ["conv-2/q3", "conv-2/q6", "conv-2/q7", "conv-2/q8"]
    both = load_locomo(SAMPLE, conversations=["conv-2", "conv-1"])
    assert [e.id for e in both.entries] == [e.id for e in load_locomo(SAMPLE).entries]


def test_conversations_unknown_and_empty():
    """An unknown sample_id lists the file's sample_ids; an empty selection is rejected."""
    with pytest.raises(
        UnknownNameError,
        match=re.escape("conversations: 'conv-9' (str) is not a known name; choose from: conv-1, conv-2"),
    ):
        load_locomo(SAMPLE, conversations=["conv-1", "conv-9"])
    with pytest.raises(
        ParameterError,
        match=re.escape("conversations: [] (list) is empty; pass at least one sample_id, or None for all"),
    ):
        load_locomo(SAMPLE, conversations=[])


# -- date-time parser --------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
        ("12:00 pm on 15 February, 2024", datetime(2024, 2, 15, 12, 0)),
        ("12:05 am on 1 January, 2024", datetime(2024, 1, 1, 0, 5)),
        ("11:59 pm on 31 December, 2023", datetime(2023, 12, 31, 23, 59)),
        ("9:05 am on 29 February, 2024", datetime(2024, 2, 29, 9, 5)),
    ],
)
def test_parse_session_datetime_accepts(text, expected):
    """The LoCoMo form parses to the stated wall time, in UTC."""
    assert parse_session_datetime(text) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "value",
    [
        "01:56 pm on 8 May, 2023",  # leading zero hour
        "13:56 pm on 8 May, 2023",  # 24-hour clock
        "0:56 am on 8 May, 2023",
        "1:5 pm on 8 May, 2023",  # one-digit minutes
        "1:56 PM on 8 May, 2023",  # capitals
        "1:56pm on 8 May, 2023",
        "1:56 pm on 08 May, 2023",  # leading zero day
        "1:56 pm on 8 may, 2023",
        "1:56 pm on 8 Mai, 2023",
        "1:56 pm on 8 Sept, 2023",
        "1:56 pm on 8 May 2023",  # no comma
        "1:56 pm, 8 May, 2023",
        "1:56 pm on 8 May, 23",
        " 1:56 pm on 8 May, 2023",
        "1:56 pm on 8 May, 2023 UTC",
        "2023-05-08T13:56:00Z",
        "",
        None,
        1683553560,
    ],
)
def test_parse_session_datetime_rejects(value):
    """Anything but the exact form is rejected, naming the value and the expected form."""
    with pytest.raises(
        ParameterError,
        match=re.escape(f"date_time: {value!r} ({type(value).__name__}) is not a LoCoMo date-time; {FORM}"),
    ):
        parse_session_datetime(value)


def test_parse_session_datetime_rejects_impossible_dates():
    """A well-formed date that does not exist is rejected with the reason."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            f"date_time: '1:00 pm on 29 February, 2023' (str) is not a real date (day is out of range for month); {FORM}"
        ),
    ):
        parse_session_datetime("1:00 pm on 29 February, 2023")


# -- bad input ---------------------------------------------------------------


def test_missing_file(tmp_path):
    """A path that does not exist raises MissingFileError naming it."""
    path = tmp_path / "nope.json"
    with pytest.raises(MissingFileError, match=re.escape(f"{path}: no such file")):
        load_locomo(path)


def test_not_json_names_the_line(tmp_path):
    """Malformed JSON raises InputError with the JSON error's line and column."""
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"sample_id": "s1",\n  oops\n]\n', encoding="utf-8")
    with pytest.raises(
        InputError,
        match=re.escape(f"{path}:3: malformed JSON (Expecting property name enclosed in double quotes at column 3)"),
    ):
        load_locomo(path)


def test_not_utf8_names_the_line(tmp_path):
    """Bytes that are not UTF-8 raise InputError with the line."""
    path = tmp_path / "bad.json"
    path.write_bytes(b'[\n"\xff"]\n')
    with pytest.raises(InputError, match=re.escape(f"{path}:2: is not valid UTF-8")):
        load_locomo(path)


@pytest.mark.parametrize(
    "document,found",
    [
        (42, "42 (a number)"),
        ("locomo", "'locomo' (a string)"),
        ([], "an empty list"),
        ({"_id": "d1", "text": "hi"}, "an object with keys '_id', 'text'"),
        ({"conversation": {}}, "an object with keys 'conversation'"),
        ([{"_id": "d1", "text": "x"}], "a list whose first item is an object with keys '_id', 'text'"),
        ([[1, 2]], "a list whose first item is a list of 2 items"),
    ],
)
def test_not_locomo_shaped(tmp_path, document, found):
    """A JSON file that is not LoCoMo-shaped is rejected in one line saying what was found."""
    path = _write(tmp_path, document)
    expected = (
        f"{path}: is not a LoCoMo file: expected a list of conversations with 'conversation' and 'qa' (found {found})"
    )
    with pytest.raises(InputError, match=re.escape(expected)):
        load_locomo(path)


def _broken(mutate):
    """Two valid samples (s1, s2), the second changed by ``mutate``."""
    second = _sample(sample_id="s2")
    mutate(second)
    return [_sample(), second]


@pytest.mark.parametrize(
    "mutate,message",
    [
        (
            lambda s: s.pop("qa"),
            "$[1]: expected a conversation object with 'sample_id', 'conversation' and 'qa'; found an object with keys 'sample_id', 'conversation'",
        ),
        (
            lambda s: s.pop("sample_id"),
            "$[1].sample_id: missing; every conversation needs a string sample_id like 'conv-26'",
        ),
        (
            lambda s: s.update(sample_id=7),
            "$[1].sample_id: expected a non-empty string like 'conv-26'; found 7 (a number)",
        ),
        (lambda s: s.update(sample_id="s1"), "$[1].sample_id: 's1' repeats the sample_id of $[0]"),
        (
            lambda s: s.update(conversation=[]),
            "$[1].conversation: expected an object with session_N lists and session_N_date_time strings; found an empty list",
        ),
        (
            lambda s: s["conversation"].update(session_2="hello"),
            "$[1].conversation.session_2: expected a list of turns; found 'hello' (a string)",
        ),
        (
            lambda s: s["conversation"].pop("session_2_date_time"),
            "$[1].conversation.session_2_date_time: missing; every session with turns needs a date-time, 'h:mm am|pm on D Month, YYYY' like '1:56 pm on 8 May, 2023'",
        ),
        (
            lambda s: s["conversation"].update(session_2_date_time="3 June 2023, 8:30 pm"),
            "$[1].conversation.session_2_date_time: '3 June 2023, 8:30 pm' is not a LoCoMo date-time; expected 'h:mm am|pm on D Month, YYYY' like '1:56 pm on 8 May, 2023'",
        ),
        (
            lambda s: s["conversation"]["session_2"].append("text"),
            "$[1].conversation.session_2[2]: expected a turn object with speaker, dia_id, text; found 'text' (a string)",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].pop("speaker"),
            "$[1].conversation.session_2[1].speaker: missing; every turn needs speaker, dia_id and text",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(text=None),
            "$[1].conversation.session_2[1].text: expected a string; found null",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(dia_id="D2-2"),
            "$[1].conversation.session_2[1].dia_id: 'D2-2' is not a dialogue id; expected D2:<turn> like 'D2:2'",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(dia_id="D2:02"),
            "$[1].conversation.session_2[1].dia_id: 'D2:02' is not a dialogue id; expected D2:<turn> like 'D2:2'",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(dia_id="D1:3"),
            "$[1].conversation.session_2[1].dia_id: 'D1:3' is not in session_2; expected D2:<turn>",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(dia_id="D2:1"),
            "$[1].conversation.session_2[1].dia_id: 'D2:1' repeats the dia_id of $[1].conversation.session_2[0]",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(img_url="http://x/y.jpg"),
            "$[1].conversation.session_2[1].img_url: expected a list of URL strings; found 'http://x/y.jpg' (a string)",
        ),
        (lambda s: s.update(qa={}), "$[1].qa: expected a list of question objects; found an empty object"),
        (
            lambda s: s["qa"].append(None),
            "$[1].qa[1]: expected a question object with question, evidence, category; found null",
        ),
        (
            lambda s: s["qa"][0].pop("category"),
            "$[1].qa[0].category: missing; every qa item needs a question and a category",
        ),
        (
            lambda s: s["qa"][0].update(category=6),
            "$[1].qa[0].category: 6 is not a LoCoMo category; expected one of 1 (multi-hop), 2 (temporal), 3 (open-domain), 4 (single-hop), 5 (adversarial)",
        ),
        (lambda s: s["qa"][0].update(category=True), "$[1].qa[0].category: True is not a LoCoMo category"),
        (
            lambda s: s["qa"][0].update(category="4"),
            "$[1].qa[0].category: '4' is not a LoCoMo category; expected one of 1",
        ),
        (lambda s: s["qa"][0].update(category=4.0), "$[1].qa[0].category: 4.0 is not a LoCoMo category"),
        (lambda s: s["qa"][0].update(category=[4]), "$[1].qa[0].category: [4] is not a LoCoMo category"),
        (
            lambda s: s["qa"][0].update(question=""),
            "$[1].qa[0].question: expected a non-empty string; found '' (a string)",
        ),
        (
            lambda s: s["qa"][0].update(evidence="D1:1"),
            "$[1].qa[0].evidence: expected a list of dia_id strings; found 'D1:1' (a string)",
        ),
        (
            lambda s: s["qa"][0].update(evidence=["D1:1", 3]),
            "$[1].qa[0].evidence[1]: expected a dia_id string like 'D3:7'; found 3 (a number)",
        ),
    ],
)
def test_bad_field_names_its_json_path(tmp_path, mutate, message):
    """A wrong field raises InputError naming the file and the field's JSON path."""
    path = _write(tmp_path, _broken(mutate))
    with pytest.raises(InputError, match=re.escape(f"{path}: {message}")) as info:
        load_locomo(path)
    assert info.value.line is None


def test_single_object_paths_start_at_root(tmp_path):
    """In a one-conversation file, JSON paths start at '$.'."""
    sample = _sample()
    sample["conversation"]["session_1"][0]["dia_id"] = "D1"
    path = _write(tmp_path, sample)
    with pytest.raises(
        InputError, match=re.escape(f"{path}: $.conversation.session_1[0].dia_id: 'D1' is not a dialogue id")
    ):
        load_locomo(path)


def test_the_whole_file_is_validated_even_when_selecting(tmp_path):
    """conversations= selects after validation: a broken unselected sample still fails loudly."""
    path = _write(tmp_path, _broken(lambda s: s["qa"][0].update(category=0)))
    with pytest.raises(InputError, match=re.escape("$[1].qa[0].category: 0 is not a LoCoMo category")):
        load_locomo(path, conversations="s1")


def test_empty_sessions_and_ignored_keys(tmp_path):
    """An empty session needs no date-time; keys other than sessions and dates are ignored."""
    sample = copy.deepcopy(_sample())
    sample["conversation"]["session_3"] = []
    sample["conversation"]["notes"] = {"anything": 1}
    sample["event_summary"] = {"x": []}
    path = _write(tmp_path, [sample])
    assert len(load_locomo(path).entries) == 4


# -- session granularity ---------------------------------------------------------------


def test_session_entries_join_the_turns_in_order(tmp_path):
    """granularity='session': one entry <sample_id>/S<n> per session, its text the turns' "<speaker>: <text>" lines
    joined by "\\n", tags the speakers then session-<n>, created_at the session's date-time, the dia_ids kept."""
    sample = _sample()
    sample["conversation"]["session_2"].append(
        {"speaker": "Bo", "dia_id": "D2:3", "text": "Lovely.", "blip_caption": "a lake"}
    )
    c = load_locomo(_write(tmp_path, sample), granularity="session", include_captions=True)
    assert [e.id for e in c.entries] == ["s1/S1", "s1/S2"]
    first, second = c.entries
    assert first.text == "Ann: I bought a red kayak.\nBo: Nice!"
    assert second.text == "Bo: Did you paddle yet?\nAnn: Yes, on the lake.\nBo: Lovely. [image: a lake]"
    assert (first.tags, second.tags) == (("ann", "bo", "session-1"), ("bo", "ann", "session-2"))
    assert second.created_at == datetime(2023, 6, 3, 20, 30, tzinfo=timezone.utc)
    assert second.provenance == Provenance(source="conversation", ref="s1/S2", actor=None)
    assert second.scope == "s1"
    assert dict(second.metadata) == {
        "sample_id": "s1",
        "session": 2,
        "session_date_time": "8:30 pm on 3 June, 2023",
        "dia_ids": ["D2:1", "D2:2", "D2:3"],
    }
    turns = load_locomo(_write(tmp_path, sample), include_captions=True)
    assert c.turns["s1/S2"] == tuple(e for e in turns.entries if e.metadata["session"] == 2)
    assert dict(c.settings) == {"granularity": "session"} and dict(turns.settings) == {}
    assert dict(turns.turns) == {}


def test_a_session_with_one_speaker_names_it(tmp_path):
    """A session entry's actor is its speaker when only one speaks."""
    sample = _sample()
    sample["conversation"]["session_2"][0]["speaker"] = "Ann"
    c = load_locomo(_write(tmp_path, sample), granularity="session")
    assert c.entry("s1/S2").provenance.actor == "Ann" and c.entry("s1/S2").tags == ("ann", "session-2")
    assert c.entry("s1/S1").provenance.actor is None


@pytest.mark.parametrize(
    ("evidence", "gold"),
    [
        (["D1:1"], {"s1/S1": 1}),
        (["D2:2", "D1:2", "D2:1"], {"s1/S2": 1, "s1/S1": 1}),  # each session once, in evidence order
    ],
)
def test_session_gold_is_every_session_holding_evidence(tmp_path, evidence, gold):
    """The gold of a session collection: the sessions holding any evidence turn, grade 1."""
    c = load_locomo(_write(tmp_path, _sample(evidence=evidence)), granularity="session")
    assert dict(c.qrels["s1/q0"]) == gold
    assert list(c.qrels["s1/q0"]) == list(gold)


def test_sample_at_both_granularities_keeps_the_same_questions(strict):
    """Evidence is checked against the turns, so both granularities keep and skip the same questions; a session
    question's gold is the sessions of its turn gold."""
    sessions = load_locomo(SAMPLE, granularity="session")
    assert [q.id for q in sessions.queries] == [q.id for q in strict.queries]
    assert sessions.skipped == strict.skipped == STRICT_SKIPPED
    assert sessions.repairs == strict.repairs
    for q in strict.queries:
        assert set(sessions.qrels[q.id]) == {locomo_session_of(d) for d in strict.qrels[q.id]}
    assert {e.id for e in sessions.entries} == {locomo_session_of(e.id) for e in strict.entries}
    assert sessions == load(SAMPLE, format="locomo", granularity="session")


def test_unknown_granularity_is_refused():
    """granularity is turn or session."""
    with pytest.raises(UnknownNameError) as info:
        load_locomo(SAMPLE, granularity="sentence")
    assert str(info.value) == "granularity: 'sentence' (str) is not a known name; choose from: session, turn"


@pytest.mark.parametrize(
    ("entry_id", "session"),
    [
        ("conv-26/D3:7", "conv-26/S3"),
        ("conv-26/D10:12", "conv-26/S10"),
        ("a/b/D1:1", "a/b/S1"),  # the sample_id is everything before the last '/D'
        ("conv-26/S3", "conv-26/S3"),  # a session entry is its own session
        ("memory-17", "memory-17"),  # a system's own memory: a session of its own
        ("conv-26/D3", "conv-26/D3"),
    ],
)
def test_locomo_session_of(entry_id, session):
    """LoCoMo's entry-to-session mapping: <sample_id>/D<s>:<t> -> <sample_id>/S<s>, any other id unchanged."""
    assert locomo_session_of(entry_id) == session


def test_collections_carry_the_mapping(strict):
    """Both granularities carry locomo_session_of for the sess. measures."""
    assert strict.session_of is locomo_session_of
    assert load_locomo(SAMPLE, granularity="session").session_of is locomo_session_of
