"""Hostile memory systems for the boundary tests (``am_systems:Hostile[fault=...]``).

:class:`Hostile` keeps the turns it is given verbatim and answers with them
(each memory naming its turn as its source), so with ``fault=none`` it is a
sound system.  ``fault`` makes it misbehave in one call: change the working
folder, end with ``SystemExit`` or another ``BaseException``, end the
process, return values no writer could hold, or change the list of turns it
was given.  The module is outside the ``agentmemory`` package, so the
library treats it as a plugin.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agentmemory.retrievers import BM25
from agentmemory.systems import Memory

ELSEWHERE = os.environ.get("AM_ELSEWHERE", "elsewhere")
"""Where the ``chdir_*`` faults move the working folder (the tests set it, or ``AM_ELSEWHERE``, to a folder of
their own)."""


class Stop(BaseException):  # noqa: N818 - named for what it does to a caller that lets it through
    """A BaseException of the plugin's own, neither an Exception nor SystemExit."""


def _misbehave(fault: str, call: str) -> None:
    """The faults that do the same in any call: ``<what>_<call>``."""
    what, _, where = fault.rpartition("_")
    if where != call:
        return
    if what == "chdir":
        os.chdir(ELSEWHERE)
    elif what == "exit0":
        sys.exit(0)
    elif what == "exit3":
        sys.exit(3)
    elif what == "generatorexit":
        raise GeneratorExit
    elif what == "stop":
        raise Stop("stopped on purpose")
    elif what == "osexit":
        os._exit(0)


class Hostile:
    """Keeps turns verbatim and answers with the first ``k``; ``fault`` says how it misbehaves."""

    label = "Hostile"

    def __init__(self, fault: str = "none", scope: Any = None, workdir: Path | None = None) -> None:
        self.fault = fault
        _misbehave(fault, "start")
        self.turns: list[Any] = []

    def ingest(self, turns: Any) -> None:
        _misbehave(self.fault, "ingest")
        self.turns.extend(turns)
        if self.fault == "empty_turns":
            turns.clear()
        elif self.fault == "pop_turn":
            turns.pop(0)

    def search(self, query: str, k: int) -> list[Memory]:
        _misbehave(self.fault, "search")
        fault = self.fault
        if fault == "raise_surrogate":
            raise RuntimeError("caf\udce9 broke")
        if fault == "surrogate_text":
            return [Memory("caf\udce9", sources=(self.turns[0].entry_id,))]
        if fault == "surrogate_id":
            return [Memory("text", id="m-\ud800")]
        if fault == "surrogate_source":
            return [Memory("text", sources=("conv-1/\ud800",))]
        if fault == "list_sources":  # Memory makes a list a tuple: a list set past it reaches the replay's check
            memories = [Memory(t.text, id=t.entry_id, sources=(t.entry_id,)) for t in self.turns[:k]]
            for memory in memories:
                object.__setattr__(memory, "sources", list(memory.sources or ()))
            return memories
        return [Memory(t.text, id=t.entry_id, sources=(t.entry_id,)) for t in self.turns[:k]]

    def params(self) -> dict[str, Any]:
        _misbehave(self.fault, "params")
        if self.fault == "params_set":
            return {"tags": {"a", "b"}}
        if self.fault == "params_nan":
            return {"threshold": float("nan")}
        if self.fault == "params_key":
            return {1: "one"}
        return {"fault": self.fault}

    def close(self) -> None:
        _misbehave(self.fault, "close")


class Wandering(BM25):
    """A plugin retriever (BM25) that moves the working folder to :data:`ELSEWHERE` in every call."""

    name = "wandering"
    label = "Wandering"

    def add(self, entries: Any) -> None:
        os.chdir(ELSEWHERE)
        super().add(entries)

    def search(self, query: Any, k: int) -> Any:
        os.chdir(ELSEWHERE)
        return super().search(query, k)

    def params(self) -> dict[str, Any]:
        os.chdir(ELSEWHERE)
        return super().params()


class ParamsSet(BM25):
    """A plugin retriever (BM25) whose params() holds a set, which JSON cannot hold."""

    name = "params-set"
    label = "Params set"

    def params(self) -> dict[str, Any]:
        return {**super().params(), "stopwords": {"a", "the"}}
