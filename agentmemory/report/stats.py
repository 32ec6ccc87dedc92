"""The statistics section: bootstrap intervals of every mean and the paired comparisons, in words.

Everything here reads :func:`agentmemory.analysis.statistics.evaluation_statistics` of the
run, seeded by the run's seed (:func:`run_statistics`), so the numbers are
the ones ``eval-results.json`` holds under ``statistics``.  The interval
tables' rows are :func:`agentmemory.analysis.text_tables.interval_rows` and
:func:`~agentmemory.analysis.text_tables.group_rows`, as ``agentmemory eval`` prints them:
``mean [low, high]`` to 2 decimals (:func:`~agentmemory.analysis.text_tables.interval_cell`,
re-exported here); a degenerate interval (every query has the same value)
is marked ``(all equal)``, because it says nothing about uncertainty.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from agentmemory.analysis.paired_matrix import PairedMatrix, matrix_caption, matrix_summary, paired_matrix
from agentmemory.analysis.prose import comparisons_preface, describe_comparison, format_p, visible_decimals
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.analysis.summaries import Statistics
from agentmemory.analysis.text_tables import column_name, group_rows, interval_cell, interval_rows, lower_is_better
from agentmemory.evaluation.runner import Evaluation
from agentmemory.report.answer_figures import group_figure as draw_groups
from agentmemory.report.display import Markdown, Png, Table
from agentmemory.report.first_screen import headline_measure
from agentmemory.report.knowledge_update import knowledge_update_tables

__all__ = [
    "comparison_matrix",
    "pairs_matrix",
    "comparison_sentences",
    "comparison_summary",
    "comparison_table",
    "group_figure",
    "group_noun",
    "group_section",
    "group_tables",
    "interval_cell",
    "interval_table",
    "run_statistics",
    "significance_note",
]


def run_statistics(evaluation: Evaluation) -> Statistics:
    """:func:`agentmemory.analysis.statistics.evaluation_statistics` with the run's seed: the artifact's ``statistics``."""
    return evaluation_statistics(evaluation, seed=evaluation.seed)


def _head(statistics: Statistics) -> str:
    pct = round(statistics.confidence * 100)
    return (
        f"{pct}% percentile-bootstrap intervals ({statistics.n_resamples} resamples of the queries, "
        f"seed {statistics.seed})"
    )


def interval_table(evaluation: Evaluation, statistics: Statistics) -> Table:
    """One row per retriever: every measure's headline mean with its bootstrap interval.

    The rows are :func:`agentmemory.analysis.text_tables.interval_rows`.
    """
    measures = list(statistics.measures)
    caption = f"{_head(statistics)} over {statistics.queries} queries"
    if statistics.excluded_groups:
        caption += "; left out of these means: " + ", ".join(statistics.excluded_groups)
    return Table(pd.DataFrame(interval_rows(evaluation, statistics), columns=["System", *measures]), caption)


def group_tables(evaluation: Evaluation, statistics: Statistics) -> list[Table]:
    """Every measure per query group with intervals: one table of the headline groups, one of the excluded groups.

    Rows are group x retriever (groups sorted), :func:`agentmemory.analysis.text_tables.group_rows`;
    ``queries`` is the group's number of judged queries.  The excluded
    groups' table (for LoCoMo, ``5 adversarial``) comes second and only when
    there is one; with no query groups at all, one table says so.  A collection with knowledge updates
    (BEAM) gets :func:`agentmemory.report.knowledge_update.knowledge_update_tables` after them.
    """
    columns = ["group", "queries", "System", *map(column_name, statistics.measures)]
    if not statistics.groups:
        return [Table(pd.DataFrame(columns=columns), "No query has a group: there is nothing to break down.")]
    tables = [
        Table(
            pd.DataFrame(group_rows(evaluation, statistics, in_headline=True), columns=columns),
            f"Groups in the headline means: every measure with its {_head(statistics)}",
        )
    ]
    excluded = group_rows(evaluation, statistics, in_headline=False)
    if excluded:
        tables.append(
            Table(
                pd.DataFrame(excluded, columns=columns),
                "Shown separately, left out of the headline means: " + ", ".join(sorted(statistics.excluded_groups)),
            )
        )
    return tables + knowledge_update_tables(evaluation, statistics)  # BEAM's knowledge updates; [] for the others


GROUP_NOUNS = {"locomo": "category", "longmemeval": "question type", "beam": "ability"}
"""What a query group is called in each format's own words (any other format: ``group``)."""


