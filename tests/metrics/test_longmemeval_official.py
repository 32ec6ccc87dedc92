"""LongMemEval's official measures: goldens by hand, the quirks, and parity with the published formulas.

The parity tests compare agentmemory's measures with ``official_*`` below: a
direct transcription, written here, of the definitions in LongMemEval's
``src/retrieval/eval_utils.py`` (``dcg``, ``ndcg``, ``evaluate_retrieval``,
``evaluate_retrieval_turn2session``), in their order of operations, on
rankings given as positions in the corpus list as the official code takes
them.  Nothing is imported from LongMemEval.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import rankings_of, turn_corpora

from agentmemory.datasets.locomo import load_locomo, locomo_session_of
from agentmemory.errors import ParameterError
from agentmemory.evaluation.runner import evaluate
from agentmemory.metrics import REGISTRY, Measure, compute_measures, parse_measures
from agentmemory.metrics.longmemeval_official import (
    dcg,
    ndcg_any,
    recall_all,
    recall_any,
    session_of,
    sessions_ndcg_any,
    sessions_recall_all,
    sessions_recall_any,
    widened_cutoff,
)

# --- the published definitions, transcribed -------------------------------------------------------------


def official_dcg(relevances, k):
    """DCG at k: the first gain, plus the others over log2 of their rank (2, 3, ...), by NumPy."""
    gains = np.asarray(relevances, dtype=float)[:k]
    if gains.size:
        return gains[0] + np.sum(gains[1:] / np.log2(np.arange(2, gains.size + 1)))
    return 0.0


def official_ndcg(rankings, correct_docs, corpus_ids, k):
    """nDCG at k: relevance 1 per corpus id among the correct ones; the ideal sorts every corpus relevance."""
    relevances = [1 if doc in correct_docs else 0 for doc in corpus_ids]
    ranked = [relevances[index] for index in rankings[:k]]
    ideal = official_dcg(sorted(relevances, reverse=True), k)
    actual = official_dcg(ranked, k)
    return 0.0 if ideal == 0 else actual / ideal


def official_evaluate(rankings, correct_docs, corpus_ids, k):
    """(recall_any, recall_all, ndcg_any) at k."""
    recalled = {corpus_ids[index] for index in rankings[:k]}
    return (
        float(any(doc in recalled for doc in correct_docs)),
        float(all(doc in recalled for doc in correct_docs)),
        official_ndcg(rankings, correct_docs, corpus_ids, k),
    )


def official_strip(doc_id):
    return "_".join(doc_id.split("_")[:-1])


def official_widen(rankings, corpus_sessions, k):
    """The effective k: grown by one while it is within the corpus and the top holds fewer than k sessions."""
    effective = k
    unique = {corpus_sessions[index] for index in rankings[:effective]}
    while effective <= len(corpus_sessions) and len(unique) < k:
        effective += 1
        unique = {corpus_sessions[index] for index in rankings[:effective]}
    return effective


def official_turn2session(rankings, correct_docs, corpus_ids, k):
    """Session-level (recall_any, recall_all, ndcg_any) of a turn ranking, and the effective k."""
    correct_sessions = list({official_strip(doc) for doc in correct_docs})
    corpus_sessions = [official_strip(doc) for doc in corpus_ids]
    effective = official_widen(rankings, corpus_sessions, k)
    return official_evaluate(rankings, correct_sessions, corpus_sessions, effective), effective


def _positions(ranking, corpus):
    where = {doc: i for i, doc in enumerate(corpus)}
    return [where[doc] for doc in ranking]


# --- parity (Hypothesis) ----------------------------------------------------------------------------------

ks = st.integers(min_value=1, max_value=40)


@given(st.data(), ks)
def test_measures_equal_the_published_formulas(data, k):
    """For random haystacks, gold sets and rankings (whole permutations, as the official harness ranks, or
    parts), recall_any, recall_all and ndcg_any (at any granularity: the formulas are the same) and their
    sess. versions of a turn run equal the transcription exactly (==), with the haystack as scope."""
    corpus, gold = data.draw(turn_corpora())
    ranking = data.draw(rankings_of(corpus))
    qrels = dict.fromkeys(gold, 1) | {d: 0 for d in data.draw(st.sets(st.sampled_from(corpus))) if d not in gold}
    positions = _positions(ranking, corpus)
    names = "recall_any,recall_all,ndcg_any,sess.recall_any,sess.recall_all,sess.ndcg_any"
    measures = parse_measures(",".join(f"{n}@{k}" for n in names.split(",")))
    ours = compute_measures(measures, ranking, qrels, scope_ids=corpus)
    plain = official_evaluate(positions, list(gold), corpus, k)
    by_session, _ = official_turn2session(positions, list(gold), corpus, k)
    expected = dict(zip([str(m) for m in measures], [*plain, *by_session]))
    assert ours == expected


@given(st.data(), ks)
def test_widened_cutoff_equals_the_official_loop(data, k):
    """The turn-to-session widening (k', the top k' turns and their sessions) is the official loop's."""
    corpus, _ = data.draw(turn_corpora())
    ranking = data.draw(rankings_of(corpus))
    expected = official_widen(_positions(ranking, corpus), [official_strip(d) for d in corpus], k)
    assert widened_cutoff(ranking, k, len(corpus)) == expected


