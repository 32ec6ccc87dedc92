"""Entries as columns: the texts of a collection as spans of UTF-8 bytes, read in chunks.

The contract between whoever holds a collection's texts (a reader, the store)
and whoever reads them all at once (an index): a :class:`TextSource` gives its
texts one at a time (``source[i]``, a ``str``) and in bulk as
:class:`TextChunk` records, each a buffer of UTF-8 bytes with the span of every
text in it, so an index tokenises straight from the bytes a reader holds
(or from a file) without one Python string per text.

:class:`TextList` is the plain source: a list of strings, encoded one chunk at
a time when asked.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from agentmemory.errors import InputError
from agentmemory.records import NO_METADATA, UNKNOWN_PROVENANCE, MemoryEntry, Provenance, _trusted, _trusted_many

if TYPE_CHECKING:  # numpy is loaded by whoever asks for chunks, not by importing the collection
    import numpy as np

__all__ = [
    "CHUNK_BYTES",
    "BufferTexts",
    "Codes",
    "Column",
    "Dense",
    "Entries",
    "FileTexts",
    "Layered",
    "LayeredRow",
    "PackedIds",
    "Sparse",
    "TextChunk",
    "TextList",
    "TextSource",
    "source_bytes",
]

CHUNK_BYTES = 1 << 24
"""About how many bytes of text one chunk holds (16 MiB): a chunk ends at the first text past it."""


class TextChunk(NamedTuple):
    """Texts ``first`` .. ``first + len(starts) - 1`` of a source: text ``first + i`` is ``buf[starts[i]:ends[i]]``.

    ``buf`` is bytes-like (``bytes``, ``memoryview``, ``mmap``) holding UTF-8;
    ``starts`` and ``ends`` are int64 arrays of one length; ``ascii`` a bool
    array of that length, True where the text is pure ASCII.  Spans may sit
    anywhere in ``buf`` (between them: anything, e.g. the rest of a JSON line),
    in text order.
    """

    first: int
    buf: bytes | memoryview
    starts: np.ndarray
    ends: np.ndarray
    ascii: np.ndarray


@runtime_checkable
class TextSource(Protocol):
    """Texts by position (``source[i]``, ``len(source)``) and in bulk (:meth:`chunks`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> str: ...

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[TextChunk]:
        """Every text once, in order, as chunks of about ``size`` bytes (the last may be smaller)."""
        ...


def source_bytes(texts: TextSource) -> int | None:
    """About how many bytes ``texts`` hands out in all: its ``nbytes`` when it has one (an int, optional in the
    protocol: a hint for choosing the chunk size, see ``BM25.add_texts``), else ``None``."""
    size = getattr(texts, "nbytes", None)
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


class TextList:
    """A :class:`TextSource` over a sequence of strings: each chunk encodes its texts when asked."""

    __slots__ = ("_texts",)

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i: int) -> str:
        return self._texts[i]

    @property
    def nbytes(self) -> int:
        """The texts' characters (their UTF-8 bytes when ASCII): what :meth:`chunks` encodes, about."""
        return sum(map(len, self._texts))

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[TextChunk]:
        import numpy as np

        texts = self._texts
        n = len(texts)
        first = 0
        while first < n:
            stop, total = first, 0
            while stop < n and (total < size or stop == first):
                total += len(texts[stop])
                stop += 1
            run = texts[first:stop]
            flags = np.fromiter((t.isascii() for t in run), dtype=bool, count=len(run))
            if flags.all():
                buf = "".join(run).encode("ascii")
                widths = np.fromiter(map(len, run), dtype=np.int64, count=len(run))
            else:
                encoded = [t.encode("utf-8") for t in run]
                buf = b"".join(encoded)
                widths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(run))
            ends = np.cumsum(widths)
            yield TextChunk(first, buf, ends - widths, ends, flags)
            first = stop


