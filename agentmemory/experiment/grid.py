"""Grid files: what an experiment evaluates, read from TOML into typed records.

A grid names **collections** (a path, a format and its options), **systems**
(retriever specs, and run files bound to the collection they were made for),
cutoffs ``k``, ``seeds`` and extra ``measures``.  The tasks are the cross
product ``collection x system x k x seed`` (each collection with its own
systems, or the grid's), plus any tasks listed one by one.  Example
(``examples/grid.toml`` is a complete one)::

    name = "bm25-tuning"                # default: the file's name without .toml
    k = [5, 10]                         # an integer or a list (default 5)
    seeds = [7]                         # an integer or a list (default 7)
    measures = ["Success@1"]            # beyond P@k, R@k, RR, RR@k, nDCG@k and AP@k
    relevance = "direct"                # or "provenance" (agentmemory.evaluation.options.RELEVANCE_MODES)
    systems = [
        "tags",                                                        # a retriever spec
        { retriever = "bm25", grid = { k1 = [0.9, 1.2], b = [0.4, 0.75] } },   # 4 specs
    ]

    [statistics]                        # every key optional
    baseline = "tags"                   # default: default BM25 (bm25) when held, else the first system
    comparisons = "baseline"            # or "all": also every pair of systems
    confidence = 0.95
    alpha = 0.05
    n_resamples = 10000                 # Holm over m comparisons needs 2 m / (n_resamples + 1) <= alpha

    [[collections]]
    path = "../fixtures/assistant-notes"   # relative to the grid file's folder
    name = "notes"                          # default: the path's last part

    [[collections]]
    path = "../fixtures/locomo-sample/locomo-sample.json"
    format = "locomo"                       # default "auto"
    options = { repair = true }             # the format's declared options
    relevance = "provenance"                # default: the grid's relevance
    systems = ["bm25"]                      # instead of the grid's systems
    runs = [{ name = "mine", path = "runs/mine.trec", memories = "runs/mine-memories.jsonl", lenient = false }]
    answers = [{ name = "zep", paths = ["zep/zep_locomo_grades.json"], format = "zep" }]

    [[tasks]]                               # one task more, outside the cross product
    collection = "notes"
    system = "bm25[k1=2.0]"
    k = 3
    seed = 7

A system table ``{ retriever = NAME, params = {...}, grid = {...} }`` gives
one spec per combination of the ``grid`` values (the cross product, in the
order written), each with the fixed ``params`` too.  A table
``{ system = SPEC }`` is a memory system (``agentmemory eval --system``'s
specs: ``"agentrecall"``, ``"mcp[profile=server-memory]"``,
``"package.module:attribute"``), replayed over the collection by each of its
tasks under the collection's ``relevance`` (its own, else the grid's) and attribution ``auto``; ``[[tasks]]``
name retrievers, runs and answer systems only.  A run file belongs to
its collection: it is never crossed with another one.  So does an **answer
system** (``answers``: other harnesses' answer files, one per seed, read as
``agentmemory eval --answers NAME=FILE[,FILE...]`` with ``--answers-format``
and ``--answers-mapping`` reads them, :mod:`agentmemory.evaluation.answer_runs`).

:data:`GRID_KEYS` declares every key of every table, once; :func:`read_grid` reads and checks a file;
:func:`parse_grid` the text.
Every problem is an :class:`~agentmemory.errors.InputError` naming the file
and, where it can be found, the line: TOML syntax (line and column), an
unknown key (with the allowed ones), a value of the wrong type, a spec or
measure the registries do not know, a path that does not exist, an empty
cross product.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from agentmemory.answers import ANSWER_FORMATS
from agentmemory.errors import AgentMemoryError, InputError, MissingFileError, ParameterError, UnknownNameError
from agentmemory.evaluation.options import RELEVANCE_MODES, EvalOptions, options_from_settings
from agentmemory.evaluation.settings import SETTINGS, Setting
from agentmemory.metrics import parse_measures
from agentmemory.retrievers import RetrieverSpec, full_label, resolve_retriever
from agentmemory.retrievers.spec import format_value
from agentmemory.systems.registry import resolve_system

__all__ = [
    "COMPARISONS",
    "GRID_KEYS",
    "GRID_TABLES",
    "AnswersDef",
    "CollectionDef",
    "Grid",
    "GridKey",
    "GridTask",
    "RunDef",
    "StatisticsOptions",
    "SystemDef",
    "parse_grid",
    "read_grid",
]

COMPARISONS = ("baseline", "all")
"""What ``[statistics] comparisons`` takes: the table's tests against the baseline only, or every pair too."""


class GridKey(NamedTuple):
    """One key a grid file may hold: the table it belongs to, its name, what it takes, its default, its meaning.

    ``table`` is one of :data:`GRID_TABLES`; ``type`` and ``default`` are written as in the TOML file
    (``default`` is ``"required"`` for a key that must be given, ``""`` for one that is simply left out).
    """

    table: str
    name: str
    type: str
    default: str
    help: str


