"""Ties in a report: which queries' values the tie rule decided, and how far each measure could move.

Reads the tie reports :func:`agentmemory.evaluate` stores with ``ties=True``
(its default): ``QueryResult.ties[measure]`` is a
:class:`~agentmemory.metrics.tieaware.TieReport` (value under the tie rule, its
expectation over all orderings of tied scores, the worst and best value),
and :meth:`~agentmemory.evaluation.runner.RetrieverResult.tie_means` averages them
over the headline queries.

A measure *can move* for a query when its worst and best values differ
(``minimum != maximum``).  A query's tied scores *straddle the cutoff* when
the entry just below rank k scores the same as the k-th hit
(``QueryResult.tie_at_cutoff``): the tie rule (higher entry id first), not
the score, chose what made the top k, which can change every measure.  Ties
inside the top k can move only the order-sensitive measures (RR, AP, nDCG).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from agentmemory.evaluation.runner import Evaluation, QueryResult, RetrieverResult
from agentmemory.metrics.budget import FAMILY as BUDGET_FAMILY
from agentmemory.metrics.tieaware import TieReport
from agentmemory.report.caveats import ties_inside_top_k
from agentmemory.report.display import Markdown, Table, plural

__all__ = [
    "moving_measures",
    "straddling_queries",
    "tie_cell",
    "tie_flags",
    "tie_means_table",
    "tie_table",
    "tie_tables",
]


def moving_measures(q: QueryResult) -> dict[str, TieReport]:
    """The measures a different order of tied scores could change for ``q`` (``minimum != maximum``), in order."""
    return {m: t for m, t in (q.ties or {}).items() if t.minimum != t.maximum}


def straddling_queries(result: RetrieverResult) -> tuple[QueryResult, ...]:
    """The queries whose tied scores straddle the cutoff (``tie_at_cutoff``), in file order."""
    return tuple(q for q in result.per_query if q.tie_at_cutoff)


def _move(measure: str, t: TieReport) -> str:
    return (
        f"{measure} {t.value_under_rule:.2f} (could be {t.minimum:.2f} to {t.maximum:.2f}, expected {t.expected:.2f})"
    )


def _cutoff_group(q: QueryResult, k: int) -> str:
    t = next(iter(q.ties.values())) if q.ties else None
    if t is None or not t.group_size:
        return "tied at the cutoff"
    return f"{t.group_size} entries tie at score {q.hits[k - 1].score:.2f}, {t.group_in_top_k} of them in the top {k}"


def _query_line(q: QueryResult, k: int, straddles: bool) -> str:
    moving = moving_measures(q)
    head = f"  - {q.query_id}"
    if straddles:
        head += f" ({_cutoff_group(q, k)})"
    if not moving:
        return head + ": no measure can move (the tied entries are judged alike)."
    return head + ": " + "; ".join(_move(m, t) for m, t in moving.items()) + "."


def tie_flags(evaluation: Evaluation, *, per_query: bool = True) -> Markdown:
    """Every query whose tied scores straddle the cutoff, and how much each measure could move.

    Per retriever: the straddling queries (with ``per_query``, one line
    each: the size of the tie group at rank k, how many of it made the top
    k, and for every measure that can move its value under the rule, its
    range and its expectation); the queries whose ties inside the top k
    still move an order-sensitive measure; and the headline means that ties
    could move (:meth:`~agentmemory.evaluation.runner.RetrieverResult.tie_means`).
    Without tie reports (``evaluate(..., ties=False)``) it says so.
    """
    k = evaluation.k
    lines: list[str] = []
    for result in evaluation.results:
        note, analysed = _availability(evaluation, result)
        if note:
            lines.append(note)
        if analysed:
            lines += _retriever_flags(result, k, per_query=per_query)
    return Markdown("\n".join(lines))


def _availability(evaluation: Evaluation, result: RetrieverResult) -> tuple[str, bool]:
    """``(note, analysed)``: the line saying why (part of) ``result`` has no tie analysis ("" when every query
    has one), and whether any of its queries are analysed (then :func:`_retriever_flags` follows the note)."""
    label = result.label
    missing = [q.query_id for q in result.per_query if q.ties is None]
    if evaluation.relevance == "provenance":
        return f"- **{label}:** tie analysis is not made under provenance judgments.", False
    if not missing:
        return "", True
    if result.kind == "run" and len(missing) < len(result.per_query):
        return (
            f"- **{label}:** in {plural(len(missing), 'query', 'queries')}{_ids(missing)} a tie at the "
            "cutoff reaches the run's last hit, and a run holds no scores below its depth: the analysis is not "
            "available for them; the other queries follow."
        ), True
    if result.kind == "run":
        return f"- **{label}:** tie analysis is not available: every tie at the cutoff reaches the run's end.", False
    return f"- **{label}:** ties were not analysed (the run used `evaluate(..., ties=False)`).", False


_LISTED_IDS = 10
"""Up to this many query ids a line names them; more are counted (the folded tables list them)."""


def _ids(ids: list[str]) -> str:
    """`` (q1, q2)`` for a few ids, ``""`` for more than :data:`_LISTED_IDS`."""
    return f" ({', '.join(ids)})" if len(ids) <= _LISTED_IDS else ""


def _retriever_flags(result: RetrieverResult, k: int, *, per_query: bool) -> list[str]:
    """:func:`tie_flags`' lines for one retriever whose queries (all or some) have tie reports."""
    label = result.label
    straddle = straddling_queries(result)
    inside = [q for q in result.per_query if not q.tie_at_cutoff and moving_measures(q)]
    if not straddle and not inside:
        tied = [q.query_id for q in result.per_query if ties_inside_top_k(q)]
        text = f"- **{label}:** no tied scores straddle the cutoff k = {k}, and no tie can move any measure"
        if tied:
            text += f" (the ties inside the top {k} of {', '.join(tied)} join entries judged alike)"
        return [text + ": every value is what the scores alone give."]
    lines: list[str] = []
    if straddle:
        ids = f" ({', '.join(q.query_id for q in straddle)})" if per_query else ""
        lines.append(
            f"- **{label}: tied scores straddle the cutoff k = {k} in {len(straddle)} of "
            f"{plural(len(result.per_query), 'query', 'queries')}**{ids}: the tie rule (higher entry id first), "
            "not the score, chose which tied entries made the top k."
        )
        if per_query:
            lines += [_query_line(q, k, True) for q in straddle]
    if inside:
        lines.append(
            f"- **{label}: ties inside the top {k}** (not at the cutoff) can move order-sensitive measures in "
            f"{plural(len(inside), 'query', 'queries')}" + (":" if per_query else ".")
        )
        if per_query:
            lines += [_query_line(q, k, False) for q in inside]
    lines.append(_means_line(result))
    return lines


