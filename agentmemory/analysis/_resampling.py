"""The resampling engine: scipy's percentile bootstrap and random sign flips, on scipy's draws, with NumPy alone.

scipy.stats.bootstrap and permutation_test are generic (any statistic, any number of samples, array API
backends); for the mean of one sample and the paired sign flip their bookkeeping (one fancy index per
query per batch, moveaxis, stacking) costs far more than the arithmetic, and importing scipy.stats alone
takes ~0.6 s.  The functions below do the same arithmetic on the same random draws, in the same order and
memory layout, so they return the same floats bit for bit; tests/analysis/test_resampling.py checks them against
scipy on random inputs, ties included.

Private: :mod:`agentmemory.analysis.significance` is its only caller.  scipy (a core dependency) is
imported only by :func:`_scipy_permutation_p`, the reference for what the vectorised flips cannot
reproduce (exact enumerations, odd batches), so an evaluation need not load it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

_STAT_DECIMALS = 12  # the permutation statistic's rounding (see _mean_difference)
_NOISE = 1e-12  # relative spread below which values count as equal (see _constant)
_BATCH = 1000  # resamples per batch; fixed so that the random stream, and so the result, never depends on memory


def _rng_keyword(function: Any, seed: int) -> dict[str, Any]:
    """``rng=`` (scipy >= 1.15) or ``random_state=`` (older), with ``default_rng(seed)``."""
    import inspect

    generator = np.random.default_rng(seed)
    if "rng" in inspect.signature(function).parameters:
        return {"rng": generator}
    return {"random_state": generator}  # pragma: no cover - scipy < 1.15


def _constant(data: np.ndarray) -> bool:
    """All values equal, up to rounding noise: spread <= 1e-12 * max(1, max |value|).

    Differences of metric values carry such noise (``0.4 - 0.3 != 0.3 - 0.2``);
    treating it as spread would give a sd of ~1e-17 and absurd standardised effects.
    """
    return float(np.ptp(data)) <= _NOISE * max(1.0, float(np.max(np.abs(data))))


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """mean(x - y), rounded to 12 decimals so that flips with equal means compare equal.

    Metric values are ratios such as 0.2 and 1/3; two sign flips whose means
    are mathematically equal can differ in the last bit, and scipy's own
    tolerance (relative to the observed statistic) vanishes when the observed
    mean is near 0, so an exact test would miscount ties.  Rounding makes
    ties exact ties.
    """
    return np.asarray(np.round(np.mean(x - y, axis=axis), _STAT_DECIMALS))


def _percentile_bootstraps(
    samples: Sequence[np.ndarray], *, seed: int, confidence: float, n_resamples: int
) -> list[tuple[float, float]]:
    """The interval of ``scipy.stats.bootstrap((data,), _mean, method="percentile", batch=_BATCH,
    vectorized=True, ...)`` for each ``data`` of ``samples`` (each with its own ``default_rng(seed)``, as scipy).

    scipy draws ``rng.integers(0, n, (batch, n))`` per batch, takes the mean of
    ``data[indices]`` along the last axis, and reads the interval off the
    resampled means with ``scipy.stats.quantile(..., method="linear")``
    (Hyndman and Fan's type 7), as below.  Samples of the same length get the
    same draws from the same seed, so they are drawn once for all of them.
    """
    by_length: dict[int, list[int]] = {}
    for index, data in enumerate(samples):
        by_length.setdefault(data.shape[-1], []).append(index)
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(samples)
    for n, listed in by_length.items():
        # Equal samples have equal intervals: resample each once.
        unique = {samples[index].tobytes(): index for index in reversed(listed)}
        members = list(unique.values())
        rng = np.random.default_rng(seed)
        means: list[list[np.ndarray]] = [[] for _ in members]
        for k in range(0, n_resamples, _BATCH):
            batch = min(_BATCH, n_resamples - k)
            indices = rng.integers(0, n, size=(batch, n), dtype=np.int64, endpoint=False)
            for slot, index in enumerate(members):
                # np.take: the gather of data[..., indices], a third of its cost (same C-ordered array).
                means[slot].append(_mean(np.take(samples[index], indices), axis=-1))
        for slot, index in enumerate(members):
            theta = np.concatenate(means[slot], axis=-1)
            alpha = np.asarray((1 - confidence) / 2, dtype=theta.dtype)
            p = np.stack((alpha, 1 - alpha), axis=-1)
            low, high = _linear_quantile(theta, p)
            out[index] = (float(low), float(high))
        for index in listed:
            out[index] = out[unique[samples[index].tobytes()]]
    return out


def _linear_quantile(values: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``scipy.stats.quantile(values, p, method="linear")`` for a 1-D ``values`` without NaN and ``p`` in [0, 1]."""
    y = np.sort(values, axis=-1)
    n = np.asarray(y.shape[-1], dtype=y.dtype)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, n - 1)
    jp1 = np.clip(jp1, 0.0, n - 1)
    return np.asarray((1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)])


