"""The fast retrieval paths return exactly what a straightforward implementation returns.

The reference below scores every entry with plain Python floats, in the
order the BM25 docstring states, and ranks by (score, id) descending.  The
retrievers are checked against it on generated corpora (small vocabularies,
so ties are common), with the entries added in random batches, under the
pure NumPy path and, when numba is installed, the compiled path
(``AGENTMEMORY_ACCEL=on`` forces it at any size).
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmemory import BM25, MemoryEntry, Query, TagScorer
from agentmemory.retrievers._analysis import ASCII_TABLE, LOWER_BYTES, encode_texts, query_tokens, tokenize_ascii
from agentmemory.retrievers.base import DocTable, select_top_k
from agentmemory.tokenize import normalize_tag, tokenize

try:
    from agentmemory.retrievers import _accel

    HAVE_NUMBA = _accel.AVAILABLE
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

MODES = ["off", "on"] if HAVE_NUMBA else ["off"]


@contextmanager
def accel_mode(mode: str):
    old = os.environ.get("AGENTMEMORY_ACCEL")
    os.environ["AGENTMEMORY_ACCEL"] = mode
    try:
        yield
    finally:
        if old is None:
            del os.environ["AGENTMEMORY_ACCEL"]
        else:
            os.environ["AGENTMEMORY_ACCEL"] = old


# -- the straightforward reference ------------------------------------------


def reference_bm25(entries: list[MemoryEntry], query: str, k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """Every entry's score > 0, computed term by term in plain Python floats."""
    docs = [Counter(tokenize(e.text)) for e in entries]
    lengths = [sum(c.values()) for c in docs]
    n = len(entries)
    avgdl = sum(lengths) / n
    df = Counter(t for c in docs for t in c)
    terms = Counter(tokenize(query))  # first-occurrence order
    out = {}
    for entry, counts, dl in zip(entries, docs, lengths):
        score = 0.0
        for term, qtf in terms.items():
            if term not in df:
                continue
            idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
            tf = counts.get(term, 0)
            if tf:
                norm = k1 * (1.0 - b + b * dl / avgdl) if avgdl > 0 else k1 * (1.0 - b)
                score += qtf * idf * tf * (k1 + 1.0) / (tf + norm)
        if score > 0:
            out[entry.id] = score
    return out


def reference_top(scores: dict[str, float], k: int) -> list[tuple[str, float]]:
    """Score descending, then id descending; the first k."""
    ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return ranked[:k]


def hits(retriever, query, k: int) -> list[tuple[str, float]]:
    found = retriever.search(query, k)
    assert [h.rank for h in found] == list(range(1, len(found) + 1))
    return [(h.entry_id, h.score) for h in found]


# -- strategies ----------------------------------------------------------------

WORDS = ["apple", "Apple", "b2", "cat", "dog", "egg", "fig", "x", "ÉTÉ", "straße", "ﬁle", "naïve", "e-mail"]
ids = st.text(alphabet="abcAB09é_-", min_size=1, max_size=4)
texts = st.lists(st.sampled_from(WORDS + [" ", ",", "\t", "!!"]), min_size=0, max_size=12).map(" ".join)


@st.composite
def corpora(draw, min_size: int = 1, max_size: int = 25):
    entry_ids = draw(st.lists(ids, min_size=min_size, max_size=max_size, unique=True))
    return [
        MemoryEntry(i, draw(texts), tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=3)))) for i in entry_ids
    ]


def batches(entries: list, cuts: list[int]) -> list[list]:
    points = sorted({min(c, len(entries)) for c in cuts} | {0, len(entries)})
    return [entries[a:z] for a, z in zip(points[:-1], points[1:])]


TAGS = ["Diet", "diet", "food-prefs", "Food Prefs", "travel", "work", "x"]

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_score_at_least(retriever, query, expected):
    """score_at_least(floor) is score_all filtered to scores >= floor, in the same order, at every score
    present (ties included), between them, and at 0 or below."""
    whole = retriever.score_all(query)
    floors = sorted(set(expected.values())) + [0.0, -1.0, 0.5, max(expected.values(), default=0.0) + 1.0]
    for floor in floors:
        filtered = {d: s for d, s in whole.items() if s >= floor}
        got = retriever.score_at_least(query, floor)
        assert got == filtered
        assert list(got) == list(filtered)


