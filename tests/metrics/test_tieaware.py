"""Tie-aware measure values: closed forms checked by hand and against enumeration of every ordering."""

from __future__ import annotations

import itertools
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugins import restored

from agentmemory.collection import default_collection_path
from agentmemory.datasets.beir import load_collection
from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.evaluation.runner import evaluate
from agentmemory.metrics import REGISTRY, CutoffRule, Measure, MeasureDef, QueryContext, parse_measure, register_measure
from agentmemory.metrics.tieaware import (
    TieContext,
    TieReport,
    expected_hits,
    tie_aware_value,
    tie_groups,
    tie_report,
    tie_reports,
)

MEASURES = [
    "P@1",
    "P@3",
    "R@2",
    "R@4",
    "RR",
    "RR@2",
    "nDCG@1",
    "nDCG@3",
    "AP@2",
    "AP@5",
    "Success@1",
    "Success@3",
    "Rprec",
]


def orderings(scores):
    """Every ranking consistent with ``scores``: each tie group in every order (the oracle)."""
    groups = tie_groups(scores)
    for parts in itertools.product(*(itertools.permutations(g.entry_ids) for g in groups)):
        yield [doc for part in parts for doc in part]


def brute_force(measure, scores, qrels, depth=None):
    """(mean, min, max) of ``measure`` over every ordering, by enumeration."""
    m = parse_measure(measure) if isinstance(measure, str) else measure
    values = [m.compute(r if depth is None else r[:depth], qrels) for r in orderings(scores)]
    return math.fsum(values) / len(values), min(values), max(values)


@st.composite
def cases(draw):
    """Small queries: up to 6 scored entries with scores from {1, 2, 3} (many ties), graded qrels
    that may judge unretrieved entries, a measure and a depth."""
    n = draw(st.integers(0, 6))
    ids = [f"d{i}" for i in range(n)]
    scores = {d: float(draw(st.sampled_from([1, 2, 3]))) for d in ids}
    judged = ids + ["u0", "u1"]
    qrels = {d: draw(st.integers(-1, 3)) for d in judged if draw(st.booleans())}
    measure = draw(st.sampled_from(MEASURES))
    depth = draw(st.one_of(st.none(), st.integers(1, 7)))
    return scores, qrels, measure, depth


@settings(max_examples=300, deadline=None)
@given(cases())
def test_expected_value_equals_enumeration(case):
    """tie_aware_value equals the mean over every ordering of tied entries, for every measure and depth."""
    scores, qrels, measure, depth = case
    expected, _, _ = brute_force(measure, scores, qrels, depth)
    assert tie_aware_value(measure, scores, qrels, depth=depth) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_report_range_equals_enumeration(case):
    """tie_report's minimum and maximum are the worst and best values over every ordering, and bracket the rest."""
    scores, qrels, measure, depth = case
    k = depth or 3
    report = tie_report(measure, scores, qrels, k)
    mean, low, high = brute_force(measure, scores, qrels, k)
    assert report.minimum == pytest.approx(low, abs=1e-12)
    assert report.maximum == pytest.approx(high, abs=1e-12)
    assert report.expected == pytest.approx(mean, rel=1e-12, abs=1e-12)
    assert report.minimum - 1e-12 <= report.value_under_rule <= report.maximum + 1e-12


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 1000).map(float)), st.data())
def test_without_ties_expected_equals_value(scores, data):
    """With distinct scores there is one ordering: the expected value is the ordinary value under the rule."""
    scores = {d: s + i / 10_000 for i, (d, s) in enumerate(sorted(scores.items()))}
    qrels = {d: data.draw(st.integers(0, 2)) for d in "abcdefgh"}
    measure = data.draw(st.sampled_from(MEASURES))
    report = tie_report(measure, scores, qrels, 8)
    assert report.expected == pytest.approx(report.value_under_rule, abs=1e-12)
    assert report.minimum == pytest.approx(report.maximum, abs=1e-12)


# One group of three tied entries at ranks 2..4 ('c' relevant), 'a' above it, 'e' below it.
HAND_SCORES = {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.5}
HAND_QRELS = {"c": 1, "x": 1}  # 'x' is relevant but never retrieved: R = 2


