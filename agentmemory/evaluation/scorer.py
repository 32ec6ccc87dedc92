"""Scoring one query's ranking: the measures, tie reports and provenance credits every system shares
(:class:`Scorer`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from agentmemory.collection import Collection
from agentmemory.evaluation.options import Relevance
from agentmemory.evaluation.result_records import QueryResult, defined_mean, mean
from agentmemory.metrics import Measure, compute_measures
from agentmemory.metrics.definition import AnswerInput
from agentmemory.metrics.provenance import Credited, ancestors_of, credit
from agentmemory.metrics.tieaware import TieReport, tie_reports
from agentmemory.metrics.token_counters import CachedCounter
from agentmemory.records import Hit, MemoryEntry, Query

__all__ = ["left_out_questions", "measure_depth", "Scorer"]


def left_out_questions(collection: Collection) -> tuple[Query, ...]:
    """The questions without judgments that an answer can still be scored on: those the loader left out of
    retrieval scoring (``Collection.left_out_queries``) and those a judgment patch left unjudged without
    excluding them (an empty evidence list), never a question the patch excluded.  An evaluation with answer
    files (or ``left_out=True``) scores them after the judged questions, in this order."""
    judged = collection.qrels
    excluded = set(collection.excluded_query_ids)
    kept = [q for q in collection.queries if q.id not in judged]
    kept += collection.left_out_queries
    return tuple(q for q in kept if q.id not in judged and q.id not in excluded)


def measure_depth(measure: Measure, k: int) -> int | None:
    """How deep a ranking ``measure`` sees in an evaluation at cutoff ``k``: ``None`` for the whole ranking.

    A measure without a cutoff, or with one up to ``k``, sees the top ``k``
    (the run an evaluation at ``k`` exports, so ``RR`` is trec_eval's
    ``recip_rank`` of that run); ``R@10`` in an evaluation at ``k = 5`` sees
    the top 10; a measure whose definition widens its own cutoff
    (``MeasureDef.whole_ranking``, LongMemEval's ``sess.*``) sees every
    scored entry.
    """
    if measure.definition.whole_ranking:
        return None
    cutoff = measure.rank_cutoff
    if cutoff is None or cutoff <= k:
        return k
    return cutoff


class _Lengths(Sequence[int]):
    """The token length of each hit's text, counted when first read (a budget stops reading early)."""

    def __init__(self, ids: Sequence[str], text_of: Callable[[str], str], counter: CachedCounter) -> None:
        self._ids = ids
        self._text_of = text_of
        self._counter = counter

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._counter.count_one(self._text_of(i)) for i in self._ids[index]]
        return self._counter.count_one(self._text_of(self._ids[index]))

    def __iter__(self) -> Iterator[int]:
        for entry_id in self._ids:
            yield self._counter.count_one(self._text_of(entry_id))


