"""Notebook parameters, validated by the library before anything runs.

The first code cell after a notebook's parameters cell calls
:func:`eval_setup` (or :func:`explore_setup`, :func:`collection_setup`,
:func:`sweep_setup`).  Any bad value raises
:class:`ReportParameterError` whose text is exactly the library's own message
(for example ``k: 0 (int) is less than 1; k must be an integer >= 1``); in a
notebook it shows as that one line, without a traceback, and papermill stops
at that cell.

Parameter conventions shared by the notebooks: ``collection = ""`` (or
``None``) means the shipped fixture (:func:`agentmemory.collection.default_collection_path`),
found from any working directory; any other value is a collection folder,
relative to the kernel's working directory.  ``collection.ipynb`` is the
exception: there ``""`` means the authored LoCoMo sample
(:func:`sample_collection_path`).  Every collection is read by
:func:`agentmemory.datasets.load`, so any registered format (a LoCoMo
``.json`` file, a BEIR folder, a plugin's format) is detected the same way
as on the command line.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.collection import Collection, default_collection_path, require_judgments
from agentmemory.errors import (
    AgentMemoryError,
    ReportParameterError,
)
from agentmemory.evaluation.options import AUTO_RETRIEVERS, EvalOptions, default_retrievers
from agentmemory.evaluation.runfiles import RunFile
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import Measure
from agentmemory.report.answers_params import (
    ANSWERS_SEPARATOR,
    SAMPLE_ANSWERS,
    Answers,
    AnswersSetup,
    answers_setup,
)
from agentmemory.report.explore_params import ExploreSetup, explore_setup
from agentmemory.report.results import cli_command
from agentmemory.report.setup_base import (
    _PARAMETERS,
    SAMPLE,
    SAMPLE_PATH,
    _check_output,
    _Evaluates,
    _given_inputs,
    _load,
    _memory_systems,
    _options,
    _output_dir,
    _patched,
    _read_collection,
    _recorded,
    _runs,
    _workers,
    sample_collection_path,
)
from agentmemory.report.sweep_params import SweepConfig, SweepSetup, parse_seeds, sweep_setup
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers
from agentmemory.systems.registry import SystemSpec

__all__ = [
    "ANSWERS_SEPARATOR",
    "SAMPLE",
    "SAMPLE_ANSWERS",
    "SAMPLE_PATH",
    "Answers",
    "AnswersSetup",
    "CollectionSetup",
    "EvalSetup",
    "ExploreSetup",
    "SweepConfig",
    "SweepSetup",
    "answers_setup",
    "collection_setup",
    "eval_setup",
    "explore_setup",
    "parse_seeds",
    "sample_collection_path",
    "sweep_setup",
    "takes_parameters",
]


@dataclass(frozen=True)
class EvalSetup(_Evaluates):
    """The validated parameters of ``eval.ipynb`` and the loaded collection.

    ``source`` says where the collection came from, as the user gave it
    (``"the shipped fixture"`` for the default), so no absolute path of this
    machine is ever printed.
    """

    options: EvalOptions
    retrievers: tuple[RetrieverSpec, ...]
    collection: Collection
    source: str
    output_dir: Path | None
    format: str = "auto"
    runs: tuple[RunFile, ...] = ()
    memory_systems: tuple[SystemSpec, ...] = ()
    recorded: tuple[str, ...] = ()
    """The runs that are a memory system's recorded output (their memories carry ``attribution``)."""
    inputs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The input files given beside the collection, as given: ``qrels_patch`` and ``claims`` when set."""
    table: tuple[Measure, ...] | None = None
    """The comparison table's columns (``table_metrics``), ``None`` for every measure."""
    answers: Answers = field(default_factory=Answers)
    """Imported answer files scored as systems (``answers``; none by default)."""
    workers: int = 1
    """Processes the memory systems' conversations are replayed in (``workers``; 1: one after the other)."""

    def command(self, evaluation: Evaluation) -> str:
        """The ``agentmemory eval`` command that writes this notebook's artifact (see :func:`.results.cli_command`)."""
        return cli_command(evaluation, self.source, format=self.format, inputs=self.inputs, table=self.table)


