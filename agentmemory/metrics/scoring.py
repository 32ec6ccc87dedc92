"""Score a whole run against qrels, averaging over queries as trec_eval does.

:func:`score_run` is ``trec_eval -m <measures> [-c] qrels run`` in Python:

* each query's documents are ranked with :func:`agentmemory.files.trec.trec_order`
  (score descending, then document id descending), whatever order or rank
  numbers the run came with;
* the queries scored are those in both the run and the qrels (trec_eval's
  default); queries only in the run are ignored; with ``complete=True``
  (trec_eval ``-c``) every qrels query missing from the run is scored 0 on
  every measure, is listed in ``per_query`` and counts in the mean;
* a qrels query whose judgments are all 0 (or negative) counts, and scores 0
  on every measure (as trec_eval and pytrec_eval do);
* a query id mapped to *no* judgment at all (``{"q": {}}``, which no qrels
  file can express) is treated as absent from the qrels, as pytrec_eval does;
  a run query mapped to no document scores 0 and counts (pytrec_eval again;
  a run *file* cannot express it either);
* when no query is in both, :func:`score_run` raises, as trec_eval stops
  with "No queries with both results and relevance info" (also with ``-c``).

Means are computed with :func:`math.fsum` (exactly rounded), which can differ
from trec_eval's running sum in the last bit.

Two paths compute the per-query values, with identical results: small runs
go query by query (:func:`~agentmemory.files.trec.trec_order`, then each measure's
per-query function); larger ones are ranked once in NumPy by
:mod:`agentmemory.metrics.ranked` and measured by each measure's batch
kernel.  The batch path declines, and the run is scored per query, when a
measure has no batch kernel (a measure registered without one) or the input
cannot be scored exactly (see :mod:`agentmemory.metrics.ranked`).  A run has
no scopes, so every measure sees ``scope_ids=None``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.files.trec import trec_order
from agentmemory.metrics.base import Measure, compute_measures, parse_measures
from agentmemory.metrics.ranked import rank_judged

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MEASURES",
    "ScoreResult",
    "default_measures",
    "format_runs_table",
    "format_table",
    "score_queries",
    "score_run",
]

_BATCH_MIN_WORK = 512
""":func:`score_run` ranks and measures all queries at once in NumPy
(:mod:`agentmemory.metrics.ranked`) when ``documents + 32 * queries`` reaches
this; below, per query, where NumPy's fixed cost (about 0.1 ms) would dominate.
Both paths give the same numbers."""
_NO_DOCS: dict[str, float] = {}

DEFAULT_K = 5
"""The cutoff of :data:`DEFAULT_MEASURES` (the command line's ``--k`` default)."""


def default_measures(k: int) -> tuple[Measure, ...]:
    """``(P@k, R@k, RR, RR@k, nDCG@k, AP@k)``: what agentmemory reports unless told otherwise."""
    k = check_positive_int("k", k)
    return (
        Measure("P", k),
        Measure("R", k),
        Measure("RR"),
        Measure("RR", k),
        Measure("nDCG", k),
        Measure("AP", k),
    )


DEFAULT_MEASURES: tuple[Measure, ...] = default_measures(DEFAULT_K)
"""``default_measures(DEFAULT_K)``."""


@dataclass(frozen=True)
class ScoreResult:
    """The outcome of :func:`score_run`.

    Attributes:
        mean: measure text (``"P@5"``) -> mean over the scored queries, in
            the order the measures were given.
        per_query: query id -> (measure text -> value), sorted by query id.
        queries: how many queries the means are over (``len(per_query)``).
    """

    mean: dict[str, float | None]
    per_query: dict[str, dict[str, float | None]]
    queries: int

    def to_json_dict(self) -> dict[str, Any]:
        """``{"mean": {...}, "per_query": {...}, "queries": n}``, fresh dicts ready for :func:`json.dumps`."""
        return {
            "mean": dict(self.mean),
            "per_query": {qid: dict(values) for qid, values in self.per_query.items()},
            "queries": self.queries,
        }


def _sample(ids: Iterable[str], limit: int = 5) -> str:
    ordered = sorted(ids)
    shown = ", ".join(repr(i) for i in ordered[:limit])
    return shown + (f", ... ({len(ordered)} in all)" if len(ordered) > limit else "")


def score_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: str | Iterable[Measure | str],
    *,
    complete: bool = False,
) -> ScoreResult:
    """Score ``run`` against ``qrels`` with trec_eval's semantics (see the module docs).

    Args:
        qrels: query id -> (document id -> judged grade), as
            :func:`agentmemory.files.trec.read_qrels` returns.
        run: query id -> (document id -> score), as
            :func:`agentmemory.files.trec.read_run` returns; the order inside is ignored.
        measures: measures, or their text (``"P@5,RR"``), see
            :func:`agentmemory.metrics.parse_measures`.
        complete: trec_eval ``-c``: average over every qrels query, scoring
            those missing from the run as 0.

    Raises:
        ParameterError: bad measures, or one that reads the hits' texts (the
            budget measures, ``tokens@first``: a run holds no text); a NaN
            score; no query judged in ``qrels``; or no query id in both
            ``run`` and ``qrels``.
    """
    chosen = parse_measures(measures)
    for m in chosen:
        if m.definition.reads_lengths:
            raise ParameterError(
                "metrics",
                str(m),
                "counts the tokens of the texts the system returned, which a run and qrels do not hold",
                "score it with the collection: agentmemory eval --collection PATH --run NAME=RUN",
            )
    judged = {qid: docs for qid, docs in qrels.items() if docs}
    if not judged:
        raise ParameterError("qrels", dict(qrels), "has no judged query", "give qrels with at least one judgment")
    both = judged.keys() & run.keys()
    if not both:
        raise ParameterError(
            "run",
            tuple(sorted(run)[:5]),
            "shares no query id with the qrels",
            f"the qrels' query ids are {_sample(judged)}; score a run made for these queries"
            ' (trec_eval stops too: "No queries with both results and relevance info")',
        )
    scored = sorted(judged) if complete else sorted(both)
    names = [str(m) for m in chosen]
    batch = _score_batch(chosen, scored, run, judged)
    columns: Sequence[Sequence[float | None]]
    if batch is None:
        per_query = _score_each(chosen, names, scored, run, judged)
        columns = [[values[name] for values in per_query.values()] for name in names]
    else:
        columns = batch
        per_query = dict(zip(scored, map(dict, map(zip, repeat(names), zip(*columns)))))
    n = len(scored)
    mean = {name: _mean(column) for name, column in zip(names, columns)}
    return ScoreResult(mean=mean, per_query=per_query, queries=n)


