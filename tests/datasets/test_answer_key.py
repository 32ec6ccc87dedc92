"""Judgment patches of the answer key: answers, exclusions and evidence; locomo-audit's errata; the ceiling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.collection import Collection, collection_summary
from agentmemory.datasets import load
from agentmemory.datasets.judgment_patch import (
    JudgmentPatch,
    answer_key_ceiling,
    evidence_corrections,
    read_judgment_patch,
)
from agentmemory.datasets.locomo_errata import is_errata
from agentmemory.errors import InputError, ParameterError

SAMPLE = REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"
ERRATA = REPO_ROOT / "fixtures/locomo-sample/errata-sample.json"
PATCH = REPO_ROOT / "fixtures/locomo-sample/qrels-patch.jsonl"
LONGMEMEVAL = REPO_ROOT / "fixtures/longmemeval-sample/longmemeval-sample.json"
BEAM = REPO_ROOT / "fixtures/beam-sample"


@pytest.fixture(scope="module")
def sample() -> Collection:
    return load(SAMPLE)


@pytest.fixture(scope="module")
def repaired() -> Collection:
    return load(SAMPLE, repair=True)


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "fixes.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _exact(one: Collection, other: Collection) -> bool:
    """Equal in every part a patch touches, orders included (queries, those left out, judgments)."""
    return (
        one == other
        and one.queries == other.queries
        and one.left_out_queries == other.left_out_queries
        and [(q, list(j.items())) for q, j in one.qrels.items()]
        == [(q, list(j.items())) for q, j in other.qrels.items()]
    )


# -- the three new kinds of line, applied and reverted


def test_an_answer_line_replaces_the_gold_answer_and_revert_restores_it(tmp_path: Path, sample) -> None:
    """An answer line changes metadata["answer"] of a judged question and of one the loader left out, nothing else."""
    path = _write(
        tmp_path,
        {"query_id": "conv-2/q0", "answer": "Bass guitar", "reason": "D1:4 says bass lines"},
        {"query_id": "conv-1/q7", "answer": "Green, with a cracked handle", "reason": "D2:2 adds the handle"},
    )
    patch = read_judgment_patch(path, sample)
    assert [(k.line, k.query_id, k.kind, k.before, k.after) for k in patch.answer_key] == [
        (1, "conv-2/q0", "answer", "Bass", "Bass guitar"),
        (2, "conv-1/q7", "answer", "Green", "Green, with a cracked handle"),
    ]
    assert patch.corrections == () and patch.counts()["changed"] == 0
    assert patch.summary() == "2 answers replaced by fixes.jsonl"
    assert patch.answers == {"conv-2/q0": "Bass guitar", "conv-1/q7": "Green, with a cracked handle"}
    patched = patch.apply(sample)
    answers = {q.id: q.metadata.get("answer") for q in (*patched.queries, *patched.left_out_queries)}
    before = {q.id: q.metadata.get("answer") for q in (*sample.queries, *sample.left_out_queries)}
    assert answers == {**before, "conv-2/q0": "Bass guitar", "conv-1/q7": "Green, with a cracked handle"}
    assert [q.id for q in patched.queries] == [q.id for q in sample.queries]
    assert {q: dict(j) for q, j in patched.qrels.items()} == {q: dict(j) for q, j in sample.qrels.items()}
    assert _exact(patch.revert(patched), sample)


def test_an_exclusion_leaves_every_mean_and_revert_brings_the_question_back(tmp_path: Path, sample) -> None:
    """An excluded judged question is unjudged (its judgments removed, each a correction) and named as excluded."""
    path = _write(
        tmp_path,
        {"query_id": "conv-2/q2", "exclude": True, "reason": "the wedding date is not the question"},
        {"query_id": "conv-1/q3", "exclude": True, "reason": "a guess about taste"},
    )
    patch = read_judgment_patch(path, sample)
    assert [(c.line, c.query_id, c.entry_id, c.before, c.after) for c in patch.corrections] == [
        (1, "conv-2/q2", "conv-2/D1:1", 1, None),
        (1, "conv-2/q2", "conv-2/D2:3", 1, None),
        (1, "conv-2/q2", "conv-2/D2:5", 1, None),
    ]
    assert patch.excluded == ("conv-2/q2", "conv-1/q3")
    assert patch.summary() == (
        "3 judgments changed (3 removed, 0 regraded, 0 added) on 1 query, 2 questions excluded by fixes.jsonl"
    )
    patched = patch.apply(sample)
    assert patched.excluded_query_ids == ("conv-2/q2", "conv-1/q3") and sample.excluded_query_ids == ()
    assert "conv-2/q2" in patched.unjudged_query_ids and "conv-2/q2" not in sample.unjudged_query_ids
    assert len(patched.judged_queries) == len(sample.judged_queries) - 1
    assert _exact(patch.revert(patched), sample)


def test_an_evidence_line_replaces_the_judgments_of_its_question(tmp_path: Path, sample) -> None:
    """Dia_ids and entry ids both name entries; the judgments become the list's (grade 1, in order), each change a
    correction; an empty list leaves a question unjudged; revert gives back each question's judgments in order."""
    path = _write(
        tmp_path,
        {"query_id": "conv-2/q1", "evidence": ["D1:4"], "reason": "D3:1 says nothing of the date"},
        {"query_id": "conv-2/q2", "evidence": ["conv-2/D2:5", "D2:4", "D1:1"], "reason": "D2:4 is the point"},
        {"query_id": "conv-1/q1", "evidence": [], "reason": "no turn says when"},
    )
    patch = read_judgment_patch(path, sample)
    assert [(c.line, c.query_id, c.entry_id, c.before, c.after) for c in patch.corrections] == [
        (1, "conv-2/q1", "conv-2/D3:1", 1, None),
        (2, "conv-2/q2", "conv-2/D2:3", 1, None),
        (2, "conv-2/q2", "conv-2/D2:4", None, 1),
        (3, "conv-1/q1", "conv-1/D2:6", 1, None),
    ]
    assert [(k.query_id, k.before, k.after) for k in patch.answer_key] == [
        ("conv-2/q1", (("conv-2/D1:4", 1), ("conv-2/D3:1", 1)), (("conv-2/D1:4", 1),)),
        (
            "conv-2/q2",
            (("conv-2/D1:1", 1), ("conv-2/D2:3", 1), ("conv-2/D2:5", 1)),
            (("conv-2/D2:5", 1), ("conv-2/D2:4", 1), ("conv-2/D1:1", 1)),
        ),
        ("conv-1/q1", (("conv-1/D2:6", 1),), ()),
    ]
    patched = patch.apply(sample)
    assert list(patched.qrels["conv-2/q2"].items()) == [("conv-2/D2:5", 1), ("conv-2/D2:4", 1), ("conv-2/D1:1", 1)]
    assert dict(patched.qrels["conv-2/q1"]) == {"conv-2/D1:4": 1}
    assert "conv-1/q1" in patched.unjudged_query_ids
    assert _exact(patch.revert(patched), sample)
    assert patch.to_dict()["answer_key"][0] == {
        "line": 1,
        "query_id": "conv-2/q1",
        "kind": "evidence",
        "from": {"conv-2/D1:4": 1, "conv-2/D3:1": 1},
        "to": {"conv-2/D1:4": 1},
        "reason": "D3:1 says nothing of the date",
    }