GRID_TABLES: dict[str, str] = {
    "grid": "the grid (top level)",
    "statistics": "[statistics]",
    "collections": "[[collections]]",
    "runs": "runs = [{ ... }] of a collection",
    "answers": "answers = [{ ... }] of a collection",
    "systems": "a system table { retriever = ... }",
    "tasks": "[[tasks]]",
}
"""Each table of a grid file, by the name :attr:`GridKey.table` uses, and how a grid file writes it."""

GRID_KEYS: tuple[GridKey, ...] = (
    GridKey(
        "grid",
        "name",
        "string",
        "the file's name without .toml",
        "the grid's name, one folder name (letters, digits, '.', '_' and '-', starting with a letter or "
        "digit); the default output is experiments/<name>",
    ),
    GridKey("grid", "k", "integer >= 1, or a list of them", "5", "the cutoffs"),
    GridKey("grid", "seeds", "integer >= 0, or a list of them", "7", "the seeds"),
    GridKey(
        "grid",
        "measures",
        "list of measure names",
        "[]",
        "measures beyond P@k, R@k, RR, RR@k, nDCG@k and AP@k (names and aliases from the measure registry)",
    ),
    GridKey(
        "grid",
        "relevance",
        "string",
        '"direct"',
        f"how a hit counts, as --relevance: one of {', '.join(RELEVANCE_MODES)} (direct: only the judged entry "
        "itself; provenance: a memory counts through the judged sources it was derived from)",
    ),
    GridKey(
        "grid",
        "systems",
        "list of retriever specs or system tables",
        "[]",
        "the systems of every collection without its own",
    ),
    GridKey("grid", "statistics", "table", "", "the [statistics] table"),
    GridKey("grid", "collections", "array of tables", "required", "the [[collections]] tables (at least one)"),
    GridKey("grid", "tasks", "array of tables", "", "the [[tasks]] tables: tasks outside the cross product"),
    GridKey(
        "statistics",
        "baseline",
        "string",
        "default BM25 (bm25) when held, else the first system",
        "the comparison tables' baseline: a retriever spec, its label or a run's name",
    ),
    GridKey(
        "statistics",
        "comparisons",
        "string",
        '"baseline"',
        '"baseline" tests each system against the baseline; "all" every pair of systems too',
    ),
    GridKey(
        "statistics", "confidence", "number strictly between 0 and 1", "0.95", "the bootstrap intervals' confidence"
    ),
    GridKey("statistics", "alpha", "number strictly between 0 and 1", "0.05", "the paired tests' significance level"),
    GridKey("statistics", "n_resamples", "integer >= 1", "10000", "the bootstrap resamples"),
    GridKey(
        "collections",
        "path",
        "string",
        "required",
        "the collection's folder or file, relative to the grid file's folder",
    ),
    GridKey(
        "collections",
        "name",
        "string",
        "the path's last part, made filename-safe",
        "its name in results and file names (letters, digits, '.', '_' and '-')",
    ),
    GridKey("collections", "format", "string", '"auto"', "its format, a name of the format registry"),
    GridKey(
        "collections",
        "relevance",
        "string",
        "the grid's relevance",
        f"how a hit counts in this collection's tasks, instead of the grid's: one of {', '.join(RELEVANCE_MODES)}",
    ),
    GridKey("collections", "options", "table", "{}", "the format's declared options: options = { repair = true }"),
    GridKey(
        "collections",
        "systems",
        "list of retriever specs or system tables",
        "the grid's systems",
        "its own systems, instead of the grid's",
    ),
    GridKey(
        "collections",
        "runs",
        "list of run tables",
        "[]",
        "its run files (the table below); a run is never crossed with another collection",
    ),
    GridKey("runs", "name", "string", "required", "the run's system name (no space, comma, bracket or '=')"),
    GridKey(
        "runs", "path", "string", "required", "the run file, TREC or JSON lines, relative to the grid file's folder"
    ),
    GridKey(
        "runs",
        "memories",
        "string",
        "",
        "the run's own memories (JSON lines: _id, text, derived_from), as --memories; relative to the grid "
        "file's folder",
    ),
    GridKey(
        "collections",
        "answers",
        "list of answer tables",
        "[]",
        "other harnesses' per-question answer files, each table one system scored on its answers, verdicts and "
        "retrieved memories (the table below), as agentmemory eval --answers; never crossed with another "
        "collection",
    ),
    GridKey(
        "runs", "lenient", "boolean", "false", "true drops the run's unusable lines and lists each, as --lenient-run"
    ),
    GridKey(
        "answers",
        "name",
        "string",
        "required",
        "the system's name (no space, comma, bracket or '='), as --answers NAME=",
    ),
    GridKey(
        "answers",
        "paths",
        "list of strings",
        "required",
        "its answer files, one per seed (several: seeds of one system, each question's value their mean), relative "
        "to the grid file's folder; a reader finds a file's companions beside it (zep's responses and search results)",
    ),
    GridKey(
        "answers",
        "format",
        "string",
        '"auto"',
        "the files' answer format, a name of the answer-format registry, as --answers-format (auto: each file's "
        "shape tells)",
    ),
    GridKey(
        "answers",
        "mapping",
        "string",
        "",
        "a mapping file (TOML) describing files no reader knows, as --answers-mapping; relative to the grid file's "
        "folder",
    ),
    GridKey(
        "systems", "retriever", "string", "required", "the retriever's registered name or package.module:attribute"
    ),
    GridKey("systems", "params", "table", "{}", "fixed parameters of every spec the table makes"),
    GridKey(
        "systems",
        "grid",
        "table of lists",
        "{}",
        "parameter = [values]: one spec per combination, the cross product in the order written",
    ),
    GridKey("tasks", "collection", "string", "required", "a collection's name"),
    GridKey(
        "tasks",
        "system",
        "string",
        "required",
        "a retriever spec, or one of that collection's run or answer-system names",
    ),
    GridKey("tasks", "k", "integer >= 1", "required", "the cutoff"),
    GridKey("tasks", "seed", "integer >= 0", "required", "the seed"),
)
_AXES = {"k", "seeds", "measures", "relevance"}  # settings the grid reads its own way (lists, per collection)
_KIND_TYPES = {
    "int": "integer",
    "seconds": "number > 0",
    "bool": "boolean",
    "text": "string",
    "name": "string",
    "path": "string (a path, relative to the grid file's folder)",
    "measures": "list of measure names",
    "specs": "list of specs",
}


