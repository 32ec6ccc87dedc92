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
``H(c) = sum_g r_g * m_g(c) / t_g``.  Then, exactly as computed:

* ``P@k = H(c) / k`` and ``R@k = H(c) / R`` (0 when ``R = 0``), ``c = min(k, D)``;
  ``Rprec = H(min(R, D)) / R``.
* ``Success@k = 1`` if a group wholly inside the top ``c`` holds a relevant
  entry; otherwise, for the group cut by ``c`` (taking ``m = c - s_g`` of its
  ``t`` ranks, ``r`` of its entries relevant),
  ``1 - prod_{i=0}^{m-1} (t - r - i) / (t - i)`` (one minus the chance that
  all ``m`` ranks inside hold non-relevant entries); 0 if no relevant entry
  is within reach.
* ``RR`` (``c = D``) and ``RR@k`` (``c = min(k, D)``): only the first group
  with a relevant entry matters (offset ``s``, size ``t``, ``r`` relevant).
  The first relevant entry is at its ``j``-th rank with probability
  ``p_j = C(t - j, r - 1) / C(t, r)`` (computed as ``p_1 = r / t``,
  ``p_{j+1} = p_j * (t - j - r + 1) / (t - j)``), so
  ``E[RR] = sum_{j=1}^{min(t - r + 1, c - s)} p_j / (s + j)``.
* ``nDCG@k``: each rank ``i`` of group ``g`` has expected gain ``G_g / t_g``, so
  ``E[DCG@k] = sum_g (G_g / t_g) * sum_{i = s_g + 1}^{min(s_g + t_g, c)} 1 / log2(i + 1)``
  and ``E[nDCG@k] = E[DCG@k] / IDCG@k`` (``IDCG@k`` does not depend on the
  order; 0 when it is 0).
* ``AP@k = (1 / R) * sum_{i <= c} rel_i * (1 / i) * sum_{j <= i} rel_j``.
  For rank ``i`` the ``u``-th rank of group ``g`` (``i = s_g + u``),
  ``E[rel_i] = r_g / t_g``; for ``j`` in an earlier group,
  ``E[rel_i rel_j] = (r_g / t_g) * E[rel_j]``, and these sum to
  ``(r_g / t_g) * B_g`` with ``B_g = sum_{h < g} r_h``; for ``j < i`` in the same group,
  ``E[rel_i rel_j] = r_g (r_g - 1) / (t_g (t_g - 1))``.  Hence
  ``E[AP@k] = (1 / R) * sum_g sum_{u=1}^{m_g(c)} [ (r_g / t_g) (1 + B_g) + (u - 1) r_g (r_g - 1) / (t_g (t_g - 1)) ] / (s_g + u)``.

All measures follow :mod:`agentmemory.metrics` (trec_eval semantics): the
ranking is the scored entries only (an entry missing from ``scores`` is not
retrieved), ``P@k`` divides by ``k`` even when fewer entries are scored, and
``R`` and ``IDCG`` count every judged entry.  Every function here is pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .errors import ParameterError, check_positive_int
from .metrics import Measure, parse_measure
from .trec import trec_order

__all__ = [
    "TieGroup",
    "TieReport",
    "tie_aware_value",
    "tie_groups",
    "tie_report",
]


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