# -- BM25 ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(
    entries=corpora(),
    cuts=st.lists(st.integers(0, 25), max_size=4),
    query=texts,
    k=st.integers(1, 8),
    k1=st.sampled_from([1.2, 0.0, 2.0]),
    b=st.sampled_from([0.75, 0.0, 1.0]),
)
def test_bm25_top_k_equals_reference(mode, entries, cuts, query, k, k1, b):
    """search() equals the reference top k, scores bit for bit, ties by id descending, for any batching."""
    with accel_mode(mode):
        retriever = BM25(k1=k1, b=b)
        for batch in batches(entries, cuts):
            retriever.add(batch)
        expected = reference_bm25(entries, query, k1, b)
        assert hits(retriever, query, k) == reference_top(expected, k)
        assert retriever.score_all(query) == expected
        assert_score_at_least(retriever, query, expected)


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(
    entries=corpora(),
    cuts=st.lists(st.integers(0, 25), max_size=4),
    queries=st.lists(texts, min_size=1, max_size=9),
    k=st.integers(1, 8),
    cells=st.sampled_from([1, 40, 200, 1 << 19]),
    b=st.sampled_from([0.75, 0.0, 1.0]),
)
def test_bm25_search_many_equals_search_and_the_reference(mode, entries, cuts, queries, k, cells, b):
    """search_many() gives, query by query, search()'s hits: the reference's top k, scores bit for bit, ties by
    id descending; in groups of any size (the accumulator's cells), over any segments."""
    from agentmemory.retrievers import bm25 as bm25_module

    with pytest.MonkeyPatch.context() as patch, accel_mode(mode):
        patch.setattr(bm25_module, "_BATCH_CELLS", cells)
        patch.setattr(bm25_module, "_BATCH_MIN", 1)
        retriever = BM25(b=b)
        for batch in batches(entries, cuts):
            retriever.add(batch)
        found = retriever.search_many([Query(f"q{i}", q) for i, q in enumerate(queries)], k)
        assert found == [retriever.search(q, k) for q in queries]
        for query, got in zip(queries, found):
            assert [(h.entry_id, h.score) for h in got] == reference_top(reference_bm25(entries, query, b=b), k)
            assert [h.rank for h in got] == list(range(1, len(got) + 1))


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(entries=corpora(min_size=2), cut=st.integers(1, 24), queries=st.lists(texts, min_size=1, max_size=4))
def test_bm25_incremental_add_equals_rebuild(mode, entries, cut, queries):
    """After add(), every score equals that of an index built over all entries at once."""
    with accel_mode(mode):
        full = BM25()
        full.add(entries)
        grown = BM25()
        grown.add(entries[:cut])
        grown.add(entries[cut:])
        for query in queries:
            assert grown.score_all(query) == full.score_all(query)
            assert hits(grown, query, 5) == hits(full, query, 5)


@pytest.mark.parametrize("mode", MODES)
def test_bm25_segment_of_empty_texts_then_words(mode):
    """A large segment of entries without tokens followed by a small one with words searches normally."""
    with accel_mode(mode):
        retriever = BM25()
        retriever.add([MemoryEntry(f"e{i}", "  ...  ") for i in range(50)])
        assert retriever.search("anything", 3) == []
        retriever.add([MemoryEntry("w1", "alpha beta"), MemoryEntry("w2", "beta")])
        entries = [MemoryEntry(f"e{i}", "  ...  ") for i in range(50)]
        entries += [MemoryEntry("w1", "alpha beta"), MemoryEntry("w2", "beta")]
        expected = reference_bm25(entries, "beta alpha")
        assert hits(retriever, "beta alpha", 5) == reference_top(expected, 5)


def test_bm25_explain_sums_to_score():
    """explain() parts add up (in query order) to the score search() reports."""
    retriever = BM25()
    retriever.add([MemoryEntry("a", "cat cat dog"), MemoryEntry("b", "dog egg"), MemoryEntry("c", "fig")])
    retriever.add([MemoryEntry("d", "cat dog dog dog")])
    for hit in retriever.search("dog cat dog", 4):
        parts = retriever.explain("dog cat dog", hit.entry_id)
        total = 0.0
        for part in parts:
            total += part.contribution
        assert total == hit.score