@pytest.mark.parametrize(
    "measure,expected",
    [
        ("P@2", (1 / 3) / 2),  # rank 2 holds c with probability 1/3
        ("R@2", (1 / 3) / 2),
        ("Success@2", 1 / 3),
        ("RR", (1 / 2 + 1 / 3 + 1 / 4) / 3),  # c at rank 2, 3 or 4, each with probability 1/3
        ("RR@2", (1 / 2) / 3),
        ("RR@3", (1 / 2 + 1 / 3) / 3),
        ("AP@4", ((1 / 2 + 1 / 3 + 1 / 4) / 3) / 2),
        ("nDCG@2", ((1 / 3) / math.log2(3)) / (1 + 1 / math.log2(3))),
        ("P@5", 1 / 5),  # the whole group is inside the top 5: no uncertainty
        ("Rprec", (1 / 3) / 2),  # cutoff R = 2
    ],
)
def test_hand_examples(measure, expected):
    """Hand-computed expectations for one tie group straddling rank 2."""
    assert tie_aware_value(measure, HAND_SCORES, HAND_QRELS) == pytest.approx(expected, rel=1e-12)


def test_hand_report():
    """The tie rule puts 'd' (id descending) at rank 2, so P@2 is 0 under it, 1/2 at best, 1/6 expected."""
    report = tie_report("P@2", HAND_SCORES, HAND_QRELS, 2)
    assert report == TieReport(
        value_under_rule=0.0,
        expected=pytest.approx(1 / 6),
        minimum=0.0,
        maximum=0.5,
        straddles_cutoff=True,
        group_size=3,
        group_in_top_k=1,
    )


def test_report_without_cutoff_group():
    """Fewer scored entries than k: no group holds rank k, nothing straddles, and the range is a point."""
    report = tie_report("P@5", {"a": 1.0, "b": 1.0}, {"a": 1}, 5)
    assert (report.straddles_cutoff, report.group_size, report.group_in_top_k) == (False, 0, 0)
    assert report.value_under_rule == report.expected == report.minimum == report.maximum == 0.2


def test_report_group_ending_at_cutoff_does_not_straddle():
    """A tie group that ends exactly at rank k is wholly inside the top k."""
    report = tie_report("R@2", {"a": 1.0, "b": 1.0, "c": 0.5}, {"c": 1}, 2)
    assert (report.straddles_cutoff, report.group_size, report.group_in_top_k) == (False, 2, 2)


def test_report_counts_ties_inside_the_top_k():
    """RR moves with a tie group wholly inside the top k, though no group straddles the cutoff."""
    report = tie_report("RR", {"a": 1.0, "b": 1.0}, {"a": 1}, 2)
    assert not report.straddles_cutoff
    assert (report.value_under_rule, report.minimum, report.maximum) == (1.0 / 2, 1.0 / 2, 1.0)
    assert report.expected == pytest.approx(0.75)


def test_depth_cuts_uncut_rr():
    """RR with depth k looks only at the top k, like a run of depth k."""
    scores = {"a": 3.0, "b": 2.0, "c": 1.0}
    assert tie_aware_value("RR", scores, {"c": 1}) == pytest.approx(1 / 3)
    assert tie_aware_value("RR", scores, {"c": 1}, depth=2) == 0.0


def test_accepts_measure_values():
    """A Measure value and its text give the same result."""
    assert tie_aware_value(Measure("nDCG", 3), HAND_SCORES, HAND_QRELS) == tie_aware_value(
        "nDCG@3", HAND_SCORES, HAND_QRELS
    )


def test_large_group_is_fast_and_exact():
    """A 2,000-entry tie group with 3 relevant: P@10 = 3 * 10 / 2000 / 10 without enumerating orderings."""
    scores = {f"d{i:04d}": 1.0 for i in range(2000)}
    qrels = {"d0000": 1, "d0001": 1, "d0002": 1}
    assert tie_aware_value("P@10", scores, qrels) == pytest.approx(3 / 2000)
    assert 0.0 < tie_aware_value("AP@100", scores, qrels) < 0.05


def test_nan_score_rejected():
    """A NaN score cannot be ranked."""
    with pytest.raises(ParameterError, match="NaN"):
        tie_aware_value("P@1", {"a": float("nan")}, {})


