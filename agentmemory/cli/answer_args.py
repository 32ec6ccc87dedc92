"""``agentmemory eval``'s imported answer files: ``--answers`` with ``--answers-format`` and ``--answers-mapping``,
checked before anything is read, then read before the collection."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentmemory.answers.records import AnswerFile
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import AnswersSpec, parse_answers_option, read_answer_files
from agentmemory.evaluation.options import EvalOptions, resolve_relevance
from agentmemory.files.output_plan import OutputPlan

__all__ = ["answers_option", "read_answers"]


def _named(texts: Sequence[str], option: str, names: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` options (``--answers-format``, ``--answers-mapping``) keyed by a system of ``names``."""
    out: dict[str, str] = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ParameterError(
                option, text, "is not NAME=VALUE", f"give e.g. {option} zep=..., NAME an --answers name"
            )
        if name.strip() not in names:
            raise ParameterError(
                option, name, "names no --answers system", "choose from: " + (", ".join(names) or "(none given)")
            )
        out[name.strip()] = value.strip()
    return out


def answers_option(args: argparse.Namespace) -> list[AnswersSpec]:
    """``--answers`` with its ``--answers-format`` and ``--answers-mapping``, checked before anything is read."""
    specs = [parse_answers_option(text) for text in args.answers]
    names = [s.name for s in specs]
    formats = _named(args.answers_format, "--answers-format", names)
    mappings = _named(args.answers_mapping, "--answers-mapping", names)
    return [replace(s, format=formats.get(s.name), mapping=mappings.get(s.name)) for s in specs]


def read_answers(
    args: argparse.Namespace, answers: Sequence[AnswersSpec], options: EvalOptions, plan: OutputPlan
) -> tuple[EvalOptions, list[tuple[AnswerFile, ...]]]:
    """The ``--answers`` files (and the claims' own answer files) declared as inputs, then read and checked before
    the collection; the relevance mode resolved (:func:`~agentmemory.evaluation.options.resolve_relevance`)."""
    plan.add_inputs(Path(path) for a in answers for path in (*a.paths, *([a.mapping] if a.mapping else [])))
    if options.claims is not None:
        plan.add_inputs(Path(path) for _, paths, _ in options.claims.answers() for path in paths)
    files = [read_answer_files(a) for a in answers]
    attributed = bool(args.system) or any(f[0].has_retrieval for f in files)  # memories counted through attribution
    return replace(options, relevance=resolve_relevance(options.relevance, attributed=attributed)), files
