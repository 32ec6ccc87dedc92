"""The report's sections with budget measures: the tie section says they have no tie-aware value, the tests of a
measure with missing values say over how many queries they ran, and the group tables count the queries with one."""

from __future__ import annotations

import json

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.datasets import load
from agentmemory.report import stats, ties

SAMPLE = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"


@pytest.fixture(scope="module")
def evaluation():
    # The tag scorer finds nothing on this sample: its tokens@first has no value on any query.
    return evaluate(load(SAMPLE), "bm25,dense,tags", k=5, measures="R@512tok,tokens@first")


def test_the_tie_section_says_budget_measures_have_no_tie_aware_value(evaluation):
    """The tie means table lists no budget measure, and its caption says why."""
    table = ties.tie_means_table(evaluation)
    assert not any("tok" in m or m == "tokens@first" for m in table.frame["measure"])
    assert table.caption.endswith(
        "; R@512tok, tokens@first have no tie-aware value (tied hits of unequal length change how many fit in the "
        "budget, and the expectation over their orders has no closed form)"
    )


def test_tests_over_fewer_queries_say_how_many(evaluation):
    """tokens@first's comparisons run over the queries where both systems found a relevant hit, and say so."""
    statistics = stats.run_statistics(evaluation)
    frame = stats.comparison_table(evaluation, statistics).frame
    rows = frame[frame["measure"] == "tokens@first"]
    assert list(rows["difference"]) == ["BM25 - Dense (wordllama)"]  # both found one on all 7; tags on none
    other = frame[frame["measure"] == "R@512tok"]
    assert len(other) == 3 and not any("over" in d for d in other["difference"])


def test_a_test_over_fewer_queries_says_how_many(tmp_path):
    """A run that reaches a relevant entry on 3 of the 7 queries is compared with BM25 over those 3, and says so."""
    collection = load(SAMPLE)
    judged = [q.id for q in collection.judged_queries]
    lines = [
        json.dumps({"query_id": q, "hits": [{"entry_id": e, "score": 1.0} for e in collection.relevant(q)]}) + "\n"
        for q in judged[:3]
    ]
    run = tmp_path / "half.jsonl"
    run.write_text("".join(lines), encoding="utf-8")
    e = evaluate(collection, "bm25", runs=[f"half={run}"], k=5, measures="tokens@first")
    frame = stats.comparison_table(e, stats.run_statistics(e)).frame
    [row] = frame[frame["measure"] == "tokens@first"]["difference"]
    assert row == "BM25 - half (over 3 queries with both values)"


def test_interval_table_counts_the_queries_with_a_value(evaluation):
    """The interval table's tokens@first cells say over how many of the queries the mean is."""
    statistics = stats.run_statistics(evaluation)
    frame = stats.interval_table(evaluation, statistics).frame
    cells = dict(zip(frame["System"], frame["tokens@first"]))
    assert cells["Tag scorer"] == "n/a (0 of 7)"
    assert cells["BM25"].endswith(" (7 of 7)")


def test_metric_table_shows_a_mean_over_no_query_as_na(evaluation):
    """The report's metric table shows n/a where no query has a value (the tag scorer's tokens@first)."""
    from agentmemory.report import tables

    frame = tables.metric_table(evaluation).frame
    bm25, dense, tags = (r.means["tokens@first"] for r in evaluation.results)
    assert tags is None and bm25 is not None and dense is not None
    assert list(frame["tokens@first"]) == [format(bm25, ".4f"), format(dense, ".4f"), "n/a"]


def test_the_command_names_a_tokenizer_other_than_the_default():
    """The report's equivalent command repeats --tokenizer when the run counted tokens with another counter."""
    from plugins import restored

    from agentmemory.metrics.token_counters import TOKEN_COUNTERS, Llama2Counter
    from agentmemory.report import results

    with restored(TOKEN_COUNTERS):
        TOKEN_COUNTERS.register("mine", Llama2Counter)
        e = evaluate(load(SAMPLE), "bm25", k=5, measures="R@64tok", tokenizer="mine")
        assert results.cli_command(e, out="x.json").endswith("--metrics R@64tok --tokenizer mine --out x.json")
        plain = evaluate(load(SAMPLE), "bm25", k=5, measures="R@64tok")
        assert "--tokenizer" not in results.cli_command(plain, out="x.json")
