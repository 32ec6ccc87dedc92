"""What a memory system's answers must be: the checks the replay applies to every call's result.

Kept apart from the replay so the same checks can sit behind one guarded
plugin boundary with the retrievers' later.  Each check returns the problem
in a message's words (``None`` when there is none); the replay turns it into
a :class:`~agentmemory.errors.MemorySystemError` naming the system, the
scope and the call.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection as Container
from collections.abc import Mapping

from agentmemory.errors import quote
from agentmemory.systems.base import Memory

__all__ = ["batch_size_problem", "memories_problem", "sources_problem"]


def batch_size_problem(value: object) -> str | None:
    """What is wrong with a system's declared ``batch_size`` (``None`` is fine: no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"declares batch_size {quote(value)} ({type(value).__name__}); batch_size must be an integer >= 1"
    return None


def memories_problem(result: object, k: int) -> str | None:
    """What is wrong with ``search``'s result for depth ``k``, or ``None``.

    A result is a ``list`` or ``tuple`` of at most ``k``
    :class:`~agentmemory.systems.base.Memory` records; each has ``str``
    text, a score that is ``None`` or a finite real number, an id that is
    ``None`` or a ``str`` (ids unique within the result), sources ``None``
    or a sequence of ``str``.  Memories are counted from 1 in messages.
    """
    if not isinstance(result, (list, tuple)):
        return f"returned a {type(result).__name__}, not a list of Memory"
    if len(result) > k:
        return f"returned {len(result)} memories for k={k}; search(query, k) returns at most k"
    seen: dict[str, int] = {}
    for position, memory in enumerate(result, start=1):
        if not isinstance(memory, Memory):
            return f"memory {position} is a {type(memory).__name__}, not a Memory"
        if not isinstance(memory.text, str):
            return f"memory {position} has text {quote(memory.text, 60)} ({type(memory.text).__name__}), not a str"
        score = memory.score
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                return f"memory {position} has score {quote(score, 60)} ({type(score).__name__}), not a number"
            if not math.isfinite(float(score)):
                return f"memory {position} has the score {float(score)!r}; scores must be finite numbers or None"
        if memory.id is not None:
            if not isinstance(memory.id, str):
                return f"memory {position} has id {quote(memory.id, 60)} ({type(memory.id).__name__}), not a str"
            if memory.id in seen:
                return f"memories {seen[memory.id]} and {position} have the same id {quote(memory.id, 60)}"
            seen[memory.id] = position
        sources = memory.sources
        if sources is not None and (
            isinstance(sources, (str, bytes))
            or not isinstance(sources, (list, tuple))
            or not all(isinstance(s, str) for s in sources)
        ):
            return f"memory {position} has sources {quote(sources, 60)}, not a tuple of entry ids"
    return None


def sources_problem(
    result: tuple[Memory, ...], scope: str | None, scope_of: Mapping[str, str | None], ingested: Container[str]
) -> str | None:
    """Whether every source names an entry of ``scope`` that the system was given, or ``None``.

    ``scope_of`` maps every entry id of the collection to its scope;
    ``ingested`` holds the ids ingested so far in this scope (under an
    as-of replay, a turn not yet given cannot be a source).
    """
    for position, memory in enumerate(result, start=1):
        for source in memory.sources or ():
            if source not in scope_of:
                return (
                    f"memory {position} names the source {quote(source, 60)}, which is not an entry of the collection"
                )
            if scope_of[source] != scope:
                return (
                    f"memory {position} names the source {quote(source, 60)} of scope {quote(scope_of[source], 60)} "
                    "(a leak between conversations)"
                )
            if source not in ingested:
                return f"memory {position} names the source {quote(source, 60)}, which was not ingested yet"
    return None
