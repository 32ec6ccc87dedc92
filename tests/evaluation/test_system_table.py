"""The memory systems' attribution table as the command line prints it: Judged@k shown only where it says more
than P@k, else named in a note saying what it equals."""

from __future__ import annotations

from agentmemory.collection import Collection
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.system_runs import judged_at_k_note, system_table
from agentmemory.records import MemoryEntry, Provenance, Query
from agentmemory.systems import Memory

TURNS = (
    MemoryEntry("a", "Caroline adopted a grey cat named Pixel.", scope="s"),
    MemoryEntry("b", "Melanie painted a sunrise over the lake.", scope="s"),
    MemoryEntry("c", "They talked about the weather.", scope="s"),
)


class Two:
    """Returns b, then a, verbatim."""

    label = "Two"

    def ingest(self, turns) -> None:
        self.text = {t.entry_id: t.text for t in turns}

    def search(self, query: str, k: int):
        return [Memory(self.text["b"]), Memory(self.text["a"])][:k]

    def close(self) -> None:
        pass


def _evaluation(qrels: dict[str, int], relevance: str = "provenance"):
    collection = Collection("hand", TURNS, (Query("q", "cat", scope="s"),), {"q": qrels}, {"f": "0"})
    return evaluate(collection, None, systems=[Two], k=2, relevance=relevance)


def test_only_relevant_entries_judged_leaves_judged_at_k_out_with_a_note() -> None:
    """Only a is judged: Judged@2 (a of b, a: 1/2) equals P@2 under provenance; the column goes, the note says why."""
    evaluation = _evaluation({"a": 1})
    assert evaluation.systems[0].attributed.report.judged_at_k == evaluation.results[0].means["P@2"] == 0.5
    text = system_table(evaluation.systems, 2, evaluation.collection, evaluation.relevance)
    lines = text.splitlines()
    assert lines[0].startswith("Memory systems: attribution (coverage = attributed / returned memories; ambiguous")
    assert "mean and most; tie analysis" in lines[0]
    assert lines[2] == (
        "| system | attribution | returned | coverage | ambiguous | credits (mean) | credits (most) | "
        "queries returning nothing | failed queries |"
    )
    assert lines[4] == "| Two | auto | 2 | 1.000 | 0 | 1.00 | 1 | 0 | 0 |"
    assert lines[6] == (
        "Judged@2 equals P@2 here (so it is not shown): only relevant entries are judged (no judgment of grade 0), "
        "and a memory attributed to a judged entry is one attributed to a relevant entry."
    )


def test_a_grade_zero_judgment_shows_judged_at_k() -> None:
    """b is judged not relevant: Judged@2 is 1 (both judged), P@2 is 1/2; the column is shown and no note."""
    evaluation = _evaluation({"a": 1, "b": 0})
    text = system_table(evaluation.systems, 2, evaluation.collection, evaluation.relevance)
    assert "| credits (most) | Judged@2 | queries returning nothing |" in text
    assert "| Two | auto | 2 | 1.000 | 0 | 1.00 | 1 | 1.000 | 0 | 0 |" in text and "equals P@2" not in text
    assert judged_at_k_note(evaluation.collection, 2, "provenance") == (True, None)


def test_under_direct_relevance_the_note_says_what_judged_at_k_counts() -> None:
    """Under direct relevance Judged@k is not P@k (a memory counts only as one entry): shown, with what it counts."""
    evaluation = _evaluation({"a": 1}, "direct")
    text = system_table(evaluation.systems, 2, evaluation.collection, evaluation.relevance)
    assert "| Two | auto | 2 | 1.000 | 0 | 1.00 | 1 | 0.500 | 0 | 0 |" in text
    assert text.splitlines()[6] == (
        "Judged@2 here is the share of the top 2 attributed to a relevant entry: only relevant entries are judged (no "
        "judgment of grade 0)."
    )


def test_without_the_collection_the_table_is_as_before() -> None:
    """system_table(runs, k) alone shows Judged@k, with no note (the collection decides otherwise)."""
    evaluation = _evaluation({"a": 1})
    assert "| Judged@2 |" in system_table(evaluation.systems, 2) and judged_at_k_note(None, 2, "provenance") == (
        True,
        None,
    )


def test_derived_entries_keep_judged_at_k_with_the_note() -> None:
    """A derived entry reaches its judged source through provenance, so P@k may count a memory Judged@k does not:
    with one in the collection Judged@k is shown, with the note saying what it counts."""
    derived = MemoryEntry("d", "Pixel the cat", provenance=Provenance(derived_from=("a",)), scope="s")
    collection = Collection("hand", (*TURNS, derived), (Query("q", "cat", scope="s"),), {"q": {"a": 1}}, {"f": "0"})
    shown, note = judged_at_k_note(collection, 2, "provenance")
    assert shown and note is not None and note.startswith("Judged@2 here is the share of the top 2 attributed")
