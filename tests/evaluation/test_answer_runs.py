"""Imported answer files scored as systems: answer measures, imported retrieval, left-out questions, seeds,
the failure split, claims naming their own evidence, the corrected key, and the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agentmemory.analysis.answers_view import judge_rows, seed_rows
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import evaluation_card
from agentmemory.analysis.claim_checks import check_claims
from agentmemory.analysis.failures import failure_splits
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.answers import read_answers
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import parse_answers_option, seed_spread
from agentmemory.evaluation.runner import evaluate, left_out_questions
from agentmemory.metrics.answer_text import answer_f1, has_answer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
ANSWERS = ROOT / "fixtures" / "answers"
MEM0 = ANSWERS / "mem0-locomo-sample.json"
ZEP = ANSWERS / "zep" / "zep_locomo_grades.json"
ERRATA = ROOT / "fixtures" / "locomo-sample" / "errata-sample.json"


@pytest.fixture(scope="module")
def repaired():
    return load(SAMPLE, repair=True)


@pytest.fixture(scope="module")
def strict():
    return load(SAMPLE)


def _mem0_rows() -> list[dict]:
    data = json.loads(MEM0.read_text(encoding="utf-8"))
    return [row for key in sorted(data, key=int) for row in data[key]]


def _headline(evaluation):
    return {q.query_id: q for q in evaluation.results[0].headline}


def test_an_answer_file_alone_is_scored_on_its_verdicts_and_answers(repaired):
    """Judge is the mean of the file's own llm_score over the headline questions it answers, F1 is LoCoMo's F1 of
    each response against the collection's gold answer, and with no ranking no retrieval measure is computed."""
    e = evaluate(repaired, None, answers=[f"mem0={MEM0}"])
    result = e.result("mem0")
    rows = _mem0_rows()
    assert result.kind == "answers"
    assert result.means["Judge"] == pytest.approx(math.fsum(r["llm_score"] for r in rows) / len(rows))
    by_text = {q.text: q for q in (*repaired.queries, *repaired.left_out_queries)}
    expected_f1 = [
        answer_f1(r["response"], str(by_text[r["question"]].metadata["answer"]), int(r["category"])) for r in rows
    ]
    assert result.means["F1"] == pytest.approx(math.fsum(expected_f1) / len(expected_f1))
    assert {str(m) for m in e.measures} == {"Judge", "F1", "EM", "BLEU-1"}  # nothing ranked: answer measures only


def test_a_retriever_beside_answers_gets_answer_in_context_and_no_verdicts(repaired):
    """answer_in_context@k of a retriever is has_answer of the gold answer over its top k texts; it has no Judge."""
    e = evaluate(repaired, "bm25", answers=[f"mem0={MEM0}"], k=3)
    bm25 = e.result("bm25")
    for q in bm25.per_query:
        query = next(x for x in (*repaired.queries, *repaired.left_out_queries) if x.id == q.query_id)
        gold = query.metadata.get("answer")
        texts = [repaired.entry(h.entry_id).text for h in q.hits[:3]]
        expected = None if gold is None else float(has_answer(str(gold), texts))
        assert q.metrics["answer_in_context@3"] == expected, q.query_id
        assert q.metrics["Judge"] is None
    assert bm25.means["Judge"] is None
    assert e.result("mem0").means["R@3"] is None  # the answer file ranked nothing: no value, never 0


