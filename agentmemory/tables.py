"""Plain-text tables for the command line and reports (no pandas needed).

:func:`seed_table` prints the seed write-up's table: columns ``Retriever``,
``mean_recall@k``, ``mean_precision@k``, ``MRR``, values rounded to 2
decimals with Python's ``format(value, ".2f")`` (round-half-even on the
binary value), as a Markdown table.
"""

from __future__ import annotations

from collections.abc import Sequence

from .evaluate import Evaluation

__all__ = ["SEED_COLUMNS", "markdown_table", "seed_rows", "seed_table", "unjudged_note"]

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
    return "\n".join([head, "", markdown_table(SEED_COLUMNS, seed_rows(evaluation)), "", unjudged_note(evaluation)])
