"""Budget measures in an evaluation: which texts are counted (entries, a run's own memories, a memory system's),
how deep systems are asked, the token counter in the artifact, and tokens@first's missing values through the
statistics, the tables and the artifact."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType

import pytest
from conftest import REPO_ROOT
from plugins import restored

from agentmemory import Collection, MemoryEntry, Query, evaluate
from agentmemory.analysis.artifact import artifact_dict, dumps_artifact, loads_artifact
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.costs import cost_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.analysis.text_tables import group_table, interval_cell
from agentmemory.datasets import load
from agentmemory.errors import UnknownNameError
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.evaluation.runner import defined_mean, measure_depth, system_depth
from agentmemory.metrics import parse_measure
from agentmemory.metrics.token_counters import TOKEN_COUNTERS
from agentmemory.systems import Memory

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


class Words:
    """Counts whitespace-separated words: easy to count by hand."""

    name = "words"

    def count(self, texts):
        return [len(t.split()) for t in texts]

    def describe(self):
        return {"unit": "whitespace-separated words"}


@pytest.fixture
def words():
    with restored(TOKEN_COUNTERS):
        TOKEN_COUNTERS.register("words", Words)
        yield "words"


# Entries of 1 to 6 words; q1 judges t2 and t4 relevant, q2 judges t5 (which no run below returns).
ENTRIES = (
    MemoryEntry("t1", "one"),
    MemoryEntry("t2", "two words"),
    MemoryEntry("t3", "three words here"),
    MemoryEntry("t4", "four words are here"),
    MemoryEntry("t5", "a turn of five words"),
)
COLLECTION = Collection(
    "budget",
    ENTRIES,
    (Query("q1", "words"), Query("q2", "turn")),
    MappingProxyType({"q1": MappingProxyType({"t2": 1, "t4": 1}), "q2": MappingProxyType({"t5": 1})}),
    MappingProxyType({"corpus": "0" * 64}),
)


def _run(tmp_path: Path, name: str, lines: dict[str, list[str]], memories: list[dict] | None = None):
    run = tmp_path / f"{name}.jsonl"
    run.write_text(
        "".join(
            json.dumps({"query_id": q, "hits": [{"entry_id": e, "score": 10 - i} for i, e in enumerate(ids)]}) + "\n"
            for q, ids in lines.items()
        ),
        encoding="utf-8",
    )
    if memories is None:
        return read_run_file(run, name)
    path = tmp_path / f"{name}.memories.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in memories), encoding="utf-8")
    return read_run_file(run, name, memories=path)


def test_a_run_is_read_by_its_entries_texts(tmp_path, words):
    """A run naming collection entries is read by their texts: t3 (3) + t2 (2) + t1 (1) + t4 (4) words.

    Within 5 words: t3, t2 (5 words); t1 would make 6: out, and reading stops (t4 is never read).
    """
    run = _run(tmp_path, "mine", {"q1": ["t3", "t2", "t1", "t4"], "q2": ["t1"]})
    e = evaluate(
        COLLECTION, [], runs=[run], k=2, measures="R@5tok,P@5tok,Success@5tok,R@10tok,tokens@first", tokenizer=words
    )
    q1, q2 = e.results[0].per_query
    assert q1.metrics["R@5tok"] == 0.5 and q1.metrics["P@5tok"] == 0.5 and q1.metrics["Success@5tok"] == 1.0
    assert q1.metrics["R@10tok"] == 1.0  # 3 + 2 + 1 + 4 = 10 <= 10
    assert q1.metrics["tokens@first"] == 5.0  # t3 then t2, the first relevant
    assert q2.metrics["tokens@first"] is None  # t5 is never returned
    assert e.tokenizer == {"name": "words", "unit": "whitespace-separated words"}


def test_a_runs_own_memories_are_read_by_their_own_texts(tmp_path, words):
    """A derived memory costs its own text (a 7-word summary), not its sources'; under provenance it credits them."""
    memories = [{"_id": "m1", "text": "a summary of turns two and four", "derived_from": ["t2", "t4"]}]
    run = _run(tmp_path, "sys", {"q1": ["m1", "t1"]}, memories)
    measures = "R@6tok,R@8tok,tokens@first"
    e = evaluate(COLLECTION, [], runs=[run], k=2, measures=measures, tokenizer=words, relevance="provenance")
    q1 = e.results[0].per_query[0]
    assert (q1.metrics["R@6tok"], q1.metrics["R@8tok"], q1.metrics["tokens@first"]) == (0.0, 1.0, 7.0)


def test_systems_are_asked_past_the_budget():
    """A memory system is asked for T + 1 memories under a budget of T tokens; rank measures as before."""
    assert system_depth(parse_measure("R@512tok"), 5) == 513
    assert system_depth(parse_measure("R@2tok"), 5) == 5
    assert system_depth(parse_measure("R@10"), 5) == 10
    assert system_depth(parse_measure("tokens@first"), 5) == 5
    assert measure_depth(parse_measure("nDCG@512tok"), 5) is None  # retrievers: the whole ranking