def test_evidence_at_session_granularity_judges_the_sessions_of_its_turns(tmp_path: Path) -> None:
    """A dia_id names the session entry holding that turn (two turns of one session judge it once)."""
    sessions = load(SAMPLE, granularity="session")
    path = _write(tmp_path, {"query_id": "conv-2/q2", "evidence": ["D3:1", "D2:4", "D2:5"], "reason": "D3:1 too"})
    patch = read_judgment_patch(path, sessions)
    assert list(patch.answer_key[0].after) == [("conv-2/S3", 1), ("conv-2/S2", 1)]
    assert [(c.entry_id, c.before, c.after) for c in patch.corrections] == [
        ("conv-2/S1", 1, None),
        ("conv-2/S3", None, 1),
    ]
    assert list(patch.apply(sessions).qrels["conv-2/q2"]) == ["conv-2/S3", "conv-2/S2"]
    same = _write(tmp_path, {"query_id": "conv-2/q2", "evidence": ["D2:3", "D1:1"], "reason": "the same sessions"})
    with pytest.raises(InputError) as info:
        read_judgment_patch(same, sessions)
    assert str(info.value) == (
        f"{same}:1: gives query 'conv-2/q2' the evidence it has already (conv-2/S2, conv-2/S1); drop the line"
    )


