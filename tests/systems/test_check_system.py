"""agentmemory.testing.check_system: the contract test a memory-system author runs, like check_retriever.

A well-behaved system passes (ours: the example, a retriever as a system, agentrecall); each broken system
below breaks the contract one way and the error lists that violation, to the letter.
"""

from __future__ import annotations

import re

import pytest

from agentmemory.errors import ParameterError, SystemContractError
from agentmemory.systems.base import Memory, Turn
from agentmemory.systems.registry import resolve_system
from agentmemory.testing import CONTRACT_TURNS, check_system


class Keeper:
    """Keeps every turn verbatim; search returns the turns sharing a word with the query, newest first."""

    label = "Keeper"

    def __init__(self, scope=None, workdir=None) -> None:
        self.turns: list[Turn] = []

    def ingest(self, turns: list[Turn]) -> None:
        self.turns.extend(turns)

    def found(self, query: str) -> list[Turn]:
        words = set(query.lower().split())
        return [t for t in reversed(self.turns) if words & set(t.text.lower().split())]

    def search(self, query: str, k: int) -> list[Memory]:
        return [Memory(t.text, 1.0, t.entry_id, (t.entry_id,)) for t in self.found(query)][:k]

    def close(self) -> None:
        self.turns = []


class Tuples(Keeper):
    def search(self, query, k):
        return [(t.text, t.entry_id) for t in self.found(query)][:k]


class TooMany(Keeper):
    def search(self, query, k):
        return [Memory(t.text, id=t.entry_id) for t in self.turns][: k + 1]


class SameIds(Keeper):
    def search(self, query, k):
        return [Memory(t.text, id="m") for t in self.found(query)][:k]


SHARED: list[Turn] = []


class Leaky(Keeper):
    """Every instance shares one list: the second scope's system remembers the first scope's turns."""

    def __init__(self, scope=None, workdir=None) -> None:
        self.turns = SHARED

    def close(self) -> None:
        pass


class Hearsay(Keeper):
    """Names a turn of the other conversation as its source."""

    def search(self, query, k):
        other = next(t for t in CONTRACT_TURNS if t.scope != self.turns[0].scope)
        return [Memory(t.text, id=t.entry_id, sources=(other.entry_id,)) for t in self.found(query)][:k]


class BadParams(Keeper):
    def params(self):
        return {"depth": float("nan"), "tags": {"a", "b"}}


class BadMembers(Keeper):
    label = ""
    batch_size = 0


class Failing(Keeper):
    def ingest(self, turns):
        raise RuntimeError("the database is locked")


def test_a_system_keeping_the_contract_passes():
    """The example system, a retriever as a system, and a plain keeper pass without a violation."""
    check_system(Keeper)
    check_system("examples.my_memory_system:System")
    check_system("bm25")


BROKEN = [
    ("wrong-type", Tuples, "scope conv-a: search('What is the kitten called?', 1): memory 1 is a tuple, not a Memory"),
    (
        "more-than-k",
        TooMany,
        "scope conv-a: search('What is the kitten called?', 1): returned 2 memories for k=1; search(query, k) "
        "returns at most k",
    ),
    ("same-ids", SameIds, "scope conv-a: search('Pixel', 3): memories 1 and 2 have the same id 'm'"),
    (
        "other-scope-source",
        Hearsay,
        "scope conv-a: search('Pixel', 10): memory 1 names the source 'conv-b/D1:1' of scope 'conv-b' (a leak "
        "between conversations)",
    ),
    (
        "shared-store",
        Leaky,
        "scope conv-b: search('Pixel the kitten', 10): memory 4 holds the text of a turn of scope 'conv-a' (a leak "
        "between conversations)",
    ),
    (
        "params",
        BadParams,
        "scope conv-a: params() returned a dict which JSON cannot hold: the value at ['depth'] is nan; JSON holds "
        "finite numbers only",
    ),
    ("label", BadMembers, "scope conv-a: label is '', not a non-empty string"),
    ("batch", BadMembers, "scope conv-a: declares batch_size 0 (int); batch_size must be an integer >= 1"),
    ("raises", Failing, "scope conv-a: ingest raised RuntimeError: the database is locked"),
]


@pytest.mark.parametrize("factory,violation", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_broken_contract_is_listed(factory, violation):
    """Wrong return types, more than k memories, shared ids, a source of another scope, scopes sharing a store,
    params JSON cannot hold, bad members, a raising call: each is a violation listed to the letter, once."""
    SHARED.clear()
    with pytest.raises(SystemContractError) as caught:
        check_system(factory)
    violations = caught.value.violations
    assert violation in violations and len(set(violations)) == len(violations)
    label = resolve_system(factory).label
    assert re.match(
        rf"check_system\({label}\): {len(violations)} violation\(s\) of the memory-system contract:\n- ",
        str(caught.value),
    )
    assert isinstance(caught.value, AssertionError)


def test_an_instance_is_refused():
    """A system instance cannot give each scope a fresh system: refused, saying what to pass."""
    with pytest.raises(
        ParameterError, match=r"^factory: .* is a memory system instance; pass its class or a factory: each scope"
    ):
        check_system(Keeper())
