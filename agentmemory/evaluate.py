"""The evaluation runner: retrievers over a collection's queries, scored per query.

:func:`evaluate` builds one :class:`~agentmemory.store.MemoryStore` whose
event ids and timestamps are derived from the run's inputs and seed
(:class:`~agentmemory.events.HashIds` namespaced by the collection digest and
seed; a :class:`~agentmemory.events.SteppingClock` starting at the latest
``created_at`` of the corpus, one second per event), adds every entry, and
asks each retriever for the top ``k`` of every judged query.  The same
inputs and seed therefore give the same result and the same log.

Which queries count: every query with at least one judgment line, in file
order.  A judged query with no relevant entry scores 0 and still counts.
Queries with no judgment at all are not run; their ids are reported in
:attr:`Evaluation.unjudged_query_ids`.  Queries whose group is in
``collection.headline_excludes`` (LoCoMo's adversarial category) are run and
appear in the group means, but not in the headline means.

The aggregate row of each retriever carries the seed write-up's columns,
``mean_recall@k`` (mean of R@k), ``mean_precision@k`` (mean of P@k) and
``MRR`` (mean of RR over the retrieved top ``k``, which equals trec_eval's
``recip_rank`` on the exported run), plus the mean of every measure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .collection import Collection
from .errors import ParameterError, check_positive_int, check_seed
from .events import HashIds, SteppingClock
from .metrics import Measure, compute_measures, parse_measures
from .records import Event, Hit, Query
from .retrievers import DEFAULT_RETRIEVERS, RetrieverLike, RetrieverSpec, capabilities, resolve_retrievers
from .scoring import default_measures
from .store import MemoryStore
from .tieaware import TieReport, tie_report

__all__ = ["Evaluation", "QueryResult", "RetrieverResult", "evaluate", "mean", "seed_measures"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean with exactly rounded summation (:func:`math.fsum`); 0.0 when empty."""
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


@dataclass(frozen=True)
class QueryResult:
    """One query under one retriever.

    ``relevant`` are the entry ids judged relevant (sorted); ``hits`` the top
    ``k``; ``metrics`` maps each measure's text form to its value;
    ``tie_at_cutoff`` is true when the entry just below the cutoff has the
    same score as the ``k``-th hit (the tie rule, not the scores, decided
    what made the cut).  ``ties`` (when the evaluation ran with ``ties=True``)
    maps each measure to its :class:`~agentmemory.tieaware.TieReport`: the
    value under the tie rule, its expectation over all orderings of tied
    scores, and the worst and best it could be.
    """

    query_id: str
    text: str
    group: str | None
    relevant: tuple[str, ...]
    hits: tuple[Hit, ...]
    metrics: dict[str, float]
    tie_at_cutoff: bool
    ties: Mapping[str, TieReport] | None = None

    @property
    def found(self) -> tuple[str, ...]:
        """Relevant entries in the top k, in rank order."""
        rel = set(self.relevant)
        return tuple(h.entry_id for h in self.hits if h.entry_id in rel)

    @property
    def missed(self) -> tuple[str, ...]:
        """Relevant entries not in the top k, sorted."""
        got = {h.entry_id for h in self.hits}
        return tuple(r for r in self.relevant if r not in got)

    @property
    def first_relevant_rank(self) -> int | None:
        """Rank of the first relevant hit in the top k, or None."""
        rel = set(self.relevant)
        return next((h.rank for h in self.hits if h.entry_id in rel), None)


