"""Where each retriever puts the first relevant entry: one frame of first-relevant ranks, and its distribution.

:func:`first_relevant_frame` is the one place that reads first-relevant
ranks: one row per retriever and judged query, from the run's own top k or
from a deeper run of it.  The eval report plots it per query
(:func:`agentmemory.report.curves.first_relevant_frame` is this function);
the bins here are counted from it: over the headline queries (the ones
behind MRR), each query falls in one bin, the rank ``1 .. k`` of its first
relevant hit, or ``not found in top k`` when no relevant entry is in its top
k.  The mean of ``1 / rank`` over the bins (0 for ``not found``) is the MRR
the tables report, which :func:`first_rank_note` shows.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.evaluation.runner import Evaluation, mean
from agentmemory.report.display import Markdown

__all__ = [
    "first_rank_bins",
    "first_rank_counts",
    "first_rank_frame",
    "first_rank_note",
    "first_relevant_frame",
    "not_found_bin",
]

_COLUMNS = ["retriever", "query", "rank", "in top k", "headline"]


def first_relevant_frame(evaluation: Evaluation, deep: Evaluation | None = None) -> pd.DataFrame:
    """Rank of each query's first relevant hit, one row per retriever and judged query (in file order).

    The ranks are read from ``deep`` when given (a deeper run of the same
    retrievers, such as :func:`agentmemory.report.curves.deep_evaluation`:
    the rank in the full ranking), else from ``evaluation``'s own top k.
    Columns: retriever label, query id, ``rank`` (nullable ``Int64``;
    ``<NA>`` when no relevant entry is among the hits read), ``in top k``
    (the rank is at most ``evaluation.k``) and ``headline`` (the query
    counts in the headline means).
    """
    source = evaluation if deep is None else deep
    rows = []
    for result in source.results:
        headline = {q.query_id for q in result.headline}
        for q in result.per_query:
            rank = q.first_relevant_rank
            in_top = rank is not None and rank <= evaluation.k
            rows.append([result.label, q.query_id, rank, in_top, q.query_id in headline])
    return pd.DataFrame(rows, columns=_COLUMNS).astype({"rank": "Int64"})


def not_found_bin(k: int) -> str:
    """The name of the last bin: ``"not found in top 5"``."""
    return f"not found in top {k}"


def first_rank_bins(k: int) -> list[str]:
    """``["1", "2", ..., "k", "not found in top k"]``."""
    return [str(rank) for rank in range(1, k + 1)] + [not_found_bin(k)]


def first_rank_counts(ranks: pd.DataFrame, k: int) -> dict[str, dict[str, int]]:
    """Per retriever label (in the frame's order): how many headline queries have their first relevant hit at
    each rank ``1 .. k``, and how many not in the top k (every bin present).

    ``ranks`` is a :func:`first_relevant_frame`; a rank beyond ``k`` (read
    from a deeper run) counts as not found in the top k.
    """
    counts: dict[str, dict[str, int]] = {}
    for label, rank, headline in zip(ranks["retriever"], ranks["rank"], ranks["headline"]):
        bins = counts.setdefault(label, dict.fromkeys(first_rank_bins(k), 0))
        if headline:
            bins[not_found_bin(k) if pd.isna(rank) or rank > k else str(rank)] += 1
    return counts


def first_rank_frame(evaluation: Evaluation) -> pd.DataFrame:
    """Long table: retriever label, bin, number of queries and their share of the headline queries."""
    rows = []
    for label, counts in first_rank_counts(first_relevant_frame(evaluation), evaluation.k).items():
        total = sum(counts.values())
        for name, count in counts.items():
            rows.append({"retriever": label, "bin": name, "queries": count, "share": count / total if total else 0.0})
    return pd.DataFrame(rows)


def first_rank_note(evaluation: Evaluation) -> Markdown:
    """Per retriever, the bins in words and the check that the mean of ``1 / rank`` is the MRR."""
    k = evaluation.k
    ranks = first_relevant_frame(evaluation)
    counts_of = first_rank_counts(ranks, k)
    lines = []
    for result in evaluation.results:
        counts = counts_of[result.label]
        total = sum(counts.values())
        found = [f"rank {name} for {count}" for name, count in counts.items() if count and name != not_found_bin(k)]
        mine = ranks[(ranks["retriever"] == result.label) & ranks["headline"]]["rank"]
        mrr = mean(0.0 if pd.isna(rank) else 1 / int(rank) for rank in mine)
        lines.append(
            f"- **{result.label}:** of {total} headline queries, the first relevant hit is at "
            f"{', '.join(found) or 'no rank'}; not found in the top {k} for {counts[not_found_bin(k)]}. "
            f"The mean of 1/rank (0 when not found) is {mrr:.2f}, the MRR of the tables ({result.means['RR']:.2f})."
        )
    return Markdown("\n".join(lines))
