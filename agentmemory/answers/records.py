"""The records an imported answer file becomes: one :class:`AnswerRecord` per question, in an :class:`AnswerFile`.

Another harness's per-question results (mem0's evaluation output, EverMemOS's
result files, Zep's grades and responses, LongMemEval's hypotheses with their
``.eval-results-*`` labels, or any JSON shape a mapping file describes) are
read once, at the edge, into these records; nothing past the reader sees the
file's own dicts.

A record says what the file says of one question and nothing more:

* where it is (``where``: a path through the file such as ``conv-26[3]`` or
  ``line 17``, for messages), and how it can be matched to a collection's
  question: a question id, a conversation (by key or index) with the
  record's position in it, the question's text;
* the generated ``answer`` (``None`` when the file has none for it);
* zero or more :class:`Verdict` records, each a judge's value in ``[0, 1]``
  with the raw label the file wrote (``True``, ``1``, ``"CORRECT"``) and the
  name of the judge (the file's field, or the judge model when stated);
* the retrieved ``memories`` (texts, and ids where present) in the order the
  harness gave them to its reader, or ``None`` when the file carries no
  retrieval at all (an empty tuple means it retrieved nothing);
* token counts and latency where present.

Matching a record to a collection's question is
:mod:`agentmemory.answers.matching`'s job, never a reader's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentmemory.errors import ParameterError

__all__ = ["AnswerFile", "AnswerRecord", "ImportedMemory", "Verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's verdict on one answer.

    ``judge`` names who judged (``"llm_score"``, ``"judgment_1"``,
    ``"gpt-4o-2024-08-06"``); ``value`` is the verdict in ``[0, 1]`` (1
    correct; a graded verdict scaled by the reader that read it, which says
    how); ``label`` is what the file wrote, as text (``"True"``,
    ``"CORRECT"``, ``"1"``), so the card can state the mapping.
    """

    judge: str
    value: float
    label: str

    def __post_init__(self) -> None:
        if not isinstance(self.judge, str) or not self.judge:
            raise ParameterError("judge", self.judge, "is not a non-empty string", "name the judge")
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 1:
            raise ParameterError("verdict", v, "is not a number in [0, 1]", "map the file's label to 0..1")
        if not isinstance(self.label, str):
            raise ParameterError("label", self.label, "is not a string", "keep the file's label as text")


@dataclass(frozen=True, slots=True)
class ImportedMemory:
    """One memory (or context passage) a harness retrieved for a question, in the order it gave them."""

    text: str
    id: str | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ParameterError("memory text", self.text, "is not a string", "give each memory's text")
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise ParameterError("memory id", self.id, "is not a non-empty string", "give a string id, or None")


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """What an answer file says of one question (see the module docstring).

    Attributes:
        where: the record's place in the file, for messages (``"conv-26[3]"``,
            ``"line 17"``, ``"locomo_exp_user_0[12]"``).
        question_id: an id the file gives the question (LongMemEval's
            ``question_id``; ``"locomo_0_qa3"``), or ``None``.
        conversation: the conversation the file files the record under: its
            key (``"conv-26"``, ``"locomo_exp_user_0"``) or its 0-based index
            in the dataset, or ``None``.
        position: the record's 0-based position among the records of its
            conversation in the file, or ``None`` (matching decides whether
            it counts every question or only categories 1-4).
        question: the question's text as the file carries it, or ``None``.
        gold: the gold answer the file carries (checked, never scored with).
        category: the category the file gives (any label), or ``None``.
        answer: the generated answer, or ``None`` when the file has none.
        verdicts: every judge's verdict, in the file's order.
        memories: what the harness retrieved, best first; ``None`` when the
            file carries no retrieval.
        tokens: the tokens of context the reader was given, when stated.
        latency: seconds the harness reports for this question (search,
            answer or both, as the reader says), when stated.
        extra: other per-question fields a reader keeps (numbers only, e.g.
            the file's own ``f1_score``), shown but never scored.
    """

    where: str
    question_id: str | None = None
    conversation: str | int | None = None
    position: int | None = None
    question: str | None = None
    gold: str | None = None
    category: str | int | None = None
    answer: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    memories: tuple[ImportedMemory, ...] | None = None
    tokens: int | None = None
    latency: float | None = None
    extra: Mapping[str, float] = field(default_factory=dict)

    @property
    def verdict(self) -> float | None:
        """The majority of the verdicts (1.0 or 0.0 for 0/1 verdicts; the mean rounded half up otherwise), or
        ``None`` without any.  A tie (two judges, one each way) is 0.5: stated in the card, never broken."""
        if not self.verdicts:
            return None
        values = [v.value for v in self.verdicts]
        share = math.fsum(values) / len(values)
        if share > 0.5:
            return 1.0
        if share < 0.5:
            return 0.0
        return 0.5


@dataclass(frozen=True)
class AnswerFile:
    """One imported answer file: its records and what the reader knows of it.

    ``name`` labels the system in tables (``--answers NAME=FILE``; the file's
    stem otherwise); ``paths`` and ``sha256`` the file(s) read (a reader of a
    pair, Zep's grades and responses, reads two); ``format`` the reader's
    name; ``judges`` the judges in verdict order with how each label maps to
    a value (``{"llm_score": "1 correct, 0 wrong"}``); ``notes`` what the
    reader wants said in the card (records it could not use are errors, not
    notes).
    """

    name: str
    paths: tuple[str, ...]
    sha256: tuple[str, ...]
    format: str
    records: tuple[AnswerRecord, ...]
    judges: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_retrieval(self) -> bool:
        """Whether any record carries retrieved memories (then they are scored as a ranking)."""
        return any(r.memories is not None for r in self.records)