def group_noun(evaluation: Evaluation) -> str:
    """``category`` (LoCoMo), ``question type`` (LongMemEval), ``ability`` (BEAM), else ``group``."""
    return GROUP_NOUNS.get(evaluation.collection.format or "", "group")


def group_figure(evaluation: Evaluation, statistics: Statistics, *, number: int) -> Png | Markdown:
    """Figure ``number``: per query group, every system's headline-measure mean with its 95% interval, side by
    side (groups left out of the headline means last, marked); a line saying so when there is nothing to draw."""
    measure = headline_measure(evaluation, statistics)
    noun = group_noun(evaluation)
    if measure is None or not statistics.groups:
        return Markdown(f"Figure {number}: no query has a {noun}, so there is nothing to draw.")
    excluded = set(statistics.excluded_groups)
    groups = sorted(statistics.groups, key=lambda g: (g in excluded, g))
    shown = {g: f"{g} (left out)" if g in excluded else g for g in groups}
    colours = {r.name: i for i, r in enumerate(evaluation.results)}
    ordered = sorted(evaluation.results, key=lambda r: r.name != statistics.baseline)
    rows = [
        (
            r.label,
            colours[r.name],
            {(shown[g], measure): statistics.groups[g].intervals[r.name].get(measure) for g in groups},
        )
        for r in ordered
    ]
    return draw_groups([shown[g] for g in groups], rows, [measure], number=number, noun=noun)


def group_section(evaluation: Evaluation, statistics: Statistics, *, number: int) -> list[Png | Markdown | Table]:
    """The per-group section: :func:`group_figure`, then :func:`group_tables` (its numbers and every other
    measure; folded when long)."""
    tables = [replace(t, fold=True) if isinstance(t, Table) else t for t in group_tables(evaluation, statistics)]
    return [group_figure(evaluation, statistics, number=number), *tables]


def pairs_matrix(evaluation: Evaluation, statistics: Statistics) -> PairedMatrix:
    """:func:`agentmemory.analysis.paired_matrix.paired_matrix` of the run, with the systems' labels."""
    return paired_matrix(statistics, {r.name: r.label for r in evaluation.results})


def comparison_matrix(matrix: PairedMatrix, *, number: int | None = None, fewer: bool = False) -> Table:
    """Every pair of systems (rows, first minus second) on every measure of the comparison table (columns): the
    mean paired difference, its interval, the deciding p-value, ``*`` where significant.  The numbers behind
    :func:`agentmemory.report.figures.comparison_heatmap` (Figure ``number``, when given, in the caption).
    ``fewer``: a test over fewer queries than the headline's (where both systems have a value) says over how many."""
    columns = ["pair (first − second)", *(column_name(m) for m in matrix.measures)]
    rows = [
        [matrix.row_label(row), *(matrix.text(row, m, fewer=fewer) for m in matrix.measures)]
        for row in range(len(matrix.rows))
    ]
    lower = [m for m in matrix.measures if lower_is_better(m)]
    return Table(pd.DataFrame(rows, columns=columns), matrix_caption(matrix, lower, number=number), fold=True)


def comparison_summary(matrix: PairedMatrix) -> Markdown:
    """:func:`agentmemory.analysis.paired_matrix.matrix_summary`: what the matrix allows, in a few sentences."""
    return Markdown(matrix_summary(matrix))


