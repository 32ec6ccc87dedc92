"""Tie-aware metric values: what a measure is worth when tied scores are ordered at random.

A retriever that gives several entries the same score leaves their order to
the tie rule (score descending, then entry id *descending*, as trec_eval).
The rule is arbitrary with respect to relevance, so a measure computed under
it can be luckier or unluckier than the scores justify.  Following McSherry
& Najork (2008), "Computing information retrieval performance measures
efficiently in the presence of tied scores" (ECIR 2008, LNCS 4956,
pp. 414-421), this module computes the **expected** value of a measure over
all orderings of the tied entries: the entries of each tie group (equal
score) are put in a uniformly random order, independently across groups, and
the measure is averaged over all those orderings.  The expectation is
computed exactly from closed forms per tie group, without enumerating
orderings (the tests check it against enumeration).

Notation for one query.  The scored entries, sorted by score descending,
form tie groups ``g = 1, 2, ...``: group ``g`` occupies the ranks
``s_g + 1 .. s_g + t_g`` (``s_g`` entries rank above it, ``t_g`` entries
share its score).  ``r_g`` is the number of relevant entries in the group
(grade >= 1), ``G_g`` the sum of its positive grades, ``R`` the number of
relevant entries judged for the query (retrieved or not).  ``D`` is the
depth of the ranking (all scored entries, or the first ``depth`` when the
run keeps only a top ``depth``), ``c`` the number of ranks a measure looks at
(``min(k, D)`` for a cutoff ``k``), and ``m_g(c) = min(max(c - s_g, 0), t_g)``
the number of group ``g``'s ranks within the top ``c``.  Each rank of a
group holds each of its entries with probability ``1 / t_g``, so the
expected number of relevant entries in the top ``c`` is
``H(c) = sum_g r_g * m_g(c) / t_g`` (:func:`expected_hits`).

Each measure carries its own expectation (the ``tie_aware`` field of its
:class:`~agentmemory.metrics.MeasureDef`, which receives a
:class:`TieContext`), and its docstring states the closed form exactly as
computed: :func:`~agentmemory.metrics.precision.expected_precision`
(``H(c) / k``), :func:`~agentmemory.metrics.recall.expected_recall`,
:func:`~agentmemory.metrics.r_precision.expected_r_precision`,
:func:`~agentmemory.metrics.success.expected_success`,
:func:`~agentmemory.metrics.reciprocal_rank.expected_reciprocal_rank`,
:func:`~agentmemory.metrics.ndcg.expected_ndcg` and
:func:`~agentmemory.metrics.average_precision.expected_average_precision`.
A measure without one (a measure registered without ``tie_aware``) has no
tie-aware value: :func:`tie_aware_value` says so, :func:`tie_report` gives
``None``.

All measures follow :mod:`agentmemory.metrics` (trec_eval semantics): the
ranking is the scored entries only (an entry missing from ``scores`` is not
retrieved), ``P@k`` divides by ``k`` even when fewer entries are scored, and
``R`` and ``IDCG`` count every judged entry.  Every function here is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import asdict, dataclass
from typing import Any

from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.metrics.base import REGISTRY, Measure, as_scope, defined, parse_measure
from agentmemory.metrics.definition import MeasureDef
from agentmemory.metrics.tie_context import TieContext, TieGroup, expected_hits, tie_groups
from agentmemory.records import Query

__all__ = [
    "TieContext",
    "TieGroup",
    "TieReport",
    "expected_hits",
    "tie_aware_value",
    "tie_groups",
    "tie_report",
    "tie_reports",
]


@dataclass(frozen=True, slots=True)
class TieReport:
    """How much the tie rule decided one query's value of one measure (see :func:`tie_report`).

    Attributes:
        value_under_rule: the measure on the tie rule's top ``k`` (what
            :func:`agentmemory.evaluation.runner.evaluate` reports).
        expected: the mean over all orderings of tied entries
            (:func:`tie_aware_value` with ``depth=k``).
        minimum, maximum: the worst and best value over all those orderings.
        straddles_cutoff: the tie group holding rank ``k`` continues below it,
            so the tie rule chose which of its entries made the top ``k``.
        group_size: size of the tie group holding rank ``k`` (0 when fewer
            than ``k`` entries are scored).
        group_in_top_k: how many of that group's entries are in the top ``k``.
    """

    value_under_rule: float
    expected: float
    minimum: float
    maximum: float
    straddles_cutoff: bool
    group_size: int
    group_in_top_k: int

    def to_dict(self) -> dict[str, Any]:
        """The fields, JSON-ready, in declaration order."""
        return asdict(self)


def _as_measure(measure: Measure | str) -> Measure:
    if isinstance(measure, Measure):
        return measure
    return parse_measure(measure)


def _check_depth(depth: int | None) -> int | None:
    return None if depth is None else check_positive_int("depth", depth)


def _scope(scope_ids: Iterable[str] | None) -> Set[str] | None:
    return as_scope(scope_ids)


def _no_formula(m: Measure) -> ParameterError:
    having = sorted(d.name for d in REGISTRY.registered().values() if d.tie_aware is not None)
    return ParameterError(
        "measure",
        str(m),
        "has no tie-aware formula",
        "its MeasureDef sets no tie_aware; the measures with one are: " + ", ".join(having),
    )


def tie_aware_value(
    measure: Measure | str,
    scores: Mapping[str, float],
    qrels: Mapping[str, int],
    *,
    depth: int | None = None,
    scope_ids: Set[str] | Sequence[str] | None = None,
    query: Query | None = None,
) -> float | None:
    """The expected value of ``measure`` over all orderings of tied scores (formulas: module docstring).

    ``None`` where the measure has no value on the query (``MeasureDef.undefined_when``: ``stale@k`` on a
    question that is not a knowledge update), whatever the order.

    Args:
        measure: a :class:`~agentmemory.metrics.Measure` or its text (``"nDCG@5"``)
            whose definition has a tie-aware expectation (every built-in measure has).
        scores: entry id -> score for every entry the retriever scores (for
            BM25 and the tag scorer, :meth:`score_all`: every entry with a
            positive score).  Tie groups must be complete: an entry missing
            here is treated as not retrieved.
        qrels: judged grade per entry id for this query (>= 1 is relevant).
        depth: keep only the top ``depth`` ranks, as a run of depth ``depth``
            does (``evaluate(k=...)`` keeps ``k``); ``None`` keeps every scored
            entry.  ``RR`` (no cutoff) then looks at the top ``depth`` only.
        scope_ids: the ids the query could retrieve, or ``None`` when unknown
            (passed on in the :class:`TieContext`; the built-in measures ignore it).
        query: the query, or ``None`` when unknown (passed on in the :class:`TieContext`).

    When no two scores are equal this is the measure's ordinary value.

    Raises:
        ParameterError: a score is NaN, ``depth`` is not an integer >= 1,
            ``measure`` is unknown, or it has no tie-aware formula.
    """
    m = _as_measure(measure)
    expectation = m.definition.tie_aware
    if expectation is None:
        raise _no_formula(m)
    depth = _check_depth(depth)
    groups = tie_groups(scores)
    n_scored = len(scores)
    d = n_scored if depth is None else min(depth, n_scored)
    return expectation(TieContext(groups, qrels, m.rank_cutoff, d, _scope(scope_ids), query))


def _extreme_ranking(groups: Sequence[TieGroup], qrels: Mapping[str, int], best: bool) -> list[str]:
    """Every group ordered by grade (positive part), best first or worst first; ties keep the rule's order."""
    out: list[str] = []
    for group in groups:
        if len(group.entry_ids) == 1:  # nothing to reorder
            out.append(group.entry_ids[0])
            continue
        key = [max(qrels.get(e, 0), 0) for e in group.entry_ids]
        order = sorted(range(group.size), key=lambda i: -key[i] if best else key[i])
        out.extend(group.entry_ids[i] for i in order)
    return out