def _setting_key(s: Setting) -> GridKey:
    default = "" if s.default in ("", None) else str(s.default).lower() if s.kind == "bool" else repr(s.default)
    return GridKey("grid", s.grid, _KIND_TYPES[s.kind], default.replace("'", '"'), f"as {s.flag}: {s.help}")


GRID_KEYS += tuple(_setting_key(s) for s in SETTINGS if s.grid not in _AXES and "." not in s.grid)  # declared once
"""Every key of a grid file, declared once: the reader accepts exactly these (the allowed keys its errors list
are built from here) and the documentation's table of grid keys is generated from here."""


def _allowed(table: str) -> tuple[str, ...]:
    """The keys of one table, in the order the reader's errors list them (sorted)."""
    return tuple(sorted(key.name for key in GRID_KEYS if key.table == table))


_TOP_KEYS = _allowed("grid")
_COLLECTION_KEYS = _allowed("collections")
_RUN_KEYS = _allowed("runs")
_ANSWER_KEYS = _allowed("answers")
_SYSTEM_KEYS = _allowed("systems")
_STATISTICS_KEYS = _allowed("statistics")
_TASK_KEYS = _allowed("tasks")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_END = " (at end of document)"


@dataclass(frozen=True)
class SystemDef:
    """A system of the grid: the spec as written and as resolved (its ``key`` and ``label``).

    ``kind`` is ``"retriever"``, or ``"system"`` for a memory system (``{ system = SPEC }``,
    :func:`agentmemory.systems.registry.resolve_system`), replayed over the collection by its task.
    """

    text: str
    key: str
    label: str
    kind: str = "retriever"


@dataclass(frozen=True)
class RunDef:
    """A run file bound to one collection: its system name, the file, its memories, and whether lenient."""

    name: str
    path: Path
    memories: Path | None = None
    lenient: bool = False


@dataclass(frozen=True)
class AnswersDef:
    """An answer system bound to one collection: its name, its files (one per seed, resolved against the grid
    file's folder), the answer format (``None``: detected from each file), a mapping file, and the grid file's
    line that names it (for the messages of reading it)."""

    name: str
    paths: tuple[Path, ...]
    format: str | None = None
    mapping: Path | None = None
    line: int | None = None


@dataclass(frozen=True)
class CollectionDef:
    """One collection of the grid: ``path`` resolved against the grid file's folder, ``given`` as written.

    ``systems`` are its own retrievers (``None``: the grid's); ``runs`` its run files; ``relevance`` its own
    relevance mode (``None``: the grid's); ``answers`` its answer systems.
    """

    name: str
    path: Path
    given: str
    format: str = "auto"
    options: Mapping[str, Any] | None = None
    systems: tuple[SystemDef, ...] | None = None
    runs: tuple[RunDef, ...] = ()
    line: int | None = None
    relevance: str | None = None
    answers: tuple[AnswersDef, ...] = ()

    @property
    def bound(self) -> tuple[str, ...]:
        """The names of the systems bound to it: its runs, then its answer systems."""
        return tuple(r.name for r in self.runs) + tuple(a.name for a in self.answers)


@dataclass(frozen=True)
class GridTask:
    """A task listed one by one under ``[[tasks]]``: a collection's name, a system (spec or run name), k, seed."""

    collection: str
    system: str
    k: int
    seed: int
    line: int | None = None


