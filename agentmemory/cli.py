"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval     [--collection PATH] [--format NAME] [--split SPLIT] [--repair] [--include-captions]
                         [--format-option KEY=VALUE ...] [--seed INT] [--k INT] [--retrievers SPECS]
                         [--run NAME=PATH [--memories PATH] ...] [--lenient-run] [--relevance direct|provenance]
                         [--baseline NAME] [--metrics LIST] [--out FILE] [--table-out FILE] [--runs-dir DIR]
                         [--timings] [--progress | --no-progress]
    agentmemory retrieve --out FILE [--collection PATH] [--format NAME] [--split SPLIT] [--repair]
                         [--include-captions] [--format-option KEY=VALUE ...] [--retriever SPEC]
                         [--k INT] [--progress | --no-progress]
    agentmemory score QRELS [RUN] [--run NAME=PATH ...] [--k INT] [--metrics LIST] [--per-query]
                      [--complete] [--format table|json]
    agentmemory experiment GRID.toml [--executor serial|processes|dask] [--scheduler ADDRESS] [--workers N]
                      [--connect-timeout SECONDS] [--out DIR] [--resume | --no-resume] [--reports]
                      [--parquet] [--progress | --no-progress]
    agentmemory --version

The collection options come from the format declarations
(:data:`agentmemory.datasets.FORMATS`): ``--split`` (beir), ``--repair`` and
``--include-captions`` (locomo) are generated from the built-in formats'
options, and ``--format-option KEY=VALUE`` (repeatable) passes an option of
any format, a plugin's included, read with the type the format declares.

Any input error (a bad parameter, a malformed or missing file) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and no output file left behind.  ``agentmemory experiment`` exits
with status 1 when a task failed (each is listed with its spec; the others
complete and are written).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .errors import AgentMemoryError, ParameterError, UnknownNameError, check_positive_int, check_seed

if TYPE_CHECKING:
    from .datasets import Format, FormatOption

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
    try:
        value = int(text)
    except ValueError:
        raise ParameterError(name, text, "is not an integer", f"{name} must be {allowed}") from None
    return value


def _output_path(name: str, text: str, *, folder: bool) -> Path:
    """``text`` as a Path, refused up front if it cannot be written: a folder where a
    file is wanted (or the reverse), or an existing file where a parent folder must be."""
    path = Path(text)
    if folder and path.exists() and not path.is_dir():
        raise ParameterError(name, text, "is a file", "pass a folder path (it is created if missing)")
    if not folder and path.is_dir():
        raise ParameterError(name, text, "is a folder", "pass a file path such as reports/eval-results.json")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ParameterError(
                    name,
                    text,
                    f"needs {str(parent)!r} to be a folder, but it is a file",
                    "choose a path inside a folder",
                )
            break
    return path


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
                f"would hold the runs of both {taken[name]!r} and {key!r}",
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
        default="direct",
        metavar="MODE",
        help="direct (default: trec_eval's judgments) or provenance (a derived memory counts through the judged "
        "sources its derived_from chain reaches, each source once)",
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
    return parser


