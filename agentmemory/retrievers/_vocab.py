"""Term numbers: one process-wide table of term strings, and per index a small array of the terms it holds.

An index numbers its terms locally (``0 .. n - 1`` in order of first
occurrence: its postings, document frequencies and IDF are its own), but it
does not keep a dict of strings: every term string lives once per process,
in :data:`TERMS` (term -> global number), and a :class:`Vocabulary` holds only
int32 arrays (local -> global number, and the global numbers sorted with
their local ones for look-ups): about 12 bytes a term instead of a dict entry,
a string and an int (about 130).  So a store with an index per scope (500 at
LongMemEval-M's shape, ~30,000 terms each) holds each word once, not once per
scope.

The table only grows (a process's distinct words); numbers are never reused,
so an index's global numbers stay valid for the life of the process.  A
pickled :class:`Vocabulary` carries its words, and is numbered again in the
process that loads it.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["TERMS", "TermTable", "Vocabulary"]

_MEMO = 1 << 16
"""Most query words a :class:`Vocabulary` remembers (then it starts again)."""


class TermTable:
    """Term string -> global number, shared by every index of the process (new terms numbered on first sight)."""

    __slots__ = ("lock", "numbers")

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}
        self.lock = threading.Lock()  # numbering new terms: two threads never give one term two numbers

    def __len__(self) -> int:
        return len(self.numbers)

    def number(self, words: list[str]) -> np.ndarray:
        """The global numbers (int32) of ``words``, new ones added."""
        table = self.numbers
        found = list(map(table.get, words))
        if None in found:
            with self.lock:
                for i, number in enumerate(found):
                    if number is None:
                        found[i] = table.setdefault(words[i], len(table))
        return np.array(found, dtype=np.int32)


TERMS = TermTable()
"""The process's term table (:class:`TermTable`)."""


class Vocabulary:
    """One index's terms: local numbers ``0 .. len - 1``, each standing for a term of :data:`TERMS`."""

    __slots__ = ("_global", "_keys", "_locals", "_memo", "_n")

    def __init__(self) -> None:
        self._n = 0
        self._global = np.zeros(0, dtype=np.int32)  # local -> global number (capacity grows)
        self._keys = np.zeros(0, dtype=np.int32)  # the global numbers, sorted
        self._locals = np.zeros(0, dtype=np.int32)  # the local number of each of _keys
        self._memo: dict[str, int] = {}  # words looked up by queries (see lookup)

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return int(self._global.nbytes + self._keys.nbytes + self._locals.nbytes)

    def copy(self) -> Vocabulary:
        other = Vocabulary()
        other._n = self._n
        other._global = self._global[: self._n].copy()
        other._keys = self._keys.copy()
        other._locals = self._locals.copy()
        return other

    def _local(self, numbers: np.ndarray) -> np.ndarray:
        """The local numbers (int32) of global ``numbers``; -1 for those this index does not hold."""
        n = self._n
        if not n:
            return np.full(len(numbers), -1, dtype=np.int32)
        at = np.searchsorted(self._keys, numbers)
        np.minimum(at, n - 1, out=at)
        return np.where(self._keys[at] == numbers, self._locals[at], np.int32(-1))

    def numbers(self, words: list[str]) -> np.ndarray:
        """Local numbers (int32) of the distinct ``words``; those not held yet get the next ones, in order."""
        numbers = TERMS.number(words)
        local = self._local(numbers)
        new = np.flatnonzero(local < 0)
        if len(new):
            n0, n1 = self._n, self._n + len(new)
            local[new] = np.arange(n0, n1, dtype=np.int32)
            if len(self._global) < n1:
                grown = np.zeros(max(n1, len(self._global) * 5 // 4 + 16), dtype=np.int32)
                grown[:n0] = self._global[:n0]
                self._global = grown
            self._global[n0:n1] = numbers[new]
            keys = np.concatenate((self._keys, numbers[new]))
            order = np.argsort(keys, kind="stable")
            self._keys = keys[order]
            self._locals = np.concatenate((self._locals, local[new]))[order]
            self._n = n1
            self._memo.clear()
        return local

    def get(self, word: str) -> int | None:
        """The local number of ``word``, or None."""
        number = TERMS.numbers.get(word)
        if number is None:
            return None
        i = int(np.searchsorted(self._keys, number))
        return int(self._locals[i]) if i < self._n and self._keys[i] == number else None

    def lookup(self, words: list[str]) -> list[int]:
        """The local numbers of ``words`` (-1 for a word this index does not hold), in order.

        Queries' words are remembered (a dict of at most :data:`_MEMO` words,
        emptied whenever the index takes new terms), so a word asked again
        costs one dict look-up, as it did when an index kept a dict of all
        its terms.
        """
        memo = self._memo
        out = [memo.get(w, -2) for w in words]
        if -2 in out:
            if len(memo) > _MEMO:
                memo.clear()
            get = TERMS.numbers.get
            asked = [w for w, number in zip(words, out) if number == -2]
            found = dict(zip(asked, self._local(np.array([get(w, -1) for w in asked], dtype=np.int32)).tolist()))
            memo.update(found)  # (another thread may empty memo meanwhile: out is read from found)
            out = [found[w] if number == -2 else number for w, number in zip(words, out)]
        return out

    def words(self) -> list[str]:
        """Every term, by local number."""
        spelled = list(TERMS.numbers)  # a dict keeps insertion order: a term's global number is its position
        return [spelled[g] for g in self._global[: self._n].tolist()]

    def __getstate__(self) -> list[str]:
        return self.words()

    def __setstate__(self, words: list[str]) -> None:
        self.__init__()  # type: ignore[misc]
        self.numbers(words)
