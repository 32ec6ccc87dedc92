"""`eval --runs-dir` then `agentmemory score` on the files it wrote gives the report's means: qrels.txt holds the
headline questions' judgments only (LoCoMo's adversarial category 5 is left out of the headline), qrels-all.txt
every judged question."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.datasets import load

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
MEASURES = ("P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5")  # score's default at k = 5, all in the artifact


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, dict, str]:
    """The LoCoMo sample evaluated with bm25 and tags, its runs written: the runs folder, the artifact, stdout."""
    folder = tmp_path_factory.mktemp("rescore")
    out, runs = folder / "eval-results.json", folder / "runs"
    argv = [
        "eval",
        "--collection",
        str(SAMPLE),
        "--retrievers",
        "bm25,tags",
        "--runs-dir",
        str(runs),
        "--out",
        str(out),
    ]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*argv, "--no-progress"]) == 0
    return runs, json.loads(out.read_text(encoding="utf-8")), printed.getvalue()


def _query_ids(path: Path) -> set[str]:
    return {line.split()[0] for line in path.read_text(encoding="utf-8").splitlines()}


def test_qrels_hold_the_headline_questions_and_qrels_all_every_judged_one(exported) -> None:
    """qrels.txt: the 6 headline questions (the artifact's statistics count them); qrels-all.txt: all 8 judged,
    the 2 adversarial ones among them; the runs hold every judged question's ranking."""
    runs, artifact, _ = exported
    collection = load(SAMPLE)
    headline = {q.id for q in collection.headline_queries}
    assert sorted(p.name for p in runs.iterdir()) == ["bm25.trec", "qrels-all.txt", "qrels.txt", "tags.trec"]
    assert _query_ids(runs / "qrels.txt") == headline and len(headline) == artifact["statistics"]["queries"] == 6
    assert _query_ids(runs / "qrels-all.txt") == set(collection.qrels) and len(collection.qrels) == 8
    adversarial = {q.id for q in collection.judged_queries if q.group == "5 adversarial"}
    assert adversarial and not adversarial & headline and adversarial <= _query_ids(runs / "bm25.trec")


def test_eval_says_which_queries_the_qrels_hold_and_how_to_rescore(exported) -> None:
    runs, _, printed = exported
    assert (
        f"{runs}/qrels.txt holds the judgments of the 6 headline queries (the means above); {runs}/qrels-all.txt "
        "all 8 judged (groups left out of the headline: 5 adversarial). 1 ranking of a headline query has no hit "
        f"and writes no line: agentmemory score {runs}/qrels.txt --run ... --complete (trec_eval -c) counts such a "
        "query as 0, as the means do."
    ) in printed


def test_score_with_complete_gives_the_reports_means(exported, capsys) -> None:
    """`agentmemory score runs/qrels.txt --run bm25=... --run tags=... --complete`: every mean is the artifact's."""
    runs, artifact, _ = exported
    argv = [
        "score",
        str(runs / "qrels.txt"),
        "--run",
        f"bm25={runs / 'bm25.trec'}",
        "--run",
        f"tags={runs / 'tags.trec'}",
    ]
    assert main([*argv, "--complete", "--output-format", "json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    for name, row in zip(("bm25", "tags"), artifact["aggregate"]):
        assert scored[name]["queries"] == 6
        assert scored[name]["mean"] == {m: row[m] for m in MEASURES}


def test_score_without_complete_matches_where_every_ranking_has_a_hit_and_says_where_not(exported, capsys) -> None:
    """trec_eval's default (queries in both files): BM25's means are the report's; the tag scorer's empty ranking is
    left out, and a line under the table says so and how to count it."""
    runs, artifact, _ = exported
    argv = [
        "score",
        str(runs / "qrels.txt"),
        "--run",
        f"bm25={runs / 'bm25.trec'}",
        "--run",
        f"tags={runs / 'tags.trec'}",
    ]
    assert main([*argv, "--output-format", "json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["bm25"]["mean"] == {m: artifact["aggregate"][0][m] for m in MEASURES}
    assert scored["tags"]["queries"] == 5 and scored["tags"]["mean"]["R@5"] != artifact["aggregate"][1]["R@5"]
    assert main(argv) == 0
    assert capsys.readouterr().out.endswith(
        "queries: bm25 6, tags 5\n"
        "tags ranks 5 of the 6 judged queries of qrels.txt: its means are over those 5 (trec_eval's default); "
        "--complete counts the other 1 as 0 (trec_eval -c), as agentmemory eval's means do.\n"
    )


def test_scoring_every_judged_question_is_not_the_report(exported, capsys) -> None:
    """qrels-all.txt averages the adversarial questions in too: means over 8 questions, not the report's."""
    runs, artifact, _ = exported
    assert main(["score", str(runs / "qrels-all.txt"), str(runs / "bm25.trec"), "--output-format", "json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["queries"] == 8 and scored["mean"]["R@5"] != artifact["aggregate"][0]["R@5"]
