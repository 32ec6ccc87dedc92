"""Caveats are computed from the run: the base of the means, ties at and inside the cutoff, the size warning."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.datasets import load
from agentmemory.report.caveats import caveats, caveats_section, ties_inside_top_k, weight
from agentmemory.report.display import Folded

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"


@pytest.fixture(scope="module")
def sample():
    """The LoCoMo sample (9 questions skipped by the loader), BM25 at k = 5."""
    return evaluate(load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"), ("bm25",), k=5, seed=7)


def test_seed_caveats(seed_evaluation):
    """Seed run: 5 queries over 16 entries, no tie straddling k = 5, tag ties inside the top 5, the size warning."""
    text = caveats(seed_evaluation).text
    assert "5 judged queries over 16 entries, 8 relevant judgments" in text
    assert "Each query weighs 1/5 = 0.2 in every mean" in text
    assert "Queries without judgments: none." in text
    assert "**No tied score straddles the cutoff k = 5** for any retriever" in text
    assert "  - Tag scorer: 3 queries" in text
    folded = caveats_section(seed_evaluation)[1]
    assert isinstance(folded, Folded) and "- **Tag scorer**, ties inside the top 5: q1, q2, q3" in folded.text
    assert "**A fixture this small says nothing general about ranking quality.**" in text
    straddling = [q.query_id for r in seed_evaluation.results for q in r.per_query if q.tie_at_cutoff]
    assert straddling == []


def test_garden_caveats_name_the_tie_at_the_cutoff_and_the_unjudged_query():
    """Garden at k = 3: the tag scorer's t1 has a tie straddling the cutoff (QueryResult.tie_at_cutoff); t5 is unjudged."""
    evaluation = evaluate(load_collection(GARDEN), k=3, seed=7)
    text = caveats(evaluation).text
    assert [q.query_id for q in evaluation.result("tags").per_query if q.tie_at_cutoff] == ["t1"]
    assert (
        "**Tied scores straddle the cutoff k = 3:** the entry just below rank 3 scores the same as the 3rd hit" in text
    )
    assert "  - Tag scorer: 1 query\n" in text
    assert "Queries without judgments, left out of the means (1): t5." in text
    assert "4 judged queries over 11 entries" in text and "1/4 = 0.25" in text


def test_no_ties_inside_top_k_when_scores_are_distinct(notes):
    """BM25's scores on the seed fixture are all distinct in every top 5."""
    evaluation = evaluate(notes, ("bm25",), k=5, seed=7)
    assert not any(ties_inside_top_k(q) for q in evaluation.result("bm25").per_query)
    assert "**No ties inside the top 5:**" in caveats(evaluation).text


def test_a_cutoff_larger_than_every_scope_is_noted(seed_evaluation):
    """k = 100 on the LoCoMo sample (scopes of 16 and 17 entries): a caveat says no ranking fills the top 100, and
    the command line prints the same note; at k = 5 neither says anything."""
    from agentmemory import load
    from agentmemory.analysis.text_tables import system_notes

    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    evaluation = evaluate(sample, "bm25", k=100, seed=7)
    note = (
        "k = 100 is larger than every scope (the largest holds 17 entries): no ranking can fill the top 100, so "
        "P@100 is at most 17/100 = 0.17 and every measure at 100 sees whole rankings."
    )
    assert f"- **A cutoff no scope fills:** {note}" in caveats(evaluation).text
    assert note in system_notes(evaluation)
    assert "A cutoff no scope fills" not in caveats(seed_evaluation).text
    assert not any(line.startswith("k = ") for line in system_notes(seed_evaluation))
    unscoped = evaluate(seed_evaluation.collection, "bm25", k=20, seed=7)
    assert "k = 20 is larger than the collection (it holds 16 entries)" in caveats(unscoped).text


def test_the_weight_of_one_query_never_reads_zero():
    """1/n to three significant digits: a collection of 1,526 queries weighs each 0.000655, never 0.00."""
    assert [weight(n) for n in (1, 5, 15, 1526)] == ["1", "0.2", "0.0667", "0.000655"]


def test_caveats_count_the_skipped_queries_and_list_none_of_them(sample):
    """The skipped questions are listed once, under What was evaluated; the caveats only count them."""
    text = caveats(sample).text
    skipped = sample.collection.skipped
    assert f"- {len(skipped)} queries were skipped by the loader, left out of every number" in text
    assert not any(qid in text for qid, _ in skipped)
