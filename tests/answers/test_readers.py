"""The built-in readers on their authored samples, field by field, and the one-line refusal of each bad record."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agentmemory.answers import ImportedMemory, Verdict, read_answers
from agentmemory.answers.zep import split_context
from agentmemory.errors import InputError, MissingFileError


def _write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


# -- mem0 -------------------------------------------------------------------------------------------------------
def test_mem0_reads_conversation_indexes_positions_verdicts_and_extra_numbers(answers_dir: Path) -> None:
    """mem0's keys are conversation indexes; llm_score is the one verdict; bleu and f1 are kept as extra numbers."""
    answers = read_answers(answers_dir / "mem0-locomo-sample.json")
    raw = json.loads((answers_dir / "mem0-locomo-sample.json").read_text(encoding="utf-8"))
    second = answers.records[1]
    item = raw["0"][1]
    assert (second.where, second.conversation, second.position) == ("['0'][1]", 0, 1)
    assert (second.question, second.gold, second.answer, second.category) == (
        item["question"],
        item["answer"],
        item["response"],
        item["category"],
    )
    assert second.verdicts == (Verdict("llm_score", float(item["llm_score"]), str(item["llm_score"])),)
    assert dict(second.extra) == {"bleu_score": item["bleu_score"], "f1_score": item["f1_score"]}
    assert second.memories is None and not answers.has_retrieval
    assert [r.conversation for r in answers.records] == [0] * len(raw["0"]) + [1] * len(raw["1"])
    assert answers.judges == {"llm_score": "1 correct, 0 wrong (mem0's LLM judge: CORRECT or WRONG)"}
    assert answers.name == "mem0-locomo-sample"


@pytest.mark.parametrize(
    "score, shown",
    [(0.5, "0.5"), ("1", "'1'"), (2, "2"), ([1], "[1]")],
)
def test_mem0_refuses_a_score_it_cannot_map(tmp_path: Path, score: object, shown: str) -> None:
    """An llm_score other than 0 or 1 (or true/false) is refused, naming the file, the record and the label."""
    path = _write(
        tmp_path / "m.json",
        {"0": [{"question": "q", "answer": "a", "response": "r", "category": "1", "llm_score": score}]},
    )
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}: ['0'][0].llm_score: {shown} is not a label this judge maps; expected 1 or 0 (or true or false)"
        ),
    ):
        read_answers(path)


def test_mem0_refuses_a_record_without_its_question(tmp_path: Path) -> None:
    """A field the format reads is required in every record: its absence names the record and the field."""
    good = {"question": "q", "answer": "a", "response": "r", "category": "4", "llm_score": 1}
    bad = {k: v for k, v in good.items() if k != "question"}
    path = _write(tmp_path / "m.json", {"3": [good, bad]})
    with pytest.raises(
        InputError, match=re.escape(f"{path}: ['3'][1].question: missing; the shape reads the question from it")
    ):
        read_answers(path, format="mem0")


# -- evermemos --------------------------------------------------------------------------------------------------
def test_evermemos_reads_three_runs_memories_and_metadata(answers_dir: Path) -> None:
    """Each run is its own verdict; the majority decides; search_results become memories, best first."""
    answers = read_answers(answers_dir / "evermemos-locomo-sample.json")
    raw = json.loads((answers_dir / "evermemos-locomo-sample.json").read_text(encoding="utf-8"))
    items = raw["detailed_results"]["locomo_exp_user_0"]
    assert [r.question_id for r in answers.records] == [i["question_id"] for i in items]
    assert {r.conversation for r in answers.records} == {0}
    split = next(r for r, i in zip(answers.records, items) if len(set(i["llm_judgments"].values())) == 2)
    values = [v.value for v in split.verdicts]
    assert [v.judge for v in split.verdicts] == ["judgment_1", "judgment_2", "judgment_3"]
    assert split.verdict == (1.0 if sum(values) >= 2 else 0.0)
    first = answers.records[0]
    assert first.memories == tuple(ImportedMemory(s["content"], None, s["score"]) for s in items[0]["search_results"])
    assert answers.records[-1].memories == ()  # retrieved nothing
    assert answers.judges["judgment_2"] == (
        "true correct, false wrong (run 2 of 3 of the LLM judge authored-judge; EverMemOS writes false for a failed call too)"
    )
    assert answers.notes == ("the file's metadata: answer_model authored-by-hand, judge_model authored-judge",)


def test_evermemos_names_the_system_by_its_run_folder(answers_dir: Path, tmp_path: Path) -> None:
    """An eval_results.json takes the name of the folder holding it (EverMemOS writes one per run)."""
    run = tmp_path / "gpt-x-cot"
    run.mkdir()
    shutil.copy(answers_dir / "evermemos-locomo-sample.json", run / "eval_results.json")
    assert read_answers(run / "eval_results.json").name == "gpt-x-cot"


