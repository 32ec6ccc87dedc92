"""The append-only event log, with injectable clocks and id sources.

A :class:`~agentmemory.store.core.MemoryStore` records every change and every
retrieval as an :class:`~agentmemory.records.Event`.  Where the event id and
timestamp come from is injected:

* live use: :class:`WallClock` and :class:`RandomIds` (UTC now, random hex ids);
* evaluation runs: :class:`SteppingClock` and :class:`HashIds`, which derive
  both from the run's inputs and seed, so two runs with the same inputs
  produce the same log, byte for byte.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone

from agentmemory.errors import ParameterError
from agentmemory.records import LATEST, Event

__all__ = [
    "Clock",
    "EventLog",
    "HashIds",
    "IdSource",
    "RandomIds",
    "SteppingClock",
    "WallClock",
]

Clock = Callable[[], datetime]
IdSource = Callable[[], str]


class WallClock:
    """The current time in UTC, to the microsecond (live use only)."""

    def __call__(self) -> datetime:
        return datetime.now(timezone.utc)


class RandomIds:
    """Random 16-hex-digit ids from the operating system's randomness (``os.urandom``, as :mod:`secrets`; live use only)."""

    def __call__(self) -> str:
        return os.urandom(8).hex()  # what secrets.token_hex(8) is, without importing random and hmac


class SteppingClock:
    """A deterministic clock: ``start``, ``start + step``, ``start + 2 * step``, ...

    ``start`` must be a timezone-aware datetime and ``step`` a timedelta >= 0.
    A clock asked for a time past the last a :class:`datetime` can hold
    (9999-12-31T23:59:59.999999) raises :class:`~agentmemory.errors.ParameterError`
    instead of Python's ``OverflowError`` (loaders keep times before
    :data:`agentmemory.records.LATEST`, so an evaluation has a year of seconds to count through).
    """

    def __init__(self, start: datetime, step: timedelta = timedelta(seconds=1)) -> None:
        if not isinstance(start, datetime) or start.tzinfo is None:
            raise ParameterError(
                "start",
                start,
                "is not a timezone-aware datetime",
                "SteppingClock needs one, e.g. datetime(2026, 3, 1, tzinfo=timezone.utc)",
            )
        if not isinstance(step, timedelta) or step < timedelta(0):
            raise ParameterError(
                "step", step, "is not a timedelta >= 0", "pass e.g. timedelta(seconds=1); time never runs backwards"
            )
        self._next: datetime | None = start
        self._last = start
        self._step = step

    def __call__(self) -> datetime:
        now = self._next
        if now is None:
            raise ParameterError(
                "clock",
                f"{self._last.isoformat()} + {self._step}",
                "steps past the last time a datetime can hold (the end of the year 9999)",
                f"start the clock earlier: loaded timestamps must be before {LATEST.date().isoformat()}",
            )
        try:
            self._next = now + self._step
        except OverflowError:
            self._next = None
        self._last = now
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
        timestamp: datetime | None = None,
        query_text: str | None = None,
    ) -> Event:
        """Append one event stamped by this log's id source and clock; return it.

        ``timestamp`` (a time already read from :meth:`now`) is used instead
        of reading the clock again, so an event can carry the same time as
        the entry it records.
        """
        event = Event(
            event_id=self._ids(),
            type=type,
            timestamp=self._clock() if timestamp is None else timestamp,
            entry_ids=tuple(entry_ids),
            query_id=query_id,
            retriever=retriever,
            query_text=query_text,
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
