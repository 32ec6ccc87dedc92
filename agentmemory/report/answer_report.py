"""The answers report (``notebooks/answers.ipynb``): imported answer files side by side, as systems.

Every cell of the notebook calls one function here, on the evaluation its
parameters describe (:func:`agentmemory.report.params.answers_setup`) and the
statistics of the run (:meth:`AnswersSetup.statistics
<agentmemory.report.params.AnswersSetup.statistics>`: the artifact's, seeded
by the run's seed, Holm's correction over the comparison table).  The first
screen: :func:`verdict` (who is most accurate, each system against the
baseline with its interval and significance, on how many questions, in plain
words) and :func:`headline` (the means with intervals as Figure 1, then the
comparison table, which holds the figure's numbers).  Then
:func:`by_category`, :func:`paired` (the matrix of every pair),
:func:`failures` (where wrong answers came from: retrieval or answering),
:func:`answer_key` (a judgment patch's effect and the answer key's ceiling per
category), :func:`judges` (agreement between judges), :func:`agreement` (every
pair of judges per category: percent agreement and Cohen's kappa),
:func:`live_calls` (the answers and verdicts made live: tokens, cost and
each call's latency), :func:`seeds` (several files of one system) and
:func:`caveats`.  Nothing is computed here that the
analysis layer does not compute already: this module chooses, words and draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from agentmemory.analysis.agreement import ALL
from agentmemory.analysis.answers_view import AGREEMENT_HEADER, agreement_rows, judge_rows, live_rows, seed_rows
from agentmemory.analysis.card import evaluation_card
from agentmemory.analysis.claim_checks import check_claims, claims_text
from agentmemory.analysis.failures import FOUND, FailureSplit, failure_splits
from agentmemory.analysis.judgments import correction_lines, original_statistics, patch_rows
from agentmemory.analysis.prose import format_p
from agentmemory.analysis.summaries import BaselineComparison, Interval, Statistics
from agentmemory.analysis.text_tables import column_name, group_rows, interval_cell
from agentmemory.collection import ANSWER, EXCLUDE, JudgmentPatch, Judgments
from agentmemory.datasets.judgment_patch import answer_key_ceiling, evidence_corrections
from agentmemory.evaluation.runner import Evaluation, RetrieverResult
from agentmemory.report.answer_figures import FailureBar, MeansRow, failure_figure, group_figure, means_figure
from agentmemory.report.comparison import comparison
from agentmemory.report.display import Folded, Markdown, Png, Table, plural
from agentmemory.report.figures import comparison_heatmap
from agentmemory.report.params import AnswersSetup
from agentmemory.report.results import cli_command
from agentmemory.report.stats import comparison_matrix, comparison_summary, pairs_matrix

__all__ = [
    "agreement",
    "answer_key",
    "by_category",
    "caveats",
    "claims",
    "command",
    "failures",
    "headline",
    "judges",
    "lead_measures",
    "live_calls",
    "paired",
    "seeds",
    "verdict",
]

JUDGE, F1 = "Judge", "F1"


def _signed(value: float) -> str:
    """``+0.033``, ``−0.033`` (a real minus sign), ``0.000``: a difference to the table's three decimals."""
    if round(value, 3) == 0:
        return "0.000"
    return f"+{value:.3f}" if value > 0 else f"−{-value:.3f}"


def _cell(interval: Interval) -> str:
    return interval_cell(interval, 3)


def _ordered(evaluation: Evaluation, statistics: Statistics) -> list[RetrieverResult]:
    """The systems in the comparison table's order: the baseline first, then the evaluation's order."""
    base = [r for r in evaluation.results if r.name == statistics.baseline]
    return base + [r for r in evaluation.results if r.name != statistics.baseline]


def _colours(evaluation: Evaluation) -> dict[str, int]:
    """Each system's colour index (its place in the evaluation), the same in every figure."""
    return {r.name: i for i, r in enumerate(evaluation.results)}


