"""The MRR-versus-recall explanation is written from the data, and changes with it.

Three cases, each checked on real runs: MRR = 1 with recall < 1 (the seed's
BM25), recall = 1 (the seed's tag scorer; and BM25 at k = 4 on the garden
collection, where MRR < 1 all the same), and MRR < 1 (the garden collection
at k = 3).  Every reason is cross-checked against an independent source:
the tokeniser for words, the entries' tags for tags, the QueryResult for ranks.
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO_ROOT, write_collection

from agentmemory import evaluate, load_collection
from agentmemory.report.explain import CASES, explain_run, mrr_vs_recall
from agentmemory.tokenize import normalize_tag, tokenize

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"


@pytest.fixture(scope="module")
def garden():
    return load_collection(GARDEN)


def _unique_tokens(text):
    return tuple(dict.fromkeys(tokenize(text)))


def test_seed_bm25_mrr_one_recall_below_one(seed_evaluation, notes):
    """Seed, BM25: one miss (q1 misses m10, which shares no query word), yet every first hit is relevant."""
    run = explain_run(seed_evaluation)
    bm25 = run.retriever("bm25")
    assert bm25.case == "mrr_one_recall_below_one"
    assert (bm25.mrr, bm25.recall) == (1.0, 0.9)
    [miss] = bm25.misses
    assert (miss.query_id, miss.entry_id, miss.score, miss.rank) == ("q1", "m10", 0.0, None)
    query = next(q for q in notes.queries if q.id == "q1")
    assert miss.lacking == _unique_tokens(query.text)
    assert not set(miss.lacking) & set(tokenize(notes.entry("m10").text))
    assert miss.shared == ()
    assert all(f.relevant and f.rr == 1.0 for f in bm25.first_hits)
    assert [f.entry_id for f in bm25.first_hits] == [
        r.hits[0].entry_id for r in seed_evaluation.result("bm25").per_query
    ]


def test_seed_tags_recall_one(seed_evaluation):
    """Seed, tag scorer: nothing missed and every first hit relevant."""
    tags = explain_run(seed_evaluation).retriever("tags")
    assert tags.case == "recall_one"
    assert tags.misses == () and tags.wrong_first == ()


def test_seed_markdown_says_why(seed_evaluation):
    """The seed's text names the miss, the words m10 lacks, each first hit, and RR = 1."""
    text = mrr_vs_recall(seed_evaluation).text
    assert text.startswith(
        "In this run, BM25 has MRR 1.00 with mean recall@5 0.90; Tag scorer has MRR 1.00 with mean recall@5 1.00."
    )
    assert '- q1 "What can Maya eat when we go out for dinner?" missed **m10**' in text
    assert (
        "it contains none of the query words ('what', 'can', 'maya', 'eat', 'when', 'we', 'go', 'out', 'for', 'dinner')"
        in text
    )
    assert "BM25 never returns it, at any k" in text
    assert "Every query's first hit was relevant (q1 → m01, q2 → m02, q3 → m03, q4 → m12, q5 → m05)" in text
    assert "every reciprocal rank is 1" in text
    assert "**Recall = 1.00.** Every relevant entry of every query is in Tag scorer's top 5" in text


def test_garden_k3_mrr_below_one(garden):
    """Garden, k = 3: BM25's first hit for t1 is g06 (not relevant), and g04 ranks 4th; the tag scorer has no tags for t3."""
    evaluation = evaluate(garden, ("bm25", "tags"), k=3, seed=7)
    run = explain_run(evaluation)
    bm25 = run.retriever("bm25")
    assert bm25.case == "mrr_below_one" and bm25.mrr == 0.875
    [miss] = bm25.misses
    t1 = evaluation.result("bm25").per_query[0]
    assert (miss.query_id, miss.entry_id, miss.rank, miss.tie) == ("t1", "g04", 4, False)
    assert miss.kth_score == t1.hits[2].score and miss.score < miss.kth_score
    query_tokens = _unique_tokens(t1.text)
    entry_tokens = set(tokenize(garden.entry("g04").text))
    assert miss.lacking == tuple(t for t in query_tokens if t not in entry_tokens)
    assert miss.shared == tuple(t for t in query_tokens if t in entry_tokens) == ("water",)
    [wrong] = bm25.wrong_first
    assert (wrong.query_id, wrong.entry_id, wrong.first_relevant_rank, wrong.rr) == ("t1", "g06", 2, 0.5)

    tags = run.retriever("tags")
    assert tags.case == "mrr_below_one" and tags.mrr == 0.625
    [miss] = tags.misses
    assert (miss.query_id, miss.entry_id, miss.score, miss.rank) == ("t3", "g09", 0.0, None)
    assert [(f.query_id, f.entry_id, f.rr) for f in tags.wrong_first] == [("t2", "g05", 0.5), ("t3", None, 0.0)]

    text = run.markdown()
    assert (
        "In this run, BM25 has MRR 0.88 with mean recall@3 0.88; Tag scorer has MRR 0.62 with mean recall@3 0.75."
        in text
    )
    assert "**MRR below 1 (0.88).** For 1 of 4 queries the first hit was not relevant" in text
    assert "its first hit **g06**" in text and "so RR = 1/2 = 0.50" in text
    assert "ranks 4th of 10, below the cutoff k = 3" in text
    assert "the query has no tags (none given, and no indexed tag is spelled out in its text)" in text
    assert "(it ties with g05 at 1.00; ties go to the higher entry id)" in text
    assert "Tag scorer returned nothing (every entry scores 0), so RR = 0." in text
    assert "Every query's first hit was relevant" not in text


