"""``agentmemory score``: TREC run files against TREC qrels, as trec_eval scores them.

Its means are over the queries both in the run and in the qrels (trec_eval's default), or over every judged
query of the qrels with ``--complete`` (trec_eval ``-c``, a query missing from the run scoring 0).  Under the
text table a line names each run that misses judged queries, so a mean over fewer queries is never taken for
the report's: ``agentmemory eval --runs-dir`` writes the headline queries' judgments to ``qrels.txt``, and a
headline query whose ranking had no hit is in the report's means as 0 (see
:mod:`agentmemory.evaluation.run_export`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path, PurePath

from agentmemory.cli.args import output_format, parse_int
from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.evaluation.runfiles import parse_run_option
from agentmemory.files.trec import read_qrels, read_run
from agentmemory.metrics import parse_measures
from agentmemory.metrics.scoring import ScoreResult, default_measures, format_runs_table, format_table, score_run

__all__ = ["run"]


def _named_runs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``RUN`` (named after its file) and every ``--run NAME=PATH``, each name once."""
    named = [parse_run_option(text) for text in args.runs]
    if args.run is not None:
        named.insert(0, (Path(args.run).name, args.run))
    if not named:
        raise ParameterError("RUN", None, "is missing", "give a run file, or name runs with --run NAME=PATH")
    names = [n for n, _ in named]
    if len(set(names)) != len(names):
        raise ParameterError("--run", names, "names a run twice", "give every run its own NAME")
    return named


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory score``: one run's table (or JSON), or several side by side."""
    shown = output_format(args)
    k = check_positive_int("--k", parse_int("--k", args.k, "an integer >= 1"))
    measures = parse_measures(args.metrics) if args.metrics else default_measures(k)
    named = _named_runs(args)
    qrels = read_qrels(args.qrels)
    results = {name: score_run(qrels, read_run(path), measures, complete=args.complete) for name, path in named}
    if len(results) == 1 and not args.runs:
        (result,) = results.values()
        if shown == "json":
            print(json.dumps(result.to_json_dict(), indent=2))
        else:
            print(format_table(result, per_query=args.per_query))
            _print_missing(results, qrels, args.qrels)
        return 0
    if shown == "json":
        print(json.dumps({name: r.to_json_dict() for name, r in results.items()}, indent=2))
    else:
        print(format_runs_table(results, per_query=args.per_query))
        _print_missing(results, qrels, args.qrels)
    return 0


def _print_missing(results: dict[str, ScoreResult], qrels: dict[str, dict[str, int]], path: str) -> None:
    """A line per run whose means are over fewer queries than the qrels judge (it has no ranking for the others)."""
    judged = sum(1 for docs in qrels.values() if docs)
    for name, result in results.items():
        if result.queries < judged:
            missing = judged - result.queries
            print(
                f"{name} ranks {result.queries} of the {judged} judged queries of {PurePath(path).name}: its means "
                f"are over those {result.queries} (trec_eval's default); --complete counts the other {missing} as 0 "
                "(trec_eval -c), as agentmemory eval's means do."
            )
