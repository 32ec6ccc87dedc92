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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.answers.formats import ANSWER_FORMATS
from agentmemory.answers.records import AnswerFile
from agentmemory.collection import Collection, default_collection_path, require_judgments
from agentmemory.datasets import FORMATS, detect_format, load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import (
    AgentMemoryError,
    MissingFileError,
    NumberTextError,
    ParameterError,
    ReportParameterError,
    UnknownNameError,
    check_positive_int,
    quote,
)
from agentmemory.evaluation.answer_runs import AnswersSpec, parse_answers_option, read_answer_files
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runfiles import RunFile, parse_run_option, read_run_file
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.system_runs import is_system_memories, replay_pool
from agentmemory.files.numbers import parse_integer
from agentmemory.files.output_plan import OutputPlan, collection_inputs
from agentmemory.metrics import Measure, parse_measures
from agentmemory.report.results import ARTIFACT_NAME, SHIPPED, cli_command
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers
from agentmemory.retrievers.spec import split_specs
from agentmemory.systems.registry import SystemSpec, resolve_systems
from agentmemory.tokenize import tokenize

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
]

SAMPLE = "the shipped LoCoMo sample"
SAMPLE_PATH = "fixtures/locomo-sample/locomo-sample.json"
"""Where the authored LoCoMo sample lives, relative to the repository root (the folder holding ``agentmemory/``)."""


def _pairs(name: str, value: object, example: str) -> list[tuple[str, str]]:
    """``"a=x,b=y"`` -> ``[("a", "x"), ("b", "y")]`` (``""`` gives none)."""
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        raise ParameterError(name, value, "is not text", f'pass e.g. "{example}", or ""')
    return [parse_run_option(item.strip(), name) for item in value.split(",")]


def _options(
    *,
    seed: object,
    k: object,
    metrics: object,
    relevance: object,
    lenient_run: object,
    baseline: object,
    timings: object,
    as_of: object,
    attribution: object = "auto",
    system_timeout: object = 300.0,
    lenient_system: object = False,
    claims: object = "",
    with_systems: bool = False,
    table: tuple[Measure, ...] = (),
) -> EvalOptions:
    """The notebooks' evaluation parameters as an :class:`~agentmemory.evaluation.options.EvalOptions`.

    ``metrics`` is text (``""`` for none) and ``baseline`` a system's name or
    label (``""``: the first system); ``relevance`` ``""`` is ``"provenance"``
    when ``with_systems`` (memory systems are evaluated: their memories count
    through the entries they are attributed to, as ``agentmemory eval
    --system`` defaults), else ``"direct"``; ``claims`` is the path of a
    claims file (``""`` for none), found as the runs are (:func:`_found`); the
    record checks everything else (and reads the claims).  The ``table``'s
    measures (``table_metrics``) are computed too, after ``metrics``, as
    ``agentmemory eval --table-metrics`` adds them.
    """
    if not isinstance(baseline, str):
        raise ParameterError("baseline", baseline, "is not text", 'pass a system\'s name, or "" for the first')
    if relevance is None or relevance == "":
        relevance = "provenance" if with_systems else "direct"
    return EvalOptions(
        k=k,  # type: ignore[arg-type]  # checked by the record
        seed=seed,  # type: ignore[arg-type]
        relevance=relevance,  # type: ignore[arg-type]
        measures=_with_table(_measures(metrics), table),
        lenient_run=lenient_run,  # type: ignore[arg-type]
        timings=timings,  # type: ignore[arg-type]
        as_of=as_of,  # type: ignore[arg-type]
        baseline=baseline or None,
        attribution=attribution,  # type: ignore[arg-type]
        system_timeout=system_timeout,  # type: ignore[arg-type]
        lenient_system=lenient_system,  # type: ignore[arg-type]
        claims=_input_path("claims", claims),
    )


_INPUT_EXAMPLES = {"qrels_patch": "fixes.jsonl", "claims": "claims.toml"}


def _input_path(name: str, value: object) -> Path | None:
    """An input file parameter (``qrels_patch``, ``claims``): ``""`` for none, else a path found as the runs are."""
    if value is None or value == "":
        return None
    if not isinstance(value, (str, PathLike)):
        raise ParameterError(name, value, "is not a path", f'pass a file such as "{_INPUT_EXAMPLES[name]}", or ""')
    return _found(str(value))


