"""Mapping files: a shape no reader knows is read from a TOML description, without code; every mistake in the
mapping or in a record is one line naming the file and the line or record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentmemory.answers import ImportedMemory, Verdict, match_answers, read_answers
from agentmemory.answers.shape import FIELDS, Step, parse_path
from agentmemory.errors import InputError, ParameterError


def test_the_custom_mapping_reads_every_field_of_its_records(answers_dir: Path) -> None:
    """custom.toml reads custom-results.jsonl: conversation from the line, both judges, memories, tokens, latency."""
    answers = read_answers(answers_dir / "custom-results.jsonl", mapping=str(answers_dir / "custom.toml"))
    lines = [
        json.loads(line) for line in (answers_dir / "custom-results.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    expected = [
        (n, line["sample"], i, item) for n, line in enumerate(lines, start=1) for i, item in enumerate(line["items"])
    ]
    assert len(answers.records) == len(expected)
    named = {"CORRECT": 1.0, "PARTIAL": 0.5, "WRONG": 0.0}
    for record, (n, sample, i, item) in zip(answers.records, expected):
        assert (record.where, record.conversation, record.position) == (f"line {n}: items[{i}]", sample, i)
        assert (record.question, record.answer) == (item["q"], item["pred"])
        assert record.verdicts == (
            Verdict("hand-judge", named[item["verdict"]], item["verdict"]),
            Verdict("rater", (item["rating"] - 1) / 4, str(item["rating"])),
        )
        assert record.memories == tuple(ImportedMemory(m["text"], m["dia"], m["sim"]) for m in item["retrieved"])
        assert (record.tokens, record.latency) == (item["usage"]["ctx_tokens"], item["ms"] / 1000)
    assert answers.name == "custom-harness"
    assert answers.judges == {
        "hand-judge": "CORRECT 1, PARTIAL 0.5, WRONG 0",
        "rater": "a rating from 1 (wrong) to 5 (right), scaled to (rating - 1) / 4",
    }


def test_the_custom_mapping_matches_the_sample_by_text(answers_dir: Path, locomo) -> None:
    """The imported file is matched to the LoCoMo sample like any built-in format's."""
    answers = read_answers(answers_dir / "custom-results.jsonl", mapping=str(answers_dir / "custom.toml"))
    matched = match_answers(answers, locomo)
    assert matched.key == "text"
    assert sorted(matched.missing) == sorted(q.id for q in locomo.queries if q.group == "5 adversarial")


MAPPING = """
records = "*.qa[*]"
conversation_is = "name"

[fields]
question_id = "id"
question = "text"
answer = "said"
category = "kind"

[[verdicts]]
field = "judges.*"
labels = "boolean"

[memories]
field = "context"
"""


def _files(tmp_path: Path, data: object, mapping: str = MAPPING) -> tuple[Path, Path]:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    toml = tmp_path / "m.toml"
    toml.write_text(mapping, encoding="utf-8")
    return path, toml


def test_an_object_keyed_by_conversation_with_a_judge_per_field(tmp_path: Path) -> None:
    """records = '*.qa[*]': the key is the conversation; 'judges.*' gives one verdict per field; texts as memories."""
    data = {
        "conv-1": {
            "qa": [
                {
                    "id": "conv-1/q0",
                    "text": "Q?",
                    "said": "A",
                    "kind": 4,
                    "judges": {"a": True, "b": None},
                    "context": ["one", "two"],
                }
            ]
        },
        "conv-2": {
            "qa": [
                {
                    "id": "conv-2/q0",
                    "text": "R?",
                    "said": None,
                    "kind": "x",
                    "judges": {"a": False, "b": True},
                    "context": "all of it",
                }
            ]
        },
    }
    path, toml = _files(tmp_path, data)
    answers = read_answers(path, format="mapping", mapping=str(toml))
    first, second = answers.records
    assert (first.where, first.conversation, first.question_id, first.category) == (
        "conv-1.qa[0]",
        "conv-1",
        "conv-1/q0",
        4,
    )
    assert first.verdicts == (Verdict("a", 1.0, "true"),)
    assert first.memories == (ImportedMemory("one"), ImportedMemory("two"))
    assert second.answer is None and second.memories == (ImportedMemory("all of it"),)
    assert [v.judge for v in second.verdicts] == ["a", "b"]
    assert answers.notes == ("b: 1 record without a verdict (null: a failed judge call, not a wrong answer)",)


