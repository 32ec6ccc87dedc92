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


def test_a_system_evaluation_computes_the_budget_defaults_and_its_command_does_not_repeat_them(tmp_path):
    """With a memory system, or a run with its own memories, the token-budget measures are among the defaults: every
    system is scored on them, and the report's equivalent command does not list them under --metrics; a run
    without memories, or retrievers alone, leave them out."""
    from agentmemory.evaluation.options import BUDGET_DEFAULTS
    from agentmemory.evaluation.runfiles import read_run_file
    from agentmemory.report import results

    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    system = evaluate(sample, "bm25", systems=["examples.my_memory_system:System"], k=5, measures="R@64tok")
    assert [str(m) for m in system.measures][:3] == list(BUDGET_DEFAULTS) and system.returns_memories
    assert [str(m) for m in system.measures][-1] == "R@64tok"
    assert all(set(BUDGET_DEFAULTS) <= set(r.means) for r in system.results)
    assert "--metrics R@64tok --" in results.cli_command(system, out="x.json")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "conv-1/q0", "hits": [{"entry_id": "m1", "score": 1}]}\n', encoding="utf-8")
    memories = tmp_path / "memories.jsonl"
    memories.write_text('{"_id": "m1", "text": "a note", "scope": "conv-1"}\n', encoding="utf-8")
    with_memories = evaluate(sample, [], runs=[read_run_file(run, "notes", memories=memories)], k=5)
    assert set(BUDGET_DEFAULTS) <= {str(m) for m in with_memories.measures}
    plain_run = tmp_path / "plain.jsonl"
    plain_run.write_text('{"query_id": "conv-1/q0", "hits": [{"entry_id": "conv-1/D1:1", "score": 1}]}\n', "utf-8")
    for plain in (evaluate(sample, "bm25", k=5), evaluate(sample, [], runs=[read_run_file(plain_run, "p")], k=5)):
        assert not plain.returns_memories and not set(BUDGET_DEFAULTS) & {str(m) for m in plain.measures}


def test_the_report_shows_the_cost_table_beside_the_comparison_table():
    """report.comparison.comparison: the comparison table and its notation, then the cost table (the same cells as
    agentmemory eval prints) and its notes as a list, a ranking that ran out of hits named with its count."""
    from agentmemory.analysis.costs import cost_table
    from agentmemory.analysis.statistics import evaluation_statistics
    from agentmemory.report import comparison
    from agentmemory.report.display import Markdown, Table

    e = evaluate(load(SAMPLE), "bm25,tags", k=5, measures="R@512tok")
    shown = comparison.comparison(e, evaluation_statistics(e, seed=7, n_resamples=200))
    assert [type(part) for part in shown] == [Table, Markdown, Table, Markdown]
    table = cost_table(e)
    assert table is not None
    assert shown[2].caption == table.caption() and shown[2].frame.values.tolist() == table.cells()
    assert list(shown[2].frame.columns) == table.header()
    assert shown[3].text == "\n".join(f"- {line}" for line in table.notes())
    ran_out = [line for line in table.notes() if " ran out of hits " in line]
    assert ran_out and all(f"- {line}" in shown[3].text for line in ran_out)
