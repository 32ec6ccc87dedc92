"""The rough edges of replaying a real system: wall time per system and per conversation, progress where stderr is
not a terminal, conversations replayed in parallel from the command line, and the conversation's clock."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone

import pytest
from conftest import REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import UnknownNameError
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.system_runs import system_timings
from agentmemory.systems.base import Memory, Turn
from agentmemory.systems.progress import ReplayProgress
from agentmemory.systems.registry import resolve_system
from agentmemory.systems.replay import replay

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
EXAMPLE = "examples.my_memory_system:System"


# -- wall time ----------------------------------------------------------------------------------------------------------
def test_replay_times_each_conversation_and_the_whole():
    """Every scope replayed has its wall time (from making the system to closing it); the total covers them all
    (serially, at least their sum); the turns are the scopes' turns."""
    collection = load(SAMPLE)
    answered = replay(resolve_system(EXAMPLE), collection, depth=5)
    t = answered.timings
    assert [scope for scope, _ in t.scopes] == list(dict.fromkeys(q.scope for q in collection.judged_queries))
    assert all(seconds > 0 for _, seconds in t.scopes)
    assert t.total >= sum(seconds for _, seconds in t.scopes)
    assert t.turns == len(collection.entries)


def test_timings_table_has_total_and_per_conversation_columns():
    """``--timings`` prints, per memory system, its total, the conversations and their p50 and max wall time."""
    evaluation = evaluate(load(SAMPLE), systems=[EXAMPLE], k=5, timings=True)
    text = system_timings(evaluation.systems)
    header, rule, row = text.splitlines()[2:5]
    assert header.startswith("| system | total (s) | conversations | per conversation p50 (s) | per conversation max")
    cells = [c.strip() for c in row.strip("|").split("|")]
    t = evaluation.systems[0].replay.timings
    assert cells[:5] == [
        "Fact extractor (example)",
        f"{t.total:.3f}",
        "2",
        f"{sorted(s for _, s in t.scopes)[0] / 2 + sorted(s for _, s in t.scopes)[1] / 2:.3f}",
        f"{max(s for _, s in t.scopes):.3f}",
    ]


def test_the_command_lines_timings_table_fills_the_system_rows():
    """``eval --timings``' first table gives a memory system its search latency (its replay's search calls, p50
    and p95 in ms) and its turns, not dashes; a retriever keeps its own figures."""
    from agentmemory.analysis.text_tables import timing_rows

    evaluation = evaluate(load(SAMPLE), "bm25", systems=[EXAMPLE], k=5, timings=True)
    rows = {row[0]: row for row in timing_rows(evaluation)}
    t = evaluation.systems[0].replay.timings
    p = t.percentile
    system = rows["Fact extractor (example)"]
    assert system[1:] == [
        f"{1000 * p(t.search, 50):.3f}",
        f"{1000 * p(t.search, 95):.3f}",
        "-",
        f"{t.turns} turns",
        "a memory system",
    ]
    assert rows["BM25"][4] == str(len(evaluation.collection.entries))


def test_report_timings_table_fills_the_system_rows():
    """The report's timings table gives a memory system its search latency, its turns and its replay's total and
    per-conversation wall time, instead of dashes."""
    pytest.importorskip("pandas", reason="the report extra (pandas) is not installed")
    from agentmemory.report.tables import timings

    evaluation = evaluate(load(SAMPLE), "bm25", systems=[EXAMPLE], k=5, timings=True)
    frame = timings(evaluation).frame
    assert list(frame.columns)[-4:] == [
        "replay total (s)",
        "conversations",
        "per conversation p50 (s)",
        "per conversation max (s)",
    ]
    system = frame[frame["System"] == "Fact extractor (example)"].iloc[0]
    t = evaluation.systems[0].replay.timings
    assert (system["entries"], system["index size"]) == (f"{t.turns} turns", "a memory system")
    assert (system["replay total (s)"], system["conversations"]) == (f"{t.total:.3f}", "2")
    assert system["search p50 (ms)"] != "-"
    retriever = frame[frame["System"] == "BM25"].iloc[0]
    assert retriever["replay total (s)"] == "-"


