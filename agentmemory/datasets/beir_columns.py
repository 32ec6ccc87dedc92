"""``corpus.jsonl`` read straight into columns: the bulk path of :mod:`agentmemory.datasets.beir`.

:func:`read_corpus_columns` reads the file in blocks of whole lines
(:class:`~agentmemory.files.reading.LineBlocks`, which computes its sha256
as it reads), parses each block's lines with ``orjson`` and checks them
column by column: every line an object with exactly the keys ``_id`` and
``text`` (or exactly ``_id``, ``text`` and ``scope`` on every line), string
ids, none empty, none with white space or a control character, none
repeated, string texts, string (or null) scopes.  The result is an
:class:`~agentmemory.collection.columns.Entries` whose texts stay in the
file (:class:`~agentmemory.collection.columns.FileTexts`): a text written
without escapes, in the canonical layout ``{"_id": "...", "text": "..."``
(what ``json.dumps`` writes, the layout of BEIR's files and of our own
writer), is the span of the file's bytes between its quotes, found without
Python code per line; any other text (escapes, another layout) is kept in
memory.

Anything unusual (a line that is not such an object, a bad value, blank
lines, line breaks other than ``\\n``, a repeated id) returns ``None``: the
caller then reads the file line by line, which names the first bad line
with exactly the message it always had.
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import eq, itemgetter
from pathlib import Path
from typing import Any

from agentmemory.collection.columns import Codes, Entries, FileTexts
from agentmemory.files import reading
from agentmemory.files.reading import LineBlocks, gc_paused, release_freed

__all__ = ["read_corpus_columns"]

_ID_TEXT = frozenset(("_id", "text"))
_ID_TEXT_SCOPE = frozenset(("_id", "text", "scope"))
_BAD_ID_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f]")  # ASCII white space and control characters (TREC_ID_RULE)
_OTHER_BREAKS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")  # line breaks besides \n, to the line reader
_PREFIX = b'{"_id": "'
_BETWEEN = b'", "text": "'
_ID, _TEXT, _SCOPE = itemgetter("_id"), itemgetter("text"), itemgetter("scope")


class _Columns:
    """What the blocks of one file add up to: ids, text spans (file offsets), kept texts, scopes."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.starts: list[Any] = []
        self.ends: list[Any] = []
        self.ascii: list[Any] = []
        self.kept: dict[int, str] = {}
        self.keys: frozenset[str] | None = None
        self.scope_index: dict[str | None, int] = {}
        self.scope_codes: list[Any] = []


def read_corpus_columns(path: Path, bar: Any = None) -> tuple[Entries, str] | None:
    """``corpus.jsonl``'s entries as columns and the file's sha256, or ``None`` when it needs the line reader.

    ``bar`` (a tqdm bar, or ``None``) is advanced by the lines of each block.
    """
    import numpy as np

    blocks = LineBlocks(path, "file", reading.BLOCK_BYTES)
    columns = _Columns()
    with gc_paused():
        for offset, block in blocks:
            n = _block(columns, offset, block)
            if n is None:
                return None
            if bar is not None:
                bar.update(n)
    release_freed()  # the blocks' scratch arrays, freed into the C library's heap (see release_freed)
    ids = columns.ids
    if not ids or blocks.stat is None:
        return None
    texts = FileTexts(
        path,
        blocks.stat.st_size,
        blocks.stat.st_mtime_ns,
        np.concatenate(columns.starts),
        np.concatenate(columns.ends),
        np.concatenate(columns.ascii),
        columns.kept,
    )
    extra = {}
    if columns.keys == _ID_TEXT_SCOPE:
        extra["scope"] = Codes(np.concatenate(columns.scope_codes), list(columns.scope_index))
    entries = Entries(ids, texts, **extra)
    return (entries, blocks.sha256) if entries.unique else None  # a repeated id: the line reader names its lines


def _block(columns: _Columns, offset: int, block: bytes) -> int | None:
    """Add one block's lines to ``columns``; how many, or ``None`` when anything needs the line reader."""
    import orjson

    if any(b in block for b in _OTHER_BREAKS):
        return None
    canonical = _canonical(columns, offset, block)
    if canonical is not None:
        return canonical
    lines = block.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if b"" in lines:  # blank lines: the line reader numbers them
        return None
    try:
        objs = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    n = len(objs)
    if set(map(type, objs)) != {dict}:
        return None
    if columns.keys is None:
        columns.keys = frozenset(objs[0])
    keys = columns.keys
    if keys not in (_ID_TEXT, _ID_TEXT_SCOPE) or not all(map(eq, map(dict.keys, objs), repeat(keys, n))):
        return None
    ids = list(map(_ID, objs))
    texts = list(map(_TEXT, objs))
    if set(map(type, ids)) != {str} or set(map(type, texts)) != {str} or not all(ids):
        return None
    if _BAD_ID_CHAR.search("".join(ids)) is not None:
        return None
    if keys == _ID_TEXT_SCOPE and not _scopes(columns, list(map(_SCOPE, objs))):
        return None
    del objs
    _spans(columns, offset, block, lines, ids, texts)
    columns.ids += ids
    return n


