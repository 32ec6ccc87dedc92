"""The report's memory-system helpers: coverage, Judged@k, sensitivity and unattributed examples as frames and Markdown."""

from __future__ import annotations

import math

import pytest
from conftest import REPO_ROOT

from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.evaluation.runner import evaluate
from agentmemory.records import MemoryEntry, Query
from agentmemory.report.systems import (
    coverage_frame,
    coverage_table,
    sensitivity_frame,
    systems_markdown,
    systems_note,
    systems_section,
    unattributed_frame,
)
from agentmemory.systems import Memory

TURNS = (
    MemoryEntry("a", "Caroline adopted a grey cat named Pixel.", scope="s"),
    MemoryEntry("b", "Melanie painted a sunrise over the lake.", scope="s"),
    MemoryEntry("c", "They talked about the weather.", scope="s"),
)


class Three:
    """Returns b verbatim, a text of no turn, then a verbatim: for k = 3, two of three attributed, one judged."""

    label = "Three"

    def ingest(self, turns) -> None:
        self.text = {t.entry_id: t.text for t in turns}

    def search(self, query: str, k: int):
        return [Memory(self.text["b"]), Memory("zzz qqq nonsense"), Memory(self.text["a"])][:k]

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def hand():
    collection = Collection("hand", TURNS, (Query("q", "cat", scope="s"),), {"q": {"a": 1}}, {"f": "0"})
    return evaluate(collection, None, systems=[Three], k=3, relevance="provenance")


def test_coverage_and_judged_at_k_by_hand(hand) -> None:
    """2 of 3 memories attributed (coverage 2/3); only the third is judged (Judged@3 = 1/3)."""
    frame = coverage_frame(hand)
    assert list(frame.columns)[:5] == ["system", "attribution", "returned", "attributed", "coverage"]
    assert list(frame.columns)[5:9] == ["credited to several entries", "credits per memory", "most credits", "Judged@3"]
    row = frame.iloc[0]
    assert (row["system"], row["attribution"], row["returned"], row["attributed"]) == ("Three", "auto", 3, 2)
    assert row["coverage"] == 2 / 3 and row["Judged@3"] == 1 / 3
    assert row["unattributed (distinct)"] == 1 and row["queries returning nothing"] == 0
    report = hand.systems[0].attributed.report  # the ambiguity beside coverage, as the CLI's table shows it
    assert (row["credited to several entries"], row["most credits"]) == (report.ambiguous, report.most_credits)
    assert row["credits per memory"] == report.credits_per_memory and report.most_credits >= 1
    assert coverage_table(hand).frame.iloc[0]["coverage"] == "0.667"


def test_sensitivity_rows_by_hand(hand) -> None:
    """auto is re-attributed by overlap at 0.3, 0.5, 0.7: a is reached at rank 3 each time (R 1, nDCG 1/log2 4)."""
    frame = sensitivity_frame(hand)
    assert list(frame["attribution"]) == [f"overlap[threshold={t}]" for t in (0.3, 0.5, 0.7)]
    assert list(frame["R@3"]) == [1.0] * 3
    assert all(math.isclose(v, 1 / math.log2(4)) for v in frame["nDCG@3"])


def test_unattributed_examples_and_the_note(hand) -> None:
    """The unattributed text is listed; coverage below 0.8 is named; the tie caveat is stated."""
    assert unattributed_frame(hand).values.tolist() == [["Three", 1, "zzz qqq nonsense"]]
    note = systems_note(hand).text
    assert "**Three**: attributed by `auto`; 2 of 3 returned memories attributed (coverage 0.667), below 0.8" in note
    assert "Tie analysis beyond the returned memories is not available for systems" in note
    text = systems_markdown(hand).text
    # no memory credited to several entries, 1 credit each; Judged@3 left out: it equals P@3 here
    assert "| Three | auto | 3 | 2 | 0.667 | 0 | 1.000 | 1 | 0 | 0 | 1 |" in text
    assert "| Three | overlap[threshold=0.5] | 1.000 | 0.500 |" in text
    assert "| Three | 1 | zzz qqq nonsense |" in text


