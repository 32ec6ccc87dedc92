"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval     [--collection PATH] [--format NAME] [--split SPLIT] [--repair] [--include-captions]
                         [--granularity session|turn] [--all-turns | --user-turns-only]
                         [--format-option KEY=VALUE ...] [--seed INT] [--k INT] [--retrievers SPECS]
                         [--run NAME=PATH [--memories PATH] ...] [--lenient-run] [--relevance direct|provenance]
                         [--as-of] [--baseline NAME] [--metrics LIST] [--out FILE] [--table-out FILE] [--runs-dir DIR]
                         [--timings] [--progress | --no-progress] [--system SPEC ...] [--attribution METHOD]
                         [--system-timeout SECONDS] [--lenient-system]
    agentmemory retrieve --out FILE [--collection PATH] [--format NAME] [--split SPLIT] [--repair]
                         [--include-captions] [--granularity session|turn] [--all-turns | --user-turns-only]
                         [--format-option KEY=VALUE ...] [--retriever SPEC] [--k INT] [--progress | --no-progress]
    agentmemory score QRELS [RUN] [--run NAME=PATH ...] [--k INT] [--metrics LIST] [--per-query]
                      [--complete] [--format table|json]
    agentmemory store import STORE COLLECTION [--split SPLIT] [--timeout SECONDS]
    agentmemory store export STORE COLLECTION_DIR
    agentmemory store export-run STORE --retriever LABEL --out FILE [--since ISO] [--until ISO]
    agentmemory store export-queries STORE --out FILE [--retriever LABEL] [--since ISO] [--until ISO]
    agentmemory store stats STORE [--format table|json]
    agentmemory experiment GRID.toml [--executor serial|processes|dask] [--scheduler ADDRESS] [--workers N]
                      [--connect-timeout SECONDS] [--out DIR] [--resume | --no-resume] [--reports]
                      [--parquet] [--progress | --no-progress]
    agentmemory --version

The collection options come from the format declarations
(:data:`agentmemory.datasets.FORMATS`): ``--split`` (beir), ``--repair``
(locomo and longmemeval), ``--include-captions`` (locomo), ``--granularity``,
``--all-turns`` and ``--user-turns-only`` (longmemeval) are generated from the
built-in formats' options, and ``--format-option KEY=VALUE`` (repeatable) passes an option of
any format, a plugin's included, read with the type the format declares.

``agentmemory store`` works on a persistent store file
(:mod:`agentmemory.store.sqlite`): ``import`` puts a BEIR-style collection folder
into it (created when missing) in one transaction, ``export`` writes it back
as one, ``export-run`` writes the searches it recorded with one retriever
(key or label) as a TREC run and ``export-queries`` their queries as
``queries.jsonl`` (``--since`` inclusive, ``--until`` exclusive; ISO 8601
with a timezone, or a date), and ``stats`` counts what it holds.  Only
``import`` opens the store for writing; the others read it, even while an
agent writes to it.

Any input error (a bad parameter, a malformed or missing file, a store that
is locked, full or not a store, an output path that is an input) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and every output file as it was: the commands that write declare
their outputs in an :class:`agentmemory.files.plan.OutputPlan` before reading
anything, render every output's text (which checks it) after computing, and
only then write them all, each atomically.  Integers on the command line are
read by :func:`agentmemory.files.numbers.parse_integer` (``1_0``, ``" 5"`` and
``"１"`` are not integers).  ``agentmemory experiment`` exits
with status 1 when a task failed (each is listed with its spec; the others
complete and are written).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from agentmemory import __version__
from agentmemory.errors import (
    AgentMemoryError,
    NumberTextError,
    ParameterError,
    UnknownNameError,
    check_positive_int,
    check_seed,
    quote,
)
from agentmemory.files.numbers import INTEGER_FORM, parse_integer, parse_number

if TYPE_CHECKING:
    from agentmemory.datasets import FormatOption
    from agentmemory.systems.registry import SystemSpec

__all__ = ["main", "run_file_names"]

PROG = "agentmemory"
_FORMATS = ("json", "table")


class _UsageError(Exception):
    pass