@dataclass(frozen=True)
class StatisticsOptions:
    """``[statistics]``: the comparison tables' baseline and which tests are made, with their parameters."""

    baseline: str | None = None
    comparisons: str = "baseline"
    confidence: float = 0.95
    alpha: float = 0.05
    n_resamples: int = 10_000

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "comparisons": self.comparisons,
            "confidence": self.confidence,
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
        }


@dataclass(frozen=True)
class Grid:
    """A checked grid file (see the module docstring); ``source`` is the file, for messages."""

    name: str
    source: str
    collections: tuple[CollectionDef, ...]
    systems: tuple[SystemDef, ...] = ()
    k: tuple[int, ...] = (5,)
    seeds: tuple[int, ...] = (7,)
    measures: tuple[str, ...] = ()
    relevance: str = "direct"
    statistics: StatisticsOptions = StatisticsOptions()
    tasks: tuple[GridTask, ...] = ()
    settings: tuple[tuple[str, Any], ...] = ()
    """The other settings given (:data:`~agentmemory.evaluation.settings.SETTINGS`), by field, as read; every task
    is evaluated with them."""

    def collection(self, name: str) -> CollectionDef:
        return next(c for c in self.collections if c.name == name)

    def relevance_of(self, name: str) -> str:
        """The relevance mode of collection ``name``'s tasks: its own, else the grid's."""
        return self.collection(name).relevance or self.relevance


