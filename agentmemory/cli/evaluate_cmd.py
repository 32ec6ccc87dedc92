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
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from agentmemory.analysis.answers_view import answers_text, live_text
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import card_text, evaluation_card
from agentmemory.analysis.claim_checks import check_claims, claims_text
from agentmemory.analysis.comparison_table import ComparisonTable, comparison_table, table_format
from agentmemory.analysis.costs import cost_table
from agentmemory.analysis.judgments import original_statistics, patch_text
from agentmemory.analysis.latex_table import latex_table
from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.analysis.text_tables import full_report, timings_table
from agentmemory.answers.records import AnswerFile
from agentmemory.cli.args import parse_int, progress
from agentmemory.cli.collection_args import collection_path, load_collection
from agentmemory.collection import Collection, require_judgments
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import NumberTextError, ParameterError, quote
from agentmemory.evaluation.answer_runs import AnswersSpec, parse_answers_option, read_answer_files
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.run_export import ExportedRuns, cut_text, depth_text, exported_runs, qrels_text
from agentmemory.evaluation.runfiles import RunFile, check_run_queries, parse_run_option, read_run_file
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.system_runs import (
    is_system_memories,
    reattributed_run,
    replay_pool,
    system_table,
    system_timings,
)
from agentmemory.files.numbers import parse_number
from agentmemory.files.output_plan import OutputPath, OutputPlan, collection_inputs
from agentmemory.files.trec import format_qrels, format_run
from agentmemory.live.config import LiveOptions
from agentmemory.metrics import Measure, parse_measures
from agentmemory.metrics.token_counters import DEFAULT_TOKEN_COUNTER
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers
from agentmemory.systems.registry import resolve_systems

__all__ = ["FLAG_NAMES", "run", "run_file_names"]

FLAG_NAMES = {
    "k": "--k",
    "seed": "--seed",
    "relevance": "--relevance",
    "measures": "--metrics",
    "attribution": "--attribution",
    "system_timeout": "--system-timeout",
    "tokenizer": "--tokenizer",
    "claims": "--claims",
    "run_depth": "--run-depth",
    "clock": "--clock",
}
"""How messages about the evaluation's options name them here: by their flags."""


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


def eval_options(args: argparse.Namespace) -> EvalOptions:
    """The evaluation's options as the flags give them, checked once (messages name the flags).

    ``--relevance`` defaults to provenance when a memory system is evaluated (its memories count through
    the entries they are attributed to), else to direct.
    """
    relevance = args.relevance if args.relevance is not None else ("provenance" if args.system else "direct")
    measures = list(parse_measures(args.metrics, name="--metrics")) if args.metrics is not None else []
    measures += [m for m in table_metrics(args) or () if m not in measures]  # the table's are computed too
    return EvalOptions(
        k=parse_int("--k", args.k, "an integer >= 1"),
        seed=parse_int("--seed", args.seed, "an integer >= 0"),
        relevance=relevance,
        measures=measures,  # refused now, before anything is loaded
        lenient_run=args.lenient_run,
        as_of=args.as_of,
        timings=args.timings,
        progress=progress(args),
        baseline=args.baseline,
        attribution=args.attribution,
        system_timeout=_seconds(args.system_timeout),
        lenient_system=args.lenient_system,
        tokenizer=DEFAULT_TOKEN_COUNTER if args.tokenizer is None else args.tokenizer,  # '' refused there
        claims=args.claims,  # read and checked now, before anything is loaded
        run_depth=_run_depth(args),
        clock=args.clock,
        names=FLAG_NAMES,
    )


LIVE_FLAGS = {
    "readers": "--reader",
    "judges": "--judge",
    "reader_prompt": "--reader-prompt",
    "judge_prompt": "--judge-prompt",
    "judge_majority": "--judge-majority",
    "offline": "--offline",
    "lenient": "--lenient-answers",
    "prices": "--prices",
    "answers": "--answers",
}
"""How messages about the live answers' options name them here: by their flags."""


