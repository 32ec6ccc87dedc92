"""Every paired comparison of an evaluation as one matrix: pairs of systems as rows, measures as columns.

Each cell is one paired permutation test of :attr:`Statistics.comparisons
<agentmemory.analysis.summaries.Statistics.comparisons>` (nothing is
recomputed): the mean paired difference ``a - b`` over the headline
queries, its percentile-bootstrap interval, and the p-value that decides
significance: Holm-adjusted across the pairs of the measure when there are
several pairs (``Comparison.p_holm``), the test's own otherwise.  The
columns are the comparison table's measures
(:attr:`~agentmemory.analysis.summaries.Statistics.shown_measures`: ``RR``
and ``RR@k`` once).  :func:`matrix_summary` says in a few sentences what the
matrix allows one to claim.  The report shows the matrix as a table and a
heat map (:func:`agentmemory.report.stats.comparison_matrix`,
:func:`agentmemory.report.figures.comparison_heatmap`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentmemory.analysis.prose import format_p, signed, visible_decimals
from agentmemory.analysis.significance import smallest_p_value
from agentmemory.analysis.summaries import Statistics

__all__ = ["NO_CELL", "MatrixCell", "PairedMatrix", "cell_text", "matrix_caption", "matrix_summary", "paired_matrix"]

_LISTED = 3  # significant differences named in the summary before "and N more"


@dataclass(frozen=True)
class MatrixCell:
    """One pair on one measure.

    Attributes:
        difference: the mean paired difference, first system minus second.
        low, high: its bootstrap interval; ``None`` when every paired difference was equal (no interval).
        p: the deciding p-value (Holm-adjusted across the measure's pairs when there are several).
        significant: ``p <= alpha`` and the test could reach ``alpha`` at all.
        n: the headline queries the test paired (those where both systems have a value).
    """

    difference: float
    low: float | None
    high: float | None
    p: float
    significant: bool
    n: int = 0  # the queries the test paired (where both systems have a value); 0: not stated


@dataclass(frozen=True)
class PairedMatrix:
    """The matrix of :func:`paired_matrix`: ``cells[(row, measure)]`` for each pair ``rows[row]`` (labels)."""

    rows: tuple[tuple[str, str], ...]
    measures: tuple[str, ...]
    cells: Mapping[tuple[int, str], MatrixCell]
    queries: int
    alpha: float
    confidence: float
    smallest_p: float
    adjusted: bool  # Holm across the pairs of each measure (more than one pair)

    @property
    def comparisons(self) -> int:
        """The cells: every pair on every measure, less those with no query where both systems have a value."""
        return len(self.cells)

    def text(self, row: int, measure: str, *, fewer: bool = False) -> str:
        """One cell as :func:`cell_text` writes it (``fewer``: over how many queries, when fewer than the
        headline's), or :data:`NO_CELL` where the pair was not compared on ``measure``."""
        cell = self.cells.get((row, measure))
        return NO_CELL if cell is None else cell_text(cell, self.queries if fewer else None)

    def row_label(self, row: int) -> str:
        """``"Hybrid RRF − BM25"``: the pair, first minus second."""
        a, b = self.rows[row]
        return f"{a} − {b}"


def paired_matrix(statistics: Statistics, labels: Mapping[str, str]) -> PairedMatrix:
    """The pairs of ``statistics.comparisons`` (``labels``: each system's name to its label, in the evaluation's
    order) on the table's measures.

    The rows are every pair compared on some measure, in the order of ``labels``.  A pair is compared on a
    measure only where both systems have a value on some headline query, so a pair may have no cell on a
    measure (an answer file without retrieval against a retriever on R@k; a retriever without answers on
    Judge): that cell is missing from ``cells``, never another pair's.
    """
    measures = tuple(m for m in statistics.shown_measures if statistics.comparisons.get(m))
    order = {name: i for i, name in enumerate(labels)}
    pairs = sorted(
        {(c.a, c.b) for m in measures for c in statistics.comparisons[m]}, key=lambda p: (order[p[0]], order[p[1]])
    )
    index = {pair: row for row, pair in enumerate(pairs)}
    rows = tuple((labels[a], labels[b]) for a, b in pairs)
    adjusted = len(pairs) > 1
    cells: dict[tuple[int, str], MatrixCell] = {}
    for m in measures:
        for c in statistics.comparisons[m]:
            ci = c.test.effect_ci
            p = c.p_holm if adjusted else c.test.p_value
            cells[(index[(c.a, c.b)], m)] = MatrixCell(
                difference=c.test.mean_difference,
                low=None if ci.degenerate else ci.low,
                high=None if ci.degenerate else ci.high,
                p=p,
                significant=c.test.smallest_p_value <= statistics.alpha and p <= statistics.alpha,
                n=c.test.n,
            )
    smallest = smallest_p_value(statistics.queries, n_resamples=statistics.n_resamples) if statistics.queries else 1.0
    return PairedMatrix(
        rows, measures, cells, statistics.queries, statistics.alpha, statistics.confidence, smallest, adjusted
    )


NO_CELL = "not compared (no query with both values)"
"""A matrix cell of a pair not compared on a measure: no headline query where both systems have a value."""


def cell_text(cell: MatrixCell, queries: int | None = None) -> str:
    """``"−0.09 [−0.13, −0.05] p 0.0006 *"``: the difference, its interval (``all equal`` without one), the
    deciding p-value, and ``*`` where significant (a no-break space after ``p``); ``" (7 queries)"`` after it
    when the test paired fewer than ``queries`` (the headline's) queries."""
    d = visible_decimals(cell.difference, *(() if cell.low is None else (cell.low, cell.high or 0.0)))
    interval = "all equal" if cell.low is None else f"[{signed(cell.low, d)}, {signed(cell.high or 0.0, d)}]"
    star = " *" if cell.significant else ""
    fewer = f" ({cell.n} {'query' if cell.n == 1 else 'queries'})" if queries and 0 < cell.n < queries else ""
    return f"{signed(cell.difference, d)} {interval} p\u00a0{format_p(cell.p)}{star}{fewer}"


def _difference(cell: MatrixCell) -> str:
    """The cell's difference with the decimals that keep it visible (never ``0.00`` for a non-zero one)."""
    return signed(cell.difference, visible_decimals(cell.difference))


def matrix_caption(matrix: PairedMatrix, lower: Sequence[str] = (), *, number: int | None = None) -> str:
    """What the matrix's cells are (``lower``: its measures for which lower is better; ``number``: the figure the
    matrix holds the numbers of)."""
    which = "Holm-adjusted p across the pairs of each measure" if matrix.adjusted else "p of the one pair"
    pct = f"{round(matrix.confidence * 100, 6):g}%"
    behind = f"Numbers behind Figure {number}: paired" if number is not None else "Paired"
    caption = (
        f"{behind} differences over {matrix.queries} headline queries: mean difference [{pct} bootstrap interval], "
        f"{which}; * significant at {matrix.alpha:g}"
    )
    if lower:
        caption += f" (for {', '.join(lower)} a negative difference favours the first system)"
    return caption


def matrix_summary(matrix: PairedMatrix) -> str:
    """A few sentences: what the matrix holds, what these queries can show, what is significant, the largest
    difference, and how not to read it."""
    n, a = matrix.queries, f"{matrix.alpha:g}"
    if not matrix.cells:
        return "No paired comparison: fewer than two systems, or no headline query."
    pairs = len(matrix.rows)
    missing = pairs * len(matrix.measures) - matrix.comparisons
    across = "the pairs compared on each measure" if missing else f"the {pairs} pairs of each measure"
    correction = f"Holm's correction across {across}" if matrix.adjusted else "one pair, no correction"
    but = f", less {missing} where no query has both systems' values" if missing else ""
    text = [
        f"{matrix.comparisons} paired comparisons ({pairs} {'pair' if pairs == 1 else 'pairs'} of systems x "
        f"{len(matrix.measures)} measures{but}) over {n} headline {'query' if n == 1 else 'queries'}, each a "
        f"two-sided paired permutation test ({correction})."
    ]
    significant = [(row, m) for (row, m), cell in matrix.cells.items() if cell.significant]
    floor = min(1.0, matrix.smallest_p * pairs) if matrix.adjusted else matrix.smallest_p  # Holm's first step
    if floor > matrix.alpha:
        after = f", {format_p(floor)} after Holm's correction over {pairs} pairs" if matrix.adjusted else ""
        text.append(
            f"With {n} queries no p-value can fall below {format_p(matrix.smallest_p)}{after}, so none of them can be "
            f"significant at {a}, whatever the systems do: the matrix describes these queries, nothing more."
        )
    elif significant:
        named = [
            f"{matrix.row_label(row)} on {m} ({_difference(matrix.cells[(row, m)])})"
            for row, m in significant[:_LISTED]
        ]
        more = f", and {len(significant) - _LISTED} more" if len(significant) > _LISTED else ""
        verb = "is" if len(significant) == 1 else "are"
        text.append(f"{len(significant)} of them {verb} significant at {a} (marked *): {', '.join(named)}{more}.")
    else:
        text.append(f"None is significant at {a}: these queries do not show a difference between any two systems.")
    (row, m), cell = max(matrix.cells.items(), key=lambda item: (abs(item[1].difference), -item[0][0]))
    d = visible_decimals(cell.difference, *(() if cell.low is None else (cell.low, cell.high or 0.0)))
    interval = (
        "every query the same"
        if cell.low is None
        else f"interval [{signed(cell.low, d)}, {signed(cell.high or 0.0, d)}]"
    )
    text.append(f"The largest difference is {matrix.row_label(row)} on {m}, {signed(cell.difference, d)} ({interval}).")
    text.append(
        "The measures are read on the same queries and move together, so several significant measures of one pair "
        "are one finding, not several; a difference that is not significant is not evidence that there is none."
    )
    return " ".join(text)
