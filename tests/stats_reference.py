"""scipy's own bootstrap and one-pair forms of the engine: the references tests/analysis/test_resampling.py checks
agentmemory.analysis._resampling against (test-only; the package computes many samples at once)."""

from __future__ import annotations

import warnings

import numpy as np

from agentmemory.analysis._resampling import (
    _BATCH,
    _mean,
    _percentile_bootstraps,
    _rng_keyword,
    _sign_flip_nulls,
    _sign_flip_ps,
)


def _percentile_bootstrap(data: np.ndarray, *, seed: int, confidence: float, n_resamples: int) -> tuple[float, float]:
    """``scipy.stats.bootstrap((data,), _mean, method="percentile", batch=_BATCH, vectorized=True, ...)``'s interval."""
    return _percentile_bootstraps([data], seed=seed, confidence=confidence, n_resamples=n_resamples)[0]


def _sign_flip_p(x: np.ndarray, y: np.ndarray, *, seed: int, n_resamples: int, alternative: str) -> float:
    """``scipy.stats.permutation_test((x, y), _mean_difference, permutation_type="samples", batch=_BATCH, ...)``'s p-value."""
    return _sign_flip_ps([(x, y)], seed=seed, n_resamples=n_resamples, alternative=alternative)[0]


def _sign_flip_null(x: np.ndarray, y: np.ndarray, *, seed: int, n_resamples: int) -> np.ndarray:
    """The ``null_distribution`` of scipy's random sign flips (see :func:`_sign_flips_vectorisable`)."""
    return _sign_flip_nulls([(x, y)], seed=seed, n_resamples=n_resamples)[0]


def _scipy_bootstrap(data: np.ndarray, *, seed: int, confidence: float, n_resamples: int) -> tuple[float, float]:
    """The interval of ``scipy.stats.bootstrap`` (the reference :func:`_percentile_bootstrap` is tested against)."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (data,),
            _mean,
            n_resamples=n_resamples,
            batch=_BATCH,
            vectorized=True,
            confidence_level=confidence,
            method="percentile",
            **_rng_keyword(stats.bootstrap, seed),
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
