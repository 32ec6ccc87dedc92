"""The evaluation runner on the seed fixture: the seed's table, per-query facts, unjudged queries, the log."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentmemory import HashIds, ParameterError, UnknownNameError, evaluate, load_collection
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.text_tables import seed_table, unjudged_note
from agentmemory.evaluation.runner import mean
from agentmemory.metrics import ALIASES, REGISTRY
from agentmemory.retrievers import RETRIEVERS, TagScorer
from agentmemory.tokenize import tokenize

SEED_TABLE = {
    # retriever label: (mean_recall@k, mean_precision@k, MRR) at k = 5, as the seed reports them
    "BM25": (0.9, 0.28, 1.0),
    "Tag scorer": (1.0, 0.32, 1.0),
}


@pytest.mark.parametrize(("label", "expected"), SEED_TABLE.items())
def test_seed_table_from_the_fixture(seed_evaluation, label: str, expected: tuple[float, float, float]) -> None:
    """With k = 5 the code computes the seed's aggregate row for each retriever (to 1e-12)."""
    [row] = [r.aggregate_row() for r in seed_evaluation.results if r.label == label]
    got = (row["mean_recall@k"], row["mean_precision@k"], row["MRR"])
    assert got == pytest.approx(expected, abs=1e-12)


def test_aggregate_row_keys_and_order(seed_evaluation) -> None:
    """Each aggregate row starts with the seed's columns, then the mean of every measure."""
    row = seed_evaluation.result("bm25").aggregate_row()
    assert list(row) == [
        "retriever",
        "mean_recall@k",
        "mean_precision@k",
        "MRR",
        "P@5",
        "R@5",
        "RR",
        "RR@5",
        "nDCG@5",
        "AP@5",
    ]
    assert (row["mean_recall@k"], row["mean_precision@k"], row["MRR"]) == (row["R@5"], row["P@5"], row["RR"])


def test_results_in_the_order_asked(notes) -> None:
    """Results come in the order the retrievers were named."""
    ev = evaluate(notes, "tags,bm25", k=5, seed=7)
    assert [r.name for r in ev.results] == ["tags", "bm25"]
    assert [r.label for r in ev.results] == ["Tag scorer", "BM25"]


# -- per query -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retriever", "recall"),
    [
        ("bm25", {"q1": 0.5, "q2": 1.0, "q3": 1.0, "q4": 1.0, "q5": 1.0}),
        ("tags", {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 1.0, "q5": 1.0}),
    ],
)
def test_recall_per_query(seed_evaluation, retriever: str, recall: dict[str, float]) -> None:
    """BM25 misses half of q1's relevant entries and nothing else; the tag scorer misses nothing."""
    got = {q.query_id: q.metrics["R@5"] for q in seed_evaluation.result(retriever).per_query}
    assert got == recall


def test_bm25_misses_m10_for_q1(seed_evaluation) -> None:
    """BM25 finds m01 for q1 but not m10; the tag scorer finds both, m10 first (tie broken by id descending)."""
    bm25_q1 = seed_evaluation.result("bm25").per_query[0]
    tags_q1 = seed_evaluation.result("tags").per_query[0]
    assert (bm25_q1.query_id, bm25_q1.found, bm25_q1.missed) == ("q1", ("m01",), ("m10",))
    assert (tags_q1.found, tags_q1.missed) == (("m10", "m01"), ())
    assert [(h.entry_id, h.score) for h in tags_q1.hits] == [("m10", 2.0), ("m01", 2.0)]


def test_the_miss_is_meaningful(notes) -> None:
    """m10 shares no token with q1's text, but has exactly q1's tags: only tags can find it."""
    q1 = notes.queries[0]
    m10 = notes.entry("m10")
    assert set(tokenize(q1.text)).isdisjoint(tokenize(m10.text))
    assert set(m10.tags) == set(q1.tags) == {"diet", "food"}