def test_grade_lines_keep_their_exact_artifact(sample) -> None:
    """A patch of grade lines only has no answer-key part: its counts and dictionary are what they were."""
    patch = read_judgment_patch(PATCH, sample)
    assert patch.answer_key == ()
    assert list(patch.to_dict()) == [
        "file",
        "sha256",
        "changed",
        "removed",
        "regraded",
        "added",
        "queries",
        "corrections",
    ]
    assert _exact(patch.revert(patch.apply(sample)), sample)


def test_a_patch_without_the_judgments_it_changes_is_refused() -> None:
    """revert needs every corrected question's original judgments: a patch built without them says so."""
    with pytest.raises(
        ParameterError,
        match=r"^originals: \{\} \(dict\) lacks the judgments query 'q1' had before the patch; read patches with "
        r"agentmemory\.datasets\.judgment_patch\.read_judgment_patch$",
    ):
        JudgmentPatch("p.jsonl", "0" * 64, (), (_evidence_key("q1"),))


def _evidence_key(query_id: str):
    from agentmemory.datasets.judgment_patch import KeyCorrection

    return KeyCorrection(1, query_id, "evidence", (("e1", 1),), (("e2", 1),), "why")


# -- bad lines, to the letter


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [{"query_id": "conv-2/q0", "reason": "r"}],
            ":1: corrects nothing: a line has query_id, reason and entry_id and grade (a judgment), answer (the gold "
            "answer), exclude (true: out of every mean) or evidence (the ids judged relevant)",
        ),
        (
            [{"query_id": "conv-2/q0", "answer": "x", "evidence": [], "reason": "r"}],
            ":1: has the fields 'answer' and 'evidence' of two kinds of correction; give each on its own line",
        ),
        (
            [{"query_id": "conv-2/q0", "answer": "x", "note": "n", "reason": "r"}],
            ":1: has the field 'note', which an answer correction does not take; its fields are query_id, answer, "
            "reason",
        ),
        (
            [{"query_id": "conv-2/q0", "exclude": True}],
            ":1: has no reason; an exclusion has the fields query_id, exclude, reason",
        ),
        (
            [{"query_id": "conv-2/q0", "answer": "x", "reason": " "}],
            ":1: reason ' ' is not a non-empty string; say why the answer changes",
        ),
        (
            [{"query_id": "conv-2/q0", "exclude": True, "reason": ""}],
            ":1: reason '' is not a non-empty string; say why the question is excluded",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["D1:4", "D1:1"], "reason": ""}],
            ":1: reason '' is not a non-empty string; say why the evidence changes",
        ),
        (
            [{"query_id": "conv-2/q0", "answer": 4, "reason": "r"}],
            ":1: answer 4 is not a non-empty string; give the corrected answer as text",
        ),
        (
            [{"query_id": "conv-2/q0", "answer": "Bass", "reason": "r"}],
            ":1: gives query 'conv-2/q0' the answer 'Bass', which it has already; drop the line",
        ),
        (
            [{"query_id": "conv-1/q5", "answer": "A poodle", "reason": "r"}],
            ":1: query 'conv-1/q5' has no answer in its metadata to replace; exclude it, or drop the line",
        ),
        (
            [{"query_id": "conv-2/q0", "exclude": "yes", "reason": "r"}],
            ":1: exclude 'yes' is not true; exclude a question with \"exclude\": true",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": "D1:4", "reason": "r"}],
            ":1: evidence 'D1:4' is not a list of ids; give the ids judged relevant, e.g. [\"D1:3\"]",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["D1:4", 3], "reason": "r"}],
            ":1: evidence holds 3, which is not a non-empty string",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["D1:1", "D1:1"], "reason": "r"}],
            ":1: evidence lists 'D1:1' twice; give each id once",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["D9:9"], "reason": "r"}],
            ":1: evidence 'D9:9' names no entry of the collection 'locomo-sample' (no entry or turn 'D9:9' or "
            "'conv-2/D9:9')",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["conv-1/D1:1"], "reason": "r"}],
            ":1: evidence 'conv-1/D1:1' is in scope 'conv-1', outside the scope 'conv-2' that query 'conv-2/q0' "
            "searches",
        ),
        (
            [{"query_id": "conv-2/q0", "evidence": ["D1:4"], "reason": "r"}],
            ":1: gives query 'conv-2/q0' the evidence it has already (conv-2/D1:4); drop the line",
        ),
        (
            [{"query_id": "conv-1/q2", "evidence": ["D1:6"], "reason": "r"}],
            ":1: query 'conv-1/q2' was left out by the loader (evidence 'D1:6; D2:3' holds several ids in one "
            "string); load it with --repair where its format repairs it, or drop the line",
        ),
        (
            [{"query_id": "conv-9/q0", "exclude": True, "reason": "r"}],
            ":1: query 'conv-9/q0' is not a query of the collection 'locomo-sample'",
        ),
        (
            [
                {"query_id": "conv-2/q0", "answer": "x", "reason": "r"},
                {"query_id": "conv-2/q0", "answer": "y", "reason": "r"},
            ],
            ":2: replaces the answer of query 'conv-2/q0' again (first on line 1); give each correction once",
        ),
        (
            [
                {"query_id": "conv-2/q0", "answer": "x", "reason": "r"},
                {"query_id": "conv-2/q0", "exclude": True, "reason": "r"},
            ],
            ":2: excludes query 'conv-2/q0', and line 1 replaces the answer of it; an excluded question takes no "
            "other correction, and an evidence line replaces every judgment of its question: drop one of the two lines",
        ),
        (
            [
                {"query_id": "conv-2/q1", "entry_id": "conv-2/D2:1", "grade": 1, "reason": "r"},
                {"query_id": "conv-2/q1", "evidence": ["D1:4"], "reason": "r"},
            ],
            ":2: replaces the evidence of query 'conv-2/q1', and line 1 corrects a judgment of it; an excluded "
            "question takes no other correction, and an evidence line replaces every judgment of its question: drop "
            "one of the two lines",
        ),
        (
            [
                {"query_id": "conv-2/q1", "exclude": True, "reason": "r"},
                {"query_id": "conv-2/q1", "entry_id": "conv-2/D2:1", "grade": 1, "reason": "r"},
            ],
            ":2: corrects a judgment of query 'conv-2/q1', and line 1 excludes it; an excluded question takes no "
            "other correction, and an evidence line replaces every judgment of its question: drop one of the two lines",
        ),
    ],
)
def test_a_bad_answer_key_line_is_one_error_naming_the_file_and_line(tmp_path: Path, sample, lines, message) -> None:
    """Each bad answer, exclusion or evidence line is refused with the file, its line and what is wrong."""
    path = _write(tmp_path, *lines)
    with pytest.raises(InputError) as info:
        read_judgment_patch(path, sample)
    assert str(info.value) == str(path) + message