def live_options(args: argparse.Namespace) -> LiveOptions | None:
    """``--reader``, ``--judge`` and their options as one checked record (``None`` when none is given)."""
    given = {
        "readers": args.reader,
        "judges": args.judge,
        "reader_prompt": args.reader_prompt,
        "judge_prompt": args.judge_prompt,
        "judge_majority": args.judge_majority,
        "offline": args.offline,
        "lenient": args.lenient_answers,
        "prices": args.prices,
    }
    if not any(given.values()):
        return None
    return LiveOptions(**given, names=LIVE_FLAGS)


def live_inputs(args: argparse.Namespace) -> list[Path]:
    """The files the live options read (the prompts' files, ``FILE.py`` of ``FILE.py:NAME``, the price table)."""
    texts = (args.reader_prompt, args.judge_prompt, args.prices)
    return [Path(re.sub(r"(\.py):[A-Za-z_][A-Za-z0-9_]*$", r"\1", text)) for text in texts if text]


def table_metrics(args: argparse.Namespace) -> tuple[Measure, ...] | None:
    """``--table-metrics`` as measures, or ``None`` when it is not given (the table shows every measure)."""
    if args.table_metrics is None:
        return None
    return parse_measures(args.table_metrics, name="--table-metrics")


def _run_depth(args: argparse.Namespace) -> int | None:
    """``--run-depth`` as an int (the record checks it against ``--k`` and the measures); only with ``--runs-dir``."""
    if args.run_depth is None:
        return None
    depth = parse_int("--run-depth", args.run_depth, "an integer >= 1")
    if not args.runs_dir:
        raise ParameterError(
            "--run-depth",
            args.run_depth,
            "is given without --runs-dir",
            "it sets the depth of the runs --runs-dir writes",
        )
    return depth


def _reattributed(run: RunFile, collection: Collection, options: EvalOptions) -> RunFile:
    """A memory system's recorded run (its memories file has ``attribution``) attributed again under an
    ``--attribution`` other than the default ``auto`` (which keeps what the replay recorded); any other run as read."""
    if options.attribution == "auto" or run.memories_path is None:
        return run
    if not is_system_memories(Path(run.memories_path).read_text(encoding="utf-8")):
        return run
    return reattributed_run(run, collection, options.attribution, k=options.k, relevance=options.relevance)


def _worker_count(args: argparse.Namespace) -> int:
    """``--workers`` as an int >= 1 (read before anything is loaded)."""
    workers = parse_int("--workers", args.workers, "an integer >= 1")
    if workers < 1:
        raise ParameterError("--workers", args.workers, "is below 1", "give the number of processes, e.g. 2")
    return workers


def _seconds(text: str) -> float:
    """``--system-timeout`` as seconds > 0."""
    try:
        seconds = float(parse_number(text))
    except NumberTextError as err:
        raise ParameterError("--system-timeout", text, err.problem, "give seconds > 0, e.g. 300") from None
    if not 0 < seconds < math.inf:  # said here about the text as typed; the record checks values from Python
        raise ParameterError("--system-timeout", text, "is not a number > 0", "give seconds, e.g. 300")
    return seconds


