"""The append-only event log, with injectable clocks and id sources.

A :class:`~agentmemory.store.MemoryStore` records every change and every
retrieval as an :class:`~agentmemory.records.Event`.  Where the event id and
timestamp come from is injected:

* live use: :class:`WallClock` and :class:`RandomIds` (UTC now, random hex ids);
* evaluation runs: :class:`SteppingClock` and :class:`HashIds`, which derive
  both from the run's inputs and seed, so two runs with the same inputs
  produce the same log, byte for byte.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Callable

from .records import Event

__all__ = ["Clock", "EventLog", "HashIds", "IdSource", "RandomIds", "SteppingClock", "WallClock"]

Clock = Callable[[], datetime]
IdSource = Callable[[], str]


class WallClock:
    """The current time in UTC, to the microsecond (live use only)."""

    def __call__(self) -> datetime:
        return datetime.now(timezone.utc)


class RandomIds:
    """Random 16-hex-digit ids from :mod:`secrets` (live use only)."""

    def __call__(self) -> str:
        return secrets.token_hex(8)


class SteppingClock:
    """A deterministic clock: ``start``, ``start + step``, ``start + 2 * step``, ...

    ``start`` must be timezone-aware.
    """

    def __init__(self, start: datetime, step: timedelta = timedelta(seconds=1)) -> None:
        if start.tzinfo is None:
            raise ValueError("SteppingClock needs a timezone-aware start")
        self._next = start
        self._step = step

    def __call__(self) -> datetime:
        now = self._next
        self._next = now + self._step
        return now


class HashIds:
    """Deterministic ids: the first 16 hex digits of ``sha256(namespace + ":" + n)``.

    ``n`` counts 0, 1, 2, ... per call.  Give each run a namespace that names
    its inputs and seed (for example the collection's digest and the seed) and
    the ids are reproducible yet differ between runs of different inputs.
    """

    def __init__(self, namespace: str) -> None:
        self._namespace = namespace
        self._n = 0

    def __call__(self) -> str:
        text = f"{self._namespace}:{self._n}"
        self._n += 1
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class EventLog:
    """An append-only sequence of :class:`Event` records."""

    def __init__(self, clock: Clock | None = None, ids: IdSource | None = None) -> None:
        self._clock: Clock = clock if clock is not None else WallClock()
        self._ids: IdSource = ids if ids is not None else RandomIds()
        self._events: list[Event] = []

    def now(self) -> datetime:
        """Read this log's clock (advances a :class:`SteppingClock`)."""
        return self._clock()

    def record(
        self,
        type: str,
        entry_ids: Sequence[str] = (),
        *,
        query_id: str | None = None,
        retriever: str | None = None,
    ) -> Event:
        """Append one event stamped by this log's clock and id source; return it."""
        event = Event(
            event_id=self._ids(),
            type=type,
            timestamp=self._clock(),
            entry_ids=tuple(entry_ids),
            query_id=query_id,
            retriever=retriever,
        )
        self._events.append(event)
        return event

    def __iter__(self) -> Iterator[Event]:
        return iter(tuple(self._events))

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: int) -> Event:
        return self._events[index]

    def to_dicts(self) -> list[dict]:
        """The log as JSON-ready dicts, oldest first."""
        return [event.to_dict() for event in self._events]
