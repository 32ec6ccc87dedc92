"""Progress of a replay on stderr: a bar on a terminal, plain lines elsewhere (CI logs, notebooks, files).

A replay of a real system can take minutes with nothing to show.  On a
terminal :class:`ReplayProgress` draws a tqdm bar over the scopes; where
stderr is not a terminal (a bar there is a stream of carriage returns) it
writes one plain line every ``interval`` seconds at most, and one when the
replay ends::

    replaying MCP server-memory: scope 3 of 10, 1,234 turns, 56 questions
    replayed MCP server-memory: 10 scopes, 5,882 turns, 1,986 questions in 151.2 s

The lines are written between calls (after an ingest batch or a question):
a call that runs for longer than ``interval`` delays the next line.  With an
executor, scopes are counted as their results are read back (in scope order).
Wall-clock figures: shown, never written into an artifact.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["INTERVAL", "ReplayProgress"]

INTERVAL = 10.0
"""Seconds between two plain progress lines at most (where stderr is not a terminal)."""


class ReplayProgress:
    """The progress of one system's replay (see the module docstring).

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
        self.scopes = 0
        self.current = 0
        self.turns = 0
        self.questions = 0
        self._began = 0.0
        self._last = 0.0
        self._bar: Any = None

    def start(self, label: str, scopes: int) -> None:
        """A replay of the system ``label`` over ``scopes`` scopes begins."""
        self.stream = self.stream if self.stream is not None else sys.stderr
        self.label, self.scopes = label, scopes
        self.current = self.turns = self.questions = 0
        self._began = self._last = self.now()
        wanted = self.bar_wanted if self.bar_wanted is not None else _is_terminal(self.stream)
        if wanted:
            from tqdm.auto import tqdm  # a dependency; loaded only for a bar

            self._bar = tqdm(total=scopes, desc=f"replay {label}", unit="scope", file=self.stream)

    def scope(self, position: int) -> None:
        """Scope ``position`` (0-based) begins (serially) or its result was read (with an executor)."""
        if self._bar is not None and position > self.current:
            self._bar.update(position - self.current)
        self.current = position
        self._maybe_line()

    def tick(self, turns: int, questions: int) -> None:
        """``turns`` more turns ingested, ``questions`` more questions answered."""
        self.turns += turns
        self.questions += questions
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self.turns:,} turns, {self.questions:,} questions", refresh=False)
        self._maybe_line()

    def finish(self) -> None:
        """The replay ended: the bar closed, or the last plain line written."""
        if self._bar is not None:
            self._bar.update(self.scopes - self.current)
            self._bar.close()
            self._bar = None
            return
        self._write(
            f"replayed {self.label}: {self.scopes:,} scope{'s' if self.scopes != 1 else ''}, {self.turns:,} turns, "
            f"{self.questions:,} questions in {self.now() - self._began:.1f} s"
        )

    def _maybe_line(self) -> None:
        if self._bar is not None:
            return
        moment = self.now()
        if moment - self._last < self.interval:
            return
        self._last = moment
        shown = min(self.current + 1, self.scopes)
        self._write(
            f"replaying {self.label}: scope {shown:,} of {self.scopes:,}, {self.turns:,} turns, "
            f"{self.questions:,} questions"
        )

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