def _patched(collection: Collection, qrels_patch: object) -> Collection:
    """``collection`` with the judgment patch ``qrels_patch`` names applied (``""``: as it is)."""
    path = _input_path("qrels_patch", qrels_patch)
    return collection if path is None else read_judgment_patch(path, collection).apply(collection)


def _memory_systems(systems: object) -> tuple[SystemSpec, ...]:
    """The ``systems`` parameter: comma-separated memory-system specs (commas inside ``[...]`` belong to a spec),
    ``""`` for none (:func:`agentmemory.systems.registry.resolve_systems`)."""
    if systems is None or systems == "":
        return ()
    if not isinstance(systems, str):
        raise ParameterError(
            "systems",
            systems,
            "is not text",
            'pass specs such as "agentrecall,examples.my_memory_system:System", or ""',
        )
    return resolve_systems([piece for piece in split_specs(systems) if piece.strip()])


def _recorded(runs: tuple[RunFile, ...]) -> tuple[str, ...]:
    """The runs whose memories file a memory system's replay wrote (``--runs-dir``): their records carry ``attribution``."""
    found = []
    for run in runs:
        if run.memories_path is not None and is_system_memories(_found(run.memories_path).read_text(encoding="utf-8")):
            found.append(run.name)
    return tuple(found)


def _runs(
    retrievers: tuple[RetrieverSpec, ...],
    runs: object,
    memories: object,
    options: EvalOptions,
    memory_systems: tuple[SystemSpec, ...] = (),
) -> tuple[RunFile, ...]:
    """The ``runs`` and ``memories`` parameters read (checked against the collection later), and the baseline
    checked against every system.

    ``runs`` is ``"name=path,..."`` (``""`` for none), ``memories``
    ``"name=path,..."`` naming a run's companion memories file.
    """
    run_pairs = _pairs("runs", runs, "mem0=runs/mem0.trec,zep=runs/zep.trec")
    memory_pairs = dict(_pairs("memories", memories, "mem0=runs/mem0-memories.jsonl"))
    names = [n for n, _ in run_pairs]
    for name in memory_pairs:
        if name not in names:
            raise UnknownNameError("memories", name, names)
    options.check_baseline(
        [(r.key, r.label) for r in retrievers] + [(n, n) for n in names] + [(s.key, s.label) for s in memory_systems]
    )
    read = []
    for name, path in run_pairs:
        memories_path = memory_pairs.get(name)
        run = read_run_file(_found(path), name, memories=None if memories_path is None else _found(memories_path))
        read.append(replace(run, path=path, memories_path=memories_path))  # as given: no folder of this machine shown
    return tuple(read)


def _found(path: str) -> Path:
    """``path`` relative to the working directory; failing that, to the repository root of a source checkout.

    So a committed report that names ``fixtures/...`` runs again from any
    folder (nbval runs it from ``reports/``), as the shipped collections do.
    """
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    beside = Path(__file__).resolve().parent.parent.parent / given
    return beside if beside.exists() else given


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


@dataclass(frozen=True)
class Answers:
    """The ``answers`` parameters read: each system as given (:class:`AnswersSpec`: name, files, format and
    mapping as typed, for the command line), its files read (one tuple per system, a file per seed), and
    every file read (the output plan's inputs)."""

    given: tuple[AnswersSpec, ...] = ()
    files: tuple[tuple[AnswerFile, ...], ...] = ()
    paths: tuple[Path, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The systems' names, in the order given."""
        return tuple(spec.name for spec in self.given)

    @property
    def has_retrieval(self) -> bool:
        """Whether a system's (first) file carries retrieved memories: then hits are judged through provenance,
        as ``agentmemory eval --answers`` judges them."""
        return any(files[0].has_retrieval for files in self.files)


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
class Systems:
    """What a report compares beside its retrievers, and how: its runs and the options that concern them
    (a view of a setup's ``runs`` and ``options``, see :attr:`EvalSetup.systems`)."""

    runs: tuple[RunFile, ...] = ()
    relevance: str = "direct"
    lenient_run: bool = False
    baseline: str | None = None
    timings: bool = False
    as_of: bool = False


class _Evaluates:
    """What ``eval.ipynb`` and ``collection.ipynb`` share: run the evaluation their parameters describe."""

    collection: Collection
    retrievers: tuple[RetrieverSpec, ...]
    runs: tuple[RunFile, ...]
    options: EvalOptions
    memory_systems: tuple[SystemSpec, ...]
    recorded: tuple[str, ...]
    inputs: Mapping[str, str]
    table: tuple[Measure, ...] | None
    answers: Answers
    workers: int

    @property
    def k(self) -> int:
        """The cutoff (``options.k``)."""
        return self.options.k

    @property
    def seed(self) -> int:
        """The seed (``options.seed``)."""
        return self.options.seed

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The measures beyond the defaults (``options.measures``)."""
        return self.options.measures

    @property
    def systems(self) -> Systems:
        """The runs, with the options about systems (relevance, lenient_run, baseline, timings, as_of)."""
        o = self.options
        return Systems(self.runs, o.relevance, o.lenient_run, o.baseline, o.timings, o.as_of)

    def evaluate(self) -> Evaluation:
        """:func:`agentmemory.evaluate` with these parameters: the retrievers, the runs, the memory systems, the
        answer files, the options; the memory systems' conversations replayed in ``workers`` processes (the same
        results)."""
        with replay_pool(self.workers if self.memory_systems else 1) as executor:
            return evaluate(
                self.collection,
                self.retrievers,
                runs=self.runs,
                systems=self.memory_systems,
                options=self.options,
                executor=executor,
                answers=list(self.answers.files),
            )

    def statistics(self, evaluation: Evaluation) -> Statistics:
        """The run's statistics (seeded by its seed) against the chosen baseline, the comparison table's columns
        ``table_metrics`` chose: the artifact's ``statistics``."""
        return evaluation_statistics(
            evaluation,
            seed=evaluation.seed,
            baseline=self.options.baseline,
            table=self.table,
            table_name="table_metrics",
        )


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


