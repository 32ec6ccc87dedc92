"""Memory systems of different granularity on the LoCoMo sample: the default table's budget measures, the cost
table's numbers (counted here from what each system answered) and the note on rankings that ran out of hits."""

from __future__ import annotations

import granular_systems
import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.costs import cost_table
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.metrics.token_counters import token_counter

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


def test_a_system_returning_no_more_than_three_memories_is_noted_with_its_count() -> None:
    """CappedNotes returns at most 3 memories, so every query runs out before rank 5; and before 64 tokens on the
    queries whose 3 memories' texts count fewer than 64 tokens (counted here from what the system answered)."""
    sample = load(SAMPLE)
    e = evaluate(sample, None, systems=[granular_systems.CappedNotes], k=5, measures="R@64tok")
    table = cost_table(e)
    assert table is not None
    (row,) = table.rows
    counter = token_counter()
    headline = [q.id for q in sample.headline_queries]
    answers = e.systems[0].replay.answers
    assert max(len(answers[q]) for q in headline) == granular_systems.CAP
    short = sum(1 for q in headline if sum(counter.count([m.text for m in answers[q]])) < 64)
    assert 0 < short < len(headline)  # the budget cuts some rankings and not others: the count is telling
    counts = dict(zip((limit.text() for limit in table.limits), row.ran_out))
    assert counts["rank 5"] == len(headline) and counts["64 tokens"] == short
    assert (
        f"Capped notes ran out of hits before rank 5 on {len(headline)} of {len(headline)} queries (P@5, R@5, RR@5, "
        f"nDCG@5, AP@5), before 64 tokens on {short} of {len(headline)} queries (R@64tok)"
    ) in table.render()
    assert row.most == granular_systems.CAP


def test_session_and_turn_notes_on_the_locomo_sample() -> None:
    """One note per session and one per turn of the same conversation: the default table has the token-budget
    measures beside the cut-off ones, and the cost table what each costs, counted from the notes' own texts."""
    sample = load(SAMPLE)
    e = evaluate(sample, "bm25", systems=[granular_systems.TurnNotes, granular_systems.SessionNotes], k=5)
    assert {"R@512tok", "R@2048tok", "Success@2048tok"} <= set(e.result("SessionNotes").means)
    table = cost_table(e)
    assert table is not None
    rows = {row.label: row for row in table.rows}
    counter = token_counter()
    headline = [q.id for q in sample.headline_queries]
    for run in e.systems:
        answers = run.replay.answers
        lengths = [counter.count([m.text for m in answers[q][:5]]) for q in headline]
        row = rows[run.spec.label]
        assert row.tokens_at_k == pytest.approx(sum(map(sum, lengths)) / len(headline))
        assert row.tokens_per_memory == pytest.approx(sum(map(sum, lengths)) / sum(map(len, lengths)))
        assert row.returned == pytest.approx(sum(len(answers[q]) for q in headline) / len(headline))
    assert rows["Session notes"].tokens_per_memory > 3 * rows["Turn notes"].tokens_per_memory  # type: ignore[operator]
    assert rows["Session notes"].returned < rows["Turn notes"].returned


def test_the_command_line_shows_both_granularities_at_equal_budget(capsys) -> None:
    """`agentmemory eval --system` with the turn and the session notes: the comparison table's default columns hold
    the token-budget measures, and the cost table under it each system's row as cost_table computes it."""
    systems = ["granular_systems:TurnNotes", "granular_systems:SessionNotes"]
    args = ["eval", "--collection", str(SAMPLE), "--retrievers", "bm25"]
    assert main([*args, *(a for s in systems for a in ("--system", s))]) == 0
    out = capsys.readouterr().out
    header = (
        "| System | R@512tok | R@2048tok | Success@2048tok | P@5 | R@5 | RR@5 | nDCG@5 | AP@5 |"  # equal cost first
    )
    assert header in out
    evaluation = evaluate(load(SAMPLE), "bm25", systems=[granular_systems.TurnNotes, granular_systems.SessionNotes])
    table = cost_table(evaluation)
    assert table is not None and [row.label for row in table.rows] == ["BM25", "Turn notes", "Session notes"]
    assert table.render() in out
    assert out.index(header) < out.index(table.caption()) < out.index("Memory systems: attribution")
