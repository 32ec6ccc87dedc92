"""Where a system failed: at *finding* the evidence or at *answering* from it.

For every system of an evaluation that has both a ranking and verdicts (an
imported answer file carrying retrieved memories), each headline question
with judged evidence and a verdict falls in one cell of

=================  =========  =======
evidence in top k  correct    wrong
=================  =========  =======
all                ...        ...
some               ...        ...
none               ...        ...
=================  =========  =======

*evidence in top k* reads the question's relevant entries against the
system's top ``k`` as the evaluation scored them
(:attr:`~agentmemory.evaluation.runner.QueryResult.found`: under provenance
relevance, the evidence its memories were attributed to); *correct* is a
``Judge`` value above 0.5, *wrong* below (a tie between judges, exactly 0.5,
is neither and is counted apart; over several seeds the value is the seeds'
mean, so a question is correct when most seeds' verdicts say so).

From the table:

* ``P(correct | all found)`` and ``P(correct | none found)``;
* of the wrong answers, the share whose evidence was all found (an
  **answering failure**: the reader had what it needed) and the share with
  none found (a **retrieval failure**); the rest found some of it.

Every share carries a 95% Wilson score interval (scipy's
``binomtest(...).proportion_ci(method="wilson")``), per category and over
the headline.  Questions without judged evidence (left out of retrieval
scoring) or without a verdict are counted, not placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentmemory.evaluation.runner import Evaluation, QueryResult, RetrieverResult

__all__ = ["FOUND", "FailureSplit", "Share", "failure_splits", "failure_text"]

FOUND = ("all", "some", "none")
"""The rows of the table: how much of a question's evidence the top k holds."""

JUDGE = "Judge"


@dataclass(frozen=True)
class Share:
    """``count`` of ``total`` with its 95% Wilson interval (``None`` over no question)."""

    count: int
    total: int
    low: float | None
    high: float | None

    @property
    def value(self) -> float | None:
        return self.count / self.total if self.total else None

    def text(self) -> str:
        """``0.62 [0.55, 0.69] (31 of 50)``, or ``- (0 of 0)``."""
        if not self.total:
            return "- (0 of 0)"
        return f"{self.value:.2f} [{self.low:.2f}, {self.high:.2f}] ({self.count:,} of {self.total:,})"


def share(count: int, total: int) -> Share:
    """``count / total`` with its Wilson score interval at 95%."""
    if total == 0:
        return Share(0, 0, None, None)
    from scipy.stats import binomtest  # scipy is imported lazily across the package

    ci = binomtest(count, total).proportion_ci(confidence_level=0.95, method="wilson")
    return Share(count, total, float(ci.low), float(ci.high))


@dataclass(frozen=True)
class SplitTable:
    """One group's cells: ``cells[found][correct]`` counts (``found`` in :data:`FOUND`), and what was left out."""

    cells: dict[str, dict[bool, int]]
    tied: int = 0

    def row(self, found: str) -> tuple[int, int]:
        return self.cells[found][True], self.cells[found][False]

    @property
    def wrong(self) -> int:
        return sum(self.cells[f][False] for f in FOUND)

    def p_correct(self, found: str) -> Share:
        right, wrong = self.row(found)
        return share(right, right + wrong)

    def of_wrong(self, found: str) -> Share:
        return share(self.cells[found][False], self.wrong)


@dataclass(frozen=True)
class FailureSplit:
    """One system's split: over the headline (``overall``) and per query group, at cutoff ``k``."""

    system: str
    k: int
    overall: SplitTable
    groups: dict[str, SplitTable] = field(default_factory=dict)
    no_evidence: int = 0
    no_verdict: int = 0


def _found(q: QueryResult) -> str | None:
    if not q.relevant:
        return None
    got = len(set(q.found) & set(q.relevant))
    return "all" if got == len(q.relevant) else "some" if got else "none"


def _table(rows: Sequence[tuple[str, float]]) -> SplitTable:
    cells = {f: {True: 0, False: 0} for f in FOUND}
    tied = 0
    for found, verdict in rows:
        if verdict == 0.5:
            tied += 1
        else:
            cells[found][verdict > 0.5] += 1
    return SplitTable(cells, tied)


def _split(evaluation: Evaluation, result: RetrieverResult) -> FailureSplit:
    rows: list[tuple[str | None, str, float]] = []
    no_evidence = no_verdict = 0
    for q in result.headline:
        verdict = q.metrics.get(JUDGE)
        if verdict is None:
            no_verdict += 1
            continue
        found = _found(q) if q.query_id in evaluation.collection.qrels else None
        if found is None:
            no_evidence += 1
            continue
        rows.append((q.group, found, verdict))
    groups = sorted({g for g, _, _ in rows if g is not None})
    return FailureSplit(
        result.label,
        evaluation.k,
        _table([(f, v) for _, f, v in rows]),
        {g: _table([(f, v) for gg, f, v in rows if gg == g]) for g in groups},
        no_evidence,
        no_verdict,
    )


def failure_splits(evaluation: Evaluation) -> list[FailureSplit]:
    """The split of every system that has a ranking and verdicts (an answer file with retrieval, live answers), in
    table order."""
    with_retrieval = {a.name for a in evaluation.answers if a.ranked}
    return [
        _split(evaluation, r)
        for r in evaluation.results
        if r.name in with_retrieval and JUDGE in r.means and r.means[JUDGE] is not None
    ]


def failure_text(splits: Sequence[FailureSplit]) -> str:
    """The splits as Markdown: one table per system (rows all/some/none, correct and wrong counts), then the
    shares with their intervals over the headline and per group."""
    if not splits:
        return ""
    out: list[str] = []
    for s in splits:
        t = s.overall
        out.append(f"Where {s.system} failed (evidence in its top {s.k} against the judge's verdict):")
        out.append("")
        out.append("| evidence in top k | correct | wrong |")
        out.append("|---|---|---|")
        out += [f"| {f} | {t.row(f)[0]:,} | {t.row(f)[1]:,} |" for f in FOUND]
        out.append("")
        out.append(
            "| group | P(correct given all found) | P(correct given none found) | wrong: answering failures "
            "(all found) | wrong: retrieval failures (none found) |"
        )
        out.append("|---|---|---|---|---|")
        for name, table in (("headline", t), *s.groups.items()):
            out.append(
                f"| {name} | {table.p_correct('all').text()} | {table.p_correct('none').text()} | "
                f"{table.of_wrong('all').text()} | {table.of_wrong('none').text()} |"
            )
        left = []
        if t.tied:
            left.append(f"{t.tied:,} with tied judges")
        if s.no_evidence:
            left.append(f"{s.no_evidence:,} without judged evidence")
        if s.no_verdict:
            left.append(f"{s.no_verdict:,} without a verdict")
        if left:
            out.append("")
            out.append("Not placed: " + "; ".join(left) + " (headline questions).")
        out.append("")
    return "\n".join(out).rstrip()