def test_a_left_out_question_may_have_its_answer_but_not_an_unkept_one(tmp_path: Path) -> None:
    """A question a loader skipped without keeping it for answers (a format that keeps none) is named with the reason."""
    import dataclasses

    plain = dataclasses.replace(load(SAMPLE), left_out_queries=())
    path = _write(tmp_path, {"query_id": "conv-1/q7", "answer": "Green", "reason": "r"})
    with pytest.raises(InputError) as info:
        read_judgment_patch(path, plain)
    assert str(info.value) == (
        f"{path}:1: query 'conv-1/q7' was left out by the loader (no evidence) and not kept for answers; drop the line"
    )


# -- locomo-audit's errata, read as they are


def test_the_errata_sample_read_as_it_is(sample) -> None:
    """Each entry becomes its lines, at the line the entry starts on, with its key, type and reasoning as the reason;
    WRONG_CITATION changes evidence only; evidence of a question the loader left out is recorded, not judged."""
    patch = read_judgment_patch(ERRATA, sample)
    assert patch.name == "errata-sample.json"
    assert [(k.line, k.query_id, k.kind, k.before is None) for k in patch.answer_key] == [
        (2, "conv-1/q1", "answer", False),
        (17, "conv-1/q2", "answer", False),
        (17, "conv-1/q2", "evidence", True),
        (34, "conv-1/q4", "evidence", True),
        (49, "conv-2/q1", "evidence", False),
    ]
    entries = json.loads(ERRATA.read_text(encoding="utf-8"))
    assert patch.answers == {"conv-1/q1": entries[0]["correct_answer"], "conv-1/q2": entries[1]["correct_answer"]}
    assert patch.answer_key[0].reason == f"locomo_0_qa1 AMBIGUOUS: {entries[0]['reasoning']}"
    assert patch.answer_key[3].after == (("conv-1/D3:2", 1),)
    assert [(c.line, c.query_id, c.entry_id, c.before, c.after) for c in patch.corrections] == [
        (49, "conv-2/q1", "conv-2/D3:1", 1, None)
    ]
    assert patch.summary() == (
        "1 judgment changed (1 removed, 0 regraded, 0 added) on 1 query, 2 answers replaced, 3 evidence lists "
        "replaced (2 not judged: left out by the loader) by errata-sample.json"
    )
    patched = patch.apply(sample)
    left_out = {q.id: q for q in patched.left_out_queries}
    assert left_out["conv-1/q2"].metadata["answer"] == entries[1]["correct_answer"]
    assert _exact(patch.revert(patched), sample)


