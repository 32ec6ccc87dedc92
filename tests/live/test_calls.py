"""Each call's latency (stored with its reply, reported from the cache), the deadline across retries, and the
progress line of the calls, against the loopback chat server."""

from __future__ import annotations

import io
import json
import re
import time

import numpy as np
import pytest

from agentmemory.analysis.answers_view import live_text
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import card_text, evaluation_card
from agentmemory.errors import LiveCallError
from agentmemory.evaluation.runner import evaluate
from agentmemory.live import LiveOptions
from agentmemory.live.call_progress import CallProgress

K = 3
SLOW = "conv-1/q0"


def _spec(server, model: str = "reader-1", **extra: object) -> str:
    params = {"base_url": server.url, "model": model, "backoff": 0, **extra}
    return "openai[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]"


def _run(sample, server, progress: bool = False, **live: object):
    options = LiveOptions(
        readers=live.pop("readers", _spec(server)), judges=live.pop("judges", [_spec(server, "judge-1")]), **live
    )
    return evaluate(sample, "bm25", k=K, live=options, progress=progress)


def _question(sample, qid: str):
    return next(q for q in (*sample.queries, *sample.left_out_queries) if q.id == qid)


def _calls(evaluation, role: str) -> dict[str, dict]:
    """Per question, the artifact's call of ``role`` (reader or judge)."""
    artifact = json.loads(dumps_artifact(evaluation))
    return {
        r["query_id"]: c
        for r in artifact["per_query"]
        if r["retriever"] == "bm25+reader-1"
        for c in r["answer"]["calls"]
        if c["role"] == role
    }


def test_each_calls_latency_is_stored_in_the_cache_and_summarised_per_role(sample, server, cache) -> None:
    """A call's latency is the seconds its reply took (the server sleeps 0.5 s on one question), stored in its
    cache file and in the artifact's call; the card's p50/p95 are NumPy's percentiles of the stored values."""
    server.fault(match=f"Question: {_question(sample, SLOW).text}\n", sleep=0.5)
    e = _run(sample, server, judges=[])
    calls = _calls(e, "reader")
    assert calls[SLOW]["latency"] >= 0.5 and max(calls, key=lambda q: calls[q]["latency"]) == SLOW
    stored = sorted(json.loads(p.read_text())["latency"] for p in (cache / "chat").rglob("*.json"))
    assert stored == sorted(c["latency"] for c in calls.values())
    latency = evaluation_card(e)["answers"][0]["generated"]["latency"]
    assert latency["reader"] == {
        "calls": 17,
        "p50": round(float(np.percentile(stored, 50)), 6),
        "p95": round(float(np.percentile(stored, 95)), 6),
        "without_latency": 0,
    }
    assert latency["judge"] == {"calls": 0, "p50": None, "p95": None, "without_latency": 0}
    line = next(x for x in card_text(evaluation_card(e), plain=True).splitlines() if "latency per call" in x)
    assert f"reader p50 {latency['reader']['p50']:.3f}, p95 {latency['reader']['p95']:.3f} over 17 calls" in line


def test_a_rerun_reports_the_stored_latency_never_a_new_one(sample, server, cache) -> None:
    """Offline, every latency is the cache file's: an edited value comes back as written, and a file written
    before latency was recorded (none in it) is counted as without one, never measured again."""
    first = _run(sample, server)
    files = {json.loads(p.read_text())["request"]["endpoint"]["model"]: p for p in (cache / "chat").rglob("*.json")}
    reader_file, judge_file = files["reader-1"], files["judge-1"]
    document = json.loads(reader_file.read_text())
    document["latency"] = 12.5
    reader_file.write_text(json.dumps(document))
    document = json.loads(judge_file.read_text())
    del document["latency"]
    judge_file.write_text(json.dumps(document))
    server.stop()
    again = _run(sample, server, offline=True)
    edited = [q for q, c in _calls(again, "reader").items() if c["latency"] == 12.5]
    assert len(edited) == 1 and _calls(first, "reader")[edited[0]]["latency"] != 12.5
    latency = evaluation_card(again)["answers"][0]["generated"]["latency"]
    assert latency["reader"]["p95"] > latency["reader"]["p50"] and latency["judge"]["without_latency"] == 1
    assert [c for c in _calls(again, "judge").values() if c["latency"] is None] != []
    text = live_text(again)
    assert "| reader latency p50 / p95 (s) | judge latency p50 / p95 (s) |" in text
    assert re.search(r"\| \d+\.\d{3} / \d+\.\d{3} \(1 unrecorded\) \|$", text.splitlines()[4])


