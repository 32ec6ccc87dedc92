"""Ties in the reports: which queries the tie rule decided, and how far each measure could move, from the tie reports."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.datasets import load
from agentmemory.report import ties

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"
SAMPLE_FILE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


@pytest.fixture(scope="module")
def garden3():
    return evaluate(load_collection(GARDEN), ("bm25", "tags"), k=3, seed=7)


@pytest.fixture(scope="module")
def sample():
    return evaluate(load(SAMPLE_FILE), ("bm25", "tags"), k=5, seed=7)


def test_seed_run_has_nothing_to_flag(seed_evaluation):
    """Seed, k = 5: no straddling tie; the tag scorer's ties inside the top 5 join entries judged alike."""
    assert ties.tie_flags(seed_evaluation).text == (
        "- **BM25:** no tied scores straddle the cutoff k = 5, and no tie can move any measure: every value is what "
        "the scores alone give.\n"
        "- **Tag scorer:** no tied scores straddle the cutoff k = 5, and no tie can move any measure (the ties "
        "inside the top 5 of q1, q2, q3 join entries judged alike): every value is what the scores alone give."
    )


def test_garden_flags_the_straddling_query_and_the_ties_inside(garden3):
    """Garden, k = 3: t1 straddles (nothing can move); t2's tie inside the top 3 moves RR, AP and nDCG, and the means."""
    assert ties.tie_flags(garden3).text == (
        "- **BM25:** no tied scores straddle the cutoff k = 3, and no tie can move any measure: every value is what "
        "the scores alone give.\n"
        "- **Tag scorer: tied scores straddle the cutoff k = 3 in 1 of 4 queries** (t1): the tie rule (higher entry "
        "id first), not the score, chose which tied entries made the top k.\n"
        "  - t1 (2 entries tie at score 1.00, 1 of them in the top 3): no measure can move (the tied entries are "
        "judged alike).\n"
        "- **Tag scorer: ties inside the top 3** (not at the cutoff) can move order-sensitive measures in 1 query:\n"
        "  - t2: RR 0.50 (could be 0.50 to 1.00, expected 0.75); RR@3 0.50 (could be 0.50 to 1.00, expected 0.75); "
        "nDCG@3 0.63 (could be 0.63 to 1.00, expected 0.82); AP@3 0.50 (could be 0.50 to 1.00, expected 0.75).\n"
        "  - Over the 4 headline queries, ties could move Tag scorer's means: RR 0.62 (could be 0.62 to 0.75, "
        "expected 0.69); RR@3 0.62 (could be 0.62 to 0.75, expected 0.69); nDCG@3 0.66 (could be 0.66 to 0.75, "
        "expected 0.70); AP@3 0.62 (could be 0.62 to 0.75, expected 0.69)."
    )


def test_sample_flags_every_straddling_query_with_its_ranges(sample):
    """LoCoMo sample: the tag scorer's 7 straddling queries, each with the measures that can move."""
    text = ties.tie_flags(sample).text
    assert (
        "- **Tag scorer: tied scores straddle the cutoff k = 5 in 7 of 8 queries** (conv-1/q0, conv-1/q1, "
        "conv-1/q5, conv-2/q0, conv-2/q1, conv-2/q2, conv-2/q5)"
    ) in text
    assert (
        "  - conv-1/q0 (9 entries tie at score 1.00, 5 of them in the top 5): P@5 0.00 (could be 0.00 to 0.20, "
        "expected 0.11); R@5 0.00 (could be 0.00 to 1.00, expected 0.56);"
    ) in text
    assert "  - conv-1/q5 (8 entries tie at score 1.00, 5 of them in the top 5): no measure can move" in text
    assert "  - No value of BM25 can move, so neither can its means." in text
    assert (
        "Tag scorer's means: P@5 0.03 (could be 0.00 to 0.23, expected 0.11); R@5 0.17 (could be 0.00 to 0.75" in text
    )
    short = ties.tie_flags(sample, per_query=False).text
    assert "  - conv-1/q0" not in short and short.count("\n") == 3


def test_flags_without_tie_reports(notes):
    """A run with ties=False says the analysis was not done rather than claiming there are no ties."""
    evaluation = evaluate(notes, ("bm25",), k=5, seed=7, ties=False)
    assert ties.tie_flags(evaluation).text == (
        "- **BM25:** ties were not analysed (the run used `evaluate(..., ties=False)`)."
    )


def test_moving_measures_and_straddling_queries(garden3):
    """moving_measures keeps min != max only; straddling_queries is tie_at_cutoff in file order."""
    tags = garden3.result("tags")
    assert [q.query_id for q in ties.straddling_queries(tags)] == ["t1"]
    t2 = next(q for q in tags.per_query if q.query_id == "t2")
    assert list(ties.moving_measures(t2)) == ["RR", "RR@3", "nDCG@3", "AP@3"]
    assert ties.tie_cell(t2.ties["RR"]) == "0.50 / 0.75 / [0.50, 1.00]"


def test_tie_table_lists_every_straddling_query(sample):
    """One row per straddling query: the tie group at rank k and each measure as rule / expected / [worst, best]."""
    table = ties.tie_table(sample, "tags")
    assert table.caption.startswith("Tag scorer: the 7 queries whose tied scores straddle the cutoff k = 5; ")
    assert list(table.frame.columns) == [
        "query",
        "group",
        "tie at the cutoff",
        "P@5",
        "R@5",
        "RR",
        "RR@5",
        "nDCG@5",
        "AP@5",
    ]
    assert table.frame.iloc[0, :5].tolist() == [
        "conv-1/q0",
        "4 single-hop",
        "9 at 1.00, 5 in top 5",
        "0.00 / 0.11 / [0.00, 0.20]",
        "0.00 / 0.56 / [0.00, 1.00]",
    ]
    assert ties.tie_table(sample, "bm25").caption.startswith("BM25: the 1 query whose tied scores straddle")


def test_tie_table_when_nothing_straddles(seed_evaluation):
    """No straddling query: an empty table whose caption says so."""
    table = ties.tie_table(seed_evaluation, "tags")
    assert table.caption == "Tag scorer: no tied scores straddle the cutoff k = 5" and len(table.frame) == 0


def test_tie_means_table_is_tie_means(sample):
    """Each row is RetrieverResult.tie_means() of one measure, 4 decimals, with expected - rule."""
    frame = ties.tie_means_table(sample).frame
    assert len(frame) == 12
    row = frame[(frame["System"] == "Tag scorer") & (frame["measure"] == "R@5")].iloc[0].tolist()
    means = sample.result("tags").tie_means()["R@5"]
    assert row == [
        "Tag scorer",
        "R@5",
        format(means["value_under_rule"], ".4f"),
        format(means["expected"], ".4f"),
        format(means["minimum"], ".4f"),
        format(means["maximum"], ".4f"),
        format(means["expected"] - means["value_under_rule"], "+.4f"),
    ]
    assert row[2:] == ["0.1667", "0.3935", "0.0000", "0.7500", "+0.2269"]