def zipf_corpus(n_docs: int, vocab: int, seed: int) -> list[MemoryEntry]:
    """Entries of 20-40 Zipf-distributed words; ids shuffled so id order is not insertion order."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    words = [f"w{i}" for i in range(vocab)]
    names = [f"m{j:05d}" for j in rng.permutation(n_docs)]
    out = []
    for j in range(n_docs):
        toks = rng.choice(vocab, size=int(rng.integers(20, 41)), p=p)
        out.append(MemoryEntry(names[j], " ".join(words[t] for t in toks)))
    # exact duplicates: equal scores, decided by id
    out += [MemoryEntry(f"dup{j}", out[j % 7].text) for j in range(30)]
    return out


def dense_reference(entries: list[MemoryEntry], queries: list[str], k: int, k1: float = 1.2, b: float = 0.75):
    """The reference's formula over NumPy vectors (elementwise IEEE, same order), for larger corpora."""
    docs = [Counter(tokenize(e.text)) for e in entries]
    lengths = np.array([sum(c.values()) for c in docs], dtype=np.float64)
    n = len(entries)
    avgdl = float(lengths.sum()) / n
    norm = k1 * (1.0 - b + b * lengths / avgdl)
    df = Counter(t for c in docs for t in c)
    ids = [e.id for e in entries]
    out = []
    for query in queries:
        scores = np.zeros(n)
        for term, qtf in Counter(tokenize(query)).items():
            if term not in df:
                continue
            idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
            tf = np.array([c.get(term, 0) for c in docs], dtype=np.float64)
            scores = scores + np.where(tf > 0, qtf * idf * tf * (k1 + 1.0) / (tf + norm), 0.0)
        out.append(reference_top({ids[i]: float(s) for i, s in enumerate(scores) if s > 0}, k))
    return out


@pytest.mark.parametrize("mode", MODES)
def test_bm25_pruned_path_equals_reference(mode, monkeypatch):
    """With max-score pruning on every query, and after adds that shift avgdl, the top k stays exact."""
    if HAVE_NUMBA:
        monkeypatch.setattr(_accel, "EXHAUSTIVE_POSTINGS", 0)
    entries = zipf_corpus(3000, 40, seed=5)
    rng = random.Random(3)
    queries = [" ".join(rng.sample([f"w{i}" for i in range(40)], rng.randint(3, 6))) for _ in range(40)]
    queries += ["w0 w0 w1", "w39 w38", "nothing here", "w5"]
    with accel_mode(mode):
        retriever = BM25()
        retriever.add(entries[:2000])
        retriever.add(entries[2000:2100])  # a second, small segment, and a changed avgdl
        retriever.add(entries[2100:])
        for k in (1, 10, 40):
            expected = dense_reference(entries, queries, k)
            assert [hits(retriever, q, k) for q in queries] == expected


# -- tokenisation --------------------------------------------------------------

TRICKY = [
    "ß",
    "İ",
    "ı",
    "ﬁ",
    "ﬂ",
    "Σ",
    "ς",
    "ǅ",
    "Ⅻ",
    "①",
    "²",
    "½",
    "٣",
    "४",
    "０",
    "Ａ",
    "ｶ",
    "㎏",
    "™",
    "‾",
    "e\u0301",
    "\u0301",
    "\u200d",
    "हिन्दी",
    "東京",
    "\x00",
    "_",
    "-",
    "'",
    "\t",
    "\n",
    "\u00a0",
    "\u3000",
]
ascii_text = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)
long_words = st.text(alphabet="abcXYZ019", min_size=7, max_size=40)  # across the 8- and 16-character packing
any_text = st.one_of(
    texts,
    st.text(max_size=40),
    ascii_text,
    st.lists(st.one_of(long_words, st.sampled_from([" ", "-", "_", "\x00", "!"])), max_size=12).map("".join),
    st.lists(st.one_of(st.sampled_from(TRICKY), ascii_text), max_size=8).map("".join),
)


def check_encoding(docs: list[str], accel) -> None:
    """encode_texts(docs) gives tokenize()'s tokens and counts, numbering new terms in first-occurrence order."""
    vocab: dict[str, int] = {"apple": 0, "zz": 1}  # terms numbered before
    ids, lengths = encode_texts(docs, vocab, accel)
    words = {v: w for w, v in vocab.items()}
    flat = [words[i] for i in ids.tolist()]
    expected = [tokenize(t) for t in docs]
    assert ids.dtype == np.int32 and lengths.dtype == np.int64
    assert lengths.tolist() == [len(t) for t in expected]
    assert flat == [w for t in expected for w in t]
    assert list(vocab) == list(dict.fromkeys(["apple", "zz", *flat]))


