"""The statistics in plain English: what a paired test allows one to claim, and no more."""

from __future__ import annotations

from agentmemory.analysis.significance import resamples_for_marker, smallest_p_value
from agentmemory.analysis.summaries import PairedTest, Statistics
from agentmemory.errors import ParameterError

__all__ = [
    "comparisons_preface",
    "describe_comparison",
    "format_p",
    "marker_limit",
    "resamples_warning",
    "signed",
    "visible_decimals",
]


def visible_decimals(*values: float, least: int = 2, most: int = 6) -> int:
    """The fewest decimals (at least ``least``, at most ``most``) at which no non-zero value of ``values`` reads
    as zero: ``visible_decimals(0.0018)`` is 3 (``0.002``), ``visible_decimals(0.12)`` 2."""
    for decimals in range(least, most + 1):
        if all(v == 0 or round(v, decimals) != 0 for v in values):
            return decimals
    return most


def signed(value: float, decimals: int = 2) -> str:
    """``+0.12``, ``−0.12`` (a real minus sign), and ``0.00`` for what is zero at ``decimals`` (never ``-0.00``);
    give ``decimals`` from :func:`visible_decimals` so that a non-zero difference never reads ``0.00``."""
    if round(value, decimals) == 0:
        return f"{0:.{decimals}f}"
    return f"+{value:.{decimals}f}" if value > 0 else f"−{-value:.{decimals}f}"


def format_p(p: float) -> str:
    """A p-value as text: two decimals from 0.1 up, else three significant digits (``0.25``, ``0.0625``, ``0.0499``)."""
    return f"{p:.2f}" if p >= 0.1 else f"{p:.3g}"


