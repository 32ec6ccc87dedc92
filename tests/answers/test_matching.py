"""Matching records to a collection's questions: each key, auto's choice, the text check, unmatched reasons,
left-out questions, partial coverage, and the one-line refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentmemory.answers import MATCH_KEYS, AnswerFile, AnswerRecord, match_answers, read_answers
from agentmemory.collection import Collection
from agentmemory.errors import InputError, ParameterError
from agentmemory.records import Query

PATH = "answers.json"


def _file(records: list[AnswerRecord]) -> AnswerFile:
    return AnswerFile("test", (PATH,), ("0" * 64,), "test", tuple(records))


def _texts(collection: Collection) -> dict[str, str]:
    return {q.id: q.text for q in collection.queries}


def _headline(collection: Collection, scope: str) -> list[str]:
    """The headline question ids of ``scope`` (kept ones: the sample's left-out ones are known to be headline too)."""
    return [q.id for q in collection.queries if q.scope == scope and q.group not in collection.headline_excludes]


def test_the_keys_are_auto_then_the_rules_in_auto_order() -> None:
    """MATCH_KEYS lists auto first, then the order auto tries."""
    assert MATCH_KEYS == ("auto", "id", "text", "position-all", "position-headline")


def test_match_by_id(locomo) -> None:
    """Records carrying the collection's ids match by id, auto's first key."""
    ids = [q.id for q in locomo.queries][:5]
    records = [AnswerRecord(f"[{i}]", question_id=qid, question=_texts(locomo)[qid]) for i, qid in enumerate(ids)]
    matched = match_answers(_file(records), locomo)
    assert (matched.key, list(matched.by_query), dict(matched.keys)) == ("id", ids, {"id": 5})
    assert matched.how == "matched 5 of 5 records by id (auto: the first key tried)"
    assert matched.missing == tuple(q.id for q in locomo.queries[5:])


def test_match_by_position_counting_every_question(locomo) -> None:
    """Without ids or texts, positions counting every question (category 5 included) match: auto's position-all."""
    conv2 = [q.id for q in locomo.queries if q.scope == "conv-2"]
    records = [AnswerRecord(f"[{i}]", conversation=1, position=i) for i in range(6)]
    matched = match_answers(_file(records), locomo)
    assert matched.key == "position-all"
    assert list(matched.by_query) == conv2[:6]  # conv-2/q0..q5: conversation 1 is the collection's second
    assert matched.how == (
        "matched 6 of 6 records by position-all (auto: id: no record carries an id; text: no record carries a question "
        "text); no record carries its question's text, so no match was checked against it"
    )


def test_match_by_headline_position_where_category_5_is_interleaved(locomo) -> None:
    """A file that drops category 5 counts positions over the rest: where conv-1/q5 (category 5) sits, the
    positions shift, and auto finds it by the texts some records carry."""
    headline = _headline(locomo, "conv-1")  # q0..q4, q6
    texts = _texts(locomo)
    records = [
        AnswerRecord(f"[{i}]", conversation="conv-1", position=i, question=texts[qid] if i >= 4 else None)
        for i, qid in enumerate(headline)
    ]
    matched = match_answers(_file(records), locomo)
    assert (matched.key, list(matched.by_query)) == ("position-headline", headline)
    assert matched.how == (
        "matched 6 of 6 records by position-headline (auto: id: no record carries an id; text: 2 of 6 records match; "
        "position-all: 1 disagree with their question's text (first [5] vs conv-1/q5))"
    )
    assert dict(match_answers(_file(records), locomo, key="position-headline").by_query) == dict(matched.by_query)


def test_match_by_text_normalises_white_space_but_keeps_case(locomo_bare) -> None:
    """Runs of white space and the ends do not matter; case does."""
    texts = _texts(locomo_bare)
    spaced = "  " + texts["conv-1/q1"].replace(" ", " \n\t") + " "
    records = [
        AnswerRecord("[0]", conversation="conv-1", question=spaced),
        AnswerRecord("[1]", conversation="conv-1", question=texts["conv-1/q0"].upper()),
        AnswerRecord("[2]", conversation="conv-1", question=texts["conv-1/q2"]),
    ]
    matched = match_answers(_file(records), locomo_bare)
    assert (matched.key, list(matched.by_query)) == ("text", ["conv-1/q1", "conv-1/q2"])
    assert matched.unmatched == (
        ("[1]", "no question of conv-1 has this text; 1 question of it was left out by the loader, text unknown"),
    )


def _duplicates() -> Collection:
    queries = tuple(Query(f"c/q{i}", text, scope="c") for i, text in enumerate(["Same?", "Other?", "Same?"]))
    return Collection("dups", (), queries, {}, {})


def test_the_kth_record_with_a_text_matches_the_kth_question_with_it() -> None:
    """A conversation that repeats a question: records with that text take its questions in order."""
    records = [AnswerRecord(f"[{i}]", question=t) for i, t in enumerate(["Same?", "Same?", "Other?"])]
    matched = match_answers(_file(records), _duplicates(), key="text")
    assert {qid: r.where for qid, r in matched.by_query.items()} == {"c/q0": "[0]", "c/q1": "[2]", "c/q2": "[1]"}


def test_two_records_for_one_question_are_refused() -> None:
    """A third record with a text the conversation holds twice: two records would match one question."""
    records = [AnswerRecord(f"[{i}]", question="Same?") for i in range(3)]
    with pytest.raises(
        InputError, match=re.escape(f"{PATH}: [1] and [2] both match c/q2 (by text); each question takes one record")
    ):
        match_answers(_file(records), _duplicates(), key="text")


def test_a_question_text_that_disagrees_refuses_the_file(locomo) -> None:
    """Whatever the key, a record's text must be its question's: headline positions read as positions over all
    questions put conv-1's record 5 on the category 5 question, and the file is refused in one line."""
    texts = _texts(locomo)
    records = [
        AnswerRecord(f"locomo_exp_user_0[{i}]", conversation=0, position=i, question=texts[qid])
        for i, qid in enumerate(_headline(locomo, "conv-1"))
    ]
    with pytest.raises(InputError) as caught:
        match_answers(_file(records), locomo, key="position-all")
    assert str(caught.value) == (
        f"{PATH}: locomo_exp_user_0[5]: the question {texts['conv-1/q6']!r} is not the collection's conv-1/q5, "
        f"{texts['conv-1/q5']!r} (matched by position-all); the texts must agree once white space is normalised: "
        "is the file made from another version of the dataset, or matched by the wrong key?"
    )


def test_unmatched_records_are_listed_with_their_reasons(locomo) -> None:
    """A minority of records that match nothing are listed, each with why; the rest match."""
    ids = [q.id for q in locomo.queries]
    records = [AnswerRecord(f"[{i}]", conversation=0, position=i) for i in range(7)] + [
        AnswerRecord("[7]", conversation=2, position=0),
        AnswerRecord("[8]", conversation="conv-9", position=0),
        AnswerRecord("[9]", conversation="conv-2", position=9),
        AnswerRecord("[10]"),
    ]
    matched = match_answers(_file(records), locomo, key="position-all")
    assert list(matched.by_query) == ids[:7]
    assert matched.unmatched == (
        ("[7]", "conversation 2 is beyond the collection's 2 conversations"),
        ("[8]", "conversation 'conv-9' is not one of the collection's"),
        ("[9]", "position 9 is beyond the 9 questions of conv-2"),
        ("[10]", "carries no position"),
    )


def test_a_file_for_another_dataset_is_refused(answers_dir: Path, locomo) -> None:
    """LongMemEval answers against the LoCoMo sample: most records match nothing under every key."""
    answers = read_answers(answers_dir / "longmemeval-sample.jsonl.eval-results-authored-judge-1")
    path = answers.paths[0]
    with pytest.raises(InputError) as caught:
        match_answers(answers, locomo)
    assert str(caught.value) == (
        f"{path}: most records match no question of 'locomo-sample' by any key (id: 0 of 8 records match; text: no "
        "record carries a question text; position-all: 0 of 8 records match; position-headline: 0 of 8 records match; "
        "e.g. line 1 by id: no question has the id 'e47becba'): the file answers another dataset's questions; match it "
        "to the collection it was made for"
    )


def test_a_file_for_another_dataset_is_refused_under_a_named_key(answers_dir: Path, locomo) -> None:
    """With a key named, the refusal counts the records that key leaves unmatched."""
    answers = read_answers(answers_dir / "longmemeval-sample.jsonl.eval-results-authored-judge-1")
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{answers.paths[0]}: 8 of 8 records match no question of 'locomo-sample' (by id; e.g. line 1: no question "
            "has the id 'e47becba'): the file answers another dataset's questions"
        ),
    ):
        match_answers(answers, locomo, key="id")