class BufferTexts:
    """A :class:`TextSource` over one buffer of UTF-8: text ``i`` is ``buf[starts[i]:ends[i]]``.

    What a loader that builds its texts keeps instead of a ``str`` per text (a LongMemEval-M collection at turn
    level: 2,500,000 texts, about 50 bytes less each), and whose chunks are slices of the buffer (no encoding).
    ``ascii[i]`` says whether text ``i`` is pure ASCII.  The buffer is never changed once given (a
    ``bytearray`` a loader filled is kept as it is: no copy; a uint8 array in a mapped snapshot); :meth:`take`
    shares it.
    """

    __slots__ = ("_ascii", "_buf", "_ends", "_starts")

    def __init__(
        self, buf: bytes | bytearray | np.ndarray, starts: np.ndarray, ends: np.ndarray, ascii: np.ndarray
    ) -> None:
        if not len(starts) == len(ends) == len(ascii):
            raise ValueError("starts, ends and ascii differ in length")
        self._buf: Any = buf  # anything memoryview reads
        self._starts = starts
        self._ends = ends
        self._ascii = ascii

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> str:
        return str(memoryview(self._buf)[int(self._starts[i]) : int(self._ends[i])], "utf-8")

    @property
    def nbytes(self) -> int:
        """The texts' bytes: what :meth:`chunks` hands out."""
        return int((self._ends - self._starts).sum())

    def take(self, rows: np.ndarray) -> BufferTexts:
        """The texts at ``rows`` (increasing positions), sharing the buffer."""
        return BufferTexts(self._buf, self._starts[rows], self._ends[rows], self._ascii[rows])

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[TextChunk]:
        import numpy as np

        n = len(self)
        starts, ends = self._starts, self._ends
        view = memoryview(self._buf)
        first = 0
        while first < n:
            stop = int(np.searchsorted(ends, int(starts[first]) + size, side="left")) + 1
            stop = min(max(stop, first + 1), n)
            lo, hi = int(starts[first]), int(ends[stop - 1])
            yield TextChunk(first, view[lo:hi], starts[first:stop] - lo, ends[first:stop] - lo, self._ascii[first:stop])
            first = stop


