"""Sweeps over k, seeds and sizes: shapes, agreement with evaluate, monotone recall, quantile summaries."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import REPO_ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.collection import default_collection_path
from agentmemory.datasets import load
from agentmemory.datasets.beir import load_collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.sweeps import QUANTILES, cutoff_means, k_sweep, seed_sweep, summarize_sweep


def test_k_sweep_shape_and_agreement():
    """One value per k for R, P and nDCG of each retriever, equal to evaluate at that k."""
    collection = load_collection(default_collection_path())
    sweep = k_sweep(collection, ["bm25", "tags"], [5, 1, 3], seed=7)
    assert sweep["ks"] == [1, 3, 5]
    assert list(sweep["retrievers"]) == ["bm25", "tags"]
    assert sweep["queries"] == 5
    for name, row in sweep["retrievers"].items():
        assert list(row) == ["label", "R", "P", "nDCG"]
        for i, k in enumerate(sweep["ks"]):
            means = evaluate(collection, [name], k=k, seed=7).result(name).means
            assert row["R"][i] == means[f"R@{k}"]
            assert row["P"][i] == means[f"P@{k}"]
            assert row["nDCG"][i] == pytest.approx(means[f"nDCG@{k}"])
    assert json.loads(json.dumps(sweep)) == sweep


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), ks=st.lists(st.integers(1, 12), min_size=2, max_size=5, unique=True))
def test_recall_never_falls_as_k_grows(seed, ks):
    """Recall@k is non-decreasing in k, and P@k * k (hits in the top k) too, for every retriever."""
    sweep = k_sweep(synthetic_collection(seed=seed), "bm25,tags", ks, seed=seed)
    for row in sweep["retrievers"].values():
        assert all(a <= b for a, b in zip(row["R"], row["R"][1:]))
        hits = [p * k for p, k in zip(row["P"], sweep["ks"])]
        assert all(a <= b + 1e-9 for a, b in zip(hits, hits[1:]))


@pytest.mark.parametrize(
    "ks,message",
    [
        ([], r"^ks: \[\] \(list\) is empty"),
        ([3, 3], r"^ks: \[3, 3\] \(list\) repeats a cutoff"),
        ([0, 2], r"^ks item: 0 \(int\) is less than 1"),
        ("5", r"^ks: '5' \(str\) is not a list of cutoffs"),
    ],
)
def test_k_sweep_rejects_bad_ks(ks, message):
    """Empty, repeated, non-positive or textual cutoffs are rejected."""
    with pytest.raises(ParameterError, match=message):
        k_sweep(synthetic_collection(seed=1), "bm25", ks, seed=1)


@pytest.mark.parametrize(
    "collection, ks",
    [
        ("fixtures/assistant-notes", range(1, 17)),
        ("fixtures/locomo-sample/locomo-sample.json", range(1, 11)),
    ],
    ids=["seed", "locomo"],
)
def test_cutoff_means_equal_evaluate_at_each_k(collection, ks):
    """cutoff_means of one deep run equals, bit for bit, the headline mean evaluate(k=j) reports, at every j.

    The LoCoMo sample has per-conversation scopes and a group left out of the headline (5 adversarial).
    """
    loaded = load(REPO_ROOT / collection)
    deep = evaluate(loaded, ["bm25", "tags"], k=max(ks), seed=7, ties=False)
    names = ("R", "P", "nDCG", "AP", "RR")
    means = cutoff_means(deep, ks, names)
    assert list(means) == ["bm25", "tags"]
    for j, k in enumerate(ks):
        fresh = evaluate(loaded, ["bm25", "tags"], k=k, seed=7, measures=[f"{n}@{k}" for n in names], ties=False)
        for result in fresh.results:
            assert {n: means[result.name][n][j] for n in names} == {n: result.means[f"{n}@{k}"] for n in names}


def test_cutoff_means_rejects_cutoffs_beyond_the_run():
    """A cutoff deeper than the evaluation's k cannot be read from its hits: an error says how deep to evaluate."""
    shallow = evaluate(synthetic_collection(seed=1), ["bm25"], k=3, seed=1, ties=False)
    with pytest.raises(
        ParameterError, match=r"^ks: \[1, 4\] \(list\) goes beyond the evaluation's depth k = 3; evaluate with k >= 4$"
    ):
        cutoff_means(shallow, [4, 1])


