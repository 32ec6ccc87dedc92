"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval  [--collection PATH] [--seed INT] [--k INT] [--retrievers bm25,tags]
                      [--metrics LIST] [--out FILE] [--runs-dir DIR]
    agentmemory score QRELS RUN [--k INT] [--metrics LIST] [--per-query] [--complete]
                      [--format table|json]

Any input error (a bad parameter, a malformed or missing file) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and no output file left behind.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import __version__
from .errors import AgentMemoryError, ParameterError, check_positive_int

__all__ = ["main"]

PROG = "agentmemory"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), raised instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ParameterError(name, text, "is not an integer", f"{name} must be an integer") from None
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Evaluate agent-memory retrievers with exact IR metrics.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("eval", help="evaluate retrievers on a collection and write the JSON artifact")
    ev.add_argument("--collection", metavar="PATH", help="collection folder (default: the shipped fixture)")
    ev.add_argument("--seed", default="7", help="seed for the run's event ids (default 7)")
    ev.add_argument("--k", default="5", help="rank cutoff (default 5)")
    ev.add_argument("--retrievers", default="bm25,tags", help="comma-separated registry names (default bm25,tags)")
    ev.add_argument("--metrics", default=None, help="extra measures beyond P@k,R@k,RR,RR@k,nDCG@k,AP@k")
    ev.add_argument("--out", default="reports/eval-results.json", metavar="FILE", help="artifact path")
    ev.add_argument("--runs-dir", metavar="DIR", help="also write each ranking as a TREC run file plus qrels")
    ev.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars (default: on when stderr is a terminal)")

    sc = sub.add_parser("score", help="score a TREC run file against TREC qrels, as trec_eval does")
    sc.add_argument("qrels", metavar="QRELS")
    sc.add_argument("run", metavar="RUN")
    sc.add_argument("--k", default="5", help="cutoff of the default measures (default 5)")
    sc.add_argument("--metrics", default=None, help="comma-separated measures (default P@k,R@k,RR,RR@k,nDCG@k,AP@k)")
    sc.add_argument("--per-query", action="store_true", help="also print each query's values")
    sc.add_argument("--complete", action="store_true", help="count qrels queries missing from the run as 0 (trec_eval -c)")
    sc.add_argument("--format", default="table", choices=("table", "json"))
    return parser


def _cmd_eval(args: argparse.Namespace) -> int:
    from .artifact import write_artifact
    from .collection import default_collection_path, load_collection
    from .evaluate import evaluate
    from .retrievers import parse_retrievers
    from .tables import seed_table

    k = check_positive_int("--k", _int("--k", args.k))
    seed = _int("--seed", args.seed)
    retrievers = parse_retrievers(args.retrievers)
    out = Path(args.out)
    if out.is_dir():
        raise ParameterError("--out", args.out, "is a folder", "pass a file path such as reports/eval-results.json")
    collection = load_collection(args.collection if args.collection else default_collection_path())
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    evaluation = evaluate(collection, retrievers, k=k, seed=seed, measures=args.metrics, progress=progress)
    write_artifact(evaluation, out)
    if args.runs_dir:
        from .trec import write_qrels, write_run

        runs = Path(args.runs_dir)
        for result in evaluation.results:
            write_run(
                runs / f"{result.name}.trec",
                {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in result.per_query},
                tag=result.name,
            )
        write_qrels(runs / "qrels.txt", {q: dict(d) for q, d in collection.qrels.items()})
    print(seed_table(evaluation))
    print(f"\nWrote {out}" + (f" and TREC runs in {args.runs_dir}" if args.runs_dir else ""))
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from .metrics import parse_measures
    from .scoring import default_measures, format_table, score_run
    from .trec import read_qrels, read_run

    k = check_positive_int("--k", _int("--k", args.k))
    measures = parse_measures(args.metrics) if args.metrics else default_measures(k)
    result = score_run(read_qrels(args.qrels), read_run(args.run), measures, complete=args.complete)
    if args.format == "json":
        data = result.to_json_dict()
        if not args.per_query:
            data = {key: value for key, value in data.items() if key != "per_query"}
        print(json.dumps(data, indent=2))
    else:
        print(format_table(result, per_query=args.per_query))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "eval":
            return _cmd_eval(args)
        return _cmd_score(args)
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