class _MemoriesAction(argparse.Action):
    """``--memories PATH`` belongs to the ``--run`` just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        runs = getattr(namespace, "run", None) or []
        if not runs:
            raise _UsageError(
                "--memories must follow the --run NAME=PATH it belongs to (see 'agentmemory eval --help')"
            )
        memories = dict(getattr(namespace, "memories", None) or {})
        name = runs[-1].partition("=")[0].strip()
        if name in memories:
            raise _UsageError(f"--run {name} has two --memories files (see 'agentmemory eval --help')")
        memories[name] = values
        namespace.memories = memories


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), raised instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _int(name: str, text: str, allowed: str = "an integer") -> int:
    """``text`` read by :func:`agentmemory.files.numbers.parse_integer`; a ParameterError naming ``name`` otherwise."""
    try:
        return parse_integer(text)
    except NumberTextError as err:
        raise ParameterError(name, text, err.problem, f"{name} must be {allowed} ({INTEGER_FORM})") from None


def run_file_names(keys: Sequence[str]) -> dict[str, str]:
    """Each retriever key's TREC run file name: the key made filename-safe, plus ``.trec``.

    Characters other than letters, digits and ``. _ + = -`` become ``-`` (runs
    collapsed, none at either end): ``bm25`` -> ``bm25.trec``,
    ``bm25[k1=0.9,b=0.4]`` -> ``bm25-k1=0.9-b=0.4.trec``.

    Raises:
        ParameterError: two keys give the same file name (one run would overwrite the other).
    """
    names: dict[str, str] = {}
    taken: dict[str, str] = {}
    for key in keys:
        stem = re.sub(r"[^A-Za-z0-9._+=-]+", "-", key).strip("-.") or "retriever"
        name = f"{stem}.trec"
        if name in taken:
            raise ParameterError(
                "--runs-dir",
                name,
                f"would hold the runs of both {quote(taken[name])} and {quote(key)}",
                "give the retrievers keys that differ in letters or digits",
            )
        names[key] = taken[name] = name
    return names


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, description="Evaluate agent-memory retrievers with exact IR metrics.", allow_abbrev=False
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser(
        "eval",
        help="evaluate retrievers and run files on a collection: comparison table, report, artifact",
        allow_abbrev=False,
    )
    _add_collection_arguments(ev)
    ev.add_argument("--seed", default="7", help="seed for the run's event ids (default 7)")
    ev.add_argument("--k", default="5", help="rank cutoff (default 5)")
    ev.add_argument(
        "--retrievers",
        default="bm25,tags",
        help="comma-separated retriever specs: registry names (bm25, tags, dense, hybrid, recency, or a plugin's), "
        "a name with parameters (bm25[k1=0.9,b=0.4], hybrid[of=bm25+dense,method=convex]) or "
        "package.module:attribute[params] (default bm25,tags)",
    )
    ev.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another system's run file (TREC run, or JSON lines {query_id, hits: [{entry_id, score}]}), "
        "evaluated beside the retrievers under NAME; repeatable",
    )
    ev.add_argument(
        "--memories",
        action=_MemoriesAction,
        metavar="PATH",
        help="the preceding --run's own memories (JSON lines: _id, text, derived_from), which its hits may name",
    )
    ev.add_argument(
        "--lenient-run",
        action="store_true",
        help="drop run lines naming unknown queries or entries, or hits outside the query's scope, and list each "
        "(default: such a line is an error)",
    )
    ev.add_argument(
        "--relevance",
        default=None,
        metavar="MODE",
        help="direct (default without --system: trec_eval's judgments) or provenance (default with --system) (a derived memory counts through the judged "
        "sources its derived_from chain reaches, each source once)",
    )
    ev.add_argument(
        "--as-of",
        action="store_true",
        help="each query sees only the memories created at or before its asked_at (an agent cannot remember the "
        "future); queries without asked_at see all",
    )
    ev.add_argument(
        "--baseline", metavar="NAME", help="the system the comparison table compares with (default the first)"
    )
    ev.add_argument("--metrics", default=None, help="extra measures beyond P@k,R@k,RR,RR@k,nDCG@k,AP@k")
    ev.add_argument(
        "--out", default=None, metavar="FILE", help="write the eval-results.json artifact here (default: write none)"
    )
    ev.add_argument(
        "--table-out",
        metavar="FILE",
        help="also write the comparison table, as CSV, Markdown, LaTeX or text by the suffix (.csv, .md, .tex, .txt)",
    )
    ev.add_argument(
        "--timings",
        action="store_true",
        help="also print each retriever's search latency (p50, p95) and index size and build time "
        "(wall-clock figures: never in the artifact)",
    )
    ev.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="also write each system's top k as a TREC run file <system>.trec (its key made "
        "filename-safe: bm25.trec, bm25-k1=0.9-b=0.4.trec) plus qrels.txt",
    )
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars (default: on when stderr is a terminal)",
    )
    _add_system_arguments(ev)

    rt = sub.add_parser(
        "retrieve", help="retrieve the top k of every query of a collection into a TREC run file", allow_abbrev=False
    )
    _add_collection_arguments(rt)
    rt.add_argument(
        "--retriever",
        default="bm25",
        help="one retriever spec: a registry name, name[params] or package.module:attribute (default bm25)",
    )
    rt.add_argument("--k", default="10", help="hits per query (default 10)")
    rt.add_argument("--out", required=True, metavar="FILE", help="TREC run file to write")
    rt.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: on when stderr is a terminal)",
    )

    sc = sub.add_parser("score", help="score TREC run files against TREC qrels, as trec_eval does", allow_abbrev=False)
    sc.add_argument("qrels", metavar="QRELS")
    sc.add_argument("run", metavar="RUN", nargs="?", help="a run file (or name runs with --run)")
    sc.add_argument(
        "--run",
        dest="runs",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a run file scored under NAME, side by side with the others; repeatable",
    )
    sc.add_argument("--k", default="5", help="cutoff of the default measures (default 5)")
    sc.add_argument("--metrics", default=None, help="comma-separated measures (default P@k,R@k,RR,RR@k,nDCG@k,AP@k)")
    sc.add_argument(
        "--per-query",
        action="store_true",
        help="also print each query's values in the table (JSON output always has them)",
    )
    sc.add_argument(
        "--complete", action="store_true", help="count qrels queries missing from the run as 0 (trec_eval -c)"
    )
    sc.add_argument("--format", default="table", help="table (default) or json")

    ex = sub.add_parser(
        "experiment",
        help="run a grid of evaluations (collections x systems x k x seeds) as tasks, serially, on processes or "
        "on Dask; resumable, byte-identical results",
        allow_abbrev=False,
    )
    ex.add_argument("grid", metavar="GRID", help="the grid file (TOML; see examples/grid.toml)")
    ex.add_argument(
        "--executor", default="serial", metavar="NAME", help="serial (default), processes or dask (the dask extra)"
    )
    ex.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a running Dask scheduler (tcp://host:8786) instead of a local cluster; needs --executor dask",
    )
    ex.add_argument(
        "--workers",
        metavar="N",
        help="worker processes of --executor processes or a local Dask cluster (default: CPUs)",
    )
    ex.add_argument(
        "--connect-timeout",
        default="10",
        metavar="SECONDS",
        help="how long to wait for --scheduler to answer (default 10)",
    )
    ex.add_argument("--out", metavar="DIR", help="the output folder (default experiments/<grid name>)")
    ex.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="reuse the finished tasks in DIR/tasks and compute only the others (default: on)",
    )
    ex.add_argument(
        "--reports",
        action="store_true",
        help="also render notebooks/collection.ipynb for each collection with papermill, as tasks on the executor "
        "(the report extra, a source checkout)",
    )
    ex.add_argument("--parquet", action="store_true", help="also write DIR/per_query.parquet (the report extra)")
    ex.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar: tasks done out of all, failures (default: on when stderr is a terminal)",
    )
    _add_store_commands(sub)
    return parser


def _add_store_commands(sub: argparse._SubParsersAction) -> None:
    """``agentmemory store import|export|export-run|export-queries|stats``."""
    st = sub.add_parser(
        "store",
        help="a persistent store: import or export a collection, export its searches as a run, stats",
        allow_abbrev=False,
    )
    commands = st.add_subparsers(dest="store_command", required=True, parser_class=_Parser, metavar="COMMAND")
    im = commands.add_parser(
        "import", help="put a collection folder's entries, queries and judgments into a store", allow_abbrev=False
    )
    im.add_argument("store", metavar="STORE", help="the store file (created when missing)")
    im.add_argument("collection", metavar="COLLECTION", help="a BEIR-style collection folder")
    im.add_argument("--split", default="test", help="the judgments to import, qrels/<split>.tsv (default test)")
    im.add_argument(
        "--timeout", default="5", metavar="SECONDS", help="how long to wait for another writer of the store (default 5)"
    )
    ex = commands.add_parser(
        "export", help="write a store as a collection folder (corpus, queries, qrels)", allow_abbrev=False
    )
    ex.add_argument("store", metavar="STORE")
    ex.add_argument("folder", metavar="COLLECTION_DIR", help="the folder to write (created when missing)")
    for name, what in (
        ("export-run", "write one retriever's recorded searches as a TREC run file"),
        ("export-queries", "write the recorded searches' queries as queries.jsonl"),
    ):
        ep = commands.add_parser(name, help=what, allow_abbrev=False)
        ep.add_argument("store", metavar="STORE")
        ep.add_argument(
            "--retriever",
            required=name == "export-run",
            metavar="LABEL",
            help="the retriever whose searches to write, by key or label (bm25, 'BM25')"
            + ("" if name == "export-run" else " (default: every search)"),
        )
        ep.add_argument("--out", required=True, metavar="FILE", help="the file to write")
        ep.add_argument("--since", metavar="ISO", help="only searches at or after this time (2026-03-01T09:00:00Z)")
        ep.add_argument("--until", metavar="ISO", help="only searches before this time")
    sp = commands.add_parser("stats", help="what a store holds: entries, scopes, events, size", allow_abbrev=False)
    sp.add_argument("store", metavar="STORE")
    sp.add_argument("--format", default="table", help="table (default) or json")


def _cmd_eval(args: argparse.Namespace) -> int:
    from agentmemory.analysis.artifact import dumps_artifact
    from agentmemory.analysis.comparison_table import comparison_table, table_format
    from agentmemory.analysis.statistics import evaluation_statistics
    from agentmemory.analysis.text_tables import full_report, timings_table
    from agentmemory.datasets.collection import require_judgments
    from agentmemory.evaluation.runfiles import parse_run_option, read_run_file
    from agentmemory.evaluation.runner import RELEVANCE_MODES, evaluate
    from agentmemory.evaluation.system_runs import memories_text, system_table, system_timings
    from agentmemory.files.plan import OutputPlan, collection_inputs
    from agentmemory.files.trec import format_qrels, format_run
    from agentmemory.metrics import parse_measures
    from agentmemory.retrievers import resolve_retrievers

    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    seed = check_seed(_int("--seed", args.seed, "an integer >= 0"), "--seed")
    retrievers = resolve_retrievers(args.retrievers) if args.retrievers.strip() or not (args.run or args.system) else ()
    systems_given = _system_options(args)  # memory systems (agentmemory.systems); sets args.relevance's default
    if args.relevance not in RELEVANCE_MODES:
        raise UnknownNameError("--relevance", args.relevance, RELEVANCE_MODES)
    if args.metrics is not None:
        parse_measures(args.metrics)  # refused now, before anything is loaded
    run_args = [parse_run_option(text) for text in args.run]
    memories = getattr(args, "memories", None) or {}
    systems = [(r.key, r.label) for r in retrievers] + [(name, name) for name, _ in run_args]
    systems += [(s.key, s.label) for s in systems_given]
    _check_baseline(args.baseline, systems)
    plan = OutputPlan()
    out = plan.file("--out", args.out) if args.out else None
    table_out = plan.file("--table-out", args.table_out, example="comparison.md") if args.table_out else None
    table_kind = table_format(args.table_out) if args.table_out else None
    runs = plan.folder("--runs-dir", args.runs_dir) if args.runs_dir else None
    run_paths: dict[str, Path] = {}
    if runs is not None:
        names = run_file_names([key for key, _ in systems])
        run_paths = {key: plan.file("--runs-dir", runs / name, example="runs/") for key, name in names.items()}
        memories_paths = {
            s.key: plan.file("--runs-dir", runs / (names[s.key][: -len(".trec")] + ".memories.jsonl"), example="runs/")
            for s in systems_given
        }
        qrels_path = plan.file("--runs-dir", runs / "qrels.txt", example="runs/")
    plan.add_inputs(Path(path) for _, path in run_args)
    plan.add_inputs(Path(path) for path in memories.values())
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    collection = _load_collection(args, progress)
    plan.add_inputs(collection_inputs(_collection_path(args), collection.files))
    require_judgments(collection, _collection_path(args))  # as score refuses an empty qrels file
    run_data = [read_run_file(path, name, memories=memories.get(name)) for name, path in run_args]
    evaluation = evaluate(
        collection,
        retrievers,
        runs=run_data,
        k=k,
        seed=seed,
        measures=args.metrics,
        relevance=args.relevance,
        lenient_run=args.lenient_run,
        progress=progress,
        timings=args.timings,
        as_of=args.as_of,
        systems=systems_given,
        attribution=args.attribution,
        system_timeout=args.system_timeout,
        lenient_system=args.lenient_system,
    )
    statistics = evaluation_statistics(evaluation, seed=seed, baseline=args.baseline)
    table = comparison_table(evaluation, statistics)
    # Render every output (rendering checks ids, scores and text), then write them all: nothing is
    # written unless everything can be, and each file is replaced whole (agentmemory.files.plan).
    if out is not None:
        plan.put(out, dumps_artifact(evaluation, statistics))
    if table_out is not None and table_kind is not None:
        plan.put(table_out, table.render(table_kind))
    if runs is not None:
        for result in evaluation.results:
            hits = {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in result.per_query}
            plan.put(run_paths[result.name], format_run(hits, tag=result.name))
        plan.put(qrels_path, format_qrels({q: dict(d) for q, d in collection.qrels.items()}))
        for run in evaluation.systems:
            plan.put(memories_paths[run.spec.key], memories_text(run.attributed))
    plan.write()
    print(table.render())
    if evaluation.systems:
        print(system_table(evaluation.systems, k) + "\n")
    if args.timings:
        print(timings_table(evaluation) + "\n")
        if evaluation.systems:
            print(system_timings(evaluation.systems) + "\n")
    print(full_report(evaluation, statistics))
    written = [str(p) for p in (out, table_out) if p is not None] + ([f"TREC runs in {args.runs_dir}"] if runs else [])
    listed = ", ".join(written[:-1]) + " and " + written[-1] if len(written) > 1 else "".join(written)
    print("\n" + (f"Wrote {listed}" if written else "No file written (--out FILE writes the artifact)."))
    return 0


# -- memory systems (agentmemory.systems): the eval options and their checks, kept in one block ------------


def _add_system_arguments(ev: argparse.ArgumentParser) -> None:
    """``--system SPEC`` (repeatable), ``--attribution``, ``--system-timeout``, ``--lenient-system``."""
    ev.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="SPEC",
        help="a memory system replayed over each conversation and scored through attribution: a system name "
        "with parameters, package.module:attribute[params] (examples.my_memory_system:System) or a retriever "
        "name as a system (bm25); repeatable",
    )
    ev.add_argument(
        "--attribution",
        default="auto",
        metavar="METHOD",
        help="how a system's memories map to entries: sources, exact, overlap[threshold=0.5], "
        "dense[threshold=0.8] or auto (default: sources, else exact, else overlap)",
    )
    ev.add_argument(
        "--system-timeout",
        default="300",
        metavar="SECONDS",
        help="the longest one system call (ingest, search) may take; longer is an error (default 300)",
    )
    ev.add_argument(
        "--lenient-system",
        action="store_true",
        help="record a system's failing search as an empty ranking and list it (default: it is an error)",
    )


def _system_options(args: argparse.Namespace) -> tuple[SystemSpec, ...]:
    """The ``--system`` specs resolved, ``--attribution`` and ``--system-timeout`` checked (before anything is read);
    ``--relevance`` defaults to provenance when a system is evaluated, else direct."""
    from agentmemory.systems.attribution import parse_attribution
    from agentmemory.systems.registry import resolve_systems

    specs = resolve_systems(args.system) if args.system else ()
    if args.relevance is None:
        args.relevance = "provenance" if specs else "direct"
    parse_attribution(args.attribution)
    try:
        timeout = parse_number(args.system_timeout)
    except NumberTextError as err:
        raise ParameterError(
            "--system-timeout", args.system_timeout, err.problem, "give seconds > 0, e.g. 300"
        ) from None
    if not timeout > 0 or timeout == float("inf"):
        raise ParameterError("--system-timeout", args.system_timeout, "is not a number > 0", "give seconds, e.g. 300")
    args.system_timeout = float(timeout)
    return specs


# -- end of memory systems -----------------------------------------------------------------------------------


def _check_baseline(baseline: str | None, systems: list[tuple[str, str]]) -> None:
    """``--baseline`` must name one of the systems (by key or label)."""
    if baseline is None:
        return
    if not any(baseline in pair for pair in systems):
        raise UnknownNameError("--baseline", baseline, [key for key, _ in systems])


def _option_flags() -> dict[str, list[tuple[str, FormatOption]]]:
    """Each built-in format option's name -> the (format, declaration) pairs that declare it."""
    from agentmemory.datasets import BUILTIN_FORMATS, FORMATS

    flags: dict[str, list[tuple[str, FormatOption]]] = {}
    for name in BUILTIN_FORMATS:
        for option in FORMATS[name].options:
            flags.setdefault(option.name, []).append((name, option))
    return flags