def test_locomo_sample_frames_agree_with_the_reports() -> None:
    """On the LoCoMo sample, each system's row is its AttributionReport's figures; retrievers have no row."""
    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    evaluation = evaluate(
        sample, "bm25", systems=["bm25", "examples.my_memory_system:System"], k=5, relevance="provenance"
    )
    frame = coverage_frame(evaluation)
    assert list(frame["system"]) == ["BM25 as a system", "Fact extractor (example)"]
    for (_, row), run in zip(frame.iterrows(), evaluation.systems, strict=True):
        report = run.attributed.report
        assert (row["coverage"], row["Judged@5"], row["returned"]) == (
            report.coverage,
            report.judged_at_k,
            report.returned,
        )
    assert len(sensitivity_frame(evaluation)) == 6
    assert "below 0.8" not in systems_note(evaluation).text  # both attribute by sources: coverage 1


def test_without_systems() -> None:
    """An evaluation without systems: empty frames with their columns, and one sentence."""
    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    evaluation = evaluate(sample, "bm25", k=5)
    assert coverage_frame(evaluation).empty and "Judged@5" in coverage_frame(evaluation).columns
    assert systems_markdown(evaluation).text == "No memory system in this evaluation."


@pytest.fixture(scope="module")
def judged_zero():
    """The hand collection with c (which Three never returns) and b judged not relevant (grade 0)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    collection = Collection("hand", TURNS, (Query("q", "cat", scope="s"),), qrels, {"f": "0"})
    return evaluate(collection, None, systems=[Three], k=3, relevance="provenance")


def test_judged_at_k_is_left_out_where_it_equals_p_at_k(hand) -> None:
    """Only a is judged (relevant): Judged@3 is P@3 under provenance, so the table leaves it out and says so."""
    assert coverage_frame(hand).iloc[0]["Judged@3"] == hand.results[0].means["P@3"] == 1 / 3
    table = coverage_table(hand)
    assert "Judged@3" not in table.frame.columns
    assert table.caption.endswith(
        "(headline queries). Judged@3 equals P@3 here (so it is not shown): only relevant entries are judged (no "
        "judgment of grade 0), and a memory attributed to a judged entry is one attributed to a relevant entry"
    )
    assert "(Judged@3)" not in systems_section(hand)[0].text


def test_judged_at_k_is_shown_where_a_non_relevant_entry_is_judged(judged_zero) -> None:
    """b is judged grade 0: Judged@3 (b and a, 2/3) says more than P@3 (a, 1/3), and is shown without a note."""
    row = coverage_frame(judged_zero).iloc[0]
    assert (row["Judged@3"], judged_zero.results[0].means["P@3"]) == (2 / 3, 1 / 3)
    table = coverage_table(judged_zero)
    assert table.frame.iloc[0]["Judged@3"] == "0.667"
    assert table.caption == (
        "Memory systems: coverage = attributed / returned memories; credited to several entries, credits per "
        "memory and most credits = how ambiguous the attribution is (memories given to more than one entry, the "
        "mean number of entries an attributed memory is credited to, the largest); Judged@3 = share of the top 3 "
        "attributed to a judged entry (headline queries)"
    )
    assert "(Judged@3)" in systems_section(judged_zero)[0].text


def test_under_direct_relevance_judged_at_k_is_shown_with_what_it_counts() -> None:
    """Under direct relevance a memory counts only when it is one entry, so Judged@3 is not P@3: it is shown, and
    the note says it counts the memories attributed to a relevant entry (the only judged ones here)."""
    collection = Collection("hand", TURNS, (Query("q", "cat", scope="s"),), {"q": {"a": 1}}, {"f": "0"})
    evaluation = evaluate(collection, None, systems=[Three], k=3, relevance="direct")
    table = coverage_table(evaluation)
    assert table.frame.iloc[0]["Judged@3"] == "0.333"
    assert table.caption.endswith(
        "(headline queries). Judged@3 here is the share of the top 3 attributed to a relevant entry: only relevant "
        "entries are judged (no judgment of grade 0)"
    )
