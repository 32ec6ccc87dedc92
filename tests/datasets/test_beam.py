"""The beam format: BEAM chat folders and size folders as collections (agentmemory.datasets.beam)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentmemory.datasets import FORMATS, detect_format, load
from agentmemory.datasets.beam import (
    ABILITIES,
    chat_folders,
    difficulty_group,
    load_beam,
    parse_time_anchor,
    recognise,
    strip_index_suffix,
)
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "beam-sample"
UTC = timezone.utc


def _at(day: str, seconds: int = 0) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(seconds=seconds)


# -- small chats written by the tests -------------------------------------------------------------------


def _message(i: int, role: str = "user", text: str | None = None, **extra: object) -> dict:
    return {"role": role, "id": i, "content": text if text is not None else f"message {i} about bikes", **extra}


def _chat(*batches: list[list[dict]]) -> list[dict]:
    return [{"batch_number": n, "time_anchor": None, "turns": turns} for n, turns in enumerate(batches, start=1)]


DEFAULT_CHAT = _chat(
    [[_message(0, time_anchor="March-04-2024"), _message(1, "assistant")], [_message(2), _message(3, "assistant")]]
)


def _write(folder: Path, chat: object = None, questions: object = None) -> Path:
    """A chat folder with ``chat`` as chat.json and ``questions`` as probing_questions.json (JSON-encoded)."""
    (folder / "probing_questions").mkdir(parents=True, exist_ok=True)
    for name, value in (("chat.json", chat), ("probing_questions/probing_questions.json", questions)):
        text = (
            value
            if isinstance(value, str)
            else json.dumps(DEFAULT_CHAT if value is None and name == "chat.json" else value)
        )
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _question(source: object = (0,), **extra: object) -> dict:
    item: dict = {"question": "Which bike?", "answer": "the red one", "difficulty": "easy", **extra}
    if source is not None:
        item["source_chat_ids"] = list(source) if isinstance(source, tuple) else source
    return item


# -- the sample ------------------------------------------------------------------------------------------


def test_sample_entries_queries_and_judgments():
    """Every message is an entry <chat>/<id> scoped to its chat; every kept question a query <chat>/<ability>/<i>
    grouped by ability, judged from source_chat_ids (nested lists flattened, both sides of a pair)."""
    c = load_beam(SAMPLE)
    assert c.name == "beam-sample"
    assert len(c.entries) == 26
    assert [e.id for e in c.entries[:3]] == ["1/0", "1/1", "1/2"]
    assert {e.scope for e in c.entries} == {"1", "2"}
    assert [q.id for q in c.queries] == [
        "1/contradiction_resolution/0",
        "1/event_ordering/0",
        "1/information_extraction/0",
        "1/instruction_following/0",
        "1/knowledge_update/0",
        "1/multi_session_reasoning/0",
        "1/preference_following/0",
        "1/summarization/0",
        "1/temporal_reasoning/0",
        "2/knowledge_update/0",
        "2/knowledge_update/1",
        "2/temporal_reasoning/0",
    ]
    assert {q.group for q in c.queries} <= set(ABILITIES)
    assert dict(c.qrels["1/event_ordering/0"]) == {"1/0": 1, "1/6": 1, "1/12": 1, "1/14": 1}
    assert dict(c.qrels["1/contradiction_resolution/0"]) == {"1/2": 1, "1/10": 1}
    assert dict(c.qrels["1/temporal_reasoning/0"]) == {"1/14": 1}  # one id on both sides counts once
    assert c.qrels["1/summarization/0"].keys() == {"1/0", "1/7", "1/13", "1/15", "1/17"}
    assert c.files.keys() == {
        "1/chat.json",
        "1/probing_questions/probing_questions.json",
        "2/chat.json",
        "2/probing_questions/probing_questions.json",
    }
    assert dict(c.settings) == {"updates": "fresh", "indexed_turns": "all"}


def test_sample_skipped_and_notes_strict():
    """Strict loading skips the abstention, the dangling id, the string id and the update with nothing updated,
    each with its reason; the update whose original ids are all updated too is noted as out of stale@k."""
    c = load_beam(SAMPLE)
    assert c.skipped == (
        ("1/abstention/0", "abstention question: it has no evidence by design, so no retrieval measure applies"),
        ("1/information_extraction/1", "source_chat_ids[1]: message id 99 is not in the chat (a dangling id)"),
        (
            "1/knowledge_update/1",
            "knowledge update with an empty updated_info: nothing is relevant under --updates fresh",
        ),
        ("2/information_extraction/0", "source_chat_ids[0]: '2' is a string, not a message id (an integer)"),
    )
    assert c.repairs == ()
    assert c.notes == (
        ("2/knowledge_update/1", "left out of stale@k: its original_info lists only ids also in updated_info"),
    )


def test_sample_repair():
    """--repair drops the dangling id and reads the digit string as an id, listing both; the questions are kept."""
    c = load_beam(SAMPLE, repair=True)
    assert c.repairs == (
        (
            "1/information_extraction/1",
            "source_chat_ids[1]: message id 99 dropped: the chat has no message with that id",
        ),
        ("2/information_extraction/0", "source_chat_ids[0]: the string '2' read as the message id 2"),
    )
    assert dict(c.qrels["1/information_extraction/1"]) == {"1/0": 1}
    assert dict(c.qrels["2/information_extraction/0"]) == {"2/2": 1}
    assert [q for q, _ in c.skipped] == ["1/abstention/0", "1/knowledge_update/1"]


def test_fresh_and_both():
    """fresh judges only updated_info; both judges both sides; the original ids are in the metadata either way,
    and an update with an empty updated_info is kept under both and listed as out of stale@k."""
    fresh = load_beam(SAMPLE)
    both = load_beam(SAMPLE, updates="both")
    assert dict(fresh.qrels["1/knowledge_update/0"]) == {"1/12": 1}
    assert dict(both.qrels["1/knowledge_update/0"]) == {"1/0": 1, "1/12": 1}
    for c in (fresh, both):
        q = next(q for q in c.queries if q.id == "1/knowledge_update/0")
        assert q.metadata["original_info"] == ("1/0",)
        assert q.metadata["updated_info"] == ("1/12",)
    # an id on both sides is updated, not original
    q = next(q for q in both.queries if q.id == "2/knowledge_update/1")
    assert q.metadata["original_info"] == ()
    assert q.metadata["updated_info"] == ("2/2", "2/6")
    assert dict(both.qrels["2/knowledge_update/1"]) == {"2/6": 1, "2/2": 1}
    assert dict(both.qrels["1/knowledge_update/1"]) == {"1/6": 1}
    assert ("1/knowledge_update/1", "left out of stale@k: its updated_info is empty") in both.notes
    assert "1/knowledge_update/1" not in fresh.qrels
    assert dict(both.settings)["updates"] == "both"
    # the other abilities do not change
    assert {q: dict(v) for q, v in fresh.qrels.items() if "knowledge" not in q} == {
        q: dict(v) for q, v in both.qrels.items() if "knowledge" not in q
    }


def test_time_anchors_created_at_and_asked_at(tmp_path):
    """An anchored message is at midnight UTC of its anchor, each later one a second more, until the next anchor;
    every question is asked one second after the chat's last message."""
    c = load_beam(SAMPLE)
    by_id = {e.id: e for e in c.entries}
    assert by_id["1/0"].created_at == _at("2024-03-04")
    assert by_id["1/5"].created_at == _at("2024-03-04", 5)
    assert by_id["1/6"].created_at == _at("2024-03-18")
    assert by_id["1/11"].created_at == _at("2024-03-18", 5)
    assert by_id["1/17"].created_at == _at("2024-04-02", 5)
    assert all(q.asked_at == _at("2024-04-02", 6) for q in c.queries if q.scope == "1")
    assert all(q.asked_at == _at("2024-05-20", 4) for q in c.queries if q.scope == "2")
    # the batch's own anchor is used for its first message when that message has none
    chat = [{"batch_number": 1, "time_anchor": "May-02-2024", "turns": [[_message(0), _message(1, "assistant")]]}]
    folder = _write(tmp_path / "7", chat, {"information_extraction": [_question()]})
    loaded = load_beam(folder)
    assert [e.created_at for e in loaded.entries] == [_at("2024-05-02"), _at("2024-05-02", 1)]


