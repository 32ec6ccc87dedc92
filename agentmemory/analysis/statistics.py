"""Honest statistics over per-query values: bootstrap intervals, paired permutation tests, Holm.

The unit of resampling is the **query**: a mean over five queries is an
estimate from five observations, however many entries the store holds.
Every function that resamples takes a ``seed`` and builds
``numpy.random.default_rng(seed)`` afresh, so the same inputs and seed give
the same numbers, bit for bit, on the same numpy and scipy versions.  scipy
(a core dependency) is imported inside the functions that need it, so
``import agentmemory`` does not load it; the bootstrap and the random sign
flips do scipy's arithmetic on scipy's draws with NumPy alone (see
``agentmemory.analysis._resampling``), so an evaluation need not load it either.

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

Where each part lives: the records in :mod:`agentmemory.analysis.summaries`,
the intervals, paired tests and Holm in :mod:`agentmemory.analysis.significance`
(on the private engine :mod:`agentmemory.analysis._resampling`), the
sentences in :mod:`agentmemory.analysis.prose`.  This module makes the
record for an evaluation and exports every public name of those modules, so
``from agentmemory.analysis.statistics import holm`` keeps working.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentmemory.analysis.prose import comparisons_preface, describe_comparison, format_p, marker_limit
from agentmemory.analysis.significance import (
    _bootstrap_cis,
    _paired_tests,
    _values,
    bootstrap_ci,
    holm,
    paired_permutation_test,
    resamples_for_marker,
    smallest_p_value,
)
from agentmemory.analysis.summaries import (
    METHOD,
    BaselineComparison,
    Comparison,
    GroupStatistics,
    Interval,
    PairedTest,
    Statistics,
)
from agentmemory.errors import UnknownNameError, check_seed
from agentmemory.metrics import Measure, distinct_measures, parse_measures

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
    "marker_limit",
    "paired_permutation_test",
    "per_query_statistics",
    "resamples_for_marker",
    "smallest_p_value",
]


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
    table: Iterable[Measure | str] | str | None = None,
    table_name: str = "table",
    progress: bool = False,
    pairs: bool = True,
) -> Statistics:
    """Intervals and pairwise tests for an :class:`~agentmemory.evaluation.runner.Evaluation`, as a :class:`Statistics`.

    * ``intervals[retriever][measure]``: :func:`bootstrap_ci` of the per-query
      values over the headline queries (the queries the evaluation scored,
      ``collection.headline_queries`` unless answer files add the questions
      left out of retrieval scoring, except those whose group is in the
      collection's ``headline_excludes``, listed in ``excluded_groups``;
      ``queries`` counts them).
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
      name or label; default the first system) on every measure of the
      comparison table (``table_measures``): the paired test of ``system -
      baseline`` over the headline queries, Holm's adjustment across all of
      these comparisons together (``p_holm_table``: the family is the whole
      comparison table), and the number of queries above and below the
      baseline.
    * ``table_measures``: the comparison table's columns: ``table`` (text
      ``"P@5,R@5,nDCG@5"`` or measures, among the evaluation's; default all
      of ``measures``), each measure once
      (:func:`~agentmemory.metrics.distinct_measures`: ``RR`` and
      ``RR@k`` are one measure in an evaluation at ``k``, shown and counted as
      ``RR@k``).  Every other field keeps every measure.

    An interval over no query is ``None`` (and there are no comparisons).
    A measure that may have no value on a query (``MeasureDef.undefined_when``:
    ``tokens@first``) is averaged over the queries with one, its interval's
    ``n`` counting them; its tests and counts are over the queries where both
    systems have one (see :func:`per_query_statistics`).
    ``progress`` shows a tqdm bar (on stderr) over the query groups and the headline, one step each.
    ``pairs=False`` leaves ``comparisons`` empty and keeps the tests against the baseline (a grid of many
    settings: :func:`per_query_statistics`).

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
        UnknownNameError: a measure (of ``measures`` or ``table``, which
            messages call ``table_name``) the evaluation did not compute.
    """
    seed = check_seed(seed)
    chosen = _chosen_measures(evaluation, measures)
    shown = chosen if table is None else [str(m) for m in parse_measures(table, name=table_name)]
    for text in shown:
        if text not in chosen:
            raise UnknownNameError(table_name, text, chosen)
    collection = evaluation.collection
    return per_query_statistics(
        {res.name: {q.query_id: q.metrics for q in res.per_query} for res in evaluation.results},
        labels={res.name: res.label for res in evaluation.results},
        queries=[(q.query_id, q.group) for q in evaluation.results[0].per_query],
        excluded_groups=collection.headline_excludes,
        measures=chosen,
        seed=seed,
        confidence=confidence,
        n_resamples=n_resamples,
        alpha=alpha,
        baseline=baseline,
        table_measures=distinct_measures(shown, evaluation.k),
        progress=progress,
        pairs=pairs,
    )


def per_query_statistics(
    values: Mapping[str, Mapping[str, Mapping[str, float | None]]],
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
    table_measures: Sequence[str] | None = None,
    progress: bool = False,
) -> Statistics:
    """:func:`evaluation_statistics` from per-query values alone, without an :class:`~agentmemory.evaluation.runner.Evaluation`.

    ``values[system][query_id][measure]`` is one system's value on one query
    (a system's ``per_query`` metrics), ``None`` where the measure has no
    value on that query (``tokens@first`` without a relevant hit: the
    interval is over the queries with one, its ``n`` counting them, and the
    paired tests and the counts above and below the baseline over the queries
    where both systems have one; a measure with no value anywhere has no
    interval, and a comparison with no such query no test); ``labels`` maps each system's name to
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
    but only ``n - 1`` comparisons with the baseline.  ``table_measures`` are
    the comparison table's columns, among ``measures`` (default all of them,
    as given: the caller drops what is one measure under two names,
    :func:`~agentmemory.metrics.distinct_measures`); the tests against
    the baseline and their Holm family cover them only.

    Raises:
        ParameterError: as :func:`evaluation_statistics`.
        UnknownNameError: ``baseline`` names no system.
    """
    seed = check_seed(seed)
    how = _Resampling(seed, confidence, n_resamples)
    table = _Values(values, list(labels), list(measures))
    base = _baseline_of(labels, baseline)
    headline = [qid for qid, group in queries if group not in excluded_groups]
    excluded = tuple(excluded_groups)
    bar = _Steps(progress, len({g for _, g in queries if g is not None}) + 1)
    groups = _group_statistics(table, queries, excluded, how, bar)
    bar.next("headline intervals and paired tests")
    names = table.names
    all_pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    compared = all_pairs if pairs and headline else []
    shown = tuple(table.measures) if table_measures is None else _table_measures(table_measures, table.measures)
    against_base = [(name, m) for name in names if name != base and headline for m in shown]
    tests, headline_intervals = _headline_tests(table, headline, compared, against_base, base, how)
    bar.step()
    bar.close()
    # the pairs' tests come first in ``tests``, then those against the baseline
    comparisons = _pair_comparisons(compared, tests, table.measures, labels, alpha, several=len(all_pairs) > 1)
    versus_baseline = _baseline_comparisons(table, headline, against_base, base, tests)
    return Statistics(
        seed=seed,
        confidence=confidence,
        n_resamples=n_resamples,
        alpha=alpha,
        queries=len(headline),
        excluded_groups=excluded,
        measures=tuple(table.measures),
        intervals=headline_intervals,
        groups=groups,
        comparisons=comparisons,
        baseline=base,
        versus_baseline=versus_baseline,
        table_measures=shown,
    )


def _table_measures(shown: Sequence[str], measures: Sequence[str]) -> tuple[str, ...]:
    """``shown`` as a tuple, each among ``measures``.

    Raises:
        UnknownNameError: a measure of ``shown`` is not among ``measures``.
    """
    for m in shown:
        if m not in measures:
            raise UnknownNameError("table_measures", m, list(measures))
    return tuple(dict.fromkeys(shown))


@dataclass(frozen=True, slots=True)
class _Resampling:
    """How :func:`per_query_statistics` resamples (every procedure starts from ``default_rng(seed)``)."""

    seed: int
    confidence: float
    n_resamples: int


@dataclass(frozen=True, slots=True)
class _Values:
    """``values[system][query_id][measure]`` with the systems (``names``) and ``measures`` compared, in order.

    A value is ``None`` where the measure has none on that query (``tokens@first`` without a relevant hit):
    intervals are over the values present, paired tests over the queries where both systems have one.
    """

    values: Mapping[str, Mapping[str, Mapping[str, float | None]]]
    names: list[str]
    measures: list[str]

    def column(self, name: str, m: str, query_ids: Sequence[str]) -> list[float]:
        """System ``name``'s values on measure ``m`` over ``query_ids``, in order, those without a value left out."""
        found = (self.values[name][qid][m] for qid in query_ids)
        return [float(v) for v in found if v is not None]

    def pair(self, a: str, b: str, m: str, query_ids: Sequence[str]) -> tuple[list[float], list[float]]:
        """Systems ``a``'s and ``b``'s values on ``m`` over the ``query_ids`` where both have one, in order."""
        ours, theirs = self.values[a], self.values[b]
        both = [(ours[q][m], theirs[q][m]) for q in query_ids]
        kept = [(float(x), float(y)) for x, y in both if x is not None and y is not None]
        return [x for x, _ in kept], [y for _, y in kept]

    def keys(self) -> list[tuple[str, str]]:
        """Every (system, measure), systems first."""
        return [(name, m) for name in self.names for m in self.measures]


