"""The processes a memory system starts, found and ended, so none outlives the replay (Linux: read from ``/proc``).

A memory system may start processes: an MCP server (:mod:`agentmemory.systems.mcp`), a Python system's
own helper (``subprocess.Popen`` in its ``__init__``).  The replay runs each scope inside
:func:`children_ended`: when the scope ends (after ``close()``, also after a failure or a timeout) every
process that **descends from the process running the replay** (its child, its child's child, ...) and was
not there when the scope began is sent ``SIGTERM``; one still running :data:`GRACE` seconds later gets
``SIGKILL``.  An ended process that is this process's own child stays a zombie (dead, holding no
resources) until its owner collects its exit status (its ``subprocess.Popen``, asyncio's child watcher, or
this process's exit): reaping it here would take that status from its owner.

What it cannot see, precisely: a process that left the tree (it was started by a process that exited
before the scope ended, e.g. a daemon's double fork, and was re-parented to init) is not found, whatever
its process group or session.  Without ``/proc`` (macOS, Windows) nothing is found and nothing is ended:
a system there must end its own processes in ``close()``.

When scopes of one process overlap (an executor running them in threads), the processes are ended when
the last of the overlapping scopes ends, measured from when the first began: a scope never ends a process
another scope still uses.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["GRACE", "children_ended", "descendants", "end_processes", "pids", "stat"]

GRACE = 2.0
"""Seconds a process has to exit after ``SIGTERM`` before it gets ``SIGKILL``."""

_GONE = ("Z", "X")  # zombie (exited, not yet reaped) and dead: not running any more


def stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent pid, process group, session) of ``pid`` from /proc, or None (gone, or no /proc)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def pids() -> list[int]:
    """Every process id /proc lists (none without /proc)."""
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def descendants(root: int | None = None) -> set[int]:
    """The running (not zombie) processes descended from ``root`` (default: this process), ``root`` excluded."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid in pids():
        found = stat(pid)
        if found is not None and found[0] not in _GONE:
            children.setdefault(found[1], []).append(pid)
    out: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _running(pid: int) -> bool:
    found = stat(pid)
    return found is not None and found[0] not in _GONE


def _wait(pids: list[int], seconds: float) -> list[int]:
    """Wait up to ``seconds`` for ``pids`` to stop running (zombies count as stopped); those still running."""
    deadline = time.monotonic() + seconds
    while True:
        pids = [pid for pid in pids if _running(pid)]
        if not pids or time.monotonic() >= deadline:
            return pids
        time.sleep(0.01)


def end_processes(targets: Iterable[int], grace: float = GRACE) -> None:
    """``SIGTERM`` to each of ``targets``, ``SIGKILL`` to those still running ``grace`` seconds later."""
    alive = [pid for pid in targets if _running(pid)]
    if not alive:  # always so without /proc (and Windows has no SIGKILL to name)
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        alive = _wait(alive, wait)
        if not alive:
            return


class _Watch:
    """This process's overlapping scopes: the processes there were when the first began, and how many run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.before: set[int] = set()


_WATCH = _Watch()


@contextlib.contextmanager
def children_ended(grace: float = GRACE) -> Iterator[None]:
    """Run the body; then end every process descended from this one that it started (see the module docstring)."""
    with _WATCH.lock:
        if _WATCH.active == 0:  # every process there is (a pid is cheap to list, a parent is not)
            _WATCH.before = set(pids())
        _WATCH.active += 1
    try:
        yield
    finally:
        with _WATCH.lock:  # the targets are fixed here: a scope beginning later keeps what it starts
            _WATCH.active -= 1
            targets = sorted(descendants() - _WATCH.before) if _WATCH.active == 0 else []
        end_processes(targets, grace)
