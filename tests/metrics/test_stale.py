"""stale@k (agentmemory.metrics.stale) and a measure's declared direction in the comparison table."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.analysis.comparison_table import systems_table
from agentmemory.analysis.statistics import per_query_statistics
from agentmemory.analysis.text_tables import column_name, lower_is_better
from agentmemory.datasets.beam import load_beam
from agentmemory.errors import ParameterError
from agentmemory.evaluation.runner import evaluate
from agentmemory.files.trec import trec_order
from agentmemory.metrics import CutoffRule, MeasureDef, parse_measure
from agentmemory.metrics.scoring import score_run
from agentmemory.metrics.stale import expected_stale, stale_sides
from agentmemory.metrics.tieaware import tie_aware_value, tie_groups, tie_report
from agentmemory.records import Query

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "beam-sample"
KU = Query("ku", "what is my budget?", metadata={"original_info": ("o1", "o2"), "updated_info": ("u1",)})
QRELS = {"u1": 1}


def _stale(ranking, k, query=KU):
    return parse_measure(f"stale@{k}").compute(ranking, QRELS, query=query)


@pytest.mark.parametrize(
    ("ranking", "k", "expected"),
    [
        (["x", "o1", "u1"], 3, 1.0),  # the original ranks above the update
        (["u1", "o1"], 2, 0.0),  # the update first
        (["x", "o2"], 2, 1.0),  # an original in the top k, no update there
        (["x", "y", "o1"], 2, 0.0),  # the original below the cutoff
        (["x", "u1", "o1"], 3, 0.0),
        (["o2", "u1", "o1"], 1, 1.0),
        ([], 5, 0.0),
        (["a", "b"], 5, 0.0),  # neither side retrieved
    ],
)
def test_stale_by_hand(ranking, k, expected):
    """stale@k is 1 when the first original-or-updated entry in the top k is an original one."""
    assert _stale(ranking, k) == expected


def test_stale_without_both_sides_has_no_value():
    """A query that is not a knowledge update, or one with an empty side, has no value: it is left out of the
    share rather than counted as a 0 that would dilute it."""
    plain = Query("q", "x")
    assert _stale(["o1"], 5, plain) is None
    no_update = Query("q", "x", metadata={"original_info": ("o1",), "updated_info": ()})
    assert _stale(["o1"], 5, no_update) is None
    overlap = Query("q", "x", metadata={"original_info": ("u1",), "updated_info": ("u1",)})
    assert stale_sides(overlap) == (frozenset(), frozenset({"u1"}))
    assert _stale(["u1"], 5, overlap) is None
    assert parse_measure("stale@5").definition.undefined_when


def test_stale_ignores_judgments():
    """The value reads the metadata, not the grades: fresh and both judgments give the same stale@k."""
    m = parse_measure("stale@3")
    assert m.compute(["o1", "u1"], {"u1": 1}, query=KU) == m.compute(["o1", "u1"], {"o1": 1, "u1": 1}, query=KU) == 1.0


def test_stale_needs_the_query():
    """Without the query (a run against qrels alone) stale@k says what it needs and how to get it."""
    message = (
        "stale@k: None (NoneType) needs the query (its metadata's original_info and updated_info ids), which a run "
        "scored against qrels alone does not have; evaluate a collection that carries them (agentmemory eval "
        "--format beam)"
    )
    with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
        parse_measure("stale@5").compute(["o1"], QRELS)
    with pytest.raises(ParameterError, match=re.escape("needs the query")):
        score_run({"q": {"o1": 1.0}}, {"q": {"u1": 1}}, ["stale@5"])


def test_stale_definition():
    """stale takes a cutoff, is lower-is-better and has a tie-aware formula; other measures are higher-is-better."""
    d = parse_measure("stale@10").definition
    assert d.cutoff is CutoffRule.REQUIRED
    assert d.direction == "lower"
    assert d.tie_aware is expected_stale
    assert parse_measure("R@10").definition.direction == "higher"
    assert parse_measure("recall_any@10").definition.direction == "higher"
    with pytest.raises(
        ParameterError, match=re.escape("direction: 'down' (str) is not a direction; give 'higher' or 'lower'")
    ):
        MeasureDef("mine", lambda q: 0.0, CutoffRule.REQUIRED, "mine", direction="down")


def _enumerated(scores, k, query):
    """stale@k averaged over every ordering of every tie group (exact, as a fraction)."""
    groups = tie_groups(scores)
    total, count = Fraction(0), 0
    for orders in itertools.product(*(itertools.permutations(g.entry_ids) for g in groups)):
        ranking = [e for order in orders for e in order]
        total += Fraction(parse_measure(f"stale@{k}").compute(ranking, QRELS, query=query))
        count += 1
    return total / count


@pytest.mark.parametrize(
    ("scores", "k", "by_hand"),
    [
        # three tied, o and u among them, all within k: the first of {o1, u1} is o1 half the time
        ({"o1": 1.0, "u1": 1.0, "x": 1.0}, 3, Fraction(1, 2)),
        # same group, k = 1: 1/2 * (1 - C(1, 1) / C(3, 1)) = 1/2 * 2/3
        ({"o1": 1.0, "u1": 1.0, "x": 1.0}, 1, Fraction(1, 3)),
        # two originals and the update tied, k = 2: 2/3 * (1 - C(1, 2)/C(4, 2)) = 2/3
        ({"o1": 2.0, "o2": 2.0, "u1": 2.0, "x": 2.0}, 2, Fraction(2, 3)),
        # group of 4 holding o1 and u1 straddling k: 1/2 * (1 - C(2, 1) / C(4, 1)) = 1/4
        ({"a": 3.0, "o1": 1.0, "u1": 1.0, "x": 1.0, "y": 1.0}, 2, Fraction(1, 4)),
        # the update alone above, ties below do not matter
        ({"u1": 3.0, "o1": 1.0, "x": 1.0}, 3, Fraction(0)),
        # the original alone above
        ({"o2": 3.0, "u1": 1.0, "x": 1.0}, 1, Fraction(1)),
        # nothing marked in the top k
        ({"a": 3.0, "b": 3.0, "o1": 1.0}, 2, Fraction(0)),
    ],
)
def test_tie_aware_stale_by_hand_and_by_enumeration(scores, k, by_hand):
    """The closed form equals a hand computation and the mean over every ordering of the ties."""
    assert _enumerated(scores, k, KU) == by_hand
    assert tie_aware_value(f"stale@{k}", scores, QRELS, query=KU) == pytest.approx(float(by_hand), abs=1e-12)


def test_tie_aware_stale_at_a_depth_and_in_tie_reports():
    """At a run's depth the cut is min(k, D); the tie report's expectation is the closed form at depth k."""
    scores = {"a": 3.0, "o1": 1.0, "u1": 1.0, "x": 1.0, "y": 1.0}
    assert tie_aware_value("stale@5", scores, QRELS, depth=2, query=KU) == pytest.approx(0.25)
    report = tie_report("stale@2", scores, QRELS, 2, query=KU)
    assert report is not None
    assert report.expected == pytest.approx(0.25)
    assert report.value_under_rule == parse_measure("stale@2").compute(trec_order(scores)[:2], QRELS, query=KU)
    assert report.straddles_cutoff


def test_stale_through_an_evaluation():
    """In an evaluation stale@k sees each query: the knowledge updates of the sample by hand, others 0."""
    collection = load_beam(SAMPLE)
    run = {
        "1/knowledge_update/0": ["1/0", "1/12"],  # the old budget first: stale
        "2/knowledge_update/0": ["2/4", "2/0"],  # the update first: fresh
        "2/knowledge_update/1": ["2/6"],  # no original left: out of the share, no value
        "1/information_extraction/0": ["1/0"],
    }
    lines = [f"{q} Q0 {e} {r} {10 - r} mine" for q, es in run.items() for r, e in enumerate(es, start=1)]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mine.trec"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        evaluation = evaluate(collection, [], runs=[("mine", str(path))], k=5, measures=["stale@5"], seed=7)
    values = {q.query_id: q.metrics["stale@5"] for q in evaluation.results[0].per_query}
    assert values["1/knowledge_update/0"] == 1.0
    assert values["2/knowledge_update/0"] == 0.0
    assert values["2/knowledge_update/1"] is None
    assert values["1/information_extraction/0"] is None  # not a knowledge update: no value either
    # the mean is the share over the two knowledge updates with both sides, not diluted by the others
    assert evaluation.results[0].means["stale@5"] == 0.5


# -- the declared direction in the comparison table --------------------------------------------------------


def _table(base_values, other_values, measure):
    queries = [(f"q{i}", None) for i in range(len(base_values))]
    values = {
        "base": {q: {measure: v} for (q, _), v in zip(queries, base_values)},
        "other": {q: {measure: v} for (q, _), v in zip(queries, other_values)},
    }
    stats = per_query_statistics(
        values, labels={"base": "Base", "other": "Other"}, queries=queries, measures=[measure], seed=7, n_resamples=2000
    )
    return systems_table([("base", "Base", "retriever"), ("other", "Other", "retriever")], stats, k=10)


def test_direction_flips_markers_and_counts():
    """On a lower-is-better column a significantly lower value gets ▲ and +a counts the queries scored lower;
    the same numbers on a higher-is-better column give ▼ and the counts the other way."""
    base = [1.0] * 12
    other = [0.0] * 10 + [1.0, 1.0]
    lower = _table(base, other, "stale@10")
    higher = _table(base, other, "R@10")
    assert lower.marker("other", "stale@10") == "▲"
    assert higher.marker("other", "R@10") == "▼"
    assert lower.counts("other", "stale@10") == (10, 0)
    assert higher.counts("other", "R@10") == (0, 10)
    assert lower.cell_text("other", "stale@10").endswith("▲ +10/−0")
    assert higher.cell_text("other", "R@10").endswith("▼ +0/−10")
    assert lower.header() == ["System", "stale@10 (lower is better)"]
    assert higher.header() == ["System", "R@10"]
    assert lower.notation().endswith(
        "For stale@10 lower is better: ▲ marks a significantly lower value and +a/−b count the queries on which "
        "the system scores below/above the baseline."
    )
    assert "lower is better" not in higher.notation()
    csv = lower.render("csv").splitlines()
    assert csv[0].startswith("system,baseline,stale@10 (lower is better) mean,")
    assert csv[2].endswith(",▲,0,10")  # the marker follows the direction, above/below stay raw counts
    assert "stale@10 (lower is better)" in lower.render("markdown")
    assert lower_is_better("stale@5") and not lower_is_better("nDCG@5")
    assert column_name("stale@5") == "stale@5 (lower is better)" and column_name("P@5") == "P@5"


_IDS = st.sampled_from(["o1", "o2", "u1", "u2", "x", "y", "z"])


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(_IDS, st.sampled_from([1.0, 2.0, 3.0]), max_size=7),
    st.integers(min_value=1, max_value=8),
)
def test_tie_aware_stale_equals_enumeration(scores, k):
    """For any scores (ties of any size) the closed form equals the mean over every ordering, and lies in [0, 1]."""
    query = Query("q", "x", metadata={"original_info": ("o1", "o2"), "updated_info": ("u1", "u2")})
    expected = tie_aware_value(f"stale@{k}", scores, {"u1": 1, "u2": 1}, query=query)
    assert 0.0 <= expected <= 1.0
    assert expected == pytest.approx(float(_enumerated(scores, k, query)), abs=1e-12)
