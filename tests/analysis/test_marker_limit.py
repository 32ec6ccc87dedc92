"""When no marker of a comparison table can appear: too few queries, or too few resamples for Holm's correction, and
how many resamples would suffice."""

from __future__ import annotations

import pytest

from agentmemory import evaluate
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.prose import marker_limit, resamples_warning
from agentmemory.analysis.significance import holm, resamples_for_marker, smallest_p_value
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError

# examples/grid.toml copied to 20 BM25 settings: 19 against the baseline x 6 measures (P, R, RR@k, nDCG, AP,
# Success@1) in the table's Holm family, at the example's n_resamples.
SETTINGS, MEASURES, EXAMPLE_RESAMPLES = 20, 6, 2000
COMPARISONS = (SETTINGS - 1) * MEASURES


@pytest.mark.parametrize(
    ("queries", "comparisons", "alpha", "needed"),
    [
        (50, COMPARISONS, 0.05, 4559),  # 2 * 114 / 0.05 = 4560 = n + 1
        (50, 50, 0.05, 1999),  # what the example's 2000 resamples allow: 50 comparisons
        (50, 51, 0.05, 2039),
        (50, 1, 0.05, 39),  # 2 / 40 = 0.05, not above alpha
        (6, 1, 0.05, 39),  # 39 < 2**6: random flips still
        (13, COMPARISONS, 0.05, 4559),  # 4559 < 2**13 = 8192
        (12, COMPARISONS, 0.05, None),  # exact: 2 / 4096 * 114 = 0.056 > 0.05, whatever the resamples
        (5, 1, 0.05, None),  # 2 / 32 = 0.0625
    ],
)
def test_resamples_for_marker_is_the_exact_threshold(queries, comparisons, alpha, needed) -> None:
    """The fewest resamples for which Holm's smallest adjusted p-value reaches alpha (None: the queries are too few);
    one fewer does not reach it, computed the way smallest_p_value and holm compute."""
    assert resamples_for_marker(queries, comparisons, alpha) == needed
    if needed is not None:
        reached = holm({str(i): smallest_p_value(queries, n_resamples=needed) for i in range(comparisons)})
        assert max(reached.values()) <= alpha
        if needed > 1:
            short = holm({str(i): smallest_p_value(queries, n_resamples=needed - 1) for i in range(comparisons)})
            assert min(short.values()) > alpha


def test_resamples_for_marker_refuses_bad_arguments() -> None:
    with pytest.raises(ParameterError, match=r"^comparisons: 0 \(int\) is less than 1"):
        resamples_for_marker(50, 0, 0.05)
    with pytest.raises(ParameterError, match=r"^alpha: 1.5 \(float\) is not strictly between 0 and 1; use e.g. 0.05$"):
        resamples_for_marker(50, 3, 1.5)


@pytest.mark.parametrize(
    ("queries", "comparisons", "n_resamples", "text"),
    [
        (
            50,
            COMPARISONS,
            EXAMPLE_RESAMPLES,
            "With 2000 resamples the smallest attainable p-value is 0.001, 0.11 after Holm's correction over 114 "
            "comparisons, so no marker can appear, whatever the systems do; 4559 resamples or more would allow one.",
        ),
        (50, COMPARISONS, 4559, ""),
        (50, COMPARISONS, 10_000, ""),
        (
            50,
            3,
            20,
            "With 20 resamples the smallest attainable p-value is 0.0952, so no marker can appear, whatever the "
            "systems do; 119 resamples or more would allow one.",
        ),
        (
            5,
            4,
            10_000,
            "With 5 queries the smallest attainable p-value is 0.0625, so no marker can appear, whatever the systems do.",
        ),
        (
            6,
            5,
            10_000,
            "With 6 queries the smallest attainable p-value is 0.0312, 0.16 after Holm's correction over 5 comparisons, "
            "so no marker can appear, whatever the systems do.",
        ),
        (
            12,
            COMPARISONS,
            2000,
            "With 12 queries the smallest attainable p-value is 0.000488, 0.0557 after Holm's "
            "correction over 114 comparisons, so no marker can appear, whatever the systems do.",
        ),
        (6, 1, 10_000, ""),
        (6, 0, 10_000, ""),
    ],
)
def test_marker_limit_names_the_queries_or_the_resamples(queries, comparisons, n_resamples, text) -> None:
    """Too few queries: the exact test's smallest p-value (more resamples cannot help); too few resamples: theirs,
    and how many would suffice; "" when a marker can appear."""
    assert marker_limit(queries, comparisons, n_resamples, 0.05) == text


@pytest.fixture(scope="module")
def settings():
    """20 BM25 settings (k1 x b, default among them) on 50 synthetic queries, with Success@1 as in the example."""
    collection = synthetic_collection(seed=0, n_entries=200, n_queries=50, mismatch_rate=0.2)
    specs = [f"bm25[k1={k1},b={b}]" for k1 in (0.6, 0.9, 1.2, 1.5, 2.0) for b in (0.25, 0.5, 0.75, 1.0)]
    return evaluate(collection, specs, k=5, seed=7, measures="Success@1")


def test_the_table_of_twenty_settings_warns_at_the_example_resamples(settings) -> None:
    """examples/grid.toml's n_resamples over 20 settings: the table shows no marker and its notation says why and how
    many resamples would do; resamples_warning says it for a grid; at 4559 resamples neither does."""
    statistics = evaluation_statistics(settings, seed=7, n_resamples=EXAMPLE_RESAMPLES, baseline="bm25", pairs=False)
    table = comparison_table(settings, statistics)
    assert table.comparisons == COMPARISONS and table.n_resamples == EXAMPLE_RESAMPLES
    assert not any(table.marker(name, m) for name, _, _ in table.systems for m in table.measures)
    assert marker_limit(50, COMPARISONS, EXAMPLE_RESAMPLES, 0.05) in table.notation()
    assert resamples_warning(statistics) == (
        "n_resamples = 2000 allows no marker in the comparison table: the smallest attainable p-value, "
        "2/(2000 + 1), times Holm's 114 comparisons is above alpha = 0.05; set [statistics] n_resamples to 4559 or more"
    )
    enough = evaluation_statistics(settings, seed=7, n_resamples=4559, baseline="bm25", pairs=False)
    assert resamples_warning(enough) is None
    assert "resamples" not in comparison_table(settings, enough).notation()


def test_too_few_queries_is_not_a_resamples_warning() -> None:
    """5 queries: no number of resamples helps, so resamples_warning says nothing (the notation names the queries)."""
    collection = synthetic_collection(seed=1, n_entries=16, n_queries=5)
    evaluation = evaluate(collection, "bm25,tags", k=5, seed=7)
    statistics = evaluation_statistics(evaluation, seed=7, n_resamples=10)
    assert resamples_warning(statistics) is None
    assert (
        "With 5 queries the smallest attainable p-value is 0.0625"
        in comparison_table(evaluation, statistics).notation()
    )
