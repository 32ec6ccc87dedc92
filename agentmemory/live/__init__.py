"""Answers and judges, live: a reader answers each question from a system's memories and judges grade the answers,
through any OpenAI-compatible endpoint; every call cached on disk, counted, and reproducible.

* :mod:`~agentmemory.live.endpoints`: the chat-model protocol and the ``openai`` kind (:class:`OpenAIChat`).
* :mod:`~agentmemory.live.roles`: the registries :data:`READERS` and :data:`JUDGES` and :func:`resolve_role`.
* :mod:`~agentmemory.live.prompts`: the prompt templates (the shipped defaults, files, ``FILE.py:NAME``).
* :mod:`~agentmemory.live.verdicts`: a judge's reply read as a verdict.
* :mod:`~agentmemory.live.prices`: a price table turning token counts into cost.
* :mod:`~agentmemory.live.call_cache`: the call cache.
* :mod:`~agentmemory.live.config`: :class:`LiveOptions`.
* :mod:`~agentmemory.live.answering`: :func:`answer_questions` (and :func:`judge_answers`: judges without a
  reader), retries, concurrency, deadlines, latency, failures.
* :mod:`~agentmemory.live.call_progress`: the progress line of the calls on stderr.

An evaluation runs it for each ranked system and reader
(:class:`EvalOptions.live <agentmemory.evaluation.options.EvalOptions>`, ``agentmemory eval --reader ...``).
"""

from agentmemory.live.answering import (
    ContextMemory,
    LiveAnswers,
    LiveQuestion,
    QuestionResult,
    answer_questions,
    judge_answers,
)
from agentmemory.live.config import LiveOptions
from agentmemory.live.endpoints import ChatModel, Completion, OpenAIChat
from agentmemory.live.prices import PriceTable, read_prices
from agentmemory.live.prompts import PromptTemplate, default_prompt, load_prompt
from agentmemory.live.roles import JUDGES, READERS, RoleSpec, register_judge, register_reader, resolve_role
from agentmemory.live.verdicts import parse_verdict

__all__ = [
    "JUDGES",
    "READERS",
    "ChatModel",
    "Completion",
    "ContextMemory",
    "LiveAnswers",
    "LiveOptions",
    "LiveQuestion",
    "OpenAIChat",
    "PriceTable",
    "PromptTemplate",
    "QuestionResult",
    "RoleSpec",
    "answer_questions",
    "default_prompt",
    "judge_answers",
    "load_prompt",
    "parse_verdict",
    "read_prices",
    "register_judge",
    "register_reader",
    "resolve_role",
]
