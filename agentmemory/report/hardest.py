"""The hardest queries of a run: where each retriever did worst, with the evidence and what it returned instead."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from agentmemory.analysis.text_tables import seed_measures
from agentmemory.errors import check_positive_int
from agentmemory.evaluation.runner import Evaluation, QueryResult
from agentmemory.report.display import Table, short

__all__ = ["hardest_queries", "hardest_table", "hardest_tables"]


def hardest_queries(evaluation: Evaluation, retriever: str, n: int = 5) -> tuple[QueryResult, ...]:
    """The ``n`` judged queries of ``retriever`` with the lowest RR, then the lowest R@k.

    Sorted by ``(RR, R@k, position in the file)`` ascending, so equal values
    keep file order; every judged query takes part, those of groups left
    out of the headline included (their group says so).  Fewer than ``n``
    when there are fewer queries.

    Raises:
        ParameterError: ``n`` is not an integer >= 1, or ``retriever`` was not evaluated.
    """
    n = check_positive_int("n", n)
    recall, _, rr = seed_measures(evaluation.k)
    result = evaluation.result(retriever)
    ranked = sorted(
        enumerate(result.per_query), key=lambda item: (item[1].metrics[rr], item[1].metrics[recall], item[0])
    )
    return tuple(q for _, q in ranked[:n])


def _evidence(q: QueryResult, evaluation: Evaluation, width: int) -> str:
    ranks = {h.entry_id: h.rank for h in q.hits}
    if q.credited is not None:  # provenance: the rank of the first hit that reached each source
        ranks = {s: rank for rank, new in enumerate(q.credited.new, start=1) for s in new}
    parts = []
    for entry_id in q.relevant:
        where = f"rank {ranks[entry_id]}" if entry_id in ranks else f"not in top {evaluation.k}"
        parts.append(f"{entry_id} [{where}] {short(evaluation.collection.entry(entry_id).text, width)}")
    return "; ".join(parts) or "-"


def _retrieved(q: QueryResult, evaluation: Evaluation, system: str, width: int) -> str:
    relevant = set(q.relevant)
    parts = []
    for index, h in enumerate(q.hits):
        if q.credited is not None:
            mark = f", reaches {', '.join(sorted(q.credited.reach[index]))}" if q.credited.reach[index] else ""
        else:
            mark = ", relevant" if h.entry_id in relevant else ""
        parts.append(
            f"{h.rank}. {h.entry_id} ({h.score:.2f}{mark}) {short(evaluation.entry_text(system, h.entry_id), width)}"
        )
    return "; ".join(parts) or "nothing (every entry scores 0)"


def hardest_table(evaluation: Evaluation, retriever: str, n: int = 5, *, width: int = 40) -> Table:
    """:func:`hardest_queries` with the question, its relevant evidence and what the retriever returned.

    Columns: query, group, text, RR, R@k (2 decimals), first relevant rank
    (``none in top k``), relevant (each evidence entry with its rank or
    ``not in top k`` and a short text) and retrieved (the top k: rank, id,
    score, ``relevant`` when judged so, a short text).
    """
    k = evaluation.k
    recall, _, rr = seed_measures(k)
    result = evaluation.result(retriever)
    rows = []
    for q in hardest_queries(evaluation, retriever, n):
        rank = q.first_relevant_rank
        rows.append(
            {
                "query": q.query_id,
                "group": q.group or "-",
                "text": q.text,
                rr: format(q.metrics[rr], ".2f"),
                recall: format(q.metrics[recall], ".2f"),
                "first relevant rank": "none in top k" if rank is None else str(rank),
                "relevant": _evidence(q, evaluation, width),
                "retrieved": _retrieved(q, evaluation, result.name, width),
            }
        )
    total = len(result.per_query)
    return Table(
        pd.DataFrame(rows),
        f"{result.label}: the {len(rows)} hardest of {total} judged queries at k = {k} "
        "(lowest RR, then lowest recall; every group included)",
    )


def hardest_tables(evaluation: Evaluation, n: int = 5) -> list[Table]:
    """:func:`hardest_table` of every system, each folded in the HTML report (a click opens it)."""
    return [replace(hardest_table(evaluation, r.name, n), fold=True) for r in evaluation.results]