@dataclass(frozen=True)
class RetrieverResult:
    """Every judged query's result for one retriever, and the means."""

    name: str
    label: str
    params: dict[str, Any]
    per_query: tuple[QueryResult, ...]
    means: dict[str, float]
    k: int
    excluded_groups: tuple[str, ...] = ()

    def group_means(self) -> dict[str, dict[str, float]]:
        """Mean of every measure per query group (groups sorted; queries without a group left out)."""
        groups: dict[str, list[QueryResult]] = {}
        for q in self.per_query:
            if q.group is not None:
                groups.setdefault(q.group, []).append(q)
        return {g: {m: mean(q.metrics[m] for q in rows) for m in self.means} for g, rows in sorted(groups.items())}

    @property
    def headline(self) -> tuple[QueryResult, ...]:
        """The queries behind the headline means (groups in ``headline_excludes`` left out)."""
        return tuple(q for q in self.per_query if q.group not in self.excluded_groups)

    def tie_means(self) -> dict[str, dict[str, float]]:
        """Per measure, the headline means of the tie reports' value under the rule,
        expectation, minimum and maximum (empty when ties were not analysed)."""
        rows = [q for q in self.headline if q.ties is not None]
        if not rows or len(rows) != len(self.headline):
            return {}
        fields = ("value_under_rule", "expected", "minimum", "maximum")
        measures = [m for m in self.means if all(m in q.ties for q in rows)]  # type: ignore[operator]
        return {m: {f: mean(getattr(q.ties[m], f) for q in rows) for f in fields} for m in measures}  # type: ignore[index]

    def aggregate_row(self) -> dict[str, Any]:
        """The seed's columns first, then the mean of every measure."""
        recall, precision, rr = seed_measures(self.k)
        row: dict[str, Any] = {
            "retriever": self.label,
            "mean_recall@k": self.means[recall],
            "mean_precision@k": self.means[precision],
            "MRR": self.means[rr],
        }
        row.update(self.means)
        return row


@dataclass(frozen=True)
class Evaluation:
    """The result of :func:`evaluate`.

    ``specs`` are the evaluated retrievers (one per result, same order), so
    the same retrievers can be run again (deeper, on another collection);
    ``store`` is the store the run searched (its retrievers hold the
    collection), for reports that ask the retrievers *why*.
    """

    collection: Collection
    k: int
    seed: int
    measures: tuple[Measure, ...]
    results: tuple[RetrieverResult, ...]
    unjudged_query_ids: tuple[str, ...]
    events: tuple[Event, ...]
    specs: tuple[RetrieverSpec, ...] = ()
    store: MemoryStore | None = field(default=None, repr=False, compare=False)

    def result(self, name: str) -> RetrieverResult:
        for res in self.results:
            if res.name == name:
                return res
        raise ParameterError(
            "retriever", name, "was not evaluated", "choose from: " + ", ".join(r.name for r in self.results)
        )


def _required_measures(k: int, measures: Sequence[Measure | str] | str | None) -> tuple[Measure, ...]:
    chosen = list(default_measures(k))
    if measures is not None:
        extra = (
            parse_measures(measures)
            if isinstance(measures, str)
            else [m if isinstance(m, Measure) else parse_measures(m)[0] for m in measures]
        )
        chosen += [m for m in extra if m not in chosen]
    return tuple(chosen)


def seed_measures(k: int) -> tuple[str, str, str]:
    """The seed write-up's three measures at cutoff ``k`` as result keys: ``R@k``, ``P@k``, ``RR`` (whose mean is MRR).

    They are the measures behind the seed table's columns ``mean_recall@k``,
    ``mean_precision@k`` and ``MRR``, in that order: the one place that names them.
    """
    return (str(Measure("R", k)), str(Measure("P", k)), str(Measure("RR")))


def _reachable(retriever: Any, query: Query, hits: list[Hit], k: int) -> dict[str, float]:
    """Every entry scoring at least the k-th hit (the entries a tie at the cutoff could bring into the top k).

    ``score_all`` when the retriever has it; otherwise deeper and deeper
    searches (doubling the depth) until the last hit scores below the k-th:
    under the ranking rule every entry at or above that score comes first.
    """
    floor = hits[k - 1].score
    if "score_all" in capabilities(retriever):
        return {d: s for d, s in retriever.score_all(query).items() if s >= floor}
    depth = 2 * (k + 1)
    while True:
        deeper = retriever.search(query, depth)
        if len(deeper) < depth or deeper[-1].score < floor:
            return {h.entry_id: h.score for h in deeper if h.score >= floor}
        depth *= 2