def _cmd_eval(args: argparse.Namespace) -> int:
    from .artifact import write_artifact
    from .compare import comparison_table, table_format
    from .evaluate import RELEVANCE_MODES, evaluate
    from .metrics import parse_measures
    from .retrievers import resolve_retrievers
    from .runs import parse_run_option, read_run_file
    from .stats import evaluation_statistics
    from .tables import full_report, timings_table

    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    seed = check_seed(_int("--seed", args.seed, "an integer >= 0"), "--seed")
    retrievers = resolve_retrievers(args.retrievers) if args.retrievers.strip() or not args.run else ()
    if args.relevance not in RELEVANCE_MODES:
        raise UnknownNameError("--relevance", args.relevance, RELEVANCE_MODES)
    if args.metrics is not None:
        parse_measures(args.metrics)  # refused now, before anything is loaded
    run_args = [parse_run_option(text) for text in args.run]
    memories = getattr(args, "memories", None) or {}
    systems = [(r.key, r.label) for r in retrievers] + [(name, name) for name, _ in run_args]
    _check_baseline(args.baseline, systems)
    out = _output_path("--out", args.out, folder=False) if args.out else None
    table_out = _output_path("--table-out", args.table_out, folder=False) if args.table_out else None
    table_kind = table_format(args.table_out) if args.table_out else None
    runs = _output_path("--runs-dir", args.runs_dir, folder=True) if args.runs_dir else None
    run_files = run_file_names([key for key, _ in systems]) if runs is not None else {}
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    collection = _load_collection(args, progress)
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
    )
    statistics = evaluation_statistics(evaluation, seed=seed, baseline=args.baseline)
    table = comparison_table(evaluation, statistics)
    # Each file is written atomically; if a later one fails (an id a TREC file
    # cannot hold, an unwritable folder), remove the files and folders this run
    # created so that a failed command leaves no output behind.
    created: list[Path] = []
    created_dirs: list[Path] = []

    def _track(path: Path) -> Path:
        if not path.exists():
            created.append(path)
        for parent in path.parents:
            if parent.exists():
                break
            if parent not in created_dirs:
                created_dirs.append(parent)
        return path

    try:
        if out is not None:
            write_artifact(evaluation, _track(out), statistics=statistics)
        if table_out is not None and table_kind is not None:
            from .io import atomic_write_text

            atomic_write_text(_track(table_out), table.render(table_kind))
        if runs is not None:
            from .trec import write_qrels, write_run

            for result in evaluation.results:
                write_run(
                    _track(runs / run_files[result.name]),
                    {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in result.per_query},
                    tag=result.name,
                )
            write_qrels(_track(runs / "qrels.txt"), {q: dict(d) for q, d in collection.qrels.items()})
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        for folder in sorted(created_dirs, key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()
            except OSError:  # not empty or already gone: leave it
                pass
        raise
    print(table.render())
    if args.timings:
        print(timings_table(evaluation) + "\n")
    print(full_report(evaluation, statistics))
    written = [str(p) for p in (out, table_out) if p is not None] + ([f"TREC runs in {args.runs_dir}"] if runs else [])
    listed = ", ".join(written[:-1]) + " and " + written[-1] if len(written) > 1 else "".join(written)
    print("\n" + (f"Wrote {listed}" if written else "No file written (--out FILE writes the artifact)."))
    return 0


def _check_baseline(baseline: str | None, systems: list[tuple[str, str]]) -> None:
    """``--baseline`` must name one of the systems (by key or label)."""
    if baseline is None:
        return
    if not any(baseline in pair for pair in systems):
        raise UnknownNameError("--baseline", baseline, [key for key, _ in systems])


def _option_flags() -> dict[str, list[tuple[str, FormatOption]]]:
    """Each built-in format option's name -> the (format, declaration) pairs that declare it."""
    from .datasets import BUILTIN_FORMATS, FORMATS

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
    ``--split dev``); any other option ``--format-option NAME=VALUE``.
    """
    flags = _option_flags()
    out: list[str] = []
    for name, value in options.items():
        if name not in flags:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            out += ["--format-option", f"{name}={text}"]
        elif isinstance(value, bool):
            out.append(_flag(name) if value else "--no-" + _flag(name)[2:])
        else:
            out += [_flag(name), str(value)]
    return out


def _add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    """--collection, --format, one flag per built-in format option (from its declaration) and --format-option."""
    from .datasets import FORMATS

    rules = "; ".join(f"{n}: {f.rule}" for n, f in FORMATS.registered().items() if f.recognise is not None)
    parser.add_argument(
        "--collection",
        metavar="PATH",
        help="collection folder or file, in any registered format (default: the shipped fixture)",
    )
    parser.add_argument(
        "--format",
        default="auto",
        metavar="NAME",
        help=f"collection format: auto (default) or one of {', '.join(FORMATS.names())}; "
        f"auto takes the first that recognises the path ({rules})",
    )
    for name, users in _option_flags().items():
        formats = " and ".join(f for f, _ in users)
        option = users[0][1]
        dest = f"format_option_{name}"
        if option.type is bool and option.default is False:
            parser.add_argument(
                _flag(name), dest=dest, action="store_true", default=None, help=f"{formats} format: {option.help}"
            )
        elif option.type is bool:
            parser.add_argument(
                _flag(name),
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{formats} format: {option.help} (default {option.default})",
            )
        else:
            parser.add_argument(
                _flag(name),
                dest=dest,
                metavar=name.upper(),
                help=f"{formats} format: {option.help} (default {option.default})",
            )
    parser.add_argument(
        "--format-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the chosen format (any format, a plugin's too), read with the type "
        "the format declares; repeat for several",
    )


def _format_option_example(fmt: Format) -> str:
    """How to write --format-option for ``fmt``, from its first declared option."""
    if not fmt.options:
        return f"the {fmt.name} format takes no options"
    first = fmt.options[0]
    value = "true" if first.type is bool else str(first.default)
    return (
        f"write e.g. --format-option {first.name}={value} (the {fmt.name} format takes: "
        + ", ".join(o.name for o in fmt.options)
        + ")"
    )


def _load_collection(args: argparse.Namespace, progress: bool):
    """The collection named by --collection, --format and the format options (default: the shipped fixture).

    ``auto`` is resolved first so that option values can be read with the
    chosen format's declared types; :func:`agentmemory.datasets.load` then
    checks every option against that declaration.
    """
    from .collection import default_collection_path
    from .datasets import FORMATS, detect_format, load

    path = args.collection if args.collection else default_collection_path()
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
    for text in args.format_option:
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParameterError("--format-option", text, "is not KEY=VALUE", _format_option_example(fmt))
        if key in options:
            raise ParameterError(
                "--format-option", text, f"sets {key} a second time", f"give each option of the {name} format once"
            )
        declared = fmt.option(key)
        options[key] = raw if declared is None else declared.parse(raw, f"--format-option {key}")
    return load(path, format=name, progress=progress, **options)


def _cmd_retrieve(args: argparse.Namespace) -> int:
    from .batch import retrieve_all
    from .retrievers import resolve_retriever
    from .trec import write_run

    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    try:
        retriever = resolve_retriever(args.retriever)
    except UnknownNameError as err:  # name the command-line option, as every other message here does
        raise UnknownNameError("--retriever", err.value, err.choices) from None
    out = _output_path("--out", args.out, folder=False)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    collection = _load_collection(args, progress)
    hits = retrieve_all(collection, retriever, k, progress=progress)
    write_run(out, {q: [(h.entry_id, h.score) for h in found] for q, found in hits.items()}, tag=retriever.key)
    n_hits = sum(len(found) for found in hits.values())
    print(f"Wrote {out}: {len(hits)} queries, {n_hits} hits ({retriever.key}, k = {k})")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from .metrics import parse_measures
    from .runs import parse_run_option
    from .scoring import default_measures, format_runs_table, format_table, score_run
    from .trec import read_qrels, read_run

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


def _cmd_experiment(args: argparse.Namespace) -> int:
    from .experiment import open_executor, plan_experiment, read_grid, run_experiment
    from .experiment.executors import EXECUTORS
    from .experiment.plan import default_out

    if args.executor not in EXECUTORS:
        raise UnknownNameError("--executor", args.executor, EXECUTORS)
    workers = None
    if args.workers is not None:
        workers = check_positive_int("--workers", _int("--workers", args.workers, "an integer >= 1"))
    try:
        timeout = float(args.connect_timeout)
    except ValueError:
        timeout = 0.0  # refused just below, with the value as given
    if not 0 < timeout < float("inf"):
        raise ParameterError("--connect-timeout", args.connect_timeout, "is not a number of seconds > 0", "e.g. 10")
    given_out = _output_path("--out", args.out, folder=True) if args.out else None  # refused before any loading
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    plan = plan_experiment(read_grid(args.grid))
    out = given_out if given_out is not None else default_out(plan.grid)
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
        commands = {"eval": _cmd_eval, "retrieve": _cmd_retrieve, "score": _cmd_score, "experiment": _cmd_experiment}
        return commands[args.command](args)
    except (AgentMemoryError, _UsageError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # unwritable output, a folder where a file was expected, ...
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"{PROG}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `agentmemory ... | head`: the reader left; stop quietly, as Unix tools do
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status a shell shows for a tool stopped by a closed pipe


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (captured): nothing to redirect
        pass


def entry_point() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
