"""Honest statistics over per-query values: bootstrap intervals, paired permutation tests, Holm.

The unit of resampling is the **query**: a mean over five queries is an
estimate from five observations, however many entries the store holds.
Every function that resamples takes a ``seed`` and builds
``numpy.random.default_rng(seed)`` afresh, so the same inputs and seed give
the same numbers, bit for bit, on the same numpy and scipy versions.  scipy
(a core dependency) is imported inside the functions that need it, so
``import agentmemory`` does not load it; the bootstrap and the random sign
flips do scipy's arithmetic on scipy's draws with NumPy alone (see
``_percentile_bootstrap``), so an evaluation need not load it either.

What the numbers mean (and do not):

* :func:`bootstrap_ci`: the percentile bootstrap interval of the mean
  (scipy.stats.bootstrap, ``method="percentile"``).  With few queries it is
  too narrow (it cannot know about queries it never saw); treat it as a
  description of these queries' spread, not a guarantee.
* :func:`paired_permutation_test`: the sign-flip test of "no difference"
  between two retrievers on the same queries.  With ``n`` queries there are
  only ``2**n`` sign flips, so the p-value cannot go below ``2 / 2**n``
  (two-sided): with 5 queries, 0.0625, and no difference can be significant
  at 0.05.  A large p-value means these queries do not show a difference;
  it is not evidence that there is none.
* :func:`holm`: the Holm step-down adjustment, for several comparisons at once.
* :func:`evaluation_statistics`: all of it for an evaluation, as a
  :class:`Statistics` record (``to_dict()`` is the artifact's ``statistics``).
* :func:`per_query_statistics`: the same from per-query values alone (what
  an experiment's merge has: :mod:`agentmemory.experiment`).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int, check_seed
from agentmemory.metrics import Measure, parse_measures

if TYPE_CHECKING:  # evaluate imports the store and retrievers; statistics only read its result
    from agentmemory.evaluation.runner import Evaluation

__all__ = [
    "BaselineComparison",
    "METHOD",
    "Comparison",
    "GroupStatistics",
    "Interval",
    "PairedTest",
    "Statistics",
    "bootstrap_ci",
    "comparisons_preface",
    "describe_comparison",
    "evaluation_statistics",
    "format_p",
    "holm",
    "paired_permutation_test",
    "per_query_statistics",
    "smallest_p_value",
]

_ALTERNATIVES = ("two-sided", "greater", "less")
_STAT_DECIMALS = 12  # the permutation statistic's rounding (see _mean_difference)
_NOISE = 1e-12  # relative spread below which values count as equal (see _constant)
_BATCH = 1000  # resamples per batch; fixed so that the random stream, and so the result, never depends on memory


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean and its bootstrap confidence interval.

    Attributes:
        low, high: the interval's ends.
        mean: the sample mean (:func:`math.fsum` / n).
        n: number of values (queries).
        confidence: the confidence level, e.g. 0.95.
        degenerate: True when there was nothing to resample (one value, or
            all values equal up to rounding noise of 1e-12): the interval is
            then the point ``[mean, mean]`` and says nothing about uncertainty.
    """

    low: float
    high: float
    mean: float
    n: int
    confidence: float
    degenerate: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"mean", "low", "high", "n", "confidence", "degenerate"}``, plain Python types."""
        return {
            "mean": self.mean,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "confidence": self.confidence,
            "degenerate": self.degenerate,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interval:
        """The interval :meth:`to_dict` gave (as read back from JSON)."""
        return cls(
            low=data["low"],
            high=data["high"],
            mean=data["mean"],
            n=data["n"],
            confidence=data["confidence"],
            degenerate=data["degenerate"],
        )


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The outcome of :func:`paired_permutation_test` (differences are ``a - b``).

    Attributes:
        mean_difference: mean of the paired differences, in metric units.
        p_value: the permutation p-value.
        effect_size: the same mean difference (metric units are the effect
            size worth reading; kept as its own field for reports).
        effect_ci: bootstrap interval of the mean paired difference.
        n: number of pairs (queries).
        standardized_effect: mean difference / sample standard deviation
            (``ddof=1``) of the differences (Cohen's d_z); ``None`` when the
            differences are all equal (up to rounding noise of 1e-12) or ``n < 2``.
        alternative: ``"two-sided"``, ``"greater"`` (a > b) or ``"less"``.
        exact: True when all ``2**n`` sign flips were enumerated.
        smallest_p_value: the smallest p-value this test could give with
            this ``n`` and ``n_resamples`` (see :func:`smallest_p_value`).
    """

    mean_difference: float
    p_value: float
    effect_size: float
    effect_ci: Interval
    n: int
    standardized_effect: float | None
    alternative: str
    exact: bool
    smallest_p_value: float

    def to_dict(self) -> dict[str, Any]:
        """Every field in declaration order, ``effect_ci`` as :meth:`Interval.to_dict`."""
        out = asdict(self)
        out["effect_ci"] = self.effect_ci.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairedTest:
        """The test :meth:`to_dict` gave (keys other than the fields are ignored)."""
        values = {f.name: data[f.name] for f in fields(cls)}
        values["effect_ci"] = Interval.from_dict(data["effect_ci"])
        return cls(**values)


