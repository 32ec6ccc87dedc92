"""``stale@k``: how often the outdated evidence of a knowledge update outranks the update (lower is better).

BEAM's knowledge-update questions name the message holding the original fact
(``original_info``) and the one that updated it (``updated_info``); the
:mod:`~agentmemory.datasets.beam` loader carries both in the query's metadata,
as sorted entry ids under the keys :data:`ORIGINAL` and :data:`UPDATED` (an
id listed on both sides is updated, not original).  A memory system that
returns the outdated fact first can be caught:

``stale@k = 1`` when the best-ranked original entry is in the top ``k`` and
ranks above every updated entry of the top ``k`` (in particular when no
updated entry is in the top ``k``), else ``0``.  Equivalently: among the
top ``k``, the first entry that is original or updated is an original one.

A query with no original id or no updated id in its metadata (every question
that is not a knowledge update, and a knowledge update with an empty side,
which the loader lists) has **no value** (``MeasureDef.undefined_when``): the
mean is the share of stale questions over the knowledge updates with both
sides, and the tables count those queries beside it (``(39 of 354)``), so a
headline over every ability is not diluted by questions that cannot be
stale.  The collection report's knowledge-update section shows the same
share (:func:`agentmemory.report.knowledge_update.stale_table`).  The value does
not read the judgments, so ``--updates fresh`` and ``both`` give the same
``stale@k``.  Without the query (``agentmemory score`` has only a run and
qrels) the measure cannot be computed and says so.

**Tie-aware value** (McSherry & Najork's expectation over all orderings of
tied scores, :mod:`agentmemory.metrics.tieaware`), in closed form.  Let ``g``
be the first tie group holding an original or an updated entry, with ``o``
originals and ``u`` updated among its ``t`` entries, and ``m = m_g(c)`` of its
ranks inside the cut ``c = min(k, D)``.  In a uniformly random order of the
group, which of its ``o + u`` marked entries comes first is independent of
where the first one lands, so

``E[stale@k] = o / (o + u) * (1 - C(t - o - u, m) / C(t, m))``

(``0`` when no group holds a marked entry or ``m = 0``): the chance that the
first marked entry is original, times the chance that some marked entry falls
within the group's ``m`` ranks in the cut.  The tie report's ``minimum`` and
``maximum`` are the values at the orderings that put judged entries last and
first (:func:`agentmemory.metrics.tieaware.tie_report`, the reports' "worst"
and "best"): for ``stale@k`` under ``--updates fresh`` (the updates judged,
the originals not) they are a worse and a better value, so ``minimum`` can
exceed ``maximum``; and as the originals are not moved up, they are not the
extremes over every ordering.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from math import comb

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext
from agentmemory.metrics.tie_context import TieContext
from agentmemory.records import Query

__all__ = ["DEFINITION", "ORIGINAL", "UPDATED", "expected_stale", "stale", "stale_sides"]

ORIGINAL = "original_info"
"""The query-metadata key of the outdated evidence's entry ids."""

UPDATED = "updated_info"
"""The query-metadata key of the updating evidence's entry ids."""


def stale_sides(query: Query | None) -> tuple[frozenset[str], frozenset[str]]:
    """``(original, updated)`` entry ids of ``query`` (each empty when its metadata lacks them).

    Raises:
        ParameterError: ``query`` is ``None`` (the measure needs it).
    """
    if query is None:
        raise ParameterError(
            "stale@k",
            None,
            "needs the query (its metadata's original_info and updated_info ids), which a run scored against "
            "qrels alone does not have",
            "evaluate a collection that carries them (agentmemory eval --format beam)",
        )
    metadata = query.metadata
    original = frozenset(metadata.get(ORIGINAL, ()))
    updated = frozenset(metadata.get(UPDATED, ()))
    return original - updated, updated


def stale(ranking: Sequence[str], original: Collection[str], updated: Collection[str], k: int) -> float | None:
    """``1.0`` when the first entry of ``ranking[:k]`` that is original or updated is original, else ``0.0``.

    ``None`` when either side is empty: the question is not a knowledge update with both sides, and is
    left out of the share.
    """
    check_positive_int("k", k)
    if not original or not updated:
        return None
    for doc in ranking[:k]:
        if doc in original:
            return 1.0
        if doc in updated:
            return 0.0
    return 0.0


def _per_query(query: QueryContext) -> float | None:
    original, updated = stale_sides(query.query)
    return stale(query.ranking, original, updated, query.cutoff)


def expected_stale(ties: TieContext) -> float | None:
    """``stale@k`` over all orderings of tied scores: ``o / (o + u) * (1 - C(t - o - u, m) / C(t, m))`` (module docstring).

    ``None`` where the measure has no value (a side is empty), as :func:`stale`.
    """
    original, updated = stale_sides(ties.query)
    if not original or not updated:
        return None
    c = ties.cut
    for group in ties.groups:
        o = sum(1 for e in group.entry_ids if e in original)
        u = sum(1 for e in group.entry_ids if e in updated)
        if o + u == 0:
            continue
        m = group.ranks_within(c)
        if m == 0:
            return 0.0
        t = group.size
        return o / (o + u) * (1 - comb(t - o - u, m) / comb(t, m))
    return 0.0


DEFINITION = MeasureDef(
    "stale",
    _per_query,
    CutoffRule.REQUIRED,
    "1 if an outdated (original_info) entry is in the top k above every updated one (BEAM knowledge updates)",
    tie_aware=expected_stale,
    family="BEAM",
    direction="lower",
    undefined_when="no knowledge update that has both sides (original_info and updated_info)",
)
"""``stale@k``: lower is better."""
