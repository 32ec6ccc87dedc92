"""Judge agreement per category: Cohen's kappa on hand-computed tables, and every pair of judges of an answer
file per category, counted from the file's records."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmemory.analysis.agreement import ALL, cohen_kappa, judge_agreement
from agentmemory.analysis.answers_view import agreement_text
from agentmemory.datasets import load
from agentmemory.errors import ParameterError
from agentmemory.evaluation.runner import evaluate

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "fixtures" / "locomo-sample" / "locomo-sample.json"
EVERMEMOS = REPO / "fixtures" / "answers" / "evermemos-locomo-sample.json"
MEM0 = REPO / "fixtures" / "answers" / "mem0-locomo-sample.json"


def _items(table: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    """Two raters' labels from a table of (first's label, second's label) -> items."""
    first = [a for (a, _), n in table.items() for _ in range(n)]
    second = [b for (_, b), n in table.items() for _ in range(n)]
    return first, second


@pytest.mark.parametrize(
    "table,kappa",
    [
        # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5
        ({("y", "y"): 20, ("y", "n"): 5, ("n", "y"): 10, ("n", "n"): 15}, 0.4),
        # complete agreement with both labels used
        ({("y", "y"): 3, ("n", "n"): 2}, 1.0),
        # p_o = 0; p_e = 0.5 * 0.5 * 2 = 0.5; kappa = -0.5 / 0.5
        ({("y", "n"): 2, ("n", "y"): 2}, -1.0),
        # the second always says n: p_o = 3/5 = p_e = (3/5) * 1
        ({("y", "n"): 2, ("n", "n"): 3}, 0.0),
        # p_o = 6/7; p_e = (5 * 4 + 2 * 3) / 49 = 26/49; kappa = (42 - 26) / (49 - 26)
        ({("y", "y"): 4, ("y", "n"): 1, ("n", "n"): 2}, 16 / 23),
        # three labels: p_o = 5/6; p_e = (2*2 + 2*1 + 2*3) / 36 = 1/3; kappa = (5/6 - 1/3) / (2/3)
        ({("a", "a"): 2, ("b", "b"): 1, ("b", "c"): 1, ("c", "c"): 2}, 0.75),
    ],
)
def test_cohen_kappa_on_hand_computed_tables(table, kappa) -> None:
    """kappa = (p_o - p_e) / (1 - p_e), each case computed by hand in its comment."""
    first, second = _items(table)
    assert cohen_kappa(first, second) == pytest.approx(kappa)


def test_kappa_is_undefined_when_chance_explains_everything_or_there_is_nothing() -> None:
    """Both raters give one and the same label throughout (p_e = 1), or no item: None, never a number."""
    assert cohen_kappa([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]) is None
    assert cohen_kappa([], []) is None
    with pytest.raises(ParameterError, match=r"^second: 2 \(int\) is not as long as first \(3\); rate the same items$"):
        cohen_kappa([1, 0, 1], [1, 0])


@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=1, max_size=40))
def test_kappa_is_symmetric_and_at_most_one(pairs) -> None:
    """Swapping the raters changes nothing; kappa <= 1, and 1 exactly when they always agree (if defined)."""
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    kappa = cohen_kappa(first, second)
    assert kappa == cohen_kappa(second, first)
    if kappa is not None:
        assert kappa <= 1.0 + 1e-12
        assert (kappa == pytest.approx(1.0)) == (first == second)


@pytest.fixture(scope="module")
def evermemos():
    collection = load(SAMPLE)
    return collection, evaluate(collection, None, answers=[f"mem0={MEM0}", f"em={EVERMEMOS}"])


def test_every_pair_of_judges_per_category_is_counted_from_the_records(evermemos) -> None:
    """EverMemOS's file has three judges: three pairs, each over the headline questions then per category (in
    sorted order), each row the questions both judged, how many agree and kappa of their verdicts there; mem0's
    single judge gives no row."""
    collection, evaluation = evermemos
    rows = judge_agreement(evaluation)
    assert {r.system for r in rows} == {"em"}
    system = next(a for a in evaluation.answers if a.name == "em")
    group = {q.id: q.group for q in (*collection.queries, *collection.left_out_queries)}
    headline = {q.query_id for q in evaluation.results[0].headline}
    pairs = [("judgment_1", "judgment_2"), ("judgment_1", "judgment_3"), ("judgment_2", "judgment_3")]
    assert list(dict.fromkeys((r.first, r.second) for r in rows)) == pairs
    for a, b in pairs:
        verdicts = {qid: {v.judge: v.value for v in records[0].verdicts} for qid, records in system.records.items()}
        categories = sorted({group[q] for q in verdicts})
        mine = [r for r in rows if (r.first, r.second) == (a, b)]
        assert [r.category for r in mine] == [ALL, *categories]
        for row in mine:
            chosen = [q for q in verdicts if (q in headline if row.category == ALL else group[q] == row.category)]
            first, second = [verdicts[q][a] for q in chosen], [verdicts[q][b] for q in chosen]
            assert row.questions == len(chosen)
            assert row.agree == sum(x == y for x, y in zip(first, second))
            assert row.kappa == cohen_kappa(first, second)
    text = agreement_text(evaluation)
    first_row = rows[0]
    assert (
        f"| em | judgment_1 vs judgment_2 | {ALL} | {first_row.questions} | {first_row.share:.3f} "
        f"({first_row.agree} of {first_row.questions}) | {first_row.kappa:.3f} |"
    ) in text


def test_no_system_with_two_judges_prints_no_agreement() -> None:
    """mem0 alone (one judge): no row, no text."""
    evaluation = evaluate(load(SAMPLE), None, answers=[f"mem0={MEM0}"])
    assert judge_agreement(evaluation) == [] and agreement_text(evaluation) == ""