@pytest.mark.parametrize("retriever", ["bm25", "tags"])
def test_every_first_hit_is_relevant(seed_evaluation, retriever: str) -> None:
    """For both retrievers every query's first hit is relevant, so RR = 1 for each query."""
    per_query = seed_evaluation.result(retriever).per_query
    assert [q.first_relevant_rank for q in per_query] == [1, 1, 1, 1, 1]
    assert all(q.hits[0].entry_id in q.relevant for q in per_query)
    assert [q.metrics["RR"] for q in per_query] == [1.0] * 5


def test_q5_has_no_tags_and_the_tag_scorer_derives_them(notes, seed_evaluation) -> None:
    """q5 carries no tags; the tag scorer derives 'birthday' and 'gift' from its text and finds m05."""
    q5 = notes.queries[4]
    assert q5.tags is None
    scorer = TagScorer()
    scorer.add(notes.entries)
    assert scorer.query_tags(q5) == (("birthday", "gift"), True)
    assert [h.entry_id for h in seed_evaluation.result("tags").per_query[4].hits] == ["m05"]


def test_hits_are_ranked_and_at_most_k(seed_evaluation) -> None:
    """Every query has at most k hits, ranks 1..n, scores non-increasing and positive."""
    for result in seed_evaluation.results:
        for q in result.per_query:
            assert len(q.hits) <= 5
            assert [h.rank for h in q.hits] == list(range(1, len(q.hits) + 1))
            scores = [h.score for h in q.hits]
            assert scores == sorted(scores, reverse=True)
            assert all(s > 0 for s in scores)


def test_tie_at_cutoff_is_flagged(notes) -> None:
    """tie_at_cutoff is true when the entry just below the cutoff scores the same as the k-th hit."""
    ev = evaluate(notes, "tags", k=1, seed=7)
    flags = {q.query_id: q.tie_at_cutoff for q in ev.result("tags").per_query}
    assert flags == {"q1": True, "q2": True, "q3": True, "q4": False, "q5": False}
    assert not any(q.tie_at_cutoff for r in evaluate(notes, k=5).results for q in r.per_query)


# -- which queries count ----------------------------------------------------------