def describe_comparison(
    test: PairedTest,
    *,
    name_a: str,
    name_b: str,
    measure: str,
    alpha: float = 0.05,
    adjusted_p: float | None = None,
    brief: bool = False,
) -> str:
    """Plain-English sentences saying what ``test`` allows one to claim, and no more.

    ``brief`` drops what every comparison over the same queries would repeat
    (the smallest attainable p-value, "not evidence that there is none"), for
    a list of comparisons introduced once by :func:`comparisons_preface`.

    Example (5 queries, two-sided)::

        BM25 vs Tag scorer on R@5: mean difference -0.10 (95% CI -0.30 to 0.00),
        paired permutation p = 1.00 over 5 queries; the smallest p-value attainable
        with 5 queries is 0.0625, so no difference can be significant at 0.05.

    Otherwise the sentence ends with either "significant at 0.05: <a> scores
    higher/lower than <b> on these queries" or "not significant at 0.05:
    these queries do not show a difference, which is not evidence that there
    is none".  ``adjusted_p`` (e.g. Holm's, from :func:`holm`) is shown and
    used for the decision when given.  A degenerate interval (all differences
    equal) is called so.  When the bootstrap interval excludes 0 but the
    test is not significant (common with few queries: the percentile
    interval is too narrow), a sentence says so and points to the test.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ParameterError("alpha", alpha, "is not strictly between 0 and 1", "use e.g. 0.05")
    ci = test.effect_ci
    level = f"{round(ci.confidence * 100, 6):g}%"
    if ci.degenerate:
        interval = f"(every paired difference equal; no {level} interval)" if test.n > 1 else "(one query; no interval)"
    else:
        interval = f"({level} CI {ci.low:.2f} to {ci.high:.2f})"
    sides = "" if test.alternative == "two-sided" else f" ({test.alternative})"
    p_text = f"paired permutation{sides} p = {format_p(test.p_value)}"
    if adjusted_p is not None:
        p_text += f" (Holm-adjusted {format_p(adjusted_p)})"
    queries = f"{test.n} quer{'y' if test.n == 1 else 'ies'}"
    head = f"{name_a} vs {name_b} on {measure}: mean difference {test.mean_difference:.2f} {interval}, {p_text} over {queries}"
    decisive = test.p_value if adjusted_p is None else adjusted_p
    if test.smallest_p_value > alpha:
        if brief:
            return f"{head}."
        text = (
            f"{head}; the smallest p-value attainable with {queries} is {format_p(test.smallest_p_value)}, "
            f"so no difference can be significant at {alpha:g}."
        )
    elif decisive <= alpha:
        direction = "higher" if test.mean_difference > 0 else "lower"
        return f"{head}; significant at {alpha:g}: {name_a} scores {direction} than {name_b} on these queries."
    elif brief:
        text = f"{head}; not significant at {alpha:g}."
    else:
        text = (
            f"{head}; not significant at {alpha:g}: these queries do not show a difference, "
            "which is not evidence that there is none."
        )
    if not ci.degenerate and (ci.low > 0 or ci.high < 0) and not brief:
        text += (
            f" The interval excludes 0 but the test does not show a difference: with {queries} the "
            "percentile bootstrap understates the uncertainty; read the test."
        )
    return text


def comparisons_preface(statistics: Statistics) -> str:
    """The sentence said once before a list of brief comparisons (:func:`describe_comparison` with ``brief``)."""
    n = statistics.queries
    queries = f"{n} {'query' if n == 1 else 'queries'}"
    if not n:
        return "There is no headline query to compare on."
    smallest = smallest_p_value(n, n_resamples=statistics.n_resamples)
    a = f"{statistics.alpha:g}"
    if smallest > statistics.alpha:
        return (
            f"Paired permutation tests over the {queries}: the smallest attainable two-sided p-value is "
            f"{format_p(smallest)}, so no difference below can be significant at {a}, whatever the systems do."
        )
    return (
        f"Paired permutation tests over the {queries} (two-sided; Holm-adjusted across the pairs of each measure "
        f"when there are several). Not significant at {a} means these queries do not show a difference, which is "
        "not evidence that there is none."
    )


def marker_limit(queries: int, comparisons: int, n_resamples: int, alpha: float) -> str:
    """The sentence saying that no marker of a comparison table can appear, and why; ``""`` when one can.

    A marker needs Holm's adjusted p-value ``<= alpha``; the smallest it can be is ``comparisons`` times
    :func:`~agentmemory.analysis.significance.smallest_p_value` (capped at 1).  When even the exact test over
    ``queries`` could not get there, the queries are too few and the sentence says so (with the smallest
    attainable p-value, and after Holm's correction when that is what stops it); when more resamples would,
    it names the resamples, the smallest p-value they allow and how many would suffice
    (:func:`~agentmemory.analysis.significance.resamples_for_marker`)::

        With 2000 resamples the smallest attainable p-value is 0.000999, 0.114 after Holm's correction over
        114 comparisons, so no marker can appear, whatever the systems do; 4559 resamples or more would allow one.
    """
    if comparisons < 1 or queries < 1:
        return ""
    smallest = smallest_p_value(queries, n_resamples=n_resamples)
    if min(1.0, comparisons * smallest) <= alpha:
        return ""
    needed = resamples_for_marker(queries, comparisons, alpha)
    if needed is None:
        best = smallest_p_value(queries, n_resamples=2**queries)  # the exact test: no resampling does better
        adjusted = min(1.0, comparisons * best)
        shown = f"{queries} {'query' if queries == 1 else 'queries'}"
        holm_text = (
            "" if best > alpha else f", {format_p(adjusted)} after Holm's correction over {comparisons} comparisons"
        )
        return (
            f"With {shown} the smallest attainable p-value is {format_p(best)}{holm_text}, so no marker can appear, "
            "whatever the systems do."
        )
    adjusted = min(1.0, comparisons * smallest)
    holm_text = (
        "" if smallest > alpha else f", {format_p(adjusted)} after Holm's correction over {comparisons} comparisons"
    )
    return (
        f"With {n_resamples} resamples the smallest attainable p-value is {format_p(smallest)}{holm_text}, so no "
        f"marker can appear, whatever the systems do; {needed} resamples or more would allow one."
    )


def resamples_warning(statistics: Statistics) -> str | None:
    """The sentence saying no marker of the comparison table can appear because of too few resamples, with how
    many would suffice; ``None`` when a marker can appear, or when too few queries, not resamples, prevent it."""
    comparisons = len(statistics.versus_baseline)
    queries = statistics.queries
    if not comparisons or not queries:
        return None
    needed = resamples_for_marker(queries, comparisons, statistics.alpha)
    smallest = smallest_p_value(queries, n_resamples=statistics.n_resamples)
    if needed is None or min(1.0, comparisons * smallest) <= statistics.alpha:
        return None
    return (
        f"n_resamples = {statistics.n_resamples} allows no marker in the comparison table: the smallest attainable "
        f"p-value, 2/({statistics.n_resamples} + 1), times Holm's {comparisons} comparisons is above alpha = "
        f"{statistics.alpha:g}; set [statistics] n_resamples to {needed} or more"
    )