@given(st.text(alphabet="ab_1", max_size=8))
def test_session_of_is_the_official_strip(doc_id):
    """session_of drops the last '_' part exactly as the official strip_turn_id ('' without '_')."""
    assert session_of(doc_id) == official_strip(doc_id)


@given(st.lists(st.sampled_from([0.0, 1.0]), max_size=300))
def test_dcg_is_bit_for_bit_the_official_one(gains):
    """dcg equals the official DCG exactly, NumPy's pairwise summation included (arrays over 128 items too)."""
    assert dcg(gains) == official_dcg(gains, len(gains) or 1)


# --- goldens, by hand -------------------------------------------------------------------------------------

#: A turn-level haystack: sessions s1 (turns 1, 3, 5), answer_x (1, 3; turn 3 renamed noans), s2 (2), answer_y (1).
CORPUS = ["s1_1", "s1_3", "s1_5", "answer_x_1", "noans_x_3", "s2_2", "answer_y_1"]
GOLD = {"answer_x_1": 1, "answer_y_1": 1}
L3 = math.log2(3)


@pytest.mark.parametrize(
    ("ranking", "k", "expected"),
    [
        # gold at ranks 1 and 2: both undiscounted (log2 of rank, rank 2 -> 1), so nDCG 1
        (["answer_x_1", "answer_y_1", "s1_1"], 2, (1.0, 1.0, 1.0)),
        # gold at rank 2 only, k = 2: DCG = 1/log2(2) = 1, ideal = 1 + 1 = 2
        (["s1_1", "answer_y_1", "answer_x_1"], 2, (1.0, 0.0, 0.5)),
        # gold at rank 3: 1/log2(3) over 1 + 1 + 0 (ideal cut at k = 3 holds the two gold)
        (["s1_1", "s1_3", "answer_x_1", "s2_2"], 3, (1.0, 0.0, (1 / L3) / 2.0)),
        # gold at ranks 2 and 3, k = 3: (1 + 1/log2 3) / 2
        (["s2_2", "answer_y_1", "answer_x_1"], 3, (1.0, 1.0, (1 + 1 / L3) / 2.0)),
        # nothing gold in the top 2; the ranking may be shorter than k
        (["s1_1", "noans_x_3", "answer_x_1"], 2, (0.0, 0.0, 0.0)),
        (["answer_x_1"], 5, (1.0, 0.0, 1.0 / 2.0)),
        ([], 5, (0.0, 0.0, 0.0)),
    ],
)
def test_plain_goldens(ranking, k, expected):
    """recall_any, recall_all, ndcg_any computed by hand on a small haystack."""
    golden = set(GOLD)
    assert (recall_any(ranking, golden, k), recall_all(ranking, golden, k), ndcg_any(ranking, golden, k, CORPUS)) == (
        pytest.approx(expected[0], abs=0),
        pytest.approx(expected[1], abs=0),
        pytest.approx(expected[2], rel=1e-15),
    )