@dataclass(frozen=True)
class ExploreSetup:
    """The validated parameters of ``explore.ipynb`` and the loaded collection.

    ``query_tags`` is ``None`` when the tag scorer should derive the query's
    tags from its text; ``explain_entry`` is ``None`` for "BM25's first hit".
    """

    collection: Collection
    source: str
    query: str
    query_tags: tuple[str, ...] | None
    k: int
    explain_entry: str | None


def _measures(metrics: object) -> tuple[Measure, ...]:
    """The extra measures a ``metrics`` parameter names (``""`` for none)."""
    if metrics is None or metrics == "":
        return ()
    if not isinstance(metrics, str):
        raise ParameterError("metrics", metrics, "is not text", 'pass measures such as "nDCG@10,Success@3", or ""')
    return parse_measures(metrics)


def _table(table_metrics: object) -> tuple[Measure, ...] | None:
    """The comparison table's columns a ``table_metrics`` parameter names, ``None`` for ``""`` (every measure)."""
    if table_metrics is None or table_metrics == "":
        return None
    if not isinstance(table_metrics, str):
        raise ParameterError(
            "table_metrics", table_metrics, "is not text", 'pass measures such as "P@5,R@5,nDCG@5", or ""'
        )
    return parse_measures(table_metrics, name="table_metrics")


def _with_table(measures: tuple[Measure, ...], table: tuple[Measure, ...]) -> tuple[Measure, ...]:
    """``measures`` and then the table's measures not among them (what ``--table-metrics`` adds to ``--metrics``)."""
    return (*measures, *(m for m in table if m not in measures))


def _load(collection: str | PathLike[str] | None, format: object = "auto") -> tuple[Collection, str]:
    if not isinstance(format, str):
        raise ParameterError("format", format, "is not text", 'pass a format name, or "auto"')
    if collection is None or collection == "":
        return load(default_collection_path(), format=format), SHIPPED
    if not isinstance(collection, (str, PathLike)):
        raise ParameterError(
            "collection",
            collection,
            "is not a path",
            'pass a collection folder or LoCoMo .json file, or "" for the shipped fixture',
        )
    return load(collection, format=format), str(collection)


def _output_dir(output_dir: object) -> Path | None:
    if output_dir is None or output_dir == "":
        return None
    if not isinstance(output_dir, (str, PathLike)):
        raise ParameterError(
            "output_dir", output_dir, "is not a path", 'pass a folder such as "reports", or "" to write nothing'
        )
    path = Path(output_dir)
    if path.exists() and not path.is_dir():
        raise ParameterError("output_dir", str(output_dir), "is a file", "pass a folder (it is created if missing)")
    return path


