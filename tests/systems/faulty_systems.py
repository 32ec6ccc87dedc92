"""Memory systems that break the protocol one way each, for the fault tests (``faulty_systems:Faulty[fault=...]``)."""

from __future__ import annotations

import threading
from pathlib import Path

from agentmemory.systems import Memory

FAULTS = (
    "raise_ingest",
    "raise_search",
    "hang",
    "not_list",
    "nan",
    "inf",
    "too_many",
    "duplicate_ids",
    "leak",
    "unknown_source",
    "not_str",
    "workdir_path",
    "machine_paths",
    "none",
)
released = threading.Event()  # set by the tests to let a hung call end


class Faulty:
    """Keeps turns verbatim; ``fault`` says how it misbehaves; ``closed`` counts close() calls across instances."""

    closed = 0

    def __init__(self, fault: str = "none", scope=None, workdir=None) -> None:
        self.fault = fault
        self.workdir = workdir
        self.turns: list = []

    def ingest(self, turns) -> None:
        if self.fault == "raise_ingest":
            raise RuntimeError("disk full")
        self.turns.extend(turns)

    def search(self, query: str, k: int):
        fault = self.fault
        first = self.turns[0]
        good = [Memory(t.text, score=1.0, id=t.entry_id, sources=(t.entry_id,)) for t in self.turns[:k]]
        if fault == "raise_search":
            raise RuntimeError("index\ncorrupt")
        if fault == "hang":
            released.wait(30)
            return good
        if fault == "not_list":
            return {"text": first.text}
        if fault in ("nan", "inf"):
            return [Memory(first.text, score=float(fault))]
        if fault == "too_many":  # k + 1 memories, however few turns (systems are asked past the token budgets)
            return [Memory(self.turns[i % len(self.turns)].text) for i in range(k + 1)]
        if fault == "duplicate_ids":
            return [Memory(first.text, id="m1"), Memory(first.text, id="m1")]
        if fault == "leak":
            return [Memory(first.text, sources=("conv-2/D1:1",))]
        if fault == "unknown_source":
            return [Memory(first.text, sources=("nowhere",))]
        if fault == "workdir_path":  # what a system keeping files says when one is missing
            (Path(self.workdir) / "index" / "memories.db").read_bytes()
        if fault == "machine_paths":
            raise RuntimeError(f"no model in {Path.cwd() / 'models'} nor {Path.home() / '.cache'}")
        if fault == "not_str":
            return [Memory(b"bytes")]  # type: ignore[arg-type]
        return good

    def close(self) -> None:
        Faulty.closed += 1