@SETTINGS
@given(docs=st.lists(any_text, max_size=8))
def test_batch_tokenisation_equals_tokenize(docs):
    """encode_texts() and query_tokens() give tokenize()'s tokens, whatever the text (NUL, Unicode, case)."""
    for mode in MODES:
        check_encoding(docs, _accel if mode == "on" else None)
    for text in docs:
        assert query_tokens(text) == tokenize(text)


def test_ascii_tables_are_tokenizes_rule_on_every_ascii_character():
    """The byte tables both bulk paths read say, for each of the 128 ASCII characters, what tokenize() says.

    A character alone is one token (its lower-case form) or none; between two letters it joins them into
    one token exactly when it is itself a token character.
    """
    for code in range(128):
        char = chr(code)
        expected = tokenize(char)
        lowered = LOWER_BYTES[code]
        assert expected == ([chr(lowered)] if lowered else []), repr(char)
        assert chr(ASCII_TABLE[code]) == (chr(lowered) if lowered else " "), repr(char)
        assert len(tokenize(f"a{char}b")) == (1 if lowered else 2), repr(char)


@pytest.mark.parametrize("mode", MODES)
def test_a_text_too_long_for_the_kernel_is_tokenised_exactly(mode):
    """A 70,000-character ASCII text (past the compiled kernel's 16-bit lengths) takes the NumPy path: same tokens."""
    docs = ["short text", "word " * 14_000, "x" * 70_000]
    check_encoding(docs, _accel if mode == "on" else None)


@SETTINGS
@given(docs=st.lists(st.one_of(ascii_text, long_words), max_size=30))
def test_ascii_bulk_tokenizer_equals_tokenize(docs):
    """The NumPy ASCII tokenizer: tokenize()'s tokens, counts per text, distinct terms in first-occurrence order."""
    ids, counts, terms = tokenize_ascii(docs)
    expected = [tokenize(t) for t in docs]
    assert counts.tolist() == [len(t) for t in expected]
    assert [terms[i] for i in ids.tolist()] == [w for t in expected for w in t]
    assert terms == list(dict.fromkeys(w for t in expected for w in t))


def test_ascii_bulk_tokenizer_on_many_distinct_terms(monkeypatch):
    """Many more distinct terms than hash slots (several hashing rounds), and runs split across calls."""
    from agentmemory.retrievers import _analysis

    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghij0123") for _ in range(rng.randint(1, 20))) for _ in range(30_000)]
    docs = [" ".join(rng.choices(words, k=rng.randint(0, 12))) + rng.choice(["", "!", " X-Y"]) for _ in range(5_000)]
    monkeypatch.setattr(_analysis, "_RUN_CHARS", 50_000)  # many runs, each numbered against the shared vocab
    check_encoding(docs, None)


# -- tag scorer ----------------------------------------------------------------


def reference_tags(entries: list[MemoryEntry], query_tags: tuple[str, ...]) -> dict[str, float]:
    wanted = {normalize_tag(t) for t in query_tags} - {""}
    out = {}
    for e in entries:
        shared = len(wanted & {normalize_tag(t) for t in e.tags})
        if shared:
            out[e.id] = float(shared)
    return out


@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(
    entries=corpora(),
    cuts=st.lists(st.integers(0, 25), max_size=4),
    query_tags=st.lists(st.sampled_from(TAGS + ["unknown"]), max_size=4),
    k=st.integers(1, 8),
)
def test_tag_scorer_equals_reference(mode, entries, cuts, query_tags, k):
    """Tag counts over candidates equal a full scan; incremental adds equal a rebuild; ties by id descending."""
    with accel_mode(mode):
        scorer = TagScorer()
        for batch in batches(entries, cuts):
            scorer.add(batch)
        query = Query("q", "", tags=tuple(query_tags))
        expected = reference_tags(entries, tuple(query_tags))
        assert scorer.score_all(query) == expected
        assert hits(scorer, query, k) == reference_top(expected, k)
        assert_score_at_least(scorer, query, expected)


# -- the ranking rule ----------------------------------------------------------


@SETTINGS
@given(
    scores=st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.5]), min_size=0, max_size=30),
    k=st.integers(1, 12),
)
def test_select_top_k_ties_by_id_descending(scores, k):
    """select_top_k keeps positive scores only and breaks every tie by id descending."""
    table = DocTable()
    names = [f"{c}{i}" for i, c in zip(range(len(scores)), "zaZbé9" * 10)]
    table.extend(names)
    got = select_top_k(np.arange(len(scores)), np.array(scores, dtype=np.float64), k, table)
    expected = reference_top({n: s for n, s in zip(names, scores) if s > 0}, k)
    assert [(h.entry_id, h.score) for h in got] == expected


