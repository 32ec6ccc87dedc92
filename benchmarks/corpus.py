"""The benchmark's synthetic corpus and queries: deterministic, tokenised once.

* Vocabulary: ``VOCAB`` (50,000) distinct lowercase ASCII pseudo-words; the
  word of rank ``r`` (1-based) has probability proportional to ``1 / r``
  (Zipf, exponent 1).  Every word survives :func:`agentmemory.tokenize.tokenize`
  unchanged, so the token lists each engine receives are identical.
* Entries: each has a length drawn uniformly from 30..60 tokens, every
  token drawn independently from the Zipf distribution.  Entry ``i`` has id
  ``"d%08d" % i``, so id order is number order.  The corpus of size ``n`` is
  the first ``n`` entries of one stream, so sizes nest (the incremental-add
  benchmark uses entries ``n .. n + n/100``).
* Queries: ``QUERIES`` (1,000) queries of 3..6 distinct terms, drawn from the
  same Zipf distribution restricted to ranks above ``SKIP_TOP`` (100), i.e.
  never one of the 100 most common words.

Everything is generated from fixed seeds with NumPy's PCG64, and cached in
``benchmarks/.cache`` (``python benchmarks/corpus.py`` prints a digest).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VOCAB = 50_000
MIN_LEN, MAX_LEN = 30, 60
QUERIES = 1_000
MIN_QLEN, MAX_QLEN = 3, 6
SKIP_TOP = 100
SEED = 20260501
MAX_DOCS = 1_010_000  # 1M plus 1% for the incremental-add benchmark
CHUNK = 100_000  # entries generated per RNG chunk (keeps prefixes stable)
CACHE = Path(__file__).resolve().parent / ".cache"


def words() -> list[str]:
    """The vocabulary, most common word first."""
    rng = np.random.Generator(np.random.PCG64(SEED))
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < VOCAB:
        lengths = rng.integers(3, 10, size=VOCAB)
        chars = letters[rng.integers(0, 26, size=(VOCAB, 9))]
        for row, n in zip(chars, lengths):
            w = row[:n].tobytes().decode("ascii")
            if w not in seen:
                seen.add(w)
                out.append(w)
                if len(out) == VOCAB:
                    break
    return out


def _cdf(skip: int = 0) -> np.ndarray:
    p = 1.0 / np.arange(1, VOCAB + 1, dtype=np.float64)
    p[:skip] = 0.0
    c = np.cumsum(p)
    return c / c[-1]


@dataclass(frozen=True)
class Corpus:
    """``tokens[offsets[i]:offsets[i + 1]]`` are entry ``i``'s token numbers (rank - 1)."""

    tokens: np.ndarray  # int32
    offsets: np.ndarray  # int64, len n + 1
    words: list[str]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def ids(self, start: int = 0, stop: int | None = None) -> list[str]:
        stop = len(self) if stop is None else stop
        return [f"d{i:08d}" for i in range(start, stop)]

    def texts(self, start: int = 0, stop: int | None = None) -> list[str]:
        """Entries ``start..stop`` as their tokens joined by single spaces."""
        stop = len(self) if stop is None else stop
        w = np.asarray(self.words, dtype=object)
        lo, hi = int(self.offsets[start]), int(self.offsets[stop])
        flat = w[self.tokens[lo:hi]].tolist()
        offs = (self.offsets[start : stop + 1] - lo).tolist()
        return [" ".join(flat[a:b]) for a, b in zip(offs[:-1], offs[1:])]

    def token_lists(self, start: int = 0, stop: int | None = None) -> list[list[str]]:
        stop = len(self) if stop is None else stop
        w = np.asarray(self.words, dtype=object)
        lo, hi = int(self.offsets[start]), int(self.offsets[stop])
        flat = w[self.tokens[lo:hi]].tolist()
        offs = (self.offsets[start : stop + 1] - lo).tolist()
        return [flat[a:b] for a, b in zip(offs[:-1], offs[1:])]


def _generate_all() -> tuple[np.ndarray, np.ndarray]:
    cdf = _cdf()
    toks, lens = [], []
    for chunk_no, start in enumerate(range(0, MAX_DOCS, CHUNK)):
        n = min(CHUNK, MAX_DOCS - start)
        rng = np.random.Generator(np.random.PCG64([SEED, 1, chunk_no]))
        length = rng.integers(MIN_LEN, MAX_LEN + 1, size=n)
        draws = np.searchsorted(cdf, rng.random(int(length.sum())), side="right")
        toks.append(np.minimum(draws, VOCAB - 1).astype(np.int32))
        lens.append(length)
    offsets = np.zeros(MAX_DOCS + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lens), out=offsets[1:])
    return np.concatenate(toks), offsets