# -- progress -----------------------------------------------------------------------------------------------------------
def test_plain_progress_lines_are_spaced_by_the_interval():
    """Where stderr is not a terminal: one line at most every ``interval`` seconds, then one at the end."""
    moments = iter([0.0, 4.0, 11.0, 12.0, 25.0, 30.0])
    out = io.StringIO()
    shown = ReplayProgress(out, interval=10.0, bar=False, now=lambda: next(moments))
    shown.start("Sys", 3)  # t = 0
    shown.scope(0)  # t = 4: no line
    shown.tick(1234, 0)  # t = 11: a line
    shown.scope(1)  # t = 12: no line
    shown.tick(10, 5)  # t = 25: a line
    shown.finish()  # t = 30
    assert out.getvalue().splitlines() == [
        "replaying Sys: scope 1 of 3, 1,234 turns, 0 questions",
        "replaying Sys: scope 2 of 3, 1,244 turns, 5 questions",
        "replayed Sys: 3 scopes, 1,244 turns, 5 questions in 30.0 s",
    ]


def test_replay_tells_the_progress_of_every_turn_and_question():
    """Under ``replay(..., progress=...)`` the counts reach every turn ingested and every question asked."""
    out = io.StringIO()
    collection = load(SAMPLE)
    replay(resolve_system(EXAMPLE), collection, depth=5, progress=ReplayProgress(out, interval=0.0, bar=False))
    lines = out.getvalue().splitlines()
    n_turns, n_questions = len(collection.entries), len(collection.judged_queries)
    assert lines[-1].startswith(
        f"replayed Fact extractor (example): 2 scopes, {n_turns} turns, {n_questions} questions"
    )
    assert any(line.startswith("replaying Fact extractor (example): scope 2 of 2, ") for line in lines)


def test_cli_progress_writes_plain_lines_where_stderr_is_not_a_terminal(capsys):
    """``--progress`` with stderr captured (not a terminal) writes the replay's plain lines, no bar of it."""
    status = main(["eval", "--collection", str(SAMPLE), "--system", EXAMPLE, "--retrievers", "", "--progress"])
    err = capsys.readouterr().err
    assert status == 0
    assert re.search(r"^replayed Fact extractor \(example\): 2 scopes, 33 turns, 8 questions in \d+\.\d s$", err, re.M)
    assert "replay Fact extractor" not in err  # the bar's description


