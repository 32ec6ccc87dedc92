"""The first screen of a retrieval report: the verdict, the headline means as a figure, the comparison table.

A reader who opens ``eval.html`` or a collection report sees first who won
and by how much: :func:`verdict` (the leader on the headline measure, each
system's difference from the baseline with its 95% interval and whether it
is significant after Holm's correction over the comparison table, the number
of questions, in plain words), :func:`headline` (Figure ``number``: every
system's headline mean with its interval; then the comparison table of
:func:`agentmemory.report.comparison.comparison`, its best value per column
in bold), and :func:`card_line` (the definitions card's one line, with a
pointer to the full card further down).  The answers report's first screen
(:mod:`agentmemory.report.answer_report`) has the same layout.

The headline measure (:func:`headline_measure`) is the comparison table's
first budget measure when memory systems lead it at equal context cost,
else ``R@k``, else the table's first column with a value.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.analysis.card import evaluation_card, short_form
from agentmemory.analysis.prose import format_p, visible_decimals
from agentmemory.analysis.summaries import BaselineComparison, Interval, Statistics
from agentmemory.analysis.text_tables import lower_is_better
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import parse_measure
from agentmemory.metrics.budget import FAMILY as BUDGET_FAMILY
from agentmemory.report.answer_figures import MeansRow, means_figure
from agentmemory.report.comparison import comparison
from agentmemory.report.display import Markdown, Png, Table, plural

__all__ = ["card_line", "decimals_for", "difference", "headline", "headline_measure", "verdict"]


def decimals_for(*values: float, least: int = 3) -> int:
    """:func:`~agentmemory.analysis.prose.visible_decimals` from three decimals, the comparison table's:
    ``0.0004`` needs 4, ``0.015`` keeps 3."""
    return visible_decimals(*values, least=least)


def difference(value: float, decimals: int = 3) -> str:
    """``+0.015``, ``−0.108`` (a real minus sign), ``0.000`` for exactly none; never ``+0.000`` for a non-zero one
    (more decimals, :func:`decimals_for`)."""
    if value == 0:
        return f"{0:.{decimals}f}"
    shown = decimals_for(value, least=decimals)
    return f"+{value:.{shown}f}" if value > 0 else f"−{-value:.{shown}f}"


def _has_values(statistics: Statistics, measure: str) -> bool:
    return any(cells.get(measure) is not None for cells in statistics.intervals.values())


def headline_measure(evaluation: Evaluation, statistics: Statistics) -> str | None:
    """The measure the verdict and Figure 1 lead with (module docstring); ``None`` when no measure has a value."""
    shown = [m for m in statistics.shown_measures if _has_values(statistics, m)]
    for m in shown:
        if parse_measure(m).definition.family == BUDGET_FAMILY:
            return m
    recall = f"R@{evaluation.k}"
    if recall in shown:
        return recall
    return shown[0] if shown else None


def _leaders(evaluation: Evaluation, statistics: Statistics, measure: str) -> list[tuple[str, Interval]]:
    """The systems with the best mean on ``measure`` (the highest, or lowest when lower is better), ties at three
    decimals all named."""
    cells = [
        (r.label, cell) for r in evaluation.results if (cell := statistics.intervals[r.name].get(measure)) is not None
    ]
    if not cells:
        return []
    lower = lower_is_better(measure)
    best = (min if lower else max)(round(cell.mean, 3) for _, cell in cells)
    return [(label, cell) for label, cell in cells if round(cell.mean, 3) == best]


def _interval(cell: Interval) -> str:
    if cell.degenerate:
        return f"{cell.mean:.3f} (the same on every question)"
    return f"{cell.mean:.3f} [{cell.low:.3f}, {cell.high:.3f}]"


def _versus(
    c: BaselineComparison, label: str, statistics: Statistics, measure: str, *, say_meaning: bool = True
) -> str:
    """One system against the baseline in words: the difference, its interval, p after Holm's correction over the
    table and what it allows (higher/lower read in the measure's direction)."""
    test = c.test
    ci = test.effect_ci
    decimals = decimals_for(test.mean_difference, ci.low, ci.high)
    if ci.degenerate:
        shown = f"{difference(test.mean_difference, decimals)} on every question"
    else:
        shown = (
            f"{difference(test.mean_difference, decimals)} "
            f"[{difference(ci.low, decimals)}, {difference(ci.high, decimals)}]"
        )
    if test.n < statistics.queries:
        shown += f" over the {test.n} questions both answer"
    better = (test.mean_difference < 0) if lower_is_better(measure) else (test.mean_difference > 0)
    reason = _impossible(c, statistics)
    if reason:
        meaning = f"cannot be significant {reason}"
    elif c.marker(statistics.alpha):
        meaning = f"significantly {'better' if better else 'worse'}"
    else:
        meaning = "not significant"
    return f"{label} {shown} (p = {format_p(c.p_holm_table)}" + (f", {meaning})" if say_meaning else ")")


def _impossible(c: BaselineComparison, statistics: Statistics) -> str:
    """Why ``c`` cannot be significant whatever the systems do (``"over 5 questions"``, ``"after Holm's correction
    over 32 comparisons"``); ``""`` when it can."""
    test = c.test
    comparisons = len(statistics.versus_baseline)
    if test.smallest_p_value > statistics.alpha:
        return f"over {plural(test.n, 'question', 'questions')}"
    if min(1.0, comparisons * test.smallest_p_value) > statistics.alpha:
        return f"after Holm's correction over {comparisons} comparisons"
    return ""


def verdict(evaluation: Evaluation, statistics: Statistics) -> Markdown:
    """The paragraph a report opens with: on how many questions, the leader on the headline measure, each other
    system's difference from the baseline with its interval and whether it is significant after Holm's correction
    over the comparison table."""
    n = statistics.queries
    labels = {r.name: r.label for r in evaluation.results}
    collection = evaluation_card(evaluation)["data"]["release"] or evaluation.collection.name
    alone = len(evaluation.results) == 1
    text = [
        f"**Verdict.** {plural(len(evaluation.results), 'system', 'systems')} "
        f"{'evaluated' if alone else 'compared'} on the {n:,} headline question{'' if n == 1 else 's'} of the "
        f"{collection}"
        + (f" ({_and(list(statistics.excluded_groups))} shown by group only)." if statistics.excluded_groups else ".")
    ]
    measure = headline_measure(evaluation, statistics)
    if measure is None or not n:
        text.append("No system has a value on any measure: there is nothing to rank.")
        return Markdown(" ".join(text))
    direction = "lower is better" if lower_is_better(measure) else "higher is better"
    if alone:  # nothing to rank: its value, and how to get a comparison
        result = evaluation.results[0]
        cell = statistics.intervals[result.name].get(measure)
        value = "no value" if cell is None else _interval(cell)
        text.append(
            f"**{result.label}** has {measure} ({direction}) {value}. Nothing is compared: give more systems "
            "(retrievers, run files, memory systems) to rank them against it."
        )
        return Markdown(" ".join(text))
    leaders = _leaders(evaluation, statistics, measure)
    named = _and([f"**{label}**" for label, _ in leaders])
    values = "; ".join(f"{label + ' ' if len(leaders) > 1 else ''}{_interval(cell)}" for label, cell in leaders)
    text.append(f"{named} {'leads' if len(leaders) == 1 else 'tie for the lead'} on {measure} ({direction}): {values}.")
    compared = [c for c in statistics.versus_baseline if c.measure == measure]
    reasons = {_impossible(c, statistics) for c in compared}
    shared = next(iter(reasons)) if len(reasons) == 1 else ""  # every comparison cannot be significant, for one reason
    against = [_versus(c, labels[c.system], statistics, measure, say_meaning=not shared) for c in compared]
    base = labels.get(statistics.baseline, statistics.baseline)
    if against:
        text.append(
            f"Against the baseline {base} on {measure} (difference, 95% interval; p after Holm's correction over the "
            f"table's {len(statistics.versus_baseline)} comparisons): " + "; ".join(against) + "."
        )
    if shared:
        text.append(f"No difference can be significant {shared}, whatever the systems do.")
    return Markdown(" ".join(text))


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def headline(evaluation: Evaluation, statistics: Statistics, *, number: int = 1) -> tuple[Png | Markdown | Table, ...]:
    """Figure ``number``: every system's headline mean with its 95% interval (the baseline first, dashed); then the
    comparison table, whose column holds the figure's numbers, and its notes."""
    shown = comparison(evaluation, statistics)
    measure = headline_measure(evaluation, statistics)
    if measure is None:
        return shown
    base = [r for r in evaluation.results if r.name == statistics.baseline]
    ordered = base + [r for r in evaluation.results if r.name != statistics.baseline]
    colours = {r.name: i for i, r in enumerate(evaluation.results)}
    rows = [MeansRow(r.label, colours[r.name], {measure: statistics.intervals[r.name].get(measure)}) for r in ordered]
    drawn = [row for row in rows if row.intervals[measure] is not None]
    figure = means_figure(drawn, (measure,), base[0].label if base else "", number=number)
    caption = f"{figure.caption}. Its numbers: the {measure} column of the table below"
    left = [row.label for row in rows if row not in drawn]
    if left:
        caption += f" ({_and(left)}: no value, not drawn)"
    return (Png(figure.data, caption), *shown)


def card_line(evaluation: Evaluation) -> Markdown:
    """The definitions card in one line, pointing to the full card further down."""
    return Markdown(
        f"**What the numbers are:** {short_form(evaluation_card(evaluation))} "
        "(the full definitions card: [Definitions](#Definitions))."
    )
