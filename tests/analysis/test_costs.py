"""The cost table: memories returned, tokens per memory and in the top k, and where rankings ran out of hits."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest
from conftest import REPO_ROOT
from plugins import restored

from agentmemory import Collection, MemoryEntry, Query, evaluate
from agentmemory.analysis.costs import CostTable, Limit, cost_table
from agentmemory.datasets import load
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.metrics.token_counters import TOKEN_COUNTERS

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


# Entries of 1 to 5 words; q1 judges t2 and t4 relevant, q2 judges t5.
ENTRIES = tuple(
    MemoryEntry(f"t{n}", text)
    for n, text in enumerate(("one", "two words", "three words here", "four words are here", "a turn of five"), 1)
)
COLLECTION = Collection(
    "costs",
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


def test_the_cost_table_by_hand(tmp_path, words) -> None:
    """Two runs at k = 2 with R@5tok, counted in words; b has its own memories, so the token-budget defaults
    (R@512tok, R@2048tok, Success@2048tok) are computed too, and every ranking is read whole for them.

    a: q1 ranks t3 (3 words), t2 (2), t1 (1), t4 (4), 10 words in all; q2 ranks t1 alone.  Returned (4 + 1) / 2 =
    2.5, at most 4; the top 2 hold 3 + 2 and 1 words: 6 words in 3 hits (2.0 per memory), 3.0 per query.  q2's
    ranking ends before rank 2 and before 5 words (1 < 5); both end before 512 and 2,048 words.
    b: q1 ranks its own 7-word memory m1, then t1; q2 is not in the run (nothing retrieved).  Returned (2 + 0) / 2,
    at most 2; the top 2 hold 7 + 1 words in 2 hits (4.0 each), 8 / 2 per query; q2 ran out before rank 2 and 5
    words, both before 512 and 2,048.
    """
    a = _run(tmp_path, "a", {"q1": ["t3", "t2", "t1", "t4"], "q2": ["t1"]})
    memories = [{"_id": "m1", "text": "a summary of turns two and four", "derived_from": ["t2", "t4"]}]
    b = _run(tmp_path, "b", {"q1": ["m1", "t1"]}, memories)
    e = evaluate(COLLECTION, [], runs=[a, b], k=2, measures="R@5tok", tokenizer=words, ties=False)
    table = cost_table(e)
    assert isinstance(table, CostTable) and (table.k, table.tokenizer, table.queries) == (2, "words", 2)
    ranked = ("P@2", "R@2", "RR@2", "nDCG@2", "AP@2")
    assert table.limits == (
        Limit("rank", 2, ranked),
        Limit("tokens", 5, ("R@5tok",)),
        Limit("tokens", 512, ("R@512tok",)),
        Limit("tokens", 2048, ("R@2048tok", "Success@2048tok")),
    )
    first, second = table.rows
    assert (first.label, first.returned, first.most, first.tokens_per_memory, first.tokens_at_k) == (
        "a",
        2.5,
        4,
        2.0,
        3.0,
    )
    assert (second.label, second.returned, second.most, second.tokens_per_memory, second.tokens_at_k) == (
        "b",
        1.0,
        2,
        4.0,
        4.0,
    )
    assert first.ran_out == (1, 1, 2, 2) and second.ran_out == (1, 1, 2, 2)
    header = ["System", "memories returned (mean)", "most returned", "tokens per memory, top 2", "tokens, top 2"]
    assert table.header() == header
    assert table.cells() == [["a", "2.5", "4", "2.0", "3.0"], ["b", "1.0", "2", "4.0", "4.0"]]
    notes = table.notes()
    assert notes[1] == (
        "a ran out of hits before rank 2 on 1 of 2 queries (P@2, R@2, RR@2, nDCG@2, AP@2), before 5 tokens on 1 of 2 "
        "queries (R@5tok), before 512 tokens on 2 of 2 queries (R@512tok) and before 2,048 tokens on 2 of 2 queries "
        "(R@2048tok, Success@2048tok): those rankings were read whole, and what a longer one would have added is "
        "missing from their values."
    )
    assert len(notes) == 3 and notes[2].startswith("b ran out of hits before rank 2 on 1 of 2 queries")
    assert table.render() == (
        f"{table.caption()}:\n\n| {' | '.join(header)} |\n|---|---|---|---|---|\n| a | 2.5 | 4 | 2.0 | 3.0 |\n"
        "| b | 1.0 | 2 | 4.0 | 4.0 |\n\n" + "\n".join(notes)
    )


def test_a_retriever_evaluation_reads_no_deeper_for_the_table(words) -> None:
    """Without a system's own memories the defaults are the cut-off measures alone: a retriever's rankings are kept
    to the top k, and no budget limit is checked."""
    e = evaluate(COLLECTION, "bm25", k=2, tokenizer=words)
    table = cost_table(e)
    assert table is not None and [limit.kind for limit in table.limits] == ["rank"]
    assert table.rows[0].most <= 2


def test_answer_files_without_retrieval_have_no_row() -> None:
    """An answer file without retrieval ranks nothing: no row, and no table when it is alone."""
    sample = load(SAMPLE, repair=True)
    mem0 = f"mem0={REPO_ROOT / 'fixtures' / 'answers' / 'mem0-locomo-sample.json'}"
    assert cost_table(evaluate(sample, None, answers=[mem0])) is None
    beside = cost_table(evaluate(sample, "bm25", answers=[mem0], k=5))
    assert beside is not None and [row.label for row in beside.rows] == ["BM25"]
