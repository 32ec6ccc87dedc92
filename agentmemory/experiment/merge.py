"""The merge: every task's per-query rows into the experiment's results, statistics computed once, here.

Tasks are grouped into **evaluations**, one per ``(collection, k, seed)``, in
the plan's order; within one, the systems keep the plan's order.  Each
evaluation gets what ``agentmemory eval``'s artifact holds for it, from the
per-query values alone: the headline means (:func:`~agentmemory.evaluation.runner.mean`
over the headline queries, as ``evaluate`` computes them: over the queries with a
value where a measure has none on some), the means per
query group, the tie-aware means the tasks reported, and
:func:`~agentmemory.analysis.statistics.per_query_statistics` seeded by the evaluation's
seed.  Nothing here depends on which worker ran a task, when, or in which
order the tasks finished: the same task results give the same bytes.

The questions are the collection's judged ones, then, when it has answer
systems, those left out of retrieval scoring
(:attr:`~agentmemory.experiment.plan.PlannedCollection.queries`: the
questions ``agentmemory eval --answers`` scores).  The measures are the
tasks' (every task of an evaluation computes the same, in the same order,
except an answer system without retrieval, which computes its answer
measures only); a value a task did not compute has none (``None``, an empty
cell), never 0: an answer system's retrieval measures without retrieval, a
retrieval measure on a question left out of retrieval scoring.

Outputs (all text; :func:`dumps_results` and :func:`per_query_csv` are the
exact bytes written):

* ``results.json``: ``schema_version``, ``agentmemory``, ``grid`` (name,
  relevance, extra measures, statistics options), ``collections`` (name,
  path as written, format, options, relevance (its own, else the grid's), digest and
  :func:`~agentmemory.collection.collection_summary`), ``tasks`` (counts),
  ``failures`` (each failed task's collection, system, k, seed, key and
  error line) and ``evaluations`` (collection, k, seed, measures,
  unscored, systems with their parameters and task key (and a run's
  ``skipped_query_hits`` when it names questions the loader skipped), systems not
  evaluated, the token counter when a measure counted tokens, aggregate
  means, group means, tie-aware means, statistics);
* ``per_query.csv``: one row per evaluation x system x question (as above) x
  measure: ``collection,k,seed,system,query_id,group,measure,value``
  (values in Python's shortest round-trip form; empty where the measure has
  no value on the query, ``tokens@first`` without a relevant hit);
* ``tables/<collection>.md``: the comparison table
  (:func:`~agentmemory.analysis.comparison_table.systems_table`) of each of the collection's
  evaluations, under a heading ``k = 5, seed = 7``, its caption starting with the definitions
  card's short form (:func:`agentmemory.analysis.card.measured` of the card made when the
  collection was loaded), a line saying which system is the baseline and why, and for each
  retriever with several settings (a system table's ``grid``) its parameter grid
  (:mod:`agentmemory.analysis.parameter_grid`): the headline measure over each pair of parameters
  (the numbers of the report's heat map) and the best setting against the default one.

**Labels** name every parameter of a retriever (:func:`agentmemory.retrievers.full_label`:
``BM25 (k1=0.6, b=0.75)``, never ``BM25 (k1=0.6)``, whose ``b`` a reader would have to know), in
``results.json`` and in the tables.  **The baseline** is ``[statistics] baseline`` when the grid names
one; else **default BM25** (the system ``bm25``, every parameter at its default) when the evaluation
holds it, since a grid over BM25's parameters asks what tuning gains over the default; else the first
system.  :attr:`Evaluated.warnings` lists each evaluation whose resamples are too few for any marker of
its table to appear under Holm's correction (:func:`~agentmemory.analysis.prose.marker_limit`), with the
number that would suffice; ``agentmemory experiment`` prints them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentmemory._version import __version__
from agentmemory.analysis.card import measured
from agentmemory.analysis.comparison_table import systems_table
from agentmemory.analysis.parameter_grid import headline_measure, parameter_grids
from agentmemory.analysis.prose import resamples_warning
from agentmemory.analysis.statistics import Statistics, per_query_statistics
from agentmemory.evaluation.runner import defined_mean, mean
from agentmemory.experiment.plan import Plan, Task
from agentmemory.metrics import distinct_measures, parse_measure
from agentmemory.retrievers import full_label

__all__ = [
    "DEFAULT_BASELINE",
    "PER_QUERY_COLUMNS",
    "SCHEMA_VERSION",
    "Evaluated",
    "Failure",
    "dumps_results",
    "merge",
    "per_query_csv",
]

SCHEMA_VERSION = 1

DEFAULT_BASELINE = "bm25"
"""The system that is the baseline of a grid naming none, when an evaluation holds it: BM25 with its defaults."""

PER_QUERY_COLUMNS = ("collection", "k", "seed", "system", "query_id", "group", "measure", "value")
"""The columns of ``per_query.csv`` (and ``per_query.parquet``)."""


@dataclass(frozen=True)
class Failure:
    """A task that failed: the task and the one-line error its worker reported."""

    task: Task
    error: str

    def to_dict(self) -> dict[str, Any]:
        t = self.task
        return {
            "collection": t.collection,
            "system": t.system,
            "k": t.k,
            "seed": t.seed,
            "task": t.key,
            "error": self.error,
        }


@dataclass(frozen=True)
class Evaluated:
    """The merged experiment: ``results`` (the JSON-ready ``results.json``), per-query rows and table texts;
    ``warnings`` one line per evaluation whose comparison table can show no marker for want of resamples."""

    results: dict[str, Any]
    rows: tuple[tuple[Any, ...], ...]
    tables: dict[str, str]
    warnings: tuple[str, ...] = ()


def _groups(plan: Plan) -> list[tuple[str, int, int, list[Task]]]:
    """``(collection, k, seed, tasks)`` in the plan's order of first appearance."""
    grouped: dict[tuple[str, int, int], list[Task]] = {}
    for task in plan.tasks:
        grouped.setdefault((task.collection, task.k, task.seed), []).append(task)
    order = {c.name: i for i, c in enumerate(plan.collections)}
    keys = sorted(grouped, key=lambda g: order[g[0]])  # stable: k and seed keep their first-appearance order
    return [(c, k, s, grouped[(c, k, s)]) for c, k, s in keys]


