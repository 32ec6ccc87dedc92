"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval     [--collection PATH] [--format NAME] [--split SPLIT] [--repair] [--include-captions]
                         [--format-option KEY=VALUE ...] [--seed INT] [--k INT] [--retrievers bm25,tags]
                         [--metrics LIST] [--out FILE] [--runs-dir DIR] [--progress | --no-progress]
    agentmemory retrieve --out FILE [--collection PATH] [--format NAME] [--split SPLIT] [--repair]
                         [--include-captions] [--format-option KEY=VALUE ...] [--retriever SPEC]
                         [--k INT] [--progress | --no-progress]
    agentmemory score QRELS RUN [--k INT] [--metrics LIST] [--per-query] [--complete]
                      [--format table|json]
    agentmemory --version

The collection options come from the format declarations
(:data:`agentmemory.datasets.FORMATS`): ``--split`` (beir), ``--repair`` and
``--include-captions`` (locomo) are generated from the built-in formats'
options, and ``--format-option KEY=VALUE`` (repeatable) passes an option of
any format, a plugin's included, read with the type the format declares.

Any input error (a bad parameter, a malformed or missing file) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and no output file left behind.
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
    parser = _Parser(prog=PROG, description="Evaluate agent-memory retrievers with exact IR metrics.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("eval", help="evaluate retrievers on a collection and write the JSON artifact")
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
    ev.add_argument("--metrics", default=None, help="extra measures beyond P@k,R@k,RR,RR@k,nDCG@k,AP@k")
    ev.add_argument("--out", default="reports/eval-results.json", metavar="FILE", help="artifact path")
    ev.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="also write each retriever's ranking as a TREC run file <retriever>.trec (its key made "
        "filename-safe: bm25.trec, bm25-k1=0.9-b=0.4.trec) plus qrels.txt",
    )
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars (default: on when stderr is a terminal)",
    )

    rt = sub.add_parser("retrieve", help="retrieve the top k of every query of a collection into a TREC run file")
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

    sc = sub.add_parser("score", help="score a TREC run file against TREC qrels, as trec_eval does")
    sc.add_argument("qrels", metavar="QRELS")
    sc.add_argument("run", metavar="RUN")
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
    return parser


def _cmd_eval(args: argparse.Namespace) -> int:
    from .artifact import write_artifact
    from .evaluate import evaluate
    from .retrievers import resolve_retrievers
    from .stats import evaluation_statistics
    from .tables import full_report

    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    seed = check_seed(_int("--seed", args.seed, "an integer >= 0"), "--seed")
    retrievers = resolve_retrievers(args.retrievers)
    out = _output_path("--out", args.out, folder=False)
    runs = _output_path("--runs-dir", args.runs_dir, folder=True) if args.runs_dir else None
    run_files = run_file_names([r.key for r in retrievers]) if runs is not None else {}
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    collection = _load_collection(args, progress)
    evaluation = evaluate(collection, retrievers, k=k, seed=seed, measures=args.metrics, progress=progress)
    statistics = evaluation_statistics(evaluation, seed=seed)
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
        write_artifact(evaluation, _track(out), statistics=statistics)
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
    print(full_report(evaluation, statistics))
    print(f"\nWrote {out}" + (f" and TREC runs in {args.runs_dir}" if args.runs_dir else ""))
    return 0


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
    from .scoring import default_measures, format_table, score_run
    from .trec import read_qrels, read_run

    if args.format not in _FORMATS:
        raise UnknownNameError("--format", args.format, _FORMATS)
    k = check_positive_int("--k", _int("--k", args.k, "an integer >= 1"))
    measures = parse_measures(args.metrics) if args.metrics else default_measures(k)
    result = score_run(read_qrels(args.qrels), read_run(args.run), measures, complete=args.complete)
    if args.format == "json":
        print(json.dumps(result.to_json_dict(), indent=2))
    else:
        print(format_table(result, per_query=args.per_query))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        commands = {"eval": _cmd_eval, "retrieve": _cmd_retrieve, "score": _cmd_score}
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


def entry_point() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
