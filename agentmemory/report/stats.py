"""The statistics section: bootstrap intervals of every mean and the paired comparisons, in words.

Everything here reads :func:`agentmemory.stats.evaluation_statistics` of the
run, seeded by the run's seed (:func:`run_statistics`), so the numbers are
the ones ``eval-results.json`` holds under ``statistics``.  Cells show
``mean [low, high]`` to 2 decimals, as ``agentmemory eval`` prints them
(:func:`agentmemory.tables.interval_table`); a degenerate interval (every
query has the same value) is marked ``(all equal)``, because it says
nothing about uncertainty.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..evaluate import Evaluation
from ..stats import evaluation_statistics
from .display import Markdown, Table

__all__ = [
    "comparison_sentences",
    "comparison_table",
    "group_tables",
    "interval_cell",
    "interval_table",
    "run_statistics",
    "significance_note",
]


def run_statistics(evaluation: Evaluation) -> dict[str, Any]:
    """:func:`agentmemory.stats.evaluation_statistics` with the run's seed: the artifact's ``statistics``."""
    return evaluation_statistics(evaluation, seed=evaluation.seed)


def interval_cell(cell: dict[str, Any] | None) -> str:
    """``"0.81 [0.58, 1.00]"``; ``"1.00 [1.00, 1.00] (all equal)"`` when every query has the same value;
    ``"0.50 (one query)"`` (no interval) for a single query; ``"n/a"`` for none."""
    if cell is None:
        return "n/a"
    if cell["n"] == 1:
        return f"{cell['mean']:.2f} (one query)"
    text = f"{cell['mean']:.2f} [{cell['low']:.2f}, {cell['high']:.2f}]"
    return text + " (all equal)" if cell["degenerate"] else text


def _head(statistics: dict[str, Any]) -> str:
    pct = round(statistics["confidence"] * 100)
    return (
        f"{pct}% percentile-bootstrap intervals ({statistics['n_resamples']} resamples of the queries, "
        f"seed {statistics['seed']})"
    )


def interval_table(evaluation: Evaluation, statistics: dict[str, Any]) -> Table:
    """One row per retriever: every measure's headline mean with its bootstrap interval."""
    measures = statistics["measures"]
    rows = [
        [r.label, *(interval_cell(statistics["intervals"][r.name].get(m)) for m in measures)]
        for r in evaluation.results
    ]
    caption = f"{_head(statistics)} over {statistics['queries']} queries"
    if statistics["excluded_groups"]:
        caption += "; left out of these means: " + ", ".join(statistics["excluded_groups"])
    return Table(pd.DataFrame(rows, columns=["Retriever", *measures]), caption)


def group_tables(evaluation: Evaluation, statistics: dict[str, Any]) -> list[Table]:
    """Every measure per query group with intervals: one table of the headline groups, one of the excluded groups.

    Rows are group x retriever (groups sorted); ``queries`` is the group's
    number of judged queries.  The excluded groups' table (for LoCoMo,
    ``5 adversarial``) comes second and only when there is one; with no
    query groups at all, one table says so.
    """
    measures = statistics["measures"]
    excluded = set(statistics["excluded_groups"])
    parts: dict[bool, list[list[str]]] = {False: [], True: []}
    for group, by_retriever in statistics["groups"].items():
        for r in evaluation.results:
            cells = by_retriever[r.name]
            n = next((c["n"] for c in cells.values() if c is not None), 0)
            parts[group in excluded].append([group, str(n), r.label, *(interval_cell(cells.get(m)) for m in measures)])
    columns = ["group", "queries", "Retriever", *measures]
    if not statistics["groups"]:
        return [Table(pd.DataFrame(columns=columns), "No query has a group: there is nothing to break down.")]
    tables = [
        Table(
            pd.DataFrame(parts[False], columns=columns),
            f"Groups in the headline means: every measure with its {_head(statistics)}",
        )
    ]
    if parts[True]:
        tables.append(
            Table(
                pd.DataFrame(parts[True], columns=columns),
                "Shown separately, left out of the headline means: " + ", ".join(sorted(excluded)),
            )
        )
    return tables


def _p(p: float) -> str:
    return f"{p:.2f}" if p >= 0.1 else f"{p:.3g}"


def comparison_table(evaluation: Evaluation, statistics: dict[str, Any]) -> Table:
    """Every paired comparison: measure, pair, mean difference with its interval, p, Holm-adjusted p, verdict.

    The verdict reads the
    Holm-adjusted p-value when several pairs are compared (the plain one
    otherwise) against ``alpha``; when the smallest attainable p-value
    exceeds ``alpha`` it says so instead.
    """
    alpha = statistics["alpha"]
    labels = {r.name: r.label for r in evaluation.results}
    rows = []
    for measure, comparisons in statistics["comparisons"].items():
        several = len(comparisons) > 1
        for c in comparisons:
            ci = c["effect_ci"]
            interval = "all equal" if ci["degenerate"] else f"[{ci['low']:.2f}, {ci['high']:.2f}]"
            decisive = c["p_holm"] if several else c["p_value"]
            if c["smallest_p_value"] > alpha:
                verdict = f"cannot be significant (smallest p {_p(c['smallest_p_value'])})"
            elif decisive <= alpha:
                verdict = f"significant at {alpha:g}"
            else:
                verdict = f"not significant at {alpha:g}"
            rows.append(
                [
                    measure,
                    f"{labels[c['a']]} - {labels[c['b']]}",
                    f"{c['mean_difference']:.2f}",
                    interval,
                    _p(c["p_value"]),
                    _p(c["p_holm"]) if several else "-",
                    verdict,
                ]
            )
    columns = ["measure", "difference", "mean", "95% interval", "p", "Holm p", "verdict"]
    return Table(
        pd.DataFrame(rows, columns=columns),
        f"Paired permutation tests over {statistics['queries']} queries (two-sided, alpha = {alpha:g})",
    )