def test_the_errata_sample_under_repair(repaired) -> None:
    """Repaired, conv-1/q2 is judged (its evidence gains D2:5) and conv-1/q4's correction is its repair already."""
    patch = read_judgment_patch(ERRATA, repaired)
    assert [(k.line, k.query_id, k.kind) for k in patch.answer_key] == [
        (2, "conv-1/q1", "answer"),
        (17, "conv-1/q2", "answer"),
        (17, "conv-1/q2", "evidence"),
        (49, "conv-2/q1", "evidence"),
    ]
    assert [(c.query_id, c.entry_id, c.before, c.after) for c in patch.corrections] == [
        ("conv-1/q2", "conv-1/D2:5", None, 1),
        ("conv-2/q1", "conv-2/D3:1", 1, None),
    ]
    assert _exact(patch.revert(patch.apply(repaired)), repaired)


def test_errata_keys_count_every_question_of_the_conversation(tmp_path: Path, sample) -> None:
    """locomo_1_qa6 is conv-2/q6 (the adversarial q5 counts), not the sixth question of categories 1-4 (q7)."""
    entry = {
        "question_id": "locomo_1_qa6",
        "question": "How many of Amara's tomato seedlings survived?",
        "golden_answer": "Three of five",
        "category": 4,
        "error_type": "WRONG_CITATION",
        "cited_evidence": ["D3:08"],
        "correct_evidence": ["D3:3"],
        "reasoning": "D3:08 is no turn; D3:3 says three of the five survived",
        "correct_answer": "Three of five",
    }
    path = tmp_path / "errors.json"
    path.write_text(json.dumps([entry], indent=2), encoding="utf-8")
    patch = read_judgment_patch(path, sample)
    assert [(k.line, k.query_id, k.kind, k.after) for k in patch.answer_key] == [
        (2, "conv-2/q6", "evidence", (("conv-2/D3:3", 1),))
    ]