def _sign_flips_vectorisable(n: int, n_resamples: int) -> bool:
    """Whether :func:`_sign_flip_ps` reproduces scipy's random sign flips for ``n`` pairs.

    scipy shuffles each pair with ``rng.permuted`` on ``batch * n`` pairs per call; each shuffle draws one
    32-bit half of a 64-bit output.  With ``batch * n`` even every call uses whole 64-bit outputs, and
    :func:`_sign_flip_nulls` reads them with ``random_raw``.
    """
    return n >= 2 and (min(_BATCH, n_resamples) * n) % 2 == 0 and sys.byteorder == "little"


def _sign_flip_ps(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int, n_resamples: int, alternative: str
) -> list[float]:
    """The p-value of ``scipy.stats.permutation_test((x, y), _mean_difference, permutation_type="samples",
    batch=_BATCH, ...)`` for each pair ``(x, y)``, all of the same length: the flips are drawn once for all.

    Random (not exact) flips only: the null distribution of :func:`_sign_flip_nulls`, and scipy's formula
    ``(count + 1) / (n_resamples + 1)`` with its tolerance ``100 eps |observed|``.
    """
    nulls = _sign_flip_nulls(pairs, seed=seed, n_resamples=n_resamples)
    out = []
    for (x, y), null_distribution in zip(pairs, nulls):
        observed = _mean_difference(x, y, axis=-1)
        gamma = np.abs(np.finfo(observed.dtype).eps * 100 * observed)
        less = (np.count_nonzero(null_distribution <= observed + gamma, axis=0) + 1).astype(np.float64) / (
            n_resamples + 1
        )
        greater = (np.count_nonzero(null_distribution >= observed - gamma, axis=0) + 1).astype(np.float64) / (
            n_resamples + 1
        )
        p_values = {"less": less, "greater": greater, "two-sided": np.minimum(less, greater) * 2}
        out.append(float(np.clip(p_values[alternative], 0.0, 1.0)))
    return out


def _sign_flip_nulls(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int, n_resamples: int
) -> list[np.ndarray]:
    """The ``null_distribution`` of scipy's random sign flips of each pair, all of the same length (each has its own ``default_rng(seed)``
    in scipy, so they all get the same flips: drawn here once).

    scipy turns the ``n`` pairs into ``n`` samples of two observations and, per batch, calls
    ``rng.permuted`` on ``tile(arange(2), (batch, n, 1))`` along the last axis: for every pair, in C
    order, one ``random_interval(1)``, i.e. the low bit of the next 32-bit half of the generator's 64-bit
    output (low half first).  Bit 1 keeps the pair, bit 0 swaps it.  The statistic then sees
    ``(batch, n)`` arrays whose batch axis is the fast one; so does it here, because numpy's mean sums
    in an order that depends on the memory layout.
    """
    rng = np.random.default_rng(seed)
    n = pairs[0][0].shape[-1]
    batch = min(_BATCH, n_resamples)
    # A kept pair contributes x - y, a swapped one y - x.  That is (x - y) * sign + 0.0 with sign = +1.0
    # or -1.0, bit for bit: multiplying by -1.0 negates exactly, y - x == -(x - y) exactly, and adding
    # +0.0 changes nothing but the -0.0 of an equal pair into the +0.0 that y - x gives.
    kept = [(x - y)[:, np.newaxis] for x, y in pairs]
    nulls: list[list[np.ndarray]] = [[] for _ in pairs]
    for k in range(0, n_resamples, batch):
        batch_actual = min(batch, n_resamples - k)
        # The 32-bit halves in the order next_uint32 hands them out (low first; little-endian view).
        halves = rng.bit_generator.random_raw(batch * n // 2).view(np.uint32)
        bits = halves.reshape(batch, n)[:batch_actual] & np.uint32(1)
        signs = np.ascontiguousarray(bits.T).astype(np.float64) * 2.0 - 1.0  # (n, batch_actual), C order
        differences = np.empty_like(signs)
        for slot in range(len(pairs)):
            np.multiply(kept[slot], signs, out=differences)
            np.add(differences, 0.0, out=differences)
            # scipy's (batch, n) differences are Fortran-ordered: sum the transpose of this C-ordered (n, batch).
            nulls[slot].append(np.asarray(np.round(np.mean(differences.T, axis=-1), _STAT_DECIMALS)))
    return [np.concatenate(null, axis=0) for null in nulls]


def _scipy_permutation_p(x: np.ndarray, y: np.ndarray, *, seed: int, n_resamples: int, alternative: str) -> float:
    """The p-value of ``scipy.stats.permutation_test`` (the reference; used for exact enumerations)."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.permutation_test(
            (x, y),
            _mean_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            batch=_BATCH,
            alternative=alternative,
            **_rng_keyword(stats.permutation_test, seed),
        )
    return float(result.pvalue)
