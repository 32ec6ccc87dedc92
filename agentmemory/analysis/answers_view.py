"""What an evaluation with imported answer files shows of them: judges, seeds, and where each system failed.

* :func:`judge_rows`: per answer system, its questions matched, the
  headline accuracy (``Judge``) with its interval, each judge's own accuracy
  and the share of questions on which every judge agrees (files with several
  judgments per question);
* :func:`seed_rows`: per system with several answer files (seeds), each
  seed's mean, the seeds' standard deviation beside the bootstrap interval,
  and whether the gap to the baseline exceeds both (the paired interval of
  the difference excludes 0 *and* the gap is larger than the seed spread of
  either system);
* :mod:`agentmemory.analysis.failures`: the split of wrong answers into
  retrieval and answering failures;
* :func:`live_text`: per live answer system (:mod:`agentmemory.live`), the
  questions answered, judged and failed, the tokens and the cost, and this
  run's calls (sent, read from the cache, retried; their latency with
  ``timings``: wall clock, never in an artifact).

:func:`answers_text` puts the first three together as the command line prints them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.analysis.failures import failure_splits, failure_text
from agentmemory.analysis.summaries import Statistics
from agentmemory.analysis.text_tables import interval_cell, markdown_table
from agentmemory.evaluation.answer_runs import AnswerSystem, rejudged, seed_spread
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import Measure
from agentmemory.metrics.definition import AnswerInput

__all__ = ["JudgeRow", "SeedRow", "answers_text", "judge_rows", "live_text", "seed_rows"]

JUDGE = "Judge"


@dataclass(frozen=True)
class JudgeRow:
    """One answer system's judges over the headline questions it answers."""

    system: str
    matched: int
    questions: int
    judges: tuple[tuple[str, float, int], ...]  # (judge, accuracy, questions judged)
    agreement: float | None  # share of questions with >= 2 verdicts on which all agree
    agreement_n: int
    ties: int  # questions whose judges split evenly (Judge 0.5)


def _headline(evaluation: Evaluation) -> list[str]:
    first = evaluation.results[0]
    return [q.query_id for q in first.headline]


def judge_rows(evaluation: Evaluation) -> list[JudgeRow]:
    """A :class:`JudgeRow` per answer system (see the module docstring); the first file of a seeded system."""
    headline = _headline(evaluation)
    stale = rejudged(evaluation.collection)  # judged against a gold answer the patch replaced: no verdict now
    rows = []
    for system in evaluation.answers:
        matched = sum(1 for q in headline if q in system.records)
        voided = stale if system.live is None else frozenset()  # live verdicts were judged against this key
        records = [system.records[q][0] for q in headline if q in system.records and q not in voided]
        per_judge: dict[str, list[float]] = {}
        agree = several = ties = 0
        for record in records:
            values = [v.value for v in record.verdicts]
            for v in record.verdicts:
                per_judge.setdefault(v.judge, []).append(v.value)
            if len(values) >= 2:
                several += 1
                agree += len(set(values)) == 1
            ties += record.verdict == 0.5
        judges = tuple((j, math.fsum(v) / len(v), len(v)) for j, v in per_judge.items())
        rows.append(
            JudgeRow(
                system.name,
                matched,
                len(headline),
                judges,
                agree / several if several else None,
                several,
                ties,
            )
        )
    return rows


@dataclass(frozen=True)
class SeedRow:
    """One seeded system on one measure: each seed's mean, their standard deviation, and the gap to the baseline."""

    system: str
    measure: str
    seeds: tuple[float | None, ...]
    sd: float | None
    gap: float | None
    gap_low: float | None
    gap_high: float | None
    baseline_sd: float | None

    @property
    def verdict(self) -> str:
        """Whether the gap to the baseline exceeds both its interval and the seed spread, in words."""
        if self.gap is None or self.gap_low is None or self.gap_high is None:
            return "no paired comparison"
        spread = max(s for s in (self.sd, self.baseline_sd, 0.0) if s is not None)
        significant = self.gap_low > 0 or self.gap_high < 0
        beyond = abs(self.gap) > spread
        if significant and beyond:
            return "exceeds both the interval and the seed spread"
        if significant:
            return "exceeds the interval, not the seed spread"
        if beyond:
            return "exceeds the seed spread, not the interval"
        return "exceeds neither"


def _seed_values(
    system: AnswerSystem, measure: Measure, evaluation: Evaluation, headline: Sequence[str]
) -> list[list[float | None]]:
    """Per seed file, the measure's value on each headline question (``None`` where it has none)."""
    queries = {q.id: q for q in (*evaluation.collection.queries, *evaluation.collection.left_out_queries)}
    stale = rejudged(evaluation.collection) if system.live is None else frozenset()
    out = []
    for matched in system.matched:
        column: list[float | None] = []
        for qid in headline:
            record = matched.by_query.get(qid)
            if record is None:
                column.append(None)
                continue
            texts = None if record.memories is None else tuple(m.text for m in record.memories)
            answer = AnswerInput(record.answer, None if qid in stale else record.verdict, texts)
            column.append(measure._compute((), {}, None, queries.get(qid), None, None, answer))
        out.append(column)
    return out