def eval_setup(
    *,
    collection: str | PathLike[str] | None,
    retrievers: object,
    output_dir: object,
    format: object = "auto",
    runs: object = "",
    memories: object = "",
    systems: object = "",
    workers: object = 1,
    **settings: object,
) -> EvalSetup:
    """Validate ``eval.ipynb``'s parameters and load the collection.

    ``settings`` are the evaluation's settings by their notebook parameters (every one of
    :data:`~agentmemory.evaluation.settings.SETTINGS`: ``seed``, ``k``, ``metrics``, ``relevance``, ``claims``,
    ``qrels_patch``, ``table_metrics``, ``tokenizer``, ``clock``, ``readers``, ...; ``""`` for none), read as
    the declaration says into one :class:`~agentmemory.evaluation.options.EvalOptions`.  Then, in order:
    ``retrievers`` (specs: see :func:`agentmemory.retrievers.resolve_retrievers`; ``""`` when ``runs`` or
    ``systems`` names one), ``output_dir`` (``""``/``None`` to write nothing, else a folder), the runs (``runs``
    and ``memories``, ``"name=path,..."``), that ``baseline`` names a system (``""``: the first), and the
    collection (loaded with :func:`agentmemory.datasets.load` in ``format``, ``"auto"`` to detect it), with the
    judgment patch ``qrels_patch`` checked against it and applied.  ``workers`` (an int >= 1) is the processes
    the memory systems' conversations are replayed in (``--workers``).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        options, names, out, read, memory = _evaluation_parameters(
            settings, retrievers, output_dir, runs, memories, systems, "eval_setup"
        )
        loaded, source = _load(collection, format)
        names, options = _chosen(retrievers, names, loaded, options)
        given = _given_inputs(settings)
        _check_output(out, collection or default_collection_path(), loaded, read, given)
        require_judgments(loaded, collection or default_collection_path())
        loaded = _patched(loaded, settings.get("qrels_patch", ""))
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return EvalSetup(
        options,
        names,
        loaded,
        source,
        out,
        str(format),
        read,
        memory,
        _recorded(read),
        MappingProxyType(given),
        options.table_metrics,
        workers=_workers(workers),
    )


def _evaluation_parameters(
    settings: Mapping[str, object],
    retrievers: object,
    output_dir: object,
    runs: object,
    memories: object,
    systems: object,
    where: str,
) -> tuple[EvalOptions, tuple[RetrieverSpec, ...], Path | None, tuple[RunFile, ...], tuple[SystemSpec, ...]]:
    """What ``eval.ipynb`` and ``collection.ipynb`` check alike: the options, retrievers, output folder, runs and
    memory systems."""
    memory = _memory_systems(systems)
    options = _options(settings, where, attributed=bool(memory))
    names = _retrievers(retrievers, runs, memory)
    out = _output_dir(output_dir)
    return options, names, out, _runs(names, runs, memories, options, memory), memory


def _retrievers(retrievers: object, runs: object, memory: tuple[SystemSpec, ...] = ()) -> tuple[RetrieverSpec, ...]:
    """The retriever specs; ``""`` is none when ``runs`` names a run or ``systems`` a memory system; ``"auto"``
    both that :func:`~agentmemory.evaluation.options.default_retrievers` may choose, until the collection is read
    (:func:`_chosen`)."""
    if retrievers == "" and (runs not in ("", None) or memory):
        return ()
    return resolve_retrievers("bm25,tags" if retrievers == AUTO_RETRIEVERS else retrievers)  # type: ignore[arg-type]


def _chosen(
    retrievers: object, names: tuple[RetrieverSpec, ...], collection: Collection, options: EvalOptions
) -> tuple[tuple[RetrieverSpec, ...], EvalOptions]:
    """``retrievers = "auto"``: the collection's default retrievers, said on the card, the baseline checked
    against them; any other value as resolved."""
    if retrievers != AUTO_RETRIEVERS:
        return names, options
    given, why = default_retrievers(collection)
    chosen = tuple(r for r in names if r.key in given.split(","))  # resolved once, with the others
    if options.baseline in {n for r in names for n in (r.key, r.label)} - {n for r in chosen for n in (r.key, r.label)}:
        options.check_baseline([(r.key, r.label) for r in chosen])
    return chosen, replace(options, defaults_chosen=(*options.defaults_chosen, why))


@dataclass(frozen=True)
class CollectionSetup(_Evaluates):
    """The validated parameters of ``collection.ipynb`` and the loaded collection.

    ``source`` is the collection as the user gave it (``"the shipped LoCoMo
    sample"`` for the default), so no absolute path is printed; ``cli_path``
    is the path to pass to ``agentmemory eval --collection`` from the
    repository root (the sample's repository-relative path for the default);
    ``format`` is the format actually read (``"auto"`` resolved).
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
    runs: tuple[RunFile, ...] = ()
    format_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    memory_systems: tuple[SystemSpec, ...] = ()
    recorded: tuple[str, ...] = ()
    """The runs that are a memory system's recorded output (their memories carry ``attribution``)."""
    inputs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The input files given beside the collection, as given: ``qrels_patch`` and ``claims`` when set."""
    table: tuple[Measure, ...] | None = None
    """The comparison table's columns (``table_metrics``), ``None`` for every measure."""
    answers: Answers = field(default_factory=Answers)
    """Imported answer files scored as systems (``answers``; none by default)."""
    workers: int = 1
    """Processes the memory systems' conversations are replayed in (``workers``; 1: one after the other)."""


def collection_setup(
    *,
    collection: str | PathLike[str] | None,
    format: object,
    repair: object,
    retrievers: object,
    output_dir: object,
    runs: object = "",
    memories: object = "",
    systems: object = "",
    format_options: object = "",
    workers: object = 1,
    **settings: object,
) -> CollectionSetup:
    """Validate ``collection.ipynb``'s parameters and load the collection with :func:`agentmemory.datasets.load`.

    Checks, in order: the settings, ``retrievers``, ``output_dir`` and the runs (as :func:`eval_setup`), then
    loads the collection: ``""``/``None`` is the LoCoMo sample (:func:`sample_collection_path`), any other value
    a path relative to the working directory; ``format`` (``"auto"`` or a registered name) and ``repair`` are
    checked by ``load``.  ``repair`` is the ``locomo`` format's option: ``False`` passes nothing (so any format
    loads), any other value is passed on and checked against the chosen format's declaration.
    ``format_options`` is the format's other options, comma-separated ``KEY=VALUE`` pairs read with their
    declared types, as ``--format-option`` reads them (``"granularity=turn,all_turns=true"`` for LongMemEval);
    an option the format does not take is refused by ``load``, naming those it does.  ``workers`` as in
    :func:`eval_setup`.

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        options, names, out, read, memory = _evaluation_parameters(
            settings, retrievers, output_dir, runs, memories, systems, "collection_setup"
        )
        read_collection = _read_collection(collection, format, format_options, repair)
        path, loaded = read_collection.path, read_collection.collection
        names, options = _chosen(retrievers, names, loaded, options)
        inputs = _given_inputs(settings)
        _check_output(out, path, loaded, read, inputs)
        require_judgments(loaded, path)
        loaded = _patched(loaded, settings.get("qrels_patch", ""))
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return CollectionSetup(
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
        memory,
        _recorded(read),
        MappingProxyType(inputs),
        options.table_metrics,
        workers=_workers(workers),
    )


def takes_parameters(setup: Callable[..., Any], names: Iterable[str]) -> bool:
    """Whether the notebook whose parameters are ``names`` is the one ``setup`` checks: ``setup`` takes every one
    of them (its own keywords and, when it takes ``**settings``, every setting's parameter) and ``names`` holds
    every keyword it requires."""
    signature = inspect.signature(setup).parameters.values()
    own = {p.name for p in signature if p.kind is inspect.Parameter.KEYWORD_ONLY}
    required = {p.name for p in signature if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty}
    settings = set(_PARAMETERS) if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature) else set()
    given = set(names)
    return required <= given <= own | settings