@pytest.mark.parametrize(
    ("ranking", "k", "widened", "expected"),
    [
        # k = 2: s1_1, s1_3 are one session; s1_5 too; answer_x_1 is the 2nd session at depth 4.
        # Gold sessions answer_x, answer_y; top 4 holds answer_x: any 1, all 0.  Turn gains [0,0,0,1];
        # ideal: the corpus turns of gold sessions are answer_x_1 and answer_y_1 (noans_x_3 is session noans_x),
        # cut at 4 -> [1, 1, 0, 0]: nDCG = (1/log2 4) / (1 + 1) = 0.25
        (["s1_1", "s1_3", "s1_5", "answer_x_1", "answer_y_1"], 2, 4, (1.0, 0.0, 0.25)),
        # the renamed turn noans_x_3 is another session: it does not recall answer_x, and it counts as a
        # session of its own when k is widened (k = 2 is reached at depth 2)
        (["noans_x_3", "s2_2", "answer_x_1"], 2, 2, (0.0, 0.0, 0.0)),
        # two turns, two gold sessions in the top 2
        (["answer_y_1", "answer_x_1", "s2_2"], 2, 2, (1.0, 1.0, 1.0)),
        # a ranking that never spans k = 3 sessions widens to |corpus| + 1 = 8, where the ideal holds every
        # gold-session turn (two): DCG [0, 1] = 1 over ideal 1 + 1
        (["s1_1", "answer_y_1", "s1_3"], 3, 8, (1.0, 0.0, 0.5)),
        # k larger than the corpus: k' = k
        (["answer_y_1", "answer_x_1"], 9, 9, (1.0, 1.0, 1.0)),
    ],
)
def test_session_goldens(ranking, k, widened, expected):
    """sess. measures of a turn run, by hand: the widened k and the three values."""
    golden = set(GOLD)
    assert widened_cutoff(ranking, k, len(CORPUS)) == widened
    values = (
        sessions_recall_any(ranking, golden, k, frozenset(CORPUS)),
        sessions_recall_all(ranking, golden, k, frozenset(CORPUS)),
        sessions_ndcg_any(ranking, golden, k, frozenset(CORPUS)),
    )
    assert values == pytest.approx(expected, rel=1e-15, abs=0)


def test_session_ndcg_counts_every_turn_of_a_gold_session():
    """The official session nDCG scores turns: two gold turns of one session at ranks 1 and 2 both gain 1, and
    the ideal counts every corpus turn of the gold sessions, so it is the turn nDCG at k' with relevance by session."""
    corpus = ["a_1", "a_2", "b_1", "c_1"]
    golden = {"a_1", "a_2"}  # one gold session, two gold turns
    ranking = ["a_1", "a_2", "b_1"]
    # k = 2: {a} after 2 turns, {a, b} after 3 -> k' = 3; gains [1, 1, 0]; ideal [1, 1, 0] -> 1.0
    assert sessions_ndcg_any(ranking, golden, 2, frozenset(corpus)) == 1.0
    assert sessions_recall_all(ranking, golden, 2, frozenset(corpus)) == 1.0
    # the same turn gains 1 through its session even when not judged itself (only renaming prevents that)
    assert sessions_ndcg_any(["a_2", "b_1"], {"a_1"}, 2, frozenset(corpus)) == pytest.approx(1.0 / 2.0)


def test_ndcg_any_differs_from_trec_eval():
    """One gold item at rank 2 of 2: LongMemEval divides by log2(2) = 1 (nDCG 1 / 1), trec_eval by log2(3)."""
    ranking, qrels = ["x", "g"], {"g": 1}
    assert Measure("ndcg_any", 2).compute(ranking, qrels, scope_ids={"x", "g"}) == 1.0
    assert Measure("nDCG", 2).compute(ranking, qrels) == pytest.approx(1 / math.log2(3))


def test_without_scope_the_corpus_is_ranking_and_gold():
    """Without scope ids (agentmemory score), the corpus is the ranked ids with the gold ids."""
    ranking, qrels = ["s_1", "s_2"], {"g_1": 1, "g_2": 1, "s_2": 0}
    assert Measure("ndcg_any", 3).compute(ranking, qrels) == 0.0
    # sess.: corpus {s_1, s_2, g_1, g_2}, ranking spans one session < 3 -> k' = 5; ideal holds g_1, g_2
    assert Measure("sess.recall_any", 3).compute(ranking, qrels) == 0.0
    assert Measure("recall_all", 1).compute(["g_1"], {"g_1": 1, "g_2": 2}) == 0.0
    assert Measure("recall_all", 2).compute(["g_1", "g_2"], {"g_1": 1, "g_2": 2}) == 1.0


def test_definitions_state_their_family():
    """The six measures are registered with the family LongMemEval and require a cutoff."""
    names = ("recall_any", "recall_all", "ndcg_any", "sess.recall_any", "sess.recall_all", "sess.ndcg_any")
    for name in names:
        assert REGISTRY[name].family == "LongMemEval"
    with pytest.raises(ParameterError, match="recall_any needs a cutoff k"):
        Measure("recall_any")


@pytest.mark.parametrize("helper", [recall_any, recall_all])
def test_helpers_reject_bad_cutoff(helper):
    """k must be an integer >= 1."""
    with pytest.raises(ParameterError, match=r"^k: 0 \(int\) is less than 1; k must be an integer >= 1$"):
        helper(["a"], {"a"}, 0)