# -- workers ------------------------------------------------------------------------------------------------------------
def test_workers_give_the_same_artifact_byte_for_byte(tmp_path, capsys):
    """``--workers 2`` replays the conversations in two processes; the artifact is the one of ``--workers 1``."""
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        argv = ["eval", "--collection", str(SAMPLE), "--system", EXAMPLE, "--system", "bm25", "--workers", workers]
        assert main([*argv, "--out", str(out)]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and b"Fact extractor" in outs[0]


def test_workers_below_one_are_refused(capsys):
    """``--workers 0`` is one line naming the flag, before anything is loaded."""
    assert main(["eval", "--collection", str(SAMPLE), "--system", EXAMPLE, "--workers", "0"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: --workers: '0' (str) is below 1; give the number of processes, e.g. 2\n"
    )


# -- the conversation's clock -------------------------------------------------------------------------------------------
SEEN: list[tuple[str, datetime, object]] = []


class ClockReader:
    """Remembers nothing; records what ``datetime.now()`` says in each call."""

    def __init__(self, scope=None, workdir=None) -> None:
        pass

    def ingest(self, turns: list[Turn]) -> None:
        SEEN.append(("ingest", datetime.now(timezone.utc), max(t.created_at for t in turns)))

    def search(self, query: str, k: int) -> list[Memory]:
        SEEN.append(("search", datetime.now(timezone.utc), query))
        return []

    def close(self) -> None:
        pass


@pytest.mark.parametrize("clock", ["conversation", "real"])
def test_conversation_clock_is_the_turns_and_the_questions_time(clock):
    """Under ``clock="conversation"`` the system's now is the newest turn's time while it ingests and the question's
    asked_at while it searches; under ``"real"`` it is this machine's clock."""
    SEEN.clear()
    collection = load(SAMPLE)
    asked = {q.text: q.asked_at for q in collection.judged_queries}
    assert all(asked.values())
    began = datetime.now(timezone.utc)
    answered = replay(resolve_system(ClockReader), collection, depth=5, clock=clock)
    assert answered.clock == clock
    ingests = [(now, newest) for kind, now, newest in SEEN if kind == "ingest"]
    searches = [(now, text) for kind, now, text in SEEN if kind == "search"]
    assert len(ingests) == 2 and len(searches) == len(collection.judged_queries)
    if clock == "conversation":
        assert all(now == newest for now, newest in ingests)
        assert all(now == asked[text] for now, text in searches)
    else:
        assert all(now >= began for now, _ in ingests + searches)


def test_clock_is_stated_in_the_artifact_only_when_not_real():
    """The conversation's clock changes what a clock-reading system answers: the system's params say so."""
    collection = load(SAMPLE)
    real = evaluate(collection, systems=[EXAMPLE], k=5)
    moved = evaluate(collection, systems=[EXAMPLE], k=5, clock="conversation")
    assert "clock" not in real.systems[0].params
    assert moved.systems[0].params["clock"] == "conversation"
    with pytest.raises(
        UnknownNameError, match=r"^clock: 'wall' \(str\) is not a known name; choose from: conversation, real"
    ):
        evaluate(collection, systems=[EXAMPLE], k=5, clock="wall")


# -- re-scoring a saved system under another attribution ----------------------------------------------------------------
@pytest.mark.parametrize("method", ["overlap[threshold=0.9]", "exact", "sources"])
def test_saved_memories_rescored_under_another_attribution_without_a_replay(tmp_path, method, capsys):
    """``--run NAME=RUN --memories FILE --attribution METHOD`` re-attributes a saved system's memories (their texts,
    and their own sources where the replay used them): the per-query values are those of replaying the system
    under METHOD; under the default ``auto`` the recorded attribution is kept."""
    import json

    runs = tmp_path / "runs"
    base = ["eval", "--collection", str(SAMPLE), "--retrievers", ""]
    assert main([*base, "--system", EXAMPLE, "--runs-dir", str(runs), "--out", str(tmp_path / "auto.json")]) == 0
    assert main([*base, "--system", EXAMPLE, "--attribution", method, "--out", str(tmp_path / "replayed.json")]) == 0
    saved = [f"fx={runs / 'examples.my_memory_system-System.trec'}", "--memories"]
    saved.append(str(runs / "examples.my_memory_system-System.memories.jsonl"))
    rescore = [*base, "--run", *saved, "--relevance", "provenance"]
    assert main([*rescore, "--attribution", method, "--out", str(tmp_path / "rescored.json")]) == 0
    assert main([*rescore, "--out", str(tmp_path / "kept.json")]) == 0
    capsys.readouterr()

    def values(name: str) -> list[tuple[str, dict]]:
        artifact = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        return [(row["query_id"], row["metrics"]) for row in artifact["per_query"]]

    assert values("rescored.json") == values("replayed.json")
    assert values("kept.json") == values("auto.json")
    if method != "sources":  # the example gives every memory its source: sources is what auto recorded
        assert values("rescored.json") != values("auto.json")


class Hangs(ClockReader):
    """Its search never returns (a thread left behind by the timeout)."""

    def search(self, query: str, k: int) -> list[Memory]:
        import threading

        threading.Event().wait(30)
        return []


def test_a_call_that_times_out_leaves_the_clock_restored():
    """The conversation's clock is set around each guarded call from the replay's own thread: when a call times
    out and its thread is left behind, the clock is the real one again."""
    from agentmemory.errors import MemorySystemError

    before = datetime.now(timezone.utc)
    with pytest.raises(MemorySystemError, match=r"did not return within 0\.5 s"):
        replay(resolve_system(Hangs), load(SAMPLE), depth=5, clock="conversation", timeout=0.5)
    assert datetime.now(timezone.utc) >= before
