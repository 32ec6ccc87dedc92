"""Statistics over per-query values: reproducible bootstrap, exact permutation p-values, Holm, honest wording."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.analysis.statistics import (
    Interval,
    Statistics,
    bootstrap_ci,
    describe_comparison,
    evaluation_statistics,
    holm,
    paired_permutation_test,
    per_query_statistics,
    smallest_p_value,
)
from agentmemory.collection import default_collection_path
from agentmemory.datasets.beir import load_collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.evaluation.runner import evaluate
from agentmemory.metrics import distinct_measures

VALUES = [0.2, 0.5, 0.0, 1.0, 0.4, 0.6, 0.3]
CONTINUOUS = [0.137, 0.912, 0.455, 0.031, 0.774, 0.268, 0.599, 0.843, 0.392, 0.018]


def test_bootstrap_same_seed_same_bytes():
    """The same values and seed give the same interval, bit for bit; another seed gives another."""
    first = bootstrap_ci(CONTINUOUS, seed=11)
    again = bootstrap_ci(CONTINUOUS, seed=11)
    other = bootstrap_ci(CONTINUOUS, seed=12)
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())
    assert np.float64(first.low).tobytes() == np.float64(again.low).tobytes()
    assert (first.low, first.high) != (other.low, other.high)


def test_bootstrap_matches_scipy_definition():
    """The interval is scipy's percentile bootstrap with default_rng(seed) and the documented batch."""
    from scipy import stats

    ref = stats.bootstrap(
        (np.array(VALUES),),
        np.mean,
        method="percentile",
        n_resamples=2000,
        batch=1000,
        rng=np.random.default_rng(5),
    )
    got = bootstrap_ci(VALUES, seed=5, n_resamples=2000)
    assert (got.low, got.high) == (float(ref.confidence_interval.low), float(ref.confidence_interval.high))
    assert got.mean == pytest.approx(np.mean(VALUES))
    assert (got.n, got.confidence, got.degenerate) == (7, 0.95, False)


@pytest.mark.parametrize("values", [[0.4], [0.25, 0.25, 0.25], [1.0] * 5, [0.4 - 0.3, 0.3 - 0.2, 0.1]])
def test_bootstrap_degenerate_is_point_without_warning(values):
    """One value or all equal (up to rounding noise): the point interval, flagged degenerate, no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interval = bootstrap_ci(values, seed=1)
    mean = math.fsum(values) / len(values)
    assert interval == Interval(mean, mean, mean, len(values), 0.95, degenerate=True)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.2, 0.25, 0.5, 1.0]), min_size=1, max_size=12), st.integers(0, 2**32))
def test_bootstrap_interval_brackets_the_range(values, seed):
    """The percentile interval lies within the values' range and the flag is set exactly for constant input."""
    interval = bootstrap_ci(values, seed=seed, n_resamples=500)
    assert min(values) - 1e-12 <= interval.low <= interval.high <= max(values) + 1e-12
    assert interval.degenerate == (len(set(values)) == 1)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"values": []}, r"^values: \[\] \(list\) is empty"),
        ({"values": [0.1, float("nan")]}, r"^values: nan \(float\) is not a finite number"),
        ({"values": [0.1, 0.2], "confidence": 1.5}, r"^confidence: 1.5 \(float\) is not strictly between 0 and 1"),
        ({"values": [0.1, 0.2], "n_resamples": 0}, r"^n_resamples: 0 \(int\) is less than 1"),
    ],
)
def test_bootstrap_rejects_bad_input(kwargs, message):
    """Bad input is rejected with a message naming the argument and the value."""
    with pytest.raises(ParameterError, match=message):
        bootstrap_ci(seed=1, **kwargs)


def test_bootstrap_rejects_non_integer_seed():
    """The seed must be an integer (a float seed would silently mean something else)."""
    with pytest.raises(ParameterError, match=r"^seed: 1.5 \(float\) is not an integer"):
        bootstrap_ci([0.1, 0.2], seed=1.5)


def test_negative_seeds_are_rejected_everywhere(seed_evaluation):
    """A negative seed is rejected by errors.check_seed (numpy's default_rng refuses it), with its message."""
    message = r"^seed: -1 \(int\) is negative; seed must be an integer >= 0$"
    with pytest.raises(ParameterError, match=message):
        bootstrap_ci([0.1, 0.2], seed=-1)
    with pytest.raises(ParameterError, match=message):
        paired_permutation_test([0.1, 0.2], [0.2, 0.1], seed=-1)
    with pytest.raises(ParameterError, match=message):
        evaluation_statistics(seed_evaluation, seed=-1)