class FileTexts:
    """A :class:`TextSource` whose texts stay in the file they were read from: spans of its bytes, read on demand.

    Text ``i`` is the UTF-8 of ``path``'s bytes ``starts[i]:ends[i]`` (a JSON
    string written without escapes is its text's UTF-8 exactly), except the
    texts of ``kept`` (position -> text), held in memory (a text that was
    written with escapes).  The file's size and modification time
    (``st_mtime_ns``) are those it had when read; any read that finds either
    changed is refused with one line (:class:`~agentmemory.errors.InputError`),
    never answered from a different file.  Chunks are read with
    ``os.pread``, one at a time: nothing of the file stays in memory between
    reads (the page cache is the kernel's).
    """

    __slots__ = ("_ascii", "_ends", "_kept", "_kept_at", "_starts", "mtime_ns", "path", "size")

    def __init__(
        self,
        path: str | os.PathLike[str],
        size: int,
        mtime_ns: int,
        starts: np.ndarray,
        ends: np.ndarray,
        ascii: np.ndarray,
        kept: dict[int, str] | None = None,
    ) -> None:
        import numpy as np

        self.path = os.fspath(path)
        self.size = size
        self.mtime_ns = mtime_ns
        self._starts = starts
        self._ends = ends
        self._ascii = ascii
        self._kept = kept or {}
        self._kept_at = np.array(sorted(self._kept), dtype=np.int64)

    def __len__(self) -> int:
        return len(self._starts)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def _open(self) -> int:
        """A descriptor of the file, once it is the file read (same size and modification time)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as err:
            raise InputError(
                self.path,
                None,
                f"cannot be read again ({err.strerror or err}); its texts are read from the file on demand: "
                "load the collection again",
            ) from None
        st = os.fstat(fd)
        if st.st_size != self.size or st.st_mtime_ns != self.mtime_ns:
            os.close(fd)
            raise InputError(
                self.path,
                None,
                f"changed after it was read (size {self.size:,} -> {st.st_size:,} bytes, or its modification time); "
                "its texts are read from the file on demand: load the collection again",
            )
        return fd

    def __getitem__(self, i: int) -> str:
        kept = self._kept.get(i) if self._kept else None
        if kept is not None:
            return kept
        start, end = int(self._starts[i]), int(self._ends[i])
        fd = self._open()
        try:
            data = _pread(fd, end - start, start)
        finally:
            os.close(fd)
        return data.decode("utf-8")

    @property
    def nbytes(self) -> int:
        """The bytes of the file from the first text's start to the last one's end: what :meth:`chunks` reads."""
        return int(self._ends[-1] - self._starts[0]) if len(self._starts) else 0

    def take(self, rows: np.ndarray) -> FileTexts:
        """The texts at ``rows`` (increasing positions), still in the file."""
        kept = (
            {new: self._kept[old] for new, old in enumerate(rows.tolist()) if old in self._kept} if self._kept else {}
        )
        return FileTexts(
            self.path, self.size, self.mtime_ns, self._starts[rows], self._ends[rows], self._ascii[rows], kept
        )

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[TextChunk]:
        import numpy as np

        n = len(self)
        if n == 0:
            return
        starts, ends = self._starts, self._ends
        fd = self._open()
        try:
            first = 0
            while first < n:
                stop = int(np.searchsorted(ends, int(starts[first]) + size, side="left")) + 1
                stop = min(max(stop, first + 1), n)
                lo, hi = int(starts[first]), int(ends[stop - 1])
                buf = _pread(fd, hi - lo, lo)
                yield self._chunk(first, stop, lo, buf)
                first = stop
        finally:
            os.close(fd)

    def _chunk(self, first: int, stop: int, lo: int, buf: bytes) -> TextChunk:
        """Texts ``first .. stop - 1`` from ``buf`` (the file from byte ``lo``), the kept texts put in their places."""

        starts, ends, flags = self._starts[first:stop] - lo, self._ends[first:stop] - lo, self._ascii[first:stop]
        at = self._kept_at
        inside = at[(at >= first) & (at < stop)] - first
        if not len(inside):
            return TextChunk(first, buf, starts, ends, flags)
        parts: list[bytes] = []
        new_starts, new_ends = starts.copy(), ends.copy()
        done, length = 0, 0  # texts placed, bytes written
        for j in (*inside.tolist(), stop - first):
            if j > done:  # the file's run of texts done .. j - 1, copied as one slice
                raw_lo, raw_hi = int(starts[done]), int(ends[j - 1])
                parts.append(buf[raw_lo:raw_hi])
                new_starts[done:j] = starts[done:j] - raw_lo + length
                new_ends[done:j] = ends[done:j] - raw_lo + length
                length += raw_hi - raw_lo
            if j < stop - first:
                data = self._kept[first + j].encode("utf-8")
                parts.append(data)
                new_starts[j], new_ends[j] = length, length + len(data)
                length += len(data)
                done = j + 1
        return TextChunk(first, b"".join(parts), new_starts, new_ends, flags)


def _pread(fd: int, length: int, offset: int) -> bytes:
    """``length`` bytes of ``fd`` from ``offset`` (``os.pread`` until all are read)."""
    data = os.pread(fd, length, offset)
    if len(data) == length:
        return data
    parts = [data]
    got = len(data)
    while got < length:
        more = os.pread(fd, length - got, offset + got)
        if not more:
            raise OSError(f"{fd}: file ended before byte {offset + length}")
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class Codes:
    """A column of few distinct values (scopes): ``values[codes[i]]``, an int32 code per row."""

    __slots__ = ("codes", "values")

    def __init__(self, codes: np.ndarray, values: Sequence[Any]) -> None:
        self.codes = codes
        self.values = tuple(values)

    @classmethod
    def of(cls, column: Iterable[Any]) -> Codes:
        """The codes of ``column``'s values, numbered in order of first appearance."""
        import numpy as np

        index: dict[Any, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in column), dtype=np.int32)
        return cls(codes, list(index))

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: int) -> Any:
        return self.values[self.codes[i]]

    def rows(self, start: int, stop: int) -> list[Any]:
        return list(map(self.values.__getitem__, self.codes[start:stop].tolist()))

    def take(self, rows: np.ndarray) -> Codes:
        return Codes(self.codes[rows], self.values)