def comparison_table(evaluation: Evaluation, statistics: Statistics) -> Table:
    """Every paired comparison: measure, pair, mean difference with its interval, p, Holm-adjusted p, verdict.

    The verdict reads the
    Holm-adjusted p-value when several pairs are compared (the plain one
    otherwise) against ``alpha``; when the smallest attainable p-value
    exceeds ``alpha`` it says so instead.  A test over fewer queries than the
    headline (a measure with no value on some, ``tokens@first``: the queries
    where both systems have one) says over how many.
    """
    alpha = statistics.alpha
    labels = {r.name: r.label for r in evaluation.results}
    rows = []
    for measure, comparisons in statistics.comparisons.items():
        several = len(comparisons) > 1
        for c in comparisons:
            test = c.test
            ci = test.effect_ci
            d = visible_decimals(test.mean_difference, ci.low, ci.high)
            interval = "all equal" if ci.degenerate else f"[{ci.low:.{d}f}, {ci.high:.{d}f}]"
            decisive = c.p_holm if several else test.p_value
            if test.smallest_p_value > alpha:
                verdict = f"cannot be significant (smallest p {format_p(test.smallest_p_value)})"
            elif decisive <= alpha:
                verdict = f"significant at {alpha:g}"
            else:
                verdict = f"not significant at {alpha:g}"
            over = f" (over {test.n} queries with both values)" if test.n != statistics.queries else ""
            rows.append(
                [
                    measure,
                    f"{labels[c.a]} - {labels[c.b]}{over}",
                    f"{test.mean_difference:.{d}f}",
                    interval,
                    format_p(test.p_value),
                    format_p(c.p_holm) if several else "-",
                    verdict,
                ]
            )
    columns = ["measure", "difference", "mean", "95% interval", "p", "Holm p", "verdict"]
    return Table(
        pd.DataFrame(rows, columns=columns),
        f"Paired permutation tests over {statistics.queries} queries (two-sided, alpha = {alpha:g})",
    )


def comparison_sentences(evaluation: Evaluation, statistics: Statistics, measures: list[str] | None = None) -> Markdown:
    """Every comparison in one brief sentence each (:func:`agentmemory.analysis.prose.describe_comparison` with ``brief``),
    after one sentence saying what tests over these queries can show (:func:`agentmemory.analysis.prose.comparisons_preface`)."""
    labels = {r.name: r.label for r in evaluation.results}
    chosen = statistics.measures if measures is None else measures
    lines = []
    for m in chosen:
        rows = statistics.comparisons.get(m, ())
        for c in rows:
            sentence = describe_comparison(
                c.test,
                name_a=labels[c.a],
                name_b=labels[c.b],
                measure=m,
                alpha=statistics.alpha,
                adjusted_p=c.p_holm if len(rows) > 1 else None,
                brief=True,
            )
            lines.append(f"- {sentence}")
    if not lines:
        return Markdown("No comparison: fewer than two systems, or no query.")
    return Markdown(comparisons_preface(statistics) + "\n\n" + "\n".join(lines))