def test_permutation_tie_at_zero_is_counted():
    """Differences -0.4, -0.2, +0.6 (mean 0 up to rounding): half the flips are <= 0 plus ties, p_less = 5/8."""
    result = paired_permutation_test([0.0, 0.2, 1.0], [0.4, 0.4, 0.4], seed=1, alternative="less")
    assert result.p_value == 5 / 8


def test_permutation_all_positive_five_queries_is_exact_0_0625():
    """5 queries all favouring a: the exact two-sided p-value is 2/32 = 0.0625, one-sided 1/32."""
    a, b = [0.5, 0.6, 0.7, 0.8, 0.9], [0.0] * 5
    two = paired_permutation_test(a, b, seed=1)
    assert (two.p_value, two.exact, two.smallest_p_value, two.n) == (0.0625, True, 0.0625, 5)
    assert paired_permutation_test(a, b, seed=1, alternative="greater").p_value == 1 / 32
    assert paired_permutation_test(a, b, seed=1, alternative="less").p_value == 1.0


def signflip_p(diffs, alternative):
    """The exact sign-flip p-value by enumerating all 2**n flips (the oracle)."""
    observed = np.mean(diffs)
    stats = [np.mean(np.array(signs) * diffs) for signs in itertools.product([1, -1], repeat=len(diffs))]
    eps = 1e-12
    greater = sum(s >= observed - eps for s in stats) / len(stats)
    less = sum(s <= observed + eps for s in stats) / len(stats)
    return {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}[alternative]