METHOD: Mapping[str, str] = MappingProxyType(
    {
        "interval": "percentile bootstrap of the mean over queries (scipy.stats.bootstrap)",
        "test": "paired permutation (sign-flip) test of the mean difference (scipy.stats.permutation_test)",
        "correction": "Holm step-down across the system pairs of each measure (comparisons[].p_holm)",
        "table_correction": (
            "Holm step-down across every system x measure comparison with the baseline (versus_baseline[].p_holm_table)"
        ),
    }
)
"""What :func:`evaluation_statistics` computes, in words (the artifact's ``statistics.method``)."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """One row of :attr:`Statistics.comparisons`: retriever ``a`` against ``b`` on one measure.

    Attributes:
        a, b: retriever names; differences are ``a - b``.
        test: :func:`paired_permutation_test` over the headline queries.
        p_holm: Holm's adjustment of ``test.p_value`` across the retriever
            pairs of the measure (equal to it when there is one pair).
        sentence: :func:`describe_comparison` of the test, with the labels.
    """

    a: str
    b: str
    test: PairedTest
    p_holm: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        """``{"a", "b", <the test's fields>, "p_holm", "sentence"}``, the artifact's comparison row."""
        return {"a": self.a, "b": self.b, **self.test.to_dict(), "p_holm": self.p_holm, "sentence": self.sentence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """The comparison :meth:`to_dict` gave."""
        return cls(data["a"], data["b"], PairedTest.from_dict(data), data["p_holm"], data["sentence"])


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    """One cell of the comparison table: ``system`` against the baseline on one measure.

    Attributes:
        system: the system's name (its key); differences are ``system - baseline``.
        measure: the measure's text form.
        test: :func:`paired_permutation_test` over the headline queries.
        p_holm_table: Holm's adjustment of ``test.p_value`` across every
            comparison of the table (every other system x every measure).
        above, below: how many headline queries the system scores above / below the baseline on.
    """

    system: str
    measure: str
    test: PairedTest
    p_holm_table: float
    above: int
    below: int

    def to_dict(self) -> dict[str, Any]:
        """``{"system", "measure", <the test's fields>, "p_holm_table", "above", "below"}``."""
        return {
            "system": self.system,
            "measure": self.measure,
            **self.test.to_dict(),
            "p_holm_table": self.p_holm_table,
            "above": self.above,
            "below": self.below,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselineComparison:
        """The comparison :meth:`to_dict` gave."""
        return cls(
            data["system"],
            data["measure"],
            PairedTest.from_dict(data),
            data["p_holm_table"],
            data["above"],
            data["below"],
        )

    def marker(self, alpha: float) -> str:
        """``"▲"``/``"▼"`` when significantly higher/lower than the baseline at ``alpha`` (table-wide Holm), else ``""``."""
        if self.p_holm_table > alpha or self.test.mean_difference == 0:
            return ""
        return "▲" if self.test.mean_difference > 0 else "▼"


@dataclass(frozen=True, slots=True)
class GroupStatistics:
    """The intervals of one query group (:attr:`Statistics.groups`).

    Attributes:
        name: the group.
        queries: its number of judged queries (every interval's ``n``).
        in_headline: False when the group is in the collection's
            ``headline_excludes`` (shown apart, left out of the headline).
        intervals: ``intervals[retriever][measure]``, :func:`bootstrap_ci`
            over the group's queries.
    """

    name: str
    queries: int
    in_headline: bool
    intervals: Mapping[str, Mapping[str, Interval | None]]


@dataclass(frozen=True, slots=True)
class Statistics:
    """What :func:`evaluation_statistics` returns: intervals and paired tests of an evaluation.

    Attributes:
        seed, confidence, n_resamples, alpha: the parameters it ran with.
        queries: the number of headline queries (behind every interval of
            ``intervals`` and every test).
        excluded_groups: the collection's ``headline_excludes``.
        measures: the measures' text forms, in the evaluation's order.
        intervals: ``intervals[retriever][measure]``, the headline mean's
            :class:`Interval`; ``None`` when there is no headline query.
        groups: group name (sorted) -> :class:`GroupStatistics`.
        comparisons: ``comparisons[measure]``, one :class:`Comparison` per
            pair of systems in the evaluation's order.
        baseline: the system the comparison table compares with (its name).
        versus_baseline: one :class:`BaselineComparison` per other system x
            measure (systems, then measures, in the evaluation's order).

    :meth:`to_dict` is the JSON-ready form the artifact holds under
    ``statistics``; :meth:`from_dict` reads it back.
    """

    seed: int
    confidence: float
    n_resamples: int
    alpha: float
    queries: int
    excluded_groups: tuple[str, ...]
    measures: tuple[str, ...]
    intervals: Mapping[str, Mapping[str, Interval | None]]
    groups: Mapping[str, GroupStatistics]
    comparisons: Mapping[str, tuple[Comparison, ...]]
    baseline: str = ""
    versus_baseline: tuple[BaselineComparison, ...] = ()

    @property
    def method(self) -> Mapping[str, str]:
        """:data:`METHOD`: the interval, the test and the correction, in words."""
        return METHOD

    def all_comparisons(self) -> list[tuple[str, Comparison]]:
        """Every ``(measure, comparison)``, measures in order, then pairs in order."""
        return [(m, c) for m, rows in self.comparisons.items() for c in rows]

    def sentences(self, measures: Iterable[str] | None = None) -> list[str]:
        """The sentence of every comparison on ``measures`` (default all), in that order."""
        chosen = self.measures if measures is None else measures
        return [c.sentence for m in chosen for c in self.comparisons.get(m, ())]

    def to_dict(self) -> dict[str, Any]:
        """The artifact's ``statistics``: plain JSON types, keys in a fixed order."""

        def cells(by_measure: Mapping[str, Interval | None]) -> dict[str, Any]:
            return {m: None if cell is None else cell.to_dict() for m, cell in by_measure.items()}

        return {
            "seed": self.seed,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "alpha": self.alpha,
            "queries": self.queries,
            "excluded_groups": list(self.excluded_groups),
            "method": dict(self.method),
            "measures": list(self.measures),
            "intervals": {name: cells(by_measure) for name, by_measure in self.intervals.items()},
            "groups": {
                name: {r: cells(by_measure) for r, by_measure in group.intervals.items()}
                for name, group in self.groups.items()
            },
            "comparisons": {m: [c.to_dict() for c in rows] for m, rows in self.comparisons.items()},
            "baseline": self.baseline,
            "versus_baseline": [c.to_dict() for c in self.versus_baseline],
        }

    def against_baseline(self, system: str, measure: str) -> BaselineComparison | None:
        """The table cell of ``system`` on ``measure`` (``None`` for the baseline itself)."""
        return next((c for c in self.versus_baseline if c.system == system and c.measure == measure), None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Statistics:
        """The record :meth:`to_dict` gave, e.g. read from ``eval-results.json``'s ``statistics``.

        A group's ``queries`` is its intervals' ``n`` (0 when it has none).
        """

        def cells(by_measure: Mapping[str, Any]) -> dict[str, Interval | None]:
            return {m: None if cell is None else Interval.from_dict(cell) for m, cell in by_measure.items()}

        excluded = tuple(data["excluded_groups"])
        groups = {}
        for name, by_retriever in data["groups"].items():
            intervals = {r: cells(by_measure) for r, by_measure in by_retriever.items()}
            n = next((cell.n for by_measure in intervals.values() for cell in by_measure.values() if cell), 0)
            groups[name] = GroupStatistics(name, n, name not in excluded, intervals)
        return cls(
            seed=data["seed"],
            confidence=data["confidence"],
            n_resamples=data["n_resamples"],
            alpha=data["alpha"],
            queries=data["queries"],
            excluded_groups=excluded,
            measures=tuple(data["measures"]),
            intervals={name: cells(by_measure) for name, by_measure in data["intervals"].items()},
            groups=groups,
            comparisons={m: tuple(Comparison.from_dict(c) for c in rows) for m, rows in data["comparisons"].items()},
            baseline=data.get("baseline", ""),
            versus_baseline=tuple(BaselineComparison.from_dict(c) for c in data.get("versus_baseline", ())),
        )


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


# scipy.stats.bootstrap and permutation_test are generic (any statistic, any number of samples, array API
# backends); for the mean of one sample and the paired sign flip their bookkeeping (one fancy index per
# query per batch, moveaxis, stacking) costs far more than the arithmetic, and importing scipy.stats alone
# takes ~0.6 s.  The functions below do the same arithmetic on the same random draws, in the same order and
# memory layout, so they return the same floats bit for bit; tests/test_stats_fast.py checks them against
# scipy on random inputs, ties included.


def _percentile_bootstrap(data: np.ndarray, *, seed: int, confidence: float, n_resamples: int) -> tuple[float, float]:
    """``scipy.stats.bootstrap((data,), _mean, method="percentile", batch=_BATCH, vectorized=True, ...)``'s interval."""
    return _percentile_bootstraps([data], seed=seed, confidence=confidence, n_resamples=n_resamples)[0]


def _percentile_bootstraps(
    samples: Sequence[np.ndarray], *, seed: int, confidence: float, n_resamples: int
) -> list[tuple[float, float]]:
    """:func:`_percentile_bootstrap` of each sample (each with its own ``default_rng(seed)``, as scipy).

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
    """Whether :func:`_sign_flip_p` reproduces scipy's random sign flips for ``n`` pairs.

    scipy shuffles each pair with ``rng.permuted`` on ``batch * n`` pairs per call; each shuffle draws one
    32-bit half of a 64-bit output.  With ``batch * n`` even every call uses whole 64-bit outputs, and
    :func:`_sign_flip_p` reads them with ``random_raw``.
    """
    return n >= 2 and (min(_BATCH, n_resamples) * n) % 2 == 0 and sys.byteorder == "little"


def _sign_flip_p(x: np.ndarray, y: np.ndarray, *, seed: int, n_resamples: int, alternative: str) -> float:
    """``scipy.stats.permutation_test((x, y), _mean_difference, permutation_type="samples", batch=_BATCH, ...)``'s p-value."""
    return _sign_flip_ps([(x, y)], seed=seed, n_resamples=n_resamples, alternative=alternative)[0]


def _sign_flip_ps(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int, n_resamples: int, alternative: str
) -> list[float]:
    """:func:`_sign_flip_p` of each pair, all of the same length: the flips are drawn once for all.

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


def _sign_flip_null(x: np.ndarray, y: np.ndarray, *, seed: int, n_resamples: int) -> np.ndarray:
    """The ``null_distribution`` of scipy's random sign flips (see :func:`_sign_flips_vectorisable`)."""
    return _sign_flip_nulls([(x, y)], seed=seed, n_resamples=n_resamples)[0]


def _sign_flip_nulls(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int, n_resamples: int
) -> list[np.ndarray]:
    """:func:`_sign_flip_null` of each pair, all of the same length (each has its own ``default_rng(seed)``
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


def format_p(p: float) -> str:
    """A p-value as text: two decimals from 0.1 up, else three significant digits (``0.25``, ``0.0625``, ``0.0499``)."""
    return f"{p:.2f}" if p >= 0.1 else f"{p:.3g}"


def describe_comparison(
    test: PairedTest,
    *,
    name_a: str,
    name_b: str,
    measure: str,
    alpha: float = 0.05,
    adjusted_p: float | None = None,
    brief: bool = False,
) -> str:
    """Plain-English sentences saying what ``test`` allows one to claim, and no more.

    ``brief`` drops what every comparison over the same queries would repeat
    (the smallest attainable p-value, "not evidence that there is none"), for
    a list of comparisons introduced once by :func:`comparisons_preface`.

    Example (5 queries, two-sided)::

        BM25 vs Tag scorer on R@5: mean difference -0.10 (95% CI -0.30 to 0.00),
        paired permutation p = 1.00 over 5 queries; the smallest p-value attainable
        with 5 queries is 0.0625, so no difference can be significant at 0.05.

    Otherwise the sentence ends with either "significant at 0.05: <a> scores
    higher/lower than <b> on these queries" or "not significant at 0.05:
    these queries do not show a difference, which is not evidence that there
    is none".  ``adjusted_p`` (e.g. Holm's, from :func:`holm`) is shown and
    used for the decision when given.  A degenerate interval (all differences
    equal) is called so.  When the bootstrap interval excludes 0 but the
    test is not significant (common with few queries: the percentile
    interval is too narrow), a sentence says so and points to the test.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ParameterError("alpha", alpha, "is not strictly between 0 and 1", "use e.g. 0.05")
    ci = test.effect_ci
    level = f"{round(ci.confidence * 100, 6):g}%"
    if ci.degenerate:
        interval = f"(every paired difference equal; no {level} interval)" if test.n > 1 else "(one query; no interval)"
    else:
        interval = f"({level} CI {ci.low:.2f} to {ci.high:.2f})"
    sides = "" if test.alternative == "two-sided" else f" ({test.alternative})"
    p_text = f"paired permutation{sides} p = {format_p(test.p_value)}"
    if adjusted_p is not None:
        p_text += f" (Holm-adjusted {format_p(adjusted_p)})"
    queries = f"{test.n} quer{'y' if test.n == 1 else 'ies'}"
    head = f"{name_a} vs {name_b} on {measure}: mean difference {test.mean_difference:.2f} {interval}, {p_text} over {queries}"
    decisive = test.p_value if adjusted_p is None else adjusted_p
    if test.smallest_p_value > alpha:
        if brief:
            return f"{head}."
        text = (
            f"{head}; the smallest p-value attainable with {queries} is {format_p(test.smallest_p_value)}, "
            f"so no difference can be significant at {alpha:g}."
        )
    elif decisive <= alpha:
        direction = "higher" if test.mean_difference > 0 else "lower"
        return f"{head}; significant at {alpha:g}: {name_a} scores {direction} than {name_b} on these queries."
    elif brief:
        text = f"{head}; not significant at {alpha:g}."
    else:
        text = (
            f"{head}; not significant at {alpha:g}: these queries do not show a difference, "
            "which is not evidence that there is none."
        )
    if not ci.degenerate and (ci.low > 0 or ci.high < 0) and not brief:
        text += (
            f" The interval excludes 0 but the test does not show a difference: with {queries} the "
            "percentile bootstrap understates the uncertainty; read the test."
        )
    return text


def comparisons_preface(statistics: Statistics) -> str:
    """The sentence said once before a list of brief comparisons (:func:`describe_comparison` with ``brief``)."""
    n = statistics.queries
    queries = f"{n} {'query' if n == 1 else 'queries'}"
    if not n:
        return "There is no headline query to compare on."
    smallest = smallest_p_value(n, n_resamples=statistics.n_resamples)
    a = f"{statistics.alpha:g}"
    if smallest > statistics.alpha:
        return (
            f"Paired permutation tests over the {queries}: the smallest attainable two-sided p-value is "
            f"{format_p(smallest)}, so no difference below can be significant at {a}, whatever the systems do."
        )
    return (
        f"Paired permutation tests over the {queries} (two-sided; Holm-adjusted across the pairs of each measure "
        f"when there are several). Not significant at {a} means these queries do not show a difference, which is "
        "not evidence that there is none."
    )


def _chosen_measures(evaluation: Evaluation, measures: Iterable[Measure | str] | str | None) -> list[str]:
    available = [str(m) for m in evaluation.measures]
    if measures is None:
        return available
    chosen = [str(m) for m in parse_measures(measures)]
    for text in chosen:
        if text not in available:
            raise UnknownNameError("measures", text, available)
    return chosen


def evaluation_statistics(
    evaluation: Evaluation,
    *,
    seed: int,
    measures: Iterable[Measure | str] | str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    baseline: str | None = None,
) -> Statistics:
    """Intervals and pairwise tests for an :class:`~agentmemory.evaluation.runner.Evaluation`, as a :class:`Statistics`.

    * ``intervals[retriever][measure]``: :func:`bootstrap_ci` of the per-query
      values over the headline queries (``collection.headline_queries``: the
      judged queries except those whose group is in the collection's
      ``headline_excludes``, listed in ``excluded_groups``; ``queries``
      counts them).
    * ``groups[group]``: the same over each query group's queries, excluded
      groups included (groups sorted; queries without a group left out;
      empty when no query has a group).
    * ``comparisons[measure]``: every pair of retrievers ``(a, b)`` in the
      evaluation's order, :func:`paired_permutation_test` of ``a - b`` over
      the headline queries, with the Holm adjustment across the pairs of
      that measure (``p_holm``) and the sentence of
      :func:`describe_comparison` (which shows the Holm-adjusted p-value
      when there is more than one pair).
    * ``versus_baseline``: every other system against ``baseline`` (a system's
      name or label; default the first system) on every measure: the paired
      test of ``system - baseline`` over the headline queries, Holm's
      adjustment across all of these comparisons together (``p_holm_table``:
      the family is the whole comparison table), and the number of queries
      above and below the baseline.

    An interval over no query is ``None`` (and there are no comparisons).

    Every call uses ``default_rng(seed)`` afresh, so intervals over the same
    queries resample the same queries (common random numbers) and the
    result does not depend on the order of computation.  ``measures``
    defaults to the evaluation's; others must be among them.  Mappings keep
    the evaluation's retriever and measure order.  ``to_dict()`` gives the
    JSON-ready form (every number a plain Python ``float``/``int``;
    ``standardized_effect`` may be ``None``).

    Raises:
        ParameterError: ``seed`` is not an integer >= 0; bad ``confidence``
            or ``n_resamples``; bad ``alpha`` (checked when there is a comparison).
        UnknownNameError: a measure the evaluation did not compute.
    """
    seed = check_seed(seed)
    chosen = _chosen_measures(evaluation, measures)
    collection = evaluation.collection
    return per_query_statistics(
        {res.name: {q.query_id: q.metrics for q in res.per_query} for res in evaluation.results},
        labels={res.name: res.label for res in evaluation.results},
        queries=[(q.id, q.group) for q in collection.judged_queries],
        excluded_groups=collection.headline_excludes,
        measures=chosen,
        seed=seed,
        confidence=confidence,
        n_resamples=n_resamples,
        alpha=alpha,
        baseline=baseline,
    )


def per_query_statistics(
    values: Mapping[str, Mapping[str, Mapping[str, float]]],
    *,
    labels: Mapping[str, str],
    queries: Sequence[tuple[str, str | None]],
    excluded_groups: Sequence[str] = (),
    measures: Sequence[str],
    seed: int,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    baseline: str | None = None,
    pairs: bool = True,
) -> Statistics:
    """:func:`evaluation_statistics` from per-query values alone, without an :class:`~agentmemory.evaluation.runner.Evaluation`.

    ``values[system][query_id][measure]`` is one system's value on one query
    (a system's ``per_query`` metrics); ``labels`` maps each system's name to
    its label, in the order the systems are compared (the first is the
    default baseline); ``queries`` are the judged queries as ``(query_id,
    group)`` in collection order; those whose group is in
    ``excluded_groups`` are left out of the headline (they still get their
    group's intervals).  ``measures`` are the measures' text forms, in
    order.  Everything else is :func:`evaluation_statistics`' (which calls
    this with the evaluation's values), so the same values give the same
    record, bit for bit, however they were computed.  ``pairs=False`` leaves
    out the comparisons of every pair of systems (``comparisons`` then holds
    an empty tuple per measure) and keeps the comparison table's tests
    against the baseline: with ``n`` systems there are ``n (n - 1) / 2`` pairs
    but only ``n - 1`` comparisons with the baseline.

    Raises:
        ParameterError: as :func:`evaluation_statistics`.
        UnknownNameError: ``baseline`` names no system.
    """
    seed = check_seed(seed)
    chosen = list(measures)
    names = list(labels)
    base = _baseline_of(labels, baseline)
    headline = [qid for qid, group in queries if group not in excluded_groups]

    def intervals_over(query_ids: list[str]) -> dict[str, dict[str, Interval | None]]:
        # bootstrap_ci of each system's values on each measure, computed together (shared draws).
        keys = [(name, m) for name in names for m in chosen]
        if not query_ids:
            return {name: {m: None for m in chosen} for name in names}
        series = [_values("values", [float(values[name][qid][m]) for qid in query_ids]) for name, m in keys]
        computed = _bootstrap_cis(series, seed=seed, confidence=confidence, n_resamples=n_resamples)
        found = dict(zip(keys, computed))
        return {name: {m: found[name, m] for m in chosen} for name in names}

    def column(name: str, m: str) -> list[float]:
        return [float(values[name][qid][m]) for qid in headline]

    excluded = tuple(excluded_groups)
    groups: dict[str, GroupStatistics] = {}
    for group in sorted({g for _, g in queries if g is not None}):
        members = [qid for qid, g in queries if g == group]
        groups[group] = GroupStatistics(group, len(members), group not in excluded, intervals_over(members))

    all_pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    compared = all_pairs if pairs and headline else []
    against_base = [(name, m) for name in names if name != base and headline for m in chosen]
    # Every paired test (each pair on each measure, then each system against the baseline), computed
    # together: they share their random draws.
    requests = [(column(a, m), column(b, m)) for m in chosen for a, b in compared]
    requests += [(column(name, m), column(base, m)) for name, m in against_base]
    checked = [(_values("a", ours), _values("b", theirs)) for ours, theirs in requests]
    # The headline intervals too: they resample the same queries, so they share the tests' draws.
    keys = [(name, m) for name in names for m in chosen] if headline else []
    series = [_values("values", column(name, m)) for name, m in keys]
    tests_made, intervals_made = _paired_tests(
        checked,
        seed=seed,
        n_resamples=n_resamples,
        alternative="two-sided",
        confidence=confidence,
        samples=series,
    )
    all_tests = iter(tests_made)
    found = dict(zip(keys, intervals_made))
    headline_intervals = {name: {m: found.get((name, m)) for m in chosen} for name in names}
    comparisons: dict[str, tuple[Comparison, ...]] = {}
    for m in chosen:
        tests = {f"{a} vs {b}": next(all_tests) for a, b in compared}
        adjusted = holm({key: t.p_value for key, t in tests.items()})
        comparisons[m] = tuple(
            Comparison(
                a,
                b,
                test,
                adjusted[key],
                describe_comparison(
                    test,
                    name_a=labels[a],
                    name_b=labels[b],
                    measure=m,
                    alpha=alpha,
                    adjusted_p=adjusted[key] if len(all_pairs) > 1 else None,
                ),
            )
            for (a, b), (key, test) in zip(compared, tests.items())
        )
    table: list[tuple[str, str, PairedTest, int, int]] = []
    for (name, m), (ours, theirs) in zip(against_base, requests[len(requests) - len(against_base) :]):
        test = next(all_tests)
        above = sum(1 for x, y in zip(ours, theirs) if x > y)
        below = sum(1 for x, y in zip(ours, theirs) if x < y)
        table.append((name, m, test, above, below))
    adjusted_table = holm({f"{name} {m}": t.p_value for name, m, t, _, _ in table})
    return Statistics(
        seed=seed,
        confidence=confidence,
        n_resamples=n_resamples,
        alpha=alpha,
        queries=len(headline),
        excluded_groups=excluded,
        measures=tuple(chosen),
        intervals=headline_intervals,
        groups=groups,
        comparisons=comparisons,
        baseline=base,
        versus_baseline=tuple(
            BaselineComparison(name, m, t, adjusted_table[f"{name} {m}"], up, down) for name, m, t, up, down in table
        ),
    )


def _baseline_of(labels: Mapping[str, str], baseline: str | None) -> str:
    """The name of the baseline system: ``baseline`` (a name or a label), default the first system."""
    if not labels:
        return ""
    if baseline is None:
        return next(iter(labels))
    for name, label in labels.items():
        if baseline in (name, label):
            return name
    raise UnknownNameError("baseline", baseline, list(labels))
