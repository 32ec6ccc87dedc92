"""Progress of a live run's calls on stderr: a bar on a terminal, plain lines elsewhere (CI logs, notebooks, files).

Answering a thousand questions through a hosted model takes minutes.  On a
terminal :class:`CallProgress` draws a tqdm bar over the questions, the calls
sent, read from the cache and retried beside it; where stderr is not a
terminal (a bar there is a stream of carriage returns) it writes one plain
line every ``interval`` seconds at most, and one when the run ends, as a
memory system's replay does (:mod:`agentmemory.systems.progress`)::

    answering bm25+gpt-4o-mini: 120 of 1,986 questions, 240 calls sent (3 retried), 0 read from the cache
    answered bm25+gpt-4o-mini: 1,986 questions, 3,972 calls sent (7 retried), 0 read from the cache in 312.4 s

Wall-clock figures: shown, never written into an artifact.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from agentmemory.systems.progress import INTERVAL

__all__ = ["CallProgress"]


class CallProgress:
    """The progress of one live run's questions (see the module docstring).

    Args:
        stream: where to write (default: ``sys.stderr`` when started).
        interval: seconds between two plain lines at most.
        bar: a tqdm bar (``True``), plain lines (``False``), or as ``stream`` is a terminal or not (``None``).
        now: the clock lines are spaced by (``time.monotonic``; a test passes its own).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        interval: float = INTERVAL,
        bar: bool | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.bar_wanted = bar
        self.now = now
        self.label = ""
        self.total = 0
        self.done = 0
        self._counts: Callable[[], tuple[int, int, int]] = lambda: (0, 0, 0)
        self._began = 0.0
        self._last = 0.0
        self._bar: Any = None
        self._lock = threading.Lock()

    def start(self, label: str, questions: int, counts: Callable[[], tuple[int, int, int]]) -> None:
        """A run of the answer system ``label`` over ``questions`` begins; ``counts()`` gives its calls so far
        (sent, read from the cache, retried)."""
        self.stream = self.stream if self.stream is not None else sys.stderr
        self.label, self.total, self.done, self._counts = label, questions, 0, counts
        self._began = self._last = self.now()
        wanted = self.bar_wanted if self.bar_wanted is not None else _is_terminal(self.stream)
        if wanted:
            from tqdm.auto import tqdm  # a dependency; loaded only for a bar

            self._bar = tqdm(total=questions, desc=f"answer {label}", unit="question", file=self.stream)

    def question(self) -> None:
        """One more question's calls are done (called from the worker threads)."""
        with self._lock:
            self.done += 1
            if self._bar is not None:
                self._bar.set_postfix_str(self._calls(), refresh=False)
                self._bar.update(1)
                return
            moment = self.now()
            if moment - self._last < self.interval:
                return
            self._last = moment
            self._write(f"answering {self.label}: {self.done:,} of {self.total:,} questions, {self._calls()}")

    def finish(self) -> None:
        """The run ended: the bar closed, or the last plain line written."""
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
                return
            self._write(
                f"answered {self.label}: {self.done:,} questions, {self._calls()} in {self.now() - self._began:.1f} s"
            )

    def _calls(self) -> str:
        sent, cached, retried = self._counts()
        return f"{sent:,} calls sent ({retried:,} retried), {cached:,} read from the cache"

    def _write(self, line: str) -> None:
        assert self.stream is not None
        self.stream.write(line + "\n")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False