def _has_values(statistics: Statistics, measure: str) -> bool:
    return any(cells.get(measure) is not None for cells in statistics.intervals.values())


def lead_measures(statistics: Statistics) -> tuple[str, ...]:
    """The measures the first screen leads with: ``Judge`` and ``F1`` where some system has a value, else the
    comparison table's first two columns with values."""
    chosen = tuple(m for m in (JUDGE, F1) if m in statistics.measures and _has_values(statistics, m))
    if chosen:
        return chosen
    return tuple(m for m in statistics.shown_measures if _has_values(statistics, m))[:2]


def _answering(evaluation: Evaluation) -> list[RetrieverResult]:
    """The imported answer systems among the results, in the evaluation's order."""
    names = {a.name for a in evaluation.answers}
    return [r for r in evaluation.results if r.name in names]


def _best(statistics: Statistics, systems: Sequence[RetrieverResult], measure: str) -> list[RetrieverResult]:
    """The systems with the highest mean on ``measure`` (several on a tie at three decimals)."""
    means = {r.name: cell.mean for r in systems if (cell := statistics.intervals[r.name].get(measure)) is not None}
    if not means:
        return []
    top = round(max(means.values()), 3)
    return [r for r in systems if r.name in means and round(means[r.name], 3) == top]


def _over(interval: Interval, questions: int, whose: str = "its file answers") -> str:
    """``", over the 7 of 15 questions its file answers"`` when a mean is over fewer than the headline's."""
    return f", over the {interval.n} of {questions} questions {whose}" if interval.n < questions else ""


def _versus(c: BaselineComparison, label: str, statistics: Statistics) -> str:
    """One system against the baseline on one measure, in words: the difference, its interval (or that every
    question both answer scores the same), over how many questions when fewer than the headline's, p and what it
    means."""
    ci = c.test.effect_ci
    n = c.test.n
    both = f"the {n} questions both answer" if n < statistics.queries else f"all {n} questions"
    if ci.degenerate:
        shown = f"{_signed(c.test.mean_difference)}, the same on each of {both}"
    else:
        shown = f"{_signed(c.test.mean_difference)} [{_signed(ci.low)}, {_signed(ci.high)}]"
        shown += f" over {both}" if n < statistics.queries else ""
    alpha = statistics.alpha
    if c.test.smallest_p_value > alpha:
        meaning = f"cannot be significant over {n} questions"
    elif c.marker(alpha):
        meaning = f"significantly {'higher' if c.test.mean_difference > 0 else 'lower'}"
    else:
        meaning = "not significant"
    return f"{label} {shown} (p = {format_p(c.p_holm_table)}, {meaning})"


def _collection_name(evaluation: Evaluation) -> str:
    """The collection as the definitions card names it: its release when known, else its name."""
    release = evaluation_card(evaluation)["data"]["release"]
    return release or evaluation.collection.name