def _baseline(plan: Plan, systems: Sequence[tuple[str, str, str]], texts: Mapping[str, str]) -> tuple[str, str]:
    """The baseline of this evaluation and why: ``(name, "grid")`` for the grid's ``[statistics] baseline`` when it
    is one of the systems, else ``(DEFAULT_BASELINE, "default")`` when the evaluation holds default BM25, else
    ``(first system, "first")``.  A retriever is named by its key, its label (every parameter named, or only those
    that differ from the defaults, as the grid file's checks know it) or its spec as written."""
    wanted = plan.grid.statistics.baseline
    if wanted is not None:
        short = _short_labels(plan)
        for name, label, _ in systems:
            if wanted in (name, label, texts.get(name), short.get(name)):
                return name, "grid"
    if any(name == DEFAULT_BASELINE for name, _, _ in systems):
        return DEFAULT_BASELINE, "default"
    return systems[0][0], "first"


def _short_labels(plan: Plan) -> dict[str, str]:
    """Each system's label as the grid file names it (only the parameters that differ from the defaults)."""
    return {s.name: s.label for c in plan.collections for s in c.systems}


def _label(task: Task) -> str:
    """A system's label in the tables: a retriever's with every parameter (:func:`~agentmemory.retrievers.full_label`)."""
    system = task.job.system
    return full_label(system.spec) if system.kind == "retriever" else system.label


def baseline_note(plan: Plan, label: str, reason: str) -> str:
    """Which system (``label``) the comparison table compares with, and why (``reason`` from :func:`_baseline`)."""
    wanted = plan.grid.statistics.baseline
    if reason == "grid":
        return f"The baseline is {label}, the grid's [statistics] baseline."
    why = "the grid names no [statistics] baseline" if wanted is None else f"the grid's baseline {wanted!r} is not here"
    if reason == "default":
        return (
            f"The baseline is {label}, default BM25: {why}, and default BM25 is then the baseline of every "
            "evaluation that holds it."
        )
    return f"The baseline is {label}, the first system: {why} and this evaluation holds no default BM25."


