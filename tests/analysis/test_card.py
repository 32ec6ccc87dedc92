"""The definitions card: what it says for each shipped collection, read from the data and the measure registry."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.card import card_text, collection_card, evaluation_card, files_digest, short_form
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.datasets import load
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.metrics import REGISTRY, CutoffRule, MeasureDef, register_measure

SAMPLE = REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"
LONGMEMEVAL = REPO_ROOT / "fixtures/longmemeval-sample/longmemeval-sample.json"

SEED_CARD = """\
**agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions**

- **Data**: `corpus.jsonl` (sha256 `11ff3a637bb963cdca155363f32621621f1cce37c7e23d0fbf04ecc531b461f7`), \
`qrels/test.tsv` (sha256 `b49979eb5208b6d74ccb96ebc0f13fb57e847dfbe7b9fac0d183f6b124e8ca00`), `queries.jsonl` \
(sha256 `f43f519db9797c8f83b9ee106f86aa1dd54037f4ba2ab9c7ee6522782321e132`); release: **agentmemory assistant-notes \
fixture** (known from: authored for agentmemory and shipped in fixtures/assistant-notes; sha256 of the committed \
files, recomputed by tests/datasets/test_releases.py)
- **Read as**: the beir format (split=test)
- **Granularity**: not declared by the format (one entry per record it reads)
- **Relevance**: direct: a hit counts when it is judged relevant (grade >= 1), trec_eval's rule
- **Attribution**: none: every hit is an entry of the collection
- **Judgments**: the collection's own
- **Denominator**: 5 of 5 questions
- **Cutoffs**: k = 5; ranks cut at: 5; token budgets: none
- **Defaults chosen**: retrievers bm25,tags (the queries carry tags)

| Measure | Family | Better | Definition |
|---|---|---|---|
"""


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


def test_the_seed_fixture_card_to_the_letter(seed_evaluation) -> None:
    """The seed fixture's card: its three files and their release, and one row per measure from its MeasureDef,
    RR once as RR@5 (the comparison table's rule: the same measure when every ranking is cut at k = 5)."""
    same = " (RR is the same measure here: every ranking is cut at k)"
    rows = "".join(
        f"| {m} | {m.definition.family} | {m.definition.direction} | {m.definition.description}"
        f"{same if str(m) == 'RR@5' else ''} |\n"
        for m in seed_evaluation.measures
        if str(m) != "RR"
    )
    assert card_text(evaluation_card(seed_evaluation)) + "\n" == SEED_CARD + rows
    assert card_text(evaluation_card(seed_evaluation), plain=True).startswith(
        "agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions\n\n- Data: "
    )


def test_the_locomo_sample_counts_every_question(sample) -> None:
    """17 questions: 6 in the headline means, 9 skipped by the loader (each reason with its count) and 2 of the
    adversarial group; the counts add up, and the caption of the comparison table starts with the short form."""
    evaluation = evaluate(sample, "bm25")
    card = evaluation_card(evaluation)
    denominator = card["denominator"]
    assert (denominator["questions"], denominator["counted"]) == (17, 6)
    kinds = [(e["kind"], e["count"]) for e in denominator["exclusions"]]
    assert kinds == [("skipped", 1)] * 9 + [("group", 2)]
    assert denominator["exclusions"][-1]["reason"] == "5 adversarial"
    assert {e["reason"] for e in denominator["exclusions"][:9]} == {reason for _, reason in sample.skipped}
    assert denominator["counted"] + sum(e["count"] for e in denominator["exclusions"]) == denominator["questions"]
    line = next(x for x in card_text(card).splitlines() if x.startswith("- **Denominator**"))
    assert "9 skipped by the loader (1: " in line and "; 6 for 6 other reasons (the artifact lists every one))" in line
    assert card["short_form"] == "agentmemory LoCoMo sample, turns, trec_eval P/R/RR/nDCG/AP, 6 of 17 questions"
    assert card["granularity"] == "turn" and card["data"]["format"] == "locomo"
    assert card["data"]["options"] == {"repair": False, "include_captions": False, "granularity": "turn"}
    text = card_text(card)
    assert "- **Denominator**: 6 of 17 questions; left out: 9 skipped by the loader (1: " in text
    assert "; 2 in groups shown by group only, not in the headline means (2: 5 adversarial)" in text
    caption = comparison_table(evaluation, evaluation_statistics(evaluation, seed=7)).caption()
    assert caption.startswith(card["short_form"] + ". Systems against the baseline BM25, trec_eval's definitions: ")


def test_a_repaired_sample_and_an_unjudged_question_are_counted(tmp_path: Path) -> None:
    """With repair the loader keeps more questions; a query without judgment is its own exclusion."""
    repaired = evaluation_card(evaluate(load(SAMPLE, repair=True), "bm25"))
    assert repaired["denominator"]["counted"] > 6 and repaired["data"]["options"]["repair"] is True
    folder = tmp_path / "notes"
    shutil.copytree(REPO_ROOT / "fixtures/assistant-notes", folder)
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"_id": "q-extra", "text": "a question nobody judged"}\n')
    card = evaluation_card(evaluate(load(folder), "bm25"))
    assert card["data"]["release"] is None  # queries.jsonl changed
    assert card["denominator"] == {
        "questions": 6,
        "counted": 5,
        "exclusions": [{"kind": "unjudged", "reason": "no judgment", "count": 1}],
    }


