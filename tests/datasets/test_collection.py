"""The Collection record's refusal to evaluate without a judged query: the message, to the letter."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from agentmemory.collection import Collection, require_judgments
from agentmemory.errors import ParameterError
from agentmemory.records import Query

SEE = (
    "see why each was left out in the collection's skipped list (Collection.skipped; skipped_queries in the "
    "artifact), load it with --repair (repair=True) where its format repairs malformed questions, or evaluate a "
    "collection with judgments"
)


def _collection(skipped, queries=()):
    return Collection(
        name="locomo",
        entries=(),
        queries=tuple(Query(q, "a question") for q in queries),
        qrels=MappingProxyType({}),
        files=MappingProxyType({}),
        skipped=tuple(skipped),
    )


@pytest.mark.parametrize(
    ("skipped", "queries", "message"),
    [
        pytest.param(
            [],
            [],
            "collection: 'locomo' (str) has no judged query; evaluate a collection with judgments",
            id="nothing-skipped",
        ),
        pytest.param(
            [("c/q0", "no evidence"), ("c/q1", "evidence 'D9:1' names no turn in c"), ("c/q2", "no evidence")],
            [],
            "collection: 'locomo' (str) has no judged query; all 3 questions were left out (2 for: no evidence | "
            f"1 for: evidence 'D9:1' names no turn in c); {SEE}",
            id="counted-per-reason",
        ),
        pytest.param(
            [(f"c/q{i}", f"reason {i % 7}") for i in range(9)],
            [],
            "collection: 'locomo' (str) has no judged query; all 9 questions were left out (2 for: reason 0 | "
            f"2 for: reason 1 | 1 for: reason 2 | 1 for: reason 3 | 1 for: reason 4 | 2 for 2 other reasons); {SEE}",
            id="five-reasons-then-the-rest",
        ),
        pytest.param(
            [("c/q0", "no evidence")],
            [],
            f"collection: 'locomo' (str) has no judged query; 1 question was left out (1 for: no evidence); {SEE}",
            id="one",
        ),
        pytest.param(
            [("c/q1", "no evidence")],
            ["c/q0"],
            f"collection: 'locomo' (str) has no judged query; 1 question was left out (1 for: no evidence); {SEE}",
            id="some-kept-but-unjudged",
        ),
    ],
)
def test_no_judged_query_says_how_many_were_left_out_for_each_reason(skipped, queries, message):
    """The refusal counts the questions left out per reason (most frequent first, at most five named) and says
    where to see them and how to keep them."""
    with pytest.raises(ParameterError) as info:
        require_judgments(_collection(skipped, queries))
    assert str(info.value) == message


def test_a_long_reason_is_shortened():
    """A reason of thousands of characters is cut as every quoted value is, keeping the message one short line."""
    with pytest.raises(ParameterError) as info:
        require_judgments(_collection([("c/q0", "x" * 5000)]))
    assert f"(1 for: {'x' * 160}... (5,000 characters));" in str(info.value)