class Scorer:
    """Scores one query's ranking: measures, tie reports, provenance credits (the part shared by every system)."""

    def __init__(
        self,
        collection: Collection,
        k: int,
        measures: tuple[Measure, ...],
        *,
        ties: bool,
        relevance: Relevance,
        extra: Mapping[str, MemoryEntry] | None = None,
        counter: CachedCounter | None = None,
        keep: int = 0,
        answers: Mapping[str, tuple[AnswerInput, ...]] | None = None,
        ranked: bool = True,
        stand_ins: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.collection = collection
        self.stand_ins = stand_ins or {}  # per query, entry id -> the memory standing in for it (direct relevance)
        self.k = k
        self.keep = keep  # each query's ranking is kept at least this deep (the options' run_depth)
        self.measures = measures
        self.ties = ties
        self.relevance = Relevance(relevance)
        self.extra = dict(extra or {})
        self.counter = counter
        self.answers = answers  # per query, one AnswerInput per seed (an answer file); None for other systems
        self.ranked = ranked  # False: the system told no ranking (an answer file without retrieval)
        excluded = collection.headline_excludes
        self.headline = {q.id for q in collection.headline_queries}
        self.headline |= {q.id for q in left_out_questions(collection) if q.group not in excluded}
        self.scope_ids: Mapping[str | None, frozenset[str]]
        if self.extra:
            scopes: dict[str | None, set[str]] = {}
            for entry in (*collection.entries, *self.extra.values()):
                scopes.setdefault(entry.scope, set()).add(entry.id)
            self.scope_ids = {scope: frozenset(ids) for scope, ids in scopes.items()}
        else:
            self.scope_ids = collection.scope_ids  # computed once per collection (per scope when asked)
        self._ancestors: dict[str, frozenset[str]] | None = None
        groups: dict[int | None, list[Measure]] = {}
        self.answer_measures = tuple(m for m in measures if m.definition.reads_answer)
        for m in measures:
            if not m.definition.reads_answer:
                groups.setdefault(measure_depth(m, k), []).append(m)
        self.groups = [(depth, tuple(group)) for depth, group in groups.items()]
        # A measure looking deeper than k has no tie report of the depth-k run.
        self.at_k = tuple(groups.get(k, ()))

    def with_entries(
        self, extra: Mapping[str, MemoryEntry], stand_ins: Mapping[str, Mapping[str, str]] | None = None
    ) -> Scorer:
        """The same scorer over the collection plus a run's own memories (the same token counts remembered), and
        the memories standing in for entries (``stand_ins``, under ``direct`` relevance)."""
        if not extra and not stand_ins:
            return self
        return self._copy(extra=extra, stand_ins=stand_ins)

    def with_answers(self, answers: Mapping[str, tuple[AnswerInput, ...]], *, ranked: bool = True) -> Scorer:
        """The same scorer for an answer file's system: its answers per query (one per seed); ``ranked=False``
        when it told no ranking (every retrieval measure then has no value)."""
        return self._copy(answers=answers, ranked=ranked)

    def _copy(self, **changes: Any) -> Scorer:
        fields: dict[str, Any] = {
            "extra": self.extra,
            "counter": self.counter,
            "keep": self.keep,
            "answers": self.answers,
            "ranked": self.ranked,
            "stand_ins": self.stand_ins,
        }
        fields.update(changes)
        return Scorer(self.collection, self.k, self.measures, ties=self.ties, relevance=self.relevance, **fields)

    @property
    def ancestors(self) -> dict[str, frozenset[str]]:
        if self._ancestors is None:
            self._ancestors = ancestors_of((*self.collection.entries, *self.extra.values()))
        return self._ancestors

    def text(self, entry_id: str) -> str:
        """The text the system returned for ``entry_id``: a run's own memory, else the collection's entry."""
        own = self.extra.get(entry_id)
        return own.text if own is not None else self.collection.entry(entry_id).text

    def texts_of(self, query_id: str) -> Callable[[str], str]:
        """:meth:`text` for ``query_id``'s ranking, where a memory standing in for an entry (direct relevance)
        is read as its own text, not the entry's."""
        stand = self.stand_ins.get(query_id)
        if not stand:
            return self.text
        return lambda entry_id: self.text(stand.get(entry_id, entry_id))

    def lengths(self, ranking: Sequence[str], group: Sequence[Measure], query_id: str) -> Sequence[int] | None:
        """The token lengths of ``ranking``'s texts (counted as read) when a measure of ``group`` reads them."""
        if self.counter is None or not any(m.definition.reads_lengths for m in group):
            return None
        return _Lengths(ranking, self.texts_of(query_id), self.counter)

    def score(
        self,
        query: Query,
        deeper: list[Hit],
        reachable: Callable[[], dict[str, float]] | None,
        *,
        keep_all: bool = False,
    ) -> QueryResult:
        """``deeper`` is the ranking, at least ``k + 1`` deep when there is that much; ``reachable`` gives every
        entry scoring at least the k-th hit, or is ``None`` (a run: only what ``deeper`` holds is known).
        ``keep_all`` keeps the whole of ``deeper`` as :attr:`QueryResult.ranking` (a memory system's answer)."""
        k = self.k
        hits = tuple(deeper[:k])
        judged = self.collection.qrels.get(query.id)
        qrels: Mapping[str, int] = judged if judged is not None else {}
        tie_at_cutoff = len(deeper) > k and deeper[k].score == deeper[k - 1].score
        if judged is None or not self.ranked:  # a question left out of retrieval scoring, or no ranking told
            metrics, credited, reads = self._unranked_metrics(query, [h.entry_id for h in deeper], qrels)
            reports = None
        else:
            metrics, credited, reads = self._metrics(query, [h.entry_id for h in deeper], qrels)
            reports = self._tie_reports(query, deeper, qrels, tie_at_cutoff, reachable, metrics) if self.ties else None
        kept = len(deeper) if keep_all else max(len(hits), self.keep, *reads.values(), 0)
        return QueryResult(
            query_id=query.id,
            text=query.text,
            group=query.group,
            relevant=self.collection.relevant(query.id),
            hits=hits,
            metrics=metrics,
            tie_at_cutoff=tie_at_cutoff,
            ties=reports,
            credited=credited,
            ranking=hits if kept <= len(hits) else tuple(deeper[:kept]),
            reads=reads,
        )

    def _metrics(
        self, query: Query, whole: list[str], qrels: Mapping[str, int]
    ) -> tuple[dict[str, float | None], Credited | None, dict[str, int]]:
        """Every measure's value in the evaluation's order, (provenance) the credits of the top k, and how deep
        each measure read (:meth:`~agentmemory.metrics.Measure.read_depth`; under provenance a hit counts as
        relevant there when it reaches a relevant source, as the provenance definitions read it)."""
        k = self.k
        credited = None
        metrics: dict[str, float | None] = {}
        reads: dict[str, int] = {}
        scope = self.scope_ids.get(query.scope, frozenset())
        for depth, group in self.groups:  # each measure sees the ranking as deep as it needs (see measure_depth)
            ranking = whole if depth is None else whole[:depth]
            lengths = self.lengths(ranking, group, query.id)
            relevant: Mapping[str, int] = qrels
            if self.relevance is Relevance.PROVENANCE:
                credited_here = credit(ranking, qrels, self.ancestors, lengths)
                if depth == k:
                    credited = credited_here
                for m in group:
                    metrics[str(m)] = m.definition.provenance(credited_here, m.cutoff)  # type: ignore[misc]
                relevant = {doc: 1 for doc, reached in zip(ranking, credited_here.reach) if reached}
            else:
                metrics.update(
                    compute_measures(
                        group,
                        ranking,
                        qrels,
                        scope_ids=scope,
                        query=query,
                        session_of=self.collection.session_of,
                        lengths=lengths,
                    )
                )
            for m in group:
                reads[str(m)] = m.read_depth(ranking, relevant, scope, query, self.collection.session_of, lengths)
        if credited is None and self.relevance is Relevance.PROVENANCE:
            credited = credit(whole[:k], qrels, self.ancestors)
        self._answer_metrics(query, whole, qrels, metrics, reads)
        return (
            {str(m): metrics[str(m)] for m in self.measures},
            credited,
            {str(m): reads[str(m)] for m in self.measures},
        )

    def _unranked_metrics(
        self, query: Query, whole: list[str], qrels: Mapping[str, int]
    ) -> tuple[dict[str, float | None], Credited | None, dict[str, int]]:
        """A query whose ranking is not scored (left out of retrieval scoring by the loader, or a system that
        told no ranking): no retrieval measure has a value; the answer measures do."""
        metrics: dict[str, float | None] = {str(m): None for m in self.measures}
        reads = {str(m): 0 for m in self.measures}
        self._answer_metrics(query, whole, qrels, metrics, reads)
        return metrics, None, reads

    def _answer_metrics(
        self,
        query: Query,
        whole: list[str],
        qrels: Mapping[str, int],
        metrics: dict[str, float | None],
        reads: dict[str, int],
    ) -> None:
        """The answer measures of ``query`` into ``metrics`` (the mean over an answer file's seeds; a measure
        with no value under any seed has none), and how deep each read the ranking into ``reads``."""
        for m in self.answer_measures:
            depth = min(m.rank_cutoff or 0, len(whole)) if self.ranked else 0
            text = self.texts_of(query.id)
            texts = tuple(text(i) for i in whole[:depth]) if self.ranked else None
            inputs = (AnswerInput(None, None, texts),) if self.answers is None else self.answers.get(query.id, ())
            values = [
                m._compute(whole, qrels, None, query, None, None, a if a.texts is not None else a._replace(texts=texts))
                for a in inputs
            ]
            present = [v for v in values if v is not None]
            metrics[str(m)] = math.fsum(present) / len(present) if present else None
            reads[str(m)] = depth

    def _tie_reports(
        self,
        query: Query,
        deeper: list[Hit],
        qrels: Mapping[str, int],
        tie_at_cutoff: bool,
        reachable: Callable[[], dict[str, float]] | None,
        metrics: Mapping[str, float | None],
    ) -> dict[str, TieReport] | None:
        """The tie report of every measure at depth k, or ``None`` when a run's tie runs past its last line."""
        k = self.k
        if tie_at_cutoff and reachable is None and deeper[-1].score >= deeper[k - 1].score:
            return None
        # Only entries scoring at least the k-th hit can reach the top k. Without a tie across
        # the cutoff those are the hits; with one, the retriever tells (a run cannot past its end).
        if tie_at_cutoff and reachable is not None:
            scores = reachable()
        elif tie_at_cutoff:
            scores = {h.entry_id: h.score for h in deeper if h.score >= deeper[k - 1].score}
        else:
            scores = {h.entry_id: h.score for h in deeper[:k]}
        top = [h.entry_id for h in deeper[:k]]  # what the depth-k measures were computed on
        found = tie_reports(self.at_k, scores, qrels, k, query=query, computed=(top, metrics))
        return {name: r for name, r in found.items() if r is not None}

    def means(self, per_query: Sequence[QueryResult]) -> dict[str, float | None]:
        """Each measure's mean over the headline queries (:func:`defined_mean`: over those with a value)."""
        headline = [r for r in per_query if r.query_id in self.headline]
        means: dict[str, float | None] = {}
        for m in self.measures:
            values = [r.metrics[str(m)] for r in headline]
            undefined = m.definition.undefined_when is not None or any(v is None for v in values)
            means[str(m)] = defined_mean(values) if undefined else mean(values)  # type: ignore[arg-type]
        return means
