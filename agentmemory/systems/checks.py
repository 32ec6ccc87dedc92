"""What a memory system's answers must be: the checks the replay applies to every call's result.

Kept apart from the replay so the same checks can sit behind one guarded
plugin boundary with the retrievers' later.  Each check returns the problem
in a message's words (``None`` when there is none); the replay turns it into
a :class:`~agentmemory.errors.MemorySystemError` naming the system, the
scope and the call.  What passes is copied into plain records
(:func:`plain_memories`: exact ``str``, ``float`` and ``tuple`` values), so
nothing after the replay (attribution, the artifact, the run writers) reads
an object of the system's own.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from agentmemory.errors import quote
from agentmemory.systems.base import Memory

__all__ = [
    "batch_size_problem",
    "memories_problem",
    "plain_memories",
    "scrub_paths",
    "source_problem",
    "text_problem",
]


def scrub_paths(text: str, workdir: Path | None = None) -> str:
    """``text`` with this machine's folders replaced, so a system's message can go into an artifact.

    Replaced, each as given and resolved, the longest first, wherever it
    ends at a path boundary (not followed by a letter, digit, ``_``, ``.``
    or ``-``): the scope's ``workdir`` by ``<workdir>``, the temporary
    folder (:func:`tempfile.gettempdir`) by ``<tmp>``, the Python
    installation (``sys.prefix``, ``sys.base_prefix``) by ``<python>``, the
    current folder by ``<cwd>`` and the home folder by ``~``.
    """
    folders: dict[str, str] = {}
    named = [(workdir, "<workdir>"), (tempfile.gettempdir(), "<tmp>")]
    named += [(sys.prefix, "<python>"), (sys.base_prefix, "<python>"), (os.getcwd(), "<cwd>")]
    named.append((os.path.expanduser("~"), "~"))
    for folder, token in named:
        if folder is None:
            continue
        for form in (str(folder), str(Path(folder).resolve())):
            if len(form) > 1 and form not in folders:  # "/" alone is not a folder worth hiding
                folders[form] = token
    for form in sorted(folders, key=len, reverse=True):
        text = re.sub(re.escape(form) + r"(?![\w.-])", folders[form], text)  # tokens hold no backslash
    return text


def batch_size_problem(value: object) -> str | None:
    """What is wrong with a system's declared ``batch_size`` (``None`` is fine: no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"declares batch_size {quote(value)} ({type(value).__name__}); batch_size must be an integer >= 1"
    return None


def text_problem(value: str) -> str | None:
    """What keeps the string ``value`` out of a UTF-8 file, or ``None``: ``"the character '\\udce9', which UTF-8
    cannot encode"`` (a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"the character {ascii(value[err.start : err.end])}, which UTF-8 cannot encode"
    return None


def _string_problem(position: int, field: str, value: object) -> str | None:
    """What is wrong with memory ``position``'s ``field`` (text or id): not a str, or not UTF-8-encodable."""
    if not isinstance(value, str):
        return f"memory {position} has {field} {quote(value, 60)} ({type(value).__name__}), not a str"
    problem = text_problem(value)
    return None if problem is None else f"memory {position} has {field} {quote(value, 60)} holding {problem}"


def _sources_problem(position: int, sources: object) -> str | None:
    """What is wrong with memory ``position``'s sources: ``None`` or a sequence (list, tuple) of UTF-8 strings."""
    if sources is None:
        return None
    if isinstance(sources, (str, bytes, bytearray)) or not isinstance(sources, Sequence):
        return f"memory {position} has sources {quote(sources, 60)}, not a list or tuple of entry ids"
    for source in sources:
        if not isinstance(source, str):
            return (
                f"memory {position} has the source {quote(source, 60)} ({type(source).__name__}), not a str; "
                "sources are entry ids"
            )
        problem = text_problem(source)
        if problem is not None:
            return f"memory {position} has the source {quote(source, 60)} holding {problem}"
    return None


def memories_problem(result: object, k: int) -> str | None:
    """What is wrong with ``search``'s result for depth ``k``, or ``None``.

    A result is a ``list`` or ``tuple`` of at most ``k``
    :class:`~agentmemory.systems.base.Memory` records; each has ``str``
    text that UTF-8 can encode (no lone surrogate), a score that is ``None``
    or a finite real number, an id that is ``None`` or such a ``str`` (ids
    unique within the result), sources ``None`` or a sequence (a list, a
    tuple) of such strings, ``created_at`` ``None`` or a ``datetime``.
    Memories are counted from 1 in messages.
    """
    if not isinstance(result, (list, tuple)):
        return f"returned a {type(result).__name__}, not a list of Memory"
    if len(result) > k:
        return f"returned {len(result)} memories for k={k}; search(query, k) returns at most k"
    seen: dict[str, int] = {}
    for position, memory in enumerate(result, start=1):
        if not isinstance(memory, Memory):
            return f"memory {position} is a {type(memory).__name__}, not a Memory"
        problem = _string_problem(position, "text", memory.text)
        if problem is not None:
            return problem
        score = memory.score
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                return f"memory {position} has score {quote(score, 60)} ({type(score).__name__}), not a number"
            if not math.isfinite(float(score)):
                return f"memory {position} has the score {float(score)!r}; scores must be finite numbers or None"
        if memory.id is not None:
            problem = _string_problem(position, "id", memory.id)
            if problem is not None:
                return problem
            identity = str.__str__(memory.id)
            if identity in seen:
                return f"memories {seen[identity]} and {position} have the same id {quote(identity, 60)}"
            seen[identity] = position
        problem = _sources_problem(position, memory.sources)
        if problem is not None:
            return problem
        if memory.created_at is not None and not isinstance(memory.created_at, datetime):
            return (
                f"memory {position} has created_at {quote(memory.created_at, 60)} "
                f"({type(memory.created_at).__name__}), not a datetime or None"
            )
    return None


def plain_memories(result: Sequence[Memory]) -> tuple[Memory, ...]:
    """``result`` (one :func:`memories_problem` passed) copied into plain :class:`Memory` records.

    Text, id and sources are exact ``str`` values (a ``str`` subclass of the
    system's is copied by ``str.__str__``, which runs none of its code),
    sources a ``tuple`` (a list is accepted and becomes one), the score a
    ``float``.
    """
    return tuple(
        Memory(
            text=str.__str__(m.text),
            score=None if m.score is None else float(m.score),
            id=None if m.id is None else str.__str__(m.id),
            sources=None if m.sources is None else tuple(str.__str__(s) for s in m.sources),
            created_at=m.created_at,
        )
        for m in result
    )


def source_problem(position: int, source: str, kind: str, other_scope: str | None = None) -> str:
    """The words for memory ``position``'s bad ``source`` (already scrubbed of paths).

    ``kind`` is ``"unknown"`` (not a turn of the collection), ``"leak"`` (a
    turn of ``other_scope``: a leak between conversations) or
    ``"not_ingested"`` (a turn of the scope not given yet, as under an
    as-of replay).
    """
    shown = quote(source, 60)
    if kind == "leak":
        return f"memory {position} names the source {shown} of scope {quote(other_scope, 60)} (a leak between conversations)"
    if kind == "not_ingested":
        return f"memory {position} names the source {shown}, which was not ingested yet"
    return f"memory {position} names the source {shown}, which is not an entry of the collection"