def test_garden_k4_recall_one_but_mrr_below_one(garden):
    """Garden, k = 4: BM25 finds every relevant entry (recall 1) but t1's first hit is wrong, so MRR < 1."""
    evaluation = evaluate(garden, ("bm25",), k=4, seed=7)
    bm25 = explain_run(evaluation).retriever("bm25")
    assert (bm25.recall, bm25.mrr, bm25.case, bm25.misses) == (1.0, 0.875, "mrr_below_one", ())
    text = mrr_vs_recall(evaluation).text
    assert "**Recall = 1.00.**" in text
    assert "Recall is 1.00 all the same: every relevant entry made the top 4, just not first." in text


def test_tie_at_cutoff_is_named(notes):
    """Seed tag scorer at k = 1: m01 ties with m10 at the cutoff and the id tie-break left it out."""
    evaluation = evaluate(notes, ("tags",), k=1, seed=7)
    tags = explain_run(evaluation).retriever("tags")
    assert tags.case == "mrr_one_recall_below_one"
    q1 = next(m for m in tags.misses if m.query_id == "q1")
    assert (q1.entry_id, q1.rank, q1.tie, q1.score, q1.kth_score) == ("m01", 2, True, 2.0, 2.0)
    assert q1.shared == ("diet", "food") and q1.lacking == ()
    text = mrr_vs_recall(evaluation).text
    assert "it ties with the 1st hit m10 at 2.00, and ties go to the higher entry id, so m10 made the cut" in text
    assert "with 2 relevant entries and k = 1, recall@1 cannot exceed 1/2" in text
    assert "The misses above lower recall and leave MRR untouched." in text


def _entry(i, text, tags):
    return json.dumps({"_id": i, "text": text, "tags": tags})


def test_partial_tag_overlap_and_query_without_relevant_entry(tmp_path):
    """A miss sharing one of two query tags names both; a judged query with no relevant entry is called out."""
    corpus = (
        "\n".join(
            [
                _entry("e1", "alpha beta", ["Red", "Blue"]),
                _entry("e2", "alpha", ["red"]),
                _entry("e3", "gamma", ["green"]),
            ]
        )
        + "\n"
    )
    queries = (
        "\n".join(
            [
                json.dumps({"_id": "qa", "text": "alpha", "tags": ["red", "blue"]}),
                json.dumps({"_id": "qb", "text": "gamma", "tags": ["green"]}),
            ]
        )
        + "\n"
    )
    qrels = "query-id\tcorpus-id\tscore\nqa\te1\t1\nqa\te2\t1\nqb\te3\t0\n"
    collection = load_collection(write_collection(tmp_path / "c", corpus, queries, qrels))
    evaluation = evaluate(collection, ("tags",), k=1, seed=7)
    tags = explain_run(evaluation).retriever("tags")
    [miss] = tags.misses
    assert (miss.entry_id, miss.shared, miss.lacking) == ("e2", ("red",), ("blue",))
    assert set(miss.lacking) == {"red", "blue"} - {normalize_tag(t) for t in collection.entry("e2").tags}
    assert tags.no_relevant == ("qb",)
    assert tags.case == "mrr_below_one"
    text = mrr_vs_recall(evaluation).text
    assert "it has 'red' of the query tags ('blue', 'red'; given with the query) but lacks 'blue'" in text
    assert '- qb "gamma" has no entry judged relevant, so it scores 0 on recall and RR' in text
    assert "the query has no relevant entry at all, so RR = 0." in text


def test_every_retriever_has_exactly_one_case(seed_evaluation, garden):
    """The case is always one of CASES, and agrees with the means."""
    for evaluation in (seed_evaluation, evaluate(garden, k=2, seed=1), evaluate(garden, k=11, seed=1)):
        for r in explain_run(evaluation).retrievers:
            assert r.case in CASES
            assert (r.case == "mrr_below_one") == (r.mrr < 1.0)
            assert (r.case == "recall_one") == (r.recall == 1.0 and r.mrr == 1.0)


def test_explanation_changes_with_k(notes):
    """Other data, other text: k = 5 and k = 1 on the seed fixture give different explanations."""
    five = mrr_vs_recall(evaluate(notes, k=5, seed=7)).text
    one = mrr_vs_recall(evaluate(notes, k=1, seed=7)).text
    assert five != one
    assert "mean recall@1 0.70" in one and "missed **m13**" in one and "missed **m13**" not in five
