"""The NumPy batch path of score_run: the same numbers as the per-query helpers, bit for bit, and as trec_eval."""

from __future__ import annotations

import math
import random
import re
import struct
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from plugins import restored
from strategies import DOC_POOL, TIED_SCORES, measures, qrels_sets, runs

from agentmemory.errors import ParameterError
from agentmemory.files.trec import trec_order
from agentmemory.metrics import (
    REGISTRY,
    CutoffRule,
    MeasureDef,
    QueryContext,
    compute_measures,
    parse_measures,
    register_measure,
)
from agentmemory.metrics import scoring as scoring
from agentmemory.metrics.ranked import Ranked, count_per_query, rank_judged
from agentmemory.metrics.scoring import score_queries

ALL_MEASURES = parse_measures(
    "P@1,P@3,P@10,R@2,R@10,RR,RR@1,RR@3,nDCG@1,nDCG@3,nDCG@20,AP@2,AP@100,Success@1,Success@5,Rprec"
)


@contextmanager
def _path(batch: bool):
    """score_run forced onto the batch path (threshold 0) or the per-query path (threshold unreachable)."""
    with mock.patch.object(scoring, "_BATCH_MIN_WORK", 0 if batch else math.inf):
        yield


def _both_paths(qrels, run, chosen, complete=False):
    with _path(batch=True):
        batch = scoring.score_run(qrels, run, chosen, complete=complete)
    with _path(batch=False):
        each = scoring.score_run(qrels, run, chosen, complete=complete)
    return batch, each


def _helpers(chosen, docs, judged):
    """Per measure, the pure helpers' value for every query: the definition the batch path must equal."""
    rows = [compute_measures(chosen, trec_order(d), j) for d, j in zip(docs, judged)]
    return [[row[str(m)] for row in rows] for m in chosen]


@contextmanager
def _spy():
    """Record what score_run's calls of score_queries return (None: declined, scored per query)."""
    returned = []

    def spy(*args):
        returned.append(score_queries(*args))
        return returned[-1]

    with mock.patch.object(scoring, "score_queries", spy):
        yield returned


def _columns(chosen, docs, judged):
    columns = score_queries(chosen, docs, judged)
    assert columns is not None
    return [column.tolist() for column in columns]


def test_every_trec_eval_measure_has_a_batch_kernel():
    """A trec_eval measure (what score_run computes from a run and qrels alone) without a batch kernel would
    silently take the slow path: every one registered has one (the measures are read from the registry)."""
    trec_eval = [d for d in REGISTRY.registered().values() if d.family == "trec_eval"]
    assert trec_eval and [d.name for d in trec_eval if d.batch is None] == []


@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(DOC_POOL), st.one_of(st.sampled_from(TIED_SCORES), st.floats(-3, 3))),
            st.dictionaries(st.sampled_from(DOC_POOL), st.integers(-1, 3), min_size=1, max_size=10),
        ),
        max_size=6,
    ),
    st.lists(measures("trec_eval"), min_size=1, max_size=6, unique=True),
)
def test_batch_equals_helpers_exactly(queries, chosen):
    """For random queries (ties, empty and short rankings, no relevant document, grades -1..3) and any
    registered measures, every batch value is == the pure helper's value on the trec_order ranking."""
    docs = [d for d, _ in queries]
    judged = [j for _, j in queries]
    assert _columns(chosen, docs, judged) == _helpers(chosen, docs, judged)


@given(qrels_sets, runs, st.lists(measures(), min_size=1, max_size=5, unique=True), st.booleans())
def test_score_run_paths_agree(qrels, run, chosen, complete):
    """score_run gives the same ScoreResult (per-query values and means, ==) on both paths, with and without complete."""
    assume(qrels.keys() & run.keys())
    batch, each = _both_paths(qrels, run, chosen, complete)
    assert batch == each


@pytest.mark.parametrize(
    "grades",
    [
        {"a": 0.5, "b": 1.5, "c": 1, "d": -2.0},  # a counts in nDCG only (grade > 0 but < 1)
        {"a": True, "b": False, "c": 2},
        {"a": 2**60, "b": 2**60 + 1, "c": 3},  # exact ints, larger than a double holds exactly
        {"a": float("inf"), "b": 1},  # inf / inf is nan in both paths
        {"a": float("nan"), "b": 1},  # a NaN grade is neither relevant nor a gain
    ],
    ids=["fractional", "bool", "huge-int", "inf", "nan"],
)
def test_unusual_grades(grades):
    """Fractional, bool, huge and non-finite grades give the helpers' values (compared as text, so nan == nan)."""
    docs = [{"a": 1.0, "b": 2.0, "c": 0.5, "z": 3.0}, {"c": 1.0}]
    judged = [grades, grades]
    assert repr(_columns(ALL_MEASURES, docs, judged)) == repr(_helpers(ALL_MEASURES, docs, judged))


