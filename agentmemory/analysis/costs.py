"""What a ranking costs the agent that reads it, per system, and where rankings ran out of hits.

``R@5`` scores five session notes and five one-line facts alike, though the
first cost an agent some thousands of tokens of context and the second a
few hundred; a system that never returns more than 15 memories is cut by a
token budget only where its hits run out.  The comparison table's numbers
do not show either, so the **cost table** stands beside it
(:func:`cost_table`; ``agentmemory eval`` prints it under the comparison
table, the reports show it there too).

Definitions, for each system with a ranking (an answer file without
retrieval has none), over the headline queries with judgments (those behind
the comparison table's retrieval means), ``n`` being a query's ranking's
length and ``l_i`` the tokens of the text of its hit at rank ``i``, counted
by the evaluation's token counter
(:mod:`agentmemory.metrics.token_counters`, ``--tokenizer``) on the text the
system returned (a memory system's or a run's own memory; a retriever's
entry), as the budget measures count them:

* **memories returned**: the mean of ``n``, and the largest ``n``.  ``n``
  is the ranking the evaluation kept (:attr:`QueryResult.ranking
  <agentmemory.evaluation.runner.QueryResult>`): a memory system's whole
  answer (it was asked for as many memories as the deepest measure could
  read); for a retriever or a run file, the hits down to the deepest one a
  measure read (a retriever returns as many as it is asked for, so its ``n``
  says how deep the measures went; a run file's deeper lines are not read);
* **tokens per memory in the top k**: ``sum of l_i over every query's top
  min(k, n) hits / the number of those hits`` (pooled over queries;
  ``n/a`` when no query has a hit);
* **tokens in the top k**: the mean over queries of ``l_1 + ... +
  l_min(k, n)`` (a query without hits counts 0);
* **ran out of hits**: for each rank cutoff ``d`` of a measure that reads
  the top ``d`` (``P@5``, ``R@10``) and each token budget ``T`` of a budget
  measure (``R@2048tok``), the number of queries whose ranking ended before
  it: ``n < d``, or ``l_1 + ... + l_n < T`` (every hit read and the budget
  still not spent).  Those queries' values are what the whole ranking holds:
  what a longer ranking would have added is missing from them.  A measure reading the
  whole ranking (``RR``, ``tokens@first``, LongMemEval's ``sess.*``) has no
  such limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentmemory.analysis.text_tables import markdown_table
from agentmemory.evaluation.runner import Evaluation, RetrieverResult
from agentmemory.metrics import Measure
from agentmemory.metrics.token_counters import CachedCounter, token_counter

__all__ = ["COST_COLUMNS", "CostTable", "Limit", "SystemCost", "cost_table"]

COST_COLUMNS = ("System", "memories returned (mean)", "most returned", "tokens per memory, top {k}", "tokens, top {k}")
"""The cost table's header (``{k}`` is the evaluation's cutoff)."""


@dataclass(frozen=True, order=True)
class Limit:
    """Where a measure stops reading a ranking: after ``value`` hits (``kind`` ``"rank"``) or ``value`` tokens
    (``kind`` ``"tokens"``); ``measures`` are the measures of the evaluation with that limit."""

    kind: str
    value: int
    measures: tuple[str, ...] = ()

    def text(self) -> str:
        """``"rank 5"``, ``"2,048 tokens"``."""
        return f"rank {self.value:,}" if self.kind == "rank" else f"{self.value:,} tokens"


@dataclass(frozen=True)
class SystemCost:
    """One system's row of the cost table (see the module docstring for each figure).

    ``ran_out`` holds, per limit of :attr:`CostTable.limits` (same order), the
    number of queries whose ranking ended before it.
    """

    name: str
    label: str
    queries: int
    returned: float
    most: int
    tokens_per_memory: float | None
    tokens_at_k: float
    ran_out: tuple[int, ...]


@dataclass(frozen=True)
class CostTable:
    """The cost table of one evaluation: one :class:`SystemCost` per system with a ranking, in its order."""

    k: int
    tokenizer: str
    queries: int
    limits: tuple[Limit, ...]
    rows: tuple[SystemCost, ...]

    def header(self) -> list[str]:
        return [c.format(k=self.k) for c in COST_COLUMNS]

    def cells(self) -> list[list[str]]:
        """One row per system: label, mean and largest memories returned, tokens per memory and in the top k."""
        return [
            [
                row.label,
                f"{row.returned:,.1f}",
                f"{row.most:,}",
                "n/a" if row.tokens_per_memory is None else f"{row.tokens_per_memory:,.1f}",
                f"{row.tokens_at_k:,.1f}",
            ]
            for row in self.rows
        ]

    def caption(self) -> str:
        """What the numbers are: over which queries, counted with which token counter."""
        queries = f"{self.queries:,} {'query' if self.queries == 1 else 'queries'}"
        return (
            f"What a ranking costs the agent that reads it, over the {queries} with judgments behind the headline "
            "means: memories "
            f"returned per query, and the tokens ({self.tokenizer} token counter) of the texts each system returned, "
            f"per memory and in all, in the top {self.k}"
        )

    def notes(self) -> list[str]:
        """What the columns count, then one line per system whose rankings ran out of hits before a measure's
        depth or budget (``"Capped notes ran out of hits before 2,048 tokens on 6 of 8 queries (R@2048tok)"``)."""
        lines = [
            "memories returned: a memory system's whole answer per query; for a retriever or a run file, the hits "
            "down to the deepest one a measure read (a retriever returns as many as it is asked for). Tokens are "
            "counted on each text as the system returned it, as the budget measures count them."
        ]
        for row in self.rows:
            parts = [
                f"before {limit.text()} on {count:,} of {row.queries:,} {'query' if row.queries == 1 else 'queries'} "
                f"({', '.join(limit.measures)})"
                for limit, count in zip(self.limits, row.ran_out)
                if count
            ]
            if parts:
                lines.append(
                    f"{row.label} ran out of hits {_joined(parts)}: those rankings were read whole, and what a "
                    "longer one would have added is missing from their values."
                )
        return lines

    def render(self) -> str:
        """Caption, Markdown table and notes, as ``agentmemory eval`` prints them."""
        return f"{self.caption()}:\n\n{markdown_table(self.header(), self.cells())}\n\n" + "\n".join(self.notes())


def _joined(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _limits(measures: Sequence[Measure]) -> tuple[Limit, ...]:
    """The rank cutoffs and token budgets the measures stop reading at (see the module docstring), sorted."""
    found: dict[tuple[str, int], list[str]] = {}
    for m in measures:
        if m.budget is not None:
            found.setdefault(("tokens", m.budget), []).append(str(m))
        elif m.rank_cutoff is not None and not m.definition.whole_ranking:
            found.setdefault(("rank", m.rank_cutoff), []).append(str(m))
    return tuple(Limit(kind, value, tuple(names)) for (kind, value), names in sorted(found.items()))


def _text_of(evaluation: Evaluation, result: RetrieverResult) -> Callable[[str, str], str]:
    """The text ``result``'s system returned for a query's hit: its own memory (also where one stands in for an
    entry under ``direct`` relevance), else the collection's entry."""
    own = result.entries
    entry = evaluation.collection.entry

    def text(query_id: str, hit_id: str) -> str:
        returned = result.returned_id(query_id, hit_id)
        mine = own.get(returned)
        return mine.text if mine is not None else entry(returned).text

    return text