def _check_output(
    output_dir: Path | None,
    path: str | PathLike[str],
    loaded: Collection,
    runs: tuple[RunFile, ...],
    given: Mapping[str, str] | None = None,
    extra: Sequence[Path] = (),
) -> None:
    """The artifact the notebook will write must not be one of its inputs: the collection's files, the runs'
    files, the judgment patch and the claims file (``given``), the answer files and mapping files (``extra``)."""
    if output_dir is not None:
        inputs = [_found(p) for r in runs for p in (r.path, r.memories_path) if p is not None]
        inputs += [_found(p) for p in (given or {}).values()]
        inputs += list(extra)
        OutputPlan([*collection_inputs(path, loaded.files), *inputs]).file("output_dir", output_dir / ARTIFACT_NAME)


def _given_inputs(**paths: object) -> dict[str, str]:
    """The input-file parameters set (not ``""``), as given, by name (checked as paths by :func:`_input_path`)."""
    return {name: str(value) for name, value in paths.items() if _input_path(name, value) is not None}


def eval_setup(
    *,
    seed: object,
    k: object,
    collection: str | PathLike[str] | None,
    retrievers: object,
    output_dir: object,
    metrics: object = "",
    format: object = "auto",
    runs: object = "",
    memories: object = "",
    relevance: object = "",
    lenient_run: object = False,
    baseline: object = "",
    timings: object = False,
    as_of: object = False,
    systems: object = "",
    attribution: object = "auto",
    system_timeout: object = 300.0,
    lenient_system: object = False,
    qrels_patch: object = "",
    claims: object = "",
    table_metrics: object = "",
    workers: object = 1,
) -> EvalSetup:
    """Validate ``eval.ipynb``'s parameters and load the collection.

    Checks, in order: the evaluation's options (one
    :class:`~agentmemory.evaluation.options.EvalOptions`: ``seed`` an int >= 0,
    ``k`` an int >= 1, ``relevance``, ``metrics`` the measures beyond the
    defaults, ``""`` for none, names from the live measure registry, plugins
    included; ``lenient_run``, ``timings`` and ``as_of`` bools; ``baseline``
    text), ``retrievers`` (specs: registry names, names with parameters,
    ``module:attribute``; see :func:`agentmemory.retrievers.resolve_retrievers`),
    ``output_dir`` (``""``/``None`` to write nothing, else a folder), the runs
    (``runs`` and ``memories``, ``"name=path,..."``), that ``baseline`` names a
    system (``""``: the first), and the collection (loaded with
    :func:`agentmemory.datasets.load` in ``format``, ``"auto"`` to detect it).
    ``retrievers`` may be ``""`` when ``runs`` names a run.  ``claims``
    (checked with the options) and ``qrels_patch`` (checked against the
    loaded collection, then applied) are the paths of a claims file and a
    judgment patch, ``""`` for none (``agentmemory eval --claims`` and
    ``--qrels-patch``).  ``workers`` (an int >= 1) is the processes the
    memory systems' conversations are replayed in (``--workers``).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        table = _table(table_metrics)
        options, names, out, read, memory = _evaluation_parameters(
            seed=seed,
            k=k,
            retrievers=retrievers,
            output_dir=output_dir,
            metrics=metrics,
            runs=runs,
            memories=memories,
            relevance=relevance,
            lenient_run=lenient_run,
            baseline=baseline,
            timings=timings,
            as_of=as_of,
            systems=systems,
            attribution=attribution,
            system_timeout=system_timeout,
            lenient_system=lenient_system,
            claims=claims,
            table=table,
        )
        loaded, source = _load(collection, format)
        given = _given_inputs(qrels_patch=qrels_patch, claims=claims)
        _check_output(out, collection or default_collection_path(), loaded, read, given)
        require_judgments(loaded, collection or default_collection_path())
        loaded = _patched(loaded, qrels_patch)
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
        table,
        workers=_workers(workers),
    )


def _evaluation_parameters(
    *,
    seed: object,
    k: object,
    retrievers: object,
    output_dir: object,
    metrics: object,
    runs: object,
    memories: object,
    relevance: object,
    lenient_run: object,
    baseline: object,
    timings: object,
    as_of: object,
    systems: object,
    attribution: object,
    system_timeout: object,
    lenient_system: object,
    claims: object = "",
    table: tuple[Measure, ...] | None = None,
) -> tuple[EvalOptions, tuple[RetrieverSpec, ...], Path | None, tuple[RunFile, ...], tuple[SystemSpec, ...]]:
    """What ``eval.ipynb`` and ``collection.ipynb`` check alike: the options, retrievers, output folder, runs and
    memory systems."""
    memory = _memory_systems(systems)
    options = _options(
        seed=seed,
        k=k,
        metrics=metrics,
        relevance=relevance,
        lenient_run=lenient_run,
        baseline=baseline,
        timings=timings,
        as_of=as_of,
        attribution=attribution,
        system_timeout=system_timeout,
        lenient_system=lenient_system,
        claims=claims,
        with_systems=bool(memory),
        table=table or (),
    )
    names = _retrievers(retrievers, runs, memory)
    out = _output_dir(output_dir)
    return options, names, out, _runs(names, runs, memories, options, memory), memory


def _retrievers(retrievers: object, runs: object, memory: tuple[SystemSpec, ...] = ()) -> tuple[RetrieverSpec, ...]:
    """The retriever specs; ``""`` is none when ``runs`` names a run or ``systems`` a memory system."""
    if retrievers == "" and (runs not in ("", None) or memory):
        return ()
    return resolve_retrievers(retrievers)  # type: ignore[arg-type]


def explore_setup(
    *,
    collection: str | PathLike[str] | None,
    query: object,
    query_tags: object,
    k: object,
    explain_entry: object,
) -> ExploreSetup:
    """Validate ``explore.ipynb``'s parameters and load the collection.

    ``query`` must contain at least one token; ``query_tags`` is a
    comma-separated string (``""`` derives the tags from the query text);
    ``explain_entry`` is an entry id of the collection or ``""``.

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        checked_k = check_positive_int("k", k)
        if not isinstance(query, str):
            raise ParameterError("query", query, "is not text", "type a query such as 'what does Maya eat'")
        if not tokenize(query):
            raise ParameterError("query", query, "has no words", "type a query with at least one letter or digit")
        tags: tuple[str, ...] | None
        if query_tags is None or query_tags == "":
            tags = None
        elif isinstance(query_tags, str):
            tags = tuple(t.strip() for t in query_tags.split(",") if t.strip())
            if not tags:
                raise ParameterError(
                    "query_tags", query_tags, "names no tag", 'pass e.g. "diet,food", or "" to derive them'
                )
        else:
            raise ParameterError("query_tags", query_tags, "is not text", 'pass e.g. "diet,food", or "" to derive them')
        loaded, source = _load(collection)
        entry: str | None = None
        if explain_entry is not None and explain_entry != "":
            ids = [e.id for e in loaded.entries]
            if explain_entry not in ids:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                raise ParameterError(
                    "explain_entry",
                    explain_entry,
                    "is not an entry of the collection",
                    f'pass one of its {len(ids)} entry ids ({shown}), or "" for BM25\'s first hit',
                )
            entry = str(explain_entry)
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return ExploreSetup(loaded, source, query, tags, checked_k, entry)


