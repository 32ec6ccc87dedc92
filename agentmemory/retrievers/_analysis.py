"""The one seam for tokenising in bulk: :func:`encode_chunks`, exactly :func:`agentmemory.tokenize.tokenize`.

:func:`agentmemory.tokenize.tokenize` is the definition; everything here is
a faster way to compute it, chosen per run of texts by :func:`encode_chunk`
(BM25 calls :func:`encode_chunks`: a :class:`~agentmemory.collection.columns.TextSource`
chunk by chunk, each a buffer of UTF-8 bytes and the spans of its texts;
:func:`encode_texts` is the same over a list of strings, and
:func:`query_tokens` the one-text form for queries):

* a text holding any non-ASCII character is decoded and goes through ``tokenize`` itself;
* a run of ASCII texts uses the fact that, on ASCII, ``tokenize`` reduces to
  "lower-case, then maximal runs of ``[a-z0-9]``": NFKC leaves ASCII
  unchanged, ``str.casefold`` on ASCII is ``str.lower``, and ``[^\\W_]``
  matches exactly the ASCII letters and digits.  That rule is written once,
  as the byte tables below (:data:`ASCII_TABLE`, :data:`LOWER_BYTES`), and
  both bulk paths read it from them:

  - with the compiled kernels (``accel``, :mod:`._accel`, used for large
    indexes), the numba tokeniser ``_tokenize_ascii`` reads the spans in
    the chunk's own buffer and hashes each run of bytes whose
    :data:`LOWER_BYTES` is not 0 (its table of terms kept from chunk to
    chunk, so each distinct term is spelled once);
  - otherwise NumPy (:func:`tokenize_ascii`, over one joined copy of a
    run's spans): one ``bytes.translate`` maps
    every letter and digit to a code 1-36 and every other byte to 0, token
    boundaries are where the code turns zero or non-zero, and each token of
    up to 16 characters is packed, exactly, into two 64-bit words (its
    codes, zero-padded; longer tokens are numbered through a dict).
    Distinct tokens are found by hashing the pair and checking every token
    against the first one of its hash slot, so no two different tokens ever
    share a number, whatever the hash does.

Each path repays itself (measured on 35-word ASCII memories, one core, when
they were written): the NumPy path tokenises 1,000 texts in 18 ms where
``tokenize`` takes 95 ms, 200,000 in 1.2 s against 13.6 s; numba takes 12 ms
and 0.96 s; the query shortcut takes 0.8 us a query against 5.3 us.  (The
NumPy path has since become about a third faster: 0.50 to 0.35 s for the
benchmark's 100,000 texts, measured in one process.)
``tests/retrievers/test_index.py`` checks every path against ``tokenize`` (tokens,
counts and the order new terms are numbered in) on generated text, and
``tests/test_tokenize.py`` checks the tables against ``tokenize`` on every
ASCII character.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from agentmemory.collection.columns import TextChunk, TextList, TextSource, source_bytes
from agentmemory.tokenize import tokenize

__all__ = [
    "ASCII_TABLE",
    "LOWER_BYTES",
    "Numbering",
    "dict_numbering",
    "encode_chunk",
    "encode_chunks",
    "encode_source",
    "encode_texts",
    "query_tokens",
    "tokenize_ascii",
]

_KEEP = b"abcdefghijklmnopqrstuvwxyz0123456789"
_table = bytearray(b" " * 256)
for _c in _KEEP:
    _table[_c] = _c
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _table[_c] = _c + 32
ASCII_TABLE = bytes(_table)
"""``bytes.translate`` table: A-Z to a-z, a-z and 0-9 kept, every other byte to a space."""
_codes = bytearray(256)
_letters = bytearray(256)
for _i, _c in enumerate(_KEEP):
    _codes[_c] = _i + 1
    _letters[_i + 1] = _c
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _codes[_c] = _codes[_c + 32]
_CODE_TABLE = bytes(_codes)  # a-z and A-Z to 1-26, 0-9 to 27-36, every other byte to 0
_LETTER_TABLE = bytes(_letters)  # a code back to its lower-case letter or digit
del _table, _codes, _letters, _c, _i
LOWER_BYTES = np.frombuffer(ASCII_TABLE.replace(b" ", b"\x00"), dtype=np.uint8)
""":data:`ASCII_TABLE` with 0 for every byte that is not part of a token (the compiled tokeniser's table)."""
_KERNEL_MAX_TEXT = 65_535  # the compiled tokeniser packs a token's length into 16 bits

_RUN_CHARS = 8_000_000  # most ASCII characters tokenised at once (bounds peak memory; faster than larger runs)
_MIN_RUN_CHARS = 2_000_000  # fewest (a chunk's fixed costs: its segment's terms and postings pointers)
_CHUNKS = 8
"""A source of up to ``_CHUNKS * _RUN_CHARS`` bytes is cut into about this many chunks: a chunk's tokens cost
about ten times its bytes while it is tokenised, the finished index about its bytes, so a batch tokenised
at once would peak at several times what it keeps (measured at 100,000 entries, 30 MB of text: one 8 MB run
peaked at 183 MB for the whole ``retrieve`` process, 2 MB runs at 127 MB, in the same time)."""


def run_chars(texts: TextSource) -> int:
    """The chunk size :func:`encode_chunks` asks of ``texts``: about an eighth of its bytes, between
    :data:`_MIN_RUN_CHARS` and :data:`_RUN_CHARS` (the most, when the source does not say its size)."""
    size = source_bytes(texts)
    if size is None:
        return _RUN_CHARS
    return min(_RUN_CHARS, max(_MIN_RUN_CHARS, -(-size // _CHUNKS)))


_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_LONG = np.uint64((1 << 64) - 1)  # high word of a token longer than 16 characters (no short token has it)


def query_tokens(text: str) -> list[str]:
    """``tokenize(text)``, with the ASCII shortcut."""
    if text.isascii():
        return text.encode("ascii").translate(ASCII_TABLE).decode("ascii").split()
    return tokenize(text)


def _multipliers():
    """Odd 64-bit multiplier pairs, a new pair for every hashing round (a fixed sequence)."""
    x = 0x9E3779B97F4A7C15
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield np.uint64(x | 1), np.uint64(((x >> 7) | 1) % (1 << 64))


def _round_bits(pending: int, first_round: bool) -> int:
    """Bits of a hashing round's table: an eighth of the tokens in the first round (at most 2**17 slots, so the
    table stays in cache: frequent terms take their slots there, the rest wait), twice the pending ones after."""
    if first_round:
        return min(max(pending.bit_length() - 3, 10), 17)
    return min(max(pending.bit_length() + 1, 10), 24)


def _distinct(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct ``(lo, hi)`` pairs in order of first occurrence.

    Returns ``(ids, first)``: each pair's number (int32) and, per number, the
    index of its first occurrence.  Each round hashes the pairs not yet
    numbered into a table, keeps for every slot its first pair, and numbers
    the pairs equal to their slot's first pair; the others (a different pair
    in the same slot) go to the next round with other multipliers and a
    table sized to them (:func:`_round_bits`).  Every round numbers at least
    one pair, and equality is checked on the pairs themselves, so the result
    is exact whatever the hash.
    """
    n = len(lo)
    pending: np.ndarray | None = None  # None: every pair (the first round)
    plo, phi = lo, hi
    firsts: list[np.ndarray] = []
    rounds: list[tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, int]] = []
    multipliers = _multipliers()
    while pending is None or len(pending):
        bits = _round_bits(n if pending is None else len(pending), pending is None)
        m1, m2 = next(multipliers)
        h = plo * m1
        h ^= phi * m2
        h >>= np.uint64(64 - bits)
        slot = h.view(np.int64)
        table = np.full(1 << bits, n, dtype=np.int32)
        np.minimum.at(table, slot, np.arange(n, dtype=np.int32) if pending is None else pending)
        rep = table[slot]
        ok = lo[rep] == plo
        ok &= hi[rep] == phi
        occupied = np.flatnonzero(table < n)
        firsts.append(table[occupied])
        rounds.append((occupied, pending, slot, ok, bits))
        bad = np.flatnonzero(~ok)
        pending = bad.astype(np.int32) if pending is None else pending[bad]
        plo, phi = lo[pending], hi[pending]
    first = np.concatenate(firsts)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int32)
    rank[order] = np.arange(len(first), dtype=np.int32)
    ids = np.empty(n, dtype=np.int32)
    base = 0
    for occupied, where, slot, ok, bits in rounds:
        lut = np.empty(1 << bits, dtype=np.int32)
        lut[occupied] = rank[base : base + len(occupied)]
        base += len(occupied)
        if where is None:  # the first round: every pair, those it did not number are overwritten by later rounds
            ids[:] = lut[slot]
        else:
            done = np.flatnonzero(ok)
            ids[where[done]] = lut[slot[done]]
    return ids, first[order]


def tokenize_ascii(texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Tokenise ASCII ``texts``: (term numbers local to this call, token counts, the distinct terms).

    The distinct terms come in order of first occurrence (term number ``i`` is
    ``terms[i]``); the tokens are exactly ``tokenize``'s (see the module
    docstring for how).
    """
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    # a leading NUL and space (a token starts where the code turns non-zero) and 16 trailing NULs (8-byte reads)
    raw = " ".join(["\x00", *texts, "\x00" * 16]).encode("ascii").translate(_CODE_TABLE)
    text_starts = np.full(len(texts), 2, dtype=np.int64)  # where each text's first character is in raw
    if len(texts) > 1:
        np.cumsum(lens[:-1] + 1, out=text_starts[1:])
        text_starts[1:] += 2
    return _tokenize_codes(raw, text_starts)


def _tokenize_spans(
    buf, starts: np.ndarray, ends: np.ndarray, numbering: tuple[Numbering, _Memo] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`tokenize_ascii` of the ASCII texts ``buf[starts[i]:ends[i]]``.

    The codes of the bytes from the first span's start to the last one's
    end (bytes between spans set to 0), a 0 inserted before each text, two
    before the first and 16 after the last: no Python object per text.
    """
    first = int(starts[0])
    size = int(ends[-1]) - first
    codes = np.zeros(2 + size + 16, dtype=np.uint8)
    codes[2 : 2 + size] = np.frombuffer(bytes(memoryview(buf)[first : first + size]).translate(_CODE_TABLE), np.uint8)
    rel = starts - first
    gaps = rel[1:] - (ends[:-1] - first)
    if len(gaps) and int(gaps.min()) > 0:  # every two texts apart (a JSON line's fields between them, say)
        # zero the bytes between the texts: a run of ones per text, of zeros per gap, multiplied in (the zeros
        # then keep each text's tokens apart: no 0 to insert, and the codes are tokenised in place)
        widths = np.empty(2 * len(rel) - 1, dtype=np.int64)
        widths[0::2] = ends - starts
        widths[1::2] = gaps
        keep = np.zeros(len(widths), dtype=np.uint8)
        keep[0::2] = 1
        codes[2 : 2 + size] *= np.repeat(keep, widths)
        del widths, keep
        return _tokenize_codes(codes, rel + 2, numbering)
    if not np.array_equal(rel[1:], ends[:-1] - first):  # bytes between some of the spans: not part of any text
        inside = np.zeros(size + 1, dtype=np.int8)
        np.add.at(inside, rel, 1)
        np.add.at(inside, ends - first, -1)
        codes[2 : 2 + size][np.cumsum(inside[:-1], dtype=np.int8) == 0] = 0
        del inside
    raw = np.insert(codes, rel[1:] + 2, 0).tobytes()
    del codes
    return _tokenize_codes(raw, rel + 2 + np.arange(len(rel), dtype=np.int64), numbering)


def _tokenize_codes(
    raw: bytes | np.ndarray, text_starts: np.ndarray, numbering: tuple[Numbering, _Memo] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The tokens of ``raw`` (bytes as codes, or a uint8 array of them; 0 around every token, 16 zero bytes at the
    end): their term numbers
    local to this call, how many lie from each of ``text_starts`` (ascending positions, each after a 0) to the
    next, and the distinct terms in order of first occurrence.

    With ``numbering = (numbers, memo)`` the term numbers are ``numbers``' instead, and the terms list is
    empty: only the distinct tokens ``memo`` has not seen are spelled and numbered (see :class:`_Memo`)."""
    nonzero = np.frombuffer(raw, dtype=np.uint8) != 0
    edges = np.flatnonzero(nonzero[1:] != nonzero[:-1])
    edges += 1
    del nonzero
    starts, ends = edges[0::2], edges[1::2]
    size = ends - starts
    n = len(starts)
    octets = np.ndarray((len(raw) - 7,), dtype="<u8", buffer=raw, strides=(1,))  # the 8 bytes from each offset
    lo = octets[starts]
    lo &= _MASKS[np.minimum(size, 8)]
    hi = np.zeros(n, dtype=np.uint64)
    over = np.flatnonzero(size > 8)  # the second word only for tokens that have one
    if len(over):
        hi[over] = octets[starts[over] + 8] & _MASKS[np.minimum(size[over] - 8, 8)]
    del octets, edges
    long = over[size[over] > 16]
    if len(long):
        seen: dict[bytes, int] = {}
        view = memoryview(raw)  # type: ignore[arg-type]  # an ndarray is a buffer
        for i, s, e in zip(long.tolist(), starts[long].tolist(), ends[long].tolist()):
            lo[i] = seen.setdefault(bytes(view[s:e]), len(seen))
        hi[long] = _LONG
    ids, first = _distinct(lo, hi)
    counts = np.diff(np.searchsorted(starts, text_starts), append=n)
    if numbering is not None:
        numbers, memo = numbering
        lut = memo.numbered(
            lo[first], hi[first], lambda new: numbers(_spelled(raw, starts[first[new]], size[first[new]]))
        )
        return lut[ids], counts, []
    del lo, hi
    return ids, counts, _spelled(raw, starts[first], size[first])


class _Memo:
    """The distinct tokens of the NumPy path already numbered in one batch (their packed words, see
    :func:`_tokenize_codes`, and numbers), so that each later chunk spells, decodes and looks up only the words
    it is the first to see, not every word it holds (at 100,000 entries in 2 MB chunks that look-up was a third
    of the build).

    The packed pairs are found by a 64-bit hash of the pair, sorted, and then checked equal on the pair itself,
    so no two tokens ever share a number whatever the hash does: a pair whose hash meets another's is simply
    numbered again through ``numbers`` (which knows it).  Tokens longer than 16 characters (numbered per chunk,
    not by their bytes) are never kept.
    """

    __slots__ = ("hi", "keys", "lo", "numbers")

    _M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype=np.uint64)
        self.lo = np.empty(0, dtype=np.uint64)
        self.hi = np.empty(0, dtype=np.uint64)
        self.numbers = np.empty(0, dtype=np.int32)

    def _hash(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        key = lo * self._M1
        key ^= hi * self._M2
        return key

    def numbered(self, lo: np.ndarray, hi: np.ndarray, number_new: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The numbers (int32) of the distinct pairs ``(lo[i], hi[i])`` (in order of first occurrence): those
        seen before from the memo, the others from ``number_new(their positions)`` (in the order given), then
        kept."""
        key = self._hash(lo, hi)
        out = np.full(len(lo), -1, dtype=np.int32)
        if len(self.keys):
            order = np.argsort(key)  # sorted needles: searchsorted walks the memo in order (5x faster here)
            at = np.empty(len(key), dtype=np.intp)
            at[order] = np.searchsorted(self.keys, key[order])
            np.minimum(at, len(self.keys) - 1, out=at)
            hit = self.keys[at] == key
            hit &= self.lo[at] == lo
            hit &= self.hi[at] == hi
            out[hit] = self.numbers[at[hit]]
        new = np.flatnonzero(out < 0)
        if len(new):
            out[new] = number_new(new)
            keep = new[hi[new] != _LONG]
            order = np.argsort(key[keep], kind="stable")
            keep = keep[order]
            where = np.searchsorted(self.keys, key[keep])
            self.keys = np.insert(self.keys, where, key[keep])
            self.lo = np.insert(self.lo, where, lo[keep])
            self.hi = np.insert(self.hi, where, hi[keep])
            self.numbers = np.insert(self.numbers, where, out[keep])
        return out


def _spelled(raw: bytes | np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> list[str]:
    """The tokens of ``raw`` (codes) at ``starts`` with ``sizes``, spelled in lower-case letters and digits.

    One gather of their bytes, each with the byte after it (a separator, code 0: tokens are maximal runs),
    one ``translate``, one ``decode`` and one ``split``, instead of a slice and a decode per token.
    """
    if not len(starts):
        return []
    widths = sizes + 1
    ends = np.cumsum(widths)
    where = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - (ends - widths), widths)
    spelled = np.frombuffer(raw, dtype=np.uint8)[where].tobytes().translate(_LETTER_TABLE).decode("ascii")
    return spelled.split("\x00")[:-1]


class _Kernel:
    """The compiled tokeniser of ``accel`` over the chunks of one source: its hash table of terms carries over
    from chunk to chunk, so each distinct term is spelled and numbered once, not once per chunk."""

    __slots__ = ("accel", "lut", "n_pool", "n_uniq", "pool", "table")

    def __init__(self, accel) -> None:
        self.accel = accel
        self.table = np.full(3 << 16, -1, dtype=np.int64)
        self.pool = np.empty(1 << 16, dtype=np.uint8)
        self.n_uniq = self.n_pool = 0
        self.lut = np.empty(0, dtype=np.int32)  # the kernel's term number -> the caller's

    def spans(
        self, buf, starts: np.ndarray, ends: np.ndarray, numbers: Numbering
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(term numbers by ``numbers``, token counts) of the ASCII texts ``buf[starts[i]:ends[i]]``; None when a
        text is too long for the kernel."""
        if not len(starts):
            return np.empty(0, np.int32), np.empty(0, np.int64)
        if int((ends - starts).max()) > _KERNEL_MAX_TEXT:
            return None
        data = np.frombuffer(buf, dtype=np.uint8)
        data.flags.writeable = False  # one compiled signature, whatever holds the bytes
        ids, counts, self.table, self.pool, n_uniq, n_pool = self.accel._tokenize_ascii(
            data, starts, ends, LOWER_BYTES, self.table, self.pool, self.n_uniq, self.n_pool
        )
        del data
        if n_uniq > self.n_uniq:  # the new terms, each followed by a 0 byte, in the order of their numbers
            words = self.pool[self.n_pool : n_pool].tobytes().decode("ascii").split("\x00")
            words.pop()
            self.lut = np.concatenate((self.lut, numbers(words)))
            self.n_uniq, self.n_pool = n_uniq, n_pool
        return self.lut[ids], counts


def _flag_runs(flags: np.ndarray):
    """Yield ``(is_ascii, start, stop)`` covering a chunk's texts in order: runs of ASCII texts, and each other
    text on its own."""
    n = len(flags)
    if flags.all():
        if n:
            yield True, 0, n
        return
    run = 0
    for i in np.flatnonzero(~flags).tolist():
        if run < i:
            yield True, run, i
        yield False, i, i + 1
        run = i + 1
    if run < n:
        yield True, run, n


Numbering = Callable[[list[str]], np.ndarray]
"""Term numbers (int32) of distinct words, new ones numbered in the order given (see :func:`dict_numbering`)."""


def dict_numbering(vocab: dict[str, int]) -> Numbering:
    """The numbering of ``vocab`` (term -> number): new words get the next free numbers, added to it."""

    def numbers(words: list[str]) -> np.ndarray:
        found = list(map(vocab.get, words))
        if None in found:
            for i, number in enumerate(found):
                if number is None:
                    found[i] = vocab[words[i]] = len(vocab)
        return np.array(found, dtype=np.int32)

    return numbers


def encode_chunk(
    chunk: TextChunk, numbers: Numbering, accel=None, kernel: _Kernel | None = None, memo: _Memo | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Tokenise the texts of ``chunk`` into term numbers (``numbers`` numbers the words): ``(ids, lengths)``.

    ``ids`` (int32) holds every token's term number, text after text, and
    ``lengths`` (int64) each text's token count.  New terms get the next
    free numbers in order of first occurrence.  The seam: each run of
    texts takes the path of the module docstring, read from the chunk's
    bytes (a run of ASCII texts: the compiled kernel ``accel`` straight from
    the buffer, else NumPy over one joined copy; any other text is decoded
    and goes through ``tokenize``).  Whatever the path, the result is
    ``tokenize``'s.  ``memo`` (a :class:`_Memo` shared by a batch's chunks)
    lets the NumPy path spell only the words the batch has not numbered yet.
    """
    if accel is not None and kernel is None:
        kernel = _Kernel(accel)
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    buf = chunk.buf
    starts = np.ascontiguousarray(chunk.starts, dtype=np.int64)
    ends = np.ascontiguousarray(chunk.ends, dtype=np.int64)
    for is_ascii, start, stop in _flag_runs(np.asarray(chunk.ascii, dtype=bool)):
        if is_ascii:
            s, e = starts[start:stop], ends[start:stop]
            done = kernel.spans(buf, s, e, numbers) if kernel is not None else None
            if done is None and memo is not None:
                ids, lengths, _ = _tokenize_spans(buf, s, e, (numbers, memo))
                done = ids.astype(np.int32, copy=False), lengths
            elif done is None:
                ids, lengths, words = _tokenize_spans(buf, s, e)
                done = (numbers(words)[ids] if len(ids) else ids.astype(np.int32)), lengths
            id_parts.append(done[0])
            len_parts.append(done[1])
            continue
        tokens = tokenize(str(buf[int(starts[start]) : int(ends[start])], "utf-8"))
        uniq = list(dict.fromkeys(tokens))
        lut = numbers(uniq)
        where = {w: i for i, w in enumerate(uniq)}
        id_parts.append(lut[[where[t] for t in tokens]] if tokens else np.empty(0, np.int32))
        len_parts.append(np.array([len(tokens)], dtype=np.int64))
    ids = np.concatenate(id_parts) if id_parts else np.empty(0, np.int32)
    lengths = np.concatenate(len_parts) if len_parts else np.empty(0, np.int64)
    return ids, lengths


def encode_chunks(texts: TextSource, numbers: Numbering, accel=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`encode_chunk` of each chunk of ``texts`` (about :func:`run_chars` bytes each), in order."""
    kernel = _Kernel(accel) if accel is not None else None
    size, run = source_bytes(texts), run_chars(texts)
    # the NumPy path's words numbered so far, when there will be several chunks: a chunk spells only the words
    # new to the batch (one chunk, an index per scope: nothing to carry over)
    memo = _Memo() if size is None or size > run else None
    for chunk in texts.chunks(run):
        yield encode_chunk(chunk, numbers, accel, kernel, memo)


def encode_source(texts: TextSource, numbers: Numbering, accel=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode_chunks` of ``texts``, concatenated."""
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    for ids, lengths in encode_chunks(texts, numbers, accel):
        id_parts.append(ids)
        len_parts.append(lengths)
    if len(id_parts) == 1:
        return id_parts[0], len_parts[0]
    if not id_parts:
        return np.empty(0, np.int32), np.empty(0, np.int64)
    return np.concatenate(id_parts), np.concatenate(len_parts)


def encode_texts(texts: list[str], vocab: dict[str, int], accel=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode_source` of a list of strings, numbering terms in ``vocab`` (new ones added to it)."""
    return encode_source(TextList(texts), dict_numbering(vocab), accel)
