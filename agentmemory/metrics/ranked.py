"""The shared machinery of the measures' NumPy batch kernels: the fast backend of :func:`agentmemory.metrics.scoring.score_run`.

The pure per-query helpers (:mod:`.precision`, :mod:`.ndcg`, ...) define the
measures; each measure module also holds a batch kernel computing the same
numbers for a whole run, bit for bit (the tests compare the two with ``==``
and both with trec_eval).  This module ranks the run once for all of them
(:func:`rank_judged` builds a :class:`Ranked`) and calls the kernels
(:func:`agentmemory.metrics.scoring.score_queries`).

How (``N`` scored documents, ``J`` judgments):

1. One pass over the queries copies every score and, for every judged
   document, its score in the run (or NaN: not retrieved) into flat lists
   with C-level ``list.extend`` (``J`` dictionary look-ups, not ``N``).
2. Every built-in measure depends on the run only through the ranks of the
   retrieved judged documents with a grade >= 0 (relevant means grade >= 1;
   nDCG's gain is any grade > 0; bpref counts the judged non-relevant ones,
   grade in ``[0, 1)``, above each relevant one).  Such a document's trec_eval rank is
   ``1 + #{scores above it} + #{equal scores with a larger id}``.  The
   scores of each query are sorted once (rows of a matrix), and both counts
   come from a vectorised binary search by value.  Only documents whose
   score is tied with another document of their query need the ids; those
   (rare) are resolved in Python, comparing ids as
   :func:`agentmemory.files.trec.trec_order` does.
3. Each kernel is then a few segment operations over those ranks.  Sums
   run in the helpers' order (rank order for DCG and AP, descending grade
   for the ideal DCG) through :func:`numpy.bincount`, which adds the
   weights one by one, left to right, from 0.0 (NumPy's implementation, not
   a documented promise: the tests would notice a change); the discounts
   are the helpers' own ``math.log2(rank + 1)``, and counts divide as
   Python's ``int / int`` (both exact below 2**53).  So every value equals
   the helper's exactly, not just to rounding.

:func:`~agentmemory.metrics.scoring.score_queries` returns ``None`` when it cannot promise that: an
input that is not a plain ``dict``, a score that is not a real number
exactly representable as a double (or is NaN, which the per-query path
reports with its document), a grade that is neither an integer nor a
double, or a measure whose definition has no batch kernel.  The caller
then takes the per-query path.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

__all__ = ["Ranked", "count_per_query", "divide", "log2_table", "over_k", "rank_judged"]

_EXACT_INT = 2.0**53
"""Integers up to this magnitude are doubles exactly (and divide exactly as Python's int / int)."""


@dataclass(frozen=True)
class Ranked:
    """What the measures need of a run, per query ``0 .. n - 1``.

    Attributes:
        n: number of queries.
        num_rel: ``R`` per query: judged documents with grade >= 1, retrieved or not.
        gain_query, gain_rank, gain: the retrieved documents with grade > 0,
            sorted by (query, trec_eval rank): query index, 1-based rank, grade.
        rel_query, rel_rank, rel_found: the same for grade >= 1 only, with
            ``rel_found`` the 1-based count of relevant documents at or above
            that rank in its query.
        first_rank: rank of the first relevant retrieved document per query, 0 if none.
        ideal_query, ideal_pos, ideal_gain: every judged grade > 0 (retrieved or
            not), sorted by (query, grade descending); ``ideal_pos`` is the
            0-based position in the query's ideal ranking.
        num_nonrel: ``N`` per query: judged non-relevant documents (grade in
            ``[0, 1)``: trec_eval's judged but below the relevance level),
            retrieved or not.  Negative grades (trec_eval: in the pool but
            unjudged) count in neither ``R`` nor ``N``.
        nonrel_query, nonrel_rank: the retrieved judged non-relevant documents
            (grade in ``[0, 1)``), sorted by (query, trec_eval rank): what
            ``bpref`` reads (:mod:`agentmemory.metrics.bpref`).
    """

    n: int
    num_rel: np.ndarray
    gain_query: np.ndarray
    gain_rank: np.ndarray
    gain: np.ndarray
    rel_query: np.ndarray
    rel_rank: np.ndarray
    rel_found: np.ndarray
    first_rank: np.ndarray
    ideal_query: np.ndarray
    ideal_pos: np.ndarray
    ideal_gain: np.ndarray
    num_nonrel: np.ndarray
    nonrel_query: np.ndarray
    nonrel_rank: np.ndarray


# --- shared by the measures' batch kernels ----------------------------------


def count_per_query(query: np.ndarray, n: int) -> np.ndarray:
    """How many items each query ``0 .. n - 1`` holds, given each item's query index."""
    return np.bincount(query, minlength=n)


def divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` per query, ``0.0`` where the denominator is 0."""
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def over_k(hits: np.ndarray, k: int) -> np.ndarray:
    """``hits / k`` as Python divides ints (exactly rounded), for any k."""
    if k <= _EXACT_INT:
        return hits / float(k)
    return np.array([h / k for h in hits.tolist()], dtype=np.float64)  # Python's exactly rounded int / int


_LOG2 = np.empty(0)


def log2_table(n: int) -> np.ndarray:
    """``[math.log2(2), ..., math.log2(n + 1)]``: the helpers' own discounts, not NumPy's ``log2``.

    Cached; a longer table replaces the cache in one assignment (safe under threads).
    """
    global _LOG2
    table = _LOG2
    if table.size < n:
        table = np.array([math.log2(i + 2) for i in range(n)], dtype=np.float64)
        _LOG2 = table
    return table[:n]


# --- ranking ----------------------------------------------------------------


def _as_doubles(values: list) -> np.ndarray | None:
    """``values`` as float64 when each is exactly its double (floats; ints a double holds) and none is NaN.

    ``None`` otherwise: NaN (the per-query path reports it with its document),
    an int a double would round (``2**53 + 1``), and anything that is not a
    real number NumPy stores as such (``Decimal``, ``Fraction``, text ...).
    """
    try:
        array = np.array(values)
    except (OverflowError, ValueError, TypeError):
        return None
    if array.dtype.kind in "biu":
        array = array.astype(np.float64)
    elif array.dtype != np.float64:
        return None  # object (Decimal, huge ints ...), float32/longdouble-only lists, complex, str
    if array.size == 0:
        return array
    low, high = array.min(), array.max()
    if math.isnan(low):
        return None
    if -_EXACT_INT < low and high < _EXACT_INT:
        return array  # every int here converted exactly
    for index in np.flatnonzero(np.abs(array) >= _EXACT_INT).tolist():
        value = values[index]
        if isinstance(value, float):
            continue  # a float is its double
        double = float(array[index])
        if type(value) is not int or not math.isfinite(double) or int(double) != value:
            return None
    return array


def _as_grades(values: list) -> np.ndarray | None:
    """Grades as int64 or float64 (what the helpers' ``>= 1``, ``> 0`` and ``grade / log2`` see), else ``None``."""
    try:
        array = np.array(values)
    except (OverflowError, ValueError, TypeError):
        return None
    if array.dtype.kind in "biu":
        return array.astype(np.int64) if array.dtype != np.uint64 else None
    return array if array.dtype == np.float64 else None


def _sort_segments(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``values`` with each segment ``[starts[q], starts[q] + lengths[q])`` sorted ascending.

    Equal lengths (a top-k run) sort as the rows of one matrix; otherwise the
    segments go into matrices by length class (lengths within a factor of 2),
    padded with NaN, which sorts last.
    """
    if lengths.size == 0 or values.size == 0:
        return values
    width = int(lengths[0])
    if (lengths == width).all():
        return np.sort(values.reshape(lengths.size, width), axis=1).reshape(-1)
    out = np.empty_like(values)
    length_class = np.frexp(lengths.astype(np.float64))[1]  # lengths in [2**(c-1), 2**c)
    for cls in np.unique(length_class[lengths > 0]).tolist():
        queries = np.flatnonzero(length_class == cls)
        sizes = lengths[queries]
        rows = np.repeat(np.arange(queries.size), sizes)
        cols = np.arange(rows.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        where = np.repeat(starts[queries], sizes) + cols
        block = np.full((queries.size, int(sizes.max())), np.nan)
        block[rows, cols] = values[where]
        block.sort(axis=1)
        out[where] = block[rows, cols]
    return out


def _count_not_above(ordered: np.ndarray, starts: np.ndarray, lengths: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per target, how many values of its sorted segment ``ordered[start : start + length]`` are <= it.

    A vectorised binary search (the largest ``c`` with ``segment[c - 1] <= target``,
    built bit by bit): one pass per bit of the longest segment.
    """
    found = np.zeros(targets.shape, dtype=np.int64)
    if targets.size == 0:
        return found
    before = starts - 1
    last = ordered.size - 1
    step = 1 << (int(lengths.max()).bit_length() - 1)
    while step:
        candidate = found + step
        probe = ordered[np.minimum(before + candidate, last)]
        found += step * ((candidate <= lengths) & (probe <= targets))
        step >>= 1
    return found


def _ids_above(
    docs: Sequence[Mapping[str, float]],
    judged: Sequence[Mapping[str, int]],
    tied: list[tuple[int, int, float]],
) -> list[int]:
    """For each tied document ``(query, position in its judgments, score)``: how many
    documents of its query have the same score and a larger id (trec_eval ranks them above)."""
    by_query: dict[int, list[int]] = {}
    for index, (query, _, _) in enumerate(tied):
        by_query.setdefault(query, []).append(index)
    above = [0] * len(tied)
    for query, indexes in by_query.items():
        wanted = {tied[i][2] for i in indexes}
        same: dict[float, list[str]] = {}
        for doc, score in docs[query].items():
            if score in wanted:
                same.setdefault(score, []).append(doc)
        for ids in same.values():
            ids.sort()
        judged_ids = list(judged[query])
        for i in indexes:
            _, position, score = tied[i]
            ids = same[score]
            above[i] = len(ids) - bisect_right(ids, judged_ids[position])
    return above


def rank_judged(docs: Sequence[Mapping[str, float]], judged: Sequence[Mapping[str, int]]) -> Ranked | None:
    """The :class:`Ranked` view of queries ``0 .. n - 1``.

    Args:
        docs: per query, document id -> score (an empty dict for a query
            missing from the run).
        judged: per query, document id -> grade.

    Returns ``None`` when the batch path cannot promise the helpers' numbers
    (see the module docs); the caller then scores per query.
    """
    n = len(docs)
    if len(judged) != n or not set(map(type, docs)) | set(map(type, judged)) <= {dict}:
        return None  # other mappings may define get/values/iteration their own way: score per query
    scores: list = []
    looked_up: list = []
    grades: list = []
    add_scores, add_looked_up, add_grades = scores.extend, looked_up.extend, grades.extend
    nans = repeat(math.nan)  # map() stops at the end of the judgments, never of this
    for query_docs, query_judged in zip(docs, judged):
        add_scores(query_docs.values())
        add_looked_up(map(query_docs.get, query_judged, nans))
        add_grades(query_judged.values())
    all_scores = _as_doubles(scores)
    grade = _as_grades(grades)
    if all_scores is None or grade is None:
        return None
    judged_score = np.fromiter(looked_up, np.float64, len(looked_up))  # objects of scores (checked), or NaN
    lengths = np.fromiter(map(len, docs), np.int64, n)
    judged_lengths = np.fromiter(map(len, judged), np.int64, n)
    judged_starts = np.cumsum(judged_lengths) - judged_lengths
    judged_query = np.repeat(np.arange(n), judged_lengths)

    relevant = grade >= 1
    positive = grade > 0
    nonrel = (grade >= 0) & (grade < 1)
    num_rel = count_per_query(judged_query[relevant], n)
    num_nonrel = count_per_query(judged_query[nonrel], n)

    # Ranks of the retrieved documents with a grade >= 0 (every positive grade among them).
    picked = np.flatnonzero((positive | nonrel) & ~np.isnan(judged_score))
    query = judged_query[picked]
    score = judged_score[picked]
    starts = np.cumsum(lengths) - lengths
    ordered = _sort_segments(all_scores, starts, lengths)
    start, length = starts[query], lengths[query]
    not_above = _count_not_above(ordered, start, length, score)
    rank = 1 + length - not_above
    # The document itself is the last value <= its score; a tie if the one before is equal too.
    before = start + not_above - 2
    tied = np.flatnonzero((not_above >= 2) & (ordered[np.maximum(before, 0)] == score))
    if tied.size:  # equal scores: trec_eval puts the larger id first
        tied_query = query[tied]
        positions = picked[tied] - judged_starts[tied_query]
        cases = list(zip(tied_query.tolist(), positions.tolist(), score[tied].tolist()))
        rank[tied] += np.array(_ids_above(docs, judged, cases), dtype=np.int64)

    # Sorted by (query, rank): the order the helpers walk a ranking in.
    order = np.argsort(query * (int(lengths.max(initial=0)) + 1) + rank)  # query * (longest + 1) + rank < 2**63
    ranked_query, ranked_rank, ranked_grade = query[order], rank[order], grade[picked][order]
    gains = ranked_grade > 0
    gain_query, gain_rank, gain = ranked_query[gains], ranked_rank[gains], ranked_grade[gains]
    below = ranked_grade < 1  # and >= 0: judged non-relevant
    nonrel_query, nonrel_rank = ranked_query[below], ranked_rank[below]
    is_rel = gain >= 1
    rel_query, rel_rank = gain_query[is_rel], gain_rank[is_rel]
    rel_starts = np.cumsum(count_per_query(rel_query, n)) - count_per_query(rel_query, n)
    rel_found = np.arange(1, rel_query.size + 1) - rel_starts[rel_query]
    first_rank = np.zeros(n, dtype=np.int64)
    first = rel_found == 1
    first_rank[rel_query[first]] = rel_rank[first]

    # The ideal ranking: every positive grade of the query, highest first.
    ideal_query = judged_query[positive]
    ideal_gain = grade[positive]
    top = int(ideal_gain.max(initial=0)) if ideal_gain.dtype.kind == "i" else None
    if top is not None and top < 2**62 // (n + 1):  # then the key below stays under 2**62
        order = np.argsort(ideal_query * (top + 1) + (top - ideal_gain))
    else:
        order = np.lexsort((-ideal_gain, ideal_query))
    ideal_query, ideal_gain = ideal_query[order], ideal_gain[order]
    ideal_counts = count_per_query(ideal_query, n)
    ideal_pos = np.arange(ideal_query.size) - (np.cumsum(ideal_counts) - ideal_counts)[ideal_query]

    return Ranked(
        n=n,
        num_rel=num_rel,
        gain_query=gain_query,
        gain_rank=gain_rank,
        gain=gain,
        rel_query=rel_query,
        rel_rank=rel_rank,
        rel_found=rel_found,
        first_rank=first_rank,
        ideal_query=ideal_query,
        ideal_pos=ideal_pos,
        ideal_gain=ideal_gain,
        num_nonrel=num_nonrel,
        nonrel_query=nonrel_query,
        nonrel_rank=nonrel_rank,
    )
