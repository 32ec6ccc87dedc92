"""Reading input files: what a path is, its bytes, UTF-8, and strict JSON, with one-line errors.

Every loader (BEIR folders, LoCoMo files, TREC runs and qrels, run files)
reads through this module, so a bad input gets the same words everywhere:

* :func:`path_kind` says what a path is when it is not a regular file or a
  folder: ``"a symbolic link loop"``, ``"a named pipe (FIFO)"``, ``"a
  symbolic link to the missing 'x'"``, ... -- never "no such file" for
  something that is there.  :func:`read_bytes` reads a regular file and
  refuses anything else with that description, without opening it (opening
  a FIFO would wait for a writer).
* :func:`decode_utf8` decodes, naming the line of the first bad byte.
* :func:`parse_json` parses JSON strictly and never lets Python's own limits
  escape as a traceback.  Each problem is an
  :class:`~agentmemory.errors.InputError` naming the file, the line and the
  field (its JSON path): a syntax error; ``NaN``, ``Infinity`` or
  ``-Infinity`` (not JSON, and a number nothing can rank); an integer of more
  than :data:`~agentmemory.files.numbers.MAX_DIGITS` digits (Python refuses to
  convert it); nesting too deep for Python's parser (``RecursionError``); a
  lone UTF-16 surrogate escape such as ``"\\ud800"`` (a string UTF-8 cannot
  encode, so no artifact could hold it).
* :func:`json_lines` is the one JSON-lines reader (every loader of
  ``.jsonl`` reads through it; :func:`json_values` is its bulk form), and
  :func:`read_json` reads a whole JSON file with its sha256.

The checks cost nothing on a well-formed file: the slow scan that finds the
line and field of a problem runs only after the fast parser has failed (or,
for surrogates, only when the text holds a surrogate escape that is not half
of a pair).
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import json.scanner
import os
import re
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain, repeat
from operator import itemgetter
from os import PathLike
from typing import Any

from agentmemory.errors import InputError, MissingFileError, quote
from agentmemory.files.numbers import MAX_DIGITS

__all__ = [
    "BLOCK_BYTES",
    "LineBlocks",
    "decode_utf8",
    "gc_paused",
    "release_freed",
    "json_lines",
    "json_values",
    "describe_json",
    "parse_json",
    "path_kind",
    "read_bytes",
    "json_array_items",
    "read_json",
    "read_json_text",
]

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def path_kind(path: str | PathLike[str]) -> str | None:
    """``None`` for a regular file or a folder (symbolic links followed); else what ``path`` is, as messages say it.

    Raises:
        MissingFileError: nothing is there (not even a dangling link).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a symbolic link to the missing {quote(os.readlink(path))}"
        raise MissingFileError(path) from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symbolic link loop"
        if err.errno == errno.ENOTDIR:
            raise MissingFileError(path) from None  # a parent is a file: nothing can be there
        return f"a path that cannot be examined ({err.strerror})"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: str | PathLike[str], what: str = "file") -> bytes:
    """The bytes of the regular file ``path``; ``what`` names it in messages (``"run file"``).

    Raises:
        MissingFileError: nothing is at ``path``.
        InputError: ``path`` is a folder, a FIFO, a socket, a device, a
            symbolic link loop or a dangling link (said which), or cannot be read.
    """
    kind = path_kind(path) or ("a folder" if os.path.isdir(path) else None)
    if kind is not None:
        raise InputError(path, None, f"is {kind}; expected a {what}")
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as err:
        raise InputError(path, None, f"cannot be read ({err.strerror or err})") from None


BLOCK_BYTES = 1 << 22
"""About how many bytes :func:`line_blocks` reads at a time (4 MiB: a block's bulk parse holds several times its
size; measured reading 1M entries, 16 MiB blocks took 1.22 s and peaked 204 MB over the interpreter, 4 MiB
blocks 1.10 s and 182 MB)."""