def sample_collection_path(package_dir: str | PathLike[str] | None = None) -> Path:
    """The authored LoCoMo-shaped sample, ``fixtures/locomo-sample/locomo-sample.json``, found from any working directory.

    The sample lives in the source tree beside the package (a checkout or an
    editable install), not in the wheel.  It is looked for at
    ``<package_dir>/../fixtures/locomo-sample/locomo-sample.json``;
    ``package_dir`` defaults to the imported ``agentmemory`` folder.

    Raises:
        MissingFileError: the file is not there (for example an installed
            wheel); the message says to pass ``collection``.
    """
    here = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent.parent
    path = here.parent / SAMPLE_PATH
    if not path.is_file():
        raise MissingFileError(
            path,
            "file (the LoCoMo sample ships with a source checkout only, fixtures/ is not in the wheel); "
            "pass collection= the path of a LoCoMo .json file or a BEIR-style collection folder",
        )
    return path


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
    k: object,
    seed: object,
    retrievers: object,
    output_dir: object,
    metrics: object = "",
    runs: object = "",
    memories: object = "",
    relevance: object = "",
    lenient_run: object = False,
    baseline: object = "",
    timings: object = False,
    as_of: object = False,
    systems: object = "",
    attribution: object = "auto",
    system_timeout: object = 300.0,
    lenient_system: object = False,
    format_options: object = "",
    qrels_patch: object = "",
    claims: object = "",
    table_metrics: object = "",
    workers: object = 1,
) -> CollectionSetup:
    """Validate ``collection.ipynb``'s parameters and load the collection with :func:`agentmemory.datasets.load`.

    Checks, in order: the options, ``retrievers``, ``output_dir`` and the
    runs (as :func:`eval_setup`), then loads the collection: ``""``/``None`` is the
    LoCoMo sample (:func:`sample_collection_path`), any other value a path
    relative to the working directory; ``format`` (``"auto"`` or a registered
    name) and ``repair`` are checked by ``load``.  ``repair`` is the
    ``locomo`` format's option: ``False`` passes nothing (so any format
    loads), any other value is passed on and checked against the chosen
    format's declaration.  ``format_options`` is the format's other options,
    comma-separated ``KEY=VALUE`` pairs read with their declared types, as
    ``--format-option`` reads them (``"granularity=turn,all_turns=true"`` for
    LongMemEval); an option the format does not take is refused by ``load``,
    naming those it does.  ``qrels_patch``, ``claims`` and ``workers`` as in :func:`eval_setup`.

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        table = _table(table_metrics)
        options, names, out, read, memory = _evaluation_parameters(
            seed=seed,
            k=k,
            retrievers=retrievers,
            output_dir=output_dir,
            metrics=metrics,
            runs=runs,
            memories=memories,
            relevance=relevance,
            lenient_run=lenient_run,
            baseline=baseline,
            timings=timings,
            as_of=as_of,
            systems=systems,
            attribution=attribution,
            system_timeout=system_timeout,
            lenient_system=lenient_system,
            claims=claims,
            table=table,
        )
        read_collection = _read_collection(collection, format, format_options, repair)
        path, loaded = read_collection.path, read_collection.collection
        inputs = _given_inputs(qrels_patch=qrels_patch, claims=claims)
        _check_output(out, path, loaded, read, inputs)
        require_judgments(loaded, path)
        loaded = _patched(loaded, qrels_patch)
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
        table,
        workers=_workers(workers),
    )


class _ReadCollection(NamedTuple):
    """A collection as ``collection.ipynb`` and ``answers.ipynb`` read it: where from, named how, in which format."""

    path: Path
    source: str
    cli_path: str
    format: str
    options: dict[str, Any]
    collection: Collection


def _read_collection(collection: object, format: object, format_options: object, repair: object) -> _ReadCollection:
    """The ``collection``, ``format``, ``format_options`` and ``repair`` parameters read and the collection loaded
    (``""``: the LoCoMo sample); ``format`` ``"auto"`` detected, ``repair`` passed on unless ``False``."""
    path, source, cli_path = _collection_source(collection)
    resolved = (
        detect_format(path, names={"path": "collection = ", "format": "format ="}) if format == "auto" else format
    )
    given = _format_options(format_options, resolved, repair)
    format_args = {**given, **({} if repair is False else {"repair": repair})}
    loaded = load(path, format=resolved, **format_args)  # type: ignore[arg-type]
    return _ReadCollection(path, source, cli_path, str(resolved), given, loaded)


def _workers(workers: object) -> int:
    """``workers``: an int >= 1, the processes a memory system's conversations are replayed in."""
    try:
        return check_positive_int("workers", workers)
    except ParameterError as err:
        raise ReportParameterError(err) from err