def corpus(n: int) -> Corpus:
    """The first ``n`` entries (n <= MAX_DOCS), cached on disk."""
    if not 0 < n <= MAX_DOCS:
        raise ValueError(f"n: {n!r} is outside 1..{MAX_DOCS}")
    path = CACHE / "corpus.npz"
    if path.is_file():
        with np.load(path) as data:
            tokens_all, offsets_all = data["tokens"], data["offsets"]
    else:
        tokens_all, offsets_all = _generate_all()
        CACHE.mkdir(exist_ok=True)
        tmp = CACHE / "corpus.tmp.npz"
        np.savez(tmp, tokens=tokens_all, offsets=offsets_all)
        tmp.replace(path)
    offsets = offsets_all[: n + 1].copy()
    tokens = tokens_all[: int(offsets[-1])].copy()
    return Corpus(tokens, offsets, words())


def queries() -> list[list[str]]:
    """The benchmark's queries as token lists (distinct terms, never a top-100 word)."""
    vocab = words()
    cdf = _cdf(SKIP_TOP)
    rng = np.random.Generator(np.random.PCG64([SEED, 2]))
    out = []
    for _ in range(QUERIES):
        length = int(rng.integers(MIN_QLEN, MAX_QLEN + 1))
        terms: list[int] = []
        while len(terms) < length:
            t = int(min(np.searchsorted(cdf, rng.random(), side="right"), VOCAB - 1))
            if t not in terms:
                terms.append(t)
        out.append([vocab[t] for t in terms])
    return out


def digest(n: int) -> str:
    c = corpus(n)
    h = hashlib.sha256(c.tokens.tobytes())
    h.update(c.offsets.tobytes())
    h.update("\n".join(" ".join(q) for q in queries()).encode())
    return h.hexdigest()[:16]


if __name__ == "__main__":
    for size in (int(a) for a in sys.argv[1:] or ["10000"]):
        c = corpus(size)
        print(size, len(c.tokens), "tokens", digest(size))


TAG_VOCAB = 2_000
MAX_TAGS = 3


def tag_numbers(n: int) -> np.ndarray:
    """Entry ``i``'s tags as row ``i`` of an (n, 3) array of tag numbers, -1 for none.

    Each entry has 1..3 distinct tags drawn from a Zipf distribution over
    ``TAG_VOCAB`` tags; tag ``j`` is named ``"topic-j"``.  Independent of the
    text corpus (its own seed), nested by size like it.
    """
    rng = np.random.Generator(np.random.PCG64([SEED, 3]))
    p = 1.0 / np.arange(1, TAG_VOCAB + 1)
    cdf = np.cumsum(p) / p.sum()
    total = MAX_DOCS
    raw = np.minimum(np.searchsorted(cdf, rng.random((total, MAX_TAGS)), side="right"), TAG_VOCAB - 1)
    count = rng.integers(1, MAX_TAGS + 1, size=total)
    raw = raw[:n].copy()
    raw[np.arange(MAX_TAGS)[None, :] >= count[:n, None]] = -1
    for j in range(1, MAX_TAGS):  # drop repeats within an entry
        for i in range(j):
            raw[:, j][raw[:, j] == raw[:, i]] = -1
    return raw


def tag_queries() -> list[list[int]]:
    """``QUERIES`` tag queries of 1..3 distinct tag numbers, never one of the 10 most common tags."""
    rng = np.random.Generator(np.random.PCG64([SEED, 4]))
    p = 1.0 / np.arange(1, TAG_VOCAB + 1)
    p[:10] = 0.0
    cdf = np.cumsum(p) / p.sum()
    out = []
    for _ in range(QUERIES):
        length = int(rng.integers(1, MAX_TAGS + 1))
        tags: list[int] = []
        while len(tags) < length:
            t = int(min(np.searchsorted(cdf, rng.random(), side="right"), TAG_VOCAB - 1))
            if t not in tags:
                tags.append(t)
        out.append(tags)
    return out
