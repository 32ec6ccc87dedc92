"""``agentmemory eval``: retrievers and run files on a collection; the comparison table, the report, the artifact.

The options become one :class:`~agentmemory.evaluation.options.EvalOptions`
(checked once, its messages naming the flags: ``--k``, ``--seed``,
``--relevance``); every output is declared in an
:class:`~agentmemory.files.output_plan.OutputPlan` before anything is read, rendered
after computing, and only then written, each atomically, at the absolute path
its option was fixed to when the command line was parsed (a plugin that
changes the working folder moves no output).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

from agentmemory.analysis.answers_view import answers_text, live_text
from agentmemory.analysis.card import card_text, evaluation_card
from agentmemory.analysis.claim_checks import check_claims, claims_text
from agentmemory.analysis.comparison_table import ComparisonTable, comparison_table
from agentmemory.analysis.costs import cost_table
from agentmemory.analysis.judgments import original_statistics, patch_text
from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.analysis.text_tables import full_report, timings_table
from agentmemory.cli.answer_args import answers_option, read_answers
from agentmemory.cli.args import parse_int, progress
from agentmemory.cli.collection_args import collection_path, load_collection
from agentmemory.cli.eval_outputs import Outputs, check_table_labels, run_file_names
from agentmemory.collection import Collection, require_judgments
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import ParameterError, quote
from agentmemory.evaluation.options import AUTO_RETRIEVERS, EvalOptions, default_retrievers, options_from_settings
from agentmemory.evaluation.runfiles import RunFile, check_run_queries, parse_run_option, read_run_file
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.settings import SETTINGS
from agentmemory.evaluation.system_runs import (
    is_system_memories,
    reattributed_run,
    replay_pool,
    system_table,
    system_timings,
)
from agentmemory.files.output_plan import collection_inputs
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers
from agentmemory.systems.registry import resolve_systems

__all__ = ["eval_options", "run", "run_file_names"]


def eval_options(args: argparse.Namespace) -> EvalOptions:
    """The evaluation's settings as the flags give them (:data:`~agentmemory.evaluation.settings.SETTINGS`),
    checked once, messages naming the flags; ``--run-depth`` only with ``--runs-dir``."""
    if args.run_depth is not None and not args.runs_dir:
        raise ParameterError(
            "--run-depth",
            args.run_depth,
            "is given without --runs-dir",
            "it sets the depth of the runs --runs-dir writes",
        )
    given = {s.name: getattr(args, s.name) for s in SETTINGS}
    return options_from_settings(given, "flag", progress=progress(args))


def live_inputs(args: argparse.Namespace) -> list[Path]:
    """The files the live options read (the prompts' files, ``FILE.py`` of ``FILE.py:NAME``, the price table)."""
    texts = (args.reader_prompt, args.judge_prompt, args.prices)
    return [Path(re.sub(r"(\.py):[A-Za-z_][A-Za-z0-9_]*$", r"\1", text)) for text in texts if text]


def _reattributed(run: RunFile, collection: Collection, options: EvalOptions) -> RunFile:
    """A memory system's recorded run (its memories file has ``attribution``) attributed again under an
    ``--attribution`` other than the default ``auto`` (which keeps what the replay recorded); any other run as read."""
    if options.attribution == "auto" or run.memories_path is None:
        return run
    if not is_system_memories(Path(run.memories_path).read_text(encoding="utf-8")):
        return run
    return reattributed_run(run, collection, options.attribution, k=options.k, relevance=options.mode)


def _worker_count(args: argparse.Namespace) -> int:
    """``--workers`` as an int >= 1 (read before anything is loaded)."""
    workers = parse_int("--workers", args.workers, "an integer >= 1")
    if workers < 1:
        raise ParameterError("--workers", args.workers, "is below 1", "give the number of processes, e.g. 2")
    return workers


def _retrievers(args: argparse.Namespace) -> tuple[RetrieverSpec, ...]:
    """``--retrievers`` resolved (once: evaluate takes the specs as they are); none when only runs, systems or
    answer files are given; for ``auto`` (the default) both that :func:`default_retrievers` may choose, until the
    collection is read (:func:`_chosen`)."""
    if not args.retrievers.strip() and (args.run or args.system or args.answers):
        return ()
    if args.retrievers.strip() == AUTO_RETRIEVERS:
        return resolve_retrievers("bm25,tags", option="--retrievers")
    return resolve_retrievers(args.retrievers, option="--retrievers")


def _chosen(
    args: argparse.Namespace, retrievers: tuple[RetrieverSpec, ...], collection: Collection, options: EvalOptions
) -> tuple[tuple[RetrieverSpec, ...], EvalOptions]:
    """``--retrievers auto``: the collection's default retrievers (:func:`default_retrievers`), said on the card
    (and the baseline checked against them); any other value as resolved."""
    if args.retrievers.strip() != AUTO_RETRIEVERS:
        return retrievers, options
    names, why = default_retrievers(collection)
    chosen = tuple(r for r in retrievers if r.key in names.split(","))  # resolved once, with the flag
    dropped = {(r.key, r.label) for r in retrievers} - {(r.key, r.label) for r in chosen}
    if options.baseline is not None and any(options.baseline in pair for pair in dropped):
        options.check_baseline([(r.key, r.label) for r in chosen], "--baseline")
    return chosen, replace(options, defaults_chosen=(*options.defaults_chosen, why))


def _print_head(evaluation: Evaluation, statistics: Statistics, table: ComparisonTable) -> None:
    """The definitions card, the comparison table, and beside them the original judgments' table (a
    ``--qrels-patch``) and the claims (``--claims``)."""
    card = evaluation_card(evaluation)
    print("Definitions (what every number below is):\n\n" + card_text(card, plain=True) + "\n")
    print(table.render())
    costs = cost_table(evaluation)
    if costs is not None:
        print(costs.render() + "\n")
    original = original_statistics(evaluation, statistics)
    if original is not None:
        print(patch_text(evaluation, statistics, original) + "\n")
    claims = evaluation.options.claims
    if claims is not None:
        print(claims_text(claims, check_claims(evaluation, statistics, card, original=original), plain=True) + "\n")


def _print_systems(evaluation: Evaluation, statistics: Statistics, options: EvalOptions) -> None:
    """The memory systems' attribution, the imported answers' judges, seeds and failure split, the timings."""
    if evaluation.systems:
        print(system_table(evaluation.systems, options.k, evaluation.collection, evaluation.relevance) + "\n")
    if evaluation.answers:
        print(answers_text(evaluation, statistics) + "\n")
    generated = live_text(evaluation, timings=options.timings)
    if generated:
        print(generated + "\n")
    if options.timings:
        print(timings_table(evaluation) + "\n")
        if evaluation.systems:
            print(system_timings(evaluation.systems) + "\n")


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory eval`` (see the module docstring)."""
    options = eval_options(args)
    retrievers = _retrievers(args)
    memory_systems = resolve_systems(args.system, option="--system") if args.system else ()  # checked first
    workers = _worker_count(args)
    run_args = [parse_run_option(text) for text in args.run]
    memories = getattr(args, "memories", None) or {}
    systems = [(r.key, r.label) for r in retrievers] + [(name, name) for name, _ in run_args]
    systems += [(s.key, s.label) for s in memory_systems]
    answers = answers_option(args)
    systems += [(a.name, a.name) for a in answers]
    if options.live is not None:  # judges without a reader grade answer files' answers: refused without any
        options.live.require_answers(bool(answers))
    readers = options.live.readers if options.live is not None else ()  # checked with the options
    systems += [(f"{key}+{r.name}", f"{label} + {r.name}") for key, label in list(systems) for r in readers]
    options.check_baseline(systems, "--baseline")
    with_memories = [s.key for s in memory_systems] + [a.name for a in answers]  # written only when they have some
    outputs = Outputs.declare(args, [key for key, _ in systems], with_memories)
    check_table_labels(outputs.table_labels, systems)
    outputs.plan.add_inputs(Path(path) for _, path in run_args)
    outputs.plan.add_inputs(Path(path) for path in memories.values())
    outputs.plan.add_inputs(Path(path) for path in (args.qrels_patch, args.claims) if path)
    outputs.plan.add_inputs(live_inputs(args))
    options, answer_files = read_answers(args, answers, options, outputs.plan)
    collection = load_collection(args, options.progress)
    outputs.plan.add_inputs(collection_inputs(collection_path(args), collection.files))
    require_judgments(collection, collection_path(args))  # as score refuses an empty qrels file
    if args.qrels_patch:  # checked line by line against the collection before anything is evaluated
        collection = read_judgment_patch(args.qrels_patch, collection).apply(collection)
    retrievers, options = _chosen(args, retrievers, collection, options)
    run_data = [read_run_file(path, name, memories=memories.get(name)) for name, path in run_args]
    described = (
        f"the collection {quote(str(args.collection))}"
        if args.collection
        else f"the shipped fixture {quote(collection.name)}, since --collection was not given"
    )
    for run_file in run_data:  # a run made for another collection: refused naming this one, --lenient-run or not
        check_run_queries(run_file, collection, described)
    run_data = [_reattributed(r, collection, options) for r in run_data]
    with replay_pool(workers if memory_systems else 1) as executor:
        evaluation = evaluate(
            collection,
            retrievers,
            runs=run_data,
            systems=memory_systems,
            options=options,
            answers=answer_files,
            executor=executor,
        )
    statistics = evaluation_statistics(
        evaluation,
        seed=options.seed,
        baseline=options.baseline,
        table=options.table_metrics,
        table_name="--table-metrics",
        progress=options.progress,
    )
    table = comparison_table(evaluation, statistics)
    # Nothing is written unless everything can be, and each file is replaced whole (agentmemory.files.output_plan).
    outputs.put(evaluation, statistics, table, collection)
    outputs.plan.write()
    _print_head(evaluation, statistics, table)
    _print_systems(evaluation, statistics, options)
    print(full_report(evaluation, statistics))
    print("\n" + outputs.written(options.k))
    return 0