def _flag(option_name: str) -> str:
    return "--" + option_name.replace("_", "-")


def option_flag_arguments(options: Mapping[str, object]) -> list[str]:
    """The command-line arguments that set the format ``options`` (name -> value given).

    A built-in format's option uses its own flag (``--repair``, ``--no-x``,
    ``--split dev``); any other option, or a bool flag set to ``False`` that
    has no ``--no-`` form (its default is ``False``), ``--format-option NAME=VALUE``.
    """
    flags = _option_flags()
    out: list[str] = []
    for name, value in options.items():
        no_negative = value is False and name in flags and flags[name][0][1].default is False
        if name not in flags or no_negative:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            out += ["--format-option", f"{name}={text}"]
        elif isinstance(value, bool):
            out.append(_flag(name) if value else "--no-" + _flag(name)[2:])
        else:
            out += [_flag(name), str(value)]
    return out


class _LazyHelp(argparse.Action):
    """A plain ``store`` option whose help text is computed when help is shown, not when the parser is built.

    ``--format``'s help lists every registered format, plugins' included;
    finding those reads every installed package's entry points (~30 ms),
    which a command that shows no help should not pay.
    """

    def __init__(self, option_strings, dest, help_text, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self._help_text = help_text

    @property
    def help(self) -> str:
        return self._help_text()

    @help.setter
    def help(self, value) -> None:  # argparse.Action.__init__ sets it; the text comes from help_text
        pass

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)


