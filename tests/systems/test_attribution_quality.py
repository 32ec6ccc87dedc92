"""Attribution measured: each method's credits on the labelled fixture, the bounds `auto` must keep, ambiguity."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.errors import InputError, ParameterError
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.system_runs import system_table
from agentmemory.records import MemoryEntry, Query
from agentmemory.systems import Memory
from agentmemory.systems.attribution import (
    QUALITY_METHODS,
    WORD_KEEPING,
    Attributor,
    LabelledMemory,
    credit_quality,
    credit_quality_table,
    parse_attribution,
    read_labelled_memories,
)
from agentmemory.tokenize import tokenize

FIXTURE = REPO_ROOT / "fixtures" / "attribution"
SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
DOCS = REPO_ROOT / "docs" / "protocols" / "memory-system.md"


@pytest.fixture(scope="module")
def sample() -> Collection:
    return load(SAMPLE)


@pytest.fixture(scope="module")
def labelled() -> tuple[LabelledMemory, ...]:
    return read_labelled_memories(FIXTURE / "memories.jsonl")


@pytest.fixture(scope="module")
def qualities(sample, labelled):
    helper = Attributor(sample)
    return {m: credit_quality(m, labelled, sample, attributor=helper) for m in QUALITY_METHODS}


def test_the_fixture_is_what_its_generator_writes() -> None:
    """memories.jsonl is generate.py's output: the mechanical styles from the sample, then handwritten.jsonl."""
    build = runpy.run_path(str(FIXTURE / "generate.py"))["build"]
    assert (FIXTURE / "memories.jsonl").read_text(encoding="utf-8") == build()


def test_the_fixture_has_every_style_and_declares_some_sources(labelled) -> None:
    """Every style of the brief is there; some memories declare their sources (always their truth), most don't."""
    styles = {m.style for m in labelled}
    assert styles == {*WORD_KEEPING, "paraphrase", "fact", "summary", "unrelated"}
    declared = [m for m in labelled if m.sources is not None]
    assert 0 < len(declared) < len(labelled) / 2
    assert all(m.sources == m.truth for m in declared)
    assert all(not m.truth for m in labelled if m.style == "unrelated")


@pytest.mark.parametrize("method", QUALITY_METHODS)
def test_credit_quality_recomputed(method, sample, labelled, qualities) -> None:
    """Each method's credits, false credits, recall and complete memories, counted again here turn by turn."""
    helper = Attributor(sample)
    spec = parse_attribution(method)
    credits = false = found = complete_kept = kept = 0
    for m in labelled:
        got = helper.attribute_turns(spec, m.scope, Memory(m.text, sources=m.sources))[0]
        credits += len(got)
        false += sum(1 for t in got if t not in m.truth)
        found += sum(1 for t in m.truth if t in got)
        if m.style in WORD_KEEPING:
            kept += 1
            complete_kept += all(t in got for t in m.truth)
    q = qualities[method]
    assert (q.credits, q.false_credits) == (credits, false)
    assert q.recall == pytest.approx(found / sum(len(m.truth) for m in labelled))
    assert q.precision == pytest.approx(1 - false / credits)
    assert q.complete_share() == pytest.approx(complete_kept / kept)


def test_auto_keeps_its_bounds(qualities) -> None:
    """Under auto at most 2% of credits are false, every source of 95% of the word-keeping memories is credited,
    and every source of every memory declaring them."""
    auto = qualities["auto"]
    assert auto.false_share <= 0.02
    assert auto.complete_share(WORD_KEEPING) >= 0.95
    assert auto.declared_share == 1.0


def test_the_documented_table_is_the_computed_one(qualities) -> None:
    """The table in the attribution section of the memory-system page is credit_quality_table's, as computed now."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- credit-quality: start -->\n(.*?)\n<!-- credit-quality: end -->", text, re.S)
    assert found is not None
    expected = credit_quality_table(qualities[m] for m in QUALITY_METHODS)
    assert found.group(1).strip() == expected, f"replace the table in {DOCS.name} with:\n{expected}"


def _scope(*turns: tuple[str, str]) -> Collection:
    entries = tuple(MemoryEntry(i, text, scope="s") for i, text in turns)
    return Collection("hand", entries, (Query("q", "ceramics workshop", scope="s"),), {"q": {"D1:3": 1}}, {"f": "0"})


GOLD = ("D1:3", "Priya: I went to a ceramics workshop yesterday and it was so very inspiring.")
HAND = _scope(
    GOLD,
    ("D2:1", "Tomasz: I was at a pottery class and it was fun."),
    ("D2:2", "Priya: I love that, it sounds great to me."),
    ("D5:1", "Priya: The workshop met again and I went with a friend."),
    ("D12:1", "Tomasz: I took the kids to a park and it was sunny."),
    ("D12:2", "Priya: Sounds like a lovely day for the family."),
)


def test_a_chunk_sharing_half_a_turns_tokens_is_not_credited_to_it() -> None:
    """The shape of conv-26/q0 (authored text): a chunk of D12:1 and D12:2 holds 7 of the 14 distinct tokens of D1:3 (the old inclusive 0.5);
    overlap and auto credit the chunk's two turns only."""
    chunk = Memory(
        "Tomasz: I took the kids to a park and it was sunny.\nPriya: Sounds like a lovely day for the family."
    )
    gold = set(tokenize(GOLD[1]))
    assert len(gold) == 14 and len(gold & set(tokenize(chunk.text))) == 7
    helper = Attributor(HAND)
    assert helper.attribute(parse_attribution("overlap"), "s", chunk) == (("D12:1", "D12:2"), "overlap")
    assert helper.attribute(parse_attribution("auto"), "s", chunk) == (("D12:1", "D12:2"), "overlap")
    assert helper.containment("s", chunk.text)[0] < 0.5  # weighted: the shared tokens are the common ones