def test_session_measures_and_granularity_are_stated() -> None:
    """LongMemEval at turn granularity: the card says turn, and a sess. measure says it scores sessions."""
    collection = load(LONGMEMEVAL, granularity="turn")
    card = evaluation_card(evaluate(collection, "bm25", measures="recall_any@5,sess.recall_any@5"))
    assert card["granularity"] == "turn"
    rows = {m["measure"]: m for m in card["measures"]}
    assert rows["sess.recall_any@5"]["granularity"] == "session" and rows["recall_any@5"]["granularity"] is None
    assert "(scores sessions) |" in card_text(card)
    assert card["short_form"].startswith(
        "agentmemory LongMemEval sample, turns, trec_eval P/R/RR/nDCG/AP + LongMemEval recall_any/sess.recall_any, "
    )
    assert evaluation_card(evaluate(load(LONGMEMEVAL), "bm25"))["granularity"] == "session"


def test_a_measure_describes_itself(sample) -> None:
    """A measure's family, direction and definition come from its MeasureDef: a plugin's shows as it says."""
    definition = MeasureDef(
        "cardtest",
        lambda ctx: 1.0,
        CutoffRule.REQUIRED,
        "one for every query (a test)",
        family="budget",
        direction="lower",
    )
    register_measure(definition)
    try:
        card = evaluation_card(evaluate(sample, "bm25", measures="cardtest@3"))
    finally:
        REGISTRY.unregister("cardtest")
    row = card["measures"][-1]
    assert row == {
        "measure": "cardtest@3",
        "name": "cardtest",
        "family": "budget",
        "direction": "lower",
        "granularity": None,
        "definition": "one for every query (a test)",
    }
    assert " + budget cardtest, " in card["short_form"]
    assert card["cutoffs"] == {"k": 5, "ranks": [3, 5], "budgets": []}


def test_a_budget_cutoff_is_read_from_the_measure_grammar(sample) -> None:
    """A cutoff written ``<n>tok`` is a token budget (the measure grammar), whatever the measure."""

    class Budgeted:  # the text form a token-budget measure has (R@512tok)
        definition = REGISTRY["R"]

        def __str__(self) -> str:
            return "R@512tok"

    card = collection_card(sample, measures=[Budgeted()], k=5, relevance="direct")  # type: ignore[list-item]
    assert card["cutoffs"] == {"k": 5, "ranks": [], "budgets": [512]}
    assert "- **Cutoffs**: k = 5; ranks cut at: none; token budgets: 512 tokens" in card_text(card)


def test_provenance_and_recorded_memories() -> None:
    """A derived run judged through provenance: the card states the rule and where the memories' sources are."""
    derived = REPO_ROOT / "fixtures/locomo-derived"
    run = read_run_file(derived / "derived.trec", "derived", memories=derived / "memories.jsonl")
    evaluation = evaluate(load(SAMPLE), None, runs=[run], relevance="provenance")
    card = evaluation_card(evaluation)
    assert card["relevance"] == "provenance"
    assert card["relevance_rule"].startswith("a hit counts through the judged sources its derived_from chain reaches")
    assert card["short_form"].endswith(", judged through provenance, 6 of 17 questions")
    assert (
        card["attribution"]
        == "as recorded in the memories files of derived: each memory counts through its derived_from"
    )


def test_the_card_is_the_same_bytes_and_names_no_folder(tmp_path: Path) -> None:
    """Two runs give the same artifact bytes; the card names the file, never the folder it was read from."""
    copy = tmp_path / "somewhere" / "locomo-sample.json"
    copy.parent.mkdir()
    shutil.copyfile(SAMPLE, copy)
    first = dumps_artifact(evaluate(load(copy), "bm25"))
    assert first == dumps_artifact(evaluate(load(copy), "bm25"))
    assert str(tmp_path) not in first and "somewhere" not in first
    assert '"release": "agentmemory LoCoMo sample"' in first


def test_a_collection_card_without_measures(sample) -> None:
    """A report that computes no measure: no relevance, no measure table, the data and questions still stated."""
    card = collection_card(sample)
    assert card["measures"] == [] and card["relevance"] is None
    assert short_form(card) == "agentmemory LoCoMo sample, turns, 6 of 17 questions"
    text = card_text(card, ["- **Measures**: none"])
    assert "| Measure |" not in text and text.endswith("- **Measures**: none")
    assert "Relevance" not in text and "Attribution" not in text


def test_many_data_files_are_counted_and_summed_up_by_one_hash(sample) -> None:
    """Past four files (a BEAM size folder holds 40 or 70) the card's data line counts them, names the first two and
    gives the sha256 of their sha256sum listing; up to four each is named with its hash, as before."""
    card = evaluation_card(evaluate(sample, "bm25", k=5))
    names = ["2/chat.json", "10/chat.json", "1/chat.json", "1/probing_questions/probing_questions.json", "2/q.json"]
    files = [{"name": n, "sha256": f"{i:064x}"} for i, n in enumerate(names)]
    ordered = sorted(files, key=lambda f: f["name"])
    listing = "".join(f"{f['sha256']}  {f['name']}\n" for f in ordered)
    assert files_digest(files) == hashlib.sha256(listing.encode()).hexdigest()
    unknown = {"release": None, "release_source": None}
    many = card_text({**card, "data": {**card["data"], **unknown, "files": ordered}}, plain=True)
    assert (
        "- Data: 5 files (`1/chat.json`, `1/probing_questions/probing_questions.json` and 3 more; each name and sha256 "
        f"in the artifact's card), sha256 of their `sha256sum` listing `{files_digest(files)}`; release: unknown release"
    ) in many.splitlines()
    few = card_text({**card, "data": {**card["data"], **unknown, "files": ordered[:4]}}, plain=True)
    assert f"`2/chat.json` (sha256 `{files[0]['sha256']}`)" in few