def verdict(evaluation: Evaluation, statistics: Statistics) -> Markdown:
    """The short verdict the report opens with: which systems were compared on how many questions, who is most
    accurate on the lead measure (``Judge``), each other system's difference from the baseline with its
    interval and significance, the best on ``F1``, and why Judge and F1 are read differently."""
    answered = _answering(evaluation)
    labels = {r.name: r.label for r in evaluation.results}
    n = statistics.queries
    names = _and([r.label for r in answered])
    text = [
        f"**Verdict.** {plural(len(answered), 'imported system', 'imported systems')}, {names}, compared on the "
        f"{plural(n, 'headline question', 'headline questions')} of the {_collection_name(evaluation)}"
    ]
    if statistics.excluded_groups:
        text[0] += f" ({_and(list(statistics.excluded_groups))} shown by category only)"
    retrievers = [r.label for r in evaluation.results if r.kind == "retriever"]
    if retrievers:
        text[0] += f", beside {_and(retrievers)} (no answers: scored on what it retrieves)"
    text[0] += "."
    lead = lead_measures(statistics)
    if not lead or not answered:
        text.append("No system has a value on any answer measure: there is nothing to rank.")
        return Markdown(" ".join(text))
    first = lead[0]
    text.append(_best_sentence(statistics, answered, first, "most accurate" if first == JUDGE else "highest"))
    against = [_versus(c, labels[c.system], statistics) for c in statistics.versus_baseline if c.measure == first]
    base = labels.get(statistics.baseline, statistics.baseline)
    held = f"p after Holm's correction over the table's {len(statistics.versus_baseline)} comparisons"
    if against:
        text.append(
            f"Against the baseline {base} on {first} (difference, 95% interval; {held}): " + "; ".join(against) + "."
        )
    else:
        text.append(f"No system could be compared with the baseline {base} on {first} (no question both answer).")
    if F1 in lead and first != F1:
        text.append(
            _best_sentence(statistics, answered, F1, "highest", what="F1 (computed here, one definition for all)")
        )
    judged = [r.label for r in answered if statistics.intervals[r.name].get(JUDGE) is not None]
    if first == JUDGE and len(judged) > 1:
        text.append(
            "Each system's Judge is its own harness's judge (its model and prompt, named in the definitions card), "
            "so a gap in Judge may be a gap between judges; F1 compares the answers themselves."
        )
    return Markdown(" ".join(text))


