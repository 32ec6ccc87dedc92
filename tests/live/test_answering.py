"""Live answers in an evaluation, against the loopback chat server: what is answered, judged, counted and cached,
and what each injected failure becomes (never a question scored 0 because a call failed)."""

from __future__ import annotations

import hashlib
import json
import math
import shlex
import threading

import pytest

from agentmemory.analysis.answers_view import judge_rows, live_text
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import card_text, evaluation_card
from agentmemory.analysis.failures import failure_splits
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.errors import LiveCallError
from agentmemory.evaluation.runner import evaluate
from agentmemory.live import Completion, LiveOptions, register_reader
from agentmemory.live.answering import memories_text
from agentmemory.metrics.answer_text import answer_f1

from .server import judge_reply, reader_reply

K = 3


def _reader(server, **extra: object) -> str:
    params = ",".join(
        f"{k}={v}" for k, v in {"base_url": server.url, "model": "reader-1", "backoff": 0, **extra}.items()
    )
    return f"openai[{params}]"


def _judge(server, model: str = "judge-1", **extra: object) -> str:
    return _reader(server, model=model, **extra)


def _run(sample, server, **live: object):
    options = LiveOptions(
        readers=live.pop("readers", _reader(server)), judges=live.pop("judges", [_judge(server)]), **live
    )
    return evaluate(sample, "bm25", k=K, live=options)


def _expected(evaluation, sample):
    """Per question, what the server answers and judges from bm25's top k (computed here from the hits)."""
    queries = {q.id: q for q in (*sample.queries, *sample.left_out_queries)}
    out = {}
    for row in evaluation.result("bm25").per_query:
        texts = [" ".join(sample.entry(h.entry_id).text.split()) for h in row.hits[:K]]
        answer = texts[0] if texts else "No information available"
        gold = queries[row.query_id].metadata.get("answer")
        verdict = None if gold is None else judge_reply(f"Gold answer: {gold}\nGenerated answer: {answer}")
        out[row.query_id] = (answer, verdict, str(gold) if gold is not None else None)
    return out


def test_a_reader_and_a_judge_answer_and_grade_every_question_from_the_top_k(sample, server, cache) -> None:
    """bm25+reader-1 is an answer system over bm25's ranking: each answer is the server's reply to the reader
    prompt holding bm25's top k, each verdict the scripted judge's; Judge, F1 and the failure split read them."""
    e = _run(sample, server)
    live = e.result("bm25+reader-1")
    base = e.result("bm25")
    assert (live.kind, live.label) == ("answers", "BM25 + reader-1")
    expected = _expected(e, sample)
    system = next(a for a in e.answers if a.name == "bm25+reader-1")
    for row in live.per_query:
        answer, verdict, gold = expected[row.query_id]
        record = system.records[row.query_id][0]
        assert record.answer == answer, row.query_id
        assert [v.label for v in record.verdicts] == ([] if verdict is None else [verdict])
        assert row.metrics["Judge"] == (None if verdict is None else float(verdict == "CORRECT"))
        if gold is not None:
            assert row.metrics["F1"] == pytest.approx(answer_f1(answer, gold, int(record.category)))
        retrieval = {m: v for m, v in row.metrics.items() if m not in ("Judge", "F1", "EM", "BLEU-1")}
        assert retrieval == {
            m: v for m, v in base.per_query[live.per_query.index(row)].metrics.items() if m in retrieval
        }
    headline = [expected[q.query_id][1] for q in live.headline if expected[q.query_id][1] is not None]
    assert live.means["Judge"] == pytest.approx(sum(v == "CORRECT" for v in headline) / len(headline))
    assert [s.system for s in failure_splits(e)] == ["BM25 + reader-1"]
    assert len(server.calls("reader-1")) == len(live.per_query) == 17  # every question, left-out ones included


def test_the_reader_prompt_holds_the_top_k_with_their_dates(sample, server, cache) -> None:
    """{memories} is bm25's top k, best first, each with its entry's date; {question_date} the question's."""
    e = _run(sample, server, judges=[])
    row = e.result("bm25").per_query[0]
    query = next(q for q in sample.queries if q.id == row.query_id)
    prompt = next(
        b["messages"][0]["content"]
        for b in server.calls("reader-1")
        if f"Question: {query.text}\n" in b["messages"][0]["content"]
    )
    lines = [
        f"{i}. [{sample.entry(h.entry_id).created_at:%Y-%m-%d %H:%M}] {sample.entry(h.entry_id).text}"
        for i, h in enumerate(row.hits[:K], 1)
    ]
    assert "\n".join(lines) in prompt
    assert f"The question was asked on {query.asked_at:%Y-%m-%d %H:%M}." in prompt
    assert "Judge" not in {str(m) for m in e.measures}  # no judge: answers scored by F1/EM/BLEU-1 only


