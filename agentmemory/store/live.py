"""A store's live entries by id: records, and batches of columns whose records are made only when asked.

:class:`LiveEntries` is the mapping :class:`~agentmemory.store.core.MemoryStore`
keeps its entries in (``id -> MemoryEntry``, in the order added).  Entries
added one record at a time are kept as records; a batch added as
:class:`~agentmemory.collection.columns.Entries` stays columns (its ids, its
texts in their file, its sparse fields), and a record of one of its entries
is made when that entry is asked for.  An update or a forget of such an
entry is kept beside the columns (``changed``: the new record in the old
one's place, or ``None`` when forgotten), so the columns are never copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping

from agentmemory.collection.columns import Entries
from agentmemory.records import MemoryEntry

__all__ = ["LiveEntries"]


class LiveEntries(MutableMapping[str, MemoryEntry]):
    """``id -> MemoryEntry`` over records and column batches, in the order added (see the module docstring)."""

    def __init__(self) -> None:
        self._segments: list[Entries | dict[str, MemoryEntry]] = []
        self._changed: dict[str, MemoryEntry | None] = {}  # column rows updated (the record) or forgotten (None)
        self._n = 0

    # -- reading ------------------------------------------------------------
    def _find(self, entry_id: str) -> Entries | dict[str, MemoryEntry] | None:
        """The segment holding ``entry_id`` (forgotten column rows included), or ``None``; a column batch's map of
        ids to rows is made when it is first looked in."""
        for segment in reversed(self._segments):
            if entry_id in (segment if isinstance(segment, dict) else segment.positions):
                return segment
        return None

    def __getitem__(self, entry_id: str) -> MemoryEntry:
        if entry_id in self._changed:
            entry = self._changed[entry_id]
            if entry is None:
                raise KeyError(entry_id)
            return entry
        segment = self._find(entry_id)
        if segment is None:
            raise KeyError(entry_id)
        if isinstance(segment, dict):
            return segment[entry_id]
        return segment[segment.positions[entry_id]]

    def __contains__(self, entry_id: object) -> bool:
        if not isinstance(entry_id, str):
            return False
        if entry_id in self._changed:
            return self._changed[entry_id] is not None
        return self._find(entry_id) is not None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        changed = self._changed
        for segment in self._segments:
            if isinstance(segment, dict):
                yield from list(segment)
            elif changed:
                yield from (i for i in segment.ids if changed.get(i, True) is not None)
            else:
                yield from segment.ids

    def records(self) -> Iterator[MemoryEntry]:
        """Every live entry's record, in order (a column batch's made chunk by chunk)."""
        changed = self._changed
        for segment in self._segments:
            if isinstance(segment, dict):
                yield from list(segment.values())
            elif changed:
                for entry in segment:
                    now = changed.get(entry.id, entry)
                    if now is not None:
                        yield now
            else:
                yield from segment

    def isdisjoint(self, ids: Iterable[str]) -> bool:
        """Whether no live entry has one of ``ids`` (in bulk)."""
        keys = set(ids)
        return all(
            segment.keys().isdisjoint(keys) if isinstance(segment, dict) else not keys.intersection(segment.ids)
            for segment in self._segments
        )

    def same_ids(self, ids: Iterable[str]) -> bool:
        """Whether the live entries' ids are exactly ``ids`` (compared as sets, in bulk)."""
        wanted = set(ids)
        if len(wanted) != self._n:
            return False
        if not any(v is None for v in self._changed.values()):
            return all(
                segment.keys() <= wanted if isinstance(segment, dict) else wanted.issuperset(segment.ids)
                for segment in self._segments
            )
        return set(self) == wanted

    def scopes(self) -> set[str | None]:
        """The scopes of the live entries."""
        found: set[str | None] = set()
        for segment in self._segments:
            if isinstance(segment, dict):
                found.update(e.scope for e in segment.values())
            elif self._changed:
                found.update(e.scope for e in segment if self._changed.get(e.id, e) is not None)
            else:
                found.update(segment.scopes())
        found.update(e.scope for e in self._changed.values() if e is not None)
        return found

    def derived_from(self, entry_id: str) -> list[str]:
        """The ids of the live entries derived from ``entry_id``, in order (a column batch's provenance read from
        its column)."""
        out: list[str] = []
        for segment in self._segments:
            if isinstance(segment, dict):
                out += [e.id for e in segment.values() if entry_id in e.provenance.derived_from]
                continue
            for row_id, provenance in segment.provenances():
                now = self._changed.get(row_id, ...)
                if now is None:
                    continue
                sources = provenance.derived_from if now is ... else now.provenance.derived_from
                if entry_id in sources:
                    out.append(row_id)
        return out

    # -- changes ------------------------------------------------------------
    def add_columns(self, entries: Entries) -> None:
        """Add a batch of new entries (ids in none of the live entries) as columns."""
        self._segments.append(entries)
        self._n += len(entries)

    def add_records(self, ids: list[str], records: list[MemoryEntry]) -> None:
        """Add new entries (ids in none of the live entries) as records."""
        if not self._segments or not isinstance(self._segments[-1], dict):
            self._segments.append({})
        tail = self._segments[-1]
        assert isinstance(tail, dict)
        tail.update(zip(ids, records))
        self._n += len(ids)

    def __setitem__(self, entry_id: str, entry: MemoryEntry) -> None:
        if entry_id not in self:  # a new entry
            self.add_records([entry_id], [entry])
            return
        segment = self._find(entry_id) if entry_id not in self._changed else None
        if isinstance(segment, dict):
            segment[entry_id] = entry  # in place: the order stays
        else:
            self._changed[entry_id] = entry

    def __delitem__(self, entry_id: str) -> None:
        if entry_id not in self:
            raise KeyError(entry_id)
        segment = self._find(entry_id)
        if isinstance(segment, dict):
            del segment[entry_id]
        else:
            self._changed[entry_id] = None
        self._n -= 1