def _scopes(columns: _Columns, scopes: list[Any]) -> bool:
    """Add a block's scopes as codes; False when one is neither a string nor null."""
    import numpy as np

    if not set(map(type, scopes)) <= {str, type(None)}:
        return False
    index = columns.scope_index
    columns.scope_codes.append(np.fromiter((index.setdefault(s, len(index)) for s in scopes), np.int32, len(scopes)))
    return True


def _utf8_lengths(values: list[str]) -> tuple[Any, Any]:
    """Each string's UTF-8 length and whether it is ASCII (int64 and bool arrays)."""
    import numpy as np

    n = len(values)
    flags = np.fromiter(map(str.isascii, values), bool, n)
    lengths = np.fromiter(map(len, values), np.int64, n)
    for i in np.flatnonzero(~flags).tolist():
        lengths[i] = len(values[i].encode("utf-8"))
    return lengths, flags


def _spans(columns: _Columns, offset: int, block: bytes, lines: list[bytes], ids: list[str], texts: list[str]) -> None:
    """Each text's span in the file (block at ``offset``), found in bulk; texts not written literally are kept.

    A line that starts ``{"_id": "`` and has no backslash holds its id
    literally right after, so ``", "text": "`` at the id's end (checked)
    opens the text, which is as long in the file as its UTF-8 and is
    followed by a quote (checked).
    """
    import numpy as np

    n = len(lines)
    arr = np.frombuffer(block, dtype=np.uint8)
    last = len(arr) - 1
    line_lengths = np.fromiter(map(len, lines), np.int64, n)
    line_starts = np.zeros(n, dtype=np.int64)
    np.cumsum(line_lengths[:-1] + 1, out=line_starts[1:])
    id_lengths, _ = _utf8_lengths(ids)
    text_lengths, text_ascii = _utf8_lengths(texts)
    ok = _matches(arr, line_starts, _PREFIX, last)
    between = line_starts + len(_PREFIX) + id_lengths
    ok &= _matches(arr, between, _BETWEEN, last)
    starts = between + len(_BETWEEN)
    ends = starts + text_lengths
    ok &= (ends < line_starts + line_lengths) & (arr[np.minimum(ends, last)] == ord('"'))
    if b"\\" in block:
        escaped = np.searchsorted(line_starts, np.flatnonzero(arr == ord("\\")), side="right") - 1
        ok[escaped] = False
    # every member's key and value quoted once: no repeated key (whose first value the spans would find)
    quotes = np.bincount(np.searchsorted(line_starts, np.flatnonzero(arr == ord('"')), side="right") - 1, minlength=n)
    ok &= quotes == 4 * len(columns.keys or ())
    if not ok.all():
        first = len(columns.ids)
        for i in np.flatnonzero(~ok).tolist():
            columns.kept[first + i] = texts[i]
        starts[~ok] = line_starts[~ok]  # an empty span where the line starts: spans stay in file order
        ends[~ok] = line_starts[~ok]
    columns.starts.append(starts + offset)
    columns.ends.append(ends + offset)
    columns.ascii.append(text_ascii)


def _matches(arr: Any, at: Any, expected: bytes, last: int) -> Any:
    """Per position of ``at``, whether ``arr`` holds ``expected`` there (positions past the end: False)."""
    import numpy as np

    inside = at + len(expected) <= last + 1
    ok = inside.copy()
    for k, byte in enumerate(expected):  # one gather per byte of a short piece: no (positions x width) index array
        ok &= arr[np.minimum(at + k, last)] == byte
    return ok