def _means_line(result: RetrieverResult) -> str:
    """Whether ties could move ``result``'s headline means, and by how much."""
    label = result.label
    moved = {m: v for m, v in result.tie_means().items() if v["minimum"] != v["maximum"]}
    if moved:
        return (
            f"  - Over the {len(result.headline)} headline queries, ties could move {label}'s means: "
            + "; ".join(
                f"{m} {v['value_under_rule']:.2f} (could be {v['minimum']:.2f} to {v['maximum']:.2f}, "
                f"expected {v['expected']:.2f})"
                for m, v in moved.items()
            )
            + "."
        )
    if any(moving_measures(q) for q in result.per_query):
        return (
            f"  - None of {label}'s headline means can move: the queries whose values can move are in groups "
            "left out of the headline."
        )
    return f"  - No value of {label} can move, so neither can its means."


def tie_cell(t: TieReport) -> str:
    """``"0.00 / 0.56 / [0.00, 1.00]"``: value under the tie rule / expected over tie orders / [worst, best]."""
    return f"{t.value_under_rule:.2f} / {t.expected:.2f} / [{t.minimum:.2f}, {t.maximum:.2f}]"


def tie_table(evaluation: Evaluation, retriever: str) -> Table:
    """Every query of ``retriever`` whose tied scores straddle the cutoff: the tie group and each measure's :func:`tie_cell`."""
    k = evaluation.k
    result = evaluation.result(retriever)
    measures = [str(m) for m in evaluation.measures]
    rows = []
    for q in straddling_queries(result):
        t = next(iter(q.ties.values())) if q.ties else None
        rows.append(
            [
                q.query_id,
                q.group or "-",
                f"{t.group_size} at {q.hits[k - 1].score:.2f}, {t.group_in_top_k} in top {k}" if t else "-",
                *((tie_cell(q.ties[m]) if q.ties and m in q.ties else "-") for m in measures),
            ]
        )
    frame = pd.DataFrame(rows, columns=["query", "group", "tie at the cutoff", *measures])
    if not rows:
        return Table(frame, f"{result.label}: no tied scores straddle the cutoff k = {k}")
    return Table(
        frame,
        f"{result.label}: the {plural(len(rows), 'query', 'queries')} whose tied scores straddle the cutoff k = {k}; "
        "each measure: "
        "value under the tie rule / expected over all orders of tied scores / [worst, best]",
    )


def tie_tables(evaluation: Evaluation) -> list[Table | Markdown]:
    """:func:`tie_table` of every system with a query whose tied scores straddle the cutoff, each folded (its
    caption and number of queries stay visible); one line naming the systems without any (no empty table)."""
    tables: list[Table | Markdown] = []
    without = []
    for result in evaluation.results:
        table = tie_table(evaluation, result.name)
        if len(table.frame):
            tables.append(replace(table, fold=True))
        else:
            without.append(result.label)
    if without:
        names = ", ".join(without)
        tables.append(Markdown(f"No tied scores straddle the cutoff k = {evaluation.k} for {names}."))
    return tables


def tie_means_table(evaluation: Evaluation) -> Table:
    """Per retriever and measure, the headline mean under the tie rule beside its tie-aware expectation, worst and best."""
    rows = []
    for result in evaluation.results:
        for measure, v in result.tie_means().items():
            rows.append(
                [
                    result.label,
                    measure,
                    format(v["value_under_rule"], ".4f"),
                    format(v["expected"], ".4f"),
                    format(v["minimum"], ".4f"),
                    format(v["maximum"], ".4f"),
                    format(v["expected"] - v["value_under_rule"], "+.4f"),
                ]
            )
    columns = ["System", "measure", "under the rule", "expected", "worst", "best", "expected - rule"]
    n = len(evaluation.results[0].headline) if evaluation.results else 0
    caption = (
        f"Headline means over {n} queries: under the tie rule (what the tables report), expected over all "
        "orders of tied scores (McSherry & Najork 2008), and the worst and best orders"
    )
    budget = [str(m) for m in evaluation.measures if m.definition.family == BUDGET_FAMILY]
    if budget:
        caption += (
            f"; {', '.join(budget)} {'has' if len(budget) == 1 else 'have'} no tie-aware value (tied hits of unequal length change how many fit in "
            "the budget, and the expectation over their orders has no closed form)"
        )
    return Table(pd.DataFrame(rows, columns=columns), caption)
