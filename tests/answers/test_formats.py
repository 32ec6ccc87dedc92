"""The registry of answer formats: every built-in format detects and reads its authored sample; detection refuses
what it cannot tell in one line; options, names and plugins."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentmemory.answers import (
    ANSWER_FORMATS,
    BUILTIN_ANSWER_FORMATS,
    AnswerFile,
    AnswerSource,
    detect_answer_format,
    match_answers,
    read_answers,
    register_answer_format,
)
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError

SAMPLES = {  # format -> (the sample's file(s), options, the collection fixture it answers)
    "mem0": (["mem0-locomo-sample.json"], {}, "locomo"),
    "evermemos": (["evermemos-locomo-sample.json"], {}, "locomo"),
    "zep": (["zep/zep_locomo_grades.json", "zep/zep_locomo_responses.json"], {}, "locomo"),
    "longmemeval": (["longmemeval-sample.jsonl.eval-results-authored-judge-1"], {}, "longmemeval"),
    "mapping": (["custom-results.jsonl"], {"mapping": "custom.toml"}, "locomo"),
}


def test_every_builtin_format_has_an_authored_sample() -> None:
    """The samples cover the registry's built-in formats, no more and no fewer."""
    assert sorted(SAMPLES) == sorted(BUILTIN_ANSWER_FORMATS)
    assert set(BUILTIN_ANSWER_FORMATS) <= set(ANSWER_FORMATS.names())


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_sample_is_detected_read_and_matched(name: str, answers_dir: Path, request) -> None:
    """Each format's sample is recognised by that format alone (the mapping by its option), read with every record,
    and matched to its collection with no record unmatched except those of questions the loader left out."""
    files, options, collection_fixture = SAMPLES[name]
    paths = [answers_dir / f for f in files]
    options = {k: str(answers_dir / v) for k, v in options.items()}
    if not options:
        assert detect_answer_format(AnswerSource(paths)) == name
    answers = read_answers(paths if len(paths) > 1 else paths[0], **options)
    assert isinstance(answers, AnswerFile) and answers.format == name
    assert answers.records and all(r.verdicts for r in answers.records)
    assert answers.judges and all(words for words in answers.judges.values())
    assert len(answers.sha256) == len(answers.paths) and all(len(h) == 64 for h in answers.sha256)
    collection = request.getfixturevalue(collection_fixture)
    matched = match_answers(answers, collection)
    left = {qid for qid, _ in collection.skipped}
    # the loaders keep the questions they leave out (Collection.left_out_queries): records of those match too
    assert len(matched.by_query) + len(matched.unmatched) == len(answers.records)
    assert all("left out by the loader" in reason for _, reason in matched.left_out)
    assert {qid for qid, _ in matched.left_out} <= set(matched.by_query) & left
    assert set(matched.by_query) <= {q.id for q in (*collection.queries, *collection.left_out_queries)}
    assert not set(matched.missing) & left


def test_an_unknown_shape_is_refused_in_one_line_naming_every_rule(tmp_path: Path) -> None:
    """A JSON file no format recognises: the message names each detected format's rule and how to name one."""
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"rows": [{"q": "x", "a": "y"}]}), encoding="utf-8")
    with pytest.raises(ParameterError) as caught:
        read_answers(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"format: 'auto' (str) cannot tell the answer format of {str(path.as_posix())!r}; tried ")
    for name in ("mem0", "evermemos", "zep", "longmemeval"):
        assert f"{name}: {ANSWER_FORMATS[name].rule}" in message
    assert "(mapping is never detected)" in message
    assert message.endswith(
        "name one with format= (evermemos, longmemeval, mapping, mem0, zep), or describe the file in a mapping file "
        "and pass format='mapping', mapping='FILE.toml'"
    )


def test_an_ambiguous_shape_is_refused_naming_the_formats(answers_dir: Path) -> None:
    """When two formats recognise a file, detection names both and how to choose."""
    register_answer_format(
        "everything", lambda source: True, lambda source: None, description="recognises anything", rule="any file"
    )
    try:
        path = answers_dir / "mem0-locomo-sample.json"
        with pytest.raises(
            ParameterError,
            match=re.escape(
                f"format: 'auto' (str) cannot tell the answer format of {str(path)!r}: it has the shape of "
                "mem0 and everything; name one: format='mem0' or format='everything'"
            ),
        ):
            read_answers(path)
        assert read_answers(path, format="mem0").format == "mem0"
    finally:
        ANSWER_FORMATS.unregister("everything")


