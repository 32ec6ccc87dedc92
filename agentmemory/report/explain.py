"""Why MRR can be 1.0 while recall is not: an explanation written from a run's data.

:func:`explain_run` looks at every judged query of every retriever and
records, as data:

* each relevant entry left out of the top k (a :class:`Miss`) and why: what
  the retriever's ``explain(query, entry_id)`` says it lacks and has (for
  BM25 the query words, :meth:`agentmemory.BM25.explain`; for the tag scorer
  the query tags, :meth:`agentmemory.TagScorer.explain`), or that an
  explanation is not available for a retriever without ``explain``; its
  score, its rank in the full ranking (a search as deep as the query's
  scope), and whether a tie at the cutoff decided it;
* each query's first hit (a :class:`FirstHit`): relevant or not, the rank
  of the first relevant hit and the reciprocal rank.

Each retriever falls in exactly one case (:data:`CASES`):

* ``"recall_one"``: every relevant entry of every query is in the top k, and
  every first hit is relevant (MRR = recall = 1);
* ``"mrr_one_recall_below_one"``: some relevant entry is missed, yet every
  query's first hit is relevant, so every RR is 1 and MRR is 1;
* ``"mrr_below_one"``: some query's first hit is not relevant (or none of its
  relevant entries is in the top k), so its RR is below 1, and MRR too.

:func:`mrr_vs_recall` renders it as Markdown for the report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agentmemory.evaluation.runner import Evaluation, QueryResult, RetrieverResult, seed_measures
from agentmemory.metrics import defined
from agentmemory.records import Hit, Query
from agentmemory.report.display import Markdown, ordinal, short
from agentmemory.retrievers import capabilities, has_capability
from agentmemory.store.core import MemoryStore

__all__ = [
    "CASES",
    "FirstHit",
    "Index",
    "Miss",
    "RetrieverExplanation",
    "RunExplanation",
    "explain_run",
    "mrr_vs_recall",
]

CASES = ("recall_one", "mrr_one_recall_below_one", "mrr_below_one")


class Index:
    """The retrievers of an evaluation, rebuilt over its collection (same defaults as :func:`agentmemory.evaluate`).

    Used to ask *why*: full rankings, BM25 term contributions and tag overlaps.
    Searching here records nothing in the evaluation's log.
    """

    def __init__(self, evaluation: Evaluation) -> None:
        c = evaluation.collection
        self.evaluation = evaluation
        self.collection = c
        store = evaluation.store
        if store is None and evaluation.specs:  # an Evaluation built by hand: index the collection again
            store = MemoryStore(evaluation.specs)
            store.add(c.entries)
        self.store = store
        self.queries: dict[str, Query] = {q.id: q for q in c.queries}
        self._scope_sizes = Counter(e.scope for e in c.entries)
        self._rankings: dict[tuple[str, str], list[Hit]] = {}

    def retriever(self, name: str, query_id: str) -> Any:
        """The retriever ``name`` of the query's scope, or ``None`` for a run file (it has none to ask)."""
        if self.store is None or self.evaluation.result(name).kind == "run":
            return None
        return self.store.retriever(name, self.queries[query_id].scope)

    def ranking(self, name: str, query_id: str) -> list[Hit]:
        """Every entry with a positive score for the query, in rank order (a search as deep as the query's scope;
        for a run file, its whole ranking of the query: nothing below its depth is known)."""
        key = (name, query_id)
        if key not in self._rankings:
            retriever = self.retriever(name, query_id)
            if self.evaluation.as_of:  # the store holds every entry now, not what the query could see then
                self._rankings[key] = []
            elif retriever is None:
                self._rankings[key] = list(self.evaluation.result(name).rankings.get(query_id, ()))
            else:
                query = self.queries[query_id]
                depth = max(self._scope_sizes[query.scope], 1)
                if has_capability(retriever, "max_k"):  # hybrid, recency: no deeper than their candidates
                    depth = min(depth, retriever.max_k)
                self._rankings[key] = retriever.search(query, depth)
        return self._rankings[key]


@dataclass(frozen=True)
class Miss:
    """A relevant entry that is not in a query's top k.

    ``score`` is the entry's score for the query (0.0: never returned at any
    k); ``rank`` its rank in the full ranking (``None`` when the score is 0);
    ``kth_score`` the score of the k-th hit; ``tie`` is true when the entry's
    score equals it (the id tie-break, not the score, left it out).
    ``lacking`` are the query words (BM25) or query tags (tag scorer) the
    entry does not have, ``shared`` those it has; ``reason`` says it in a
    sentence.
    """

    query_id: str
    entry_id: str
    score: float
    rank: int | None
    kth_score: float | None
    tie: bool
    lacking: tuple[str, ...]
    shared: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class FirstHit:
    """A query's first hit and its reciprocal rank."""

    query_id: str
    entry_id: str | None
    relevant: bool
    first_relevant_rank: int | None
    rr: float
    reason: str