class LineBlocks:
    """The regular file ``path`` in blocks of whole lines, its sha256 computed while they are read (no second pass).

    Iterating yields ``(offset, block)``: ``block`` is bytes ending with a
    newline (the file's last block may not), ``offset`` where it starts in
    the file.  After the last block, :attr:`sha256` is the file's hex digest
    and :attr:`stat` the ``os.stat_result`` of the file as it was opened
    (size and modification time: a reader that keeps spans of the file
    checks them before reading it again).

    Raises (when iterated):
        MissingFileError: nothing is at ``path``.
        InputError: ``path`` is not a regular file (said what it is), cannot
            be read, or changed while it was read.
    """

    def __init__(self, path: str | PathLike[str], what: str = "file", size: int | None = None) -> None:
        self.path = path
        self.what = what
        self.size = BLOCK_BYTES if size is None else size
        self.sha256 = ""
        self.stat: os.stat_result | None = None

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        path = self.path
        kind = path_kind(path) or ("a folder" if os.path.isdir(path) else None)
        if kind is not None:
            raise InputError(path, None, f"is {kind}; expected a {self.what}")
        digest = hashlib.sha256()
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below, around the yields
        except OSError as err:
            raise InputError(path, None, f"cannot be read ({err.strerror or err})") from None
        # The hash runs on a thread beside the reader's own work (hashlib releases the GIL on large updates);
        # each block's update starts once the previous one is done, so the digest is of the file in order.  A
        # plain thread per block, not an executor: concurrent.futures (and the logging it imports) would cost a
        # small file's reading more than its hashing.
        hashing: threading.Thread | None = None
        try:
            with handle:
                self.stat = before = os.fstat(handle.fileno())
                offset, rest = 0, b""
                while True:
                    try:
                        data = handle.read(self.size)
                    except OSError as err:
                        raise InputError(path, None, f"cannot be read ({err.strerror or err})") from None
                    if hashing is not None:
                        hashing.join()
                        hashing = None
                    if not data:
                        break
                    hashing = threading.Thread(target=digest.update, args=(data,), daemon=True)
                    hashing.start()
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:
                        rest += data
                        continue
                    block = data if not rest and cut == len(data) else b"".join((rest, memoryview(data)[:cut]))
                    rest = data[cut:]
                    yield offset, block
                    offset += len(block)
                if rest:
                    yield offset, rest
                after = os.fstat(handle.fileno())
        finally:
            if hashing is not None:  # the reader stopped early (an error, a caller that stopped iterating)
                hashing.join()
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise InputError(path, None, "changed while it was read; read it again once nothing writes to it")
        self.sha256 = digest.hexdigest()


def decode_utf8(path: str | PathLike[str], data: bytes) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark is kept as a character).

    Raises:
        InputError: invalid UTF-8, naming the line of the first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(path, data[: err.start].count(b"\n") + 1, "is not valid UTF-8") from None