def test_a_format_registered_at_run_time_is_detected_and_read(tmp_path: Path) -> None:
    """register_answer_format adds a format that detection asks and read_answers reads; its name overrides nothing."""
    path = tmp_path / "mine.txt"
    path.write_text("q1 yes\n", encoding="utf-8")

    def read(source: AnswerSource) -> AnswerFile:
        return source.answer_file("mine", [])

    register_answer_format("mine", lambda s: s.path.suffix == ".txt", read, description="mine", rule="a .txt file")
    try:
        answers = read_answers(path, name="My system")
        assert (answers.format, answers.name, answers.paths) == ("mine", "My system", (path.as_posix(),))
    finally:
        ANSWER_FORMATS.unregister("mine")


def test_a_reader_that_returns_something_else_is_refused(tmp_path: Path) -> None:
    """A plugin's read must return an AnswerFile; anything else is one line naming the format."""
    path = tmp_path / "x.txt"
    path.write_text("x", encoding="utf-8")
    register_answer_format("broken", None, lambda source: {"records": []}, description="returns a dict")
    try:
        with pytest.raises(
            ParameterError,
            match=re.escape("format: 'broken' (str) has a read function that returned dict, not an AnswerFile"),
        ):
            read_answers(path, format="broken")
    finally:
        ANSWER_FORMATS.unregister("broken")


def test_the_entry_point_group_is_answer_formats() -> None:
    """Installed packages add answer formats through the group agentmemory.answer_formats."""
    assert ANSWER_FORMATS.group == "agentmemory.answer_formats"


def test_an_option_names_the_format_that_takes_it(answers_dir: Path) -> None:
    """mapping= alone chooses the mapping format (the only one that declares it)."""
    answers = read_answers(answers_dir / "custom-results.jsonl", mapping=str(answers_dir / "custom.toml"))
    assert answers.format == "mapping" and answers.params["mapping"] == "custom.toml"


def test_an_option_the_format_does_not_take_is_refused(answers_dir: Path) -> None:
    """An option of another format is one line saying what the chosen format takes."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "mapping: 'custom.toml' (str) is not an option of the mem0 answer format; the mem0 format takes no options"
        ),
    ):
        read_answers(answers_dir / "mem0-locomo-sample.json", format="mem0", mapping="custom.toml")


def test_an_unknown_format_name_lists_the_registered_ones(answers_dir: Path) -> None:
    """format= must be a registered name or auto; the message lists the names from the registry."""
    with pytest.raises(
        UnknownNameError, match=re.escape("format: 'mem1' (str) is not a known name; choose from: auto, ")
    ):
        read_answers(answers_dir / "mem0-locomo-sample.json", format="mem1")


def test_a_missing_file_and_a_folder_are_refused(tmp_path: Path) -> None:
    """A path with nothing there, or a folder, is one line naming it."""
    with pytest.raises(MissingFileError, match=re.escape(f"{tmp_path / 'none.json'}: no such file")):
        read_answers(tmp_path / "none.json")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path}: is a folder; expected an answer file")):
        read_answers(tmp_path)


def test_a_bad_name_is_refused(answers_dir: Path) -> None:
    """name= labels the system: an empty one is refused."""
    with pytest.raises(ParameterError, match=re.escape("name: '' (str) is not a non-empty string")):
        read_answers(answers_dir / "mem0-locomo-sample.json", name="")


def test_a_file_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    """A malformed file read by a named format is the strict JSON reader's one line, with the line."""
    path = tmp_path / "bad.json"
    path.write_text('{"0": [\n  {"question": "q",}\n]}', encoding="utf-8")
    with pytest.raises(
        InputError, match=re.escape(f"{path}:2: malformed JSON (Expecting property name enclosed in double quotes")
    ):
        read_answers(path, format="mem0")
