"""Compiled kernels (numba, a core dependency) for large indexes; same results as the pure path.

Imported only by :func:`agentmemory.retrievers._index.accelerator`, i.e. for
indexes of at least ``ACCEL_COMPILE_DOCS`` documents, or ``ACCEL_MIN_DOCS``
once the kernels are in numba's cache, and by the background compiler
(:mod:`._warm`).  Kernels are compiled once per machine and cached on disk
(numba ``cache=True``); where numba cannot load, the pure NumPy path runs
instead.

Exactness: the kernels perform the same IEEE-754 double operations, in the
same order, as the pure NumPy path (no ``fastmath``; the query weights, which
need ``log``, are computed by the caller in Python), so scores are equal bit
for bit; ``tests/retrievers/test_index.py`` checks it.  The dense kernels
(:mod:`agentmemory.retrievers.dense`) select the top k of float32 scores
that BLAS computed: they only compare and copy them, so the hits equal the
NumPy path's to the bit; ``tests/retrievers/test_dense.py`` checks it.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError:  # pragma: no cover - exercised only without numba
    AVAILABLE = False
else:
    AVAILABLE = True

EXHAUSTIVE_POSTINGS = 16_384
"""Up to this many postings (one query, one segment) pruning costs more than it saves (tests set 0)."""

DENSE_CHUNK = 64
"""Scores checked against a query's threshold at once by the dense kernels (one vectorised count each)."""

__all__ = [
    "AVAILABLE",
    "bm25_top",
    "build_postings",
    "dense_block_select",
    "dense_top",
    "impacts",
    "segment_top",
]

