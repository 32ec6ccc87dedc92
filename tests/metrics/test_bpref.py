"""bpref: trec_eval's definition, its batch kernel over Ranked's judged non-relevant entries, and pytrec_eval."""

from __future__ import annotations

import random
import struct
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest

from agentmemory.metrics import REGISTRY, Measure, parse_measure, parse_measures, scoring
from agentmemory.metrics import bpref as bpref_module
from agentmemory.metrics.bpref import batch_bpref, bpref
from agentmemory.metrics.ranked import rank_judged

# R = 3 relevant (a, c, d), N = 2 judged non-relevant (b, e: grade 0), n judged -1 (in the pool, unjudged).
QRELS = {"a": 1, "b": 0, "c": 2, "d": 1, "e": 0, "n": -1}


@pytest.mark.parametrize(
    ("ranking", "expected"),
    [
        (["a", "c", "d"], 1.0),  # every relevant entry above every non-relevant one
        (["b", "a", "x", "c"], (1 - 1 / 2 + 1 - 1 / 2) / 3),  # b above a and c; min(N, R) = 2
        (["b", "e", "a"], (1 - 2 / 2) / 3),  # both non-relevant above a: its term is 0
        (["n", "x", "a", "b"], 1 / 3),  # unjudged (x) and negative (n) entries stand above nothing
        ([], 0.0),
        (["b", "e"], 0.0),
    ],
)
def test_golden_values(ranking, expected):
    """Hand-computed: 1/R * sum over relevant retrieved of 1 - min(non-relevant above, R) / min(N, R)."""
    assert bpref(ranking, QRELS) == pytest.approx(expected, abs=1e-15)


def test_no_relevant_or_no_judged_non_relevant():
    """R = 0 scores 0; N = 0 makes every relevant retrieved entry's term 1."""
    assert bpref(["a"], {"a": 0, "b": 0}) == 0.0
    assert bpref(["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1}) == pytest.approx(2 / 3, abs=1e-15)


def test_registered_as_a_trec_eval_measure_without_a_cutoff():
    """bpref parses, takes no cutoff, is of the trec_eval family and has its module's batch kernel."""
    assert parse_measure("bpref") == Measure("bpref")
    definition = REGISTRY["bpref"]
    assert definition is bpref_module.DEFINITION and definition.batch is batch_bpref
    assert definition.family == "trec_eval" and definition.provenance is None


def test_ranked_carries_the_judged_non_relevant_entries():
    """rank_judged lists the retrieved entries of grade 0 with their trec_eval ranks, and N per query."""
    docs = [{"a": 3.0, "b": 4.0, "e": 1.0, "x": 5.0, "n": 2.0}, {}]
    ranked = rank_judged(docs, [QRELS, {"z": 0}])
    assert ranked is not None
    assert ranked.nonrel_query.tolist() == [0, 0] and ranked.nonrel_rank.tolist() == [2, 5]
    assert ranked.num_nonrel.tolist() == [2, 1] and ranked.num_rel.tolist() == [3, 0]
    assert batch_bpref(ranked).tolist() == [bpref(["x", "b", "a", "n", "e"], QRELS), 0.0]


def _float32(value: float) -> float:
    """pytrec_eval ranks float32 scores; these scores are exact in float32 so its ranking equals ours."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _random_run(rng: random.Random, queries: int) -> tuple[dict, dict]:
    """Qrels with grade-0 (judged non-relevant), negative and graded judgments; runs with ties and gaps."""
    qrels, run = {}, {}
    for q in range(queries):
        qid = f"q{q}"
        pool = [f"d{i}" for i in rng.sample(range(200), 80)]
        qrels[qid] = {doc: rng.choice([-1, 0, 0, 0, 1, 1, 2]) for doc in rng.sample(pool, rng.randint(1, 30))}
        if rng.random() < 0.9:
            tied = rng.random() < 0.3
            run[qid] = {
                doc: float(rng.randint(0, 4)) if tied else _float32(rng.uniform(-10, 10))
                for doc in rng.sample(pool, rng.randint(0, 60))
            }
    return qrels, run


@contextmanager
def _path(batch: bool):
    with mock.patch.object(scoring, "_BATCH_MIN_WORK", 0 if batch else float("inf")):
        yield


@pytest.mark.parametrize("seed", range(4))
def test_bpref_equals_pytrec_eval_on_runs_with_judged_non_relevant_entries(seed):
    """On random runs whose judgments hold grade-0 entries (and negative ones, ties, unretrieved relevant
    entries), bpref per query equals pytrec_eval's bpref on both paths, and the batch kernel equals the
    per-query helper exactly (all three are equal bit for bit)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_run(random.Random(seed), 120)
    assert any(g == 0 for judged in qrels.values() for g in judged.values())
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)
    with _path(batch=True):
        batch = scoring.score_run(qrels, run, "bpref")
    with _path(batch=False):
        each = scoring.score_run(qrels, run, "bpref")
    assert sorted(expected) == list(batch.per_query)
    for qid, values in batch.per_query.items():
        assert values["bpref"] == expected[qid]["bpref"], qid  # exactly: the same operations in the same order
    assert batch == each
    nonzero = [v["bpref"] for v in batch.per_query.values() if 0 < v["bpref"] < 1]
    assert nonzero  # the cases exercise the non-relevant counts, not only 0 and 1


def test_the_batch_path_scores_bpref_with_the_other_measures():
    """With bpref beside the other trec_eval measures, score_queries takes the batch path (every kernel present)
    and each column equals the per-query helpers'."""
    qrels, run = _random_run(random.Random(9), 40)
    chosen = parse_measures("P@5,R@10,RR,nDCG@10,AP@10,Success@3,Rprec,bpref")
    scored = sorted(set(qrels) & set(run))
    columns = scoring.score_queries(chosen, [run[q] for q in scored], [qrels[q] for q in scored])
    assert columns is not None
    with _path(batch=False):
        each = scoring.score_run(qrels, run, chosen)
    for measure, column in zip(chosen, columns):
        assert column.tolist() == [each.per_query[q][str(measure)] for q in scored]
    assert isinstance(columns[-1], np.ndarray)
