"""Typed records at the edges: memories, queries, hits and events.

Files and dicts are converted into these frozen dataclasses once, when they
are loaded; nothing inside the library passes raw dicts around.

**Every record checks its fields when it is built** and raises
:class:`~agentmemory.errors.ParameterError` naming the field, so a bad value
is refused where it was made, not as a ``TypeError`` deep inside a later
search:

* ids (``MemoryEntry.id``, ``Hit.entry_id``, each of ``derived_from``) are
  non-empty strings without control characters (:func:`id_problem`);
  ``Query.id`` may be ``""``, a query without an id;
* ``text`` is a ``str``; ``tags`` a sequence of non-empty strings (a list or
  a tuple, stored as a tuple; a lone string such as ``"diet"`` is refused,
  not split into characters);
* timestamps (``created_at``, ``asked_at``) are timezone-aware datetimes;
* ``scope``, ``group``, ``ref``, ``actor`` are strings or ``None``;
  ``metadata`` a mapping; ``provenance`` a :class:`Provenance`;
* a hit's ``score`` is a real number and its ``rank`` an int >= 1.

The loaders check the same things with the file and line
(:mod:`agentmemory.datasets`) and then build records through ``_trusted``,
an internal constructor that skips the second check; every public
constructor validates.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import repeat
from typing import Any

from agentmemory.errors import ParameterError, quote

__all__ = [
    "LATEST",
    "TIME_RANGE",
    "usable_time",
    "Event",
    "Hit",
    "MemoryEntry",
    "Provenance",
    "Query",
    "id_problem",
    "is_aware",
]

LATEST = datetime(9999, 1, 1, tzinfo=timezone.utc)
"""The first instant a loaded timestamp may not reach.