def tie_report(
    measure: Measure | str,
    scores: Mapping[str, float],
    qrels: Mapping[str, int],
    k: int,
    *,
    scope_ids: Set[str] | Sequence[str] | None = None,
    query: Query | None = None,
) -> TieReport | None:
    """The value of ``measure`` on a depth-``k`` run under the tie rule, and how far ties could move it.

    ``k`` is the retrieval depth (``evaluate(k=...)``): the run holds the top
    ``k`` of ``scores`` in trec_eval's order, and every value is computed on
    such a run, so ``value_under_rule`` equals what
    :func:`agentmemory.evaluation.runner.evaluate` reports for the query.

    * ``expected`` is :func:`tie_aware_value` with ``depth=k``.
    * ``minimum`` / ``maximum`` are the measure on the worst / best ordering
      of tied entries: inside every tie group, entries sorted by grade
      ascending / descending (grades below 0 count as 0).  That ordering is
      optimal for every built-in measure at once (by the rearrangement
      inequality for nDCG; moving a relevant entry up never lowers P, R,
      Success, RR or AP); for a measure registered with a tie-aware formula
      it is the range only if the measure never falls when a higher grade
      moves up.
      The range covers *every* tie group in the top ``k``, not only the
      one at the cutoff: for set measures (P, R, Success, Rprec cut at
      ``k``) only the group at the cutoff can matter, but RR, AP and nDCG
      also move when tied entries swap inside the top ``k``.
    * ``straddles_cutoff``, ``group_size``, ``group_in_top_k`` describe the
      tie group holding rank ``k`` (see :class:`TieReport`); ``straddles_cutoff``
      is the same test as :attr:`agentmemory.evaluation.runner.QueryResult.tie_at_cutoff`.

    Returns ``None`` (and raises nothing about it) when the measure has no
    tie-aware formula: a report on it is not available.

    Raises:
        ParameterError: as :func:`tie_aware_value`; ``k`` not an integer >= 1.
    """
    m = _as_measure(measure)
    k = check_positive_int("k", k)
    if m.definition.tie_aware is None:
        return None
    return _TieBasis(scores, qrels, k, _scope(scope_ids), query).report(m)


