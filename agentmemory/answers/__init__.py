"""Other harnesses' per-question answers: read (formats and mapping files), matched to a collection's questions.

See :mod:`agentmemory.answers.records` for the records.
"""

from agentmemory.answers.records import AnswerFile, AnswerRecord, ImportedMemory, Verdict

__all__ = ["AnswerFile", "AnswerRecord", "ImportedMemory", "Verdict"]
