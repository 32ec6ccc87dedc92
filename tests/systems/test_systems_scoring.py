"""Systems scored: the identity with bm25, re-scoring from --runs-dir files, attribution rules, replay order."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.evaluation.options import BUDGET_DEFAULTS
from agentmemory.evaluation.runner import evaluate
from agentmemory.records import MemoryEntry, Query
from agentmemory.systems import Memory
from agentmemory.systems.attribution import Attributor, parse_attribution
from agentmemory.systems.registry import resolve_system
from agentmemory.systems.replay import replay

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


@pytest.fixture(scope="module")
def sample() -> Collection:
    return load(SAMPLE)


@pytest.mark.parametrize("k", [1, 3, 5, 10])
@pytest.mark.parametrize("relevance,attribution", [("provenance", "sources"), ("direct", "exact")])
def test_bm25_as_a_system_equals_the_bm25_retriever(sample, k: int, relevance: str, attribution: str) -> None:
    """Verbatim turns searched by bm25 give, per query and measure, the bm25 retriever's direct values exactly."""
    system = evaluate(sample, None, systems=["bm25"], k=k, relevance=relevance, attribution=attribution).results[0]
    budgets = [m for m in system.means if m in BUDGET_DEFAULTS]  # a system's defaults: the retriever asks for them
    retriever = evaluate(sample, "bm25", k=k, relevance="direct", ties=False, measures=budgets).results[0]
    assert system.kind == "system" and system.label == "BM25 as a system"
    assert set(system.means) <= set(retriever.means) and len(system.means) >= 6 + len(BUDGET_DEFAULTS)
    for mine, theirs in zip(system.per_query, retriever.per_query, strict=True):
        assert mine.query_id == theirs.query_id
        for measure, value in mine.metrics.items():
            assert value.hex() == theirs.metrics[measure].hex(), (mine.query_id, measure)