def evaluate(
    collection: Collection,
    retrievers: RetrieverLike | Sequence[RetrieverLike] = DEFAULT_RETRIEVERS,
    *,
    k: int = 5,
    seed: int = 7,
    measures: Sequence[Measure | str] | str | None = None,
    ties: bool = True,
    progress: bool = False,
    store: MemoryStore | None = None,
) -> Evaluation:
    """Run ``retrievers`` over ``collection`` and score them.

    ``retrievers`` takes what :func:`agentmemory.retrievers.resolve_retrievers`
    takes: registry names (``"bm25,tags"``), specs with parameters
    (``"bm25[k1=0.9,b=0.4]"``), ``"package.module:attribute"``, factories,
    or a retriever instance (unscoped collections only).
    ``measures`` adds to the defaults (P@k, R@k, RR, RR@k, nDCG@k, AP@k).
    ``ties`` computes a :class:`~agentmemory.tieaware.TieReport` per query and
    measure (measures without a tie-aware formula get none) from the scores
    of every entry that could reach the top ``k`` (those scoring at least the
    ``k``-th hit: the hits themselves unless a tie crosses the cutoff, so the
    analysis costs a deeper look only for those queries).  ``progress`` shows
    a tqdm bar per retriever (off by default).

    ``store`` reuses the store of an earlier evaluation of the same
    collection (``Evaluation.store``) instead of indexing the entries again:
    its retrievers must be ``retrievers`` (by key) and its entries the
    collection's.  The new evaluation's ``events`` are only those it records.
    """
    k = check_positive_int("k", k)
    seed = check_seed(seed)
    specs = resolve_retrievers(retrievers)
    chosen = _required_measures(k, measures)

    first_event = 0 if store is None else len(store.log)
    if store is None:
        stamps = [e.created_at for e in collection.entries if e.created_at is not None]
        store = MemoryStore(
            specs,
            clock=SteppingClock(max(stamps) if stamps else _EPOCH),
            ids=HashIds(f"{collection.digest}:{seed}"),
        )
        store.add(collection.entries)
    elif (
        any(s.key not in store.retriever_names for s in specs)
        or len(store) != len(collection.entries)
        or any(e.id not in store for e in collection.entries)
    ):
        raise ParameterError(
            "store",
            "MemoryStore",
            "does not hold these retrievers and this collection's entries",
            "pass the store of an evaluation of the same collection and retrievers (Evaluation.store)",
        )
    queries = collection.judged_queries
    headline_ids = {q.id for q in collection.headline_queries}
    excluded = tuple(collection.headline_excludes)

    results = []
    for spec in specs:
        per_query = []
        for query, deeper in store.search_all(queries, k, spec.key, extra=1, progress=progress):
            hits = tuple(deeper[:k])
            qrels = collection.qrels[query.id]
            reports = None
            tie_at_cutoff = len(deeper) > k and deeper[k].score == deeper[k - 1].score
            if ties:
                # Only entries scoring at least the k-th hit can reach the top k. Without a
                # tie across the cutoff those are exactly the hits, so no further scoring.
                if tie_at_cutoff:
                    reachable = _reachable(store.retriever(spec.key, query.scope), query, deeper, k)
                else:
                    reachable = {h.entry_id: h.score for h in hits}
                reports = {}
                for m in chosen:
                    report = tie_report(m, reachable, qrels, k)
                    if report is not None:
                        reports[str(m)] = report
            per_query.append(
                QueryResult(
                    query_id=query.id,
                    text=query.text,
                    group=query.group,
                    relevant=collection.relevant(query.id),
                    hits=hits,
                    metrics=compute_measures(chosen, [h.entry_id for h in hits], qrels),
                    tie_at_cutoff=tie_at_cutoff,
                    ties=reports,
                )
            )
        headline = [r for r in per_query if r.query_id in headline_ids]
        means = {str(m): mean(r.metrics[str(m)] for r in headline) for m in chosen}
        retriever = store.retriever(spec.key)
        results.append(RetrieverResult(spec.key, spec.label, retriever.params(), tuple(per_query), means, k, excluded))
    return Evaluation(
        collection=collection,
        k=k,
        seed=seed,
        measures=chosen,
        results=tuple(results),
        unjudged_query_ids=collection.unjudged_query_ids,
        events=tuple(store.log)[first_event:],
        specs=specs,
        store=store,
    )