class _Locator:
    """Best-effort line numbers of keys in the TOML text (tomllib reports none for valid files)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def _headers(self, table: str) -> list[int]:
        pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
        return [i for i, line in enumerate(self.lines) if pattern.match(line)]

    def _key_in(self, key: str, start: int, stop: int) -> int | None:
        pattern = re.compile(rf"(^|[{{,\s]){re.escape(key)}\s*=")
        for i in range(start, min(stop, len(self.lines))):
            if pattern.search(self.lines[i].split("#", 1)[0]):
                return i + 1
        return None

    def _next_header(self, start: int) -> int:
        for i in range(start, len(self.lines)):
            if self.lines[i].lstrip().startswith("["):
                return i
        return len(self.lines)

    def top(self, key: str) -> int | None:
        """The line of a top-level key, or of a table ``[key]``/``[[key]]``."""
        headers = self._headers(key)
        if headers:
            return headers[0] + 1
        return self._key_in(key, 0, self._next_header(0)) or self._key_in(key, 0, len(self.lines))

    def item(self, table: str, index: int, key: str | None = None) -> int | None:
        """The line of ``key`` in the ``index``-th ``[[table]]`` (or of its header), else of ``table``."""
        headers = self._headers(table)
        if index < len(headers):
            start = headers[index]
            if key is None:
                return start + 1
            return self._key_in(key, start + 1, self._next_header(start + 1)) or start + 1
        return self.top(table)


class _Reader:
    """Checks the parsed TOML and builds the records; every error names the file and line."""

    def __init__(self, source: str, text: str, base: Path) -> None:
        self.source = source
        self.where = _Locator(text)
        self.base = base

    def fail(self, line: int | None, message: str) -> InputError:
        return InputError(self.source, line, message)

    def keys(
        self, table: Mapping[str, Any], allowed: Sequence[str], what: str, locate: Callable[[str], int | None]
    ) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(locate(key), f"unknown key {key!r} in {what}; allowed: {', '.join(allowed)}")

    def ints(self, value: object, name: str, minimum: int, line: int | None) -> tuple[int, ...]:
        items = value if isinstance(value, list) else [value]
        what = "an integer >= 1" if minimum == 1 else "an integer >= 0"
        for item in items:
            if isinstance(item, bool) or not isinstance(item, int) or item < minimum:
                raise self.fail(
                    line, f"{name}: {item!r} ({type(item).__name__}) is not {what}; write {what} or a list of them"
                )
        if len(set(items)) != len(items):
            raise self.fail(line, f"{name}: {items!r} lists a value twice; list each once")
        return tuple(items)

    def string(self, value: object, name: str, line: int | None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(line, f"{name}: {value!r} ({type(value).__name__}) is not a non-empty string")
        return value

    def table(self, value: object, name: str, line: int | None) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(
                line, f"{name}: {value!r} ({type(value).__name__}) is not a table; write {name} = {{ ... }}"
            )
        return value

    def path(self, value: object, name: str, line: int | None, what: str) -> tuple[Path, str]:
        given = self.string(value, name, line)
        path = Path(given).expanduser()
        resolved = path if path.is_absolute() else self.base / path
        if not resolved.exists():
            raise self.fail(
                line,
                f"{name}: {given!r} does not exist (looked for {str(resolved)!r}: a relative path is read from the "
                f"grid file's folder); point it at the {what}",
            )
        return resolved, given

    def spec(self, text: str, name: str, line: int | None) -> SystemDef:
        try:
            spec: RetrieverSpec = resolve_retriever(text, option=name)  # its messages name the grid's key
        except AgentMemoryError as err:
            raise self.fail(line, _named(err, name)) from None
        return SystemDef(text, spec.key, spec.label)

    def systems(self, value: object, name: str, line: int | None) -> tuple[SystemDef, ...]:
        if not isinstance(value, list):
            raise self.fail(line, f"{name}: {value!r} ({type(value).__name__}) is not a list of retriever specs")
        out: list[SystemDef] = []
        for item in value:
            if isinstance(item, str):
                out.append(self.spec(item, name, line))
            elif isinstance(item, dict) and "system" in item:
                out.append(self.memory_system(item, name, line))
            elif isinstance(item, dict):
                out.extend(self.spec(text, name, line) for text in self.expand(item, name, line))
            else:
                raise self.fail(
                    line,
                    f"{name}: {item!r} ({type(item).__name__}) is not a retriever spec; write a spec such as "
                    '"bm25[k1=0.9]" or a table { retriever = "bm25", grid = { k1 = [0.9, 1.2] } }',
                )
        return tuple(out)

    def memory_system(self, item: Mapping[str, Any], name: str, line: int | None) -> SystemDef:
        """``{ system = SPEC }``: a memory system (its only key), resolved as ``agentmemory eval --system`` does."""
        self.keys(item, ("system",), f"a memory-system table of {name}", lambda _: line)
        text = self.string(item["system"], f"{name} system", line)
        try:
            spec = resolve_system(text, option=f"{name} system")  # its messages name the grid's key
        except AgentMemoryError as err:
            raise self.fail(line, _named(err, f"{name} system")) from None
        return SystemDef(text, spec.key, spec.label, "system")

    def expand(self, item: Mapping[str, Any], name: str, line: int | None) -> list[str]:
        """The specs of a system table: the cross product of its ``grid`` values, with its fixed ``params``."""
        self.keys(item, _SYSTEM_KEYS, f"a system table of {name}", lambda _: line)
        target = self.string(item.get("retriever"), f"{name} retriever", line)
        params = dict(self.table(item.get("params", {}), f"{name} params", line))
        grid = self.table(item.get("grid", {}), f"{name} grid", line)
        for key, value in params.items():
            if _empty(value):
                raise self.fail(line, f"{name} params: {key} = {value!r} is empty; give a value, or leave {key} out")
        axes: list[list[tuple[str, Any]]] = []
        for key, values in grid.items():
            if not isinstance(values, list) or not values:
                raise self.fail(
                    line, f"{name} grid: {key} = {values!r} is not a non-empty list; write {key} = [value, ...]"
                )
            if any(_empty(v) for v in values):
                raise self.fail(line, f"{name} grid: {key} = {values!r} holds an empty value; give each a value")
            if key in params:
                raise self.fail(line, f"{name}: {key} is both in params and in grid; give it in one of them")
            axes.append([(key, v) for v in values])
        specs = []
        for combination in itertools.product(*axes):
            chosen = {**params, **dict(combination)}
            try:
                body = ",".join(f"{k}={format_value(v)}" for k, v in chosen.items())
            except AgentMemoryError as err:
                raise self.fail(line, f"{name}: {err}") from None
            specs.append(f"{target}[{body}]" if body else target)
        return specs

    def settings(self, data: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
        """The other settings given at the top level, checked as the record checks them (a path found from the
        grid file's folder); messages name the grid's key and line."""
        given: dict[str, Any] = {}
        for s in SETTINGS:
            if s.grid in _AXES or "." in s.grid or s.grid not in data:
                continue
            value = data[s.grid]
            if s.kind == "path" and isinstance(value, str) and value:
                value = str(self.path(value, s.grid, self.where.top(s.grid), "file")[0])
            given[s.name] = value
        try:
            options_from_settings(given, "grid")  # together: the live readers' settings need a reader
        except AgentMemoryError as err:
            key = err.name if isinstance(err, ParameterError) else next(iter(given), "")
            raise self.fail(self.where.top(key.split()[0]) if key else None, str(err)) from None
        return tuple(sorted(given.items()))

    def relevance(self, value: object, name: str, line: int | None) -> str:
        """A relevance mode, checked by the record that declares the choices (``name`` in messages)."""
        try:
            EvalOptions(relevance=value, names={"relevance": name})  # type: ignore[arg-type]  # checked there
        except AgentMemoryError as err:
            raise self.fail(line, str(err)) from None
        return str(value)

    def read(self, data: Mapping[str, Any], default_name: str) -> Grid:
        where = self.where
        self.keys(data, _TOP_KEYS, "the grid", where.top)
        default = re.sub(r"[^A-Za-z0-9._-]+", "-", default_name).strip("-.") or "experiment"
        name = self.string(data.get("name", default), "name", where.top("name"))
        if not _NAME.fullmatch(name):  # the output folder is experiments/<name>: one path component, never ..
            raise self.fail(
                where.top("name"),
                f"name: {name!r} is not usable as a folder name (experiments/<name>); "
                "use letters, digits, '.', '_' and '-', starting with a letter or digit",
            )
        k = self.ints(data.get("k", [5]), "k", 1, where.top("k"))
        seeds = self.ints(data.get("seeds", [7]), "seeds", 0, where.top("seeds"))
        measures = self.measures(data.get("measures", []), where.top("measures"))
        relevance = self.relevance(data.get("relevance", "direct"), "relevance", where.top("relevance"))
        systems = self.systems(data.get("systems", []), "systems", where.top("systems"))
        statistics = self.statistics(data.get("statistics", {}))
        raw_collections = data.get("collections", [])
        if not isinstance(raw_collections, list) or not all(isinstance(c, dict) for c in raw_collections):
            raise self.fail(where.top("collections"), "collections: write each collection as a [[collections]] table")
        collections = tuple(self.collection(c, i) for i, c in enumerate(raw_collections))
        names = [c.name for c in collections]
        repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if repeated is not None:
            raise self.fail(
                where.item("collections", names.index(repeated, names.index(repeated) + 1), "name"),
                f"collections: the name {repeated!r} is given to two collections; give each its own name = ...",
            )
        raw_tasks = data.get("tasks", [])
        if not isinstance(raw_tasks, list) or not all(isinstance(t, dict) for t in raw_tasks):
            raise self.fail(where.top("tasks"), "tasks: write each task as a [[tasks]] table")
        tasks = tuple(self.task(t, i, collections) for i, t in enumerate(raw_tasks))
        settings = self.settings(data)
        grid = Grid(name, self.source, collections, systems, k, seeds, measures, relevance, statistics, tasks, settings)
        self.check_not_empty(grid)
        for index, collection in enumerate(collections):
            self.check_systems(grid, collection, self.where.item("collections", index))
        if statistics.baseline is not None:
            self.check_baseline(grid, statistics.baseline)
        return grid

    def check_systems(self, grid: Grid, collection: CollectionDef, line: int | None) -> None:
        """Within a collection, two systems never share a key or a label (a run's label is its name)."""
        own = collection.systems if collection.systems is not None else grid.systems
        listed = [(s.key, s.label, s.text) for s in own] + [(n, n, n) for n in collection.bound]
        by_key: dict[str, tuple[str, str]] = {}
        by_label: dict[str, tuple[str, str]] = {}
        for key, label, text in listed:
            if key in by_key or label in by_label:
                raise self.fail(
                    line,
                    f"collection {collection.name!r}: the system {text!r} is {label!r}, which is already a system "
                    "of it; give each system once (a run's or an answer system's name must differ from every other "
                    "system's)",
                )
            by_key[key] = by_label[label] = (key, label)
        for task in grid.tasks:
            if task.collection != collection.name or task.system in collection.bound:
                continue
            spec = self.spec(task.system, "tasks system", task.line)
            if by_key.get(spec.key, (spec.key, spec.label)) != (spec.key, spec.label) or by_label.get(
                spec.label, (spec.key, spec.label)
            ) != (spec.key, spec.label):
                raise self.fail(
                    task.line,
                    f"tasks system: {task.system!r} ({spec.label}) shares its key or label with another system of "
                    f"{collection.name!r}; give it other parameters",
                )
            by_key[spec.key] = by_label[spec.label] = (spec.key, spec.label)

    def check_baseline(self, grid: Grid, baseline: str) -> None:
        names = {n for c in grid.collections for n in c.bound}
        names |= {n for s in grid.systems for n in (s.key, s.label, s.text)}
        names |= {n for c in grid.collections for s in (c.systems or ()) for n in (s.key, s.label, s.text)}
        names |= {t.system for t in grid.tasks}
        listed = (*grid.systems, *(s for c in grid.collections for s in (c.systems or ())))
        names |= {full_label(s.text) for s in listed if s.kind == "retriever"}  # the label tables show
        if baseline not in names:
            raise self.fail(
                self.where.item("statistics", 0, "baseline"),
                f"statistics baseline: {baseline!r} is not a system of the grid; name a retriever spec, its label, "
                "a run's or an answer system's name",
            )

    def measures(self, value: object, line: int | None) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
            raise self.fail(
                line, f'measures: {value!r} is not a list of measure names; write e.g. measures = ["nDCG@10"]'
            )
        try:
            return tuple(str(m) for text in value for m in parse_measures(text, name="measures"))
        except AgentMemoryError as err:
            raise self.fail(line, _named(err, "measures")) from None

    def statistics(self, value: object) -> StatisticsOptions:
        line = self.where.top("statistics")
        table = self.table(value, "statistics", line)
        self.keys(table, _STATISTICS_KEYS, "[statistics]", lambda key: self.where.item("statistics", 0, key))

        def at(key: str) -> int | None:
            return self.where.item("statistics", 0, key)

        baseline = table.get("baseline")
        if baseline is not None:
            baseline = self.string(baseline, "statistics baseline", at("baseline"))
        comparisons = table.get("comparisons", "baseline")
        if comparisons not in COMPARISONS:
            raise self.fail(
                at("comparisons"),
                f"statistics comparisons: {comparisons!r} is not one of: {', '.join(COMPARISONS)}; "
                "baseline tests each system against the baseline, all also every pair",
            )
        numbers = {}
        for key, default in (("confidence", 0.95), ("alpha", 0.05)):
            number = table.get(key, default)
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 < number < 1:
                raise self.fail(at(key), f"statistics {key}: {number!r} is not a number strictly between 0 and 1")
            numbers[key] = float(number)
        (n_resamples,) = self.ints(table.get("n_resamples", 10_000), "statistics n_resamples", 1, at("n_resamples"))
        return StatisticsOptions(baseline, str(comparisons), numbers["confidence"], numbers["alpha"], n_resamples)

    def collection(self, table: Mapping[str, Any], index: int) -> CollectionDef:
        def at(key: str | None = None) -> int | None:
            return self.where.item("collections", index, key)

        what = f"collections[{index + 1}]"
        self.keys(table, _COLLECTION_KEYS, what, at)
        if "path" not in table:
            raise self.fail(at(), f'{what}: no path; write path = "folder or file of the collection"')
        path, given = self.path(table["path"], f"{what} path", at("path"), "collection's folder or file")
        default = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(given.rstrip("/")).stem).strip("-.") or "collection"
        name = self.string(table.get("name", default), f"{what} name", at("name"))
        if not _NAME.fullmatch(name):
            raise self.fail(
                at("name"),
                f"{what} name: {name!r} is not usable as a file name; use letters, digits, '.', '_' and '-'",
            )
        fmt = self.string(table.get("format", "auto"), f"{what} format", at("format"))
        options = dict(self.table(table.get("options", {}), f"{what} options", at("options")))
        systems = None
        if "systems" in table:
            systems = self.systems(table["systems"], f"{what} systems", at("systems"))
        raw_runs = table.get("runs", [])
        if not isinstance(raw_runs, list) or not all(isinstance(r, dict) for r in raw_runs):
            raise self.fail(at("runs"), f'{what} runs: write runs = [{{ name = "mine", path = "mine.trec" }}]')
        runs = tuple(self.run(r, f"{what} runs", at("runs")) for r in raw_runs)
        raw_answers = table.get("answers", [])
        if not isinstance(raw_answers, list) or not all(isinstance(a, dict) for a in raw_answers):
            raise self.fail(
                at("answers"),
                f'{what} answers: write answers = [{{ name = "zep", paths = ["zep_locomo_grades.json"] }}]',
            )
        answers = tuple(self.answers(a, f"{what} answers[{i + 1}]", at("answers")) for i, a in enumerate(raw_answers))
        relevance = None
        if "relevance" in table:
            relevance = self.relevance(table["relevance"], f"{what} relevance", at("relevance"))
        return CollectionDef(name, path, given, fmt, options, systems, runs, at(), relevance, answers)

    def run(self, table: Mapping[str, Any], what: str, line: int | None) -> RunDef:
        self.keys(table, _RUN_KEYS, what, lambda _: line)
        name = self.string(table.get("name"), f"{what} name", line)
        if any(c in name for c in ",[]= \t"):
            raise self.fail(
                line, f"{what} name: {name!r} has a space, comma, bracket or '='; name the run without them"
            )
        if "path" not in table:
            raise self.fail(line, f'{what}: the run {name!r} has no path; write path = "runs/{name}.trec"')
        path, _ = self.path(table["path"], f"{what} path", line, "run file")
        memories = None
        if "memories" in table:
            memories, _ = self.path(table["memories"], f"{what} memories", line, "run's memories file (JSON lines)")
        lenient = table.get("lenient", False)
        if not isinstance(lenient, bool):
            raise self.fail(line, f"{what} lenient: {lenient!r} is not true or false")
        return RunDef(name, path, memories, lenient)

    def answers(self, table: Mapping[str, Any], what: str, line: int | None) -> AnswersDef:
        """One answer system: ``{ name, paths, format, mapping }`` (``agentmemory eval --answers``'s, checked here:
        the name, that each file and the mapping exist, that the format is registered and takes a mapping)."""
        self.keys(table, _ANSWER_KEYS, what, lambda _: line)
        name = self.string(table.get("name"), f"{what} name", line)
        if any(c in name for c in ",[]= \t"):
            raise self.fail(
                line, f"{what} name: {name!r} has a space, comma, bracket or '='; name the system without them"
            )
        given = table.get("paths")
        if given is None:
            raise self.fail(line, f'{what}: the answer system {name!r} has no paths; write paths = ["{name}.json"]')
        if not isinstance(given, list) or not given:
            raise self.fail(
                line, f'{what} paths: {given!r} ({type(given).__name__}) is not a non-empty list; write paths = ["..."]'
            )
        paths = tuple(self.path(p, f"{what} paths", line, "answer file")[0] for p in given)
        if len(set(paths)) != len(paths):
            raise self.fail(line, f"{what} paths: {given!r} lists a file twice; list each seed's file once")
        fmt = None
        if "format" in table:
            fmt = self.string(table["format"], f"{what} format", line)
            if fmt != "auto" and fmt not in ANSWER_FORMATS:
                raise self.fail(line, str(UnknownNameError(f"{what} format", fmt, ["auto", *ANSWER_FORMATS.names()])))
        mapping = None
        if "mapping" in table:
            mapping, _ = self.path(table["mapping"], f"{what} mapping", line, "mapping file (TOML)")
            if fmt not in (None, "auto") and ANSWER_FORMATS.get(fmt).option("mapping") is None:
                raise self.fail(
                    line,
                    f"{what} mapping: the {fmt} answer format takes no mapping file; leave mapping out, or write "
                    'format = "mapping"',
                )
        return AnswersDef(name, paths, None if fmt == "auto" else fmt, mapping, line)

    def task(self, table: Mapping[str, Any], index: int, collections: tuple[CollectionDef, ...]) -> GridTask:
        line = self.where.item("tasks", index)
        what = f"tasks[{index + 1}]"
        self.keys(
            table,
            _TASK_KEYS,
            what,
            lambda key: self.where._key_in(key, (line or 1) - 1, self.where._next_header(line or 0)) or line,
        )
        missing = [key for key in _TASK_KEYS if key not in table]
        if missing:
            raise self.fail(line, f"{what}: missing {', '.join(missing)}; a task names collection, system, k and seed")
        collection = self.string(table["collection"], f"{what} collection", line)
        known = [c.name for c in collections]
        if collection not in known:
            raise self.fail(
                line,
                f"{what} collection: {collection!r} is not a collection of the grid; choose from: {', '.join(known)}",
            )
        system = self.string(table["system"], f"{what} system", line)
        bound = next(c for c in collections if c.name == collection).bound
        if system not in bound:
            self.spec(system, f"{what} system", line)  # a retriever spec the registries resolve
        (k,) = self.ints(table["k"], f"{what} k", 1, line)
        (seed,) = self.ints(table["seed"], f"{what} seed", 0, line)
        return GridTask(collection, system, k, seed, line)

    def check_not_empty(self, grid: Grid) -> None:
        if not grid.collections:
            raise self.fail(None, "the grid is empty: it names no collection; add a [[collections]] table with a path")
        if grid.tasks:
            return
        if not grid.k or not grid.seeds:
            empty = "k" if not grid.k else "seeds"
            raise self.fail(self.where.top(empty), f"the cross product is empty: {empty} = []; list at least one value")
        if not any((c.systems if c.systems is not None else grid.systems) or c.bound for c in grid.collections):
            raise self.fail(
                self.where.top("systems"),
                'the cross product is empty: no collection has a system; write systems = ["bm25", ...] or give '
                "a collection its runs",
            )


def _empty(value: object) -> bool:
    """A parameter value that says nothing: empty (or blank) text, or a list of nothing or holding such text."""
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, list) and (not value or any(_empty(v) for v in value))


