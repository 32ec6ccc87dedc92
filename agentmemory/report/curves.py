"""The numbers behind the report's plots: per-query values, cutoff curves, first relevant ranks.

:func:`deep_evaluation` ranks every query as deep as the collection is large
(``k = len(collection.entries)``) with :func:`agentmemory.evaluate`.  Because
every retriever's ranking is a total order (score descending, then entry id
descending), the top ``j`` of that deep ranking *is* the top ``j`` a run at
``k = j`` returns, so :func:`cutoff_curves` computes ``R@j`` and ``P@j`` for
every ``j`` from one deep run with :func:`agentmemory.evaluation.sweeps.cutoff_means`,
as the k sweep does (the tests check this against a separate
:func:`agentmemory.evaluate` at each ``j``).  :func:`first_relevant_frame`
(the rank of each query's first relevant hit in that deep ranking) is
:func:`agentmemory.report.ranks.first_relevant_frame`, whose bins the
collection report counts.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.analysis.text_tables import seed_measures
from agentmemory.evaluation.runner import Evaluation, evaluate
from agentmemory.evaluation.sweeps import cutoff_means
from agentmemory.report.ranks import first_relevant_frame

__all__ = ["cutoff_curves", "deep_evaluation", "first_relevant_frame", "per_query_values"]


def deep_evaluation(evaluation: Evaluation, max_k: int | None = None) -> Evaluation:
    """The same run (collection, retrievers, seed) at ``k = max_k``, default the number of entries.

    Reuses the evaluation's store (no second indexing) and skips tie
    analysis, which nothing drawn from a deep run reads.  A retriever that
    ranks at most ``max_k`` entries (``hybrid``, ``recency``) goes that deep,
    like a run file: its curves are flat beyond.
    """
    depth = len(evaluation.collection.entries) if max_k is None else max_k
    return evaluate(
        evaluation.collection,
        evaluation.specs,
        runs=evaluation.runs,
        lenient_run=evaluation.lenient_run,
        k=depth,
        seed=evaluation.seed,
        measures=evaluation.measures,
        relevance=evaluation.relevance,
        ties=False,
        store=None if evaluation.as_of else evaluation.store,
        clamp=True,
        as_of=evaluation.as_of,
    )


def per_query_values(evaluation: Evaluation) -> pd.DataFrame:
    """Long table: retriever label, query id, ``R@k`` and ``P@k`` of every judged query."""
    recall, precision, _ = seed_measures(evaluation.k)
    rows = [
        {"retriever": r.label, "query": q.query_id, recall: q.metrics[recall], precision: q.metrics[precision]}
        for r in evaluation.results
        for q in r.per_query
    ]
    return pd.DataFrame(rows)


def cutoff_curves(deep: Evaluation) -> pd.DataFrame:
    """Mean recall@j and precision@j for j = 1 .. ``deep.k``, one row per retriever and j.

    ``deep`` is a :func:`deep_evaluation`; R@j and P@j are
    :func:`agentmemory.evaluation.sweeps.cutoff_means`: computed on the first j hits of
    each query (see the module docstring) and averaged over the headline
    queries (groups in the collection's ``headline_excludes`` left out, as
    :func:`agentmemory.evaluate` does).
    """
    ks = list(range(1, deep.k + 1))
    means = cutoff_means(deep, ks, ("R", "P"))
    rows = [
        {
            "retriever": result.label,
            "k": j,
            "mean_recall@k": means[result.name]["R"][i],
            "mean_precision@k": means[result.name]["P"][i],
        }
        for result in deep.results
        for i, j in enumerate(ks)
    ]
    return pd.DataFrame(rows)