def test_left_out_questions_are_scored_for_answers_only(strict):
    """Under strict loading the sample's malformed-evidence questions are left out of retrieval scoring; with an
    answer file they are scored on their answers, with no retrieval value."""
    assert strict.left_out_queries  # the sample leaves 9 out on purpose
    e = evaluate(strict, "bm25", answers=[f"mem0={MEM0}"])
    left = {q.id for q in strict.left_out_queries}
    bm25, mem0 = e.result("bm25"), e.result("mem0")
    scored_left = [q for q in mem0.per_query if q.query_id in left]
    assert scored_left and all(q.metrics["Judge"] is not None for q in scored_left if q.group != "5 adversarial")
    assert all(q.metrics["R@5"] is None for q in bm25.per_query if q.query_id in left)
    judged = [q for q in bm25.headline if q.query_id not in left]
    assert bm25.means["R@5"] == pytest.approx(math.fsum(q.metrics["R@5"] for q in judged) / len(judged))
    stats = evaluation_statistics(e, seed=7, n_resamples=200)
    assert stats.intervals["bm25"]["R@5"].n == len(judged) < stats.queries


def test_left_out_scores_a_retriever_as_an_evaluation_with_answers_does(strict):
    """left_out=True (what an experiment's tasks set) scores the questions answer files add, without any: a
    retriever's per-query values and means are those it has beside an answer file; a non-bool is refused."""
    beside = evaluate(strict, "bm25", answers=[f"mem0={MEM0}"]).result("bm25")
    measures = "Judge,F1,EM,BLEU-1,answer_in_context@5"
    alone = evaluate(strict, "bm25", left_out=True, measures=measures).result("bm25")
    assert [(q.query_id, q.metrics) for q in alone.per_query] == [(q.query_id, q.metrics) for q in beside.per_query]
    assert alone.means == beside.means
    assert (
        len(alone.per_query)
        == len(strict.judged_queries) + len(left_out_questions(strict))
        > len(evaluate(strict, "bm25").result("bm25").per_query)
    )
    with pytest.raises(ParameterError, match=r"^left_out: 'yes' \(str\) is not a bool; pass True or False$"):
        evaluate(strict, "bm25", left_out="yes")


def test_the_retrieval_in_an_answer_file_is_attributed_and_scored(repaired):
    """Zep's contexts are split into memories; a memory that is a turn's text verbatim counts as that turn."""
    e = evaluate(repaired, None, answers=[f"zep={ZEP}"], k=5)
    zep = e.result("zep")
    assert e.relevance == "provenance" and zep.kind == "answers"
    first = next(q for q in zep.per_query if q.query_id == "conv-1/q0")  # "What class did Priya sign up for?"
    assert first.metrics["R@5"] == 1.0  # its context holds the evidence turn D1:1 verbatim
    assert e.answers[0].attributed is not None and e.answers[0].attributed.report.returned > 0
    card = evaluation_card(e)
    assert card["answers"][0]["retrieval"] is True
    assert "answer files of zep" in card["attribution"]


def test_seeds_average_each_question_and_show_their_spread(repaired, tmp_path):
    """Two files of one system are seeds: a question's Judge is the mean of the seeds' verdicts, and the seed
    standard deviation is that of the two seeds' means."""
    rows = json.loads(MEM0.read_text(encoding="utf-8"))
    flipped = {
        key: [dict(r, llm_score=1 - r["llm_score"]) if i == 0 else r for i, r in enumerate(v)]
        for key, v in rows.items()
    }
    second = tmp_path / "mem0-seed2.json"
    second.write_text(json.dumps(flipped), encoding="utf-8")
    e = evaluate(repaired, None, answers=[f"mem0={MEM0},{second}", f"other={MEM0}"])
    system = e.answers[0]
    assert len(system.files) == 2
    first_means = [r["llm_score"] for r in _mem0_rows()]
    second_means = [r["llm_score"] for key in sorted(flipped, key=int) for r in flipped[key]]
    a, b = math.fsum(first_means) / len(first_means), math.fsum(second_means) / len(second_means)
    assert e.result("mem0").means["Judge"] == pytest.approx((a + b) / 2)
    stats = evaluation_statistics(e, seed=7, n_resamples=200)
    row = next(r for r in seed_rows(e, stats) if r.measure == "Judge")
    assert row.seeds == pytest.approx((a, b))
    assert row.sd == pytest.approx(abs(a - b) / math.sqrt(2))
    assert seed_spread([[1.0, 0.0], [None, 1.0]]) == ((0.5, 1.0), pytest.approx(math.sqrt(0.125)))


