"""An evaluation under patched judgments beside the original ones, and claims beside our values."""

from __future__ import annotations

import math

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.artifact import artifact_dict
from agentmemory.analysis.card import evaluation_card
from agentmemory.analysis.claim_checks import check_claims, claims_text
from agentmemory.analysis.judgments import original_statistics, patch_rows, patch_text
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.datasets import load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.evaluation.claims import read_claims
from agentmemory.evaluation.options import EvalOptions

SAMPLE = REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"
PATCH = REPO_ROOT / "fixtures/locomo-sample/qrels-patch.jsonl"
CLAIMS = REPO_ROOT / "fixtures/claims/claims.toml"


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


@pytest.fixture(scope="module")
def patched(sample):
    """bm25, dense and hybrid on the sample under its patch, with the example claims."""
    collection = read_judgment_patch(PATCH, sample).apply(sample)
    return evaluate(collection, "bm25,dense,hybrid", options=EvalOptions(claims=CLAIMS))


def _headline_mean(evaluation, system: str, measure: str) -> float:
    rows = evaluation.result(system).headline
    return math.fsum(q.metrics[measure] for q in rows) / len(rows)


def test_the_original_is_the_unpatched_evaluation(sample, patched) -> None:
    """Evaluation.original scores the same systems under the collection's own judgments: the numbers an
    evaluation without the patch gives, and the same rankings; the store and nothing else is reused."""
    plain = evaluate(sample, "bm25,dense,hybrid", options=EvalOptions(claims=CLAIMS))
    original = patched.original
    assert original is not None and original.original is None and plain.original is None
    assert original.collection.judgment_patch is None
    for mine, theirs in zip(original.results, plain.results):
        assert [(q.query_id, q.metrics, q.hits) for q in mine.per_query] == [
            (q.query_id, q.metrics, q.hits) for q in theirs.per_query
        ]
    for mine, theirs in zip(patched.results, original.results):
        assert [q.hits for q in mine.per_query] == [q.hits for q in theirs.per_query]
    assert patched.results[0].means["R@5"] != original.results[0].means["R@5"]


def test_the_side_by_side_table(patched) -> None:
    """Each cell is the original headline mean, the patched one and the difference, computed from the runs."""
    statistics = evaluation_statistics(patched, seed=7)
    original = original_statistics(patched, statistics)
    header, rows = patch_rows(patched, statistics, original)
    assert header[:3] == ["System", "P@5", "R@5"]
    before = _headline_mean(patched.original, "bm25", "R@5")
    after = _headline_mean(patched, "bm25", "R@5")
    assert rows[0][2] == f"{before:.3f} → {after:.3f} ({after - before:+.3f})"
    text = patch_text(patched, statistics, original)
    assert text.startswith(
        "Headline means under the original judgments → under the patched ones (3 judgments changed (1 removed, "
        "1 regraded, 1 added) on 2 queries by qrels-patch.jsonl): over 6 → 6 headline questions:"
    )
    assert "- line 2: `conv-2/q1` / `conv-2/D3:1`: grade 1 → removed: D3:1 says the gig went well" in text


def test_the_artifact_holds_the_patch_and_the_claims(patched) -> None:
    """judgment_patch: the corrections and the original's means; claims: every claim with its verdict."""
    data = artifact_dict(patched)
    keys = list(data)
    assert keys.index("collection") < keys.index("judgment_patch") < keys.index("claims") < keys.index("aggregate")
    patch = data["judgment_patch"]
    assert (patch["file"], patch["changed"], patch["queries"]) == ("qrels-patch.jsonl", 3, 2)
    assert patch["corrections"][1] == {
        "line": 2,
        "query_id": "conv-2/q1",
        "entry_id": "conv-2/D3:1",
        "from": 1,
        "to": None,
        "reason": "D3:1 says the gig went well, not when it was; D1:4 gives the date (3 February)",
    }
    assert patch["original"]["aggregate"][0]["R@5"] == patched.original.results[0].means["R@5"]
    assert data["card"]["judgments"].startswith("patched: 3 judgments changed")
    claims = data["claims"]
    assert claims["file"] == "claims.toml" and len(claims["claims"]) == 6


