"""Typed records and the event log: deterministic clocks and ids, append-only logs, JSON forms."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from datetime import datetime, timedelta, timezone

import pytest

from agentmemory import (
    Event,
    EventLog,
    HashIds,
    Hit,
    MemoryEntry,
    MemoryStore,
    ParameterError,
    Provenance,
    Query,
    SteppingClock,
)
from agentmemory.store.events import RandomIds, WallClock

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


# -- clocks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (timedelta(seconds=1), ["09:00:00", "09:00:01", "09:00:02"]),
        (timedelta(minutes=5), ["09:00:00", "09:05:00", "09:10:00"]),
        (timedelta(0), ["09:00:00", "09:00:00", "09:00:00"]),
    ],
)
def test_stepping_clock_steps_from_start(step: timedelta, expected: list[str]) -> None:
    """SteppingClock returns start, start + step, start + 2 * step, ... (aware datetimes)."""
    clock = SteppingClock(T0, step)
    times = [clock() for _ in range(3)]
    assert [t.strftime("%H:%M:%S") for t in times] == expected
    assert all(t.tzinfo is not None for t in times)


def test_stepping_clock_default_step_is_one_second() -> None:
    """Without a step, SteppingClock advances one second per call."""
    clock = SteppingClock(T0)
    assert clock() == T0
    assert clock() == T0 + timedelta(seconds=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (datetime(2026, 3, 1, 9, 0),),
            "start: datetime.datetime(2026, 3, 1, 9, 0) (datetime) is not a timezone-aware datetime; "
            "SteppingClock needs one, e.g. datetime(2026, 3, 1, tzinfo=timezone.utc)",
        ),
        (
            ("2026-03-01T09:00:00Z",),
            "start: '2026-03-01T09:00:00Z' (str) is not a timezone-aware datetime; "
            "SteppingClock needs one, e.g. datetime(2026, 3, 1, tzinfo=timezone.utc)",
        ),
        (
            (T0, timedelta(seconds=-1)),
            "step: datetime.timedelta(days=-1, seconds=86399) (timedelta) is not a timedelta >= 0; "
            "pass e.g. timedelta(seconds=1); time never runs backwards",
        ),
        (
            (T0, 1),
            "step: 1 (int) is not a timedelta >= 0; pass e.g. timedelta(seconds=1); time never runs backwards",
        ),
    ],
)
def test_stepping_clock_rejects_bad_arguments(args: tuple, message: str) -> None:
    """A naive or non-datetime start, or a negative or non-timedelta step, is a ParameterError (a ValueError)."""
    with pytest.raises(ParameterError, match=re.escape(message)) as info:
        SteppingClock(*args)
    assert isinstance(info.value, ValueError)


def test_wall_clock_is_aware_utc() -> None:
    """WallClock gives the current time in UTC, timezone-aware."""
    before = datetime.now(timezone.utc)
    now = WallClock()()
    after = datetime.now(timezone.utc)
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= after


# -- id sources -------------------------------------------------------------


def test_hash_ids_follow_the_documented_formula() -> None:
    """HashIds yields the first 16 hex digits of sha256(namespace + ':' + n) for n = 0, 1, 2, ..."""
    ids = HashIds("run-a")
    expected = [hashlib.sha256(f"run-a:{n}".encode()).hexdigest()[:16] for n in range(3)]
    assert [ids() for _ in range(3)] == expected


def test_hash_ids_are_reproducible_and_namespaced() -> None:
    """Two HashIds with one namespace agree call for call; another namespace gives other ids."""
    a, b, c = HashIds("ns"), HashIds("ns"), HashIds("other")
    seq_a = [a() for _ in range(5)]
    assert seq_a == [b() for _ in range(5)]
    assert set(seq_a).isdisjoint(c() for _ in range(5))
    assert len(set(seq_a)) == 5


def test_random_ids_are_16_hex_digits_and_differ() -> None:
    """RandomIds gives 16 lowercase hex digits, different on every call."""
    ids = RandomIds()
    got = [ids() for _ in range(20)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in got)
    assert len(set(got)) == 20


# -- the event log ----------------------------------------------------------


def test_event_log_records_in_order_with_clock_and_ids() -> None:
    """record appends an Event stamped by the injected clock and id source, and returns it."""
    log = EventLog(SteppingClock(T0), HashIds("log"))
    first = log.record("add", ["m1", "m2"])
    second = log.record("retrieve", ("m2",), query_id="q1", retriever="bm25")
    expected_ids = HashIds("log")
    assert list(log) == [first, second]
    assert len(log) == 2
    assert log[1] is second
    assert first == Event(expected_ids(), "add", T0, ("m1", "m2"))
    assert second == Event(expected_ids(), "retrieve", T0 + timedelta(seconds=1), ("m2",), "q1", "bm25")


def test_event_log_record_accepts_a_timestamp_read_earlier() -> None:
    """record(timestamp=...) uses that time and does not read (advance) the clock."""
    log = EventLog(SteppingClock(T0), HashIds("log"))
    t = log.now()
    event = log.record("derive", ["d", "s"], timestamp=t)
    assert event.timestamp == T0
    assert log.record("add", ["x"]).timestamp == T0 + timedelta(seconds=1)


def test_event_log_iteration_is_a_snapshot() -> None:
    """Iterating a log while recording sees the events as they were when iteration began."""
    log = EventLog(SteppingClock(T0), HashIds("log"))
    log.record("add", ["a"])
    seen = []
    for event in log:
        seen.append(event)
        log.record("add", ["b"])
    assert len(seen) == 1
    assert len(log) == 2


def test_event_to_dict_is_json_ready() -> None:
    """Event.to_dict has every field, the timestamp in ISO 8601 and entry ids as a list."""
    event = Event("abc", "retrieve", T0, ("m1", "m2"), "q1", "tags", "what does Maya eat")
    assert event.to_dict() == {
        "event_id": "abc",
        "type": "retrieve",
        "timestamp": "2026-03-01T09:00:00+00:00",
        "entry_ids": ["m1", "m2"],
        "query_id": "q1",
        "query_text": "what does Maya eat",
        "retriever": "tags",
    }
    log = EventLog(SteppingClock(T0), HashIds("x"))
    log.record("add", ["m1"])
    assert log.to_dicts() == [log[0].to_dict()]


def test_same_operations_give_the_same_log() -> None:
    """Two stores with the same clock, ids and operations have identical logs, byte for byte."""

    def run() -> list[dict]:
        store = MemoryStore(clock=SteppingClock(T0), ids=HashIds("same"))
        store.add([MemoryEntry("a", "alpha beta", ("x",)), MemoryEntry("b", "beta gamma", ("y",))])
        store.derive("c", "alpha gamma", ["a", "b"])
        store.search("beta", k=2)
        store.search("x", k=2, retriever="tags")
        return store.log.to_dicts()

    first, second = run(), run()
    assert first == second
    assert [e["type"] for e in first] == ["add", "derive", "retrieve", "retrieve"]


# -- records ----------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        MemoryEntry("m1", "text"),
        Provenance("tool"),
        Hit("m1", 1.5, 1),
        Event("e", "add", T0),
    ],
)
def test_records_are_frozen(record) -> None:
    """Records cannot be changed after they are made."""
    field = dataclasses.fields(record)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, field, "changed")


def test_memory_entry_defaults_and_to_dict() -> None:
    """A bare entry has no tags, no time, unknown provenance; to_dict leaves out empty scope and metadata."""
    entry = MemoryEntry("m1", "Maya is vegetarian.")
    assert entry.to_dict() == {
        "id": "m1",
        "text": "Maya is vegetarian.",
        "tags": [],
        "created_at": None,
        "provenance": {"source": "unknown", "ref": None, "actor": None, "derived_from": []},
    }


def test_memory_entry_to_dict_full() -> None:
    """A full entry's to_dict carries tags, ISO time, provenance, scope and metadata."""
    entry = MemoryEntry(
        "m2",
        "summary",
        ("diet", "food"),
        T0,
        Provenance("derived", "weekly/W05", "assistant", ("m1",)),
        scope="maya",
        metadata={"lang": "en"},
    )
    assert entry.to_dict() == {
        "id": "m2",
        "text": "summary",
        "tags": ["diet", "food"],
        "created_at": "2026-03-01T09:00:00+00:00",
        "provenance": {"source": "derived", "ref": "weekly/W05", "actor": "assistant", "derived_from": ["m1"]},
        "scope": "maya",
        "metadata": {"lang": "en"},
    }