def test_tokens_and_cost_are_counted_per_call_question_and_system(sample, server, cache, tmp_path) -> None:
    """Every call's usage (the server counts words) is kept per question and summed per role; a price table turns
    them into cost, per million tokens."""
    prices = tmp_path / "prices.toml"
    prices.write_text("[reader-1]\ninput = 1.0\noutput = 2.0\n")  # judge-1 is not priced
    e = _run(sample, server, prices=str(prices))
    system = next(a for a in e.answers if a.name == "bm25+reader-1")
    about = system.live.describe()
    sent = server.calls("reader-1")
    words_in = sum(len(b["messages"][0]["content"].split()) for b in sent)
    words_out = sum(len(reader_reply(b["messages"][0]["content"]).split()) for b in sent)
    assert about["tokens"]["reader"] == {"calls": 17, "input": words_in, "output": words_out, "without_usage": 0}
    assert about["tokens"]["judges"]["judge-1"]["calls"] == len(server.calls("judge-1")) == about["judged"]
    assert about["cost"]["reader"] == {
        "calls": 17,
        "cost": pytest.approx(words_in / 1e6 + 2 * words_out / 1e6),
        "without_cost": 0,
    }
    assert about["cost"]["judges"]["judge-1"]["without_cost"] == about["judged"]
    record = system.records["conv-1/q0"][0]
    assert record.extra["reader_input_tokens"] == record.tokens
    artifact = json.loads(dumps_artifact(e))
    row = next(r for r in artifact["per_query"] if r["retriever"] == "bm25+reader-1" and r["query_id"] == "conv-1/q0")
    assert [c["role"] for c in row["answer"]["calls"]] == ["reader", "judge"]
    assert row["answer"]["calls"][0]["input_tokens"] == record.tokens
    assert artifact["card"]["answers"][0]["generated"]["cost"]["file"] == "prices.toml"


def test_a_rerun_reads_the_cache_and_gives_the_same_artifact_offline(sample, server, cache) -> None:
    """The second run sends nothing: with the server stopped and offline, the artifact is byte-identical."""
    first = dumps_artifact(_run(sample, server))
    sent = len(server.requests)
    server.stop()
    again = _run(sample, server, offline=True)
    assert len(server.requests) == sent
    assert dumps_artifact(again) == first
    stats = next(a for a in again.answers if a.live is not None).live.stats
    assert (stats.sent, stats.cached) == (0, sent)


def test_rejudging_with_a_new_judge_prompt_makes_only_the_judge_calls(sample, server, cache, tmp_path) -> None:
    """The reader's calls are read from the cache; only the judge's (whose messages changed) are sent."""
    _run(sample, server)
    readers, judges = len(server.calls("reader-1")), len(server.calls("judge-1"))
    prompt = tmp_path / "judge.txt"
    prompt.write_text(
        "Is this right?\nQuestion: {question}\nGold answer: {gold_answer}\nGenerated answer: {generated_answer}\n"
    )
    e = _run(sample, server, judge_prompt=str(prompt))
    assert len(server.calls("reader-1")) == readers
    assert len(server.calls("judge-1")) == 2 * judges
    judge = evaluation_card(e)["answers"][0]["generated"]["judges"][0]
    assert judge["prompt"]["source"] == "judge.txt"
    assert judge["prompt"]["sha256"] == hashlib.sha256(prompt.read_bytes()).hexdigest()


def test_429_then_success_is_retried_and_scores_as_if_nothing_happened(sample, server, cache) -> None:
    """Two 429s (Retry-After 0) before the calls go through: retried, counted, the same values as a clean run."""
    clean = _run(sample, server).result("bm25+reader-1").means
    server.fault(status=429, times=2, retry_after="0")
    again = _run(sample, server, readers=_reader(server, seed=8)).result("bm25+reader-1")  # seed 8: not cached
    assert again.means == clean
    system = next(a for a in _run(sample, server, readers=_reader(server, seed=8), offline=True).answers if a.live)
    assert system.live.describe()["failed"]["questions"] == 0