def _add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    """--collection, --format, one flag per built-in format option (from its declaration) and --format-option."""
    from agentmemory.datasets import FORMATS

    def format_help() -> str:  # plugins' names come from entry points: read only when help is shown
        rules = "; ".join(f"{n}: {f.rule}" for n, f in FORMATS.registered().items() if f.recognise is not None)
        return (
            f"collection format: auto (default) or one of {', '.join(FORMATS.names())}; "
            f"auto takes the first that recognises the path ({rules})"
        )

    parser.add_argument(
        "--collection",
        metavar="PATH",
        help="collection folder or file, in any registered format (default: the shipped fixture)",
    )
    parser.add_argument("--format", default="auto", metavar="NAME", action=_LazyHelp, help_text=format_help)
    for name, users in _option_flags().items():
        option = users[0][1]
        if len({o.help for _, o in users}) == 1:
            said = f"{' and '.join(f for f, _ in users)} format: {option.help}"
        else:  # each format says what the option does to it
            said = "; ".join(f"{f} format: {o.help}" for f, o in users)
        dest = f"format_option_{name}"
        if option.type is bool and option.default is False:
            parser.add_argument(_flag(name), dest=dest, action="store_true", default=None, help=said)
        elif option.type is bool:
            parser.add_argument(
                _flag(name),
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{said} (default {option.default})",
            )
        else:
            parser.add_argument(_flag(name), dest=dest, metavar=name.upper(), help=f"{said} (default {option.default})")
    parser.add_argument(
        "--format-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the chosen format (any format, a plugin's too), read with the type "
        "the format declares; repeat for several",
    )