def _collection_source(collection: object) -> tuple[Path, str, str]:
    """``collection.ipynb``'s collection: its path, how it is named in the report, and the path for the command line."""
    if collection is None or collection == "":
        return sample_collection_path(), SAMPLE, SAMPLE_PATH
    if isinstance(collection, (str, PathLike)):
        return _found(str(collection)), str(collection), str(collection)  # fixtures/... works from any folder
    raise ParameterError(
        "collection",
        collection,
        "is not a path",
        'pass a LoCoMo .json file or a collection folder, or "" for the LoCoMo sample',
    )


def _format_options(text: object, format_name: object, repair: object) -> dict[str, Any]:
    """``format_options`` read as ``KEY=VALUE`` pairs with ``format_name``'s declared types (empty: none)."""
    if not isinstance(text, str) or "\n" in text:
        raise ParameterError(
            "format_options", text, "is not one line of text", 'pass KEY=VALUE pairs, comma-separated, or ""'
        )
    pairs = [p.strip() for p in text.split(",")] if text.strip() else []
    if not isinstance(format_name, str) or format_name not in FORMATS:
        if pairs:  # load names the unknown format; its options cannot be read without it
            raise UnknownNameError("format", format_name, [*FORMATS.names(), "auto"])
        return {}
    options = FORMATS[format_name].parse_options(pairs, "format_options")
    if "repair" in options and repair is not False:
        raise ParameterError(
            "format_options", text, "sets repair a second time", "set repair with the repair parameter only"
        )
    return options


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
    baseline: object,
    table_metrics: object,
    k: object,
    seed: object,
    attribution: object,
    qrels_patch: object,
    claims: object,
    output_dir: object,
) -> AnswersSetup:
    """Validate ``answers.ipynb``'s parameters, read the answer files and load the collection.

    Checks, in order: ``table_metrics``, the answer parameters
    (:func:`read_answers_parameters`: ``""`` means the authored samples when
    ``collection`` is ``""`` too), ``retrievers`` (``""`` for none, or specs
    as in :func:`eval_setup`: ``"bm25"`` sets a retriever's top k beside the
    systems' answers), the options (``k``, ``seed``, ``attribution``,
    ``claims``; relevance is ``provenance`` when an answer file carries
    retrieved memories, as ``agentmemory eval --answers`` judges them),
    ``baseline`` (a system's name; ``""``: the first system of ``answers``,
    so the answer measures have a baseline), ``output_dir``, then the
    collection as :func:`collection_setup` loads it (``format``,
    ``format_options``, ``repair``) and the judgment patch ``qrels_patch``
    (answer, exclusion and evidence lines, or locomo-audit's errata file).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        table = _table(table_metrics)
        read = read_answers_parameters(answers, answers_format, answers_mapping, sample=collection in ("", None))
        names = () if retrievers in ("", None) else resolve_retrievers(retrievers)  # type: ignore[arg-type]
        if not isinstance(baseline, str):
            raise ParameterError("baseline", baseline, "is not text", 'pass a system\'s name, or "" for the first')
        options = EvalOptions(
            k=k,  # type: ignore[arg-type]  # checked by the record
            seed=seed,  # type: ignore[arg-type]
            relevance="provenance" if read.has_retrieval else "direct",
            measures=_with_table((), table or ()),
            baseline=baseline or read.names[0],
            attribution=attribution,  # type: ignore[arg-type]
            claims=_input_path("claims", claims),
        )
        options.check_baseline([(r.key, r.label) for r in names] + [(n, n) for n in read.names])
        out = _output_dir(output_dir)
        read_collection = _read_collection(collection, format, format_options, repair)
        path, loaded = read_collection.path, read_collection.collection
        inputs = _given_inputs(qrels_patch=qrels_patch, claims=claims)
        _check_output(out, path, loaded, (), inputs, read.paths)
        require_judgments(loaded, path)
        loaded = _patched(loaded, qrels_patch)
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
        table,
    )


class SweepConfig(NamedTuple):
    """One synthetic collection shape of the seed sweep: entries and queries."""

    n_entries: int
    n_queries: int

    def __str__(self) -> str:
        return f"{self.n_entries} entries, {self.n_queries} queries"


@dataclass(frozen=True)
class SweepSetup:
    """The validated parameters of ``sweep.ipynb``.

    ``collection`` is the collection of the k sweep (``source`` as given);
    ``ks`` the cutoffs ``1 .. k_max``; ``seeds`` the synthetic generator
    seeds; ``configs`` the collection shapes, in the order given;
    ``seed`` the run seed of the k sweep (it names event ids only: no
    ranking depends on it).
    """

    collection: Collection
    source: str
    ks: tuple[int, ...]
    k: int
    seeds: tuple[int, ...]
    configs: tuple[SweepConfig, ...]
    mismatch_rate: float
    retrievers: tuple[RetrieverSpec, ...]
    progress: bool
    seed: int = 7


_SEEDS_HELP = 'pass a number of seeds such as 20 (seeds 0..19) or an inclusive range such as "100-199"'


def parse_seeds(seeds: object) -> tuple[int, ...]:
    """The generator seeds a ``seeds`` parameter names.

    An integer ``N >= 1`` (or its text, ``"20"``) means the seeds ``0 .. N-1``;
    the text ``"a-b"`` with ``0 <= a <= b`` means ``a .. b`` inclusive.  Text
    is ASCII digits only (:mod:`agentmemory.files.numbers`: no white space, no
    underscores, no other scripts' digits).

    Raises:
        ParameterError: anything else.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, (int, str)):
        raise ParameterError("seeds", seeds, "is not a count or a range", _SEEDS_HELP)
    if isinstance(seeds, int):
        return tuple(range(check_positive_int("seeds", seeds)))
    match = _SEEDS.fullmatch(seeds)
    if match is None:
        raise ParameterError("seeds", seeds, "is not a count or a range", _SEEDS_HELP)
    try:
        low = parse_integer(match[1])
        high = None if match[2] is None else parse_integer(match[2])
    except NumberTextError as err:
        raise ParameterError("seeds", seeds, err.problem, _SEEDS_HELP) from None
    if high is None:
        if low < 1:
            raise ParameterError("seeds", seeds, "is less than 1", _SEEDS_HELP)
        return tuple(range(low))
    if low > high:
        raise ParameterError("seeds", seeds, "is an empty range", "the range's start must not exceed its end")
    return tuple(range(low, high + 1))