@pytest.mark.parametrize(
    "mapping, line, message",
    [
        (
            'records = "*.qa[*]"\nlabel = "x"\n',
            2,
            "the top level has the key 'label', which a mapping file does not take there; keys: records, lines, ",
        ),
        (
            'records = "*.qa[*]"\n[fields]\nquestion = "q"\nqestion = "q"\n',
            4,
            "[fields] has the key 'qestion', which a mapping file does not take there; keys: question_id, ",
        ),
        (
            'records = "*.qa[*]"\n[[verdicts]]\nfield = "v"\nlabels = "named"\nmapping = { A = 1 }\n',
            5,
            "[[verdicts]] has the key 'mapping', which a mapping file does not take there; keys: field, labels, map",
        ),
        (
            'records = "*.qa[*]"\n[[verdicts]]\nfield = "v"\nlabels = "graded"\n',
            2,
            "[[verdicts]] number 1: max: None (NoneType) is not a number above min; give a graded judge its range, e.g. max = 5",
        ),
        (
            'records = "*.qa[*]"\n[[verdicts]]\nfield = "v"\n',
            None,
            "[[verdicts]] number 1 has no labels; required: boolean, binary, graded or named",
        ),
        (
            'records = "*.qa"\n',
            1,
            "records: '*.qa' (str) does not end in * or [*]; end the path with the step over the records",
        ),
        (
            'records = "qa[*]"\n[fields]\nconversation = "@conversation"\n',
            3,
            "fields conversation: '@conversation' (str) reads the conversation, but the records' path has no wildcard",
        ),
        ('records = "*.qa[*]"\nlines = "yes"\n', 2, "lines: 'yes' is not true or false"),
        ('records = "*.qa[*]"\n[fields]\nquestion = 3\n', 3, "[fields] question: 3 is not a path (text)"),
        (
            'records = "*.qa[*]"\n[[verdicts]]\nfield = "j.*"\nlabels = "boolean"\njudge = "x"\n',
            5,
            "[[verdicts]] number 1: judge: 'x' (str) names one judge for 'j.*', which holds several",
        ),
        ("lines = true\n", None, 'has no records; say where the records are, e.g. records = "detailed_results.*[*]"'),
        ('records = "*.qa[*]\n', 1, "is not TOML: "),
    ],
)
def test_a_bad_mapping_is_refused_naming_its_line(tmp_path: Path, mapping: str, line: int | None, message: str) -> None:
    """Every mistake in a mapping file is one line: the mapping file, the line of the key (when found), the problem."""
    path, toml = _files(tmp_path, {}, mapping)
    where = f"{toml}:{line}" if line is not None else str(toml)
    with pytest.raises(InputError, match="^" + re.escape(f"{where}: {message}")):
        read_answers(path, mapping=str(toml))


@pytest.mark.parametrize(
    "record, message",
    [
        (
            {"id": "q", "text": "Q?", "said": "A", "kind": 1, "judges": {"a": "yes"}, "context": []},
            "conv-9.qa[0].judges.a: 'yes' is not a label this judge maps; expected true or false",
        ),
        (
            {"id": "q", "said": "A", "kind": 1, "judges": {}, "context": []},
            "conv-9.qa[0].text: missing; the shape reads the question from it",
        ),
        (
            {"id": "q", "text": ["Q?"], "said": "A", "kind": 1, "judges": {}, "context": []},
            "conv-9.qa[0].text: a list of 1 items is not the question; expected text (or null)",
        ),
        (
            {"id": "", "text": "Q?", "said": "A", "kind": 1, "judges": {}, "context": []},
            "conv-9.qa[0].id: '' is not a question id; expected a non-empty text or an integer",
        ),
        (
            {"id": "q", "text": "Q?", "said": "A", "kind": True, "judges": {}, "context": []},
            "conv-9.qa[0].kind: true (a boolean) is not a category; expected text or an integer (or null)",
        ),
        (
            {"id": "q", "text": "Q?", "said": "A", "kind": 1, "judges": [], "context": []},
            "conv-9.qa[0].judges: expected an object of verdicts; found an empty list",
        ),
        (
            {"id": "q", "text": "Q?", "said": "A", "kind": 1, "judges": {}, "context": [{"text": "x"}]},
            "conv-9.qa[0].context[0]: expected a memory's text; found an object with keys 'text'",
        ),
        (
            {"id": "q", "text": "Q?", "said": "A", "kind": 1, "judges": {}, "context": 7},
            "conv-9.qa[0].context: expected a list of memories (or one text); found 7 (a number)",
        ),
    ],
)
def test_a_bad_record_is_refused_naming_its_place(tmp_path: Path, record: dict, message: str) -> None:
    """A record the mapping cannot read is one line: the answer file, the record's path and field, what is wrong."""
    path, toml = _files(tmp_path, {"conv-9": {"qa": [record]}})
    with pytest.raises(InputError, match="^" + re.escape(f"{path}: {message}")):
        read_answers(path, mapping=str(toml))


