"""The command line's tables: one interval cell and one row computation, shared with the reports."""

from __future__ import annotations

import dataclasses

import pytest

from agentmemory import evaluate
from agentmemory.analysis.statistics import Interval, evaluation_statistics
from agentmemory.analysis.text_tables import (
    group_rows,
    group_table,
    interval_cell,
    interval_rows,
    interval_table,
    seed_measures,
)
from agentmemory.datasets.synthetic import synthetic_collection


@pytest.mark.parametrize(
    "interval, text",
    [
        (Interval(low=0.58, high=1.0, mean=0.8125, n=6, confidence=0.95), "0.81 [0.58, 1.00]"),
        (Interval(low=1.0, high=1.0, mean=1.0, n=5, confidence=0.95, degenerate=True), "1.00 [1.00, 1.00] (all equal)"),
        (Interval(low=0.0, high=0.0, mean=0.0, n=2, confidence=0.95, degenerate=True), "0.00 [0.00, 0.00] (all equal)"),
        (Interval(low=0.5, high=0.5, mean=0.5, n=1, confidence=0.95, degenerate=True), "0.50 (one query)"),
        (None, "n/a"),
    ],
    ids=["normal", "all-equal", "all-zero", "one-query", "none"],
)
def test_interval_cell(interval, text):
    """A mean and its interval to 2 decimals; a collapsed interval is marked `(all equal)`, one query has no
    interval at all, and no query shows `n/a`: never a point passed off as certainty."""
    assert interval_cell(interval) == text


def test_the_reports_use_the_same_cell():
    """The report's interval_cell is this one (one formatter for `agentmemory eval` and the reports)."""
    from agentmemory.report import stats

    assert stats.interval_cell is interval_cell


def test_seed_measures_are_measure_values():
    """The seed table's measures, named once: R@k, P@k and RR in the order of its columns."""
    assert seed_measures(5) == ("R@5", "P@5", "RR")
    assert seed_measures(12) == ("R@12", "P@12", "RR")


def test_interval_table_rows_are_the_reports_rows(seed_evaluation):
    """The command line's interval table and the report's DataFrame come from one row computation."""
    from agentmemory.report import stats as report_stats

    statistics = evaluation_statistics(seed_evaluation, seed=7)
    report = report_stats.interval_table(seed_evaluation, statistics).frame
    assert report.values.tolist() == interval_rows(seed_evaluation, statistics)
    assert interval_rows(seed_evaluation, statistics, seed_measures(5)) == [
        ["BM25", "0.90 [0.70, 1.00]", "0.28 [0.20, 0.36]", "1.00 [1.00, 1.00] (all equal)"],
        ["Tag scorer", "1.00 [1.00, 1.00] (all equal)", "0.32 [0.24, 0.40]", "1.00 [1.00, 1.00] (all equal)"],
    ]
    assert interval_table(seed_evaluation, statistics).endswith(
        "| Tag scorer | 1.00 [1.00, 1.00] (all equal) | 0.32 [0.24, 0.40] | 1.00 [1.00, 1.00] (all equal) |"
    )


def test_group_rows_split_by_headline_and_mark_one_query_groups():
    """Group rows: every group, or only those in (or left out of) the headline; a one-query group says so."""
    collection = synthetic_collection(seed=4, n_entries=20, n_queries=4)
    groups = ("solo", "pair", "pair", "left out")
    grouped = dataclasses.replace(
        collection,
        queries=tuple(dataclasses.replace(q, group=g) for q, g in zip(collection.queries, groups)),
        headline_excludes=("left out",),
    )
    evaluation = evaluate(grouped, ["bm25"], k=5)
    statistics = evaluation_statistics(evaluation, seed=2, measures="R@5", n_resamples=200)
    every = group_rows(evaluation, statistics)
    assert [row[:3] for row in every] == [["left out", "1", "BM25"], ["pair", "2", "BM25"], ["solo", "1", "BM25"]]
    assert every[0][3].endswith(" (one query)") and every[2][3].endswith(" (one query)")
    assert group_rows(evaluation, statistics, in_headline=True) == every[1:]
    assert group_rows(evaluation, statistics, in_headline=False) == every[:1]
    assert group_rows(evaluation, statistics, ["R@5", "P@5"])[0][4] == "n/a"
    assert group_table(evaluation, statistics).startswith(
        "By query group:\n\n| Group | Queries | System | R@5 | P@5 | RR |"
    )