@dataclass(frozen=True, slots=True)
class TieReport:
    """How much the tie rule decided one query's value of one measure (see :func:`tie_report`).

    Attributes:
        value_under_rule: the measure on the tie rule's top ``k`` (what
            :func:`agentmemory.evaluate.evaluate` reports).
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


def _check_depth(depth: int | None) -> int | None:
    return None if depth is None else check_positive_int("depth", depth)


def _expected_hits(groups: Sequence[TieGroup], relevant: Sequence[int], c: int) -> float:
    """``H(c) = sum_g r_g * m_g(c) / t_g``."""
    total = 0.0
    for group, r in zip(groups, relevant):
        inside = min(max(c - group.offset, 0), group.size)
        if inside and r:
            total += r * inside / group.size
    return total


def _expected_success(groups: Sequence[TieGroup], relevant: Sequence[int], c: int) -> float:
    for group, r in zip(groups, relevant):
        inside = min(max(c - group.offset, 0), group.size)
        if inside == 0:
            break
        if r == 0:
            continue
        if inside == group.size:
            return 1.0
        t = group.size
        none_inside = 1.0
        for i in range(inside):
            none_inside *= (t - r - i) / (t - i)
            if none_inside == 0.0:
                break
        return 1.0 - none_inside
    return 0.0


def _expected_rr(groups: Sequence[TieGroup], relevant: Sequence[int], c: int) -> float:
    for group, r in zip(groups, relevant):
        if group.offset >= c:
            return 0.0
        if r == 0:
            continue
        s, t = group.offset, group.size
        p = r / t
        total = 0.0
        for j in range(1, min(t - r + 1, c - s) + 1):
            total += p / (s + j)
            p *= (t - j - r + 1) / (t - j) if t > j else 0.0
        return total
    return 0.0


def _expected_dcg(groups: Sequence[TieGroup], gains: Sequence[float], c: int) -> float:
    total = 0.0
    for group, gain in zip(groups, gains):
        last = min(group.offset + group.size, c)
        if gain <= 0 or last <= group.offset:
            continue
        discount = math.fsum(1.0 / math.log2(i + 1) for i in range(group.offset + 1, last + 1))
        total += gain / group.size * discount
    return total


def _expected_ap_sum(groups: Sequence[TieGroup], relevant: Sequence[int], c: int) -> float:
    """``sum_{i <= c} E[rel_i * (relevant in top i)] / i`` (AP times ``R``)."""
    total = 0.0
    before = 0  # B_g: relevant entries in the groups above
    for group, r in zip(groups, relevant):
        s, t = group.offset, group.size
        inside = min(max(c - s, 0), t)
        if inside == 0:
            break
        if r:
            p = r / t
            pair = r * (r - 1) / (t * (t - 1)) if t > 1 else 0.0
            for u in range(1, inside + 1):
                total += (p * (1 + before) + (u - 1) * pair) / (s + u)
        before += r
    return total


def tie_aware_value(
    measure: Measure | str,
    scores: Mapping[str, float],
    qrels: Mapping[str, int],
    *,
    depth: int | None = None,
) -> float:
    """The expected value of ``measure`` over all orderings of tied scores (formulas: module docstring).

    Args:
        measure: a :class:`~agentmemory.metrics.Measure` or its text (``"nDCG@5"``);
            any measure of :data:`agentmemory.metrics.REGISTRY`.
        scores: entry id -> score for every entry the retriever scores (for
            BM25 and the tag scorer, :meth:`score_all`: every entry with a
            positive score).  Tie groups must be complete: an entry missing
            here is treated as not retrieved.
        qrels: judged grade per entry id for this query (>= 1 is relevant).
        depth: keep only the top ``depth`` ranks, as a run of depth ``depth``
            does (``evaluate(k=...)`` keeps ``k``); ``None`` keeps every scored
            entry.  ``RR`` (no cutoff) then looks at the top ``depth`` only.

    When no two scores are equal this is the measure's ordinary value.

    Raises:
        ParameterError: a score is NaN, ``depth`` is not an integer >= 1, or
            ``measure`` is unknown.
    """
    m = _as_measure(measure)
    depth = _check_depth(depth)
    groups = tie_groups(scores)
    n_scored = len(scores)
    d = n_scored if depth is None else min(depth, n_scored)
    relevant = [sum(1 for e in g.entry_ids if qrels.get(e, 0) >= 1) for g in groups]
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    k = m.cutoff
    c = d if k is None else min(k, d)
    if m.name == "P":
        return _expected_hits(groups, relevant, c) / k
    if m.name == "R":
        return _expected_hits(groups, relevant, c) / num_rel if num_rel else 0.0
    if m.name == "Rprec":
        return _expected_hits(groups, relevant, min(num_rel, d)) / num_rel if num_rel else 0.0
    if m.name == "Success":
        return _expected_success(groups, relevant, c)
    if m.name == "RR":
        return _expected_rr(groups, relevant, c)
    if m.name == "AP":
        return _expected_ap_sum(groups, relevant, c) / num_rel if num_rel else 0.0
    if m.name == "nDCG":
        ideal = sorted((grade for grade in qrels.values() if grade > 0), reverse=True)[:k]
        idcg = math.fsum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
        if idcg <= 0.0:
            return 0.0
        gains = [float(sum(max(qrels.get(e, 0), 0) for e in g.entry_ids)) for g in groups]
        return _expected_dcg(groups, gains, c) / idcg
    raise ParameterError(  # pragma: no cover - every registered measure is handled above
        "measure", str(m), "has no tie-aware formula", "use one of P, R, Rprec, Success, RR, AP, nDCG"
    )


def _extreme_ranking(groups: Sequence[TieGroup], qrels: Mapping[str, int], best: bool) -> list[str]:
    """Every group ordered by grade (positive part), best first or worst first; ties keep the rule's order."""
    out: list[str] = []
    for group in groups:
        key = [max(qrels.get(e, 0), 0) for e in group.entry_ids]
        order = sorted(range(group.size), key=lambda i: -key[i] if best else key[i])
        out.extend(group.entry_ids[i] for i in order)
    return out