def test_a_records_path_missing_from_the_file_is_refused(tmp_path: Path) -> None:
    """The path to the records must be in the file: the message names where it stopped."""
    path, toml = _files(tmp_path, {"conv-1": {"questions": []}})
    with pytest.raises(
        InputError, match=re.escape(f"{path}: conv-1: has no field 'qa'; expected the path to the records")
    ):
        read_answers(path, mapping=str(toml))


def test_memory_fields_and_graded_and_numeric_fields(tmp_path: Path) -> None:
    """Memory objects with ids (numbers become text) and scores; tokens, latency in ms and extra numbers."""
    mapping = """
records = "rows[*]"
latency_unit = "ms"
extra = ["f1", "scores.bleu"]
[fields]
question_id = "qid"
tokens = "tok"
latency = "t"
[[verdicts]]
field = "g"
labels = "graded"
max = 10
[memories]
field = "hits"
text = "body"
id = "n"
score = "s"
"""
    data = {
        "rows": [
            {
                "qid": 7,
                "tok": 12.0,
                "t": 250,
                "f1": 0.5,
                "scores": {"bleu": 1},
                "g": 7,
                "hits": [{"body": "b", "n": 3, "s": None}, {"body": "c", "n": None, "s": 0.25}],
            }
        ]
    }
    path, toml = _files(tmp_path, data, mapping)
    [record] = read_answers(path, mapping=str(toml)).records
    assert (record.question_id, record.tokens, record.latency) == ("7", 12, 0.25)
    assert dict(record.extra) == {"f1": 0.5, "scores.bleu": 1.0}
    assert record.verdicts == (Verdict("g", 0.7, "7"),)
    assert record.memories == (ImportedMemory("b", "3", None), ImportedMemory("c", None, 0.25))
    assert record.conversation is None and record.position == 0


def test_a_mapping_reads_one_file(answers_dir: Path) -> None:
    """A mapping file describes one answer file: two paths are refused."""
    with pytest.raises(ParameterError, match=re.escape("path: [")):
        read_answers(
            [answers_dir / "custom-results.jsonl"] * 2, format="mapping", mapping=str(answers_dir / "custom.toml")
        )


def test_the_mapping_option_is_required(answers_dir: Path) -> None:
    """format='mapping' without mapping= says what to pass."""
    with pytest.raises(ParameterError, match=re.escape("mapping: '' (str) is empty; pass mapping='FILE.toml'")):
        read_answers(answers_dir / "custom-results.jsonl", format="mapping")


@pytest.mark.parametrize(
    "text, steps",
    [
        ("detailed_results.*[*]", [Step("field", "detailed_results"), Step("fields"), Step("items")]),
        ("[*].qa[*]", [Step("items"), Step("field", "qa"), Step("items")]),
        ("runs[2].items[*]", [Step("field", "runs"), Step("item", 2), Step("field", "items"), Step("items")]),
        ('["a.b"].*', [Step("field", "a.b"), Step("fields")]),
        ("*[*]", [Step("fields"), Step("items")]),
    ],
)
def test_paths_parse_into_steps(text: str, steps: list[Step]) -> None:
    """The path grammar: names, *, [*], [n] and quoted names."""
    assert list(parse_path(text)) == steps


@pytest.mark.parametrize("text", ["", ".a", "a..b", "a[x]", "a[*"])
def test_a_malformed_path_is_refused(text: str) -> None:
    """A path that is not steps joined by dots is refused, saying how to write one."""
    with pytest.raises(ParameterError, match=re.escape("path: ")):
        parse_path(text)


def test_the_docs_complete_example_is_a_valid_mapping(tmp_path: Path) -> None:
    """docs/answers.md's example naming every key reads as a mapping file, every key taken."""
    from agentmemory.answers.mapping import MAPPING_KEYS, MEMORY_KEYS, VERDICT_KEYS, read_mapping

    page = (Path(__file__).resolve().parents[2] / "docs" / "answers.md").read_text(encoding="utf-8")
    example = page.split("## Mapping files", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.toml"
    path.write_text(example, encoding="utf-8")
    shape, name, _ = read_mapping(path)
    assert name == "my-harness" and shape.records == "runs.*.items[*]"
    assert [v.labels.kind for v in shape.verdicts] == ["named", "graded"]
    for key in [*MAPPING_KEYS, *VERDICT_KEYS, *MEMORY_KEYS, *FIELDS]:
        assert re.search(rf"^(\[+{key}\]+|{key} =)", example, re.MULTILINE), key
