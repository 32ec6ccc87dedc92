"""Judges' label maps: each kind maps its labels exactly, refuses the rest, and says its mapping in words."""

from __future__ import annotations

import re

import pytest

from agentmemory.answers.labels import LABEL_KINDS, LabelMap, label_text
from agentmemory.errors import ParameterError


@pytest.mark.parametrize(
    "labels, raw, value",
    [
        (LabelMap("boolean"), True, 1.0),
        (LabelMap("boolean"), False, 0.0),
        (LabelMap("binary"), 1, 1.0),
        (LabelMap("binary"), 0.0, 0.0),
        (LabelMap("binary"), True, 1.0),
        (LabelMap("graded", high=5), 4, 0.8),
        (LabelMap("graded", low=1, high=5), 1, 0.0),
        (LabelMap("graded", low=1, high=5), 3.0, 0.5),
        (LabelMap("named", names={"CORRECT": 1, "WRONG": 0, "PARTIAL": 0.5}), "PARTIAL", 0.5),
        (LabelMap("named", names={"CORRECT": 1, "WRONG": 0}, ignore_case=True), "correct", 1.0),
    ],
)
def test_labels_map_to_values(labels: LabelMap, raw: object, value: float) -> None:
    """A label of the judge's kind maps to the stated value."""
    assert labels.value(raw) == pytest.approx(value)


@pytest.mark.parametrize(
    "labels, raw, message",
    [
        (LabelMap("boolean"), 1, "1 is not a label this judge maps; expected true or false"),
        (LabelMap("boolean"), "true", "'true' is not a label this judge maps; expected true or false"),
        (LabelMap("binary"), 0.5, "0.5 is not a label this judge maps; expected 1 or 0 (or true or false)"),
        (LabelMap("binary"), "1", "'1' is not a label this judge maps; expected 1 or 0 (or true or false)"),
        (LabelMap("graded", high=5), 6, "6 is not a label this judge maps; expected a number from 0 to 5"),
        (LabelMap("graded", high=5), float("nan"), "nan is not a label this judge maps; expected a number from 0 to 5"),
        (
            LabelMap("named", names={"CORRECT": 1, "WRONG": 0}),
            "correct",
            "'correct' is not a label this judge maps; expected one of 'CORRECT', 'WRONG'",
        ),
        (
            LabelMap("named", names={"CORRECT": 1}),
            True,
            "True is not a label this judge maps; expected one of 'CORRECT'",
        ),
    ],
)
def test_labels_outside_the_kind_are_refused(labels: LabelMap, raw: object, message: str) -> None:
    """A label the judge does not map is refused, never guessed; the message says what is allowed."""
    with pytest.raises(ValueError, match=re.escape(message)):
        labels.value(raw)


@pytest.mark.parametrize(
    "labels, words",
    [
        (LabelMap("boolean"), "true correct, false wrong"),
        (LabelMap("binary"), "1 (or true) correct, 0 (or false) wrong"),
        (LabelMap("graded", high=10), "a grade from 0 to 10, scaled to the grade / 10"),
        (LabelMap("graded", low=1, high=5), "a grade from 1 to 5, scaled to (the grade - 1) / (5 - 1)"),
        (LabelMap("named", names={"CORRECT": 1, "WRONG": 0.0}), "CORRECT 1, WRONG 0"),
        (LabelMap("named", names={"yes": 1}, ignore_case=True), "yes 1 (case ignored)"),
    ],
)
def test_each_map_states_itself_in_words(labels: LabelMap, words: str) -> None:
    """The words AnswerFile.judges shows for the judge."""
    assert labels.words() == words


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kind": "fuzzy"}, "labels: 'fuzzy' (str) is not a label kind; choose from: " + ", ".join(LABEL_KINDS)),
        ({"kind": "graded"}, "max: None (NoneType) is not a number above min"),
        ({"kind": "graded", "low": 5, "high": 5}, "max: 5 (int) is not a number above min"),
        ({"kind": "named"}, "map: {} (dict) is empty"),
        ({"kind": "named", "names": {"OK": 2}}, "map 'OK': 2 (int) is not a number in [0, 1]"),
        (
            {"kind": "named", "names": {"ok": 1, "OK": 0}, "ignore_case": True},
            "map: 'ok' (str) is mapped twice when case is ignored",
        ),
    ],
)
def test_a_bad_label_map_is_refused(kwargs: dict, message: str) -> None:
    """A label map must be complete and consistent before any label is read."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        LabelMap(**kwargs)


@pytest.mark.parametrize(
    "raw, text", [(True, "true"), (False, "false"), (1, "1"), (1.0, "1"), (0.5, "0.5"), ("CORRECT", "CORRECT")]
)
def test_label_text_keeps_the_files_spelling(raw: object, text: str) -> None:
    """Verdict.label is the label as JSON spells it."""
    assert label_text(raw) == text
