"""mem0's evaluation output (the ``mem0`` answer format): what ``evaluation/evals.py`` writes, which Memobase publishes too.

The file is one JSON object: each key is a conversation's 0-based index in
``locomo10.json`` (as text: ``"0"`` .. ``"9"``; mem0's search and answer
scripts number the conversations so), each value the list of that
conversation's questions, category 5 left out, in the dataset's order::

    {"0": [{"question": ..., "answer": <gold>, "response": <generated>, "category": "2",
            "bleu_score": 0.71, "f1_score": 1.0, "llm_score": 1}, ...], ...}

A record becomes an :class:`~agentmemory.answers.records.AnswerRecord` with
``conversation`` the key read as an index, ``position`` the index in its
list, ``question``, ``gold`` (``answer``), ``answer`` (``response``),
``category``, one verdict from the judge ``llm_score`` (1 correct, 0 wrong:
mem0's LLM judge labels each answer CORRECT or WRONG; any other value is
refused), and ``extra`` the file's own ``bleu_score`` and ``f1_score``
(shown, never scored).  The file carries no retrieval (``memories`` is
``None``), no tokens and no latency.

Recognised by: a JSON object whose first list's first record has
``question``, ``response`` and ``llm_score``.
"""

from __future__ import annotations

from agentmemory.answers.formats import AnswerFormat, AnswerSource
from agentmemory.answers.labels import LabelMap
from agentmemory.answers.records import AnswerFile
from agentmemory.answers.shape import Shape, VerdictField, read_shape

__all__ = ["FORMAT", "SHAPE", "read", "recognise"]

SHAPE = Shape(
    records="*[*]",
    conversation_is="index",
    fields={"question": "question", "gold": "answer", "answer": "response", "category": "category"},
    verdicts=(
        VerdictField(
            "llm_score", LabelMap("binary"), meaning="1 correct, 0 wrong (mem0's LLM judge: CORRECT or WRONG)"
        ),
    ),
    extra=("bleu_score", "f1_score"),
)
"""The shape of mem0's evaluation output (module docstring)."""

_KEYS = ("question", "response", "llm_score")


def first_list_record(source: AnswerSource, index: int = 0) -> dict | None:
    """The first record of the first list in file ``index``, a JSON object of lists (``None`` when it is not one)."""
    if not source.is_json(index):
        return None
    document = source.json(index)
    if not isinstance(document, dict) or not document:
        return None
    first = next(iter(document.values()))
    return first[0] if isinstance(first, list) and first and isinstance(first[0], dict) else None


def recognise(source: AnswerSource) -> bool:
    """True for one JSON object of lists whose first record has question, response and llm_score."""
    record = first_list_record(source) if len(source.paths) == 1 else None
    return record is not None and all(key in record for key in _KEYS)


def read(source: AnswerSource) -> AnswerFile:
    """The ``mem0`` reader (module docstring)."""
    result = read_shape(SHAPE, source)
    return source.answer_file("mem0", result.records, judges=result.judges, notes=result.notes)


FORMAT = AnswerFormat(
    name="mem0",
    recognise=recognise,
    read=read,
    description="mem0's evaluation output (evals.py; Memobase's too): conversation index -> questions with llm_score",
    rule="a JSON object of lists whose first record has question, response and llm_score",
)