# --- LoCoMo: the conversion through the collection's entry-to-session mapping ---------------------------------

LOCOMO_CORPUS = frozenset(f"s/D{s}:{t}" for s in (1, 2, 3) for t in (1, 2))  # three sessions of two turns
LOCOMO_RANKING = ["s/D1:1", "s/D1:2", "s/D3:1", "s/D2:1", "s/D2:2"]
LOCOMO_GOLD = {"s/D2:2"}  # the gold session is s/S2


@pytest.mark.parametrize(
    ("k", "widened", "expected"),
    [
        # S1, S1, S3: two sessions at depth 3 -> k' = 3; S2 not among them; gains [0, 0, 0]
        (2, 3, (0.0, 0.0, 0.0)),
        # S1, S1, S3, S2: three at depth 4 -> k' = 4; gains [0, 0, 0, 1] (D2:1's session is gold), DCG 1/log2 4;
        # ideal: the corpus turns of S2 (two) cut at 4, [1, 1, 0, 0], DCG 1 + 1/log2 2 = 2 -> 0.5 / 2
        (3, 4, (1.0, 1.0, 0.25)),
    ],
)
def test_locomo_turn_run_at_session_level_by_hand(k, widened, expected):
    """A LoCoMo turn run scored by session through locomo_session_of (<sample_id>/D<s>:<t> -> <sample_id>/S<s>)."""
    assert widened_cutoff(LOCOMO_RANKING, k, len(LOCOMO_CORPUS), locomo_session_of) == widened
    values = tuple(
        f(LOCOMO_RANKING, LOCOMO_GOLD, k, LOCOMO_CORPUS, locomo_session_of)
        for f in (sessions_recall_any, sessions_recall_all, sessions_ndcg_any)
    )
    assert values == pytest.approx(expected, rel=1e-15, abs=0)
    # LongMemEval's rule would put every LoCoMo id in the one session '' (no '_'): k' = |corpus| + 1, recall 1
    assert widened_cutoff(LOCOMO_RANKING, k, len(LOCOMO_CORPUS)) == len(LOCOMO_CORPUS) + 1
    assert sessions_recall_any(LOCOMO_RANKING, LOCOMO_GOLD, k, LOCOMO_CORPUS) == 1.0


def test_measures_read_the_mapping_from_the_context():
    """Measure.compute passes session_of on to the sess. measures; without one, LongMemEval's rule applies."""
    qrels = dict.fromkeys(LOCOMO_GOLD, 1)
    (measure,) = parse_measures("sess.recall_any@2")
    assert measure.compute(LOCOMO_RANKING, qrels, LOCOMO_CORPUS, session_of=locomo_session_of) == 0.0
    assert measure.compute(LOCOMO_RANKING, qrels, LOCOMO_CORPUS) == 1.0


def test_an_evaluation_of_a_locomo_turn_run_uses_the_collections_mapping(tmp_path):
    """evaluate() hands the collection's session_of to the sess. measures: a LoCoMo run file scores as by hand."""
    turn = [{"speaker": "A", "dia_id": "", "text": "hello"}]
    conversation: dict[str, object] = {}
    for s in (1, 2, 3):
        conversation[f"session_{s}_date_time"] = f"9:00 am on {s} June, 2023"
        conversation[f"session_{s}"] = [dict(turn[0], dia_id=f"D{s}:{t}", text=f"turn {s} {t}") for t in (1, 2)]
    sample = {
        "sample_id": "s",
        "conversation": conversation,
        "qa": [{"question": "Which turn?", "answer": "x", "evidence": ["D2:2"], "category": 4}],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(sample), encoding="utf-8")
    run = tmp_path / "hand.trec"
    run.write_text(
        "".join(f"s/q0 Q0 {doc} {rank} {10 - rank} hand\n" for rank, doc in enumerate(LOCOMO_RANKING, start=1)),
        encoding="utf-8",
    )
    measures = "sess.recall_any@2,sess.recall_any@3,sess.ndcg_any@3"
    result = evaluate(load_locomo(path), None, runs=[("hand", str(run))], k=5, ties=False, measures=measures)
    values = result.results[0].per_query[0].metrics
    assert (values["sess.recall_any@2"], values["sess.recall_any@3"]) == (0.0, 1.0)
    assert values["sess.ndcg_any@3"] == pytest.approx(0.25, rel=1e-15)