def _collection_path(args: argparse.Namespace) -> str | Path:
    """The path ``--collection`` names (default: the shipped fixture)."""
    from agentmemory.datasets.collection import default_collection_path

    return args.collection if args.collection else default_collection_path()


def _load_collection(args: argparse.Namespace, progress: bool):
    """The collection named by --collection, --format and the format options (default: the shipped fixture).

    ``auto`` is resolved first so that option values can be read with the
    chosen format's declared types; :func:`agentmemory.datasets.load` then
    checks every option against that declaration.
    """
    from agentmemory.datasets import FORMATS, detect_format, load

    path = _collection_path(args)
    if args.format != "auto" and args.format not in FORMATS:
        raise UnknownNameError("--format", args.format, [*FORMATS.names(), "auto"])
    name = detect_format(path) if args.format == "auto" else args.format
    fmt = FORMATS[name]
    options: dict[str, object] = {}
    for option_name in _option_flags():
        value = getattr(args, f"format_option_{option_name}")
        if value is None:  # not given: the format's declared default applies
            continue
        declared = fmt.option(option_name)
        if isinstance(value, str) and declared is not None:
            value = declared.parse(value, _flag(option_name))
        options[option_name] = value  # an option the format does not take is refused by load, naming those it does
    for text in args.format_option:  # an option set by its own flag too: the text as given, named
        key = text.partition("=")[0].strip()
        if key in options:
            raise ParameterError(
                "--format-option", text, f"sets {key} a second time", f"give each option of the {name} format once"
            )
    options.update(fmt.parse_options(args.format_option))
    return load(path, format=name, progress=progress, **options)


