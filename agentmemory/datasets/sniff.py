"""Cheap looks inside a file, for format recognisers.

A recogniser runs on every path ``format="auto"`` is given, so it must not
parse a whole file: LoCoMo's ``locomo10.json`` is a few megabytes and
LongMemEval's files are hundreds.  Several formats are JSON files, told
apart by the keys of their records.  :func:`first_record_keys` reads a JSON
file as a stream and yields the keys of its **first record**: the top-level
object, or the first item of a top-level list when that item is an object.
It stops as soon as the caller stops asking (or that record closes), so
recognising a file reads at most its first record, in chunks, never the
whole file into memory.

It tokenises JSON only as far as needed to tell keys from values (strings,
brackets, commas and colons); it does not validate the file.  A file that is
not JSON, not UTF-8 (undecodable bytes are replaced), empty, or whose top
level is not an object or a list of objects yields no keys.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Collection, Generator
from os import PathLike
from pathlib import Path

__all__ = ["first_record_has_keys", "first_record_keys"]

_TOKEN = re.compile(r'\s+|"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^"{}\[\],:\s]+', re.DOTALL)
_CHUNK = 1 << 16


def _tokens(path: Path, chunk: int) -> Generator[str, None, None]:
    """The file's JSON tokens (strings with their quotes, punctuation, scalars), white space skipped."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    with open(path, "rb") as handle:
        buffer, position, eof, size = "", 0, False, chunk
        while True:
            match = _TOKEN.match(buffer, position)
            if match is None or (match.end() == len(buffer) and not eof):
                if eof:
                    return  # an unterminated string: not JSON
                data = handle.read(size)
                eof = not data
                buffer = buffer[position:] + decoder.decode(data, final=eof)
                position = 0
                size = min(size * 2, 1 << 24) if match is None else chunk  # a long string: read more at once
                if eof and not buffer:
                    return
                continue
            position = match.end()
            token = match.group()
            if not token[0].isspace():
                yield token


def first_record_keys(path: str | PathLike[str], *, chunk: int = _CHUNK) -> Generator[str, None, None]:
    """Yield the keys of the JSON file's first record, in file order, reading only as far as asked.

    The first record is the top-level object, or the first item of a
    top-level list if that item is an object.  Keys are decoded (escapes
    resolved).  Close the iterator (or let it be collected) to close the file.
    """
    tokens = _tokens(Path(path), chunk)
    try:
        first = next(tokens, None)
        if first == "[":
            first = next(tokens, None)
        if first != "{":
            return
        depth = 1  # containers open inside the record, the record included
        previous = "{"
        for token in tokens:
            if token in ("{", "["):
                depth += 1
            elif token in ("}", "]"):
                depth -= 1
                if depth == 0:
                    return
            elif depth == 1 and previous in ("{", ",") and token.startswith('"'):
                try:
                    yield json.loads(token)
                except ValueError:  # a malformed escape: not JSON
                    return
            previous = token
    finally:
        tokens.close()


def first_record_has_keys(path: str | PathLike[str], keys: Collection[str]) -> bool:
    """True when the JSON file's first record (see :func:`first_record_keys`) has every key in ``keys``.

    Reads the record only until the last of ``keys`` is seen.
    """
    wanted = set(keys)
    found = first_record_keys(path)
    try:
        for key in found:
            wanted.discard(key)
            if not wanted:
                return True
        return not wanted
    finally:
        found.close()