def _score_each(
    chosen: tuple[Measure, ...],
    names: list[str],
    scored: list[str],
    run: Mapping[str, Mapping[str, float]],
    judged: Mapping[str, Mapping[str, int]],
) -> dict[str, dict[str, float | None]]:
    """The per-query path: rank each query with trec_order, then each measure's per-query function (a qrels
    query missing from the run is scored on an empty ranking: 0 on every built-in measure)."""
    per_query: dict[str, dict[str, float | None]] = {}
    for qid in scored:
        per_query[qid] = compute_measures(chosen, trec_order(run[qid]) if qid in run else [], judged[qid])
    return per_query


def _mean(column: Sequence[float | None]) -> float | None:
    """The mean of a measure's column (:func:`math.fsum`), over the queries with a value when a plugin's measure
    has none on some (``MeasureDef.undefined_when``); ``None`` when no query has one."""
    present = [v for v in column if v is not None]
    return math.fsum(present) / len(present) if present else None


def _shown(value: float | None) -> str:
    """A value in a table: 4 decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.4f}"


def _score_batch(
    chosen: tuple[Measure, ...],
    scored: list[str],
    run: Mapping[str, Mapping[str, float]],
    judged: Mapping[str, Mapping[str, int]],
) -> list[list[float]] | None:
    """Per measure, the values of the ``scored`` queries from the NumPy batch path, or ``None``.

    ``None`` below :data:`_BATCH_MIN_WORK` and whenever
    :func:`score_queries` declines (a measure
    without a batch kernel, or an input it cannot score exactly).
    """
    docs = list(map(run.get, scored, repeat(_NO_DOCS)))
    if not set(map(type, docs)) <= {dict} or sum(map(len, docs)) + 32 * len(docs) < _BATCH_MIN_WORK:
        return None
    columns = score_queries(chosen, docs, list(map(judged.__getitem__, scored)))
    return None if columns is None else [column.tolist() for column in columns]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        out.append("  ".join(cells).rstrip())
    return out


def format_runs_table(results: Mapping[str, ScoreResult], *, per_query: bool = False) -> str:
    """Several runs side by side: one row per measure, one column per run (4 decimals), then each run's query count.

    With ``per_query``, one more table per measure: a row per query, a column per run.
    """
    names = list(results)
    measures = list(next(iter(results.values())).mean) if results else []
    lines = _table(["measure", *names], [[m, *(_shown(results[n].mean[m]) for n in names)] for m in measures])
    lines.append("queries: " + ", ".join(f"{n} {results[n].queries}" for n in names))
    if per_query:
        queries = sorted({q for r in results.values() for q in r.per_query})
        for m in measures:
            lines.append("")
            rows = [
                [q, *(_shown(results[n].per_query[q][m]) if q in results[n].per_query else "-" for n in names)]
                for q in queries
            ]
            lines.extend(_table([m, *names], rows))
    return "\n".join(lines)


def format_table(result: ScoreResult, *, per_query: bool = False) -> str:
    """A plain-text table of the means (4 decimals), then the number of queries.

    With ``per_query``, a second table follows: one row per query, one
    column per measure.  No trailing newline.
    """
    lines = _table(["measure", "mean"], [[name, _shown(value)] for name, value in result.mean.items()])
    lines.append(f"queries: {result.queries}")
    if per_query:
        names = list(result.mean)
        rows = [[qid] + [_shown(values[name]) for name in names] for qid, values in result.per_query.items()]
        lines.append("")
        lines.extend(_table(["query", *names], rows))
    return "\n".join(lines)


def score_queries(
    measures: Sequence[Measure], docs: Sequence[Mapping[str, float]], judged: Sequence[Mapping[str, int]]
) -> list[np.ndarray] | None:
    """Per measure, its value for every query (``docs[i]`` ranked against ``judged[i]``), or ``None``.

    Each measure is computed by the batch kernel of its definition
    (:attr:`~agentmemory.metrics.MeasureDef.batch`), called as
    ``batch(ranked, measure.cutoff)``.  ``None`` means: score these queries
    per query instead (a measure without a batch kernel, or inputs the batch
    path does not take; see the module docs).
    """
    kernels = [k for k in (measure.definition.batch for measure in measures) if k is not None]
    if len(kernels) != len(measures):
        return None
    ranked = rank_judged(docs, judged)
    if ranked is None:
        return None
    with np.errstate(all="ignore"):  # inf grades give inf / inf = nan, as in the helpers
        return [kernel(ranked, measure.cutoff) for kernel, measure in zip(kernels, measures)]