def test_a_file_covering_one_conversation_leaves_the_rest_missing(answers_dir: Path, locomo_bare) -> None:
    """The EverMemOS sample answers conv-1 only: conv-2's questions (and conv-1's category 5) are missing."""
    matched = match_answers(read_answers(answers_dir / "evermemos-locomo-sample.json"), locomo_bare)
    expected = [q.id for q in locomo_bare.queries if q.scope == "conv-2" or q.group in locomo_bare.headline_excludes]
    assert list(matched.missing) == expected
    assert list(matched.by_query) == [q for q in _headline(locomo_bare, "conv-1")]


def test_records_of_left_out_questions_say_why_without_their_query_records(locomo_strict_bare) -> None:
    """Matched by id to a question the loader left out: listed in left_out with the loader's reason, not unmatched."""
    records = [AnswerRecord("[0]", question_id="conv-1/q0"), AnswerRecord("[1]", question_id="conv-1/q2")]
    matched = match_answers(_file(records), locomo_strict_bare)
    reason = dict(locomo_strict_bare.skipped)["conv-1/q2"]
    assert matched.left_out == (("conv-1/q2", f"question left out by the loader: {reason}"),)
    assert list(matched.by_query) == ["conv-1/q0"] and matched.unmatched == ()
    assert "conv-1/q2" not in matched.missing and dict(matched.keys) == {"id": 2}


