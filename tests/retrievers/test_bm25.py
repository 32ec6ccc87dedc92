"""BM25 scores agree with an independent implementation: bm25s, ``method="lucene"``.

bm25s's Lucene variant scores ``idf * tf / (tf + K)`` with the same IDF,
``ln(1 + (N - n + 0.5) / (n + 0.5))``, and the same ``K``; it drops the
constant ``(k1 + 1)`` factor that ours keeps, so ours = bm25s x (k1 + 1).

bm25s is fed *our* tokens (pre-tokenised lists from
:func:`agentmemory.tokenize.tokenize`), so only the scoring is compared.
Duplicate query tokens: bm25s keeps every occurrence
(``get_tokens_ids`` drops only unknown tokens) and adds the term's
precomputed score once per occurrence, which is our ``qtf`` weighting;
:func:`test_duplicate_query_tokens_count_like_qtf` checks that.
bm25s is asked for float64 scores, so the two agree to rounding.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agentmemory import BM25, MemoryEntry
from agentmemory.tokenize import tokenize

bm25s = pytest.importorskip("bm25s")

K1, B = 1.2, 0.75

SUBJECTS = ["Maya", "the user", "Sam", "our team", "the assistant", "Grandma", "Léa", "the landlord"]
VERBS = ["prefers", "booked", "cancelled", "asked about", "forgot", "moved", "paid for", "recommended"]
OBJECTS = [
    "vegetarian dinners",
    "the flight to Lisbon",
    "a dentist appointment",
    "the quarterly report",
    "rent for March",
    "a jazz concert",
    "gluten-free bread",
    "the team offsite",
    "her passport renewal",
    "the car insurance",
    "Thai food",
    "a standing desk",
    "the wifi password",
    "café au lait",
]
EXTRAS = ["on Monday", "again", "twice", "last week", "before the trip", "after work", "— urgent!", "(see notes)", ""]


def authored_corpus(n: int, seed: int = 11) -> list[MemoryEntry]:
    """``n`` short memory notes built from a phrase grammar (repeats and ties included)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        parts = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(EXTRAS)]
        if rng.random() < 0.4:
            parts += ["and", rng.choice(VERBS), rng.choice(OBJECTS)]
        out.append(MemoryEntry(f"m{i:04d}", " ".join(p for p in parts if p)))
    return out


QUERIES = [
    "what food does Maya prefer",
    "flight Lisbon booked",
    "rent March paid",
    "vegetarian vegetarian dinners",  # a repeated term
    "the the the",
    "passport renewal before the trip",
    "café",
    "urgent dentist appointment",
    "nothing matches xyzzy",
    "Thai food last week and jazz",
]


@pytest.fixture(scope="module")
def engines():
    entries = authored_corpus(400)
    ours = BM25(k1=K1, b=B)
    ours.add(entries[:250])
    ours.add(entries[250:])  # incremental: must not matter
    theirs = bm25s.BM25(k1=K1, b=B, method="lucene", dtype="float64")
    theirs.index([tokenize(e.text) for e in entries], show_progress=False)
    return entries, ours, theirs


@pytest.mark.parametrize("query", QUERIES)
def test_scores_equal_bm25s_lucene_times_k1_plus_1(engines, query):
    """Every entry's score equals bm25s's Lucene score x (k1 + 1) within 1e-6 (zero where bm25s is zero)."""
    entries, ours, theirs = engines
    tokens = [t for t in tokenize(query) if t in theirs.vocab_dict]
    expected = theirs.get_scores(tokens) * (K1 + 1) if tokens else np.zeros(len(entries))
    got = ours.score_all(query)
    for i, entry in enumerate(entries):
        assert got.get(entry.id, 0.0) == pytest.approx(expected[i], rel=1e-9, abs=1e-6)


def test_duplicate_query_tokens_count_like_qtf(engines):
    """bm25s adds a repeated query token once per occurrence: the same as our qtf factor."""
    entries, ours, theirs = engines
    once = theirs.get_scores(["vegetarian"])
    twice = theirs.get_scores(["vegetarian", "vegetarian"])
    assert np.allclose(twice, 2 * once)
    got = ours.score_all("vegetarian vegetarian")
    for i, entry in enumerate(entries):
        assert got.get(entry.id, 0.0) == pytest.approx(twice[i] * (K1 + 1), rel=1e-9, abs=1e-6)


def test_corpus_is_non_trivial(engines):
    """The comparison covers hundreds of entries, a real vocabulary and many non-zero scores."""
    entries, ours, _ = engines
    assert len(entries) == 400
    assert len({t for e in entries for t in tokenize(e.text)}) > 40
    assert sum(len(ours.score_all(q)) for q in QUERIES) > 500