METRIC_VALUES = [0.0, 0.2, 0.25, 1 / 3, 0.4, 0.5, 0.6, 2 / 3, 0.75, 1.0]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(METRIC_VALUES), st.sampled_from(METRIC_VALUES)), min_size=2, max_size=7),
    st.sampled_from(["two-sided", "greater", "less"]),
)
def test_permutation_is_exact_for_small_n(pairs, alternative):
    """With n_resamples >= 2**n the p-value equals full enumeration of the sign flips, ties included
    (flips whose means are equal up to float rounding count as equal)."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = paired_permutation_test(a, b, seed=3, alternative=alternative)
    assert result.exact
    assert result.p_value == pytest.approx(signflip_p(np.array(a) - np.array(b), alternative), abs=1e-12)


def test_permutation_monte_carlo_for_large_n_is_reproducible():
    """20 queries (2**20 flips > 10,000 resamples): random flips, reproducible by seed, p >= 2/10001."""
    rng = np.random.default_rng(0)
    a, b = rng.random(20).tolist(), rng.random(20).tolist()
    first = paired_permutation_test(a, b, seed=4)
    assert not first.exact
    assert first == paired_permutation_test(a, b, seed=4)
    assert first.smallest_p_value == 2 / 10_001
    assert first.p_value >= first.smallest_p_value


def test_permutation_effect_sizes():
    """Effect size is the mean difference; the standardised effect divides by the sd (ddof=1); CI from bootstrap."""
    a, b = [0.5, 0.4, 0.9, 0.1], [0.2, 0.4, 0.3, 0.3]
    result = paired_permutation_test(a, b, seed=2)
    diffs = np.array(a) - np.array(b)
    assert result.mean_difference == result.effect_size == pytest.approx(diffs.mean())
    assert result.standardized_effect == pytest.approx(diffs.mean() / diffs.std(ddof=1))
    assert result.effect_ci == bootstrap_ci(diffs.tolist(), seed=2)


def test_permutation_constant_differences():
    """All differences equal: no sd (standardised effect None), a degenerate interval; all zero gives p = 1."""
    shifted = paired_permutation_test([0.3, 0.4, 0.5], [0.2, 0.3, 0.4], seed=1)
    assert shifted.standardized_effect is None
    assert shifted.effect_ci.degenerate
    same = paired_permutation_test([0.3, 0.4], [0.3, 0.4], seed=1)
    assert (same.p_value, same.mean_difference) == (1.0, 0.0)


def test_permutation_single_query():
    """One query: two sign flips, so two-sided p = 1 and one-sided p = 1/2 at best."""
    assert paired_permutation_test([0.9], [0.1], seed=1).p_value == 1.0
    assert paired_permutation_test([0.9], [0.1], seed=1, alternative="greater").p_value == 0.5


def test_permutation_rejects_bad_input():
    """Unequal lengths and unknown alternatives are rejected with the valid choices."""
    with pytest.raises(ParameterError, match=r"^b: '2 values' \(str\) does not match a \(3 values\)"):
        paired_permutation_test([1, 2, 3], [1, 2], seed=1)
    with pytest.raises(UnknownNameError, match="choose from: greater, less, two-sided"):
        paired_permutation_test([1, 2], [1, 2], seed=1, alternative="both")


@pytest.mark.parametrize(
    "n,n_resamples,alternative,expected",
    [
        (5, 10_000, "two-sided", 0.0625),
        (5, 10_000, "greater", 0.03125),
        (1, 10_000, "two-sided", 1.0),
        (10, 10_000, "two-sided", 2 / 1024),
        (14, 10_000, "two-sided", 2 / 10_001),  # 2**14 > 10,000: random flips
        (5, 16, "less", 1 / 17),
    ],
)
def test_smallest_p_value(n, n_resamples, alternative, expected):
    """The smallest attainable p-value: 1/2**n per side when exact, 1/(n_resamples + 1) when sampled."""
    assert smallest_p_value(n, n_resamples=n_resamples, alternative=alternative) == pytest.approx(expected)


@pytest.mark.parametrize(
    "p,expected",
    [
        # Wikipedia / textbook example, m = 4: sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1, then running max.
        ({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}, {"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02}),
        # statsmodels multipletests([0.01, 0.02, 0.03, 0.04, 0.05], method="holm")[1]
        (
            {"1": 0.01, "2": 0.02, "3": 0.03, "4": 0.04, "5": 0.05},
            {"1": 0.05, "2": 0.08, "3": 0.09, "4": 0.09, "5": 0.09},
        ),
        # capped at 1
        ({"x": 0.6, "y": 0.3}, {"x": 0.6, "y": 0.6}),
        ({"x": 0.9, "y": 0.8, "z": 0.7}, {"x": 1.0, "y": 1.0, "z": 1.0}),
        ({"only": 0.2}, {"only": 0.2}),
        ({}, {}),
    ],
)
def test_holm_textbook(p, expected):
    """Holm adjusted p-values match the textbook (statsmodels) definition, in the input's key order."""
    adjusted = holm(p)
    assert list(adjusted) == list(p)
    assert adjusted == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=3), st.floats(0, 1), max_size=8))
def test_holm_properties(p):
    """Adjusted p-values are >= the raw ones, <= 1, and keep the order of the raw p-values."""
    adjusted = holm(p)
    for key in p:
        assert p[key] <= adjusted[key] <= 1.0
    for x, y in itertools.combinations(p, 2):
        if p[x] < p[y]:
            assert adjusted[x] <= adjusted[y]


def test_holm_rejects_out_of_range():
    """A p-value outside [0, 1] is an error naming its key."""
    with pytest.raises(ParameterError, match=r"^p_values\['b'\]: 1.5 \(float\) is not a number in \[0, 1\]"):
        holm({"a": 0.1, "b": 1.5})


def test_describe_five_queries_cannot_be_significant():
    """The brief's sentence, to the letter: with 5 queries no difference can be significant at 0.05."""
    test = paired_permutation_test([0.5, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0], seed=7)
    text = describe_comparison(test, name_a="BM25", name_b="Tag scorer", measure="R@5")
    assert text == (
        "BM25 vs Tag scorer on R@5: mean difference -0.10 (95% CI -0.30 to 0.00), paired permutation "
        "p = 1.00 over 5 queries; the smallest p-value attainable with 5 queries is 0.0625, so no "
        "difference can be significant at 0.05."
    )