@dataclass
class _Outputs:
    """The files ``--out``, ``--table-out`` and ``--runs-dir`` name, declared before anything is read.

    The paths are the absolute ones the options were fixed to when parsed
    (:class:`~agentmemory.files.output_plan.OutputPath`); ``shown`` holds them as typed, for the last line.
    """

    plan: OutputPlan
    out: Path | None = None
    table_out: Path | None = None
    table_kind: str | None = None
    table_labels: dict[str, str] = field(default_factory=dict)  # --table-label SYSTEM=LABEL
    runs_dir: Path | None = None
    run_paths: dict[str, Path] = field(default_factory=dict)
    memories_paths: dict[str, Path] = field(default_factory=dict)
    qrels_path: Path | None = None
    all_qrels_path: Path | None = None
    runs_shown: str = "DIR"  # --runs-dir as typed, in the lines saying how to re-score
    runs: ExportedRuns | None = None
    shown: list[str] = field(default_factory=list)

    @classmethod
    def declare(cls, args: argparse.Namespace, keys: list[str], system_keys: Sequence[str] = ()) -> _Outputs:
        plan = OutputPlan()
        outputs = cls(plan)
        if args.out:
            outputs.out = plan.file("--out", args.out)
            outputs.shown.append(str(PurePath(str(args.out))))
        if args.table_out:
            outputs.table_out = plan.file("--table-out", args.table_out, example="comparison.md")
            outputs.table_kind = table_format(str(args.table_out))
            outputs.table_labels = _table_labels(getattr(args, "table_label", None) or [])
            outputs.shown.append(str(PurePath(str(args.table_out))))
        if args.runs_dir:
            runs = args.runs_dir if isinstance(args.runs_dir, OutputPath) else OutputPath(args.runs_dir)
            outputs.runs_dir = plan.folder("--runs-dir", runs)
            names = run_file_names(keys)
            outputs.run_paths = {
                key: plan.file("--runs-dir", runs / name, example="runs/") for key, name in names.items()
            }
            outputs.memories_paths = {  # each memory system's memories, as a --memories file for its run
                key: plan.file("--runs-dir", runs / (names[key][: -len(".trec")] + ".memories.jsonl"), example="runs/")
                for key in system_keys
            }
            outputs.qrels_path = plan.file("--runs-dir", runs / "qrels.txt", example="runs/")  # the headline's
            outputs.all_qrels_path = plan.file("--runs-dir", runs / "qrels-all.txt", example="runs/")  # if any left out
            outputs.shown.append(f"TREC runs in {runs}")
            outputs.runs_shown = str(PurePath(str(runs)))
        return outputs

    def put(
        self, evaluation: Evaluation, statistics: Statistics, table: ComparisonTable, collection: Collection
    ) -> None:
        """Render every output (rendering checks ids, scores and text); :meth:`OutputPlan.write` writes them all."""
        if self.out is not None:
            self.plan.put(self.out, dumps_artifact(evaluation, statistics))
        if self.table_out is not None and self.table_kind == "latex":  # \label{tab:<collection>-<measure>}
            self.plan.put(self.table_out, latex_table(table, labels=self.table_labels))
        elif self.table_out is not None and self.table_kind is not None:
            shown = table.relabel(self.table_labels, option="--table-label")
            self.plan.put(self.table_out, shown.render(self.table_kind))
        if self.qrels_path is not None:  # each ranking as deep as its measures read (evaluation.run_export)
            self.runs = exported_runs(evaluation)
            for name, rankings in self.runs.rankings.items():
                self.plan.put(self.run_paths[name], format_run(rankings, tag=name))
            self.plan.put(self.qrels_path, format_qrels(self.runs.qrels))  # the headline queries' (run_export)
            if self.runs.all_qrels is not None and self.all_qrels_path is not None:
                self.plan.put(self.all_qrels_path, format_qrels(self.runs.all_qrels))
            for key, text in self.runs.memories.items():
                self.plan.put(self.memories_paths[key], text)

    def written(self, k: int) -> str:
        """``Wrote a, b and TREC runs in DIR`` (as typed), or that nothing was written; then how deep the runs go
        when below the top ``k``, and the rankings ``--run-depth`` cut above what a measure read."""
        done = self.shown
        listed = ", ".join(done[:-1]) + " and " + done[-1] if len(done) > 1 else "".join(done)
        lines = [f"Wrote {listed}" if done else "No file written (--out FILE writes the artifact)."]
        if self.runs is not None:
            found = (depth_text(self.runs, k), cut_text(self.runs), qrels_text(self.runs, self.runs_shown))
            lines += [line for line in found if line is not None]
        return "\n".join(lines)


def _table_labels(texts: Sequence[str]) -> dict[str, str]:
    """``--table-label SYSTEM=LABEL`` options as a mapping (the systems are checked once they are known)."""
    out: dict[str, str] = {}
    for text in texts:
        name, sep, label = text.partition("=")
        if not sep or not name.strip() or not label.strip():
            raise ParameterError("--table-label", text, "is not SYSTEM=LABEL", "give e.g. --table-label hybrid=Hybrid")
        out[name.strip()] = label.strip()
    return out