@pytest.mark.parametrize(
    "scores",
    [
        {"a": 1, "b": 1.0, "c": 2, "d": 0.5},  # ints mix with floats, 1 == 1.0 ties
        {"a": True, "b": False, "c": 1},
        {"a": 2**53, "b": 2.0**53, "c": -(2**53), "d": 2**60, "e": 2.0**60},  # ints a double holds exactly
        {"a": float("inf"), "b": float("inf"), "c": -float("inf"), "d": -0.0, "e": 0.0},
        {"a": 1e300, "b": 1e-300, "c": 5e-324, "d": 0.0},
    ],
    ids=["int-float", "bool", "2**53", "infinities", "extremes"],
)
def test_unusual_scores(scores):
    """Scores that are exactly doubles (ints up to 2**53, bools, infinities, subnormals) rank as trec_order ranks them."""
    judged = [{"a": 1, "b": 2, "c": 1, "e": 3}]
    assert _columns(ALL_MEASURES, [scores], judged) == _helpers(ALL_MEASURES, [scores], judged)


@pytest.mark.parametrize(
    "scores",
    [
        {"a": 2**53 + 1, "b": 2.0**53},  # a double would round 2**53 + 1 onto 2**53: a false tie
        {"a": 2**53 + 1, "b": 2**53},
        {"a": Decimal("0.1"), "b": 0.1},
        {"a": Fraction(1, 3), "b": 1 / 3},
        {"a": 10**400, "b": 1.0},
        {"a": "1.5", "b": 1.0},
        {"a": float("nan"), "b": 1.0},
    ],
    ids=["int-above-2**53-with-float", "int-above-2**53", "decimal", "fraction", "overflow", "text", "nan"],
)
def test_scores_that_are_not_exact_doubles_are_declined(scores):
    """The batch path declines scores a double would change (or NaN): score_run then ranks that query per query."""
    assert score_queries(ALL_MEASURES, [scores], [{"a": 1}]) is None


def test_other_mappings_are_declined():
    """Only plain dicts are read in bulk; other mappings (which may define get/values their own way) go per query."""
    from collections import OrderedDict

    assert score_queries(ALL_MEASURES, [OrderedDict(a=1.0)], [{"a": 1}]) is None
    assert score_queries(ALL_MEASURES, [{"a": 1.0}], [OrderedDict(a=1)]) is None
    assert rank_judged([{"a": 1.0}], []) is None


def test_nan_score_is_reported_as_before():
    """A NaN score in a large run still raises the per-query path's error, naming the document."""
    run = {f"q{i}": {f"d{j}": float(j) for j in range(50)} for i in range(20)}
    run["q7"]["d3"] = float("nan")
    qrels = {f"q{i}": {"d1": 1} for i in range(20)}
    with pytest.raises(ParameterError, match=re.escape("score of document 'd3': nan (float) is not a number")):
        scoring.score_run(qrels, run, "P@5")


def test_long_and_short_queries_with_many_ties():
    """Queries of very different lengths (several length classes, one of 5,000 documents) and scores
    mostly tied: batch values equal the helpers', at every cutoff."""
    rng = random.Random(3)
    docs, judged = [], []
    for length in (0, 1, 2, 3, 7, 8, 100, 129, 5000, 31):
        ids = [f"d{i}" for i in rng.sample(range(10_000), length)]
        docs.append({doc: float(rng.randint(0, 4)) for doc in ids})
        judged.append({doc: rng.randint(-1, 3) for doc in rng.sample(ids, min(len(ids), 40)) + ["unretrieved"]})
    chosen = [*ALL_MEASURES, *parse_measures("P@1000,R@5000,nDCG@6000,AP@4000,RR@2500")]
    assert _columns(chosen, docs, judged) == _helpers(chosen, docs, judged)


def test_cutoffs_beyond_any_rank():
    """Cutoffs far beyond the rankings (even beyond 2**63) give the helpers' values: P@k still divides by k."""
    chosen = parse_measures(
        ["P@1000000", f"P@{2**70 + 1}", f"R@{2**70}", f"nDCG@{2**64}", f"AP@{2**65}", f"RR@{2**66}"]
    )
    docs = [{"a": 1.0, "b": 0.5}, {}]
    judged = [{"a": 1, "c": 2}, {"a": 1}]
    assert _columns(chosen, docs, judged) == _helpers(chosen, docs, judged)


