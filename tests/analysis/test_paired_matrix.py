"""The paired matrix when systems have values on different measures (answer files beside a retriever)."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from agentmemory.analysis.paired_matrix import NO_CELL, matrix_summary, paired_matrix
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.datasets import load
from agentmemory.evaluation.runner import evaluate

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
ANSWERS = REPO_ROOT / "fixtures" / "answers"


@pytest.fixture(scope="module")
def mixed():
    """bm25 (rankings, no answers), zep (answers and retrieved memories), mem0 (answers only, two runs)."""
    collection = load(SAMPLE, repair=True)
    evaluation = evaluate(
        collection,
        "bm25",
        answers=[
            f"zep={ANSWERS / 'zep' / 'zep_locomo_grades.json'}",
            f"mem0={ANSWERS / 'mem0-locomo-sample.json'},{ANSWERS / 'mem0-locomo-sample-run2.json'}",
        ],
    )
    statistics = evaluation_statistics(evaluation, seed=7)
    return evaluation, statistics, paired_matrix(statistics, {r.name: r.label for r in evaluation.results})


def test_every_cell_is_its_own_pairs_test(mixed):
    """A pair compared on some measures only keeps its own row: each cell is the test of that row's pair (a pair
    without a value on a measure has no cell, and no other pair's test slides into its place)."""
    evaluation, statistics, matrix = mixed
    assert matrix.rows == (("BM25", "zep"), ("zep", "mem0"))  # BM25 and mem0 share no measure: no row
    labels = {r.name: r.label for r in evaluation.results}
    checked = 0
    for m in matrix.measures:
        tests = {(labels[c.a], labels[c.b]): c.test for c in statistics.comparisons[m]}
        for row, pair in enumerate(matrix.rows):
            cell = matrix.cells.get((row, m))
            assert (cell is None) == (pair not in tests), (pair, m)
            if cell is not None:
                assert (cell.difference, cell.n) == (tests[pair].mean_difference, tests[pair].n)
                checked += 1
    assert checked == matrix.comparisons == len(matrix.cells)
    assert (0, "Judge") not in matrix.cells and (1, "R@5") not in matrix.cells  # BM25 has no verdict, mem0 no ranking
    assert (1, "Judge") in matrix.cells and (0, "R@5") in matrix.cells


def test_missing_cells_and_fewer_queries_are_written_out(mixed):
    """A pair not compared reads as such; a test over fewer than the headline's queries says over how many; the
    summary counts the comparisons made."""
    _, statistics, matrix = mixed
    assert matrix.text(0, "Judge") == NO_CELL == "not compared (no query with both values)"
    retrieval = matrix.cells[(0, "R@5")]
    assert 0 < retrieval.n < statistics.queries
    assert matrix.text(0, "R@5", fewer=True).endswith(f" ({retrieval.n} queries)")
    assert not matrix.text(0, "R@5").endswith("queries)")  # the command line's matrix, as before
    assert not matrix.text(1, "Judge", fewer=True).endswith("queries)")  # both answer every headline question
    pairs, measures = len(matrix.rows), len(matrix.measures)
    missing = pairs * measures - len(matrix.cells)
    assert missing > 0
    assert matrix_summary(matrix).startswith(
        f"{len(matrix.cells)} paired comparisons ({pairs} pairs of systems x {measures} measures, less {missing} "
        f"where no query has both systems' values) over {statistics.queries} headline queries, each a two-sided "
        "paired permutation test (Holm's correction across the pairs compared on each measure)."
    )
