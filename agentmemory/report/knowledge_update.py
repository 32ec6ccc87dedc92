"""The knowledge-update section of a collection report: stale evidence per system, and means by difficulty.

Shown only for collections whose queries carry a knowledge update's two sides
in their metadata (BEAM's ``original_info`` / ``updated_info``,
:mod:`agentmemory.metrics.stale`); for every other collection
:func:`knowledge_update_tables` returns nothing, so their reports are unchanged.

* :func:`stale_table`: each system's ``stale@k`` (every ``stale@k`` the
  evaluation computed) over the knowledge updates that have both sides, the
  share of them whose outdated message outranks the update in the top k
  (lower is better), with its percentile-bootstrap interval (the run's seed
  and the statistics' confidence and resamples), and beside it ``R@k`` of the
  same questions (did the update come back at all?).  The knowledge updates
  left out of the share (an empty side) are counted in the caption and listed
  by :func:`left_out_table`.  Without a ``stale@k`` measure the table says how
  to ask for one.
* :func:`difficulty_table`: every measure's mean per ``difficulty`` (BEAM's
  ``easy``, ``medium``, ``hard``, ``clear``, ``moderate``, ``""`` shown as
  ``(none)``) over the headline queries, with intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from agentmemory.analysis.statistics import Statistics
from agentmemory.analysis.text_tables import column_name, lower_is_better, sample_cell
from agentmemory.datasets.beam import difficulty_group
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import parse_measure
from agentmemory.metrics.stale import ORIGINAL, UPDATED
from agentmemory.records import Query
from agentmemory.report.display import Table, plural

__all__ = ["difficulty_table", "knowledge_update_tables", "left_out_table", "stale_queries", "stale_table"]


def _updates(evaluation: Evaluation) -> list[Query]:
    """The judged queries that are knowledge updates (metadata with both keys), in collection order."""
    return [q for q in evaluation.collection.judged_queries if ORIGINAL in q.metadata and UPDATED in q.metadata]


def stale_queries(evaluation: Evaluation) -> tuple[list[str], list[str]]:
    """``(counted, left out)``: the knowledge-update query ids with both sides, and those with an empty side.

    An original id also listed as updated is not original (the loader's rule), so a knowledge update whose
    original ids are all updated too has an empty side.
    """
    counted: list[str] = []
    left_out: list[str] = []
    for q in _updates(evaluation):
        original = set(q.metadata[ORIGINAL]) - set(q.metadata[UPDATED])
        (counted if original and q.metadata[UPDATED] else left_out).append(q.id)
    return counted, left_out


def _stale_measures(statistics: Statistics) -> list[str]:
    return [m for m in statistics.measures if parse_measure(m).name == "stale"]


def stale_table(evaluation: Evaluation, statistics: Statistics) -> Table:
    """Each system's ``stale@k`` over the knowledge updates with both sides, with intervals (module docstring)."""
    counted, left_out = stale_queries(evaluation)
    measures = _stale_measures(statistics)
    recall = f"R@{evaluation.k}"
    shown = [*measures, *([recall] if recall in statistics.measures else [])]
    rows = []
    for result in evaluation.results:
        values = {q.query_id: q.metrics for q in result.per_query}
        row = {"System": result.label}
        for m in shown:
            row[column_name(m)] = sample_cell([values[qid][m] for qid in counted], statistics, m)
        rows.append(row)
    pct = round(statistics.confidence * 100)
    caption = (
        f"Knowledge updates: stale@k, the share of the {plural(len(counted), 'knowledge update', 'knowledge updates')} "
        f"with both sides whose outdated message (original_info) is in the top k above the update (lower is better), "
        f"with {pct}% percentile-bootstrap intervals (seed {statistics.seed})"
    )
    if left_out:
        caption += f"; {plural(len(left_out), 'knowledge update', 'knowledge updates')} with an empty side left out"
    if not measures:
        caption = (
            "Knowledge updates: stale@k was not computed; add it to the measures (metrics = "
            f"'stale@{evaluation.k}') to see how often the outdated message outranks the update"
        )
        return Table(pd.DataFrame(columns=["System"]), caption)
    return Table(pd.DataFrame(rows, columns=["System", *(column_name(m) for m in shown)]), caption)


def left_out_table(evaluation: Evaluation) -> Table:
    """The knowledge updates left out of stale@k, each with the loader's note saying why."""
    _, left_out = stale_queries(evaluation)
    notes = {q: n for q, n in evaluation.collection.notes if "stale@k" in n}
    rows = [{"query": q, "why": notes.get(q, "an empty side")} for q in left_out]
    return Table(
        pd.DataFrame(rows, columns=["query", "why"]),
        "Knowledge updates left out of stale@k (still scored on every other measure)",
    )


def difficulty_table(evaluation: Evaluation, statistics: Statistics, measures: Sequence[str] | None = None) -> Table:
    """Every measure's mean per difficulty and system over the headline queries, with intervals (sorted by name)."""
    chosen = list(statistics.measures if measures is None else measures)
    headline = {q.id: q for q in evaluation.collection.headline_queries}
    groups: dict[str, list[str]] = {}
    for qid, q in headline.items():
        groups.setdefault(difficulty_group(str(q.metadata.get("difficulty", ""))), []).append(qid)
    rows = []
    for name in sorted(groups):
        ids = groups[name]
        for result in evaluation.results:
            values = {q.query_id: q.metrics for q in result.per_query}
            row = {"difficulty": name, "queries": str(len(ids)), "System": result.label}
            for m in chosen:
                row[column_name(m)] = sample_cell([values[qid][m] for qid in ids], statistics, m)
            rows.append(row)
    lower = [m for m in chosen if lower_is_better(m)]
    caption = "By difficulty (as the benchmark labels its questions): every measure over the headline queries"
    if lower:
        caption += f"; {', '.join(lower)}: only knowledge updates can be stale, the others count 0"
    return Table(pd.DataFrame(rows, columns=["difficulty", "queries", "System", *map(column_name, chosen)]), caption)


def knowledge_update_tables(evaluation: Evaluation, statistics: Statistics) -> list[Table]:
    """The section's tables: stale@k, the knowledge updates left out, then means by difficulty; none at all for a
    collection without knowledge updates carrying both sides' ids (every collection but BEAM's)."""
    if not _updates(evaluation):
        return []
    tables = [stale_table(evaluation, statistics)]
    if stale_queries(evaluation)[1]:
        tables.append(left_out_table(evaluation))
    if any("difficulty" in q.metadata for q in evaluation.collection.headline_queries):
        tables.append(difficulty_table(evaluation, statistics))
    return tables