def tie_report(
    measure: Measure | str,
    scores: Mapping[str, float],
    qrels: Mapping[str, int],
    k: int,
) -> TieReport:
    """The value of ``measure`` on a depth-``k`` run under the tie rule, and how far ties could move it.

    ``k`` is the retrieval depth (``evaluate(k=...)``): the run holds the top
    ``k`` of ``scores`` in trec_eval's order, and every value is computed on
    such a run, so ``value_under_rule`` equals what
    :func:`agentmemory.evaluate.evaluate` reports for the query.

    * ``expected`` is :func:`tie_aware_value` with ``depth=k``.
    * ``minimum`` / ``maximum`` are the measure on the worst / best ordering
      of tied entries: inside every tie group, entries sorted by grade
      ascending / descending (grades below 0 count as 0).  That ordering is
      optimal for every measure here at once (by the rearrangement inequality
      for nDCG; moving a relevant entry up never lowers P, R, Success, RR or AP).
      The range covers *every* tie group in the top ``k``, not only the
      one at the cutoff: for set measures (P, R, Success, Rprec cut at
      ``k``) only the group at the cutoff can matter, but RR, AP and nDCG
      also move when tied entries swap inside the top ``k``.
    * ``straddles_cutoff``, ``group_size``, ``group_in_top_k`` describe the
      tie group holding rank ``k`` (see :class:`TieReport`); ``straddles_cutoff``
      is the same test as :attr:`agentmemory.evaluate.QueryResult.tie_at_cutoff`.

    Raises:
        ParameterError: as :func:`tie_aware_value`; ``k`` not an integer >= 1.
    """
    m = _as_measure(measure)
    k = check_positive_int("k", k)
    groups = tie_groups(scores)
    rule = [e for g in groups for e in g.entry_ids][:k]
    best = _extreme_ranking(groups, qrels, best=True)[:k]
    worst = _extreme_ranking(groups, qrels, best=False)[:k]
    size = inside = 0
    for group in groups:
        if group.offset < k <= group.offset + group.size:
            size, inside = group.size, k - group.offset
            break
    return TieReport(
        value_under_rule=m.compute(rule, qrels),
        expected=tie_aware_value(m, scores, qrels, depth=k),
        minimum=m.compute(worst, qrels),
        maximum=m.compute(best, qrels),
        straddles_cutoff=inside < size,
        group_size=size,
        group_in_top_k=inside,
    )