def test_each_claim_beside_our_value_under_its_definition(patched) -> None:
    """Reproducible claims get our headline mean under the collection's own judgments (the patched one beside);
    the others say why not; differences are named; a system not evaluated is listed apart."""
    statistics = evaluation_statistics(patched, seed=7)
    original = original_statistics(patched, statistics)
    checks = check_claims(patched, statistics, evaluation_card(patched), original=original)
    verdicts = [(c.claim.line, c.system, c.verdict) for c in checks]
    assert verdicts == [
        (8, "BM25", "cannot reproduce: the claim's granularity is session; our recall_any@5 scores turns"),
        (21, None, "not evaluated in this run"),
        (33, "BM25", "comparable as far as we can tell"),
        (44, "Hybrid RRF (BM25 + Dense (wordllama))", "comparable as far as we can tell"),
        (
            55,
            "Dense (wordllama)",
            "cannot reproduce: the claim's granularity is session; our recall_any@5 scores turns",
        ),
        (65, "BM25", "cannot reproduce: the claim states the LongMemEval family; our Success@5 follows trec_eval"),
    ]
    reproduced = checks[2]
    assert reproduced.ours is not None and reproduced.patched is not None
    assert reproduced.ours.mean == pytest.approx(_headline_mean(patched.original, "bm25", "R@5"), abs=1e-15)
    assert reproduced.patched.mean == pytest.approx(_headline_mean(patched, "bm25", "R@5"), abs=1e-15)
    assert checks[0].ours is None and checks[0].differences == (
        "release: the claim's is LongMemEval-S (cleaned), not known by hash (no sha256 given); ours is agentmemory "
        "LoCoMo sample",
        "granularity: the claim's is session; our recall_any@5 scores turns",
        "denominator: the claim averages over 500 questions; ours 6 of 17 questions",
    )
    assert checks[4].differences[-1] == "denominator: not stated by the claim; ours 6 of 17 questions"
    text = claims_text(patched.options.claims, checks)
    assert (
        "\n\nNot evaluated in this run (1), so each is a published row of the comparison table: hebb-mind (line 21)."
    ) in text
    assert checks[1].differences[0] == (  # snap-research/locomo names LoCoMo's file: the release is told by hash
        "release: the claim's is snap-research/locomo, which is LoCoMo (original = mem0 copy); ours is agentmemory "
        "LoCoMo sample"
    )
    assert "**Illustrative, not a published number.**" in text


def test_claim_measures_are_computed_and_unscored_ones_cannot_be_reproduced(sample) -> None:
    """Every claim's measure is computed (sess.recall_any@5 beside the defaults), whether or not its system is
    evaluated (each claim is a published row in its measure's column); under provenance a measure without a
    provenance definition is not, and the claim says so."""
    direct = evaluate(sample, "bm25,dense,hybrid", options=EvalOptions(claims=CLAIMS))
    defaults = ["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"]
    claimed = ["recall_any@5", "recall_any@10", "sess.recall_any@5", "Success@5"]
    assert [str(m) for m in direct.measures] == [*defaults, *claimed]
    only_bm25 = evaluate(sample, "bm25", options=EvalOptions(claims=CLAIMS))
    assert [str(m) for m in only_bm25.measures] == [*defaults, *claimed]  # hybrid's and hebb-mind's too
    proven = evaluate(sample, "bm25", options=EvalOptions(claims=CLAIMS, relevance="provenance"))
    statistics = evaluation_statistics(proven, seed=7)
    checks = check_claims(proven, statistics, evaluation_card(proven))
    assert checks[0].verdict == "cannot reproduce: recall_any@5 has no definition under relevance = provenance"
    assert "relevance: ours is judged through provenance" in checks[2].differences
    claims = read_claims(CLAIMS)
    assert check_claims(proven, statistics, evaluation_card(proven), claims)[2].ours is not None


def test_a_memory_system_is_replayed_once_for_both_judgments(sample) -> None:
    """A memory system's replay does not depend on the judgments: the original's evaluation reuses it."""
    collection = read_judgment_patch(PATCH, sample).apply(sample)
    evaluation = evaluate(collection, "bm25", systems=["examples.my_memory_system:System"], relevance="provenance")
    assert evaluation.original is not None
    assert evaluation.original.systems[0] is evaluation.systems[0]
    assert [r.name for r in evaluation.original.results] == [r.name for r in evaluation.results]


LOCOMO_SHA = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


@pytest.mark.parametrize(
    ("fields", "release"),
    [
        ('collection = "locomo10"', None),  # LoCoMo's file, by its name: the same hash as ours
        (f'collection = "my copy"\nsha256 = "{LOCOMO_SHA}"', None),  # any label, the stated hash
        (
            'collection = "my copy"',
            "release: the claim's is my copy, not known by hash (no sha256 given); ours is LoCoMo (original = mem0 "
            "copy)",
        ),
        (
            f'collection = "locomo10"\nsha256 = "{"0" * 64}"',
            "release: the claim's is locomo10, which is sha256 000000000000; ours is LoCoMo (original = mem0 copy)",
        ),
    ],
)
def test_releases_match_by_sha256_not_by_label(sample, tmp_path, fields: str, release: str | None) -> None:
    """A claim on "locomo10" is the release LoCoMo (original = mem0 copy) is: the hashes match, whatever the
    labels; a label we cannot tell, or another hash, is a difference."""
    path = tmp_path / "claims.toml"
    path.write_text(
        f'[[claim]]\nsystem = "bm25"\n{fields}\nmeasure = "R"\nk = 5\ngranularity = "turn"\nvalue = 0.5\n'
        'questions = 6\nsource = "https://example.org"\n',
        encoding="utf-8",
    )
    evaluation = evaluate(sample, "bm25", options=EvalOptions(claims=path))
    statistics = evaluation_statistics(evaluation, seed=7)
    card = evaluation_card(evaluation)
    card["data"] = {
        **card["data"],
        "files": [{"name": "locomo10.json", "sha256": LOCOMO_SHA}],
        "release": "LoCoMo (original = mem0 copy)",
    }  # the card of the real file: its hash is all a check reads
    (check,) = check_claims(evaluation, statistics, card)
    assert [d for d in check.differences if d.startswith("release")] == ([release] if release else [])