def test_runs_dir_files_re_score_exactly(tmp_path: Path, capsys) -> None:
    """The memories file and run --runs-dir writes for a system re-score, as --run with --memories, to its values."""
    runs = tmp_path / "runs"
    first = tmp_path / "system.json"
    spec = "examples.my_memory_system:System"
    assert (
        main(
            [
                "eval",
                "--collection",
                str(SAMPLE),
                "--system",
                spec,
                "--retrievers",
                "",
                "--runs-dir",
                str(runs),
                "--out",
                str(first),
            ]
        )
        == 0
    )
    stem = "examples.my_memory_system-System"
    memories = runs / f"{stem}.memories.jsonl"
    lines = [json.loads(line) for line in memories.read_text(encoding="utf-8").splitlines()]
    assert lines and set(lines[0]) == {"_id", "text", "derived_from", "scope", "attribution"}
    assert {line["attribution"] for line in lines} == {"sources"}
    again = tmp_path / "again.json"
    assert (
        main(
            [
                "eval",
                "--collection",
                str(SAMPLE),
                "--retrievers",
                "",
                "--run",
                f"mine={runs / (stem + '.trec')}",
                "--memories",
                str(memories),
                "--relevance",
                "provenance",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    capsys.readouterr()
    old = json.loads(first.read_text(encoding="utf-8"))
    new = json.loads(again.read_text(encoding="utf-8"))
    assert old["per_query"] and len(old["per_query"]) == len(new["per_query"])
    for a, b in zip(old["per_query"], new["per_query"], strict=True):
        assert {k: v for k, v in a.items() if k not in ("retriever", "system")} == {
            k: v for k, v in b.items() if k not in ("retriever", "system")
        }


def test_the_example_system_is_scored_with_sources(sample) -> None:
    """The example extracts facts with sources: every memory attributed, by sources, and some evidence found."""
    evaluation = evaluate(sample, None, systems=["examples.my_memory_system:System"], k=5, relevance="provenance")
    report = evaluation.systems[0].attributed.report
    assert report.returned > 0 and report.coverage == 1.0
    assert set(evaluation.systems[0].attributed.how.values()) == {"sources"}
    assert 0 < evaluation.results[0].means["R@5"] <= 1
    assert evaluation.results[0].params["attribution"] == "auto"


class _Recorder:
    """Keeps every ingest call and every search, to check the replay's order."""

    calls: list = []
    batch_size = 2

    def __init__(self, scope=None, workdir=None) -> None:
        self.scope = scope
        assert workdir is not None and Path(workdir).is_dir()

    def ingest(self, turns) -> None:
        _Recorder.calls.append(("ingest", self.scope, tuple(t.entry_id for t in turns)))

    def search(self, query: str, k: int):
        _Recorder.calls.append(("search", self.scope, query))
        return []

    def close(self) -> None:
        _Recorder.calls.append(("close", self.scope))


def _timed(day: int | None) -> datetime | None:
    return None if day is None else datetime(2024, 1, day, tzinfo=timezone.utc)


def _collection() -> Collection:
    entries = (
        MemoryEntry("b", "second", created_at=_timed(2), scope="s"),
        MemoryEntry("a", "first", created_at=_timed(1), scope="s"),
        MemoryEntry("u", "undated", scope="s"),
        MemoryEntry("c", "third", created_at=_timed(2), scope="s"),
        MemoryEntry("d", "fourth", created_at=_timed(4), scope="s"),
        MemoryEntry("x", "other", created_at=_timed(1), scope="t"),
    )
    queries = (
        Query("late", "q-late", scope="s", asked_at=_timed(5)),
        Query("early", "q-early", scope="s", asked_at=_timed(2)),
        Query("any", "q-any", scope="s"),
        Query("t1", "q-t", scope="t", asked_at=_timed(3)),
    )
    qrels = {q.id: {"a": 1} for q in queries[:3]} | {"t1": {"x": 1}}
    return Collection("order", entries, queries, qrels, {"f": "0"})


def test_replay_order_without_as_of() -> None:
    """Undated turns first, then by time, equal times in collection order, in batches of batch_size; then queries."""
    _Recorder.calls = []
    replay(resolve_system(_Recorder), _collection(), depth=3)
    assert _Recorder.calls == [
        ("ingest", "s", ("u", "a")),
        ("ingest", "s", ("b", "c")),
        ("ingest", "s", ("d",)),
        ("search", "s", "q-late"),
        ("search", "s", "q-early"),
        ("search", "s", "q-any"),
        ("close", "s"),
        ("ingest", "t", ("x",)),
        ("search", "t", "q-t"),
        ("close", "t"),
    ]


def test_replay_order_as_of() -> None:
    """With as_of each query is asked once the turns up to its asked_at are in; undated queries last."""
    _Recorder.calls = []
    replay(resolve_system(_Recorder), _collection(), depth=3, as_of=True)
    assert _Recorder.calls[:7] == [
        ("ingest", "s", ("u", "a")),
        ("ingest", "s", ("b", "c")),
        ("search", "s", "q-early"),
        ("ingest", "s", ("d",)),
        ("search", "s", "q-late"),
        ("search", "s", "q-any"),
        ("close", "s"),
    ]


def test_attribution_methods() -> None:
    """exact compares token lists; overlap weighs the share of the turn's tokens in the memory by rarity (and needs
    three shared tokens); auto falls back."""
    entries = (
        MemoryEntry("t1", "Caroline: I joined a pottery class!", scope="s"),
        MemoryEntry("t2", "Melanie: Pottery sounds fun.", scope="s"),
        MemoryEntry("t3", "Caroline: I joined a pottery class!", scope="s"),
    )
    c = Collection("a", entries, (Query("q", "pottery", scope="s"),), {"q": {"t1": 1}}, {"f": "0"})
    helper = Attributor(c)
    exact = parse_attribution("exact")
    assert helper.attribute(exact, "s", Memory("caroline i JOINED a pottery class")) == (("t1", "t3"), "exact")
    assert helper.attribute(exact, "s", Memory("...")) == ((), "exact")
    # t2 = {melanie, pottery, sounds, fun}; w = ln(1 + 3/df): melanie, sounds, fun ln 4 (one turn), pottery ln 2
    # (three): {melanie, pottery, fun} in the memory -> (2 ln 4 + ln 2) / (3 ln 4 + ln 2) = 0.714; t1 and t3
    # share only "pottery", fewer than three tokens, so no threshold credits them
    memory = Memory("Melanie says pottery is fun")
    share = (2 * math.log(4) + math.log(2)) / (3 * math.log(4) + math.log(2))
    assert helper.containment("s", memory.text)[1] == pytest.approx(share)
    assert helper.attribute(parse_attribution("overlap[threshold=0.7]"), "s", memory) == (("t2",), "overlap")
    assert helper.attribute(parse_attribution("overlap[threshold=0.75]"), "s", memory) == ((), "overlap")
    assert helper.attribute(parse_attribution("overlap[threshold=0.1]"), "s", memory) == (("t2",), "overlap")
    assert helper.attribute(parse_attribution("auto"), "s", memory) == (("t2",), "overlap")
    assert helper.attribute(parse_attribution("auto"), "s", Memory("x", sources=("t3",))) == (("t3",), "sources")
    assert helper.attribute(parse_attribution("sources"), "s", Memory("Melanie: Pottery sounds fun.")) == (
        (),
        "sources",
    )


def test_direct_with_overlap_is_refused(sample) -> None:
    """Under direct a memory must be one entry: overlap attribution is refused with what to do instead."""
    with pytest.raises(ValueError, match=r"^attribution: 'overlap' \(str\) never makes a memory one entry"):
        evaluate(sample, None, systems=["bm25"], k=5, relevance="direct", attribution="overlap")


def test_cli_defaults_to_provenance_and_prints_coverage(capsys) -> None:
    """With --system the table is under provenance, and the attribution table shows coverage, and Judged@k's note
    (only the evidence turns are judged in LoCoMo: it equals P@k)."""
    assert (
        main(
            [
                "eval",
                "--collection",
                str(SAMPLE),
                "--system",
                "examples.my_memory_system:System",
                "--system",
                "bm25",
                "--retrievers",
                "bm25,hybrid",
                "--k",
                "5",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "judgments through provenance" in out
    assert "| Fact extractor (example) | auto |" in out and "| BM25 as a system | auto |" in out
    assert "Judged@5 equals P@5 here (so it is not shown)" in out and "Sensitivity to attribution" in out


def test_example_script_runs_from_anywhere(python_run, tmp_path: Path) -> None:
    """python examples/my_memory_system.py prints the comparison table and the system's coverage, from any folder."""
    done = python_run([str(REPO_ROOT / "examples" / "my_memory_system.py")], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| Fact extractor (example) |" in done.stdout
    assert "coverage 1.000, Judged@5 " in done.stdout