def test_messages_before_any_anchor_have_no_date(tmp_path):
    """A message before the first anchor has no created_at; a chat without any anchor asks with no asked_at."""
    chat = _chat([[_message(0), _message(1, "assistant")]])
    c = load_beam(_write(tmp_path / "c", chat, {"information_extraction": [_question()]}))
    assert [e.created_at for e in c.entries] == [None, None]
    assert c.queries[0].asked_at is None


def test_index_suffix_is_stripped_and_kept():
    """'... ->-> 1,1' leaves the text and stays in metadata (index_suffix, beside the message's own index)."""
    c = load_beam(SAMPLE)
    first = c.entries[0]
    assert first.text.endswith("can you help me choose one?")
    assert "->->" not in first.text
    assert first.metadata["index_suffix"] == "1,1"
    assert first.metadata["index"] == "1,1"
    assert first.metadata["time_anchor"] == "March-04-2024"
    assert dict(c.entries[1].metadata) == {"chat": "1", "message_id": 1, "batch": 1, "turn": 0, "role": "assistant"}
    assert first.provenance.actor == "user" and first.provenance.ref == "1/0"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Plan my tasks? ->-> 1,1", ("Plan my tasks?", "1,1")),
        ("Plan? ->->  3,8", ("Plan?", "3,8")),
        ("Plan? ->-> 4,", ("Plan?", "4,")),
        ("Plan? ->-> 2,3) Labels: Career", ("Plan?", "2,3) Labels: Career")),
        ("no marker here", ("no marker here", None)),
        ("a -> b ->-> 1,2", ("a -> b", "1,2")),
        ("code ->-> 7,9 then\nmore lines", ("code ->-> 7,9 then\nmore lines", None)),
    ],
)
def test_strip_index_suffix(content, expected):
    """The text after the last '->->' is the suffix when it holds no line break; otherwise nothing is stripped."""
    assert strip_index_suffix(content) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("March-15-2024", "2024-03-15"), ("May-5-2024", "2024-05-05"), ("December-31-1999", "1999-12-31")],
)
def test_parse_time_anchor(text, expected):
    """Month-DD-YYYY, read as midnight UTC."""
    assert parse_time_anchor(text) == _at(expected)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("march-15-2024", "time_anchor: 'march-15-2024' (str) is not a BEAM time anchor; expected 'Month-DD-YYYY'"),
        ("Mar-15-2024", "time_anchor: 'Mar-15-2024' (str) is not a BEAM time anchor"),
        ("2024-03-15", "time_anchor: '2024-03-15' (str) is not a BEAM time anchor"),
        (
            "February-30-2024",
            "time_anchor: 'February-30-2024' (str) is not a real date (day is out of range for month)",
        ),
        (15, "time_anchor: 15 (int) is not a BEAM time anchor"),
    ],
)
def test_parse_time_anchor_rejects(value, message):
    """Anything but an English month name, day and year, or a date that does not exist, is refused."""
    with pytest.raises(ParameterError, match="^" + re.escape(message)):
        parse_time_anchor(value)