def test_hit_to_dict() -> None:
    """Hit.to_dict has entry_id, score and rank."""
    assert Hit("m1", 2.5, 1).to_dict() == {"entry_id": "m1", "score": 2.5, "rank": 1}


def test_a_free_text_search_records_what_was_asked() -> None:
    """A search with a plain string has no query id, and its retrieve event keeps the text instead."""
    store = MemoryStore(clock=SteppingClock(T0), ids=HashIds("text"))
    store.add(MemoryEntry("m1", "Maya is vegetarian"))
    store.search("what does Maya eat", k=3)
    event = store.log[-1]
    assert (event.type, event.query_id, event.query_text, event.entry_ids) == (
        "retrieve",
        None,
        "what does Maya eat",
        ("m1",),
    )


# -- records check their fields when built (class 8 of the bad-input catalogue) ------------------

_ID = "must be a non-empty string without control characters"
_TAGS = "must be a sequence of non-empty strings, e.g. ('diet', 'food')"
_AWARE = "must be e.g. datetime(2024, 5, 8, 13, 56, tzinfo=timezone.utc), or None when unknown"

BAD_RECORDS = [
    pytest.param(lambda: MemoryEntry(5, "t"), f"id: 5 (int) is not a string; MemoryEntry.id {_ID}", id="entry-id-int"),
    pytest.param(lambda: MemoryEntry("", "t"), f"id: '' (str) is empty; MemoryEntry.id {_ID}", id="entry-id-empty"),
    pytest.param(
        lambda: MemoryEntry("m\x001", "t"),
        f"id: 'm\\x001' (str) contains the control character '\\x00'; MemoryEntry.id {_ID}",
        id="entry-id-nul",
    ),
    pytest.param(
        lambda: MemoryEntry("m\n1", "t"),
        f"id: 'm\\n1' (str) contains the control character '\\n'; MemoryEntry.id {_ID}",
        id="entry-id-newline",
    ),
    pytest.param(
        lambda: MemoryEntry("m\x851", "t"),
        f"id: 'm\\x851' (str) contains the control character '\\x85'; MemoryEntry.id {_ID}",
        id="entry-id-c1-control",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", None),
        "text: None (NoneType) is not a string; MemoryEntry.text must be a str",
        id="entry-text-none",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", b"t"),
        "text: b't' (bytes) is not a string; MemoryEntry.text must be a str",
        id="entry-text-bytes",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", tags="diet"),
        f"tags: 'diet' (str) is a single string, not a sequence of strings; MemoryEntry.tags {_TAGS}",
        id="tags-a-string",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", tags=("diet", "")),
        f"tags: ('diet', '') (tuple) holds an empty string; MemoryEntry.tags {_TAGS}",
        id="tags-empty-item",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", tags=["diet", 3]),
        f"tags: ['diet', 3] (list) holds 3 (int); MemoryEntry.tags {_TAGS}",
        id="tags-int-item",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", tags={"diet"}),
        f"tags: {{'diet'}} (set) is not a sequence; MemoryEntry.tags {_TAGS}",
        id="tags-a-set",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", created_at=datetime(2026, 3, 1)),
        f"created_at: datetime.datetime(2026, 3, 1, 0, 0) (datetime) is not a timezone-aware datetime; MemoryEntry.created_at {_AWARE}",
        id="created-at-naive",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", created_at="2026-03-01T00:00:00Z"),
        f"created_at: '2026-03-01T00:00:00Z' (str) is not a timezone-aware datetime; MemoryEntry.created_at {_AWARE}",
        id="created-at-text",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", provenance="chat"),
        "provenance: 'chat' (str) is not a Provenance; MemoryEntry.provenance must be an agentmemory.Provenance(source=...)",
        id="provenance-a-string",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", scope=3),
        "scope: 3 (int) is not a string; MemoryEntry.scope must be a str or None",
        id="scope-int",
    ),
    pytest.param(
        lambda: MemoryEntry("m1", "t", metadata=[("k", "v")]),
        "metadata: [('k', 'v')] (list) is not a mapping; MemoryEntry.metadata must be a dict of extra fields",
        id="metadata-list",
    ),
    pytest.param(
        lambda: Provenance(derived_from="m1"),
        "derived_from: 'm1' (str) is a single string, not a sequence of ids; Provenance.derived_from must be a sequence of entry ids, e.g. ('m1', 'm2')",
        id="derived-from-a-string",
    ),
    pytest.param(
        lambda: Provenance(derived_from=("m1", "")),
        "derived_from: ('m1', '') (tuple) holds an empty string; Provenance.derived_from must be a sequence of entry ids, e.g. ('m1', 'm2')",
        id="derived-from-empty-id",
    ),
    pytest.param(
        lambda: Provenance(derived_from=["m\t1"]),
        "derived_from: ['m\\t1'] (list) holds 'm\\t1' (str), which contains the control character '\\t'; "
        "Provenance.derived_from must be a sequence of entry ids, e.g. ('m1', 'm2')",
        id="derived-from-control",
    ),
    pytest.param(
        lambda: Provenance(source=None),
        "source: None (NoneType) is not a string; Provenance.source must be a str",
        id="source-none",
    ),
    pytest.param(
        lambda: Provenance(actor=1),
        "actor: 1 (int) is not a string; Provenance.actor must be a str or None",
        id="actor-int",
    ),
    pytest.param(
        lambda: Query(1, "t"),
        'id: 1 (int) is not a string; Query.id must be a string without control characters ("" for none)',
        id="query-id-int",
    ),
    pytest.param(
        lambda: Query("q1", 5), "text: 5 (int) is not a string; Query.text must be a str", id="query-text-int"
    ),
    pytest.param(
        lambda: Query("q1", "t", tags="diet"),
        "tags: 'diet' (str) is a single string, not a sequence of strings; Query.tags must be a sequence of non-empty strings, e.g. ('diet', 'food'), or None",
        id="query-tags-a-string",
    ),
    pytest.param(
        lambda: Query("q1", "t", group=5),
        "group: 5 (int) is not a string; Query.group must be a str or None",
        id="query-group-int",
    ),
    pytest.param(lambda: Hit("", 1.0, 1), f"entry_id: '' (str) is empty; Hit.entry_id {_ID}", id="hit-id-empty"),
    pytest.param(lambda: Hit(5, 1.0, 1), f"entry_id: 5 (int) is not a string; Hit.entry_id {_ID}", id="hit-id-int"),
    pytest.param(
        lambda: Hit("m1", "1.5", 1),
        "score: '1.5' (str) is not a number; Hit.score must be a real number",
        id="hit-score-text",
    ),
    pytest.param(
        lambda: Hit("m1", True, 1),
        "score: True (bool) is not a number; Hit.score must be a real number",
        id="hit-score-bool",
    ),
    pytest.param(
        lambda: Hit("m1", 1.0, 0),
        "rank: 0 (int) is not an integer >= 1; Hit.rank must be 1 for the first hit, 2 for the second, ...",
        id="hit-rank-zero",
    ),
    pytest.param(
        lambda: Hit("m1", 1.0, 1.0),
        "rank: 1.0 (float) is not an integer >= 1; Hit.rank must be 1 for the first hit, 2 for the second, ...",
        id="hit-rank-float",
    ),
]


