"""What the notebooks' parameter checks share (:mod:`agentmemory.report.params`): the evaluation's settings read
from their declaration, input paths found from any folder, the collection loaded, the output folder checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.answers.records import AnswerFile
from agentmemory.collection import Collection, default_collection_path
from agentmemory.datasets import FORMATS, detect_format, load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import (
    MissingFileError,
    ParameterError,
    ReportParameterError,
    UnknownNameError,
    check_positive_int,
)
from agentmemory.evaluation.answer_runs import AnswersSpec
from agentmemory.evaluation.options import EvalOptions, options_from_settings, resolve_relevance
from agentmemory.evaluation.runfiles import RunFile, parse_run_option, read_run_file
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.settings import SETTINGS
from agentmemory.evaluation.system_runs import is_system_memories, replay_pool
from agentmemory.files.output_plan import OutputPlan, collection_inputs
from agentmemory.metrics import Measure
from agentmemory.report.results import ARTIFACT_NAME, SHIPPED
from agentmemory.retrievers import RetrieverSpec
from agentmemory.retrievers.spec import split_specs
from agentmemory.systems.registry import SystemSpec, resolve_systems

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


_PARAMETERS = {s.parameter: s.name for s in SETTINGS}
"""Each setting's notebook parameter -> its field (``metrics`` -> ``measures``): every declared setting is one."""


def _options(settings: Mapping[str, object], where: str, *, attributed: bool) -> EvalOptions:
    """The notebook's setting parameters (:data:`~agentmemory.evaluation.settings.SETTINGS`, by their parameter
    names) as one :class:`~agentmemory.evaluation.options.EvalOptions`, read as the declaration says (``""`` for
    none) and named in messages by the parameters; ``claims`` and ``qrels_patch`` are paths found as the runs are
    (:func:`_found`); relevance resolved (:func:`~agentmemory.evaluation.options.resolve_relevance`: provenance
    when memories are ``attributed``)."""
    unknown = sorted(set(settings) - set(_PARAMETERS))
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    baseline = settings.get("baseline", "")
    if not isinstance(baseline, str):
        raise ParameterError("baseline", baseline, "is not text", 'pass a system\'s name, or "" for the first')
    given = {_PARAMETERS[name]: value for name, value in settings.items()}
    for name in ("claims", "qrels_patch"):
        given[name] = _input_path(name, given.get(name, ""))
    options = options_from_settings(given, "parameter")
    return replace(options, relevance=resolve_relevance(options.relevance, attributed=attributed))


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
        return Systems(self.runs, o.mode, o.lenient_run, o.baseline, o.timings, o.as_of)

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


def _given_inputs(settings: Mapping[str, object]) -> dict[str, str]:
    """The input-file parameters set (``qrels_patch`` and ``claims``, not ``""``), as given, by name."""
    paths = {name: settings.get(name, "") for name in ("qrels_patch", "claims")}
    return {name: str(value) for name, value in paths.items() if _input_path(name, value) is not None}


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