def _named(err: AgentMemoryError, key: str) -> str:
    """``err``'s message naming the grid's ``key`` once: as it is when it names ``key`` already (a resolver told
    the key), else after ``key``."""
    named = isinstance(err, ParameterError) and (err.name == key or err.name.startswith(f"{key} "))
    return str(err) if named else f"{key}: {err}"


def _toml_module() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - python 3.10

    return tomli  # pragma: no cover


def parse_grid(text: str, *, source: str = "<grid>", base: str | Path = ".", name: str = "grid") -> Grid:
    """The :class:`Grid` written as TOML ``text``; relative paths are read from ``base``.

    ``source`` names the text in messages; ``name`` is the grid's name unless it sets one.

    Raises:
        InputError: not valid TOML (with its line and column), or any check of the module docstring.
    """
    toml = _toml_module()
    try:
        data = toml.loads(text)
    except toml.TOMLDecodeError as err:
        message = str(err)
        found = _TOML_POSITION.search(message)
        line = int(found.group(1)) if found else None
        column = f" (column {found.group(2)})" if found else ""
        if message.endswith(_END):
            message, line, column = message[: -len(_END)], len(text.splitlines()) or 1, " (at the end of the file)"
        reason = _TOML_POSITION.sub("", message).strip().splitlines()[0] if message.strip() else "syntax error"
        raise InputError(source, line, f"not valid TOML: {reason}{column}") from None
    return _Reader(source, text, Path(base)).read(data, name)


def read_grid(path: str | PathLike[str]) -> Grid:
    """The grid file at ``path`` (TOML, UTF-8), checked (see :func:`parse_grid`).

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: ``path`` is a folder; see :func:`parse_grid`.
    """
    file = Path(path)
    if file.is_dir():
        raise InputError(file, None, "is a folder, not a grid file; give the path of a grid's .toml file")
    if not file.is_file():
        raise MissingFileError(file, "grid file")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(file, None, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_grid(text, source=str(path), base=file.resolve().parent, name=file.stem)