class Sparse:
    """A column whose rows mostly hold ``default``: the others as ``{row: value}``."""

    __slots__ = ("default", "n", "values")

    def __init__(self, n: int, values: dict[int, Any], default: Any) -> None:
        self.n = n
        self.values = values
        self.default = default

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        return self.values.get(i, self.default)

    def rows(self, start: int, stop: int) -> list[Any]:
        get, default = self.values.get, self.default
        return [get(i, default) for i in range(start, stop)]

    def take(self, rows: np.ndarray) -> Sparse:
        values = self.values
        return Sparse(
            len(rows), {new: values[old] for new, old in enumerate(rows.tolist()) if old in values}, self.default
        )


class Dense:
    """A column with a value in most rows: a list."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> Any:
        return self.values[i]

    def rows(self, start: int, stop: int) -> list[Any]:
        return self.values[start:stop]

    def take(self, rows: np.ndarray) -> Dense:
        return Dense(list(map(self.values.__getitem__, rows.tolist())))


class LayeredRow(Mapping[str, Any]):
    """One row of a :class:`Layered` column: a shared mapping with a few fields of the row's own after it."""

    __slots__ = ("_base", "_own")

    def __init__(self, base: Mapping[str, Any], own: dict[str, Any]) -> None:
        self._base = base
        self._own = own

    def __getitem__(self, key: str) -> Any:
        own = self._own
        return own[key] if key in own else self._base[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        yield from self._own

    def __len__(self) -> int:
        return len(self._base) + len(self._own)

    def __repr__(self) -> str:
        return repr(dict(self))


class Layered:
    """A column of mappings (metadata) that share most of their keys and values: row ``i`` is ``base[i]`` (a
    :class:`Codes` of shared mappings, a session's fields, say) followed by ``own[key][i]`` for each key of
    ``own`` (columns of their own: a turn's number and role), a :class:`LayeredRow` made when asked.

    The keys of ``own`` are none of the base mappings' keys.  Whoever checks the values (the store, that a
    row's metadata can be exported) checks each shared mapping and each distinct own value once
    (:meth:`Entries.metadata_checks`), not every row: a LongMemEval-M collection at turn level has 2.5
    million rows and about 250,000 distinct sessions.
    """

    __slots__ = ("base", "own")

    def __init__(self, base: Codes, own: Mapping[str, Codes | Dense]) -> None:
        self.base = base
        self.own = dict(own)
        if any(len(c) != len(base) for c in self.own.values()):
            raise ValueError("a layered column's own columns differ in length from its base")

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, i: int) -> Any:
        base = self.base[i]
        if not self.own:
            return base
        return LayeredRow(base, {key: column[i] for key, column in self.own.items()})

    def rows(self, start: int, stop: int) -> list[Any]:
        bases = self.base.rows(start, stop)
        if not self.own:
            return bases
        keys = list(self.own)
        owns = zip(*(self.own[key].rows(start, stop) for key in keys))
        return [LayeredRow(b, dict(zip(keys, values))) for b, values in zip(bases, owns)]

    def take(self, rows: np.ndarray) -> Layered:
        return Layered(self.base.take(rows), {key: column.take(rows) for key, column in self.own.items()})

    def checks(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """``(a row, a mapping)`` pairs whose mappings, checked each, check every row: each base mapping some row
        uses (each code) once, and each own key with each of its values some row uses once (``{key: value}``;
        a :class:`Dense` own column's values by identity), each with the first row that holds it."""
        import numpy as np

        codes = self.base.codes
        if len(codes):
            used, first = np.unique(codes, return_index=True)
            yield from ((int(row), self.base.values[code]) for code, row in zip(used.tolist(), first.tolist()))
        for key, column in self.own.items():
            if isinstance(column, Codes):
                if len(column.codes):
                    used, first = np.unique(column.codes, return_index=True)
                    yield from ((int(r), {key: column.values[c]}) for c, r in zip(used.tolist(), first.tolist()))
            else:
                seen: set[int] = set()
                for row, value in enumerate(column.values):
                    if id(value) not in seen:
                        seen.add(id(value))
                        yield row, {key: value}


Column = Codes | Sparse | Dense | Layered
"""The kinds of column an :class:`Entries` holds a field in (:class:`Layered`: metadata only)."""

_OPTIONAL = ("tags", "created_at", "provenance", "scope", "metadata")
"""The fields of :class:`~agentmemory.records.MemoryEntry` an :class:`Entries` may hold as columns."""
_DEFAULTS = {"tags": (), "created_at": None, "provenance": UNKNOWN_PROVENANCE, "scope": None, "metadata": NO_METADATA}
_ROWS = 65_536  # records made at once when iterating


class _Without:
    """Every id but ``absent``: :meth:`Entries.membership` (only asked about the candidates it was given)."""

    __slots__ = ("absent",)

    def __init__(self, absent: set[str]) -> None:
        self.absent = absent

    def __contains__(self, item: object) -> bool:
        return item not in self.absent


def _is_set(value: Any, default: Any) -> bool:
    """Whether a field's ``value`` is not its ``default``: the type first (a loader's lazy metadata mapping
    compared with the default by value built a dict each: 1.6 s of 4.9 s loading 250,000 LongMemEval turns)."""
    return type(value) is not type(default) or value != default


class PackedIds(Sequence[str]):
    """Entry ids as one UTF-8 buffer and offsets: id ``i`` is ``buf[offsets[i]:offsets[i + 1]]``.

    What a collection snapshot (:mod:`agentmemory.collection.snapshot`) keeps instead of a string per id, so
    that processes mapping it share the ids; a process makes strings of those it takes (:meth:`take`, an
    :class:`Entries`' ``take``).  Read-only, like the mapping it may lie in.
    """

    __slots__ = ("_ascii", "_buf", "_offsets")

    def __init__(self, buf: np.ndarray, offsets: np.ndarray, ascii: bool) -> None:
        self._buf = buf  # uint8
        self._offsets = offsets  # int64, len(ids) + 1
        self._ascii = ascii

    @classmethod
    def of(cls, ids: Sequence[str]) -> PackedIds:
        import numpy as np

        n = len(ids)
        lengths = np.zeros(n + 1, dtype=np.int64)
        joined = bytearray()
        for start in range(0, n, _ROWS):  # a run of ids at a time: no bytes object per id held at once
            encoded = [i.encode("utf-8", "surrogatepass") for i in ids[start : start + _ROWS]]
            lengths[start + 1 : start + 1 + len(encoded)] = list(map(len, encoded))
            joined += b"".join(encoded)
        return cls(np.frombuffer(joined, dtype=np.uint8), np.cumsum(lengths), joined.isascii())

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _one(self, i: int) -> str:
        return bytes(self._buf[self._offsets[i] : self._offsets[i + 1]]).decode("utf-8", "surrogatepass")

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            import numpy as np

            return self.take(np.arange(*i.indices(len(self)), dtype=np.int64))
        n = len(self)
        i = i.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("id index out of range")
        return self._one(i)

    def take(self, rows: np.ndarray) -> list[str]:
        """The ids at ``rows``, as strings of this process."""
        if not len(rows):
            return []
        if self._ascii:  # one decoding of the span the rows cover, then a slice per id
            lo, hi = int(self._offsets[rows[0]]), int(self._offsets[rows[-1] + 1])
            if hi - lo <= 4 * int(self._offsets[rows + 1].sum() - self._offsets[rows].sum()) + (1 << 20):
                text = bytes(self._buf[lo:hi]).decode("ascii")
                starts = (self._offsets[rows] - lo).tolist()
                ends = (self._offsets[rows + 1] - lo).tolist()
                return [text[a:b] for a, b in zip(starts, ends)]
        return [self._one(i) for i in rows.tolist()]

    def __iter__(self) -> Iterator[str]:
        import numpy as np

        n = len(self)
        for start in range(0, n, _ROWS):
            yield from self.take(np.arange(start, min(start + _ROWS, n), dtype=np.int64))

    def __contains__(self, value: object) -> bool:
        return any(value == x for x in self)

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same strings (a list of ids, say), as a list would be."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == len(self) and all(map(operator.eq, self, other))

    __hash__ = None  # type: ignore[assignment]


class Entries(Sequence[MemoryEntry]):
    """A collection's entries as columns, each record made when asked (``entries[i]``, iteration).

    ``ids`` is a list of strings (or, in a collection mapped from a snapshot, :class:`PackedIds`, whose
    :meth:`take` makes strings of the rows taken); ``texts`` a :class:`TextSource` (a
    :class:`FileTexts` keeps them in their file); every other field of
    :class:`~agentmemory.records.MemoryEntry` is a column given only when some
    entry has a value other than the default (``scope`` as :class:`Codes`,
    the rest :class:`Sparse`), so an absent field costs nothing.  A sequence
    of records in every way code reads one: ``len``, indexing (a slice is a
    tuple of records), iteration, ``==`` with any sequence of records (a
    tuple, a list, another ``Entries``) compared record by record.
    The columns are trusted: whoever makes them has checked every value
    (the readers, with the file and line; :meth:`of` from checked records).
    """

    __slots__ = ("_columns", "_positions", "_unique", "ids", "texts")

    def __init__(self, ids: list[str] | PackedIds, texts: TextSource, **columns: Column) -> None:
        unknown = set(columns) - set(_OPTIONAL)
        if unknown:
            raise TypeError(f"unknown columns {sorted(unknown)}; allowed: {', '.join(_OPTIONAL)}")
        if len(texts) != len(ids) or any(len(c) != len(ids) for c in columns.values()):
            raise ValueError(f"columns of different lengths: ids {len(ids)}, texts {len(texts)}")
        self.ids = ids
        self.texts = texts
        self._columns = columns
        self._positions: dict[str, int] | None = None
        self._unique: bool | None = None

    @classmethod
    def of(cls, records: Iterable[MemoryEntry]) -> Entries:
        """The columns of ``records`` (checked :class:`~agentmemory.records.MemoryEntry` records), texts in memory."""
        rows = list(records)
        columns: dict[str, Column] = {}
        for name in _OPTIONAL:
            default = _DEFAULTS[name]
            values = [getattr(e, name) for e in rows]
            if name == "scope":
                if any(v is not None for v in values):
                    columns[name] = Codes.of(values)
                continue
            found = {i: v for i, v in enumerate(values) if _is_set(v, default)}
            if len(found) > len(rows) // 4:  # mostly set: a list costs less than a map of rows
                columns[name] = Dense(values)
            elif found:
                columns[name] = Sparse(len(rows), found, default)
        return cls([e.id for e in rows], TextList([e.text for e in rows]), **columns)

    @property
    def columns(self) -> dict[str, Column]:
        """The columns given, by field name (the fields every entry has at its default are not there)."""
        return dict(self._columns)

    def column(self, name: str) -> Column | None:
        """The column of field ``name`` (one of ``tags``, ``created_at``, ``provenance``, ``scope``, ``metadata``),
        ``None`` when every entry has the default."""
        if name not in _DEFAULTS:
            raise KeyError(name)
        return self._columns.get(name)

    @property
    def unique(self) -> bool:
        """Whether no id is there twice (checked once, with a set that is not kept: no map of every id is made)."""
        if self._unique is None:
            ids = self.ids
            self._unique = len(ids) == (len(set(ids)) if self._positions is None else len(self._positions))
        return self._unique

    def missing(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that no entry has (one pass over the ids; no map of every id is made)."""
        if self._positions is not None:
            return {i for i in ids if i not in self._positions}
        return set(ids).difference(self.ids)

    def membership(self, candidates: Iterable[str]) -> Container[str]:
        """``x in`` the result is whether an entry has id ``x``, for every ``x`` of ``candidates`` (the ids a
        caller will ask about: found in one pass, without a map of every id)."""
        return _Without(self.missing(candidates))

    @property
    def positions(self) -> dict[str, int]:
        """Each id's position (made once, when first asked: a lookup by id)."""
        if self._positions is None:
            self._positions = dict(zip(self.ids, range(len(self.ids))))
        return self._positions

    def scopes(self) -> list[str | None]:
        """The distinct scopes, in order of first appearance (``[None]`` when no entry has one)."""
        column = self._columns.get("scope")
        if column is None:
            return [None] if self.ids else []
        assert isinstance(column, Codes)
        return list(column.values)

    def scope_rows(self) -> dict[str | None, np.ndarray]:
        """Each scope's rows, in order (int64 positions), scopes in order of first appearance."""
        import numpy as np

        column = self._columns.get("scope")
        if column is None:
            return {None: np.arange(len(self.ids), dtype=np.int64)} if self.ids else {}
        assert isinstance(column, Codes)
        order = np.argsort(column.codes, kind="stable")
        bounds = np.searchsorted(column.codes[order], np.arange(len(column.values) + 1))
        return {v: order[bounds[c] : bounds[c + 1]] for c, v in enumerate(column.values)}

    def scope_sizes(self) -> dict[str | None, int]:
        """How many entries each scope holds (scopes in order of first appearance), counted from the codes."""
        import numpy as np

        column = self._columns.get("scope")
        if column is None:
            return {None: len(self.ids)} if self.ids else {}
        assert isinstance(column, Codes)
        counts = np.bincount(column.codes, minlength=len(column.values)).tolist()
        sizes: dict[str | None, int] = {}
        for value, count in zip(column.values, counts):
            if count:
                sizes[value] = sizes.get(value, 0) + count
        return sizes

    def take(self, rows: np.ndarray) -> Entries:
        """The entries at ``rows`` (increasing positions) as columns of their own (the texts not copied from a file)."""
        at = rows.tolist()
        texts = self.texts
        if isinstance(texts, (FileTexts, BufferTexts)):
            taken: TextSource = texts.take(rows)
        else:  # a list's items straight from the list (a TextList's __getitem__ per text: a Python call each)
            taken = TextList(list(map((texts._texts if isinstance(texts, TextList) else texts).__getitem__, at)))
        columns = {name: column.take(rows) for name, column in self._columns.items()}
        ids = self.ids.take(rows) if isinstance(self.ids, PackedIds) else list(map(self.ids.__getitem__, at))
        return Entries(ids, taken, **columns)

    def provenances(self) -> Iterator[tuple[str, Provenance]]:
        """``(id, provenance)`` of every entry whose provenance is not the default (from the column: no record made)."""
        column = self._columns.get("provenance")
        ids = self.ids
        if isinstance(column, Sparse):
            yield from ((ids[i], p) for i, p in sorted(column.values.items()))
        elif isinstance(column, Dense):
            yield from ((i, p) for i, p in zip(ids, column.values) if p != UNKNOWN_PROVENANCE)
        elif isinstance(column, Codes):
            yield from ((i, p) for i, p in zip(ids, column.rows(0, len(column))) if p != UNKNOWN_PROVENANCE)

    def values_set(self, name: str) -> list[Any]:
        """The values of field ``name`` on the entries that set it (not its default), in row order: no record
        made (the latest ``created_at`` of a collection, say)."""
        column = self.column(name)
        default = _DEFAULTS[name]
        if column is None:
            return []
        if isinstance(column, Sparse):
            return [column.values[i] for i in sorted(column.values)]
        values = column.values if isinstance(column, Dense) else column.rows(0, len(column))
        return [v for v in values if _is_set(v, default)]

    def metadata_rows(self) -> Iterator[tuple[int, Any]]:
        """``(row, metadata)`` of the entries that have metadata, in row order (no record made)."""
        column = self._columns.get("metadata")
        if isinstance(column, Sparse):
            yield from ((i, column.values[i]) for i in sorted(column.values) if column.values[i])
        elif isinstance(column, Dense):
            yield from ((i, m) for i, m in enumerate(column.values) if m)
        elif column is not None:
            yield from ((i, m) for i, m in enumerate(column.rows(0, len(column))) if m)

    def metadata_checks(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """``(row, mapping)`` pairs such that every entry's metadata passes a check of its keys and values (that it
        can be exported as JSON, say) when each mapping does; a mapping that fails names a row to report.

        The rows with metadata themselves (:meth:`metadata_rows`), but for a :class:`Layered` column each shared
        mapping and each distinct value of a row's own fields once (:meth:`Layered.checks`)."""
        column = self._columns.get("metadata")
        if isinstance(column, Layered):
            yield from column.checks()
        else:
            yield from self.metadata_rows()

    def distinct(self, name: str) -> list[Any]:
        """The distinct values of field ``name`` over the entries, each once (by identity: loaders share a value
        between rows; two equal values may both be there), the default included when a row holds it: what a
        check of every row's value needs to look at (no record made)."""
        column = self.column(name)
        default = _DEFAULTS[name]
        if column is None:
            return [default] if self.ids else []
        if isinstance(column, Codes):
            return list(column.values)
        if isinstance(column, Sparse):
            values = list(column.values.values())
            if len(column.values) < column.n:
                values.append(default)
        elif isinstance(column, Dense):
            values = column.values
        else:
            values = column.rows(0, len(column))
        return list({id(v): v for v in values}.values())

    def __len__(self) -> int:
        return len(self.ids)

    def _record(self, i: int) -> MemoryEntry:
        values = {name: column[i] for name, column in self._columns.items()}
        return _trusted(MemoryEntry, {"id": self.ids[i], "text": self.texts[i], **values})

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):  # a tuple of records, as a tuple's slice (a file's texts read chunk by chunk)
            import numpy as np

            return tuple(self.take(np.arange(*i.indices(len(self)), dtype=np.int64)))
        n = len(self.ids)
        if not isinstance(i, int) and hasattr(i, "__index__"):
            i = i.__index__()
        if not isinstance(i, int):
            raise TypeError(f"entries are indexed by int or slice, not {type(i).__name__}")
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("entry index out of range")
        return self._record(i)

    def __iter__(self) -> Iterator[MemoryEntry]:
        for start, texts in self._text_runs():
            stop = start + len(texts)
            columns = {name: column.rows(start, stop) for name, column in self._columns.items()}
            yield from _trusted_many(MemoryEntry, {"id": self.ids[start:stop], "text": texts, **columns}, len(texts))

    def _text_runs(self) -> Iterator[tuple[int, list[str]]]:
        """``(first position, texts)`` for runs of about :data:`_ROWS` texts, in order (a file read chunk by chunk)."""
        source = self.texts
        if isinstance(source, TextList):
            texts = source._texts
            for start in range(0, len(texts), _ROWS):
                yield start, list(texts[start : start + _ROWS])
            return
        for chunk in source.chunks():
            buf, spans = chunk.buf, zip(chunk.starts.tolist(), chunk.ends.tolist())
            if chunk.ascii.all():  # decoded once: an ASCII text's characters are its bytes
                whole = bytes(buf).decode("ascii")
                yield chunk.first, [whole[s:e] for s, e in spans]
            else:
                yield chunk.first, [bytes(buf[s:e]).decode("utf-8") for s, e in spans]

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, MemoryEntry):
            return False
        at = self.positions.get(item.id)
        return at is not None and self._record(at) == item

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        if len(other) != len(self):
            return False
        if isinstance(other, Entries) and other.ids != self.ids:
            return False
        return all(map(operator.eq, self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(sorted(self._columns)) or "no other fields"
        return f"Entries({len(self):,} entries: ids, texts ({type(self.texts).__name__}), {fields})"
