"""EverMemOS's result file (the ``evermemos`` answer format): ``eval_results.json`` of its LLM judge.

The file is one JSON object with the summary (``total_questions``,
``correct``, ``accuracy``), ``metadata`` (optional: the judge's ``model``
or ``judge_model``, ``answer_model``, ``num_runs``, ...) and
``detailed_results``: each key a conversation (``locomo_exp_user_3``:
EverMemOS names it ``<dataset>_exp_user_<n>``, ``n`` the conversation's
0-based index in the dataset), each value its questions in order::

    {"question_id": "locomo_3_qa0", "question": ..., "golden_answer": ..., "generated_answer": ...,
     "llm_judgments": {"judgment_1": true, "judgment_2": true, "judgment_3": false}, "category": "3"}

The judge is asked ``num_runs`` times (three by default); each run is its
own verdict, named by its key (``judgment_1`` ...), ``true`` correct and
``false`` wrong (any other label is refused; EverMemOS's judge also writes
``false`` when a call fails).  A record becomes an
:class:`~agentmemory.answers.records.AnswerRecord` with ``question_id``,
``conversation`` (the key's index), ``position`` (its index in the list),
``question``, ``gold``, ``answer`` and ``category``; its retrieval when
present: ``search_results`` (EverMemOS's answer records carry them: a list
of ``{"content", "score"}``) becomes the memories, best first; without it
``memories`` is ``None``.

The dial481/locomo-audit baselines write this shape: full-context answers
(``fc-baseline``) and deliberately wrong answers (``ap-baseline``, whose
files have no ``metadata``).

Recognised by: a JSON object with ``detailed_results`` whose first record has ``llm_judgments``.
"""

from __future__ import annotations

from typing import Any

from agentmemory.answers.formats import AnswerFormat, AnswerSource
from agentmemory.answers.labels import LabelMap
from agentmemory.answers.records import AnswerFile
from agentmemory.answers.shape import MemoryFields, Shape, VerdictField, read_shape

__all__ = ["FORMAT", "read", "recognise", "shape"]


def shape(retrieval: bool) -> Shape:
    """The shape of an EverMemOS result file; ``retrieval``: its records carry ``search_results``."""
    return Shape(
        records="detailed_results.*[*]",
        conversation_is="index",
        fields={
            "question_id": "question_id",
            "question": "question",
            "gold": "golden_answer",
            "answer": "generated_answer",
            "category": "category",
        },
        verdicts=(VerdictField("llm_judgments.*", LabelMap("boolean")),),
        memories=MemoryFields("search_results", text="content", score="score") if retrieval else None,
    )


def _first(source: AnswerSource) -> dict[str, Any] | None:
    if len(source.paths) != 1 or not source.is_json():
        return None
    document = source.json()
    results = document.get("detailed_results") if isinstance(document, dict) else None
    if not isinstance(results, dict) or not results:
        return None
    first = next(iter(results.values()))
    return first[0] if isinstance(first, list) and first and isinstance(first[0], dict) else None


def recognise(source: AnswerSource) -> bool:
    """True for a JSON object with detailed_results whose first record has llm_judgments."""
    record = _first(source)
    return record is not None and "llm_judgments" in record


def _judge_words(metadata: object, judges: dict[str, str]) -> dict[str, str]:
    """Each run's words, naming the judge model and the run when the file's metadata states them."""
    meta = metadata if isinstance(metadata, dict) else {}
    model = meta.get("judge_model") or meta.get("model")
    runs = len(judges)
    out = {}
    for i, (judge, words) in enumerate(judges.items(), start=1):
        who = f"the LLM judge {model}" if isinstance(model, str) and model else "the LLM judge"
        out[judge] = f"{words} (run {i} of {runs} of {who}; EverMemOS writes false for a failed call too)"
    return out


def read(source: AnswerSource) -> AnswerFile:
    """The ``evermemos`` reader (module docstring)."""
    document = source.json()
    results = document.get("detailed_results") if isinstance(document, dict) else None
    retrieval = isinstance(results, dict) and any(
        isinstance(items, list) and any(isinstance(r, dict) and "search_results" in r for r in items)
        for items in results.values()
    )
    result = read_shape(shape(retrieval), source)
    metadata = document.get("metadata") if isinstance(document, dict) else None
    notes = list(result.notes)
    if isinstance(metadata, dict):
        stated = {k: metadata[k] for k in ("answer_model", "judge_model", "model") if isinstance(metadata.get(k), str)}
        if stated:
            notes.append("the file's metadata: " + ", ".join(f"{k} {v}" for k, v in stated.items()))
    name = source.path.parent.name if source.path.stem == "eval_results" and source.path.parent.name else None
    return source.answer_file(
        "evermemos", result.records, name=name, judges=_judge_words(metadata, dict(result.judges)), notes=notes
    )


FORMAT = AnswerFormat(
    name="evermemos",
    recognise=recognise,
    read=read,
    description="EverMemOS's eval_results.json: detailed_results per conversation, three llm_judgments per question",
    rule="a JSON object with detailed_results whose first record has llm_judgments",
)