def test_bad_depth_and_measure_rejected():
    """depth must be an integer >= 1; the measure must be registered."""
    with pytest.raises(ParameterError, match=r"^depth: 0 \(int\) is less than 1"):
        tie_aware_value("P@1", {"a": 1.0}, {}, depth=0)
    with pytest.raises(UnknownNameError, match="choose from:"):
        tie_aware_value("MAPX@1", {"a": 1.0}, {})


def test_evaluate_tie_reports_match_its_own_values():
    """On the shipped fixture, evaluate(ties=True) stores per query and measure a report whose
    value under the rule is exactly the reported metric, and whose flag matches tie_at_cutoff."""
    evaluation = evaluate(load_collection(default_collection_path()), k=5)
    for result in evaluation.results:
        for query in result.per_query:
            assert set(query.ties) == set(query.metrics)
            for measure, value in query.metrics.items():
                assert query.ties[measure].value_under_rule == value
                assert query.ties[measure].straddles_cutoff == query.tie_at_cutoff
        for measure, value in result.means.items():
            assert result.tie_means()[measure]["value_under_rule"] == pytest.approx(value)


# --- measures registered at run time ------------------------------------------


def _hits(query: QueryContext) -> float:
    """Hits@k: relevant entries in the top k."""
    return float(sum(1 for doc in query.ranking[: query.k] if query.qrels.get(doc, 0) >= 1))


def _expected_hits(ties: TieContext) -> float:
    """E[Hits@k] = H(c), c = min(k, D)."""
    return expected_hits(ties, ties.cut)


@pytest.fixture
def registry_restored():
    """The measure registry exactly as before the test."""
    with restored(REGISTRY):
        yield