def _row(
    evaluation: Evaluation, result: RetrieverResult, limits: Sequence[Limit], counter: CachedCounter
) -> SystemCost:
    k = evaluation.k
    judged = evaluation.collection.qrels
    text = _text_of(evaluation, result)
    rankings = [(q.query_id, [h.entry_id for h in q.ranking]) for q in result.headline if q.query_id in judged]
    lengths = [counter.count([text(qid, i) for i in ranking]) for qid, ranking in rankings]
    top = [n[:k] for n in lengths]
    in_top = sum(len(t) for t in top)
    ran_out = tuple(
        sum(1 for n in lengths if (len(n) < limit.value if limit.kind == "rank" else sum(n) < limit.value))
        for limit in limits
    )
    queries = len(rankings)
    return SystemCost(
        name=result.name,
        label=result.label,
        queries=queries,
        returned=math.fsum(len(r) for _, r in rankings) / queries if queries else 0.0,
        most=max((len(r) for _, r in rankings), default=0),
        tokens_per_memory=math.fsum(sum(t) for t in top) / in_top if in_top else None,
        tokens_at_k=math.fsum(sum(t) for t in top) / queries if queries else 0.0,
        ran_out=ran_out,
    )


def cost_table(evaluation: Evaluation) -> CostTable | None:
    """The cost table of ``evaluation`` (module docstring), or ``None`` when no system ranked anything (answer
    files without retrieval alone)."""
    unranked = {a.name for a in evaluation.answers if a.run is None}
    ranked = [r for r in evaluation.results if r.name not in unranked]
    if not ranked:
        return None
    counter = token_counter(evaluation.options.tokenizer)
    limits = _limits(evaluation.measures)
    rows = tuple(_row(evaluation, r, limits, counter) for r in ranked)
    return CostTable(
        k=evaluation.k,
        tokenizer=counter.name,
        queries=rows[0].queries,
        limits=limits,
        rows=rows,
    )
