"""The answers report's plots: means with intervals, the same per category, and where each system failed.

Drawn as :mod:`agentmemory.report.figures` draws (a :class:`matplotlib.figure.Figure`, matplotlib's default
style, fixed size and dpi, no metadata: the same PNG bytes on every run).  Each takes the numbers it draws as
plain records, which :mod:`agentmemory.report.answer_report` makes and also prints as a table beside the figure
(nbval does not compare images).  A system keeps its colour in every figure: ``C<i>`` for its place ``i`` in
the evaluation's systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import matplotlib
import matplotlib.style

from agentmemory.analysis.summaries import Interval
from agentmemory.report.display import Png
from agentmemory.report.figures import _RC, _caption, _figure, png_bytes

__all__ = ["FAILURE_PARTS", "FailureBar", "MeansRow", "failure_figure", "group_figure", "means_figure"]


class MeansRow(NamedTuple):
    """One system in a means figure: its label, its colour index, and each measure's interval (``None``: no value)."""

    label: str
    colour: int
    intervals: Mapping[str, Interval | None]


def _point(ax, x: float, y: float, cell: Interval, colour: int, *, horizontal: bool) -> None:
    """A mean with its interval as an error bar (a point alone when the interval is degenerate)."""
    low, high = cell.mean - cell.low, cell.high - cell.mean
    err = [[max(low, 0.0)], [max(high, 0.0)]]
    if horizontal:
        ax.errorbar([x], [y], xerr=err, fmt="o", color=f"C{colour}", capsize=3, markersize=5)
    else:
        ax.errorbar([x], [y], yerr=err, fmt="o", color=f"C{colour}", capsize=3, markersize=4)


def _unit(cells: Iterable[Interval | None]) -> bool:
    """Whether every interval lies within [0, 1] (a share: the axis is drawn from 0 to 1)."""
    return all(cell is None or (cell.low >= 0 and cell.high <= 1) for cell in cells)


def means_figure(rows: Sequence[MeansRow], measures: Sequence[str], baseline: str, *, number: int | None) -> Png:
    """Each system's headline mean with its 95% interval, a panel per measure, systems top to bottom in the
    table's order (the baseline first, its mean a dashed line); ``n/a`` where a system has no value; each
    point labelled with its mean and its questions."""
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 0.8 + 0.42 * len(rows))
        axes = fig.subplots(1, len(measures), sharey=True, squeeze=False)[0]
        for ax, m in zip(axes, measures):
            for y, row in enumerate(rows):
                cell = row.intervals.get(m)
                if cell is None:
                    ax.text(0.02, y, "n/a", va="center", ha="left", fontsize=8, color="grey")
                    continue
                _point(ax, cell.mean, y, cell, row.colour, horizontal=True)
                ax.text(
                    cell.mean,
                    y - 0.2,
                    f"{cell.mean:.3f} ({cell.n})",
                    fontsize=7,
                    ha="center",
                    va="bottom",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
                )
                if row.label == baseline:
                    ax.axvline(cell.mean, color="grey", linestyle="--", linewidth=1)
            if _unit(row.intervals.get(m) for row in rows):
                ax.set_xlim(0, 1.05)
            ax.set_title(f"{m} (mean, 95% interval)")
            ax.grid(axis="x", color="0.9")
        axes[0].set_yticks(range(len(rows)), [r.label + (" (baseline)" if r.label == baseline else "") for r in rows])
        axes[0].set_ylim(len(rows) - 0.5, -0.75)
        data = png_bytes(fig)
    return Png(
        data,
        _caption(
            number,
            f"{' and '.join(measures)} of each system over the headline questions, with 95% intervals "
            f"(dashed: the baseline {baseline}; each label: mean (questions with a value))",
        ),
    )


def group_figure(
    groups: Sequence[str],
    rows: Sequence[tuple[str, int, Mapping[tuple[str, str], Interval | None]]],
    measures: Sequence[str],
    *,
    number: int | None,
    noun: str = "category",
) -> Png:
    """Per category (x) each system's mean with its 95% interval, side by side, a panel per measure.

    ``rows`` are ``(label, colour, intervals)`` with ``intervals[(group, measure)]``; a system without a value in
    a group has no point there.  ``noun`` is what a group is called (``category``, ``question type``, ``ability``).
    """
    width = 0.8 / max(len(rows), 1)
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 3.2)
        axes = fig.subplots(1, len(measures), sharey=True, squeeze=False)[0]
        for ax, m in zip(axes, measures):
            for i, (label, colour, intervals) in enumerate(rows):
                shown = False
                for j, group in enumerate(groups):
                    cell = intervals.get((group, m))
                    if cell is None:
                        continue
                    x = j + (i - (len(rows) - 1) / 2) * width
                    _point(ax, x, cell.mean, cell, colour, horizontal=False)
                    shown = True
                if not shown or m != measures[0]:
                    continue
                ax.plot([], [], "o", color=f"C{colour}", label=label)
            ax.set_xticks(range(len(groups)), [g.replace(" ", "\n", 1) for g in groups])
            if _unit(cells.get((g, m)) for _, _, cells in rows for g in groups):
                ax.set_ylim(-0.05, 1.05)
            ax.set_title(f"{m} per {noun} (mean, 95% interval)")
            if len(groups) > 6 or max(len(g) for g in groups) > 14:  # long labels: slanted, never overlapping
                ax.set_xticks(range(len(groups)), list(groups), rotation=30, ha="right")
            ax.grid(axis="y", color="0.9")
        axes[0].set_ylabel("mean over its questions")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=4, frameon=False)
        data = png_bytes(fig)
    return Png(
        data,
        _caption(number, f"{' and '.join(measures)} per {noun}, each system side by side, with 95% intervals"),
    )


FAILURE_PARTS = (
    ("correct", "correct", "tab:green"),
    ("answering", "answering failure (all evidence found, wrong)", "tab:orange"),
    ("partial", "partial (some evidence found, wrong)", "tab:olive"),
    ("retrieval", "retrieval failure (no evidence found, wrong)", "tab:red"),
)
"""The segments of a failure bar, in order: key, legend text, colour."""


class FailureBar(NamedTuple):
    """One system's placed headline questions split into :data:`FAILURE_PARTS` (counts)."""

    label: str
    counts: Mapping[str, int]

    @property
    def placed(self) -> int:
        return sum(self.counts.values())


def failure_figure(bars: Sequence[FailureBar], k: int, *, number: int | None) -> Png:
    """A stacked horizontal bar per system: the share of its placed questions answered correctly, wrong with all
    its evidence in the top ``k`` (answering), wrong with some (partial), wrong with none (retrieval); each
    segment labelled with its count."""
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 1.1 + 0.42 * len(bars))
        ax = fig.subplots()
        for y, bar in enumerate(bars):
            left = 0.0
            for key, text, colour in FAILURE_PARTS:
                count = bar.counts.get(key, 0)
                share = count / bar.placed if bar.placed else 0.0
                ax.barh(y, share, left=left, color=colour, label=text if y == 0 else None, height=0.6)
                if count:
                    ax.text(left + share / 2, y, str(count), ha="center", va="center", fontsize=8, color="black")
                left += share
        ax.set_yticks(range(len(bars)), [f"{b.label} ({b.placed})" for b in bars])
        ax.set_ylim(len(bars) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"share of the placed headline questions (evidence read in the top {k})")
        fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=2, frameon=False)
        data = png_bytes(fig)
    return Png(
        data,
        _caption(
            number,
            f"where each system's answers went wrong: correct, or wrong with all, some or none of the evidence in "
            f"its top {k} (label: system (questions placed); segments: counts)",
        ),
    )