class _Constant(Exception):
    """Raised by the parser's hook for ``NaN``, ``Infinity`` and ``-Infinity``."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


# A surrogate escape that is not half of a pair: a high one not followed by a low one, or a low one not
# preceded by a high one.  (Files written with ensure_ascii hold pairs for every emoji: those never trigger the
# slow scan.  An escaped backslash before "ud800" may trigger it needlessly; the scan then finds nothing.)
_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ANY_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a cheap first look: a surrogate escape, paired or not


def _lone_surrogate_escape(text: str) -> bool:
    """Whether ``text`` may hold a lone surrogate escape (``\\ud800`` not half of a pair); fast when it holds none."""
    return (
        "\\u" in text and _ANY_SURROGATE_ESCAPE.search(text) is not None and _SURROGATE_ESCAPE.search(text) is not None
    )


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^"{}\[\],:\s]+|\s+', re.DOTALL)
_BIG_INT = re.compile(r"-?([0-9]+)")
_SHOWN_PATH = 6  # components of a JSON path shown before "..."


def describe_json(value: object) -> str:
    """A short description of a JSON value for messages, saying what was found (``an empty list``,
    ``'x' (a string)``, ``an object with keys 'a', 'b'``)."""
    if isinstance(value, dict):
        keys = [quote(k, 40) for k in list(value)[:5]] + (["..."] if len(value) > 5 else [])
        return "an object with keys " + ", ".join(keys) if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)} items" if value else "an empty list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"{quote(value)} (a number)"
    if isinstance(value, str):
        return f"{quote(value)} (a string)"
    return type(value).__name__


def parse_json(
    text: str,
    path: str | PathLike[str],
    line: int | None = None,
    *,
    root: str = "",
    constants: bool = False,
    expected: str = "",
) -> Any:
    """``text`` parsed as JSON, or an :class:`InputError` naming ``path``, the line and the field.

    ``line`` is the file line ``text`` starts on (a JSON-lines record), or
    ``None`` for a whole file (the line is then found in ``text``); ``root``
    prefixes field paths (``"$"`` for a whole document, ``""`` for a record,
    whose fields are named bare: ``provenance.source``).  ``constants``
    admits ``NaN``/``Infinity``/``-Infinity`` as floats (a run file's own
    check then names a NaN score); ``expected`` ends a syntax error's
    message (``"; expected one JSON object per line"``).
    """
    try:
        value = json.loads(text, parse_constant=float if constants else _refuse_constant)
    except json.JSONDecodeError as err:
        at = err.lineno if line is None else line + err.lineno - 1
        raise InputError(path, at, f"malformed JSON ({err.msg} at column {err.colno}){expected}") from None
    except (_Constant, RecursionError, ValueError):
        found = _scan(text, root, constants=constants, surrogates=False)
        _raise(path, line, found, expected)
    if _lone_surrogate_escape(text):
        found = _scan(text, root, constants=True, surrogates=True)
        if found is not None:
            _raise(path, line, found, expected)
    return value


def _raise(path: str | PathLike[str], line: int | None, found: tuple[int, str, str] | None, expected: str) -> None:
    if found is None:  # the parser failed on something the scan cannot place (not expected to happen)
        raise InputError(path, line, f"cannot be read as JSON{expected}")
    offset, where, problem = found
    at = offset + 1 if line is None else line + offset
    raise InputError(path, at, f"{where or 'the value'} {problem}")


def _scan(text: str, root: str, *, constants: bool, surrogates: bool) -> tuple[int, str, str] | None:
    """``(line offset, field path, problem)`` of the first value the parser refuses, or of the deepest nesting.

    Tokenises ``text`` without recursion, keeping the path of the value each
    token belongs to.  Looks for a refused constant, an integer of too many
    digits, and (``surrogates``) a string holding a lone surrogate; failing
    those (and unless looking for surrogates only), reports the deepest
    nesting (the parser's ``RecursionError``).
    """
    frames: list[list[Any]] = []  # [is_object, key or index, expecting a key]
    deepest: tuple[int, int, str] | None = None  # (depth, position, path)
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first.isspace():
            continue
        if first in "{[":
            frames.append([first == "{", 0 if first == "[" else None, first == "{"])
            if deepest is None or len(frames) > deepest[0]:
                deepest = (len(frames), match.start(), "")
            continue
        if first in "}]":
            if frames:
                frames.pop()
            continue
        if first == ",":
            if frames:
                top = frames[-1]
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
            continue
        if first == ":":
            if frames:
                frames[-1][2] = False
            continue
        if frames and frames[-1][0] and frames[-1][2]:  # an object's key
            try:
                frames[-1][1] = json.loads(token)
            except ValueError:
                frames[-1][1] = token
            problem = _problem(token, constants=constants, surrogates=surrogates)
            if problem is not None:
                return text.count("\n", 0, match.start()), _path(root, frames), f"(a key) {problem}"
            continue
        problem = _problem(token, constants=constants, surrogates=surrogates)
        if problem is not None:
            return text.count("\n", 0, match.start()), _path(root, frames), problem
    if deepest is None or surrogates:
        return None
    depth, position, _ = deepest
    frames = _frames_at(text, position)
    return text.count("\n", 0, position), _path(root, frames), f"is nested {depth:,} levels deep, too deep to read"


def _frames_at(text: str, end: int) -> list[list[Any]]:
    """The open containers at ``end`` (rescanned: only the deepest point needs its path)."""
    frames: list[list[Any]] = []
    for match in _TOKEN.finditer(text, 0, end):
        token = match.group()
        first = token[0]
        if first in "{[":
            frames.append([first == "{", 0 if first == "[" else None, first == "{"])
        elif first in "}]":
            if frames:
                frames.pop()
        elif first == "," and frames:
            if frames[-1][0]:
                frames[-1][2] = True
            else:
                frames[-1][1] += 1
        elif first == ":" and frames:
            frames[-1][2] = False
        elif first == '"' and frames and frames[-1][0] and frames[-1][2]:
            try:
                frames[-1][1] = json.loads(token)
            except ValueError:
                frames[-1][1] = token
    return frames


def _problem(token: str, *, constants: bool, surrogates: bool) -> str | None:
    if token.startswith('"'):
        if not surrogates:
            return None
        try:
            decoded = json.loads(token)
        except ValueError:
            return None
        lone = _LONE_SURROGATE.search(decoded)
        if lone is None:
            return None
        return f"holds the lone surrogate {ascii(lone.group())}, which UTF-8 cannot encode; expected text"
    if not constants and token in ("NaN", "Infinity", "-Infinity"):
        return f"is {token}, which is not a JSON number; expected a number or a string"
    big = _BIG_INT.fullmatch(token)
    if big is not None and len(big[1]) > MAX_DIGITS:
        return f"is an integer of {len(big[1]):,} digits; JSON integers here may have at most {MAX_DIGITS:,}"
    return None


def _path(root: str, frames: list[list[Any]]) -> str:
    """The JSON path of the value inside ``frames`` (``root`` first), cut after a few components."""
    parts = [
        (f".{key}" if isinstance(key, str) and _NAME.fullmatch(key) else f"[{quote(key, 40)}]")
        if is_object
        else f"[{key}]"
        for is_object, key, _ in frames
    ]
    shown = "".join(parts[:_SHOWN_PATH]) + ("..." if len(parts) > _SHOWN_PATH else "")
    return root + (shown if root else shown.removeprefix("."))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_IN_STRING_BREAKS = ("\x85", "\u2028", "\u2029")  # line breaks to str.splitlines that JSON allows inside a string
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e]")


def _lines(text: str) -> list[str]:
    """``text.splitlines()``, except that U+0085, U+2028 and U+2029 do not end a line: JSON allows them
    unescaped inside a string (``json.dumps(..., ensure_ascii=False)`` writes them so), which would
    otherwise cut such a line in two."""
    if not any(c in text for c in _IN_STRING_BREAKS):
        return text.splitlines()
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def json_lines(
    path: str | PathLike[str], text: str, *, expected: str = "", constants: bool = False
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON-lines file: the one JSON-lines reader.

    Each value is ``json.loads``'s, each bad line the :class:`InputError` of
    :func:`parse_json` (``expected`` ends a syntax error's message,
    ``constants`` admits ``NaN``/``Infinity``).  The lines are parsed in bulk
    (:func:`json_values`); when any is not JSON they are parsed again one by
    one as the caller iterates, so a caller that checks each value meets an
    earlier line's bad field before a later line's bad JSON, as when reading
    line by line.
    """
    try:
        numbers, values = json_values(path, text, expected=expected, constants=constants)
    except InputError:
        yield from _parsed_lines(path, text, expected=expected, constants=constants)
    else:
        yield from zip(numbers, values)


def _parsed_lines(
    path: str | PathLike[str], text: str, *, expected: str = "", constants: bool = False
) -> Iterator[tuple[int, Any]]:
    """:func:`json_lines` one line at a time (:func:`parse_json` of each non-blank line, as the caller iterates)."""
    for number, raw in enumerate(_lines(text), start=1):
        if raw.strip():
            yield number, parse_json(raw, path, number, expected=expected, constants=constants)


def read_json(path: str | PathLike[str], what: str = "file") -> tuple[Any, str]:
    """The JSON document in the file ``path``, read strictly (:func:`parse_json`), and the file's sha256 (hex).

    ``what`` names the file in messages (:func:`read_bytes`).
    """
    text, sha = read_json_text(path, what)
    return parse_json(text, path, root="$"), sha


def read_json_text(path: str | PathLike[str], what: str = "file") -> tuple[str, str]:
    """The text of the file ``path`` (UTF-8, :func:`decode_utf8`) and its sha256 (hex): :func:`read_json` before
    the parse, for a reader that parses the document's items one at a time (:func:`json_array_items`)."""
    data = read_bytes(path, what)
    sha = hashlib.sha256(data).hexdigest()
    text = decode_utf8(path, data)
    del data  # a large file: its bytes are not kept beside its text
    return text, sha


_JSON_SPACE = re.compile(r"[ \t\n\r]*")  # what json.loads skips around and between values


def json_array_items(text: str, path: str | PathLike[str]) -> Iterator[tuple[Any, int]] | None:
    """The items of ``text``, a JSON array, parsed one at a time: ``(item, offset after it)``, each exactly what
    ``parse_json(text)`` would hold at that place; ``None`` when ``text`` is not an array (parse it whole).

    A reader that turns each item into what it keeps (a LongMemEval question into its entries) then never
    holds every item's objects at once: at 2,500,000 turns the parsed document was about half of the
    loader's peak.  Anything :func:`parse_json` would refuse (a syntax error, ``NaN``, a lone surrogate
    escape, nesting too deep) stops the items with its very error: the whole text is then parsed to find
    it, so messages name the same line and field as a whole parse.  A text that may hold a lone surrogate
    escape is not streamed at all (``None``).

    Raises:
        InputError: from :func:`parse_json`, when the items reach what it refuses.
    """
    scan = _SCANNERS[False]
    start = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]
    if scan is None or text[start : start + 1] != "[" or _lone_surrogate_escape(text):
        return None
    return _array_items(text, path, scan, start + 1)