def test_records_of_left_out_questions_match_when_the_collection_carries_them(locomo_with_left_out) -> None:
    """With Collection.left_out_queries their texts are known: they match by text and are in by_query too."""
    collection = locomo_with_left_out
    texts = {q.id: q.text for q in (*collection.queries, *collection.left_out_queries)}
    records = [AnswerRecord(f"[{i}]", conversation="conv-2", question=texts[f"conv-2/q{i}"]) for i in range(9)]
    matched = match_answers(_file(records), collection)
    assert matched.key == "text"
    assert list(matched.by_query) == [f"conv-2/q{i}" for i in range(9)]
    assert [qid for qid, _ in matched.left_out] == ["conv-2/q6", "conv-2/q7"]


def test_a_headline_position_past_a_question_of_unknown_group_says_so(locomo_bare) -> None:
    """conv-2/q6 was left out and its group is unknown: the headline positions from it on cannot be counted."""
    records = [AnswerRecord(f"[{i}]", conversation="conv-2", position=i) for i in range(7)]
    matched = match_answers(_file(records), locomo_bare, key="position-headline")
    assert list(matched.by_query) == _headline(locomo_bare, "conv-2")[:5]
    reason = "its headline position is uncertain: conv-2/q6, before it in conv-2, was left out by the loader and its group is unknown"
    assert matched.unmatched == (("[5]", reason), ("[6]", reason))


def test_the_key_must_be_known(locomo) -> None:
    """An unknown key lists MATCH_KEYS."""
    with pytest.raises(
        ParameterError,
        match=re.escape("key: 'position' (str) is not a matching key; choose from: " + ", ".join(MATCH_KEYS)),
    ):
        match_answers(_file([AnswerRecord("[0]")]), locomo, key="position")


def test_a_file_without_records_is_refused(locomo) -> None:
    """Nothing to match is one line, not an empty result."""
    with pytest.raises(InputError, match=re.escape(f"{PATH}: holds no answer records; nothing to match")):
        match_answers(_file([]), locomo)
