"""Where each retriever puts the first relevant entry: the distribution of first-relevant ranks.

Over the headline queries (the ones behind MRR), each query falls in one
bin: the rank ``1 .. k`` of its first relevant hit, or ``not found in top k``
when no relevant entry is in its top k.  The mean of ``1 / rank`` over the
bins (0 for ``not found``) is the MRR the tables report, which
:func:`first_rank_note` shows.
"""

from __future__ import annotations

import pandas as pd

from ..evaluate import Evaluation, RetrieverResult, mean
from .display import Markdown

__all__ = ["first_rank_bins", "first_rank_counts", "first_rank_frame", "first_rank_note", "not_found_bin"]


def not_found_bin(k: int) -> str:
    """The name of the last bin: ``"not found in top 5"``."""
    return f"not found in top {k}"


def first_rank_bins(k: int) -> list[str]:
    """``["1", "2", ..., "k", "not found in top k"]``."""
    return [str(rank) for rank in range(1, k + 1)] + [not_found_bin(k)]


def first_rank_counts(result: RetrieverResult, k: int) -> dict[str, int]:
    """How many headline queries of ``result`` have their first relevant hit at each rank (every bin present)."""
    counts = dict.fromkeys(first_rank_bins(k), 0)
    for q in result.headline:
        rank = q.first_relevant_rank
        counts[not_found_bin(k) if rank is None else str(rank)] += 1
    return counts


def first_rank_frame(evaluation: Evaluation) -> pd.DataFrame:
    """Long table: retriever label, bin, number of queries and their share of the headline queries."""
    rows = []
    for result in evaluation.results:
        counts = first_rank_counts(result, evaluation.k)
        total = sum(counts.values())
        for name, count in counts.items():
            rows.append(
                {"retriever": result.label, "bin": name, "queries": count, "share": count / total if total else 0.0}
            )
    return pd.DataFrame(rows)


def first_rank_note(evaluation: Evaluation) -> Markdown:
    """Per retriever, the bins in words and the check that the mean of ``1 / rank`` is the MRR."""
    k = evaluation.k
    lines = []
    for result in evaluation.results:
        counts = first_rank_counts(result, k)
        total = sum(counts.values())
        found = [f"rank {name} for {count}" for name, count in counts.items() if count and name != not_found_bin(k)]
        mrr = mean(0.0 if q.first_relevant_rank is None else 1 / q.first_relevant_rank for q in result.headline)
        lines.append(
            f"- **{result.label}:** of {total} headline queries, the first relevant hit is at "
            f"{', '.join(found) or 'no rank'}; not found in the top {k} for {counts[not_found_bin(k)]}. "
            f"The mean of 1/rank (0 when not found) is {mrr:.2f}, the MRR of the tables ({result.means['RR']:.2f})."
        )
    return Markdown("\n".join(lines))