def _and(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def _best_sentence(
    statistics: Statistics, systems: Sequence[RetrieverResult], measure: str, word: str, *, what: str = ""
) -> str:
    """``"**evermemos** is the most accurate on Judge: 0.714 [0.429, 1.000], over the 7 of 15 questions its
    file answers."``, several names on a tie."""
    best = _best(statistics, systems, measure)
    n = statistics.queries
    if not best:
        return f"No system has a value on {measure}."
    cells = [statistics.intervals[r.name][measure] for r in best]
    named = " and ".join(f"**{r.label}**" for r in best)
    verb = "is" if len(best) == 1 else "are"
    values = "; ".join(
        f"{r.label + ' ' if len(best) > 1 else ''}{_cell(cell)}{_over(cell, n)}"
        for r, cell in zip(best, cells)
        if cell is not None
    )
    return f"{named} {verb} the {word} on {what or measure}: {values}."


def headline(evaluation: Evaluation, statistics: Statistics, *, number: int = 1) -> tuple[Png | Markdown | Table, ...]:
    """Figure ``number``: the lead measures' means with their intervals, each system a row (the baseline first);
    then the comparison table (every system on every column, against the baseline), which holds the figure's
    numbers, the line saying what its markers mean, and what the rankings cost when a system retrieved
    (:func:`agentmemory.report.comparison.comparison`)."""
    lead = lead_measures(statistics)
    shown = comparison(evaluation, statistics)
    if not lead:
        return (Markdown("No measure has a value: nothing to draw."), *shown)
    colours = _colours(evaluation)
    rows = [
        MeansRow(r.label, colours[r.name], {m: statistics.intervals[r.name].get(m) for m in lead})
        for r in _ordered(evaluation, statistics)
    ]
    drawn = [row for row in rows if any(cell is not None for cell in row.intervals.values())]
    base = next(r.label for r in evaluation.results if r.name == statistics.baseline)
    figure = means_figure(drawn, lead, base, number=number)
    caption = f"{figure.caption}. Its numbers: the {' and '.join(lead)} columns of the table below"
    left = [row.label for row in rows if row not in drawn]
    if left:
        caption += f" ({_and(left)}: no value, not drawn)"
    return (Png(figure.data, caption), *shown)


def by_category(evaluation: Evaluation, statistics: Statistics, *, number: int = 2) -> tuple[Png | Markdown, Table]:
    """Figure ``number``: per category (query group), each system's lead measures side by side with intervals;
    then the numbers: every column of the comparison table per category and system, ``(n of N)`` saying over
    how many of the category's questions a mean is."""
    measures = list(statistics.shown_measures)
    columns = ["category", "questions", "System", *map(column_name, measures)]
    if not statistics.groups:
        return Markdown("No question has a category: nothing to break down."), Table(pd.DataFrame(columns=columns))
    rows = [row for row in group_rows(evaluation, statistics, measures) if not all(_empty(c) for c in row[3:])]
    excluded = set(statistics.excluded_groups)
    for row in rows:
        if row[0] in excluded:
            row[0] += " (not in the headline)"
    table = Table(
        pd.DataFrame(rows, columns=columns),
        f"Numbers behind Figure {number}: each category's mean with its 95% interval, per system (a system with no "
        "value on any column in a category has no row there)",
    )
    lead = lead_measures(statistics)
    groups = [g for g, group in statistics.groups.items() if any(_group_has(group.intervals, m) for m in lead)]
    if not lead or not groups:
        return Markdown(f"Figure {number}: no category has a value on an answer measure."), table
    colours = _colours(evaluation)
    drawn = [
        (
            r.label,
            colours[r.name],
            {(g, m): statistics.groups[g].intervals[r.name].get(m) for g in groups for m in lead},
        )
        for r in _ordered(evaluation, statistics)
        if any(statistics.groups[g].intervals[r.name].get(m) is not None for g in groups for m in lead)
    ]
    return group_figure(groups, drawn, lead, number=number), table


def _empty(cell: str) -> bool:
    """A table cell without a value (``n/a``, ``n/a (0 of 3)``)."""
    return cell.startswith("n/a")


def _group_has(intervals: Mapping[str, Mapping[str, Interval | None]], measure: str) -> bool:
    return any(cells.get(measure) is not None for cells in intervals.values())


def paired(evaluation: Evaluation, statistics: Statistics, *, number: int = 3) -> tuple[Markdown | Png | Table, ...]:
    """Every pair of systems on every column of the comparison table: what the matrix allows in a few sentences,
    the heat map (Figure ``number``) and the table of its numbers."""
    matrix = pairs_matrix(evaluation, statistics)
    return (
        comparison_summary(matrix),
        comparison_heatmap(matrix, number=number),
        comparison_matrix(matrix, number=number, fewer=True),
    )


def _bar(split: FailureSplit) -> FailureBar:
    t = split.overall
    return FailureBar(
        split.system,
        {
            "correct": sum(t.cells[f][True] for f in FOUND),
            "answering": t.cells["all"][False],
            "partial": t.cells["some"][False],
            "retrieval": t.cells["none"][False],
        },
    )


def _count(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else "0"


def _not_placed(split: FailureSplit) -> str:
    parts = []
    if split.overall.tied:
        parts.append(f"{split.overall.tied} judges split evenly")
    if split.no_evidence:
        parts.append(f"{split.no_evidence} without judged evidence")
    if split.no_verdict:
        parts.append(f"{split.no_verdict} without a verdict (no record, or no judge)")
    return "; ".join(parts) or "none"


def failures(evaluation: Evaluation, *, number: int = 4) -> tuple[Markdown | Png | Table, ...]:
    """Where each system with retrieved memories and verdicts went wrong (:mod:`agentmemory.analysis.failures`):
    Figure ``number`` (stacked bars: correct, answering failure, partial, retrieval failure), the numbers
    behind it, and the shares with their Wilson intervals over the headline and per category; a line for each
    answer system without retrieved memories (its wrong answers cannot be split)."""
    splits = failure_splits(evaluation)
    without = [a.name for a in evaluation.answers if not a.has_retrieval]
    note = (
        f"Not split (their files carry no retrieved memories): {', '.join(without)}."
        if without
        else "Every answer file carries retrieved memories."
    )
    if not splits:
        return (Markdown(f"No system has both retrieved memories and verdicts: nothing to split. {note}"),)
    bars = [_bar(s) for s in splits]
    numbers = pd.DataFrame(
        [
            [
                bar.label,
                str(bar.placed),
                *(_count(bar.counts[key], bar.placed) for key in ("correct", "answering", "partial", "retrieval")),
                _not_placed(split),
            ]
            for bar, split in zip(bars, splits)
        ],
        columns=[
            "System",
            "questions placed",
            "correct",
            "answering failure",
            "partial",
            "retrieval failure",
            "not placed",
        ],
    )
    k = splits[0].k
    shares = pd.DataFrame(
        [
            [
                s.system,
                name,
                table.p_correct("all").text(),
                table.p_correct("none").text(),
                table.of_wrong("all").text(),
                table.of_wrong("none").text(),
            ]
            for s in splits
            for name, table in (("all headline questions", s.overall), *s.groups.items())
        ],
        columns=[
            "System",
            "over",
            "P(correct | all evidence found)",
            "P(correct | none found)",
            "wrong: answering failures",
            "wrong: retrieval failures",
        ],
    )
    return (
        failure_figure(bars, k, number=number),
        Table(
            numbers,
            f"Numbers behind Figure {number}: headline questions with judged evidence and a verdict, by where the "
            f"evidence was (top {k}) and whether the answer was right; share of the placed questions",
        ),
        Table(
            shares,
            "Each share with its 95% Wilson interval (count of total): how often the answer was right when all or "
            "none of the evidence was retrieved, and which share of the wrong answers had all of it (answering "
            "failures) or none (retrieval failures)",
            fold=True,  # per system and category: the detail behind the figure's shares, on a click
        ),
        Markdown(note),
    )


def _judgments_text(value: Judgments | None) -> str:
    """An evidence line's judgments as entry ids (``conv-1/D1:6, conv-1/D2:3``); the loader's left-out question
    has none."""
    if value is None:
        return "none (left out by the loader)"
    return ", ".join(entry for entry, _ in value) or "none"


def _key_row(kind: str, before: Any, after: Any) -> tuple[str, str]:
    """An answer-key line's original and corrected value, as text."""
    if kind == ANSWER:
        return str(before), str(after)
    if kind == EXCLUDE:
        return "in the means", "excluded"
    return _judgments_text(before), _judgments_text(after)


def answer_key(evaluation: Evaluation, statistics: Statistics) -> tuple[Markdown | Table | Folded, ...]:
    """A judgment patch's effect (``qrels_patch``): the table's columns under the original key and the corrected
    one side by side, every answer-key line, the judgments it changed, and the answer key's ceiling per
    category (:func:`agentmemory.datasets.judgment_patch.answer_key_ceiling`); one line without a patch."""
    patch = evaluation.collection.judgment_patch
    original = original_statistics(evaluation, statistics)
    if patch is None or original is None:
        return (Markdown('No answer-key patch (`qrels_patch = ""`): every number is under the collection\'s own key.'),)
    header, rows = patch_rows(evaluation, statistics, original)
    keep = [0, *(header.index(column_name(m)) for m in statistics.shown_measures)]
    side = Table(
        pd.DataFrame([[row[i] for i in keep] for row in rows], columns=[header[i] for i in keep]),
        f"Headline means under the original answer key → under the corrected one ({patch.summary()}), over "
        f"{original.queries} → {statistics.queries} headline questions",
    )
    intro = Markdown(
        f"`{patch.name}` corrects the answer key. F1, EM, BLEU-1 and answer_in_context are computed here against "
        "the gold answer, so a corrected answer changes them; Judge is the verdict the harness's judge gave "
        "against the original answer and does not change (only an excluded question leaves its mean)."
    )
    shown: list[Markdown | Table | Folded] = [intro, side]
    key = [[str(c.line), c.query_id, c.kind, *_key_row(c.kind, c.before, c.after), c.reason] for c in patch.answer_key]
    if key:
        shown.append(
            Table(
                pd.DataFrame(key, columns=["line", "question", "kind", "original", "corrected", "reason"]),
                f"The answer-key lines of {patch.name}: each question's original and corrected answer or evidence",
            )
        )
    if patch.corrections:  # the judgments the evidence lines above change, folded: the table already shows them
        head, *lines = correction_lines(patch)
        summary = head.rstrip(":").replace("`", "")
        shown.append(Folded(f"{summary}: the {len(patch.corrections)} judgments changed", "\n".join(lines)))
    shown.append(_ceiling(patch, evaluation, statistics))
    return tuple(shown)


def _ceiling(patch: JudgmentPatch, evaluation: Evaluation, statistics: Statistics) -> Table:
    """Per category: the questions, those whose original answer the patch leaves right, the ceiling (the best
    a perfect answerer scores under the original key), the evidence lists replaced; the headline's total."""
    ceiling = answer_key_ceiling(patch, evaluation.collection)
    evidence = evidence_corrections(patch, evaluation.collection)
    excluded = set(statistics.excluded_groups)
    rows = []
    for group, (right, total) in ceiling.items():
        name = "(no category)" if group is None else group + (" (not in the headline)" if group in excluded else "")
        replaced = evidence.get(group, (0, 0))[1]
        rows.append([name, str(total), str(right), _share(right, total), str(replaced)])
    kept = [(r, t) for g, (r, t) in ceiling.items() if g not in excluded]
    right, total = sum(r for r, _ in kept), sum(t for _, t in kept)
    rows.append(["headline categories", str(total), str(right), _share(right, total), ""])
    return Table(
        pd.DataFrame(
            rows, columns=["category", "questions", "original answer right", "ceiling", "evidence lists replaced"]
        ),
        "The answer key's ceiling per category: the share of questions whose original gold answer the patch leaves "
        "right, the most a perfect answerer can score under the original key",
    )


def _share(count: int, total: int) -> str:
    return f"{count / total:.3f}" if total else "-"


def judges(evaluation: Evaluation, statistics: Statistics) -> tuple[Table | Markdown, ...]:
    """Per answer system: its format, the headline questions it answers, Judge with its interval, each judge's own
    accuracy, how often its judges agree and split evenly (several verdicts per question); then what each judge's
    labels mean (the definitions card's words)."""
    by_name = {a.name: a for a in evaluation.answers}
    rows = []
    for row in judge_rows(evaluation):
        system = by_name[row.system]
        interval = statistics.intervals.get(row.system, {}).get(JUDGE)
        rows.append(
            [
                row.system,
                system.files[0].format + (f", {len(system.files)} seeds" if len(system.files) > 1 else ""),
                f"{row.matched} of {row.questions}",
                "-" if interval is None else _cell(interval),
                "; ".join(f"{j} {acc:.3f} ({n})" for j, acc, n in row.judges) or "none",
                "-" if row.agreement is None else f"{row.agreement:.3f} of {row.agreement_n}",
                str(row.ties),
            ]
        )
    table = Table(
        pd.DataFrame(
            rows,
            columns=[
                "System",
                "format",
                "questions answered",
                "Judge (accuracy)",
                "each judge",
                "judges agree",
                "judges split evenly",
            ],
        ),
        "Each system's judges over the headline questions (a system of several files: its first file's judges)",
    )
    lines = [
        f"- {a.name}: " + "; ".join(f"`{j}`: {meaning}" for j, meaning in a.files[0].judges.items())
        for a in evaluation.answers
        if a.files[0].judges
    ]
    return table, Markdown("What each judge's labels mean:\n\n" + "\n".join(lines) if lines else "No file has a judge.")


def agreement(evaluation: Evaluation) -> Table | Markdown:
    """Every pair of judges of every system with two judges or more, over the headline questions and then per
    category: the questions both judged, the share on which they agree and Cohen's kappa
    (:func:`agentmemory.analysis.agreement.judge_agreement`); one line when no system has two judges."""
    rows = agreement_rows(evaluation)
    if not rows:
        return Markdown(
            "No system has the verdicts of two judges on a question: there is no agreement to show. A file with "
            "several judges, several `--judge`, or `--judge` re-grading a file's answers give one."
        )
    return Table(
        pd.DataFrame(rows, columns=list(AGREEMENT_HEADER)),
        f"Judge agreement per category: each pair of judges over the questions both judged ({ALL} first), the "
        "share with the same verdict, and Cohen's kappa = (p_o − p_e) / (1 − p_e), p_o that share and p_e the "
        "share chance gives with each judge's own verdict frequencies ('-' when both gave one verdict throughout)",
    )


def live_calls(evaluation: Evaluation) -> Table | Markdown:
    """Per answer system made live (a reader's answers, or a file's answers re-graded by live judges): the
    questions answered, judged and failed, the tokens, the reader's and the judges' latency per call (p50 and
    p95) and the cost when priced; one line without any."""
    header, body = live_rows(evaluation)
    if not body:
        return Markdown(
            "No answer or verdict was made live here (`--reader`, `--judge`): every answer and verdict is a file's."
        )
    return Table(
        pd.DataFrame(body, columns=header),
        "The calls made live: tokens from the endpoints' usage; latency per call in seconds, p50 and p95, as "
        "measured when each call was made and stored with its reply in the cache (a re-run from the cache "
        "reports the same values)",
    )


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def seeds(evaluation: Evaluation, statistics: Statistics) -> Table | Markdown:
    """Per system given several answer files (its seeds) and per answer measure: each seed's mean, their standard
    deviation, the gap to the baseline with its interval, and whether the gap exceeds both the interval and the
    seed spread (:func:`agentmemory.analysis.answers_view.seed_rows`)."""
    rows = seed_rows(evaluation, statistics)
    if not rows:
        return Markdown(
            "No system was given several answer files (seeds): there is no seed spread to show. Give a system's "
            'runs as one entry, `answers = "mem0=run1.json,run2.json,run3.json"`.'
        )
    base = next(r.label for r in evaluation.results if r.name == statistics.baseline)
    frame = pd.DataFrame(
        [
            [
                r.system,
                r.measure,
                ", ".join(_mean(s) for s in r.seeds),
                _mean(r.sd),
                "-"
                if r.gap is None
                else f"{_signed(r.gap)} [{_signed(r.gap_low or 0.0)}, {_signed(r.gap_high or 0.0)}]",
                _mean(r.baseline_sd),
                r.verdict,
            ]
            for r in rows
        ],
        columns=[
            "System",
            "measure",
            "each seed's mean",
            "seed SD",
            f"gap to {base} [95% interval]",
            f"{base}'s seed SD",
            "the gap",
        ],
    )
    return Table(
        frame,
        "Seeds: each answer file of a system is one run; a question's value is the mean of the runs' values. The gap "
        "is real when its paired interval excludes 0 and it is larger than either system's seed SD",
    )


def claims(evaluation: Evaluation, statistics: Statistics) -> Markdown:
    """Each published claim of the ``claims`` file beside our value under its definition
    (:mod:`agentmemory.analysis.claim_checks`: a claim naming its own answer file is checked against that file's
    per-question evidence); one line without a claims file."""
    given = evaluation.options.claims
    if given is None:
        return Markdown('No claims file (`claims = ""`): no published number is set beside ours.')
    original = original_statistics(evaluation, statistics)
    checks = check_claims(evaluation, statistics, evaluation_card(evaluation), original=original)
    return Markdown(claims_text(given, checks))


def caveats(evaluation: Evaluation, statistics: Statistics) -> Markdown:
    """What the numbers rest on, computed from the run: the questions and their weight, each system's coverage,
    the questions scored for answers only, the judges, how records were matched and memories attributed, ties."""
    n = statistics.queries
    lines = []
    if n:
        lines.append(
            f"- **{plural(n, 'headline question', 'headline questions')}:** each weighs 1/{n} = {1 / n:.3f} in a mean, "
            f"so one answer judged the other way moves an accuracy by {1 / n:.3f}."
            + (" A sample this small describes these questions, nothing more." if n < 100 else "")
        )
    lines += _coverage_lines(evaluation, statistics)
    left = len(evaluation.collection.left_out_queries)
    if left:
        lines.append(
            f"- **{plural(left, 'question', 'questions')} without usable evidence** (the loader's, listed in the "
            "card) count in the answer measures only: retrieval measures and the failure split leave them out."
        )
    lines += _judge_lines(evaluation)
    for a in evaluation.answers:
        if a.attributed is not None:
            report = a.attributed.report
            lines.append(
                f"- {a.name}'s retrieved memories count through attribution ({report.method}): "
                f"{report.attributed} of {report.returned} memories attributed to an entry (coverage "
                f"{report.coverage:.2f}); the others count as not relevant."
            )
    lines.append(
        "- A judge call that failed is not a wrong answer; a harness that writes a failed call as wrong "
        "(the card says which) counts it as one."
    )
    return Markdown("\n".join(lines))


def _coverage_lines(evaluation: Evaluation, statistics: Statistics) -> list[str]:
    """A line for each system answering fewer than the headline's questions, and for records matching none."""
    n = statistics.queries
    lines = []
    for a in evaluation.answers:
        cells = statistics.intervals.get(a.name, {})
        cell = cells.get(JUDGE) or cells.get(F1)
        if cell is not None and cell.n < n:
            lines.append(
                f"- **{a.name} answers {cell.n} of the {n} headline questions:** its means are over those; its "
                "paired comparisons are over the questions both systems answer."
            )
        unmatched = sum(len(m.unmatched) for m in a.matched)
        if unmatched:
            lines.append(
                f"- {a.name}: {unmatched} records match no question of the collection (left out; the definitions "
                "card lists how each file matched)."
            )
    return lines


def _judge_lines(evaluation: Evaluation) -> list[str]:
    """The judges differ between files; the questions on which judges (or seeds) split evenly."""
    lines = []
    judged = [a for a in evaluation.answers if a.files[0].judges]
    if len(judged) > 1:
        lines.append(
            "- **Different judges:** each file's verdicts come from its own harness's judge ("
            + "; ".join(f"{a.name}: {', '.join(a.files[0].judges)}" for a in judged)
            + "). The same answers have been graded 91% by one judge and 35% by another: compare Judge between "
            "systems only as far as their judges agree, and read F1 beside it."
        )
    ties = {r.label: sum(q.metrics.get(JUDGE) == 0.5 for q in r.headline) for r in _answering(evaluation)}
    split = ", ".join(f"{label} {count}" for label, count in ties.items() if count)
    if split:
        lines.append(
            f"- **Judges or seeds split evenly** (Judge 0.5) on some questions ({split}): 0.5 counts as it is, never "
            "broken, and the failure split places such a question nowhere."
        )
    return lines


def command(setup: AnswersSetup, evaluation: Evaluation) -> str:
    """The ``agentmemory eval`` command, run from the repository root, that writes the same artifact:
    ``--answers`` for each system as given, ``--repair`` and the format's options, the patch and claims, the
    table's columns, ``--out`` in the output folder."""
    out = "eval-results.json" if setup.output_dir is None else f"{setup.output_dir.as_posix()}/eval-results.json"
    options = {**setup.format_options, **({"repair": True} if setup.repair else {})}
    return cli_command(
        evaluation,
        setup.cli_path,
        format=setup.format_given,
        options=options,
        out=out,
        inputs=setup.inputs,
        table=setup.columns(evaluation),
        answers=setup.answers.given,
    )
