"""Bootstrap intervals, paired permutation tests and Holm's adjustment over per-query values.

Every function takes a ``seed`` and resamples with ``numpy.random.default_rng(seed)`` afresh, so the same
inputs and seed give the same numbers, bit for bit, on the same numpy and scipy versions.  The arithmetic
is done by :mod:`agentmemory.analysis._resampling` on scipy's random draws, in scipy's order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from agentmemory.analysis._resampling import (
    _constant,
    _percentile_bootstraps,
    _scipy_permutation_p,
    _sign_flip_ps,
    _sign_flips_vectorisable,
)
from agentmemory.analysis.summaries import Interval, PairedTest
from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int, check_seed

__all__ = ["bootstrap_ci", "holm", "paired_permutation_test", "resamples_for_marker", "smallest_p_value"]

_ALTERNATIVES = ("two-sided", "greater", "less")


def _values(name: str, values: Iterable[float]) -> np.ndarray:
    try:
        array = np.asarray(list(values), dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(name, values, "is not a sequence of numbers", f"pass {name} as a list of floats") from None
    if array.ndim != 1:
        raise ParameterError(name, values, "is not one-dimensional", f"pass {name} as a flat list of floats")
    if len(array) == 0:
        raise ParameterError(name, [], "is empty", f"pass at least one value in {name}")
    if not np.all(np.isfinite(array)):
        bad = next(float(v) for v in array if not math.isfinite(v))
        raise ParameterError(name, bad, "is not a finite number", f"every value in {name} must be finite")
    return array


def _check_confidence(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ParameterError("confidence", confidence, "is not strictly between 0 and 1", "use e.g. 0.95")
    return float(confidence)


def bootstrap_ci(
    values: Sequence[float],
    *,
    seed: int,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
) -> Interval:
    """Percentile bootstrap confidence interval of the mean of ``values`` (one value per query).

    ``scipy.stats.bootstrap((values,), mean, method="percentile",
    n_resamples=n_resamples, confidence_level=confidence, batch=1000)`` with
    the generator ``numpy.random.default_rng(seed)``: ``n_resamples`` times,
    draw ``n`` values with replacement and take their mean; the interval is
    the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of
    those means.  Same values and seed, same interval, bit for bit.  The
    arithmetic is done here on scipy's random draws (scipy's generic
    machinery and its import cost more than the means); tests check the
    interval against scipy's bit for bit.

    Degenerate input (one value, or all values equal up to rounding noise:
    spread <= 1e-12 * max(1, max |value|)) has nothing to
    resample; scipy would raise or warn.  The result is then the point
    interval ``[mean, mean]`` with ``degenerate=True``; no warning is emitted.

    Raises:
        ParameterError: ``values`` is empty or holds a non-finite number;
            ``seed`` is not an integer >= 0; ``confidence`` is not in (0, 1);
            ``n_resamples`` is not an integer >= 1.
    """
    data = _values("values", values)
    seed = check_seed(seed)
    return _bootstrap_cis([data], seed=seed, confidence=confidence, n_resamples=n_resamples)[0]


def _bootstrap_cis(samples: Sequence[np.ndarray], *, seed: int, confidence: float, n_resamples: int) -> list[Interval]:
    """:func:`bootstrap_ci` of each sample (already checked by :func:`_values`), the random draws shared."""
    if not samples:
        return []
    confidence = _check_confidence(confidence)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    intervals: list[Interval] = []
    resampled: list[int] = []
    for data in samples:
        n = len(data)
        mean = math.fsum(data.tolist()) / n
        intervals.append(Interval(mean, mean, mean, n, confidence, degenerate=True))
        if not (n == 1 or _constant(data)):
            resampled.append(len(intervals) - 1)
    bounds = _percentile_bootstraps(
        [samples[i] for i in resampled], seed=seed, confidence=confidence, n_resamples=n_resamples
    )
    for i, (low, high) in zip(resampled, bounds):
        point = intervals[i]
        intervals[i] = Interval(low, high, point.mean, point.n, confidence)
    return intervals


def smallest_p_value(n: int, *, n_resamples: int = 10_000, alternative: str = "two-sided") -> float:
    """The smallest p-value :func:`paired_permutation_test` can return for ``n`` pairs.

    Exact test (``n_resamples >= 2**n``): one-sided ``1 / 2**n``, two-sided
    ``2 / 2**n`` (scipy doubles the smaller one-sided p-value); so 5 queries
    give 0.0625 two-sided and 0.03125 one-sided.  Random sign flips
    (``n_resamples < 2**n``): scipy's ``(count + 1) / (n_resamples + 1)``
    bounds it by ``1 / (n_resamples + 1)``, doubled when two-sided.  Never above 1.
    """
    n = check_positive_int("n", n)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    _check_alternative(alternative)
    factor = 2.0 if alternative == "two-sided" else 1.0
    if n_resamples >= 2**n:
        return min(1.0, factor / 2**n)
    return min(1.0, factor / (n_resamples + 1))


def resamples_for_marker(queries: int, comparisons: int, alpha: float) -> int | None:
    """The fewest ``n_resamples`` with which a two-sided test over ``queries`` pairs can be significant at ``alpha``
    after Holm's correction over ``comparisons`` comparisons; ``None`` when no number of resamples can.

    Holm's first step multiplies the smallest p-value by the number of comparisons ``m``, so a marker needs
    ``m * smallest_p_value(queries, n_resamples=n) <= alpha``.  With random sign flips the smallest two-sided
    p-value is ``2 / (n + 1)`` (scipy's ``(count + 1) / (n_resamples + 1)`` per side, doubled), so
    ``n + 1 >= 2 m / alpha``; from ``2**queries`` resamples on the test is exact and its smallest p-value,
    ``2 / 2**queries``, is the least any number of resamples gives: when even that times ``m`` exceeds
    ``alpha`` the queries are too few and the answer is ``None``.  The comparison is made in the floating-point
    arithmetic of :func:`smallest_p_value` and :func:`holm` (``m * p > alpha``), so the number returned is the
    exact threshold: one resample fewer leaves no marker possible.
    (Example: 114 comparisons at alpha 0.05 over 50 queries need 4559 resamples; 2000 give at best
    ``114 * 2 / 2001 = 0.114``.)

    Raises:
        ParameterError: ``queries`` or ``comparisons`` is not an integer >= 1; ``alpha`` not strictly between 0 and 1.
    """
    queries = check_positive_int("queries", queries)
    comparisons = check_positive_int("comparisons", comparisons)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ParameterError("alpha", alpha, "is not strictly between 0 and 1", "use e.g. 0.05")

    def reachable(n: int) -> bool:
        return min(1.0, comparisons * smallest_p_value(queries, n_resamples=n)) <= alpha

    exact = 2**queries
    if not reachable(exact):
        return None
    n = max(1, min(exact, math.ceil(2 * comparisons / alpha) - 1))
    while n < exact and not reachable(n):
        n += 1
    while n > 1 and reachable(n - 1):
        n -= 1
    return n


def _check_alternative(alternative: object) -> str:
    if alternative not in _ALTERNATIVES:
        raise UnknownNameError("alternative", alternative, _ALTERNATIVES)
    return str(alternative)


def paired_permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    n_resamples: int = 10_000,
    alternative: str = "two-sided",
    confidence: float = 0.95,
) -> PairedTest:
    """Paired permutation (sign-flip) test of mean(a - b) = 0; ``a[i]`` and ``b[i]`` are one query.

    ``scipy.stats.permutation_test((a, b), round(mean(x - y), 12), permutation_type="samples",
    n_resamples=n_resamples, alternative=alternative, batch=1000)`` with
    ``numpy.random.default_rng(seed)``: under the null hypothesis each pair
    may be swapped, i.e. each difference's sign flipped.  When
    ``n_resamples >= 2**n`` scipy enumerates all ``2**n`` flips and the
    p-value is exact: ``p_greater = #{flips with statistic >= observed} / 2**n``
    (``p_less`` likewise), and two-sided ``p = min(1, 2 * min(p_less, p_greater))``.
    Otherwise it draws ``n_resamples`` random flips and
    ``p = (count + 1) / (n_resamples + 1)``.  One pair (which scipy refuses)
    is computed by the same exact definition.  The statistic is rounded to 12
    decimals so that flips with mathematically equal means tie exactly (float
    rounding would otherwise miscount them when the observed mean is near 0;
    scipy's tolerance is relative to it).  Random flips are computed here on
    scipy's random draws, in scipy's order (its generic machinery costs far
    more than the arithmetic); tests check the null distribution against
    scipy's bit for bit.  See :func:`smallest_p_value`:
    with 5 queries the two-sided p-value is at least 0.0625.

    ``effect_ci`` is :func:`bootstrap_ci` of the differences ``a - b`` with the
    same ``seed``.

    Raises:
        ParameterError: ``a`` and ``b`` differ in length, are empty or hold a
            non-finite number; bad ``seed``, ``n_resamples`` or ``confidence``.
        UnknownNameError: ``alternative`` is not two-sided, greater or less.
    """
    x = _values("a", a)
    y = _values("b", b)
    if len(x) != len(y):
        raise ParameterError(
            "b", f"{len(y)} values", f"does not match a ({len(x)} values)", "pass one value per query in both"
        )
    seed = check_seed(seed)
    tests, _ = _paired_tests(
        [(x, y)], seed=seed, n_resamples=n_resamples, alternative=alternative, confidence=confidence
    )
    return tests[0]


def _paired_tests(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    seed: int,
    n_resamples: int,
    alternative: str,
    confidence: float,
    samples: Sequence[np.ndarray] = (),
) -> tuple[list[PairedTest], list[Interval]]:
    """:func:`paired_permutation_test` of each pair (already checked), the random draws shared; with
    :func:`bootstrap_ci` of each of ``samples`` (already checked), resampled with the effects' draws."""
    if not pairs:
        return [], _bootstrap_cis(samples, seed=seed, confidence=confidence, n_resamples=n_resamples)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    alternative = _check_alternative(alternative)
    confidence = _check_confidence(confidence)
    p_values: list[float] = []
    flipped: dict[int, list[int]] = {}  # pairs whose random flips are computed here, by length
    for x, y in pairs:
        n = len(x)
        diffs = x - y
        if n == 1:
            p_values.append(_one_pair_p(float(diffs[0]), alternative))
        elif not np.any(diffs):
            p_values.append(1.0)  # every flip gives the observed statistic 0
        elif n_resamples >= 2**n or not _sign_flips_vectorisable(n, n_resamples):
            p_values.append(_scipy_permutation_p(x, y, seed=seed, n_resamples=n_resamples, alternative=alternative))
        else:
            flipped.setdefault(n, []).append(len(p_values))
            p_values.append(math.nan)
    for members in flipped.values():
        # Equal pairs get equal p-values.  Reversed, (y, x) has every flip's differences negated exactly
        # (y - x == -(x - y) and IEEE rounding is symmetric, so sums, means and rounding negate too, up
        # to the sign of a zero, which no comparison sees): "less" and "greater" swap, and the two-sided
        # p-value is the same.  Each is computed once.
        keys = [(pairs[i][0].tobytes(), pairs[i][1].tobytes()) for i in members]
        first: dict[tuple[bytes, bytes], int] = {}
        for i, key in zip(members, keys):
            if key not in first and not (alternative == "two-sided" and (key[1], key[0]) in first):
                first[key] = i
        computed = _sign_flip_ps(
            [pairs[i] for i in first.values()], seed=seed, n_resamples=n_resamples, alternative=alternative
        )
        found = dict(zip(first, computed))
        for i, key in zip(members, keys):
            p_values[i] = found[key] if key in found else found[key[1], key[0]]
    differences = [_values("values", x - y) for x, y in pairs]  # as bootstrap_ci(a - b) checks them
    intervals = _bootstrap_cis([*differences, *samples], seed=seed, confidence=confidence, n_resamples=n_resamples)
    effect_cis = intervals[: len(differences)]
    tests = []
    for (x, y), p_value, effect_ci in zip(pairs, p_values, effect_cis):
        n = len(x)
        diffs = x - y
        mean_difference = math.fsum(diffs.tolist()) / n
        sd = 0.0 if n == 1 or _constant(diffs) else float(np.std(diffs, ddof=1))
        tests.append(
            PairedTest(
                mean_difference=mean_difference,
                p_value=p_value,
                effect_size=mean_difference,
                effect_ci=effect_ci,
                n=n,
                standardized_effect=mean_difference / sd if sd > 0 else None,
                alternative=alternative,
                exact=n_resamples >= 2**n,
                smallest_p_value=smallest_p_value(n, n_resamples=n_resamples, alternative=alternative),
            )
        )
    return tests, intervals[len(differences) :]


def _one_pair_p(d: float, alternative: str) -> float:
    """Exact sign-flip p-value for one difference ``d`` (flips: ``d`` and ``-d``)."""
    greater = sum(1 for s in (d, -d) if s >= d) / 2
    less = sum(1 for s in (d, -d) if s <= d) / 2
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(1.0, 2 * min(greater, less))


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm step-down adjusted p-values, keyed and ordered as ``p_values``.

    With the ``m`` p-values sorted ascending, ``p_(1) <= ... <= p_(m)``
    (equal p-values in the mapping's order):

    ``adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))``

    the same as ``statsmodels.stats.multitest.multipletests(p, method="holm")``.
    Reject hypothesis ``i`` at level ``alpha`` when ``adj_(i) <= alpha``.

    Raises:
        ParameterError: a p-value is not a number in [0, 1].
    """
    items = list(p_values.items())
    for name, p in items:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ParameterError(f"p_values[{name!r}]", p, "is not a number in [0, 1]", "pass p-values")
    m = len(items)
    order = sorted(range(m), key=lambda i: items[i][1])
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(items[index][1])))
        adjusted[items[index][0]] = running
    return {name: adjusted[name] for name, _ in items}