def test_difficulty_groups():
    """Difficulties are kept as given; the empty one is grouped as '(none)'."""
    c = load_beam(SAMPLE, updates="both")
    difficulties = {q.id: q.metadata["difficulty"] for q in c.queries}
    assert difficulties["1/knowledge_update/1"] == ""
    assert difficulties["1/instruction_following/0"] == "moderate"
    assert [difficulty_group(d) for d in ("", "easy", "clear")] == ["(none)", "easy", "clear"]


def test_metadata_of_a_query():
    """A query keeps its chat, ability, difficulty, the first answer field present and source_chat_ids as given."""
    c = load_beam(SAMPLE)
    q = next(q for q in c.queries if q.id == "1/contradiction_resolution/0")
    assert q.scope == "1" and q.group == "contradiction_resolution"
    assert q.metadata["answer"].startswith("You said you never owned")  # ideal_answer
    assert q.metadata["source_chat_ids"] == {"first_statement": [2], "second_statement": [10]}
    assert "original_info" not in q.metadata


def test_user_turns_only_and_all_turns():
    """--user-turns-only indexes user messages and does not judge assistant evidence (noted); --all-turns states
    the default; both together are refused."""
    c = load_beam(SAMPLE, user_turns_only=True)
    assert len(c.entries) == 13 and {e.metadata["role"] for e in c.entries} == {"user"}
    assert dict(c.qrels["1/summarization/0"]) == {"1/0": 1}
    assert ("1/summarization/0", "evidence of assistant messages not judged (not indexed): 7, 13, 15, 17") in c.notes
    assert dict(c.settings)["indexed_turns"] == "user"
    assert load_beam(SAMPLE, all_turns=True).entries == load_beam(SAMPLE).entries
    with pytest.raises(ParameterError, match=re.escape("all_turns: True (bool) contradicts user_turns_only=True")):
        load_beam(SAMPLE, all_turns=True, user_turns_only=True)