def _special(classes: bytes) -> Any:
    """The positions of the non-zero bytes of ``classes``: zero words of 8 bytes skipped (most are zero)."""
    import numpy as np

    whole = len(classes) // 8 * 8
    words = np.frombuffer(classes, dtype=np.uint64, count=whole // 8)
    busy = np.flatnonzero(words)
    found = np.flatnonzero(words[busy].view(np.uint8).reshape(-1, 8)) if len(busy) else np.zeros(0, dtype=np.int64)
    where = busy[found >> 3] * 8 + (found & 7)
    tail = np.flatnonzero(np.frombuffer(classes, dtype=np.uint8, offset=whole)) + whole
    return np.concatenate((where, tail)) if len(tail) else where


_SPECIAL = bytes(
    1 if c == 0x0A else 2 if c == 0x22 else 3 if c == 0x5C or c < 0x20 else 4 if c >= 0x80 else 0 for c in range(256)
)
"""Byte classes for :func:`_canonical`: newline 1, quote 2, backslash or other control character 3, non-ASCII 4."""
_LAYOUTS = {
    2: (_ID_TEXT, (b'{"_id": "', b'", "text": "', b'"}')),
    3: (_ID_TEXT_SCOPE, (b'{"_id": "', b'", "text": "', b'", "scope": "', b'"}')),
}
"""The canonical layouts of a line (``json.dumps``'s separators, keys in this order) by number of members: the key
set, and the bytes before, between and after the string values."""
_BAD_ID_BYTE = re.compile(r"[\x00-\x09\x0b-\x20\x7f-\x9f]")  # _BAD_ID_CHAR but the newline (the ids' separator)


def _canonical(columns: _Columns, offset: int, block: bytes) -> int | None:
    """Add a block whose every line has a canonical layout (:data:`_LAYOUTS`), in bulk; ``None`` if one has not.

    Such a line is one JSON object whose values are strings written without
    escapes (no backslash, no control character, valid UTF-8): each value is
    the UTF-8 between its quotes.  The line is read from the positions of
    its quotes (found for the whole block at once), without a parser; the
    text stays in the file as its span.
    """
    import numpy as np

    arr = np.frombuffer(block, dtype=np.uint8)
    table = block.translate(_SPECIAL)
    where = _special(table)
    kinds = np.frombuffer(table, dtype=np.uint8)[where]
    newlines = where[kinds == 1]
    n = len(newlines)
    if not n or newlines[-1] != len(arr) - 1 or (kinds == 3).any():
        return None  # a control character, or the file's last line without a newline: the general path
    quotes = where[kinds == 2]
    members = len(quotes) // (4 * n)
    if members not in _LAYOUTS or len(quotes) != 4 * members * n:
        return None
    keys, layout = _LAYOUTS[members]
    if columns.keys not in (None, keys):
        return None
    q = quotes.reshape(n, 4 * members)
    line_starts = np.empty(n, dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = newlines[:-1] + 1
    if not _layout_ok(arr, line_starts, newlines, q, layout):
        return None
    high = where[kinds == 4]
    if len(high):
        try:
            block.decode("utf-8")
        except UnicodeDecodeError:
            return None
    ids = _strings(arr, q[:, 2] + 1, q[:, 3])
    if ids is None:
        return None
    if members == 3:
        scopes = _strings(arr, q[:, 10] + 1, q[:, 11], ids=False)
        if scopes is None or not _scopes(columns, scopes):
            return None
    columns.keys = keys
    starts, ends = q[:, 6] + 1, q[:, 7]
    flags = np.ones(n, dtype=bool)
    if len(high):
        line = np.searchsorted(line_starts, high, side="right") - 1
        inside = (high >= starts[line]) & (high < ends[line])
        flags[line[inside]] = False
    columns.starts.append(starts + offset)
    columns.ends.append(ends + offset)
    columns.ascii.append(flags)
    columns.ids += ids
    return n


def _layout_ok(arr: Any, line_starts: Any, newlines: Any, q: Any, layout: tuple[bytes, ...]) -> bool:
    """Whether every line (its quotes ``q``, one row a line) is ``layout``'s pieces around its string values.

    Piece 0 opens the line and ends with value 0's opening quote; piece j
    starts with value j - 1's closing quote and ends with value j's opening
    one; the last starts with the last value's closing quote and ends the
    line.  Rows hold each line's own quotes: the first is inside the line,
    the last before its newline.
    """
    if not ((q[:, 0] >= line_starts).all() and (q[:, -1] < newlines).all()):
        return False
    last = len(arr) - 1
    for j, piece in enumerate(layout):
        begin = line_starts if j == 0 else q[:, 4 * j - 1]
        end = newlines if j == len(layout) - 1 else q[:, 4 * j + 2] + 1
        if not ((end - begin) == len(piece)).all() or not _matches(arr, begin, piece, last).all():
            return False
    return True


def _strings(arr: Any, starts: Any, ends: Any, *, ids: bool = True) -> list[str] | None:
    """The UTF-8 of ``arr[starts[i]:ends[i]]`` for every i, decoded in one go; with ``ids``, ``None`` when one
    is empty or holds white space or a control character (``_BAD_ID_CHAR``)."""
    import numpy as np

    lengths = ends - starts
    n = len(lengths)
    if ids and not (lengths > 0).all():
        return None
    total = int(lengths.sum())
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out = np.full(total + n, ord("\n"), dtype=np.uint8)
    out[np.repeat(np.cumsum(lengths + 1) - (lengths + 1), lengths) + within] = arr[np.repeat(starts, lengths) + within]
    text = out.tobytes().decode("utf-8")
    if ids and _BAD_ID_BYTE.search(text) is not None:
        return None
    return text.split("\n")[:-1]
