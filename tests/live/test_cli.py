"""``agentmemory eval --reader ... --judge ...`` on the LoCoMo sample, against the loopback chat server."""

from __future__ import annotations

import json

from agentmemory.cli.app import main

from .conftest import SAMPLE


def _args(server, *extra: str) -> list[str]:
    return [
        "eval",
        "--collection",
        str(SAMPLE),
        "--retrievers",
        "bm25",
        "--reader",
        f"openai[base_url={server.url}]",
        "--judge",
        f"openai[base_url={server.url}]",
        "--no-progress",
        *extra,
    ]


def test_eval_writes_answers_verdicts_tokens_and_the_failure_split_then_repeats_offline(
    server, cache, tmp_path, capsys, monkeypatch
) -> None:
    """The issue's command: the artifact holds each answer, its verdict and its calls' tokens; stdout the judges,
    the failure split and the calls; the re-run from the cache with the server stopped and --offline writes the
    same bytes, and the key never reaches the artifact."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written")
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main(_args(server, "--out", str(first))) == 0
    out = capsys.readouterr().out
    assert "Where BM25 + gpt-4o-mini failed (evidence in its top 5 against the judge's verdict):" in out
    assert "| bm25+gpt-4o-mini | 15 of 15 |" in out  # the judges' table
    assert "Calls this run: 32 sent (0 of them retries), 0 read from the cache." in out
    server.stop()
    assert main(_args(server, "--out", str(second), "--offline")) == 0
    assert "Calls this run: 0 sent (0 of them retries), 32 read from the cache." in capsys.readouterr().out
    assert second.read_bytes() == first.read_bytes()
    text = first.read_text()
    assert "sk-never-written" not in text
    artifact = json.loads(text)
    rows = [r for r in artifact["per_query"] if r["retriever"] == "bm25+gpt-4o-mini"]
    assert len(rows) == 17 and all(r["answer"]["text"] for r in rows)
    judged = [r for r in rows if r["answer"]["verdicts"]]
    assert len(judged) == 15 and all(r["metrics"]["Judge"] == r["answer"]["verdicts"][0]["value"] for r in judged)
    assert all(c["input_tokens"] > 0 for r in rows for c in r["answer"]["calls"])
    generated = artifact["card"]["answers"][0]["generated"]
    assert generated["reader"]["model"] == "gpt-4o-mini" and generated["reader"]["api_key_env"] == "OPENAI_API_KEY"
    assert generated["reader"]["prompt"]["source"] == "default" and len(generated["reader"]["prompt"]["sha256"]) == 64
    system = next(s for s in artifact["params"]["retrievers"] if s["name"] == "bm25+gpt-4o-mini")
    assert system["kind"] == "answers" and system["params"]["base"] == "bm25"


def test_a_question_whose_calls_fail_fails_the_run_in_one_line(server, cache, capsys) -> None:
    """500 on every attempt: exit 2 and one line naming the system, the question, the call and --lenient-answers."""
    server.fault(match="Question: What class did Priya sign up for?\n", status=500)
    reader = f"openai[base_url={server.url},model=r,retries=1,backoff=0]"
    code = main([*_args(server)[:5], "--reader", reader])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [
        f"agentmemory: error: bm25+r: the reader call on question conv-1/q0 (r at {server.url}) failed: got HTTP 500: "
        '{"error": {"message": "injected 500"}} (2 attempts); the calls that succeeded are cached: run again to retry '
        "the rest, or pass --lenient-answers to leave the failed questions out (counted in the card)"
    ]
    assert main([*_args(server)[:5], "--reader", reader, "--lenient-answers", "--no-progress"]) == 0
    assert "| BM25 + r | 16 of 17 | 0 | 1 |" in capsys.readouterr().out


def test_offline_without_the_cache_refuses_naming_the_first_call(server, cache, capsys) -> None:
    """--offline on an empty cache: exit 2, one line naming the first question, the call and how many are missing;
    nothing was sent."""
    assert main(_args(server, "--offline")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"agentmemory: error: bm25+gpt-4o-mini: the reader call on question conv-1/q0 (gpt-4o-mini at {server.url}) "
        "is not in the cache, and --offline makes no call; 16 more calls are not in it either; run without "
        "--offline to make them"
    ]
    assert server.requests == []


def test_judges_without_a_reader_or_answer_files_are_refused_before_anything_is_read(capsys) -> None:
    """--judge without --reader grades answer files' answers: without --answers it is one line naming both."""
    assert main(["eval", "--collection", str(SAMPLE), "--judge", "openai[base_url=http://127.0.0.1:9/v1]"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "agentmemory: error: --judge: 'openai[base_url=http://127.0.0.1:9/v1]' (str) has no answers to grade: there "
        "is no --reader and no answer file; give a reader (--reader) to answer the questions, or answer files "
        "(--answers) whose answers the judges grade"
    ]


def test_a_prompt_file_is_an_input_and_a_bad_one_is_refused(server, tmp_path, capsys) -> None:
    """--reader-prompt names its file in the message, with the placeholder refused and the ones allowed."""
    prompt = tmp_path / "reader.txt"
    prompt.write_text("{question} {memories} {context}", encoding="utf-8")
    assert main(_args(server, "--reader-prompt", str(prompt))) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"agentmemory: error: --reader-prompt {prompt}: '{{context}}' (str) is not a placeholder of the reader "
        "prompt; use: {question}, {memories}, {question_date}"
    ]