def test_only_assistant_evidence_under_user_turns_only(tmp_path):
    """A question whose every evidence message is the assistant's has nothing judged with --user-turns-only."""
    folder = _write(tmp_path / "c", None, {"summarization": [_question((1, 3))]})
    c = load_beam(folder, user_turns_only=True)
    assert c.skipped == (
        ("c/summarization/0", "nothing to judge: every evidence message (1, 3) is an assistant message, not indexed"),
    )


def test_unknown_updates():
    """updates takes fresh or both."""
    with pytest.raises(UnknownNameError, match="updates: 'stale'"):
        load_beam(SAMPLE, updates="stale")


def test_single_chat_folder_and_detection():
    """A chat folder is one collection named after it, with file names relative to it; auto detects both shapes."""
    c = load(SAMPLE / "2", updates="both")
    assert c.name == "2"
    assert c.files.keys() == {"chat.json", "probing_questions/probing_questions.json"}
    assert [q.id for q in c.queries] == ["2/knowledge_update/0", "2/knowledge_update/1", "2/temporal_reasoning/0"]
    assert detect_format(SAMPLE) == "beam"
    assert detect_format(SAMPLE / "1") == "beam"
    assert recognise(SAMPLE / "1" / "chat.json") is False
    assert [o.name for o in FORMATS["beam"].options] == ["updates", "all_turns", "user_turns_only", "repair"]


def test_size_folder_order(tmp_path):
    """Chat folders come in numeric order of their names (2 before 10); other folders are ignored."""
    for name in ("10", "2", "1"):
        _write(tmp_path / name, None, {"information_extraction": [_question()]})
    (tmp_path / "notes").mkdir()
    assert [p.name for p in chat_folders(tmp_path)] == ["1", "2", "10"]
    assert [q.scope for q in load_beam(tmp_path).queries] == ["1", "2", "10"]


# -- malformed evidence: skipped (strict) or repaired -------------------------------------------------------