@pytest.fixture
def with_unjudged(notes_copy: Path):
    """The fixture plus a sixth query, q6, that has no judgment."""
    with (notes_copy / "queries.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"_id": "q6", "text": "Which editor does Maya use?"}\n')
    return load_collection(notes_copy)


def test_unjudged_query_is_left_out_and_reported(with_unjudged, seed_evaluation) -> None:
    """A query without judgments is not run, not in any mean, and is reported by id."""
    ev = evaluate(with_unjudged, k=5, seed=7)
    assert ev.unjudged_query_ids == ("q6",)
    for result, reference in zip(ev.results, seed_evaluation.results):
        assert [q.query_id for q in result.per_query] == ["q1", "q2", "q3", "q4", "q5"]
        assert result.means == reference.means
    assert "q6" not in {e.query_id for e in ev.events}
    assert unjudged_note(ev) == "Queries without judgments, left out of the means (1): q6."
    assert seed_table(ev).splitlines()[-1] == "Queries without judgments, left out of the means (1): q6."
    assert '"unjudged_queries": [\n    "q6"\n  ]' in dumps_artifact(ev)


def test_no_unjudged_note_says_none(seed_evaluation) -> None:
    """With every query judged the note says so (never silent)."""
    assert unjudged_note(seed_evaluation) == "Queries without judgments: none."


def test_judged_query_without_relevant_entry_counts_as_zero(notes_copy: Path) -> None:
    """A query judged only 'not relevant' is run, scores 0 and counts in the means."""
    with (notes_copy / "queries.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"_id": "q6", "text": "Where does Lena live?"}\n')
    with (notes_copy / "qrels" / "test.tsv").open("a", encoding="utf-8") as f:
        f.write("q6\tm15\t0\n")
    ev = evaluate(load_collection(notes_copy), "bm25", k=5, seed=7)
    q6 = ev.result("bm25").per_query[-1]
    assert (q6.query_id, q6.relevant) == ("q6", ())
    assert set(q6.metrics.values()) == {0.0}
    means = ev.result("bm25").means
    assert means["R@5"] == pytest.approx(4.5 / 6, abs=1e-12)
    assert means["RR"] == pytest.approx(5 / 6, abs=1e-12)


# -- the event log of a run --------------------------------------------------------


def test_run_log_is_derived_from_inputs_and_seed(notes, seed_evaluation) -> None:
    """One add event, then one retrieve per retriever and query; times step 1 s from the latest created_at."""
    events = seed_evaluation.events
    assert [e.type for e in events] == ["add"] + ["retrieve"] * 10
    assert events[0].entry_ids == tuple(e.id for e in notes.entries)
    start = datetime(2026, 3, 2, 15, 30, tzinfo=timezone.utc)  # m16, the newest entry
    assert [e.timestamp for e in events] == [start + timedelta(seconds=n) for n in range(11)]
    ids = HashIds(f"{notes.digest}:7")
    assert [e.event_id for e in events] == [ids() for _ in range(11)]
    retrieves = [(e.retriever, e.query_id) for e in events[1:]]
    assert retrieves == [(r, f"q{n}") for r in ("bm25", "tags") for n in range(1, 6)]
    assert events[1].entry_ids == tuple(h.entry_id for h in seed_evaluation.result("bm25").per_query[0].hits)


def test_seed_changes_ids_but_not_numbers(notes, seed_evaluation) -> None:
    """Another seed gives other event ids and the same metrics; the same seed gives the same artifact."""
    other = evaluate(notes, k=5, seed=8)
    assert [r.means for r in other.results] == [r.means for r in seed_evaluation.results]
    assert {e.event_id for e in other.events}.isdisjoint(e.event_id for e in seed_evaluation.events)
    assert dumps_artifact(evaluate(notes, k=5, seed=7)) == dumps_artifact(seed_evaluation)


def test_extra_measures_are_added_to_the_defaults(notes) -> None:
    """measures adds to P@k, R@k, RR, RR@k, nDCG@k, AP@k; a default named again is not repeated."""
    ev = evaluate(notes, "bm25", k=5, measures="nDCG@10,P@5")
    assert [str(m) for m in ev.measures] == ["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5", "nDCG@10"]
    assert set(ev.result("bm25").means) == {str(m) for m in ev.measures}


def test_mean_is_exact_and_zero_when_empty() -> None:
    """mean uses exactly rounded summation and is 0.0 for no values."""
    assert mean([]) == 0.0
    assert mean([0.1] * 10) == 0.1
    assert mean([1e100, 1.0, -1e100]) == 1.0 / 3


# -- bad parameters ------------------------------------------------------------------

_METRIC_CHOICES = ", ".join(sorted([*REGISTRY, *ALIASES]))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, ParameterError, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"k": "5"}, ParameterError, "k: '5' (str) is not an integer; k must be an integer >= 1"),
        ({"k": 2.0}, ParameterError, "k: 2.0 (float) is not an integer; k must be an integer >= 1"),
        ({"seed": "7"}, ParameterError, "seed: '7' (str) is not an integer; seed must be an integer >= 0"),
        ({"seed": True}, ParameterError, "seed: True (bool) is not an integer; seed must be an integer >= 0"),
        ({"seed": -1}, ParameterError, "seed: -1 (int) is negative; seed must be an integer >= 0"),
        (
            {"retrievers": "bm25,splade"},
            UnknownNameError,
            "retriever: 'splade' (str) is not a known name; choose from: " + ", ".join(sorted(RETRIEVERS)),
        ),
        (
            {"retrievers": "bm25,bm25"},
            ParameterError,
            "retrievers: 'bm25,bm25' (str) names the retriever 'BM25' twice; give each retriever once, or different "
            "parameters (labels must be unique)",
        ),
        (
            {"measures": "XX@5"},
            UnknownNameError,
            f"metric: 'XX@5' (str) is not a known name; choose from: {_METRIC_CHOICES}",
        ),
    ],
)
def test_evaluate_refuses_bad_parameters(notes, kwargs, error, message: str) -> None:
    """Bad k, seed, retrievers or measures are refused with the exact message; choices come from the registries."""
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        evaluate(notes, **kwargs)