def test_a_500_forever_fails_the_run_naming_the_question_after_caching_the_rest(sample, server, cache) -> None:
    """Every attempt of one question's reader call gets 500: the run stops with one line naming it, its attempts
    and what to do; every other call was made and cached (an offline lenient re-run misses only that one)."""
    question = next(q for q in sample.queries if q.id == "conv-2/q0")
    server.fault(match=f"Question: {question.text}\n", status=500)
    with pytest.raises(LiveCallError) as caught:
        _run(sample, server, readers=_reader(server, retries=2))
    assert str(caught.value) == (
        f"bm25+reader-1: the reader call on question conv-2/q0 (reader-1 at {server.url}) failed: got HTTP 500: "
        '{"error": {"message": "injected 500"}} (3 attempts); the calls that succeeded are cached: run again to '
        "retry the rest, or pass lenient to leave the failed questions out (counted in the card)"
    )
    assert len([b for b in server.calls("reader-1") if question.text in b["messages"][0]["content"]]) == 3
    with pytest.raises(
        LiveCallError,
        match=r"the reader call on question conv-2/q0 .* is not in the cache, and offline makes no call; run without offline to make it$",
    ):
        _run(sample, server, readers=_reader(server, retries=2), offline=True, lenient=True)


def test_with_lenient_a_failed_question_is_left_out_never_scored_wrong(sample, server, cache) -> None:
    """The failed question has no answer measure (None, not 0): the means are over the others, the card and
    the artifact say how many failed and why."""
    question = next(q for q in sample.queries if q.id == "conv-2/q0")
    server.fault(match=f"Question: {question.text}\n", status=500)
    e = _run(sample, server, readers=_reader(server, retries=1), lenient=True)
    live = e.result("bm25+reader-1")
    row = next(r for r in live.per_query if r.query_id == "conv-2/q0")
    assert {m: row.metrics[m] for m in ("Judge", "F1", "EM", "BLEU-1")} == dict.fromkeys(
        ("Judge", "F1", "EM", "BLEU-1")
    )
    values = [r.metrics["Judge"] for r in live.headline if r.metrics["Judge"] is not None]
    assert live.means["Judge"] == pytest.approx(math.fsum(values) / len(values))
    generated = evaluation_card(e)["answers"][0]["generated"]
    assert generated["failed"] == {"questions": 1, "by_reason": {"reader reader-1: got HTTP 500": 1}}
    artifact = json.loads(dumps_artifact(e))
    failed = next(
        r for r in artifact["per_query"] if r["retriever"] == "bm25+reader-1" and r["query_id"] == "conv-2/q0"
    )
    assert failed["answer"]["text"] is None and failed["answer"]["failed"][0].startswith(
        "the reader call (reader-1 at "
    )
    stats = evaluation_statistics(e, seed=7)
    assert stats.intervals["bm25+reader-1"]["Judge"].n == len(values) == len(live.headline) - 1
    assert (
        "1 failed (left out of the answer measures, never scored wrong); 1 reader reader-1: got HTTP 500"
        in card_text(evaluation_card(e), plain=True)
    )


@pytest.mark.parametrize(
    "fault,reason",
    [
        ({"sleep": 1.0}, "reader reader-1: got no reply within 0.2 s"),
        ({"body": "<html>502 Bad Gateway</html>"}, "reader reader-1: sent a body that is not JSON"),
    ],
)
def test_timeouts_and_garbage_bodies_are_retried_then_left_out(sample, server, cache, fault, reason) -> None:
    """A call that times out or gets a body that is not JSON on every attempt fails its question (lenient: left
    out, with its reason); once only, the retry succeeds."""
    question = next(q for q in sample.queries if q.id == "conv-1/q1")
    server.fault(match=f"Question: {question.text}\n", **fault)
    e = _run(sample, server, readers=_reader(server, retries=1, timeout=0.2), lenient=True)
    generated = evaluation_card(e)["answers"][0]["generated"]
    assert generated["failed"]["by_reason"] == {reason: 1}
    row = next(r for r in e.result("bm25+reader-1").per_query if r.query_id == "conv-1/q1")
    assert row.metrics["Judge"] is None and row.metrics["F1"] is None
    server.faults.clear()
    server.fault(match=f"Question: {question.text}\n", times=1, **fault)
    healed = _run(sample, server, readers=_reader(server, retries=1, timeout=0.2, seed=9))
    assert evaluation_card(healed)["answers"][0]["generated"]["failed"]["questions"] == 0


def test_a_judge_reply_that_is_not_a_verdict_leaves_the_question_out_of_judge_only(sample, server, cache) -> None:
    """The judge's 'Maybe' is no verdict: Judge has no value on any question, F1 still scores the answers."""
    server.replies["judge-1"] = "Maybe"
    e = _run(sample, server, lenient=True)
    live = e.result("bm25+reader-1")
    assert live.means["Judge"] is None and live.means["F1"] is not None
    assert evaluation_card(e)["answers"][0]["generated"]["failed"]["by_reason"] == {
        "judge judge-1: replied with no verdict": 15
    }