def _array_items(text: str, path: str | PathLike[str], scan: Any, at: int) -> Iterator[tuple[Any, int]]:
    space = _JSON_SPACE.match
    n = len(text)
    at = space(text, at).end()  # type: ignore[union-attr]
    if text[at : at + 1] == "]":
        if space(text, at + 1).end() == n:  # type: ignore[union-attr]
            return
    else:
        while True:
            try:
                item, at = scan(text, at)
            except (StopIteration, _Constant, RecursionError, ValueError):
                break
            yield item, at
            at = space(text, at).end()  # type: ignore[union-attr]
            if text[at : at + 1] == ",":
                at = space(text, at + 1).end()  # type: ignore[union-attr]
                continue
            if text[at : at + 1] == "]" and space(text, at + 1).end() == n:  # type: ignore[union-attr]
                return
            break
    parse_json(text, path, root="$")  # raises the error a whole parse gives
    raise InputError(path, None, "cannot be read as JSON")  # pragma: no cover - parse_json refused it above


def _scanner(constants: bool) -> Any:
    """The C scanner behind ``json.loads`` (None where the C accelerator is missing: the per-line path is used)."""
    make = getattr(json.scanner, "c_make_scanner", None)
    if make is None:  # pragma: no cover - CPython always has it
        return None
    return make(json.JSONDecoder(parse_constant=float if constants else _refuse_constant))


