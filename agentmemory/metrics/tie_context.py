"""Tie groups: the primitives a measure's tie-aware expectation is written in.

A retriever that gives several entries one score leaves their order to the tie rule (score descending,
then id descending, as trec_eval).  :class:`TieGroup` is one such group, :class:`TieContext` what a
measure's ``tie_aware`` function sees of one query, :func:`expected_hits` the expected number of
relevant entries in the top ``c`` over all orderings.  The notation (``t_g``, ``r_g``, ``m_g(c)``, ``D``,
``R``) and the formulas built on these are in :mod:`agentmemory.metrics.tieaware`.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from agentmemory.errors import ParameterError
from agentmemory.files.trec import trec_order
from agentmemory.records import Query

__all__ = ["TieContext", "TieGroup", "expected_hits", "tie_groups"]


@dataclass(frozen=True, slots=True)
class TieGroup:
    """Entries sharing one score: ranks ``offset + 1 .. offset + len(entry_ids)``.

    ``entry_ids`` are in the tie rule's order (id descending).
    """

    score: float
    offset: int
    entry_ids: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.entry_ids)

    def ranks_within(self, c: int) -> int:
        """``m_g(c) = min(max(c - s_g, 0), t_g)``: how many of the group's ranks are in the top ``c``."""
        return min(max(c - self.offset, 0), self.size)


@dataclass(frozen=True, slots=True)
class TieContext:
    """What a measure's tie-aware expectation sees of one query (notation: module docstring).

    Attributes:
        groups: the tie groups of the scored entries, highest score first.
        qrels: judged grade per entry id (>= 1 is relevant).
        k: the measure's cutoff, ``None`` when it has none.
        depth: ``D``, the ranks the run holds: every scored entry, or the
            first ``depth`` of them when the run keeps only a top ``depth``.
        scope_ids: the ids the query could retrieve, or ``None`` when unknown
            (see :class:`~agentmemory.metrics.QueryContext`).
        query: the query, or ``None`` when unknown (``QueryContext.query``).
        relevant: ``r_g`` per group: its entries with grade >= 1.
        num_rel: ``R``: entries judged with grade >= 1, retrieved or not.
    """

    groups: tuple[TieGroup, ...]
    qrels: Mapping[str, int]
    k: int | None
    depth: int
    scope_ids: Set[str] | None = None
    query: Query | None = None
    relevant: tuple[int, ...] = field(init=False)
    num_rel: int = field(init=False)

    def __post_init__(self) -> None:
        qrels = self.qrels
        relevant = tuple(sum(1 for e in g.entry_ids if qrels.get(e, 0) >= 1) for g in self.groups)
        object.__setattr__(self, "relevant", relevant)
        object.__setattr__(self, "num_rel", sum(1 for grade in qrels.values() if grade >= 1))

    def at(self, k: int | None) -> TieContext:
        """The same query's context for a measure with cutoff ``k`` (``relevant`` and ``num_rel`` kept, not
        counted again)."""
        other: TieContext = object.__new__(TieContext)
        for name in ("groups", "qrels", "depth", "scope_ids", "query", "relevant", "num_rel"):
            object.__setattr__(other, name, getattr(self, name))
        object.__setattr__(other, "k", k)
        return other

    @property
    def cut(self) -> int:
        """``c``: the ranks the measure looks at, ``min(k, D)``, or ``D`` without a cutoff."""
        return self.depth if self.k is None else min(self.k, self.depth)

    @property
    def cutoff(self) -> int:
        """``k`` for a measure whose cutoff is required (never ``None`` then)."""
        if self.k is None:
            raise ParameterError("k", None, "is missing", "this measure needs a cutoff, an integer >= 1")
        return self.k


def tie_groups(scores: Mapping[str, float]) -> tuple[TieGroup, ...]:
    """``scores`` as tie groups, highest score first (trec_eval's order inside each group).

    Raises:
        ParameterError: a score is NaN.
    """
    order = trec_order(scores)
    groups: list[TieGroup] = []
    start = 0
    for index in range(1, len(order) + 1):
        if index == len(order) or scores[order[index]] != scores[order[start]]:
            groups.append(TieGroup(float(scores[order[start]]), start, tuple(order[start:index])))
            start = index
    return tuple(groups)


def expected_hits(ties: TieContext, c: int) -> float:
    """``H(c) = sum_g r_g * m_g(c) / t_g``: the expected number of relevant entries in the top ``c``."""
    total = 0.0
    for group, r in zip(ties.groups, ties.relevant):
        inside = group.ranks_within(c)
        if inside and r:
            total += r * inside / group.size
    return total