def _check_table_labels(labels: dict[str, str], systems: Sequence[tuple[str, str]]) -> None:
    """Every ``--table-label`` names a system by its key or label, before anything is read."""
    known = [name for pair in systems for name in pair]
    for name in labels:
        if name not in known:
            raise ParameterError(
                "--table-label", name, "names no evaluated system", "choose a key or label from: " + ", ".join(known)
            )


def _retrievers(args: argparse.Namespace) -> tuple[RetrieverSpec, ...]:
    """``--retrievers`` resolved (once: evaluate takes the specs as they are); none when only runs, systems or
    answer files are given."""
    if not args.retrievers.strip() and (args.run or args.system or args.answers):
        return ()
    return resolve_retrievers(args.retrievers, option="--retrievers")


def _named(texts: Sequence[str], option: str, names: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` options (``--answers-format``, ``--answers-mapping``) keyed by a system of ``names``."""
    out: dict[str, str] = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ParameterError(
                option, text, "is not NAME=VALUE", f"give e.g. {option} zep=..., NAME an --answers name"
            )
        if name.strip() not in names:
            raise ParameterError(
                option, name, "names no --answers system", "choose from: " + (", ".join(names) or "(none given)")
            )
        out[name.strip()] = value.strip()
    return out


def _answers(args: argparse.Namespace) -> list[AnswersSpec]:
    """``--answers`` with its ``--answers-format`` and ``--answers-mapping``, checked before anything is read."""
    specs = [parse_answers_option(text) for text in args.answers]
    names = [s.name for s in specs]
    formats = _named(args.answers_format, "--answers-format", names)
    mappings = _named(args.answers_mapping, "--answers-mapping", names)
    return [replace(s, format=formats.get(s.name), mapping=mappings.get(s.name)) for s in specs]


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


def _read_answers(
    args: argparse.Namespace, answers: Sequence[AnswersSpec], options: EvalOptions, plan: OutputPlan
) -> tuple[EvalOptions, list[tuple[AnswerFile, ...]]]:
    """The ``--answers`` files (and the claims' own answer files) declared as inputs, then read and checked before
    the collection; relevance ``provenance`` by default when a file carries retrieved memories to attribute."""
    plan.add_inputs(Path(path) for a in answers for path in (*a.paths, *([a.mapping] if a.mapping else [])))
    if options.claims is not None:
        plan.add_inputs(Path(path) for _, paths, _ in options.claims.answers() for path in paths)
    files = [read_answer_files(a) for a in answers]
    if args.relevance is None and not args.system and any(f[0].has_retrieval for f in files):
        options = replace(options, relevance="provenance")  # imported memories count through attribution
    return options, files


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
    answers = _answers(args)
    systems += [(a.name, a.name) for a in answers]
    live = live_options(args)  # specs, prompts and the price table checked now, before anything is loaded
    if live is not None:
        live.require_answers(bool(answers))
    readers = live.readers if live is not None else ()
    systems += [(f"{key}+{r.name}", f"{label} + {r.name}") for key, label in list(systems) for r in readers]
    options.check_baseline(systems, "--baseline")
    with_memories = [s.key for s in memory_systems] + [a.name for a in answers]  # written only when they have some
    outputs = _Outputs.declare(args, [key for key, _ in systems], with_memories)
    _check_table_labels(outputs.table_labels, systems)
    outputs.plan.add_inputs(Path(path) for _, path in run_args)
    outputs.plan.add_inputs(Path(path) for path in memories.values())
    outputs.plan.add_inputs(Path(path) for path in (args.qrels_patch, args.claims) if path)
    outputs.plan.add_inputs(live_inputs(args))
    options = replace(options, live=live)
    options, answer_files = _read_answers(args, answers, options, outputs.plan)
    collection = load_collection(args, options.progress)
    outputs.plan.add_inputs(collection_inputs(collection_path(args), collection.files))
    require_judgments(collection, collection_path(args))  # as score refuses an empty qrels file
    if args.qrels_patch:  # checked line by line against the collection before anything is evaluated
        collection = read_judgment_patch(args.qrels_patch, collection).apply(collection)
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
        table=table_metrics(args),
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