if AVAILABLE:

    @njit(cache=True, nogil=True)
    def _tokenize_docs(  # pragma: no cover - compiled
        buf, starts, ends, d, lower, table, n_uniq, ids, n_ids, counts, pool, n_pool
    ):
        """Tokenise documents from ``d`` on until one might overflow the arrays; return (d, n_uniq, n_ids, n_pool).

        Document ``i`` is ``buf[starts[i]:ends[i]]``.  ``table`` holds 3 int64
        per slot: the term's hash, its number (-1: empty) and
        ``start << 16 | length`` of its lower-case bytes in ``pool`` (each
        term's bytes followed by a 0 byte, terms in the order of their numbers).
        """
        n_docs = len(starts)
        n_slots = len(table) // 3
        mask = n_slots - 1
        while d < n_docs:
            p = starts[d]
            end = ends[d]
            room = (end - p) // 2 + 1  # most tokens a document of this size can hold
            if n_ids + room > len(ids) or 2 * (n_uniq + room) > n_slots or n_pool + (end - p) + room > len(pool):
                break
            cnt = 0
            while p < end:
                if lower[buf[p]] == 0:
                    p += 1
                    continue
                s = p
                h = np.uint64(14695981039346656037)
                while p < end and lower[buf[p]] != 0:
                    h = (h ^ np.uint64(lower[buf[p]])) * np.uint64(1099511628211)
                    p += 1
                length = p - s
                h ^= h >> np.uint64(33)
                h *= np.uint64(0xFF51AFD7ED558CCD)
                h ^= h >> np.uint64(33)
                hs = np.int64(h >> np.uint64(1))  # 63 bits, stored as int64
                slot = hs & mask
                found = -1
                while True:
                    e = 3 * slot
                    u = table[e + 1]
                    if u < 0:
                        break
                    if table[e] == hs and (table[e + 2] & 0xFFFF) == length:
                        us = table[e + 2] >> 16
                        same = True
                        for i in range(length):
                            if pool[us + i] != lower[buf[s + i]]:
                                same = False
                                break
                        if same:
                            found = u
                            break
                    slot = (slot + 1) & mask
                if found < 0:
                    found = n_uniq
                    e = 3 * slot
                    table[e] = hs
                    table[e + 1] = found
                    table[e + 2] = (n_pool << 16) | length
                    for i in range(length):
                        pool[n_pool + i] = lower[buf[s + i]]
                    pool[n_pool + length] = 0
                    n_pool += length + 1
                    n_uniq += 1
                ids[n_ids] = found
                n_ids += 1
                cnt += 1
            counts[d] = cnt
            d += 1
        return d, n_uniq, n_ids, n_pool

    @njit(cache=True, nogil=True)
    def _tokenize_ascii(buf, starts, ends, lower, table, pool, n_uniq, n_pool):  # pragma: no cover - compiled
        """Term numbers of the tokens of each document ``buf[starts[i]:ends[i]]``.

        A token is a maximal run of bytes whose ``lower`` is not 0, compared
        by their ``lower`` bytes (the caller passes
        :data:`agentmemory.retrievers._analysis.LOWER_BYTES`: the tokeniser's
        rule on ASCII; tokens longer than 65,535 bytes do not occur in the
        batches given here: the caller sends such texts to the NumPy path).
        Terms are numbered in order of first occurrence, continuing the
        numbering of an earlier call whose ``table`` (a hash table of 3 int64
        a slot, -1 when empty), ``pool`` (each term's lower-case bytes and a 0
        byte) and counts ``n_uniq`` and ``n_pool`` are passed back in: a new
        table and pool start it.  Returns (ids, per-document counts, table,
        pool, n_uniq, n_pool): the terms first seen here are those at
        ``pool[n_pool before:n_pool]``.
        """
        n_docs = len(starts)
        n_slots = len(table) // 3
        size = 0
        for i in range(n_docs):
            size += ends[i] - starts[i]
        ids = np.empty(max(1024, size // 5), np.int32)
        counts = np.zeros(n_docs, np.int64)
        d = 0
        n_ids = 0
        while True:
            d, n_uniq, n_ids, n_pool = _tokenize_docs(
                buf, starts, ends, d, lower, table, n_uniq, ids, n_ids, counts, pool, n_pool
            )
            if d == n_docs:
                break
            size = ends[d] - starts[d]
            room = size // 2 + 1
            if n_pool + size + room > len(pool):
                pool = np.concatenate((pool, np.empty(max(len(pool), size + room), np.uint8)))
            if n_ids + room > len(ids):
                ids = np.concatenate((ids, np.empty(max(len(ids), room), np.int32)))
            grow = n_slots
            while 2 * (n_uniq + room) > grow:
                grow *= 2
            if grow != n_slots:
                old = table
                n_slots = grow
                mask = n_slots - 1
                table = np.full(3 * n_slots, -1, np.int64)
                for o in range(len(old) // 3):
                    if old[3 * o + 1] >= 0:
                        sl = old[3 * o] & mask
                        while table[3 * sl + 1] >= 0:
                            sl = (sl + 1) & mask
                        table[3 * sl] = old[3 * o]
                        table[3 * sl + 1] = old[3 * o + 1]
                        table[3 * sl + 2] = old[3 * o + 2]
        return ids[:n_ids].copy(), counts, table, pool, n_uniq, n_pool

    @njit(cache=True, nogil=True)
    def _build_postings(ids, lengths, with_impacts, avgdl, k1, b):  # pragma: no cover - compiled
        """Postings of a batch (see :mod:`._index`); with ``with_impacts``, also the
        BM25 impacts and per-term bounds at ``avgdl`` (as :func:`_impacts`)."""
        n_terms = 0
        for t in ids:
            if t + 1 > n_terms:
                n_terms = t + 1
        n = len(lengths)
        df = np.zeros(n_terms, np.int64)
        last = np.full(n_terms, -1, np.int64)
        p = 0
        for d in range(n):
            for _ in range(lengths[d]):
                t = ids[p]
                p += 1
                if last[t] != d:
                    last[t] = d
                    df[t] += 1
        n_present = 0
        for t in range(n_terms):
            if df[t] > 0:
                n_present += 1
        terms = np.empty(n_present, np.int32)
        ptr = np.empty(n_present + 1, np.int64)
        fill = np.empty(n_terms, np.int64)
        j = 0
        total = 0
        for t in range(n_terms):
            if df[t] > 0:
                terms[j] = t
                ptr[j] = total
                fill[t] = total
                total += df[t]
                j += 1
        ptr[n_present] = total
        docs = np.empty(total, np.int32)
        tfs = np.empty(total, np.int32)
        slot = np.empty(n_terms, np.int64)
        last[:] = -1
        impact = np.empty(total if with_impacts else 0, np.float32)
        best = np.zeros(n_terms if with_impacts else 0, np.float64)
        distinct = np.empty(max(1, np.max(lengths) if n else 1), np.int64)
        k1p1 = k1 + 1.0
        one_minus_b = 1.0 - b
        p = 0
        for d in range(n):
            nd = 0
            for _ in range(lengths[d]):
                t = ids[p]
                p += 1
                if last[t] != d:
                    last[t] = d
                    q = fill[t]
                    fill[t] = q + 1
                    docs[q] = d
                    tfs[q] = 1
                    slot[t] = q
                    distinct[nd] = t
                    nd += 1
                else:
                    tfs[slot[t]] += 1
            if with_impacts:
                norm = k1 * (one_minus_b + b * np.float64(lengths[d]) / avgdl)
                for x in range(nd):
                    t = distinct[x]
                    q = slot[t]
                    tf = np.float64(tfs[q])
                    f = tf * k1p1 / (tf + norm)
                    impact[q] = f
                    if f > best[t]:
                        best[t] = f
        bound = np.empty(n_present if with_impacts else 0, np.float64)
        if with_impacts:
            for x in range(n_present):
                bound[x] = best[terms[x]]
        return terms, ptr, docs, tfs, bound, impact

    @njit(cache=True, nogil=False)
    def _segment_top(  # pragma: no cover - compiled
        terms, ptr, docs, tfs, qterms, weights, dl, base, avgdl, k1, b, plain, k, acc, touched
    ):
        """Scores of one segment's documents for one query; the candidates for the top ``k``.

        ``plain``: a posting adds ``weights[j]`` (tag counts); otherwise the
        BM25 part ``w * tf * (k1 + 1) / (tf + K)``, K = k1 * (1 - b + b * dl / avgdl).
        ``acc`` (float64) and ``touched`` (int32) are scratch, ``acc`` all zero
        on entry and on return.  Returns every touched document whose score is
        at least the k-th largest (all of them when fewer than k), as global
        numbers, with scores.
        """
        nt = 0
        k1p1 = k1 + 1.0
        one_minus_b = 1.0 - b
        n_terms = len(terms)
        for j in range(len(qterms)):
            q = qterms[j]
            lo = 0
            hi = n_terms
            while lo < hi:
                mid = (lo + hi) >> 1
                if terms[mid] < q:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == n_terms or terms[lo] != q:
                continue
            w = weights[j]
            for p in range(ptr[lo], ptr[lo + 1]):
                d = docs[p]
                if plain:
                    part = w
                else:
                    tf = np.float64(tfs[p])
                    norm = k1 * (one_minus_b + b * np.float64(dl[base + d]) / avgdl)
                    part = w * tf * k1p1 / (tf + norm)
                if acc[d] == 0.0:
                    touched[nt] = d
                    nt += 1
                acc[d] += part
        # k-th largest score (every touched document when fewer than k: scores are > 0 > -1)
        cut = _kth_largest(acc, touched, nt, k, np.empty(k, np.float64))
        n_out = 0
        for i in range(nt):
            if acc[touched[i]] >= cut:
                n_out += 1
        out_docs = np.empty(n_out, np.int64)
        out_scores = np.empty(n_out, np.float64)
        j = 0
        for i in range(nt):
            d = touched[i]
            s = acc[d]
            if s >= cut:
                out_docs[j] = base + d
                out_scores[j] = s
                j += 1
            acc[d] = 0.0
        return out_docs, out_scores

    @njit(cache=True, nogil=True)
    def _impacts(ptr, docs, tfs, dl, base, avgdl, k1, b):  # pragma: no cover - compiled
        """Per posting ``f = tf * (k1 + 1) / (tf + K(d))`` at ``avgdl`` (as float32), and per term its max (float64)."""
        n = len(ptr) - 1
        bound = np.zeros(n, np.float64)
        impact = np.empty(len(docs), np.float32)
        k1p1 = k1 + 1.0
        one_minus_b = 1.0 - b
        for i in range(n):
            best = 0.0
            for p in range(ptr[i], ptr[i + 1]):
                tf = np.float64(tfs[p])
                norm = k1 * (one_minus_b + b * np.float64(dl[base + docs[p]]) / avgdl)
                f = tf * k1p1 / (tf + norm)
                impact[p] = f
                if f > best:
                    best = f
            bound[i] = best
        return bound, impact

    @njit(cache=True, nogil=False)
    def _kth_largest(acc, docs, n, k, heap):  # pragma: no cover - compiled
        """The k-th largest of acc[docs[:n]] (-1.0 when n < k), with a min-heap in ``heap``."""
        if n < k:
            return -1.0
        size = 0
        for i in range(n):
            s = acc[docs[i]]
            if size < k:
                heap[size] = s
                c = size
                size += 1
                while c > 0:
                    par = (c - 1) >> 1
                    if heap[par] <= heap[c]:
                        break
                    heap[par], heap[c] = heap[c], heap[par]
                    c = par
            elif s > heap[0]:
                _replace_root(heap, k, s)
        return heap[0]

    @njit(cache=True, nogil=True)
    def _replace_root(heap, k, s):  # pragma: no cover - compiled
        """Replace the root of the min-heap ``heap[:k]`` by ``s`` (> the root) and restore the heap order."""
        c = 0
        while True:
            left = 2 * c + 1
            if left >= k:
                break
            m = left
            if left + 1 < k and heap[left + 1] < heap[left]:
                m = left + 1
            if s <= heap[m]:
                break
            heap[c] = heap[m]
            c = m
        heap[c] = s

    @njit(cache=True, nogil=False)
    def _kth_value(values, n, k, heap):  # pragma: no cover - compiled
        """The k-th largest of values[:n] (-1.0 when n < k)."""
        if n < k:
            return -1.0
        for i in range(k):
            heap[i] = values[i]
        heap[:k].sort()  # ascending: heap[0] is the smallest of the k
        for i in range(k, n):
            v = values[i]
            if v > heap[0]:
                # insert v, drop heap[0]: shift left while smaller
                q = 1
                while q < k and heap[q] < v:
                    heap[q - 1] = heap[q]
                    q += 1
                heap[q - 1] = v
        return heap[0]

    @njit(cache=True, nogil=False)
    def _find(docs, lo, hi, d):  # pragma: no cover - compiled
        """First position in docs[lo:hi] holding a value >= d (hi when none)."""
        while lo < hi:
            mid = (lo + hi) >> 1
            if docs[mid] < d:
                lo = mid + 1
            else:
                hi = mid
        return lo

    @njit(cache=True, nogil=False)
    def _bm25_top(  # pragma: no cover - compiled
        terms,
        ptr,
        docs,
        tfs,
        bound,
        impact,
        lo_f,
        hi_f,
        qterms,
        weights,
        dl,
        base,
        avgdl,
        k1,
        b,
        k,
        acc,
        touched,
        exhaustive,
    ):
        """Exact BM25 candidates for the top ``k`` of one segment, with max-score pruning.

        Pruning uses approximate partial sums ``w * impact`` (float32 impacts
        computed at an earlier average length, summed into ``acc``, float32 or
        float64: the true sum lies within ``[lo_f, hi_f]`` times it, margins
        for every rounding included), terms taken by
        decreasing upper bound ``w * bound * hi_f``; the survivors are then
        scored exactly, terms in query order, with the same operations as
        the pure path.  Returns every survivor
        whose exact score is at least the k-th largest exact score (all when
        fewer than k), as (global document numbers, scores).  ``acc`` is left
        all zero.
        """
        hi_m = hi_f
        lo_m = lo_f
        k1p1 = k1 + 1.0
        one_minus_b = 1.0 - b
        n_q = len(qterms)
        n_terms = len(terms)
        slot = np.full(n_q, -1, np.int64)
        ub = np.zeros(n_q, np.float64)
        n_found = 0
        for j in range(n_q):
            i = _find(terms, 0, n_terms, qterms[j])
            if i < n_terms and terms[i] == qterms[j]:
                slot[j] = i
                ub[j] = weights[j] * bound[i] * hi_m
                n_found += 1
        empty_d = np.empty(0, np.int64)
        empty_s = np.empty(0, np.float64)
        if n_found == 0:
            return empty_d, empty_s
        volume = 0
        for j in range(n_q):
            if slot[j] >= 0:
                volume += ptr[slot[j] + 1] - ptr[slot[j]]
        prune = volume > exhaustive  # small: no pruning (it would cost more than it saves)
        order = np.argsort(-ub)[:n_found]  # found terms, largest bound first
        heap = np.empty(k, np.float64)
        # the "board": the k largest partial sums so far (distinct documents), kept
        # exactly as sums grow, so the k-th largest is known without a pass
        board_doc = np.full(k, -1, np.int64)
        board_val = np.zeros(k, np.float64)
        board_min = 0.0
        board_at = 0  # position of the minimum on the board
        nt = 0
        theta = -1.0
        switch = n_found
        for oi in range(n_found):
            remaining = 0.0
            for r in range(oi, n_found):
                remaining += ub[order[r]]
            if prune and oi > 0 and nt >= k:
                theta = board_min
                if remaining < theta * lo_m:
                    switch = oi
                    break
            j = order[oi]
            i = slot[j]
            w = weights[j]
            for p in range(ptr[i], ptr[i + 1]):
                d = docs[p]
                if acc[d] == 0.0:
                    touched[nt] = d
                    nt += 1
                v = acc[d] + w * np.float64(impact[p])
                acc[d] = v
                if prune and v > board_min:
                    at = -1
                    for q in range(k):
                        if board_doc[q] == d:
                            at = q
                            break
                    if at < 0:
                        at = board_at
                        board_doc[at] = d
                    board_val[at] = v
                    if at == board_at:  # the minimum changed: find the new one
                        board_at = 0
                        for q in range(1, k):
                            if board_val[q] < board_val[board_at]:
                                board_at = q
                        board_min = board_val[board_at]
        # survivors: documents that may still reach the k-th score; one pass over
        # the touched documents collects them and leaves acc all zero
        theta = board_min if prune and nt >= k else -1.0
        remaining = 0.0
        for r in range(switch, n_found):
            remaining += ub[order[r]]
        cand = np.empty(nt, np.int32)
        val = np.empty(nt, np.float64)
        c = 0
        for t in range(nt):
            d = touched[t]
            v = acc[d]
            acc[d] = 0.0
            if v * hi_m + remaining >= theta * lo_m:
                cand[c] = d
                val[c] = v
                c += 1
        if switch < n_found:
            by_doc = np.argsort(cand[:c])
            cand = cand[by_doc]
            val = val[by_doc]
            for oi in range(switch, n_found):
                j = order[oi]
                i = slot[j]
                w = weights[j]
                lo = ptr[i]
                end = ptr[i + 1]
                if 8 * c >= end - lo:  # dense: one linear merge of the two sorted lists
                    t = 0
                    while t < c and lo < end:
                        d = cand[t]
                        e = docs[lo]
                        if e < d:
                            lo += 1
                        elif e > d:
                            t += 1
                        else:
                            val[t] += w * np.float64(impact[lo])
                            t += 1
                            lo += 1
                else:
                    for t in range(c):
                        d = cand[t]
                        # gallop from lo, then binary search
                        step = 1
                        hi = lo
                        while hi < end and docs[hi] < d:
                            lo = hi + 1
                            hi += step
                            step *= 2
                        lo = _find(docs, lo, min(hi + 1, end), d)
                        if lo < end and docs[lo] == d:
                            val[t] += w * np.float64(impact[lo])
                remaining -= ub[j]
                if remaining < 0.0 or oi == n_found - 1:
                    remaining = 0.0
                if c > k:
                    theta = _kth_value(val, c, k, heap)
                    kept = 0
                    for t in range(c):
                        if val[t] * hi_m + remaining >= theta * lo_m:
                            cand[kept] = cand[t]
                            val[kept] = val[t]
                            kept += 1
                    c = kept
        theta = _kth_value(val, c, k, heap)
        kept = 0
        for t in range(c):
            if val[t] * hi_m >= theta * lo_m:
                cand[kept] = cand[t]
                kept += 1
        c = kept
        # exact scores of the survivors, terms in query order
        exact = np.empty(c, np.float64)
        for t in range(c):
            d = cand[t]
            norm = k1 * (one_minus_b + b * np.float64(dl[base + d]) / avgdl)
            s = 0.0
            for j in range(n_q):
                i = slot[j]
                if i < 0:
                    continue
                pos = _find(docs, ptr[i], ptr[i + 1], d)
                if pos < ptr[i + 1] and docs[pos] == d:
                    tf = np.float64(tfs[pos])
                    s += weights[j] * tf * k1p1 / (tf + norm)
            exact[t] = s
        cut = -1.0
        if c >= k:
            cut = _kth_value(exact, c, k, heap)
        n_out = 0
        for t in range(c):
            if exact[t] >= cut:
                n_out += 1
        out_docs = np.empty(n_out, np.int64)
        out_scores = np.empty(n_out, np.float64)
        n_out = 0
        for t in range(c):
            if exact[t] >= cut:
                out_docs[n_out] = base + cand[t]
                out_scores[n_out] = exact[t]
                n_out += 1
        return out_docs, out_scores

    # -- dense: top-k selection over float32 scores (agentmemory.retrievers.dense) ------------------------------
    #
    # A query's state is a min-heap of k float32 scores, started with k copies of the smallest positive float32:
    # its root is the k-th largest positive score seen so far (that value itself while fewer than k have been
    # seen), and it only rises.  A score enters the heap when it exceeds the root; a score at or above the root
    # is a candidate.  So every score at or above the final root (the k-th largest positive score, or every
    # positive score when there are fewer than k) is a candidate; nothing below the root at any time is.  Only
    # comparisons and copies of float32 values: no arithmetic on scores.

    @njit(cache=True, nogil=True)
    def _heap_push(heap, s):  # pragma: no cover - compiled
        """Replace the root of the min-heap ``heap`` by ``s`` (> the root) and restore the heap order."""
        _replace_root(heap, len(heap), s)

    @njit(cache=True, nogil=True)
    def _count_at_least(x, lo, hi, t):  # pragma: no cover - compiled
        """How many of x[lo:hi] are >= t (a loop LLVM vectorises)."""
        h = 0
        for c in range(lo, hi):
            h += x[c] >= t
        return h

    @njit(cache=True, nogil=True)
    def _chunk_at_least(x, lo, t):  # pragma: no cover - compiled
        """How many of the DENSE_CHUNK scores from x[lo] are >= t (a fixed trip count: fully vectorised)."""
        h = 0
        for c in range(DENSE_CHUNK):
            h += x[lo + c] >= t
        return h

    @njit(cache=True, nogil=True)
    def _dense_keep(row, lo, hi, t, heap, q, first, out_q, out_r, out_s, n_out):  # pragma: no cover - compiled
        """The candidates of row[lo:hi] (heap threshold ``t``) appended to the pool; returns (t, n_out)."""
        for c in range(lo, hi):
            s = row[c]
            if s >= t:
                out_q[n_out] = q
                out_r[n_out] = first + c
                out_s[n_out] = s
                n_out += 1
                if s > t:
                    _heap_push(heap, s)
                    t = heap[0]
        return t, n_out

    @njit(cache=True, nogil=True)
    def _dense_block_select(scores, q0, first, heaps, out_q, out_r, out_s, n_out, start):  # pragma: no cover
        """Candidates of a block of scores (query ``q0 + i``, entry row ``first + c`` at ``scores[i, c]``).

        Rows ``start..`` of ``scores`` are done in order; each appends its
        candidates to the pool ``out_q, out_r, out_s`` from ``n_out`` on and
        updates its query's heap ``heaps[i]``.  A row is started only
        when the pool has room for every score at or above the threshold it
        starts with (an upper bound of what it adds).  Returns ``(i, n_out)``:
        the first row not done (``len(scores)`` when all are) and the pool size.
        """
        b, w = scores.shape
        cap = len(out_s)
        whole = w - w % DENSE_CHUNK
        for i in range(start, b):
            heap = heaps[i]
            t = heap[0]
            row = scores[i]
            count = _count_at_least(row, 0, w, t)
            if count == 0:
                continue
            if n_out + count > cap:
                return i, n_out
            q = q0 + i
            for lo in range(0, whole, DENSE_CHUNK):
                if _chunk_at_least(row, lo, t):
                    t, n_out = _dense_keep(row, lo, lo + DENSE_CHUNK, t, heap, q, first, out_q, out_r, out_s, n_out)
            t, n_out = _dense_keep(row, whole, w, t, heap, q, first, out_q, out_r, out_s, n_out)
        return b, n_out

    @njit(cache=True, nogil=True)
    def _dense_top(scores, k, smallest):  # pragma: no cover - compiled
        """Positions (ascending) of every score >= the k-th largest positive one (all positives when fewer than k)."""
        n = len(scores)
        heap = np.full(k, smallest, np.float32)
        t = heap[0]
        whole = n - n % DENSE_CHUNK
        for lo in range(0, whole, DENSE_CHUNK):
            if _chunk_at_least(scores, lo, t):
                for c in range(lo, lo + DENSE_CHUNK):
                    s = scores[c]
                    if s > t:
                        _heap_push(heap, s)
                        t = heap[0]
        for c in range(whole, n):
            s = scores[c]
            if s > t:
                _heap_push(heap, s)
                t = heap[0]
        out = np.empty(_count_at_least(scores, 0, n, t), np.int64)
        j = 0
        for lo in range(0, whole, DENSE_CHUNK):
            if _chunk_at_least(scores, lo, t):
                for c in range(lo, lo + DENSE_CHUNK):
                    if scores[c] >= t:
                        out[j] = c
                        j += 1
        for c in range(whole, n):
            if scores[c] >= t:
                out[j] = c
                j += 1
        return out


def _kernel_tfs(seg) -> np.ndarray:
    """``seg.tfs`` as the kernels take it: as stored (uint8, uint16 or int32, ``_index.KERNEL_TFS``: a compiled
    signature each, the first two compiled by the background compiler)."""
    return seg.tfs


def _kernel_docs(seg) -> np.ndarray:
    """``seg.docs`` as the kernels take it: int32 (a uint16 segment of the NumPy path, see ``_index.doc_type``,
    is widened once, on the segment), so one compiled signature serves every index."""
    if seg.docs.dtype != np.int32:
        seg.docs = seg.docs.astype(np.int32)
    return seg.docs


def build_postings(ids: np.ndarray, lengths: np.ndarray, bm25: tuple[float, float, float] | None = None):
    """(terms, ptr, docs, tfs, bound, impact) of a segment (see :mod:`._index`).

    ``bm25 = (avgdl, k1, b)`` also computes the BM25 impacts and bounds
    (else ``bound`` and ``impact`` are empty).
    """
    avgdl, k1, b = bm25 if bm25 is not None else (1.0, 0.0, 0.0)
    return _build_postings(
        np.ascontiguousarray(ids, dtype=np.int32),
        np.ascontiguousarray(lengths, dtype=np.int64),
        bm25 is not None,
        avgdl,
        k1,
        b,
    )


def segment_top(seg, qterms, weights, dl, avgdl, k1, b, plain, k, acc, touched):
    """Candidates for the top ``k`` of one segment (see ``_segment_top``)."""
    return _segment_top(
        seg.terms,
        seg.ptr,
        _kernel_docs(seg),
        _kernel_tfs(seg),
        qterms,
        weights,
        dl,
        seg.base,
        avgdl,
        k1,
        b,
        plain,
        k,
        acc,
        touched,
    )


def impacts(seg, dl, avgdl, k1, b):
    """(per-term max, per-posting float32) of the BM25 TF part of ``seg``, K at ``avgdl``."""
    return _impacts(seg.ptr, _kernel_docs(seg), _kernel_tfs(seg), dl, seg.base, avgdl, k1, b)


def bm25_top(seg, lo_f, hi_f, qterms, weights, dl, avgdl, k1, b, k, acc, touched):
    """Exact candidates for the top ``k`` of one segment (see ``_bm25_top``)."""
    return _bm25_top(
        seg.terms,
        seg.ptr,
        _kernel_docs(seg),
        _kernel_tfs(seg),
        seg.bound,
        seg.impact,
        lo_f,
        hi_f,
        qterms,
        weights,
        dl,
        seg.base,
        avgdl,
        k1,
        b,
        k,
        acc,
        touched,
        EXHAUSTIVE_POSTINGS,
    )


_SMALLEST = np.nextafter(np.float32(0), np.float32(1))


def dense_top(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions, ascending, of every float32 score >= the k-th largest positive one (all positives when fewer).

    ``1 <= k < len(scores)``; the scores C-contiguous float32.
    """
    return _dense_top(scores, k, _SMALLEST)


def dense_block_select(scores, q0, first, heaps, out_q, out_r, out_s, n_out, start):
    """Candidates of one block of scores into the pool (see ``_dense_block_select``): ``(next row, pool size)``."""
    return _dense_block_select(scores, q0, first, heaps, out_q, out_r, out_s, n_out, start)