def seed_rows(evaluation: Evaluation, statistics: Statistics) -> list[SeedRow]:
    """A :class:`SeedRow` per seeded answer system and answer measure that reads the answer alone."""
    headline = _headline(evaluation)
    rows = []
    measures = [m for m in evaluation.measures if m.definition.reads_answer and m.rank_cutoff is None]
    base = statistics.baseline
    spreads = {}
    for system in evaluation.answers:
        for m in measures:
            spreads[(system.name, str(m))] = seed_spread(_seed_values(system, m, evaluation, headline))
    comparisons = {(c.system, c.measure): c for c in statistics.versus_baseline}
    for system in evaluation.answers:
        if len(system.files) < 2:
            continue
        for m in measures:
            seeds, sd = spreads[(system.name, str(m))]
            if all(s is None for s in seeds):
                continue
            found = comparisons.get((system.name, str(m)))
            ci = found.test.effect_ci if found is not None else None
            rows.append(
                SeedRow(
                    system.name,
                    str(m),
                    seeds,
                    sd,
                    None if found is None else found.test.mean_difference,
                    None if ci is None else ci.low,
                    None if ci is None else ci.high,
                    spreads.get((base, str(m)), ((), None))[1],
                )
            )
    return rows


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def answers_text(evaluation: Evaluation, statistics: Statistics) -> str:
    """The answer systems as the command line prints them: judges, seeds, the failure split."""
    stale = rejudged(evaluation.collection)
    without = (
        f"; without the {len(stale):,} questions whose gold answer the patch replaced, judged against the replaced "
        "answer"
        if stale
        else ""
    )
    lines = [
        f"Imported answers (Judge = the file's own judges' verdicts, their accuracy as the harness computed it"
        f"{without}):"
        if all(a.live is None for a in evaluation.answers)
        else f"Answers (Judge = an imported file's own judges' verdicts, or the --judge verdicts of live answers"
        f"{without}):",
        "",
    ]
    header = ["system", "questions matched", "Judge (accuracy)", "each judge", "judges agree", "judges split evenly"]
    body = []
    for row in judge_rows(evaluation):
        interval = statistics.intervals.get(row.system, {}).get(JUDGE)
        judges = "; ".join(f"{j} {acc:.3f} ({n:,})" for j, acc, n in row.judges) or "none"
        agree = "-" if row.agreement is None else f"{row.agreement:.3f} of {row.agreement_n:,}"
        body.append(
            [
                row.system,
                f"{row.matched:,} of {row.questions:,}",
                interval_cell(interval, 3) if interval is not None else "-",
                judges,
                agree,
                f"{row.ties:,}",
            ]
        )
    lines.append(markdown_table(header, body))
    seeds = seed_rows(evaluation, statistics)
    if seeds:
        lines += [
            "",
            f"Seeds (each answer file of a system is one seed; gap and interval against {statistics.baseline}):",
            "",
        ]
        lines.append(
            markdown_table(
                ["system", "measure", "each seed's mean", "seed SD", "gap [95% interval]", "the gap"],
                [
                    [
                        r.system,
                        r.measure,
                        ", ".join(_num(s) for s in r.seeds),
                        _num(r.sd),
                        "-" if r.gap is None else f"{r.gap:+.3f} [{_num(r.gap_low)}, {_num(r.gap_high)}]",
                        r.verdict,
                    ]
                    for r in seeds
                ],
            )
        )
    split = failure_text(failure_splits(evaluation))
    if split:
        lines += ["", split]
    return "\n".join(lines)


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def live_text(evaluation: Evaluation, *, timings: bool = False) -> str:
    """The live answer systems as the command line prints them (see the module docstring); ``""`` without any."""
    systems = [a for a in evaluation.answers if a.live is not None]
    if not systems:
        return ""
    header = ["system", "answered", "judged", "failed (left out)", "reader tokens in / out", "judge tokens in / out"]
    costed = any(a.live is not None and a.live.options.prices is not None for a in systems)
    if costed:
        header.append("cost")
    body = []
    sent = cached = retried = 0
    seconds: list[float] = []
    for system in systems:
        live = system.live
        assert live is not None
        about = live.describe()
        tokens = about["tokens"]
        judged = tokens["judges"].values()
        row = [
            system.label,
            f"{about['answered']:,} of {about['questions']:,}",
            f"{about['judged']:,}",
            f"{about['failed']['questions']:,}",
            f"{tokens['reader']['input']:,} / {tokens['reader']['output']:,}",
            f"{sum(t['input'] for t in judged):,} / {sum(t['output'] for t in judged):,}",
        ]
        if costed:
            cost = about.get("cost")
            row.append("-" if cost is None else f"{cost['total']:.4f} {cost['currency']}")
        body.append(row)
        sent, cached, retried = sent + live.stats.sent, cached + live.stats.cached, retried + live.stats.retried
        seconds += live.stats.seconds
    lines = [
        "Live answers (tokens from the endpoints' usage, the same on every run):",
        "",
        markdown_table(header, body),
    ]
    lines.append("")
    lines.append(f"Calls this run: {sent:,} sent ({retried:,} of them retries), {cached:,} read from the cache.")
    if timings and seconds:
        lines.append(
            f"Call latency (wall clock, never in the artifact): p50 {_percentile(seconds, 50):.3f} s, "
            f"p95 {_percentile(seconds, 95):.3f} s over {len(seconds):,} sent calls."
        )
    return "\n".join(lines)
