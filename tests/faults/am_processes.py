"""Memory systems that start a process or hang, for ``test_processes_and_names.py`` (``am_processes:<Name>``).

Both keep the turns verbatim and answer a search with the first k turns, each its own source.  ``Spawner``
starts a child process that sleeps and never ends it (its ``close()`` forgets it); ``Hangs`` hangs in one
call (``at``: ``start``, ``ingest`` or ``search``) until the test sets :data:`released`.  Both count their
``close()`` calls, and ``Spawner`` lists the pids it started in :data:`started`.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

from agentmemory.systems import Memory

started: list[int] = []  # the children Spawner started, in order
released = threading.Event()  # set by a test to let every hung call return


class _Verbatim:
    closed = 0

    def __init__(self) -> None:
        self.turns: list[Any] = []

    def ingest(self, turns: Any) -> None:
        self.turns.extend(turns)

    def search(self, query: str, k: int) -> list[Memory]:
        return [Memory(t.text, score=1.0, id=t.entry_id, sources=(t.entry_id,)) for t in self.turns[:k]]

    def close(self) -> None:
        type(self).closed += 1


class Spawner(_Verbatim):
    """Starts ``python -c 'sleep 600'`` when made, and leaves it running."""

    closed = 0

    def __init__(self) -> None:
        super().__init__()
        self.child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        started.append(self.child.pid)


class Hangs(_Verbatim):
    """Hangs in ``at`` (start, ingest or search) until :data:`released` is set (at most 30 s)."""

    closed = 0

    def __init__(self, at: str = "search") -> None:
        super().__init__()
        self.at = at
        if at == "start":
            released.wait(30)

    def ingest(self, turns: Any) -> None:
        if self.at == "ingest":
            released.wait(30)
        super().ingest(turns)

    def search(self, query: str, k: int) -> list[Memory]:
        if self.at == "search":
            released.wait(30)
        return super().search(query, k)
