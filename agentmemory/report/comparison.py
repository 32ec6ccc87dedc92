"""The head of every report: the comparison table, and every query with all systems side by side.

:func:`comparison` shows :func:`agentmemory.analysis.comparison_table.comparison_table` (the
table ``agentmemory eval`` prints first and ``--table-out`` writes) with its
caption and the line saying what its markers mean, then the cost table
beside it (:func:`costs`: what each system's ranking costs in memories and
tokens, and where rankings ran out of hits).  :func:`per_query`
replaces one table per system: one row per judged query, each system's
values beside each other, and each system's difference to the baseline.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.analysis.comparison_table import ComparisonTable, comparison_table
from agentmemory.analysis.costs import cost_table
from agentmemory.analysis.statistics import Statistics
from agentmemory.analysis.text_tables import lower_is_better
from agentmemory.evaluation.runner import Evaluation, seed_measures
from agentmemory.report.display import Markdown, Table, plural, short

__all__ = ["best_cells", "comparison", "costs", "per_query"]


def comparison(evaluation: Evaluation, statistics: Statistics) -> tuple[Table | Markdown, ...]:
    """The comparison table (caption above, cells ``mean [low, high] marker +a/−b``; the claims' figures as
    published rows below ours) and its notation line, the published rows' notes, then
    :func:`costs` (nothing more when no system ranked anything)."""
    table = comparison_table(evaluation, statistics)
    frame = pd.DataFrame(table.rows(), columns=table.header())
    notes = table.published_notes()  # the claims' rows (--claims): where each figure comes from, how it differs
    published = (Markdown(notes.replace("\n", "\n\n")),) if notes else ()
    notation = table.notation() + " **Bold**: the best mean of each column (to three decimals)."
    return (
        Table(frame, table.caption(), bold=best_cells(table), fold=False),
        Markdown(notation),
        *published,
        *costs(evaluation),
    )


def best_cells(table: ComparisonTable) -> frozenset[tuple[int, int]]:
    """The ``(row, column)`` of each column's best mean in :meth:`ComparisonTable.rows` (the highest, or the lowest
    for a lower-is-better measure; every system tied with it at three decimals); none in a column of one value."""
    best: set[tuple[int, int]] = set()
    for column, measure in enumerate(table.measures, start=1):
        means = {
            row: round(cell.interval.mean, 3)
            for row, (name, _, _) in enumerate(table.systems)
            if (cell := table.cells[(name, measure)]).interval is not None
        }
        if len(set(means.values())) < 2:
            continue
        top = (min if lower_is_better(measure) else max)(means.values())
        best |= {(row, column) for row, mean in means.items() if mean == top}
    return frozenset(best)


def costs(evaluation: Evaluation) -> tuple[Table | Markdown, ...]:
    """The cost table (:func:`agentmemory.analysis.costs.cost_table`: memories returned, tokens per memory and in
    the top k, per system) and its notes, as a list (what the columns count, then each system whose rankings ran
    out of hits before a measure's depth or budget); nothing when no system ranked anything."""
    table = cost_table(evaluation)
    if table is None:
        return ()
    frame = pd.DataFrame(table.cells(), columns=table.header())
    return Table(frame, table.caption()), Markdown("\n".join(f"- {line}" for line in table.notes()))


def _delta(value: float) -> str:
    """``"+0.50"``, ``"−0.50"`` (a real minus sign), ``"0.00"``."""
    if round(value, 2) == 0:
        return "0.00"
    return f"+{value:.2f}" if value > 0 else f"−{-value:.2f}"


def per_query(evaluation: Evaluation, statistics: Statistics, *, width: int = 40) -> Table:
    """Every judged query with every system side by side: ``R@k`` and ``RR``, and each system's Δ to the baseline.

    Rows in file order; queries of a group left out of the headline means
    are kept and marked in the ``group`` column.  The baseline is
    ``statistics.baseline``.
    """
    recall, _, rr = seed_measures(evaluation.k)
    base = evaluation.result(statistics.baseline)
    others = [r for r in evaluation.results if r.name != base.name]
    excluded = set(evaluation.collection.headline_excludes)
    has_groups = any(q.group is not None for q in base.per_query)
    rows = []
    for index, q in enumerate(base.per_query):
        row: dict[str, str] = {"query": q.query_id}
        if has_groups:
            group = q.group or "-"
            row["group"] = f"{group} (not in headline)" if q.group in excluded else group
        row["text"] = short(q.text, width)
        row["relevant"] = str(len(q.relevant))
        row[f"{base.label} {recall}"] = format(q.value(recall), ".2f")
        row[f"{base.label} {rr}"] = format(q.value(rr), ".2f")
        for other in others:
            theirs = other.per_query[index]
            row[f"{other.label} {recall}"] = format(theirs.value(recall), ".2f")
            row[f"Δ {recall} {other.label}"] = _delta(theirs.value(recall) - q.value(recall))
            row[f"{other.label} {rr}"] = format(theirs.value(rr), ".2f")
            row[f"Δ {rr} {other.label}"] = _delta(theirs.value(rr) - q.value(rr))
        rows.append(row)
    n = len(base.per_query)
    caption = (
        f"Each of the {plural(n, 'judged query', 'judged queries')} at k = {evaluation.k}: {recall} and {rr} of every "
        f"system, and Δ, its difference to the baseline {base.label}"
    )
    if excluded and has_groups:
        caption += f" (groups {', '.join(sorted(excluded))} are shown, but left out of the headline means)"
    return Table(pd.DataFrame(rows), caption)