def test_a_restyled_turn_is_credited_to_that_turn_alone() -> None:
    """A turn with a date and 'said' is credited to itself, not to D5:1 whose words (workshop, went, i) it also holds."""
    helper = Attributor(HAND)
    memory = Memory("[8 May 2023] Priya said: I went to a ceramics workshop yesterday and it was so very inspiring.")
    for method in ("overlap[threshold=0.3]", "overlap", "overlap[threshold=0.7]", "auto"):
        assert helper.attribute(parse_attribution(method), "s", memory)[0] == ("D1:3",), method


def test_the_threshold_is_the_share_of_the_turns_weighted_tokens() -> None:
    """D1:3 with 'ceramics', 'inspiring' and 'yesterday' cut: credited at 0.5, not at 0.7 (its containment lies between)."""
    helper = Attributor(HAND)
    text = "Priya: I went to a workshop and it was so very."
    share = helper.containment("s", text)[0]
    assert 0.5 < share < 0.7
    assert helper.overlap("s", text, 0.5) == ("D1:3",)
    assert helper.overlap("s", text, 0.7) == ()


def test_a_turn_sharing_fewer_than_three_tokens_is_left_to_exact() -> None:
    """'Gina: ;)' has one token: overlap never credits it; exact does when the memory is that turn."""
    collection = _scope(("a", "Gina: ;)"), ("b", "Jon: Gina opened a store."), ("c", "Gina: Thanks, Jon!"))
    helper = Attributor(collection)
    assert helper.overlap("s", "Gina went dancing", 0.0) == ()
    assert helper.attribute(parse_attribution("auto"), "s", Memory("gina")) == (("a",), "exact")


class _Chunky:
    label = "Chunky"

    def __init__(self, scope=None, workdir=None) -> None:
        pass

    def ingest(self, turns) -> None:
        pass

    def search(self, query: str, k: int) -> list[Memory]:
        chunk = "Tomasz: I took the kids to a park and it was sunny.\nPriya: Sounds like a lovely day for the family."
        return [Memory(chunk), Memory(GOLD[1]), Memory("zzz qqq")][:k]

    def close(self) -> None:
        pass


def test_the_report_counts_memories_credited_to_several_entries() -> None:
    """Of 3 returned memories 2 are attributed (3 credits): 1 ambiguous, 1.5 credits each, 2 at most; the summary and
    the system table show them beside coverage."""
    evaluation = evaluate(HAND, None, systems=[_Chunky], k=3, relevance="provenance")
    report = evaluation.systems[0].attributed.report
    assert (report.returned, report.attributed, report.credits, report.ambiguous, report.most_credits) == (
        3,
        2,
        3,
        1,
        2,
    )
    assert report.credits_per_memory == 1.5
    summary = report.summary()
    assert (summary["ambiguous_memories"], summary["credits_per_memory"], summary["most_credits"]) == (1, 1.5, 2)
    assert "| Chunky | auto | 3 | 0.667 | 1 | 1.50 | 2 | 0.333 | 0 | 0 |" in system_table(evaluation.systems, 3)


def test_labelled_memories_errors(tmp_path: Path) -> None:
    """A bad line names the file, the line, the field and what was found."""
    path = tmp_path / "m.jsonl"
    path.write_text('{"text": "a", "style": "fact", "scope": "conv-1", "sources_truth": []}\n[1]\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"m\.jsonl:2: expected an object with text, style, scope, sources_truth; found \[1\]$"
    ):
        read_labelled_memories(path)
    path.write_text('{"text": "a", "style": 3, "scope": "conv-1", "sources_truth": []}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"m\.jsonl:1: style: expected a string; found 3$"):
        read_labelled_memories(path)
    path.write_text('{"text": "a", "style": "fact", "scope": "conv-1", "sources_truth": "D1:1"}\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"m\.jsonl:1: sources_truth: expected a list of turn ids \(strings\); found 'D1:1'$"
    ):
        read_labelled_memories(path)


def test_credit_quality_refuses_turns_of_another_scope(sample) -> None:
    """A truth naming a turn of another conversation, or an unknown scope, is refused with what to do."""
    wrong = LabelledMemory("x", "fact", "conv-1", ("conv-2/D1:1",))
    with pytest.raises(
        ParameterError,
        match=r"^labelled memory sources_truth: 'conv-2/D1:1' \(str\) is not a turn of scope 'conv-1'; name turns of "
        r"the memory's own scope by their ids$",
    ):
        credit_quality("auto", [wrong], sample)
    with pytest.raises(
        ParameterError,
        match=r"^labelled memory scope: 'conv-9' \(str\) is not a scope of the collection; choose from: conv-1, conv-2$",
    ):
        credit_quality("auto", [LabelledMemory("x", "fact", "conv-9", ())], sample)
