"""Cross-check against trec_eval itself, through pytrec_eval (package pytrec-eval-terrier).

pytrec_eval runs trec_eval's own C code on in-memory dicts, so it is an
independent implementation of the same semantics: score-descending order
with ties broken by document id descending, P_k dividing by k, map_cut and
recall dividing by all relevant judged, ndcg_cut with gain = grade and
discount log2(rank + 1), Rprec at R.

What pytrec_eval does not cover and how we check it instead:

* trec_eval's ``-c`` (complete) averaging is not exposed: pytrec_eval only
  returns queries present in both the run and the qrels.  We check our
  complete mean against trec_eval's rule (sum of those per-query values
  divided by the number of qrels queries).
* trec_eval has no cut reciprocal rank; RR@k is checked as pytrec_eval's
  ``recip_rank`` when that is >= 1/k, else 0.

Where pytrec_eval deviates from trec_eval: pytrec_eval-terrier 0.5.x stores
run scores as 32-bit floats before ranking (as trec_eval releases with
``float sim`` in ``TEXT_RESULTS`` did; current trec_eval stores a
``double``).  Scores that differ only beyond float32 precision (``1.0`` and
``1 + 2**-30``, ``1e300`` and ``1e299``, ``1e-300`` and ``0.0``) are ties there,
broken by document id.  We rank on the double, as current trec_eval does and
as our run files (``repr`` of the double) preserve; the random cases below
therefore use scores exactly representable in float32, and
:func:`test_pytrec_eval_ranks_on_float32_scores` pins the deviation down.

Observed pytrec_eval behaviour that a trec_eval *file* cannot show, and which
we match (see :mod:`agentmemory.metrics.scoring`): a qrels query mapped to no
judgment at all is dropped; a run query mapped to no document is scored 0 and
counts.  A qrels query whose judgments are all 0 or negative is scored 0 on
every measure and counts, as in trec_eval.
"""

from __future__ import annotations

import math
import random
import struct

import pytest

from agentmemory.metrics import parse_measures
from agentmemory.metrics.scoring import score_run

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i}" for i in range(1, 13)] + ["D1", "a", "x", "é", "z", "日本", "doc-1", "doc_1"]
QUERIES = ["q1", "q2", "q3", "q4", "q10", "Q1", "q-5"]
TIED = [0.0, -0.0, 0.5, 1.0, 1.0, 2.0, -1.5, 0.25, 2.0**-100, 2.0**100, 3.0]  # all exact in float32
CUTOFFS = [1, 2, 3, 5, 7, 10, 20]
CASES_PER_SEED = 30
SEEDS = range(10)  # 300 random cases in all


