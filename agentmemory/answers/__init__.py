"""Other harnesses' per-question answers: read (formats and mapping files), matched to a collection's questions.

* :mod:`~agentmemory.answers.records`: the records an answer file becomes.
* :mod:`~agentmemory.answers.formats`: the registry of answer formats
  (:data:`ANSWER_FORMATS`), detection and :func:`read_answers`.
* one module per built-in format: :mod:`~agentmemory.answers.mem0`,
  :mod:`~agentmemory.answers.evermemos`, :mod:`~agentmemory.answers.zep`,
  :mod:`~agentmemory.answers.hypotheses` (LongMemEval), :mod:`~agentmemory.answers.mapping`
  (any JSON shape, described in a TOML file).
* :mod:`~agentmemory.answers.shape` and :mod:`~agentmemory.answers.labels`:
  the engine that reads records out of a JSON shape, and judges' label maps.
* :mod:`~agentmemory.answers.matching`: records matched to a collection's
  questions (:func:`match_answers`).
"""

from agentmemory.answers.formats import (
    ANSWER_FORMATS,
    AnswerFormat,
    AnswerSource,
    detect_answer_format,
    read_answers,
    register_answer_format,
)
from agentmemory.answers.matching import MATCH_KEYS, Matched, match_answers
from agentmemory.answers.records import AnswerFile, AnswerRecord, ImportedMemory, Verdict

__all__ = [
    "ANSWER_FORMATS",
    "BUILTIN_ANSWER_FORMATS",
    "MATCH_KEYS",
    "AnswerFile",
    "AnswerFormat",
    "AnswerRecord",
    "AnswerSource",
    "ImportedMemory",
    "Matched",
    "Verdict",
    "detect_answer_format",
    "match_answers",
    "read_answers",
    "register_answer_format",
]

BUILTIN_ANSWER_FORMATS: tuple[str, ...] = ANSWER_FORMATS.builtin_names
"""The answer formats this package registers itself, in detection order."""