def tie_reports(
    measures: Iterable[Measure | str],
    scores: Mapping[str, float],
    qrels: Mapping[str, int],
    k: int,
    *,
    scope_ids: Set[str] | Sequence[str] | None = None,
    query: Query | None = None,
    computed: tuple[Sequence[str], Mapping[str, float | None]] | None = None,
) -> dict[str, TieReport | None]:
    """:func:`tie_report` of each of ``measures`` on one query, keyed by the measure's text.

    The same reports, computed once for all measures where they share the work
    (the tie groups, the rule's, best and worst rankings).  ``computed`` is
    ``(ranking, values)``: the measures' values (by text) already computed on
    ``ranking`` with the same qrels, scope and query; when ``ranking`` is the
    rule's top ``k``, the value under the rule of agentmemory's trec_eval
    measures (which read no scope) is taken from there instead of computed
    again (the same function on the same list).

    Raises:
        ParameterError: as :func:`tie_report`.
    """
    chosen = [(m, m.definition) for m in map(_as_measure, measures)]  # each looked up once
    k = check_positive_int("k", k)
    if all(d.tie_aware is None for _, d in chosen):
        return {str(m): None for m, _ in chosen}
    basis = _TieBasis(scores, qrels, k, _scope(scope_ids), query)
    known = computed[1] if computed is not None and list(computed[0]) == basis.rule else {}
    return {str(m): None if d.tie_aware is None else basis.report(m, known, d) for m, d in chosen}


def _built_in(m: Measure, definition: MeasureDef | None = None) -> bool:
    """Whether ``m``'s per-query function is one of agentmemory's own measures (pure functions)."""
    found = m.definition if definition is None else definition
    return getattr(found.function, "__module__", "").startswith("agentmemory.metrics.")