def test_bm25_as_a_system_reads_like_the_bm25_retriever():
    """bm25 as a memory system (verbatim turns, asked T + 1 deep) gives the retriever's budget values exactly."""
    sample = load(SAMPLE)
    measures = ("R@64tok", "nDCG@64tok", "P@64tok", "Success@64tok", "tokens@first")
    retriever = evaluate(sample, "bm25", k=5, measures=measures, ties=False).results[0]
    system = evaluate(sample, None, systems=["bm25"], k=5, measures=measures, relevance="direct", attribution="exact")
    for mine, theirs in zip(system.results[0].per_query, retriever.per_query, strict=True):
        for m in measures:
            assert mine.metrics[m] == theirs.metrics[m], (mine.query_id, m)


class Digest:
    """A memory system that keeps one 'digest' memory per turn (its own, longer text) and records how deep it is asked."""

    asked: list[int] = []

    def __init__(self, scope=None, workdir=None) -> None:
        self.turns: list = []

    def ingest(self, turns) -> None:
        self.turns.extend(turns)

    def search(self, query: str, k: int):
        Digest.asked.append(k)
        return [Memory(f"digest of {t.text}", sources=(t.entry_id,)) for t in reversed(self.turns)][:k]

    def close(self) -> None:
        pass


def test_a_memory_system_is_read_by_its_memories_own_texts(words):
    """A system is asked for T + 1 memories, and each memory costs its own text ('digest of ' adds two words)."""
    Digest.asked = []
    e = evaluate(COLLECTION, None, systems=[Digest], k=2, measures="R@9tok,tokens@first", tokenizer=words)
    budgets = [m.budget for m in e.measures if m.budget is not None]
    assert set(Digest.asked) == {max(budgets) + 1} and 9 in budgets  # past the deepest budget, the defaults' too
    q1, q2 = e.results[0].per_query
    # Newest first: t5's digest (5 + 2 words) fits in 9; t4's (4 + 2) would make 13: t4, relevant to q1, is not read.
    assert q1.metrics["R@9tok"] == 0.0 and q1.metrics["tokens@first"] == 13.0
    assert q2.metrics["R@9tok"] == 1.0 and q2.metrics["tokens@first"] == 7.0


@pytest.mark.parametrize("relevance", ["provenance", "direct"])
def test_a_memory_standing_in_for_an_entry_costs_its_own_text_under_either_relevance(words, relevance):
    """Under direct relevance a memory attributed to one entry is ranked as that entry, yet costs its own text:
    the same budget values and tokens@first as under provenance, and the cost table counts the digests."""
    e = evaluate(
        COLLECTION,
        None,
        systems=[Digest],
        k=2,
        measures="R@9tok,tokens@first",
        tokenizer=words,
        relevance=relevance,
        attribution="sources",
    )
    result = e.results[0]
    q1, q2 = result.per_query
    if relevance == "direct":
        assert [h.entry_id for h in q1.ranking[:2]] == ["t5", "t4"]  # ranked as the entries they stand in for
        assert result.returned_id("q1", "t5") != "t5"
    assert q1.metrics["R@9tok"] == 0.0 and q1.metrics["tokens@first"] == 13.0  # 'digest of ' counted, not 9
    assert q2.metrics["R@9tok"] == 1.0 and q2.metrics["tokens@first"] == 7.0
    costs = cost_table(e)
    assert costs is not None
    (row,) = costs.rows
    assert row.tokens_at_k == 13.0  # both queries' top 2: digests of t5 and t4 (7 + 6 words)


def test_the_tokenizer_is_checked_and_named_in_the_artifact():
    """An unknown tokenizer is refused with the registered names; the artifact names the counter only when used."""
    names = re.escape(", ".join(sorted(TOKEN_COUNTERS.names())))
    with pytest.raises(
        UnknownNameError, match=rf"^tokenizer: 'nope' \(str\) is not a known name; choose from: {names}$"
    ):
        EvalOptions(tokenizer="nope")
    sample = load(SAMPLE)
    plain = artifact_dict(evaluate(sample, "bm25", k=5))
    assert "tokenizer" not in plain["params"]
    budget = artifact_dict(evaluate(sample, "bm25", k=5, measures="R@512tok"))
    assert budget["params"]["tokenizer"]["name"] == "llama2"
    assert budget["params"]["tokenizer"]["vocabulary"] == 32000


# -- tokens@first's missing values through the statistics, the tables and the artifact -------------------------------