def _entry(**changes: object) -> dict:
    entry = json.loads(ERRATA.read_text(encoding="utf-8"))[3]  # locomo_1_qa1, WRONG_CITATION
    entry.update(changes)
    return entry


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            '[\n  {"question_id": "locomo_1_qa1",\n]\n',
            ":3: malformed JSON (Expecting property name enclosed in double quotes at column 1)",
        ),
        (["text"], ":2: entry 1: is 'text' (a string); expected an object with question_id, question"),
        ([_entry(note="n")], ":2: entry 1 ('locomo_1_qa1'): has the field 'note', which an entry does not take"),
        ([{k: v for k, v in _entry().items() if k != "reasoning"}], ":2: entry 1 ('locomo_1_qa1'): has no reasoning"),
        ([_entry(category="2")], None),
        (
            [_entry(question_id="conv-2/q1")],
            ":2: entry 1 ('conv-2/q1'): question_id 'conv-2/q1' is not "
            "locomo_<conversation>_qa<question>, e.g. locomo_0_qa1",
        ),
        (
            [_entry(question_id="locomo_2_qa1")],
            ":2: entry 1 ('locomo_2_qa1'): names conversation 2, but the "
            "collection 'locomo-sample' has 2 (locomo_0 .. locomo_1)",
        ),
        (
            [_entry(question_id="locomo_1_qa40")],
            ":2: entry 1 ('locomo_1_qa40'): names 'conv-2/q40', which is not a "
            "question of the collection 'locomo-sample'",
        ),
        ([_entry(), _entry()], None),
        (
            [_entry(question="When was the gig?")],
            ":2: entry 1 ('locomo_1_qa1'): question 'When was the gig?' is not "
            "that of 'conv-2/q1' (\"When did Jonas's band play at the Blue Lantern?\"): errata of another release, or a "
            "collection that is not the whole file",
        ),
        (
            [_entry(golden_answer="3 February")],
            ":2: entry 1 ('locomo_1_qa1'): golden_answer '3 February' is not that of 'conv-2/q1' ('3 February 2024')",
        ),
        (
            [_entry(cited_evidence=["D1:4"])],
            ":2: entry 1 ('locomo_1_qa1'): cited_evidence ['D1:4'] is not that of 'conv-2/q1' (['D1:4', 'D3:1'])",
        ),
        (
            [_entry(error_type="TYPO")],
            ":2: entry 1 ('locomo_1_qa1'): error_type 'TYPO' is not one of "
            "locomo-audit's: HALLUCINATION, TEMPORAL_ERROR, ATTRIBUTION_ERROR, AMBIGUOUS, INCOMPLETE, WRONG_CITATION",
        ),
        (
            [_entry(error_type="HALLUCINATION")],
            ":2: entry 1 ('locomo_1_qa1'): error_type 'HALLUCINATION' says the "
            "golden answer is wrong, but correct_answer is the golden answer",
        ),
        (
            [_entry(correct_evidence=["D7:1"])],
            ":2: entry 1 ('locomo_1_qa1'): evidence 'D7:1' names no entry of the "
            "collection 'locomo-sample' (no entry or turn 'D7:1' or 'conv-2/D7:1')",
        ),
        (
            [_entry(correct_evidence="D1:4")],
            ":2: entry 1 ('locomo_1_qa1'): correct_evidence is 'D1:4' (a string); "
            "expected a list of dialogue ids like 'D3:7'",
        ),
        ([_entry(reasoning=3)], ":2: entry 1 ('locomo_1_qa1'): reasoning is 3 (a number); expected a string"),
    ],
)
def test_a_bad_errata_entry_is_one_error_naming_the_file_line_and_entry(tmp_path: Path, sample, document, message):
    """Every entry is checked against the collection; the first bad one is named with its line and key."""
    path = tmp_path / "errors.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document, indent=2), encoding="utf-8")
    if isinstance(document, list) and len(document) == 2:
        message = ":18: entry 2 ('locomo_1_qa1'): question_id 'locomo_1_qa1' is given again (first on line 2)"
    elif message is None:
        message = ":2: entry 1 ('locomo_1_qa1'): category '2' is not that of 'conv-2/q1' (2): errata of another "
    with pytest.raises(InputError) as info:
        read_judgment_patch(path, sample)
    assert str(info.value).startswith(str(path) + message)
    assert "\n" not in str(info.value)


def test_errata_are_for_a_locomo_collection(tmp_path: Path) -> None:
    """The errata file names LoCoMo's questions: another format's collection is refused, naming its format."""
    collection = load(REPO_ROOT / "fixtures/beir-sample")
    with pytest.raises(InputError) as info:
        read_judgment_patch(ERRATA, collection)
    assert str(info.value) == (
        f"{ERRATA}: is locomo-audit's errata of LoCoMo, which correct a LoCoMo collection; the collection "
        "'beir-sample' is read as 'beir': evaluate locomo10.json"
    )


@pytest.mark.parametrize(
    ("text", "errata"),
    [
        ('[\n  {"question_id": "locomo_0_qa1"}\n]\n', True),
        ('[{"question_id": "locomo_0_qa1"}]\n', True),
        ('["q", "e"]\n', False),
        ('{"query_id": "q", "answer": "a", "reason": "r"}\n', False),
        ("\n\n", False),
    ],
)
def test_an_errata_file_is_told_from_json_lines(text: str, errata: bool) -> None:
    """A JSON list spanning lines, or a one-line list of objects, is an errata file; anything else JSON lines."""
    assert is_errata(text) is errata


# -- the ceiling per category