@pytest.mark.parametrize(
    ("ability", "source", "reason"),
    [
        ("information_extraction", [0, 7], "source_chat_ids[1]: message id 7 is not in the chat (a dangling id)"),
        ("event_ordering", [[0], [2, 9]], "source_chat_ids[1][1]: message id 9 is not in the chat (a dangling id)"),
        ("information_extraction", ["x"], "source_chat_ids[0]: 'x' (a string) is not a message id (an integer)"),
        ("information_extraction", [1.5], "source_chat_ids[0]: 1.5 (a number) is not a message id (an integer)"),
        ("information_extraction", [True], "source_chat_ids[0]: true (a boolean) is not a message id (an integer)"),
        ("information_extraction", [{"id": 0}], "source_chat_ids[0]: an object with keys 'id' is not a message id"),
        (
            "information_extraction",
            {"first_statement": [0]},
            "source_chat_ids is an object with keys 'first_statement'; the information_extraction ability takes a "
            "list of message ids",
        ),
        (
            "contradiction_resolution",
            {"first_statement": [0], "third": [2]},
            "source_chat_ids is an object with keys 'first_statement', 'third'; expected exactly the keys "
            "'first_statement' and 'second_statement'",
        ),
        (
            "knowledge_update",
            [0, 2],
            "source_chat_ids is a list of 2 items; a knowledge update needs an object with 'original_info' and "
            "'updated_info'",
        ),
        (
            "knowledge_update",
            {"original_info": [0], "updated_info": [5]},
            "source_chat_ids.updated_info[0]: message id 5 is not in the chat (a dangling id)",
        ),
        ("summarization", 3, "source_chat_ids is 3 (a number); expected a list of message ids or an object of lists"),
        ("summarization", [], "no evidence: source_chat_ids is empty"),
        ("summarization", None, "no evidence (no source_chat_ids field)"),
    ],
)
def test_malformed_evidence_is_skipped(tmp_path, ability, source, reason):
    """Each malformed source_chat_ids kind skips its question with one reason naming the field and the problem."""
    c = load_beam(_write(tmp_path / "c", None, {ability: [_question(source)]}))
    assert c.queries == ()
    assert len(c.skipped) == 1
    assert c.skipped[0][0] == f"c/{ability}/0"
    assert c.skipped[0][1].startswith(reason)


def test_null_source_and_several_problems(tmp_path):
    """A null source_chat_ids is said so; several problems of one question are all listed."""
    questions = {"summarization": [{"question": "q?", "source_chat_ids": None}, _question([8, "y"])]}
    c = load_beam(_write(tmp_path / "c", None, questions))
    assert c.skipped == (
        ("c/summarization/0", "no evidence (source_chat_ids is null)"),
        (
            "c/summarization/1",
            "source_chat_ids[0]: message id 8 is not in the chat (a dangling id); "
            "source_chat_ids[1]: 'y' (a string) is not a message id (an integer)",
        ),
    )


def test_repair_drops_dangling_ids_and_skips_what_cannot_be_repaired(tmp_path):
    """--repair drops dangling ids and reads digit strings; a question left without evidence, or with a problem
    that has no unambiguous repair, is still skipped."""
    questions = {
        "information_extraction": [_question([0, 9]), _question([9]), _question(["2", "x"]), _question([[2], ["3"]])]
    }
    c = load_beam(_write(tmp_path / "c", None, questions), repair=True)
    assert [q.id for q in c.queries] == ["c/information_extraction/0", "c/information_extraction/3"]
    assert dict(c.qrels["c/information_extraction/3"]) == {"c/2": 1, "c/3": 1}
    assert c.skipped == (
        (
            "c/information_extraction/1",
            "no usable evidence: source_chat_ids[0]: message id 9 dropped: the chat has no message with that id",
        ),
        ("c/information_extraction/2", "source_chat_ids[1]: 'x' (a string) is not a message id (an integer)"),
    )
    assert c.repairs == (
        (
            "c/information_extraction/0",
            "source_chat_ids[1]: message id 9 dropped: the chat has no message with that id",
        ),
        ("c/information_extraction/3", "source_chat_ids[1][0]: the string '3' read as the message id 3"),
    )


# -- malformed files: InputError naming the file and the JSON path ---------------------------------------------


def _error(tmp_path: Path, chat: object = None, questions: object = None) -> str:
    folder = _write(tmp_path / "c", chat, {"information_extraction": [_question()]} if questions is None else questions)
    with pytest.raises(InputError) as info:
        load_beam(folder)
    return str(info.value)


