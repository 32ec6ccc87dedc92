"""``answers.ipynb``'s parameters: the answer files read and checked, the setup (see :mod:`agentmemory.report.params`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.answers.formats import ANSWER_FORMATS
from agentmemory.collection import Collection, require_judgments
from agentmemory.errors import (
    AgentMemoryError,
    ParameterError,
    ReportParameterError,
    UnknownNameError,
)
from agentmemory.evaluation.answer_runs import parse_answers_option, read_answer_files
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runfiles import RunFile
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import Measure
from agentmemory.report.setup_base import (
    Answers,
    _check_output,
    _Evaluates,
    _found,
    _given_inputs,
    _options,
    _output_dir,
    _patched,
    _read_collection,
)
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers
from agentmemory.systems.registry import SystemSpec

ANSWERS_SEPARATOR = ";"
"""What separates the systems of the ``answers`` parameter (and the entries of ``answers_format`` and
``answers_mapping``): a semicolon, since a comma separates one system's files (its seeds)."""

SAMPLE_ANSWERS = (
    "zep=fixtures/answers/zep/zep_locomo_grades.json;"
    "mem0=fixtures/answers/mem0-locomo-sample.json,fixtures/answers/mem0-locomo-sample-run2.json;"
    "evermemos=fixtures/answers/evermemos-locomo-sample.json"
)
"""The authored answer files of the LoCoMo sample (``fixtures/answers``): ``answers = ""`` with ``collection = ""``."""

_ANSWERS_HELP = (
    'pass NAME=FILE[,FILE...] entries separated by ";" (one system\'s seeds by ","), '
    'e.g. "mem0=mem0_results.json;zep=zep_locomo_grades.json"'
)


def _entries(name: str, value: object) -> list[str]:
    """``"a;b"`` -> ``["a", "b"]`` (``""`` gives none): the ``answers`` parameters' entries."""
    if value is None or value == "":
        return []
    if not isinstance(value, str) or "\n" in value:
        raise ParameterError(name, value, "is not one line of text", _ANSWERS_HELP)
    items = [item.strip() for item in value.split(ANSWERS_SEPARATOR)]
    if not all(items):
        raise ParameterError(name, value, "has an empty entry", f'separate entries by single "{ANSWERS_SEPARATOR}"')
    return items


def _keyed(name: str, value: object, systems: Sequence[str], example: str) -> dict[str, str]:
    """``answers_format`` / ``answers_mapping``: ``NAME=VALUE`` entries, each ``NAME`` a system of ``answers``."""
    out: dict[str, str] = {}
    for item in _entries(name, value):
        key, sep, given = (part.strip() for part in item.partition("="))
        if not sep or not key or not given:
            raise ParameterError(name, item, "is not NAME=VALUE", f'pass e.g. "{example}", NAME a system of answers')
        if key not in systems:
            raise UnknownNameError(name, key, list(systems))
        if key in out:
            raise ParameterError(name, value, f"names the system {key!r} twice", "give each system once")
        out[key] = given
    return out


def read_answers_parameters(
    answers: object, answers_format: object = "", answers_mapping: object = "", *, sample: bool = False
) -> Answers:
    """The ``answers``, ``answers_format`` and ``answers_mapping`` parameters, checked and their files read.

    ``answers`` is ``NAME=FILE[,FILE...]`` entries separated by ``;``
    (:data:`ANSWERS_SEPARATOR`): each entry one system, its files its seeds
    (:func:`agentmemory.evaluation.answer_runs.parse_answers_option`: a file may be a glob; without ``NAME=``
    the system is named after its first file).  ``answers_format`` and
    ``answers_mapping`` are ``NAME=FORMAT`` and ``NAME=FILE.toml`` entries the
    same way (``""`` for none: each file's format is detected from its shape).
    ``""`` for ``answers`` is :data:`SAMPLE_ANSWERS` when ``sample`` (the
    collection is the LoCoMo sample), else refused.  Paths are found as the
    runs are (:func:`_found`: from the working directory, else the repository
    root).  Every file is read here, so a file no reader takes is one line
    before anything is evaluated.

    Raises:
        AgentMemoryError: the first bad entry or file.
    """
    text = SAMPLE_ANSWERS if sample and answers in ("", None) else answers
    items = _entries("answers", text)
    if not items:
        raise ParameterError(
            "answers",
            answers,
            "names no answer file",
            _ANSWERS_HELP + ' ("" means the authored samples with the LoCoMo sample only: collection = "")',
        )
    specs = [parse_answers_option(item, "answers") for item in items]
    names = [spec.name for spec in specs]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ParameterError(
            "answers",
            answers,
            f"names the system {twice!r} twice",
            "give each system once, with its seeds' files after one NAME= separated by commas",
        )
    formats = _keyed("answers_format", answers_format, names, "zep=zep")
    for chosen in formats.values():
        if chosen != "auto" and chosen not in ANSWER_FORMATS:
            raise UnknownNameError("answers_format", chosen, [*ANSWER_FORMATS.names(), "auto"])
    mappings = _keyed("answers_mapping", answers_mapping, names, "mine=mine.toml")
    given = tuple(replace(s, format=formats.get(s.name), mapping=mappings.get(s.name)) for s in specs)
    found = tuple(
        replace(
            s,
            paths=tuple(str(_found(p)) for p in s.paths),
            mapping=None if s.mapping is None else str(_found(s.mapping)),
        )
        for s in given
    )
    files = tuple(read_answer_files(spec) for spec in found)
    paths = tuple(Path(p) for spec in found for p in (*spec.paths, *([spec.mapping] if spec.mapping else ())))
    return Answers(given, files, paths)


