"""Judgments through provenance: golden tables computed by hand, the definitions' edge cases, the fixture both ways."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmemory import Collection, MemoryEntry, Provenance, Query, evaluate
from agentmemory.cli.app import main
from agentmemory.errors import ParameterError
from agentmemory.metrics import parse_measure
from agentmemory.metrics.provenance import ancestors_of, credit

# A tiny collection: t1..t4 are turns (the judged sources), the rest are derived.
#   s12   <- t1, t2          (a summary reaching two sources)
#   f1    <- t1              (a fact reaching one source)
#   p     <- s12             (a chain: p -> s12 -> t1, t2)
#   d3    <- t3, judged itself with grade 2 (a derived entry that is itself judged)
ENTRIES = (
    MemoryEntry("t1", "turn one"),
    MemoryEntry("t2", "turn two"),
    MemoryEntry("t3", "turn three"),
    MemoryEntry("t4", "turn four"),
    MemoryEntry("s12", "summary", provenance=Provenance("derived", derived_from=("t1", "t2"))),
    MemoryEntry("f1", "fact", provenance=Provenance("derived", derived_from=("t1",))),
    MemoryEntry("p", "profile", provenance=Provenance("derived", derived_from=("s12",))),
    MemoryEntry("d3", "derived and judged", provenance=Provenance("derived", derived_from=("t3",))),
    MemoryEntry("x", "unrelated"),
)
QRELS = {"t1": 1, "t2": 1, "t3": 1, "d3": 2, "t4": 0}  # relevant sources: t1, t2, t3 (grade 1), d3 (grade 2)
ANCESTORS = ancestors_of(ENTRIES)


def _values(ranking: list[str], k: int) -> dict[str, float]:
    credited = credit(ranking, QRELS, ANCESTORS)
    out = {}
    for text in (f"P@{k}", f"R@{k}", "RR", f"RR@{k}", f"nDCG@{k}", f"AP@{k}", f"Success@{k}", "Rprec"):
        m = parse_measure(text)
        out[text] = m.definition.provenance(credited, m.cutoff)
    return out


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


IDCG3 = _dcg([2, 1, 1])  # the relevant sources by grade, one per rank: d3, then two of t1, t2, t3
IDCG2 = _dcg([2, 1])


@pytest.mark.parametrize(
    ("case", "ranking", "k", "expected"),
    [
        (
            "a hit reaching two sources",  # s12 credits t1 and t2 at rank 1; x reaches nothing
            ["s12", "x"],
            2,
            # P: 1 useful hit of 2; R: 2 of 4 sources; RR 1; AP: (2 sources x P@1 = 1) / 4;
            # nDCG: s12 takes places 1 and 2 (t1, t2, grade 1 each), x is cut: (1 + 1/log2 3) / IDCG@2.
            {
                "P@2": 0.5,
                "R@2": 0.5,
                "RR": 1.0,
                "RR@2": 1.0,
                "nDCG@2": (1 + 1 / math.log2(3)) / IDCG2,
                "AP@2": 0.5,
                "Success@2": 1.0,
                "Rprec": 0.5,
            },
        ),
        (
            "two hits reaching one source",  # f1 credits t1; t1 itself is credited already: useful, no new source
            ["f1", "t1", "x"],
            3,
            # P: 2 useful of 3; R: 1 of 4; AP: 1 x P@1 / 4; nDCG: gain 1 at rank 1 only.
            {
                "P@3": 2 / 3,
                "R@3": 0.25,
                "RR": 1.0,
                "RR@3": 1.0,
                "nDCG@3": 1 / IDCG3,
                "AP@3": 0.25,
                "Success@3": 1.0,
                "Rprec": 0.25,
            },
        ),
        (
            "a chain of derivations",  # p -> s12 -> t1, t2: p credits both at rank 2
            ["x", "p", "t3"],
            3,
            # P: 2 useful of 3; R: t1, t2, t3 = 3 of 4; RR 1/2; AP: (2 x P@2 + 1 x P@3) / 4 = (2 x 1/2 + 2/3) / 4;
            # nDCG: x place 1 (0), p places 2, 3 (t1, t2), t3 cut at k = 3: (1/log2 3 + 1/2) / IDCG@3.
            {
                "P@3": 2 / 3,
                "R@3": 0.75,
                "RR": 0.5,
                "RR@3": 0.5,
                "nDCG@3": (1 / math.log2(3) + 0.5) / IDCG3,
                "AP@3": (2 * 0.5 + 2 / 3) / 4,
                "Success@3": 1.0,
                "Rprec": 0.75,
            },
        ),
        (
            "a derived entry that is itself judged",  # d3 is a source (grade 2) and reaches t3: both credited at rank 1
            ["d3", "x"],
            2,
            # P: 1 of 2; R: 2 of 4; AP: 2 x 1 / 4; nDCG: places 1, 2 = d3 (2), t3 (1): equal to IDCG@2.
            {
                "P@2": 0.5,
                "R@2": 0.5,
                "RR": 1.0,
                "RR@2": 1.0,
                "nDCG@2": 1.0,
                "AP@2": 0.5,
                "Success@2": 1.0,
                "Rprec": 0.5,
            },
        ),
        (
            "nothing reached",
            ["x"],
            2,
            {
                "P@2": 0.0,
                "R@2": 0.0,
                "RR": 0.0,
                "RR@2": 0.0,
                "nDCG@2": 0.0,
                "AP@2": 0.0,
                "Success@2": 0.0,
                "Rprec": 0.0,
            },
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_golden_tables(case: str, ranking: list[str], k: int, expected: dict[str, float]) -> None:
    """Each measure through provenance equals the value computed by hand in the comments."""
    got = _values(ranking, k)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-12), (case, name)


def test_each_source_is_credited_once_to_the_first_hit_reaching_it() -> None:
    """reach lists every source a hit reaches; new only those no earlier hit reached, highest grade first."""
    credited = credit(["p", "f1", "d3"], QRELS, ANCESTORS)
    assert credited.reach == (frozenset({"t1", "t2"}), frozenset({"t1"}), frozenset({"d3", "t3"}))
    assert credited.new == (("t2", "t1"), (), ("d3", "t3"))  # grade 1 ties by id descending; grade 2 first


@given(st.lists(st.sampled_from([e.id for e in ENTRIES]), unique=True, max_size=9), st.integers(1, 9))
def test_provenance_values_stay_in_range_and_recall_never_exceeds_one(ranking: list[str], k: int) -> None:
    """For any ranking and cutoff every value is in [0, 1]: a source is never credited twice, nDCG never beats the ideal."""
    for value in _values(ranking, k).values():
        assert 0.0 <= value <= 1.0 + 1e-12


@given(st.lists(st.sampled_from(["t1", "t2", "t3", "t4", "x"]), unique=True, max_size=5), st.integers(1, 6))
def test_without_derived_entries_it_equals_trec_eval(ranking: list[str], k: int) -> None:
    """When no hit is derived, every provenance value equals the measure's trec_eval value."""
    qrels = {"t1": 1, "t2": 2, "t3": 1, "t4": 0}
    credited = credit(ranking, qrels, {})
    for text in (f"P@{k}", f"R@{k}", "RR", f"RR@{k}", f"nDCG@{k}", f"AP@{k}", f"Success@{k}", "Rprec"):
        m = parse_measure(text)
        assert m.definition.provenance(credited, m.cutoff) == pytest.approx(m.compute(ranking, qrels), abs=1e-12)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            (
                MemoryEntry("a", "a", provenance=Provenance(derived_from=("b",))),
                MemoryEntry("b", "b", provenance=Provenance(derived_from=("a",))),
            ),
            "derived_from: 'a' (str) is part of a cycle: 'a' -> 'b' -> 'a'; an entry cannot be derived, directly "
            "or not, from itself",
        ),
        (
            (MemoryEntry("a", "a", provenance=Provenance(derived_from=("zz",))),),
            "derived_from: 'zz' (str) is named by entry 'a' but is not in the corpus; derived_from may only name "
            "entries of the same collection",
        ),
    ],
    ids=["cycle", "unknown"],
)
def test_cycles_and_unknown_sources_are_named(entries, message: str) -> None:
    """A derived_from cycle or an unknown source is one error naming both ids."""
    with pytest.raises(ParameterError) as caught:
        ancestors_of(entries)
    assert str(caught.value) == message


