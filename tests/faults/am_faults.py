"""A family of misbehaving plugin retrievers, generated from one table (:data:`FAULTS`).

Each fault is a BM25 (a correct retriever) with one member replaced: it
raises, returns the wrong type, or breaks one rule of the ranking contract.
The classes are defined here, outside the ``agentmemory`` package, so the
library treats them as plugins (``am_faults:SearchRaisesKeyError``) and puts
them behind its boundary.  :data:`FAULTS` maps each class name to the
member it breaks, the commands that call that member, and the words the
one-line error must hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentmemory.records import Hit
from agentmemory.retrievers import BM25


class Good(BM25):
    """A well-behaved plugin: BM25 under another name (a control for the table)."""

    name = "good"
    label = "Good plugin"


@dataclass(frozen=True)
class Fault:
    """One misbehaviour: the ``member`` replaced, what the error must say, and which commands call it."""

    member: str
    says: str  # in the one-line error, after the plugin's name
    commands: tuple[str, ...] = ("eval", "retrieve")  # retrieve never asks for params()


def _raising(exc: type[BaseException], member: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise exc(f"{member} broke on purpose")

    return method


def _searching(transform: Any, extra: int = 0) -> Any:
    def search(self: Any, query: Any, k: int) -> Any:
        return transform(BM25.search(self, query, k + extra), k)

    return search


def _reranked(hits: list[Hit]) -> list[Hit]:
    return [Hit(h.entry_id, h.score, r) for r, h in enumerate(hits, start=1)]


_RESULTS: dict[str, tuple[Any, str, int]] = {  # name: (hits, k -> result; words of the error; extra depth)
    "SearchReturnsNone": (lambda hits, k: None, "returned a NoneType (None), not a list of agentmemory.Hit", 0),
    "SearchReturnsDict": (
        lambda hits, k: {h.entry_id: h.score for h in hits},
        "returned a dict (",
        0,
    ),
    "SearchReturnsTuples": (
        lambda hits, k: [(h.entry_id, h.score) for h in hits],
        "(tuple), not an agentmemory.Hit",
        0,
    ),
    "SearchNaN": (
        lambda hits, k: [Hit(h.entry_id, float("nan"), h.rank) for h in hits],
        "scores must be numbers, not NaN",
        0,
    ),
    "SearchGhostIds": (
        lambda hits, k: _reranked([Hit("ghost-1", 9.0, 1), *hits][:k]),
        "returned ids never added to it: ['ghost-1']",
        0,
    ),
    "SearchDuplicates": (
        lambda hits, k: _reranked([hits[0], *hits][:k]) if hits else hits,
        "returned an entry twice",
        0,
    ),
    "SearchAscending": (
        lambda hits, k: _reranked(list(reversed(hits))),
        "returned hits out of order",
        0,
    ),
    "SearchNegated": (  # the list order kept, scores negated: ascending by score
        lambda hits, k: [Hit(h.entry_id, -h.score, h.rank) for h in hits],
        "returned hits out of order",
        0,
    ),
    "SearchTooMany": (lambda hits, k: hits, "hits for k = ", 1),  # searches one deeper than asked
    "SearchRanksWrong": (
        lambda hits, k: [Hit(h.entry_id, h.score, h.rank + 1) for h in hits],
        "returned hits ranked [2",
        0,
    ),
}

FAULTS: dict[str, Fault] = {}
"""Class name -> its fault; the classes themselves are attributes of this module."""

_EXCEPTIONS = (RuntimeError, KeyError, ValueError)

for _member in ("__init__", "add", "search", "params"):
    for _exc in _EXCEPTIONS:
        _name = f"{'Init' if _member == '__init__' else _member.capitalize()}Raises{_exc.__name__}"
        _call = "factory" if _member == "__init__" else _member
        _message = f"'{_member} broke on purpose'" if _exc is KeyError else f"{_member} broke on purpose"
        FAULTS[_name] = Fault(
            _member,
            f"{_call} raised {_exc.__name__}: {_message}",
            ("eval",) if _member == "params" else ("eval", "retrieve"),
        )
        globals()[_name] = type(_name, (Good,), {_member: _raising(_exc, _member), "label": f"Faulty {_name}"})

for _name, (_transform, _says, _extra) in _RESULTS.items():
    FAULTS[_name] = Fault("search", _says)
    globals()[_name] = type(_name, (Good,), {"search": _searching(_transform, _extra), "label": f"Faulty {_name}"})


class _Opaque:
    """Not JSON: params() holding one cannot go into an artifact."""


_PARAMS: dict[str, tuple[Any, str]] = {
    "ParamsNotJSON": ({"model": _Opaque()}, "which JSON cannot hold"),
    "ParamsNaN": ({"alpha": float("nan")}, "which JSON cannot hold"),
    "ParamsList": (["k1", 1.2], "returned a list, not a dict"),
}
for _name, (_value, _says) in _PARAMS.items():
    FAULTS[_name] = Fault("params", _says, ("eval",))
    globals()[_name] = type(
        _name, (Good,), {"params": (lambda value: lambda self: value)(_value), "label": f"Faulty {_name}"}
    )


def raising_factory() -> Any:
    """A function factory (no ``label`` declared, so it is called once when its spec is resolved) that raises."""
    raise RuntimeError("the factory broke on purpose")


class Infinite(Good):
    """Not a fault: the top hit scores +inf and the last -inf, which rank (first and last)."""

    label = "Infinite scores"

    def search(self, query: Any, k: int) -> list[Hit]:
        hits = BM25.search(self, query, k)
        if len(hits) >= 2:
            hits = [
                Hit(hits[0].entry_id, float("inf"), 1),
                *hits[1:-1],
                Hit(hits[-1].entry_id, float("-inf"), len(hits)),
            ]
        elif hits:
            hits = [Hit(hits[0].entry_id, float("inf"), 1)]
        return hits


class Tied(Good):
    """Not a fault: every hit scores 1.0, ranked by id descending, as the rule says (ties across the cutoff)."""

    label = "All tied"

    def search(self, query: Any, k: int) -> list[Hit]:
        found = sorted((h.entry_id for h in BM25.search(self, query, 1000)), reverse=True)[:k]
        return [Hit(entry_id, 1.0, r) for r, entry_id in enumerate(found, start=1)]