def test_several_judges_are_kept_the_first_is_the_headline_and_agreement_is_shown(sample, server, cache) -> None:
    """Every judge's verdicts are kept; Judge is the first's (or the majority: a two-judge split is 0.5), and the
    judges' agreement is the share of questions where both say the same."""
    server.replies["judge-2"] = "WRONG"
    judges = [_judge(server), _judge(server, model="judge-2")]
    first = _run(sample, server, judges=judges)
    majority = _run(sample, server, judges=judges, judge_majority=True)
    expected = _expected(first, sample)
    row = judge_rows(first)[0]
    verdicts = [expected[q.query_id][1] for q in first.result("bm25+reader-1").headline]
    agree = sum(v == "WRONG" for v in verdicts) / len(verdicts)
    assert row.agreement == pytest.approx(agree)
    assert [j[0] for j in row.judges] == ["judge-1", "judge-2"] and row.judges[1][1] == 0.0
    for q in majority.result("bm25+reader-1").headline:
        assert q.metrics["Judge"] == (0.5 if expected[q.query_id][1] == "CORRECT" else 0.0)
    assert evaluation_card(majority)["answers"][0]["generated"]["judge"] == "majority of the judges"


def test_a_memory_system_and_an_imported_answer_file_get_readers_too(sample, server, cache) -> None:
    """Every ranked system is read: a memory system's memories and an answer file's retrieved memories."""
    from pathlib import Path

    evermemos = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "evermemos-locomo-sample.json"
    options = LiveOptions(readers=_reader(server), judges=[_judge(server)])
    e = evaluate(sample, None, k=K, systems=["bm25"], answers=[f"em={evermemos}"], live=options)
    names = [r.name for r in e.results]
    assert "retriever[of=bm25]+reader-1" in names and "em+reader-1" in names
    system = next(a for a in e.answers if a.name == "em+reader-1")
    imported = next(a for a in e.answers if a.name == "em")
    for qid, records in system.records.items():
        if qid in imported.records and imported.records[qid][0].memories:
            first = imported.records[qid][0].memories[0].text
            assert records[0].answer == " ".join(first.split())
            break
    else:
        pytest.fail("no imported record with memories")


def test_a_plugin_reader_is_cached_and_counted_like_the_openai_kind(sample, cache) -> None:
    """A registered reader kind (a factory returning a chat model) goes through the same cache: a second run
    makes no call."""
    calls: list[str] = []

    class Echo:
        label = "echo"

        def __init__(self, word: str = "yes") -> None:
            self.word = word

        def identity(self) -> dict:
            return {"kind": "echo", "word": self.word}

        def complete(self, messages):
            calls.append(messages[0]["content"])
            return Completion(self.word, 1, 1)

    register_reader("echo-test", Echo, replace=True)
    e = evaluate(sample, "bm25", k=K, live=LiveOptions(readers="echo-test[word=pottery]"))
    again = evaluate(sample, "bm25", k=K, live=LiveOptions(readers="echo-test[word=pottery]"))
    assert len(calls) == 17 and e.result("bm25+echo").means == again.result("bm25+echo").means
    assert {a.records["conv-1/q0"][0].answer for a in e.answers} == {"pottery"}


def test_ctrl_c_leaves_only_whole_cache_files(sample, cache) -> None:
    """An interrupt during the calls propagates; the cache holds only whole files (no temporary file)."""
    count = [0]

    class Interrupting:
        def identity(self) -> dict:
            return {"kind": "interrupting"}

        def complete(self, messages):
            count[0] += 1
            if count[0] == 5:
                raise KeyboardInterrupt
            return Completion("answer", 1, 1)

    register_reader("interrupting-test", Interrupting, replace=True)
    with pytest.raises(KeyboardInterrupt):
        evaluate(sample, "bm25", k=K, live=LiveOptions(readers="interrupting-test"))
    for thread in threading.enumerate():  # the calls in flight end (as they do before the process exits)
        if thread.name.startswith("agentmemory-live"):
            thread.join(5)
    assert count[0] < 17  # the calls not yet started were not made
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files and all(p.suffix == ".json" for p in files)
    assert all(json.loads(p.read_text())["reply"]["content"] == "answer" for p in files)


def test_the_printed_summary_counts_calls_sent_and_cached(sample, server, cache) -> None:
    """live_text states each system's answered, judged and failed questions and this run's calls."""
    _run(sample, server)
    text = live_text(_run(sample, server))
    assert "| BM25 + reader-1 | 17 of 17 | 15 | 0 |" in text
    assert "Calls this run: 0 sent (0 of them retries), 32 read from the cache." in text


