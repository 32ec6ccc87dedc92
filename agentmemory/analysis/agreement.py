"""How far two judges agree, per category: percent agreement and Cohen's kappa for every pair of judges.

A result that moves with the judge is only as solid as the judges'
agreement, and judges disagree more on some kinds of question (LoCoMo's
temporal and multi-hop categories, LongMemEval's preference questions) than
on others.  :func:`judge_agreement` gives, for every answer system whose
questions carry the verdicts of two judges or more (an imported file's own
judges, live ``--judge`` verdicts, or both when ``--judge`` re-grades a
file), every pair of judges on the headline questions and in each category
(the questions' group: LoCoMo's categories, LongMemEval's question types):
the questions both judged, on how many they gave the same verdict, and
Cohen's kappa (:func:`cohen_kappa`).

A verdict an imported judge made against a gold answer the judgment patch
replaced is no verdict here, as in the headline; a live judge's verdict was
made against the corrected answer and counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from agentmemory.answers.records import Verdict
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import AnswerSystem, rejudged
from agentmemory.evaluation.runner import Evaluation

__all__ = ["ALL", "AgreementRow", "cohen_kappa", "judge_agreement"]

ALL = "all headline questions"
"""The category of the rows over every headline question."""


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (``first[i]`` and ``second[i]`` rate item ``i``).

    ``kappa = (p_o - p_e) / (1 - p_e)``, where ``p_o`` is the share of items
    both label alike and ``p_e = sum over labels c of (n_1(c) / n) * (n_2(c) / n)``
    the share they would label alike by chance, each rater keeping their own
    label frequencies (``n_r(c)``: the items rater ``r`` labels ``c``; ``n``
    the items).  1 is complete agreement, 0 what chance gives, below 0 less.

    Returns ``None`` (undefined) without items, or when ``p_e`` is 1: both
    raters gave every item one and the same label, so agreement is complete
    and chance explains all of it.

    Raises:
        ParameterError: the two sequences differ in length.
    """
    n = len(first)
    if len(second) != n:
        raise ParameterError("second", len(second), f"is not as long as first ({n})", "rate the same items")
    if not n:
        return None
    observed = sum(a == b for a, b in zip(first, second)) / n
    one, two = Counter(first), Counter(second)
    chance = sum(one[label] * two[label] for label in one) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


@dataclass(frozen=True)
class AgreementRow:
    """One pair of judges of one answer system over one category's questions (or :data:`ALL`).

    ``questions`` are those both judges judged, ``agree`` those on which their
    verdicts are equal, ``kappa`` Cohen's kappa of their verdicts there
    (``None`` when undefined: :func:`cohen_kappa`); ``headline`` whether the
    category counts in the headline means.
    """

    system: str
    first: str
    second: str
    category: str
    questions: int
    agree: int
    kappa: float | None
    headline: bool = True

    @property
    def share(self) -> float | None:
        """Percent agreement as a share: ``agree / questions`` (``None`` without questions)."""
        return self.agree / self.questions if self.questions else None


def _verdicts(system: AnswerSystem, query_id: str, stale: frozenset[str]) -> dict[str, float]:
    """Each judge's verdict on the system's (first file's) answer to ``query_id``, an imported judge's dropped
    where the judgment patch replaced the gold answer."""
    records = system.records.get(query_id)
    if not records:
        return {}
    live = system.live_judges
    voided = system.live is None and query_id in stale
    found: dict[str, float] = {}
    for verdict in records[0].verdicts:
        if voided and verdict.judge not in live:
            continue
        found.setdefault(verdict.judge, verdict.value)
    return found


def _judges(system: AnswerSystem) -> list[str]:
    """The system's judges in the order they first give a verdict (the file's, then live ones)."""
    order: dict[str, None] = {}
    for records in system.records.values():
        verdicts: Sequence[Verdict] = records[0].verdicts
        for verdict in verdicts:
            order.setdefault(verdict.judge, None)
    return list(order)


def _pair_row(
    system: str, pair: tuple[str, str], category: str, judged: Sequence[dict[str, float]], headline: bool
) -> AgreementRow | None:
    a, b = pair
    both = [(v[a], v[b]) for v in judged if a in v and b in v]
    if not both:
        return None
    first, second = [x for x, _ in both], [y for _, y in both]
    agree = sum(x == y for x, y in both)
    return AgreementRow(system, a, b, category, len(both), agree, cohen_kappa(first, second), headline)


def judge_agreement(evaluation: Evaluation) -> list[AgreementRow]:
    """Every pair of judges of every answer system with two judges or more (see the module docstring): first
    over the headline questions (:data:`ALL`), then per category in sorted order, a category left out of the
    headline marked so; a pair without a question both judged in a category has no row there."""
    stale = rejudged(evaluation.collection)
    headline = {q.query_id for q in evaluation.results[0].headline} if evaluation.results else set()
    excluded = set(evaluation.collection.headline_excludes)
    groups = {q.id: q.group for q in (*evaluation.collection.queries, *evaluation.collection.left_out_queries)}
    rows: list[AgreementRow] = []
    for system in evaluation.answers:
        judges = _judges(system)
        if len(judges) < 2:
            continue
        pairs = [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
        by_category: dict[str, list[dict[str, float]]] = {}
        over_headline = []
        for qid in system.records:
            found = _verdicts(system, qid, stale)
            if len(found) < 2:
                continue
            if qid in headline:
                over_headline.append(found)
            group = groups.get(qid)
            if group is not None:
                by_category.setdefault(group, []).append(found)
        for pair in pairs:
            made = [_pair_row(system.name, pair, ALL, over_headline, True)]
            made += [
                _pair_row(system.name, pair, group, by_category[group], group not in excluded)
                for group in sorted(by_category)
            ]
            rows += [row for row in made if row is not None]
    return rows
