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
* :mod:`agentmemory.analysis.agreement`: every pair of judges per category,
  percent agreement and Cohen's kappa (:func:`agreement_text`);
* :func:`live_text`: per live answer system (:mod:`agentmemory.live`), the
  questions answered, judged and failed, the tokens and the cost, the
  latency of the reader's and the judges' calls (p50 and p95, as measured
  when each call was made: stored in the cache, the same on every re-run),
  and this run's calls (sent, read from the cache, retried; the latency of
  this run's sent attempts with ``timings``: wall clock, never in an
  artifact).

:func:`answers_text` puts the judges, the agreement, the seeds and the failure split together as the command line
prints them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentmemory.analysis.agreement import ALL, AgreementRow, judge_agreement
from agentmemory.analysis.failures import failure_splits, failure_text
from agentmemory.analysis.summaries import Statistics
from agentmemory.analysis.text_tables import interval_cell, markdown_table
from agentmemory.evaluation.answer_runs import AnswerSystem, rejudged, seed_spread
from agentmemory.evaluation.runner import Evaluation
from agentmemory.live.answering import LiveAnswers
from agentmemory.metrics import Measure
from agentmemory.metrics.definition import AnswerInput

__all__ = [
    "JudgeRow",
    "SeedRow",
    "agreement_rows",
    "agreement_text",
    "answers_text",
    "judge_rows",
    "live_rows",
    "live_text",
    "seed_rows",
]

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
        live = system.live_judges  # re-judged imported answers: the live judges' verdicts are never voided
        per_judge: dict[str, list[float]] = {}
        agree = several = ties = 0
        for qid in (q for q in headline if q in system.records):
            verdicts = [v for v in system.records[qid][0].verdicts if qid not in voided or v.judge in live]
            if not verdicts:
                continue
            values = [v.value for v in verdicts]
            for v in verdicts:
                per_judge.setdefault(v.judge, []).append(v.value)
            if len(values) >= 2:
                several += 1
                agree += len(set(values)) == 1
            ties += math.fsum(values) / len(values) == 0.5
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
    for i, matched in enumerate(system.matched):
        column: list[float | None] = []
        for qid in headline:
            record = matched.by_query.get(qid)
            if record is None:
                column.append(None)
                continue
            texts = None if record.memories is None else tuple(m.text for m in record.memories)
            if system.file_verdicts:  # re-judged live: each file's Judge as its inputs hold it
                verdict = system.file_verdicts[i].get(qid)
            else:
                verdict = None if qid in stale else record.verdict
            answer = AnswerInput(record.answer, verdict, texts)
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
    if any(a.rejudged for a in evaluation.answers):
        lines[0] = lines[0][:-2] + "; the --judge verdicts on the files' answers are more judges beside theirs):"
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
    agreement = agreement_text(evaluation)
    if agreement:
        lines += ["", agreement]
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


AGREEMENT_HEADER = ("system", "judges", "category", "questions both judged", "agree", "Cohen's kappa")
"""The columns of :func:`agreement_rows`."""


def agreement_rows(evaluation: Evaluation) -> list[list[str]]:
    """:func:`~agentmemory.analysis.agreement.judge_agreement` as table rows (:data:`AGREEMENT_HEADER`): the
    pair ``a vs b``, the category (``(not in the headline)`` when so), the questions, the share agreeing with its
    count, kappa (``-`` when undefined)."""
    return [_agreement_row(row) for row in judge_agreement(evaluation)]


def _agreement_row(row: AgreementRow) -> list[str]:
    category = row.category if row.headline else f"{row.category} (not in the headline)"
    share = "-" if row.share is None else f"{row.share:.3f} ({row.agree:,} of {row.questions:,})"
    return [
        row.system,
        f"{row.first} vs {row.second}",
        category,
        f"{row.questions:,}",
        share,
        "-" if row.kappa is None else f"{row.kappa:.3f}",
    ]


