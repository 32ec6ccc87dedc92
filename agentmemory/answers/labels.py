"""How a judge's labels map to verdict values in ``[0, 1]``: one :class:`LabelMap` per judge, stated in words.

A reader never guesses what a label means: each judge's labels are of one
declared kind, and a label outside it is refused (the reader names the file,
the record and the label).  The kinds:

* ``boolean``: ``true`` is 1 (correct), ``false`` 0; nothing else.
* ``binary``: the numbers 1 and 0 (``1.0``/``0.0`` too), and the booleans
  ``true``/``false`` as 1/0 (LongMemEval's judge writes either); nothing else.
* ``graded``: a number from ``low`` to ``high`` (``low`` 0 unless stated),
  scaled to ``(label - low) / (high - low)``; a number outside is refused.
* ``named``: text labels, each mapped to a stated value in ``[0, 1]``
  (``{"CORRECT": 1, "WRONG": 0}``), compared exactly, or ignoring case when
  declared; any other label is refused.

``null`` is no verdict (a judge call that failed is not a wrong answer): the
reader counts such records in the file's notes instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from agentmemory.errors import ParameterError, quote

__all__ = ["LABEL_KINDS", "LabelMap", "label_text"]

LABEL_KINDS: Mapping[str, str] = MappingProxyType(
    {
        "boolean": "true correct, false wrong",
        "binary": "1 (or true) correct, 0 (or false) wrong",
        "graded": "a number from low to high, scaled to (label - low) / (high - low)",
        "named": "text labels, each mapped to a stated value in [0, 1]",
    }
)
"""Every label kind and what it means (messages and the docs read this)."""


def label_text(raw: object) -> str:
    """A label as :attr:`~agentmemory.answers.records.Verdict.label` keeps it: JSON's spelling of the value
    (``true``, ``1``, ``0.5``, ``CORRECT``)."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw)) if abs(raw) < 1e15 else repr(raw)
    return str(raw)


def _number(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class LabelMap:
    """One judge's labels and the values they map to (module docstring).

    Attributes:
        kind: one of :data:`LABEL_KINDS`.
        low, high: the range of a ``graded`` judge (``high`` required, above ``low``).
        names: a ``named`` judge's labels and their values in ``[0, 1]``.
        ignore_case: a ``named`` judge's labels compared ignoring case.
    """

    kind: str
    low: float = 0.0
    high: float | None = None
    names: Mapping[str, float] = field(default_factory=dict)
    ignore_case: bool = False

    def __post_init__(self) -> None:
        if self.kind not in LABEL_KINDS:
            raise ParameterError("labels", self.kind, "is not a label kind", "choose from: " + ", ".join(LABEL_KINDS))
        if self.kind == "graded":
            if self.high is None or _number(self.high) is None or _number(self.low) is None or self.high <= self.low:
                raise ParameterError(
                    "max", self.high, "is not a number above min", "give a graded judge its range, e.g. max = 5"
                )
        if self.kind == "named":
            self._check_names()

    def _check_names(self) -> None:
        if not self.names:
            raise ParameterError(
                "map", dict(self.names), "is empty", "map every label to a value, e.g. map = { CORRECT = 1, WRONG = 0 }"
            )
        for label, value in self.names.items():
            number = _number(value)
            if number is None or not 0 <= number <= 1:
                raise ParameterError(f"map {quote(label)}", value, "is not a number in [0, 1]", "map it to 0..1")
        if self.ignore_case:
            folded = [label.casefold() for label in self.names]
            twice = next((label for i, label in enumerate(folded) if label in folded[:i]), None)
            if twice is not None:
                raise ParameterError(
                    "map",
                    twice,
                    "is mapped twice when case is ignored",
                    "map each label once, or set ignore_case = false",
                )

    def value(self, raw: object) -> float:
        """The verdict value of the label ``raw`` (not ``None``: the caller handles ``null``).

        Raises:
            ValueError: ``raw`` is not a label of this kind; the message says what is allowed.
        """
        if self.kind == "boolean":
            if isinstance(raw, bool):
                return 1.0 if raw else 0.0
        elif self.kind == "binary":
            number = 1.0 if raw is True else 0.0 if raw is False else _number(raw)
            if number is not None and number in (0.0, 1.0):
                return number
        elif self.kind == "graded":
            number = _number(raw)
            high = self.low + 1.0 if self.high is None else self.high  # never None: checked in __post_init__
            if number is not None and self.low <= number <= high:
                return (number - self.low) / (high - self.low)
        else:
            found = self._named(raw)
            if found is not None:
                return found
        raise ValueError(f"{quote(raw)} is not a label this judge maps; expected {self.allowed}")

    def _named(self, raw: object) -> float | None:
        if not isinstance(raw, str):
            return None
        if raw in self.names:
            return float(self.names[raw])
        if self.ignore_case:
            folded = raw.casefold()
            return next((float(v) for label, v in self.names.items() if label.casefold() == folded), None)
        return None

    @property
    def allowed(self) -> str:
        """What a label must be, as a message ends."""
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "binary":
            return "1 or 0 (or true or false)"
        if self.kind == "graded":
            return f"a number from {label_text(self.low)} to {label_text(self.high)}"
        case = ", ignoring case" if self.ignore_case else ""
        return "one of " + ", ".join(quote(label) for label in self.names) + case

    def words(self) -> str:
        """How the labels map, in words (``AnswerFile.judges``): ``"true correct, false wrong"``."""
        if self.kind in ("boolean", "binary"):
            return LABEL_KINDS[self.kind]
        if self.kind == "graded":
            low, high = label_text(self.low), label_text(self.high)
            span = high if self.low == 0 else f"({high} - {low})"
            shift = "the grade" if self.low == 0 else f"(the grade - {low})"
            return f"a grade from {low} to {high}, scaled to {shift} / {span}"
        case = " (case ignored)" if self.ignore_case else ""
        return ", ".join(f"{label} {label_text(float(v))}" for label, v in self.names.items()) + case