@pytest.mark.parametrize(("build", "message"), BAD_RECORDS)
def test_records_refuse_bad_fields_when_built(build, message: str) -> None:
    """Each record raises ParameterError (a ValueError) naming the field when built with a bad value."""
    with pytest.raises(ParameterError) as info:
        build()
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_a_bad_id_no_longer_fails_inside_a_later_search() -> None:
    """MemoryEntry(5, ...) used to be accepted and to fail in search with TypeError; it is refused at once."""
    store = MemoryStore()
    store.add(MemoryEntry("m1", "apples"))
    with pytest.raises(ParameterError, match=r"^id: 5 \(int\) is not a string"):
        store.add(MemoryEntry(5, "apples too"))
    assert [h.entry_id for h in store.search("apples")] == ["m1"]


def test_sequences_become_tuples_and_plain_queries_keep_an_empty_id() -> None:
    """Lists of tags and derived_from are stored as tuples (records stay hashable); Query('') is a query without id."""
    entry = MemoryEntry("m1", "t", tags=["a", "b"], provenance=Provenance(derived_from=["m0"]))
    assert entry.tags == ("a", "b") and entry.provenance.derived_from == ("m0",)
    assert hash(entry) == hash(MemoryEntry("m1", "t", tags=("a", "b"), provenance=Provenance(derived_from=("m0",))))
    assert Query("", "what").id == "" and Query("q", "t", tags=["x"]).tags == ("x",)
    assert Hit("m1", 1, 1).score == 1 and Hit("m1", np_float(), 2).rank == 2


def np_float():
    """A numpy scalar score, as retrievers compute them (a numbers.Real, not a float subclass)."""
    import numpy as np

    return np.float32(0.5)


def test_stepping_clock_past_the_last_datetime_is_a_parameter_error() -> None:
    """A clock stepping past 9999-12-31 raises ParameterError (one line on the command line), not OverflowError."""
    clock = SteppingClock(datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc))
    assert clock() == datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
    with pytest.raises(ParameterError) as info:
        clock()
    assert str(info.value) == (
        "clock: '9999-12-31T23:59:59+00:00 + 0:00:01' (str) steps past the last time a datetime can hold "
        "(the end of the year 9999); start the clock earlier: loaded timestamps must be before 9999-01-01"
    )