def _intervals_over(table: _Values, query_ids: list[str], how: _Resampling) -> dict[str, dict[str, Interval | None]]:
    """:func:`bootstrap_ci` of each system's values on each measure over ``query_ids`` (draws shared);
    ``None`` everywhere over no query."""
    if not query_ids:
        return {name: {m: None for m in table.measures} for name in table.names}
    columns = {(name, m): table.column(name, m, query_ids) for name, m in table.keys()}
    keys = [key for key, column in columns.items() if column]  # a measure with no value on any query: no interval
    series = [_values("values", columns[key]) for key in keys]
    computed = _bootstrap_cis(series, seed=how.seed, confidence=how.confidence, n_resamples=how.n_resamples)
    found = dict(zip(keys, computed))
    return {name: {m: found.get((name, m)) for m in table.measures} for name in table.names}


def _group_statistics(
    table: _Values,
    queries: Sequence[tuple[str, str | None]],
    excluded: tuple[str, ...],
    how: _Resampling,
    bar: _Steps,
) -> dict[str, GroupStatistics]:
    """Each query group's intervals, groups sorted (queries without a group left out, excluded groups kept);
    ``bar`` steps after each."""
    groups: dict[str, GroupStatistics] = {}
    for group in sorted({g for _, g in queries if g is not None}):
        bar.next(f"group {group}")
        members = [qid for qid, g in queries if g == group]
        groups[group] = GroupStatistics(
            group, len(members), group not in excluded, _intervals_over(table, members, how)
        )
        bar.step()
    return groups