def agreement_text(evaluation: Evaluation) -> str:
    """Every pair of judges per category as the command line prints it; ``""`` when no system has two judges."""
    rows = agreement_rows(evaluation)
    if not rows:
        return ""
    return "\n".join(
        [
            f"Judge agreement per category (each pair of judges over the questions both judged, {ALL} first; "
            "Cohen's kappa = (p_o - p_e) / (1 - p_e), '-' when both judges gave one and the same verdict "
            "throughout):",
            "",
            markdown_table(list(AGREEMENT_HEADER), rows),
        ]
    )


LIVE_HEADER = (
    "system",
    "answered",
    "judged",
    "failed (left out)",
    "reader tokens in / out",
    "judge tokens in / out",
    "reader latency p50 / p95 (s)",
    "judge latency p50 / p95 (s)",
)
"""The columns of :func:`live_rows` (then ``cost`` when a price table was given)."""


def _latency_cell(summary: dict[str, Any]) -> str:
    if summary["p50"] is None:
        return "-"
    missing = f" ({summary['without_latency']:,} unrecorded)" if summary["without_latency"] else ""
    return f"{summary['p50']:.3f} / {summary['p95']:.3f}{missing}"


def _live_runs(evaluation: Evaluation) -> list[tuple[str, LiveAnswers]]:
    """``(label, run)`` of every live run: each live answer system's, and each re-judged file's."""
    runs: list[tuple[str, LiveAnswers]] = []
    for system in evaluation.answers:
        if system.live is not None:
            runs.append((system.label, system.live))
        runs += [(f"{run.name} (re-judged)", run) for run in system.rejudged]
    return runs


def live_rows(evaluation: Evaluation) -> tuple[list[str], list[list[str]]]:
    """The header and one row per live run (:func:`_live_runs`): questions answered, judged and failed, the
    tokens, the reader's and the judges' latency per call (p50 / p95 of the values stored in the cache), and the
    cost when priced."""
    runs = _live_runs(evaluation)
    header = list(LIVE_HEADER)
    costed = any(run.options.prices is not None for _, run in runs)
    if costed:
        header.append("cost")
    body = []
    for label, run in runs:
        about = run.describe()
        tokens, latency = about["tokens"], about["latency"]
        judged = tokens["judges"].values()
        reader = run.reader is not None
        row = [
            label,
            f"{about['answered']:,} of {about['questions']:,}",
            f"{about['judged']:,}",
            f"{about['failed']['questions']:,}",
            f"{tokens['reader']['input']:,} / {tokens['reader']['output']:,}" if reader else "-",
            f"{sum(t['input'] for t in judged):,} / {sum(t['output'] for t in judged):,}",
            _latency_cell(latency["reader"]),
            _latency_cell(latency["judge"]),
        ]
        if costed:
            cost = about.get("cost")
            row.append("-" if cost is None else f"{cost['total']:.4f} {cost['currency']}")
        body.append(row)
    return header, body


def live_text(evaluation: Evaluation, *, timings: bool = False) -> str:
    """The live answer systems as the command line prints them (see the module docstring); ``""`` without any."""
    runs = _live_runs(evaluation)
    if not runs:
        return ""
    header, body = live_rows(evaluation)
    sent = sum(run.stats.sent for _, run in runs)
    cached = sum(run.stats.cached for _, run in runs)
    retried = sum(run.stats.retried for _, run in runs)
    seconds = [s for _, run in runs for s in run.stats.seconds]
    lines = [
        "Live answers (tokens from the endpoints' usage, latency per call as measured when it was made and stored in "
        "the cache: the same on every run):",
        "",
        markdown_table(header, body),
        "",
        f"Calls this run: {sent:,} sent ({retried:,} of them retries), {cached:,} read from the cache.",
    ]
    if timings and seconds:
        lines.append(
            f"Call latency (wall clock, never in the artifact): p50 {_percentile(seconds, 50):.3f} s, "
            f"p95 {_percentile(seconds, 95):.3f} s over {len(seconds):,} sent calls."
        )
    return "\n".join(lines)
