"""``agentrecall-db`` (a memory store in one SQLite file, keyword recall) as a memory system.

``agentrecall`` opens ``agentrecall.Memory(<workdir>/agentrecall.db, embeddings=False)``
for each scope: one SQLite file per scope in the scope's temporary folder, so
conversations never meet.  ``embeddings=False`` because the library's default
``"auto"`` turns its semantic search on whenever model2vec and sqlite-vec are
importable, which would make the results depend on what else is installed.

* ``ingest``: one ``add_many`` per batch; each turn is one memory whose
  content is the turn's text verbatim and whose metadata keeps our entry id
  (``agentmemory_entry``) and the turn's time.
* ``search``: ``Memory.search(query, k=k)``: SQLite FTS5 over the contents
  (porter stemming), the query's word tokens OR-ed, ranked by FTS5's bm25,
  then reciprocal-rank fusion with no other list, so a memory's ``score`` is
  ``1 / (60 + r)`` for its 0-based rank ``r`` (recency and importance weights
  stay 0; SQLite orders equal bm25 values).  Each memory has the system's
  row id as ``id``, the entry id kept in its metadata as ``sources`` (so
  ``sources`` attribution, what ``auto`` picks, applies) and the turn's time
  as ``created_at``.

SQLite connections serve the thread that opened them, and the replay may
call each method from a different worker thread: every call to the library
runs on one thread of this system's own (a one-worker executor).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from agentmemory.errors import MemorySystemError
from agentmemory.systems.base import Memory, Turn

__all__ = ["AgentRecallSystem"]

T = TypeVar("T")

_ENTRY = "agentmemory_entry"
_CREATED = "agentmemory_created_at"


class AgentRecallSystem:
    """agentrecall-db's ``Memory`` for one scope (see the module docstring).

    Args:
        scope: the scope replayed (for messages).
        workdir: the scope's temporary folder, holding ``agentrecall.db``; a temporary folder of its own when
            ``None``.
    """

    label = "agentrecall-db"
    name = "agentrecall"

    def __init__(self, *, scope: str | None = None, workdir: Path | None = None) -> None:
        self.scope = scope
        self._own_workdir: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._own_workdir = tempfile.TemporaryDirectory(prefix="agentmemory-agentrecall-")
            workdir = Path(self._own_workdir.name)
        # agentrecall-db (the agentrecall extra) is imported here so `import agentmemory` never imports it.
        try:
            import agentrecall  # type: ignore[import-untyped]  # no py.typed
        except ImportError as err:
            self._cleanup()
            raise MemorySystemError(
                self.name,
                scope,
                "start",
                f"agentrecall-db is not installed ({err}); pip install 'agentmemory-eval[agentrecall]'",
            ) from None
        self._version = str(getattr(agentrecall, "__version__", "unknown"))
        self._thread: ThreadPoolExecutor | None = ThreadPoolExecutor(1, thread_name_prefix="agentrecall")
        path = Path(workdir) / "agentrecall.db"
        self._memory: Any = self._on_thread(lambda: agentrecall.Memory(path, embeddings=False))

    def _on_thread(self, fn: Callable[[], T]) -> T:
        """``fn()`` run on this system's own thread (the one its SQLite connection belongs to)."""
        assert self._thread is not None, "the system is closed"
        return self._thread.submit(fn).result()

    def ingest(self, turns: Sequence[Turn]) -> None:
        """Store each turn as one memory (text verbatim; our entry id and time in its metadata)."""
        items = [
            {
                "content": turn.text,
                "metadata": {
                    _ENTRY: turn.entry_id,
                    _CREATED: None if turn.created_at is None else turn.created_at.isoformat(),
                },
            }
            for turn in turns
        ]
        if items:
            self._on_thread(lambda: self._memory.add_many(items))

    def search(self, query: str, k: int) -> list[Memory]:
        """agentrecall's keyword search, best first, at most ``k``."""
        out = []
        for hit in self._on_thread(lambda: self._memory.search(query, k=k)):
            metadata = hit.metadata or {}
            entry = metadata.get(_ENTRY)
            created = metadata.get(_CREATED)
            out.append(
                Memory(
                    text=hit.content,
                    score=float(hit.score),
                    id=str(hit.id),
                    sources=(entry,) if isinstance(entry, str) else None,
                    created_at=datetime.fromisoformat(created) if isinstance(created, str) else None,
                )
            )
        return out

    def params(self) -> dict[str, Any]:
        """What shapes the results: the library's version and its search settings."""
        return {"agentrecall_db": self._version, "embeddings": False, "recency_weight": 0.0, "importance_weight": 0.0}

    def close(self) -> None:
        """Close the SQLite file (idempotent)."""
        memory, self._memory = getattr(self, "_memory", None), None
        thread, self._thread = getattr(self, "_thread", None), None
        if thread is not None:
            if memory is not None:
                thread.submit(memory.close).result()
            thread.shutdown(wait=True)
        self._cleanup()

    def _cleanup(self) -> None:
        if self._own_workdir is not None:
            self._own_workdir.cleanup()
            self._own_workdir = None