class _Steps:
    """A tqdm bar of ``total`` steps on stderr when ``shown`` (the statistics phase of a long evaluation), else
    nothing at all."""

    def __init__(self, shown: bool, total: int) -> None:
        self._bar: Any = None
        if shown:
            from tqdm.auto import tqdm  # only for the bar

            self._bar = tqdm(total=total, desc="statistics", unit=" step")

    def next(self, what: str) -> None:
        """Say what is computed now (beside the bar)."""
        if self._bar is not None:
            self._bar.set_postfix_str(what, refresh=True)

    def step(self) -> None:
        if self._bar is not None:
            self._bar.update()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _headline_tests(
    table: _Values,
    headline: list[str],
    compared: list[tuple[str, str]],
    against_base: list[tuple[str, str]],
    base: str,
    how: _Resampling,
) -> tuple[Iterator[PairedTest | None], dict[str, dict[str, Interval | None]]]:
    """Every paired test over the headline queries and the headline intervals, computed together.

    The tests come in order: each pair of ``compared`` on each measure (measures outer), then each
    ``(system, measure)`` of ``against_base`` against the baseline; ``None`` for a comparison with no query
    where both systems have a value.  They and the intervals resample the same queries, so they share their
    random draws.
    """
    requests = [table.pair(a, b, m, headline) for m in table.measures for a, b in compared]
    requests += [table.pair(name, base, m, headline) for name, m in against_base]
    checked = [(_values("a", ours), _values("b", theirs)) for ours, theirs in requests if ours]
    columns = {key: table.column(*key, headline) for key in table.keys()} if headline else {}
    keys = [key for key, column in columns.items() if column]
    series = [_values("values", columns[key]) for key in keys]
    computed, intervals = _paired_tests(
        checked,
        seed=how.seed,
        n_resamples=how.n_resamples,
        alternative="two-sided",
        confidence=how.confidence,
        samples=series,
    )
    made = iter(computed)
    tests = [next(made) if ours else None for ours, _ in requests]
    found = dict(zip(keys, intervals))
    return iter(tests), {name: {m: found.get((name, m)) for m in table.measures} for name in table.names}


