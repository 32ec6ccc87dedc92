"""``--judge`` without ``--reader``: live judges grade an imported answer file's answers, their verdicts joining
the file's own as more judges; cached, counted and reproducible like every other call."""

from __future__ import annotations

import json

import pytest

from agentmemory.analysis.agreement import ALL, judge_agreement
from agentmemory.analysis.answers_view import judge_rows
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import card_text, evaluation_card
from agentmemory.answers.records import Verdict
from agentmemory.cli.app import main
from agentmemory.errors import LiveCallError, ParameterError
from agentmemory.evaluation.runner import evaluate
from agentmemory.live import LiveOptions
from agentmemory.metrics.answers import gold_answer

from .conftest import REPO, SAMPLE
from .server import judge_reply

MEM0 = REPO / "fixtures" / "answers" / "mem0-locomo-sample.json"
FAILING = "conv-2/q1"


def _judge(server, model: str = "judge-1", **extra: object) -> str:
    params = {"base_url": server.url, "model": model, "backoff": 0, **extra}
    return "openai[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]"


def _run(sample, server=None, **live: object):
    options = None if server is None else LiveOptions(judges=live.pop("judges", [_judge(server)]), **live)
    return evaluate(sample, None, answers=[f"mem0={MEM0}"], live=options)


def _expected(sample, evaluation) -> dict[str, str]:
    """Per question of mem0's file with an answer and a gold answer, the scripted judge's label."""
    system = evaluation.answers[0]
    queries = {q.id: q for q in (*sample.queries, *sample.left_out_queries)}
    out = {}
    for qid, records in system.records.items():
        gold, answer = gold_answer(queries[qid]), records[0].answer
        if gold is not None and answer is not None:
            out[qid] = judge_reply(f"Gold answer: {gold}\nGenerated answer: {answer}")
    return out


def test_a_judge_without_a_reader_grades_the_files_answers_as_another_judge(sample, server, cache) -> None:
    """Each answer of the file is sent to the judge once; its verdict follows the file's own in the record,
    Judge stays the file's, the judges' table shows both judges' accuracy and the agreement table their pair."""
    before = _run(sample)
    e = _run(sample, server)
    expected = _expected(sample, e)
    assert len(server.calls("judge-1")) == len(expected) == 15
    prompts = [b["messages"][0]["content"] for b in server.calls("judge-1")]
    system = e.answers[0]
    for qid, label in expected.items():
        record = system.records[qid][0]
        old = before.answers[0].records[qid][0]
        assert record.verdicts == (*old.verdicts, Verdict("judge-1", float(label == "CORRECT"), label))
        assert sum(f"Generated answer: {record.answer}\n" in p for p in prompts) == 1
    assert e.result("mem0").means == before.result("mem0").means
    row = judge_rows(e)[0]
    share = sum(v == "CORRECT" for v in expected.values()) / len(expected)
    assert [j[0] for j in row.judges] == ["llm_score", "judge-1"] and row.judges[1][1] == pytest.approx(share)
    first = judge_agreement(e)[0]
    assert (first.first, first.second, first.category, first.questions) == ("llm_score", "judge-1", ALL, 15)
    assert first.agree == sum(
        float(label == "CORRECT") == before.answers[0].records[q][0].verdict for q, label in expected.items()
    )
    assert e.answers[0].files[0].judges["judge-1"].startswith("1 for CORRECT/yes/true")


def test_the_card_and_the_artifact_state_the_rejudging(sample, server, cache, tmp_path) -> None:
    """The card's answer entry holds the judges' run (no reader; the judge, its prompt's sha256, tokens and
    latency); each per-query row of the artifact holds the live judge's verdict and its call."""
    e = _run(sample, server)
    [run] = evaluation_card(e)["answers"][0]["rejudged"]
    assert run["reader"] is None and run["base"] == "mem0" and run["judged"] == 15
    assert [j["model"] for j in run["judges"]] == ["judge-1"] and len(run["judges"][0]["prompt"]["sha256"]) == 64
    assert run["tokens"]["judges"]["judge-1"]["calls"] == 15 and run["latency"]["judge"]["calls"] == 15
    text = card_text(evaluation_card(e), plain=True)
    assert "    - the answers of mem0 graded live (no reader)" in text
    artifact = json.loads(dumps_artifact(e))
    row = next(r for r in artifact["per_query"] if r["retriever"] == "mem0" and r["query_id"] == "conv-1/q7")
    [graded] = row["rejudged"]
    assert graded["verdicts"] == [{"judge": "judge-1", "value": 1.0, "label": "CORRECT"}]
    assert [c["role"] for c in graded["calls"]] == ["judge"] and graded["calls"][0]["latency"] >= 0


def test_with_judge_majority_judge_is_the_majority_of_the_files_and_the_live_verdicts(sample, server, cache) -> None:
    """Two verdicts per question (the file's and the live judge's): 1 or 0 where they agree, 0.5 where not."""
    before = _run(sample)
    e = _run(sample, server, judge_majority=True)
    expected = _expected(sample, e)
    for row in e.result("mem0").per_query:
        if row.query_id not in expected:
            continue
        own = before.answers[0].records[row.query_id][0].verdict
        live = float(expected[row.query_id] == "CORRECT")
        assert row.metrics["Judge"] == (own if own == live else 0.5), row.query_id