def test_evermemos_refuses_a_judgment_that_is_not_a_boolean(tmp_path: Path) -> None:
    """A run's label must be true or false: 'yes' is refused with the record's path."""
    record = {
        "question_id": "x_qa0",
        "question": "q",
        "golden_answer": "g",
        "generated_answer": "a",
        "category": "1",
        "llm_judgments": {"judgment_1": True, "judgment_2": "yes"},
    }
    path = _write(tmp_path / "e.json", {"detailed_results": {"locomo_exp_user_2": [record]}})
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}: detailed_results.locomo_exp_user_2[0].llm_judgments.judgment_2: 'yes' is not a label this judge maps; expected true or false"
        ),
    ):
        read_answers(path)


def test_evermemos_refuses_a_conversation_key_without_an_index(tmp_path: Path) -> None:
    """EverMemOS names conversations <dataset>_exp_user_<n>: a key without n is refused, not guessed."""
    record = {
        "question_id": "x",
        "question": "q",
        "golden_answer": "g",
        "generated_answer": "a",
        "category": "1",
        "llm_judgments": {"judgment_1": True},
    }
    path = _write(tmp_path / "e.json", {"detailed_results": {"default_group": [record]}})
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}: detailed_results.default_group[0].conversation: 'default_group' holds no conversation index; expected an integer or a text ending in one"
        ),
    ):
        read_answers(path)


# -- zep --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("given", ["zep_locomo_grades.json", "zep_locomo_responses.json"])
def test_zep_finds_the_other_files_beside_either_one(answers_dir: Path, given: str) -> None:
    """Given the grades or the responses, the reader reads the grades, the responses and the search results."""
    answers = read_answers(answers_dir / "zep" / given)
    folder = (answers_dir / "zep").as_posix()
    assert answers.paths == tuple(f"{folder}/zep_locomo_{r}.json" for r in ("grades", "responses", "search_results"))
    assert answers.name == "zep_locomo"


def test_zep_pairs_grades_with_responses_and_splits_contexts(answers_dir: Path) -> None:
    """The grade is the verdict; latency is the response's duration in seconds; the context becomes memories."""
    answers = read_answers(
        [answers_dir / "zep" / "zep_locomo_grades.json", answers_dir / "zep" / "zep_locomo_responses.json"]
    )
    responses = json.loads((answers_dir / "zep" / "zep_locomo_responses.json").read_text(encoding="utf-8"))
    search = json.loads((answers_dir / "zep" / "zep_locomo_search_results.json").read_text(encoding="utf-8"))
    second = answers.records[1]
    assert second.verdicts == (Verdict("grade", 1.0, "true"),)
    assert second.latency == responses["locomo_experiment_user_0"][1]["duration_ms"] / 1000
    assert second.extra == {"search_ms": search["locomo_experiment_user_0"][1]["duration_ms"]}
    assert second.memories == split_context(search["locomo_experiment_user_0"][1]["context"])
    assert [m.text for m in second.memories] == [
        "Priya: Also, we adopted a dog! A beagle called Biscuit from the shelter on Lipowa Street.",
        "Priya owns a beagle.",
        "Biscuit: a beagle Priya adopted from a shelter",
    ]
    assert answers.records[2].memories == ()  # empty FACTS and ENTITIES: retrieved nothing


@pytest.mark.parametrize(
    "context, texts",
    [
        (
            "<FACTS>\n  - a (event_time: 2023-01-01T00:00:00Z)\n  - b\n</FACTS>\n<ENTITIES>\n  - E: c\n</ENTITIES>",
            ["a", "b", "E: c"],
        ),
        ("<ENTITIES>\n - only an entity\n</ENTITIES>", ["only an entity"]),
        ("<FACTS>\n</FACTS>\n<ENTITIES>\n</ENTITIES>", []),
        ("plain context without the template", ["plain context without the template"]),
        ("<FACTS>\nnot a dash line\n  - kept\n</FACTS>", ["kept"]),
    ],
)
def test_zep_context_split_rule(context: str, texts: list[str]) -> None:
    """The '- ' lines of <FACTS> then <ENTITIES>, without a trailing event time; untagged text is one memory."""
    assert [m.text for m in split_context(context)] == texts


def test_zep_without_the_responses_beside_the_grades_is_refused(answers_dir: Path, tmp_path: Path) -> None:
    """The pair is required: a grades file alone names the responses file it looked for."""
    shutil.copy(answers_dir / "zep" / "zep_locomo_grades.json", tmp_path / "zep_locomo_grades.json")
    with pytest.raises(
        MissingFileError,
        match=re.escape(
            f"{tmp_path / 'zep_locomo_responses.json'}: no such Zep responses file beside zep_locomo_grades.json (pass both the grades and the responses)"
        ),
    ):
        read_answers(tmp_path / "zep_locomo_grades.json")


