"""Batch tokenisation into term numbers, exactly :func:`agentmemory.tokenize.tokenize`.

For a text made only of ASCII characters, ``tokenize`` reduces to "lower-case,
then maximal runs of ``[a-z0-9]``": NFKC leaves ASCII unchanged,
``str.casefold`` on ASCII is ``str.lower``, and ``[^\\W_]`` matches exactly the
ASCII letters and digits.  Such texts are tokenised here in bulk with
``bytes.translate`` (every other byte becomes a space) and ``split``; every
other text goes through ``tokenize`` itself.  ``tests/test_fastpath.py``
checks the equivalence on generated text.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from ..tokenize import tokenize

__all__ = ["ASCII_TABLE", "encode_texts", "query_tokens"]

_KEEP = b"abcdefghijklmnopqrstuvwxyz0123456789"
_table = bytearray(b" " * 256)
for _c in _KEEP:
    _table[_c] = _c
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _table[_c] = _c + 32
ASCII_TABLE = bytes(_table)
"""``bytes.translate`` table: A-Z to a-z, a-z and 0-9 kept, every other byte to a space."""
_sentinel_table = bytearray(ASCII_TABLE)
_sentinel_table[0] = 0
_SENTINEL_TABLE = bytes(_sentinel_table)  # as ASCII_TABLE but NUL survives (a document separator)
del _table, _sentinel_table, _c

_RUN_CHARS = 32_000_000  # ASCII characters joined at once (bounds peak memory)


def query_tokens(text: str) -> list[str]:
    """``tokenize(text)``, with the ASCII shortcut."""
    if text.isascii():
        return text.encode("ascii").translate(ASCII_TABLE).decode("ascii").split()
    return tokenize(text)


def _chunks(texts: list[str]):
    """Yield ``(start, stop)`` slices of ``texts`` holding about ``_RUN_CHARS`` characters each."""
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 3)
    start = 0
    while start < len(texts):
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + _RUN_CHARS, side="right")))
        yield start, min(stop, len(texts))
        start = stop


def _ascii_runs(texts: list[str], nul_ok: bool):
    """Yield ``(is_ascii_run, start, stop)`` covering ``texts`` in order.

    A run of ASCII texts (without NUL, which separates documents in the pure
    path's joined text, unless ``nul_ok``) holds at most about
    ``_RUN_CHARS`` characters; every other text is a run of its own.
    """
    for start, stop in _chunks(texts):
        chunk = texts[start:stop]
        if all(map(str.isascii, chunk)) and (nul_ok or not any("\x00" in t for t in chunk)):
            yield True, start, stop
            continue
        run = start
        for i, t in enumerate(chunk, start=start):
            if t.isascii() and (nul_ok or "\x00" not in t):
                continue
            if run < i:
                yield True, run, i
            yield False, i, i + 1
            run = i + 1
        if run < stop:
            yield True, run, stop


def encode_texts(texts: list[str], vocab: dict[str, int], accel=None) -> tuple[np.ndarray, np.ndarray]:
    """Tokenise ``texts`` into term numbers, adding new terms to ``vocab``.

    Returns ``(ids, lengths)``: ``ids`` (int32) holds every token's term
    number, text after text, and ``lengths`` (int64) each text's token count.
    New terms get the next free numbers in order of first occurrence.
    ``accel`` (the numba kernels module, or None) tokenises ASCII runs in
    compiled code; the result is the same.
    """
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []

    def global_numbers(words: list[str]) -> np.ndarray:
        """Term numbers in ``vocab`` of the distinct ``words`` (new ones added in order)."""
        numbers = list(map(vocab.get, words))
        if None in numbers:
            for i, number in enumerate(numbers):
                if number is None:
                    numbers[i] = vocab[words[i]] = len(vocab)
        return np.array(numbers, dtype=np.int32)

    for is_ascii, start, stop in _ascii_runs(texts, nul_ok=accel is not None):
        run = texts[start:stop]
        if is_ascii and accel is not None:
            out = accel.tokenize_ascii(run)
            if out is not None:
                ids, lengths, words = out
                id_parts.append(global_numbers(words)[ids] if len(ids) else ids)
                len_parts.append(lengths)
                continue
        if not is_ascii or accel is not None:
            for text in run:
                tokens = tokenize(text)
                uniq = list(dict.fromkeys(tokens))
                lut = global_numbers(uniq)
                where = {w: i for i, w in enumerate(uniq)}
                id_parts.append(lut[[where[t] for t in tokens]] if tokens else np.empty(0, np.int32))
                len_parts.append(np.array([len(tokens)], dtype=np.int64))
            continue
        local: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        local["\x00"]  # local number 0: the document separator
        joined = " \x00 ".join(run).encode("ascii").translate(_SENTINEL_TABLE).decode("ascii")
        tokens = joined.split()
        del joined
        ids = np.fromiter(map(local.__getitem__, tokens), dtype=np.int32, count=len(tokens))
        del tokens
        bounds = np.flatnonzero(ids == 0)
        edges = np.empty(len(bounds) + 2, dtype=np.int64)
        edges[0] = -1
        edges[1:-1] = bounds
        edges[-1] = len(ids)
        len_parts.append(np.diff(edges) - 1)
        lut = np.empty(len(local), dtype=np.int32)
        lut[0] = -1
        lut[1:] = global_numbers(list(local)[1:])
        id_parts.append(lut[ids[ids != 0]] if len(bounds) else lut[ids])
    ids = np.concatenate(id_parts) if id_parts else np.empty(0, np.int32)
    lengths = np.concatenate(len_parts) if len_parts else np.empty(0, np.int64)
    return ids, lengths