def test_a_failed_judge_call_never_changes_the_files_verdict(sample, server, cache) -> None:
    """500 forever on one question: the run stops naming it; lenient, the question keeps the file's Judge (the
    first verdict) and has none under the majority rule; the card counts the failure."""
    question = next(q for q in sample.queries if q.id == FAILING)
    server.fault(match=f"Question: {question.text}\n", status=500)
    with pytest.raises(LiveCallError) as caught:
        _run(sample, server, judges=[_judge(server, retries=1)])
    assert str(caught.value).startswith(
        f"mem0: the judge call on question {FAILING} (judge-1 at {server.url}) failed: got HTTP 500: "
    )
    before = _run(sample)
    lenient = _run(sample, server, judges=[_judge(server, retries=1)], lenient=True)
    value = next(r for r in lenient.result("mem0").per_query if r.query_id == FAILING).metrics["Judge"]
    assert value == before.answers[0].records[FAILING][0].verdict == 1.0
    assert evaluation_card(lenient)["answers"][0]["rejudged"][0]["failed"] == {
        "questions": 1,
        "by_reason": {"judge judge-1: got HTTP 500": 1},
    }
    majority = _run(sample, server, judges=[_judge(server, retries=1)], lenient=True, judge_majority=True)
    assert next(r for r in majority.result("mem0").per_query if r.query_id == FAILING).metrics["Judge"] is None


def test_a_judge_named_like_the_files_judge_is_refused(sample, server, cache) -> None:
    """The verdicts of two judges of one name could not be told apart: one line saying to rename it."""
    with pytest.raises(
        ParameterError,
        match=r"^judges: 'openai\[.*,name=llm_score\]' \(str\) is named 'llm_score', as a judge of mem0's answer "
        r"file is; give it another name: openai\[...,name=NAME\]$",
    ):
        _run(sample, server, judges=[_judge(server, name="llm_score")])
    assert server.requests == []


def test_eval_rejudges_then_repeats_byte_for_byte_offline(server, cache, tmp_path, capsys) -> None:
    """agentmemory eval --answers FILE --judge SPEC: the judges' table, the agreement per category and the live
    table on stdout; the re-run with the server stopped and --offline writes the same bytes."""
    args = ["eval", "--collection", str(SAMPLE), "--answers", f"mem0={MEM0}", "--no-progress"]
    args += ["--judge", f"openai[base_url={server.url},model=judge-1]"]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main([*args, "--out", str(first)]) == 0
    out = capsys.readouterr().out
    assert "| mem0 | 15 of 15 | 0.667 [0.400, 0.867] | llm_score 0.667 (15); judge-1 " in out
    assert "| mem0 | llm_score vs judge-1 | all headline questions | 15 |" in out
    assert "| mem0 (re-judged) | 15 of 15 | 15 | 0 | - |" in out
    assert "Calls this run: 15 sent (0 of them retries), 0 read from the cache." in out
    server.stop()
    assert main([*args, "--out", str(second), "--offline"]) == 0
    assert "Calls this run: 0 sent (0 of them retries), 15 read from the cache." in capsys.readouterr().out
    assert second.read_bytes() == first.read_bytes()


def test_under_a_corrected_key_the_live_judge_grades_against_the_corrected_answer(sample, server, cache) -> None:
    """The errata replace two gold answers: the file's verdicts there are none (made against the old answer), the
    live judge's, graded against the corrected answer, are Judge; the original-key evaluation grades against the
    original answers (its own calls)."""
    from agentmemory.datasets.judgment_patch import read_judgment_patch
    from agentmemory.evaluation.answer_runs import rejudged

    patched = read_judgment_patch(REPO / "fixtures" / "locomo-sample" / "errata-sample.json", sample).apply(sample)
    replaced = rejudged(patched)
    e = _run(patched, server)
    expected = _expected(patched, e)
    rows = {r.query_id: r for r in e.result("mem0").per_query}
    for qid in replaced:
        gold = gold_answer(next(q for q in (*patched.queries, *patched.left_out_queries) if q.id == qid))
        prompt = next(
            b["messages"][0]["content"]
            for b in server.calls("judge-1")
            if f"Gold answer: {gold}\n" in b["messages"][0]["content"]
        )
        assert e.answers[0].records[qid][0].answer in prompt
        assert rows[qid].metrics["Judge"] == float(expected[qid] == "CORRECT"), qid
    assert len(server.calls("judge-1")) == 15 + len(replaced)  # the original key's two gold answers graded too
    assert e.original is not None and e.original.answers[0].rejudged


def test_each_answer_file_of_a_seeded_system_is_graded_and_its_seed_mean_follows(sample, server, cache) -> None:
    """mem0's two runs: every answer of each file is graded (an answer both files give is asked once, then read
    from the cache); under --judge-majority each seed's Judge mean is over its own file's and the judge's verdicts."""
    from agentmemory.analysis.answers_view import seed_rows
    from agentmemory.analysis.statistics import evaluation_statistics

    run2 = REPO / "fixtures" / "answers" / "mem0-locomo-sample-run2.json"
    options = LiveOptions(judges=[_judge(server)], judge_majority=True)
    e = evaluate(sample, None, answers=[f"mem0={MEM0},{run2}"], live=options)
    system = e.answers[0]
    queries = {q.id: q for q in (*sample.queries, *sample.left_out_queries)}
    headline = [q.query_id for q in e.results[0].headline]
    means = []
    for matched in system.matched:
        values = []
        for qid in headline:
            record = matched.by_query[qid]
            label = judge_reply(f"Gold answer: {gold_answer(queries[qid])}\nGenerated answer: {record.answer}")
            own, live = record.verdicts[0].value, float(label == "CORRECT")
            values.append(own if own == live else 0.5)
        means.append(sum(values) / len(values))
    asked = {(qid, r.answer) for m in system.matched for qid, r in m.by_query.items()}
    assert len(server.calls("judge-1")) == len(asked) < 30
    [row] = [r for r in seed_rows(e, evaluation_statistics(e, seed=7)) if r.measure == "Judge"]
    assert row.seeds == pytest.approx(tuple(means))