def _cmd_retrieve(args: argparse.Namespace) -> int:
    from agentmemory.evaluation.batch import retrieve_all
    from agentmemory.files.plan import OutputPlan, collection_inputs
    from agentmemory.files.trec import format_run
    from agentmemory.retrievers import resolve_retriever

    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    try:
        retriever = resolve_retriever(args.retriever)
    except UnknownNameError as err:  # name the command-line option, as every other message here does
        raise UnknownNameError("--retriever", err.value, err.choices) from None
    plan = OutputPlan()
    out = plan.file("--out", args.out, example="runs/bm25.trec")
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    collection = _load_collection(args, progress)
    plan.add_inputs(collection_inputs(_collection_path(args), collection.files))
    hits = retrieve_all(collection, retriever, k, progress=progress)
    run = {q: [(h.entry_id, h.score) for h in found] for q, found in hits.items()}
    plan.put(out, format_run(run, tag=retriever.key))
    plan.write()
    n_hits = sum(len(found) for found in hits.values())
    print(f"Wrote {out}: {len(hits)} queries, {n_hits} hits ({retriever.key}, k = {k})")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from agentmemory.evaluation.runfiles import parse_run_option
    from agentmemory.files.trec import read_qrels, read_run
    from agentmemory.metrics import parse_measures
    from agentmemory.metrics.scoring import default_measures, format_runs_table, format_table, score_run

    if args.format not in _FORMATS:
        raise UnknownNameError("--format", args.format, _FORMATS)
    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    measures = parse_measures(args.metrics) if args.metrics else default_measures(k)
    named = [parse_run_option(text) for text in args.runs]
    if args.run is not None:
        named.insert(0, (Path(args.run).name, args.run))
    if not named:
        raise ParameterError("RUN", None, "is missing", "give a run file, or name runs with --run NAME=PATH")
    names = [n for n, _ in named]
    if len(set(names)) != len(names):
        raise ParameterError("--run", names, "names a run twice", "give every run its own NAME")
    qrels = read_qrels(args.qrels)
    results = {name: score_run(qrels, read_run(path), measures, complete=args.complete) for name, path in named}
    if len(results) == 1 and not args.runs:
        (result,) = results.values()
        if args.format == "json":
            print(json.dumps(result.to_json_dict(), indent=2))
        else:
            print(format_table(result, per_query=args.per_query))
        return 0
    if args.format == "json":
        print(json.dumps({name: r.to_json_dict() for name, r in results.items()}, indent=2))
    else:
        print(format_runs_table(results, per_query=args.per_query))
    return 0