def test_evaluate_credits_derived_memories_only_under_provenance() -> None:
    """The same run of derived memories: worthless under direct judgments, credited under provenance."""
    collection = Collection(
        "tiny",
        ENTRIES,
        (Query("q", "turn"),),
        MappingProxyType({"q": MappingProxyType(QRELS)}),
        MappingProxyType({"corpus": "0" * 64}),
    )
    direct = evaluate(collection, [], runs=[_run_file(collection, ["s12", "x"])], k=2)
    provenance = evaluate(collection, [], runs=[_run_file(collection, ["s12", "x"])], k=2, relevance="provenance")
    assert direct.results[0].means["R@2"] == 0.0
    assert provenance.results[0].means["R@2"] == 0.5
    assert provenance.results[0].per_query[0].found == ("t2", "t1")
    assert provenance.results[0].per_query[0].ties is None and provenance.relevance == "provenance"


def _run_file(collection: Collection, ranking: list[str]):
    from agentmemory.evaluation.runfiles import RunFile

    return RunFile(
        "mine", "mine.trec", "0" * 64, "trec", {"q": tuple((d, 10.0 - i, i + 1) for i, d in enumerate(ranking))}
    )


def test_a_measure_without_a_provenance_definition_is_refused_naming_it_and_the_mode() -> None:
    """Under provenance a measure asked for with no provenance function is refused in one line naming the measure
    and the mode (never dropped from the numbers); under direct relevance it is computed."""
    from agentmemory.metrics import REGISTRY, CutoffRule, MeasureDef, register_measure

    register_measure(MeasureDef("Plain", lambda q: 1.0, CutoffRule.FORBIDDEN, "always 1 (a test measure)"))
    try:
        having = sorted(d.name for d in REGISTRY.registered().values() if d.provenance is not None or d.reads_answer)
        assert "Plain" not in having and "P" in having
        message = (
            "measure: 'Plain' (str) has no definition under relevance = provenance; leave it out, or evaluate it "
            f"under another relevance; under provenance these have one: {', '.join(having)}"
        )
        collection = Collection("tiny", ENTRIES, (Query("q", "turn"),), {"q": QRELS}, {"corpus": "0" * 64})
        with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
            evaluate(collection, "bm25", k=2, measures="P@2,Plain", relevance="provenance")
        e = evaluate(collection, "bm25", k=2, measures="Plain")
        assert e.unscored == () and e.results[0].means["Plain"] == 1.0
    finally:
        REGISTRY.unregister("Plain")


