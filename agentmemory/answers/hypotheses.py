"""LongMemEval's hypotheses with their judge labels (the ``longmemeval`` answer format).

LongMemEval's harness (xiaowu0162/LongMemEval) takes a hypotheses file, JSON
lines of ``{"question_id", "hypothesis"}``, and its ``evaluate_qa.py``
writes ``<hypotheses>.eval-results-<judge model>``: the same lines, each
with ``"autoeval_label": {"model": <judge model>, "label": true|false}``
(some harnesses write ``1``/``0``).  Either file is read: a line becomes an
:class:`~agentmemory.answers.records.AnswerRecord` with ``question_id``
(matched to the collection's question of that id) and ``answer`` (the
hypothesis); ``where`` is its line.  A labelled line gives one verdict, from
the judge named by ``autoeval_label.model`` (or by the file name's
``.eval-results-<model>`` when the label names none): true or 1 correct,
false or 0 wrong; any other label is refused.  The judge's prompt depends on
the question's type, and abstention questions (``_abs``) are judged on
refusing to answer.  A JSON list of the same records is read too (``where``
is then ``[i]``).

Recognised by: a file whose first record has ``question_id`` and ``hypothesis``.
"""

from __future__ import annotations

from agentmemory.answers.formats import AnswerFormat, AnswerSource
from agentmemory.answers.labels import LabelMap
from agentmemory.answers.records import AnswerFile
from agentmemory.answers.shape import Shape, VerdictField, read_shape

__all__ = ["FORMAT", "read", "recognise"]

_SUFFIX = ".eval-results-"
MEANING = (
    "1 (or true) correct, 0 (or false) wrong (LongMemEval's evaluate_qa.py with this model: "
    "a prompt per question type; abstention questions judged on refusing)"
)


def _model_of(source: AnswerSource) -> str | None:
    name = source.path.name
    return name.rsplit(_SUFFIX, 1)[1] or None if _SUFFIX in name else None


def recognise(source: AnswerSource) -> bool:
    """True for one file whose first record has question_id and hypothesis."""
    record = source.first_record() if len(source.paths) == 1 else None
    return record is not None and "question_id" in record and "hypothesis" in record


def read(source: AnswerSource) -> AnswerFile:
    """The ``longmemeval`` reader (module docstring)."""
    shape = Shape(
        records="[*]",
        lines=not isinstance(source.json(), list) if source.is_json() else True,
        fields={"question_id": "question_id", "answer": "hypothesis"},
        verdicts=(
            VerdictField(
                "autoeval_label.label",
                LabelMap("binary"),
                judge=_model_of(source) or "autoeval_label",
                judge_field="autoeval_label.model",
                meaning=MEANING,
                optional=True,
            ),
        ),
    )
    result = read_shape(shape, source)
    stem = source.path.name.split(_SUFFIX, 1)[0].removesuffix(".jsonl").removesuffix(".json")
    return source.answer_file("longmemeval", result.records, name=stem, judges=result.judges, notes=result.notes)


FORMAT = AnswerFormat(
    name="longmemeval",
    recognise=recognise,
    read=read,
    description="LongMemEval's hypotheses (JSON lines) with their .eval-results-<model> judge labels",
    rule="a file whose first record has question_id and hypothesis",
)