def _cmd_store(args: argparse.Namespace) -> int:
    commands = {
        "import": _store_import,
        "export": _store_export,
        "export-run": _store_export_run,
        "export-queries": _store_export_queries,
        "stats": _store_stats,
    }
    return commands[args.store_command](args)


def _store_files(store: str) -> list[Path]:
    """A store's files (the database and SQLite's journal files): the inputs no export may replace."""
    return [Path(store + suffix) for suffix in ("", "-wal", "-shm")]


def _store_import(args: argparse.Namespace) -> int:
    from agentmemory.datasets.beir import load_collection
    from agentmemory.files.plan import OutputPlan, collection_inputs
    from agentmemory.store.core import MemoryStore
    from agentmemory.store.sqlite import LOCK_SUFFIX
    from agentmemory.store.transfer import UNINDEXED, import_collection

    try:
        timeout = parse_number(args.timeout)
    except NumberTextError as err:
        raise ParameterError("--timeout", args.timeout, err.problem, "give seconds, e.g. 5 or 0.5") from None
    collection = load_collection(args.collection, split=args.split)
    target = Path(args.store)
    # The store is written in place (SQLite), not through a plan; the plan's checks still apply: not a
    # folder, FIFO or device, and not one of the collection's files.
    OutputPlan(collection_inputs(args.collection, collection.files)).file("STORE", target, example="memory.db")
    created = not target.exists()
    try:
        with MemoryStore.open(target, UNINDEXED, timeout=timeout) as store:
            counts = import_collection(store, collection, split=args.split)
    except BaseException:
        if created:  # a store this command made holds nothing of the failed import: leave no file behind
            for suffix in ("", "-wal", "-shm", LOCK_SUFFIX):
                target.with_name(target.name + suffix).unlink(missing_ok=True)
        raise
    print(
        f"Imported {counts['entries']} entries, {counts['queries']} queries and {counts['judgments']} judgments "
        f"({args.split}) into {args.store}"
    )
    return 0


def _store_export(args: argparse.Namespace) -> int:
    from agentmemory.files.plan import OutputPlan
    from agentmemory.store.transfer import export_collection

    plan = OutputPlan(_store_files(args.store))
    folder = plan.folder("COLLECTION_DIR", args.folder)
    for name in ("corpus.jsonl", "queries.jsonl"):  # the qrels/<split>.tsv names depend on the store's splits
        plan.file("COLLECTION_DIR", folder / name, example="collection/")
    written = export_collection(args.store, folder)
    print(f"Wrote {folder}: " + ", ".join(written))
    return 0


def _times(args: argparse.Namespace) -> dict[str, datetime | None]:
    from agentmemory.store.transfer import parse_time

    return {
        "since": None if args.since is None else parse_time(args.since, "--since"),
        "until": None if args.until is None else parse_time(args.until, "--until"),
    }


def _window(args: argparse.Namespace) -> str:
    parts = [f"since {args.since}" if args.since else "", f"until {args.until}" if args.until else ""]
    shown = ", ".join(p for p in parts if p)
    return f"; {shown}" if shown else ""