def test_a_retry_whose_wait_would_pass_the_deadline_is_not_made(sample, server, cache) -> None:
    """A 429 asking to wait 30 s, under a deadline of 2 s: one attempt, the question fails at once naming the
    deadline (lenient: left out, never scored wrong)."""
    server.fault(match=f"Question: {_question(sample, SLOW).text}\n", status=429, retry_after="30")
    began = time.monotonic()
    e = _run(sample, server, readers=_spec(server, deadline=2), lenient=True)
    assert time.monotonic() - began < 10
    row = next(r for r in e.result("bm25+reader-1").per_query if r.query_id == SLOW)
    assert row.metrics["Judge"] is None and row.metrics["F1"] is None
    [failed] = next(a for a in e.answers if a.live is not None).live.by_question[SLOW].failed
    assert failed == (
        f"the reader call (reader-1 at {server.url}) got HTTP 429: "
        '{"error": {"message": "injected 429"}} (1 attempt; its deadline of 2 s leaves no time to retry)'
    )


def test_the_deadline_bounds_the_attempts_and_their_waits_together(sample, server, cache) -> None:
    """Every attempt takes 0.4 s then gets a 500; with 20 retries allowed and a deadline of 1 s, the attempts
    stop within the deadline (the last gets only the time left), and the run fails naming it."""
    question = _question(sample, SLOW)
    server.fault(match=f"Question: {question.text}\n", status=500, sleep=0.4)
    began = time.monotonic()
    with pytest.raises(LiveCallError, match=r"leaves no time to retry\)") as caught:
        _run(sample, server, readers=_spec(server, retries=20, deadline=1, timeout=30), judges=[])
    assert time.monotonic() - began < 5
    sent = [b for b in server.calls("reader-1") if question.text in b["messages"][0]["content"]]
    assert 2 <= len(sent) <= 3
    assert re.search(rf"\({len(sent)} attempts; its deadline of 1 s leaves no time to retry\)", str(caught.value))


def test_the_progress_line_counts_questions_and_calls_where_stderr_is_no_terminal(sample, server, cache, capsys):
    """With progress on and stderr not a terminal: plain lines, the last one the whole run's questions and calls."""
    _run(sample, server, progress=True)
    lines = [x for x in capsys.readouterr().err.splitlines() if "bm25+reader-1" in x]
    assert re.fullmatch(
        r"answered bm25\+reader-1: 17 questions, 32 calls sent \(0 retried\), 0 read from the cache in \d+\.\d s",
        lines[-1],
    )
    _run(sample, server, progress=True)
    last = [x for x in capsys.readouterr().err.splitlines() if "bm25+reader-1" in x][-1]
    assert "17 questions, 0 calls sent (0 retried), 32 read from the cache" in last


def test_plain_progress_lines_are_spaced_by_the_interval() -> None:
    """A line at most every interval seconds while questions finish, then the closing line."""
    clock = iter([0.0, 1.0, 5.0, 11.0, 12.0, 25.0, 30.0])
    stream = io.StringIO()
    shown = CallProgress(stream, interval=10.0, bar=False, now=lambda: next(clock))
    shown.start("bm25+r", 5, lambda: (7, 2, 1))
    for _ in range(5):
        shown.question()
    shown.finish()
    assert stream.getvalue().splitlines() == [
        "answering bm25+r: 3 of 5 questions, 7 calls sent (1 retried), 2 read from the cache",
        "answering bm25+r: 5 of 5 questions, 7 calls sent (1 retried), 2 read from the cache",
        "answered bm25+r: 5 questions, 7 calls sent (1 retried), 2 read from the cache in 30.0 s",
    ]


def test_on_a_terminal_the_progress_is_a_bar() -> None:
    """bar=True draws a tqdm bar over the questions (no plain line)."""
    stream = io.StringIO()
    shown = CallProgress(stream, bar=True)
    shown.start("bm25+r", 2, lambda: (2, 0, 0))
    shown.question()
    shown.question()
    shown.finish()
    text = stream.getvalue()
    assert "answer bm25+r" in text and "2/2" in text and "answering" not in text