@pytest.mark.parametrize(
    ("chat", "message"),
    [
        ({"turns": []}, "chat.json: is not a BEAM chat.json: expected a non-empty list of batches (found an object"),
        ([], "chat.json: is not a BEAM chat.json: expected a non-empty list of batches (found an empty list)"),
        ([3], "chat.json: $[0]: expected a batch object with 'turns'; found 3 (a number)"),
        ([{"turns": []}], "chat.json: $[0].batch_number: missing"),
        (
            [{"batch_number": "1", "turns": []}],
            "chat.json: $[0].batch_number: expected an integer; found '1' (a string)",
        ),
        ([{"batch_number": 1}], "chat.json: $[0].turns: missing"),
        ([{"batch_number": 1, "turns": {}}], "chat.json: $[0].turns: expected a list of turns; found an empty object"),
        ([{"batch_number": 1, "turns": [5]}], "chat.json: $[0].turns[0]: expected a turn, a list of messages; found 5"),
        (
            _chat([["hi"]]),
            "chat.json: $[0].turns[0][0]: expected a message object with role, id and content; found 'hi'",
        ),
        (
            _chat([[{"role": "user", "id": 0}]]),
            "chat.json: $[0].turns[0][0].content: missing; every message needs role, id and content",
        ),
        (
            _chat([[_message(0, "system")]]),
            "chat.json: $[0].turns[0][0].role: expected 'user' or 'assistant'; found 'system'",
        ),
        (_chat([[{**_message(0), "id": "0"}]]), "chat.json: $[0].turns[0][0].id: expected an integer >= 0; found '0'"),
        (
            _chat([[{**_message(0), "id": True}]]),
            "chat.json: $[0].turns[0][0].id: expected an integer >= 0; found true",
        ),
        (_chat([[{**_message(0), "id": -1}]]), "chat.json: $[0].turns[0][0].id: expected an integer >= 0; found -1"),
        (
            _chat([[_message(0), _message(0, "assistant")]]),
            "chat.json: $[0].turns[0][1].id: 0 repeats the id of $[0].turns[0][0]",
        ),
        (
            _chat([[_message(0, text=None) | {"content": 5}]]),
            "chat.json: $[0].turns[0][0].content: expected a string; found 5",
        ),
        (
            _chat([[_message(0, time_anchor="2024-03-04")]]),
            "chat.json: $[0].turns[0][0].time_anchor: '2024-03-04' is not a BEAM time anchor; expected "
            "'Month-DD-YYYY' like 'March-15-2024'",
        ),
        (
            [{"batch_number": 1, "time_anchor": "Smarch-1-2024", "turns": []}],
            "chat.json: $[0].time_anchor: 'Smarch-1-2024' is not a BEAM time anchor",
        ),
        (_chat([[_message(0, index=11)]]), "chat.json: $[0].turns[0][0].index: expected a string; found 11 (a number)"),
        ("[1, 2", "chat.json:1: "),
    ],
)
def test_malformed_chat(tmp_path, chat, message):
    """Each malformed chat.json kind is one line naming the file, the JSON path and what is wrong."""
    text = _error(tmp_path, chat)
    assert message in text
    assert "\n" not in text
    assert text.startswith(str(tmp_path / "c" / "chat.json"))


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ([], "probing_questions.json: is not a BEAM probing_questions.json: expected an object keyed by ability"),
        (
            {"trivia": []},
            "probing_questions.json: $.trivia: 'trivia' is not a BEAM ability; expected one of abstention, "
            "contradiction_resolution, event_ordering",
        ),
        (
            {"summarization": {}},
            "probing_questions.json: $.summarization: expected a list of questions; found an empty object",
        ),
        ({"summarization": [1]}, "probing_questions.json: $.summarization[0]: expected a question object; found 1"),
        (
            {"summarization": [{"question": " "}]},
            "probing_questions.json: $.summarization[0].question: expected a non-empty string; found ' '",
        ),
        (
            {"summarization": [_question(difficulty=2)]},
            "probing_questions.json: $.summarization[0].difficulty: expected a string; found 2 (a number)",
        ),
    ],
)
def test_malformed_questions(tmp_path, questions, message):
    """Each malformed probing_questions.json kind is one line naming the file, the JSON path and what is wrong."""
    text = _error(tmp_path, None, questions)
    assert message in text
    assert "\n" not in text
    assert text.startswith(str(tmp_path / "c" / "probing_questions" / "probing_questions.json"))