@dataclass(frozen=True)
class RetrieverExplanation:
    """Every miss and every first hit of one retriever, and its case (one of :data:`CASES`)."""

    name: str
    label: str
    k: int
    mrr: float
    recall: float
    case: str
    misses: tuple[Miss, ...]
    first_hits: tuple[FirstHit, ...]
    no_relevant: tuple[str, ...]

    @property
    def wrong_first(self) -> tuple[FirstHit, ...]:
        """Queries whose RR is below 1."""
        return tuple(f for f in self.first_hits if f.rr < 1.0)

    def markdown(self, texts: dict[str, str]) -> str:
        k, label = self.k, self.label
        lines = [f"### {label}: MRR {self.mrr:.2f}, mean recall@{k} {self.recall:.2f}", ""]
        if self.misses:
            n_queries = len({m.query_id for m in self.misses})
            lines.append(
                f"**Recall below 1.** {label} left {len(self.misses)} relevant "
                f"{'entry' if len(self.misses) == 1 else 'entries'} of {n_queries} "
                f"{'query' if n_queries == 1 else 'queries'} out of its top {k}:"
            )
            lines.append("")
            for m in self.misses:
                lines.append(f'- {m.query_id} "{texts[m.query_id]}" missed {m.reason}')
            lines.append("")
        elif not self.no_relevant:
            lines += [
                f"**Recall = 1.00.** Every relevant entry of every query is in {label}'s top {k}: nothing was missed.",
                "",
            ]
        for qid in self.no_relevant:
            lines += [
                f'- {qid} "{texts[qid]}" has no entry judged relevant, so it scores 0 on recall and RR '
                "whatever the retriever returns (it still counts in every mean).",
                "",
            ]
        good = [f for f in self.first_hits if f.rr == 1.0]
        good_text = ", ".join(f"{f.query_id} → {f.entry_id}" for f in good)
        if not self.wrong_first:
            lines.append(
                f"**MRR = 1.00.** Every query's first hit was relevant ({good_text}), so every reciprocal rank "
                f"is 1 and their mean, MRR, is 1.00."
            )
            if self.misses:
                lines.append(
                    "MRR looks only at the rank of the first relevant hit of each query; recall counts every "
                    "relevant entry. The misses above lower recall and leave MRR untouched."
                )
        else:
            n = len(self.first_hits)
            lines.append(
                f"**MRR below 1 ({self.mrr:.2f}).** For {len(self.wrong_first)} of {n} "
                f"{'query' if n == 1 else 'queries'} the first hit was not relevant:"
            )
            lines.append("")
            for f in self.wrong_first:
                lines.append(f'- {f.query_id} "{texts[f.query_id]}": {f.reason}')
            lines.append("")
            if good:
                lines.append(f"The other queries' first hits were relevant, RR = 1: {good_text}.")
            if not self.misses and not self.no_relevant:
                lines.append(
                    f"Recall is 1.00 all the same: every relevant entry made the top {k}, just not first. "
                    "Recall ignores order; MRR does not."
                )
        return "\n".join(lines).rstrip() + "\n"


@dataclass(frozen=True)
class RunExplanation:
    """The explanation of every retriever of a run."""

    k: int
    retrievers: tuple[RetrieverExplanation, ...]
    query_texts: dict[str, str]

    def retriever(self, name: str) -> RetrieverExplanation:
        return next(r for r in self.retrievers if r.name == name)

    def markdown(self) -> str:
        summary = "; ".join(
            f"{r.label} has MRR {r.mrr:.2f} with mean recall@{self.k} {r.recall:.2f}" for r in self.retrievers
        )
        parts = [f"In this run, {summary}.", ""]
        parts += [r.markdown(self.query_texts) for r in self.retrievers]
        return "\n".join(parts)


def _miss(index: Index, result: RetrieverResult, q: QueryResult, entry_id: str, k: int) -> Miss:
    query = index.queries[q.query_id]
    entry = index.collection.entry(entry_id)
    head = f'**{entry_id}** ("{short(entry.text)}"): '
    if entry.scope != query.scope:
        return Miss(
            q.query_id,
            entry_id,
            0.0,
            None,
            None,
            False,
            (),
            (),
            head + "it belongs to another scope than the query, so it is never searched.",
        )
    retriever = index.retriever(result.name, q.query_id)
    if retriever is not None and "explain" in capabilities(retriever):
        explanation = retriever.explain(query, entry_id)
        lacking, shared, why = tuple(explanation.missing), tuple(explanation.matched), explanation.miss_reason()
    elif retriever is None:
        lacking, shared, why = (), (), f"an explanation is not available for {result.label} (a run file gives none)"
    else:
        lacking, shared, why = (), (), f"an explanation is not available for {result.label} (it has no explain())"
    ranking = index.ranking(result.name, q.query_id)
    position = next((h for h in ranking if h.entry_id == entry_id), None)
    kth = q.hits[k - 1] if len(q.hits) >= k else None
    if position is None:
        tail = f"; {result.label} never returns it, at any k."
        if index.evaluation.as_of:
            tail = "; its rank at the time of the question is not shown (an as-of evaluation: the store now holds later memories too)."
        elif retriever is None:
            tail = (
                f"; it is not among the run's {len(ranking)} hits for this query, and a run holds nothing below its "
                "depth, so why it was not retrieved cannot be told."
            )
        return Miss(
            q.query_id,
            entry_id,
            0.0,
            None,
            None if kth is None else kth.score,
            False,
            lacking,
            shared,
            head + why + tail,
        )
    tie = kth is not None and position.score == kth.score
    tail = (
        f"; it scores {position.score:.2f} and ranks {ordinal(position.rank)} of {len(ranking)}, "
        f"below the cutoff k = {k}"
    )
    if kth is not None:
        if tie:
            tail += (
                f": it ties with the {ordinal(k)} hit {kth.entry_id} at {kth.score:.2f}, and ties go to the "
                f"higher entry id, so {kth.entry_id} made the cut"
            )
        else:
            tail += f" (the {ordinal(k)} hit, {kth.entry_id}, scores {kth.score:.2f})"
    if len(q.relevant) > k:
        tail += f"; with {len(q.relevant)} relevant entries and k = {k}, recall@{k} cannot exceed {k}/{len(q.relevant)}"
    return Miss(
        q.query_id,
        entry_id,
        position.score,
        position.rank,
        None if kth is None else kth.score,
        tie,
        lacking,
        shared,
        head + why + tail + ".",
    )