An evaluation's clock (:class:`agentmemory.store.events.SteppingClock`) counts on from the newest
entry's ``created_at``, one second per event, and :class:`datetime` ends
with the year 9999: stopping loaded times a year short leaves room for
31,536,000 events.
"""

TIME_RANGE = "a time from 0001-01-01T00:00:00Z to 9998-12-31T23:59:59Z"
"""The times loaders accept (see :data:`LATEST`), as messages say it."""


def usable_time(value: datetime) -> datetime | None:
    """``value`` (timezone-aware) in UTC, or ``None`` when it is outside :data:`TIME_RANGE`.

    ``None`` too when UTC cannot hold it at all (``9999-12-31T23:00:00-05:00``
    is in the year 10000 in UTC; ``0001-01-01T00:00:00+01:00`` in the year 0).
    """
    try:
        utc = value.astimezone(timezone.utc)
    except OverflowError:
        return None
    return utc if utc < LATEST else None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ID_RULE = "a non-empty string without control characters"


def id_problem(value: object, *, empty: bool = False) -> str | None:
    """What is wrong with ``value`` as an id, in a message's words, or ``None`` when nothing is.

    An id is a ``str`` without control characters (C0, DEL, C1: Unicode
    category Cc), non-empty unless ``empty``.  (TREC files ask more: no
    white space either; see :mod:`agentmemory.files.trec`.)
    """
    if not isinstance(value, str):
        return "is not a string"
    if not value and not empty:
        return "is empty"
    bad = _CONTROL.search(value)
    if bad is not None:
        return f"contains the control character {ascii(bad.group())}"
    return None


def _check_id(field: str, value: object, record: str, *, empty: bool = False) -> str:
    problem = id_problem(value, empty=empty)
    if problem is not None:
        rule = 'a string without control characters ("" for none)' if empty else _ID_RULE
        raise ParameterError(field, value, problem, f"{record}.{field} must be {rule}")
    return value  # type: ignore[return-value]


def _check_str(field: str, value: object, record: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ParameterError(
            field, value, "is not a string", f"{record}.{field} must be a str" + (" or None" if optional else "")
        )
    return value


def _check_tags(field: str, value: object, record: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    allowed = f"{record}.{field} must be a sequence of non-empty strings, e.g. ('diet', 'food')" + (
        ", or None" if optional else ""
    )
    if isinstance(value, (str, bytes)):
        raise ParameterError(field, value, "is a single string, not a sequence of strings", allowed)
    if not isinstance(value, Sequence):
        raise ParameterError(field, value, "is not a sequence", allowed)
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or not item:
            raise ParameterError(field, value, f"holds {_item(item)}", allowed)
    return items


def _item(item: object) -> str:
    return "an empty string" if item == "" else f"{quote(item, 60)} ({type(item).__name__})"


def _check_time(field: str, value: object, record: str) -> Any:
    if value is not None and not is_aware(value):
        raise ParameterError(
            field,
            value,
            "is not a timezone-aware datetime",
            f"{record}.{field} must be e.g. datetime(2024, 5, 8, 13, 56, tzinfo=timezone.utc), or None when unknown",
        )
    return value


def _check_metadata(value: object, record: str) -> Any:
    if not isinstance(value, Mapping):
        raise ParameterError("metadata", value, "is not a mapping", f"{record}.metadata must be a dict of extra fields")
    return value


_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _trusted(cls: type, values: dict[str, Any]) -> Any:
    """A record of ``cls`` from ``values`` (field name -> value; defaults for the rest), built without checks.

    For loaders that checked every field already, with the file and line;
    a field without a default must be in ``values`` (a ``KeyError`` otherwise).
    """
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = tuple(
            (f.name, f.default if f.default is not dataclasses.MISSING else _REQUIRED) for f in dataclasses.fields(cls)
        )
        _FIELDS[cls] = fields
    record: Any = object.__new__(cls)
    for name, default in fields:
        value = values[name] if name in values or default is _REQUIRED else default
        object.__setattr__(record, name, value)
    return record


_REQUIRED = object()


def _trusted_many(cls: type, columns: Mapping[str, Sequence[Any]], n: int) -> list[Any]:
    """``n`` records of ``cls``, field ``name`` of record ``i`` being ``columns[name][i]`` (defaults for the
    fields not in ``columns``), built without checks and without Python code per record.

    The bulk form of :func:`_trusted`, for loaders that checked whole
    columns at once: each record is made by ``object.__new__`` and each slot
    filled by its descriptor, all through ``map`` (C loops).
    """
    fields = _FIELDS.get(cls)
    if fields is None:
        _trusted(cls, {f.name: None for f in dataclasses.fields(cls)})  # fills the cache
        fields = _FIELDS[cls]
    records: list[Any] = list(map(object.__new__, repeat(cls, n)))
    for name, default in fields:
        if name in columns:
            values: Iterable[Any] = columns[name]
            if len(columns[name]) != n:
                raise ValueError(f"column {name} has {len(columns[name])} values, not {n}")
        elif default is _REQUIRED:
            raise KeyError(name)
        else:
            values = repeat(default, n)
        deque(map(cls.__dict__[name].__set__, records, values), maxlen=0)
    return records


def is_aware(value: object) -> bool:
    """True when ``value`` is a :class:`datetime` that knows its UTC offset (so ages can be computed from it)."""
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() is not None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from.

    Attributes:
        source: the kind of source (``"conversation"``, ``"tool"``, ``"document"``,
            ``"derived"``, ...).
        ref: a reference inside that source (a message id, a file and line, a URL).
        actor: who produced it (``"user"``, ``"assistant"``, a tool name).
        derived_from: ids of the memory entries this one was derived from, in order.
    """

    source: str = "unknown"
    ref: str | None = None
    actor: str | None = None
    derived_from: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_str("source", self.source, "Provenance")
        _check_str("ref", self.ref, "Provenance", optional=True)
        _check_str("actor", self.actor, "Provenance", optional=True)
        derived = self.derived_from
        allowed = "Provenance.derived_from must be a sequence of entry ids, e.g. ('m1', 'm2')"
        if isinstance(derived, (str, bytes)):
            raise ParameterError("derived_from", derived, "is a single string, not a sequence of ids", allowed)
        if not isinstance(derived, Sequence):
            raise ParameterError("derived_from", derived, "is not a sequence", allowed)
        for source in derived:
            problem = id_problem(source)
            if problem is not None:
                which = "" if problem in ("is empty", "is not a string") else f", which {problem}"
                raise ParameterError("derived_from", derived, f"holds {_item(source)}{which}", allowed)
        object.__setattr__(self, "derived_from", tuple(derived))

    @classmethod
    def _trusted(cls, **values: Any) -> Provenance:
        """Built without checks, from fields a loader has checked (see the module docstring)."""
        return _trusted(cls, values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "ref": self.ref,
            "actor": self.actor,
            "derived_from": list(self.derived_from),
        }


class _EmptyMapping(Mapping[str, Any]):
    """An immutable, hashable empty mapping: the one shared default for ``metadata``.

    A fresh ``dict()`` per record costs allocation and garbage-collector
    time that shows at a million entries; one shared immutable empty
    mapping costs nothing and cannot be mutated by accident.
    """

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "{}"