def test_large_inputs_take_the_batch_path():
    """score_run uses the batch path from _BATCH_MIN_WORK (documents + 32 x queries) on, the helpers below it."""
    small = {"q": {"a": 1.0}}
    with _spy() as returned:
        scoring.score_run({"q": {"a": 1}}, small, "P@1")
        assert returned == []
        large = {f"q{i}": {f"d{j}": float(j) for j in range(20)} for i in range(20)}
        scoring.score_run({f"q{i}": {"d1": 1} for i in range(20)}, large, "P@1")
        assert len(returned) == 1 and returned[0] is not None


# --- against trec_eval, through the batch path ------------------------------


def _float32(value: float) -> float:
    """pytrec_eval ranks float32 scores; these random scores are exact in float32 so its ranking equals ours."""
    return struct.unpack("f", struct.pack("f", value))[0]


@pytest.mark.parametrize("seed", range(4))
def test_batch_matches_trec_eval(seed):
    """On runs of 300 queries x 0-120 documents (ties, unretrieved relevant documents, all-zero and negative
    judgments, queries missing from the run), the batch path's per-query values equal trec_eval's to 1e-12."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(300):
        qid = f"q{q}"
        pool = [f"d{i}" for i in rng.sample(range(400), 150)]
        qrels[qid] = {doc: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for doc in rng.sample(pool, rng.randint(1, 25))}
        if rng.random() < 0.9:
            depth = rng.randint(0, 120)
            tied = rng.random() < 0.3
            run[qid] = {
                doc: float(rng.randint(0, 5)) if tied else _float32(rng.uniform(-10, 10))
                for doc in rng.sample(pool, depth)
            }
    names = {"RR": "recip_rank", "Rprec": "Rprec"}
    for k in (1, 5, 10, 100):
        names |= {f"P@{k}": f"P_{k}", f"R@{k}": f"recall_{k}", f"nDCG@{k}": f"ndcg_cut_{k}"}
        names |= {f"AP@{k}": f"map_cut_{k}", f"Success@{k}": f"success_{k}"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(names.values())).evaluate(run)
    with _spy() as returned:
        ours = scoring.score_run(qrels, run, list(names))
    assert len(returned) == 1 and returned[0] is not None
    assert sorted(expected) == list(ours.per_query)
    for qid, values in ours.per_query.items():
        for name, trec_name in names.items():
            assert values[name] == pytest.approx(expected[qid][trec_name], abs=1e-12), (qid, name)
    batch_result, each = _both_paths(qrels, run, list(names), complete=True)
    assert batch_result == each


# --- measures registered at run time ------------------------------------------


def _hits(query: QueryContext) -> float:
    """Hits@k: relevant documents in the top k."""
    return float(sum(1 for doc in query.ranking[: query.k] if query.qrels.get(doc, 0) >= 1))


def _batch_hits(ranked: Ranked, k: int) -> np.ndarray:
    """Hits@k for every query at once: relevant at ranks <= k."""
    return count_per_query(ranked.rel_query[ranked.rel_rank <= k], ranked.n).astype(np.float64)


def _large_run():
    rng = random.Random(5)
    run = {f"q{i}": {f"d{j}": float(rng.randint(0, 3)) for j in range(rng.randint(0, 30))} for i in range(40)}
    qrels = {f"q{i}": {f"d{j}": rng.randint(-1, 2) for j in range(0, 40, 3)} for i in range(40)}
    return qrels, run


@pytest.mark.parametrize("kernel", [None, _batch_hits], ids=["without-kernel", "with-kernel"])
def test_runtime_measure_is_scored(kernel):
    """score_run scores a measure registered at run time: the batch path declines it without a batch kernel
    (the run is scored per query) and uses its kernel when it has one; both paths give the same numbers."""
    qrels, run = _large_run()
    with restored(REGISTRY):
        register_measure(MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant in the top k", batch=kernel))
        with _path(batch=True), _spy() as returned:
            batch = scoring.score_run(qrels, run, "hits@5,P@5")
        with _path(batch=False):
            each = scoring.score_run(qrels, run, "Hits@5,P@5")
    assert len(returned) == 1 and (returned[0] is None) == (kernel is None)
    assert batch == each
    for qid, values in each.per_query.items():
        top = trec_order(run[qid])[:5]
        assert values == {"Hits@5": float(sum(qrels[qid].get(d, 0) >= 1 for d in top)), "P@5": values["Hits@5"] / 5}