@pytest.mark.parametrize("call", ["k_sweep", "seed_sweep"])
def test_sweeps_reject_negative_seeds(call):
    """Seeds go through errors.check_seed: a negative one is rejected before anything runs."""
    if call == "k_sweep":
        with pytest.raises(ParameterError, match=r"^seed: -1 \(int\) is negative; seed must be an integer >= 0$"):
            k_sweep(synthetic_collection(seed=1), "bm25", [1, 2], seed=-1)
    else:
        with pytest.raises(
            ParameterError, match=r"^seeds item: -2 \(int\) is negative; seeds item must be an integer >= 0$"
        ):
            seed_sweep([1, -2], [10], "bm25", 5)


def test_seed_sweep_rows():
    """One row per seed x size x retriever, in that order, with R@k, P@k, RR equal to evaluate's means."""
    rows = seed_sweep([1, 2], [10, 20], ["bm25", "tags"], 5, mismatch_rate=0.5)
    assert [(r["seed"], r["n_entries"], r["retriever"]) for r in rows] == [
        (s, n, name) for s in (1, 2) for n in (10, 20) for name in ("bm25", "tags")
    ]
    assert list(rows[0]) == ["seed", "n_entries", "retriever", "label", "digest", "queries", "R@5", "P@5", "RR"]
    check = evaluate(synthetic_collection(seed=2, n_entries=20, mismatch_rate=0.5), ["tags"], k=5, seed=2)
    row = rows[7]
    assert (row["R@5"], row["P@5"], row["RR"]) == tuple(check.result("tags").means[m] for m in ("R@5", "P@5", "RR"))
    assert json.loads(json.dumps(rows)) == rows


def test_seed_sweep_rejects_reserved_params():
    """seed and n_entries come from the sweep, not from generator_params."""
    with pytest.raises(ParameterError, match=r"^n_entries: 30 \(int\) is set by the sweep"):
        seed_sweep([1], [10], "bm25", 5, n_entries=30)


def test_summarize_quantiles():
    """Per size x retriever, the seven quantiles of each measure equal numpy's linear quantiles."""
    rows = seed_sweep(range(6), [10, 16], "bm25,tags", 3)
    summary = summarize_sweep(rows)
    assert [(s["n_entries"], s["retriever"]) for s in summary] == [
        (10, "bm25"),
        (10, "tags"),
        (16, "bm25"),
        (16, "tags"),
    ]
    assert all(s["seeds"] == 6 for s in summary)
    cell = summary[3]
    values = np.array([r["R@3"] for r in rows if r["n_entries"] == 16 and r["retriever"] == "tags"])
    assert list(cell["R@3"]) == [name for name, _ in QUANTILES]
    assert cell["R@3"]["median"] == float(np.median(values))
    assert cell["R@3"]["p05"] == float(np.quantile(values, 0.05))
    assert (cell["R@3"]["min"], cell["R@3"]["max"]) == (float(values.min()), float(values.max()))
    for s in summary:
        for m in ("R@3", "P@3", "RR"):
            q = list(s[m].values())
            assert q == sorted(q)


def test_summarize_hand_example():
    """Quantiles on hand-made rows: 0, 0.25, 0.5, 0.75, 1 give median 0.5 and p25 0.25."""
    rows = [{"seed": i, "n_entries": 4, "retriever": "x", "R@5": v} for i, v in enumerate([0.0, 0.25, 0.5, 0.75, 1.0])]
    (cell,) = summarize_sweep(rows)
    assert cell["R@5"] == {"min": 0.0, "p05": 0.05, "p25": 0.25, "median": 0.5, "p75": 0.75, "p95": 0.95, "max": 1.0}
    assert cell["label"] == "x"


def test_summarize_rejects_bad_rows():
    """No rows, or a row missing a column of the first, is an error."""
    with pytest.raises(ParameterError, match=r"^rows: \[\] \(list\) is empty"):
        summarize_sweep([])
    with pytest.raises(ParameterError, match=r"^rows\[1\]: .* has no 'R@5'"):
        summarize_sweep([{"n_entries": 1, "retriever": "x", "R@5": 0.1}, {"n_entries": 1, "retriever": "x"}])


def test_progress_bar_does_not_change_results(capsys):
    """progress=True only draws a bar; the rows are the same."""
    assert seed_sweep([3], [10], "bm25", 5, progress=True) == seed_sweep([3], [10], "bm25", 5)
    assert "seed sweep" in capsys.readouterr().err