def _float32(value: float) -> float:
    """The nearest float32 value, as a Python float (so pytrec_eval's float32 ranking equals ours)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _random_case(rng: random.Random) -> tuple[dict, dict, list[int]]:
    """Random qrels, run and cutoffs exercising ties, short rankings, no-relevant and missing queries."""
    qrels: dict[str, dict[str, int]] = {}
    for qid in rng.sample(QUERIES, rng.randint(1, 6)):
        judged = rng.sample(DOCS, rng.randint(1, 10))
        if rng.random() < 0.15:  # judged, but nothing relevant
            qrels[qid] = {doc: rng.choice([0, 0, -1]) for doc in judged}
        else:
            qrels[qid] = {doc: rng.choice([-1, 0, 0, 1, 1, 1, 2, 3]) for doc in judged}
    in_run = [qid for qid in qrels if rng.random() < 0.8] or [rng.choice(list(qrels))]
    in_run += [qid for qid in QUERIES if qid not in qrels and rng.random() < 0.3]  # run-only queries
    run: dict[str, dict[str, float]] = {}
    for qid in in_run:
        docs = rng.sample(DOCS, rng.randint(0, 15))
        style = rng.random()
        if style < 0.4:
            scores = [rng.choice(TIED) for _ in docs]  # many ties
        elif style < 0.7:
            scores = [float(rng.randint(0, 3)) for _ in docs]  # integer scores, ties
        else:
            scores = [_float32(rng.uniform(-5, 5)) for _ in docs]
        run[qid] = dict(zip(docs, scores))
    cutoffs = sorted(rng.sample(CUTOFFS, rng.randint(1, 3)))
    return qrels, run, cutoffs


def _trec_eval_names(k: int) -> dict[str, str]:
    return {
        f"P@{k}": f"P_{k}",
        f"R@{k}": f"recall_{k}",
        f"nDCG@{k}": f"ndcg_cut_{k}",
        f"AP@{k}": f"map_cut_{k}",
        f"Success@{k}": f"success_{k}",
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_per_query_and_means_match_trec_eval(seed):
    """On random runs (ties, short rankings, graded, negative and all-zero judgments, missing queries)
    every per-query P@k, R@k, RR, RR@k, nDCG@k, AP@k, Success@k and Rprec equals trec_eval's to 1e-12,
    the default mean equals the mean of trec_eval's per-query values, and the complete mean equals
    trec_eval -c's (sum over scored queries / number of qrels queries)."""
    rng = random.Random(seed)
    for case in range(CASES_PER_SEED):
        qrels, run, cutoffs = _random_case(rng)
        names = {"RR": "recip_rank", "Rprec": "Rprec"}
        for k in cutoffs:
            names.update(_trec_eval_names(k))
        measures = parse_measures([*names, *(f"RR@{k}" for k in cutoffs)])
        expected = pytrec_eval.RelevanceEvaluator(qrels, set(names.values())).evaluate(run)
        ours = score_run(qrels, run, measures)
        where = f"seed {seed} case {case}: qrels={qrels!r} run={run!r}"

        assert sorted(expected) == list(ours.per_query), where
        for qid, values in ours.per_query.items():
            for ours_name, trec_name in names.items():
                assert values[ours_name] == pytest.approx(expected[qid][trec_name], abs=1e-12), (
                    f"{where}: {qid} {ours_name}"
                )
            for k in cutoffs:
                rr = expected[qid]["recip_rank"]
                assert values[f"RR@{k}"] == (rr if rr >= 1 / k else 0.0), f"{where}: {qid} RR@{k}"

        complete = score_run(qrels, run, measures, complete=True)
        for ours_name, trec_name in names.items():
            total = math.fsum(values[trec_name] for values in expected.values())
            assert ours.mean[ours_name] == pytest.approx(total / len(expected), abs=1e-12), where
            assert complete.mean[ours_name] == pytest.approx(total / len(qrels), abs=1e-12), where
        assert complete.queries == len(qrels)


@pytest.mark.parametrize(
    ("qrels", "run"),
    [
        ({"q": {"a": 0, "b": 0}}, {"q": {"a": 1.0, "b": 2.0}}),
        ({"q": {"a": -1}}, {"q": {"a": 1.0}}),
        ({"q": {"a": 0}, "r": {"a": 1}}, {"q": {"a": 1.0}, "r": {"b": 1.0, "a": 1.0}}),
    ],
    ids=["all-zero", "all-negative", "mixed"],
)
def test_queries_without_relevant_documents_count_as_zero(qrels, run):
    """trec_eval scores a judged query without relevant documents 0 on every measure and keeps it in the mean."""
    names = {"P@5": "P_5", "R@5": "recall_5", "RR": "recip_rank", "nDCG@5": "ndcg_cut_5", "AP@5": "map_cut_5"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(names.values())).evaluate(run)
    assert sorted(expected) == sorted(qrels)
    assert all(value == 0.0 for value in expected["q"].values())
    ours = score_run(qrels, run, list(names))
    assert ours.queries == len(qrels)
    assert ours.per_query["q"] == dict.fromkeys(names, 0.0)


def test_ties_follow_trec_eval_not_insertion_order():
    """With all scores tied, trec_eval ranks by id descending; so do we, whatever the insertion order."""
    qrels = {"q": {"d1": 1, "d2": 0, "d3": 0, "d4": 0, "d5": 0, "d6": 1}}
    run = {"q": {f"d{i}": 1.0 for i in range(1, 8)}}  # order: d7 d6 d5 d4 d3 | d2 d1
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "recip_rank"}).evaluate(run)["q"]
    ours = score_run(qrels, run, "P@5,RR").per_query["q"]
    assert ours == {"P@5": expected["P_5"], "RR": expected["recip_rank"]} == {"P@5": 0.2, "RR": 0.5}


@pytest.mark.parametrize(
    ("higher", "lower"),
    [(1.0 + 2.0**-30, 1.0), (1e300, 1e299), (1e-300, 0.0), (16777217.0, 16777216.0)],
)
def test_pytrec_eval_ranks_on_float32_scores(higher, lower):
    """pytrec_eval ties scores that are equal in float32, and breaks the tie by id ('b' above 'a');
    we rank by the double, as current trec_eval (``double sim``) does, so the higher score wins."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": higher, "b": lower}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"] == 0.5
    assert score_run(qrels, run, "RR").mean == {"RR": 1.0}