def merge(plan: Plan, outputs: Mapping[str, Mapping[str, Any]], failures: Sequence[Failure]) -> Evaluated:
    """Merge task results (``outputs[task key]``, as read back from JSON) into results, rows and tables."""
    evaluations = []
    rows: list[tuple[Any, ...]] = []
    tables: dict[str, list[str]] = {c.name: [] for c in plan.collections}
    warnings: list[str] = []
    failed = {f.task.key for f in failures}
    for collection_name, k, seed, tasks in _groups(plan):
        done = [t for t in tasks if t.key in outputs and t.key not in failed]
        missing = [t.system for t in tasks if t not in done]
        if not done:
            evaluations.append(
                {"collection": collection_name, "k": k, "seed": seed, "systems": [], "not_evaluated": missing}
            )
            continue
        evaluation, evaluation_rows, table = _evaluation(plan, collection_name, k, seed, done, missing, outputs)
        evaluations.append(evaluation)
        rows.extend(evaluation_rows)
        warning = resamples_warning(Statistics.from_dict(evaluation["statistics"]))
        if warning is not None:
            warnings.append(f"collection {collection_name}, k = {k}, seed = {seed}: {warning}")
        text = f"## k = {k}, seed = {seed}\n\n{table}"
        if missing:
            text += f"\nNot evaluated (the task failed): {', '.join(missing)}.\n"
        tables[collection_name].append(text)
    texts_by_collection = {
        name: f"# {name}: comparison tables\n\n" + "\n".join(parts) if parts else f"# {name}\n\nNo task succeeded.\n"
        for name, parts in tables.items()
    }
    results = _results_json(plan, outputs, failed, failures, evaluations)
    return Evaluated(results, tuple(rows), texts_by_collection, tuple(warnings))


def _evaluation(
    plan: Plan,
    collection_name: str,
    k: int,
    seed: int,
    done: list[Task],
    missing: list[str],
    outputs: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, Any], list[tuple[Any, ...]], str]:
    """One ``(collection, k, seed)`` evaluation of the tasks that succeeded: its entry, its rows, its table."""
    options = plan.grid.statistics
    collection = plan.collection(collection_name)
    results = [outputs[t.key] for t in done]
    measures = _union([done[0].job.measures, *(out["measures"] for out in results)], results)
    values = {t.system: _values(out, collection.queries, measures) for t, out in zip(done, results)}
    unscored = _union([done[0].job.measures, *(out["unscored"] for out in results)], results, "unscored")
    systems = [(t.system, _label(t), t.job.system.kind) for t in done]
    texts = {t.system: t.job.system.spec for t in done}
    labels = {name: label for name, label, _ in systems}
    baseline, reason = _baseline(plan, systems, texts)
    statistics = per_query_statistics(
        values,
        labels=labels,
        queries=collection.queries,
        excluded_groups=collection.excluded_groups,
        measures=measures,
        seed=seed,
        confidence=options.confidence,
        n_resamples=options.n_resamples,
        alpha=options.alpha,
        baseline=baseline,
        pairs=options.comparisons == "all",
        table_measures=distinct_measures(measures, k),  # RR and RR@k are one measure at k: one column
    )
    headline = [qid for qid, group in collection.queries if group not in collection.excluded_groups]
    tokenizer = next((out["tokenizer"] for out in results if "tokenizer" in out), None)
    entry = {
        "collection": collection_name,
        "k": k,
        "seed": seed,
        "measures": measures,
        "unscored": unscored,
        "systems": [
            {
                "name": t.system,
                "label": labels[t.system],
                "kind": t.job.system.kind,
                "params": out["system"]["params"],
                "task": t.key,
                "dropped": out["dropped"],
                **_skipped(out),
            }
            for t, out in zip(done, results)
        ],
        "not_evaluated": missing,
        **({"tokenizer": tokenizer} if tokenizer is not None else {}),
        "aggregate": [
            {"system": name, **{m: _mean(m, (values[name][qid][m] for qid in headline)) for m in measures}}
            for name in labels
        ],
        "groups": _group_means(values, collection.queries, measures),
        "tie_aware": {t.system: out["tie_aware"] for t, out in zip(done, results)},
        "statistics": statistics.to_dict(),
    }
    rows = [
        (collection_name, k, seed, name, qid, group or "", m, values[name][qid][m])
        for name in labels
        for qid, group in collection.queries
        for m in measures
    ]
    relevance = plan.grid.relevance_of(collection_name)
    card = measured(
        collection.card,
        [parse_measure(m) for m in measures],
        k=k,
        relevance=relevance,
        unscored=unscored,
    )
    counter = None if tokenizer is None else tokenizer.get("name")
    table = systems_table(systems, statistics, k=k, relevance=relevance, tokenizer=counter)
    text = replace(table, short_form=card["short_form"]).render("markdown")
    text += "\n" + baseline_note(plan, labels[baseline], reason) + "\n"
    return entry, rows, text + _grids_text(systems, results, statistics, k)


def _grids_text(
    systems: Sequence[tuple[str, str, str]],
    results: Sequence[Mapping[str, Any]],
    statistics: Statistics,
    k: int,
) -> str:
    """The parameter grids among ``systems`` (settings of one retriever varying its parameters), as Markdown."""
    settings = [(name, label, kind, out["system"]["params"]) for (name, label, kind), out in zip(systems, results)]
    measure = headline_measure(list(statistics.shown_measures), k)
    return "".join(
        f"\n### Parameter grid: {grid.name} ({len(grid.settings)} settings)\n\n{grid.markdown()}\n"
        for grid in parameter_grids(settings, statistics, measure)
    )