def _first_hit(index: Index, result: RetrieverResult, q: QueryResult, k: int) -> FirstHit:
    rr = q.value("RR")
    rank = q.first_relevant_rank
    if not q.hits:
        return FirstHit(
            q.query_id, None, False, None, rr, f"{result.label} returned nothing (every entry scores 0), so RR = 0."
        )
    first = q.hits[0]
    if q.credited is not None and q.credited.reach[0]:  # provenance: it reaches a judged source
        reached = ", ".join(sorted(q.credited.reach[0]))
        return FirstHit(
            q.query_id,
            first.entry_id,
            True,
            1,
            rr,
            f"first hit {first.entry_id} reaches the relevant {reached}, RR = 1.",
        )
    if q.credited is None and first.entry_id in q.relevant:
        return FirstHit(q.query_id, first.entry_id, True, 1, rr, f"first hit {first.entry_id} is relevant, RR = 1.")
    query = index.queries[q.query_id]
    retriever = index.retriever(result.name, q.query_id)
    text = index.evaluation.entry_text(result.name, first.entry_id)
    judged = "reaches no relevant source" if q.credited is not None else "is not judged relevant"
    why = f'its first hit **{first.entry_id}** ("{short(text)}", score {first.score:.2f}) {judged}'
    if retriever is not None and "explain" in capabilities(retriever):
        why += "; " + retriever.explain(query, first.entry_id).hit_reason()
    if not q.relevant:
        why += "; the query has no relevant entry at all, so RR = 0."
    elif rank is None:
        why += f"; none of its relevant entries ({', '.join(q.relevant)}) is in the top {k}, so RR = 0."
    else:
        above = ", ".join(h.entry_id for h in q.hits[: rank - 1])
        hit = q.hits[rank - 1]
        what = "the first hit reaching a relevant source" if q.credited is not None else "the first relevant entry"
        why += f"; {what}, {hit.entry_id}, is at rank {rank} after {above}"
        if hit.score == first.score:
            why += f" (it ties with {first.entry_id} at {first.score:.2f}; ties go to the higher entry id)"
        why += f", so RR = 1/{rank} = {rr:.2f}."
    return FirstHit(q.query_id, first.entry_id, False, rank, rr, why)


def _explain_retriever(index: Index, evaluation: Evaluation, result: RetrieverResult) -> RetrieverExplanation:
    k = evaluation.k
    misses: list[Miss] = []
    firsts: list[FirstHit] = []
    no_relevant: list[str] = []
    for q in result.per_query:
        if not q.relevant:
            no_relevant.append(q.query_id)
        misses.extend(_miss(index, result, q, entry_id, k) for entry_id in q.missed)
        firsts.append(_first_hit(index, result, q, k))
    recall_key, _, rr_key = seed_measures(k)
    mrr = defined(result.means[rr_key], rr_key)
    recall = defined(result.means[recall_key], recall_key)
    if any(f.rr < 1.0 for f in firsts):
        case = "mrr_below_one"
    elif misses or no_relevant:
        case = "mrr_one_recall_below_one"
    else:
        case = "recall_one"
    return RetrieverExplanation(
        result.name, result.label, k, mrr, recall, case, tuple(misses), tuple(firsts), tuple(no_relevant)
    )


def explain_run(evaluation: Evaluation, index: Index | None = None) -> RunExplanation:
    """Every retriever's misses and first hits, with reasons (see the module docstring)."""
    index = index or Index(evaluation)
    texts = {q.query_id: q.text for r in evaluation.results for q in r.per_query}
    return RunExplanation(
        evaluation.k,
        tuple(_explain_retriever(index, evaluation, r) for r in evaluation.results),
        texts,
    )


def mrr_vs_recall(evaluation: Evaluation) -> Markdown:
    """Section 4 of the report: :func:`explain_run` as Markdown."""
    return Markdown(explain_run(evaluation).markdown())