def test_zep_refuses_responses_that_are_not_the_grades(answers_dir: Path, tmp_path: Path) -> None:
    """Grades and responses must agree record by record: another answer is one line naming both places."""
    shutil.copy(answers_dir / "zep" / "zep_locomo_grades.json", tmp_path / "zep_locomo_grades.json")
    responses = json.loads((answers_dir / "zep" / "zep_locomo_responses.json").read_text(encoding="utf-8"))
    responses["locomo_experiment_user_1"][2]["answer"] = "Something else."
    path = _write(tmp_path / "zep_locomo_responses.json", responses)
    grades = json.loads((tmp_path / "zep_locomo_grades.json").read_text(encoding="utf-8"))
    original = grades["locomo_experiment_user_1"][2]["answer"]
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}: locomo_experiment_user_1[2]: answer 'Something else.' differs from the grades' {original!r} at "
            "locomo_experiment_user_1[2] of zep_locomo_grades.json; expected the responses the grades were made from"
        ),
    ):
        read_answers(tmp_path / "zep_locomo_grades.json")


def test_zep_refuses_a_grade_that_is_not_a_boolean(answers_dir: Path, tmp_path: Path) -> None:
    """Zep's grade is true or false; 'CORRECT' is refused, naming the grades file and the record."""
    shutil.copy(answers_dir / "zep" / "zep_locomo_responses.json", tmp_path / "zep_locomo_responses.json")
    grades = json.loads((answers_dir / "zep" / "zep_locomo_grades.json").read_text(encoding="utf-8"))
    grades["locomo_experiment_user_0"][0]["grade"] = "CORRECT"
    path = _write(tmp_path / "zep_locomo_grades.json", grades)
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}: locomo_experiment_user_0[0].grade: 'CORRECT' is not a label this judge maps; expected true or false"
        ),
    ):
        read_answers([path, tmp_path / "zep_locomo_responses.json"])


# -- longmemeval ------------------------------------------------------------------------------------------------
def test_longmemeval_reads_ids_hypotheses_and_the_judge_model(answers_dir: Path) -> None:
    """Each line: question_id, the hypothesis as the answer, one verdict from the judge autoeval_label names."""
    path = answers_dir / "longmemeval-sample.jsonl.eval-results-authored-judge-1"
    answers = read_answers(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r.question_id for r in answers.records] == [line["question_id"] for line in lines]
    assert [r.answer for r in answers.records] == [line["hypothesis"] for line in lines]
    assert [r.where for r in answers.records] == [f"line {i}" for i in range(1, len(lines) + 1)]
    assert [(v.judge, v.value, v.label) for r in answers.records for v in r.verdicts] == [
        ("authored-judge-1", float(line["autoeval_label"]["label"]), str(line["autoeval_label"]["label"]).lower())
        for line in lines
    ]
    assert answers.name == "longmemeval-sample" and list(answers.judges) == ["authored-judge-1"]


def test_longmemeval_hypotheses_without_labels_have_no_verdicts(tmp_path: Path) -> None:
    """A plain hypotheses file is read too: answers without verdicts."""
    path = tmp_path / "hyp.jsonl"
    path.write_text('{"question_id": "e47becba", "hypothesis": "Business."}\n', encoding="utf-8")
    [record] = read_answers(path).records
    assert (record.question_id, record.answer, record.verdicts) == ("e47becba", "Business.", ())


def test_longmemeval_names_the_judge_from_the_file_name_when_the_label_does_not(tmp_path: Path) -> None:
    """Without autoeval_label.model the judge is the model in the file name's .eval-results-<model>."""
    path = tmp_path / "h.jsonl.eval-results-judge-x"
    path.write_text('{"question_id": "a", "hypothesis": "b", "autoeval_label": {"label": false}}\n', encoding="utf-8")
    [record] = read_answers(path).records
    assert record.verdicts == (Verdict("judge-x", 0.0, "false"),)


def test_longmemeval_refuses_a_label_it_cannot_map_naming_the_line(tmp_path: Path) -> None:
    """A label other than true/false/1/0 is refused with the file's line."""
    path = tmp_path / "h.jsonl.eval-results-m"
    path.write_text(
        '{"question_id": "a", "hypothesis": "b", "autoeval_label": {"model": "m", "label": true}}\n\n'
        '{"question_id": "c", "hypothesis": "d", "autoeval_label": {"model": "m", "label": "yes"}}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        InputError,
        match=re.escape(
            f"{path}:3: autoeval_label.label: 'yes' is not a label this judge maps; expected 1 or 0 (or true or false)"
        ),
    ):
        read_answers(path)