def test_the_failure_split_counts_each_question_once(repaired):
    """Each headline question with evidence and a verdict is in one cell: all/some/none of its evidence in the
    top k against correct/wrong, as the per-query results say."""
    e = evaluate(repaired, None, answers=[f"zep={ZEP}"], k=5)
    (split,) = failure_splits(e)
    expected = {(f, c): 0 for f in ("all", "some", "none") for c in (True, False)}
    for q in e.result("zep").headline:
        verdict = q.metrics["Judge"]
        if verdict is None or not q.relevant or verdict == 0.5:
            continue
        got = len(set(q.found) & set(q.relevant))
        found = "all" if got == len(q.relevant) else "some" if got else "none"
        expected[(found, verdict > 0.5)] += 1
    assert {(f, c): split.overall.cells[f][c] for f, c in expected} == expected
    assert sum(expected.values()) > 0
    share = split.overall.of_wrong("all")
    assert share.total == split.overall.wrong and (share.low is None or share.low <= share.value <= share.high)


def test_judges_agreement_is_the_share_of_questions_where_every_judge_agrees(repaired):
    """EverMemOS's three judgments per question: agreement counts the questions whose judgments are all equal."""
    path = ANSWERS / "evermemos-locomo-sample.json"
    e = evaluate(repaired, None, answers=[f"ev={path}"])
    (row,) = judge_rows(e)
    records = read_answers(path).records
    several = [r for r in records if len(r.verdicts) >= 2]
    agree = sum(len({v.value for v in r.verdicts}) == 1 for r in several)
    assert row.agreement == pytest.approx(agree / len(several)) and row.agreement_n == len(several)
    assert len(row.judges) == 3


def test_a_corrected_key_moves_the_answer_scores_and_drops_stale_verdicts(repaired):
    """Under the errata sample, a replaced gold answer changes F1 (computed here), and the imported verdict on that
    question, judged against the replaced answer, is no verdict under the corrected key; elsewhere nothing moves."""
    patched = read_judgment_patch(ERRATA, repaired).apply(repaired)
    e = evaluate(patched, None, answers=[f"mem0={MEM0}"])
    assert e.original is not None
    now = {q.query_id: q.metrics for q in e.result("mem0").per_query}
    before = {q.query_id: q.metrics for q in e.original.result("mem0").per_query}
    replaced = {k.query_id for k in patched.judgment_patch.answer_key if k.kind == "answer"}
    assert replaced
    assert all(now[q]["Judge"] == before[q]["Judge"] for q in now if q not in replaced)
    assert all(now[q]["Judge"] is None and before[q]["Judge"] is not None for q in replaced if q in before)
    assert any(now[q]["F1"] != before[q]["F1"] for q in replaced)
    assert all(now[q]["F1"] == before[q]["F1"] for q in now if q not in replaced)
    assert "answer-key ceiling" in evaluation_card(e)["judgments"]


def test_a_claim_naming_its_own_answer_file_is_checked_against_it(repaired, tmp_path):
    """A claim's answers file is imported as the claim's system and its Judge mean set beside the claimed value."""
    claims = tmp_path / "claims.toml"
    claims.write_text(
        f'[[claim]]\nsystem = "vendor"\ncollection = "agentmemory LoCoMo sample"\nmeasure = "Judge"\n'
        f'granularity = "question"\nvalue = 0.9\nquestions = 15\ncitation = "illustrative: a test"\n'
        f'illustrative = true\nanswers = "{MEM0.as_posix()}"\n',
        encoding="utf-8",
    )
    e = evaluate(repaired, "bm25", claims=str(claims))
    stats = evaluation_statistics(e, seed=7, n_resamples=200)
    (check,) = check_claims(e, stats, evaluation_card(e))
    assert check.system == "vendor"
    assert check.ours.mean == pytest.approx(e.result("vendor").means["Judge"])
    assert check.why_not is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"^--answers: '' \(str\) is empty; give \[NAME=\]FILE"),
        ("=a.json", r"^--answers: '=a.json' \(str\) has an empty NAME before '='"),
        ("x=a.json,,b.json", r"^--answers: 'x=a.json,,b.json' \(str\) names an empty file"),
        ("x=/nowhere/*.json", r"^--answers: '/nowhere/\*.json' \(str\) matches no file"),
    ],
)
def test_a_bad_answers_option_is_one_line(text, message):
    """Every malformed --answers is refused naming the option and the value."""
    with pytest.raises(ParameterError, match=message):
        parse_answers_option(text)


