"""The vectorised bootstrap and sign-flip test against scipy.stats, bit for bit, on random inputs (ties included).

agentmemory.analysis._resampling computes scipy.stats.bootstrap's percentile interval and scipy.stats.permutation_test's
random sign-flip p-value itself, on the same random draws; these tests are what allows it to say the
numbers are scipy's.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import stats_reference as oracle
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agentmemory.analysis import _resampling as engine
from agentmemory.analysis import significance

# Metric-like values: few distinct levels (so many ties, equal means, zero differences) or any float in [0, 1].
LEVELS = (0.0, 0.1, 0.2, 0.25, 1 / 3, 0.5, 2 / 3, 1.0)


@st.composite
def paired_values(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 70))
    tied = draw(st.booleans())
    value = st.sampled_from(LEVELS) if tied else st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False)
    x = draw(st.lists(value, min_size=n, max_size=n))
    if draw(st.booleans()):  # b equals a on some queries: zero differences
        y = [xi if draw(st.booleans()) else draw(value) for xi in x]
    else:
        y = draw(st.lists(value, min_size=n, max_size=n))
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)


RESAMPLES = st.sampled_from([1, 2, 7, 100, 999, 1000, 1001, 2345, 10_000])
SEEDS = st.integers(0, 2**32 - 1)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


@settings(max_examples=150, deadline=None)
@given(pair=paired_values(), n_resamples=RESAMPLES, seed=SEEDS)
def test_sign_flip_null_distribution_is_scipys(
    pair: tuple[np.ndarray, np.ndarray], n_resamples: int, seed: int
) -> None:
    from scipy import stats as scipy_stats

    x, y = pair
    n = len(x)
    assume(n_resamples < 2**n and engine._sign_flips_vectorisable(n, n_resamples))
    reference = scipy_stats.permutation_test(
        (x, y),
        engine._mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        batch=engine._BATCH,
        rng=np.random.default_rng(seed),
    )
    ours = oracle._sign_flip_null(x, y, seed=seed, n_resamples=n_resamples)
    # Bit for bit, signed zeros included.
    assert np.array_equal(_bits(ours), _bits(reference.null_distribution))
    for alternative in ("two-sided", "less", "greater"):
        ours_p = oracle._sign_flip_p(x, y, seed=seed, n_resamples=n_resamples, alternative=alternative)
        theirs_p = engine._scipy_permutation_p(x, y, seed=seed, n_resamples=n_resamples, alternative=alternative)
        assert ours_p == theirs_p, alternative


@settings(max_examples=150, deadline=None)
@given(
    pair=paired_values(),
    n_resamples=RESAMPLES,
    seed=SEEDS,
    confidence=st.sampled_from([0.5, 0.9, 0.95, 0.99, 0.999]),
)
def test_percentile_bootstrap_is_scipys(
    pair: tuple[np.ndarray, np.ndarray], n_resamples: int, seed: int, confidence: float
) -> None:
    for data in (pair[0], pair[0] - pair[1]):
        if engine._constant(data):
            continue
        ours = oracle._percentile_bootstrap(data, seed=seed, confidence=confidence, n_resamples=n_resamples)
        theirs = oracle._scipy_bootstrap(data, seed=seed, confidence=confidence, n_resamples=n_resamples)
        assert _bits(np.asarray(ours)).tolist() == _bits(np.asarray(theirs)).tolist()


@settings(max_examples=60, deadline=None)
@given(pair=paired_values(), n_resamples=st.sampled_from([7, 999, 1000, 10_000]), seed=SEEDS)
def test_paired_permutation_test_uses_the_fast_path_with_scipys_numbers(
    pair: tuple[np.ndarray, np.ndarray], n_resamples: int, seed: int
) -> None:
    """The public test takes the vectorised flips exactly when they reproduce scipy's, and gives scipy's numbers.

    Which path ran is checked (a test passing through scipy itself would check nothing).
    """
    x, y = pair
    n = len(x)
    fast = bool(np.any(x - y)) and n_resamples < 2**n and engine._sign_flips_vectorisable(n, n_resamples)
    with (
        mock.patch.object(significance, "_sign_flip_ps", wraps=engine._sign_flip_ps) as flips,
        mock.patch.object(significance, "_scipy_permutation_p", wraps=engine._scipy_permutation_p) as scipy_p,
    ):
        result = significance.paired_permutation_test(x.tolist(), y.tolist(), seed=seed, n_resamples=n_resamples)
    assert (flips.call_count, scipy_p.call_count) == ((1, 0) if fast else (0, int(bool(np.any(x - y)))))
    if np.any(x - y):
        assert result.p_value == engine._scipy_permutation_p(
            x, y, seed=seed, n_resamples=n_resamples, alternative="two-sided"
        )
    else:
        assert result.p_value == 1.0
    diffs = x - y
    if not engine._constant(diffs):
        low, high = oracle._scipy_bootstrap(diffs, seed=seed, confidence=0.95, n_resamples=n_resamples)
        assert (result.effect_ci.low, result.effect_ci.high) == (low, high)
    else:
        assert result.effect_ci.degenerate


def test_sign_flips_at_a_thousand_queries_are_scipys() -> None:
    """The evaluation's size (1,000 queries, full batches): numpy's sums in scipy's order there too."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(3)
    x = rng.choice(LEVELS, 1000)
    y = np.where(rng.random(1000) < 0.3, x, rng.choice(LEVELS, 1000))
    reference = scipy_stats.permutation_test(
        (x, y),
        engine._mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=2000,
        batch=engine._BATCH,
        rng=np.random.default_rng(7),
    )
    ours = oracle._sign_flip_null(x, y, seed=7, n_resamples=2000)
    assert np.array_equal(_bits(ours), _bits(reference.null_distribution))


