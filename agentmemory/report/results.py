"""The evaluation artifact from a notebook: the same ``eval-results.json`` as ``agentmemory eval``.

Both go through :func:`agentmemory.analysis.artifact.dumps_artifact`, so for the same
collection, retrievers, k and seed the bytes are identical.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentmemory.analysis.artifact import dumps_artifact, write_artifact
from agentmemory.analysis.statistics import Statistics
from agentmemory.datasets import BUILTIN_FORMATS
from agentmemory.datasets.base import option_flag_arguments
from agentmemory.evaluation.answer_runs import AnswersSpec
from agentmemory.evaluation.options import EvalOptions, default_measures_for
from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.settings import SETTINGS
from agentmemory.metrics import Measure
from agentmemory.metrics.token_counters import DEFAULT_TOKEN_COUNTER
from agentmemory.report.display import Markdown

__all__ = ["ARTIFACT_NAME", "SHIPPED", "artifact_summary", "cli_command", "write_results"]

ARTIFACT_NAME = "eval-results.json"

SHIPPED = "the shipped fixture"
"""How a report names the collection when none was given (the shipped fixture): no path of this machine shown."""


def cli_command(
    evaluation: Evaluation,
    source: str | None = None,
    *,
    format: str = "auto",
    options: Mapping[str, Any] | None = None,
    out: str = "reports/eval-results.json",
    inputs: Mapping[str, str] | None = None,
    table: Sequence[Measure] | None = None,
    answers: Sequence[AnswersSpec] = (),
) -> str:
    """The ``agentmemory eval`` command that writes the same artifact, quoted for a POSIX shell.

    ``source`` is the collection path as given to the notebook (``None`` or
    the shipped fixture's name: no ``--collection``); ``format`` and
    ``options`` (the format options given, e.g. ``{"repair": True}``) become
    ``--format``, the built-in option flags (``--repair``, ``--split dev``) or
    ``--format-option KEY=VALUE``; measures beyond the defaults become
    ``--metrics``; the evaluation's runs and options (its
    :class:`~agentmemory.evaluation.options.EvalOptions`) become
    ``--run``/``--memories``, ``--lenient-run``, ``--system`` (each memory
    system's spec, with ``--attribution``, ``--system-timeout`` and
    ``--lenient-system`` when not their defaults), ``--relevance`` (when not
    the default: ``provenance`` with memory systems, else ``direct``),
    ``--as-of``, ``--baseline`` and ``--tokenizer`` (when measures counted
    tokens with another counter than the default); ``inputs`` (the judgment
    patch and the claims file as given: ``{"qrels_patch": ..., "claims":
    ...}``) become ``--qrels-patch`` and ``--claims``; ``table`` (the comparison table's chosen columns)
    ``--table-metrics``; ``answers`` (the answer files as given) ``--answers NAME=FILE[,FILE...]`` with
    ``--answers-format`` and ``--answers-mapping`` where set (relevance ``provenance`` and ``--attribution``
    then follow the answer files' retrieved memories as they follow memory systems).
    """
    parts = ["agentmemory", "eval"]
    if source is not None and source != SHIPPED:
        parts += ["--collection", source]
    if format != "auto":
        parts += ["--format", format]
    parts += option_flag_arguments(options or {}, BUILTIN_FORMATS)
    parts += ["--seed", str(evaluation.seed), "--k", str(evaluation.k)]
    parts += ["--retrievers", ",".join(r.name for r in evaluation.results if r.kind == "retriever")]
    for run in evaluation.runs:
        parts += ["--run", f"{run.name}={run.path}"]
        if run.memories_path is not None:
            parts += ["--memories", str(run.memories_path)]
    if evaluation.lenient_run:
        parts.append("--lenient-run")
    parts += _system_arguments(evaluation)
    parts += _answers_arguments(answers)
    if evaluation.relevance != ("provenance" if _attributed(evaluation) else "direct"):  # --system's default
        parts += ["--relevance", evaluation.relevance]
    if evaluation.as_of:
        parts.append("--as-of")
    if evaluation.options.baseline is not None:
        parts += ["--baseline", evaluation.options.baseline]
    parts += _measure_flags(evaluation)
    if table is not None:
        parts += ["--table-metrics", ",".join(map(str, table))]
    for name, path in (inputs or {}).items():
        parts += ["--" + name.replace("_", "-"), path]
    parts += _declared_arguments(evaluation)
    parts += ["--out", out]
    return shlex.join(parts)


_OWN_RULES = frozenset(
    {
        "k",
        "seed",
        "relevance",
        "measures",
        "table_metrics",
        "lenient_run",
        "as_of",
        "baseline",
        "attribution",
        "system_timeout",
        "lenient_system",
        "tokenizer",
        "qrels_patch",
        "claims",
    }
)
"""The settings :func:`cli_command` writes by rules of their own (a default that depends on what is evaluated, a
path as given, the measures beyond the defaults); every other setting comes from its declaration."""


def _declared_arguments(evaluation: Evaluation) -> list[str]:
    """The flag of every other setting of the evaluation (:data:`~agentmemory.evaluation.settings.SETTINGS`) that
    can change the artifact and is not its declared default, in the declaration's order: a setting added to the
    declaration reaches the artifact's command line with no change here (``--clock conversation``).  The live
    readers' and judges' settings are read from the evaluation's :class:`~agentmemory.live.config.LiveOptions`:
    each reader and judge by its spec (``--reader SPEC`` once per reader), prompts and prices as given."""
    parts: list[str] = []
    live = evaluation.options.live
    for declared in SETTINGS:
        if not declared.artifact or declared.name in _OWN_RULES:
            continue
        if declared.live:
            value: Any = None if live is None else _live_value(live, declared.name)
        else:
            value = getattr(evaluation.options, declared.name, None)
        if value is None or value == "" or value == () or value == declared.default:
            continue
        if declared.kind == "bool":
            parts += [declared.flag] if value is True else []
        elif declared.kind == "specs":
            parts += [piece for spec in value for piece in (declared.flag, str(spec))]
        elif declared.kind == "measures":
            parts += [declared.flag, ",".join(map(str, value))]
        else:
            parts += [declared.flag, str(value)]
    return parts


def _live_value(live: Any, name: str) -> object:
    """The live setting ``name`` of ``live`` as its flag takes it: specs' texts, a file as given, a value."""
    value = getattr(live, name)
    if name in ("readers", "judges"):
        return tuple(spec.key for spec in value or ())
    if name in ("reader_prompt", "judge_prompt", "prices"):
        return "" if value is None else value.given
    return value


def _attributed(evaluation: Evaluation) -> bool:
    """Whether memories are attributed: a memory system's, or an answer file's retrieved memories (then the
    command line judges through provenance unless told otherwise)."""
    return bool(evaluation.systems) or any(a.has_retrieval for a in evaluation.answers)


def _answers_arguments(answers: Sequence[AnswersSpec]) -> list[str]:
    """``--answers NAME=FILE[,FILE...]`` for each system as given, then ``--answers-format`` and
    ``--answers-mapping`` for those that set them."""
    parts: list[str] = []
    for spec in answers:
        parts += ["--answers", f"{spec.name}={','.join(spec.paths)}"]
    parts += [arg for spec in answers if spec.format for arg in ("--answers-format", f"{spec.name}={spec.format}")]
    parts += [arg for spec in answers if spec.mapping for arg in ("--answers-mapping", f"{spec.name}={spec.mapping}")]
    return parts


def _system_arguments(evaluation: Evaluation) -> list[str]:
    """``--system`` for each memory system, with ``--attribution``, ``--system-timeout`` and ``--lenient-system``
    when not their defaults (none without a memory system); ``--attribution`` also for answer files' memories."""
    chosen = evaluation.options
    parts: list[str] = []
    for system in evaluation.systems:
        parts += ["--system", system.spec.key]
    if _attributed(evaluation) and chosen.attribution != "auto":
        parts += ["--attribution", chosen.attribution]
    if evaluation.systems and chosen.system_timeout != EvalOptions().system_timeout:
        parts += ["--system-timeout", repr(chosen.system_timeout)]
    if evaluation.systems and chosen.lenient_system:
        parts.append("--lenient-system")
    return parts


def _measure_flags(evaluation: Evaluation) -> list[str]:
    """``--metrics`` (the measures beyond the defaults, less those only a claim asked for and the answer measures
    answer files add by themselves) and ``--tokenizer`` (a counter other than the default that measures counted
    tokens with), as :func:`cli_command` writes them."""
    flags: list[str] = []
    claimed = _claims_only(evaluation)
    if evaluation.answers:  # --answers adds its answer measures; --metrics names only those asked for
        claimed |= {m for m in evaluation.measures if m.definition.reads_answer} - set(evaluation.options.measures)
    defaults = default_measures_for(evaluation.k, memories=evaluation.returns_memories)
    extra = [str(m) for m in evaluation.measures if m not in defaults and m not in claimed]
    if extra:
        flags += ["--metrics", ",".join(extra)]
    if evaluation.tokenizer is not None and evaluation.options.tokenizer != DEFAULT_TOKEN_COUNTER:
        flags += ["--tokenizer", evaluation.options.tokenizer]
    return flags


def _claims_only(evaluation: Evaluation) -> set[Measure]:
    """The measures computed only because a claim names them (``--claims`` adds them again: not in ``--metrics``)."""
    claims = evaluation.options.claims
    if claims is None:
        return set()
    return set(claims.measures) - set(evaluation.options.measures)


def artifact_summary(
    evaluation: Evaluation, source: str, *, command: str | None = None, statistics: Statistics | None = None
) -> Markdown:
    """Size and sha256 of the artifact for this run (computed, not read from disk) and the equivalent command.

    ``command`` defaults to :func:`cli_command`; ``statistics`` may pass the
    run's :func:`agentmemory.report.stats.run_statistics` (the artifact's own)
    so they are not computed twice.
    """
    data = dumps_artifact(evaluation, statistics).encode("utf-8")
    command = cli_command(evaluation, source) if command is None else command
    return Markdown(
        f"`{ARTIFACT_NAME}` for these parameters: {len(data)} bytes, sha256 `{hashlib.sha256(data).hexdigest()}`. "
        f"`{command}` writes the same bytes."
    )


def write_results(evaluation: Evaluation, output_dir: Path | None, *, statistics: Statistics | None = None) -> Markdown:
    """Write ``output_dir/eval-results.json`` (atomically); with no ``output_dir``, say that nothing was written.

    ``statistics`` as in :func:`artifact_summary`.
    """
    if output_dir is None:
        return Markdown(f'`{ARTIFACT_NAME}` not written: output_dir is "" (pass e.g. `-p output_dir reports`).')
    path = output_dir / ARTIFACT_NAME
    write_artifact(evaluation, path, statistics=statistics)
    return Markdown(f"Wrote `{path.as_posix()}`.")
