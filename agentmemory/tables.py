"""Plain-text tables for the command line and reports (no pandas needed).

:func:`seed_table` prints the seed write-up's table: columns ``Retriever``,
``mean_recall@k``, ``mean_precision@k``, ``MRR``, values rounded to 2
decimals with Python's ``format(value, ".2f")`` (round-half-even on the
binary value), as a Markdown table.
"""

from __future__ import annotations

from collections.abc import Sequence

from .evaluate import Evaluation
from .stats import Interval, Statistics

__all__ = [
    "SEED_COLUMNS",
    "collection_notes",
    "comparison_lines",
    "full_report",
    "group_table",
    "interval_table",
    "markdown_table",
    "seed_measures",
    "seed_rows",
    "seed_table",
    "unjudged_note",
]

SEED_COLUMNS = ("Retriever", "mean_recall@k", "mean_precision@k", "MRR")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with ``|`` separators and a ``|---|`` rule."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def seed_rows(evaluation: Evaluation) -> list[list[str]]:
    """One row per retriever: label and the three seed metrics to 2 decimals."""
    rows = []
    for result in evaluation.results:
        row = result.aggregate_row()
        rows.append([row["retriever"]] + [format(row[c], ".2f") for c in SEED_COLUMNS[1:]])
    return rows


def unjudged_note(evaluation: Evaluation) -> str:
    """One line saying which queries had no judgments (left out of every mean)."""
    ids = evaluation.unjudged_query_ids
    if not ids:
        return "Queries without judgments: none."
    return f"Queries without judgments, left out of the means ({len(ids)}): {', '.join(ids)}."


def seed_table(evaluation: Evaluation) -> str:
    """The seed's metric table, a line naming what it was computed on, and the unjudged note."""
    c = evaluation.collection
    head = (
        f"Collection {c.name}: {len(c.entries)} entries, {len(c.judged_queries)} judged queries; "
        f"k = {evaluation.k}, seed = {evaluation.seed}"
    )
    if c.headline_excludes:
        n = len(evaluation.results[0].headline) if evaluation.results else 0
        head += f"\nHeadline means over {n} queries; shown by group only: {', '.join(c.headline_excludes)}"
    return "\n".join([head, "", markdown_table(SEED_COLUMNS, seed_rows(evaluation)), "", unjudged_note(evaluation)])


def _with_interval(cell: Interval | None) -> str:
    if cell is None:
        return "n/a"
    return f"{cell.mean:.2f} [{cell.low:.2f}, {cell.high:.2f}]"


def seed_measures(k: int) -> tuple[str, str, str]:
    """The seed's three measures as registry names: ``R@k``, ``P@k``, ``RR``."""
    return (f"R@{k}", f"P@{k}", "RR")


def interval_table(evaluation: Evaluation, statistics: Statistics) -> str:
    """The seed's three measures per retriever with their bootstrap intervals.

    ``statistics`` is :func:`agentmemory.stats.evaluation_statistics` of the evaluation.
    """
    names = seed_measures(evaluation.k)
    pct = round(statistics.confidence * 100)
    head = (
        f"{pct}% percentile-bootstrap intervals over {statistics.queries} queries "
        f"({statistics.n_resamples} resamples, seed {statistics.seed})"
    )
    if statistics.excluded_groups:
        head += "; left out of these means and shown by group: " + ", ".join(statistics.excluded_groups)
    rows = [
        [r.label] + [_with_interval(statistics.intervals[r.name].get(m)) for m in names]
        for r in evaluation.results
    ]
    return head + ":\n\n" + markdown_table(["Retriever", *names], rows)


def group_table(evaluation: Evaluation, statistics: Statistics) -> str:
    """Per query group: number of queries, then each retriever's seed measures with intervals."""
    names = seed_measures(evaluation.k)
    rows = []
    for group in statistics.groups.values():
        for r in evaluation.results:
            cells = group.intervals[r.name]
            rows.append([group.name, str(group.queries), r.label] + [_with_interval(cells.get(m)) for m in names])
    return "By query group:\n\n" + markdown_table(["Group", "Queries", "Retriever", *names], rows)


def comparison_lines(statistics: Statistics, k: int) -> list[str]:
    """The plain-English sentence of every pairwise comparison on the seed's measures."""
    return statistics.sentences(seed_measures(k))


def collection_notes(evaluation: Evaluation) -> list[str]:
    """Every query a loader skipped or repaired, one line each, with the reason."""
    c = evaluation.collection
    lines = []
    if c.skipped:
        lines.append(f"Skipped queries ({len(c.skipped)}), left out of every number:")
        lines += [f"  {q}: {why}" for q, why in c.skipped]
    if c.repairs:
        lines.append(f"Repairs ({len(c.repairs)}):")
        lines += [f"  {q}: {what}" for q, what in c.repairs]
    return lines


def full_report(evaluation: Evaluation, statistics: Statistics) -> str:
    """What ``agentmemory eval`` prints: the seed table, intervals, groups, comparisons, notes."""
    parts = [seed_table(evaluation), interval_table(evaluation, statistics)]
    if statistics.groups:
        parts.append(group_table(evaluation, statistics))
    sentences = comparison_lines(statistics, evaluation.k)
    if sentences:
        parts.append("Paired comparisons:\n" + "\n".join(f"- {s}" for s in sentences))
    notes = collection_notes(evaluation)
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)