def _pair_comparisons(
    compared: list[tuple[str, str]],
    tests: Iterator[PairedTest | None],
    measures: list[str],
    labels: Mapping[str, str],
    alpha: float,
    *,
    several: bool,
) -> dict[str, tuple[Comparison, ...]]:
    """Each measure's pairs with their tests (taken from ``tests`` in order), Holm across the pairs of that
    measure, and :func:`describe_comparison`'s sentence (showing the Holm-adjusted p-value when ``several``).
    A pair without a test (no query where both have a value) is left out."""
    comparisons: dict[str, tuple[Comparison, ...]] = {}
    for m in measures:
        tested = [((a, b), f"{a} vs {b}", next(tests)) for a, b in compared]
        made = {key: test for _, key, test in tested if test is not None}
        adjusted = holm({key: t.p_value for key, t in made.items()})
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
                    adjusted_p=adjusted[key] if several else None,
                ),
            )
            for (a, b), key, test in tested
            if test is not None
        )
    return comparisons


def _baseline_comparisons(
    table: _Values,
    headline: list[str],
    against_base: list[tuple[str, str]],
    base: str,
    tests: Iterator[PairedTest | None],
) -> tuple[BaselineComparison, ...]:
    """Each ``(system, measure)`` against the baseline with its test (the rest of ``tests``), Holm across all
    of them together, and the number of headline queries above and below the baseline (over the queries
    where both have a value; a comparison with none is left out); when those are fewer than the queries where
    either has one, both systems' means over them (``BaselineComparison.shared``)."""
    rows: list[tuple[str, str, PairedTest, int, int, tuple[float, float] | None]] = []
    for name, m in against_base:
        test = next(tests)
        if test is None:
            continue
        ours, theirs = table.pair(name, base, m, headline)
        above = sum(1 for x, y in zip(ours, theirs) if x > y)
        below = sum(1 for x, y in zip(ours, theirs) if x < y)
        own = (len(table.column(name, m, headline)), len(table.column(base, m, headline)))
        same = own == (len(ours), len(ours))  # both have a value on the same queries: their means are the shown ones
        shared = None if same else (math.fsum(ours) / len(ours), math.fsum(theirs) / len(ours))
        rows.append((name, m, test, above, below, shared))
    adjusted = holm({f"{name} {m}": t.p_value for name, m, t, *_ in rows})
    return tuple(
        BaselineComparison(name, m, t, adjusted[f"{name} {m}"], up, down, shared)
        for name, m, t, up, down, shared in rows
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
