"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval     [--collection PATH] [--format F] [--split S] [--repair] [--seed INT] [--k INT]
                         [--retrievers bm25,tags] [--metrics LIST] [--out FILE] [--runs-dir DIR]
    agentmemory retrieve --out FILE [--collection PATH] [--format F] [--retriever SPEC] [--k INT]
    agentmemory score QRELS RUN [--k INT] [--metrics LIST] [--per-query] [--complete]
                      [--format table|json]

Any input error (a bad parameter, a malformed or missing file) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and no output file left behind.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import __version__
from .errors import AgentMemoryError, ParameterError, UnknownNameError, check_positive_int, check_seed

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
                    name, text, f"needs {str(parent)!r} to be a folder, but it is a file", "choose a path inside a folder"
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
                "--runs-dir", name, f"would hold the runs of both {taken[name]!r} and {key!r}",
                "give the retrievers keys that differ in letters or digits",
            )
        names[key] = taken[name] = name
    return names


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Evaluate agent-memory retrievers with exact IR metrics.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("eval", help="evaluate retrievers on a collection and write the JSON artifact")
    ev.add_argument("--collection", metavar="PATH",
                    help="collection folder or LoCoMo .json file (default: the shipped fixture)")
    ev.add_argument("--format", default="auto",
                    help="collection format: auto (default: folder = beir, .json = locomo), beir or locomo")
    ev.add_argument("--split", default="test", help="BEIR qrels split, qrels/<split>.tsv (default test)")
    ev.add_argument("--repair", action="store_true",
                    help="LoCoMo: split and normalise malformed evidence ids, listing every change")
    ev.add_argument("--include-captions", action="store_true", help="LoCoMo: append image captions to turn text")
    ev.add_argument("--seed", default="7", help="seed for the run's event ids (default 7)")
    ev.add_argument("--k", default="5", help="rank cutoff (default 5)")
    ev.add_argument("--retrievers", default="bm25,tags",
                    help="comma-separated retriever specs: registry names (bm25, tags, dense, hybrid, recency, or a plugin's), "
                    "a name with parameters (bm25[k1=0.9,b=0.4], hybrid[of=bm25+dense,method=convex]) or "
                    "package.module:attribute[params] (default bm25,tags)")
    ev.add_argument("--metrics", default=None, help="extra measures beyond P@k,R@k,RR,RR@k,nDCG@k,AP@k")
    ev.add_argument("--out", default="reports/eval-results.json", metavar="FILE", help="artifact path")
    ev.add_argument("--runs-dir", metavar="DIR",
                    help="also write each retriever's ranking as a TREC run file <retriever>.trec (its key made "
                    "filename-safe: bm25.trec, bm25-k1=0.9-b=0.4.trec) plus qrels.txt")
    ev.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars (default: on when stderr is a terminal)")

    rt = sub.add_parser("retrieve", help="retrieve the top k of every query of a collection into a TREC run file")
    rt.add_argument("--collection", metavar="PATH",
                    help="collection folder or LoCoMo .json file (default: the shipped fixture)")
    rt.add_argument("--format", default="auto", help="collection format: auto (default), beir or locomo")
    rt.add_argument("--split", default="test", help="BEIR qrels split (default test)")
    rt.add_argument("--repair", action="store_true", help="LoCoMo: repair malformed evidence ids, listing every change")
    rt.add_argument("--retriever", default="bm25",
                    help="one retriever spec: a registry name, name[params] or package.module:attribute (default bm25)")
    rt.add_argument("--k", default="10", help="hits per query (default 10)")
    rt.add_argument("--out", required=True, metavar="FILE", help="TREC run file to write")
    rt.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar (default: on when stderr is a terminal)")

    sc = sub.add_parser("score", help="score a TREC run file against TREC qrels, as trec_eval does")
    sc.add_argument("qrels", metavar="QRELS")
    sc.add_argument("run", metavar="RUN")
    sc.add_argument("--k", default="5", help="cutoff of the default measures (default 5)")
    sc.add_argument("--metrics", default=None, help="comma-separated measures (default P@k,R@k,RR,RR@k,nDCG@k,AP@k)")
    sc.add_argument("--per-query", action="store_true",
                    help="also print each query's values in the table (JSON output always has them)")
    sc.add_argument("--complete", action="store_true", help="count qrels queries missing from the run as 0 (trec_eval -c)")
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


def _load_collection(args: argparse.Namespace, progress: bool):
    """The collection named by --collection/--format/--split/--repair (default: the shipped fixture)."""
    from .collection import default_collection_path
    from .loaders import load

    options = {"format": args.format, "progress": progress}
    if args.split != "test":
        options["split"] = args.split
    if args.repair:
        options["repair"] = True
    if getattr(args, "include_captions", False):
        options["include_captions"] = True
    return load(args.collection if args.collection else default_collection_path(), **options)


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