def test_memories_are_one_numbered_line_each() -> None:
    """The {memories} placeholder: numbered lines, the date when known, line breaks made spaces."""
    from datetime import datetime, timezone

    from agentmemory.live import ContextMemory

    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    text = memories_text([ContextMemory("a\nb", "x", when), ContextMemory("c")])
    assert text == "1. [2023-05-08 13:56] a b\n2. c"
    assert memories_text([]) == "(no memories)"


def test_two_live_judges_agreement_per_category_and_the_reports_tables(sample, server, cache) -> None:
    """judge-2 always says WRONG: in each category where judge-1 gives both verdicts kappa is 0 (their agreement
    is what chance gives), where judge-1 too says only WRONG it is undefined; the answers report's tables are the
    analysis rows."""
    from agentmemory.analysis.agreement import ALL, judge_agreement
    from agentmemory.analysis.answers_view import agreement_rows, live_rows
    from agentmemory.report import answer_report

    server.replies["judge-2"] = "WRONG"
    e = _run(sample, server, judges=[_judge(server), _judge(server, model="judge-2")])
    expected = _expected(e, sample)
    groups = {q.id: q.group for q in (*sample.queries, *sample.left_out_queries)}
    rows = judge_agreement(e)
    assert rows[0].category == ALL and {(r.first, r.second) for r in rows} == {("judge-1", "judge-2")}
    for row in rows[1:]:
        labels = [v for q, (_, v, _) in expected.items() if v is not None and groups[q] == row.category]
        assert row.questions == len(labels) and row.agree == labels.count("WRONG")
        assert row.kappa == (0.0 if "CORRECT" in labels else None), row.category
    table = answer_report.agreement(e)
    assert table.frame.values.tolist() == agreement_rows(e)
    header, body = live_rows(e)
    calls = answer_report.live_calls(e)
    assert list(calls.frame.columns) == header and calls.frame.values.tolist() == body
    assert "latency per call in seconds, p50 and p95, as measured when each call was made" in calls.caption


def test_the_artifacts_command_line_repeats_the_live_settings(sample, cache, tmp_path) -> None:
    """The readers, the judges (by spec, once each), a prompt file and the price table as given, the majority
    and the lenient rule reach the artifact's command line from the declaration; offline (how calls are made,
    not what they answer) does not; and the command parses back into the same live settings."""
    from agentmemory.cli.app import build_parser
    from agentmemory.evaluation.options import options_from_settings
    from agentmemory.evaluation.settings import SETTINGS
    from agentmemory.live import register_judge
    from agentmemory.report.results import cli_command

    class Echo:
        def __init__(self, word: str = "yes") -> None:
            self.word = word

        def identity(self) -> dict:
            return {"kind": "echo", "word": self.word}

        def complete(self, messages):
            return Completion(self.word, 1, 1)

    register_reader("echo-cmd", Echo, replace=True)
    register_judge("echo-cmd", Echo, replace=True)
    prompt = tmp_path / "reader.txt"
    prompt.write_text("Answer {question} from {memories} ({question_date}).", encoding="utf-8")
    prices = tmp_path / "prices.toml"
    prices.write_text("[x]\ninput = 1.0\noutput = 2.0\n", encoding="utf-8")
    live = LiveOptions(
        readers=["echo-cmd[word=pottery,name=a]", "echo-cmd[word=yes,name=b]"],
        judges=["echo-cmd[word=CORRECT]"],
        reader_prompt=str(prompt),
        judge_majority=True,
        lenient=True,
        prices=str(prices),
    )
    e = evaluate(sample, "bm25", k=K, live=live)
    command = cli_command(e, "fixtures/locomo-sample/locomo-sample.json")
    assert (
        "--reader 'echo-cmd[word=pottery,name=a]' --reader 'echo-cmd[word=yes,name=b]' --judge 'echo-cmd[word=CORRECT]' "
        f"--reader-prompt {prompt} --judge-majority --lenient-answers --prices {prices}"
    ) in command
    assert "--offline" not in command and "--judge-prompt" not in command
    args = build_parser().parse_args(shlex.split(command)[1:])
    given = {s.name: getattr(args, s.name) for s in SETTINGS if s.live}
    again = options_from_settings(given, "flag").live
    assert again is not None
    assert [r.key for r in again.readers] == [r.key for r in e.options.live.readers]
    assert [j.key for j in again.judges] == ["echo-cmd[word=CORRECT]"]
    assert again.reader_prompt == e.options.live.reader_prompt and again.prices == e.options.live.prices
    assert (again.judge_majority, again.lenient) == (True, True)