_SEEDS = re.compile(r"([0-9]+)(?:-([0-9]+))?", re.ASCII)


def _int_list(name: str, value: object, example: str) -> list[int]:
    """Comma-separated integers >= 1 (each by :func:`agentmemory.files.numbers.parse_integer`; spaces after commas allowed)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ParameterError(name, value, "is not a comma-separated list of integers", f"pass e.g. {quote(example)}")
    if isinstance(value, int):
        return [check_positive_int(name, value)]
    numbers = []
    for item in value.split(","):
        try:
            numbers.append(parse_integer(item.strip(" ")))
        except NumberTextError:
            raise ParameterError(
                name, value, "is not a comma-separated list of integers", f"pass e.g. {quote(example)}"
            ) from None
    return [check_positive_int(f"{name} item", n) for n in numbers]


def _configs(sizes: object, queries: object) -> tuple[SweepConfig, ...]:
    entries = _int_list("sizes", sizes, "16,200")
    counts = _int_list("queries", queries, "5,50")
    if len(counts) == 1:
        counts = counts * len(entries)
    if len(counts) != len(entries):
        raise ParameterError(
            "queries",
            queries,
            f"names {len(counts)} counts for {len(entries)} sizes",
            "give one number of queries for every size, or one per size",
        )
    configs = [SweepConfig(n, q) for n, q in zip(entries, counts)]
    repeated = next((c for i, c in enumerate(configs) if c in configs[:i]), None)
    if repeated is not None:
        raise ParameterError(
            "sizes", sizes, f"repeats the collection shape ({repeated})", "list each size and query count once"
        )
    return tuple(configs)


def _mismatch_rate(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ParameterError("mismatch_rate", value, "is not a probability", "use a number in [0, 1], e.g. 0.2")
    return float(value)


def sweep_setup(
    *,
    collection: str | PathLike[str] | None,
    k_max: object,
    k: object,
    seeds: object,
    sizes: object,
    queries: object,
    mismatch_rate: object,
    retrievers: object,
    progress: object,
) -> SweepSetup:
    """Validate ``sweep.ipynb``'s parameters and load the k sweep's collection.

    Checks, in order: ``k_max`` and ``k`` (integers >= 1), ``seeds``
    (:func:`parse_seeds`), ``sizes`` and ``queries`` (comma-separated
    integers >= 1, ``queries`` one for all sizes or one per size, no shape
    twice), ``mismatch_rate`` (in [0, 1]), ``retrievers``, ``progress`` (a
    bool), that :func:`agentmemory.datasets.synthetic.synthetic_collection` accepts
    every shape, and the collection (``""`` the shipped fixture, else any
    path :func:`agentmemory.datasets.load` reads).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        top = check_positive_int("k_max", k_max)
        cutoff = check_positive_int("k", k)
        seed_list = parse_seeds(seeds)
        configs = _configs(sizes, queries)
        rate = _mismatch_rate(mismatch_rate)
        names = resolve_retrievers(retrievers)  # type: ignore[arg-type]
        if not isinstance(progress, bool):
            raise ParameterError("progress", progress, "is not a bool", "pass True or False")
        for config in configs:
            try:
                synthetic_collection(
                    seed=seed_list[0], n_entries=config.n_entries, n_queries=config.n_queries, mismatch_rate=rate
                )
            except ParameterError as err:
                if err.name != "n_entries":
                    raise
                raise ParameterError(
                    "sizes", sizes, f"cannot hold {config.n_queries} queries in {config.n_entries} entries", err.allowed
                ) from None
        if collection is None or collection == "":
            loaded, source = load(default_collection_path()), SHIPPED
        elif isinstance(collection, (str, PathLike)):
            loaded, source = load(collection), str(collection)
        else:
            raise ParameterError(
                "collection", collection, "is not a path", 'pass a collection folder, or "" for the shipped fixture'
            )
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return SweepSetup(loaded, source, tuple(range(1, top + 1)), cutoff, seed_list, configs, rate, names, progress)