def comparison_sentences(statistics: dict[str, Any], measures: list[str] | None = None) -> Markdown:
    """The library's sentence for every comparison (:func:`agentmemory.stats.describe_comparison`), one bullet each."""
    chosen = statistics["measures"] if measures is None else measures
    lines = [f"- {c['sentence']}" for m in chosen for c in statistics["comparisons"].get(m, [])]
    return Markdown("\n".join(lines) if lines else "No comparison: fewer than two retrievers, or no query.")


def significance_note(evaluation: Evaluation, statistics: dict[str, Any]) -> Markdown:
    """What the tests can and cannot show here, computed from the numbers.

    States the number of queries ``n``, the ``2**n`` sign patterns of the
    exact test and the smallest attainable two-sided p-value (``2 / 2**n``,
    or ``2 / (resamples + 1)`` with random flips); whether it is above
    ``alpha`` (then no difference can be significant, whatever the data);
    the widest and narrowest non-degenerate interval of the headline means;
    the largest absolute mean difference and its interval; and how many
    comparisons the test (Holm-adjusted when several pairs) finds significant.
    """
    n = statistics["queries"]
    alpha = statistics["alpha"]
    comparisons = [c for rows in statistics["comparisons"].values() for c in rows]
    if n == 0 or not comparisons:
        return Markdown(
            f"- **Nothing to compare:** {n} headline {'query' if n == 1 else 'queries'} and "
            f"{len(evaluation.results)} {'retriever' if len(evaluation.results) == 1 else 'retrievers'}; "
            "a paired test needs two retrievers and at least one query."
        )
    smallest = comparisons[0]["smallest_p_value"]
    exact = comparisons[0]["exact"]
    lines = []
    if exact:
        lines.append(
            f"- **{n} queries:** the paired sign-flip test enumerates all 2^{n} = {2**n} ways of swapping "
            f"the two retrievers' values query by query; the most extreme gives two-sided "
            f"p = 2/{2**n} = {_p(smallest)}."
        )
    else:
        lines.append(
            f"- **{n} queries:** the paired test draws {statistics['n_resamples']} random sign flips; the "
            f"smallest two-sided p-value it can give is 2/({statistics['n_resamples']} + 1) = {_p(smallest)}."
        )
    if smallest > alpha:
        lines.append(
            f"- {_p(smallest)} is above alpha = {alpha:g}, so **no difference can be significant here, whatever "
            f"the retrievers do**: even a retriever that scores higher on every one of the {n} queries gets "
            f"p = {_p(smallest)}. This is a property of the number of queries, not of the retrievers."
        )
    widths = []
    for r in evaluation.results:
        for m, cell in statistics["intervals"][r.name].items():
            if cell is not None and not cell["degenerate"]:
                widths.append((cell["high"] - cell["low"], r.label, m, cell))
    if widths:
        widths.sort(key=lambda item: (-item[0], item[1], item[2]))
        wide, narrow = widths[0], widths[-1]
        lines.append(
            f"- **Interval widths:** the widest 95% interval of a headline mean is {wide[1]}'s {wide[2]}, "
            f"[{wide[3]['low']:.2f}, {wide[3]['high']:.2f}] (width {wide[0]:.2f}); the narrowest is "
            f"{narrow[1]}'s {narrow[2]}, [{narrow[3]['low']:.2f}, {narrow[3]['high']:.2f}] "
            f"(width {narrow[0]:.2f}). Each query weighs 1/{n} = {1 / n:.2f} in a mean."
        )
    degenerate = [
        f"{r.label} {m}"
        for r in evaluation.results
        for m, c in statistics["intervals"][r.name].items()
        if c is not None and c["degenerate"]
    ]
    if degenerate:
        lines.append(
            f"- **Same value on every query** ({', '.join(degenerate)}): the interval collapses to a point; that "
            "is no evidence of certainty, only that these queries did not vary."
        )
    largest = max(comparisons, key=lambda c: abs(c["mean_difference"]))
    ci = largest["effect_ci"]
    where = "all paired differences equal" if ci["degenerate"] else f"95% interval [{ci['low']:.2f}, {ci['high']:.2f}]"
    labels = {r.name: r.label for r in evaluation.results}
    measure = next(m for m, rows in statistics["comparisons"].items() if largest in rows)
    lines.append(
        f"- **Largest difference:** {labels[largest['a']]} - {labels[largest['b']]} on {measure}, "
        f"{largest['mean_difference']:.2f} ({where}), p = {_p(largest['p_value'])}."
    )
    several = any(len(rows) > 1 for rows in statistics["comparisons"].values())
    significant = sum(
        1
        for rows in statistics["comparisons"].values()
        for c in rows
        if (c["p_holm"] if len(rows) > 1 else c["p_value"]) <= alpha
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
