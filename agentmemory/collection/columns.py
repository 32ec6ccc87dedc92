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

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy is loaded by whoever asks for chunks, not by importing the collection
    import numpy as np

__all__ = ["CHUNK_BYTES", "TextChunk", "TextList", "TextSource"]

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


class TextList:
    """A :class:`TextSource` over a sequence of strings: each chunk encodes its texts when asked."""

    __slots__ = ("_texts",)

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i: int) -> str:
        return self._texts[i]

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