_SCANNERS = {False: _scanner(False), True: _scanner(True)}
_first, _second = itemgetter(0), itemgetter(1)


_ORJSON_MAX_LINE = 1_000  # longer lines go to the C scanner: nesting deep enough for its limit needs ~2,000 characters
_SAFE_INNER = frozenset((str, int, bool, type(None)))  # values orjson gives exactly as json does
_DIGIT_RUNS = bytes(0x31 if 0x30 <= c <= 0x39 else 0x30 for c in range(256))  # digit to "1", any other byte to "0"


def _orjson_values(text: str, kept: list[str]) -> list[Any] | None:
    """Every line parsed by ``orjson``, when that is exactly what ``json.loads`` gives; else ``None``.

    ``orjson`` parses a line ~4x faster than the C scanner and gives the
    same values, with three differences that are all ruled out here: it
    refuses ``NaN``/``Infinity``, numbers that overflow a float and lone
    surrogate escapes such as ``"\\ud800"`` (an error: the caller's slower
    paths then decide, as without orjson), it allows nesting up to
    1,024 levels where Python's parser may stop earlier (only lines of at
    most ``_ORJSON_MAX_LINE`` characters come here, too short to nest that
    deep), and it reads an integer outside 64 bits as a float.  The last
    is checked without a Python step per value: when every line is an
    object whose values are strings, integers, booleans or null, no float
    can have come from an integer; otherwise the text must not hold 19
    consecutive digits (one ``bytes.translate`` and a search).
    """
    if not kept or max(map(len, kept)) > _ORJSON_MAX_LINE:
        return None
    import orjson

    try:
        values = list(map(orjson.loads, kept))
    except orjson.JSONDecodeError:
        return None
    if (
        set(map(type, values)) == {dict}
        and set(map(type, chain.from_iterable(map(dict.values, values)))) <= _SAFE_INNER
    ):
        return values
    if text.encode("utf-8", "surrogatepass").translate(_DIGIT_RUNS).find(b"1" * 19) >= 0:
        return None
    return values


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a file's objects are built.

    They are all kept (nothing to collect), and JSON values hold no cycles;
    with the collector on, each collection walks every object built so far,
    which costs a bulk read about half its time (20,000 run-file lines:
    208 ms with it, 107 ms without).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def release_freed() -> None:
    """Hand the memory a bulk step freed back to the system, where the C library keeps it (glibc's ``malloc_trim``).

    A bulk read's blocks and an index build's chunk segments are arrays of a
    few MB: glibc serves them from its heap and keeps them there once freed,
    so the process would hold them on top of what it keeps for the rest of
    its life (measured at 1M entries: 728 MB more after an index build
    instead of 466 MB, and a peak 144 MB higher; after reading LongMemEval-M's
    shape, 2.5M entries, 362 MB held where 259 MB are used).  Elsewhere
    (macOS, Windows, musl) nothing is done.
    """
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # only here: a process that never reads or builds in bulk does not load it

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def json_values(
    path: str | PathLike[str], text: str, *, expected: str = "", constants: bool = False
) -> tuple[list[int], list[Any]]:
    """``(line numbers, values)`` of every non-blank line of a JSON-lines file, in bulk.

    The same values and the same errors as :func:`json_lines` (which it falls
    back to whenever anything is unusual), without Python-level work per
    line on a well-formed file: every line goes to ``orjson`` where it gives
    exactly ``json.loads``'s values (see :func:`_orjson_values`); else the
    file's text is searched once for a lone surrogate escape and every line
    goes straight to the C scanner that ``json.loads`` itself uses.  A line
    the scanner refuses (white space
    around it included, which ``json.loads`` would skip), or does not
    consume to its end, a ``NaN`` (unless ``constants``), an integer too
    long, nesting too deep: the whole file is then read line by line,
    and :func:`parse_json` names the first bad line.
    """
    kept = _lines(text)
    if all(kept):
        numbers: list[int] = list(range(1, len(kept) + 1))
    else:  # an empty line is skipped; a line of white space is left to the scanner, which refuses it
        numbers = [n for n, line in enumerate(kept, start=1) if line]
        kept = [line for line in kept if line]
    with gc_paused():
        return _bulk_values(path, text, kept, numbers, expected=expected, constants=constants)


def _bulk_values(
    path: str | PathLike[str], text: str, kept: list[str], numbers: list[int], *, expected: str, constants: bool
) -> tuple[list[int], list[Any]]:
    """:func:`json_values` of the non-empty lines ``kept`` (numbered ``numbers``) of ``text``."""
    fast = _orjson_values(text, kept)  # orjson refuses a lone surrogate escape itself
    if fast is not None:
        return numbers, fast
    if _lone_surrogate_escape(text):
        values = list(_parsed_lines(path, text, expected=expected, constants=constants))
        return [n for n, _ in values], [v for _, v in values]
    scan = _SCANNERS[constants]
    if scan is not None:
        try:
            pairs = list(map(scan, kept, repeat(0, len(kept))))
        except Exception:  # StopIteration, JSONDecodeError, a refused constant, RecursionError, ValueError
            pairs = None
        if pairs is not None and list(map(_second, pairs)) == list(map(len, kept)):
            return numbers, list(map(_first, pairs))
    values = list(_parsed_lines(path, text, expected=expected, constants=constants))
    return [n for n, _ in values], [v for _, v in values]
