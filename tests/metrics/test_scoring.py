"""Scoring a whole run: which queries count, ties, means, output forms."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from strategies import qrels_sets, runs

from agentmemory.errors import ParameterError
from agentmemory.files.trec import read_qrels, read_run, write_qrels, write_run
from agentmemory.metrics import Measure, parse_measures
from agentmemory.metrics.scoring import (
    DEFAULT_K,
    DEFAULT_MEASURES,
    ScoreResult,
    default_measures,
    format_table,
    score_run,
)

QRELS = {
    "q1": {"a": 1, "b": 0, "c": 1},  # 2 relevant
    "q2": {"x": 0, "y": -1},  # judged, nothing relevant
    "q3": {"m": 2},  # not in the run
}
RUN = {
    "q1": {"a": 1.0, "b": 1.0, "c": 0.5, "z": 2.0},  # trec order: z, b, a, c
    "q2": {"x": 3.0},
    "q9": {"a": 1.0},  # not in the qrels
}
# q1 in trec order z, b, a, c: first relevant (a) at rank 3, c at rank 4.
Q1 = {"P@2": 0.0, "P@4": 2 / 4, "RR": 1 / 3, "R@4": 1.0, "AP@4": (1 / 3 + 2 / 4) / 2}
ZERO = dict.fromkeys(Q1, 0.0)
MEASURES = "P@2,P@4,RR,R@4,AP@4"


def _approx(values: dict) -> object:
    return pytest.approx(values, abs=1e-15)


def test_default_averages_over_queries_in_run_and_qrels():
    """By default only queries in both run and qrels count; the all-zero-judged q2 counts as 0."""
    result = score_run(QRELS, RUN, MEASURES)
    assert list(result.per_query) == ["q1", "q2"]
    assert result.per_query["q1"] == _approx(Q1)
    assert result.per_query["q2"] == ZERO
    assert result.queries == 2
    assert result.mean == _approx({name: value / 2 for name, value in Q1.items()})


def test_complete_counts_missing_queries_as_zero():
    """With complete=True (trec_eval -c) a qrels query missing from the run scores 0 and counts."""
    result = score_run(QRELS, RUN, MEASURES, complete=True)
    assert list(result.per_query) == ["q1", "q2", "q3"]
    assert result.per_query["q3"] == ZERO
    assert result.queries == 3
    assert result.mean == _approx({name: value / 3 for name, value in Q1.items()})


def test_run_order_and_rank_numbers_do_not_matter():
    """Documents are re-ranked by score then id descending, whatever order the run mapping has."""
    shuffled = {"q1": {"c": 0.5, "z": 2.0, "a": 1.0, "b": 1.0}}
    assert score_run(QRELS, shuffled, MEASURES).per_query["q1"] == _approx(Q1)


def test_ties_are_broken_by_descending_id():
    """Among equal scores the larger id ranks first: 'b' (not relevant) is above 'a' (relevant)."""
    result = score_run({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, "RR,P@1")
    assert result.mean == {"RR": 0.5, "P@1": 0.0}


def test_query_without_judgments_is_not_in_the_qrels():
    """A qrels query mapped to no judgment at all is treated as absent (as pytrec_eval does), even with complete."""
    qrels = {"q1": {"a": 1}, "q2": {}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    for complete in (False, True):
        result = score_run(qrels, run, "P@1", complete=complete)
        assert list(result.per_query) == ["q1"]
        assert result.mean == {"P@1": 1.0}


def test_run_query_without_documents_counts_as_zero():
    """A run query mapped to no document is scored (0 everywhere) and counts in the mean."""
    result = score_run({"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}, "q2": {}}, "P@1,RR")
    assert result.per_query == {"q1": {"P@1": 1.0, "RR": 1.0}, "q2": {"P@1": 0.0, "RR": 0.0}}
    assert result.mean == {"P@1": 0.5, "RR": 0.5}


def test_no_common_query_is_an_error():
    """When no query is in both run and qrels, score_run raises (trec_eval stops too), even with complete."""
    message = (
        "run: ('x1', 'x2') (tuple) shares no query id with the qrels; the qrels' query ids are "
        "'q1', 'q2', 'q3'; score a run made for these queries "
        '(trec_eval stops too: "No queries with both results and relevance info")'
    )
    for complete in (False, True):
        with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
            score_run(QRELS, {"x2": {"a": 1.0}, "x1": {}}, "P@5", complete=complete)


def test_no_common_query_lists_at_most_five_ids():
    """The error shows the first five run ids and sample qrels ids with their count."""
    qrels = {f"q{i}": {"a": 1} for i in range(7)}
    run = {f"r{i}": {"a": 1.0} for i in range(7)}
    message = (
        "run: ('r0', 'r1', 'r2', 'r3', 'r4') (tuple) shares no query id with the qrels; the qrels' query ids are "
        "'q0', 'q1', 'q2', 'q3', 'q4', ... (7 in all); score a run made for these queries "
        '(trec_eval stops too: "No queries with both results and relevance info")'
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        score_run(qrels, run, "P@5")


@pytest.mark.parametrize("qrels", [{}, {"q": {}}])
def test_qrels_without_judgments_is_an_error(qrels):
    """Qrels with no judgment at all cannot score anything and are rejected."""
    message = f"qrels: {qrels!r} (dict) has no judged query; give qrels with at least one judgment"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        score_run(qrels, {"q": {"a": 1.0}}, "P@5")


def test_bad_measure_text_is_rejected():
    """Measure text is parsed with parse_measures, so its errors reach the caller."""
    with pytest.raises(ParameterError, match=re.escape("metric: 'P' (str) has no cutoff")):
        score_run(QRELS, RUN, "P")


def test_measures_as_values_or_text_agree():
    """Measures may be given as Measure values or as text; the result is the same."""
    assert score_run(QRELS, RUN, parse_measures(MEASURES)) == score_run(QRELS, RUN, MEASURES)


def test_per_query_sorted_by_id_and_measures_in_given_order():
    """per_query is sorted by query id; each query's values and the means follow the measures' order."""
    qrels = {"b": {"d": 1}, "a": {"d": 1}, "c": {"d": 1}}
    run = {"c": {"d": 1.0}, "a": {"d": 1.0}, "b": {"e": 1.0}}
    result = score_run(qrels, run, "RR,P@1")
    assert list(result.per_query) == ["a", "b", "c"]
    assert list(result.mean) == ["RR", "P@1"]
    assert all(list(values) == ["RR", "P@1"] for values in result.per_query.values())


def test_mean_is_exactly_rounded():
    """Means use math.fsum over the per-query values."""
    qrels = {f"q{i}": {"a": 1} for i in range(10)}
    run = {f"q{i}": {"x": 2.0, "y": 1.5, "a": 1.0} for i in range(10)}  # RR = 1/3 everywhere
    result = score_run(qrels, run, "RR")
    assert result.mean["RR"] == math.fsum([1 / 3] * 10) / 10


def test_scores_from_files_equal_scores_in_memory(tmp_path):
    """Writing the run and qrels to TREC files and reading them back changes no value."""
    write_run(tmp_path / "run", RUN)
    write_qrels(tmp_path / "qrels", QRELS)
    from_files = score_run(read_qrels(tmp_path / "qrels"), read_run(tmp_path / "run"), MEASURES, complete=True)
    assert from_files == score_run(QRELS, RUN, MEASURES, complete=True)


@given(qrels_sets, runs)
def test_queries_counted(qrels, run):
    """queries is |run ∩ qrels| by default and |qrels| with complete; per_query has exactly those ids."""
    both = sorted(qrels.keys() & run.keys())
    if not both:
        with pytest.raises(ParameterError):
            score_run(qrels, run, "P@3")
    else:
        default = score_run(qrels, run, "P@3")
        complete = score_run(qrels, run, "P@3", complete=True)
        assert list(default.per_query) == both and default.queries == len(both)
        assert list(complete.per_query) == sorted(qrels) and complete.queries == len(qrels)
        assert complete.mean["P@3"] * len(qrels) == pytest.approx(default.mean["P@3"] * len(both), abs=1e-12)


def test_to_json_dict():
    """to_json_dict has exactly mean, per_query and queries, and survives json round trip."""
    result = score_run(QRELS, RUN, "P@2,RR")
    data = result.to_json_dict()
    assert data == {
        "mean": {"P@2": 0.0, "RR": (1 / 3) / 2},
        "per_query": {"q1": {"P@2": 0.0, "RR": 1 / 3}, "q2": {"P@2": 0.0, "RR": 0.0}},
        "queries": 2,
    }
    assert json.loads(json.dumps(data)) == data
    data["mean"]["RR"] = 99.0
    assert result.mean["RR"] == (1 / 3) / 2  # a copy, not the result's own dicts


def test_format_table():
    """format_table prints measure names and means to 4 decimals, then the number of queries."""
    result = ScoreResult(mean={"P@5": 0.2, "nDCG@10": 2 / 3, "RR": 1.0}, per_query={}, queries=12)
    assert format_table(result) == ("measure    mean\nP@5      0.2000\nnDCG@10  0.6667\nRR       1.0000\nqueries: 12")


def test_format_table_per_query():
    """With per_query, a second table lists every query's values under the measure names."""
    result = score_run(QRELS, RUN, "P@2,RR")
    assert format_table(result, per_query=True) == (
        "measure    mean\n"
        "P@2      0.0000\n"
        "RR       0.1667\n"
        "queries: 2\n"
        "\n"
        "query     P@2      RR\n"
        "q1     0.0000  0.3333\n"
        "q2     0.0000  0.0000"
    )


def test_default_measures():
    """default_measures(k) is P@k, R@k, RR, RR@k, nDCG@k, AP@k; DEFAULT_MEASURES uses DEFAULT_K."""
    assert [str(m) for m in default_measures(7)] == ["P@7", "R@7", "RR", "RR@7", "nDCG@7", "AP@7"]
    assert DEFAULT_MEASURES == default_measures(DEFAULT_K)
    assert all(isinstance(m, Measure) for m in DEFAULT_MEASURES)


def test_default_measures_rejects_bad_k():
    """default_measures checks k."""
    with pytest.raises(ParameterError, match=re.escape("k: 0 (int) is less than 1; k must be an integer >= 1")):
        default_measures(0)


def test_nan_score_is_rejected():
    """A NaN score in an in-memory run is reported with its document."""
    with pytest.raises(ParameterError, match=re.escape("score of document 'a': nan (float) is not a number")):
        score_run({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "P@1")