def significance_note(evaluation: Evaluation, statistics: Statistics) -> Markdown:
    """What the tests can and cannot show here, computed from the numbers.

    States the number of queries ``n``, the ``2**n`` sign patterns of the
    exact test and the smallest attainable two-sided p-value (``2 / 2**n``,
    or ``2 / (resamples + 1)`` with random flips); whether it is above
    ``alpha`` (then no difference can be significant, whatever the data);
    the widest and narrowest non-degenerate interval of the headline means;
    the largest absolute mean difference and its interval; and how many
    comparisons the test (Holm-adjusted when several pairs) finds significant.
    """
    n = statistics.queries
    alpha = statistics.alpha
    comparisons = statistics.all_comparisons()
    if n == 0 or not comparisons:
        return Markdown(
            f"- **Nothing to compare:** {n} headline {'query' if n == 1 else 'queries'} and "
            f"{len(evaluation.results)} {'retriever' if len(evaluation.results) == 1 else 'retrievers'}; "
            "a paired test needs two retrievers and at least one query."
        )
    first = comparisons[0][1].test
    smallest = first.smallest_p_value
    lines = []
    if first.exact:
        lines.append(
            f"- **{n} queries:** the paired sign-flip test enumerates all 2^{n} = {2**n} ways of swapping "
            f"the two retrievers' values query by query; the most extreme gives two-sided "
            f"p = 2/{2**n} = {format_p(smallest)}."
        )
    else:
        lines.append(
            f"- **{n} queries:** the paired test draws {statistics.n_resamples} random sign flips; the "
            f"smallest two-sided p-value it can give is 2/({statistics.n_resamples} + 1) = {format_p(smallest)}."
        )
    if smallest > alpha:
        lines.append(
            f"- {format_p(smallest)} is above alpha = {alpha:g}, so **no difference can be significant here, whatever "
            f"the retrievers do**: even a retriever that scores higher on every one of the {n} queries gets "
            f"p = {format_p(smallest)}. This is a property of the number of queries, not of the retrievers."
        )
    widths = []
    for r in evaluation.results:
        for m, cell in statistics.intervals[r.name].items():
            if cell is not None and not cell.degenerate:
                widths.append((cell.high - cell.low, r.label, m, cell))
    if widths:
        widths.sort(key=lambda item: (-item[0], item[1], item[2]))
        wide, narrow = widths[0], widths[-1]
        lines.append(
            f"- **Interval widths:** the widest 95% interval of a headline mean is {wide[1]}'s {wide[2]}, "
            f"[{wide[3].low:.2f}, {wide[3].high:.2f}] (width {wide[0]:.2f}); the narrowest is "
            f"{narrow[1]}'s {narrow[2]}, [{narrow[3].low:.2f}, {narrow[3].high:.2f}] "
            f"(width {narrow[0]:.2f}). Each query weighs 1/{n} = {1 / n:.3g} in a mean."
        )
    degenerate = [
        f"{r.label} {m}"
        for r in evaluation.results
        for m, c in statistics.intervals[r.name].items()
        if c is not None and c.degenerate
    ]
    if degenerate:
        lines.append(
            f"- **Same value on every query** ({', '.join(degenerate)}): the interval collapses to a point; that "
            "is no evidence of certainty, only that these queries did not vary."
        )
    measure, largest = max(comparisons, key=lambda item: abs(item[1].test.mean_difference))
    ci = largest.test.effect_ci
    d = visible_decimals(largest.test.mean_difference, ci.low, ci.high)
    where = "all paired differences equal" if ci.degenerate else f"95% interval [{ci.low:.{d}f}, {ci.high:.{d}f}]"
    labels = {r.name: r.label for r in evaluation.results}
    lines.append(
        f"- **Largest difference:** {labels[largest.a]} - {labels[largest.b]} on {measure}, "
        f"{largest.test.mean_difference:.{d}f} ({where}), p = {format_p(largest.test.p_value)}."
    )
    several = any(len(rows) > 1 for rows in statistics.comparisons.values())
    significant = sum(
        1
        for rows in statistics.comparisons.values()
        for c in rows
        if (c.p_holm if len(rows) > 1 else c.test.p_value) <= alpha
    )
    correction = (
        " after Holm's correction across the retriever pairs of each measure"
        if several
        else " (one pair per measure, so no correction across pairs)"
    )
    lines.append(
        f"- **Verdict:** {significant} of {len(comparisons)} comparisons significant at {alpha:g}{correction}. "
        "The measures are read on the same queries and move together, so they are not separate pieces of "
        "evidence. A comparison that is not significant means these queries do not show a difference; it is "
        "not evidence that there is none."
    )
    return Markdown("\n".join(lines))