FIXTURE = [
    "--collection",
    "fixtures/locomo-sample/locomo-sample.json",
    "--run",
    "derived=fixtures/locomo-derived/derived.trec",
    "--memories",
    "fixtures/locomo-derived/memories.jsonl",
]


@pytest.mark.parametrize(
    ("relevance", "recall"), [("direct", "0.083 [0.000, 0.250]"), ("provenance", "1.000 [1.000, 1.000] (all equal)")]
)
def test_the_fixture_both_ways(repo_root: Path, monkeypatch, capsys, relevance: str, recall: str) -> None:
    """fixtures/locomo-derived: the derived run's R@5 is 0.08 under direct judgments and 1.00 under provenance."""
    monkeypatch.chdir(repo_root)
    assert main(["eval", *FIXTURE, "--relevance", relevance, "--retrievers", "bm25"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| derived |"))
    header = next(line for line in out.splitlines() if line.startswith("| System |"))
    assert row.split(" | ")[header.split(" | ").index("R@5")].startswith(recall), row
    family = (  # the run has its own memories: the token budgets are among the defaults, first
        "judgments through provenance (evidence-level; no trec_eval equivalent)"
        if relevance == "provenance"
        else "agentmemory's context-budget definitions with the llama2 token counter (R@512tok, R@2048tok, "
        "Success@2048tok) and trec_eval's definitions (P@5, R@5, RR@5, nDCG@5, AP@5)"
    )
    assert out.startswith("Definitions (what every number below is):\n")  # the card first
    assert f"- Relevance: {relevance}: " in out
    assert f" questions. Systems against the baseline BM25, {family}: " in out


def test_memories_must_follow_a_run(capsys) -> None:
    """--memories without a --run before it is a usage error saying where it belongs."""
    assert main(["eval", "--memories", "m.jsonl"]) == 2
    assert re.match(
        r"agentmemory: error: --memories must follow the --run NAME=PATH it belongs to", capsys.readouterr().err
    )