def _store_export_run(args: argparse.Namespace) -> int:
    from agentmemory.files.plan import OutputPlan
    from agentmemory.store.transfer import export_run

    times = _times(args)
    out = OutputPlan(_store_files(args.store)).file("--out", args.out, example="runs/mine.trec")
    done = export_run(args.store, out, args.retriever, option="--retriever", **times)
    empty = f" ({done['empty']} found nothing and have no line)" if done["empty"] else ""
    print(f"Wrote {out}: {done['queries']} queries{empty}, {done['hits']} hits ({done['retriever']}{_window(args)})")
    return 0


def _store_export_queries(args: argparse.Namespace) -> int:
    from agentmemory.files.plan import OutputPlan
    from agentmemory.store.transfer import export_queries

    times = _times(args)
    out = OutputPlan(_store_files(args.store)).file("--out", args.out, example="queries.jsonl")
    n = export_queries(args.store, out, retriever=args.retriever, option="--retriever", **times)
    print(f"Wrote {out}: {n} queries{_window(args)}")
    return 0


def _store_stats(args: argparse.Namespace) -> int:
    from agentmemory.store.transfer import format_stats, store_stats

    if args.format not in _FORMATS:
        raise UnknownNameError("--format", args.format, _FORMATS)
    stats = store_stats(args.store)
    print(json.dumps(stats, indent=2) if args.format == "json" else format_stats(stats))
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from agentmemory.experiment import open_executor, plan_experiment, read_grid, run_experiment
    from agentmemory.experiment.executors import EXECUTORS
    from agentmemory.experiment.plan import default_out
    from agentmemory.files.plan import OutputPlan

    if args.executor not in EXECUTORS:
        raise UnknownNameError("--executor", args.executor, EXECUTORS)
    workers = None
    if args.workers is not None:
        workers = check_positive_int("--workers", _int("--workers", args.workers, "an integer >= 1"))
    try:
        timeout = parse_number(args.connect_timeout)
    except NumberTextError as err:
        raise ParameterError(
            "--connect-timeout", args.connect_timeout, err.problem, "give seconds > 0, e.g. 10"
        ) from None
    if not 0 < timeout < float("inf"):
        raise ParameterError("--connect-timeout", args.connect_timeout, "is not a number of seconds > 0", "e.g. 10")
    outputs = OutputPlan([args.grid])
    given_out = outputs.folder("--out", args.out) if args.out else None  # refused before any loading
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    plan = plan_experiment(read_grid(args.grid))
    out = given_out if given_out is not None else outputs.folder("--out", default_out(plan.grid))
    outputs.add_inputs(
        path
        for c in plan.grid.collections
        for path in (c.path, *(p for r in c.runs for p in (r.path, r.memories) if p is not None))
    )
    for name in ("results.json", "per_query.csv", "per_query.parquet"):  # never over an input of the grid
        outputs.file("--out", out / name, example="experiments/grid/")
    with open_executor(args.executor, workers=workers, scheduler=args.scheduler, timeout=timeout) as executor:
        result = run_experiment(
            plan,
            executor,
            out=out,
            resume=args.resume,
            reports=args.reports,
            parquet=args.parquet,
            progress=progress,
        )
    for failure in result.failures:
        print(f"{PROG}: task failed: {failure.task.describe()}: {failure.error}", file=sys.stderr)
    for name, error in result.report_failures:
        print(f"{PROG}: report failed: collection {name}: {error}", file=sys.stderr)
    evaluations = len([e for e in result.results["evaluations"] if e["systems"]])
    print(f"Experiment {plan.grid.name}: {result.summary()}; {evaluations} evaluations.")
    print(f"Wrote {out}/: results.json, per_query.csv, tables/" + (", reports/" if args.reports else ""))
    return 0 if result.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        commands = {
            "eval": _cmd_eval,
            "retrieve": _cmd_retrieve,
            "score": _cmd_score,
            "store": _cmd_store,
            "experiment": _cmd_experiment,
        }
        return commands[args.command](args)
    except BrokenPipeError:  # `agentmemory ... | head`: the reader left; stop quietly, as Unix tools do
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status a shell shows for a tool stopped by a closed pipe
    except (AgentMemoryError, _UsageError) as err:
        print(f"{PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except OSError as err:  # an input that cannot be read, ...
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"{PROG}: error: {_one_line(f'{where}{err.strerror or err}')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (captured): nothing to redirect
        pass


def _one_line(message: str) -> str:
    """``message`` on one line: a line break inside it (in a path, say) is shown as ``\\n``."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


def entry_point() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