class _TieBasis:
    """What every measure's :func:`tie_report` of one query shares: tie groups, rankings, the cutoff's group."""

    __slots__ = (
        "best",
        "best_is_rule",
        "contexts",
        "depth",
        "groups",
        "inside",
        "qrels",
        "query",
        "rule",
        "scope",
        "size",
        "worst",
        "worst_is_rule",
    )

    def __init__(
        self, scores: Mapping[str, float], qrels: Mapping[str, int], k: int, scope: Set[str] | None, query: Query | None
    ) -> None:
        groups = tie_groups(scores)
        self.groups = groups
        self.qrels = qrels
        self.scope = scope
        self.query = query
        self.depth = min(k, len(scores))  # tie_aware_value's depth for depth=k
        self.rule = [e for g in groups for e in g.entry_ids][:k]
        if not any(len(g.entry_ids) > 1 and any(qrels.get(e, 0) > 0 for e in g.entry_ids) for g in groups):
            # No tie holds an entry graded above 0: sorting any group by grade keeps the rule's order.
            self.best = self.worst = self.rule
        else:
            self.best = _extreme_ranking(groups, qrels, best=True)[:k]
            self.worst = _extreme_ranking(groups, qrels, best=False)[:k]
        # Without relevant entries in a tie group, all three rankings are the same list.
        self.best_is_rule = self.best == self.rule
        self.worst_is_rule = self.worst == self.rule
        size = inside = 0
        for group in groups:
            if group.offset < k <= group.offset + group.size:
                size, inside = group.size, k - group.offset
                break
        self.size = size
        self.inside = inside
        self.contexts: dict[int | None, TieContext] = {}  # one per cutoff: the measures of one cutoff share it

    def _value(self, m: Measure, ranking: list[str]) -> float:
        """``m`` on ``ranking`` (a measure with a tie-aware value has a value on every query it is defined on)."""
        return defined(m._compute(ranking, self.qrels, self.scope, self.query), m)

    def _context(self, cutoff: int | None) -> TieContext:
        """The query's :class:`TieContext` at ``cutoff``, made once for every measure with that cutoff."""
        context = self.contexts.get(cutoff)
        if context is None:
            first = next(iter(self.contexts.values()), None)  # the groups' counts, computed once per query
            if first is None:
                context = TieContext(self.groups, self.qrels, cutoff, self.depth, self.scope, self.query)
            else:
                context = first.at(cutoff)
            self.contexts[cutoff] = context
        return context

    def report(
        self, m: Measure, known: Mapping[str, float | None] | None = None, definition: MeasureDef | None = None
    ) -> TieReport | None:
        """The report on ``m``, whose definition (``definition``, looked up when not given) has a tie-aware
        expectation; ``known``: values on the rule's ranking already computed, see :func:`tie_reports`.
        ``None`` where ``m`` has no value on this query (``stale@k`` on a question that is not a knowledge
        update: no ordering gives it one)."""
        found = m.definition if definition is None else definition
        expectation = found.tie_aware
        assert expectation is not None
        qrels, scope, query = self.qrels, self.scope, self.query
        # Measure.compute less its checks: the rankings hold the keys of one mapping (each id once) and
        # scope is already a set or None.  A built-in measure is a pure function of the ranking, so a
        # ranking equal to the rule's has the rule's value; a registered one is called for each ranking.
        pure = _built_in(m, found)
        text = str(m)
        # A value computed on the same list: only for agentmemory's trec_eval measures, which read neither the
        # scope nor the session mapping (the one computed may have had them, this one has not).
        known_value = known.get(text) if known is not None and pure and found.family == "trec_eval" else None
        if known_value is not None:
            under_rule = known_value
        else:
            if found.undefined_when is not None and m._compute(self.rule, qrels, scope, query) is None:
                return None
            under_rule = self._value(m, self.rule)
        return TieReport(
            value_under_rule=under_rule,
            expected=defined(expectation(self._context(m.rank_cutoff)), m),
            minimum=under_rule if pure and self.worst_is_rule else self._value(m, self.worst),
            maximum=under_rule if pure and self.best_is_rule else self._value(m, self.best),
            straddles_cutoff=self.inside < self.size,
            group_size=self.size,
            group_in_top_k=self.inside,
        )