def test_describe_significant_and_not():
    """With 12 queries a consistent difference is called significant (with its direction); a mixed one is not."""
    a = [0.9, 0.8, 0.7, 0.9, 0.6, 0.8, 0.7, 0.9, 0.8, 0.6, 0.7, 0.9]
    b = [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1, 0.3, 0.2, 0.1, 0.2]
    strong = describe_comparison(paired_permutation_test(a, b, seed=1), name_a="A", name_b="B", measure="P@5")
    assert strong.endswith("significant at 0.05: A scores higher than B on these queries.")
    reverse = describe_comparison(paired_permutation_test(b, a, seed=1), name_a="B", name_b="A", measure="P@5")
    assert reverse.endswith("significant at 0.05: B scores lower than A on these queries.")
    mixed = paired_permutation_test([0.1, 0.9] * 6, [0.9, 0.1] * 6, seed=1)
    text = describe_comparison(mixed, name_a="A", name_b="B", measure="P@5", adjusted_p=1.0)
    assert "(Holm-adjusted 1.00)" in text
    assert text.endswith(
        "not significant at 0.05: these queries do not show a difference, which is not evidence that there is none."
    )


def test_describe_warns_when_interval_excludes_zero_but_test_does_not():
    """A narrow bootstrap interval that excludes 0 is not presented as a finding when the test shows none."""
    test = paired_permutation_test([0.3, 0.2, 0.3, 0.2, 0.3], [0.0] * 5, seed=1)
    text = describe_comparison(test, name_a="A", name_b="B", measure="R@5")
    assert test.effect_ci.low > 0 and test.p_value > 0.05
    assert "(95% CI 0.22 to 0.30)" in text
    assert text.endswith("percentile bootstrap understates the uncertainty; read the test.")


def test_evaluation_statistics_shape_and_reproducibility():
    """Every retriever x measure has an interval, every pair a Holm-adjusted test; same seed, same JSON."""
    evaluation = evaluate(load_collection(default_collection_path()), k=5)
    first = evaluation_statistics(evaluation, seed=3, n_resamples=2000)
    again = evaluation_statistics(evaluation, seed=3, n_resamples=2000)
    assert isinstance(first, Statistics) and first == again
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())
    measures = tuple(str(m) for m in evaluation.measures)
    assert first.measures == measures
    assert list(first.intervals) == ["bm25", "tags"]
    assert tuple(first.intervals["bm25"]) == measures
    for name in ("bm25", "tags"):
        for m in measures:
            assert first.intervals[name][m].mean == pytest.approx(evaluation.result(name).means[m])
    [row] = first.comparisons["R@5"]
    assert (row.a, row.b, row.test.n) == ("bm25", "tags", 5)
    assert row.p_holm == row.test.p_value  # one pair: Holm changes nothing
    assert "no difference can be significant at 0.05" in row.sentence
    assert first.groups == {}
    assert (first.queries, first.excluded_groups) == (5, ())
    assert plain_json(first.to_dict())


