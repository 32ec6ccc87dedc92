"""Caveats computed from a run: what the numbers rest on, ties, and what a small fixture cannot say."""

from __future__ import annotations

from agentmemory.analysis.text_tables import cutoff_note, unjudged_note
from agentmemory.evaluation.runner import Evaluation, QueryResult
from agentmemory.report.display import Folded, Markdown, ordinal, plural

__all__ = ["SMALL_QUERIES", "caveats", "caveats_section", "tied_query_ids", "ties_inside_top_k", "weight"]


def weight(n: int) -> str:
    """``1/n`` to three significant digits, never ``0.00``: ``0.2``, ``0.0667``, ``0.000655``."""
    return f"{1 / n:.3g}"


SMALL_QUERIES = 100
"""Below this many judged queries the report says plainly that the numbers say nothing general."""


def ties_inside_top_k(q: QueryResult) -> bool:
    """True when two of the query's top-k hits have the same score (their order came from the id tie-break)."""
    scores = [h.score for h in q.hits]
    return len(set(scores)) < len(scores)


def caveats(evaluation: Evaluation) -> Markdown:
    """Section 6: the base of the means, ties at and inside the cutoff, and the limits of a small collection."""
    c = evaluation.collection
    k = evaluation.k
    headline = c.headline_queries
    n = len(headline)
    relevant = sum(len(c.relevant(q.id)) for q in headline)
    lines = [
        f"- **What the numbers rest on:** {n} judged {'query' if n == 1 else 'queries'} over {len(c.entries)} "
        f"entries, {relevant} relevant judgments. Each query weighs 1/{n} = {weight(n)} in every mean"
        if n
        else "- **What the numbers rest on:** no judged query: every mean is 0 by convention",
    ]
    if n:
        lines[0] += f", so one query going from recall 0 to recall 1 moves mean recall@{k} by {weight(n)}."
    lines.append(f"- {unjudged_note(evaluation)}")
    note = cutoff_note(evaluation)
    if note:
        lines.append(f"- **A cutoff no scope fills:** {note}")
    left_out = len(c.judged_queries) - n
    if left_out:
        lines.append(
            f"- {left_out} judged queries of the groups {', '.join(c.headline_excludes)} are evaluated but left "
            "out of the headline means (they appear in the per-query results and the group means)."
        )
    if c.skipped:
        lines.append(
            f"- {plural(len(c.skipped), 'query was', 'queries were')} skipped by the loader, left out of every "
            "number (each with its reason under What was evaluated)."
        )
    if c.repairs:
        lines.append(
            f"- The loader made {plural(len(c.repairs), 'repair', 'repairs')} on request (listed under What was evaluated)."
        )
    straddle = [(r.label, [q.query_id for q in r.per_query if q.tie_at_cutoff]) for r in evaluation.results]
    if any(ids for _, ids in straddle):
        lines.append(
            f"- **Tied scores straddle the cutoff k = {k}:** the entry just below rank {k} scores the same as "
            f"the {ordinal(k)} hit, so the id tie-break (higher id first), not the score, decided what made the cut "
            "(which can change P@k and R@k):"
        )
        lines += [f"  - {label}: {plural(len(ids), 'query', 'queries')}" for label, ids in straddle if ids]
    else:
        lines.append(
            f"- **No tied score straddles the cutoff k = {k}** for any retriever: scores alone decided every top {k}."
        )
    inside = [(r.label, [q.query_id for q in r.per_query if ties_inside_top_k(q)]) for r in evaluation.results]
    if any(ids for _, ids in inside):
        lines.append(
            f"- **Ties inside the top {k}:** the order of tied hits comes from the id tie-break; it can change "
            "RR, AP and nDCG, never P@k or R@k:"
        )
        lines += [f"  - {label}: {plural(len(ids), 'query', 'queries')}" for label, ids in inside if ids]
    else:
        lines.append(f"- **No ties inside the top {k}:** every rank was decided by a strictly lower score.")
    if n < SMALL_QUERIES:
        lines.append(
            f"- **A fixture this small says nothing general about ranking quality.** {n} queries over "
            f"{len(c.entries)} entries describe this collection at k = {k}, nothing more: they do not show "
            "that one retriever is better than another elsewhere."
        )
    else:
        lines.append(
            f"- These numbers describe this collection at k = {k}; with {n} queries, look at the per-query "
            "spread before generalising beyond it."
        )
    return Markdown("\n".join(lines))


def tied_query_ids(evaluation: Evaluation) -> Folded | None:
    """The ids behind the caveats' tie counts, per system (folded); ``None`` when no query has a tie."""
    k = evaluation.k
    parts = []
    for r in evaluation.results:
        straddle = [q.query_id for q in r.per_query if q.tie_at_cutoff]
        inside = [q.query_id for q in r.per_query if ties_inside_top_k(q)]
        if straddle:
            parts.append(f"- **{r.label}**, tied scores straddle the cutoff k = {k}: {', '.join(straddle)}")
        if inside:
            parts.append(f"- **{r.label}**, ties inside the top {k}: {', '.join(inside)}")
    if not parts:
        return None
    return Folded("The queries with ties, per system", "\n".join(parts))


def caveats_section(evaluation: Evaluation) -> list[Markdown | Folded]:
    """:func:`caveats`, then :func:`tied_query_ids` folded under it when some query has ties."""
    ids = tied_query_ids(evaluation)
    return [caveats(evaluation)] if ids is None else [caveats(evaluation), ids]
