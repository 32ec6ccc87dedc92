"""The exploration notebook's helpers: statistics, provenance, one query side by side, and why a hit ranked."""

from __future__ import annotations

import math

import pytest

from agentmemory import BM25, MemoryStore
from agentmemory.report import explore
from agentmemory.report.params import explore_setup


def _exploration(**changes):
    params = {
        "collection": "",
        "query": "vegetarian food ideas for dinner",
        "query_tags": "",
        "k": 5,
        "explain_entry": "",
    }
    params.update(changes)
    return explore.Exploration(explore_setup(**params))


def test_corpus_stats(notes):
    """Counts and spreads of the seed fixture."""
    rows = dict(explore.corpus_stats(notes).frame.values.tolist())
    assert rows["entries"] == "16"
    assert rows["queries (judged)"] == "5 (5)"
    assert rows["relevant entries per judged query"] == "1 / 2 / 2"
    assert rows["distinct tags"] == "23"
    assert rows["entries derived from others"] == "1"
    assert rows["created"] == "2026-01-08T19:12:00+00:00 .. 2026-03-02T15:30:00+00:00"
    assert rows["sources"] == "conversation 10, tool 3, document 2, derived 1"


def test_tag_table_counts_entries_per_tag(notes):
    """Each normalised tag with the entries that carry it, most frequent first."""
    frame = explore.tag_table(notes).frame
    assert frame.iloc[0].tolist() == ["preferences", "4", "m01, m04, m08, m14"]
    counted = {tag: int(n) for tag, n in zip(frame["tag"], frame["entries"])}
    assert sum(counted.values()) == sum(len(set(e.tags)) for e in notes.entries)


def test_provenance_and_lineage():
    """m10 was derived from m01: the table shows source, time and lineage."""
    frame = explore.provenance_table(_exploration()).frame.set_index("entry")
    assert frame.loc["m10", "derived from"] == "m01" and frame.loc["m10", "lineage"] == "m01"
    assert frame.loc["m10", "source"] == "derived" and frame.loc["m10", "created_at"] == "2026-02-03T09:00:00+00:00"
    assert frame.loc["m01", "lineage"] == "-"


def test_side_by_side_matches_each_retrievers_search(notes):
    """Each column is that retriever's own top k for the query."""
    exploration = _exploration()
    frame = explore.side_by_side(exploration).frame
    store = MemoryStore(("bm25", "tags"))
    store.add(notes.entries)
    for label, name in (("BM25", "bm25"), ("Tag scorer", "tags")):
        hits = store.search("vegetarian food ideas for dinner", 5, retriever=name)
        column = [cell for cell in frame[label] if cell != "-"]
        assert [cell.split(" ")[0] for cell in column] == [h.entry_id for h in hits]
        assert [cell.split(" ")[1] for cell in column] == [f"({h.score:.2f})" for h in hits]


def test_bm25_terms_sum_to_the_score():
    """The per-term contributions of the explained entry add up to its BM25 score."""
    exploration = _exploration()
    entry = explore.explained_entry(exploration)
    assert entry == exploration.search()["bm25"][0].entry_id == "m01"
    table = explore.bm25_terms(exploration, entry)
    total = sum(float(c) for c in table.frame["contribution"])
    score = exploration.search()["bm25"][0].score
    assert math.isclose(total, score, abs_tol=5e-4)
    assert f"score {score:.4f}" in table.caption
    missing = table.frame[table.frame["in entry"] == "0"]["term"].tolist()
    assert missing == ["food", "ideas"]


def test_tag_overlap_with_derived_and_given_tags():
    """Derived query tags come from the text; given tags are used as given."""
    derived = explore.tag_overlap(_exploration(), "m01").text
    assert "**Query tags** (derived from the query text): food" in derived
    assert "**Shared:** food, so the tag score is 1" in derived
    given = explore.tag_overlap(_exploration(query_tags="diet,food"), "m10").text
    assert "(given as a parameter): diet, food" in given and "so the tag score is 2" in given


def test_explain_entry_parameter_wins():
    assert explore.explained_entry(_exploration(explain_entry="m10")) == "m10"


def test_nothing_to_explain_when_no_hit():
    """A query no retriever answers leaves nothing to explain, said in words."""
    exploration = _exploration(query="zebra")
    assert explore.explained_entry(exploration) is None
    assert explore.bm25_terms(exploration, None).caption.startswith("No entry to explain")


def test_event_log_is_deterministic():
    """Two explorations of the same query log the same event ids and timestamps."""
    first, second = _exploration(), _exploration()
    for e in (first, second):
        e.search()
    a, b = explore.event_log(first).frame, explore.event_log(second).frame
    assert a.equals(b)
    assert a["type"].tolist() == ["add", "retrieve", "retrieve"]
    assert a.iloc[0]["entry_ids"].endswith("... (16 in all)")
    assert a.iloc[0]["timestamp"] == "2026-03-02T15:30:00+00:00"


@pytest.mark.parametrize("query", ["vegetarian food ideas for dinner", "Lena birthday gift"])
def test_bm25_terms_agree_with_bm25_explain(notes, query):
    """The table is BM25.explain, formatted."""
    exploration = _exploration(query=query)
    entry = explore.explained_entry(exploration)
    bm25 = BM25()
    bm25.add(notes.entries)
    parts = bm25.explain(query, entry)
    frame = explore.bm25_terms(exploration, entry).frame
    assert frame["term"].tolist() == [p.term for p in parts]
    assert frame["contribution"].tolist() == [format(p.contribution, ".4f") for p in parts]