def plain_json(value):
    """True when ``value`` holds only plain JSON types (no numpy scalars), recursively."""
    if isinstance(value, dict):
        return all(type(k) is str and plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_evaluation_statistics_per_group():
    """Queries with groups get intervals per group (sorted), over that group's queries only."""
    collection = synthetic_collection(seed=4, n_entries=20, n_queries=6)
    grouped = dataclasses.replace(
        collection,
        queries=tuple(
            dataclasses.replace(q, group="odd" if i % 2 else "even") for i, q in enumerate(collection.queries)
        ),
    )
    evaluation = evaluate(grouped, ["bm25", "tags"], k=5)
    stats = evaluation_statistics(evaluation, seed=2, measures="R@5", n_resamples=500)
    assert list(stats.groups) == ["even", "odd"]
    for group, means in evaluation.result("tags").group_means().items():
        record = stats.groups[group]
        assert (record.name, record.queries, record.in_headline) == (group, 3, True)
        cell = record.intervals["tags"]["R@5"]
        assert (cell.mean, cell.n) == (pytest.approx(means["R@5"]), 3)


def test_evaluation_statistics_measure_selection():
    """A subset of measures can be chosen; a measure the evaluation lacks is rejected with the available ones."""
    evaluation = evaluate(load_collection(default_collection_path()), k=5)
    picked = evaluation_statistics(evaluation, seed=1, measures="R@5,MRR", n_resamples=500)
    assert picked.measures == ("R@5", "RR")
    with pytest.raises(UnknownNameError, match=r"^measures: 'P@10' \(str\) is not a known name; choose from: AP@5"):
        evaluation_statistics(evaluation, seed=1, measures=["P@10"])


def test_import_stays_light():
    """Importing agentmemory (and its statistics module) does not import scipy, pandas or matplotlib."""
    code = (
        "import sys, agentmemory, agentmemory.analysis.statistics, agentmemory.metrics.tieaware, agentmemory.datasets.synthetic, agentmemory.evaluation.sweeps; "
        "print(sorted(m for m in ('scipy', 'pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_interval_mean_uses_exact_summation():
    """The mean is math.fsum / n, as evaluate's means."""
    values = [0.1] * 10
    assert bootstrap_ci(values, seed=1).mean == math.fsum(values) / 10


def test_evaluation_statistics_headline_excludes():
    """Groups in the collection's headline_excludes leave the headline intervals and tests, not the group table."""
    collection = synthetic_collection(seed=4, n_entries=20, n_queries=6)
    grouped = dataclasses.replace(
        collection,
        queries=tuple(
            dataclasses.replace(q, group="odd" if i % 2 else "even") for i, q in enumerate(collection.queries)
        ),
        headline_excludes=("odd",),
    )
    stats = evaluation_statistics(evaluate(grouped, ["bm25", "tags"], k=5), seed=2, measures="R@5", n_resamples=500)
    assert (stats.queries, stats.excluded_groups) == (3, ("odd",))
    assert stats.intervals["bm25"]["R@5"] == stats.groups["even"].intervals["bm25"]["R@5"]
    assert [(g.name, g.in_headline) for g in stats.groups.values()] == [("even", True), ("odd", False)]
    assert stats.comparisons["R@5"][0].test.n == 3


def _grouped_evaluation():
    collection = synthetic_collection(seed=4, n_entries=20, n_queries=6)
    grouped = dataclasses.replace(
        collection,
        queries=tuple(
            dataclasses.replace(q, group="odd" if i % 2 else "even") for i, q in enumerate(collection.queries)
        ),
        headline_excludes=("odd",),
    )
    return evaluate(grouped, ["bm25", "tags", "bm25[k1=0.5]"], k=5)


def _values_of(evaluation) -> dict:
    return {r.name: {q.query_id: dict(q.metrics) for q in r.per_query} for r in evaluation.results}


def test_per_query_statistics_equal_evaluation_statistics():
    """From the per-query values alone, per_query_statistics gives evaluation_statistics' record, to the byte."""
    evaluation = _grouped_evaluation()
    expected = evaluation_statistics(evaluation, seed=3, n_resamples=500, baseline="tags")
    got = per_query_statistics(
        _values_of(evaluation),
        labels={r.name: r.label for r in evaluation.results},
        queries=[(q.id, q.group) for q in evaluation.collection.judged_queries],
        excluded_groups=evaluation.collection.headline_excludes,
        measures=[str(m) for m in evaluation.measures],
        seed=3,
        n_resamples=500,
        baseline="tags",
        table_measures=distinct_measures(evaluation.measures, evaluation.k),
    )
    assert json.dumps(got.to_dict()) == json.dumps(expected.to_dict())


def test_per_query_statistics_without_pairs_keeps_the_baseline_tests():
    """pairs=False leaves out every pairwise comparison but keeps intervals and the tests against the baseline."""
    evaluation = _grouped_evaluation()
    arguments = {
        "labels": {r.name: r.label for r in evaluation.results},
        "queries": [(q.id, q.group) for q in evaluation.collection.judged_queries],
        "excluded_groups": ("odd",),
        "measures": ["R@5", "RR"],
        "seed": 3,
        "n_resamples": 500,
    }
    full = per_query_statistics(_values_of(evaluation), **arguments).to_dict()
    lean = per_query_statistics(_values_of(evaluation), pairs=False, **arguments).to_dict()
    assert lean["comparisons"] == {"R@5": [], "RR": []}
    assert len(full["comparisons"]["R@5"]) == 3
    assert {k: v for k, v in lean.items() if k != "comparisons"} == {
        k: v for k, v in full.items() if k != "comparisons"
    }


def test_per_query_statistics_unknown_baseline():
    """A baseline naming no system is rejected with the systems' names."""
    with pytest.raises(UnknownNameError, match=r"^baseline: 'dense' \(str\) is not a known name; choose from: a, b$"):
        per_query_statistics(
            {"a": {"q1": {"RR": 1.0}}, "b": {"q1": {"RR": 0.5}}},
            labels={"a": "A", "b": "B"},
            queries=[("q1", None)],
            measures=["RR"],
            seed=1,
            baseline="dense",
        )
