"""The records of the statistics: :class:`Interval`, :class:`PairedTest`, :class:`Comparison`,
:class:`BaselineComparison`, :class:`GroupStatistics` and :class:`Statistics` (frozen; ``to_dict``/``from_dict``
give and read back the artifact's JSON form), and :data:`METHOD`, what they are computed with, in words.

The procedures that make them live in :mod:`agentmemory.analysis.significance` (intervals, paired tests,
Holm) and :mod:`agentmemory.analysis.statistics` (all of it for an evaluation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from types import MappingProxyType
from typing import Any

__all__ = [
    "METHOD",
    "BaselineComparison",
    "Comparison",
    "GroupStatistics",
    "Interval",
    "PairedTest",
    "Statistics",
]


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean and its bootstrap confidence interval.

    Attributes:
        low, high: the interval's ends.
        mean: the sample mean (:func:`math.fsum` / n).
        n: number of values (queries; for a measure that may have no value on
            a query, ``tokens@first``, the queries with one, which may be
            fewer than the queries counted).
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
        n: number of pairs (queries; for a measure that may have no value on a
            query, the queries where both systems have one).
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
        shared: ``(system's mean, baseline's mean)`` over the ``test.n`` headline queries where both have a
            value, when these are fewer than the queries where the system or the baseline has one (a measure
            that may have no value on a query, ``tokens@first``): the means the test compares, which the table
            shows beside the system's own mean (over its own queries); ``None`` when both have a value on the
            same queries (their own means are then these).
    """

    system: str
    measure: str
    test: PairedTest
    p_holm_table: float
    above: int
    below: int
    shared: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"system", "measure", <the test's fields>, "p_holm_table", "above", "below"}``, then, only when
        :attr:`shared` is set, ``"shared_means": {"system": ..., "baseline": ...}``."""
        out = {
            "system": self.system,
            "measure": self.measure,
            **self.test.to_dict(),
            "p_holm_table": self.p_holm_table,
            "above": self.above,
            "below": self.below,
        }
        if self.shared is not None:
            out["shared_means"] = {"system": self.shared[0], "baseline": self.shared[1]}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselineComparison:
        """The comparison :meth:`to_dict` gave."""
        shared = data.get("shared_means")
        return cls(
            data["system"],
            data["measure"],
            PairedTest.from_dict(data),
            data["p_holm_table"],
            data["above"],
            data["below"],
            None if shared is None else (shared["system"], shared["baseline"]),
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
            measure of ``table_measures`` (systems, then measures, in order).
        table_measures: the comparison table's columns, each measure once
            (``RR`` and ``RR@k`` are one in an evaluation at ``k``); empty
            (a record made without them) means every measure.

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
    table_measures: tuple[str, ...] = ()

    @property
    def shown_measures(self) -> tuple[str, ...]:
        """The comparison table's columns: :attr:`table_measures`, or every measure when it is empty."""
        return self.table_measures or self.measures

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
            "table_measures": list(self.shown_measures),
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
            table_measures=tuple(data.get("table_measures", ())),
        )
