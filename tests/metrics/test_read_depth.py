"""How deep a measure reads (``Measure.read_depth``, ``MeasureDef.reads``): hand-computed depths, the property
that a ranking cut there gives the same value, and the plugin boundary."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins import restored

from agentmemory.errors import ParameterError, PluginError
from agentmemory.metrics import REGISTRY, CutoffRule, MeasureDef, parse_measure, register_measure

# LongMemEval-style turn ids: session s1_a holds two turns, s2_b, s3_c one each (the session is the id without
# its last '_' part).
TURNS = ["s1_a_1", "s1_a_2", "s2_b_1", "s3_c_1", "s1_a_3"]
QRELS = {"s3_c_1": 1, "s2_b_1": 0}
LENGTHS = [100, 50, 200, 10, 30]


@pytest.mark.parametrize(
    ("measure", "ranking", "expected"),
    [
        ("P@3", TURNS, 3),  # its cutoff
        ("P@8", TURNS, 5),  # at most the ranking
        ("RR", TURNS, 5),  # no cutoff: all it is given (an evaluation gives it the top k)
        ("sess.recall_any@1", TURNS, 1),  # one session at rank 1
        ("sess.recall_any@2", TURNS, 3),  # ranks 1-2 are one session: k' = 3
        ("sess.ndcg_any@3", TURNS, 4),  # the third session at rank 4
        ("sess.recall_all@4", TURNS, 5),  # never 4 sessions: the whole ranking
        ("R@350tok", TURNS, 4),  # 100 + 50 + 200 = 350 fit; rank 4 crosses (read to see it)
        ("nDCG@349tok", TURNS, 3),  # rank 3 crosses
        ("P@99tok", TURNS, 1),  # rank 1 alone crosses
        ("Success@1000tok", TURNS, 5),  # never crossed: the whole ranking
        ("tokens@first", TURNS, 4),  # the first relevant hit
        ("tokens@first", TURNS[:3], 3),  # none relevant: the whole ranking, to see there is none
        ("R@350tok", [], 0),
    ],
)
def test_read_depth_by_hand(measure, ranking, expected):
    """Each family's depth, counted by hand on one ranking of turns."""
    lengths = LENGTHS[: len(ranking)]
    assert parse_measure(measure).read_depth(ranking, QRELS, set(TURNS), lengths=lengths) == expected


WHOLE_RANKING = [
    "sess.recall_any@1",
    "sess.recall_any@2",
    "sess.recall_all@3",
    "sess.ndcg_any@2",
    "sess.ndcg_any@4",
    "R@1tok",
    "R@40tok",
    "P@40tok",
    "Success@25tok",
    "nDCG@60tok",
    "tokens@first",
]
POOL = [f"s{s}_{t}" for s in range(1, 5) for t in range(1, 4)]


@given(
    ranking=st.lists(st.sampled_from(POOL), unique=True, max_size=12),
    grades=st.dictionaries(st.sampled_from(POOL), st.integers(min_value=0, max_value=2), max_size=6),
    lengths=st.lists(st.integers(min_value=0, max_value=30), min_size=12, max_size=12),
    measure=st.sampled_from(WHOLE_RANKING),
)
def test_a_ranking_cut_where_a_measure_stops_reading_gives_the_same_value(ranking, grades, lengths, measure):
    """For every whole-ranking measure, the value on the first read_depth hits (their lengths too) is the value on
    the whole ranking: what makes an exported run re-score exactly."""
    m = parse_measure(measure)
    scope = set(POOL)
    depth = m.read_depth(ranking, grades, scope, lengths=lengths[: len(ranking)])
    assert 0 <= depth <= len(ranking)
    whole = m.compute(ranking, grades, scope, lengths=lengths[: len(ranking)])
    assert m.compute(ranking[:depth], grades, scope, lengths=lengths[:depth]) == whole


def test_every_built_in_whole_ranking_measure_says_how_deep_it_reads():
    """The sess.* measures, the budget forms and tokens@first declare reads (none falls back to the whole ranking)."""
    whole = [d for d in REGISTRY.registered().values() if d.whole_ranking]
    whole += [d.budget_form for d in REGISTRY.registered().values() if d.budget_form is not None]
    assert len(whole) == 8
    assert all(d.reads is not None for d in whole)


def _one(query):
    return 1.0


def test_reads_needs_whole_ranking():
    """A measure that reads only its top k has no reads of its own: refused, naming the field."""
    with pytest.raises(
        ParameterError,
        match=re.escape("is given to Own, which reads only its top k; pass whole_ranking=True with it"),
    ):
        MeasureDef("Own", _one, CutoffRule.REQUIRED, "one", reads=lambda q: 1)
    with pytest.raises(ParameterError, match=r"^reads: 3 \(int\) is not callable"):
        MeasureDef("Own", _one, CutoffRule.REQUIRED, "one", whole_ranking=True, reads=3)


@pytest.fixture
def registry_restored():
    with restored(REGISTRY):
        yield


@pytest.mark.parametrize("returned", [-1, 6, 2.0, True, None])
def test_a_plugins_reads_is_checked(registry_restored, returned):
    """What a plugin's reads returns must be an int from 0 to the ranking's length: anything else is one
    PluginError naming the measure and the call."""
    register_measure(MeasureDef("Deep", _one, CutoffRule.REQUIRED, "one", whole_ranking=True, reads=lambda q: returned))
    with pytest.raises(PluginError, match=r"^measure plugin 'Deep@2': reads returned .*, not an int from 0 to 5$"):
        parse_measure("Deep@2").read_depth(TURNS, QRELS)


def test_a_whole_ranking_plugin_without_reads_reads_everything(registry_restored):
    """A whole-ranking measure that does not say how deep it reads is taken to read the whole ranking."""
    register_measure(MeasureDef("Deep", _one, CutoffRule.REQUIRED, "one", whole_ranking=True))
    assert parse_measure("Deep@2").read_depth(TURNS, QRELS) == 5