def test_the_ceiling_of_the_sample_by_hand(sample, repaired) -> None:
    """17 questions (8 judged + 9 left out, strict; 14 + 3 repaired): conv-1/q1 (temporal) and conv-1/q2 (multi-hop)
    have their answers replaced, so those two groups keep 2 of 3 right; evidence lines counted apart."""
    expected = {
        "1 multi-hop": (2, 3),  # conv-1/q2 (replaced), conv-2/q2, conv-2/q7
        "2 temporal": (2, 3),  # conv-1/q1 (replaced), conv-1/q4, conv-2/q1
        "3 open-domain": (2, 2),  # conv-1/q3, conv-2/q3
        "4 single-hop": (7, 7),  # conv-1/q0, q6, q7; conv-2/q0, q4, q6, q8
        "5 adversarial": (2, 2),  # conv-1/q5, conv-2/q5
    }
    for collection in (sample, repaired):
        patch = read_judgment_patch(ERRATA, collection)
        assert answer_key_ceiling(patch, collection) == expected
        assert answer_key_ceiling(patch, patch.apply(collection)) == expected
    strict = read_judgment_patch(ERRATA, sample)
    assert evidence_corrections(strict, sample) == {"1 multi-hop": (0, 1), "2 temporal": (1, 2)}
    assert evidence_corrections(read_judgment_patch(ERRATA, repaired), repaired) == {
        "1 multi-hop": (1, 1),
        "2 temporal": (1, 1),
    }


def test_an_exclusion_counts_against_the_ceiling(tmp_path: Path, sample) -> None:
    """An excluded question's key is not right either: the group keeps the others."""
    path = _write(tmp_path, {"query_id": "conv-1/q5", "exclude": True, "reason": "r"})
    assert answer_key_ceiling(read_judgment_patch(path, sample), sample)["5 adversarial"] == (1, 2)


# -- questions the loaders left out, kept for answers


def test_locomo_keeps_its_skipped_questions_for_answers(sample, repaired) -> None:
    """Every skipped question is a left-out query like a kept one: id, text, scope, group, metadata with the answer."""
    assert [q.id for q in sample.left_out_queries] == [q for q, _ in sample.skipped]
    assert [q.id for q in repaired.left_out_queries] == ["conv-1/q7", "conv-2/q6", "conv-2/q7"]
    q7 = sample.left_out_queries[4]
    assert (q7.id, q7.text, q7.scope, q7.group) == (
        "conv-1/q7",
        "What colour was the mug Priya made?",
        "conv-1",
        "4 single-hop",
    )
    assert dict(q7.metadata) == {"category": 4, "evidence": [], "answer": "Green"}
    assert q7.asked_at == sample.queries[0].asked_at
    assert not {q.id for q in sample.left_out_queries} & {q.id for q in sample.queries}


def test_longmemeval_keeps_abstention_and_targetless_questions_for_answers() -> None:
    """Abstention questions and the one without target turns are kept for answers; malformed ones are not."""
    collection = load(LONGMEMEVAL)
    assert [q.id for q in collection.left_out_queries] == ["1a4f7c22", "6a2c8f3d_abs", "9f1e2d3c_abs"]
    abstention = collection.left_out_queries[1]
    assert (abstention.scope, abstention.group, str(abstention.asked_at)) == (
        "6a2c8f3d_abs",
        "single-session-user",
        "2023-05-15 01:21:00+00:00",
    )
    assert list(abstention.metadata) == ["question_type", "question_date", "answer", "answer_session_ids"]
    assert abstention.metadata["answer"].startswith("You did not mention a hamster")


def test_beam_keeps_every_skipped_question_for_answers() -> None:
    """Every BEAM question skipped has its text: each is kept, a missing source_chat_ids left out of the metadata."""
    collection = load(BEAM)
    assert [q.id for q in collection.left_out_queries] == [q for q, _ in collection.skipped]
    abstention = collection.left_out_queries[0]
    assert (abstention.id, abstention.group) == ("1/abstention/0", "abstention")
    assert "source_chat_ids" not in abstention.metadata and abstention.metadata["answer"] == "You never mentioned it."


def test_left_out_queries_change_no_artifact(sample) -> None:
    """The collection's summary (what artifacts hold) has no place for them, and equality ignores them."""
    import dataclasses

    assert "left_out_queries" not in json.dumps(collection_summary(sample))
    assert dataclasses.replace(sample, left_out_queries=()) == sample