def test_measure_without_formula_has_no_tie_report(registry_restored):
    """tie_report gives None (and raises nothing) for a measure registered without a tie-aware formula."""
    register_measure(MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant in the top k (P_k times k)"))
    assert tie_report("Hits@2", HAND_SCORES, HAND_QRELS, 2) is None
    assert tie_report(Measure("Hits", 2), HAND_SCORES, HAND_QRELS, 2) is None


def test_measure_without_formula_has_no_tie_aware_value(registry_restored):
    """tie_aware_value says the measure has no tie-aware formula and lists the measures with one."""
    register_measure(MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant in the top k (P_k times k)"))
    having = sorted(d.name for d in REGISTRY.registered().values() if d.tie_aware is not None)
    assert "Hits" not in having and "P" in having
    message = (
        "measure: 'Hits@2' (str) has no tie-aware formula; "
        f"its MeasureDef sets no tie_aware; the measures with one are: {', '.join(having)}"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        tie_aware_value("Hits@2", HAND_SCORES, HAND_QRELS)


@settings(max_examples=100, deadline=None)
@given(cases())
def test_runtime_formula_is_used(case):
    """A measure registered with a tie-aware formula gets reports from it: here E[Hits@k] = H(c), which
    equals the mean over every ordering; its range is the worst and best ordering."""
    scores, qrels, _, depth = case
    k = depth or 3
    with restored(REGISTRY):
        register_measure(
            MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant in the top k", tie_aware=_expected_hits)
        )
        report = tie_report("Hits@2", scores, qrels, k)
        mean, low, high = brute_force(Measure("Hits", 2), scores, qrels, k)
    assert report is not None
    assert report.expected == pytest.approx(mean, rel=1e-12, abs=1e-12)
    assert (report.minimum, report.maximum) == (low, high)


def test_tie_context_fields():
    """TieContext counts the relevant entries per group and judged in all, and cuts at min(k, depth)."""
    groups = tie_groups(HAND_SCORES)
    ties = TieContext(groups, HAND_QRELS, 2, 5)
    assert [g.entry_ids for g in groups] == [("a",), ("d", "c", "b"), ("e",)]
    assert ties.relevant == (0, 1, 0)
    assert ties.num_rel == 2
    assert ties.cut == 2
    assert TieContext(groups, HAND_QRELS, None, 4).cut == 4
    assert TieContext(groups, HAND_QRELS, 9, 4).cut == 4
    assert expected_hits(ties, 2) == 1 / 3
    assert [g.ranks_within(2) for g in groups] == [1, 1, 0]


def test_scope_ids_reach_the_tie_aware_formula(registry_restored):
    """tie_aware_value and tie_report pass scope_ids on, as a set, to the formula and the per-query function."""
    seen = []

    def formula(ties: TieContext) -> float:
        seen.append(ties.scope_ids)
        return 0.0

    def per_query(query: QueryContext) -> float:
        seen.append(query.scope_ids)
        return 0.0

    register_measure(MeasureDef("Seen", per_query, CutoffRule.FORBIDDEN, "records its scope", tie_aware=formula))
    tie_aware_value("Seen", HAND_SCORES, HAND_QRELS, scope_ids=["a", "b"])
    tie_report("Seen", HAND_SCORES, HAND_QRELS, 2, scope_ids=("a", "b"))
    assert seen == [frozenset({"a", "b"})] * 5  # value; rule, expected, worst, best


def _reference_report(measure, scores, qrels, k):
    """tie_report as one measure alone computes it: groups, rankings and expectation from the public functions."""
    m = parse_measure(measure)
    groups = tie_groups(scores)

    def extreme(best):
        out = []
        for g in groups:
            key = [max(qrels.get(e, 0), 0) for e in g.entry_ids]
            out.extend(g.entry_ids[i] for i in sorted(range(g.size), key=lambda i: -key[i] if best else key[i]))
        return out[:k]

    size = inside = 0
    for g in groups:
        if g.offset < k <= g.offset + g.size:
            size, inside = g.size, k - g.offset
            break
    return TieReport(
        value_under_rule=m.compute([e for g in groups for e in g.entry_ids][:k], qrels),
        expected=tie_aware_value(m, scores, qrels, depth=k),
        minimum=m.compute(extreme(False), qrels),
        maximum=m.compute(extreme(True), qrels),
        straddles_cutoff=inside < size,
        group_size=size,
        group_in_top_k=inside,
    )


@settings(max_examples=300, deadline=None)
@given(cases(), st.integers(1, 8))
def test_tie_reports_share_work_but_equal_each_measure_alone(case, k):
    """tie_reports (one basis for every measure of a query) gives each measure's report exactly, ties included."""
    scores, qrels, _, _ = case
    reports = tie_reports(MEASURES, scores, qrels, k)
    assert list(reports) == MEASURES
    for measure in MEASURES:
        assert reports[measure] == _reference_report(measure, scores, qrels, k), measure
        assert tie_report(measure, scores, qrels, k) == reports[measure], measure


@settings(max_examples=200, deadline=None)
@given(cases(), st.integers(1, 6))
def test_values_already_computed_on_the_rules_ranking_give_the_same_reports(case, k):
    """tie_reports(computed=(ranking, values)): taken when ranking is the rule's top k, ignored otherwise; the
    reports are those computed from scratch either way."""
    scores, qrels, _, _ = case
    measures = [parse_measure(m) for m in MEASURES] + [Measure("P", k)]
    alone = tie_reports(measures, scores, qrels, k)
    rule = [doc for g in tie_groups(scores) for doc in g.entry_ids][:k]
    values = {str(m): m.compute(rule, qrels) for m in measures}
    assert tie_reports(measures, scores, qrels, k, computed=(rule, values)) == alone
    wrong = {name: -1.0 for name in values}  # on another ranking: never read
    assert tie_reports(measures, scores, qrels, k, computed=(list(reversed(rule)) + ["x"], wrong)) == alone
    taken = tie_reports(measures, scores, qrels, k, computed=(rule, wrong))
    assert {r.value_under_rule for r in taken.values() if r is not None} == {-1.0}  # read, not recomputed


@given(cases(), st.one_of(st.none(), st.integers(1, 6)))
def test_a_context_at_another_cutoff_equals_one_made_for_it(case, k):
    """TieContext.at(k) keeps the groups' counts and is the context built for cutoff k."""
    scores, qrels, _, depth = case
    groups = tie_groups(scores)
    made = TieContext(groups, qrels, 3, depth or len(scores))
    assert made.at(k) == TieContext(groups, qrels, k, depth or len(scores))
    assert made.at(k).relevant == made.relevant and made.at(3) == made