NO_METADATA: Mapping[str, Any] = _EmptyMapping()
UNKNOWN_PROVENANCE = Provenance()


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory: an id, its text, tags, when it was created and where it came from.

    ``created_at`` is a timezone-aware :class:`datetime` (or ``None`` when unknown).
    ``scope`` partitions a store: an entry is only searchable by queries of
    the same scope (a LoCoMo conversation, a user); ``None`` is the shared
    default partition.  ``metadata`` keeps any extra fields a loader found.
    """

    id: str
    text: str
    tags: tuple[str, ...] = ()
    created_at: datetime | None = None
    provenance: Provenance = UNKNOWN_PROVENANCE
    scope: str | None = None
    metadata: Mapping[str, Any] = NO_METADATA

    def __post_init__(self) -> None:
        _check_id("id", self.id, "MemoryEntry")
        _check_str("text", self.text, "MemoryEntry")
        object.__setattr__(self, "tags", _check_tags("tags", self.tags, "MemoryEntry"))
        _check_time("created_at", self.created_at, "MemoryEntry")
        if not isinstance(self.provenance, Provenance):
            raise ParameterError(
                "provenance",
                self.provenance,
                "is not a Provenance",
                "MemoryEntry.provenance must be an agentmemory.Provenance(source=...)",
            )
        _check_str("scope", self.scope, "MemoryEntry", optional=True)
        _check_metadata(self.metadata, "MemoryEntry")

    @classmethod
    def _trusted(cls, **values: Any) -> MemoryEntry:
        """Built without checks, from fields a loader has checked (see the module docstring)."""
        return _trusted(cls, values)

    @classmethod
    def _trusted_many(cls, n: int, **columns: Sequence[Any]) -> list[MemoryEntry]:
        """``n`` entries built without checks from checked columns (field -> one value per entry)."""
        return _trusted_many(cls, columns, n)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "tags": list(self.tags),
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
            "provenance": self.provenance.to_dict(),
        }
        if self.scope is not None:
            out["scope"] = self.scope
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True, slots=True)
class Query:
    """A query: an id, its text and, optionally, the tags it asks about.

    ``tags is None`` means the query carries no tags; the tag scorer then
    derives them from the text (see :mod:`agentmemory.retrievers.tags`).
    ``scope`` restricts the search to entries of the same scope (see
    :class:`MemoryEntry`); ``group`` names the query's group in reports (a
    LoCoMo category, say), ``None`` for none.  ``asked_at`` is when the
    query was asked, a timezone-aware :class:`datetime` (``None`` when
    unknown); time-aware retrievers (``recency``) measure ages from it.

    ``id`` may be ``""``: a query without an id (a plain string searched).

    Raises:
        ParameterError: a field is not what the module docstring says.
    """

    id: str
    text: str
    tags: tuple[str, ...] | None = None
    scope: str | None = None
    group: str | None = None
    metadata: Mapping[str, Any] = NO_METADATA
    asked_at: datetime | None = None

    def __post_init__(self) -> None:
        _check_id("id", self.id, "Query", empty=True)
        _check_str("text", self.text, "Query")
        object.__setattr__(self, "tags", _check_tags("tags", self.tags, "Query", optional=True))
        _check_str("scope", self.scope, "Query", optional=True)
        _check_str("group", self.group, "Query", optional=True)
        _check_metadata(self.metadata, "Query")
        if self.asked_at is not None and not is_aware(self.asked_at):
            raise ParameterError(
                "asked_at",
                self.asked_at,
                "is not a timezone-aware datetime",
                "pass e.g. datetime(2024, 5, 8, 13, 56, tzinfo=timezone.utc), or None when unknown",
            )

    @classmethod
    def _trusted(cls, **values: Any) -> Query:
        """Built without checks, from fields a loader has checked (see the module docstring)."""
        return _trusted(cls, values)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result: the entry id, its score and its 1-based rank."""

    entry_id: str
    score: float
    rank: int

    def __post_init__(self) -> None:
        _check_id("entry_id", self.entry_id, "Hit")
        score = self.score
        if type(score) is not float and (isinstance(score, bool) or not isinstance(score, numbers.Real)):
            raise ParameterError("score", score, "is not a number", "Hit.score must be a real number")
        rank = self.rank
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise ParameterError(
                "rank", rank, "is not an integer >= 1", "Hit.rank must be 1 for the first hit, 2 for the second, ..."
            )

    def to_dict(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "score": self.score, "rank": self.rank}


_HIT_FIELDS = tuple(Hit.__dict__[name].__set__ for name in ("entry_id", "score", "rank"))  # the slots' setters


def _trusted_hits(ranked: Iterable[tuple[float, str]]) -> list[Hit]:
    """Hits ranked 1, 2, ... from ``(score, entry id)`` pairs, built without checks (as ``_trusted``).

    For a retriever's own results: ids it checked when their entries were
    added, scores that are Python floats.  About a quarter of the cost of
    ``Hit(...)`` (which matters when a batch search returns 10,000 hits).
    """
    new = object.__new__
    set_id, set_score, set_rank = _HIT_FIELDS
    out = []
    for rank, (score, entry_id) in enumerate(ranked, start=1):
        hit = new(Hit)
        set_id(hit, entry_id)
        set_score(hit, score)
        set_rank(hit, rank)
        out.append(hit)
    return out


@dataclass(frozen=True, slots=True)
class Event:
    """One line of a memory store's append-only log.

    ``type`` is ``"add"`` (entries added), ``"derive"`` (an entry derived from
    others), ``"update"`` (a new version of ``entry_ids[0]``), ``"forget"``
    (``entry_ids[0]`` forgotten) or ``"retrieve"`` (a search; ``entry_ids``
    are the hits in rank order, ``query_id`` the query's id (``None`` for a
    free-text query), ``query_text`` what was asked and ``retriever`` who
    answered).
    """

    event_id: str
    type: str
    timestamp: datetime
    entry_ids: tuple[str, ...] = ()
    query_id: str | None = None
    retriever: str | None = None
    query_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "type": self.type,
            "timestamp": self.timestamp.isoformat(),
            "entry_ids": list(self.entry_ids),
            "query_id": self.query_id,
            "query_text": self.query_text,
            "retriever": self.retriever,
        }
