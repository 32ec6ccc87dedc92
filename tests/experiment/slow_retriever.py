"""A retriever for tests that stop an experiment mid-task: BM25 whose every search first waits.

``slow_retriever:Slow[delay=0.1,variant=2]``: ``delay`` seconds per search;
``variant`` changes nothing but the system's key, so a grid can hold many
equally slow systems.  When ``AGENTMEMORY_TEST_MARKERS`` names a folder, each
search of a system with a delay first writes a file ``<pid>`` there: a test reads it to know which
process is inside a task right now.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentmemory.retrievers import BM25


class Slow:
    """BM25 (k1 = 1.2, b = 0.75) that sleeps ``delay`` seconds before each search."""

    name = "slow"
    label = "Slow BM25"

    def __init__(self, delay: float = 0.05, variant: int = 0) -> None:
        self.delay = delay
        self.variant = variant
        self._bm25 = BM25()

    def add(self, entries) -> None:
        self._bm25.add(entries)

    def search(self, query, k: int):
        markers = os.environ.get("AGENTMEMORY_TEST_MARKERS")
        if markers and self.delay > 0:
            Path(markers, str(os.getpid())).write_text("searching", encoding="utf-8")
        time.sleep(self.delay)
        return self._bm25.search(query, k)

    def params(self) -> dict:
        return {"delay": self.delay, "variant": self.variant}