def test_eval_answers_writes_the_same_artifact_twice(tmp_path, capsys):
    """`agentmemory eval --answers` prints the imported answers and the failure split, and writes an artifact
    byte-identical across runs, naming its answer files without folders."""
    args = ["eval", "--collection", str(SAMPLE), "--repair", "--retrievers", "bm25"]
    args += ["--answers", f"zep={ZEP}", "--answers", f"mem0={MEM0}"]
    outs = []
    for name in ("a.json", "b.json"):
        assert main([*args, "--out", str(tmp_path / name)]) == 0
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    text = capsys.readouterr().out
    assert "Imported answers" in text and "Where zep failed" in text
    artifact = json.loads(outs[0])
    assert [a["system"] for a in artifact["card"]["answers"]] == ["zep", "mem0"]
    assert str(ANSWERS) not in outs[0].decode("utf-8")


def test_eval_answers_format_must_name_an_answers_system(capsys):
    """--answers-format NAME=... for a NAME no --answers gives is refused in one line, exit 2."""
    code = main(["eval", "--collection", str(SAMPLE), "--answers", f"m={MEM0}", "--answers-format", "x=mem0"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["agentmemory: error: --answers-format: 'x' (str) names no --answers system; choose from: m"]


def test_an_artifact_without_answers_has_no_answers_section(repaired):
    """Without answer files the card and the measures are what they were (no answers key, no answer measure)."""
    e = evaluate(repaired, "bm25")
    assert "answers" not in evaluation_card(e)
    assert not any(m.definition.reads_answer for m in e.measures)
    assert '"answers"' not in dumps_artifact(e)


def test_runs_dir_writes_an_answer_files_retrieval_so_it_rescores(tmp_path):
    """--runs-dir writes an answer file's retrieved memories as a run and a memories file (the same retrieval
    measures re-scored from them, without the answer file), and no run for a file that retrieved nothing."""
    runs = tmp_path / "runs"
    args = ["eval", "--collection", str(SAMPLE), "--repair", "--retrievers", "bm25"]
    args += ["--answers", f"zep={ZEP}", "--answers", f"mem0={MEM0}", "--runs-dir", str(runs)]
    assert main([*args, "--out", str(tmp_path / "a.json")]) == 0
    written = sorted(p.name for p in runs.iterdir())
    assert written == ["bm25.trec", "qrels-all.txt", "qrels.txt", "zep.memories.jsonl", "zep.trec"]
    rescored = ["eval", "--collection", str(SAMPLE), "--repair", "--retrievers", "", "--relevance", "provenance"]
    rescored += ["--run", f"zep={runs / 'zep.trec'}", "--memories", str(runs / "zep.memories.jsonl")]
    assert main([*rescored, "--out", str(tmp_path / "b.json")]) == 0
    first = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    second = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    ours = next(r for r in first["aggregate"] if r["retriever"] == "zep")
    again = next(r for r in second["aggregate"] if r["retriever"] == "zep")
    for measure in ("P@5", "R@5", "nDCG@5", "AP@5"):
        assert ours[measure] == pytest.approx(again[measure]), measure