def test_missing_values_are_left_out_and_counted(tmp_path, words):
    """tokens@first is averaged over the queries with a value; tests and counts over those where both have one."""
    queries = tuple(Query(f"q{i}", "words") for i in range(4))
    qrels = {f"q{i}": MappingProxyType({"t4": 1}) for i in range(4)}
    collection = Collection("four", ENTRIES, queries, MappingProxyType(qrels), MappingProxyType({"corpus": "0" * 64}))
    # a finds t4 in q0, q1, q2 after 3, 0 and 6 words of other turns; b finds it in q1, q2, q3.
    a = _run(tmp_path, "a", {"q0": ["t3", "t4"], "q1": ["t4"], "q2": ["t2", "t1", "t3", "t4"], "q3": ["t1"]})
    b = _run(tmp_path, "b", {"q0": ["t1"], "q1": ["t1", "t4"], "q2": ["t4"], "q3": ["t5", "t4"]})
    e = evaluate(collection, [], runs=[a, b], k=1, measures="tokens@first", tokenizer=words, ties=False)
    values = {r.name: [q.metrics["tokens@first"] for q in r.per_query] for r in e.results}
    assert values == {"a": [7.0, 4.0, 10.0, None], "b": [None, 5.0, 4.0, 9.0]}
    assert e.results[0].means["tokens@first"] == 7.0 and e.results[1].means["tokens@first"] == 6.0
    stats = evaluation_statistics(e, seed=3, n_resamples=200)
    interval = stats.intervals["a"]["tokens@first"]
    assert interval is not None and interval.n == 3 and interval.mean == 7.0
    cell = stats.against_baseline("b", "tokens@first")
    assert cell is not None and cell.test.n == 2  # q1 and q2, where both found t4
    assert (cell.above, cell.below) == (1, 1)  # b: 5 > 4 on q1, 4 < 10 on q2
    assert cell.test.mean_difference == ((5 - 4) + (4 - 10)) / 2
    table = comparison_table(e, stats)
    assert table.cell_text("a", "tokens@first") == interval_cell(interval, 3, of=4) + ""
    assert "(3 of 4)" in table.cell_text("a", "tokens@first")
    # lower is better: b is lower on q2; on q1 and q2, b's mean is (5 + 4) / 2 and a's (4 + 10) / 2
    assert table.cell_text("b", "tokens@first").endswith(
        "(3 of 4) +1/−1; on the 2 queries both have a value, 4.500 against a's 7.000"
    )
    assert cell.shared == (4.5, 7.0)
    notation = table.notation()
    assert "tokens@first has no value on a query with no relevant hit in the ranking" in notation
    assert "tokens@first has no tie-aware value" in notation
    data = loads_artifact(dumps_artifact(e, stats))
    rows = {(r["retriever"], r["query_id"]): r["metrics"]["tokens@first"] for r in data["per_query"]}
    assert rows[("a", "q3")] is None and rows[("b", "q0")] is None and rows[("a", "q0")] == 7.0
    assert data["statistics"]["intervals"]["b"]["tokens@first"]["n"] == 3


def test_no_value_anywhere(tmp_path, words):
    """A system with no relevant hit anywhere has no tokens@first mean, no interval, no comparison: said so."""
    a = _run(tmp_path, "a", {"q1": ["t2"], "q2": ["t5"]})
    b = _run(tmp_path, "b", {"q1": ["t1"], "q2": ["t1"]})
    e = evaluate(COLLECTION, [], runs=[a, b], k=1, measures="tokens@first", tokenizer=words, ties=False)
    assert e.results[1].means["tokens@first"] is None
    stats = evaluation_statistics(e, seed=3, n_resamples=200)
    assert stats.intervals["b"]["tokens@first"] is None
    assert stats.against_baseline("b", "tokens@first") is None
    assert all(c.a != "a" or c.b != "b" for c in stats.comparisons["tokens@first"])
    table = comparison_table(e, stats)
    assert table.cell_text("b", "tokens@first") == "n/a (0 of 2)"
    assert table.comparisons == 5  # 7 measures less RR (the same measure as RR@1 here) and tokens@first
    assert artifact_dict(e, stats)["aggregate"][1]["tokens@first"] is None


def test_defined_mean():
    """defined_mean leaves None out and is None over none."""
    assert defined_mean([1.0, None, 3.0]) == 2.0
    assert defined_mean([None, None]) is None
    assert defined_mean([]) is None


def test_group_table_counts_the_queries_with_a_value(tmp_path, words):
    """The by-group table shows (n of N) for a measure that may have no value."""
    queries = (Query("q1", "words", group="g"), Query("q2", "turn", group="g"))
    collection = Collection("grouped", ENTRIES, queries, COLLECTION.qrels, MappingProxyType({"corpus": "0" * 64}))
    run = _run(tmp_path, "mine", {"q1": ["t2"], "q2": ["t1"]})
    e = evaluate(collection, [], runs=[run], k=1, measures="tokens@first", tokenizer=words, ties=False)
    text = group_table(e, evaluation_statistics(e, seed=1, n_resamples=100))
    assert text.splitlines()[2] == "| Group | Queries | System | R@1 | P@1 | RR | tokens@first (lower is better) |"
    assert text.splitlines()[-1].startswith("| g | 2 | mine | ") and text.endswith(" | 2.00 (1 of 2) |")


def test_the_artifact_with_budget_measures_is_byte_identical():
    """Two evaluations with budget measures write the same artifact bytes (token counts are a function of the texts)."""
    sample = load(SAMPLE)
    texts = [dumps_artifact(evaluate(sample, "bm25,dense", k=5, measures="R@128tok,tokens@first")) for _ in range(2)]
    assert texts[0] == texts[1]
    assert '"R@128tok": ' in texts[0] and '"file_sha256": ' in texts[0]
