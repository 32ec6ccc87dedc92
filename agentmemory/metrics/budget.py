"""Context-budget measures: what an agent reads within ``T`` tokens, and what it reads to find the first relevant hit.

A system that returns five whole sessions and one that returns five one-line
facts cost the agent different context, but ``R@5`` scores them alike.  The
budget family cuts each ranking by the tokens of the texts the system
returned instead of by rank, so systems of different granularity are
compared at the same cost.  Its measures are written with a token budget,
``<measure>@<T>tok`` (``R@512tok``, ``nDCG@2048tok``, ``P@512tok``,
``Success@512tok``), plus ``tokens@first``; their ``family`` is
:data:`FAMILY` and tables name it beside their numbers.

**Token lengths.**  ``l_i`` is the number of tokens of the text of the hit
at rank ``i``: the entry's own text for a retriever or a run file naming
collection entries, the memory's own text for a memory system or a run's
``--memories``; counted by the evaluation's token counter
(:mod:`agentmemory.metrics.token_counters`: by default the Llama-2 BPE,
without the ``<s>`` token), whose name and version the artifact records.

**The reading rule.**  The ranking is in trec_eval's order (score descending,
then entry id descending: :func:`agentmemory.files.trec.trec_order`) and is
read from rank 1 while the cumulative token count stays within ``T``:

``n_T = max{n >= 0 : l_1 + ... + l_n <= T}``

The hit that would cross the budget is excluded, and reading stops there:
nothing below it is considered, even a shorter hit that would still fit (an
agent's context is filled in rank order).  A hit longer than ``T`` at rank 1
gives ``n_T = 0``; so does an empty ranking.  A hit of 0 tokens (an empty
text) costs nothing and is read.

**Definitions.**  Each budget measure is a trec_eval measure of the top
``n_T`` hits (relevant means a judged grade >= 1), and 0.0 when ``n_T = 0``:

* ``R@Ttok = |relevant in the top n_T| / R`` (``R``: every relevant judged;
  0 when ``R = 0``): trec_eval's ``recall_k`` at ``k = n_T``;
* ``P@Ttok = |relevant in the top n_T| / n_T``: the share of what was read
  that is relevant (trec_eval's ``P_k`` at ``k = n_T``; ``n_T`` never exceeds
  the ranking, so this is the relevant share of the hits read);
* ``Success@Ttok = 1`` when a relevant hit is in the top ``n_T``, else 0;
* ``nDCG@Ttok = DCG(top n_T) / IDCG``: trec_eval's ``ndcg`` (no cutoff) of
  the top ``n_T`` (gain = grade, discount ``log2(rank + 1)``; ``IDCG`` from
  every positive judged grade of the query, highest first, **uncut**; 0 when
  none).  The ideal is not cut at ``n_T``: a system whose ranking ends before
  the budget is spent would otherwise be compared with a shorter ideal, and
  could gain by returning less.  Nor is it the best set of texts that would
  fit the budget (a knapsack over the relevant entries' lengths, which has no
  closed form worth stating here): like ``R@Ttok`` it never falls as ``T``
  grows, and is 1 only when every relevant entry is read in the ideal order.

and, with no budget:

* ``tokens@first = l_1 + ... + l_r``, ``r`` the rank of the first relevant
  hit of the whole ranking: the tokens an agent reads, top down, to reach the
  first relevant text (lower is better).  A query whose ranking holds no
  relevant hit has **no value**: it is left out of the mean, its interval and
  its paired tests, and counted beside them (the share of queries with a
  value is the share whose ranking holds a relevant hit).

**Ties.**  Tied scores are ordered by the tie rule (entry id descending)
before the budget is applied, so when tied hits straddle the budget the rule
decides which of them is read.  Tied hits of unequal length change ``n_T``
itself, and the expectation over all orderings of the tied scores has no
closed form here: the budget measures have no tie-aware value
(``MeasureDef.tie_aware`` is ``None``; the reports say so).

**Depth.**  A budget may reach below ``--k``, so an evaluation hands these
measures each query's whole ranking (``MeasureDef.whole_ranking``); a memory
system is asked for ``T + 1`` memories under a budget of ``T`` tokens (every
non-empty text counts at least one token, so ``T + 1`` memories cross it).
A budget measure reads the ``n_T`` hits within the budget and the one that
crosses it; ``tokens@first`` reads down to the first relevant hit, or the
whole ranking when none is relevant (``MeasureDef.reads``).  ``--runs-dir``
writes each ranking that deep, so the run re-scores to the same values.

**Provenance** (``--relevance provenance``): a derived memory's own text is
what the agent reads, so ``l_i`` is the memory's length, and relevance is
read through credits (:mod:`agentmemory.metrics.provenance`): each budget
measure is its provenance definition at ``k = n_T`` (``R@Ttok``: relevant
sources credited within the top ``n_T``, over all relevant sources;
``nDCG@Ttok``: the places of the top ``n_T`` against every relevant source,
uncut as above), and
``tokens@first`` counts the tokens up to and including the first hit that
reaches a relevant source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

from agentmemory.errors import ParameterError
from agentmemory.metrics.definition import FIRST, Budget, CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.provenance import Credited

__all__ = [
    "DEFINITION",
    "FAMILY",
    "budget_form",
    "budget_reads",
    "hits_within",
    "tokens_to_first",
]

FAMILY = "budget"
"""The ``family`` of every context-budget measure (``MeasureDef.family``), as tables and the definitions card name it."""

_UNDEFINED = "no relevant hit in the ranking"


def hits_within(lengths: Iterable[int], budget: int) -> int:
    """``n_T``: how many hits from the top fit within ``budget`` tokens (the module docstring's reading rule).

    Reads ``lengths`` only up to the hit that crosses the budget.

    >>> hits_within([100, 300, 200], 400)
    2
    >>> hits_within([600, 10], 512)
    0
    """
    total = 0
    read = 0
    for length in lengths:
        total += length
        if total > budget:
            break
        read += 1
    return read


def tokens_to_first(ranking: Sequence[str], qrels: Mapping[str, int], lengths: Iterable[int]) -> int | None:
    """``tokens@first``: the tokens read down to and including the first relevant hit, ``None`` when none is relevant.

    ``lengths[i]`` is the token length of ``ranking[i]``; relevant means
    ``qrels.get(id, 0) >= 1``.  Reads ``lengths`` only down to that hit.
    """
    total = 0
    for doc, length in zip(ranking, lengths):
        total += length
        if qrels.get(doc, 0) >= 1:
            return total
    return None


def budget_reads(query: QueryContext) -> int:
    """How deep a budget measure reads: the ``n_T`` hits within the budget and the one that crosses it (the
    reading rule looks at its length), at most the whole ranking."""
    return min(hits_within(query.hit_lengths, query.tokens) + 1, len(query.ranking))


def _first_reads(query: QueryContext) -> int:
    """How deep ``tokens@first`` reads: down to the first relevant hit, else the whole ranking (to see there is none)."""
    return next((rank for rank, doc in enumerate(query.ranking, 1) if query.qrels.get(doc, 0) >= 1), len(query.ranking))


def budget_form(
    at_cutoff: Callable[[Sequence[str], Mapping[str, int], int], float],
    provenance: Callable[[Credited, int | None], float] | None,
    *,
    name: str,
    description: str,
) -> MeasureDef:
    """The budget form of a rank measure: ``at_cutoff(ranking, qrels, n_T)``, and 0.0 when ``n_T = 0``.

    ``at_cutoff`` is the measure of the first ``n_T`` hits (the rank
    measure's own per-query helper at ``k = n_T``, its cutoff already
    checked), ``provenance`` the same through provenance, called with
    ``n_T`` read from ``credited.lengths``.  The form has no batch kernel and
    no tie-aware value (module docstring).
    """

    def per_query(query: QueryContext) -> float:
        read = hits_within(query.hit_lengths, query.tokens)
        return at_cutoff(query.ranking, query.qrels, read) if read else 0.0

    def through_provenance(credited: Credited, cutoff: Any) -> float:
        read = hits_within(_credited_lengths(credited), _tokens(cutoff))
        return provenance(credited, read) if read and provenance is not None else 0.0

    return MeasureDef(
        name,
        per_query,
        CutoffRule.BUDGET,
        description,
        provenance=None if provenance is None else through_provenance,
        family=FAMILY,
        whole_ranking=True,
        reads_lengths=True,
        reads=budget_reads,
    )


def _tokens(cutoff: object) -> int:
    if not isinstance(cutoff, Budget):
        raise ParameterError("cutoff", cutoff, "is not a token budget", "give a Budget, e.g. Budget(512)")
    return cutoff.tokens


def _credited_lengths(credited: Credited) -> Sequence[int]:
    if credited.lengths is None:
        raise ParameterError(
            "lengths",
            None,
            "are unknown: a budget measure under provenance reads each hit's token length",
            "credit the ranking with its lengths: credit(ranking, qrels, ancestors, lengths=...)",
        )
    return credited.lengths


def _per_query(query: QueryContext) -> float | None:
    found = tokens_to_first(query.ranking, query.qrels, query.hit_lengths)
    return None if found is None else float(found)


def provenance_tokens(credited: Credited, cutoff: object = FIRST) -> float | None:
    """``tokens@first`` through provenance: tokens read down to the first hit reaching a relevant source, or ``None``."""
    first = credited.first_rank()
    if first is None:
        return None
    return float(sum(islice(_credited_lengths(credited), first)))


DEFINITION = MeasureDef(
    "tokens",
    _per_query,
    CutoffRule.FIRST,
    "tokens read top down to and including the first relevant hit; no value when none is relevant (context budget)",
    provenance=provenance_tokens,
    family=FAMILY,
    whole_ranking=True,
    direction="lower",
    reads_lengths=True,
    undefined_when=_UNDEFINED,
    reads=_first_reads,
)
"""``tokens@first``: lower is better; undefined on a query whose ranking holds no relevant hit."""
