"""Sweeps: how the measures move with the cutoff ``k``, and across synthetic seeds and sizes.

* :func:`cutoff_means`: the mean of ``R@k``, ``P@k``, ... at many cutoffs
  from one evaluation's ranking (what every curve over k is drawn from).
* :func:`k_sweep`: recall@k, precision@k and nDCG@k for several ``k`` on one
  collection (data for curves).
* :func:`seed_sweep`: one row per seed x size x retriever on
  :func:`~agentmemory.datasets.synthetic.synthetic_collection` stores.
* :func:`summarize_sweep`: quantiles of those rows per size x retriever.

Every function is pure and returns JSON-ready data (plain ``dict``,
``list``, ``str``, ``int``, ``float``), with keys in a stable order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agentmemory.collection import Collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError, check_positive_int, check_seed
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runner import Evaluation, evaluate, mean, seed_measures
from agentmemory.metrics import Measure, compute_measures, defined
from agentmemory.retrievers import RetrieverLike, resolve_retrievers

__all__ = ["CURVES", "QUANTILES", "SWEEP_KEYS", "cutoff_means", "k_sweep", "seed_sweep", "summarize_sweep"]

CURVES = ("R", "P", "nDCG")
"""The measures :func:`k_sweep` draws against k."""

SWEEP_KEYS = ("seed", "n_entries", "retriever", "label", "digest", "queries")
"""The identifying columns of a :func:`seed_sweep` row; every other column is a measure mean."""

QUANTILES: tuple[tuple[str, float], ...] = (
    ("min", 0.0),
    ("p05", 0.05),
    ("p25", 0.25),
    ("median", 0.5),
    ("p75", 0.75),
    ("p95", 0.95),
    ("max", 1.0),
)
"""Column name -> quantile level of :func:`summarize_sweep`."""


def _check_ks(ks: Iterable[int]) -> list[int]:
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Iterable):
        raise ParameterError("ks", ks, "is not a list of cutoffs", "pass e.g. [1, 3, 5, 10]")
    values = [check_positive_int("ks item", k) for k in ks]
    if not values:
        raise ParameterError("ks", list(values), "is empty", "pass at least one cutoff, e.g. [1, 3, 5, 10]")
    if len(set(values)) != len(values):
        raise ParameterError("ks", list(values), "repeats a cutoff", "list each cutoff once")
    return sorted(values)


def cutoff_means(
    evaluation: Evaluation, ks: Iterable[int], measures: Sequence[str] = CURVES
) -> dict[str, dict[str, list[float]]]:
    """Mean of ``name@k`` over the headline queries, for every retriever, measure name and cutoff, from one ranking.

    ``evaluation`` must be at least ``max(ks)`` deep.  Every retriever's
    ranking is a total order (score descending, then entry id descending),
    so the top ``k`` of a run at ``k`` is the first ``k`` hits of a deeper
    run; and ``name@k`` looks at the first ``k`` hits only.  So each value is
    what ``evaluate(collection, retrievers, k=k, seed=seed)`` reports as the
    mean of ``name@k``: :func:`~agentmemory.evaluation.runner.mean` (``math.fsum / n``)
    over ``RetrieverResult.headline`` of the measure on each query's hits.
    Returns ``{retriever name: {measure name: [mean at each k, ks ascending]}}``.

    Raises:
        ParameterError: ``ks`` is empty, repeats a cutoff, holds a value that
            is not an integer >= 1 or exceeds ``evaluation.k``; a measure
            name takes no cutoff.
        UnknownNameError: a measure name is not registered.
    """
    ks = _check_ks(ks)
    if ks[-1] > evaluation.k:
        raise ParameterError(
            "ks", ks, f"goes beyond the evaluation's depth k = {evaluation.k}", f"evaluate with k >= {ks[-1]}"
        )
    grid = [[Measure(name, k) for k in ks] for name in measures]
    every = [m for row in grid for m in row]
    qrels = evaluation.collection.qrels
    out: dict[str, dict[str, list[float]]] = {}
    for result in evaluation.results:
        values = [compute_measures(every, [h.entry_id for h in q.hits], qrels[q.query_id]) for q in result.headline]
        out[result.name] = {
            name: [mean(defined(v[str(m)], m) for v in values) for m in row] for name, row in zip(measures, grid)
        }
    return out


def k_sweep(
    collection: Collection,
    retrievers: RetrieverLike | Sequence[RetrieverLike],
    ks: Iterable[int],
    *,
    seed: int,
    progress: bool = False,
) -> dict[str, Any]:
    """Mean R@k, P@k and nDCG@k of every retriever for every ``k`` in ``ks``.

    One :func:`~agentmemory.evaluation.runner.evaluate` run at depth ``max(ks)``
    computes every cutoff (:func:`cutoff_means`): the top ``k`` under the
    ranking rule is the first ``k`` of the top ``max(ks)``, so each value
    equals what ``evaluate(collection, retrievers, k=k, seed=seed)`` reports.
    Means are over the headline queries (``collection.headline_queries``:
    the judged queries outside the groups of ``headline_excludes``), which
    ``queries`` counts.  Returns::

        {"collection": name, "digest": ..., "seed": seed, "ks": [sorted ks],
         "queries": n, "measures": ["R", "P", "nDCG"],
         "retrievers": {name: {"label": ..., "R": [per k], "P": [...], "nDCG": [...]}}}

    Raises:
        ParameterError: ``ks`` is empty, repeats a cutoff or holds a value
            that is not an integer >= 1; ``seed`` is not an integer >= 0; bad
            retriever names.
    """
    ks = _check_ks(ks)
    options = EvalOptions(k=max(ks), seed=seed, ties=False, progress=progress)
    names = resolve_retrievers(retrievers)
    evaluation = evaluate(collection, names, options=options)
    means = cutoff_means(evaluation, ks, CURVES)
    curves = {result.name: {"label": result.label, **means[result.name]} for result in evaluation.results}
    return {
        "collection": collection.name,
        "digest": collection.digest,
        "seed": seed,
        "ks": ks,
        "queries": len(collection.headline_queries),
        "measures": list(CURVES),
        "retrievers": curves,
    }


def seed_sweep(
    seeds: Iterable[int],
    sizes: Iterable[int],
    retrievers: RetrieverLike | Sequence[RetrieverLike],
    k: int,
    *,
    progress: bool = False,
    **generator_params: Any,
) -> list[dict[str, Any]]:
    """Evaluate ``retrievers`` on ``synthetic_collection(seed=s, n_entries=size, **generator_params)``.

    One row per seed x size x retriever, in that nesting order (seeds and
    sizes as given, retrievers as named)::

        {"seed", "n_entries", "retriever", "label", "digest", "queries",
         "R@k": mean, "P@k": mean, "RR": mean}

    The measures are :func:`agentmemory.evaluation.runner.seed_measures`, their means
    over the headline queries, which ``queries`` counts.  The evaluation
    seed is the generator seed.  ``RR`` is the mean reciprocal rank over
    the retrieved top ``k`` (as in :func:`~agentmemory.evaluation.runner.evaluate`),
    i.e. RR@k.  ``progress`` shows a tqdm bar over the seed x size pairs.

    Raises:
        ParameterError: a seed is not an integer >= 0, a size or ``k`` is
            not an integer >= 1, ``generator_params`` names ``seed`` or
            ``n_entries``, or the generator rejects its parameters.
    """
    seeds = [check_seed(s, "seeds item") for s in seeds]
    sizes = [check_positive_int("sizes item", n) for n in sizes]
    options = EvalOptions(k=k)  # k checked once; each evaluation below takes its seed
    names = resolve_retrievers(retrievers)
    for reserved in ("seed", "n_entries"):
        if reserved in generator_params:
            raise ParameterError(
                reserved,
                generator_params[reserved],
                "is set by the sweep",
                f"pass it through seeds/sizes, not as {reserved}=",
            )
    pairs: Iterable[tuple[int, int]] = [(s, n) for s in seeds for n in sizes]
    if progress:
        from tqdm.auto import tqdm

        pairs = tqdm(pairs, desc="seed sweep", unit="collection")
    rows: list[dict[str, Any]] = []
    for seed, size in pairs:
        collection = synthetic_collection(seed=seed, n_entries=size, **generator_params)
        evaluation = evaluate(collection, names, options=replace(options, seed=seed))
        for result in evaluation.results:
            rows.append(
                {
                    "seed": seed,
                    "n_entries": size,
                    "retriever": result.name,
                    "label": result.label,
                    "digest": collection.digest,
                    "queries": len(result.headline),
                    **{m: defined(result.means[m], m) for m in seed_measures(options.k)},
                }
            )
    return rows


def summarize_sweep(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Quantiles of every measure column of ``rows`` per size x retriever.

    ``rows`` are :func:`seed_sweep` rows.  For each ``(n_entries,
    retriever)`` (sizes ascending, retrievers in order of first appearance)
    one summary::

        {"n_entries", "retriever", "label", "seeds": count,
         "<measure>": {"min", "p05", "p25", "median", "p75", "p95", "max"}, ...}

    Quantiles are ``numpy.quantile(values, q)`` with numpy's default
    ``method="linear"`` (type 7 of Hyndman & Fan: linear interpolation
    between order statistics).  Measure columns are every key of the first
    row not in :data:`SWEEP_KEYS`, in its order.

    Raises:
        ParameterError: ``rows`` is empty, or a row lacks a key of the first row.
    """
    rows = list(rows)
    if not rows:
        raise ParameterError("rows", rows, "is empty", "pass the rows of seed_sweep")
    columns = [key for key in rows[0] if key not in SWEEP_KEYS]
    needed = ["n_entries", "retriever", *columns]
    cells: dict[tuple[int, str], list[Mapping[str, Any]]] = {}
    retriever_order: dict[str, int] = {}
    labels: dict[str, Any] = {}
    for index, row in enumerate(rows):
        missing = [key for key in needed if key not in row]
        if missing:
            raise ParameterError(f"rows[{index}]", dict(row), f"has no {missing[0]!r}", "pass rows of one seed_sweep")
        retriever_order.setdefault(row["retriever"], len(retriever_order))
        labels.setdefault(row["retriever"], row.get("label", row["retriever"]))
        cells.setdefault((row["n_entries"], row["retriever"]), []).append(row)
    out = []
    for (size, name), members in sorted(cells.items(), key=lambda item: (item[0][0], retriever_order[item[0][1]])):
        summary: dict[str, Any] = {"n_entries": size, "retriever": name, "label": labels[name], "seeds": len(members)}
        for column in columns:
            values = np.asarray([float(m[column]) for m in members], dtype=np.float64)
            levels = np.quantile(values, [q for _, q in QUANTILES])
            summary[column] = {key: float(v) for (key, _), v in zip(QUANTILES, levels)}
        out.append(summary)
    return out