def test_bootstrap_at_a_thousand_queries_is_scipys() -> None:
    """The evaluation's size: 1,000 values, full batches, ties."""
    rng = np.random.default_rng(5)
    data = rng.choice(LEVELS, 1000)
    ours = oracle._percentile_bootstrap(data, seed=7, confidence=0.95, n_resamples=3000)
    theirs = oracle._scipy_bootstrap(data, seed=7, confidence=0.95, n_resamples=3000)
    assert _bits(np.asarray(ours)).tolist() == _bits(np.asarray(theirs)).tolist()


def test_odd_batches_fall_back_to_scipy() -> None:
    # 7 resamples of 3 pairs: 21 shuffles per call, an odd number of 32-bit halves; scipy does the work.
    assert not engine._sign_flips_vectorisable(3, 7)
    assert engine._sign_flips_vectorisable(3, 10_000)
    assert engine._sign_flips_vectorisable(4, 7)
    x = np.array([0.1, 0.5, 1.0])
    y = np.array([0.0, 0.5, 0.2])
    result = significance.paired_permutation_test(x.tolist(), y.tolist(), seed=3, n_resamples=7)
    assert result.p_value == engine._scipy_permutation_p(x, y, seed=3, n_resamples=7, alternative="two-sided")


@settings(max_examples=40, deadline=None)
@given(
    samples=st.lists(paired_values(), min_size=1, max_size=5),
    n_resamples=st.sampled_from([7, 999, 2345]),
    seed=SEEDS,
)
def test_shared_draws_give_each_test_and_interval_its_own_result(
    samples: list[tuple[np.ndarray, np.ndarray]], n_resamples: int, seed: int
) -> None:
    """Computed together (one set of draws per length), tests and intervals equal those computed one by one.

    Equal and reversed pairs are among them: they share their p-values (two-sided), checked against scipy.
    """
    samples = samples + [(y, x) for x, y in samples] + samples[:1]
    firsts = [x for x, _ in samples]
    together, with_tests = significance._paired_tests(
        samples, seed=seed, n_resamples=n_resamples, alternative="two-sided", confidence=0.9, samples=firsts
    )
    alone = [
        significance.paired_permutation_test(x.tolist(), y.tolist(), seed=seed, n_resamples=n_resamples, confidence=0.9)
        for x, y in samples
    ]
    assert together == alone
    intervals = significance._bootstrap_cis(firsts, seed=seed, confidence=0.9, n_resamples=n_resamples)
    assert with_tests == intervals
    assert intervals == [
        significance.bootstrap_ci(x.tolist(), seed=seed, confidence=0.9, n_resamples=n_resamples) for x in firsts
    ]
    for (x, y), test in zip(samples, together):
        if np.any(x - y) and n_resamples < 2 ** len(x):
            assert test.p_value == engine._scipy_permutation_p(
                x, y, seed=seed, n_resamples=n_resamples, alternative="two-sided"
            )