@dataclass(frozen=True)
class AnswersSetup(_Evaluates):
    """The validated parameters of ``answers.ipynb``: the loaded collection and the answer files read.

    ``source``, ``cli_path``, ``format`` (the format read) and
    ``format_given`` as in :class:`CollectionSetup`; ``answers`` the systems
    (:class:`Answers`); ``table`` the ``table_metrics`` given, ``None`` for
    the default columns (:meth:`columns`).
    """

    options: EvalOptions
    retrievers: tuple[RetrieverSpec, ...]
    collection: Collection
    source: str
    cli_path: str
    format: str
    format_given: str
    repair: bool
    output_dir: Path | None
    answers: Answers
    format_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    inputs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The input files given beside the collection, as given: ``qrels_patch`` and ``claims`` when set."""
    table: tuple[Measure, ...] | None = None
    runs: tuple[RunFile, ...] = ()
    memory_systems: tuple[SystemSpec, ...] = ()
    recorded: tuple[str, ...] = ()

    def columns(self, evaluation: Evaluation) -> tuple[Measure, ...]:
        """The comparison table's columns: ``table_metrics`` when given, else every answer measure the
        evaluation computed (``Judge``, LoCoMo's ``F1``, ``EM``, ``BLEU-1``, ``answer_in_context@k``) and then
        ``R@k`` when a system has a ranking (a retriever, or an answer file with retrieved memories)."""
        if self.table is not None:
            return self.table
        chosen = [m for m in evaluation.measures if m.definition.reads_answer]
        recall = Measure("R", evaluation.k)
        ranked = self.retrievers or self.answers.has_retrieval
        if ranked and recall in evaluation.measures:
            chosen.append(recall)
        return tuple(chosen)

    def statistics(self, evaluation: Evaluation) -> Statistics:
        """The run's statistics (seeded by its seed) against the baseline, on the table's :meth:`columns`: the
        artifact's ``statistics``."""
        return evaluation_statistics(
            evaluation,
            seed=evaluation.seed,
            baseline=self.options.baseline,
            table=self.columns(evaluation),
            table_name="table_metrics",
        )


def answers_setup(
    *,
    collection: str | PathLike[str] | None,
    format: object,
    format_options: object,
    repair: object,
    answers: object,
    answers_format: object,
    answers_mapping: object,
    retrievers: object,
    output_dir: object,
    **settings: object,
) -> AnswersSetup:
    """Validate ``answers.ipynb``'s parameters, read the answer files and load the collection.

    Checks, in order: the answer parameters (:func:`read_answers_parameters`: ``""`` means the authored samples
    when ``collection`` is ``""`` too), ``retrievers`` (``""`` for none, or specs as in :func:`eval_setup`:
    ``"bm25"`` sets a retriever's top k beside the systems' answers), the settings (as :func:`eval_setup`;
    relevance is ``provenance`` when an answer file carries retrieved memories, as ``agentmemory eval --answers``
    judges them; ``baseline`` ``""`` is the first system of ``answers``, so the answer measures have a
    baseline), ``output_dir``, then the collection as :func:`collection_setup` loads it (``format``,
    ``format_options``, ``repair``) and the judgment patch ``qrels_patch`` (answer, exclusion and evidence lines,
    or locomo-audit's errata file).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        read = read_answers_parameters(answers, answers_format, answers_mapping, sample=collection in ("", None))
        names = () if retrievers in ("", None) else resolve_retrievers(retrievers)  # type: ignore[arg-type]
        options = _options(settings, "answers_setup", attributed=read.has_retrieval)
        options = replace(options, baseline=options.baseline or read.names[0])
        options.check_baseline([(r.key, r.label) for r in names] + [(n, n) for n in read.names])
        out = _output_dir(output_dir)
        read_collection = _read_collection(collection, format, format_options, repair)
        path, loaded = read_collection.path, read_collection.collection
        inputs = _given_inputs(settings)
        _check_output(out, path, loaded, (), inputs, read.paths)
        require_judgments(loaded, path)
        loaded = _patched(loaded, settings.get("qrels_patch", ""))
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return AnswersSetup(
        options,
        names,
        loaded,
        read_collection.source,
        read_collection.cli_path,
        read_collection.format,
        str(format),
        bool(repair),
        out,
        read,
        MappingProxyType(read_collection.options),
        MappingProxyType(inputs),
        options.table_metrics,
    )