# -- the default install: no numba ---------------------------------------------

_NO_NUMBA = r"""
import importlib.abc, json, sys

class NoNumba(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numba" or name.startswith("numba."):
            raise ImportError("numba is not installed (a plain pip install)")
        return None

sys.meta_path.insert(0, NoNumba())
from agentmemory import BM25, MemoryEntry
from agentmemory.retrievers._index import accelerator

entries = [MemoryEntry(e[0], e[1]) for e in json.loads(sys.argv[1])]
r = BM25()
r.add(entries)
out = {"accelerated": accelerator(10**9) is not None, "numba": "numba" in sys.modules}
out["hits"] = [[(h.entry_id, h.score) for h in r.search(q, 5)] for q in json.loads(sys.argv[2])]
print(json.dumps(out))
"""


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=st.lists(texts, min_size=1, max_size=30), queries=st.lists(texts, min_size=1, max_size=4))
def test_default_install_path_without_numba_is_exact(corpus, queries):
    """Without numba (what `pip install agentmemory-eval` gives), BM25 runs the NumPy path, exactly the reference."""
    import json
    import subprocess
    import sys

    entries = [MemoryEntry(f"m{i:02d}", t) for i, t in enumerate(corpus)]
    env = {**os.environ, "AGENTMEMORY_ACCEL": "auto"}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_NUMBA, json.dumps([[e.id, e.text] for e in entries]), json.dumps(queries)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["accelerated"] is False and out["numba"] is False
    for query, hits in zip(queries, out["hits"]):
        assert [tuple(h) for h in hits] == reference_top(reference_bm25(entries, query), 5)


# -- when the kernels are used (numba is a core dependency) -----------------------------------------

_POLICY = r"""
import json, os, sys
from agentmemory import BM25, MemoryEntry
from agentmemory.retrievers import _index

sizes = [1_000, _index.ACCEL_MIN_DOCS, _index.ACCEL_COMPILE_DOCS - 1, _index.ACCEL_COMPILE_DOCS]
out = {"cold": [_index.accelerator(n) is not None for n in sizes[:-1]]}
out["numba_after_cold"] = "numba" in sys.modules  # a cold cache under ACCEL_COMPILE_DOCS: numba never imported
out["cold"].append(_index.accelerator(sizes[-1]) is not None)
os.environ["AGENTMEMORY_ACCEL"] = "on"  # compile BM25's kernels into the (empty) cache, on a tiny index
r = BM25()
r.add([MemoryEntry(f"m{i}", f"word{i % 7} shared text {i}") for i in range(40)])
out["hits"] = [(h.entry_id, h.score) for h in r.search("shared word3", 3)]
os.environ["AGENTMEMORY_ACCEL"] = "auto"
out["warm"] = [_index.accelerator(n) is not None for n in sizes]
out["dense_warm"] = _index.kernels_cached(_index.DENSE_KERNELS)
os.environ["AGENTMEMORY_ACCEL"] = "off"
out["off"] = [_index.accelerator(n) is not None for n in sizes]
print(json.dumps(out))
"""


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba cannot be imported here")
def test_the_default_policy_never_compiles_below_the_size_that_repays_it(tmp_path):
    """`auto`: an empty numba cache keeps indexes under ACCEL_COMPILE_DOCS on NumPy (numba not even imported);
    once a kernel set is in the cache, indexes from ACCEL_MIN_DOCS on use it; other kernel sets stay cold."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "AGENTMEMORY_ACCEL": "auto", "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    proc = subprocess.run([sys.executable, "-c", _POLICY], capture_output=True, text=True, env=env, check=True)
    out = json.loads(proc.stdout)
    assert out["cold"] == [False, False, False, True]
    assert out["numba_after_cold"] is False
    assert out["warm"] == [False, True, True, True]
    assert out["dense_warm"] is False
    assert out["off"] == [False, False, False, False]
    entries = [MemoryEntry(f"m{i}", f"word{i % 7} shared text {i}") for i in range(40)]
    assert [tuple(h) for h in out["hits"]] == reference_top(reference_bm25(entries, "shared word3"), 3)