def test_missing_files_and_not_beam_folders(tmp_path):
    """A chat folder without one of its two files names the missing file; a folder without chats says what is
    expected; a file is not a BEAM folder."""
    folder = _write(tmp_path / "size" / "1", None, {"information_extraction": [_question()]})
    (folder / "probing_questions" / "probing_questions.json").unlink()
    with pytest.raises(MissingFileError, match=re.escape("probing_questions.json")):
        load_beam(tmp_path / "size")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="is not a BEAM folder: expected chat.json and probing_questions/"):
        load_beam(tmp_path / "empty")
    (tmp_path / "file.json").write_text("[]")
    with pytest.raises(InputError, match="is a file; expected a BEAM chat folder or a folder of chat folders"):
        load_beam(tmp_path / "file.json")
    with pytest.raises(MissingFileError):
        load_beam(tmp_path / "nowhere")


def test_chat_folder_name_must_be_a_trec_id(tmp_path):
    """A chat folder's name becomes part of every id, so it must be writable in a TREC file."""
    folder = _write(tmp_path / "my chat", None, {"information_extraction": [_question()]})
    with pytest.raises(InputError, match=re.escape("the chat folder's name 'my chat'")):
        load_beam(folder)


# -- the command line ----------------------------------------------------------------------------------------


def test_eval_on_the_sample_prints_per_ability_tables_with_stale(capsys):
    """agentmemory eval --format beam prints the comparison table (stale@k marked lower is better) and one row per
    ability and system with intervals."""
    from agentmemory.cli.app import main

    status = main(
        ["eval", "--collection", str(SAMPLE), "--format", "beam", "--retrievers", "bm25", "--metrics", "stale@5",
         "--k", "5", "--no-progress"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "| System | P@5 | R@5 | RR@5 | nDCG@5 | AP@5 | stale@5 (lower is better) |" in out
    assert "| knowledge_update | 3 | BM25 |" in out
    assert "Loaded with updates = fresh, indexed_turns = all." in out
    assert "  1/information_extraction/1: source_chat_ids[1]: message id 99 is not in the chat (a dangling id)" in out


def test_updates_flag_and_its_errors(capsys):
    """--updates both is the format's option on the command line; a value it does not take exits 2 in one line."""
    from agentmemory.cli.app import main

    base = ["eval", "--collection", str(SAMPLE), "--retrievers", "bm25", "--k", "5", "--no-progress"]
    assert main([*base, "--updates", "both"]) == 0
    assert "Loaded with updates = both, indexed_turns = all." in capsys.readouterr().out
    assert main([*base, "--updates", "stale"]) == 2
    err = capsys.readouterr().err
    assert "updates: 'stale' (str) is not a known name; choose from: both, fresh" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_as_of_sees_the_whole_chat():
    """Each question is asked after its chat's last message, so --as-of hides nothing and changes no value."""
    from agentmemory.evaluation.runner import evaluate

    collection = load_beam(SAMPLE)
    plain = evaluate(collection, ["bm25"], k=5, measures=["stale@5"], seed=7)
    timed = evaluate(collection, ["bm25"], k=5, measures=["stale@5"], seed=7, as_of=True)
    sizes = {"1": 18, "2": 8}
    assert [r.visible for r in timed.results[0].per_query] == [sizes[q.scope or ""] for q in collection.queries]
    assert [r.metrics for r in timed.results[0].per_query] == [r.metrics for r in plain.results[0].per_query]