def test_result_of_a_retriever_not_evaluated(seed_evaluation) -> None:
    """Asking for a retriever that was not run names the ones that were."""
    with pytest.raises(
        ParameterError, match=re.escape("system: 'dense' (str) was not evaluated; choose from: bm25, tags")
    ):
        seed_evaluation.result("dense")


def test_tie_reports_equal_those_from_every_candidate_score():
    """evaluate's tie reports, which score all candidates only when a tie crosses the cutoff,
    equal reports built from every candidate's score, on collections with and without such ties."""
    from conftest import FIXTURE_DIR, REPO_ROOT

    from agentmemory.metrics.tieaware import tie_report
    from agentmemory.store.core import MemoryStore

    garden = load_collection(REPO_ROOT / "tests" / "data" / "garden-notes")
    cases = [(load_collection(FIXTURE_DIR), 1), (load_collection(FIXTURE_DIR), 5), (garden, 3)]
    assert any(q.tie_at_cutoff for r in evaluate(garden, k=3).results for q in r.per_query)
    for collection, k in cases:
        evaluation = evaluate(collection, k=k)
        store = MemoryStore()
        store.add(collection.entries)
        for result in evaluation.results:
            for query in result.per_query:
                q = next(x for x in collection.queries if x.id == query.query_id)
                scores = store.retriever(result.name, q.scope).score_all(q)
                for measure in evaluation.measures:
                    full = tie_report(measure, scores, collection.qrels[q.id], k)
                    assert query.ties[str(measure)] == full


def test_a_measure_deeper_than_k_sees_its_own_cutoff(notes) -> None:
    """R@10 at k = 2 is computed on the top 10, as at k = 10; R@2 and RR at k = 2 on the top 2 (the exported run)."""
    from agentmemory.evaluation.runner import measure_depth
    from agentmemory.metrics import parse_measure

    shallow = evaluate(notes, "bm25", k=2, ties=False, measures="R@10,R@2,RR")
    deep = evaluate(notes, "bm25", k=10, ties=False, measures="R@10")
    r10 = {q.query_id: q.metrics["R@10"] for q in deep.results[0].per_query}
    assert {q.query_id: q.metrics["R@10"] for q in shallow.results[0].per_query} == r10
    top2 = {q.query_id: q.metrics["R@2"] for q in shallow.results[0].per_query}
    assert any(r10[q] > top2[q] for q in r10)  # the depths differ on this fixture, so the test can fail
    assert all(len(q.hits) <= 2 for q in shallow.results[0].per_query)
    assert [measure_depth(parse_measure(m), 5) for m in ("R@10", "R@3", "RR")] == [10, 5, 5]


def test_timings_measure_the_index_of_every_scope(repo_root: Path) -> None:
    """On a scoped collection (LoCoMo: one scope per conversation) the index size is the sum over the scopes'
    indexes, not the empty unscoped one (it was 0.0 kB); the seed fixture has one, unscoped."""
    from agentmemory import load

    sample = load(repo_root / "fixtures" / "locomo-sample" / "locomo-sample.json")
    evaluation = evaluate(sample, "bm25,tags", timings=True)
    store = evaluation.store
    assert store.scopes == ("conv-1", "conv-2")
    for key in ("bm25", "tags"):
        expected = sum(store.retriever(key, scope).memory_bytes() for scope in store.scopes)
        assert evaluation.result(key).timings.index_bytes == expected > 0