def _union(lists: Sequence[Sequence[str]], results: Sequence[Mapping[str, Any]], field: str = "measures") -> list[str]:
    """The measures (or ``unscored`` measures) the ``results`` report, each once: in the planned order (the first
    of ``lists``, every task's ``measures``) and then as reported.  Tasks of one evaluation compute the same
    measures, except an answer system without retrieval, which computes only its answer measures."""
    reported = {m for out in results for m in out[field]}
    return [m for m in dict.fromkeys(m for listed in lists for m in listed) if m in reported]


def _values(
    out: Mapping[str, Any], queries: Sequence[tuple[str, str | None]], measures: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """A task's value of every measure on every question of the evaluation; ``None`` where it has none (a measure
    it did not compute: an answer system's retrieval measures without retrieval)."""
    rows = {row["query_id"]: row["metrics"] for row in out["per_query"]}
    return {qid: {m: rows.get(qid, {}).get(m) for m in measures} for qid, _ in queries}


def _skipped(out: Mapping[str, Any]) -> dict[str, Any]:
    """``skipped_query_hits`` of a run naming questions the loader skipped (their hits ignored), else nothing."""
    pairs = out.get("skipped_hits")
    if not pairs:
        return {}
    return {"skipped_query_hits": {"questions": len(pairs), "hits": sum(n for _, n in pairs)}}


def _mean(measure: str, values: Iterable[float | None]) -> float | None:
    """A measure's mean over queries, as ``evaluate`` computes it: over those with a value when it may have none
    on some (``tokens@first``) or has none on one (an answer measure without an answer, a retrieval measure of
    a question left out of retrieval scoring: :func:`~agentmemory.evaluation.runner.defined_mean`, ``None``
    when none has one), else :func:`~agentmemory.evaluation.runner.mean`."""
    listed = list(values)
    if parse_measure(measure).definition.undefined_when is not None or any(v is None for v in listed):
        return defined_mean(listed)
    return mean(v for v in listed if v is not None)


def _group_means(
    values: Mapping[str, Mapping[str, Mapping[str, float | None]]],
    queries: Sequence[tuple[str, str | None]],
    measures: Sequence[str],
) -> dict[str, dict[str, dict[str, float | None]]]:
    """Each system's mean of every measure per query group (groups sorted; queries without a group left out)."""
    groups = sorted({g for _, g in queries if g is not None})
    return {
        name: {
            g: {m: _mean(m, (per_query[qid][m] for qid, qg in queries if qg == g)) for m in measures} for g in groups
        }
        for name, per_query in values.items()
    }


def _results_json(
    plan: Plan,
    outputs: Mapping[str, Mapping[str, Any]],
    failed: set[str],
    failures: Sequence[Failure],
    evaluations: list[dict[str, Any]],
) -> dict[str, Any]:
    """``results.json`` as data (see the module docstring)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "agentmemory": __version__,
        "grid": {
            "name": plan.grid.name,
            "relevance": plan.grid.relevance,
            "measures": list(plan.grid.measures),
            "statistics": plan.grid.statistics.to_dict(),
        },
        "collections": [
            {
                "name": c.name,
                "path": c.definition.given,
                "format": c.source.format,
                "options": dict(c.source.options),
                "relevance": plan.grid.relevance_of(c.name),
                "digest": c.source.digest,
                "summary": dict(c.summary),
            }
            for c in plan.collections
        ],
        "tasks": {
            "total": len(plan.tasks),
            "succeeded": sum(1 for t in plan.tasks if t.key in outputs and t.key not in failed),
            "failed": sum(1 for t in plan.tasks if t.key in failed),
        },
        "failures": [f.to_dict() for f in failures],
        "evaluations": evaluations,
    }


def dumps_results(results: Mapping[str, Any]) -> str:
    """``results.json``'s exact text: 2-space indented JSON, UTF-8, one trailing newline (as the eval artifact)."""
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def per_query_csv(rows: Sequence[tuple[Any, ...]]) -> str:
    """``per_query.csv``'s exact text: a header, then the rows; values in repr form (empty for no value), ``\\n``
    line endings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PER_QUERY_COLUMNS)
    writer.writerows((*row[:-1], "" if row[-1] is None else repr(float(row[-1]))) for row in rows)
    return buffer.getvalue()
